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
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from .._display import ResultDisplay
from .._validate import check_confidence
from ._cluster import segment_sum

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

ALTERNATIVES = ("two-sided", "greater", "less")


def bm_df(m: np.ndarray, gid: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Bell-McCaffrey df and Kish effective clusters of a ratio estimator, per group.

    ``m`` holds the rows of each cluster (cluster weights), ``gid`` its group. One
    cluster (or a cluster holding every row) gives NaN df.

    >>> df, kish = bm_df(np.array([1.0, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30]), np.zeros(12, int), 1)
    >>> round(float(df[0]), 2), round(float(kish[0]), 2)
    (4.09, 4.96)
    >>> round(float(bm_df(np.full(8, 3.0), np.zeros(8, int), 1)[0][0]), 9)  # balanced: C - 1
    7.0
    """
    m = np.asarray(m, dtype=np.float64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = m / n[gid]
        q = np.where(h < 1, m * m / (1.0 - h), np.nan)
        sq = np.bincount(gid, weights=q, minlength=n_groups)
        sq2 = np.bincount(gid, weights=q * q, minlength=n_groups)
        df = n**2 / (m2 + (sq**2 - sq2) / n**2)
        kish = n**2 / m2
    n_clusters = np.bincount(gid, minlength=n_groups)
    df = np.where((n_clusters > 1) & np.isfinite(df), df, np.nan)
    return df, kish


def anova_icc(
    y: np.ndarray, y2: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int
) -> np.ndarray:
    """One-way ANOVA intra-cluster correlation of the rows, per group, floored at 0.

    ``y``, ``y2`` and ``m`` are per-cluster sums of the row values, of their squares and
    the rows. ``rho = (MSB - MSW) / (MSB + (m0 - 1) MSW)`` with
    ``m0 = (n - sum m_c^2 / n) / (C - 1)`` for unequal sizes (Donner 1986). Where it is
    undefined (one cluster, every cluster a single row, no spread at all) it is 0 — the
    working-independence model; it is clipped to [0, 1].

    >>> y = np.array([3.0, 0.0, 2.0, 1.0])  # 0/1 rows: wins per task of 3
    >>> round(float(anova_icc(y, y, np.full(4, 3.0), np.zeros(4, int), 1)[0]), 4)
    0.4375
    """
    y, y2, m = (np.asarray(v, dtype=np.float64) for v in (y, y2, m))
    n = np.bincount(gid, weights=m, minlength=n_groups)
    c = np.bincount(gid, minlength=n_groups).astype(np.float64)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        between = y * y / m
        ssw = np.bincount(gid, weights=y2 - between, minlength=n_groups)
        ssb = np.bincount(gid, weights=between, minlength=n_groups)
        ssb = ssb - np.bincount(gid, weights=y, minlength=n_groups) ** 2 / n
        msw = np.maximum(ssw, 0.0) / (n - c)
        msb = np.maximum(ssb, 0.0) / (c - 1.0)
        m0 = (n - m2 / n) / (c - 1.0)
        rho = (msb - msw) / (msb + (m0 - 1.0) * msw)
    return np.clip(np.where(np.isfinite(rho), rho, 0.0), 0.0, 1.0)


def bm_df_exchangeable(m: np.ndarray, rho: ArrayLike, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Satterthwaite df of the CR2 ratio variance under an exchangeable working model.

    The df of :func:`bm_df` with the rows' covariance taken as exchangeable within a
    cluster, ``Sigma_c = (1 - rho) I + rho J`` (``rho`` per group, e.g. from
    :func:`anova_icc`), instead of independent: Bell & McCaffrey's (2002)
    ``(tr G)^2 / ||G||_F^2`` with ``G_cd = w_c' Sigma w_d``, the df that Imbens & Kolesár
    (2016) compute under a random-effects model with the estimated ICC, and Pustejovsky
    & Tipton (2018) under a working model. The CR2 variance itself stays the
    working-independence one. With ``lambda_c = 1 - rho + rho m_c`` (so
    ``Sigma 1_c = lambda_c 1_c``), ``a_c = (1 - h_c)^{-1/2}`` and
    ``S = sum_c m_c lambda_c``, ``G = diag(a_c^2 m_c lambda_c) + K`` with
    ``K_cd = b_c b_d (g_c + g_d)``, ``b_c = a_c m_c``, ``g_c = S / (2 n^2) - lambda_c / n``,
    so ``||K||_F^2 = 2 (B_0 B_2 + B_1^2)``, ``B_k = sum_c b_c^2 g_c^k``: closed form, one
    ``bincount`` per sum. ``rho = 0`` gives :func:`bm_df`; equal cluster sizes give
    ``C - 1`` for every ``rho`` (``G`` is then ``lambda`` times the independence one).

    >>> sizes = np.array([1.0, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30])
    >>> round(float(bm_df_exchangeable(sizes, 0.0, np.zeros(12, int), 1)[0]), 2)
    4.09
    >>> round(float(bm_df_exchangeable(sizes, 0.2, np.zeros(12, int), 1)[0]), 2)
    2.36
    >>> round(float(bm_df_exchangeable(np.full(8, 3.0), 0.5, np.zeros(8, int), 1)[0]), 9)
    7.0
    """
    m = np.asarray(m, dtype=np.float64)
    rho_c = np.broadcast_to(np.asarray(rho, dtype=np.float64), (n_groups,))[gid]
    n = np.bincount(gid, weights=m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = m / n[gid]
        a2 = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
        lam = 1.0 - rho_c + rho_c * m
        big_s = np.bincount(gid, weights=m * lam, minlength=n_groups)
        g = big_s[gid] / (2.0 * n[gid] ** 2) - lam / n[gid]
        d = a2 * m * lam
        b2 = a2 * m * m
        b0, b1, bb2 = (np.bincount(gid, weights=b2 * g**k, minlength=n_groups) for k in (0, 1, 2))
        tr = np.bincount(gid, weights=d + 2.0 * b2 * g, minlength=n_groups)
        fro = np.bincount(gid, weights=d * d + 4.0 * d * b2 * g, minlength=n_groups)
        df = tr**2 / (fro + 2.0 * (b0 * bb2 + b1**2))
    n_clusters = np.bincount(gid, minlength=n_groups)
    # Equal sizes (C sum m^2 = n^2): C - 1 exactly, not to rounding (a t test on C - 1 df
    # is then the textbook one, e.g. statsmodels' on the cluster means).
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    equal = np.isclose(n_clusters * m2, n**2, rtol=1e-12, atol=0.0)
    df = np.where(equal, n_clusters - 1.0, df)
    return np.where((n_clusters > 1) & np.isfinite(df), df, np.nan)


def cr2_ratio(
    y: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ratio estimators ``sum(y) / sum(m)`` per group with CR2 SEs and Bell-McCaffrey df.

    ``y`` (clusters x statistics) and ``m`` (clusters) are per-cluster sums of the row
    values and of the rows; ``gid`` is each cluster's group.

    Returns
    -------
    est, se : ndarray (groups x statistics)
    df, n_clusters, n, kish : ndarray (groups)

    Examples
    --------
    >>> y = np.array([[1.0], [0.0], [2.0], [3.0]])  # wins per task
    >>> m = np.array([1.0, 2.0, 3.0, 4.0])  # verdicts per task
    >>> est, se, df, n_clusters, n, kish = cr2_ratio(y, m, np.zeros(4, int), 1)
    >>> round(float(est[0, 0]), 3), round(float(se[0, 0]), 4), round(float(df[0]), 3)
    (0.6, 0.1623, 2.392)
    """
    y = np.asarray(y, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    y_tot = segment_sum(y, gid, n_groups)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    n_clusters = np.bincount(gid, minlength=n_groups).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = y_tot / n[:, None]
        resid = y - est[gid] * m[:, None]
        h = m / n[gid]
        adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
        ss = segment_sum(resid**2 * adj[:, None], gid, n_groups)
        se = np.sqrt(ss) / n[:, None]
    se = np.where((n_clusters > 1)[:, None], se, np.nan)
    df, kish = bm_df(m, gid, n_groups)
    return est, se, df, n_clusters, n, kish


# --------------------------------------------------------------------------- t construction


def t_interval(
    est: ArrayLike,
    se: ArrayLike,
    df: ArrayLike,
    confidence: float = 0.95,
    *,
    alternative: str = "two-sided",
) -> tuple[np.ndarray, np.ndarray]:
    """``est +/- t_df SE``: the nulls that :func:`t_test_p` does not reject at ``1 - confidence``.

    One-sided alternatives give a one-sided bound (the other end infinite).

    >>> lo, hi = t_interval(0.2, 0.1, 7.0)
    >>> round(float(lo), 4), round(float(hi), 4)
    (-0.0365, 0.4365)
    """
    _check_alternative(alternative)
    est, se, df = (np.asarray(v, dtype=np.float64) for v in (est, se, df))
    alpha = 1.0 - check_confidence(confidence)
    q = stats.t.ppf(1.0 - (alpha / 2.0 if alternative == "two-sided" else alpha), df)
    low, high = est - q * se, est + q * se
    if alternative == "greater":
        high = np.full_like(high, np.inf)
    elif alternative == "less":
        low = np.full_like(low, -np.inf)
    return low, high


def t_test_p(
    est: ArrayLike,
    se: ArrayLike,
    df: ArrayLike,
    null: ArrayLike = 0.0,
    *,
    alternative: str = "two-sided",
) -> np.ndarray:
    """p-value of the t test of ``null`` (``t = (est - null) / SE`` on ``df``).

    SE 0 gives 0 when the estimate differs from the null (in the tested direction) and 1
    when it equals it; NaN SE or df gives NaN.

    >>> round(float(t_test_p(0.2, 0.1, 7.0)), 4)
    0.0856
    """
    _check_alternative(alternative)
    est, se, df, null = (np.asarray(v, dtype=np.float64) for v in (est, se, df, null))
    d = est - null
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, d / se, np.where(d == 0, 0.0, np.copysign(np.inf, d)))
    return _t_p(t, df, alternative)


def _t_p(t: np.ndarray, df: np.ndarray, alternative: str) -> np.ndarray:
    if alternative == "two-sided":
        p = 2.0 * stats.t.sf(np.abs(t), df)
    elif alternative == "greater":
        p = stats.t.sf(t, df)
    else:
        p = stats.t.cdf(t, df)
    return np.minimum(p, 1.0)


# --------------------------------------------------------------------------- score construction


def _effective_n(p, se, n, kish, row_var):
    """Unshrunk effective size ``A = p (1 - p) / SE^2`` and its IID cap."""
    v = p * (1.0 - p)
    with np.errstate(invalid="ignore", divide="ignore"):
        # The IID size bounds only the boundary case: a CR2 variance below the IID one
        # is an estimate like any other (capping it over-covered in the battery).
        cap = np.where(se > 0, np.inf, np.where(row_var > 0, n * v / row_var, n))
        # SE 0: no design effect is observable; take the largest the design allows.
        a = np.where(se > 0, v / se**2, kish)
    return a, cap


def _kg_df(n, df):
    """The two df of Korn & Graubard's factor: the design's (at most the IID ``n - 1``) and IID."""
    with np.errstate(invalid="ignore"):
        n_df = np.where(n > 1, n - 1.0, np.nan)
    return np.minimum(df, n_df), n_df


def _kg_critical(alpha, df, n_df):
    """``z t_df / t_(n-1)`` at two-sided level ``alpha``: the score statistic's critical value."""
    half = alpha / 2.0
    return -special.ndtri(half) * _t_isf(half, df) / _t_isf(half, n_df)


def _t_isf(q, df):
    """``scipy.stats.t.isf(q, df)``, evaluated once per distinct df when ``q`` is one level.

    The t quantile (an inverse incomplete beta) is the cost of a large batch of intervals,
    and a simulation's evaluations share a handful of df (every balanced design: C - 1),
    so the quantiles of the distinct values are computed and spread back: the same numbers.
    """
    df = np.asarray(df, dtype=np.float64)
    if np.ndim(q) or df.size < 64:
        return stats.t.isf(q, df)
    distinct, where = np.unique(df, return_inverse=True)  # NaNs collapse into one
    return stats.t.isf(q, distinct)[where].reshape(df.shape)


def wilson_interval(
    p: ArrayLike,
    se: ArrayLike,
    n: ArrayLike,
    df: ArrayLike,
    kish: ArrayLike,
    confidence: float = 0.95,
    *,
    row_var: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Score (Wilson) interval at the design-effect effective size, with the BM df.

    ``n_eff = p (1 - p) / SE^2 * (t_(n-1) / t_df)^2`` (Korn & Graubard 1998: the
    effective size of the design effect, scaled so that an IID sample, ``df = n - 1``,
    keeps its size; ``df`` is capped at ``n - 1``, so ``df = inf`` gives the plain
    Wilson interval); where ``SE == 0`` it is ``min(kish, cap)``, ``cap`` the IID size
    ``n p (1 - p) / row_var`` (``n`` for a 0/1 rate): the largest design effect the
    cluster sizes allow. The interval is the set of ``p0`` with
    ``|p - p0| <= z sqrt(p0 (1 - p0) / n_eff)``, which is what :func:`wilson_test_p`
    inverts. NaN df (one cluster) gives NaN.

    >>> lo, hi = wilson_interval(0.6, 0.1, 40, 9.0, 10.0)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.3825, 0.7841)
    """
    p, se, n, df, kish = (np.asarray(v, dtype=np.float64) for v in (p, se, n, df, kish))
    rv = p * (1.0 - p) if row_var is None else np.asarray(row_var, dtype=np.float64)
    alpha = 1.0 - check_confidence(confidence)
    z = special.ndtri(1.0 - alpha / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_df, n_df = _kg_df(n, df)
        a, cap = _effective_n(p, se, n, kish, rv)
        # The boundary size (SE 0) is not an estimated variance: no t correction for it.
        shrink = np.where(se > 0, (z / _kg_critical(alpha, d_df, n_df)) ** 2, 1.0)
        n_eff = np.minimum(a * shrink, np.maximum(cap, 0.0))
        n_eff = np.where(np.isnan(df), np.nan, n_eff)
        # statsmodels' Wilson interval takes a non-integer effective size (and vectorises).
        low, high = proportion_confint(p * n_eff, n_eff, alpha=alpha, method="wilson")
    low = np.where(p <= 0, 0.0, low)
    high = np.where(p >= 1, 1.0, high)
    bad = ~(np.isfinite(n_eff) & (n_eff > 0) & np.isfinite(p))
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def _kg_p(stat, df, n_df):
    """Two-sided p-value of the score statistic: the ``alpha`` where it meets its critical value.

    The critical value ``c(alpha) = z t_df / t_(n-1)`` falls as ``alpha`` grows
    (``df <= n - 1``), so the level at which the interval's end reaches the null is the
    unique root of ``F(u) = log stat - log c(e^u)`` (increasing in ``u = log alpha``). It
    lies below the t p-value ``2 P(T_df > stat)`` (``t_(n-1) >= z``); a bracket is widened
    downwards from there and the root found by the Illinois (regula falsi) method,
    vectorised, to ``1e-15`` in ``log alpha``: ``p < alpha`` exactly when the
    ``1 - alpha`` interval excludes the null.
    """
    stat, df, n_df = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (stat, df, n_df))
    )
    live = np.isfinite(stat) & (stat > 0) & ~np.isnan(df) & ~np.isnan(n_df)
    out = np.where(stat <= 0, 1.0, np.nan)
    out = np.where(np.isposinf(stat) & ~np.isnan(df) & ~np.isnan(n_df), 0.0, out)
    if not live.any():
        return out
    s_, d_, n_ = stat[live], df[live], n_df[live]
    log_s = np.log(s_)

    def f(u):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return log_s - np.log(_kg_critical(np.exp(u), d_, n_))

    with np.errstate(divide="ignore"):
        b = np.minimum(np.log(2.0 * special.stdtr(d_, -s_)), 0.0)
    b = np.maximum(b, np.log(1e-300))
    fb = f(b)
    a = b - 1.0
    fa = f(a)
    for _ in range(12):  # widen until F(a) < 0 (or alpha reaches 1e-300)
        grow = ~(fa < 0) & (a > np.log(1e-300))
        if not grow.any():
            break
        a = np.where(grow, np.maximum(2.0 * a - b, np.log(1e-300)), a)
        fa = np.where(grow, f(a), fa)
    for _ in range(60):
        if not (np.abs(b - a) > 1e-15 * np.maximum(np.abs(b), 1.0)).any():
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            c = b - fb * (b - a) / (fb - fa)
        c = np.where(
            np.isfinite(c) & (c > np.minimum(a, b)) & (c < np.maximum(a, b)), c, 0.5 * (a + b)
        )
        fc = f(c)
        flip = np.sign(fc) != np.sign(fb)
        a, fa = np.where(flip, b, a), np.where(flip, fb, 0.5 * fa)
        step = np.abs(c - b)
        b, fb = c, fc
        if not (step > 1e-14 * np.maximum(np.abs(b), 1.0)).any():
            break
    # The root's rejecting side: the end with F >= 0.
    root = np.where(fb >= 0, b, a)
    out[live] = np.minimum(np.exp(root), 1.0)
    return out


def wilson_test_p(
    p: ArrayLike,
    se: ArrayLike,
    n: ArrayLike,
    df: ArrayLike,
    kish: ArrayLike,
    null: ArrayLike = 0.5,
    *,
    row_var: ArrayLike | None = None,
    alternative: str = "two-sided",
) -> np.ndarray:
    """p-value of ``p = null`` that inverts :func:`wilson_interval` exactly.

    With ``s0 = sqrt(null (1 - null))`` the interval keeps ``null`` iff
    ``|p - null| sqrt(A) / s0 <= z t_df / t_(n-1)`` or ``|p - null| sqrt(cap) / s0 <= z``
    (``n_eff`` is the smaller of the two sizes), so the p-value is the larger of the
    levels at which those two statistics meet their critical values (the first by
    bisection, :func:`_kg_p`; the second a normal p-value). A one-sided p-value
    (``"greater"``: the truth is above ``null``) is half the two-sided one on the side
    of the estimate (one minus that on the other): it is below ``alpha`` exactly when
    the ``1 - 2 alpha`` two-sided interval lies beyond ``null`` — the one-sided test of
    an equal-tailed interval, as a TOST needs.

    >>> round(float(wilson_test_p(0.6, 0.1, 40, 9.0, 10.0)), 4)
    0.3472
    >>> round(float(wilson_test_p(0.6, 0.1, 40, 9.0, 10.0, alternative="greater")), 4)
    0.1736
    """
    _check_alternative(alternative)
    p, se, n, df, kish, null = (np.asarray(v, dtype=np.float64) for v in (p, se, n, df, kish, null))
    rv = p * (1.0 - p) if row_var is None else np.asarray(row_var, dtype=np.float64)
    a, cap = _effective_n(p, se, n, kish, rv)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_df, n_df = _kg_df(n, df)
        s0 = np.sqrt(null * (1.0 - null))
        d = np.abs(p - null) / s0
        p_t = np.where(
            se > 0, _kg_p(d * np.sqrt(a), d_df, n_df), 2.0 * stats.norm.sf(d * np.sqrt(a))
        )
        p_z = 2.0 * stats.norm.sf(d * np.sqrt(np.maximum(cap, 0.0)))
    out = np.minimum(np.maximum(p_t, p_z), 1.0)
    out = np.where(np.abs(p - null) == 0, 1.0, out)
    if alternative != "two-sided":
        right_side = (p > null) if alternative == "greater" else (p < null)
        out = np.where(right_side, out / 2.0, 1.0 - out / 2.0)
    return np.where(~np.isnan(df) & np.isfinite(p), out, np.nan)


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


# --------------------------------------------------------------------------- wild bootstrap

_WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


def wild_weights(
    n_clusters: int,
    n_resamples: int,
    rng: np.random.Generator | int | None = None,
    *,
    kind: str = "webb",
) -> np.ndarray:
    """Cluster weights ``(B, C)`` of a wild cluster bootstrap.

    ``"webb"``: Webb's six-point distribution (+/- sqrt(1/2), 1, sqrt(3/2), equally
    likely), recommended with few clusters (Webb 2023; MacKinnon & Webb 2017).
    ``"rademacher"``: +/- 1; when ``2^C <= n_resamples`` every sign vector is enumerated
    once (as ``wildboottest`` and ``boottest`` do), so the p-value is exact.

    >>> wild_weights(3, 100, kind="rademacher").shape  # 2^3 sign vectors, enumerated
    (8, 3)
    """
    if kind not in ("webb", "rademacher"):
        raise ValueError(f"kind must be 'webb' or 'rademacher', got {kind!r}")
    if kind == "rademacher" and 2**n_clusters <= n_resamples:
        codes = (np.arange(2**n_clusters)[:, None] >> np.arange(n_clusters)) & 1
        return 2.0 * codes - 1.0
    gen = np.random.default_rng(rng)
    if kind == "rademacher":
        return 2.0 * gen.integers(0, 2, (n_resamples, n_clusters)) - 1.0
    return _WEBB[gen.integers(0, 6, (n_resamples, n_clusters))]


def _padded(y: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int):
    """Per-group cluster totals as (groups, max clusters) arrays with a validity mask."""
    order = np.argsort(gid, kind="stable")
    counts = np.bincount(gid, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pos = np.empty(len(gid), dtype=np.int64)
    pos[order] = np.arange(len(gid)) - starts[gid[order]]
    width = max(int(counts.max(initial=0)), 1)
    yp = np.zeros((n_groups, width))
    mp = np.zeros((n_groups, width))
    yp[gid, pos] = y
    mp[gid, pos] = m
    return yp, mp, mp > 0


def wild_cluster_p(
    y: np.ndarray,
    m: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    null: ArrayLike,
    weights: np.ndarray,
) -> np.ndarray:
    """Restricted wild cluster bootstrap (WCR) p-value of ``sum(y) / sum(m) = null``.

    The intercept-only regression on the rows, clustered: the null is imposed, the
    restricted residual totals ``U_c = y_c - null m_c`` are multiplied by the cluster
    weights, and the bootstrap t statistics (CR1 SE, as the observed one) are compared
    with the observed one: ``p = mean(|t*| > |t|)`` (MacKinnon & Webb 2017; Roodman et
    al. 2019's WCR11, as ``wildboottest`` computes it). ``weights`` is ``(B, C_max)``
    from :func:`wild_weights`, shared by the groups by cluster position.
    """
    yp, mp, valid = _padded(np.asarray(y, float), np.asarray(m, float), gid, n_groups)
    null = np.broadcast_to(np.asarray(null, dtype=np.float64), (n_groups,))
    return _wild_p_padded(yp, mp, valid, null, np.asarray(weights, dtype=np.float64))


def _wild_p_padded(yp, mp, valid, null, v):
    n = mp.sum(axis=1)
    c = valid.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = c / (c - 1.0)
        est = yp.sum(axis=1) / n
        e = np.where(valid, yp - est[:, None] * mp, 0.0)
        se = np.sqrt(factor * (e**2).sum(axis=1)) / n
        t_obs = np.abs(est - null) / se
    out = np.empty(len(n))
    v = v[:, : yp.shape[1]]
    # Chunk the groups so (chunk, B, C) stays about 4 million numbers.
    step = max(1, 4_000_000 // max(v.size, 1))
    for a in range(0, len(n), step):
        sl_ = slice(a, a + step)
        u = np.where(valid[sl_], yp[sl_] - null[sl_, None] * mp[sl_], 0.0)
        vu = v[None, :, :] * u[:, None, :]
        shift = vu.sum(axis=2) / n[sl_, None]  # beta* - null
        resid = vu - mp[sl_, None, :] * shift[..., None]
        with np.errstate(invalid="ignore", divide="ignore"):
            se_b = np.sqrt(factor[sl_, None] * (resid**2).sum(axis=2)) / n[sl_, None]
            t_b = np.abs(shift) / se_b
        out[sl_] = (t_b > t_obs[sl_, None]).mean(axis=1)
    return np.where(c > 1, out, np.nan)


def wild_cluster_interval(
    y: np.ndarray,
    m: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    confidence: float = 0.95,
    weights: np.ndarray,
    bounds: tuple[float, float] = (-np.inf, np.inf),
    tol: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval by inverting :func:`wild_cluster_p`: the nulls it does not reject.

    Each end is found by bisection on the null (the same weights for every null, so
    ``p`` is a fixed step function of it), vectorised over groups, to ``tol``; an end
    that is not rejected even at ``bounds`` is the bound.
    """
    alpha = 1.0 - check_confidence(confidence)
    yp, mp, valid = _padded(np.asarray(y, float), np.asarray(m, float), gid, n_groups)
    v = np.asarray(weights, dtype=np.float64)
    n = mp.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = yp.sum(axis=1) / n
        e = np.where(valid, yp - est[:, None] * mp, 0.0)
        c = valid.sum(axis=1)
        se = np.sqrt(c / (c - 1.0) * (e**2).sum(axis=1)) / n
    ends = []
    for sign in (-1.0, 1.0):
        inner = est.copy()
        width = np.where(se > 0, 4.0 * se, np.nan)
        lim = bounds[0] if sign < 0 else bounds[1]
        outer = np.clip(est + sign * width, *bounds)
        for _ in range(6):  # widen until the outer end is rejected (or hits the bound)
            keep = _wild_p_padded(yp, mp, valid, outer, v) >= alpha
            keep &= outer != lim
            if not keep.any():
                break
            width = np.where(keep, 3.0 * width, width)
            outer = np.clip(est + sign * width, *bounds)
        at_bound = _wild_p_padded(yp, mp, valid, outer, v) >= alpha
        bound_end = outer.copy()
        while np.nanmax(np.abs(outer - inner), initial=0.0) > tol:
            mid = 0.5 * (inner + outer)
            ok = _wild_p_padded(yp, mp, valid, mid, v) >= alpha
            inner = np.where(ok, mid, inner)
            outer = np.where(ok, outer, mid)
        ends.append(np.where(at_bound, bound_end, 0.5 * (inner + outer)))
    low, high = ends
    bad = ~(se > 0) | (c < 2)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


# --------------------------------------------------------------------------- jackknife


def cluster_jackknife(
    cluster_stats: np.ndarray,
    statistic,
    *,
    valid: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Delete-one-cluster jackknife SE of a statistic of summed cluster statistics.

    ``cluster_stats`` has shape ``(..., C, d)``: per-cluster sufficient statistics
    (e.g. a flattened k x k confusion table per task); ``statistic`` maps summed statistics
    ``(..., d)`` to ``(...)``. Leading axes (many evaluations) are vectorised; ``valid``
    (``(..., C)`` bool) marks clusters that exist (padding for unequal numbers of
    clusters). ``SE^2 = (C - 1) / C * sum_c (theta_(-c) - mean)^2`` (Efron & Stein 1981)
    and ``df = C - 1``, the reference t distribution of a jackknife studentized statistic.

    Returns
    -------
    estimate, se, df : ndarray (leading axes)

    Examples
    --------
    >>> x = np.array([[1.0, 1], [2.0, 1], [4.0, 1], [7.0, 1]])  # (value, count) per cluster
    >>> est, se, df = cluster_jackknife(x, lambda s: s[..., 0] / s[..., 1])  # a mean: sem
    >>> float(est), round(float(se), 4), float(df)
    (3.5, 1.3229, 3.0)
    """
    cs = np.asarray(cluster_stats, dtype=np.float64)
    if valid is None:
        valid = np.ones(cs.shape[:-1], dtype=bool)
    cs = np.where(valid[..., None], cs, 0.0)
    total = cs.sum(axis=-2)
    est = statistic(total)
    loo = statistic(total[..., None, :] - cs)
    c = valid.sum(axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, loo, 0.0).sum(axis=-1) / c
        dev = np.where(valid, loo - mean[..., None], 0.0)
        se = np.sqrt((c - 1.0) / c * (dev**2).sum(axis=-1))
    df = np.where(c > 1, c - 1.0, np.nan)
    return est, np.where(c > 1, se, np.nan), df


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
