"""The restricted wild cluster bootstrap (Webb weights) for a ratio estimator, and the
delete-one-cluster jackknife.

The wild bootstrap test (WCR11, Roodman et al. 2019) and its interval by test inversion
are checked against ``wildboottest``; they are written here because that package computes
one test of one regression at a time, where these run every group and null at once.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._validate import check_confidence

__all__ = ["cluster_jackknife", "wild_cluster_interval", "wild_cluster_p", "wild_weights"]

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
