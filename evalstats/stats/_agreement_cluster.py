"""Vectorised cores of the task-clustered agreement intervals.

Every coefficient here has the form ``(p_o - p_e) / (1 - p_e)`` of an observed agreement
``p_o`` and a chance agreement ``p_e`` that are functions of *sums* of per-cluster
sufficient statistics, so resampling tasks is gathering and summing small arrays:

* two raters (Cohen's (weighted) kappa, Scott's pi, Gwet's AC1/AC2, Brennan-Prediger /
  PABAK, percent agreement): each task's k x k contingency table (``k * k`` numbers);
* many raters (Fleiss' kappa and the Gwet-family multi-rater coefficients): each task's
  sum of per-unit pairwise agreements, its number of units with two or more ratings, its
  number of rated units and its sum of per-unit category shares (``q + 3`` numbers);
* Krippendorff's alpha: each task's coincidence matrix and its number of pairable units
  (``q * q + 1`` numbers); ``p_o = 1 - D_o / max(delta)``, ``p_e = 1 - D_e / max(delta)``.

:func:`cluster_intervals` evaluates the interval constructions on arrays of shape
``(..., C, d)`` (leading axes: many data sets at once, as in the coverage study), with no
Python loop over resamples, tasks or units.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import numpy as np
from scipy import stats

from evalstats.stats import _agreement_bounds as bounds
from evalstats.stats._kappa import _div

__all__ = [
    "METHODS",
    "ClusterIntervals",
    "cluster_intervals",
    "coefficient",
    "delta_matrix",
    "kripp_cluster_stats",
    "kripp_parts",
    "multi_cluster_stats",
    "multi_parts",
    "table_cluster_stats",
    "iid_ratio",
    "table_parts",
    "table_squared",
]

#: Interval constructions, in the order the coverage study prints them.
METHODS = (
    "jackknife_t",
    "atanh_jackknife",
    "exact_agreement",
    "atanh_jackknife_exact",
    "atanh_jackknife_midp_blaker",
    "bootstrap_percentile",
)
#: The atanh jackknife joined with a bound of the observed agreement: method -> bound (of
#: :mod:`evalstats.stats._agreement_bounds`).
JOINED = {"atanh_jackknife_exact": "clopper_pearson", "atanh_jackknife_midp_blaker": "mid_p_blaker"}
#: Below this many effective disagreeing units the atanh jackknife sees too few
#: disagreements to measure their spread, and the joined methods (:data:`JOINED`) also take
#: in the bound of the observed agreement (the usual rule that a normal approximation needs
#: a few events; chosen by ``benchmarks/coverage_agreement.py`` among 3, 5, 10 and always:
#: with either bound, 5 and 3 fall to 0.87 and below at kappa 0.95 on 40 tasks).
EXACT_BELOW = 10.0
TABLE_KINDS = ("cohen", "scott", "gwet", "bp", "pa")
MULTI_KINDS = ("fleiss", "gwet", "bp", "pa")

Parts = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


# --------------------------------------------------------------------------- statistics


def table_cluster_stats(cluster: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n_clusters: int):
    """(C, k*k) contingency counts per cluster from integer codes (one bincount)."""
    flat = (cluster * k + a) * k + b
    return np.bincount(flat, minlength=n_clusters * k * k).reshape(n_clusters, k * k).astype(float)


def table_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed flattened tables ``(..., k*k)``."""
    k = w.shape[0]
    t = np.asarray(s, dtype=float).reshape(*np.shape(s)[:-1], k, k)
    n = t.sum(axis=(-2, -1))
    p = _div(t, n[..., None, None])
    r, c = p.sum(axis=-1), p.sum(axis=-2)
    po = np.einsum("...ij,ij->...", p, w)
    if kind == "cohen":
        pe = np.einsum("...i,ij,...j->...", r, w, c)
    elif kind in ("scott", "gwet"):
        pi = (r + c) / 2.0
        if kind == "scott":
            pe = np.einsum("...i,ij,...j->...", pi, w, pi)
        else:
            pe = _gwet_scale(w) * np.sum(pi * (1.0 - pi), axis=-1)
    elif kind == "bp":
        pe = np.full_like(po, w.sum() / k**2)
    elif kind == "pa":
        pe = np.zeros_like(po)
    else:  # pragma: no cover - internal misuse
        raise ValueError(kind)
    return po, pe, n


def _gwet_scale(w: np.ndarray) -> float:
    q = w.shape[0]
    return float(w.sum() / (q * (q - 1))) if q > 1 else float("nan")


def multi_cluster_stats(cluster: np.ndarray, counts: np.ndarray, w: np.ndarray, n_clusters: int):
    """(C, q + 3) per-cluster sums: pairwise agreement, units with >= 2 ratings, rated units,
    category shares (units x categories ``counts``, one cluster code per unit)."""
    r = counts.sum(axis=1)
    rated = r > 0
    two = r >= 2
    sum_q = np.sum(counts * (counts @ w.T - 1.0), axis=1)
    pa_i = np.where(two, sum_q / np.where(two, r * (r - 1.0), 1.0), 0.0)
    share = np.where(rated[:, None], counts / np.where(rated, r, 1.0)[:, None], 0.0)
    per_unit = np.column_stack([pa_i, two, rated, share]).astype(float)
    return _sum_by_cluster(cluster, per_unit, n_clusters)


def _sum_by_cluster(cluster: np.ndarray, per_unit: np.ndarray, n_clusters: int) -> np.ndarray:
    """(C, d) sums of the units' rows by cluster: a stable sort and one ``reduceat``."""
    out = np.zeros((n_clusters, per_unit.shape[1]))
    if len(cluster) == 0:
        return out
    order = np.argsort(cluster, kind="stable")
    sorted_cl = cluster[order]
    starts = np.flatnonzero(np.r_[True, sorted_cl[1:] != sorted_cl[:-1]])
    out[sorted_cl[starts]] = np.add.reduceat(per_unit[order], starts, axis=0)
    return out


def multi_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed multi-rater statistics ``(..., q + 3)``."""
    s = np.asarray(s, dtype=float)
    q = w.shape[0]
    n2, n_units = s[..., 1], s[..., 2]
    po = _div(s[..., 0], n2)
    pi = _div(s[..., 3:], n_units[..., None])
    if kind == "fleiss":
        pe = np.einsum("...i,ij,...j->...", pi, w, pi)
    elif kind == "gwet":
        pe = _gwet_scale(w) * np.sum(pi * (1.0 - pi), axis=-1)
    elif kind == "bp":
        pe = np.full_like(po, w.sum() / q**2)
    elif kind == "pa":
        pe = np.zeros_like(po)
    else:  # pragma: no cover - internal misuse
        raise ValueError(kind)
    return po, pe, n2


def kripp_cluster_stats(cluster: np.ndarray, counts: np.ndarray, n_clusters: int) -> np.ndarray:
    """(C, q*q + 1) per-cluster coincidence matrices and pairable-unit counts."""
    m = counts.sum(axis=1)
    keep = m >= 2
    c = counts[keep]
    scaled = c / (m[keep] - 1.0)[:, None]
    q = counts.shape[1]
    per_unit = np.empty((len(c), q * q + 1))
    outer = per_unit[:, : q * q].reshape(len(c), q, q)
    np.einsum("ui,uj->uij", scaled, c, out=outer)
    outer[:, np.arange(q), np.arange(q)] -= scaled  # a unit's value is not paired with itself
    per_unit[:, -1] = 1.0
    return _sum_by_cluster(cluster[keep], per_unit, n_clusters)


def delta_matrix(values: np.ndarray, level: str, n_c: np.ndarray) -> np.ndarray:
    """delta^2 over the leading axes of the value counts ``n_c`` (..., q)."""
    q = len(values)
    shape = (*n_c.shape[:-1], q, q)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(q), shape)
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, shape)
    if level == "ratio":
        s = values[:, None] + values[None, :]
        d = values[:, None] - values[None, :]
        return np.broadcast_to(np.where(s == 0, 0.0, _div(d, np.where(s == 0, 1.0, s))) ** 2, shape)
    if level == "ordinal":
        zero = np.zeros((*n_c.shape[:-1], 1))
        cum = np.concatenate([zero, np.cumsum(n_c, axis=-1)], axis=-1)
        i = np.arange(q)
        lo = np.minimum(i[:, None], i[None, :])
        hi = np.maximum(i[:, None], i[None, :])
        between = cum[..., hi + 1] - cum[..., lo]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2
    raise ValueError(level)  # pragma: no cover - validated upstream


def kripp_parts(s: np.ndarray, values: np.ndarray, level: str):
    """``(p_o, p_e, n)`` of summed coincidence statistics: ``p_o = 1 - D_o / max delta``,
    ``p_e = 1 - D_e / max delta`` (so ``alpha = 1 - D_o / D_e``), ``n`` pairable units."""
    s = np.asarray(s, dtype=float)
    q = len(values)
    o = s[..., : q * q].reshape(*s.shape[:-1], q, q)
    n_c = o.sum(axis=-1)
    total = n_c.sum(axis=-1)
    delta = delta_matrix(np.asarray(values, dtype=float), level, n_c)
    dmax = delta.max(axis=(-2, -1))
    d_o = _div(np.sum(o * delta, axis=(-2, -1)), total * dmax)
    d_e = _div(np.einsum("...i,...ij,...j->...", n_c, delta, n_c), (total - 1.0) * total * dmax)
    return 1.0 - d_o, 1.0 - d_e, s[..., -1]


def coefficient(parts: Parts, s: np.ndarray) -> np.ndarray:
    """``(p_o - p_e) / (1 - p_e)`` of summed statistics."""
    po, pe, _ = parts(s)
    return _div(po - pe, 1.0 - pe)


# --------------------------------------------------------------------------- intervals


class ClusterIntervals(NamedTuple):
    """Arrays over the leading axes; ``intervals[method] = (low, high)``."""

    estimate: np.ndarray
    se: np.ndarray  # delete-one-task jackknife SE on the coefficient's own scale
    df: np.ndarray
    p_value: np.ndarray  # t(C - 1) test of 0 on the atanh scale (joined: with the bound's test)
    observed: np.ndarray
    expected: np.ndarray
    n: np.ndarray
    n_eff: np.ndarray  # effective units of the bound of the observed agreement
    few: np.ndarray  # where the joined methods take in that bound
    intervals: dict[str, tuple[np.ndarray, np.ndarray]]


def _jackknife(total: np.ndarray, loo: np.ndarray, fn, c: int):
    est = fn(total)
    vals = fn(loo)
    with np.errstate(invalid="ignore"):
        dev = vals - vals.mean(axis=-1, keepdims=True)
        se = np.sqrt((c - 1.0) / c * np.sum(dev**2, axis=-1))
    return est, se


def _resample_counts(rng: np.random.Generator, lead: tuple[int, ...], b: int, c: int):
    """Multinomial task counts (..., B, C) of a cluster bootstrap, by one bincount."""
    m = int(np.prod(lead, dtype=np.int64)) * b
    idx = rng.integers(0, c, size=(m, c))
    flat = (np.arange(m)[:, None] * c + idx).ravel()
    return np.bincount(flat, minlength=m * c).reshape(*lead, b, c).astype(float)


def _exact(po, pe, n_eff, alpha, bound):
    """Bounds of the observed agreement on ``n_eff`` effective units (``bound`` of
    :data:`evalstats.stats._agreement_bounds.BOUNDS`), mapped through the coefficient with
    ``p_e`` held at its estimate and clipped to [-1, 1]."""
    lo, hi = bounds.proportion_bounds(np.clip(po, 0.0, 1.0) * n_eff, n_eff, alpha, bound)
    return np.clip(_div(lo - pe, 1.0 - pe), -1.0, 1.0), np.clip(_div(hi - pe, 1.0 - pe), -1.0, 1.0)


def table_squared(w: np.ndarray) -> Parts | None:
    """:func:`cluster_intervals`' ``squared`` of two-rater tables with weights ``w``: the
    weighted percent agreement with weights ``w ** 2``; None for 0 / 1 weights (a unit's
    agreement is then its own square, and the IID ratio is 1)."""
    w = np.asarray(w, dtype=float)
    if np.array_equal(w * w, w):
        return None
    return partial(table_parts, w=w * w, kind="pa")


def iid_ratio(po: np.ndarray, m2: np.ndarray) -> np.ndarray:
    """IID variance of the per-unit agreement over the binomial one, ``(E a^2 - p_o^2) /
    (p_o (1 - p_o))``, in (0, 1] (1 unweighted, and where ``p_o`` is 0 or 1)."""
    binom = po * (1.0 - po)
    ok = binom > 1e-15
    r = np.where(ok, _div(m2 - po**2, np.where(ok, binom, 1.0)), 1.0)
    return np.clip(np.nan_to_num(r, nan=1.0), 1e-12, 1.0)


def cluster_intervals(
    cs: np.ndarray,
    parts: Parts,
    *,
    confidence: float = 0.95,
    methods: tuple[str, ...] = METHODS,
    n_resamples: int = 0,
    rng: np.random.Generator | None = None,
    pseudo: float = 1.0,
    exact_below: float = EXACT_BELOW,
    unit_disagreement: float = 1.0,
    bound: str | None = None,
    deff_floor: float = 1.0,
    squared: Parts | None = None,
) -> ClusterIntervals:
    """Every requested interval of the coefficient of per-cluster statistics ``cs``.

    Parameters
    ----------
    cs : ndarray, shape (..., C, d)
        Per-cluster sufficient statistics (C >= 2 clusters, every one present).
    parts : callable
        Summed statistics ``(..., d)`` -> ``(p_o, p_e, n)``.
    confidence : float
    methods : tuple of str
        Among :data:`METHODS`: ``jackknife_t`` (estimate +/- t(C-1) jackknife SE, can
        leave [-1, 1]); ``atanh_jackknife`` (the same on Fisher's z of the coefficient
        shrunk by ``n / (n + pseudo)``, i.e. ``pseudo`` extra units agreeing at chance, so
        that perfect agreement has a finite z; back-transformed by tanh);
        ``exact_agreement`` (Clopper-Pearson on the observed agreement with the effective
        number of units ``n / deff``, ``deff`` the jackknife variance of ``p_o`` over the
        binomial one, in [floor, n / C] (floor: ``deff_floor``, times the IID ratio of
        ``squared``), 1 when ``p_o`` is 0 or 1; mapped with ``p_e`` fixed);
        ``atanh_jackknife_exact`` (``atanh_jackknife``, joined with ``exact_agreement``
        where the effective number of disagreeing units, ``n (1 - p_o) /
        unit_disagreement`` over the design effect floored at 1 (a near miss counts once
        whatever ``squared`` does to the bound), is below ``exact_below`` or the jackknife SE
        is 0); ``atanh_jackknife_midp_blaker`` (the
        same join with the mid-p bounds that invert Blaker's combined-tails test instead of
        Clopper-Pearson's, see :mod:`evalstats.stats._agreement_bounds`);
        ``bootstrap_percentile`` (cluster bootstrap of the coefficient).
    n_resamples : int
        Bootstrap resamples (needed by the bootstrap methods).
    rng : Generator
    pseudo : float
        Pseudo-units of the atanh construction's continuity adjustment.
    exact_below : float
        See ``atanh_jackknife_exact`` (``inf``: always joined).
    unit_disagreement : float
        The smallest disagreement ``1 - w`` between two different ratings (1 unweighted;
        0.25 for quadratic weights on three categories): disagreements are counted in
        units of it, so that a weighted near-miss counts as one disagreeing unit.
    bound : str, optional
        One bound of the observed agreement for ``exact_agreement`` and every joined method
        (the coverage study's variants); default: each method's own (:data:`JOINED`).
    deff_floor : float
        Smallest design effect, as a multiple of the IID ratio of ``squared`` (1 without
        it); the coverage study's variants.
    squared : callable, optional
        Summed statistics -> the mean over units of the squared per-unit agreement, first of
        a ``parts``-like triple (:func:`table_squared`). Given (weighted agreement), the
        design effect's floor is the IID variance of the per-unit agreement over the
        binomial one (:func:`iid_ratio`, below 1 where some disagreements are near misses;
        at least ``unit_disagreement``, the ratio of rare near misses, so that units which
        all agree in part do not give a zero-width bound), so the bound has up to ``n /
        ratio`` effective units. Why: with the floor at 1 the bound took a near miss for a
        whole binomial disagreement and weighted kappa over-covered at high agreement
        (linear weights 0.988 and 0.990 at kappa 0.92 on 10 x 3 and 6 x 3 units of
        ``benchmarks/coverage.py``, 0.954 and 0.954 with the IID floor; in
        ``benchmarks/coverage_agreement.py`` 27 and 22 of 48 designs outside 0.93-0.97 for
        quadratic and linear weights, up to 1.000, against 6 and 6). A fixed floor at
        ``unit_disagreement`` covers the same there (within 0.001 on average: three
        categories, few far misses) once the join is decided as before (decided on the
        bound's own units it fell to 0.79, with either floor); the IID ratio is kept because it
        also sees the far misses observed, which a fixed floor takes for ``1 /
        unit_disagreement`` independent near misses (understating their variance by that
        factor).

    Every interval except ``jackknife_t`` lies in [-1, 1] (tanh, a bootstrap of the
    coefficient, or an exact bound clipped to the coefficient's range).
    """
    cs = np.asarray(cs, dtype=float)
    c = cs.shape[-2]
    alpha = 1.0 - confidence
    total = cs.sum(axis=-2)
    loo = total[..., None, :] - cs
    po, pe, n = parts(total)

    def coef(s):
        return coefficient(parts, s)

    est, se = _jackknife(total, loo, coef, c)
    df = np.full(est.shape, c - 1.0)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)

    def z_of(s):
        p_o, p_e, m = parts(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrunk = _div(p_o - p_e, 1.0 - p_e) * m / (m + pseudo)
            return np.arctanh(np.clip(shrunk, -1.0, 1.0))

    z, se_z = _jackknife(total, loo, z_of, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_value = 2.0 * stats.t.sf(np.abs(_div(z, se_z)), c - 1.0)
    # Design effect of the observed agreement: jackknife variance over the binomial one.
    _, se_po = _jackknife(total, loo, lambda s: parts(s)[0], c)
    binom = _div(po * (1.0 - po), n)
    raw = np.nan_to_num(
        np.where(binom > 0, _div(se_po**2, np.where(binom > 0, binom, 1.0)), 1.0), nan=1.0
    )
    cap = np.maximum(n / c, 1.0)
    # A weighted unit's agreement varies less than a binomial one (a near miss is a part of a
    # disagreement): the floor is that IID ratio, so that the bound sees the information the
    # units carry; unweighted it is 1 and nothing changes. Not below the unit disagreement
    # (what rare near misses carry): where every unit agrees in part the ratio is 0 and the
    # bound would have no width.
    ratio = 1.0
    if squared is not None:
        ratio = np.maximum(iid_ratio(po, squared(total)[0]), min(unit_disagreement, 1.0))
    deff = np.clip(raw, deff_floor * ratio, cap)
    n_eff = n / deff
    # The effective disagreeing units that decide the join: on the design effect floored at
    # 1 (decided on the bound's units, with the weighted floor, it joined too rarely).
    count = n / np.clip(raw, 1.0, cap) * (1.0 - po) / unit_disagreement
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if "jackknife_t" in methods:
        out["jackknife_t"] = (est - tq * se, est + tq * se)
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    if "atanh_jackknife" in methods:
        out["atanh_jackknife"] = at
    if "exact_agreement" in methods:
        out["exact_agreement"] = _exact(po, pe, n_eff, alpha, bound or "clopper_pearson")
    # Few disagreements, or no spread at all over tasks (every task alike: a zero-width
    # interval is no interval): the joined methods take in the bound.
    few = (count < exact_below) | ~(se_z > 1e-12)
    joined_p = p_value
    for name in (m for m in methods if m in JOINED):
        b = bound or JOINED[name]
        lo, hi = _union(at, _exact(po, pe, n_eff, alpha, b))
        out[name] = (np.where(few, lo, at[0]), np.where(few, hi, at[1]))
        # The joined interval's test: the larger of the two p-values (it inverts neither alone).
        x = np.clip(po, 0.0, 1.0) * n_eff
        joined_p = np.where(few, np.fmax(p_value, bounds.proportion_p(pe, x, n_eff, b)), p_value)
    if any(m.startswith("bootstrap") for m in methods):
        if rng is None or n_resamples < 1:
            raise ValueError("the bootstrap methods need n_resamples >= 1 and an rng")
        w = _resample_counts(rng, est.shape, n_resamples, c)
        boot = coef(np.einsum("...bc,...cd->...bd", w, cs))
        with np.errstate(invalid="ignore"):
            bq = np.nanquantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0], axis=-1)
        bq = np.where(np.isnan(est), np.nan, bq)
        out["bootstrap_percentile"] = (bq[0], bq[1])
    return ClusterIntervals(est, se, df, joined_p, po, pe, n, n_eff, few, out)


def _union(a, b):
    # fmin/fmax: where one construction is undefined (nan) the other decides.
    return np.fmin(a[0], b[0]), np.fmax(a[1], b[1])
