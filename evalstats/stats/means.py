"""Means of a continuous per-verdict value with task-clustered uncertainty.

:func:`win_rates` handles categorical verdicts; some judges give a continuous
value instead (AlpacaEval's weighted annotator returns a preference in
[1, 2], a rubric may give a 1-5 score). The task is still the unit of
independence, so the mean of such a value gets the same treatment:

* ``mean`` is the ratio estimator ``sum(y) / n`` over the non-missing rows;
* ``se`` is its CR1 cluster-robust standard error
  ``sqrt(C / (C - 1) * sum_c (Y_c - mean * n_c)^2) / n``: statsmodels' cluster
  SE of an intercept-only OLS (whose small-sample factor ``(n - 1) / (n - k)``
  is 1 for ``k = 1``), and with one row per cluster exactly the ordinary
  standard error of the mean with ``ddof=1`` (``scipy.stats.sem``,
  ``pandas.Series.sem``);
* the interval is ``mean +/- t_{C-1} se`` (``"cluster_t"``), the CR2 SE with the
  Bell-McCaffrey df of :mod:`evalstats.stats.robust` (``"cr2_t"``: better with unequal
  cluster sizes, where ``C - 1`` df overstate the information), or a cluster
  bootstrap interval (``"bca"``, ``"percentile"``, ``"basic"``) resampling
  clusters through :func:`evalstats.stats.cluster_bootstrap`;
* ``t`` and ``p_value`` test ``mean == null`` with ``C - 1`` degrees of
  freedom (the BM df and CR2 SE for ``"cr2_t"``, whose test inverts its interval).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._tidy import ResultFrame, refuse_pooled_rubrics, stack_statistics
from evalstats._validate import check_columns, check_confidence
from evalstats.errors import DataError
from evalstats.stats._cluster import by_columns, cr1_ratio
from evalstats.stats.resample import BOOTSTRAP_METHODS, as_generator, cluster_bootstrap
from evalstats.stats.robust import cr2_ratio

__all__ = ["CLUSTER_MEAN_METHODS", "cluster_mean"]

CLUSTER_MEAN_METHODS = ("cluster_t", "cr2_t", *BOOTSTRAP_METHODS)


def cluster_mean(
    frame: pd.DataFrame,
    value: str,
    *,
    cluster: str = "task_id",
    by: str | Sequence[str] | None = None,
    method: str = "cluster_t",
    confidence: float = 0.95,
    null: float = 0.0,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Mean of a numeric column per group, with a cluster-robust SE and interval.

    Parameters
    ----------
    frame : DataFrame
        Rows are observations (e.g. verdicts); needs ``value``, ``cluster`` and
        the ``by`` columns.
    value : str
        Numeric column to average. Missing values (NaN / NA) are left out and
        counted in ``n_missing``.
    cluster : str, default "task_id"
        Unit of independence; rows of one cluster are correlated.
    by : str, list of str or None
        Grouping columns (one output row per group); None gives one row.
    method : {"cluster_t", "cr2_t", "bca", "percentile", "basic"}
        Interval: CR1 SE with a t(C - 1) quantile, CR2 SE with the Bell-McCaffrey df,
        or a cluster bootstrap.
    confidence : float, default 0.95
        Confidence level of the interval.
    null : float, default 0.0
        Value of the mean under the null hypothesis of ``t`` / ``p_value``.
    n_resamples : int, default 10 000
        Bootstrap resamples (bootstrap methods only).
    rng : Generator, int or None
        Random source or seed (bootstrap methods only).

    Returns
    -------
    ResultFrame
        One row per group, sorted by the ``by`` columns: the ``by`` columns,
        ``statistic`` (``"mean"``), ``estimate``, ``se`` (CR1; CR2 for ``"cr2_t"``),
        ``ci_low``, ``ci_high``, ``p_value`` (the t test of ``null``), ``df`` (``C - 1``;
        Bell-McCaffrey for ``"cr2_t"``), ``n`` (non-missing rows), ``n_tasks`` (clusters
        with at least one), ``method``, ``confidence`` and ``t``. ``.diagnostics``: the
        ``by`` columns, ``n``, ``n_clusters``, ``n_missing``. A group without non-missing
        rows has ``n == 0`` and NaN statistics; with a single cluster the SE, interval and
        test are NaN.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.means import cluster_mean
    >>> frame = pd.DataFrame({"task_id": ["a", "b", "c", "d"], "y": [0.1, 0.4, 0.35, 0.8]})
    >>> res = cluster_mean(frame, "y")
    >>> round(float(res["estimate"].iloc[0]), 4), round(float(res["se"].iloc[0]), 4)
    (0.4125, 0.1449)
    >>> float(res["se"].iloc[0]) == float(frame["y"].sem())  # one row per cluster
    True
    """
    by_cols = by_columns(by)
    check_columns(frame, [value, cluster, *by_cols], what="frame")
    refuse_pooled_rubrics(frame, by_cols, "cluster_mean")
    if method not in CLUSTER_MEAN_METHODS:
        raise ValueError(f"method must be one of {CLUSTER_MEAN_METHODS}, got {method!r}")
    confidence = check_confidence(confidence)
    try:
        y = pd.to_numeric(frame[value], errors="raise").to_numpy(np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"column {value!r} is not numeric: {exc}", field=value) from None
    if np.isinf(y).any():
        pos = int(np.flatnonzero(np.isinf(y))[0])
        raise DataError(f"infinite value {y[pos]}", line=pos, field=value)
    if frame[cluster].isna().any():
        pos = int(np.flatnonzero(frame[cluster].isna().to_numpy())[0])
        raise DataError("missing cluster id", line=pos, field=cluster)

    groups, group_of_row = _groups(frame, by_cols)
    n_groups = len(groups)
    present = ~np.isnan(y)
    n_missing = np.bincount(group_of_row[~present], minlength=n_groups)

    # Per (group, cluster) cell: sum of y and count of rows.
    cluster_codes = pd.factorize(frame[cluster], sort=True)[0].astype(np.int64)
    n_ids = max(int(cluster_codes.max(initial=-1)) + 1, 1)
    cells, cell_of_row = np.unique(
        group_of_row[present] * n_ids + cluster_codes[present], return_inverse=True
    )
    gid = (cells // n_ids).astype(np.int64)
    y_c = np.bincount(cell_of_row, weights=y[present], minlength=len(cells))
    m_c = np.bincount(cell_of_row, minlength=len(cells)).astype(np.float64)

    if method == "cr2_t":
        est, se, df, n_clusters, n, _ = cr2_ratio(y_c[:, None], m_c, gid, n_groups)
    else:
        est, se, n_clusters, n = cr1_ratio(y_c[:, None], m_c, gid, n_groups)
        df = np.where(n_clusters > 1, n_clusters - 1.0, np.nan)
    est, se = est[:, 0], se[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (est - float(null)) / se
        p = 2.0 * stats.t.sf(np.abs(t), df)
        if method in ("cluster_t", "cr2_t"):
            tq = stats.t.ppf(0.5 + confidence / 2.0, df)
            low, high = est - tq * se, est + tq * se
        else:
            low, high = _bootstrap(
                y_c, m_c, gid, n_groups, method, n_resamples, confidence, as_generator(rng)
            )

    diagnostics = groups.copy()
    diagnostics["n"] = n.astype(np.int64)
    diagnostics["n_clusters"] = n_clusters.astype(np.int64)
    diagnostics["n_missing"] = n_missing.astype(np.int64)
    row = {
        "estimate": est,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "df": df,
        "n": n.astype(np.int64),
        "n_tasks": n_clusters.astype(np.int64),
        "method": method,
        "confidence": confidence,
        "t": t,
    }
    return stack_statistics(groups, [("mean", row)], diagnostics=diagnostics, extra=("t",))


def _groups(frame: pd.DataFrame, by_cols: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The sorted group table and each row's group id (factorised keys, no groupby)."""
    if not by_cols:
        return pd.DataFrame(index=pd.RangeIndex(1)), np.zeros(len(frame), dtype=np.int64)
    codes, uniques = [], []
    for col in by_cols:
        k, u = pd.factorize(frame[col], sort=True, use_na_sentinel=False)
        codes.append(np.asarray(k, dtype=np.int64))
        uniques.append(u)
    shape = [max(len(u), 1) for u in uniques]
    key = np.ravel_multi_index(codes, shape) if len(frame) else np.zeros(0, dtype=np.int64)
    keys, group_of_row = np.unique(key, return_inverse=True)
    parts = np.unravel_index(keys, shape)
    groups = pd.DataFrame(
        {col: pd.Series(uniques[j].take(parts[j])) for j, col in enumerate(by_cols)}
    )
    return groups, group_of_row.astype(np.int64)


def _bootstrap(
    y_c: np.ndarray,
    m_c: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    method: str,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    low = np.full(n_groups, np.nan)
    high = np.full(n_groups, np.nan)
    stats = np.stack([y_c, m_c], axis=1)
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(n_groups + 1))
    for g in range(n_groups):  # groups are few; each bootstrap is vectorised over resamples
        cs = stats[order[bounds[g] : bounds[g + 1]]]
        if cs.shape[0] < 2:
            continue
        res = cluster_bootstrap(
            cs,
            _ratio,
            method=method,
            n_resamples=n_resamples,
            confidence=confidence,
            rng=rng,
        )
        low[g], high[g] = res.ci_low[0], res.ci_high[0]
    return low, high


def _ratio(s: np.ndarray) -> np.ndarray:
    return s[..., 0] / s[..., 1]
