"""Confidence intervals for a single binomial proportion (Newcombe 1998, methods 3-5).

Vectorised over arrays of counts. Wilson intervals are the default: they stay
inside [0, 1], are not degenerate at 0 or n successes, and their coverage is
close to nominal for small n (Newcombe 1998; Brown, Cai & DasGupta 2001).
Wilson intervals also accept non-integer ``k`` and ``n`` (effective sample
sizes). Wilson and Clopper-Pearson are statsmodels' ``proportion_confint`` (methods
"wilson" and "beta"); Wilson with continuity correction is written here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalstats._display import ResultDisplay
from evalstats._validate import check_confidence

PROPORTION_METHODS = ("wilson", "wilson_cc", "clopper_pearson")


@dataclass(frozen=True)
class ProportionCI(ResultDisplay):
    """Result of :func:`proportion_ci` (arrays broadcast from ``k`` and ``n``).

    Attributes
    ----------
    estimate : ndarray
        ``k / n`` (NaN where ``n == 0``).
    ci_low, ci_high : ndarray
        Interval ends (NaN where ``n == 0``).
    method : str
    confidence : float
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    method: str
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        """One row per proportion."""
        return pd.DataFrame(
            {
                "estimate": np.ravel(self.estimate),
                "ci_low": np.ravel(self.ci_low),
                "ci_high": np.ravel(self.ci_high),
                "method": self.method,
                "confidence": self.confidence,
            }
        )


def proportion_ci(
    k: ArrayLike,
    n: ArrayLike,
    *,
    method: str = "wilson",
    confidence: float = 0.95,
) -> ProportionCI:
    """Two-sided confidence interval for a binomial proportion ``k / n``.

    Parameters
    ----------
    k, n : array_like
        Successes and trials, broadcast together; ``0 <= k <= n``. ``n == 0``
        gives NaN.
    method : {"wilson", "wilson_cc", "clopper_pearson"}
        Wilson score interval, Wilson with continuity correction, or the
        Clopper-Pearson "exact" interval (Newcombe 1998 methods 3, 4, 5).
    confidence : float
        Confidence level in (0, 1).

    Returns
    -------
    ProportionCI

    Examples
    --------
    >>> from evalstats.stats import _proportion
    >>> ci = _proportion.proportion_ci(81, 263)
    >>> round(float(ci.ci_low), 4), round(float(ci.ci_high), 4)
    (0.2553, 0.3662)
    """
    if method not in PROPORTION_METHODS:
        raise ValueError(f"method must be one of {PROPORTION_METHODS}, got {method!r}")
    confidence = check_confidence(confidence)
    k_arr, n_arr = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    )
    if np.any(np.isnan(k_arr)) or np.any(np.isnan(n_arr)):
        raise ValueError("k and n must not be NaN")
    if np.any(n_arr < 0) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("need 0 <= k <= n")
    low, high = _proportion_core(k_arr, n_arr, method, float(confidence))
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(n_arr > 0, k_arr / np.where(n_arr > 0, n_arr, 1.0), np.nan)
    return ProportionCI(
        estimate=est, ci_low=low, ci_high=high, method=method, confidence=float(confidence)
    )


def _proportion_core(
    k: np.ndarray, n: np.ndarray, method: str, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    alpha = 1.0 - confidence
    empty = n <= 0
    n_safe = np.where(empty, 1.0, n)
    k = np.where(empty, 0.0, k)
    if method == "wilson_cc":
        low, high = _wilson_cc(k, n_safe, alpha)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = proportion_confint(
                k, n_safe, alpha=alpha, method="wilson" if method == "wilson" else "beta"
            )
    # Exact at the boundaries (Wilson's centre - half is 0 only up to rounding).
    low = np.where(k <= 0, 0.0, low)
    high = np.where(k >= n_safe, 1.0, high)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    return low, high


def _wilson_cc(k: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's interval with continuity correction, Newcombe (1998) method 4.

    No library computes it vectorised: statsmodels' ``proportion_confint`` has Wilson without
    the correction only, and scipy's (``binomtest(k, n).proportion_ci(method="wilsoncc")``)
    takes one integer count at a time (the tests use it as the oracle).
    """
    p = k / n
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    z2 = z * z
    denom = 2.0 * (n + z2)
    q = 1.0 - p
    rad_lo = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / n + 4.0 * p * (n * q + 1.0), 0.0))
    rad_hi = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / n + 4.0 * p * (n * q - 1.0), 0.0))
    low = np.clip((2.0 * n * p + z2 - 1.0 - z * rad_lo) / denom, 0.0, 1.0)
    high = np.clip((2.0 * n * p + z2 + 1.0 + z * rad_hi) / denom, 0.0, 1.0)
    return low, high
