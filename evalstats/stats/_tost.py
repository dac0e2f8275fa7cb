"""Equivalence (TOST) and non-inferiority tests on a cluster-robust estimate, SE and df.

A design-based interval says how large an effect may be; an equivalence test says whether it is
small enough to ignore, and a non-inferiority test whether WITH is at worst a stated margin
behind (or, for cost, at most a stated factor dearer: "WITH uses no more than 1.10x the
tokens" is non-inferiority on the log ratio with bound ``log 1.10``).

Both are t tests on an estimate with a cluster-robust standard error and its degrees of
freedom, so they sit on whatever machinery produced them: the log-scale intervals of
:func:`evalstats.stats.cost.cost_ratios` (the test inverts the very interval reported), or the
net win of
:func:`evalstats.stats.winrates.win_rates`. The two one-sided tests of Schuirmann (1987):

* ``p_lower`` tests ``H0: theta <= lower`` against ``theta > lower``:
  ``1 - F_df((estimate - lower) / se)``;
* ``p_upper`` tests ``H0: theta >= upper`` against ``theta < upper``:
  ``F_df((estimate - upper) / se)``;
* equivalence: ``p_value = max(p_lower, p_upper)``; it is below ``alpha`` exactly when the
  ``1 - 2 alpha`` interval ``estimate +/- t_{1-alpha, df} se`` lies inside ``(lower, upper)``,
  which is why the result carries that interval (not the ``1 - alpha`` one);
* non-inferiority: one of the two tests, with the other margin infinite.

``df=inf`` gives the normal (z) version. A zero SE (no variation between clusters) is a
degenerate but valid case: the estimate is then exact under the model, so a hypothesis is
rejected (p = 0) exactly when the estimate lies strictly beyond its margin.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._display import ResultDisplay
from evalstats._validate import check_probability

__all__ = ["EquivalenceResult", "noninferiority", "tost"]

Better = Literal["higher", "lower"]
Kind = Literal["equivalence", "noninferiority"]


@dataclass(frozen=True)
class EquivalenceResult(ResultDisplay):
    """An equivalence or non-inferiority test (all on the scale the test was run on).

    Attributes
    ----------
    estimate, se, df : float
        The estimate, its standard error and the t degrees of freedom (``inf``: normal).
    lower_margin, upper_margin : float
        The equivalence bounds; a non-inferiority test has one of them infinite.
    p_lower, p_upper : float
        One-sided p-values of ``H0: theta <= lower`` and ``H0: theta >= upper`` (NaN for the
        side a non-inferiority test does not run).
    p_value : float
        The test's p-value: the larger of the two (TOST) or the one that was run.
    ci_low, ci_high : float
        The ``1 - 2 alpha`` interval, whose inclusion in the margins is the test.
    alpha : float
        The test's level.
    kind : str
        ``"equivalence"`` or ``"noninferiority"``.
    conclusion : str
        ``"equivalent"`` / ``"not shown equivalent"`` or ``"non-inferior"`` /
        ``"not shown non-inferior"`` (failing to show equivalence is not evidence of a
        difference).
    """

    estimate: float
    se: float
    df: float
    lower_margin: float
    upper_margin: float
    p_lower: float
    p_upper: float
    p_value: float
    ci_low: float
    ci_high: float
    alpha: float
    kind: str
    conclusion: str

    @property
    def rejected(self) -> bool:
        """True when the test concludes equivalence / non-inferiority at ``alpha``."""
        return bool(self.p_value < self.alpha)

    def to_frame(self) -> pd.DataFrame:
        """One-row tidy DataFrame of the fields."""
        return pd.DataFrame([asdict(self)])


def tost(
    estimate: float,
    se: float,
    df: float,
    *,
    lower: float,
    upper: float,
    alpha: float = 0.05,
) -> EquivalenceResult:
    """Two one-sided t tests of equivalence, ``lower < theta < upper``.

    Parameters
    ----------
    estimate, se : float
        The estimate and its (cluster-robust) standard error, on the test's scale (e.g. the
        log of a cost ratio, or the net win).
    df : float
        Degrees of freedom of the t reference (e.g. Bell-McCaffrey, or C - 1); ``np.inf`` for
        a z test.
    lower, upper : float
        Equivalence margins, ``lower < upper``.
    alpha : float
        Level of each one-sided test (the interval reported is ``1 - 2 alpha``).

    Returns
    -------
    EquivalenceResult

    Examples
    --------
    >>> from evalstats.stats.equivalence import tost
    >>> res = tost(0.02, 0.03, 14, lower=-0.1, upper=0.1)
    >>> res.conclusion, round(res.p_value, 4)
    ('equivalent', 0.0092)
    >>> round(res.ci_low, 4), round(res.ci_high, 4)  # the 90 % interval, inside the margins
    (-0.0328, 0.0728)
    """
    estimate, se, df, alpha = _check(estimate, se, df, alpha)
    lower, upper = float(lower), float(upper)
    if not lower < upper:
        raise ValueError(f"lower must be below upper, got {lower} and {upper}")
    p_lo = _p_above(estimate, se, df, lower)
    p_hi = _p_below(estimate, se, df, upper)
    p = max(p_lo, p_hi)
    lo, hi = _interval(estimate, se, df, alpha)
    conclusion = "equivalent" if p < alpha else "not shown equivalent"
    return EquivalenceResult(
        estimate, se, df, lower, upper, p_lo, p_hi, p, lo, hi, alpha, "equivalence", conclusion
    )


def noninferiority(
    estimate: float,
    se: float,
    df: float,
    *,
    bound: float,
    better: Better = "higher",
    alpha: float = 0.05,
) -> EquivalenceResult:
    """One-sided t test that ``theta`` is not worse than ``bound``.

    Parameters
    ----------
    estimate, se, df : float
        As in :func:`tost`.
    bound : float
        The non-inferiority bound: e.g. ``-0.05`` for "net win at worst 5 points behind", or
        ``log(1.10)`` for "no more than 1.10x the tokens".
    better : {"higher", "lower"}
        Which direction is good. ``"higher"`` tests ``H0: theta <= bound`` (net win, score);
        ``"lower"`` tests ``H0: theta >= bound`` (a cost).
    alpha : float
        Level of the one-sided test.

    Returns
    -------
    EquivalenceResult
        With the untested margin infinite and its p-value NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.equivalence import noninferiority
    >>> # log token ratio -0.05 (SE 0.04, 7 df): does WITH use no more than 1.10x the tokens?
    >>> res = noninferiority(-0.05, 0.04, 7, bound=np.log(1.10), better="lower")
    >>> res.conclusion, round(res.p_value, 4), res.lower_margin
    ('non-inferior', 0.0042, -inf)
    """
    estimate, se, df, alpha = _check(estimate, se, df, alpha)
    bound = float(bound)
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', got {better!r}")
    if not np.isfinite(bound):
        raise ValueError(f"bound must be finite, got {bound}")
    if better == "higher":
        lower, upper = bound, np.inf
        p_lo, p_hi = _p_above(estimate, se, df, bound), np.nan
        p = p_lo
    else:
        lower, upper = -np.inf, bound
        p_lo, p_hi = np.nan, _p_below(estimate, se, df, bound)
        p = p_hi
    lo, hi = _interval(estimate, se, df, alpha)
    conclusion = "non-inferior" if p < alpha else "not shown non-inferior"
    return EquivalenceResult(
        estimate, se, df, lower, upper, p_lo, p_hi, p, lo, hi, alpha, "noninferiority", conclusion
    )


# --------------------------------------------------------------------------------------------
# core
# --------------------------------------------------------------------------------------------


def _check(estimate, se, df, alpha) -> tuple[float, float, float, float]:
    estimate, se, df = float(estimate), float(se), float(df)
    alpha = check_probability(alpha, "alpha", closed=False)
    if not alpha < 0.5:
        raise ValueError(f"alpha must be below 0.5, got {alpha}")
    if not np.isfinite(estimate):
        raise ValueError(f"estimate must be finite, got {estimate}")
    if not (np.isfinite(se) and se >= 0):
        raise ValueError(f"se must be finite and >= 0, got {se}")
    if not df > 0:  # also refuses NaN
        raise ValueError(f"df must be > 0 (np.inf for a z test), got {df}")
    return estimate, se, df, alpha


def _p_above(estimate: float, se: float, df: float, bound: float) -> float:
    """p-value of H0: theta <= bound against theta > bound."""
    if se == 0.0:
        return 0.0 if estimate > bound else 1.0
    return float(stats.t.sf((estimate - bound) / se, df))


def _p_below(estimate: float, se: float, df: float, bound: float) -> float:
    """p-value of H0: theta >= bound against theta < bound."""
    if se == 0.0:
        return 0.0 if estimate < bound else 1.0
    return float(stats.t.cdf((estimate - bound) / se, df))


def _interval(estimate: float, se: float, df: float, alpha: float) -> tuple[float, float]:
    q = float(stats.t.ppf(1.0 - alpha, df))
    return estimate - q * se, estimate + q * se
