"""Cluster-level sums and the CR1 ratio estimator shared by the win-rate and mean modules.

Rows are aggregated to per-(group, cluster) sums first; every SE here treats the cluster (the
task) as the unit of independence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["by_columns", "cr1_ratio", "segment_sum"]


def segment_sum(values: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Column sums of ``values`` (rows x columns) per group id, as float64.

    >>> segment_sum(np.array([[1.0], [2.0], [4.0]]), np.array([0, 1, 1]), 2).ravel().tolist()
    [1.0, 6.0]
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty((n_groups, values.shape[1]))
    for j in range(values.shape[1]):  # a handful of columns
        out[:, j] = np.bincount(gid, weights=values[:, j], minlength=n_groups)
    return out


def by_columns(by: str | Sequence[str] | None) -> list[str]:
    """The ``by=`` argument as a list of column names (``None`` -> no grouping).

    >>> by_columns("judge"), by_columns(None)
    (['judge'], [])
    """
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    cols = list(by)
    if not all(isinstance(c, str) for c in cols):
        raise TypeError(f"by must be a column name, a list of names or None, got {by!r}")
    return cols


def cr1_ratio(
    y: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ratio estimators sum(y) / sum(m) per group with CR1 standard errors.

    ``y`` (rows = clusters, columns = statistics) and ``m`` are per-cluster
    sums. The SE linearises the ratio: cluster residual totals
    ``E_c = y_c - r * m_c`` and ``SE = sqrt(C / (C - 1) * sum_c E_c^2) / sum(m)``.
    For the mean of row-level values this is exactly the cluster-robust SE of an
    intercept-only OLS with the CR1 factor ``C / (C - 1)`` (statsmodels adds
    ``(n - 1) / (n - k)``, which is 1 when ``k = 1``); with one row per
    cluster it is the ordinary standard error of the mean.

    >>> y = np.array([[0.1], [0.4], [0.35], [0.8]])  # one row per cluster, one group
    >>> est, se, n_clusters, n = cr1_ratio(y, np.ones(4), np.zeros(4, dtype=int), 1)
    >>> round(float(est[0, 0]), 4), round(float(se[0, 0]), 4)  # = mean and scipy.stats.sem
    (0.4125, 0.1449)
    """
    y_tot = segment_sum(y, gid, n_groups)
    m_tot = np.bincount(gid, weights=m, minlength=n_groups)
    n_clusters = np.bincount(gid, minlength=n_groups).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = y_tot / m_tot[:, None]
        resid = y - est[gid] * m[:, None]
        ss = segment_sum(resid**2, gid, n_groups)
        factor = np.where(n_clusters > 1, n_clusters / (n_clusters - 1), np.nan)
        se = np.sqrt(factor[:, None] * ss) / m_tot[:, None]
    return est, se, n_clusters, m_tot
