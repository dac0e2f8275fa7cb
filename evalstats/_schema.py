"""Column names and dtypes of the data contract, defined once (DESIGN.md, "Data contract")."""

from __future__ import annotations

import pandas as pd

ARMS = ("with", "without")
ORDERS = ("with_first", "without_first")
# K arms: which arm of the judged pair (arm_a, arm_b) was shown first (blind-pair).
PAIR_ORDERS = ("a_first", "b_first")
# "conflict": two different successful answers for one judge call (see frames.verdict_frame).
STATUSES = ("ok", "no_answer", "invalid", "error", "conflict")
# Ordered so that loss < tie < win: weighted kappa and sorting rely on it.
OUTCOMES = ("loss", "tie", "win")
# Which arm of a pair ran over its task's budget (NA when neither did).
OVER_BUDGET_ARMS = ("with", "without", "both")

ARM_DTYPE = pd.CategoricalDtype(list(ARMS))
ORDER_DTYPE = pd.CategoricalDtype(list(ORDERS))
PAIR_ORDER_DTYPE = pd.CategoricalDtype(list(PAIR_ORDERS))
STATUS_DTYPE = pd.CategoricalDtype(list(STATUSES))
OUTCOME_DTYPE = pd.CategoricalDtype(list(OUTCOMES), ordered=True)
OVER_BUDGET_DTYPE = pd.CategoricalDtype(list(OVER_BUDGET_ARMS))

BLIND_DIMENSIONS = ("correctness", "specificity", "completeness", "hallucination_safety")

# name -> (kind, required). kinds: str, int, float, bool, datetime, list, arm, order
TASK_FIELDS: dict[str, tuple[str, bool]] = {
    "task_id": ("str", True),
    "prompt": ("str", True),
    "canonical_answer": ("str", True),
    "canonical_written_at": ("datetime", True),
    "budget_tokens": ("int", True),
    "budget_wall_s": ("float", True),
    "tags": ("list", False),
}

RUN_FIELDS: dict[str, tuple[str, bool]] = {
    "task_id": ("str", True),
    "replicate": ("int", True),
    "arm": ("arm", True),
    "agent_model": ("str", True),
    "answer": ("str", True),
    "transcript": ("str", False),
    "files_inspected": ("list", False),
    "wall_s": ("float", True),
    "started_at": ("datetime", True),
    "reported_tokens": ("int", False),
    # The run's own outcome (a test suite, a grader): replicates() reads it.
    "passed": ("bool", False),
}

JUDGMENT_FIELDS: dict[str, tuple[str, bool]] = {
    "judgment_id": ("str", True),
    "task_id": ("str", True),
    "replicate": ("int", True),
    "judge": ("str", True),
    "rubric": ("str", True),
    "prompt_revision": ("int", True),
    "prompt_sha256": ("str", True),
    "order": ("order", False),
    "raw": ("str", False),
    "created_at": ("datetime", True),
    "input_tokens": ("int", False),
    "output_tokens": ("int", False),
    "usd": ("float", False),
    "latency_s": ("float", False),
    "error": ("str", False),
    # Written by the judge runner; optional for hand-made files.
    "model_id": ("str", False),
    "request_id": ("str", False),
    "temperature": ("float", False),
    "max_tokens": ("int", False),
    "call_key": ("str", False),
    # ok | failed (retried on a rerun) | failed_permanent | truncated (not re-sent by itself)
    "call_status": ("str", False),
    # Spend counted against max_usd: the larger of the claimed and the plausible cost.
    "usd_counted": ("float", False),
    # Attempts sent, then unanswered (timed out, interrupted): each counted at its worst case.
    "maybe_billed": ("int", False),
    # Why the claimed usage is implausible (e.g. output_tokens above max_tokens), else null.
    "flag": ("str", False),
    # The agent family a judge of that same family was run against, allowed explicitly
    # (``evalstats judge --allow-same-family``); null when no such override was given.
    "same_family_allowed": ("str", False),
    # K arms: the pair the judge was asked about (outcome from arm_a's view); null (both)
    # for the seeds' two arms, which read as with / without.
    "arm_a": ("str", False),
    "arm_b": ("str", False),
    # What was judged: the pair's answers (a change makes the verdict stale), the request body.
    "runs_sha256": ("str", False),
    "request_sha256": ("str", False),
}

# The long verdict frame, one judgment of a pair of arms per row, outcome from arm_a's view;
# the ``with_*`` / ``*_with`` columns and "with_first" are arm_a's side (the WITH role).
VERDICT_COLUMNS: tuple[str, ...] = (
    "task_id", "replicate", "arm_a", "arm_b", "judge", "rubric", "order", "status",
    "over_budget_arm", "outcome", "label", "uncertainty",
    *(f"{arm}_{dim}" for arm in ARMS for dim in BLIND_DIMENSIONS),
    "judge_cost_ratio", "cost_ratio", "tokens_with", "tokens_without", "wall_with_s",
    "wall_without_s", "judge_input_tokens", "judge_output_tokens", "judge_usd", "judgment_id",
    "prompt_revision", "prompt_sha256", "reasoning", "raw", "parse_error",
)  # fmt: skip
