"""CSV cells a spreadsheet will not execute: the one rule for every CSV evalstats writes
(docs/data.md, CSV cells)."""

from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FORMULA_STARTS", "neutralise_cell", "restore_cell", "restore_frame", "safe_csv", "safe_frame",
]  # fmt: skip

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_STARTS = (*FORMULA_STARTS, _QUOTE)
_RISKY = "^[" + re.escape("".join(_STARTS)) + "]"


def neutralise_cell(value: Any) -> Any:
    """``value`` made inert for a spreadsheet (non-strings unchanged).

    >>> neutralise_cell("@SUM(A1)"), neutralise_cell("-0.25"), neutralise_cell("fine")
    ("'@SUM(A1)", '-0.25', 'fine')
    """
    risky = isinstance(value, str) and value[:1] in _STARTS
    return _QUOTE + value if risky and not _NUMBER_RE.fullmatch(value) else value


def restore_cell(value: Any) -> Any:
    """The value :func:`neutralise_cell` was given (for cells evalstats wrote)."""
    if isinstance(value, str) and value[:1] == _QUOTE and value[1:2] in _STARTS:
        return value[1:]
    return value


_IS_STR = np.frompyfunc(lambda v: isinstance(v, str), 1, 1)


def _text_columns(frame: pd.DataFrame) -> list[Any]:
    return [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c].dtype)]


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are neutralised.

    >>> df = pd.DataFrame({"answer": ["=1+1", "ok", "-2"], "x": [-1.0, 2.0, 3.0]})
    >>> safe_frame(df)["answer"].tolist(), safe_frame(df)["x"].tolist()
    (["'=1+1", 'ok', '-2'], [-1.0, 2.0, 3.0])
    """
    out = frame.copy()
    for column in _text_columns(out):
        series = out[column]
        # As objects: a string (pyarrow) column's map(type) would be a string column again.
        is_str = _IS_STR(series.to_numpy(dtype=object)).astype(bool)
        if not is_str.any():
            continue
        # object first: a categorical refuses the "" filler (not one of its categories)
        text = series.astype(object).where(is_str, "").astype(str)
        risky = text.str.contains(_RISKY, regex=True) & ~text.str.fullmatch(_NUMBER)
        flag = risky.to_numpy(dtype=bool) & is_str
        if flag.any():
            values = series.to_numpy(dtype=object, copy=True)
            values[flag] = np.char.add(_QUOTE, text.to_numpy(dtype=str)[flag]).astype(object)
            out[column] = pd.Series(values, index=series.index, dtype=object)
    out.columns = [neutralise_cell(c) for c in out.columns]
    return out


def restore_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Undo :func:`safe_frame` on a frame read back with ``dtype=str``."""
    out = frame.copy()
    for column in _text_columns(out):
        out[column] = out[column].map(restore_cell)
    out.columns = [restore_cell(c) for c in out.columns]
    return out


def safe_csv(
    frame: pd.DataFrame, path: str | os.PathLike[str] | None = None, **to_csv: Any
) -> str | None:
    """``frame.to_csv(path, **to_csv)`` with every text cell neutralised; CRLF lines, so that
    the writer quotes every cell holding a carriage return (a bare CR starts a new row).

    >>> text = safe_csv(pd.DataFrame({"a": ["@SUM(A1)", "x" + chr(13) + "=1"]}), index=False)
    >>> text.splitlines(keepends=False)[1], text.count(chr(34))
    ("'@SUM(A1)", 2)
    """
    to_csv.setdefault("lineterminator", "\r\n")
    return safe_frame(frame).to_csv(path, **to_csv)
