"""The audit table's checks and statuses, and the wording its rows share."""

from __future__ import annotations

import pandas as pd

__all__ = ["AUDIT_CHECKS", "AUDIT_STATUSES", "audit_rows"]


# ``unknown``: the evidence a check needs is missing; it is never read as a pass.
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


_MAX_LISTED = 5


def _listed(items: list[str]) -> str:
    """At most a handful of items, then how many more."""
    shown = ", ".join(items[:_MAX_LISTED])
    more = len(items) - _MAX_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f} %"


def _row(check: str, status: str, detail: str) -> dict[str, str]:
    return {"check": check, "status": status, "detail": detail, "rule": AUDIT_CHECKS[check]}


def _table(rows: list[dict]) -> pd.DataFrame:
    """The audit table of check rows: ``check``, ``status`` (ordered), ``detail``, ``rule``;
    ``attrs["rubrics"]`` maps a check that fails per rubric (judge_disagreement) to them."""
    table = pd.DataFrame(rows, columns=["check", "status", "detail", "rule"])
    table["status"] = table["status"].astype(_STATUS_DTYPE)
    for col in ("check", "detail", "rule"):
        table[col] = table[col].astype("str")
    table.attrs["rubrics"] = {r["check"]: list(r["rubrics"]) for r in rows if r.get("rubrics")}
    return table


def _no_judgments(check: str) -> dict[str, str]:
    return _row(check, "unknown", "No judgments given: not checked.")


def _frame_str(s: pd.Series) -> pd.Series:
    """Values as plain strings, missing ones as "" (pandas 3 keeps NaN through astype(str))."""
    return pd.Series(
        [str(v) if not pd.isna(v) else "" for v in s.astype(object)], index=s.index, dtype=object
    )


def audit_rows(
    table: pd.DataFrame, status: str | tuple[str, ...] = ("fail", "unknown")
) -> pd.DataFrame:
    """The rows of an :func:`~evalstats.methodology.audit` table with the given status(es).

    For a headline or summary that must show what failed and what could not be checked.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"check": ["a", "b", "c"], "status": ["pass", "unknown", "fail"]})
    >>> audit_rows(t)["check"].tolist()
    ['b', 'c']
    >>> audit_rows(t, "pass")["check"].tolist()
    ['a']
    """
    wanted = (status,) if isinstance(status, str) else tuple(status)
    bad = [s for s in wanted if s not in AUDIT_STATUSES]
    if bad:
        raise ValueError(f"unknown audit status {bad[0]!r}; expected one of {AUDIT_STATUSES}")
    return table.loc[table["status"].astype(str).isin(wanted)].reset_index(drop=True)
