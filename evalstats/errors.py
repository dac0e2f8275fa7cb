"""Exceptions raised by evalstats: one base, one class per kind of mistake (also ``ValueError``).

>>> str(DataError("not a number", path="runs.jsonl", line=3, field="wall_s"))
"runs.jsonl:3, field 'wall_s': not a number"
"""

from __future__ import annotations

from os import PathLike


class EvalstatsError(Exception):
    """Base class of every error evalstats raises on purpose."""


class DataError(EvalstatsError, ValueError):
    """Bad input data; ``path``, ``line`` (1-based) and ``field`` name where, when known."""

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line, self.field, self.reason = line, field, message
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
    """A bad argument or option; the message names it and the value refused."""


class ParseError(EvalstatsError, ValueError):
    """A judge's output could not be read as a verdict; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class ReportError(EvalstatsError):
    """The report could not be rendered."""


__all__ = ["DataError", "EvalstatsError", "ParameterError", "ParseError", "ReportError"]
