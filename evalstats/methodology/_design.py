"""Checks of the design: judges against agents, canonical answers, pairs, budgets, tokens."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..records import incomplete_pairs
from ..stats.rates import sign_test_p
from ._families import model_family
from ._rows import _listed, _pct, _row


def _override(judgments) -> str:
    """What the judgments record of ``evalstats judge --allow-same-family``."""
    col = None if judgments is None else judgments.get("same_family_allowed")
    n = 0 if col is None else int(col.notna().sum())
    if n == 0:
        return " No --allow-same-family was recorded: the judge ran without an explicit override."
    fams = sorted({str(v) for v in col.dropna()})
    return (
        f" Run anyway with --allow-same-family (family {', '.join(fams)}), recorded on {n} of "
        f"{len(col)} judgments."
    )


def _check_self(runs, judges: list[str], families, agent_family, judgments=None) -> dict[str, str]:
    agents = sorted(set(runs["agent_model"].astype(str)))
    if agent_family is not None:
        agent_fams = {a: str(agent_family) for a in agents}
    else:
        agent_fams = {a: model_family(a, families) for a in agents}
    judge_fams = {j: model_family(j, families) for j in judges}
    same = [
        f"{j} ({judge_fams[j]})"
        for j in judges
        if judge_fams[j] in set(agent_fams.values()) and judge_fams[j] != "unknown"
    ]
    unknown = [a for a, f in agent_fams.items() if f == "unknown"]
    unknown += [j for j, f in judge_fams.items() if f == "unknown"]
    agents_txt = ", ".join(f"{a} ({f})" for a, f in agent_fams.items())
    if same:
        # The seed's rule, not a preference: a fail (the override is said, not excused).
        return _row(
            "judge_not_self",
            "fail",
            f"{len(same)} of {len(judges)} judges share a model family with the agent "
            f"under test [{agents_txt}]: {_listed(same)}; self-evaluation bias."
            + _override(judgments),
        )
    if unknown:
        return _row(
            "judge_not_self",
            "unknown",
            f"Model family unknown for {_listed(unknown)}; pass families= or "
            f"agent_family= to check self-evaluation.",
        )
    judges_txt = ", ".join(f"{j} ({judge_fams[j]})" for j in judges)
    return _row(
        "judge_not_self",
        "pass",
        f"Agent(s) {agents_txt}; judges {judges_txt}: no judge shares the agent's family.",
    )


def _check_families(j: pd.DataFrame, families) -> dict[str, str]:
    fails, warns, parts = [], [], []
    for rubric, judges in j.groupby("rubric", observed=True)["judge"]:
        names = sorted(set(judges.astype(str)))
        fams = {model_family(n, families) for n in names}
        known = fams - {"unknown"}
        n_unknown = sum(model_family(n, families) == "unknown" for n in names)
        parts.append(f"{rubric}: {len(names)} judges, families {sorted(fams)}")
        if len(known) >= 2:
            continue
        if len(names) >= 2 and len(known) + n_unknown >= 2:
            warns.append(str(rubric))
        else:
            fails.append(str(rubric))
    detail = "; ".join(parts) + "."
    if fails:
        return _row(
            "judge_families",
            "fail",
            f"Fewer than two judge families for {_listed(fails)}. {detail}",
        )
    if warns:
        return _row(
            "judge_families",
            "warn",
            f"Judge family unknown, cannot confirm two families for {_listed(warns)}. {detail}",
        )
    return _row("judge_families", "pass", detail)


def _check_canonical(tasks: pd.DataFrame, runs: pd.DataFrame) -> dict[str, str]:
    first = runs.groupby("task_id", observed=True)["started_at"].min()
    written = tasks.set_index("task_id")["canonical_written_at"]
    both = pd.concat([written.rename("written"), first.rename("first_run")], axis=1, join="inner")
    late = both.loc[~(both["written"] < both["first_run"])]
    n = len(both)
    if len(late):
        items = [
            f"{t} (written {w.isoformat()}, first run {r.isoformat()})"
            for t, w, r in zip(late.index, late["written"], late["first_run"], strict=True)
        ]
        return _row(
            "canonical_before_runs",
            "fail",
            f"{len(late)} of {n} tasks have a canonical answer written at or after "
            f"their first run: {_listed(items)}.",
        )
    if n == 0:
        return _row("canonical_before_runs", "unknown", "No task has runs: nothing to check.")
    lead = (both["first_run"] - both["written"]).min()
    return _row(
        "canonical_before_runs",
        "pass",
        f"All {n} tasks' canonical answers predate their first run "
        f"(smallest lead {lead / pd.Timedelta(hours=1):.1f} h).",
    )


def _pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per complete pair: agent models and over-budget flags of both arms."""
    cols = ["agent_model", *(c for c in ("over_budget",) if c in runs.columns)]
    arm = runs["arm"].astype(str)
    w = runs.loc[arm == "with", ["task_id", "replicate", *cols]]
    wo = runs.loc[arm == "without", ["task_id", "replicate", *cols]]
    return w.merge(wo, on=["task_id", "replicate"], suffixes=("_with", "_without"))


def _check_same_agent(pairs: pd.DataFrame) -> dict[str, str]:
    differ = pairs.loc[
        pairs["agent_model_with"].astype(str) != pairs["agent_model_without"].astype(str)
    ]
    if len(differ):
        items = [
            f"({t}, {r}): {a} vs {b}"
            for t, r, a, b in zip(
                differ["task_id"],
                differ["replicate"],
                differ["agent_model_with"],
                differ["agent_model_without"],
                strict=True,
            )
        ]
        return _row(
            "same_agent_both_arms",
            "fail",
            f"{len(differ)} of {len(pairs)} pairs ran different agent models WITH and "
            f"WITHOUT: {_listed(items)}.",
        )
    return _row(
        "same_agent_both_arms",
        "pass",
        f"All {len(pairs)} pairs ran the same agent model in both arms.",
    )


def _check_budgets(tasks, pairs, frame: pd.DataFrame | None, alpha: float) -> dict[str, str]:
    check = "budgets_symmetric"
    bad = tasks.loc[~((tasks["budget_tokens"] > 0) & (tasks["budget_wall_s"] > 0)), "task_id"]
    if len(bad):
        return _row(
            check,
            "fail",
            f"{len(bad)} tasks have a zero budget (every run is over "
            f"it): {_listed(bad.astype(str).tolist())}.",
        )
    if "over_budget_with" not in pairs.columns:
        return _row(
            check,
            "warn",
            "Runs carry no over_budget flags (load them with tasks): budget handling not checked.",
        )
    ow = pairs["over_budget_with"].to_numpy(dtype=bool)
    owo = pairs["over_budget_without"].to_numpy(dtype=bool)
    n_w_only, n_wo_only, n_both = (
        int((ow & ~owo).sum()),
        int((~ow & owo).sum()),
        int((ow & owo).sum()),
    )
    counts = (
        f"over budget: WITH only {n_w_only}, WITHOUT only {n_wo_only}, both {n_both} "
        f"of {len(pairs)} pairs"
    )
    if frame is not None and len(frame):
        over = pairs.loc[ow | owo, ["task_id", "replicate"]]
        scored = frame.merge(over, on=["task_id", "replicate"])
        scored = scored.loc[scored["status"].astype(str) != "no_answer"]
        if len(scored):
            return _row(
                check,
                "fail",
                f"{len(scored)} verdicts on over-budget pairs are not scored no_answer; {counts}.",
            )
    discordant = n_w_only + n_wo_only
    if discordant:
        p = float(sign_test_p(n_w_only, n_wo_only))
        if p < alpha:
            worse = "WITH" if n_w_only > n_wo_only else "WITHOUT"
            return _row(
                check,
                "warn",
                f"The budget binds {worse} more often ({counts}; exact binomial "
                f"p = {p:.3g}): no_answer is informative, report the arm-aware view "
                f"(no_answer_as='arm_aware') and the best/worst-case bounds.",
            )
        return _row(
            check,
            "pass",
            f"Budgets are per task, positive, and bind both arms alike "
            f"({counts}; exact binomial p = {p:.3g}).",
        )
    return _row(check, "pass", f"Budgets are per task and positive; {counts}.")


def _check_both_arms(runs: pd.DataFrame) -> dict[str, str]:
    lonely = incomplete_pairs(runs)
    n_pairs = runs[["task_id", "replicate"]].drop_duplicates().shape[0]
    if len(lonely):
        items = [
            f"({t}, {r}) only {a}"
            for t, r, a in zip(lonely["task_id"], lonely["replicate"], lonely["arm"], strict=True)
        ]
        return _row(
            "both_arms_present",
            "fail",
            f"{len(lonely)} of {n_pairs} pairs lack an arm: {_listed(items)}.",
        )
    return _row("both_arms_present", "pass", f"All {n_pairs} pairs have both arms.")


def _check_tokens(runs: pd.DataFrame) -> dict[str, str]:
    check = "reported_tokens"
    if "tokens_mismatch" not in runs.columns:
        return _row(
            check,
            "unknown",
            "Runs carry no token counts (load them with tasks): reported tokens not compared.",
        )
    n_rep = int(runs["reported_tokens"].notna().sum()) if "reported_tokens" in runs else 0
    # Which count the cost ratios use is their token-source rule (billed where every run has
    # it, else the transcript count); this check only says whether the two agree.
    used = (
        "the cost ratios use the billed counts"
        if n_rep == len(runs) and n_rep
        else "the cost ratios use the cl100k_base transcript counts"
    )
    answer_only = (
        runs["tokens_source"].astype(str).eq("answer").to_numpy()
        if "tokens_source" in runs.columns
        else np.zeros(len(runs), dtype=bool)
    )
    if n_rep and answer_only[runs["reported_tokens"].notna().to_numpy()].all():
        return _row(
            check,
            "pass",
            f"{n_rep} runs report billed usage and have no transcript: the answer's count is "
            f"not a count of what a run read and wrote, so nothing is compared; {used}.",
        )
    mism = runs.loc[runs["tokens_mismatch"].to_numpy(dtype=bool) & ~answer_only]
    if len(mism):
        ratio = mism["reported_tokens"].astype("float64") / mism["tokens"].astype("float64")
        items = [
            f"({t}, {r}, {a}) reported {int(x)} vs counted {int(c)}"
            for t, r, a, x, c in zip(
                mism["task_id"],
                mism["replicate"],
                mism["arm"].astype(str),
                mism["reported_tokens"],
                mism["tokens"],
                strict=True,
            )
        ]
        return _row(
            check,
            "warn",
            f"{len(mism)} of {n_rep} runs with reported_tokens disagree with the "
            f"cl100k_base transcript count (reported / counted from {ratio.min():.2f} to "
            f"{ratio.max():.2f}); {used}: {_listed(items)}.",
        )
    if n_rep == 0:
        return _row(
            check,
            "pass",
            f"No run reports its token count ({len(runs)} runs): nothing to compare; {used}.",
        )
    return _row(
        check,
        "pass",
        f"All {n_rep} reported token counts agree with the cl100k_base "
        f"count ({len(runs) - n_rep} runs report none); {used}.",
    )


def _check_no_answer(pairs: pd.DataFrame, threshold: float) -> dict[str, str]:
    check = "no_answer_rate"
    if "over_budget_with" not in pairs.columns:
        return _row(check, "warn", "Runs carry no over_budget flags (load them with tasks).")
    over = pairs["over_budget_with"].to_numpy(dtype=bool) | pairs["over_budget_without"].to_numpy(
        dtype=bool
    )
    n, k = len(pairs), int(over.sum())
    rate = k / n if n else 0.0
    status = "warn" if rate > threshold else "pass"
    tail = (
        " (above the threshold: report the best/worst-case bounds of evalstats.missing_bounds)"
        if status == "warn"
        else ""
    )
    n_tasks = pairs.loc[over, "task_id"].nunique()
    return _row(
        check,
        status,
        f"{k} of {n} pairs ({_pct(rate)}) are no_answer (over budget) "
        f"in {n_tasks} tasks; threshold {_pct(threshold)}{tail}.",
    )
