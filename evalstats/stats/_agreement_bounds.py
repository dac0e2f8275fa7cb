"""Bounds and tests of a binomial proportion with fractional counts, for the agreement intervals.

The task-clustered agreement intervals (:mod:`evalstats.stats._agreement_cluster`) treat the
observed agreement as ``x`` agreeing of ``n`` effective units, both fractional (``n`` is the
number of units over a design effect), so every tail here goes through the regularised
incomplete beta function (``P(X >= x) = I_p(x, n - x + 1)`` for a binomial(n, p)), and every
bound is vectorised over arrays of ``x`` and ``n``.

* ``clopper_pearson``: the exact equal-tailed bounds (``alpha / 2`` in each tail; statsmodels'
  ``proportion_confint``, as is Wilson's);
* ``mid_p``: the equal-tailed mid-p bounds (half the observed point's mass in each tail);
* ``mid_p_blaker``: the mid-p bounds that invert Blaker's (2000) combined-tails test: the
  other tail counts only where it can reach the observed tail's probability;
* ``wilson``: the Wilson score bounds.

Why the third: at high agreement on few units the lower end of a kappa interval cannot
exceed the truth (a sample in which every unit agrees is too likely), so an equal-tailed
interval wastes the ``alpha / 2`` of that side and covers at least ``1 - alpha / 2``.
Blaker's test spends the whole ``alpha`` on the side that can reject, and is still a
level-``alpha`` test at every ``p`` (in its mid-p, continuous approximation).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from evalstats.stats._kappa import _div

__all__ = ["BOUNDS", "mid_upper_tail", "proportion_bounds", "proportion_p"]

BOUNDS = ("clopper_pearson", "mid_p", "mid_p_blaker", "wilson")
_ITERS = 50  # bisection steps: 2^-50 is below any use of a bound


def mid_upper_tail(p, x, n):
    """Mid-p upper tail ``P(X > x) + P(X = x) / 2`` of a binomial(n, p), increasing in ``p``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        at_least = np.where(x > 0, special.betainc(np.maximum(x, 1e-300), n - x + 1, p), 1.0)
        above = np.where(x < n, special.betainc(x + 1, np.maximum(n - x, 1e-300), p), 0.0)
    return 0.5 * (at_least + above)


def _bisect(fn, lo, hi):
    """Elementwise root of an increasing ``fn`` in ``[lo, hi]``."""
    for _ in range(_ITERS):
        mid = (lo + hi) / 2.0
        neg = fn(mid) < 0.0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    return (lo + hi) / 2.0


def _mid_p(x, n, alpha):
    zero, one = np.zeros(x.shape), np.ones(x.shape)
    lo = _bisect(lambda p: mid_upper_tail(p, x, n) - alpha / 2.0, zero, one)
    hi = _bisect(lambda p: mid_upper_tail(p, x, n) - (1.0 - alpha / 2.0), zero, one)
    return lo, hi


def _blaker_p(p, x, n):
    """Two-sided mid-p value at ``p`` with combined tails.

    The observed mid tail, doubled where the other side can reach it and not otherwise. The
    other side reaches no lower than the mid probability of its extreme outcome
    (``p^n / 2``: every unit agrees; ``(1 - p)^n / 2``: none does); where that exceeds the
    observed tail no outcome on the other side is as extreme, so it adds nothing (where it
    can, it adds as much as the observed tail, as in the equal-tailed mid-p test: the
    continuous approximation of Blaker's largest attainable tail below the observed one).
    """
    g = mid_upper_tail(p, x, n)
    f = 1.0 - g
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        edge_hi, edge_lo = 0.5 * p**n, 0.5 * (1.0 - p) ** n
    in_lower = f <= g
    tail = np.where(in_lower, f, g)
    reach = np.where(in_lower, edge_hi, edge_lo) <= tail
    return np.minimum(1.0, tail * np.where(reach, 2.0, 1.0))


def _blaker(x, n, alpha):
    """Invert :func:`_blaker_p`: each end is the one-sided mid-p bound (``alpha`` in its tail)
    where the other side cannot reject there, else the equal-tailed one (``alpha / 2``), or
    the point between them where the other side stops being able to reject."""
    zero, one = np.zeros(x.shape), np.ones(x.shape)

    def g(p):
        return mid_upper_tail(p, x, n)

    with np.errstate(invalid="ignore", over="ignore"):

        def h(p):  # increasing in p; > 0: the upper side cannot reject
            return 0.5 * p**n - (1.0 - g(p))

        u1 = _bisect(lambda p: g(p) - (1.0 - alpha), zero, one)
        u2 = _bisect(lambda p: g(p) - (1.0 - alpha / 2.0), zero, one)
        hi = np.where(h(u1) > 0, u1, np.where(h(u2) <= 0, u2, _bisect(h, u1, u2)))

        def k(p):  # decreasing in p; > 0: the lower side cannot reject
            return 0.5 * (1.0 - p) ** n - g(p)

        l1 = _bisect(lambda p: g(p) - alpha, zero, one)
        l2 = _bisect(lambda p: g(p) - alpha / 2.0, zero, one)
        lo = np.where(k(l1) > 0, l1, np.where(k(l2) <= 0, l2, _bisect(lambda p: -k(p), l2, l1)))
    return lo, hi


def _statsmodels(method: str):
    """statsmodels' ``proportion_confint`` (it takes fractional counts, vectorised)."""

    def bounds(x, n, alpha):
        with np.errstate(invalid="ignore", divide="ignore"):
            return proportion_confint(x, n, alpha=alpha, method=method)

    return bounds


_BOUND_FNS = {
    "clopper_pearson": _statsmodels("beta"),
    "mid_p": _mid_p,
    "mid_p_blaker": _blaker,
    "wilson": _statsmodels("wilson"),
}


def proportion_bounds(x, n, alpha: float, bound: str = "clopper_pearson"):
    """``(low, high)`` bounds of a binomial proportion from ``x`` of ``n`` (fractional
    allowed), one of :data:`BOUNDS`; 0 at ``x = 0`` and 1 at ``x = n`` (except Wilson's)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    lo, hi = _BOUND_FNS[bound](x, n, alpha)
    if bound == "wilson":
        return lo, hi
    return np.where(x <= 0, 0.0, lo), np.where(x >= n, 1.0, hi)


def proportion_p(p0, x, n, bound: str = "clopper_pearson"):
    """Two-sided p-value of ``p = p0`` given ``x`` of ``n``, the test each bound inverts
    (Clopper-Pearson and mid-p: twice the smaller tail; Blaker: combined tails; Wilson: the
    score test)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    if bound == "mid_p_blaker":
        return _blaker_p(p0, x, n)
    if bound == "mid_p":
        up = mid_upper_tail(p0, x, n)
        return np.minimum(1.0, 2.0 * np.minimum(up, 1.0 - up))
    if bound == "wilson":
        with np.errstate(invalid="ignore", divide="ignore"):
            z = _div(x / n - p0, np.sqrt(p0 * (1.0 - p0) / n))
        return 2.0 * stats.norm.sf(np.abs(z))
    with np.errstate(invalid="ignore"):
        upper = np.where(x > 0, stats.beta.cdf(p0, np.maximum(x, 1e-300), n - x + 1), 1.0)
        lower = np.where(x < n, stats.beta.sf(p0, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    return np.minimum(1.0, 2.0 * np.minimum(upper, lower))
