"""The total-ratio interval of many simulated evaluations at once, from their log task totals.

:func:`~evalstats.stats._design_coverage_more.total_ratio_ends` gives ``cost_ratios``'
default interval through :func:`~evalstats.stats._cost_intervals.pivot_hull_ends`, one
call per chunk of simulations: right, and at 10,000 tasks x 2,000 simulations about 5 s
for each measure, most of it spent on work a simulation does not need (the logs of
totals it drew as logs, both ends of the pivot's 8,192 draws sorted twice, a
Shapiro-Wilk test per simulated evaluation). :func:`ends_from_logs` is the same interval
from the log totals: the same pivot draws (from the same sums of squares and products
of the log totals, with the same base draws), their order statistics picked by one
``np.partition``, the same CR2 hull and the same lognormal check, Shapiro-Wilk to
5,000 task log ratios and D'Agostino-Pearson beyond (the rule of ``cost_ratios``' check,
scipy's Shapiro-Wilk p-value being accurate to 5,000 values), both scipy's, vectorised
over the evaluations. The tests hold it to ``total_ratio_ends`` at 1e-12 on designs where
every branch fires.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy import stats

from evalstats.stats._cost_intervals import (
    _GPQ_DRAWS,
    _SHAPIRO_MAX,
    LOGNORMAL_CHECK_ALPHA,
    MODEL_CHECK_CONFIDENCE,
    _gpq_base,
    bm_df_from_leverage,
)

__all__ = ["ends_from_logs", "lognormal_check_p"]


def _buf(work: dict, name: str, shape: tuple) -> np.ndarray:
    """A float array of ``shape`` kept in ``work`` between calls: a chunk of simulations
    reuses its predecessor's memory instead of faulting fresh pages in (a third of the
    time of the arithmetic at 10,000 tasks)."""
    arr = work.get(name)
    if arr is None or arr.shape != shape:
        arr = work[name] = np.empty(shape)
    return arr


def lognormal_check_p(d: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """p-value of the lognormal check of task log ratios ``d`` (..., C): Shapiro-Wilk to
    5,000 values, D'Agostino-Pearson (scipy's ``normaltest``) beyond; 1 where ``d`` has no
    spread."""
    test = stats.normaltest if d.shape[-1] > _SHAPIRO_MAX else stats.shapiro
    p = np.ones(d.shape[:-1])
    if spread.any():  # (a sample without spread has no test, and scipy warns on it)
        p[spread] = test(d[spread], axis=-1).pvalue
    return p


@functools.lru_cache(maxsize=8)
def _base_uvw(c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pivot's draws of C tasks as ``dbar + l11 (u + l21 v + l22 w)`` (ends_from_logs)."""
    t11, t22, t21, z = _gpq_base(c, _GPQ_DRAWS)
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    return -z * i11 / np.sqrt(c), i11 * i11 / 2.0, i11 * i21 / 2.0


def _order_stats(draws: np.ndarray, levels: tuple[float, ...]) -> list[tuple]:
    """``gpq_interval``'s ends at each level, from one partition of the draws (in place:
    they are scratch)."""
    k = draws.shape[-1]
    js = [max(1, int(np.ceil(k * (1.0 - c) / 2.0 - 1e-9))) for c in levels]
    draws.partition(sorted({i for j in js for i in (j - 1, k - j)}), axis=-1)
    return [(draws[..., j - 1].copy(), draws[..., k - j].copy()) for j in js]


def ends_from_logs(
    lx: np.ndarray, ly: np.ndarray, confidence: float, work: dict | None = None
) -> tuple:
    """``total_ratio_ends`` of positive task totals given by their logs (k, C), C >= 3:
    ``(low, high, log_estimate, model_rejected)`` on the log scale. ``work``: a dict the
    caller keeps across chunks, holding the (k, C) scratch arrays."""
    work = {} if work is None else work
    shape = lx.shape
    c = shape[-1]
    x, y = np.exp(lx, out=_buf(work, "x", shape)), np.exp(ly, out=_buf(work, "y", shape))
    tx, ty = x.sum(axis=-1), y.sum(axis=-1)
    log_est = np.log(tx / ty)
    # lognormal_ratio_gpq's pivot draws, from the same centred sums of (d, s).
    d = np.subtract(lx, ly, out=_buf(work, "d", shape))
    sm = np.add(lx, ly, out=_buf(work, "s", shape))
    dbar = d.mean(-1)
    dm = np.subtract(d, dbar[..., None], out=_buf(work, "dm", shape))
    sm -= sm.mean(-1, keepdims=True)
    a_ss, a_dd, a_sd = (
        np.einsum("...i,...i->...", u, v) for u, v in ((sm, sm), (dm, dm), (sm, dm))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        l11 = np.sqrt(a_dd)
        l21 = a_sd / l11
        l22 = np.sqrt(np.maximum(a_ss - l21**2, 0.0))
    # lognormal_ratio_gpq's draws are dbar - z b11 / sqrt(C) + b11 b21 / 2 with b11 = l11
    # i11, b21 = l21 i11 + l22 i21, i.e. dbar + l11 (u + l21 v + l22 w) for fixed u, v, w:
    # their order statistics are those of u + l21 v + l22 w, mapped (l11 >= 0).
    u, v, w = _base_uvw(c)
    finite = np.isfinite(dbar) & np.isfinite(l11) & np.isfinite(l21) & np.isfinite(l22)
    a, b = np.where(finite, l21, 0.0), np.where(finite, l22, 0.0)
    g = np.multiply(a[:, None], v, out=_buf(work, "g", (shape[0], len(u))))
    g += u
    g += np.multiply(b[:, None], w, out=_buf(work, "gw", g.shape))
    ends = _order_stats(g, (confidence, MODEL_CHECK_CONFIDENCE))
    (lo, hi), (c_lo, c_hi) = ((dbar + l11 * e0, dbar + l11 * e1) for e0, e1 in ends)
    doubtful = finite & ~((c_lo <= log_est) & (log_est <= c_hi))
    d_hi, d_lo = d.max(axis=-1), d.min(axis=-1)  # np.ptp and max |d| from two passes
    spread = d_hi - d_lo > 1e-12 * np.maximum(1.0, np.maximum(d_hi, -d_lo))
    p = lognormal_check_p(d, spread)  # total_ratio_ends' lognormal check
    # The CR2 interval only where a check may take it: a few of the evaluations.
    se, q = np.full(log_est.shape, np.nan), np.full(log_est.shape, np.nan)
    rows = np.flatnonzero(doubtful | ~finite | (spread & (p < LOGNORMAL_CHECK_ALPHA)))
    if rows.size:
        h = y[rows] / ty[rows, None]
        zz = x[rows] / tx[rows, None] - h
        with np.errstate(divide="ignore", invalid="ignore"):
            se[rows] = np.sqrt(np.einsum("...i,...i->...", zz, zz / (1.0 - h)))
        q[rows] = stats.t.ppf(0.5 + confidence / 2.0, bm_df_from_leverage(h))
    widen = doubtful & np.isfinite(q)
    lo = np.where(widen, np.minimum(lo, log_est - q * se), lo)
    hi = np.where(widen, np.maximum(hi, log_est + q * se), hi)
    lo = np.where(finite, lo, log_est - q * se)
    hi = np.where(finite, hi, log_est + q * se)
    switched = spread & (p < LOGNORMAL_CHECK_ALPHA) & np.isfinite(q)
    lo = np.where(switched, log_est - q * se, lo)
    hi = np.where(switched, log_est + q * se, hi)
    return lo, hi, log_est, widen | switched
