"""The test an analysis plan declares (issue 11), computed on the headline's (or
consensus', or the cost table's) primary row: one row, :data:`PRIMARY_TEST_COLUMNS`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._tidy import wide
from ._eval_common import (
    _attempt,
    _child_rng,
    _common,
    _plan,
)
from ._eval_report import _RATE_STATISTICS, _TEST_TABLES
from ._kinds import Context, Unavailable

# The value of no difference of each statistic that has one (score = (1 + net win) / 2). A
# single win, tie or loss rate has none: WITH and WITHOUT are compared only through two of
# them, so the plan's test of such a rate is refused with that reason.
_NULLS = {"net_win": 0.0, "score": 0.5}
_STAT_WORDS = {
    "win_rate": "win rate",
    "tie_rate": "tie rate",
    "loss_rate": "loss rate",
    "net_win": "net win",
    "score": "score",
}
_COST_WORDS = {
    "tokens_total_ratio": "total tokens",
    "tokens_geomean_ratio": "tokens per pair",
    "tokens_median_ratio": "tokens per pair",
    "wall_total_ratio": "total wall-clock time",
    "wall_geomean_ratio": "wall-clock time per pair",
    "wall_median_ratio": "wall-clock time per pair",
}
_SE_WORDS = {
    "cr2": "CR2 SE (Bell & McCaffrey 2002), Bell-McCaffrey df",
    "iid": "IID SE over verdicts (not clustered), normal reference",
    "cr1": "CR1 SE, C - 1 df",
}
PRIMARY_TEST_COLUMNS = (
    "rubric", "judge", "statistic", "source", "n", "n_clusters", "estimate", "test_centre",
    "se", "df", "null", "test", "alpha", "margin", "margin_kind", "lower_margin",
    "upper_margin", "p_value", "ci_low", "ci_high", "ci_level", "decision", "conclusion",
    "method", "ci_note",
)  # fmt: skip


def _primary_row(ctx: Context, plan: Any) -> tuple[str, pd.Series]:
    """The plan's primary row: (table name, row) of the headline / consensus or cost table."""
    key = plan.primary_key
    if plan.statistic in _RATE_STATISTICS:
        for name in _TEST_TABLES:
            t = ctx.tables.get(name)
            if not isinstance(t, pd.DataFrame):
                continue
            t = wide(t)  # the group's row: every rate's estimate, SE and df side by side
            hit = t.loc[
                (t["rubric"].astype(str) == key["rubric"])
                & (t["judge"].astype(str) == key["judge"])
            ]
            if len(hit):
                return name, hit.iloc[0]
        raise Unavailable(
            f"the plan's primary ({key['judge']} on the {key['rubric']} rubric) is not among "
            "these results: its judge or rubric is not in the data selected"
        )
    cost = ctx.tables.get("cost")
    if cost is None:
        # Computed before the cost section (the page shows the declared test first): the
        # total and geometric-mean rows do not depend on the generator (pivotal draws from
        # a fixed seed; CR2), so these rows are the cost table's; a child stream keeps the
        # page's generator untouched.
        from ..stats.cost import cost_ratios

        cost = _attempt(lambda: cost_ratios(ctx.frame, rng=_child_rng(ctx.seed, 4), **_common(ctx)))
    if not isinstance(cost, pd.DataFrame) or plan.statistic not in set(cost["statistic"]):
        raise Unavailable(
            f"the plan's primary {plan.statistic} is a cost ratio, and the cost table is not "
            "available here (see the cost section)"
        )
    return "cost", cost.loc[cost["statistic"] == plan.statistic].iloc[0]


def _conclusion(stat: str, test: str, lo: float, hi: float, margin: float | None) -> str:
    """What rejecting the declared null means, in words, e.g. "WITH is non-inferior to
    WITHOUT within 0.1 (net win > -0.1)"."""
    if stat in _COST_WORDS:
        what = _COST_WORDS[stat]
        label = f"{stat} (WITH / WITHOUT)"
        phrases = {
            "two-sided": f"WITH and WITHOUT differ in {what} ({label} != 1)",
            "greater": f"WITH uses more {what} than WITHOUT ({label} > 1)",
            "less": f"WITH uses less {what} than WITHOUT ({label} < 1)",
            "equivalence": f"WITH's {what} is equivalent to WITHOUT's within a factor "
            f"{hi:.4g} ({lo:.4g} < {label} < {hi:.4g})",
        }
        if test == "non-inferiority":
            return (
                f"WITH uses no more than {hi:.4g}x the {what} of WITHOUT ({label} < {hi:.4g})"
                if np.isfinite(hi)
                else f"WITH uses at least {lo:.4g}x the {what} of WITHOUT ({label} > {lo:.4g})"
            )
        return phrases[test]
    word = _STAT_WORDS[stat]
    null = _NULLS[stat]
    if test == "equivalence":
        return f"WITH is equivalent to WITHOUT within {margin:g} ({lo:g} < {word} < {hi:g})"
    if test == "non-inferiority":
        return (
            f"WITH is non-inferior to WITHOUT within {margin:g} ({word} > {lo:g})"
            if np.isfinite(lo)
            else f"WITH is at most {margin:g} better than WITHOUT ({word} < {hi:g})"
        )
    return {
        "two-sided": f"WITH and WITHOUT differ ({word} != {null:g})",
        "greater": f"WITH is better than WITHOUT ({word} > {null:g})",
        "less": f"WITH is worse than WITHOUT ({word} < {null:g})",
    }[test]


def _primary_test(ctx: Context) -> dict[str, Any]:
    """The test the plan declares, computed: one row (see :data:`PRIMARY_TEST_COLUMNS`).

    A t test (:func:`evalstats.stats.equivalence.declared_test`) on the primary row's
    estimate, cluster-robust SE and df: the headline's (or consensus') CR2 SE and
    Bell-McCaffrey df of the rate, or the cost table's log-scale SE and df (centred where
    that table's interval is, as :func:`~evalstats.stats.equivalence.cost_equivalence`
    does; a cost margin ``m`` is the ratio ``1 + m``). Draws nothing from the generator.
    """
    from ..stats.cost import GPQ_HULL_METHOD, GPQ_METHOD, cost_ratios, total_ratio_draws
    from ..stats.equivalence import declared_test, declared_test_draws, hull_declared_test

    plan = _plan(ctx)
    if plan is None:
        raise Unavailable(
            "no analysis plan declared (plan.toml or plan.json in the data directory): every "
            "test of the report is exploratory"
        )
    source, row = _primary_row(ctx, plan)
    stat = plan.statistic
    alpha = plan.alpha
    key = plan.primary_key
    out: dict[str, Any] = {
        "rubric": key["rubric"],
        "judge": key["judge"],
        "statistic": stat,
        "source": source,
        "n": int(row["n"]) if "n" in row else int(row["n_pairs"]),
        "n_clusters": int(row["n_clusters"] if "n_clusters" in row else row["n_tasks"]),
        "alpha": alpha,
        "margin": plan.margin,
        "margin_kind": plan.margin_kind,
    }
    notes = [str(row["ci_note"])] if "ci_note" in row and str(row.get("ci_note") or "") else []
    if source == "cost":
        out["estimate"] = float(row["estimate"])
        with np.errstate(divide="ignore", invalid="ignore"):
            # Every t interval of cost_ratios is symmetric on the log scale: its midpoint is
            # where the test must be centred to agree with the interval reported.
            est = 0.5 * (np.log(float(row["ci_low"])) + np.log(float(row["ci_high"])))
        se, df, null, better = float(row["se"]), float(row["df"]), 0.0, "lower"
        margin = None if plan.margin is None else float(np.log1p(plan.margin))
        base = f"t test on the log ratio, {row['method']}"
        usable = "median" not in stat
        refusal = "the median ratio has no standard error to test with"
    else:
        est = float(row[stat])
        out["estimate"] = est
        # The rates' (working-independence) df, for every rate and the net win alike, as
        # since the declared test was introduced (the published numbers rest on it).
        se, df, better = float(row[f"{stat}_se"]), float(row["win_rate_df"]), "higher"
        method = str(row["method"])
        kind = "cr2" if method.startswith("cr2") else ("iid" if method.startswith("iid") else "cr1")
        base = f"t test on the {_SE_WORDS[kind]} ({source} row, {method})"
        null = _NULLS.get(stat, np.nan)
        margin = plan.margin
        usable = stat in _NULLS
        refusal = (
            f"a {_STAT_WORDS[stat]} alone has no value of no difference between WITH and "
            "WITHOUT (declare net_win or score to test)"
        )
    draws = None
    if source == "cost" and usable and str(row["method"]).startswith((GPQ_METHOD, GPQ_HULL_METHOD)):
        # The total ratio's default interval is the generalized pivotal one, not a t
        # interval: test on its draws (the same fixed-seed draws the interval came from).
        draws = total_ratio_draws(ctx.frame, measure=stat.split("_")[0])
        usable = draws is not None
        refusal = "the pivotal draws of this ratio are not available here"
        base = f"generalized pivotal test on the log ratio, {row['method']}"
    if draws is None and usable and not (np.isfinite(est) and np.isfinite(se) and df > 0):
        usable, refusal = False, "no cluster-robust SE and df here (fewer than two tasks?)"
    if not usable:
        out |= {"test_centre": np.nan, "se": se, "df": df, "null": null, "test": "none"}
        out |= {"p_value": np.nan, "decision": "no test", "conclusion": f"no test: {refusal}"}
        out |= {"method": base, "ci_note": "; ".join(notes)}
        return {"primary_test": pd.DataFrame([out]).reindex(columns=list(PRIMARY_TEST_COLUMNS))}
    how = dict(
        null=null,
        sidedness=plan.sidedness,
        margin=margin,
        margin_kind=plan.margin_kind,
        better=better,
        alpha=alpha,
    )
    if draws is None:
        res = declared_test(est, se, df, **how)
    else:
        res = declared_test_draws(draws, **how)
        if str(row["method"]).startswith(GPQ_HULL_METHOD):
            # Widened to the CR2 interval: the test of the hull rejects where both do.
            cr2 = cost_ratios(ctx.frame, interval="cr2").set_index("statistic").loc[stat]
            t_cr2 = declared_test(np.log(cr2["estimate"]), cr2["se"], cr2["df"], **how)
            res = hull_declared_test(res, t_cr2)
    res, diag = res.iloc[0], res.diagnostics.iloc[0]  # the declared test's row (tidy shape)
    back = np.exp if source == "cost" else (lambda x: x)
    lo_m, hi_m = float(back(diag["lower_margin"])), float(back(diag["upper_margin"]))
    words = _conclusion(stat, res["test"], lo_m, hi_m, plan.margin)
    if res["test"] == "two-sided" and diag["reject"]:  # which way it differs
        up = res["estimate"] > diag["null"]
        words += (
            (": WITH higher" if up else ": WITH lower")
            if source == "cost"
            else (": WITH better" if up else ": WITH worse")
        )
    if se == 0.0:
        notes.append("SE 0 (no spread between tasks): the test is exact under the model")
    if plan.sidedness != "two-sided" and res["test"] == "equivalence":
        notes.append(f"equivalence tests both sides; the plan's sidedness {plan.sidedness} "
                     "does not apply")  # fmt: skip
    out |= {
        "test_centre": float(back(res["estimate"])),
        "se": float(res["se"]),
        "df": float(res["df"]),
        "null": float(back(diag["null"])),
        "test": res["test"],
        "lower_margin": lo_m,
        "upper_margin": hi_m,
        "p_value": float(res["p_value"]),
        "ci_low": float(back(res["ci_low"])),
        "ci_high": float(back(res["ci_high"])),
        "ci_level": float(res["confidence"]),
        "decision": "reject" if diag["reject"] else "not reject",
        "conclusion": words if diag["reject"] else f"not shown: {words}",
        "method": base,
        "ci_note": "; ".join(notes),
    }
    return {"primary_test": pd.DataFrame([out]).reindex(columns=list(PRIMARY_TEST_COLUMNS))}
