"""The intervals of the cost ratios on the log scale, where no library has them.

CR2 with the Bell-McCaffrey df for a ratio of totals and a mean of log ratios (from
per-task sums), the CR1 delta method, the lognormal (Cox-type) interval and
the generalized pivotal quantity of a ratio of bivariate lognormal task totals (Bebu &
Mathew 2008). :func:`evalstats.stats.cost_ratios` assembles them; the choices and their
coverage are described in :mod:`evalstats.stats.cost`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
from scipy import stats

__all__ = [
    "GPQ_HULL_METHOD",
    "GPQ_METHOD",
    "MODEL_CHECK_CONFIDENCE",
    "bm_df_from_leverage",
    "gpq_interval",
    "lognormal_ratio_gpq",
    "lognormal_ratio_interval",
]

GPQ_METHOD = "generalized pivotal (bivariate lognormal task totals), log scale"
GPQ_HULL_METHOD = (
    GPQ_METHOD + ", widened to the CR2 interval (the plain ratio is outside the lognormal 95 %)"
)
# The level of the model check that switches the total ratio's default to the hull: fixed, so
# the construction does not depend on the confidence asked for.
MODEL_CHECK_CONFIDENCE = 0.95
# The level of the normality test of the runs' log costs (_lognormal_check), fixed likewise.
LOGNORMAL_CHECK_ALPHA = 0.05
_REJECTED_METHOD = (
    "CR2 delta method, log scale, t(Bell-McCaffrey df) (lognormal model rejected: outlying runs)"
)
# scipy's Shapiro-Wilk p-value is accurate to 5,000 values; beyond, D'Agostino-Pearson.
_SHAPIRO_MAX = 5000


class LognormalCheck(NamedTuple):
    """The lognormal model check of the total ratio's default interval."""

    p_value: float
    n: int
    test: str

    @property
    def rejected(self) -> bool:
        return bool(self.p_value < LOGNORMAL_CHECK_ALPHA)

    def note(self) -> str:
        """The ``ci_note`` of a total-ratio row whose default interval the check switched."""
        return (
            f"lognormal model rejected ({self.test}, {self.n} values: p = {self.p_value:.2g} "
            f"< {LOGNORMAL_CHECK_ALPHA}): outlying runs, so the model-free CR2 interval (the "
            "pivotal one under-covers with outliers); the ratio of totals rests on a few "
            "expensive runs, the geometric mean ratio is the steadier summary"
        )


def _lognormal_check(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> LognormalCheck:
    """Test the lognormal model behind the total ratio's pivotal interval, from the runs.

    The pivot takes the log task totals as bivariate normal, which holds (closely) when the
    runs' log costs are normal within a task. An outlying run - one of a few runs ten times
    the others, a run stopped at a budget - breaks it, and the pivot's normal-theory
    covariance then under-covers (0.90-0.96 at 6-8 tasks in ``benchmarks/coverage_cost.py
    --outliers``). Test: Shapiro-Wilk on the within-task residuals of the log run costs of
    both arms (``log v - mean over the task's runs of that arm``, scaled by
    ``sqrt(r / (r - 1))`` for a task with ``r`` runs; a task with one run gives none),
    D'Agostino-Pearson above 5,000 residuals. The residuals of a task sum to 0, so the test
    is approximate: at 6-8 tasks x 3 runs without outliers (25 designs) it rejected in
    0.026-0.036 of evaluations (below its 5 %), with 5-10 % of runs x10 or x30 in 0.60-0.99
    (more the larger the outliers against the runs' spread; ``benchmarks/coverage.py``,
    ``benchmarks/coverage_cost.py --outliers``). With no within-task replication,
    Shapiro-Wilk on the task log ratios ``log X_c - log Y_c`` instead (far less power;
    D'Agostino-Pearson above 5,000 tasks).
    Non-positive runs are left out (no log). ``p_value`` NaN: too few values to test.

    ``x, y``: a pair's costs (with, without), finite; ``g``: task codes 0..C-1.

    >>> g = np.repeat(np.arange(8), 3)
    >>> rng = np.random.default_rng(0)
    >>> y = np.exp(rng.normal(0, 1, 8)[g] + rng.normal(0, 0.3, 24))
    >>> x = 0.8 * y * np.exp(rng.normal(0, 0.3, 24))
    >>> _lognormal_check(x, y, g).rejected
    False
    >>> x[[2, 10, 19]] *= 10.0  # three runs ten times their task's others
    >>> _lognormal_check(x, y, g).rejected
    True
    """
    parts = []
    n_c = int(g.max(initial=-1)) + 1
    for v in (x, y):
        keep = v > 0
        lv, gv = np.log(v[keep]), g[keep]
        r = np.bincount(gv, minlength=n_c)
        rep = r[gv] >= 2  # a task with one run has no residual
        mean = np.bincount(gv, lv, n_c) / np.maximum(r, 1)
        scale = np.sqrt(r / np.maximum(r - 1.0, 1.0))
        parts.append(((lv - mean[gv]) * scale[gv])[rep])
    resid = np.concatenate(parts)
    if _testable(resid):
        return _normality(resid, "within-task log run costs")
    xs, ys = np.bincount(g, x, n_c), np.bincount(g, y, n_c)
    ok = (xs > 0) & (ys > 0)
    d = np.log(xs[ok]) - np.log(ys[ok])
    if _testable(d):
        return _normality(d, "task log ratios")
    return LognormalCheck(np.nan, int(resid.size), "not checked: too few values")


def _testable(v: np.ndarray) -> bool:
    """Three values or more, not all equal (a normality test of a constant is undefined)."""
    return v.size >= 3 and bool(np.ptp(v) > 1e-12 * max(1.0, float(np.abs(v).max())))


def _normality(v: np.ndarray, what: str) -> LognormalCheck:
    """Shapiro-Wilk, or D'Agostino-Pearson beyond the values its p-value is accurate for."""
    if v.size > _SHAPIRO_MAX:
        return LognormalCheck(
            float(stats.normaltest(v).pvalue), v.size, f"D'Agostino-Pearson on {what}"
        )
    return LognormalCheck(float(stats.shapiro(v).pvalue), v.size, f"Shapiro-Wilk on {what}")


def bm_df_from_leverage(h: np.ndarray) -> np.ndarray:
    """Bell-McCaffrey degrees of freedom of a one-parameter CR2 variance, from cluster leverages.

    For a single coefficient (an intercept-only OLS, or the through-origin WLS ratio estimator)
    the cluster hat blocks are rank one with eigenvalue ``h_c`` (the cluster's leverage:
    ``n_c / n`` for a mean, ``Y_c / Y`` for a ratio of totals). The CR2 estimator is then
    ``sum_c E_c^2 / (1 - h_c)`` and, under the working model, the Bell & McCaffrey (2002) df
    ``tr(M)^2 / tr(M^2)`` has ``M = diag(h / (1 - h)) - q q'`` with ``q = h / sqrt(1 - h)``
    (Pustejovsky & Tipton 2018, eq. 11, specialised to one parameter). Balanced clusters give
    ``C - 1``; unequal leverages give fewer.

    Parameters
    ----------
    h : ndarray, shape (..., C)
        Cluster leverages, each in [0, 1), summing to 1 along the last axis.

    Returns
    -------
    ndarray, shape (...)
        The df; NaN where some ``h_c >= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import bm_df_from_leverage
    >>> float(bm_df_from_leverage(np.full(8, 1 / 8)))  # balanced: C - 1
    7.0
    >>> round(float(bm_df_from_leverage(np.array([0.6, 0.2, 0.1, 0.05, 0.05]))), 3)
    1.865
    """
    h = np.asarray(h, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = h / (1.0 - h)
        q2 = h * d  # q_c^2 = h_c^2 / (1 - h_c)
        tr = d.sum(-1) - q2.sum(-1)
        tr2 = (d**2).sum(-1) - 2.0 * (d * q2).sum(-1) + q2.sum(-1) ** 2
        df = tr**2 / tr2
    return np.where(np.all(h < 1.0, axis=-1), df, np.nan)


def _log_ratio_of_sums(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(s[..., 0]) - np.log(s[..., 1])
    # A resample with an all-zero side has no ratio; the engine drops NaN.
    return np.where(np.isfinite(out), out, np.nan)


def _mean_of_sums(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return s[..., 0] / s[..., 1]


def _cr1_total(sums: np.ndarray) -> float:
    """CR1 delta-method SE of log(sum x / sum y) from per-cluster sums (C, 2)."""
    c = sums.shape[0]
    tot = sums.sum(axis=0)
    z = sums[:, 0] / tot[0] - sums[:, 1] / tot[1]
    return float(np.sqrt(c / (c - 1) * np.sum(z**2)))


def _cr1_mean(sums: np.ndarray) -> float:
    """CR1 SE of a pooled mean from per-cluster (sum, count) (C, 2)."""
    c = sums.shape[0]
    n = sums[:, 1].sum()
    mean = sums[:, 0].sum() / n
    return float(np.sqrt(c / (c - 1) * np.sum((sums[:, 0] - sums[:, 1] * mean) ** 2)) / n)


def lognormal_ratio_interval(
    x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, SE and df of a lognormal (Cox-type) interval for ``log(E[x] / E[y])``.

    The cluster totals ``(log x_c, log y_c)`` are taken as bivariate normal, so with
    ``d = log x - log y`` and ``s = log x + log y``::

        log(E[x] / E[y]) = E[d] + (var(log x) - var(log y)) / 2 = E[d] + cov(d, s) / 2

    estimated by ``dbar + s_ds / 2`` with
    ``SE^2 = s_d^2 / C + (s_d^2 s_s^2 + s_ds^2) / (4 (C - 1))`` (the normal-theory variances of
    a mean and of a sample covariance, which are uncorrelated) and t(C - 1) quantiles. With
    ``y`` constant it is the modified Cox interval for a lognormal mean (Zhou & Gao 1997).
    Vectorised over leading axes. A candidate of ``benchmarks/coverage_cost.py``, no longer
    the default: symmetric on the log scale, it misses on one side where the covariance term
    is large (see the module docstring); :func:`lognormal_ratio_gpq` replaced it.

    Parameters
    ----------
    x, y : ndarray, shape (..., C)
        Positive per-cluster totals, C >= 2.

    Returns
    -------
    centre, se, df : ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import lognormal_ratio_interval
    >>> x = np.array([900.0, 15000.0, 2500.0, 400.0, 7000.0])
    >>> y = np.array([1000.0, 21000.0, 3000.0, 500.0, 8000.0])
    >>> centre, se, df = lognormal_ratio_interval(x, y)
    >>> round(float(centre), 4), round(float(se), 4), float(df)
    (-0.2578, 0.0846, 4.0)
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dm = d - d.mean(-1, keepdims=True)
    sm = s - s.mean(-1, keepdims=True)
    s_dd = (dm * dm).sum(-1) / (c - 1)
    s_ss = (sm * sm).sum(-1) / (c - 1)
    s_ds = (dm * sm).sum(-1) / (c - 1)
    centre = d.mean(-1) + s_ds / 2.0
    se = np.sqrt(s_dd / c + (s_dd * s_ss + s_ds**2) / (4.0 * (c - 1)))
    return centre, se, np.full(np.shape(centre), float(c - 1))


# Base draws of the generalized pivotal quantity from a fixed seed, so the interval is a
# deterministic function of the data (and the equivalence test can invert exactly the interval
# reported); 8,192 draws put the Monte-Carlo error of a 95 % limit near 1 % of the half-width.
_GPQ_DRAWS = 8192
_GPQ_SEED = 20261201


@functools.lru_cache(maxsize=64)
def _gpq_base(c: int, n_draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bartlett factors of a Wishart(C - 1, I_2) and a standard normal, for C clusters."""
    gen = np.random.default_rng([_GPQ_SEED, c])
    half = n_draws // 2
    nu = c - 1
    t11 = np.tile(np.sqrt(gen.chisquare(nu, half)), 2)
    t22 = np.tile(np.sqrt(gen.chisquare(nu - 1, half)), 2)
    # Antithetic pairs (t21, z) and (-t21, -z): swapping the arms then negates the set of
    # draws exactly, so the interval of WITHOUT / WITH is the reciprocal one.
    t21 = gen.standard_normal(half)
    z = gen.standard_normal(half)
    t21, z = np.concatenate([t21, -t21]), np.concatenate([z, -z])
    for a in (t11, t22, t21, z):
        a.setflags(write=False)
    return t11, t22, t21, z


def lognormal_ratio_gpq(x: np.ndarray, y: np.ndarray, *, n_draws: int = _GPQ_DRAWS) -> np.ndarray:
    """Generalized pivotal quantity of ``log(E[x] / E[y])`` for bivariate lognormal totals.

    The per-cluster totals ``(log x_c, log y_c)`` are taken as bivariate normal; with
    ``d = log x - log y`` and ``s = log x + log y`` the estimand is
    ``theta = log(E[x] / E[y]) = mu_d + sigma_ds / 2``. With ``A = L L'`` the centred sums
    of squares and products of ``(d, s)`` (Cholesky factor ``L``) and ``T`` the lower
    Bartlett factor of a Wishart(C - 1, I) matrix (``T_11^2 ~ chi2(C - 1)``,
    ``T_22^2 ~ chi2(C - 2)``, ``T_21 ~ N(0, 1)``), ``Sigma* = (L T^-1)(L T^-1)'`` is a
    generalized pivotal quantity for the covariance (it is ``Sigma`` when the random ``A``
    equals the observed one) and::

        theta* = dbar - Z sqrt(Sigma*_dd / C) + Sigma*_ds / 2

    one for ``theta`` (Weerahandi 1993; Krishnamoorthy & Mathew 2003 for one lognormal mean,
    to which it reduces when ``y`` is constant; Bebu & Mathew 2008 for the ratio of the means
    of a bivariate lognormal). In the order ``(d, s)``, ``Sigma*_dd = a_dd / chi2(C - 1)``:
    the pivot of ``mu_d`` is the paired t pivot on the log totals. Antithetic draws
    ``(T_21, Z)``, ``(-T_21, -Z)`` make the draws for ``y / x`` exactly the negated draws for
    ``x / y`` (reciprocal intervals). Its quantiles
    give the interval (:func:`gpq_interval`): equal-tailed and asymmetric on the log scale;
    its coverage is approximate (a generalized interval is not exact in general) and was
    0.950-0.958 at 8 lognormal tasks in ``benchmarks/coverage_cost.py``. The base draws come
    from a fixed seed, so the result is a deterministic function of the data. Vectorised
    over leading axes.

    Parameters
    ----------
    x, y : ndarray, shape (..., C)
        Positive per-cluster totals, C >= 3.
    n_draws : int
        Draws of the pivot.

    Returns
    -------
    ndarray, shape (..., n_draws)
        Draws of ``theta*``; NaN for C < 3.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import gpq_interval, lognormal_ratio_gpq
    >>> x = np.array([900.0, 15000.0, 2500.0, 400.0, 7000.0])
    >>> y = np.array([1000.0, 21000.0, 3000.0, 500.0, 8000.0])
    >>> draws = lognormal_ratio_gpq(x, y)  # five tasks: a wide, asymmetric interval
    >>> lo, hi = gpq_interval(draws, 0.95)
    >>> print(f"{np.exp(lo):.3f} {np.exp(hi):.3f}")
    0.334 1.108
    >>> lo_swap, hi_swap = gpq_interval(lognormal_ratio_gpq(y, x), 0.95)  # y / x: reciprocal
    >>> bool(np.isclose(lo_swap, -hi) and np.isclose(hi_swap, -lo))
    True
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dbar = d.mean(-1)
    dm = d - dbar[..., None]
    sm = s - s.mean(-1, keepdims=True)
    a_ss, a_dd, a_sd = (sm * sm).sum(-1), (dm * dm).sum(-1), (sm * dm).sum(-1)
    if c < 3:
        return np.full((*dbar.shape, n_draws), np.nan)
    # Cholesky of A in the order (d, s): Sigma*_dd = a_dd / chi2(C - 1), so the pivot of
    # mu_d is the paired t pivot on the log task totals.
    with np.errstate(divide="ignore", invalid="ignore"):
        l11 = np.sqrt(a_dd)
        l21 = a_sd / l11
        l22 = np.sqrt(np.maximum(a_ss - l21**2, 0.0))
    t11, t22, t21, z = _gpq_base(c, n_draws)
    # B = L T^{-1} (lower triangular), Sigma* = B B': Sigma*_dd = b11^2, Sigma*_ds = b11 b21.
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    b11 = l11[..., None] * i11
    b21 = l21[..., None] * i11 + l22[..., None] * i21
    return dbar[..., None] - z * b11 / np.sqrt(c) + b11 * b21 / 2.0


def gpq_interval(draws: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed interval from pivot draws, by order statistics.

    With ``K`` draws and ``j = ceil(K (1 - confidence) / 2)``, the limits are the ``j``-th
    smallest and the ``j``-th largest draw, so a bound ``m`` lies beyond the upper limit
    exactly when the generalized p-value ``mean(draws >= m)`` is below ``(1 - confidence) / 2``
    (and likewise below): the test and the interval agree.

    Parameters
    ----------
    draws : ndarray, shape (..., K)
        Draws of a pivot, e.g. from :func:`lognormal_ratio_gpq`.
    confidence : float
        Confidence level.

    Returns
    -------
    lo, hi : ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import gpq_interval
    >>> lo, hi = gpq_interval(np.arange(1.0, 101.0), 0.90)
    >>> float(lo), float(hi)
    (5.0, 96.0)
    """
    srt = np.sort(np.asarray(draws, dtype=float), axis=-1)
    k = srt.shape[-1]
    j = max(1, int(np.ceil(k * (1.0 - confidence) / 2.0 - 1e-9)))
    return srt[..., j - 1], srt[..., k - j]


class PivotEnds(NamedTuple):
    """:func:`pivot_hull_ends`: the interval's ends (log scale) and how they were made."""

    low: np.ndarray
    high: np.ndarray
    log_estimate: np.ndarray
    widened: np.ndarray  # the hull with CR2 was taken (the pivot's own check fired)
    pivot_ok: np.ndarray  # the pivot had finite draws (else CR2 alone)
    sd_draws: np.ndarray
    cr2_se: np.ndarray
    cr2_q: np.ndarray  # the CR2 interval's t(Bell-McCaffrey df) quantile


def pivot_hull_ends(x: np.ndarray, y: np.ndarray, confidence: float) -> PivotEnds:
    """The total ratio's pivotal interval (log scale) of one or many data sets at once.

    ``x``, ``y``: (..., C) positive task totals. The generalized pivotal interval; where the
    plain log ratio falls outside the pivot's 95 % interval (the model doubtful), its hull
    with the CR2 t(Bell-McCaffrey df) interval; where the pivot has no spread, CR2 alone.
    :func:`~evalstats.stats.cost_ratios` and the simulated coverage of its interval
    (:func:`~evalstats.stats.design_coverage_cost`) both use this one function.
    """
    tx, ty = x.sum(axis=-1), y.sum(axis=-1)
    log_est = np.log(tx / ty)
    draws = lognormal_ratio_gpq(x, y)
    finite = np.isfinite(draws).all(axis=-1)
    safe = np.where(finite[..., None], draws, 0.0)
    lo, hi = gpq_interval(safe, confidence)
    c_lo, c_hi = gpq_interval(safe, MODEL_CHECK_CONFIDENCE)
    doubtful = finite & ~((c_lo <= log_est) & (log_est <= c_hi))
    h = y / ty[..., None]
    z = x / tx[..., None] - h
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.sum(z**2 / (1.0 - h), axis=-1))
    q = stats.t.ppf(0.5 + confidence / 2.0, bm_df_from_leverage(h))
    widen = doubtful & np.isfinite(q)
    lo = np.where(widen, np.minimum(lo, log_est - q * se), lo)
    hi = np.where(widen, np.maximum(hi, log_est + q * se), hi)
    lo = np.where(finite, lo, log_est - q * se)
    hi = np.where(finite, hi, log_est + q * se)
    return PivotEnds(lo, hi, log_est, widen, finite, np.std(safe, axis=-1), se, q)


def _cr2_total(sums: np.ndarray) -> tuple[float, float]:
    """CR2 SE of log(sum x / sum y) and its Bell-McCaffrey df, from per-cluster sums (C, 2).

    The ratio of totals is the WLS fit of ``x ~ 0 + y`` with weights ``1 / y``; its cluster
    leverages are ``h_c = Y_c / Y`` and the CR2 adjustment divides each squared cluster residual
    total by ``1 - h_c`` (see :func:`bm_df_from_leverage`).
    """
    tot = sums.sum(axis=0)
    z = sums[:, 0] / tot[0] - sums[:, 1] / tot[1]
    h = sums[:, 1] / tot[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        se = float(np.sqrt(np.sum(z**2 / (1.0 - h))))
    return se, float(bm_df_from_leverage(h))


def _cr2_mean(sums: np.ndarray) -> tuple[float, float]:
    """CR2 SE of a pooled mean (intercept-only OLS) and its Bell-McCaffrey df, (C, 2) sums."""
    n = sums[:, 1].sum()
    mean = sums[:, 0].sum() / n
    h = sums[:, 1] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        se = float(np.sqrt(np.sum((sums[:, 0] - sums[:, 1] * mean) ** 2 / (1.0 - h))) / n)
    return se, float(bm_df_from_leverage(h))
