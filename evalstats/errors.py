"""Exceptions raised by evalstats: one base, one class per kind of mistake.

:class:`EvalstatsError` is the base of every error raised on purpose; the console script turns
any of them into one line on stderr and exit status 2. :class:`DataError` is bad input data (it
names the file, line and field), :class:`ParameterError` a bad argument or option value, and
:class:`ParseError` a judge's answer that cannot be read. All three are also ``ValueError``s,
so code written against the built-in exception keeps working.

>>> issubclass(ParameterError, ValueError) and issubclass(ParameterError, EvalstatsError)
True
>>> str(DataError("not a number", path="runs.jsonl", line=3, field="wall_s"))
"runs.jsonl:3, field 'wall_s': not a number"
"""

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


class ParameterError(EvalstatsError, ValueError):
    """A bad argument of a public function or a bad option of a subcommand.

    The message names the parameter and the value refused, e.g. ``confidence must be in
    (0, 1), got 1.5``.
    """


class ParseError(EvalstatsError, ValueError):
    """A judge's output could not be read as a verdict; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ReportError(EvalstatsError):
    """The report could not be rendered (a notebook failed, produced unsafe output, or its
    output directory is held by another render)."""


__all__ = ["DataError", "EvalstatsError", "ParameterError", "ParseError", "ReportError"]
