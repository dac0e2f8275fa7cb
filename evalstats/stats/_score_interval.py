"""The score (Wilson) interval at the design-effect effective size, and the test it inverts.

Korn & Graubard's (1998) design-effect interval with the CR2 SE and the Bell-McCaffrey df
(see :mod:`.robust`). The interval is statsmodels' Wilson ``proportion_confint`` at the
non-integer effective size; its p-value (the level at which the interval's end reaches the
null, a critical value that depends on the level) has no library form and is found here.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from .._validate import check_confidence
from ._cr2 import _check_alternative

__all__ = ["wilson_interval", "wilson_test_p"]

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
    return -stats.norm.ppf(half) * _t_isf(half, df) / _t_isf(half, n_df)


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
    z = stats.norm.ppf(1.0 - alpha / 2.0)
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
        b = np.minimum(np.log(2.0 * stats.t.sf(s_, d_)), 0.0)
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
