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


def holm_table(
    table: pd.DataFrame,
    *,
    p: str = "net_win_p",
    primary: Mapping[str, Any] | Plan | Any | None = None,
) -> pd.DataFrame:
    """Add ``primary`` and ``p_holm`` to a table of tests (one row per test).

    The primary test keeps its own p-value (``p_holm`` equals ``p``; it is tested at the
    plan's alpha alone). The other rows are the secondary family: their p-values are
    Holm-adjusted among themselves.

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
        A copy of ``table`` with ``primary`` (bool) and ``p_holm``.

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
    >>> holm_table(tests, primary={"rubric": "with-without", "judge": "a"})
             rubric judge  net_win_p  primary  p_holm
    0  with-without     a       0.03     True    0.03
    1  with-without     b       0.01    False    0.03
    2    blind-pair     a       0.02    False    0.04
    3    blind-pair     b       0.30    False    0.30
    """
    check_columns(table, [p], what="table of tests")
    pv = _pvalues(table[p].to_numpy(dtype=np.float64, na_value=np.nan))
    mask = _primary_mask(table, primary)
    adjusted = pv.copy()
    adjusted[~mask] = _holm(pv[~mask])
    out = table.copy()
    out["primary"] = mask
    out["p_holm"] = adjusted
    return out
