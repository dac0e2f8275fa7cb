"""Methodology audit: the seeds' anti-gaming rules as a pass / unknown / warn / fail table.

``unknown`` means the evidence a check needs is missing (no judgments, no runs, a model
family that cannot be told, no token counts): never a pass. :func:`audit_rows` picks the
rows of given statuses (by default ``fail`` and ``unknown``) for a headline.

Each check reads the tasks, runs and judgments (and the verdict frame built from them) and
returns one row: a stable ``check`` id, a ``status``, a ``detail`` sentence carrying the
numbers, and the ``rule`` it enforces, quoted short from the seed prompts.

Checks, in table order:

``judge_not_self``
    Every judge is of a different model family from every agent under test (warn otherwise,
    and when a family cannot be told from the model string).
``judge_families``
    Each rubric was judged by at least two judges of different families (fail otherwise).
``canonical_before_runs``
    Each task's ``canonical_written_at`` is strictly before its first run's ``started_at``.
``same_agent_both_arms``
    Both runs of a pair come from the same ``agent_model``: the tool is the only difference.
``budgets_symmetric``
    Budgets are per task and therefore identical for both arms by construction; what can go
    wrong is checked instead: every budget is positive (a zero budget turns every pair into
    ``no_answer``), over-budget pairs are scored ``no_answer`` and never as a verdict, and the
    budget does not bind one arm more than the other (exact binomial test on the pairs where
    exactly one arm ran over; warn at p < 0.05, since excluding those pairs from the headline
    is then informative missingness and the ``no_answer``-as-loss view must be reported).
``prompt_hash_pinned``
    Every judgment's ``prompt_sha256`` equals the packaged rubric's sha256 for its
    ``prompt_revision``, and one rubric never mixes revisions (fail otherwise).
``judge_disagreement``
    Per rubric and pair of judges, on pairs (and orders) both judged ``ok``: the share of
    differing outcomes is at most the threshold (20 %: the seed's methodology trigger, fail
    above; warn when two judges share no ``ok`` pair).
``both_arms_present``
    Every (task, replicate) has a WITH and a WITHOUT run (fail otherwise).
``judgment_coverage``
    Every in-budget pair was judged by every judge of every rubric (warn otherwise: selective
    judging biases the comparison between judges).
``blind_order_balance``
    For rubrics that show the arms in an order (blind-pair), WITH-first and WITHOUT-first
    pair-orders, counted once per (task, replicate, order), are balanced: warn when an exact
    binomial test rejects 1/2 at ``order_alpha`` or the share is more than ``order_tolerance``
    from 1/2.
``judge_failure_rate``
    Per rubric and judge, ``invalid`` + ``error`` verdicts are at most ``failure_threshold``
    of the judgments (warn above).
``reported_tokens``
    No run's self-reported token count disagrees with the cl100k_base count (warn otherwise;
    the count is used either way).
``no_answer_rate``
    At most ``no_answer_threshold`` of the pairs are over budget (warn above).
``plan_before_judging``
    The declared analysis plan (``plan.toml``, :mod:`evalstats.plan`) was written before the
    first judgment: its ``written_at``, or the file's modification time when it gives none
    (the detail says which; a copy resets an mtime, so ``written_at`` is the one to trust),
    is strictly before the earliest judgment ``created_at`` (fail otherwise). No plan: warn
    "no declared analysis plan".
``plan_design``
    The dataset is the planned design: the planned tasks (their count, or the listed ids),
    replicates per task, rubrics and judges, with the primary rubric and judge present
    (fail on any difference; warn without a plan, or when there are no judgments yet to
    compare rubrics and judges with).

Counts are named one way, as in the report's tables and figures: **pairs** are distinct
(task, replicate) WITH/WITHOUT pairs; **pair-orders** are judged presentations of a pair (a
blind rubric judged in both orders has two per pair). A detail that counts pair-orders also
gives the pairs they come from.

Layout: ``_rows`` (the checks and statuses, the rows' wording), ``_families`` (model families),
``_design``, ``_judgments`` and ``_plan`` (the checks by what they read) and ``_table``
(:func:`audit`, every check in table order).
"""

from __future__ import annotations

from ._families import model_family
from ._rows import AUDIT_CHECKS, AUDIT_STATUSES, audit_rows
from ._table import audit

__all__ = ["AUDIT_CHECKS", "AUDIT_STATUSES", "audit", "audit_rows", "model_family"]
