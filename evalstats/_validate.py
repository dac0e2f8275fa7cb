"""Argument checks shared by every layer: one wording, one place."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

from .errors import DataError, ParameterError

__all__ = [
    "DuplicateKey", "unique_keys", "check_columns", "MAX_DRAWS", "MAX_RESAMPLES", "check_confidence", "check_range",
    "check_n_resamples", "check_positive_int", "check_probability", "check_seed", "check_choice",
]  # fmt: skip


def check_range(
    value: Any, name: str, low: float = -math.inf, high: float = math.inf, *, closed=(True, True)
) -> float:
    """``value`` as a finite float in [``low``, ``high``] (an end open where ``closed`` says);
    bools and strings refused.

    >>> check_range(0.3, "icc", 0, 1, closed=(True, False))
    0.3
    """
    v = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None
    if v is None or not (
        math.isfinite(v)
        and (low <= v if closed[0] else low < v)
        and (v <= high if closed[1] else v < high)
    ):
        ends = "[("[not closed[0] or low == -math.inf] + f"{low:g}, {high:g}"
        ends += "])"[not closed[1] or high == math.inf]
        raise ParameterError(f"{name} must be in {ends}, got {value!r}")
    return v


def check_confidence(confidence: Any) -> float:
    """``confidence`` as a float in (0, 1); :class:`~evalstats.errors.ParameterError` otherwise."""
    return check_range(confidence, "confidence", 0, 1, closed=(False, False))


#: The most resamples any statistic draws (more exhausts memory for no published digit).
MAX_RESAMPLES = 1_000_000


def check_positive_int(
    value: Any, name: str, *, minimum: int = 1, maximum: int | None = None
) -> int:
    """``value`` as an int >= ``minimum`` (and <= ``maximum``); bools and fractions refused.

    >>> check_positive_int(2000, "n_resamples")
    2000
    """
    whole = isinstance(value, float) and value.is_integer()
    ok = whole or isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok or int(value) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if maximum is not None and int(value) > maximum:
        raise ParameterError(f"{name} must be an integer <= {maximum:,}, got {value!r}")
    return int(value)


#: The most resamples times pairs of arms one call draws (work and memory grow with both).
MAX_DRAWS = 20_000_000


def check_n_resamples(value: Any, name: str = "n_resamples", *, minimum=1, pairs=1) -> int:
    """A resample count: an integer in [``minimum``, :data:`MAX_RESAMPLES`] whose product with
    ``pairs`` is at most :data:`MAX_DRAWS`."""
    n = check_positive_int(value, name, minimum=minimum, maximum=MAX_RESAMPLES)
    if n * pairs > MAX_DRAWS:
        raise ParameterError(
            f"{name} x pairs of arms = {n:,} x {pairs:,} exceeds {MAX_DRAWS:,}: "
            f"use {name} <= {MAX_DRAWS // pairs:,}"
        )
    return n


def check_seed(value: Any, name: str = "seed") -> int | None:
    """A random seed: None or an int >= 0 (what ``numpy.random.default_rng`` takes)."""
    if value is None:
        return None
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not ok or int(value) < 0:
        raise ParameterError(f"{name} must be None or an integer >= 0, got {value!r}")
    return int(value)


def check_probability(value: Any, name: str, *, closed: bool = True) -> float:
    """``value`` as a float in [0, 1] (or (0, 1) with ``closed=False``)."""
    return check_range(value, name, 0, 1, closed=(closed, closed))


def check_columns(frame: Any, columns: Iterable[str], *, what: str = "verdict frame") -> None:
    """``TypeError`` unless ``frame`` is a DataFrame; ``DataError`` naming missing columns."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a pandas DataFrame, got {type(frame).__name__}")
    missing: Sequence[str] = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{what} lacks column(s) {list(missing)}", field=missing[0])


def check_choice(value: Any, name: str, options: Sequence[Any]) -> Any:
    """``value`` if it is one of ``options``, else a ``ParameterError`` saying which.

    >>> check_choice("all", "pairs", ("all", "reference"))
    'all'
    """
    if value not in options:
        raise ParameterError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


class DuplicateKey(Exception):
    """A key given twice in one JSON object (its ``args[0]``)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` ``object_pairs_hook``: a repeated key raises :class:`DuplicateKey`."""
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        raise DuplicateKey(next(k for i, k in enumerate(keys) if k in keys[:i]))
    return out
