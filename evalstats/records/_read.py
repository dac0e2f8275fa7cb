"""Reading a table file (JSON Lines, Parquet, CSV) into raw records, bad lines named."""

from __future__ import annotations

import csv
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._csvsafe import restore_frame
from ..errors import DataError

__all__ = ["EvalstatsWarning"]


_JSONL = (".jsonl", ".ndjson")


_SUFFIXES = (*_JSONL, ".parquet", ".csv")


class EvalstatsWarning(UserWarning):
    """Something in the data deserves attention but does not stop the analysis."""


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise DataError(
            f"unsupported file type {suffix!r}; use one of {', '.join(_SUFFIXES)}", path=path
        )
    return suffix


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a key given twice in one object is an error, not "last wins"."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


class _DuplicateKey(Exception):
    pass


def _json_line(raw: bytes, lineno: int, p: Path) -> Any:
    """One JSON Lines record; every way a line can be unreadable becomes a DataError."""
    try:
        # A byte-order mark is legal only in front of the file.
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"invalid UTF-8 (byte {exc.start + 1} of the line); save the file as UTF-8",
            path=p,
            line=lineno,
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
        ) from None
    except RecursionError:
        raise DataError("malformed JSON (nested too deeply)", path=p, line=lineno) from None
    except _DuplicateKey as exc:
        raise DataError(
            "key given twice in one object", path=p, line=lineno, field=str(exc)
        ) from None


def _read_jsonl(p: Path, skip_unreadable: bool) -> tuple[list[dict[str, Any]], list[int]]:
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        with p.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    obj = _json_line(raw, lineno, p)
                except DataError as exc:
                    # Each journal line is one write that ends in a newline, so only a last
                    # line without one can be a write cut short by a kill: that call was
                    # never finished (the runner sets the bytes aside and makes it again).
                    # A corrupt line anywhere else is damage, and an error.
                    torn = not raw.endswith(b"\n")
                    if not skip_unreadable or exc.field is not None or not torn:
                        raise
                    warnings.warn(
                        f"{p}:{lineno}: torn last journal line skipped ({exc.reason})",
                        EvalstatsWarning,
                        stacklevel=4,
                    )
                    continue
                if not isinstance(obj, dict):
                    raise DataError(
                        f"expected a JSON object, got {type(obj).__name__}", path=p, line=lineno
                    )
                records.append(obj)
                lines.append(lineno)
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None
    return records, lines


def _first_bad_utf8_line(p: Path) -> int | None:
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return None


def _read_csv(p: Path) -> pd.DataFrame:
    try:
        # pandas renames a repeated column to "name.1" silently; read the header first.
        with p.open("r", encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), None)
        if header is None:
            raise DataError("empty CSV file (no header line)", path=p)
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise DataError("column appears twice in the header", path=p, line=1, field=name)
            seen.add(name)
        frame = pd.read_csv(
            p, dtype=object, keep_default_na=False, na_values=[""], encoding="utf-8-sig"
        )
        # A CSV evalstats wrote has its formula-like cells quoted ('=...): undone here, so
        # a verdict frame or table read back is the one written.
        return restore_frame(frame)
    except UnicodeDecodeError:
        raise DataError(
            "invalid UTF-8; save the file as UTF-8", path=p, line=_first_bad_utf8_line(p)
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        raise DataError(f"unreadable CSV: {exc}", path=p) from None
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None


def read_table_raw(
    path: str | os.PathLike[str], *, skip_unreadable: bool = False
) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Read a file into an object-valued frame plus the line/row number of each record.

    Returns the frame, the numbers and the word for them ("line" or "row"). With
    ``skip_unreadable``, a JSON Lines line that is not JSON is skipped with a warning.
    """
    p = Path(path)
    suffix = _suffix(p)
    try:
        if not p.exists():
            raise DataError("file not found", path=p)
        if p.is_dir():
            raise DataError("is a directory, not a file", path=p)
        if not p.is_file():  # a FIFO or a device (/dev/zero) would be read forever
            raise DataError("not a regular file", path=p)
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None
    if suffix in _JSONL:
        records, lines = _read_jsonl(p, skip_unreadable)
        frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        return frame.astype(object), np.asarray(lines, dtype=np.int64), "line"
    if suffix == ".csv":
        frame = _read_csv(p)
        frame = frame.astype(object).where(frame.notna(), None)
        # Line numbers assume one physical line per record (header = line 1).
        return frame, np.arange(2, len(frame) + 2, dtype=np.int64), "line"
    try:
        frame = pd.read_parquet(p)
    except Exception as exc:  # pyarrow raises several unrelated types
        raise DataError(f"unreadable Parquet file: {exc}", path=p) from None
    frame = frame.astype(object).where(frame.notna(), None)
    return frame, np.arange(1, len(frame) + 1, dtype=np.int64), "row"


def find_file(data_dir: str | os.PathLike[str], stem: str, *, required: bool = True) -> Path | None:
    """``DATA_DIR/<stem>.jsonl`` (or .ndjson, .parquet, .csv): the one file holding that table.

    Raises ``DataError`` when the directory cannot be listed, when two files hold the same
    table (``tasks.jsonl`` and ``tasks.csv``: which one is meant cannot be guessed), and,
    if ``required``, when there is none.
    """
    d = Path(data_dir)
    try:
        present = set(os.listdir(d))
    except FileNotFoundError:
        raise DataError("data directory not found", path=d) from None
    except NotADirectoryError:
        raise DataError("not a directory", path=d) from None
    except OSError as exc:
        raise DataError(f"cannot read the directory ({_reason(exc)})", path=d) from None
    found = [d / f"{stem}{suffix}" for suffix in _SUFFIXES if f"{stem}{suffix}" in present]
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise DataError(f"{names} both hold the {stem} table; keep one of them", path=d)
    if found:
        return found[0]
    if required:
        raise DataError(f"no {stem}.jsonl, {stem}.parquet or {stem}.csv in this directory", path=d)
    return None
