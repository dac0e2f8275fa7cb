"""Equivalence and non-inferiority of the cost ratios and the net win, one row per metric or
group (the t tests themselves: :mod:`._tost`; the test a plan declares: :mod:`.planned_test`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from evalstats._tidy import wide
from evalstats._validate import check_probability
from evalstats.stats._tost import (
    EquivalenceResult,
    Kind,
    noninferiority,
    tost,
)
from evalstats.stats.cost import (
    COST_METRICS,
    GPQ_HULL_METHOD,
    GPQ_METHOD,
    cost_ratios,
    gpq_interval,
    total_ratio_draws,
)
from evalstats.stats.planned_test import declared_test, declared_test_draws, hull_declared_test
from evalstats.stats.winrates import win_rates

__all__ = [
    "EquivalenceResult",
    "cost_equivalence",
    "declared_test",
    "declared_test_draws",
    "hull_declared_test",
    "net_win_equivalence",
    "noninferiority",
    "tost",
]


#: Keyword arguments cost_equivalence passes to cost_ratios, and those total_ratio_draws takes.
_COST_KWARGS = ("cluster", "include_no_answer", "method", "n_resamples", "confidence", "rng")
_DRAW_KWARGS = ("cluster", "include_no_answer")


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
    """Equivalence or non-inferiority of cost ratios, on the log scale of ``cost_ratios``.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame, as :func:`evalstats.stats.cost.cost_ratios` takes it.
    margin : float
        A ratio above 1. Non-inferiority: "WITH costs no more than ``margin`` times WITHOUT"
        (``H0: log ratio >= log margin``). Equivalence: ``1 / margin < ratio < margin``.
    kind : {"noninferiority", "equivalence"}
        Which test.
    metrics : tuple of str
        Rows of ``cost_ratios`` to test: total and/or geometric-mean ratios (the median has
        no SE).
    interval : {"default", "cr2", "analytic"}
        The construction of ``cost_ratios`` the test inverts, so that the test and the
        reported interval agree: ``"default"`` (the generalized pivotal interval on the task
        totals for the total ratio, tested by its generalized p-values, e.g.
        ``mean(draws >= log margin)``, and, where it is widened to CR2, by both tests; CR2 +
        Bell-McCaffrey df for the geometric mean), ``"cr2"`` or CR1 with C - 1 df. The t
        tests are centred on the plain log ratio; ``test_centre`` of a pivotal test is the
        median of its draws, and its p-value 0 means no draw (of 8,192) beyond the margin.
    alpha : float
        Level of each one-sided test.
    **cost_kwargs
        Passed to ``cost_ratios`` (``cluster``, ``include_no_answer``, ``method``,
        ``n_resamples``, ``confidence``, ``rng``: those of its bootstrap reach only the
        median rows, which are not tested); the pivot draws of the total ratio's test take
        ``cluster`` and ``include_no_answer``. Any other name is a TypeError naming it.

    Returns
    -------
    DataFrame
        One row per metric: ``metric, estimand, estimate, test_centre, lower_margin,
        upper_margin, ci_low, ci_high`` (ratio scale; the interval at ``1 - 2 alpha``),
        ``se_log, df, p_lower, p_upper, p_value, alpha, kind, conclusion, method``.

    Examples
    --------
    >>> from evalstats.frames import load_frame
    >>> from evalstats.stats.equivalence import cost_equivalence
    >>> frame = load_frame("data/sample")
    >>> out = cost_equivalence(frame, margin=1.10)
    >>> out[["metric", "conclusion"]]
                     metric    conclusion
    0    tokens_total_ratio  non-inferior
    1  tokens_geomean_ratio  non-inferior
    """

    margin = float(margin)
    if not (np.isfinite(margin) and margin > 1.0):
        raise ValueError(f"margin must be a ratio above 1, got {margin}")
    if kind not in ("equivalence", "noninferiority"):
        raise ValueError(f"kind must be 'equivalence' or 'noninferiority', got {kind!r}")
    if interval not in ("default", "cr2", "analytic"):
        raise ValueError(f"interval must be 'default', 'cr2' or 'analytic', got {interval!r}")
    bad = [m for m in metrics if m not in COST_METRICS or "median" in m]
    if bad:
        raise ValueError(f"metrics must be total or geometric-mean ratios, got {bad}")
    unknown = sorted(set(cost_kwargs) - set(_COST_KWARGS))
    if unknown:
        raise TypeError(f"cost_equivalence got arguments cost_ratios does not take: {unknown}")
    table = cost_ratios(frame, interval=interval, **cost_kwargs).set_index("statistic")
    # The pivot draws take only the arguments that define the pairs (no bootstrap there).
    draw_kwargs = {k: v for k, v in cost_kwargs.items() if k in _DRAW_KWARGS}
    rows = []
    for metric in metrics:
        r = table.loc[metric]
        # Every t interval of cost_ratios is symmetric on the log scale: its midpoint is the
        # centre the test must use for the test and the interval to agree.
        with np.errstate(divide="ignore", invalid="ignore"):
            log_est = 0.5 * (np.log(r["ci_low"]) + np.log(r["ci_high"]))
        if r["method"] in (GPQ_METHOD, GPQ_HULL_METHOD):
            # The total ratio's generalized pivotal interval is no t interval: the test uses
            # its draws (generalized p-values), so it still inverts the interval reported.
            draws = total_ratio_draws(frame, measure=metric.split("_")[0], **draw_kwargs)
            res = _gpq_test(draws, np.log(margin), kind, alpha)
            if r["method"] == GPQ_HULL_METHOD:  # the hull with CR2: both tests must reject
                c2 = cost_ratios(frame, interval="cr2", **cost_kwargs).set_index("statistic")
                c2 = c2.loc[metric]
                args = (np.log(c2["estimate"]), c2["se"], c2["df"])
                lim = np.log(margin)
                if kind == "equivalence":
                    t2 = tost(*args, lower=-lim, upper=lim, alpha=alpha)
                else:
                    t2 = noninferiority(*args, bound=lim, better="lower", alpha=alpha)
                res = _hull_test(res, t2)
        elif not (np.isfinite(log_est) and np.isfinite(r["se"]) and np.isfinite(r["df"])):
            res = None
        elif kind == "equivalence":
            lim = np.log(margin)
            res = tost(log_est, r["se"], r["df"], lower=-lim, upper=lim, alpha=alpha)
        else:
            lim = np.log(margin)
            res = noninferiority(log_est, r["se"], r["df"], bound=lim, better="lower", alpha=alpha)
        row = {"metric": metric, "estimand": r["estimand"], "estimate": r["estimate"]}
        if res is None:
            row |= {"conclusion": f"no test: {r['method']}", "kind": kind, "alpha": alpha}
        else:
            row |= {
                "test_centre": float(np.exp(res.estimate)),
                "lower_margin": float(np.exp(res.lower_margin)),
                "upper_margin": float(np.exp(res.upper_margin)),
                "ci_low": float(np.exp(res.ci_low)),
                "ci_high": float(np.exp(res.ci_high)),
                "se_log": res.se,
                "df": res.df,
                "p_lower": res.p_lower,
                "p_upper": res.p_upper,
                "p_value": res.p_value,
                "alpha": alpha,
                "kind": kind,
                "conclusion": res.conclusion,
            }
        row["method"] = f"t test on the log ratio; {r['method']}"
        rows.append(row)
    cols = [
        "metric", "estimand", "estimate", "test_centre", "lower_margin", "upper_margin",
        "ci_low", "ci_high", "se_log", "df", "p_lower", "p_upper", "p_value", "alpha", "kind", "conclusion", "method",
    ]  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=cols)


def _gpq_test(draws: np.ndarray, lim: float, kind: str, alpha: float) -> EquivalenceResult:
    """TOST / non-inferiority (cost: lower is better) on draws of a generalized pivot."""
    alpha = check_probability(alpha, "alpha", closed=False)
    if not alpha < 0.5:
        raise ValueError(f"alpha must be below 0.5, got {alpha}")
    p_lo = float(np.mean(draws <= -lim)) if kind == "equivalence" else np.nan
    p_hi = float(np.mean(draws >= lim))
    p = max(p_lo, p_hi) if kind == "equivalence" else p_hi
    lo, hi = gpq_interval(draws, 1.0 - 2.0 * alpha)
    lower = -lim if kind == "equivalence" else -np.inf
    if kind == "equivalence":
        conclusion = "equivalent" if p < alpha else "not shown equivalent"
    else:
        conclusion = "non-inferior" if p < alpha else "not shown non-inferior"
    return EquivalenceResult(
        float(np.median(draws)), float(np.std(draws)), np.nan, lower, lim, p_lo, p_hi, p,
        float(lo), float(hi), alpha, kind, conclusion,
    )  # fmt: skip


def _hull_test(a: EquivalenceResult, b: EquivalenceResult) -> EquivalenceResult:
    """The test whose interval is the hull of two: it rejects where both reject."""
    p_lo, p_hi = np.fmax(a.p_lower, b.p_lower), np.fmax(a.p_upper, b.p_upper)
    p = max(a.p_value, b.p_value)
    word = "equivalent" if a.kind == "equivalence" else "non-inferior"
    return EquivalenceResult(
        a.estimate, a.se, a.df, a.lower_margin, a.upper_margin, float(p_lo), float(p_hi), p,
        min(a.ci_low, b.ci_low), max(a.ci_high, b.ci_high), a.alpha, a.kind,
        word if p < a.alpha else f"not shown {word}",
    )  # fmt: skip


def net_win_equivalence(
    frame: pd.DataFrame,
    *,
    margin: float = 0.10,
    kind: Kind = "equivalence",
    alpha: float = 0.05,
    **win_rate_kwargs,
) -> pd.DataFrame:
    """Equivalence or non-inferiority of the net win, per group of ``win_rates``.

    The test uses ``win_rates``' ``net_win`` and ``net_win_se`` and its degrees of freedom:
    the ``net_win_df`` or ``df`` column when ``win_rates`` provides one, else
    ``n_clusters - 1`` (the df of its CR1 t test); column ``method`` says which. It is a t
    test, so it inverts ``win_rates``' t interval (``method="cluster_t"``, or a CR2 t
    method where there is one), not a Wilson-type interval.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame, as :func:`evalstats.stats.winrates.win_rates` takes it.
    margin : float
        In net-win points (0 to 2). Equivalence: ``-margin < net win < margin``.
        Non-inferiority: ``net win > -margin`` (WITH at worst ``margin`` behind).
    kind : {"equivalence", "noninferiority"}
        Which test.
    alpha : float
        Level of each one-sided test.
    **win_rate_kwargs
        Passed to ``win_rates`` (``by``, ``cluster``, ``no_answer_as``, ...).

    Returns
    -------
    DataFrame
        One row per ``win_rates`` group: the ``by`` columns, ``n, n_clusters, net_win,
        net_win_se, df, lower_margin, upper_margin, ci_low, ci_high`` (at ``1 - 2 alpha``),
        ``p_lower, p_upper, p_value, alpha, kind, conclusion, method``.

    Examples
    --------
    >>> from evalstats.frames import load_frame
    >>> from evalstats.stats.equivalence import net_win_equivalence
    >>> frame = load_frame("data/sample")
    >>> out = net_win_equivalence(frame, margin=0.1, kind="noninferiority", by="rubric")
    >>> out[["rubric", "conclusion"]]
             rubric    conclusion
    0    blind-pair  non-inferior
    1  with-without  non-inferior
    """

    margin = float(margin)
    if not (np.isfinite(margin) and 0.0 < margin <= 2.0):
        raise ValueError(f"margin must be in (0, 2], got {margin}")
    if kind not in ("equivalence", "noninferiority"):
        raise ValueError(f"kind must be 'equivalence' or 'noninferiority', got {kind!r}")
    table = wide(win_rates(frame, **win_rate_kwargs))
    by_cols = list(table.columns[: list(table.columns).index("n")])
    if "net_win_df" in table.columns:
        df = table["net_win_df"].to_numpy(dtype=float)
        df_label = "df from win_rates (net_win_df)"
    elif "df" in table.columns:
        df = table["df"].to_numpy(dtype=float)
        df_label = "df from win_rates (df)"
    else:
        df = table["n_clusters"].to_numpy(dtype=float) - 1.0
        df_label = "C - 1 df"
    rows = []
    for i in range(len(table)):
        est = float(table["net_win"].iloc[i])
        se = float(table["net_win_se"].iloc[i])
        row = {c: table[c].iloc[i] for c in by_cols}
        row |= {
            "n": int(table["n"].iloc[i]),
            "n_clusters": int(table["n_clusters"].iloc[i]),
            "net_win": est,
            "net_win_se": se,
            "df": df[i],
        }
        if not (np.isfinite(est) and np.isfinite(se) and df[i] > 0):
            row |= {"alpha": alpha, "kind": kind, "conclusion": "no test: no clustered SE"}
        else:
            if kind == "equivalence":
                res = tost(est, se, df[i], lower=-margin, upper=margin, alpha=alpha)
            else:
                res = noninferiority(est, se, df[i], bound=-margin, better="higher", alpha=alpha)
            row |= {
                k: getattr(res, k)
                for k in (
                    "lower_margin", "upper_margin", "ci_low", "ci_high", "p_lower",
                    "p_upper", "p_value", "alpha", "kind", "conclusion",
                )
            }  # fmt: skip
        row["method"] = f"t test on net win, win_rates SE ({table['method'].iloc[i]}), {df_label}"
        rows.append(row)
    cols = [
        *by_cols, "n", "n_clusters", "net_win", "net_win_se", "df", "lower_margin",
        "upper_margin", "ci_low", "ci_high", "p_lower", "p_upper", "p_value", "alpha", "kind",
        "conclusion", "method",
    ]  # fmt: skip
    return pd.DataFrame(rows).reindex(columns=cols)
