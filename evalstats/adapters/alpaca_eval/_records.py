"""Reading AlpacaEval's annotation files (a JSON array or JSON Lines) into validated rows."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import DataError
from ...records import is_missing

_SUFFIXES = (".json", ".jsonl", ".ndjson")


_WS = re.compile(r"\s*")


def _open_text(p: Path) -> str:
    name = p.name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    if not base.endswith(_SUFFIXES):
        raise DataError(
            "unsupported file type; use .json (a JSON array), .jsonl or .ndjson, "
            "optionally gzipped (.gz)",
            path=p,
        )
    if not p.exists():
        raise DataError("file not found", path=p)
    try:
        if name.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                return fh.read()
        return p.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"unreadable file: {exc}", path=p) from None


def _parse_array(text: str, p: Path) -> tuple[list[Any], list[int]]:
    """Records of a JSON array with the line each one starts on.

    ``json.loads`` forgets positions; decoding element by element keeps them, so
    an error can name the line of the bad record in a pretty-printed file.
    """
    decoder = json.JSONDecoder()
    records: list[Any] = []
    lines: list[int] = []
    pos = _WS.match(text, text.index("[") + 1).end()
    line, counted = 1, 0
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=exc.lineno
                ) from None
            line += text.count("\n", counted, pos)
            counted = pos
            records.append(obj)
            lines.append(line)
            pos = _WS.match(text, end).end()
            sep = text[pos : pos + 1]
            if sep == "]":
                pos += 1
                break
            if sep != ",":
                at = line + text.count("\n", counted, pos)
                raise DataError("malformed JSON array (expected ',' or ']')", path=p, line=at)
            pos = _WS.match(text, pos + 1).end()
    if text[pos:].strip():
        at = line + text.count("\n", counted, pos)
        raise DataError("unexpected text after the JSON array", path=p, line=at)
    return records, lines


def _parse_lines(text: str, p: Path) -> tuple[list[Any], list[int]]:
    records: list[Any] = []
    lines: list[int] = []
    for lineno, row in enumerate(text.splitlines(), start=1):
        if not row.strip():
            continue
        try:
            records.append(json.loads(row))
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
            ) from None
        lines.append(lineno)
    return records, lines


def _read_records(p: Path) -> tuple[list[Any], list[int]]:
    """Records of a JSON array file or a JSON Lines file (sniffed, not by name)."""
    text = _open_text(p)
    if text.lstrip().startswith("["):
        return _parse_array(text, p)
    return _parse_lines(text, p)


def _number(value: Any) -> float | None:
    """A JSON number as float; None if it is not one (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    return float(value)


def _preference(value: Any) -> tuple[float, float, str | None, str | None]:
    """(raw preference, win share, outcome, parse error) of one record."""
    if is_missing(value):
        return math.nan, math.nan, None, "missing preference"
    pref = _number(value)
    if pref is None:
        return math.nan, math.nan, None, f"preference is not a number: {value!r}"
    if math.isnan(pref):
        return pref, math.nan, None, "preference is NaN"
    # 0 is AlpacaEval's legacy draw; its metrics read it as 1.5 too.
    value_ = 1.5 if pref == 0.0 else pref
    if not 1.0 <= value_ <= 2.0:
        return pref, math.nan, None, f"preference {pref!r} outside [1, 2]"
    outcome = "win" if value_ > 1.5 else ("tie" if value_ == 1.5 else "loss")
    return pref, value_ - 1.0, outcome, None


def _record_row(rec: Any, p: Path, line: int) -> dict[str, Any]:
    """Validate one annotation record; raise DataError naming file:line and field."""

    def fail(field: str, reason: str) -> DataError:
        return DataError(reason, path=p, line=line, field=field)

    if not isinstance(rec, dict):
        raise DataError(f"expected a JSON object, got {type(rec).__name__}", path=p, line=line)
    iid = rec.get("instruction_id")
    if is_missing(iid):
        instruction = rec.get("instruction")
        if not isinstance(instruction, str):
            raise fail("instruction_id", "missing required field (and no 'instruction' text)")
        iid = hashlib.sha1(instruction.encode("utf-8")).hexdigest()[:12]
    row: dict[str, Any] = {"instruction_id": iid}
    for field in ("instruction_id", "generator_1", "generator_2", "annotator"):
        v = row[field] if field == "instruction_id" else rec.get(field)
        if is_missing(v):
            raise fail(field, "missing required field")
        if not isinstance(v, str):
            raise fail(field, f"expected a string, got {type(v).__name__} {v!r}")
        if not v:
            raise fail(field, "must not be empty")
        row[field] = v
    dataset = rec.get("dataset")
    if not is_missing(dataset) and not isinstance(dataset, str):
        raise fail("dataset", f"expected a string, got {type(dataset).__name__} {dataset!r}")
    row["dataset"] = None if is_missing(dataset) else dataset
    for field in ("price_per_example", "time_per_example"):
        v = rec.get(field)
        if is_missing(v):
            row[field] = math.nan
            continue
        x = _number(v)
        if x is None or not math.isfinite(x) or x < 0:
            raise fail(field, f"expected a finite non-negative number, got {v!r}")
        row[field] = x
    for field, text_field in (("len_output_1", "output_1"), ("len_output_2", "output_2")):
        v = rec.get(field)
        if is_missing(v):
            text = rec.get(text_field)
            row[field] = len(text) if isinstance(text, str) else None
            continue
        x = _number(v)
        if x is None or not math.isfinite(x) or x < 0 or not x.is_integer():
            raise fail(field, f"expected a non-negative integer, got {v!r}")
        row[field] = int(x)
    raw = rec.get("raw_completion")
    if is_missing(raw):
        row["raw"] = None
    else:
        row["raw"] = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    pref, share, outcome, error = _preference(rec.get("preference"))
    row.update(preference=pref, win_share=share, outcome=outcome, parse_error=error)
    # The path as given, not just the name: AlpacaEval names every file annotations.json.
    row["judgment_id"] = f"{p}:{line}"
    return row
