"""The Student t, normal and binomial functions the statistics use, from scipy.special.

``scipy.stats.t.ppf(q, df)`` and friends are the ufuncs of :mod:`scipy.special` (``stdtr``,
``stdtrit``, ``ndtr``, ``ndtri``; the binomial's Boost ufunc) behind a generic wrapper that
checks the arguments; these functions call the same ufuncs with the same checks, so the
values are bit-for-bit scipy.stats' (a test compares them over grids with the edge cases).
Two reasons: importing :mod:`scipy.stats` takes ~0.4 s more than :mod:`scipy.special` (it
is deferred to the modules that need the rest of it), and the wrapper costs ~50 µs a call,
paid thousands of times by the power and coverage computations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "binom_cdf",
    "norm_cdf",
    "norm_isf",
    "norm_ppf",
    "norm_sf",
    "t_cdf",
    "t_isf",
    "t_ppf",
    "t_sf",
]


def _out(value: np.ndarray) -> Any:
    """A Python-style scalar for scalar arguments (as scipy.stats returns), else the array."""
    return value[()] if value.ndim == 0 else value


def _t_quantile(p: Any, df: Any, upper: bool) -> Any:
    p, df = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(df, np.float64))
    valid = df > 0  # scipy.stats.t's argument check (False for NaN)
    # special.stdtrit(df, 0) is +inf: the ends are set as scipy.stats' wrapper sets them.
    return _quantile(special.stdtrit, p, valid, upper, df)


def _quantile(inverse: Any, p: np.ndarray, valid: np.ndarray, upper: bool, *args: Any) -> Any:
    """scipy.stats' ppf/isf wrapper: NaN outside [0, 1] or for bad parameters, the support's
    ends at 0 and 1, and ``value * scale + loc`` inside (which turns -0.0 into 0.0)."""
    inner = valid & (p > 0) & (p < 1)
    out = np.full(p.shape, np.nan)
    q = inverse(*(a[inner] for a in args), p[inner])
    out[inner] = (-q if upper else q) + 0.0
    out[valid & (p == 0)] = np.inf if upper else -np.inf
    out[valid & (p == 1)] = -np.inf if upper else np.inf
    return _out(out)


def t_ppf(q: Any, df: Any) -> Any:
    """``scipy.stats.t.ppf(q, df)``."""
    return _t_quantile(q, df, upper=False)


def t_isf(q: Any, df: Any) -> Any:
    """``scipy.stats.t.isf(q, df)``."""
    return _t_quantile(q, df, upper=True)


def _t_prob(x: Any, df: Any, upper: bool) -> Any:
    x, df = np.broadcast_arrays(np.asarray(x, dtype=np.float64), np.asarray(df, np.float64))
    out = np.where(df > 0, special.stdtr(df, -x if upper else x), np.nan)
    return _out(out)


def t_cdf(x: Any, df: Any) -> Any:
    """``scipy.stats.t.cdf(x, df)``."""
    return _t_prob(x, df, upper=False)


def t_sf(x: Any, df: Any) -> Any:
    """``scipy.stats.t.sf(x, df)``."""
    return _t_prob(x, df, upper=True)


def norm_cdf(x: Any) -> Any:
    """``scipy.stats.norm.cdf(x)``."""
    return _out(np.asarray(special.ndtr(np.asarray(x, dtype=np.float64))))


def norm_sf(x: Any) -> Any:
    """``scipy.stats.norm.sf(x)``."""
    return _out(np.asarray(special.ndtr(-np.asarray(x, dtype=np.float64))))


def norm_ppf(q: Any) -> Any:
    """``scipy.stats.norm.ppf(q)``."""
    q = np.asarray(q, dtype=np.float64)
    return _quantile(special.ndtri, q, np.ones(q.shape, bool), False)


def norm_isf(q: Any) -> Any:
    """``scipy.stats.norm.isf(q)``."""
    q = np.asarray(q, dtype=np.float64)
    return _quantile(special.ndtri, q, np.ones(q.shape, bool), True)


def _boost_binom_cdf() -> Any:
    # scipy.stats.binom.cdf's own ufunc (Boost's binomial CDF) lives in scipy.special's
    # private ufunc module; special.bdtr is Cephes and differs in the last digits. Where a
    # scipy release moves it, scipy.stats (and its import time) is used instead.
    try:
        from scipy.special import _ufuncs
    except ImportError:  # pragma: no cover - present in every supported scipy
        return None
    return getattr(_ufuncs, "_binom_cdf", None)


_BINOM_CDF = _boost_binom_cdf()


def binom_cdf(k: Any, n: Any, p: Any) -> Any:
    """``scipy.stats.binom.cdf(k, n, p)``."""
    if _BINOM_CDF is None:  # pragma: no cover - see _boost_binom_cdf
        from scipy import stats

        return stats.binom.cdf(k, n, p)
    k, n, p = np.broadcast_arrays(
        np.asarray(k, np.float64), np.asarray(n, np.float64), np.asarray(p, np.float64)
    )
    valid = (n >= 0) & (n == np.floor(n)) & (p >= 0) & (p <= 1)  # scipy's argument check
    k = np.floor(k)
    out = np.full(k.shape, np.nan)
    inner = valid & (k >= 0) & (k < n)
    out[inner] = _BINOM_CDF(k[inner], n[inner], p[inner])
    out[valid & (k < 0)] = 0.0
    out[valid & (k >= n)] = 1.0
    return _out(out)
