"""Confidence intervals for a single binomial proportion (Newcombe 1998, methods 3-5).

Vectorised over arrays of counts. Wilson intervals are the default: they stay
inside [0, 1], are not degenerate at 0 or n successes, and their coverage is
close to nominal for small n (Newcombe 1998; Brown, Cai & DasGupta 2001).
Wilson intervals also accept non-integer ``k`` and ``n`` (effective sample
sizes); Clopper-Pearson is evaluated through the beta quantile function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special

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
    p = k / n_safe
    z = special.ndtri(1.0 - alpha / 2.0)
    z2 = z * z
    if method == "wilson":
        center = (k + z2 / 2.0) / (n_safe + z2)
        half = z * np.sqrt(n_safe) / (n_safe + z2) * np.sqrt(p * (1.0 - p) + z2 / (4.0 * n_safe))
        low = np.maximum(center - half, 0.0)
        high = np.minimum(center + half, 1.0)
        # Exact at the boundaries (center - half is 0 only up to rounding).
        low = np.where(k <= 0, 0.0, low)
        high = np.where(k >= n_safe, 1.0, high)
    elif method == "wilson_cc":
        # Newcombe (1998) eq. for method 4.
        denom = 2.0 * (n_safe + z2)
        q = 1.0 - p
        rad_lo = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / n_safe + 4.0 * p * (n_safe * q + 1.0), 0.0))
        rad_hi = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / n_safe + 4.0 * p * (n_safe * q - 1.0), 0.0))
        low = (2.0 * n_safe * p + z2 - 1.0 - z * rad_lo) / denom
        high = (2.0 * n_safe * p + z2 + 1.0 + z * rad_hi) / denom
        low = np.where(k <= 0, 0.0, np.clip(low, 0.0, 1.0))
        high = np.where(k >= n_safe, 1.0, np.clip(high, 0.0, 1.0))
    else:  # clopper_pearson
        with np.errstate(invalid="ignore", divide="ignore"):
            low = special.betaincinv(np.maximum(k, 1e-300), n_safe - k + 1.0, alpha / 2.0)
            high = special.betaincinv(k + 1.0, np.maximum(n_safe - k, 1e-300), 1.0 - alpha / 2.0)
        low = np.where(k <= 0, 0.0, low)
        high = np.where(k >= n_safe, 1.0, high)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    return low, high
