"""The exact binomial (sign) test: the one used by the win rates and by the audit's checks."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

__all__ = ["sign_test_p"]


def sign_test_p(wins: ArrayLike, losses: ArrayLike) -> np.ndarray:
    """Exact two-sided binomial (sign) test of wins against losses at 1/2, vectorised.

    With p = 1/2 the null distribution is symmetric, so ``scipy.stats.binomtest``'s
    two-sided p-value (the probability of outcomes no more likely than the observed one) is
    ``min(1, 2 * P(X <= min(wins, losses)))``: one ``scipy.stats.binom.cdf`` call for a whole
    array instead of one ``binomtest`` object per group.

    Parameters
    ----------
    wins, losses : array_like
        Counts of decisive verdicts each way (broadcast together).

    Returns
    -------
    numpy.ndarray
        The p-values; NaN where there is no decisive verdict.

    Examples
    --------
    >>> from scipy.stats import binomtest
    >>> p = sign_test_p([2, 12, 0], [4, 0, 0])
    >>> bool(np.isclose(p[0], binomtest(2, 6).pvalue)), bool(np.isclose(p[1], binomtest(12, 12).pvalue))
    (True, True)
    >>> bool(np.isnan(p[2]))
    True
    """
    w = np.asarray(wins, dtype=np.float64)
    lo = np.asarray(losses, dtype=np.float64)
    n = w + lo
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(w, lo), n, 0.5))
    return np.where(n > 0, p, np.nan)
