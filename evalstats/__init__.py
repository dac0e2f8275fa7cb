"""evalstats: statistically honest reports from LLM-judge verdicts on runs of coding agents.

The root holds what a newcomer uses: load a data directory, judge it, build the verdict frame,
the main statistics (:mod:`evalstats.stats` has all of them), the audit and the simulator. Names
resolve on first use (:func:`evalstats._surface.lazy_surface`), so ``import evalstats`` loads
neither pandas nor scipy; docs/reference.md documents every public name.

>>> import evalstats
>>> evalstats.DataError.__name__, "win_rates" in evalstats.__all__
('DataError', True)
"""

# The TYPE_CHECKING imports at the bottom are what type checkers see of the lazy names.
# ruff: noqa: F401

from __future__ import annotations

from typing import TYPE_CHECKING

from . import stats
from ._surface import lazy_surface

__version__ = "0.1.0"

# submodule -> the root names it provides; each is defined in (or resolved through) that module.
__all__, __getattr__, __dir__ = lazy_surface(
    __name__,
    {
        ".errors": ["DataError", "EvalstatsError", "ParameterError", "ParseError"],
        ".records": [
            "Arms",
            "Dataset",
            "EvalstatsWarning",
            "load_arms",
            "load_dir",
            "load_judgments",
            "load_labels",
            "load_runs",
            "load_tasks",
            "pair_runs",
            "write_labels",
        ],
        ".frames": ["load_frame", "select_rubric", "verdict_frame", "wide_by_judge"],
        ".labelsheet": ["draw_sheet", "read_sheet"],
        ".plan": ["Plan", "load_plan"],
        ".judging": ["JudgeOptions", "JudgeSpec", "plan_calls", "read_journal", "run_judges"],
        ".methodology": ["AUDIT_CHECKS", "audit", "model_family"],
        ".simulation": ["SimulationParams", "simulate"],
        ".summary": ["status_table"],
        ".tokens": ["count_tokens"],
        # The statistics a first report uses; the rest through evalstats.stats.
        ".stats": [
            "arm_costs",
            "cohen_kappa",
            "compare",
            "consensus",
            "cost_ratios",
            "design_coverage",
            "fleiss_kappa",
            "gwet_ac1",
            "judge_agreement",
            "judge_spend",
            "krippendorff_alpha",
            "labeler_agreement",
            "min_detectable_net_win",
            "missing_bounds",
            "monitor",
            "pareto",
            "position_bias",
            "ppi_win_rates",
            "rank",
            "rank_sets",
            "replicates",
            "summarize",
            "tasks_needed",
            "win_rates",
        ],
    },
    submodules=["rubrics"],
)


if TYPE_CHECKING:  # what type checkers and IDEs see; nothing here runs
    from . import rubrics
    from .errors import DataError, EvalstatsError, ParameterError, ParseError
    from .frames import load_frame, select_rubric, verdict_frame, wide_by_judge
    from .judging import JudgeOptions, JudgeSpec, plan_calls, read_journal, run_judges
    from .labelsheet import draw_sheet, read_sheet
    from .methodology import AUDIT_CHECKS, audit, model_family
    from .plan import Plan, load_plan
    from .records import (
        Arms,
        Dataset,
        EvalstatsWarning,
        load_arms,
        load_dir,
        load_judgments,
        load_labels,
        load_runs,
        load_tasks,
        pair_runs,
        write_labels,
    )
    from .simulation import SimulationParams, simulate
    from .stats import (
        arm_costs,
        cohen_kappa,
        compare,
        consensus,
        cost_ratios,
        design_coverage,
        fleiss_kappa,
        gwet_ac1,
        judge_agreement,
        judge_spend,
        krippendorff_alpha,
        labeler_agreement,
        min_detectable_net_win,
        missing_bounds,
        monitor,
        pareto,
        position_bias,
        ppi_win_rates,
        rank,
        rank_sets,
        replicates,
        summarize,
        tasks_needed,
        win_rates,
    )
    from .summary import status_table
    from .tokens import count_tokens
