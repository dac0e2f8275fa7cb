"""Exceptions raised by evalstats."""

from __future__ import annotations

from os import PathLike


class EvalstatsError(Exception):
    """Base class of every error evalstats raises on purpose."""


class DataError(EvalstatsError, ValueError):
    """Bad input data; the message names the file, the line (or row) and the field.

    Attributes
    ----------
    path : str or None
        File the bad record came from (``None`` for in-memory frames).
    line : int or None
        1-based line number (JSON Lines), row number (CSV: header is line 1) or
        row index (Parquet).
    field : str or None
        Offending field, if the problem is tied to one.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = []
        if self.path is not None:
            where.append(self.path if line is None else f"{self.path}:{line}")
        elif line is not None:
            where.append(f"line {line}")
        if field is not None:
            where.append(f"field {field!r}")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class ParseError(EvalstatsError, ValueError):
    """A judge's output could not be read as a verdict; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
