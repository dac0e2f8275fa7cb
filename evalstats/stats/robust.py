"""Small-sample cluster-robust inference for a mean of clustered rows (ratio estimator).

The rates of :func:`evalstats.win_rates` (and any mean over verdicts) are ratio estimators
``r = sum_c y_c / sum_c m_c`` of per-cluster sums ``y_c`` over ``m_c`` rows: the intercept
of an OLS of the row values on a constant, clustered by task. For that regression the
CR2 ("bias-reduced linearisation") variance of Bell & McCaffrey (2002) and its
Satterthwaite degrees of freedom under a working independence model (Bell & McCaffrey
2002, sec. 4; Pustejovsky & Tipton 2018, *JBES* 36(4), "Small-sample methods for
cluster-robust variance estimation and hypothesis testing"; the small-sample practice
Imbens & Kolesár 2016, *REStat* 98(4), recommend) have closed forms, because the hat
matrix of a constant is ``J / n`` and its cluster blocks ``H_cc = J_c / n`` have one
non-zero eigenvalue ``h_c = m_c / n`` on the constant vector.

* CR2 adjusts each cluster's residuals by ``(I - H_cc)^{-1/2}``, which multiplies their
  total ``E_c = y_c - r m_c`` by ``(1 - h_c)^{-1/2}``, so
  ``V_CR2 = sum_c E_c^2 / (1 - h_c) / n^2``.
* The Bell-McCaffrey df is ``(tr G)^2 / ||G||_F^2`` with
  ``G_cd = a_c a_d (delta_cd m_c - m_c m_d / n)``, ``a_c = (1 - h_c)^{-1/2}``; its
  diagonal is ``m_c`` and its off-diagonal part has rank one, so with
  ``q_c = m_c^2 / (1 - h_c)``:
  ``df = n^2 / (sum_c m_c^2 + ((sum_c q_c)^2 - sum_c q_c^2) / n^2)``.
  Balanced clusters give ``C - 1``; unequal ones fewer (12 tasks of 1-30 rows: 4.1).

* The net-win df (:func:`bm_df_exchangeable`) is the same Satterthwaite df with the rows'
  covariance taken as exchangeable within a cluster at the one-way ANOVA ICC of the
  net-win row values (:func:`anova_icc`, floored at 0) instead of independent — the df
  Imbens & Kolesár (2016) compute under a random-effects model, and Pustejovsky & Tipton
  (2018) under a working model; the CR2 variance stays the working-independence one.
  Equal cluster sizes give ``C - 1`` at every ICC. With unequal sizes and a positive ICC
  the working-independence df is too large for the net-win test: on 12 tasks of 1-30
  verdicts (ICC 0.3) it rejected a true net win of 0 in 6.4 % of 4,000 evaluations at 5 %,
  the exchangeable df (2.5 on average, not 4.1) in 3.5 %, with net-win coverage 0.969
  (``benchmarks/coverage.py``). The five rates keep the working-independence df: the
  exchangeable one for every rate over-covered the tie rate (0.975).

Everything is vectorised over groups (one ``bincount`` per sum): no loop over clusters.
Kish's effective number of clusters ``n^2 / sum_c m_c^2`` is reported beside the df.

The confidence interval and the p-value of one statistic come from one construction
(the set of nulls a test does not reject), so ``p < 1 - confidence`` exactly when the
interval excludes the null. Two constructions are offered:

* ``"wild_webb"`` (an option of :func:`evalstats.win_rates`): the restricted wild
  cluster bootstrap t test with Webb weights (MacKinnon & Webb 2017; Roodman,
  MacKinnon, Nielsen & Webb 2019, "WCR11"), checked against ``wildboottest``, and its
  interval by test inversion (:func:`wild_cluster_p`, :func:`wild_cluster_interval`);
* ``"cr2_t"``: ``r +/- t_df SE_CR2`` and the two-sided t test (:func:`t_interval`,
  :func:`t_test_p`);
* ``"cr2_wilson"``: a score (Wilson) interval for a proportion-like statistic at the
  effective sample size ``n_eff = p (1 - p) / SE_CR2^2 * (t_(n-1) / t_df)^2`` — Korn &
  Graubard's (1998) design-effect interval, with CR2 for their linearisation SE, the
  Bell-McCaffrey df for their ``C - 1``, Wilson's score interval for their
  Clopper-Pearson, and without their cap at the IID size (which over-covered) — and the
  test it inverts (:func:`wilson_interval`, :func:`wilson_test_p`). The factor
  ``(t_(n-1) / t_df)^2`` (``df`` at most ``n - 1``) leaves an IID sample at its size; an
  earlier ``(z / t_df)^2`` double-counted the t correction and over-covered with 8-10
  tasks (0.97-0.99 in the battery of ``benchmarks/coverage.py``). Its critical value
  ``z t_df / t_(n-1)`` depends on the level, so the p-value is the level at which the
  interval's end reaches the null, found by root-finding (:func:`_kg_p`). Where the
  clustered SE is zero (every row alike, e.g. all wins) the design effect cannot be
  estimated; the largest one the design allows (every row of a task alike: ``n_eff`` =
  Kish's effective clusters, a Wilson interval over that many independent tasks) is used,
  so the boundary result keeps the clustering instead of becoming NaN or falling back to
  the IID interval over rows.

With 8 tasks of 3 verdicts and a rate near 0 or 1 no valid equal-tailed interval covers
near 0.95 (24 verdicts cannot put 2.5 % of evaluations beyond the near end; the IID
Wilson interval on IID data covers 0.970 at n = 24, p = 0.05): the default stays on the
safe side there, and :func:`evalstats.stats.design_coverage` says so for the design at
hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .._display import ResultDisplay
from .._validate import check_confidence
from ._cr2 import (
    ALTERNATIVES,
    _check_alternative,
    anova_icc,
    bm_df,
    bm_df_exchangeable,
    cr2_ratio,
    t_interval,
    t_test_p,
)
from ._score_interval import wilson_interval, wilson_test_p
from ._wild_cluster import cluster_jackknife, wild_cluster_interval, wild_cluster_p, wild_weights

__all__ = [
    "ALTERNATIVES",
    "ClusterRatioResult",
    "anova_icc",
    "bm_df",
    "bm_df_exchangeable",
    "cluster_jackknife",
    "cluster_ratio_test",
    "cr2_ratio",
    "wild_cluster_interval",
    "wild_cluster_p",
    "wild_weights",
    "t_interval",
    "t_test_p",
    "wilson_interval",
    "wilson_test_p",
]


# --------------------------------------------------------------------------- public wrapper


@dataclass(frozen=True)
class ClusterRatioResult(ResultDisplay):
    """Result of :func:`cluster_ratio_test`.

    Attributes
    ----------
    estimate, se : float
        Ratio estimate and its CR2 standard error.
    df : float
        Bell-McCaffrey (Satterthwaite) degrees of freedom: under working independence,
        or under the exchangeable working model at ``icc`` when ``y2`` was given.
    n_clusters : int
    n_eff_clusters : float
        Kish's effective number of clusters ``n^2 / sum m_c^2``.
    statistic : float
        ``(estimate - null) / se``.
    p_value : float
    ci_low, ci_high : float
        The interval that the test inverts (one-sided bound for one-sided tests).
    null : float
    alternative : str
    confidence : float
    icc : float
        The rows' ANOVA intra-cluster correlation the df was computed at (NaN without
        ``y2``: working independence).
    """

    estimate: float
    se: float
    df: float
    n_clusters: int
    n_eff_clusters: float
    statistic: float
    p_value: float
    ci_low: float
    ci_high: float
    null: float
    alternative: str
    confidence: float
    icc: float = float("nan")

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame of the fields."""
        return pd.DataFrame([self.__dict__])


def cluster_ratio_test(
    y: ArrayLike,
    m: ArrayLike | None = None,
    *,
    y2: ArrayLike | None = None,
    null: float = 0.0,
    alternative: str = "two-sided",
    confidence: float = 0.95,
) -> ClusterRatioResult:
    """CR2 / Bell-McCaffrey t test and interval of ``sum(y) / sum(m)`` over clusters.

    The t form of the net-win machinery of :func:`evalstats.win_rates` (its
    ``method="cr2_t"``: with ``y2`` given, the same SE, df and p-value), public so other
    tests (equivalence / non-inferiority: two one-sided calls with
    ``alternative="greater"`` and ``"less"`` at the margins) use the same construction.

    Parameters
    ----------
    y : array_like
        Per-cluster sums of the row values (one entry per cluster).
    m : array_like, optional
        Rows per cluster (default 1 each: a mean of cluster values).
    y2 : array_like, optional
        Per-cluster sums of the squared row values (for net win, wins + losses). Given,
        the df is the Satterthwaite df under an exchangeable working model at the rows'
        ANOVA intra-cluster correlation (:func:`bm_df_exchangeable`, :func:`anova_icc`),
        as ``win_rates`` computes it for net win; without it, working independence
        (:func:`bm_df`). Equal cluster sizes give ``C - 1`` either way.
    null : float
        Value under the null hypothesis.
    alternative : {"two-sided", "greater", "less"}
    confidence : float
        Level of the interval (two-sided, or a one-sided bound).

    Returns
    -------
    ClusterRatioResult

    Examples
    --------
    >>> from evalstats.stats.robust import cluster_ratio_test
    >>> net = [2, 0, 1, -1, 3, 1, 0, 2]  # wins - losses per task
    >>> res = cluster_ratio_test(net, [3] * 8)
    >>> round(res.estimate, 4), round(res.df, 1), round(res.p_value, 4)
    (0.3333, 7.0, 0.0676)
    >>> bool(res.ci_low > 0) == bool(res.p_value < 0.05)
    True
    >>> round(res.ci_low, 4), round(res.ci_high, 4)
    (-0.0315, 0.6982)
    >>> sizes = [1, 1, 2, 3, 5, 8]  # unequal tasks: the working model's df is lower
    >>> net, decisive = [1, -1, 0, 1, 3, 6], [1, 1, 2, 1, 3, 6]  # wins - losses, wins + losses
    >>> indep = cluster_ratio_test(net, sizes)
    >>> exch = cluster_ratio_test(net, sizes, y2=decisive)
    >>> round(indep.df, 2), round(exch.df, 2), round(exch.icc, 3)
    (2.98, 2.27, 0.232)
    """
    _check_alternative(alternative)
    confidence = check_confidence(confidence)
    y_arr = np.asarray(y, dtype=np.float64).reshape(-1)
    m_arr = np.ones_like(y_arr) if m is None else np.asarray(m, dtype=np.float64).reshape(-1)
    if y_arr.shape != m_arr.shape:
        raise ValueError("y and m must have one entry per cluster")
    if np.any(m_arr <= 0) or not np.all(np.isfinite(m_arr)) or not np.all(np.isfinite(y_arr)):
        raise ValueError("m must be positive and y, m finite")
    gid = np.zeros(len(y_arr), dtype=np.int64)
    est, se, df, n_clusters, _, kish = cr2_ratio(y_arr[:, None], m_arr, gid, 1)
    icc = np.nan
    if y2 is not None:
        y2_arr = np.asarray(y2, dtype=np.float64).reshape(-1)
        if y2_arr.shape != y_arr.shape or not np.all(np.isfinite(y2_arr)):
            raise ValueError("y2 must be finite, with one entry per cluster")
        icc = float(anova_icc(y_arr, y2_arr, m_arr, gid, 1)[0])
        df = bm_df_exchangeable(m_arr, icc, gid, 1)
    e, s, d = float(est[0, 0]), float(se[0, 0]), float(df[0])
    low, high = t_interval(e, s, d, confidence, alternative=alternative)
    p = t_test_p(e, s, d, null, alternative=alternative)
    with np.errstate(invalid="ignore", divide="ignore"):
        stat = (e - null) / s if s > 0 else np.nan
    return ClusterRatioResult(
        estimate=e,
        se=s,
        df=d,
        n_clusters=int(n_clusters[0]),
        n_eff_clusters=float(kish[0]),
        statistic=float(stat),
        p_value=float(p),
        ci_low=float(low),
        ci_high=float(high),
        null=float(null),
        alternative=alternative,
        confidence=confidence,
        icc=icc,
    )
