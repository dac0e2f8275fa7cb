"""Binomial bounds of the agreement intervals (evalstats.stats.agreement).

Oracles: scipy.stats.binom tails, one data set at a time (brentq for the equal-tailed mid-p
bounds; for Blaker's combined tails a scan of the two-sided mid-p value over a fine grid
of p, which knows nothing of the piecewise construction), Clopper-Pearson against
scipy's own binomtest, and the exact binomial coverage by enumeration at high agreement on
few units (where the equal-tailed bounds cannot be below 1 - alpha / 2).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from evalstats.stats import agreement as bd

CASES = [(17, 18), (16, 18), (18, 18), (9, 18), (0, 18), (1, 18), (28, 30), (115, 120), (3, 7)]


def _mid_tail(p, x, n):
    """P(X > x) + P(X = x) / 2 by scipy.stats.binom."""
    return stats.binom.sf(x, n, p) + 0.5 * stats.binom.pmf(x, n, p)


def _blaker_mid_p(p, x, n):
    """Two-sided mid-p value with combined tails at each ``p`` of an array, from the binomial
    pmf: the observed mid tail, doubled unless the other side's extreme outcome alone has
    half its mass above it."""
    upper = _mid_tail(p, x, n)
    lower = 1.0 - upper
    in_lower = lower <= upper
    tail = np.where(in_lower, lower, upper)
    edge = 0.5 * np.where(in_lower, stats.binom.pmf(n, n, p), stats.binom.pmf(0, n, p))
    return np.minimum(1.0, tail * np.where(edge <= tail, 2.0, 1.0))


@pytest.mark.parametrize(("x", "n"), CASES)
def test_mid_p_bounds_equal_brentq_on_binomial_tails(x, n):
    lo, hi = bd.proportion_bounds(x, n, 0.05, "mid_p")
    want_lo = 0.0 if x == 0 else optimize.brentq(lambda p: _mid_tail(p, x, n) - 0.025, 0, 1)
    want_hi = 1.0 if x == n else optimize.brentq(lambda p: _mid_tail(p, x, n) - 0.975, 0, 1)
    assert float(lo) == pytest.approx(want_lo, abs=1e-9)
    assert float(hi) == pytest.approx(want_hi, abs=1e-9)


@pytest.mark.parametrize(("x", "n"), CASES)
def test_blaker_bounds_are_the_ends_of_the_accepted_set(x, n):
    grid = np.linspace(0.0, 1.0, 200_001)
    accepted = grid[_blaker_mid_p(grid, x, n) >= 0.05]
    lo, hi = bd.proportion_bounds(x, n, 0.05, "mid_p_blaker")
    assert float(lo) == pytest.approx(accepted.min(), abs=1e-5)
    assert float(hi) == pytest.approx(accepted.max(), abs=1e-5)
    # and the accepted set is an interval (no holes at this resolution)
    assert len(accepted) == np.sum((grid >= accepted.min()) & (grid <= accepted.max()))
    ps = grid[1000::2000]  # off p = 0.5, where the two tails tie exactly
    got = bd.proportion_p(ps, x, n, "mid_p_blaker")
    np.testing.assert_allclose(got, _blaker_mid_p(ps, x, n), atol=1e-12)


def test_bounds_are_vectorised_and_take_fractional_counts():
    x = np.array([17.0, 16.0, 28.0, 17.4])
    n = np.array([18.0, 18.0, 30.0, 18.3])
    for bound in bd.BOUNDS:
        lo, hi = bd.proportion_bounds(x, n, 0.05, bound)
        for i in range(3):  # the integer ones equal their scalar call
            s_lo, s_hi = bd.proportion_bounds(x[i], n[i], 0.05, bound)
            assert (lo[i], hi[i]) == pytest.approx((float(s_lo), float(s_hi)), abs=1e-12)
        # 17.4 of 18.3 lies between 17 of 18 and 18 of 18 in share, so do its bounds
        assert lo[0] < lo[3] and np.all((lo >= 0) & (lo < hi) & (hi <= 1))


def test_clopper_pearson_equals_scipy_binomtest():
    for x, n in CASES:
        ci = stats.binomtest(x, n).proportion_ci(0.95, method="exact")
        lo, hi = bd.proportion_bounds(x, n, 0.05, "clopper_pearson")
        assert (float(lo), float(hi)) == pytest.approx((ci.low, ci.high), abs=1e-10)


def _coverage(bound, n, p):
    """Exact coverage at each truth ``p`` (an array): the bounds of every outcome once."""
    x = np.arange(n + 1, dtype=float)
    lo, hi = bd.proportion_bounds(x, np.full(n + 1, float(n)), 0.05, bound)
    p = np.atleast_1d(p)[:, None]
    return np.sum(stats.binom.pmf(x, n, p) * ((lo <= p) & (p <= hi)), axis=1)


@pytest.mark.parametrize("n", [18, 30])
def test_blaker_spends_alpha_where_the_other_side_cannot_reject(n):
    """Agreement 0.92-0.97 on 18 or 30 units: no sample excludes p from above, so the
    equal-tailed bounds cover at least 0.975 on average over p (Clopper-Pearson at every p);
    the combined tails near 0.95 (exact enumeration; measured 0.961 and 0.955)."""
    ps = np.linspace(0.92, 0.97, 51)
    cover = {b: _coverage(b, n, ps) for b in bd.BOUNDS[:3]}
    assert cover["clopper_pearson"].min() >= 0.975
    assert cover["mid_p"].mean() >= 0.975
    assert 0.94 <= cover["mid_p_blaker"].mean() <= 0.97


def test_blaker_is_the_equal_tailed_mid_p_where_both_sides_can_reject():
    lo, hi = bd.proportion_bounds(60, 120, 0.05, "mid_p_blaker")
    want = bd.proportion_bounds(60, 120, 0.05, "mid_p")
    assert (float(lo), float(hi)) == pytest.approx((float(want[0]), float(want[1])), abs=1e-12)
