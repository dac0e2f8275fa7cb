"""Resampling by cluster: the cluster bootstrap of per-task sums (BCa with the delete-one-cluster
jackknife, percentile, basic) and the wild cluster bootstrap. A resample sums ``C`` drawn
per-task rows (never row indices), in chunks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special

from evalstats._display import ResultDisplay
from evalstats._validate import check_choice, check_confidence, check_n_resamples

__all__ = [
    "BOOTSTRAP_METHODS", "BootstrapResult", "as_generator", "bootstrap_distribution",
    "cluster_bootstrap", "group_bootstrap", "interval_from_distribution",
    "wild_cluster_interval", "wild_cluster_p", "wild_weights",
]  # fmt: skip


BOOTSTRAP_METHODS = ("bca", "percentile", "basic")

_CHUNK_BUDGET_BYTES = 96 * 2**20  # indices + gathered values of one chunk of resamples
_BATCH_BYTES = 64 * 2**20  # bootstrap distributions of a batch of groups, held at once
# Above this many float columns, bincount + matmul beats one gather per column.
_MAX_GATHER_COLUMNS = 4


@dataclass(frozen=True)
class BootstrapResult(ResultDisplay):
    """Result of :func:`cluster_bootstrap`: ``estimate``, ``ci_low``, ``ci_high`` and ``se`` (SD of
    the bootstrap distribution), arrays of shape (q,), and the settings."""

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    method: str
    confidence: float
    n_resamples: int
    n_tasks: int

    def to_frame(self, names: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per statistic: estimate, se, ci_low, ci_high and the settings."""
        q = self.estimate.shape[0]
        index = list(names) if names is not None else [f"stat{i}" for i in range(q)]
        if len(index) != q:
            raise ValueError(f"names has {len(index)} entries, the statistic has {q}")
        fields = ("estimate", "se", "ci_low", "ci_high", "method", "confidence", "n_resamples")
        cols = {f: getattr(self, f) for f in (*fields, "n_tasks")}
        return pd.DataFrame(cols, index=pd.Index(index, name="statistic"))


def as_generator(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A Generator from a Generator, an int seed or None (fresh entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise TypeError(f"rng must be a numpy Generator, an int seed or None, got {type(rng)!r}")


def cluster_bootstrap(
    cluster_stats: ArrayLike,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    method: str = "bca",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> BootstrapResult:
    """Cluster bootstrap confidence intervals from per-cluster sufficient statistics.

    Parameters
    ----------
    cluster_stats : array_like, shape (C, m) or (C,)
        Per-cluster sums of the sufficient statistics (e.g. a task's wins and verdicts).
    statistic : callable
        Maps summed statistics ``(..., m)`` to ``(..., q)`` (or ``(...)``), vectorised.
    method : {"bca", "percentile", "basic"}
    n_resamples, confidence, rng

    Returns
    -------
    BootstrapResult

    >>> wins_and_n = np.array([[3, 6], [5, 6], [1, 6], [4, 6], [6, 6], [2, 6]])
    >>> float(cluster_bootstrap(wins_and_n, lambda s: s[..., 0] / s[..., 1], rng=0).estimate[0])
    0.5833333333333334
    """
    stats = np.asarray(cluster_stats, dtype=np.float64)
    stats = stats[:, None] if stats.ndim == 1 else stats
    if stats.ndim != 2:
        raise ValueError(f"cluster_stats must have shape (C, m), got {stats.shape}")
    if stats.shape[0] < 2:
        raise ValueError(f"need at least 2 clusters to resample, got {stats.shape[0]}")
    if stats.shape[1] < 1:
        raise ValueError("cluster_stats has no columns")
    if not np.all(np.isfinite(stats)):
        raise ValueError("cluster_stats contains NaN or infinite values")
    check_choice(method, "method", BOOTSTRAP_METHODS)
    n_resamples = check_n_resamples(n_resamples)
    confidence = float(check_confidence(confidence))
    zeros = np.zeros(len(stats), dtype=np.int64)
    est, se, ends = group_bootstrap(
        stats, zeros, 1, statistic, methods=(method,), n_resamples=n_resamples,
        confidence=confidence, rng=as_generator(rng),
    )  # fmt: skip
    return BootstrapResult(estimate=est[0], ci_low=ends[method][0][0], ci_high=ends[method][1][0],
                           se=se[0], method=method, confidence=confidence, n_resamples=n_resamples,
                           n_tasks=stats.shape[0])  # fmt: skip


def group_bootstrap(
    stats: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    methods: Sequence[str],
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Estimate, SE and each method's interval ends (groups x statistics) from per-cluster
    ``stats`` in groups ``gid``: one bootstrap distribution per group serves every method;
    groups of fewer than 2 clusters get NaN."""
    # Undefined resamples (0/0) are expected and dropped, not warned about.
    with np.errstate(divide="ignore", invalid="ignore"):
        n_stats = _as_2d(statistic(stats.sum(axis=0)[None])).shape[1]
    est = np.full((n_groups, n_stats), np.nan)
    se = np.full_like(est, np.nan)
    ends = {method: (est.copy(), est.copy()) for method in methods}
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(n_groups + 1))
    sizes = np.diff(bounds)
    todo = np.flatnonzero(sizes >= 2)
    if not todo.size:
        return est, se, ends
    # Draws group after group (the numbers do not depend on the batching).
    width = int(sizes.max())
    step = max(1, _BATCH_BYTES // (8 * n_stats * (n_resamples + width)))
    for start in range(0, todo.size, step):
        batch = todo[start : start + step]
        theta_b = np.empty((batch.size, n_resamples, n_stats))
        jack = np.full((batch.size, width, n_stats), np.nan) if "bca" in methods else None
        with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # fewer than 2 finite draws: NaN SE
            for k, g in enumerate(batch):
                cs = stats[order[bounds[g] : bounds[g + 1]]]
                est[g] = _as_2d(statistic(cs.sum(axis=0)[None]))[0]
                theta_b[k] = bootstrap_distribution(cs, statistic, n_resamples, rng)
                se[g] = np.nanstd(theta_b[k], axis=0, ddof=1)
                if jack is not None:
                    jack[k, : len(cs)] = _as_2d(statistic(cs.sum(axis=0) - cs))
        if len(ends) > 1:  # one sort serves every method's quantiles
            theta_b.sort(axis=1)
        for method, (low, high) in ends.items():
            low[batch], high[batch] = interval_from_distribution(
                theta_b, est[batch], confidence, method, jack, presorted=len(ends) > 1
            )
    return est, se, ends


def bootstrap_distribution(
    stats: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    n_resamples: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Bootstrap distribution, shape (B, q), of ``statistic`` over cluster resamples."""
    n_clusters, m = stats.shape
    # int64 indices + gathered values; bincount adds flat keys and counts
    per_resample = (16 if m <= _MAX_GATHER_COLUMNS else 24) * n_clusters
    chunk = min(max(1, _CHUNK_BUDGET_BYTES // per_resample), n_resamples)
    parts = []
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        # Same call as scipy.stats.bootstrap makes, so the streams agree.
        idx = rng.integers(0, n_clusters, (b, n_clusters))
        if m <= _MAX_GATHER_COLUMNS:
            sums = np.stack([np.take(col, idx).sum(axis=1) for col in stats.T], axis=1)
        else:
            keys = idx + (n_clusters * np.arange(b))[:, None]
            counts = np.bincount(keys.ravel(), minlength=b * n_clusters).reshape(b, n_clusters)
            sums = counts.astype(np.float64) @ stats
        parts.append(_as_2d(statistic(sums)))
    return np.concatenate(parts)


def interval_from_distribution(
    theta_b: np.ndarray,
    theta_hat: np.ndarray,
    confidence: float,
    method: str,
    jackknife: np.ndarray | None = None,
    *,
    presorted: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval ends, each shape (q,), from a bootstrap distribution (B, q)."""
    batched = np.ndim(theta_b) == 3
    theta_b = np.asarray(theta_b, dtype=np.float64)
    theta_hat = np.asarray(theta_hat, dtype=np.float64)
    if not batched:
        theta_b, theta_hat = theta_b[None], theta_hat[None]
        if jackknife is not None:
            jackknife = np.asarray(jackknife)[None]
    alpha = (1.0 - confidence) / 2.0
    shape = (theta_b.shape[0], theta_b.shape[2])
    check_choice(method, "method", BOOTSTRAP_METHODS)
    if method == "bca":
        if jackknife is None:
            raise ValueError("bca needs the leave-one-cluster-out jackknife values")
        p_lo, p_hi = _bca_levels(theta_b, theta_hat, np.asarray(jackknife, np.float64), alpha)
    else:
        p_lo, p_hi = np.full(shape, alpha), np.full(shape, 1.0 - alpha)
    low, high, flat = _quantiles(theta_b, p_lo, p_hi, presorted=presorted)
    if method == "basic":
        low, high = 2.0 * theta_hat - high, 2.0 * theta_hat - low
    # A degenerate distribution has no spread to report: collapse onto the estimate.
    low = np.where(flat, theta_hat, low)
    high = np.where(flat, theta_hat, high)
    return (low, high) if batched else (low[0], high[0])


def _bca_levels(
    theta_b: np.ndarray, theta_hat: np.ndarray, jackknife: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """BCa quantile levels, (G, q) each, of distributions (G, B, q)."""
    valid = ~np.isnan(theta_b)
    n_valid = valid.sum(axis=1)
    est = theta_hat[:, None, :]
    below = (theta_b < est).sum(axis=1) + (theta_b <= est).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = below / (2.0 * n_valid)
        # An estimate outside its own distribution: clip to the resolution of B resamples.
        half = 0.5 / np.maximum(n_valid, 1)
        share = np.clip(share, half, 1.0 - half)
    z0 = special.ndtri(share)

    # Acceleration from the jackknife (Efron & Tibshirani 14.15); NaN entries take no part.
    jk = jackknife
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: a_hat = 0
        dev = np.nanmean(jk, axis=1)[:, None, :] - jk
    num = np.nansum(dev**3, axis=1)
    den = np.nansum(dev**2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        a_hat = np.where(den > 0, num / (6.0 * den**1.5), 0.0)

    z_lo = special.ndtri(alpha)
    levels = []
    for z in (z_lo, -z_lo):
        s = z0 + z
        levels.append(special.ndtr(z0 + s / (1.0 - a_hat * s)))
    return levels[0], levels[1]


def _quantiles(
    theta_b: np.ndarray, *probs: np.ndarray, presorted: bool = False
) -> tuple[np.ndarray, ...]:
    """Linear-interpolation quantiles (numpy's default) of distributions (G, B, q) at levels
    (G, q) each, from one sort; and whether each is degenerate (min == max)."""
    out = [np.full(p.shape, np.nan) for p in probs]
    srt = theta_b if presorted else np.sort(theta_b, axis=1)  # NaN sort last
    n = srt.shape[1]
    n_valid = n - np.isnan(srt[:, ::-1]).argmin(axis=1)
    n_valid = np.where(np.isnan(srt[:, 0]), 0, n_valid)
    top = np.take_along_axis(srt, np.maximum(n_valid - 1, 0)[:, None, :], axis=1)[:, 0]
    flat = (n_valid > 0) & (srt[:, 0] == top)
    complete = n_valid == n
    for res, p in zip(out, probs, strict=True):
        pos = np.clip(p, 0.0, 1.0) * (n - 1)
        lo = np.floor(np.where(complete, pos, 0.0)).astype(np.intp)
        hi = np.minimum(lo + 1, n - 1)
        frac = pos - lo
        a = np.take_along_axis(srt, lo[:, None, :], axis=1)[:, 0]
        b = np.take_along_axis(srt, hi[:, None, :], axis=1)[:, 0]
        # Same interpolation formula as numpy ("linear"), to match it bit for bit.
        res[...] = np.where(frac >= 0.5, b - (b - a) * (1 - frac), a + (b - a) * frac)
    for g, j in zip(*np.nonzero(~complete), strict=True):  # rare: columns, never resamples
        col = srt[g, : n_valid[g, j], j]
        for res, p in zip(out, probs, strict=True):
            ok = col.size and np.isfinite(p[g, j])
            res[g, j] = np.quantile(col, np.clip(p[g, j], 0.0, 1.0)) if ok else np.nan
    return (*out, flat)


def _as_2d(theta: ArrayLike) -> np.ndarray:
    arr = np.asarray(theta, dtype=np.float64)
    if arr.ndim == 0:
        return arr.reshape(1, 1)
    if arr.ndim == 1:
        return arr[:, None]
    return arr.reshape(arr.shape[0], -1)


_WEBB = np.array([-np.sqrt(1.5), -1.0, -np.sqrt(0.5), np.sqrt(0.5), 1.0, np.sqrt(1.5)])


def wild_weights(
    n_clusters: int,
    n_resamples: int,
    rng: np.random.Generator | int | None = None,
    *,
    method: str = "webb",
) -> np.ndarray:
    """Cluster weights ``(B, C)`` of a wild cluster bootstrap: Webb's six-point distribution, or
    Rademacher signs (all ``2^C`` enumerated when ``2^C <= n_resamples``: an exact p-value).
    """
    check_choice(method, "method", ("webb", "rademacher"))
    if method == "rademacher" and 2**n_clusters <= n_resamples:
        codes = (np.arange(2**n_clusters)[:, None] >> np.arange(n_clusters)) & 1
        return 2.0 * codes - 1.0
    rng = np.random.default_rng(rng)
    if method == "rademacher":
        return 2.0 * rng.integers(0, 2, (n_resamples, n_clusters)) - 1.0
    return _WEBB[rng.integers(0, 6, (n_resamples, n_clusters))]


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
    """Restricted wild cluster bootstrap (WCR11) p-value of ``sum(y) / sum(m) = null``, every
    group at once: ``mean(|t*| > |t|)`` with CR1 t statistics (MacKinnon & Webb 2017);
    ``weights`` from :func:`wild_weights`, shared by the groups by cluster position.
    """
    yp, mp, valid = _padded(np.asarray(y, float), np.asarray(m, float), gid, n_groups)
    null = np.broadcast_to(np.asarray(null, dtype=np.float64), (n_groups,))
    return _wild_p_padded(yp, mp, valid, null, np.asarray(weights, dtype=np.float64))


def _cr1_padded(yp, mp, valid):
    """Estimate, CR1 SE, clusters and total weight of each row of padded cluster totals."""
    n = mp.sum(axis=1)
    c = valid.sum(axis=1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = yp.sum(axis=1) / n
        e = np.where(valid, yp - est[:, None] * mp, 0.0)
        se = np.sqrt(c / (c - 1.0) * (e**2).sum(axis=1)) / n
    return est, se, c, n


def _wild_p_padded(yp, mp, valid, null, v):
    est, se, c, n = _cr1_padded(yp, mp, valid)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = c / (c - 1.0)
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
    """Interval by inverting :func:`wild_cluster_p`: each end by bisection on the null (to
    ``tol``), vectorised over groups; an end not rejected at ``bounds`` is the bound.
    """
    alpha = 1.0 - check_confidence(confidence)
    yp, mp, valid = _padded(np.asarray(y, float), np.asarray(m, float), gid, n_groups)
    v = np.asarray(weights, dtype=np.float64)
    est, se, c, _ = _cr1_padded(yp, mp, valid)
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
