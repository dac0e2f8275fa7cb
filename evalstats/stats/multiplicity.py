"""Multiplicity control across the judge x rubric tests: Holm's step-down adjustment.

The declared primary test (:mod:`evalstats.plan`) is reported at its own level; every other
test of the same family (each judge on each rubric, consensus rows, ...) is a secondary one
whose p-value is Holm-adjusted (Holm 1979, "A simple sequentially rejective multiple test
procedure"), which controls the family-wise error rate under any dependence between the
tests — judges scoring the same pairs are far from independent.

Holm's adjusted p-values, for ``m`` p-values sorted ``p_(1) <= ... <= p_(m)``:
``p~_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))``, as
``statsmodels.stats.multitest.multipletests(p, method="holm")`` computes them; :func:`holm`
calls it on the p-values that are not NaN.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from evalstats._validate import check_columns
from evalstats.plan import Plan

__all__ = ["holm", "holm_table"]


def _pvalues(pvalues: Any) -> np.ndarray:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    bad = ~np.isnan(p) & ((p < 0.0) | (p > 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"p-values must be in [0, 1]; pvalues[{i}] = {p[i]}")
    return p


def _holm(p: np.ndarray) -> np.ndarray:
    # multipletests counts a NaN in the family size and sorts it last: the tests that could
    # not be run are left out of the family and stay NaN.
    out = np.full(p.shape, np.nan)
    finite = ~np.isnan(p)
    if finite.any():
        out[finite] = multipletests(p[finite], method="holm")[1]
    return out


def holm(pvalues: Any) -> np.ndarray:
    """Holm-adjusted p-values, in the order given.

    Parameters
    ----------
    pvalues : array-like of float
        One-dimensional, each in [0, 1]. NaN entries (tests that could not be run) stay
        NaN and are not counted in the family size ``m``.

    Returns
    -------
    ndarray
        The adjusted p-values; reject test ``i`` at family-wise level ``alpha`` when
        ``adjusted[i] <= alpha``.

    Examples
    --------
    >>> from evalstats.stats.multiplicity import holm
    >>> holm([0.01, 0.04, 0.03, 0.20]).round(4).tolist()
    [0.04, 0.09, 0.09, 0.2]
    >>> holm([0.02, float("nan"), 0.04]).tolist()
    [0.04, nan, 0.04]
    """
    return _holm(_pvalues(pvalues))


def _primary_mask(table: pd.DataFrame, primary: Any) -> np.ndarray:
    if primary is None:
        return np.zeros(len(table), dtype=bool)
    if isinstance(primary, Plan):
        primary = primary.primary_key
    if isinstance(primary, Mapping):
        check_columns(table, list(primary), what="table of tests")
        mask = np.ones(len(table), dtype=bool)
        for col, value in primary.items():
            mask &= table[col].astype(object).to_numpy() == value
        what = ", ".join(f"{k}={v!r}" for k, v in primary.items())
    else:
        mask = np.asarray(primary, dtype=bool)
        if mask.shape != (len(table),):
            raise ValueError(
                f"primary mask has shape {mask.shape}, the table has {len(table)} rows"
            )
        what = "the primary mask"
    n = int(mask.sum())
    if n != 1:
        raise ValueError(f"{what} selects {n} rows of the table; the primary test is one row")
    return mask


#: What ``holm_table``'s ``p_holm`` is with a primary, and without one.
FIXED_SEQUENCE = "fixed-sequence: primary at alpha, Holm over the secondaries"
WHOLE_FAMILY = "Holm over the whole family"


def holm_table(
    table: pd.DataFrame,
    *,
    p: str = "net_win_p",
    primary: Mapping[str, Any] | Plan | Any | None = None,
) -> pd.DataFrame:
    """Add ``primary``, the Holm-adjusted p-values and the procedure's name to a table of tests.

    With a ``primary``, the procedure is labelled :data:`FIXED_SEQUENCE`: the primary test
    keeps its own p-value (``p_holm`` equals ``p``; it is tested at the plan's alpha alone)
    and the other rows, the secondary family, are Holm-adjusted among themselves
    (``p_holm``). ``p_holm`` alone does not control the family-wise error of the whole
    family (0.084 at alpha 0.05 under the global null, issue 23): a secondary counts only
    where the primary rejected too, which ``p_fixed_sequence`` (``max(p_primary,
    p_holm)``, the fixed-sequence adjusted p-value) states in one number; it controls the
    family-wise error at alpha. ``p_holm_family`` is Holm over every row, primary included
    (:data:`WHOLE_FAMILY`), for those who want the primary adjusted too. Without a primary
    all three columns are the whole-family Holm.

    Parameters
    ----------
    table : DataFrame
        One row per test, e.g. :func:`evalstats.stats.win_rates` by judge and rubric.
    p : str, default "net_win_p"
        Column of p-values.
    primary : mapping, Plan, boolean mask or None
        The primary row: column -> value (e.g. ``{"rubric": "with-without", "judge":
        "openai:gpt-5.4"}``), a :class:`~evalstats.plan.Plan` (its ``primary_key``), or a
        boolean mask with one True. None: every row is adjusted.

    Returns
    -------
    DataFrame
        A copy of ``table`` with ``primary`` (bool), ``p_holm``, ``p_fixed_sequence``,
        ``p_holm_family`` and ``procedure`` (:data:`FIXED_SEQUENCE` or
        :data:`WHOLE_FAMILY`: what ``p_holm`` controls).

    Raises
    ------
    ValueError
        ``primary`` selects no row or several; a p-value outside [0, 1].

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.multiplicity import holm_table
    >>> tests = pd.DataFrame({
    ...     "rubric": ["with-without", "with-without", "blind-pair", "blind-pair"],
    ...     "judge": ["a", "b", "a", "b"],
    ...     "net_win_p": [0.03, 0.01, 0.02, 0.30],
    ... })
    >>> out = holm_table(tests, primary={"rubric": "with-without", "judge": "a"})
    >>> out[["judge", "primary", "p_holm", "p_fixed_sequence", "p_holm_family"]]
      judge  primary  p_holm  p_fixed_sequence  p_holm_family
    0     a     True    0.03              0.03           0.06
    1     b    False    0.03              0.03           0.04
    2     a    False    0.04              0.04           0.06
    3     b    False    0.30              0.30           0.30
    >>> out["procedure"].iloc[0]
    'fixed-sequence: primary at alpha, Holm over the secondaries'
    """
    check_columns(table, [p], what="table of tests")
    pv = _pvalues(table[p].to_numpy(dtype=np.float64, na_value=np.nan))
    mask = _primary_mask(table, primary)
    adjusted = pv.copy()
    adjusted[~mask] = _holm(pv[~mask])
    family = _holm(pv)
    # The secondaries are read only once the primary rejected: their fixed-sequence
    # adjusted p-value is never below the primary's.
    gated = np.where(mask, pv, np.maximum(adjusted, pv[mask].max() if mask.any() else -np.inf))
    out = table.copy()
    out["primary"] = mask
    out["p_holm"] = adjusted
    out["p_fixed_sequence"] = gated
    out["p_holm_family"] = family
    out["procedure"] = FIXED_SEQUENCE if mask.any() else WHOLE_FAMILY
    return out
