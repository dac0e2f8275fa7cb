"""Compact views of result tables (``est [lo, hi]`` per statistic) and the number formats the
report and its exports share: ``digits`` decimals in the unit shown, rates in percent,
coefficients and ratios with ``digits + 2``; ``percent=False`` shows decimals throughout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._tidy import is_long, result_by, wide
from .._validate import check_positive_int

__all__ = [
    "PERCENT_STATISTICS", "IntervalColumns", "format_interval", "format_number",
    "interval_columns", "statistic_digits", "statistic_scale", "summarize",
]  # fmt: skip

# Proportions (or differences of them): shown in percent.
PERCENT_STATISTICS = frozenset({
    "win_rate", "tie_rate", "loss_rate", "net_win", "score", "observed_agreement",
    "disagreement_rate", "first_shown_win_rate", "order_consistency",
})  # fmt: skip
# Statistics without an interval that are still worth a column when present.
_POINT_STATISTICS = (
    "observed_agreement", "disagreement_rate", "fleiss_kappa", "krippendorff_alpha",
)  # fmt: skip
# Counts, in the order shown.
_COUNT_COLUMNS = ("n", "n_pairs", "n_pair_orders", "n_tasks")
# Label-like columns that are not labels of a row.
_NOT_LABELS = frozenset(
    {"method", "no_answer_as", "invalid_as", "ci_note", "kappa_method", "confusion", "trigger"}
)
_TRAILER = ("method", "confidence")
DEFAULT_NA = "–"


@dataclass(frozen=True)
class IntervalColumns:
    """A statistic's ``name`` and the columns of its ``estimate``, ``ci_low``, ``ci_high``
    (None without an interval)."""

    name: str
    estimate: str
    ci_low: str | None
    ci_high: str | None


def interval_columns(table: pd.DataFrame) -> list[IntervalColumns]:
    """The statistics of ``table`` that carry an interval, in column order."""
    cols = [str(c) for c in table.columns]
    have = set(cols)
    out = []
    for c in cols:
        if c == "ci_low" and {"estimate", "ci_high"} <= have:
            out.append(IntervalColumns("estimate", "estimate", "ci_low", "ci_high"))
            continue
        if not c.endswith("_ci_low"):
            continue
        base = c[: -len("_ci_low")]
        if f"{base}_ci_high" not in have:
            continue
        if base in have:
            est = base
        elif base.endswith("_boot") and base[: -len("_boot")] in have:
            est = base[: -len("_boot")]
        else:
            continue
        out.append(IntervalColumns(base, est, c, f"{base}_ci_high"))
    return out


def statistic_digits(name: str, *, digits: int | None = None, percent: bool = True) -> int:
    """Decimals shown for statistic ``name`` (see the module docstring)."""
    if percent:
        d = 0 if digits is None else digits
        return d if _is_rate(name) else d + 2
    return 2 if digits is None else digits


def _is_rate(name: str) -> bool:
    return name in PERCENT_STATISTICS or (
        name.endswith("_boot") and name[: -len("_boot")] in PERCENT_STATISTICS
    )


def statistic_scale(name: str, *, percent: bool = True) -> float:
    """Factor from the table's value to the number shown: 100 for a rate in percent."""
    return 100.0 if percent and _is_rate(name) else 1.0


def format_number(values: object, decimals: int, *, na_rep: str = DEFAULT_NA) -> np.ndarray:
    """Numbers as fixed-point strings (vectorised); NaN/None -> ``na_rep``; never ``-0``."""
    decimals = check_positive_int(decimals, "decimals", minimum=0)
    arr = _as_float(values)
    # printf rounds the binary value correctly; a negative value rounding to zero is not "-0".
    text = np.char.mod(f"%.{decimals}f", np.where(np.isnan(arr), 0.0, arr))
    unsigned = np.char.lstrip(text, "-")
    zero = np.char.strip(np.char.replace(unsigned, ".", ""), "0") == ""
    text = np.where(zero, unsigned, text)
    return np.where(np.isnan(arr), na_rep, text).astype(object)


def format_interval(
    estimate: object,
    ci_low: object,
    ci_high: object,
    decimals: int,
    *,
    scale: float = 1.0,
    unit: str = "",
    na_rep: str = DEFAULT_NA,
) -> np.ndarray:
    """``"est [lo, hi]"`` strings (vectorised); ``unit`` follows the estimate (``" %"``)."""
    est = _as_float(estimate) * scale
    lo = _as_float(ci_low) * scale
    hi = _as_float(ci_high) * scale
    e, lo_s, hi_s = (format_number(v, decimals, na_rep=na_rep) for v in (est, lo, hi))
    text = [
        f"{a}{unit}" if np.isnan(x) or np.isnan(y) else f"{a}{unit} [{b}, {c}]"
        for a, b, c, x, y in zip(e, lo_s, hi_s, lo, hi, strict=True)
    ]
    return np.where(np.isnan(est), na_rep, np.array(text, dtype=object))


def _as_float(values: object) -> np.ndarray:
    s = pd.to_numeric(pd.Series(np.asarray(values, dtype=object).ravel()), errors="coerce")
    return s.to_numpy(dtype=float, na_value=np.nan)


def summarize(
    table: pd.DataFrame,
    *,
    statistics: Sequence[str] | None = None,
    digits: int | None = None,
    percent: bool = True,
    na_rep: str = DEFAULT_NA,
) -> pd.DataFrame:
    """Compact view of a result table: labels, counts, ``est [lo, hi]`` per statistic, method.

    Parameters
    ----------
    table : DataFrame
        A long result (pivoted here to one row per group) or a table one row per group.
    statistics : sequence of str, optional
        Statistics to show, in order (default: every one present).
    digits : int, optional
        Decimals in the unit shown (default 0 for percent, 2 for decimals).
    percent : bool
        Rates in percent, the header saying ``(%)``.
    na_rep : str
        Text for a missing estimate.

    Returns
    -------
    DataFrame
        One row per group: labels, counts, one text column per statistic, method, confidence.

    Examples
    --------
    >>> t = pd.DataFrame({
    ...     "judge": ["j1", "j2"], "n": [64, 30], "n_pairs": [32, 30], "n_tasks": [15, 15],
    ...     "win_rate": [0.5815, 0.4], "win_rate_ci_low": [0.41, 0.3],
    ...     "win_rate_ci_high": [0.7301, 0.52], "method": "cr2_bm", "confidence": 0.95})
    >>> summarize(t)
      judge   n  n_pairs  n_tasks win_rate (%)  method  confidence
    0    j1  64       32       15  58 [41, 73]  cr2_bm        0.95
    1    j2  30       30       15  40 [30, 52]  cr2_bm        0.95
    """
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"summarize expects a DataFrame, got {type(table).__name__}")
    by = result_by(table) if is_long(table) else []
    one_pair = set(by) <= {"arm_a", "arm_b"} and len(table[by].drop_duplicates()) <= 1
    if by and not one_pair:  # one pair of arms and no other group stays long
        table = wide(table)
    if digits is not None:
        digits = check_positive_int(digits, "digits", minimum=0)
    found = {c.name: c for c in interval_columns(table)}
    points = {
        name: IntervalColumns(name, name, None, None)
        for name in _POINT_STATISTICS
        if name in table.columns and name not in found
    }
    available = {**points, **found}
    if statistics is None:
        chosen = list(available.values())
    else:
        unknown = [s for s in statistics if s not in available and s not in table.columns]
        if unknown:
            raise ValueError(
                f"statistics not in the table: {', '.join(unknown)}; "
                f"available: {', '.join(available) or 'none'}"
            )
        chosen = [available.get(s, IntervalColumns(s, s, None, None)) for s in statistics]
    used = {c for s in found.values() for c in (s.estimate, s.ci_low, s.ci_high)}
    not_labels = _NOT_LABELS | used | {*_COUNT_COLUMNS, *_TRAILER}
    out = pd.DataFrame(index=table.index)
    for c in table.columns:
        # a long result's per-statistic method or note, pivoted: not a label of the row
        if c in not_labels or c.endswith(("_method", "_ci_note")) or not _is_text(table[c]):
            continue
        col = table[c]
        out[c] = col.astype("string") if isinstance(col.dtype, pd.CategoricalDtype) else col
    for c in _COUNT_COLUMNS:
        if c in table.columns:
            out[c] = table[c]
    for stat in chosen:
        d = statistic_digits(stat.name, digits=digits, percent=percent)
        scale = statistic_scale(stat.name, percent=percent)
        header = f"{stat.name} (%)" if scale == 100.0 else stat.name
        lo = table[stat.ci_low] if stat.ci_low else np.full(len(table), np.nan)
        hi = table[stat.ci_high] if stat.ci_high else np.full(len(table), np.nan)
        values = np.concatenate([_as_float(v) for v in (table[stat.estimate], lo, hi)])
        values = values[~np.isnan(values)]
        if len(values) and (values == np.round(values)).all() and np.abs(values).max() > 1:
            d = 0  # a rank and its rank set: "3 [1, 3]"
        out[header] = format_interval(table[stat.estimate], lo, hi, d, scale=scale, na_rep=na_rep)
    for c in _TRAILER:
        if c in table.columns:
            out[c] = table[c].astype("string") if c == "method" else table[c]
    return out.reset_index(drop=True)


def _is_text(col: pd.Series) -> bool:
    if isinstance(col.dtype, pd.CategoricalDtype):
        return True
    if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
        return False
    values = col.dropna()
    # An all-missing column (e.g. read back from JSON) is no label.
    return bool(len(values)) and bool(values.map(lambda v: isinstance(v, str)).all())
