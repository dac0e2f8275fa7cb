"""The total-ratio interval of many simulated evaluations at once, from their log task totals.

:func:`~evalstats.stats._design_coverage_more.total_ratio_ends` gives ``cost_ratios``'
default interval through :func:`~evalstats.stats._cost_intervals.pivot_hull_ends`, one
call per chunk of simulations: right, and at 10,000 tasks x 2,000 simulations about 5 s
for each measure, most of it spent on work a simulation does not need (the logs of
totals it drew as logs, both ends of the pivot's 8,192 draws sorted twice, a
Shapiro-Wilk test per simulated evaluation). :func:`ends_from_logs` is the same interval
from the log totals: the same pivot draws (from the same sums of squares and products
of the log totals, with the same base draws), their order statistics picked from the
few draws near them (:func:`_pivot_order_stats`: exact, a band of a few hundred of the
8,192 draws at 10,000 tasks), the same CR2 hull and the same lognormal check, Shapiro-Wilk to
5,000 task log ratios and D'Agostino-Pearson beyond (the rule of ``cost_ratios``' check,
scipy's Shapiro-Wilk p-value being accurate to 5,000 values), both scipy's, vectorised
over the evaluations (the latter on float32 centred log ratios: p within ~1e-5). The tests hold it to ``total_ratio_ends`` at 1e-12 on designs where
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


def _buf(work: dict, name: str, shape: tuple, dtype: type = np.float64) -> np.ndarray:
    """A float array of ``shape`` kept in ``work`` between calls: a chunk of simulations
    reuses its predecessor's memory instead of faulting fresh pages in (a third of the
    time of the arithmetic at 10,000 tasks)."""
    arr = work.get(name)
    if arr is None or arr.shape != shape or arr.dtype != dtype:
        arr = work[name] = np.empty(shape, dtype=dtype)
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
def _base_uvw(c: int) -> tuple:
    """The pivot's draws of C tasks as ``dbar + l11 (l21 vbar + u + l21 v + l22 w)``
    (ends_from_logs), ``v`` centred: its mean ``vbar`` (~1 / (2 C)) shifts every draw
    alike, and without it a change of ``l21`` moves the draws' order little. Also
    ``max |u|``, ``max |v|``, ``max |w|`` (the band's bound, :func:`_pivot_order_stats`)."""
    t11, t22, t21, z = _gpq_base(c, _GPQ_DRAWS)
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    u, v, w = -z * i11 / np.sqrt(c), i11 * i11 / 2.0, i11 * i21 / 2.0
    vbar = float(v.mean())
    v = v - vbar
    return u, v, w, vbar, *(float(np.abs(e).max()) for e in (u, v, w))


def _ranks(k: int, levels: tuple[float, ...]) -> tuple[list[int], list[tuple[int, int]]]:
    """The distinct 0-based ranks of ``gpq_interval``'s ends at each level among ``k``
    draws, and each level's (low, high) positions among those ranks."""
    js = [max(1, int(np.ceil(k * (1.0 - c) / 2.0 - 1e-9))) for c in levels]
    ranks = sorted({i for j in js for i in (j - 1, k - j)})
    return ranks, [(ranks.index(j - 1), ranks.index(k - j)) for j in js]


def _pivot_order_stats(
    a: np.ndarray, b: np.ndarray, c: int, levels: tuple[float, ...], work: dict
) -> list[tuple]:
    """``gpq_interval``'s ends at each level of the draws ``a vbar + u + a v + b w`` (one
    row per (a, b)): exactly, without forming most of the draws.

    With ``h0`` the draws of a reference row (the median a, b), a row's draws differ from
    them by at most ``delta = |a - a0| max|v| + |b - b0| max|w|`` each, so its order
    statistic of rank t lies within ``delta`` of ``h0``'s, ``q0``: every draw with
    ``h0 < q0 - 2 delta`` is below it and every one with ``h0 > q0 + 2 delta`` above, and
    it is the order statistic of rank ``t - (draws below)`` of the draws in the band. At
    10,000 tasks the (a, b) of simulated evaluations differ by ~1 / sqrt(C) of the draws'
    spread: a band of a few hundred draws instead of 8,192 per end. The band's width is
    the one that costs least among a few quantiles of delta; rows beyond it take all the
    draws. The bound is padded by 4e-12 of the draws' scale (rounding is ~1e-16 of it),
    so the ends are the full partition's, up to the rounding of ``vbar`` taken out.
    """
    u, v, w, vbar, u_max, v_max, w_max = _base_uvw(c)
    k, n = len(u), len(a)
    ranks, pos = _ranks(k, levels)
    a0, b0 = (float(np.median(e)) if n else 0.0 for e in (a, b))
    delta = np.abs(a - a0) * v_max + np.abs(b - b0) * w_max
    scale = u_max + np.abs(a).max(initial=abs(a0)) * v_max + np.abs(b).max(initial=abs(b0)) * w_max
    order = np.argsort(a0 * v + u + b0 * w)
    h0 = (a0 * v + u + b0 * w)[order]
    q0 = h0[ranks]
    cuts = np.unique(np.quantile(delta, [0.5, 0.9, 0.99, 1.0])) if n else np.zeros(1)
    widths = 2.0 * cuts[:, None] + 8e-12 * scale
    lo_i = np.searchsorted(h0, q0 - widths, side="left")
    hi_i = np.searchsorted(h0, q0 + widths, side="right")
    inside = (delta[None, :] <= cuts[:, None]).sum(axis=1)
    # A band row costs its draws in the bands, a full row ~3 passes over K (the partition).
    best = int(np.argmin((hi_i - lo_i).sum(axis=1) * inside + 3 * k * (n - inside)))
    ends = np.empty((len(ranks), n))
    band = delta <= cuts[best]
    work["band_rows"] = int(band.sum())  # (for the tests: which way the rows went)
    if band.any():
        ab, bb = a[band, None], b[band, None]
        for r, (i0, i1) in enumerate(zip(lo_i[best], hi_i[best], strict=True)):
            idx = order[i0:i1]
            h = ab * v[idx]
            h += u[idx]
            h += bb * w[idx]
            t = ranks[r] - i0  # the band's draws below: i0 of them, all below the end
            h.partition(t, axis=-1)
            ends[r, band] = h[:, t]
    if not band.all():
        af, bf = a[~band, None], b[~band, None]
        g = np.multiply(af, v, out=_buf(work, "g", (len(af), k)))
        g += u
        g += np.multiply(bf, w, out=_buf(work, "gw", g.shape))
        g.partition(ranks, axis=-1)
        ends[:, ~band] = g[:, ranks].T
    ends += a * vbar
    return [(ends[i], ends[j]) for i, j in pos]


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
    finite = np.isfinite(dbar) & np.isfinite(l11) & np.isfinite(l21) & np.isfinite(l22)
    # Rows without a finite pivot take CR2 below, so their draws are any: the others'
    # median, which keeps the band of _pivot_order_stats narrow.
    a0, b0 = (float(np.median(e[finite])) if finite.any() else 0.0 for e in (l21, l22))
    a, b = np.where(finite, l21, a0), np.where(finite, l22, b0)
    ends = _pivot_order_stats(a, b, c, (confidence, MODEL_CHECK_CONFIDENCE), work)
    (lo, hi), (c_lo, c_hi) = ((dbar + l11 * e0, dbar + l11 * e1) for e0, e1 in ends)
    doubtful = finite & ~((c_lo <= log_est) & (log_est <= c_hi))
    d_hi, d_lo = d.max(axis=-1), d.min(axis=-1)  # np.ptp and max |d| from two passes
    spread = d_hi - d_lo > 1e-12 * np.maximum(1.0, np.maximum(d_hi, -d_lo))
    # total_ratio_ends' lognormal check. Above 5,000 tasks (D'Agostino-Pearson) on the
    # centred log ratios in float32: scipy's test then takes half the time, and its
    # p-value moved by at most 1.3e-5 in 4,000 evaluations at 10,000 tasks (no decision
    # at 0.05 changed; tests/test_design_cost_ends.py): a decision changes only where
    # p is that close to 0.05. (Centred first, a large mean costs float32 no digits.)
    resid = d
    if c > _SHAPIRO_MAX:
        resid = _buf(work, "dm32", shape, np.float32)
        np.copyto(resid, dm, casting="same_kind")
    p = lognormal_check_p(resid, spread)
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
