"""The test an analysis plan declares (:mod:`evalstats.plan`), as one row of the tidy shape.

Two- or one-sided, or with a margin an equivalence (TOST) or non-inferiority test, on an
estimate with a cluster-robust SE and df (:func:`declared_test`) or on the draws of a
generalized pivot (:func:`declared_test_draws`); each is reported with the interval it
inverts, so the decision and the interval agree by construction.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from evalstats._tidy import ResultFrame, tidy_frame
from evalstats._validate import check_probability
from evalstats.stats._tost import (
    Better,
    _check,
    _interval,
    _p_above,
    _p_below,
    noninferiority,
    tost,
)

__all__ = ["declared_test", "declared_test_draws", "hull_declared_test"]

#: How the row's interval and p-value are made (the ``method`` column).
T_METHOD, Z_METHOD = "t", "z"
PIVOTAL_METHOD = "generalized_pivotal"
HULL_METHOD = "hull"

_ROW_COLUMNS = [
    "statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "method", "confidence",
    "test",
]  # fmt: skip
_DIAGNOSTICS = ["null", "lower_margin", "upper_margin", "alpha", "reject"]


def _result(
    statistic: str,
    estimate: float,
    se: float,
    df: float,
    p: float,
    ci: tuple[float, float],
    confidence: float,
    method: str,
    *,
    test: str,
    null: float,
    lower: float,
    upper: float,
    alpha: float,
) -> ResultFrame:
    """One tidy row (``test`` beside it: the hypothesis the p-value is of); the margins, the
    level and the decision ``reject = p_value < alpha`` on ``.diagnostics``."""
    # One row of scalars per call (the report makes one; the tests thousands): built from
    # lists, the cheapest DataFrame constructor.
    rows = pd.DataFrame(
        [[statistic, float(estimate), float(se), float(ci[0]), float(ci[1]), float(p),
          float(df), method, float(confidence), test]],
        columns=_ROW_COLUMNS,
    )  # fmt: skip
    diagnostics = pd.DataFrame(
        [[float(null), float(lower), float(upper), float(alpha), bool(p < alpha)]],
        columns=_DIAGNOSTICS,
    )
    return tidy_frame(rows, extra=["test"], diagnostics=diagnostics)


def declared_test(
    estimate: float,
    se: float,
    df: float,
    *,
    null: float = 0.0,
    sidedness: Literal["two-sided", "greater", "less"] = "two-sided",
    margin: float | None = None,
    margin_kind: Literal["equivalence", "non-inferiority"] | None = None,
    better: Better = "higher",
    alpha: float = 0.05,
    statistic: str = "estimate",
) -> ResultFrame:
    """The t test a plan declares: two- or one-sided, or with a margin TOST or non-inferiority.

    Every variant is a t test of ``(estimate - bound) / se`` on ``df`` degrees of freedom
    (:func:`~evalstats.stats.equivalence.tost`,
    :func:`~evalstats.stats.equivalence.noninferiority`), reported with the interval it
    inverts, so the decision and the interval agree by construction.

    Parameters
    ----------
    estimate, se, df : float
        On the test's scale (e.g. the net win with its CR2 SE and Bell-McCaffrey df, or a
        log cost ratio); ``df=np.inf`` for a z test.
    null : float
        The value of no difference on that scale.
    sidedness : {"two-sided", "greater", "less"}
        The alternative without a margin: ``theta != null``, ``theta > null``,
        ``theta < null``. With a non-inferiority margin it names the side shown
        (``"greater"``: ``theta > null - margin``; ``"less"``: ``theta < null + margin``);
        ``"two-sided"`` there means the side ``better`` names. Equivalence ignores it (both
        sides are tested).
    margin : float, optional
        Positive, on the test's scale (a cost ratio's margin ``m`` is ``log(1 + m)``).
    margin_kind : {"equivalence", "non-inferiority"}, optional
        Required with ``margin``. Equivalence: ``null - margin < theta < null + margin``.
    better : {"higher", "lower"}
        Which direction is good for WITH; only decides a two-sided non-inferiority.
    alpha : float
        Level of the test (of each one-sided test for TOST); below 0.5 where one-sided.
    statistic : str
        The name in the ``statistic`` column (e.g. ``"net_win"``).

    Returns
    -------
    ResultFrame
        One row: ``statistic``, ``estimate``, ``se``, ``ci_low``, ``ci_high`` (the interval
        whose position is the test, infinite on an untested side: two-sided ``1 - alpha``;
        one-sided and non-inferiority the ``1 - alpha`` bound; equivalence the
        ``1 - 2 alpha`` interval), ``p_value``, ``df``, ``n`` and ``n_tasks`` (NaN: not known
        here), ``method`` (``"t"``, or ``"z"`` for ``df=inf``), ``confidence`` (the
        interval's coverage) and ``test`` (``"two-sided"``, ``"greater"``, ``"less"``,
        ``"equivalence"`` or ``"non-inferiority"``). ``.diagnostics``: ``null``,
        ``lower_margin`` and ``upper_margin`` (the hypotheses' bounds, infinite on a side
        not tested; both at ``null`` for a two-sided test), ``alpha`` and ``reject``
        (``p_value < alpha``, exactly when the interval excludes the null hypothesis).

    Examples
    --------
    >>> from evalstats.stats.equivalence import declared_test
    >>> r = declared_test(0.12, 0.05, 14, sidedness="greater", statistic="net_win")
    >>> print(r.summary(digits=4).to_string())
    statistic
    net_win    0.1200 [0.0319, inf], p = 0.0154
    >>> r.loc[0, "test"], bool(r.diagnostics.loc[0, "reject"])
    ('greater', True)
    >>> r = declared_test(0.02, 0.05, 14, margin=0.1, margin_kind="non-inferiority")
    >>> r.loc[0, "test"], float(r.diagnostics.loc[0, "lower_margin"])
    ('non-inferiority', -0.1)
    >>> r = declared_test(0.02, 0.05, 14, margin=0.1, margin_kind="equivalence")
    >>> r[["p_value", "ci_low", "ci_high", "confidence"]].round(4).iloc[0].tolist()
    [0.066, -0.0681, 0.1081, 0.9]
    """
    test, side, lower, upper = _hypotheses(null, sidedness, margin, margin_kind, better)
    null = float(null)
    method = T_METHOD if np.isfinite(float(df)) else Z_METHOD
    if side == "two-sided":
        # The estimate, SE and df as every test checks them; alpha up to 0.5 and beyond is a
        # valid two-sided level (the one-sided tests need alpha < 0.5).
        estimate, se, df, _ = _check(estimate, se, df, 0.05)
        alpha = check_probability(alpha, "alpha", closed=False)
        p_hi = _p_above(estimate, se, df, null)
        p_lo = _p_below(estimate, se, df, null)
        # 2 min(one-sided p): 2 sf(|t|) when se > 0, and 0 / 1 when the SE is 0.
        p = min(1.0, 2.0 * min(p_hi, p_lo))
        ci = _interval(estimate, se, df, alpha / 2.0)
        return _result(
            statistic, estimate, se, df, p, ci, 1.0 - alpha, method,
            test="two-sided", null=null, lower=null, upper=null, alpha=alpha,
        )  # fmt: skip
    if side == "both":
        r = tost(estimate, se, df, lower=lower, upper=upper, alpha=alpha)
        return _result(
            statistic, r.estimate, r.se, r.df, r.p_value, (r.ci_low, r.ci_high),
            1.0 - 2.0 * r.alpha, method, test="equivalence", null=null,
            lower=r.lower_margin, upper=r.upper_margin, alpha=r.alpha,
        )  # fmt: skip
    up = side == "greater"
    r = noninferiority(
        estimate, se, df, bound=lower if up else upper, better="higher" if up else "lower",
        alpha=alpha,
    )  # fmt: skip
    ci = (r.ci_low, np.inf) if up else (-np.inf, r.ci_high)
    return _result(
        statistic, r.estimate, r.se, r.df, r.p_value, ci, 1.0 - r.alpha, method,
        test=test, null=null, lower=r.lower_margin, upper=r.upper_margin, alpha=r.alpha,
    )  # fmt: skip


def _hypotheses(
    null: float, sidedness: str, margin: float | None, margin_kind: str | None, better: str
) -> tuple[str, str, float, float]:
    """A declared test's arguments, checked, as ``(test, side, lower, upper)``: ``side`` is
    ``"two-sided"`` (no difference from ``null``), ``"both"`` (TOST between ``lower`` and
    ``upper``), ``"greater"`` (``theta > lower``) or ``"less"`` (``theta < upper``); the
    one construction behind :func:`declared_test` and :func:`declared_test_draws`."""
    if sidedness not in ("two-sided", "greater", "less"):
        raise ValueError(f"sidedness must be two-sided, greater or less, got {sidedness!r}")
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'higher' or 'lower', got {better!r}")
    if (margin is None) != (margin_kind is None):
        raise ValueError("margin and margin_kind go together: give both or neither")
    null = float(null)
    if not np.isfinite(null):
        raise ValueError(f"null must be finite, got {null}")
    if margin is None:
        if sidedness == "two-sided":
            return "two-sided", "two-sided", null, null
        if sidedness == "greater":
            return "greater", "greater", null, np.inf
        return "less", "less", -np.inf, null
    margin = float(margin)
    if not (np.isfinite(margin) and margin > 0):
        raise ValueError(f"margin must be finite and > 0, got {margin}")
    if margin_kind == "equivalence":
        return "equivalence", "both", null - margin, null + margin
    if margin_kind != "non-inferiority":
        raise ValueError(
            f"margin_kind must be 'equivalence' or 'non-inferiority', got {margin_kind!r}"
        )
    # Two-sided non-inferiority: the side that is good for WITH.
    side = sidedness if sidedness != "two-sided" else ("greater" if better == "higher" else "less")
    if side == "greater":
        return "non-inferiority", "greater", null - margin, np.inf
    return "non-inferiority", "less", -np.inf, null + margin


def declared_test_draws(
    draws: np.ndarray,
    *,
    null: float = 0.0,
    sidedness: Literal["two-sided", "greater", "less"] = "two-sided",
    margin: float | None = None,
    margin_kind: Literal["equivalence", "non-inferiority"] | None = None,
    better: Better = "higher",
    alpha: float = 0.05,
    statistic: str = "estimate",
) -> ResultFrame:
    """:func:`declared_test` on the draws of a generalized pivot instead of a t statistic.

    For an interval that is not a t interval (the total cost ratio's generalized pivotal
    interval, :func:`evalstats.stats.cost.lognormal_ratio_gpq`), each one-sided test is the
    generalized p-value, e.g. ``mean(draws <= bound)`` for ``H0: theta <= bound``, and the
    interval is the draws' order statistics (:func:`evalstats.stats.cost.gpq_interval`),
    so the decision and the interval agree as for :func:`declared_test`: two-sided
    ``p = min(1, 2 min(one-sided p))`` with the ``1 - alpha`` interval, one-sided and
    non-inferiority tests with a one-sided bound, TOST with the ``1 - 2 alpha`` interval.
    ``estimate`` is the draws' median, ``se`` their standard deviation, ``df`` NaN,
    ``method`` ``"generalized_pivotal"``; the rest as :func:`declared_test` returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.equivalence import declared_test_draws
    >>> draws = np.linspace(-0.30, 0.10, 401)  # a log ratio, mostly below 0
    >>> r = declared_test_draws(draws, margin=np.log(1.1), margin_kind="non-inferiority",
    ...                         better="lower")
    >>> r.loc[0, "test"], r[["p_value", "ci_high"]].round(4).iloc[0].tolist()
    ('non-inferiority', [0.0125, 0.08])
    """
    from evalstats.stats.cost import gpq_interval

    test, side, lower, upper = _hypotheses(null, sidedness, margin, margin_kind, better)
    null = float(null)
    d = np.asarray(draws, dtype=np.float64).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("draws must be a non-empty array of finite values")
    alpha = check_probability(alpha, "alpha", closed=False)
    centre, spread = float(np.median(d)), float(np.std(d))
    p_above = float(np.mean(d <= lower))  # H0: theta <= lower
    p_below = float(np.mean(d >= upper))  # H0: theta >= upper
    if side == "two-sided":
        p = min(1.0, 2.0 * min(p_above, p_below))
        lo, hi = gpq_interval(d, 1.0 - alpha)
        return _result(
            statistic, centre, spread, np.nan, p, (lo, hi), 1.0 - alpha, PIVOTAL_METHOD,
            test=test, null=null, lower=null, upper=null, alpha=alpha,
        )  # fmt: skip
    if not alpha < 0.5:
        raise ValueError(f"alpha must be below 0.5 for a one-sided test, got {alpha}")
    lo2, hi2 = (float(v) for v in gpq_interval(d, 1.0 - 2.0 * alpha))
    if side == "both":
        p, level, ends = max(p_above, p_below), 1.0 - 2.0 * alpha, (lo2, hi2)
    elif side == "greater":
        p, level, ends = p_above, 1.0 - alpha, (lo2, np.inf)
    else:
        p, level, ends = p_below, 1.0 - alpha, (-np.inf, hi2)
    return _result(
        statistic, centre, spread, np.nan, p, ends, level, PIVOTAL_METHOD,
        test=test, null=null, lower=lower, upper=upper, alpha=alpha,
    )  # fmt: skip


def hull_declared_test(a: ResultFrame, b: ResultFrame) -> ResultFrame:
    """The declared test whose interval is the hull of ``a``'s and ``b``'s (the widened total
    cost ratio's): it rejects where both reject, with ``p = max`` of theirs; ``a``'s
    estimate, margins and level, ``method`` ``"hull"``."""
    ra, rb, da = a.iloc[0], b.iloc[0], a.diagnostics.iloc[0]
    p = max(ra["p_value"], rb["p_value"])
    ci = (min(ra["ci_low"], rb["ci_low"]), max(ra["ci_high"], rb["ci_high"]))
    return _result(
        ra["statistic"], ra["estimate"], ra["se"], ra["df"], p, ci, ra["confidence"],
        HULL_METHOD, test=ra["test"], null=da["null"], lower=da["lower_margin"],
        upper=da["upper_margin"], alpha=da["alpha"],
    )  # fmt: skip
