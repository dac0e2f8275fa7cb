"""The audit: the seeds' methodology rules as a pass / unknown / warn / fail table.

One row per check (id, status, a detail sentence with the numbers, the seed rule); ``unknown``
means the evidence is missing, never a pass. What each check tests: docs/methods.md, "Audit"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from ._disagreement import DISAGREEMENT_TRIGGER, disagreement_counts
from ._families import model_family
from ._validate import check_probability
from .errors import DataError, ParameterError
from .frames import by_pair_of_arms, resolve_rubrics, verdict_frame
from .plan import Plan
from .records import Dataset, incomplete_pairs
from .stats.rates import sign_test_p

__all__ = ["AUDIT_CHECKS", "AUDIT_STATUSES", "AuditLimits", "audit", "audit_rows", "model_family"]

AUDIT_STATUSES = ("pass", "unknown", "warn", "fail")
_STATUS_DTYPE = pd.CategoricalDtype(list(AUDIT_STATUSES), ordered=True)
# check id -> the seed text it enforces (short).
AUDIT_CHECKS: dict[str, str] = {
    "judge_not_self": "Run the judge as a DIFFERENT model from the agent under test (seed 000).",
    "judge_families": "Run the judge twice with two different models and report agreement "
    "(seed 000).",
    "canonical_before_runs": "Canonical answers are written PER TASK before any agent runs "
    "(seed 000).",
    "same_agent_both_arms": "Both answers were produced by the same coding agent (seed 000).",
    "budgets_symmetric": "Per-task budgets are identical WITH and WITHOUT; a run over budget "
    "is 'no answer', not (c) (seed 000).",
    "prompt_hash_pinned": "If you change a word, bump the judge_prompt_revision (seed 000).",
    "judge_disagreement": "Disagreement >20% is the methodology trigger: re-curate the tasks "
    "or pick a third judge (seed 000).",
    "both_arms_present": "A WITH and a WITHOUT run of the same task and replicate form a pair "
    "(data contract).",
    "judgment_coverage": "Report agreement / disagreement counts of both judges (seed 000).",
    "blind_order_balance": "Agent A / Agent B; do not infer agent identity (seed 001): "
    "presentation order must not favour an arm.",
    "judge_failure_rate": "Always pick exactly one label (seed 000); output ONLY the JSON "
    "block (seed 001).",
    "reported_tokens": "Token counts are computed before the judge sees them, so the agent "
    "can't lie about cost (seed 000).",
    "no_answer_rate": "A run that exceeds the budget is scored as 'no answer' (seed 000).",
    "plan_before_judging": "Declare the primary endpoint before the data are seen "
    "(analysis plan, issue 11).",
    "plan_design": "Analyse the design that was planned: tasks, replicates, rubrics, judges "
    "(analysis plan, issue 11).",
}


def _listed(items: list[str]) -> str:
    """At most five items, then how many more."""
    more = len(items) - 5
    return ", ".join(items[:5]) + (f" and {more} more" if more > 0 else "")


def _key(v: object) -> object:
    return None if not isinstance(v, str) and pd.isna(v) else v


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f} %"


def _row(check: str, status: str, detail: str, rubrics: list | None = None) -> dict[str, Any]:
    row = {"check": check, "status": status, "detail": detail, "rule": AUDIT_CHECKS[check]}
    return row | {"rubrics": rubrics} if rubrics else row


def _table(rows: list[dict]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=["check", "status", "detail", "rule"])
    table = table.astype({"check": "str", "status": _STATUS_DTYPE, "detail": "str", "rule": "str"})
    table.attrs["rubrics"] = {r["check"]: list(r["rubrics"]) for r in rows if r.get("rubrics")}
    return table


def _frame_str(s: pd.Series) -> pd.Series:
    """Values as plain strings, missing ones as ""."""
    return pd.Series(
        [str(v) if not pd.isna(v) else "" for v in s.astype(object)], index=s.index, dtype=object
    )


def audit_rows(
    table: pd.DataFrame, status: str | tuple[str, ...] = ("fail", "unknown")
) -> pd.DataFrame:
    """The rows of an :func:`audit` table with the given status(es).

    >>> import pandas as pd
    >>> t = pd.DataFrame({"check": ["a", "b", "c"], "status": ["pass", "unknown", "fail"]})
    >>> audit_rows(t)["check"].tolist()
    ['b', 'c']
    """
    wanted = (status,) if isinstance(status, str) else tuple(status)
    bad = [s for s in wanted if s not in AUDIT_STATUSES]
    if bad:
        raise ValueError(f"unknown audit status {bad[0]!r}; expected one of {AUDIT_STATUSES}")
    return table.loc[table["status"].astype(str).isin(wanted)].reset_index(drop=True)


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


def _check_self(runs, judges: list[str], families, agent_family, judgments=None) -> tuple:
    agents = sorted(set(runs["agent_model"].astype(str)))
    agent_fams = {a: str(agent_family or model_family(a, families)) for a in agents}
    # The journaled model_id is what answered: its family counts beside the judge's name.
    fams = {j: {model_family(j, families)} for j in judges}
    if judgments is not None and "model_id" in judgments.columns:
        ids = judgments.loc[judgments["model_id"].notna(), ["judge", "model_id"]].astype(str)
        for j, m in ids.drop_duplicates().itertuples(index=False):
            fams[j].add(model_family(m, families))
    judge_fams = {j: ", ".join(sorted(f - {"unknown"} or f)) for j, f in fams.items()}
    same = [
        f"{j} ({judge_fams[j]})" for j in judges if fams[j] & set(agent_fams.values()) - {"unknown"}
    ]
    unknown = [x for x, f in [*agent_fams.items(), *judge_fams.items()] if f == "unknown"]
    agents_txt = ", ".join(f"{a} ({f})" for a, f in agent_fams.items())
    if same:  # the seed's rule: a fail (the override is said, not excused)
        return (
            "fail",
            f"{len(same)} of {len(judges)} judges share a model family with the agent "
            f"under test [{agents_txt}]: {_listed(same)}; self-evaluation bias."
            + _override(judgments),
        )
    if unknown:
        return (
            "unknown",
            f"Model family unknown for {_listed(unknown)}; pass families= or "
            f"agent_family= to check self-evaluation.",
        )
    judges_txt = ", ".join(f"{j} ({judge_fams[j]})" for j in judges)
    return (
        "pass",
        f"Agent(s) {agents_txt}; judges {judges_txt}: no judge shares the agent's family.",
    )


def _check_families(j: pd.DataFrame, families) -> tuple:
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
        return ("fail", f"Fewer than two judge families for {_listed(fails)}. {detail}")
    if warns:
        return (
            "warn",
            f"Judge family unknown, cannot confirm two families for {_listed(warns)}. {detail}",
        )
    return ("pass", detail)


def _check_canonical(tasks: pd.DataFrame, runs: pd.DataFrame) -> tuple:
    first = runs.groupby("task_id", observed=True)["started_at"].min()
    written = tasks.set_index("task_id")["canonical_written_at"]
    both = pd.concat([written.rename("written"), first.rename("first_run")], axis=1, join="inner")
    late = both.loc[~(both["written"] < both["first_run"])]
    n = len(both)
    if len(late):
        items = [
            f"{t} (written {w.isoformat()}, first run {r.isoformat()})"
            for t, w, r in late.itertuples()
        ]
        return (
            "fail",
            f"{len(late)} of {n} tasks have a canonical answer written at or after "
            f"their first run: {_listed(items)}.",
        )
    if n == 0:
        return ("unknown", "No task has runs: nothing to check.")
    lead = (both["first_run"] - both["written"]).min()
    return (
        "pass",
        f"All {n} tasks' canonical answers predate their first run "
        f"(smallest lead {lead / pd.Timedelta(hours=1):.1f} h).",
    )


def _pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per complete pair: agent models and over-budget flags of both arms."""
    cols = ["agent_model", *(c for c in ("over_budget",) if c in runs.columns)]
    arm = runs["arm"].astype(str)
    w, wo = (runs.loc[arm == a, ["task_id", "replicate", *cols]] for a in ("with", "without"))
    pairs = w.merge(wo, on=["task_id", "replicate"], suffixes=("_with", "_without"))
    if "over_budget" in cols:
        over = (pairs[f"over_budget_{a}"].to_numpy(dtype=bool) for a in ("with", "without"))
        pairs["over"] = np.logical_or(*over)
    return pairs


def _check_same_agent(pairs: pd.DataFrame) -> tuple:
    differ = pairs.loc[
        pairs["agent_model_with"].astype(str) != pairs["agent_model_without"].astype(str)
    ]
    if len(differ):
        cols = ["task_id", "replicate", "agent_model_with", "agent_model_without"]
        items = [f"({t}, {r}): {a} vs {b}" for t, r, a, b in differ[cols].itertuples(index=False)]
        return (
            "fail",
            f"{len(differ)} of {len(pairs)} pairs ran different agent models WITH and "
            f"WITHOUT: {_listed(items)}.",
        )
    return ("pass", f"All {len(pairs)} pairs ran the same agent model in both arms.")


def _check_budgets(tasks, pairs, frame: pd.DataFrame | None, alpha: float) -> tuple:
    bad = tasks.loc[~((tasks["budget_tokens"] > 0) & (tasks["budget_wall_s"] > 0)), "task_id"]
    if len(bad):
        return (
            "fail",
            f"{len(bad)} tasks have a zero budget (every run is over "
            f"it): {_listed(bad.astype(str).tolist())}.",
        )
    if "over_budget_with" not in pairs.columns:
        return (
            "warn",
            "Runs carry no over_budget flags (load them with tasks): budget handling not checked.",
        )
    ow, owo = (pairs[f"over_budget_{a}"].to_numpy(dtype=bool) for a in ("with", "without"))
    n_w_only, n_wo_only, n_both = (int(v.sum()) for v in (ow & ~owo, ~ow & owo, ow & owo))
    counts = (
        f"over budget: WITH only {n_w_only}, WITHOUT only {n_wo_only}, both {n_both} "
        f"of {len(pairs)} pairs"
    )
    if frame is not None and len(frame):
        over = pairs.loc[pairs["over"], ["task_id", "replicate"]]
        scored = frame.merge(over, on=["task_id", "replicate"])
        scored = scored.loc[scored["status"].astype(str) != "no_answer"]
        if len(scored):
            return (
                "fail",
                f"{len(scored)} verdicts on over-budget pairs are not scored no_answer; {counts}.",
            )
    discordant = n_w_only + n_wo_only
    if discordant:
        p = float(sign_test_p(n_w_only, n_wo_only))
        if p < alpha:
            worse = "WITH" if n_w_only > n_wo_only else "WITHOUT"
            return (
                "warn",
                f"The budget binds {worse} more often ({counts}; exact binomial "
                f"p = {p:.3g}): no_answer is informative, report the arm-aware view "
                f"(no_answer_as='arm_aware') and the best/worst-case bounds.",
            )
        return (
            "pass",
            f"Budgets are per task, positive, and bind both arms alike "
            f"({counts}; exact binomial p = {p:.3g}).",
        )
    return ("pass", f"Budgets are per task and positive; {counts}.")


def _check_both_arms(runs: pd.DataFrame) -> tuple:
    lonely = incomplete_pairs(runs)
    n_pairs = runs[["task_id", "replicate"]].drop_duplicates().shape[0]
    if len(lonely):
        cols = ["task_id", "replicate", "arm"]
        items = [f"({t}, {r}) only {a}" for t, r, a in lonely[cols].itertuples(index=False)]
        return ("fail", f"{len(lonely)} of {n_pairs} pairs lack an arm: {_listed(items)}.")
    return ("pass", f"All {n_pairs} pairs have both arms.")


def _check_tokens(runs: pd.DataFrame) -> tuple:
    if "tokens_mismatch" not in runs.columns:
        return (
            "unknown",
            "Runs carry no token counts (load them with tasks): reported tokens not compared.",
        )
    n_rep = int(runs["reported_tokens"].notna().sum()) if "reported_tokens" in runs else 0
    counts = "billed counts" if n_rep == len(runs) and n_rep else "cl100k_base transcript counts"
    used = f"the cost ratios use the {counts}"
    answer_only = runs.get("tokens_source", pd.Series("", runs.index)).astype(str).eq("answer")
    answer_only = answer_only.to_numpy()
    if n_rep and answer_only[runs["reported_tokens"].notna().to_numpy()].all():
        return (
            "pass",
            f"{n_rep} runs report billed usage and have no transcript: the answer's count is "
            f"not a count of what a run read and wrote, so nothing is compared; {used}.",
        )
    mism = runs.loc[runs["tokens_mismatch"].to_numpy(dtype=bool) & ~answer_only]
    if len(mism):
        ratio = mism["reported_tokens"].astype("float64") / mism["tokens"].astype("float64")
        cols = ["task_id", "replicate", "arm", "reported_tokens", "tokens"]
        items = [
            f"({t}, {r}, {a}) reported {int(x)} vs counted {int(c)}"
            for t, r, a, x, c in mism[cols].itertuples(index=False)
        ]
        lo, hi = f"{ratio.min():.2f}×", f"{ratio.max():.2f}×"
        times = f"{lo} the count in all {len(mism)}" if lo == hi else f"{lo} to {hi} the count"
        return (
            "warn",
            f"{len(mism)} of the {n_rep} runs that report tokens disagree with the cl100k_base "
            f"count of their transcript (reported tokens are {times}); {used}: {_listed(items)}.",
        )
    if n_rep == 0:
        return (
            "pass",
            f"No run reports its token count ({len(runs)} runs): nothing to compare; {used}.",
        )
    return (
        "pass",
        f"All {n_rep} reported token counts agree with the cl100k_base "
        f"count ({len(runs) - n_rep} runs report none); {used}.",
    )


def _check_no_answer(pairs: pd.DataFrame, threshold: float) -> tuple:
    if "over_budget_with" not in pairs.columns:
        return ("warn", "Runs carry no over_budget flags (load them with tasks).")
    over = pairs["over"].to_numpy()
    n, k = len(pairs), int(over.sum())
    rate = k / n if n else 0.0
    status = "warn" if rate > threshold else "pass"
    bounds = " (above the threshold: report the best/worst-case bounds of evalstats.missing_bounds)"
    tail = bounds if status == "warn" else ""
    n_tasks = pairs.loc[over, "task_id"].nunique()
    return (
        status,
        f"{k} of {n} pairs ({_pct(rate)} of the pairs) are no_answer (over budget), "
        f"in {n_tasks} tasks; threshold {_pct(threshold)} of the pairs{tail}.",
    )


def _resolve_each(j: pd.DataFrame, rubrics_arg: object) -> dict[tuple, object]:
    """(rubric, revision, sha) -> its Rubric, or None (a finding, not an exception)."""
    cols = ["rubric", "prompt_revision", "prompt_sha256"]
    ids = j[cols].astype(object).drop_duplicates()
    out: dict[tuple, object] = {}
    for i, row in enumerate(ids.itertuples(index=False)):
        try:
            out |= resolve_rubrics(ids.iloc[[i]], rubrics_arg)
        except DataError:
            out[(str(row[0]), _key(row[1]), _key(row[2]))] = None
    return out


def _check_hashes(j: pd.DataFrame, rubrics_arg: object = None) -> tuple:
    problems: list[str] = []
    n_bad, used, resolved = 0, {}, _resolve_each(j, rubrics_arg)
    for (rubric, revision), grp in j.groupby(
        ["rubric", "prompt_revision"], observed=True, dropna=False
    ):
        rev = _key(revision)
        shas = _frame_str(grp["prompt_sha256"])
        distinct = sorted(set(shas))
        if len(distinct) > 1:  # a word changed without a revision bump
            problems.append(
                f"{rubric} r{rev} changed text under the same name and revision: its "
                f"{len(grp)} judgments carry {len(distinct)} prompt_sha256 values "
                f"({_listed([s[:12] + '...' for s in distinct])})"
            )
        for sha in distinct:
            sub = grp.loc[shas == sha]
            known = resolved.get((str(rubric), rev, _key(sub["prompt_sha256"].iloc[0])))
            if known is None:
                problems.append(f"{len(sub)} judgments of unknown rubric {rubric!r}")
                n_bad += len(sub)
                continue
            where = "the packaged prompt" if known.path is None else f"the rubric file {known.path}"
            if rev is None or int(rev) != known.revision:
                problems.append(
                    f"{len(sub)} judgments of {rubric} at revision {revision}, but "
                    f"{where} is revision {known.revision}"
                )
                n_bad += len(sub)
                continue
            used[f"{rubric} r{known.revision}"] = known
            if sha != known.sha256:
                problems.append(
                    f"{len(sub)} of {len(grp)} {rubric} r{known.revision} "
                    f"judgments have prompt_sha256 {sha[:12]}..., not "
                    f"{known.sha256[:12]}... ({where})"
                )
                n_bad += len(sub)
    mixed = j.groupby("rubric", observed=True)["prompt_revision"].agg(
        lambda s: sorted(set(s.dropna().astype(int)))
    )
    mixing = [
        f"{rubric} mixes prompt revisions {revs}" for rubric, revs in mixed.items() if len(revs) > 1
    ]
    if problems:
        return (
            "fail",
            f"{n_bad} of {len(j)} judgments fail the pin: " + "; ".join(problems + mixing) + ".",
        )
    revs = ", ".join(
        f"{k} ({r.sha256[:12]}...{'' if r.path is None else ', ' + str(r.path)})"
        for k, r in sorted(used.items())
    )
    if mixing:
        return (
            "warn",
            f"Every judgment matches its prompt ({revs}), but "
            + "; ".join(mixing)
            + ": report each revision separately or rejudge with one.",
        )
    packaged = all(r.path is None for r in used.values())
    whose = "the packaged prompt" if packaged else "their rubric's prompt"
    return ("pass", f"All {len(j)} judgments match {whose}: {revs}.")


def _disagreements(frame: pd.DataFrame) -> pd.DataFrame:
    """Per rubric and pair of judges: units both judged ok, how many differ, distinct pairs."""
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    keys = ["task_id", "replicate", "_order"]
    ok = ok.assign(
        _order=_frame_str(ok["order"]),
        _judge=ok["judge"].astype(str),
        _rubric=ok["rubric"].astype(str),
        _outcome=ok["outcome"].astype(str),
    )
    parts = []
    for rubric, grp in ok.groupby("_rubric"):
        wide = grp.drop_duplicates([*keys, "_judge"], keep="last").pivot(
            index=keys, columns="_judge", values="_outcome"
        )
        counts = disagreement_counts(wide)
        answered = wide.notna()
        pair_of = wide.index.droplevel("_order")
        n_pairs = [
            pair_of[(answered[a] & answered[b]).to_numpy()].nunique()
            for a, b in zip(counts["judge_a"], counts["judge_b"], strict=True)
        ]
        parts.append(
            counts.assign(
                rubric=rubric,
                unit="pair-orders" if (grp["_order"] != "").any() else "pairs",
                n_pairs=pd.Series(n_pairs, index=counts.index, dtype="int64"),
            )
        )
    columns = ["rubric", "judge_a", "judge_b", "n", "n_pairs", "disagreements", "unit"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def _check_disagreement(frame: pd.DataFrame, threshold: float, by_arms: bool = False) -> tuple:
    """Two judges' disagreement per rubric (``by_arms``: per pair of arms) against the trigger."""
    groups = frame.groupby(["arm_a", "arm_b"], sort=False) if by_arms else [(None, frame)]
    texts, above, within, unmeasured, failing = [], [], [], [], set()
    for arms, grp in groups:
        d = _disagreements(grp)
        pair = f"{arms[0]} vs {arms[1]}" if by_arms else ""
        if d.empty and by_arms:
            unmeasured.append(pair)
        for r in d.itertuples():
            where = f"{pair} ({r.rubric})" if by_arms else str(r.rubric)
            judges = f"{where}: {r.judge_a} vs {r.judge_b}"
            if r.n == 0:
                unmeasured.append(where)
                texts.append(f"{judges} share no ok pair")
                continue
            rate = r.disagreements / r.n
            of_pairs = f" ({r.n_pairs} pairs)" if r.unit == "pair-orders" else ""
            text = (
                f"{judges} disagree on {r.disagreements} of {r.n} {r.unit}{of_pairs}, "
                f"{_pct(rate)} of the {r.unit}"
            )
            (above if rate > threshold else within).append(text)
            texts.append(text + (" > threshold" if rate > threshold else ""))
            if rate > threshold:
                failing.add(str(r.rubric))
    status = "fail" if above else "warn" if unmeasured else "pass"
    trigger = f"the {_pct(threshold)} disagreement trigger"
    cure = "(re-curate the tasks or add a third judge)"
    if not by_arms:
        if not texts:
            return (
                "warn",
                "No rubric has two judges with ok verdicts: disagreement cannot be measured.",
            )
        lead = {
            "pass": f"Within {trigger}",
            "warn": "Not measurable for every judge pair",
            "fail": f"Above {trigger} {cure}",
        }[status]
        return status, f"{lead}: " + "; ".join(texts) + ".", sorted(failing)
    if above:
        rest = f". Within it: {'; '.join(within)}." if within else "."
        lead = f"Above {trigger} for {len(above)} pair(s) of arms {cure}: "
        return status, lead + "; ".join(above) + rest, sorted(failing)
    if not within:
        return "warn", "No pair of arms has two judges with ok verdicts: not measurable."
    extra = f" Not measurable for {', '.join(unmeasured)}." if unmeasured else ""
    return status, f"Within {trigger} for every pair of arms: " + "; ".join(within) + "." + extra


def _check_coverage(frame: pd.DataFrame, pairs: pd.DataFrame) -> tuple:
    if "over" in pairs.columns:
        pairs = pairs.loc[~pairs["over"]]
    want = pairs[["task_id", "replicate"]].drop_duplicates()
    f = frame.assign(_judge=frame["judge"].astype(str), _rubric=frame["rubric"].astype(str))
    combos = f[["_rubric", "_judge"]].drop_duplicates().sort_values(["_rubric", "_judge"])
    seen = f[["_rubric", "_judge", "task_id", "replicate"]].drop_duplicates()
    judged = seen.merge(want, on=["task_id", "replicate"]).groupby(["_rubric", "_judge"]).size()
    lack = len(want) - judged.reindex(pd.MultiIndex.from_frame(combos), fill_value=0)
    missing = [
        f"{judge} on {rubric}: {n} of {len(want)} pairs unjudged"
        for (rubric, judge), n in lack.items()
        if n
    ]
    if missing:
        return (
            "warn",
            "Some in-budget pairs were not judged by every judge: " + _listed(missing) + ".",
        )
    return (
        "pass",
        f"All {len(want)} in-budget pairs were judged by each of the "
        f"{len(combos)} (rubric, judge) combinations.",
    )


def _check_orders(
    j: pd.DataFrame, alpha: float, tolerance: float, rubrics_arg: object = None
) -> tuple:
    resolved = _resolve_each(j, rubrics_arg)
    ordered = sorted(
        {name for (name, _, _), r in resolved.items() if r is not None and r.needs_order}
    )
    if not ordered:
        return ("pass", "No judgments of a rubric with a presentation order.")
    parts, status = [], "pass"
    for rubric in ordered:
        g = j.loc[j["rubric"].astype(str) == rubric]
        if "status" in g.columns:  # no_answer rows stand for pairs never shown to a judge
            g = g.loc[g["status"].astype(str) != "no_answer"]
        order = _frame_str(g["order"])
        n_null = int((order == "").sum())
        shown = g.assign(_order=order).loc[order != "", ["task_id", "replicate", "_order"]]
        shown = shown.drop_duplicates()
        n_wf, n = int((shown["_order"] == "with_first").sum()), len(shown)
        n_pairs = len(shown[["task_id", "replicate"]].drop_duplicates())
        if n == 0:
            parts.append(f"{rubric}: no judgment has an order")
            status = "warn"
            continue
        share = n_wf / n
        p = float(sign_test_p(n_wf, n - n_wf))
        off = p < alpha or abs(share - 0.5) > tolerance
        parts.append(
            f"{rubric}: WITH shown first in {n_wf} of {n} pair-orders ({n_pairs} pairs), "
            f"{_pct(share)} of the pair-orders (exact binomial p = {p:.3g})"
            + (f", {n_null} judgments without an order" if n_null else "")
        )
        if off or n_null:
            status = "warn"
    unbalanced = "Orders unbalanced (show both orders per pair, or balance the seeded order)"
    lead = "Orders balanced" if status == "pass" else unbalanced
    return (status, f"{lead}: " + "; ".join(parts) + ".")


def _check_failures(frame: pd.DataFrame, threshold: float) -> tuple:
    judged = frame.loc[frame["status"].astype(str) != "no_answer"]
    if judged.empty:
        return ("warn", "No judged pairs.")
    st, keys = judged["status"].astype(str), ["_rubric", "_judge"]
    g = judged.assign(
        _inv=st == "invalid",
        _err=st == "error",
        _ordered=_frame_str(judged["order"]) != "",
        _judge=judged["judge"].astype(str),
        _rubric=judged["rubric"].astype(str),
    )
    agg = g.groupby(keys).agg(
        inv=("_inv", "sum"), err=("_err", "sum"), n=("_inv", "size"), ordered=("_ordered", "any")
    )
    n_pairs = g.drop_duplicates([*keys, "task_id", "replicate"]).groupby(keys).size()
    parts, over = [], []
    for (rubric, judge), r in agg.iterrows():
        n, bad = int(r["n"]), int(r["inv"] + r["err"])
        unit = "pair-orders" if r["ordered"] else "pairs"
        of_pairs = f" ({int(n_pairs[(rubric, judge)])} pairs)" if r["ordered"] else ""
        text = (
            f"{judge} on {rubric}: {bad} of {n} {unit}{of_pairs}, {_pct(bad / n)} of the "
            f"{unit} ({int(r['inv'])} invalid, {int(r['err'])} error)"
        )
        parts.append(text)
        if bad / n > threshold:
            over.append(text)
    if over:
        lead = f"Invalid + error above {_pct(threshold)} of a judge's verdicts: "
        return ("warn", lead + "; ".join(over) + ".")
    lead = f"Invalid + error at most {_pct(threshold)} of each judge's verdicts: "
    return ("pass", lead + "; ".join(parts) + ".")


_NO_PLAN = "No declared analysis plan (plan.toml in the data directory)"


def _check_plan_time(
    plan: Plan | None, judgments: pd.DataFrame | None, frame: pd.DataFrame | None
) -> tuple:
    if plan is None:
        return ("warn", f"{_NO_PLAN}: the primary endpoint was not fixed before judging.")
    if plan.written_at is not None:
        when, source = pd.Timestamp(plan.written_at), "its written_at"
    elif plan.file_mtime is not None:
        when = pd.Timestamp(plan.file_mtime)
        source = "the file's modification time (no written_at given; a copy resets it)"
    else:
        return ("warn", "The plan gives no written_at and has no file time.")
    if judgments is None or not len(judgments) or "created_at" not in judgments.columns:
        if frame is not None and len(frame):
            return (
                "warn",
                f"Plan written at {when.isoformat()} ({source}); the judgments' creation "
                "times are unknown (a verdict frame has none): pass the judgments to check.",
            )
        return ("pass", f"Plan written at {when.isoformat()} ({source}); no judgments yet.")
    first = judgments["created_at"].min()
    gap = (first - when) / pd.Timedelta(hours=1)
    text = (
        f"Plan written at {when.isoformat()} ({source}); first judgment created at "
        f"{first.isoformat()}"
    )
    if not when < first:
        return ("fail", f"{text}: the plan was written {-gap:.1f} h after judging began.")
    return ("pass", f"{text}: {gap:.1f} h before.")


def _differ(what: str, planned: set[str], seen: set[str]) -> str | None:
    if planned == seen:
        return None
    parts = [f"planned but absent: {_listed(sorted(planned - seen))}"] if planned - seen else []
    parts += [f"not planned: {_listed(sorted(seen - planned))}"] if seen - planned else []
    return f"{what} differ ({'; '.join(parts)})"


def _check_plan_design(plan: Plan | None, runs: pd.DataFrame, j: pd.DataFrame | None) -> tuple:
    if plan is None:
        return ("warn", f"{_NO_PLAN}: the design was not compared with one.")
    problems: list[str] = []
    tasks = set(runs["task_id"].astype(str))
    if isinstance(plan.tasks, tuple):
        problems.append(_differ("tasks", set(plan.tasks), tasks))
    elif plan.tasks is not None and plan.tasks != len(tasks):
        problems.append(f"{len(tasks)} tasks, {plan.tasks} planned")
    reps = runs.groupby(runs["task_id"].astype(str))["replicate"].nunique()
    if plan.replicates is not None:
        off = reps.loc[reps != plan.replicates]
        if len(off):
            items = [f"{t} ({n})" for t, n in off.items()]
            problems.append(
                f"{len(off)} of {len(reps)} tasks do not have the {plan.replicates} planned "
                f"replicates: {_listed(items)}"
            )
    has_j = j is not None and len(j) > 0
    if has_j:
        rubrics, judges = (set(j[c].astype(str)) for c in ("rubric", "judge"))
        if plan.rubrics is not None:
            problems.append(_differ("rubrics", set(plan.rubrics), rubrics))
        elif plan.primary_rubric not in rubrics:
            problems.append(f"primary rubric {plan.primary_rubric!r} has no judgments")
        if plan.judges is not None:
            problems.append(_differ("judges", set(plan.judges), judges))
        elif plan.primary_judge is not None and plan.primary_judge not in judges:
            problems.append(f"primary judge {plan.primary_judge!r} has no judgments")
        if plan.consensus is not None and len(judges) < 2:
            problems.append(f"consensus ({plan.consensus}) planned but only {len(judges)} judge")
    problems = [p for p in problems if p]
    design = f"{len(tasks)} tasks, replicates per task {sorted(set(reps))}"
    if problems:
        return (
            "fail",
            f"The dataset differs from the plan ({plan.sha256[:12]}): " + "; ".join(problems) + ".",
        )
    if not has_j:
        return (
            "warn",
            f"Tasks and replicates as planned ({design}); no judgments yet: rubrics and "
            "judges not compared.",
        )
    return (
        "pass",
        f"As planned ({plan.sha256[:12]}): {design}; primary {plan.primary_rubric} / "
        f"{plan.primary_judge_name}.",
    )


def _per_pair(tasks, runs, judgments, options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each check's row over the pairs of arms, from the two-arm :func:`audit` of every pair."""
    per: dict[str, list[tuple[str, str, str]]] = {}
    for a, b, j, r in by_pair_of_arms(judgments, runs):
        table = audit(tasks, r, j.drop(columns=["arm_a", "arm_b"]), **options)
        for row in table.itertuples(index=False):
            per.setdefault(row.check, []).append((f"{a} vs {b}", str(row.status), row.detail))
    out = {}
    for check, rows in per.items():
        worst = max((st for _, st, _ in rows), key=AUDIT_STATUSES.index)
        if len({(st, d) for _, st, d in rows}) == 1:  # a check that reads no pair's arms
            detail = f"{rows[0][2]} (the same for each of the {len(rows)} pairs of arms)"
        elif worst == "pass":
            detail = f"Every pair of arms passes ({len(rows)}): " + " | ".join(
                f"{name}: {d}" for name, _, d in rows
            )
        else:
            bad = [f"{name} ({st}): {d}" for name, st, d in rows if st != "pass"]
            detail = f"{len(bad)} of {len(rows)} pairs of arms: " + " | ".join(bad)
        out[check] = _row(check, worst, detail)
    return out


def _audit_arm_pairs(tasks, runs, judgments, options: dict[str, Any]) -> pd.DataFrame:
    """The K-arm audit: pairing-free checks once, the others per pair of arms (the worst)."""
    rubrics, threshold = options["rubrics"], options["disagreement_threshold"]
    frame = verdict_frame(judgments, runs, tasks, rubrics=rubrics)
    done = {
        check: _row(check, *result)
        for check, result in (
            ("judge_families", _check_families(judgments, options["families"])),
            ("canonical_before_runs", _check_canonical(tasks, runs)),
            ("prompt_hash_pinned", _check_hashes(judgments, rubrics)),
            ("judge_disagreement", _check_disagreement(frame, threshold, by_arms=True)),
        )
    }
    rest = _per_pair(tasks, runs, judgments, options)
    rows = [
        done.get(check)
        or rest.get(check)
        or _row(check, "unknown", "Not evaluated: no judged pair of arms.")
        for check in AUDIT_CHECKS
    ]
    return _table(rows)


@dataclass(frozen=True)
class AuditLimits:
    """Where the audit's secondary checks warn.

    ``failure_rate``: share of invalid + error verdicts per judge and rubric;
    ``no_answer_rate``: share of over-budget pairs; ``order_alpha`` / ``order_tolerance``:
    the exact binomial test and distance from 1/2 of the blind rubric's WITH-first share;
    ``budget_alpha``: the test of over-budget asymmetry between the arms.
    """

    failure_rate: float = 0.05
    no_answer_rate: float = 0.10
    order_alpha: float = 0.05
    order_tolerance: float = 0.10
    budget_alpha: float = 0.05


def audit(
    tasks: pd.DataFrame | Dataset,
    runs: pd.DataFrame | None = None,
    judgments: pd.DataFrame | None = None,
    *,
    frame: pd.DataFrame | None = None,
    agent_family: str | None = None,
    families: Mapping[str, str] | None = None,
    disagreement_threshold: float = DISAGREEMENT_TRIGGER,
    limits: AuditLimits | None = None,
    plan: Plan | None = None,
    rubrics: object = None,
) -> pd.DataFrame:
    """Check a dataset against the seeds' methodology rules.

    Parameters
    ----------
    tasks : DataFrame or Dataset
        Tasks, or a whole :class:`~evalstats.Dataset` (then no ``runs`` and ``judgments``).
    runs, judgments : DataFrame
        Runs and (optional) judgments; without them or ``frame`` the judge checks are unknown.
    frame : DataFrame, optional
        The verdict frame, if already built.
    agent_family : str, optional
        Family of the agent under test, when its ``agent_model`` strings do not tell.
    families : mapping of str to str, optional
        Explicit ``model string -> family`` entries (see :func:`model_family`).
    disagreement_threshold : float, default 0.20
        The seed's trigger on the share of pairs two judges disagree on.
    limits : AuditLimits, optional
        Where the other checks warn.
    plan : Plan, optional
        The declared analysis plan (default: the Dataset's); without one the plan checks warn.
    rubrics : Rubric, path, or a list of them, optional
        Rubric files besides the built-in ones and the data directory's ``rubrics/``.

    Returns
    -------
    DataFrame
        One row per check: ``check``, ``status`` (ordered), ``detail``, ``rule``;
        ``attrs["rubrics"]`` maps ``judge_disagreement`` to the rubrics it fails on.

    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=4, n_replicates=2, seed=3)
    >>> table = audit(evalstats.load_dir(sim.out_dir))
    >>> table.loc[table["check"] == "canonical_before_runs", "status"].item()
    'pass'
    """
    if isinstance(tasks, Dataset):
        if runs is not None or judgments is not None:
            raise TypeError("pass either a Dataset or tasks, runs and judgments, not both")
        plan = tasks.plan if plan is None else plan
        tasks, runs, judgments = tasks.tasks, tasks.runs, tasks.judgments
    if runs is None:
        raise TypeError("audit() needs runs (or a Dataset)")
    lim = AuditLimits() if limits is None else limits
    if not isinstance(lim, AuditLimits):
        raise ParameterError(f"limits must be an AuditLimits, got {type(lim).__name__}")
    check_probability(disagreement_threshold, "disagreement_threshold")
    for f in fields(lim):
        check_probability(getattr(lim, f.name), f"limits.{f.name}")
    if "tokens" not in runs.columns:
        from .tokens import annotate_runs

        runs = annotate_runs(runs, tasks)
    arm_a = None if frame is not None or judgments is None else judgments.get("arm_a")
    if arm_a is not None and arm_a.notna().any():  # K arms: lines name the pair judged
        options = {"rubrics": rubrics, "families": families, "agent_family": agent_family}
        options |= {"disagreement_threshold": disagreement_threshold, "limits": lim, "plan": plan}
        return _audit_arm_pairs(tasks, runs, judgments, options)
    if frame is None and judgments is not None and len(judgments):
        frame = verdict_frame(judgments, runs, tasks, rubrics=rubrics)
    j = judgments if judgments is not None and len(judgments) else frame
    has_j = j is not None and len(j) > 0
    pairs = _pairs(runs)
    has_f = frame is not None and len(frame) > 0
    judges = sorted(set(j["judge"].astype(str))) if has_j else []
    # In AUDIT_CHECKS order: (whether its evidence is there, the check).
    checks: list[tuple[bool, Callable[[], tuple]]] = [
        (has_j, lambda: _check_self(runs, judges, families, agent_family, j)),
        (has_j, lambda: _check_families(j, families)),
        (True, lambda: _check_canonical(tasks, runs)),
        (True, lambda: _check_same_agent(pairs)),
        (True, lambda: _check_budgets(tasks, pairs, frame, lim.budget_alpha)),
        (has_j, lambda: _check_hashes(j, rubrics)),
        (has_f, lambda: _check_disagreement(frame, disagreement_threshold)),
        (True, lambda: _check_both_arms(runs)),
        (has_f, lambda: _check_coverage(frame, pairs)),
        (has_j, lambda: _check_orders(j, lim.order_alpha, lim.order_tolerance, rubrics)),
        (has_f, lambda: _check_failures(frame, lim.failure_rate)),
        (True, lambda: _check_tokens(runs)),
        (True, lambda: _check_no_answer(pairs, lim.no_answer_rate)),
        (True, lambda: _check_plan_time(plan, judgments, frame)),
        (True, lambda: _check_plan_design(plan, runs, j)),
    ]
    no = ("unknown", "No judgments given: not checked.")
    rows = [_row(c, *(f() if ok else no)) for c, (ok, f) in zip(AUDIT_CHECKS, checks, strict=True)]
    return _table(rows)
