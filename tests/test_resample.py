"""Tests of the cluster bootstrap engine (evalstats.stats.resample)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalstats.stats.resample import (  # private: resampling cores at scales not exposed
    BootstrapResult,
    bootstrap_distribution,
    cluster_bootstrap,
)


def _mean(s: np.ndarray) -> np.ndarray:
    return s[..., 0] / s[..., 1]


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
@pytest.mark.parametrize("kind", ["normal", "binary", "skewed"])
def test_one_row_per_cluster_equals_scipy_bootstrap(method: str, kind: str) -> None:
    # With one observation per cluster the cluster bootstrap is scipy's IID
    # bootstrap, and the engine draws the same index stream for the same seed.
    rng = np.random.default_rng(11)
    n = 37
    x = {
        "normal": rng.normal(size=n),
        "binary": rng.integers(0, 2, n).astype(float),
        "skewed": rng.exponential(size=n) ** 2,
    }[kind]
    seed = int(rng.integers(1_000_000))
    ours = cluster_bootstrap(
        np.column_stack([x, np.ones(n)]), _mean, method=method, n_resamples=3000, rng=seed
    )
    ref = stats.bootstrap(
        (x,), np.mean, method=method, n_resamples=3000, rng=np.random.default_rng(seed)
    )
    np.testing.assert_allclose(ours.ci_low[0], ref.confidence_interval.low, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(
        ours.ci_high[0], ref.confidence_interval.high, rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(ours.se[0], ref.standard_error, rtol=1e-12)
    np.testing.assert_allclose(ours.estimate[0], x.mean(), rtol=1e-14)


def test_clustered_statistic_matches_row_level_bootstrap_by_hand() -> None:
    # Independent oracle for clustering: resample whole clusters of rows with the
    # same index stream and recompute the statistic from the raw rows.
    rng = np.random.default_rng(5)
    n_clusters = 12
    sizes = rng.integers(1, 9, n_clusters)
    rows = [rng.integers(0, 2, s) for s in sizes]
    cs = np.array([[r.sum(), r.size] for r in rows], dtype=float)
    res = cluster_bootstrap(cs, _mean, method="percentile", n_resamples=500, rng=3)
    draw = np.random.default_rng(3).integers(0, n_clusters, (500, n_clusters))
    theta = np.array(
        [np.concatenate([rows[c] for c in idx]).mean() for idx in draw]  # oracle only
    )
    np.testing.assert_allclose(res.ci_low[0], np.quantile(theta, 0.025), rtol=1e-12)
    np.testing.assert_allclose(res.ci_high[0], np.quantile(theta, 0.975), rtol=1e-12)
    np.testing.assert_allclose(res.se[0], theta.std(ddof=1), rtol=1e-10)


def test_bca_acceleration_uses_leave_one_cluster_out() -> None:
    # BCa for clusters differs from BCa over rows: check against scipy's BCa run on
    # cluster-level values when the statistic is a plain mean of cluster totals.
    rng = np.random.default_rng(8)
    totals = rng.gamma(2.0, size=20)
    ours = cluster_bootstrap(totals, lambda s: s[..., 0] / 20, n_resamples=2000, rng=4)
    ref = stats.bootstrap((totals,), np.mean, n_resamples=2000, rng=np.random.default_rng(4))
    np.testing.assert_allclose(
        [ours.ci_low[0], ours.ci_high[0]], ref.confidence_interval, rtol=1e-12
    )


@pytest.mark.parametrize("m", [1, 3, 6])
def test_bootstrap_distribution_sums_equal_direct_gather(m: int) -> None:
    # integer sums exactly (gather and bincount paths), float and negative ones to rounding
    rng = np.random.default_rng(2)
    for cs in (rng.integers(0, 10**6, (30, m)).astype(float), rng.normal(size=(30, m))):
        sums = bootstrap_distribution(cs, lambda s: s, 100, np.random.default_rng(0))
        idx = np.random.default_rng(0).integers(0, 30, (100, 30))
        np.testing.assert_allclose(sums, cs[idx].sum(axis=1), rtol=1e-10, atol=1e-12)


def test_vector_statistic_and_to_frame() -> None:
    rng = np.random.default_rng(3)
    cs = np.column_stack([rng.integers(0, 5, 20), rng.integers(0, 5, 20), np.full(20, 10)])

    def two(s: np.ndarray) -> np.ndarray:
        return np.stack([s[..., 0] / s[..., 2], s[..., 1] / s[..., 2]], axis=-1)

    res = cluster_bootstrap(cs, two, method="percentile", n_resamples=500, rng=0)
    assert isinstance(res, BootstrapResult)
    assert res.estimate.shape == (2,) and res.n_tasks == 20 and res.n_resamples == 500
    assert np.all(res.ci_low <= res.estimate) and np.all(res.estimate <= res.ci_high)
    frame = res.to_frame(["a", "b"])
    assert list(frame.index) == ["a", "b"]
    assert frame.loc["a", "estimate"] == pytest.approx(cs[:, 0].sum() / 200)
    with pytest.raises(ValueError, match="names"):
        res.to_frame(["a"])
    # Separate single-statistic runs agree with the joint run (same draws).
    single = cluster_bootstrap(
        cs, lambda s: s[..., 1] / s[..., 2], method="percentile", n_resamples=500, rng=0
    )
    assert single.ci_low[0] == res.ci_low[1] and single.ci_high[0] == res.ci_high[1]


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
def test_degenerate_distribution_collapses_without_warnings(method: str) -> None:
    cs = np.tile([3.0, 6.0], (10, 1))  # every cluster has rate 1/2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cluster_bootstrap(cs, _mean, method=method, n_resamples=200, rng=0)
    assert res.ci_low[0] == res.ci_high[0] == 0.5
    assert res.se[0] == 0.0


def test_undefined_resamples_are_dropped() -> None:
    # Half the clusters have no rows: some resamples have a zero denominator.
    cs = np.array([[1, 2]] * 2 + [[0, 0]] * 3, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cluster_bootstrap(cs, _mean, method="bca", n_resamples=300, rng=1)
    assert res.ci_low[0] == res.ci_high[0] == 0.5


def test_rng_seed_generator_and_none() -> None:
    cs = np.column_stack([np.arange(10) % 3, np.full(10, 3)])
    a = cluster_bootstrap(cs, _mean, n_resamples=300, rng=5)
    b = cluster_bootstrap(cs, _mean, n_resamples=300, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.ci_low, b.ci_low)
    c = cluster_bootstrap(cs, _mean, n_resamples=300, rng=None)
    assert np.isfinite(c.ci_low).all()


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"method": "student"}, ValueError),
        ({"n_resamples": 0}, ValueError),
        ({"confidence": 1.0}, ValueError),
        ({"rng": "seed"}, TypeError),
    ],
)
def test_validation(kwargs: dict, error: type) -> None:
    cs = np.ones((5, 2))
    with pytest.raises(error):
        cluster_bootstrap(cs, _mean, **kwargs)


def test_bad_cluster_stats() -> None:
    with pytest.raises(ValueError, match="at least 2 clusters"):
        cluster_bootstrap(np.ones((1, 2)), _mean)
    with pytest.raises(ValueError, match="NaN"):
        cluster_bootstrap(np.array([[1.0, np.nan], [1.0, 2.0]]), _mean)
    with pytest.raises(ValueError, match="shape"):
        cluster_bootstrap(np.ones((2, 2, 2)), _mean)


def test_coverage_of_cluster_bca_is_reasonable_with_many_clusters() -> None:
    # Sanity on validity with many clusters (few-cluster calibration is in
    # benchmarks/coverage.py): 60 clusters of 5 correlated Bernoulli rows.
    rng = np.random.default_rng(123)
    n_sims, n_clusters = 200, 60
    p_cluster = rng.beta(2, 3, (n_sims, n_clusters))  # mean 0.4
    wins = rng.binomial(5, p_cluster)
    hits = 0
    for s in range(n_sims):  # a loop over simulated data sets, not resamples
        cs = np.column_stack([wins[s], np.full(n_clusters, 5)])
        res = cluster_bootstrap(cs, _mean, n_resamples=1000, rng=s)
        hits += res.ci_low[0] <= 0.4 <= res.ci_high[0]
    assert 0.88 <= hits / n_sims <= 0.99


def test_to_frame_default_names() -> None:
    res = cluster_bootstrap(np.column_stack([[1, 2, 3], [3, 3, 3]]), _mean, n_resamples=50, rng=0)
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.index) == ["stat0"]
    assert frame["method"].iloc[0] == "bca"


def _reference_interval(theta_b, theta_hat, confidence, method, jack):
    """One distribution at a time with numpy's quantile and the BCa formulas written out
    (Efron & Tibshirani 1993, 14.9-14.15), independent of the module's batched code."""
    from scipy import special

    alpha = (1 - confidence) / 2
    low, high = [], []
    for j in range(theta_b.shape[1]):
        col = theta_b[:, j][~np.isnan(theta_b[:, j])]
        if method == "bca":
            share = ((col < theta_hat[j]).sum() + (col <= theta_hat[j]).sum()) / (2 * col.size)
            share = np.clip(share, 0.5 / col.size, 1 - 0.5 / col.size)
            z0 = special.ndtri(share)
            jk = jack[:, j][~np.isnan(jack[:, j])]
            d = jk.mean() - jk
            a = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5) if (d**2).sum() > 0 else 0.0
            zs = [special.ndtri(alpha), -special.ndtri(alpha)]
            levels = [special.ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in zs]
        else:
            levels = [alpha, 1 - alpha]
        lo, hi = np.quantile(col, levels)
        if method == "basic":
            lo, hi = 2 * theta_hat[j] - hi, 2 * theta_hat[j] - lo
        if col.max() == col.min():
            lo = hi = theta_hat[j]
        low.append(lo)
        high.append(hi)
    return np.array(low), np.array(high)


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
def test_batched_intervals_equal_one_distribution_at_a_time(method: str) -> None:
    from evalstats.stats.resample import interval_from_distribution

    rng = np.random.default_rng(4)
    g, b, q = 7, 301, 3
    theta_b = rng.gamma(2.0, size=(g, b, q))
    theta_b[2, :, 1] = 0.25  # a degenerate distribution
    theta_b[3, rng.random(b) < 0.1, 0] = np.nan  # undefined resamples, dropped
    theta_hat = theta_b[:, :50].mean(axis=1)
    sizes = rng.integers(3, 9, size=g)
    jack = np.full((g, sizes.max(), q), np.nan)  # NaN-padded: unequal numbers of clusters
    for k, c in enumerate(sizes):
        jack[k, :c] = rng.normal(size=(c, q))
    low, high = interval_from_distribution(theta_b, theta_hat, 0.9, method, jack)
    for k in range(g):
        one_lo, one_hi = interval_from_distribution(
            theta_b[k], theta_hat[k], 0.9, method, jack[k, : sizes[k]]
        )
        np.testing.assert_array_equal(low[k], one_lo)
        np.testing.assert_array_equal(high[k], one_hi)
        ref_lo, ref_hi = _reference_interval(
            theta_b[k], theta_hat[k], 0.9, method, jack[k, : sizes[k]]
        )
        np.testing.assert_allclose(one_lo, ref_lo, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(one_hi, ref_hi, rtol=1e-12, atol=1e-15)
    assert low[2, 1] == high[2, 1] == theta_hat[2, 1]
