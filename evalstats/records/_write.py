"""Atomic writers of JSON Lines and of frames (Parquet, CSV, JSON Lines)."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._atomic import atomic_write
from .._csvsafe import safe_csv
from ..errors import DataError
from ._read import _JSONL, _reason

__all__ = ["FRAME_SUFFIXES", "check_output_path", "write_frame_atomic", "write_jsonl_atomic"]


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


#: Output types :func:`write_frame_atomic` writes.
FRAME_SUFFIXES = (".parquet", ".csv", *_JSONL)


def check_output_path(
    path: str | os.PathLike[str], *, suffixes: Iterable[str] = FRAME_SUFFIXES
) -> Path:
    """Check, before any work is done, that a table can be written to ``path``.

    The name must end in one of ``suffixes`` and must not be a directory, and the nearest
    existing parent directory must accept a new file (tried with a temporary file that is
    removed at once: permission bits alone do not tell, e.g. under ``/proc`` or as root).

    Raises
    ------
    DataError
        Naming the path and what is wrong with it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_path(d / "verdicts.parquet").name
    'verdicts.parquet'
    >>> check_output_path(d / "verdicts.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: ...verdicts.txt: unsupported output type '.txt'; use .parquet, .csv, .jsonl or .ndjson
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
    """Write a DataFrame as Parquet, CSV or JSON Lines (by extension), atomically.

    Raises ``DataError`` (a ``ValueError``) for a path :func:`check_output_path` refuses.
    """
    p = check_output_path(path)
    suffix = p.suffix.lower()
    if suffix in _JSONL:
        clean = frame.astype(object).where(frame.notna(), None)
        return write_jsonl_atomic(p, clean.to_dict(orient="records"))
    if suffix == ".parquet":
        atomic_write(p, lambda fh: frame.to_parquet(fh, index=False))
    elif suffix == ".csv":
        # Agent text opened in a spreadsheet must not run: formula-like cells neutralised
        # (the reader of records restores them).
        text = safe_csv(_lists_as_json(frame), index=False) or ""
        atomic_write(p, lambda fh: fh.write(text.encode("utf-8")))
    return p
