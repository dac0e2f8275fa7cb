"""design_coverage(statistic="cost")'s fast interval (ends_from_logs) is total_ratio_ends below, which is
cost_ratios' default interval (tests/test_design_coverage_more.py), and its
D'Agostino-Pearson test is scipy's."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

# The fast path's private pieces, held to the public construction they replace.
from evalstats.stats.cost import (  # private: the GPQ interval core at its ends
    _GPQ_DRAWS,
    _SHAPIRO_MAX,
    LOGNORMAL_CHECK_ALPHA,
    _gpq_base,
    gpq_interval,
    pivot_hull_ends,
)
from evalstats.stats.design import (
    _pivot_order_stats,  # private: the order-statistics core at its ends
    ends_from_logs,
    lognormal_check_p,
)


def total_ratio_ends(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple:
    """The oracle: ``cost_ratios``' default total-ratio interval (log scale) of many data
    sets at once, from its own pivot_hull_ends (every draw formed and sorted)."""
    ends = pivot_hull_ends(x, y, confidence)
    lo, hi, log_est, se, q = ends.low, ends.high, ends.log_estimate, ends.cr2_se, ends.cr2_q
    switched = np.zeros(log_est.shape, dtype=bool)
    if x.shape[-1] >= 3:
        d = np.log(x) - np.log(y)
        spread = np.ptp(d, axis=-1) > 1e-12 * np.maximum(1.0, np.abs(d).max(axis=-1))
        with np.errstate(invalid="ignore"):
            test = stats.normaltest if d.shape[-1] > _SHAPIRO_MAX else stats.shapiro
            p = test(np.where(spread[..., None], d, 0.0), axis=-1).pvalue
        switched = spread & (p < LOGNORMAL_CHECK_ALPHA) & np.isfinite(q)
    lo = np.where(switched, log_est - q * se, lo)
    hi = np.where(switched, log_est + q * se, hi)
    return lo, hi, log_est, ends.widened | switched


def _data(n_sets, c, seed, outliers=True):
    rng = np.random.default_rng(seed)
    size = rng.normal(7, 1.2, (n_sets, c))
    lx = size - 0.2 + rng.normal(0, 0.5, (n_sets, c))
    ly = size + rng.normal(0, 0.5, (n_sets, c))
    if outliers:
        lx[::3, 0] += np.log(40.0)  # an outlier task: the lognormal check rejects
    return lx, ly


@pytest.mark.parametrize(("c", "n_sets"), [(3, 60), (8, 200), (40, 100), (6000, 12)])
def test_ends_from_logs_is_total_ratio_ends(c, n_sets):
    lx, ly = _data(n_sets, c, seed=c)
    if c == 8:  # a data set whose plain ratio falls outside the pivot's 95 % (the hull)
        lx[1] = np.log([2665.0, 596, 989, 19, 2464, 1690, 812, 4053])
        ly[1] = np.log([5930.0, 404, 1078, 3, 4509, 2067, 833, 5872])
    lx[-1] = ly[-1] + 0.3  # no spread in the log ratios: the pivot has none either
    ref = total_ratio_ends(np.exp(lx), np.exp(ly), 0.95)
    new = ends_from_logs(lx, ly, 0.95)
    for a, b in zip(ref[:3], new[:3], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(new[3], ref[3])
    assert 0 < ref[3].sum() < n_sets  # some evaluations were switched or widened, not all


def test_ends_from_logs_at_another_confidence():
    lx, ly = _data(50, 12, seed=1)
    ref = total_ratio_ends(np.exp(lx), np.exp(ly), 0.80)
    new = ends_from_logs(lx, ly, 0.80)
    for a, b in zip(ref[:3], new[:3], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", [5, 60, 10_000])
def test_pivot_order_stats_are_the_sorted_draws_band_and_full_rows(c):
    # Rows near one another (the band) and a few far off (all the draws), in one call.
    rng = np.random.default_rng(c)
    a = rng.normal(0.5, 0.1, 40) * np.sqrt(c)
    b = np.abs(rng.normal(3.0, 0.05, 40)) * np.sqrt(c)
    a[:3], b[3:5] = a[:3] * 40.0 + 9.0, b[3:5] * 0.1
    t11, t22, t21, z = _gpq_base(c, _GPQ_DRAWS)  # the oracle: the draws from their factors
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    draws = -z * i11 / np.sqrt(c) + a[:, None] * i11**2 / 2 + b[:, None] * i11 * i21 / 2
    work: dict = {}
    ends = _pivot_order_stats(a, b, c, (0.95, 0.80, 0.95), work)
    for (lo, hi), level in zip(ends, (0.95, 0.80, 0.95), strict=True):
        ref_lo, ref_hi = gpq_interval(draws, level)
        scale = np.abs(draws).max(axis=1)
        np.testing.assert_allclose(lo, ref_lo, rtol=0, atol=1e-13 * scale.max())
        np.testing.assert_allclose(hi, ref_hi, rtol=0, atol=1e-13 * scale.max())
    assert 0 < work["band_rows"] < len(a)  # both ways were taken


def test_lognormal_check_above_5000_tasks_is_scipys_normaltest_per_evaluation():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=(5, 6001)), rng.standard_t(4, size=(5, 6001))])
    x[2] = np.exp(x[2] / 3)  # skewed
    x[7] = 1.5  # no spread: no test, p = 1
    spread = np.ptp(x, axis=1) > 0
    ref = np.array(
        [stats.normaltest(row).pvalue if s else 1.0 for row, s in zip(x, spread, strict=True)]
    )
    np.testing.assert_allclose(lognormal_check_p(x, spread), ref, rtol=1e-12, atol=1e-300)
    assert ref[spread].min() < 1e-6 < 0.01 < ref[spread].max()  # both rejections and acceptances


def test_lognormal_check_in_float32_moves_p_by_less_than_2e_5():
    # ends_from_logs runs the check above 5,000 tasks on float32 centred log ratios: the
    # p-values of normal, heavy-tailed and large-mean-small-spread samples stay within 2e-5
    # of float64's (1.3e-5 the largest of 4,000 such evaluations at 10,000 tasks).
    rng = np.random.default_rng(8)
    d = np.concatenate(
        [
            rng.normal(-0.3, 0.1, (30, 6001)),
            -0.3 + 0.1 * rng.standard_t(30, (10, 6001)),
            1e3 + 1e-4 * rng.normal(size=(10, 6001)),
        ]
    )
    spread = np.ones(len(d), dtype=bool)
    ref = stats.normaltest(d, axis=-1).pvalue
    dm = (d - d.mean(axis=-1, keepdims=True)).astype(np.float32)
    p32 = lognormal_check_p(dm, spread)
    np.testing.assert_allclose(p32, ref, rtol=0, atol=2e-5)
    assert np.abs(p32 - ref).max() > 0  # it is float32 arithmetic, not a copy of the float64
    assert ref.min() < 0.05 < ref.max()
