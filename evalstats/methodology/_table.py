"""The audit itself: every check in table order, one row each."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from .._disagreement import DISAGREEMENT_TRIGGER
from ..errors import ParameterError
from ..plan import Plan
from ..records import Dataset
from ._arm_pairs import audit_arm_pairs, has_arm_pairs
from ._design import (
    _check_both_arms,
    _check_budgets,
    _check_canonical,
    _check_families,
    _check_no_answer,
    _check_same_agent,
    _check_self,
    _check_tokens,
    _pairs,
)
from ._judgments import (
    _check_coverage,
    _check_disagreement,
    _check_failures,
    _check_hashes,
    _check_orders,
)
from ._plan import _check_plan_design, _check_plan_time
from ._rows import _no_judgments, _table

__all__ = ["audit"]


def audit(
    tasks: pd.DataFrame | Dataset,
    runs: pd.DataFrame | None = None,
    judgments: pd.DataFrame | None = None,
    *,
    frame: pd.DataFrame | None = None,
    agent_family: str | None = None,
    families: Mapping[str, str] | None = None,
    disagreement_threshold: float = DISAGREEMENT_TRIGGER,
    failure_threshold: float = 0.05,
    no_answer_threshold: float = 0.10,
    order_alpha: float = 0.05,
    order_tolerance: float = 0.10,
    budget_alpha: float = 0.05,
    plan: Plan | None = None,
    rubrics: object = None,
) -> pd.DataFrame:
    """Check a dataset against the seeds' methodology rules.

    Parameters
    ----------
    tasks : DataFrame or Dataset
        From :func:`evalstats.load_tasks`, or the whole :class:`~evalstats.Dataset` from
        :func:`evalstats.load_dir` (then leave ``runs`` and ``judgments`` out).
    runs : DataFrame
        From :func:`evalstats.load_runs` with tasks (``tokens``, ``over_budget`` and
        ``tokens_mismatch`` columns); plain runs are annotated here.
    judgments : DataFrame, optional
        From :func:`evalstats.load_judgments`. Without it (and without ``frame``) the judge
        checks are ``warn`` with "not checked".
    frame : DataFrame, optional
        The verdict frame, if already built; otherwise built from the judgments.
    agent_family : str, optional
        Family of the agent under test, when its ``agent_model`` strings do not tell.
    families : mapping of str to str, optional
        Explicit ``model string -> family`` entries for judges or agents (see
        :func:`model_family`).
    disagreement_threshold : float, default 0.20
        Largest tolerated share of pairs on which two judges disagree (the seed's 20 %,
        :data:`evalstats._disagreement.DISAGREEMENT_TRIGGER`).
    failure_threshold : float, default 0.05
        Largest tolerated share of ``invalid`` + ``error`` verdicts per judge and rubric.
    no_answer_threshold : float, default 0.10
        Largest share of over-budget pairs before a warning.
    order_alpha, order_tolerance : float, default 0.05, 0.10
        Blind-rubric orders warn when the exact binomial test of a 1/2 WITH-first share has
        p < ``order_alpha`` or the share is more than ``order_tolerance`` from 1/2.
    budget_alpha : float, default 0.05
        Level of the exact binomial test of over-budget asymmetry between the arms.
    plan : Plan, optional
        The declared analysis plan (:func:`evalstats.load_plan`); taken from the Dataset
        when one is given. Without one, the two plan checks warn.
    rubrics : Rubric, path, or a list of them, optional
        Rubric files the judgments were made with, besides the built-in rubrics and the
        files in the data directory's ``rubrics/`` (:func:`evalstats.frames.resolve_rubrics`).
        ``prompt_hash_pinned`` fails judgments whose ``prompt_sha256`` is not their
        rubric's, and one name and revision judged with several texts; it warns when the
        judgments mix revisions of one rubric.

    Returns
    -------
    DataFrame
        One row per check (see the module docstring), in a fixed order: ``check`` (stable
        id), ``status`` (ordered categorical pass < warn < fail), ``detail`` (a sentence with
        the numbers) and ``rule`` (the seed text it enforces). ``attrs["rubrics"]`` maps a
        failing check that is per rubric (``judge_disagreement``) to the rubrics it fails on.

    Examples
    --------
    >>> import tempfile, evalstats
    >>> from evalstats.methodology import audit
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=4, n_replicates=2, seed=3)
    >>> table = audit(evalstats.load_dir(sim.out_dir))
    >>> table.loc[table["check"] == "canonical_before_runs", "status"].item()
    'pass'
    >>> table.columns.tolist()
    ['check', 'status', 'detail', 'rule']
    """
    if isinstance(tasks, Dataset):
        if runs is not None or judgments is not None:
            raise TypeError("pass either a Dataset or tasks, runs and judgments, not both")
        ds = tasks
        tasks, runs, judgments = ds.tasks, ds.runs, ds.judgments
        plan = ds.plan if plan is None else plan
    if runs is None:
        raise TypeError("audit() needs runs (or a Dataset)")
    for name, value in (
        ("disagreement_threshold", disagreement_threshold),
        ("failure_threshold", failure_threshold),
        ("no_answer_threshold", no_answer_threshold),
        ("order_alpha", order_alpha),
        ("order_tolerance", order_tolerance),
        ("budget_alpha", budget_alpha),
    ):
        if not 0.0 <= float(value) <= 1.0:
            raise ParameterError(f"{name} must be in [0, 1], got {value}")
    if "tokens" not in runs.columns:
        from ..tokens import annotate_runs

        runs = annotate_runs(runs, tasks)
    if frame is None and has_arm_pairs(judgments):
        # K arms: the pairs of arms are checked one by one (methodology._arm_pairs).
        return audit_arm_pairs(
            tasks,
            runs,
            judgments,
            rubrics=rubrics,
            families=families,
            agent_family=agent_family,
            disagreement_threshold=disagreement_threshold,
            failure_threshold=failure_threshold,
            no_answer_threshold=no_answer_threshold,
            order_alpha=order_alpha,
            order_tolerance=order_tolerance,
            budget_alpha=budget_alpha,
            plan=plan,
            two_arm_audit=audit,
        )
    if frame is None and judgments is not None and len(judgments):
        from ..frames import verdict_frame

        frame = verdict_frame(judgments, runs, tasks, rubrics=rubrics)
    j = judgments if judgments is not None and len(judgments) else frame
    has_j = j is not None and len(j) > 0
    pairs = _pairs(runs)

    checks: list[Callable[[], dict[str, str]]] = [
        lambda: (
            _check_self(runs, sorted(set(j["judge"].astype(str))), families, agent_family, j)
            if has_j
            else _no_judgments("judge_not_self")
        ),
        lambda: _check_families(j, families) if has_j else _no_judgments("judge_families"),
        lambda: _check_canonical(tasks, runs),
        lambda: _check_same_agent(pairs),
        lambda: _check_budgets(tasks, pairs, frame, budget_alpha),
        lambda: _check_hashes(j, rubrics) if has_j else _no_judgments("prompt_hash_pinned"),
        lambda: (
            _check_disagreement(frame, disagreement_threshold)
            if frame is not None and len(frame)
            else _no_judgments("judge_disagreement")
        ),
        lambda: _check_both_arms(runs),
        lambda: (
            _check_coverage(frame, pairs)
            if frame is not None and len(frame)
            else _no_judgments("judgment_coverage")
        ),
        lambda: (
            _check_orders(j, order_alpha, order_tolerance, rubrics)
            if has_j
            else _no_judgments("blind_order_balance")
        ),
        lambda: (
            _check_failures(frame, failure_threshold)
            if frame is not None and len(frame)
            else _no_judgments("judge_failure_rate")
        ),
        lambda: _check_tokens(runs),
        lambda: _check_no_answer(pairs, no_answer_threshold),
        lambda: _check_plan_time(plan, judgments, frame),
        lambda: _check_plan_design(plan, runs, j),
    ]
    rows = [c() for c in checks]
    return _table(rows)
