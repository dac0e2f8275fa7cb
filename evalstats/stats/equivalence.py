"""Tests with margins: equivalence (TOST), non-inferiority, and the test a plan declares,
each reported with the interval it inverts; applied to the net win and the cost ratios.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._display import ResultDisplay
from evalstats._tidy import ResultFrame, tidy_frame
from evalstats._validate import check_choice, check_range
from evalstats.stats.cost import (
    COST_METRICS,
    GPQ_HULL_METHOD,
    GPQ_METHOD,
    cost_ratios,
    gpq_interval,
    total_ratio_draws,
)

__all__ = [
    "EquivalenceResult", "Hypothesis", "cost_equivalence", "declared_test",
    "declared_test_draws", "hull_declared_test", "noninferiority", "tost",
]  # fmt: skip

Better = Literal["higher", "lower"]
Kind = Literal["equivalence", "noninferiority"]


@dataclass(frozen=True)
class EquivalenceResult(ResultDisplay):
    """An equivalence or non-inferiority test: ``p_lower`` / ``p_upper`` test ``theta <= lower``
    and ``theta >= upper`` (NaN for a side not run); ``ci_low`` / ``ci_high`` at 1 - 2 alpha."""

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
    estimate: float, se: float, df: float, *, lower: float, upper: float, alpha: float = 0.05
) -> EquivalenceResult:
    """Two one-sided t tests of equivalence, ``lower < theta < upper`` (Schuirmann 1987).

    ``p_value = max(p_lower, p_upper)``; ``df=np.inf`` gives the z test.

    >>> res = tost(0.02, 0.03, 14, lower=-0.1, upper=0.1)
    >>> res.conclusion, round(res.p_value, 4), round(res.ci_low, 4), round(res.ci_high, 4)
    ('equivalent', 0.0092, -0.0328, 0.0728)
    """
    checked = _check(estimate, se, df, alpha)
    lower, upper = float(lower), float(upper)
    if not lower < upper:
        raise ValueError(f"lower must be below upper, got {lower} and {upper}")
    return _margin_test(*checked, lower, upper, "equivalence")


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

    ``better="higher"`` tests ``H0: theta <= bound`` (net win), ``"lower"`` ``H0: theta >=
    bound`` (a cost); the untested margin is infinite, its p-value NaN.

    >>> res = noninferiority(-0.05, 0.04, 7, bound=np.log(1.10), better="lower")
    >>> res.conclusion, round(res.p_value, 4), res.lower_margin
    ('non-inferior', 0.0042, -inf)
    """
    checked = _check(estimate, se, df, alpha)
    bound = float(bound)
    check_choice(better, "better", ("higher", "lower"))
    if not np.isfinite(bound):
        raise ValueError(f"bound must be finite, got {bound}")
    lower, upper = (bound, np.inf) if better == "higher" else (-np.inf, bound)
    return _margin_test(*checked, lower, upper, "noninferiority")


def _margin_test(estimate, se, df, alpha, lower, upper, kind, draws=None) -> EquivalenceResult:
    """The one-sided test at each finite margin (t, or on pivot ``draws``); ``p`` the larger."""
    p_lo = _side_p(estimate, se, df, lower, True, draws) if np.isfinite(lower) else np.nan
    p_hi = _side_p(estimate, se, df, upper, False, draws) if np.isfinite(upper) else np.nan
    p = float(np.fmax(p_lo, p_hi))
    lo, hi = _ends(estimate, se, df, alpha, draws)
    word = "equivalent" if kind == "equivalence" else "non-inferior"
    conclusion = word if p < alpha else f"not shown {word}"
    return EquivalenceResult(
        estimate, se, df, lower, upper, p_lo, p_hi, p, lo, hi, alpha, kind, conclusion
    )


def _check(estimate, se, df, alpha) -> tuple[float, float, float, float]:
    df = float(df)
    if not df > 0:  # also refuses NaN
        raise ValueError(f"df must be > 0 (np.inf for a z test), got {df}")
    alpha = check_range(alpha, "alpha", 0, 0.5, closed=(False, False))
    return check_range(estimate, "estimate"), check_range(se, "se", 0), df, alpha


def _side_p(estimate, se, df, bound, above, draws) -> float:
    """p-value of ``H0: theta <= bound`` (``above``) or ``theta >= bound``."""
    if draws is not None:
        return float(np.mean(draws <= bound if above else draws >= bound))
    if se == 0.0:  # a zero SE rejects exactly beyond the bound
        return 0.0 if (estimate > bound if above else estimate < bound) else 1.0
    t = (estimate - bound) / se
    return float(stats.t.sf(t, df) if above else stats.t.cdf(t, df))


def _ends(estimate, se, df, alpha, draws) -> tuple[float, float]:
    """The ``1 - 2 alpha`` interval: t, or the draws' order statistics."""
    if draws is not None:
        lo, hi = gpq_interval(draws, 1.0 - 2.0 * alpha)
        return float(lo), float(hi)
    q = float(stats.t.ppf(1.0 - alpha, df))
    return estimate - q * se, estimate + q * se


#: How the row's interval and p-value are made (the ``method`` column).
T_METHOD, Z_METHOD = "t", "z"
PIVOTAL_METHOD = "generalized_pivotal"
HULL_METHOD = "hull"

_ROW_COLUMNS = [
    "statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "method", "confidence",
    "test",
]  # fmt: skip
_DIAGNOSTICS = ["null", "lower_margin", "upper_margin", "alpha", "reject"]


def _result(statistic, estimate, se, df, p, ci, confidence, method, test, null, lower, upper,
            alpha) -> ResultFrame:  # fmt: skip
    """One tidy row (``test`` beside); margins, level and ``reject`` on ``.diagnostics``."""
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


@dataclass(frozen=True)
class Hypothesis:
    """What :func:`declared_test` tests, checked when made.

    Parameters
    ----------
    null : float
        The value of no difference, on the test's scale.
    sidedness : {"two-sided", "greater", "less"}
        With a non-inferiority margin, ``"two-sided"`` means the side ``better`` names.
    margin, margin_kind : float and {"equivalence", "non-inferiority"}, optional
        Given together, on the test's scale.
    better : {"higher", "lower"}
    confidence : float
        Level of a two-sided test's interval; a one-sided test (and each side of TOST) is at
        ``1 - confidence``, so then ``confidence`` is above 0.5.

    Examples
    --------
    >>> Hypothesis(margin=0.1, margin_kind="equivalence").confidence
    0.95
    """

    null: float = 0.0
    sidedness: Literal["two-sided", "greater", "less"] = "two-sided"
    margin: float | None = None
    margin_kind: Literal["equivalence", "non-inferiority"] | None = None
    better: Better = "higher"
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_choice(self.sidedness, "sidedness", ("two-sided", "greater", "less"))
        check_choice(self.better, "better", ("higher", "lower"))
        if (self.margin is None) != (self.margin_kind is None):
            raise ValueError("margin and margin_kind go together: give both or neither")
        if not np.isfinite(float(self.null)):
            raise ValueError(f"null must be finite, got {self.null}")
        if self.margin is not None:
            if not (np.isfinite(float(self.margin)) and self.margin > 0):
                raise ValueError(f"margin must be finite and > 0, got {self.margin}")
            check_choice(self.margin_kind, "margin_kind", ("equivalence", "non-inferiority"))
        # A two-sided level may be any confidence in (0, 1); one-sided tests need it above 0.5.
        one_sided = self.sidedness != "two-sided" or self.margin is not None
        check_range(self.confidence, "confidence", 0.5 * one_sided, 1, closed=(False, False))


def declared_test(
    estimate: float,
    se: float,
    df: float,
    hypothesis: Hypothesis | None = None,
    *,
    statistic: str = "estimate",
) -> ResultFrame:
    """The t test a plan declares (two- or one-sided, TOST or non-inferiority) with the interval
    it inverts.

    Parameters
    ----------
    estimate, se, df : float
        On the test's scale; ``df=np.inf`` for a z test.
    hypothesis : Hypothesis, optional
        Null, sides, margin and level; ``Hypothesis()`` (two-sided against 0 at 0.95) if omitted.
    statistic : str
        The name in the ``statistic`` column.

    Returns
    -------
    ResultFrame
        One row (``test`` beside; ``method`` ``"t"`` or ``"z"``); ``.diagnostics``: ``null``,
        ``lower_margin``, ``upper_margin``, ``alpha``, ``reject``.

    Examples
    --------
    >>> r = declared_test(0.12, 0.05, 14, Hypothesis(sidedness="greater"), statistic="net_win")
    >>> print(r.summary(digits=4).to_string())
    statistic
    net_win    0.1200 [0.0319, inf], p = 0.0154
    """
    method = T_METHOD if np.isfinite(float(df)) else Z_METHOD
    return _declared(estimate, se, df, None, method, hypothesis or Hypothesis(), statistic)


def declared_test_draws(
    draws: np.ndarray, hypothesis: Hypothesis | None = None, *, statistic: str = "estimate"
) -> ResultFrame:
    """:func:`declared_test` on the draws of a generalized pivot: one-sided p-values such as
    ``mean(draws <= bound)``, the draws' quantiles as interval, their median and SD."""
    d = np.asarray(draws, dtype=np.float64).ravel()
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("draws must be a non-empty array of finite values")
    h = hypothesis or Hypothesis()
    return _declared(float(np.median(d)), float(np.std(d)), np.nan, d, PIVOTAL_METHOD, h, statistic)


def _declared(estimate, se, df, draws, method, h: Hypothesis, statistic) -> ResultFrame:
    # The level as written: 1 - 0.95 is 0.050000000000000044, its 15 digits 0.05.
    null, alpha = float(h.null), float(f"{1.0 - float(h.confidence):.15g}")
    estimate, se, df, _ = _check(estimate, se, np.inf if draws is not None else df, 0.05)
    df = np.nan if draws is not None else df
    if h.margin is None and h.sidedness == "two-sided":
        p_hi = _side_p(estimate, se, df, null, True, draws)
        p_lo = _side_p(estimate, se, df, null, False, draws)
        p = min(1.0, 2.0 * min(p_hi, p_lo))
        ci = _ends(estimate, se, df, alpha / 2.0, draws)
        return _result(statistic, estimate, se, df, p, ci, 1.0 - alpha, method, "two-sided",
                       null, null, null, alpha)  # fmt: skip
    # side: "both" (TOST), "greater" (theta > lower) or "less" (theta < upper)
    side, test, m = h.sidedness, h.margin_kind or h.sidedness, float(h.margin or 0.0)
    if h.margin_kind == "equivalence":
        side = "both"
    elif h.margin_kind and side == "two-sided":
        side = "greater" if h.better == "higher" else "less"
    lower = null - m if side in ("greater", "both") else -np.inf
    upper = null + m if side in ("less", "both") else np.inf
    r = _margin_test(estimate, se, df, alpha, lower, upper, test, draws)
    ci = {"both": (r.ci_low, r.ci_high), "greater": (r.ci_low, np.inf)}
    ci = ci.get(side, (-np.inf, r.ci_high))
    level = 1.0 - (2.0 * alpha if side == "both" else alpha)
    return _result(statistic, estimate, se, df, r.p_value, ci, level, method, test, null,
                   lower, upper, alpha)  # fmt: skip


def hull_declared_test(a: ResultFrame, b: ResultFrame) -> ResultFrame:
    """The declared test whose interval is the hull of ``a``'s and ``b``'s: ``p = max`` of
    theirs; ``a``'s estimate, margins and level."""
    ra, rb, da = a.iloc[0], b.iloc[0], a.diagnostics.iloc[0]
    p = max(ra["p_value"], rb["p_value"])
    ci = (min(ra["ci_low"], rb["ci_low"]), max(ra["ci_high"], rb["ci_high"]))
    return _result(
        ra["statistic"], ra["estimate"], ra["se"], ra["df"], p, ci, ra["confidence"],
        HULL_METHOD, test=ra["test"], null=da["null"], lower=da["lower_margin"],
        upper=da["upper_margin"], alpha=da["alpha"],
    )  # fmt: skip


#: The keyword arguments total_ratio_draws takes of those cost_equivalence passes on.
_DRAW_KWARGS = ("cluster", "include_no_answer")
#: The result's columns on the ratio scale, and the test's field each is exp of.
_ON_RATIO = {"test_centre": "estimate", "lower_margin": "lower_margin",
             "upper_margin": "upper_margin", "ci_low": "ci_low", "ci_high": "ci_high"}  # fmt: skip


def cost_equivalence(
    frame: pd.DataFrame,
    *,
    margin: float = 1.10,
    kind: Kind = "noninferiority",
    metrics: tuple[str, ...] = ("tokens_total_ratio", "tokens_geomean_ratio"),
    interval: Literal["default", "cr2", "analytic"] = "default",
    alpha: float = 0.05,
    **cost_kwargs,
) -> pd.DataFrame:
    """Equivalence or non-inferiority of cost ratios, inverting the interval ``cost_ratios``
    reports (on the log scale).

    Parameters
    ----------
    frame : DataFrame
        Verdict frame, as :func:`~evalstats.stats.cost.cost_ratios` takes it.
    margin : float
        A ratio above 1: ``ratio < margin`` (or ``1 / margin < ratio < margin``).
    kind : {"noninferiority", "equivalence"}
    metrics : tuple of str
        Total and/or geometric-mean ratios.
    interval : {"default", "cr2", "analytic"}
    alpha : float
        Level of each one-sided test.
    **cost_kwargs
        Passed to ``cost_ratios`` (``cluster``, ``include_no_answer``, ``confidence``).

    Returns
    -------
    DataFrame
        One row per metric (ratio scale; the interval at ``1 - 2 alpha``).

    Examples
    --------
    >>> from evalstats.frames import load_frame
    >>> out = cost_equivalence(load_frame("data/sample"), margin=1.10)
    >>> out[["metric", "conclusion"]]
                     metric    conclusion
    0    tokens_total_ratio  non-inferior
    1  tokens_geomean_ratio  non-inferior
    """
    margin = float(margin)
    if not (np.isfinite(margin) and margin > 1.0):
        raise ValueError(f"margin must be a ratio above 1, got {margin}")
    check_choice(kind, "kind", ("equivalence", "noninferiority"))
    check_choice(interval, "interval", ("default", "cr2", "analytic"))
    bad = [m for m in metrics if m not in COST_METRICS or "median" in m]
    if bad:
        raise ValueError(f"metrics must be total or geometric-mean ratios, got {bad}")
    table = cost_ratios(frame, interval=interval, **cost_kwargs).set_index("statistic")
    draw_kwargs = {k: v for k, v in cost_kwargs.items() if k in _DRAW_KWARGS}
    lim = np.log(margin)
    lower = -lim if kind == "equivalence" else -np.inf
    rows = []
    for metric in metrics:
        r = table.loc[metric]
        # The t intervals are symmetric on the log scale: their midpoint is the test's centre.
        with np.errstate(divide="ignore", invalid="ignore"):
            log_est = 0.5 * (np.log(r["ci_low"]) + np.log(r["ci_high"]))
        if r["method"] in (GPQ_METHOD, GPQ_HULL_METHOD):
            d = total_ratio_draws(frame, measure=metric.split("_")[0], **draw_kwargs)
            est, se, _, a = _check(np.median(d), np.std(d), np.inf, alpha)
            res = _margin_test(est, se, np.nan, a, lower, lim, kind, d)
            if r["method"] == GPQ_HULL_METHOD:  # the hull with CR2: both tests must reject
                c2 = cost_ratios(frame, interval="cr2", **cost_kwargs).set_index("statistic")
                c2 = c2.loc[metric]
                t2 = _margin_test(*_check(np.log(c2["estimate"]), c2["se"], c2["df"], alpha),
                                  lower, lim, kind)  # fmt: skip
                p = max(res.p_value, t2.p_value)
                res = replace(
                    res, p_lower=float(np.fmax(res.p_lower, t2.p_lower)),
                    p_upper=float(np.fmax(res.p_upper, t2.p_upper)), p_value=p,
                    ci_low=min(res.ci_low, t2.ci_low), ci_high=max(res.ci_high, t2.ci_high),
                    conclusion=t2.conclusion if p == t2.p_value else res.conclusion,
                )  # fmt: skip
        elif not (np.isfinite(log_est) and np.isfinite(r["se"]) and np.isfinite(r["df"])):
            res = None
        else:
            res = _margin_test(*_check(log_est, r["se"], r["df"], alpha), lower, lim, kind)
        row = {"metric": metric, "estimand": r["estimand"], "estimate": r["estimate"],
               "alpha": alpha, "kind": kind, "method": f"t test on the log ratio; {r['method']}",
               "conclusion": f"no test: {r['method']}" if res is None else res.conclusion}  # fmt: skip
        if res is not None:
            row |= {c: float(np.exp(getattr(res, k))) for c, k in _ON_RATIO.items()}
            row |= {"se_log": res.se, "df": res.df, "p_lower": res.p_lower,
                    "p_upper": res.p_upper, "p_value": res.p_value}  # fmt: skip
        rows.append(row)
    cols = [
        "metric", "estimand", "estimate", "test_centre", "lower_margin", "upper_margin",
        "ci_low", "ci_high", "se_log", "df", "p_lower", "p_upper", "p_value", "alpha", "kind", "conclusion", "method",
    ]  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=cols)
