"""The report page's sections of the evaluation kind: the headline and consensus rates,
Holm's family of net-win tests, missing-answer bounds, the design's simulated coverage,
agreement, disagreements, cost, per-task rates, the blind rubric's order effects, the
accounting of verdicts and the methodology audit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._disagreement import DISAGREEMENT_TRIGGER, disagreeing
from .._schema import BLIND_DIMENSIONS
from .._tidy import concat_results, stack_results, stack_statistics
from ._eval_common import (
    _EXAMPLE_COLUMNS,
    _N_EXAMPLES,
    _TEXT_LIMIT,
    CONSENSUS_RULE,
    _attempt,
    _child_rng,
    _common,
    _multi_judge_rubrics,
    _need_verdicts,
    _paired_rubrics,
    _plan,
    _rubrics_in,
)
from ._kinds import Context, Unavailable


def _headline(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates

    _need_verdicts(ctx.frame)
    return {"headline": win_rates(ctx.frame, by=["rubric", "judge"], rng=ctx.rng, **_common(ctx))}


def _consensus(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import consensus
    from ..stats.rates import win_rates

    multi = _multi_judge_rubrics(ctx.frame)
    if not multi:
        raise Unavailable("fewer than two judges on every rubric")
    _need_verdicts(ctx.frame)
    # The page's rule, and the plan's when it declares another as its primary.
    plan = _plan(ctx)
    rules = [CONSENSUS_RULE]
    if plan is not None and plan.consensus is not None and plan.consensus not in rules:
        rules.append(plan.consensus)
    cons = pd.concat(
        [consensus(ctx.frame, rule, rubric=r) for rule in rules for r in multi],
        ignore_index=True,
    )
    ctx.scratch["consensus_frame"] = cons  # the design check re-simulates its design
    return {"consensus": win_rates(cons, by=["rubric", "judge"], rng=ctx.rng, **_common(ctx))}


# The family of net-win tests that Holm's adjustment covers: every judge x rubric test of the
# headline and every consensus row (a consensus is one more way to read the same pairs, and
# reporting whichever of them came out best is exactly the multiplicity Holm controls).
_TEST_TABLES = ("headline", "consensus")
_RATE_STATISTICS = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")


def _tests(ctx: Context) -> dict[str, Any]:
    """``primary`` and ``net_win_p_holm`` on the headline and consensus tables.

    The plan's primary row (rubric x judge-or-consensus, its statistic one of the rates) is
    marked; when that statistic is the net win, its test is the primary one, tested alone at
    the plan's alpha (``net_win_p_holm`` equals its ``net_win_p``), and every other net-win
    test forms the Holm family. Without a plan every test is exploratory and all of them
    are adjusted together.
    """
    from ..stats.ranking import holm_table

    names = [t for t in _TEST_TABLES if t in ctx.tables]
    if not names:
        raise Unavailable("no headline table: no test to adjust")
    # One test per group: the net-win row (the score's p-value is the same test).
    parts = []
    for t in names:
        rows = pd.DataFrame(ctx.tables[t])
        rows = rows.assign(_table=t, _row=np.arange(len(rows)))
        parts.append(rows.loc[rows["statistic"] == "net_win"])
    family = pd.concat(parts, ignore_index=True)
    keys = family[["rubric", "judge"]].astype(str)
    plan = _plan(ctx)
    marked = np.zeros(len(family), dtype=bool)
    if plan is not None and plan.statistic in _RATE_STATISTICS:
        key = plan.primary_key
        marked = ((keys["rubric"] == key["rubric"]) & (keys["judge"] == key["judge"])).to_numpy()
    tested_alone = marked if plan is not None and plan.statistic == "net_win" else None
    adjusted = holm_table(family, p="p_value", primary=tested_alone if marked.sum() == 1 else None)
    out: dict[str, Any] = {}
    for t in names:
        hit = (adjusted["_table"] == t).to_numpy()
        rows = adjusted.loc[hit]
        table = ctx.tables[t].copy()
        p_holm = np.full(len(table), np.nan)
        p_holm[rows["_row"].to_numpy()] = rows["p_holm"].to_numpy()
        table["p_holm"] = p_holm  # on the net-win row, the test Holm's family holds
        diag = table.diagnostics.copy()
        # The diagnostics list the groups in the rows' order, as the net-win rows do.
        diag.insert(diag.columns.get_loc("judge") + 1, "primary", marked[hit])
        table.diagnostics = diag
        out[t] = table
    return out


def _missing_bounds(ctx: Context) -> dict[str, Any]:
    """Net win with the over-budget pairs excluded (the headline), at its worst and best
    case (every missing answer a loss, resp. a win, for WITH) and under the arm-aware rule
    (a loss where only WITH went over budget, a win where only WITHOUT did, a tie where
    both did), per rubric x judge."""
    from ..stats.rates import bounds_view, missing_bounds, win_rates

    _need_verdicts(ctx.frame)
    by = ["rubric", "judge"]
    # A generator of its own: the bounds draw nothing with the default interval, but the
    # report's other numbers must not depend on whether this section ran.
    gen = _child_rng(ctx.seed, 1)
    bounds = missing_bounds(ctx.frame, by=by, rng=gen, **_common(ctx))
    net = bounds_view(bounds, "net_win")
    # The report's table: the net win under each reading of the missing answers, one row a
    # reading (its interval where it has one: the bounds' interval is the widest limits
    # over the loss / tie / win fillings).
    readings = [
        ("net_win", net["estimate"], np.nan, np.nan),
        ("worst_case", net["worst_case"], np.nan, np.nan),
        ("best_case", net["best_case"], np.nan, np.nan),
        ("bounds", np.nan, net["ci_low"], net["ci_high"]),
    ]
    if "over_budget_arm" in ctx.frame.columns:
        aware = win_rates(ctx.frame, by=by, no_answer_as="arm_aware", rng=gen, **_common(ctx))
        aware = pd.DataFrame(aware.loc[aware["statistic"] == "net_win"])
        aware = aware.astype({c: str for c in by}).set_index(by)
        idx = pd.MultiIndex.from_frame(net[by].astype(str))
        aware = aware.reindex(idx)
        at = len(readings) - 1
        readings.insert(
            at,
            (
                "arm_aware",
                aware["estimate"].to_numpy(),
                aware["ci_low"].to_numpy(),
                aware["ci_high"].to_numpy(),
            ),
        )
    groups = net[by]
    statistics = [
        (
            name,
            {
                "estimate": np.asarray(est, dtype=float),
                "ci_low": np.asarray(lo, dtype=float),
                "ci_high": np.asarray(hi, dtype=float),
                "n": net["n"].to_numpy(),
                "method": bounds["method"].iloc[0],
                "confidence": ctx.confidence,
            },
        )
        for name, est, lo, hi in readings
    ]
    out = stack_statistics(groups, statistics, diagnostics=net[[*by, "n", "n_missing"]])
    return {"missing_bounds": out}


def _design_check(ctx: Context) -> dict[str, Any]:
    """The headline and consensus intervals' simulated coverage on this very design.

    The coverage battery shows designs where no valid interval lands in [0.93, 0.97] (8
    tasks of 3 verdicts with a rate near 0 or 1 over-cover); :func:`evalstats.stats.
    design_coverage` re-simulates the data's own tasks, rates and intra-task correlation,
    and where the default interval falls outside the band its ``ci_note`` is added to the
    headline (or consensus) row, so that the page says so beside the interval instead of
    printing it bare. The consensus rows (judge ``consensus:<rule>``) are simulated on the
    consensus verdicts, with fewer evaluations (their ``mc_se`` says how many).
    """
    from ..stats import design_coverage

    _need_verdicts(ctx.frame)
    by = ["rubric", "judge"]
    # Its own generator: whether this check ran must not move any other number.
    cov = design_coverage(
        ctx.frame, by=by, confidence=ctx.confidence, n_resamples=2000, rng=_child_rng(ctx.seed, 2)
    )
    out: dict[str, Any] = {}
    parts = [cov]
    cons_frame = ctx.scratch.get("consensus_frame")
    cons_cov = None
    if cons_frame is not None and isinstance(ctx.tables.get("consensus"), pd.DataFrame):
        # A stream of its own (3), so that adding these rows moves no other number.
        cons_cov = _attempt(
            lambda: design_coverage(
                cons_frame,
                by=by,
                confidence=ctx.confidence,
                n_resamples=_CONSENSUS_COVERAGE_SIMS,
                rng=_child_rng(ctx.seed, 3),
            )
        )
        if isinstance(cons_cov, pd.DataFrame):
            parts.append(cons_cov)
    out["design_coverage"] = pd.concat(parts, ignore_index=True) if len(parts) > 1 else cov
    for name, table_cov in (("headline", cov), ("consensus", cons_cov)):
        noted = _with_coverage_notes(ctx.tables.get(name), table_cov, by)
        if noted is not None:
            out[name] = noted
    return out


# Simulated evaluations of the consensus rows' design check (Monte-Carlo SE of a coverage of
# 0.95: 0.007, shown in the table): half the headline's, to keep the section under 0.05 s.
_CONSENSUS_COVERAGE_SIMS = 1000


def _with_coverage_notes(table: Any, cov: Any, by: list[str]) -> pd.DataFrame | None:
    """``table`` with the design check's ``ci_note`` appended to its own; None when no row
    of ``cov`` has a note (the table is then left as it was)."""
    if not isinstance(table, pd.DataFrame) or not isinstance(cov, pd.DataFrame):
        return None
    if not cov["ci_note"].astype(bool).any():
        return None
    notes = cov.astype({c: str for c in by}).set_index(by)["ci_note"]
    idx = pd.MultiIndex.from_frame(table[by].astype(str))
    extra = notes.reindex(idx).fillna("").to_numpy(dtype=object)
    out = table.copy()
    old = out["ci_note"].fillna("").astype(str) if "ci_note" in out else [""] * len(out)
    out["ci_note"] = ["; ".join(n for n in (a, b) if n) for a, b in zip(old, extra, strict=True)]
    return out


def _agreement(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import judge_agreement

    multi = _multi_judge_rubrics(ctx.frame)
    if not multi:
        raise Unavailable("fewer than two judges on every rubric")
    multi = _paired_rubrics(ctx.frame)
    if not multi:
        raise Unavailable(
            "kappa needs two judges with answers on the same pairs: none here "
            "(on every rubric, at most one judge gave a readable verdict per pair)"
        )
    parts = [judge_agreement(ctx.frame, rubric=r, rng=ctx.rng, **_common(ctx)) for r in multi]
    return {"agreement": concat_results(parts)}


def _text(series: pd.Series) -> pd.Series:
    """Judge text cut for display (escaping happens when rendered, never here)."""
    s = series.astype("string").fillna("")
    long = s.str.len() > _TEXT_LIMIT
    return s.where(~long, s.str.slice(0, _TEXT_LIMIT) + " […]")


def _disagreements(ctx: Context) -> dict[str, Any]:
    """Example pairs on which two judges gave different outcomes, with their reasoning."""
    from ..frames import select_rubric, wide_by_judge

    frame = ctx.frame
    columns = [*_EXAMPLE_COLUMNS, "reasoning"]
    rows = []
    for rubric in _rubrics_in(frame):
        sub, _ = select_rubric(frame, rubric)
        sub = sub.loc[sub["status"] == "ok"]
        if sub["judge"].nunique() < 2:
            continue
        wide = wide_by_judge(sub, rubric=rubric)
        judges = [j for j in sub["judge"].astype(str).unique() if j in wide.columns]
        if len(judges) < 2:
            continue
        on = (
            ["task_id", "replicate", "order"]
            if "order" in wide.columns
            else ["task_id", "replicate"]
        )
        keys = wide.loc[disagreeing(wide, judges), on].head(_N_EXAMPLES)
        if "order" in on:  # plain objects on both sides, so a missing order matches itself
            keys = keys.assign(order=keys["order"].astype(object))
        ex = sub.assign(order=sub["order"].astype(object)).merge(keys, on=on)
        rows.append(ex.assign(rubric=rubric, reasoning=_text(ex["reasoning"]))[columns])
    if not rows:
        return {"disagreements": pd.DataFrame(columns=columns)}
    out = pd.concat(rows, ignore_index=True)
    out = (
        out.astype({"judge": str, "outcome": "string", "order": "string"})
        .sort_values(
            ["rubric", "task_id", "replicate", "order", "judge"], kind="stable", na_position="first"
        )
        .reset_index(drop=True)
    )
    return {"disagreements": out}


def _cost(ctx: Context) -> dict[str, Any]:
    from ..stats.cost import cost_ratios, judge_spend

    cost = _attempt(lambda: cost_ratios(ctx.frame, rng=ctx.rng, **_common(ctx)))
    return {
        "cost": cost,
        "cost_sources": _cost_sources(cost),
        "judge_spend": _attempt(lambda: judge_spend(ctx.frame, by=["rubric", "judge"])),
    }


def _cost_sources(cost: Any) -> Any:
    """The token ratios from each source the runs have, side by side (issue 22): the billed
    usage the cost table uses and the transcript count beside it, with their ratio (how far
    the two disagree), when every pair has both; else why there is one source only."""
    if isinstance(cost, Unavailable):
        return cost
    other = cost.attrs.get("transcript_ratios")
    if other is None:
        source = cost.attrs.get("token_source")
        return Unavailable(
            f"one token source only ({source}): "
            + (cost.attrs.get("token_source_reason") or "no pair has both billed and transcript")
        )
    cols = ["statistic", "token_source", "estimate", "ci_low", "ci_high", "method", "n", "n_tasks"]
    billed = pd.DataFrame(cost.loc[cost["statistic"].str.startswith("tokens_"), cols])
    transcript = pd.DataFrame(other[cols])
    both = pd.concat([billed, transcript], ignore_index=True)
    ref = transcript.set_index("statistic")["estimate"]
    both["billed_over_transcript"] = both["statistic"].map(
        billed.set_index("statistic")["estimate"] / ref
    )
    both["confidence"] = float(cost["confidence"].iloc[0])
    return both


def _per_task(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates

    _need_verdicts(ctx.frame)
    return {"per_task": win_rates(ctx.frame, by=["rubric", "task_id"], rng=ctx.rng, **_common(ctx))}


def _blind(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import dimension_means, position_bias

    f = ctx.frame
    out: dict[str, Any] = {}
    dims = f.loc[f[[f"with_{d}" for d in BLIND_DIMENSIONS]].notna().any(axis=1)]
    if dims.empty:
        out["dimensions"] = Unavailable("no blind-rubric dimension scores in the data")
    else:
        out["dimensions"] = _attempt(lambda: dimension_means(dims, confidence=ctx.confidence))
    blind = f.loc[f["order"].notna()]
    if blind.empty:
        out["position_bias"] = Unavailable("no blind-rubric judgments with an order")
    else:
        out["position_bias"] = _attempt(
            lambda: position_bias(blind, by=["rubric", "judge"], confidence=ctx.confidence)
        )
    return out


def _accounting(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates
    from ..summary import status_table

    f = ctx.frame

    def views() -> pd.DataFrame:
        _need_verdicts(f)
        return stack_results(
            {
                view: win_rates(
                    f, by=["rubric", "judge"], no_answer_as=view, rng=ctx.rng, **_common(ctx)
                )
                for view in ("exclude", "loss")
            },
            "no_answer_as",
        )

    # Judge outputs that could not be read: kept, counted, shown (never silently dropped).
    bad = f.loc[f["status"] == "invalid"]
    invalid = bad[["rubric", "task_id", "replicate", "judge", "parse_error"]].astype(
        {"rubric": str, "judge": str}
    )
    return {
        "accounting": _attempt(lambda: status_table(f)),
        "sensitivity": _attempt(views),
        "invalid_outputs": invalid.assign(raw=_text(bad["raw"])).reset_index(drop=True),
    }


def _audit(ctx: Context) -> dict[str, Any]:
    from ..methodology import audit

    ds, f = ctx.extra["dataset"], ctx.frame
    j = ds.judgments
    keep = j["judge"].astype(str).isin(f["judge"].astype(str).unique()) & j["rubric"].astype(
        str
    ).isin(f["rubric"].astype(str).unique())
    table = audit(
        ds.tasks,
        ds.runs,
        j.loc[keep],
        frame=f,
        disagreement_threshold=DISAGREEMENT_TRIGGER,
        plan=ds.plan,
    )
    return {"audit": table}
