"""Load and validate the records of a data directory (tasks, runs, judgments, labels, arms).

Loaders read JSON Lines, Parquet or CSV by extension; bad input raises a ``DataError`` naming
the file, line (or Parquet row) and field. Writers are atomic.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._atomic import atomic_write
from ._csvsafe import restore_frame, safe_csv
from ._display import html_table, text_table
from ._schema import (
    ARM_DTYPE,
    ARMS,
    JUDGMENT_FIELDS,
    ORDER_DTYPE,
    ORDERS,
    OUTCOME_DTYPE,
    OUTCOMES,
    PAIR_ORDER_DTYPE,
    PAIR_ORDERS,
    RUN_FIELDS,
    TASK_FIELDS,
)
from ._validate import DuplicateKey, check_choice, unique_keys
from .errors import DataError, ParameterError
from .plan import Plan, find_plan, load_plan, read_toml

__all__ = [
    "DEFAULT_ARM_NAMES", "LABEL_FIELDS", "LABEL_KEYS", "Arms", "Dataset", "EvalstatsWarning",
    "arm_pairs", "check_output_path", "find_file", "has_provenance", "incomplete_pairs",
    "is_missing", "load_arms", "load_dir", "load_judgments", "load_labels",
    "load_runs", "load_tasks", "pair_runs", "pair_token_sources", "read_table_raw",
    "write_frame_atomic", "write_jsonl_atomic", "write_labels",
]  # fmt: skip

# --------------------------------------------------------------------------- read

_JSONL = (".jsonl", ".ndjson")
_SUFFIXES = (*_JSONL, ".parquet", ".csv")


class EvalstatsWarning(UserWarning):
    """Something in the data deserves attention but does not stop the analysis."""


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _json_line(raw: bytes, lineno: int, p: Path) -> Any:
    """One JSON Lines record; every way a line can be unreadable becomes a DataError."""
    try:  # a byte-order mark is legal only in front of the file
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"invalid UTF-8 (byte {exc.start + 1} of the line); save the file as UTF-8",
            path=p,
            line=lineno,
        ) from None
    try:
        obj = json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
        ) from None
    except RecursionError:
        raise DataError("malformed JSON (nested too deeply)", path=p, line=lineno) from None
    except DuplicateKey as exc:
        raise DataError(
            "key given twice in one object", path=p, line=lineno, field=str(exc)
        ) from None
    bad = surrogate_field(obj) if _SURROGATE_ESCAPE.search(text) else None
    if bad is not None:
        raise DataError(NOT_TEXT, path=p, line=lineno, field=bad)
    return obj


# A lone UTF-16 surrogate (JSON "\\ud800") is no character: it cannot be written as UTF-8.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
NOT_TEXT = "holds a lone UTF-16 surrogate (e.g. \\ud800), which is not text: replace it"


def surrogate_field(obj: Any, where: str = "") -> str | None:
    """The (dotted) field of the first string in ``obj`` holding a lone surrogate, else None."""
    if isinstance(obj, str):
        return where if _SURROGATE.search(obj) else None
    pairs = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for k, v in pairs:
        name = f"{where}.{k}" if where else str(k)
        found = name if _SURROGATE.search(str(k)) else surrogate_field(v, name)
        if found is not None:
            return found
    return None


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
                    # Only a last line without its newline can be a write cut short by a kill.
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
        twice = next((n for i, n in enumerate(header) if n in header[:i]), None)
        if twice is not None:
            raise DataError("column appears twice in the header", path=p, line=1, field=twice)
        frame = pd.read_csv(
            p, dtype=object, keep_default_na=False, na_values=[""], encoding="utf-8-sig"
        )
        return restore_frame(frame)  # undo the quoting of formula-like cells evalstats wrote
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
    """A file as an object-valued frame, each record's line/row number, and "line" or "row"."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in _SUFFIXES:
        raise DataError(
            f"unsupported file type {suffix!r}; use one of {', '.join(_SUFFIXES)}", path=p
        )
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
    """``DATA_DIR/<stem>.jsonl`` (or .ndjson, .parquet, .csv); ``DataError`` if two or (required) none."""
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


# --------------------------------------------------------------------------- contract

# CSV numbers: plain decimal only (int() and float() also take "12_000", "nan", "inf").
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)
_FLOAT_TEXT = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*", re.ASCII)
_BOOLS = ("0", "1", "true", "false")
_INT64_MAX = int(np.iinfo(np.int64).max)
_ISO_8601 = re.compile(
    r"\d{4}-\d\d-\d\d([T ]\d\d(:\d\d(:\d\d([.,]\d+)?)?)?)?(Z|[+-]\d\d(:?\d\d)?)?", re.ASCII
)
# Text fields that name something: an empty (or blank) value is a missing name.
_NAMES = frozenset({"judge", "rubric", "agent_model", "prompt_sha256"})


def is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def coerce_field(kind: str, value: Any, text_source: bool) -> Any:
    """Coerce one value to ``kind``; raise ValueError with the reason if impossible."""
    if kind == "str":
        if isinstance(value, str):
            return value
        raise ValueError(f"expected a string, got {type(value).__name__} {value!r}")
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, bool
    )
    text = text_source and isinstance(value, str)
    if kind == "int":
        whole = number and (isinstance(value, (int, np.integer)) or float(value).is_integer())
        if not (whole or (text and _INT_TEXT.fullmatch(value))):
            raise ValueError(f"expected an integer, got {type(value).__name__} {value!r:.60}")
        out_int = int(value)
        if out_int < 0:  # every integer of the contract is a count
            raise ValueError(f"expected a non-negative integer, got {value!r}")
        if out_int > _INT64_MAX:
            raise ValueError(f"integer {value!r:.40} is out of range (at most {_INT64_MAX})")
        return out_int
    if kind == "float":
        if not (number or (text and _FLOAT_TEXT.fullmatch(value))):
            raise ValueError(f"expected a number, got {type(value).__name__} {value!r:.60}")
        try:
            out = float(value)
        except OverflowError:  # an int beyond the float range
            raise ValueError(f"number {value!r:.60} is out of range") from None
        if not math.isfinite(out) or out < 0:
            raise ValueError(f"expected a finite non-negative number, got {value!r}")
        return out
    if kind == "datetime":
        ts = value if isinstance(value, pd.Timestamp) else pd.NaT
        if isinstance(value, str) and _ISO_8601.fullmatch(value):  # pandas also reads "now"
            try:
                ts = pd.Timestamp(value)
            except ValueError:
                pass
        if ts is pd.NaT:
            raise ValueError(
                f"expected an ISO-8601 timestamp (YYYY-MM-DDTHH:MM:SS, UTC unless it ends in "
                f"Z or +HH:MM), got {value!r:.60}"
            )
        return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    if kind == "list":
        if text_source and isinstance(value, str):
            try:
                value = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                shown = value if len(value) <= 60 else f"{value[:60]}... ({len(value)} chars)"
                raise ValueError(f"expected a JSON array of strings, got {shown!r}") from None
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
            return list(value)
        raise ValueError(f"expected a list of strings, got {value!r}")
    if kind == "bool":
        key = value.strip().lower() if text else value
        if isinstance(value, (bool, np.bool_)) or (number or text) and key in (0, 1, *_BOOLS):
            return key in (True, 1, "1", "true")
        raise ValueError(f"expected true/false or 0/1, got {value!r:.60}")
    if kind == "arm":
        if isinstance(value, str) and value.strip():
            return value
        raise ValueError(f"an arm is a non-empty name, got {value!r}")
    if kind == "order":
        if value in ORDERS or value in PAIR_ORDERS:
            return value
        raise ValueError(
            f"unknown order {value!r}; expected one of {', '.join(ORDERS + PAIR_ORDERS)} or null"
        )
    raise AssertionError(f"unknown field kind {kind}")


_DTYPES = {
    "str": "str",
    "float": "float64",
    "bool": "boolean",
    "list": object,
    "order": ORDER_DTYPE,
}


def arm_dtype(arms: pd.Series | tuple[str, ...]) -> pd.CategoricalDtype:
    """The seeds' ``with``/``without`` dtype when the arms are among those, else one in order."""
    seen = [a for a in pd.unique(pd.Series(arms, dtype=object)) if not is_missing(a)]
    if set(seen) <= set(ARMS):
        return ARM_DTYPE
    return pd.CategoricalDtype(seen)


def _validate_table(
    raw: pd.DataFrame,
    lines: np.ndarray,
    unit: str,
    fields: Mapping[str, tuple[str, bool]],
    path: Path,
    text_source: bool,
) -> pd.DataFrame:
    """Check every field of every record and return a typed frame (known fields only)."""
    n = len(raw)
    out: dict[str, Any] = {}

    def fail(i: int, field: str, reason: str) -> DataError:
        return _at(path, lines, i, field, reason, unit)

    for name, (kind, required) in fields.items():
        col = raw[name].tolist() if name in raw.columns else [None] * n
        values: list[Any] = []
        for i, v in enumerate(col):
            if is_missing(v) or (text_source and kind not in ("str",) and v == ""):
                if required:
                    raise fail(i, name, "missing required field")
                values.append(None)
                continue
            try:
                values.append(coerce_field(kind, v, text_source))
            except ValueError as exc:
                raise fail(i, name, str(exc)) from None
        if kind == "int":
            out[name] = pd.array(values, dtype="Int64" if not required else "int64")
        elif kind == "datetime":
            out[name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        else:
            series = pd.Series(values, dtype=object)
            if kind == "arm":
                out[name] = series.astype(arm_dtype(series))
            elif kind == "order" and series.isin(PAIR_ORDERS).any():
                out[name] = series.astype(object)  # K arms: checked by check_judgment_arms
            else:
                out[name] = series if kind == "list" else series.astype(_DTYPES[kind])
    frame = pd.DataFrame(out, index=pd.RangeIndex(n))
    for name, (kind, required) in fields.items():
        if kind == "str" and required and n and (name.endswith("_id") or name in _NAMES):
            blank = frame[name].str.strip().eq("").fillna(False).to_numpy(dtype=bool)
            if blank.any():
                raise fail(int(np.flatnonzero(blank)[0]), name, "must not be empty")
    frame.attrs["source"] = str(path)
    frame.attrs["lines"] = LineNumbers(lines.tolist())
    return frame


class LineNumbers(tuple):
    """``frame.attrs["lines"]``: immutable, so pandas' deep copies of attrs share it."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> LineNumbers:
        return self


def _at(path: Any, lines: Any, i: int, field: str, reason: str, unit: str = "line") -> DataError:
    """The DataError of record ``i``: its line, or its (Parquet) row in the message."""
    n = int(lines[i])
    if unit == "line":
        return DataError(reason, path=path, line=n, field=field)
    return DataError(f"row {n}: {reason}", path=path, field=field)


def _first_duplicate(frame: pd.DataFrame, keys: list[str]) -> int | None:
    dup = frame.duplicated(keys, keep="first").to_numpy()
    hits = np.flatnonzero(dup)
    return int(hits[0]) if hits.size else None


def _duplicate_error(
    frame: pd.DataFrame, i: int, keys: list[str], path: Path, unit: str
) -> DataError:
    lines = frame.attrs["lines"]
    first = np.flatnonzero((frame[keys] == frame.loc[i, keys]).all(axis=1).to_numpy())[0]
    what = ", ".join(f"{k}={frame.at[i, k]!r}" for k in keys)
    reason = f"duplicate ({what}); first seen at {unit} {lines[first]}"
    return _at(path, lines, i, keys[-1], reason, unit)


# --------------------------------------------------------------------------- arms

_ARM_ID = re.compile(r"\S(.*\S)?", re.DOTALL)
_ARM_KEYS = ("name", "tool")

#: What the two arms are called when nothing names them.
DEFAULT_ARM_NAMES = {"with": "WITH", "without": "WITHOUT"}


@dataclass(frozen=True)
class Arms:
    """The arms: ids (the runs' ``arm`` values) in order, display names, tools, reference, path.

    >>> a = Arms(("none", "v1"), names={"v1": "tool v1"}, reference="none")
    >>> a.name("v1"), a.name("none"), a.two_arm
    ('tool v1', 'none', False)
    """

    ids: tuple[str, ...]
    names: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, str] = field(default_factory=dict)
    reference: str | None = None
    path: str | None = None

    def name(self, arm: str) -> str:
        """The display name of ``arm`` (its id, or WITH / WITHOUT, when none was given)."""
        return self.names.get(arm) or DEFAULT_ARM_NAMES.get(arm, arm)

    @property
    def two_arm(self) -> bool:
        """True for the seeds' case: the arms are exactly ``with`` and ``without``."""
        return set(self.ids) == set(ARMS)

    def __deepcopy__(self, memo: dict) -> Arms:  # immutable, kept in runs.attrs
        return self


def key_line(path: Path, key: str, *, table: str | None = None) -> int | None:
    """The line of ``key = ...`` in a TOML file (inside ``[table]`` when given), or None."""
    pat = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    head = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]")
    current: str | None = None
    for i, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        m = head.match(text)
        if m:
            current = m.group(1)
            if table is not None and current == f"{table}.{key}":
                return i
            continue
        if current == table and pat.match(text):
            return i
    return None


def _text(value: Any, path: Path, field: str, line: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(
            f"must be a non-empty string, got {value!r:.60}", path=path, line=line, field=field
        )
    return value.strip()


def load_arms(path: str | Path) -> Arms:
    """Read an ``arms.toml`` into :class:`Arms`.

    The seeds' ``with = ...`` / ``without = ...``, or an ``[arms]`` table (``id = "name"`` or
    ``{name = ..., tool = ...}``) and an optional ``reference``. Raises ``DataError`` naming the file, line and field (``arms.v1.name``, ``reference``).

    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "arms.toml"
    >>> _ = p.write_text('reference = "a"\\n[arms]\\na = "A"\\nb = {name = "B", tool = "T"}\\n')
    >>> arms = load_arms(p)
    >>> arms.ids, dict(arms.names), dict(arms.tools), arms.reference
    (('a', 'b'), {'a': 'A', 'b': 'B'}, {'b': 'T'}, 'a')
    """
    p = Path(path)
    doc, _ = read_toml(p)
    names: dict[str, str] = {}
    tools: dict[str, str] = {}
    listed = "arms" in doc
    allowed = ("arms", "reference") if listed else (*ARMS, "reference")
    for key in doc:
        if key not in allowed:
            hint = (
                "arms.toml has 'reference' and the [arms] table"
                if listed
                else "arms.toml names the arms 'with' and 'without', or lists them in [arms]"
            )
            raise DataError(f"unknown key; {hint}", path=p, line=key_line(p, key), field=key)
    if listed:
        table = doc["arms"]
        if not isinstance(table, dict):
            raise DataError(
                "must be a table of arm = display name",
                path=p,
                line=key_line(p, "arms"),
                field="arms",
            )
        for arm, value in table.items():
            line = key_line(p, arm, table="arms")
            if not _ARM_ID.fullmatch(arm):
                raise DataError("an arm's id must not be blank", path=p, line=line, field="arms")
            where = f"arms.{arm}"
            if isinstance(value, dict):
                for k in value:
                    if k not in _ARM_KEYS:
                        raise DataError(
                            "unknown key; an arm has 'name' and 'tool'",
                            path=p,
                            line=key_line(p, k, table=where) or line,
                            field=f"{where}.{k}",
                        )
                if "name" in value:
                    names[arm] = _text(value["name"], p, f"{where}.name", line)
                if "tool" in value:
                    tools[arm] = _text(value["tool"], p, f"{where}.tool", line)
            else:
                names[arm] = _text(value, p, where, line)
        ids = tuple(table)
        if len(ids) < 2:
            raise DataError(
                f"lists {len(ids)} arm(s); a comparison needs at least two",
                path=p,
                line=key_line(p, "arms") or 1,
                field="arms",
            )
    else:
        ids = ARMS
        for arm in ARMS:
            if arm in doc:
                names[arm] = _text(doc[arm], p, arm, key_line(p, arm))
    reference = None
    if "reference" in doc:
        line = key_line(p, "reference")
        reference = _text(doc["reference"], p, "reference", line)
        if reference not in ids:
            raise DataError(
                f"{reference!r} is not one of the arms ({', '.join(ids)})",
                path=p,
                line=line,
                field="reference",
            )
    return Arms(ids, names=names, tools=tools, reference=reference, path=str(p))


# --------------------------------------------------------------------------- pairs

#: The ``pairs`` argument of :func:`pair_runs` (``evalstats judge --pairs``).
_PAIR_MODES = ("all", "reference")
_PAIR = ["task_id", "replicate"]
_RUN_COLS = (
    "answer", "tokens", "wall_s", "files_inspected", "over_budget", "agent_model", "transcript",
    "reported_tokens", "tokens_source",
)  # fmt: skip


def arm_pairs(arms: Arms, pairs: str = "all") -> list[tuple[str, str]]:
    """The oriented pairs ``(arm_a, arm_b)`` of ``arms``.

    ``"all"`` (the reference, else the earlier arm, as ``arm_b``; the seeds' ``("with",
    "without")``) or each arm against the ``"reference"``.

    >>> a = Arms(("none", "v1", "v2"), reference="none")
    >>> arm_pairs(a)
    [('v1', 'none'), ('v2', 'none'), ('v2', 'v1')]
    >>> arm_pairs(a, "reference")
    [('v1', 'none'), ('v2', 'none')]
    """
    check_choice(pairs, "pairs", _PAIR_MODES)
    ids, ref = tuple(arms.ids), arms.reference
    if arms.two_arm and ref is None:
        return [("with", "without")]  # the seeds' pair: WITH is the candidate
    if pairs == "reference":
        if ref is None:
            where = f" ({arms.path})" if arms.path else ""
            raise ParameterError(
                f"pairs='reference' needs a reference arm, and arms.toml{where} names none: "
                'add reference = "ARM" to it, or judge all pairs (--pairs all)'
            )
        return [(a, ref) for a in ids if a != ref]
    out = []
    for i, x in enumerate(ids):
        for y in ids[i + 1 :]:
            out.append((x, y) if y == ref else (y, x))
    return out


def pair_runs(runs: pd.DataFrame, arms: Arms | None = None, pairs: str = "all") -> pd.DataFrame:
    """One row per (task_id, replicate, pair of arms), the two runs side by side.

    ``arms`` defaults to the runs' arms (in the order of the ``arm`` categories); ``pairs`` as
    in :func:`arm_pairs`. Columns: ``task_id``, ``replicate``, ``arm_a``, ``arm_b``,
    ``with_<col>`` (arm_a's run) and ``without_<col>`` (arm_b's), ``over_budget`` (either run).
    A pair lacking a run is left out with an :class:`EvalstatsWarning`.

    >>> runs = pd.DataFrame({"task_id": ["t"] * 3, "replicate": 1, "arm": ["a", "b", "c"],
    ...                      "answer": ["x", "y", "z"]})
    >>> p = pair_runs(runs, Arms(("a", "b", "c")))
    >>> p[["arm_a", "arm_b", "with_answer", "without_answer"]].values.tolist()
    [['b', 'a', 'y', 'x'], ['c', 'a', 'z', 'x'], ['c', 'b', 'z', 'y']]
    """
    if arms is None:
        present = set(runs["arm"].astype(str))
        order = getattr(runs["arm"].dtype, "categories", None)
        order = [str(a) for a in order] if order is not None else sorted(present)
        arms = Arms(tuple(a for a in order if a in present))
    oriented = arm_pairs(arms, pairs)
    cols = [c for c in _RUN_COLS if c in runs.columns]
    arm = runs["arm"].astype(str)
    parts, lacking = [], 0
    for a, b in oriented:
        sides = []
        for side, name in (("with", a), ("without", b)):
            part = runs.loc[(arm == name).to_numpy(), [*_PAIR, *cols]]
            sides.append(part.rename(columns={c: f"{side}_{c}" for c in cols}))
        both = sides[0].merge(sides[1], on=_PAIR, how="outer", indicator=True)
        lacking += int((both["_merge"] != "both").sum())
        both = both.loc[both["_merge"] == "both"].drop(columns="_merge")
        both.insert(2, "arm_a", a)
        both.insert(3, "arm_b", b)
        parts.append(both.assign(_k=len(parts)))
    if lacking:
        warnings.warn(
            f"{lacking} incomplete pairs left out: (task, replicate, pair of arms) "
            "lacking the run of one arm",
            EvalstatsWarning,
            stacklevel=2,
        )
    out = pd.concat(parts, ignore_index=True)
    if "over_budget" in cols:
        out["over_budget"] = out["with_over_budget"].astype(bool) | out[
            "without_over_budget"
        ].astype(bool)
    out = out.sort_values([*_PAIR, "_k"], kind="stable").drop(columns="_k")
    return out.reset_index(drop=True)


def answers_sha256(answer_a: Any, answer_b: Any) -> str:
    """The sha256 of a pair's two answers (in either orientation): a verdict on others is stale."""
    text = json.dumps(sorted("" if is_missing(x) else str(x) for x in (answer_a, answer_b)))
    return hashlib.sha256(text.encode()).hexdigest()


def incomplete_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs whose (task, replicate) has no other arm: ``task_id``, ``replicate``, ``arm``, ``index``."""
    counts = runs.groupby(_PAIR, observed=True)["arm"].transform("size")
    lonely = runs.loc[counts.to_numpy() < 2, [*_PAIR, "arm"]]
    return lonely.assign(arm=lonely["arm"].astype(str)).reset_index()


def pair_token_sources(pairs: pd.DataFrame) -> dict[str, Any]:
    """``billed_with`` / ``billed_without`` (reported usage) and ``tokens_counted_from``
    (``transcript`` when both runs had one, else ``answer``) of paired runs, where present."""
    out: dict[str, Any] = {}
    if "with_reported_tokens" in pairs.columns:
        for side in ("with", "without"):
            out[f"billed_{side}"] = pd.array(
                pd.to_numeric(pairs[f"{side}_reported_tokens"], errors="coerce"), dtype="Int64"
            )
    if "with_tokens_source" in pairs.columns:
        both = (pairs["with_tokens_source"] == "transcript") & (
            pairs["without_tokens_source"] == "transcript"
        )
        counted = np.where(both.to_numpy(dtype=bool), "transcript", "answer")
        out["tokens_counted_from"] = np.where(pairs["with_tokens_source"].isna(), None, counted)
    return out


def check_judgment_arms(frame: pd.DataFrame, path: Any) -> pd.DataFrame:
    """Judgment lines' ``arm_a`` / ``arm_b`` and ``order`` checked together (K arms)."""
    a, b = frame["arm_a"], frame["arm_b"]
    lines = frame.attrs.get("lines", range(1, len(frame) + 1))

    def fail(i: int, field: str, why: str) -> DataError:
        return _at(path, lines, i, field, why)

    named = (a.notna() | b.notna()).to_numpy()
    order = frame["order"].astype(object)
    if not named.any():
        if frame["order"].dtype != ORDER_DTYPE:
            bad = np.flatnonzero(order.isin(PAIR_ORDERS).to_numpy())
            raise fail(int(bad[0]), "order", "a_first / b_first on a line without arm_a, arm_b")
        return frame
    # A two-arm study grown to K arms: its earlier lines judged WITH (arm_a) against WITHOUT.
    seeds = ~named & (order.isna() | order.isin(ORDERS)).to_numpy()
    if seeds.any():
        frame["arm_a"], frame["arm_b"] = a.where(~seeds, ARMS[0]), b.where(~seeds, ARMS[1])
        order = order.where(~seeds, order.map(dict(zip(ORDERS, PAIR_ORDERS, strict=True))))
        a, b = frame["arm_a"], frame["arm_b"]
    half = np.flatnonzero(a.isna().to_numpy() | b.isna().to_numpy())
    if half.size:
        i = int(half[0])
        raise fail(
            i,
            "arm_a" if a.isna().iat[i] else "arm_b",
            "judgments name the pair of arms on every line (arm_a and arm_b) or on none",
        )
    same = np.flatnonzero((a == b).to_numpy())
    if same.size:
        raise fail(int(same[0]), "arm_b", f"arm_b equals arm_a ({a.iat[int(same[0])]!r})")
    wrong = np.flatnonzero((order.notna() & ~order.isin(PAIR_ORDERS)).to_numpy())
    if wrong.size:
        raise fail(
            int(wrong[0]),
            "order",
            f"a line naming arm_a / arm_b has order a_first or b_first, got "
            f"{order.iat[int(wrong[0])]!r}",
        )
    frame["order"] = order.astype(PAIR_ORDER_DTYPE)
    return frame


# --------------------------------------------------------------------------- tables


def load_tasks(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Load and validate a tasks file (``.jsonl``, ``.parquet`` or ``.csv``).

    Returns the columns of the contract (``canonical_written_at`` in UTC); raises
    ``DataError`` on a malformed record, a missing or mistyped field, a duplicate ``task_id``.

    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=3, n_replicates=1, seed=0)
    >>> tasks = evalstats.load_tasks(sim.tasks)
    >>> tasks.columns[:3].tolist(), len(tasks)
    (['task_id', 'prompt', 'canonical_answer'], 3)
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p)
    frame = _validate_table(
        raw, lines, unit, TASK_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )
    i = _first_duplicate(frame, ["task_id"])
    if i is not None:
        raise _duplicate_error(frame, i, ["task_id"], p, unit)
    return frame


def load_runs(
    path: str | os.PathLike[str],
    tasks: pd.DataFrame | None = None,
    *,
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Load and validate a runs file; with ``tasks``, also count tokens and apply budgets.

    Parameters
    ----------
    path : path-like
        ``runs.jsonl``, ``.parquet`` or ``.csv``.
    tasks : DataFrame, optional
        Every run's task must exist; adds the columns of :func:`evalstats.tokens.annotate_runs`.
    allow_incomplete : bool, default False
        Keep (with a warning) a (task_id, replicate) that has only one arm.
    arms : sequence of str, optional
        The arms ``arms.toml`` lists; without it ``with`` / ``without`` mix with no other name.

    ``DataError`` on a malformed record, an unknown arm or task, a duplicate (task_id,
    replicate, arm), a pair with only one arm.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p)
    frame = _validate_table(raw, lines, unit, RUN_FIELDS, p, text_source=p.suffix.lower() == ".csv")
    frame["arm"] = _check_arms(frame, arms, p, lines)
    keys = ["task_id", "replicate", "arm"]
    i = _first_duplicate(frame, keys)
    if i is not None:
        raise _duplicate_error(frame, i, keys, p, unit)
    _check_replicates(frame, p, lines)
    if tasks is not None:
        known = set(tasks["task_id"].tolist())
        unknown = np.flatnonzero(~frame["task_id"].isin(known).to_numpy())
        if unknown.size:
            j = int(unknown[0])
            why = f"unknown task {frame.at[j, 'task_id']!r} (not in the tasks file)"
            raise _at(p, lines, j, "task_id", why)
    lonely = incomplete_pairs(frame)
    if len(lonely):
        first = lonely.iloc[0]
        j = int(first["index"])
        msg = (
            f"pair (task_id={first['task_id']!r}, replicate={first['replicate']}) has only "
            f"the {first['arm']!r} run"
            + (f" ({len(lonely) - 1} more incomplete pairs)" if len(lonely) > 1 else "")
        )
        if not allow_incomplete:
            raise _at(p, lines, j, "arm", msg)
        warnings.warn(
            f"{p}:{lines[j]}: {msg}; kept because allow_incomplete=True",
            EvalstatsWarning,
            stacklevel=2,
        )
    if tasks is not None:
        from .tokens import annotate_runs

        attrs = dict(frame.attrs)
        frame = annotate_runs(frame, tasks)
        frame.attrs.update(attrs)
    return frame


def _check_replicates(frame: pd.DataFrame, path: Any, lines: Any) -> None:
    bad = np.flatnonzero(frame["replicate"].to_numpy() < 1)
    if bad.size:
        j = int(bad[0])
        raise _at(
            path, lines, j, "replicate", f"replicate must be >= 1, got {frame.at[j, 'replicate']}"
        )


def _check_arms(
    frame: pd.DataFrame, arms: Sequence[str] | None, p: Path, lines: np.ndarray
) -> pd.Series:
    """The ``arm`` column, checked against ``arms`` (or the seeds' names) and typed."""
    arm = frame["arm"].astype(object)
    if arms is not None:
        arms = tuple(arms)
        bad = np.flatnonzero(~arm.isin(arms).to_numpy())
        if bad.size:
            j = int(bad[0])
            why = f"unknown arm {arm.iat[j]!r}; arms.toml lists {', '.join(arms)}"
            raise _at(p, lines, j, "arm", why)
        return arm.astype(ARM_DTYPE if set(arms) == set(ARMS) else pd.CategoricalDtype(arms))
    seeds = arm.isin(ARMS).to_numpy()
    if seeds.any() and not seeds.all():
        j = int(np.flatnonzero(~seeds)[0])
        why = (
            f"unknown arm {arm.iat[j]!r}; the other runs are 'with' / 'without' "
            "(to compare more arms, list them all in arms.toml)"
        )
        raise _at(p, lines, j, "arm", why)
    return frame["arm"]


def load_judgments(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Load and validate judgment lines (the judge runner's journal), failed calls included.

    Lines of another ``kind`` (batch bookkeeping) are skipped, and so, with a warning, is a
    torn last line (a write cut short by a kill). ``DataError`` on any other bad line, and
    on ``arm_a`` / ``arm_b`` given on some lines only, equal, or with a with_first order.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p, skip_unreadable=True)
    if "kind" in raw.columns:
        keep = raw["kind"].map(lambda k: is_missing(k) or k == "judgment").to_numpy(dtype=bool)
        raw, lines = raw.loc[keep].reset_index(drop=True), lines[keep]
    frame = _validate_table(
        raw, lines, unit, JUDGMENT_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )
    return check_judgment_arms(frame, p)


# --------------------------------------------------------------------------- labels

LABEL_FIELDS: dict[str, tuple[str, bool]] = {
    "task_id": ("str", True),
    "replicate": ("int", True),
    "labeler": ("str", True),
    "outcome": ("str", True),
    "created_at": ("datetime", True),
    "order": ("order", False),
    "note": ("str", False),
    "sample_seed": ("int", False),
    "frame_sha256": ("str", False),
    # The pair of arms labelled (outcome from arm_a's view); absent: the seeds' with/without.
    "arm_a": ("str", False),
    "arm_b": ("str", False),
}
# One person labels one pair of arms (in one shown order) once.
LABEL_KEYS = ["task_id", "replicate", "arm_a", "arm_b", "labeler", "order"]


# The rubrics' own labels from WITH's view (seed 001's need the order shown).
_WITH_WITHOUT_LABELS = {
    "(a)": "win",
    "a": "win",
    "(b)": "tie",
    "b": "tie",
    "(c)": "loss",
    "c": "loss",
}
_BLIND_LABELS = {"a_wins", "b_wins"}


def _from_label(value: str, order: str | None) -> str | None:
    if value in OUTCOMES:
        return value
    if value in _WITH_WITHOUT_LABELS:
        return _WITH_WITHOUT_LABELS[value]
    if value in _BLIND_LABELS and order in ("with_first", "without_first"):
        a_is_with = order == "with_first"
        return "win" if (value == "a_wins") == a_is_with else "loss"
    return None


def _typed(frame: pd.DataFrame, path: Path | None, lines: np.ndarray, unit: str) -> pd.DataFrame:
    given = frame["outcome"].astype(object).map(lambda v: v.strip().lower())
    order = frame["order"].astype(object).map(lambda v: None if is_missing(v) else str(v))
    outcome = pd.Series(
        [_from_label(v, o) for v, o in zip(given, order, strict=True)], index=frame.index
    )
    bad = np.flatnonzero(~outcome.isin(OUTCOMES).to_numpy())
    if bad.size:
        i = int(bad[0])
        blind = given.iloc[i] in _BLIND_LABELS
        reason = (
            f"the blind-pair label {frame.at[i, 'outcome']!r} needs the shown order "
            "(field 'order': with_first or without_first)"
            if blind
            else f"unknown outcome {frame.at[i, 'outcome']!r}; expected one of "
            f"{', '.join(OUTCOMES)} (WITH's point of view), a with-without label "
            "(a)/(b)/(c), or a blind-pair a_wins/b_wins/tie with its order"
        )
        raise _at(path, lines, i, "outcome", reason, unit)
    frame["label"] = pd.Series(frame["outcome"].astype(object).tolist(), dtype="str")
    _check_replicates(frame, path, lines)
    frame["outcome"] = pd.Categorical(outcome.to_numpy(), dtype=OUTCOME_DTYPE)
    half = np.flatnonzero(frame["arm_a"].isna().to_numpy() != frame["arm_b"].isna().to_numpy())
    if half.size:
        i = int(half[0])
        reason = "a label names its pair of arms with both arm_a and arm_b, or neither"
        field = "arm_b" if frame["arm_b"].isna().iat[i] else "arm_a"
        raise _at(path, lines, i, field, reason, unit)

    for col, seed in zip(("arm_a", "arm_b"), ARMS, strict=True):
        frame[col] = frame[col].fillna(seed)
    key = frame.assign(order=frame["order"].astype(object).fillna(""))
    i = _first_duplicate(key, LABEL_KEYS)
    if i is not None:
        raise _duplicate_error(
            key, i, LABEL_KEYS, path if path is not None else Path("<labels>"), unit
        )
    return frame


def load_labels(path: str | os.PathLike[str], runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Load and validate a labels file (or a data directory's ``labels`` file).

    With ``runs``, every label must name a pair that has runs of both arms. Returns the
    columns of :data:`LABEL_FIELDS`, ``outcome`` ordered loss < tie < win (arm_a's view),
    ``arm_a`` / ``arm_b`` ``"with"`` / ``"without"`` when absent; ``DataError`` on a bad
    record, outcome or order, a duplicate label, or a pair without runs.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "labels.jsonl").write_text(
    ...     '{"task_id": "t1", "replicate": 1, "labeler": "ann", "outcome": "win", '
    ...     '"created_at": "2026-01-02T03:04:05Z"}\\n'
    ...     '{"task_id": "t1", "replicate": 1, "labeler": "bob", "outcome": "Tie", '
    ...     '"created_at": "2026-01-02T03:04:05Z"}\\n'
    ... )
    >>> labels = load_labels(d)
    >>> labels["outcome"].astype(str).tolist()
    ['win', 'tie']
    """
    p = Path(path)
    if p.is_dir():
        found = find_file(p, "labels")
        assert found is not None
        p = found
    raw, lines, unit = read_table_raw(p)
    frame = _validate_table(
        raw, lines, unit, LABEL_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )
    frame = _typed(frame, p, lines, unit)
    if runs is not None:
        arm = runs["arm"].astype(str) if "arm" in runs.columns else pd.Series("", runs.index)
        known = set(zip(runs["task_id"], runs["replicate"], arm, strict=True))
        has = [
            {(t, r, a), (t, r, b)} <= known if "arm" in runs.columns else (t, r, "") in known
            for t, r, a, b in zip(
                frame["task_id"], frame["replicate"], frame["arm_a"], frame["arm_b"], strict=True
            )
        ]
        unknown = np.flatnonzero(~np.asarray(has, dtype=bool))
        if unknown.size:
            i = int(unknown[0])
            arms = f"{frame.at[i, 'arm_a']} vs {frame.at[i, 'arm_b']}"
            raise DataError(
                f"label for pair (task_id={frame.at[i, 'task_id']!r}, "
                f"replicate={frame.at[i, 'replicate']}, {arms}) that has no runs",
                path=p,
                line=int(lines[i]) if unit == "line" else None,
                field="task_id",
            )
    return frame


def write_labels(labels: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a labels table atomically (format from the extension), known columns only."""
    cols = [c for c in LABEL_FIELDS if c in labels.columns]
    out = labels[cols].copy()
    out["outcome"] = out["outcome"].astype(str)
    if "order" in out.columns:
        out["order"] = out["order"].astype(object)
    if "created_at" in out.columns:
        out["created_at"] = pd.to_datetime(out["created_at"], utc=True).map(
            lambda t: t.isoformat() if not pd.isna(t) else None
        )
    return write_frame_atomic(out, path)


def has_provenance(labels: pd.DataFrame) -> bool:
    """True when every label carries a sample seed and a frame hash (drawn at random)."""
    if len(labels) == 0 or not {"sample_seed", "frame_sha256"} <= set(labels.columns):
        return False
    return bool(labels["sample_seed"].notna().all() and labels["frame_sha256"].notna().all())


# --------------------------------------------------------------------------- write


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, pd.Timestamp):
        return o.isoformat()
    if o is pd.NA or o is pd.NaT:
        return None
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


_FRAME_SUFFIXES = (".parquet", ".csv", *_JSONL)


def check_output_path(
    path: str | os.PathLike[str], *, suffixes: Iterable[str] = _FRAME_SUFFIXES
) -> Path:
    """Check, before any work, that a table can be written to ``path`` (``DataError`` if not).

    The suffix must be one of ``suffixes``; the nearest existing parent must accept a new file
    (tried with a temporary file: permission bits alone do not tell).

    >>> import tempfile, pathlib
    >>> check_output_path(pathlib.Path(tempfile.mkdtemp()) / "verdicts.parquet").name
    'verdicts.parquet'
    """
    p = Path(path)
    allowed = tuple(suffixes)
    if str(path).endswith(("/", os.sep)) or p.is_dir():
        raise DataError(f"is a directory; give a file name ending in {allowed[0]}", path=p)
    suffix = p.suffix.lower()
    if suffix not in allowed:
        shown = ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        raise DataError(f"unsupported output type {suffix or p.name!r}; use {shown}", path=p)
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise DataError(f"{parent} is not a directory", path=p)
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise DataError(f"cannot write in {parent} ({_reason(exc)})", path=p) from None
    os.close(fd)
    os.unlink(probe)
    return p


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> Path:
    """Write records as JSON Lines via a temporary file and an atomic rename."""
    p = Path(path)

    def write(fh: Any) -> None:
        for rec in records:
            fh.write(json.dumps(dict(rec), ensure_ascii=False, default=_json_default).encode())
            fh.write(b"\n")

    atomic_write(p, write)
    return p


def _lists_as_json(frame: pd.DataFrame) -> pd.DataFrame:
    """CSV has no list type: list cells become JSON arrays, which the loaders read back."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, list)).any():
            out[col] = out[col].map(lambda v: json.dumps(v) if isinstance(v, list) else v)
    return out


def write_frame_atomic(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a DataFrame as Parquet, CSV or JSON Lines (by extension), atomically."""
    p = check_output_path(path)
    suffix = p.suffix.lower()
    if suffix in _JSONL:
        clean = frame.astype(object).where(frame.notna(), None)
        return write_jsonl_atomic(p, clean.to_dict(orient="records"))
    if suffix == ".parquet":
        atomic_write(p, lambda fh: frame.to_parquet(fh, index=False))
    elif suffix == ".csv":
        text = safe_csv(_lists_as_json(frame), index=False) or ""
        atomic_write(p, lambda fh: fh.write(text.encode("utf-8")))
    return p


# --------------------------------------------------------------------------- dataset


class _Parts(NamedTuple):
    tasks: pd.DataFrame
    runs: pd.DataFrame
    judgments: pd.DataFrame | None
    plan: Plan | None = None


class Dataset(_Parts):
    """What :func:`load_dir` returns: tasks, runs, judgments, plan, arms and labels.

    ``judgments``, ``plan`` and ``labels`` are None when absent."""

    labels: pd.DataFrame | None  # not a tuple field: a Dataset unpacks into four parts

    def __new__(
        cls,
        tasks: pd.DataFrame,
        runs: pd.DataFrame,
        judgments: pd.DataFrame | None,
        plan: Plan | None = None,
        *,
        labels: pd.DataFrame | None = None,
    ) -> Dataset:
        self = super().__new__(cls, tasks, runs, judgments, plan)
        self.labels = labels
        return self

    def _replace(self, **changes: Any) -> Dataset:
        labels = changes.pop("labels", self.labels)
        return Dataset(*super()._replace(**changes), labels=labels)

    @property
    def arm_names(self) -> dict[str, str]:
        """``{arm: display name}`` of :attr:`arms` (``{"with": "WITH", ...}`` for the seeds')."""
        return {a: self.arms.name(a) for a in self.arms.ids}

    @property
    def arms(self) -> Arms:
        """The arms ``runs.attrs["arms"]`` holds (:func:`load_dir`), else the runs' arms."""
        runs = self.runs
        found = runs.attrs.get("arms") if runs is not None else None
        if isinstance(found, Arms):
            return found
        if runs is None or not len(runs):
            return Arms(ARMS)
        present = set(runs["arm"].astype(str))
        return Arms(tuple(a for a in runs["arm"].cat.categories if a in present))

    def __repr__(self) -> str:
        return text_table("Dataset", self._summary(html=False))

    def _repr_html_(self) -> str:
        return html_table("Dataset", self._summary(html=True))

    def _summary(self, *, html: bool) -> list[tuple[str, Any]]:
        """Counts, names and files of a Dataset, as (name, value) rows for :mod:`._display`."""
        tasks, runs, judgments, labels = self.tasks, self.runs, self.judgments, self.labels
        arms = self.arms
        rows: list[tuple[str, Any]] = [("tasks", len(tasks) if tasks is not None else 0)]
        files = [f.attrs.get("source") for f in (tasks, runs, judgments, labels) if f is not None]
        if runs is not None and len(runs):
            per_arm = runs["arm"].astype(str).value_counts().reindex(arms.ids, fill_value=0)
            shown = ", ".join(
                f"{arms.name(a)} {int(per_arm[a])}"
                if arms.name(a) in (DEFAULT_ARM_NAMES.get(a, a), a)
                else f"{arms.name(a)} ({a}) {int(per_arm[a])}"
                for a in arms.ids
            )
            rows.append(("runs", f"{len(runs)}: {shown}"))
            keys = runs[["task_id", "replicate"]]
            n_pairs = len(keys.drop_duplicates())
            pairs = f"{n_pairs} (task, replicate) pairs"
            n_arms = runs.groupby(["task_id", "replicate"], observed=True)["arm"].nunique()
            lonely = int((n_arms < len(arms.ids)).sum())
            if lonely:
                pairs += f", {lonely} lacking an arm"
            if "over_budget" in runs.columns:
                over = runs.loc[runs["over_budget"].to_numpy(dtype=bool), ["task_id", "replicate"]]
                pairs += f", {len(over.drop_duplicates())} over budget (no_answer)"
            rows.append(("pairs", pairs))
            per_task = keys.drop_duplicates().groupby("task_id").size()
            lo, hi = int(per_task.min()), int(per_task.max())
            rows.append(("replicates", f"{lo} per task" if lo == hi else f"{lo} to {hi} per task"))
            rows.append(("agents", ", ".join(sorted(runs["agent_model"].astype(str).unique()))))
        if judgments is None:
            rows.append(("judgments", "none yet"))
        else:
            failed = judgments["error"].notna().to_numpy(dtype=bool)
            text = f"{len(judgments)} calls: {len(judgments) - int(failed.sum())} answered"
            if failed.any():
                kind = judgments.get("call_status", pd.Series("failed", index=judgments.index))
                counts = kind[failed].fillna("failed").astype(str).value_counts().sort_index()
                text += (
                    ", " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()) + " (error set)"
                )
            rows.append(("judgments", text))
            if len(judgments):
                table = pd.crosstab(judgments["judge"].astype(str), judgments["rubric"].astype(str))
                table.columns.name = table.index.name = None
                rows.append(("judges", ", ".join(table.index)))
                revs = (
                    judgments.assign(_r=judgments["rubric"].astype(str))
                    .groupby("_r")["prompt_revision"]
                    .agg(lambda r: "/".join(f"r{int(x)}" for x in sorted(r.dropna().unique())))
                )
                rows.append(("rubrics", ", ".join(f"{k} ({v})" for k, v in revs.items())))
                if html:
                    rows.append(("judgments by judge × rubric", table.reset_index(names="judge")))
                else:
                    for i, (judge, counts) in enumerate(table.iterrows()):
                        text = f"{judge}: " + ", ".join(
                            f"{k} {int(v)}" for k, v in counts[counts > 0].items()
                        )
                        rows.append(("by judge" if i == 0 else "", text))
        if labels is not None:
            n_pairs = len(labels[["task_id", "replicate", "arm_a", "arm_b"]].drop_duplicates())
            who = labels["labeler"].astype(str).nunique()
            people = f"{who} labeler" + ("s" if who != 1 else "")
            rows.append(("labels", f"{len(labels)} ({n_pairs} pairs, {people})"))
        plan = self.plan
        if plan is None:
            rows.append(("plan", "none"))
        else:
            rows.append(
                ("plan", f"{plan.primary_rubric} / {plan.primary_judge_name} / {plan.statistic}")
            )
            if plan.path:
                files.append(plan.path)
        rows.append(("files", ", ".join(str(f) for f in files if f) or "none recorded"))
        return rows


def load_dir(data_dir: str | os.PathLike[str], *, allow_incomplete: bool = False) -> Dataset:
    """Load ``tasks``, ``runs`` and (if present) ``judgments``, ``labels``, ``plan`` and arms.

    The arms, their names and tools are those ``arms.toml`` lists (each with runs), else the
    runs' arms under their ids (``with`` / ``without``: WITH / WITHOUT).
    """
    tasks = load_tasks(find_file(data_dir, "tasks"))
    apath = Path(data_dir) / "arms.toml"
    listed = load_arms(apath) if apath.is_file() else None
    runs = load_runs(
        find_file(data_dir, "runs"),
        tasks,
        allow_incomplete=allow_incomplete,
        arms=None if listed is None else listed.ids,
    )
    if listed is not None and not listed.two_arm:
        present = set(runs["arm"].astype(str))
        for arm in listed.ids:
            if arm not in present:
                raise DataError(
                    f"arm {arm!r} has no runs in {runs.attrs.get('source')}",
                    path=apath,
                    line=key_line(apath, arm, table="arms"),
                    field=f"arms.{arm}",
                )
    jpath = find_file(data_dir, "judgments", required=False)
    ppath = find_plan(data_dir)
    judgments = load_judgments(jpath) if jpath is not None else None
    runs.attrs["arms"] = listed or Dataset(tasks, runs, None).arms
    lpath = find_file(data_dir, "labels", required=False)
    labels = load_labels(lpath, runs) if lpath is not None else None
    return Dataset(
        tasks, runs, judgments, load_plan(ppath) if ppath is not None else None, labels=labels
    )
