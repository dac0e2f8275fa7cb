"""Checks against the declared analysis plan (``plan.toml``): declared in time, design as planned."""

from __future__ import annotations

import pandas as pd

from ..plan import Plan
from ._rows import _listed, _row

_NO_PLAN = "No declared analysis plan (plan.toml in the data directory)"


def _check_plan_time(
    plan: Plan | None, judgments: pd.DataFrame | None, frame: pd.DataFrame | None
) -> dict[str, str]:
    check = "plan_before_judging"
    if plan is None:
        return _row(
            check, "warn", f"{_NO_PLAN}: the primary endpoint was not fixed before judging."
        )
    if plan.written_at is not None:
        when, source = pd.Timestamp(plan.written_at), "its written_at"
    elif plan.file_mtime is not None:
        when = pd.Timestamp(plan.file_mtime)
        source = "the file's modification time (no written_at given; a copy resets it)"
    else:
        return _row(check, "warn", "The plan gives no written_at and has no file time.")
    if judgments is None or not len(judgments) or "created_at" not in judgments.columns:
        if frame is not None and len(frame):
            return _row(
                check,
                "warn",
                f"Plan written at {when.isoformat()} ({source}); the judgments' creation "
                "times are unknown (a verdict frame has none): pass the judgments to check.",
            )
        return _row(
            check, "pass", f"Plan written at {when.isoformat()} ({source}); no judgments yet."
        )
    first = judgments["created_at"].min()
    gap = (first - when) / pd.Timedelta(hours=1)
    text = (
        f"Plan written at {when.isoformat()} ({source}); first judgment created at "
        f"{first.isoformat()}"
    )
    if not when < first:
        return _row(
            check, "fail", f"{text}: the plan was written {-gap:.1f} h after judging began."
        )
    return _row(check, "pass", f"{text}: {gap:.1f} h before.")


def _differ(what: str, planned: set[str], seen: set[str]) -> str | None:
    if planned == seen:
        return None
    parts = []
    if planned - seen:
        parts.append(f"planned but absent: {_listed(sorted(planned - seen))}")
    if seen - planned:
        parts.append(f"not planned: {_listed(sorted(seen - planned))}")
    return f"{what} differ ({'; '.join(parts)})"


def _check_plan_design(
    plan: Plan | None, runs: pd.DataFrame, j: pd.DataFrame | None
) -> dict[str, str]:
    check = "plan_design"
    if plan is None:
        return _row(check, "warn", f"{_NO_PLAN}: the design was not compared with one.")
    problems: list[str] = []
    tasks = set(runs["task_id"].astype(str))
    if isinstance(plan.tasks, tuple):
        problems.append(_differ("tasks", set(plan.tasks), tasks))
    elif plan.tasks is not None and plan.tasks != len(tasks):
        problems.append(f"{len(tasks)} tasks, {plan.tasks} planned")
    if plan.replicates is not None:
        reps = runs.groupby(runs["task_id"].astype(str))["replicate"].nunique()
        off = reps.loc[reps != plan.replicates]
        if len(off):
            items = [f"{t} ({n})" for t, n in off.items()]
            problems.append(
                f"{len(off)} of {len(reps)} tasks do not have the {plan.replicates} planned "
                f"replicates: {_listed(items)}"
            )
    has_j = j is not None and len(j) > 0
    if has_j:
        rubrics = set(j["rubric"].astype(str))
        judges = set(j["judge"].astype(str))
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
    design = (
        f"{len(tasks)} tasks, replicates per task "
        f"{sorted(set(runs.groupby('task_id', observed=True)['replicate'].nunique()))}"
    )
    if problems:
        return _row(
            check,
            "fail",
            f"The dataset differs from the plan ({plan.sha256[:12]}): " + "; ".join(problems) + ".",
        )
    if not has_j:
        return _row(
            check,
            "warn",
            f"Tasks and replicates as planned ({design}); no judgments yet: rubrics and "
            "judges not compared.",
        )
    return _row(
        check,
        "pass",
        f"As planned ({plan.sha256[:12]}): {design}; primary {plan.primary_rubric} / "
        f"{plan.primary_judge_name}.",
    )
