"""CR2 variance and Bell-McCaffrey degrees of freedom of a ratio estimator, and its t test.

No library computes these: statsmodels' ``cov_cluster`` is CR1 only (with no
Satterthwaite df), and CR2 with Bell-McCaffrey df (R's clubSandwich) has no Python port; the
closed forms for an intercept-only regression are derived in :mod:`.robust`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .._validate import check_confidence
from ._cluster import segment_sum

__all__ = [
    "ALTERNATIVES",
    "anova_icc",
    "bm_df",
    "bm_df_exchangeable",
    "cr2_ratio",
    "t_interval",
    "t_test_p",
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


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")
