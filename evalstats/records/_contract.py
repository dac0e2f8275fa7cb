"""The data contract's types: coercing raw fields, validating a table, duplicate keys."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._schema import (
    ARM_DTYPE,
    ARMS,
    ORDER_DTYPE,
    ORDERS,
    PAIR_ORDERS,
)
from ..errors import DataError

__all__ = ["is_missing"]


# Text (CSV) numbers: plain decimal only. Python's int() and float() also take "12_000",
# "nan", "inf" and full-width digits, which are not numbers a person typed into a table.
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)


_FLOAT_TEXT = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*", re.ASCII)


_INT64_MAX = int(np.iinfo(np.int64).max)


# Text fields that name something: an empty (or blank) value is a missing name.
_NAMES = frozenset({"judge", "rubric", "agent_model", "prompt_sha256"})


def is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def _coerce(kind: str, value: Any, text_source: bool) -> Any:
    """Coerce one value to ``kind``; raise ValueError with the reason if impossible."""
    if kind == "str":
        if isinstance(value, str):
            return value
        raise ValueError(f"expected a string, got {type(value).__name__} {value!r}")
    if kind == "int":
        if isinstance(value, bool):
            raise ValueError(f"expected an integer, got boolean {value!r}")
        if isinstance(value, (int, np.integer)):
            out_int = int(value)
        elif isinstance(value, (float, np.floating)) and float(value).is_integer():
            out_int = int(value)
        elif text_source and isinstance(value, str) and _INT_TEXT.fullmatch(value):
            out_int = int(value)
        else:
            raise ValueError(f"expected an integer, got {value!r}")
        # Every integer of the contract is a count, a budget, a replicate or a revision.
        if out_int < 0:
            raise ValueError(f"expected a non-negative integer, got {value!r}")
        if out_int > _INT64_MAX:
            raise ValueError(f"integer {value!r} is out of range (at most {_INT64_MAX})")
        return out_int
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got boolean {value!r}")
        if isinstance(value, (int, float, np.integer, np.floating)):
            try:
                out = float(value)
            except OverflowError:  # an int beyond the float range
                raise ValueError(f"number {value!r} is out of range") from None
        elif text_source and isinstance(value, str) and _FLOAT_TEXT.fullmatch(value):
            out = float(value)
        elif text_source and isinstance(value, str):
            raise ValueError(f"expected a number, got {value!r}")
        else:
            raise ValueError(f"expected a number, got {type(value).__name__} {value!r}")
        if not math.isfinite(out) or out < 0:
            raise ValueError(f"expected a finite non-negative number, got {value!r}")
        return out
    if kind == "datetime":
        if isinstance(value, pd.Timestamp):
            ts = value
        elif isinstance(value, str):
            try:
                ts = pd.Timestamp(value)
            except (ValueError, TypeError):
                raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}") from None
        else:
            raise ValueError(f"expected an ISO-8601 timestamp string, got {value!r}")
        if ts is pd.NaT:
            raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}")
        # Naive timestamps are taken as UTC: the contract asks for UTC everywhere.
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
    if kind == "arm":
        # Any name (K arms); which names a table may mix is load_runs' check.
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
    "list": object,
    "order": ORDER_DTYPE,
}


def arm_dtype(arms: pd.Series | tuple[str, ...]) -> pd.CategoricalDtype:
    """The seeds' ``with``/``without`` dtype when the arms are among those, else one in order.

    >>> arm_dtype(pd.Series(["without", "with"])).categories.tolist()
    ['with', 'without']
    >>> arm_dtype(pd.Series(["v2", "none", "v2", None])).categories.tolist()
    ['v2', 'none']
    """
    seen = [a for a in pd.unique(pd.Series(arms, dtype=object)) if not is_missing(a)]
    if set(seen) <= set(ARMS):
        return ARM_DTYPE
    return pd.CategoricalDtype(seen)


def validate_table(
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
        line = int(lines[i])
        msg = reason if unit == "line" else f"row {line}: {reason}"
        return DataError(msg, path=path, line=line if unit == "line" else None, field=field)

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
                values.append(_coerce(kind, v, text_source))
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
                # A K-arm journal's orders; load_judgments refuses a mix with with_first.
                out[name] = series.astype(object)
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
    """The file line of each row of a loaded frame (``frame.attrs["lines"]``).

    Immutable, so pandas' deep copy of ``attrs`` on every operation that returns a frame
    (thousands while a report is computed) shares it instead of copying each number.

    >>> import copy
    >>> lines = LineNumbers([2, 3, 5])
    >>> copy.deepcopy(lines) is lines, lines[1], list(lines)
    (True, 3, [2, 3, 5])
    """

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> LineNumbers:
        return self


def first_duplicate(frame: pd.DataFrame, keys: list[str]) -> int | None:
    dup = frame.duplicated(keys, keep="first").to_numpy()
    hits = np.flatnonzero(dup)
    return int(hits[0]) if hits.size else None


def duplicate_error(
    frame: pd.DataFrame, i: int, keys: list[str], path: Path, unit: str
) -> DataError:
    lines = frame.attrs["lines"]
    first = np.flatnonzero((frame[keys] == frame.loc[i, keys]).all(axis=1).to_numpy())[0]
    what = ", ".join(f"{k}={frame.at[i, k]!r}" for k in keys)
    reason = f"duplicate ({what}); first seen at {unit} {lines[first]}"
    if unit == "line":
        return DataError(reason, path=path, line=lines[i], field=keys[-1])
    return DataError(f"row {lines[i]}: {reason}", path=path, field=keys[-1])
