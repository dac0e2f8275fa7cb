"""evalstats: statistically honest reports from LLM-judge verdicts on WITH/WITHOUT runs.

The public surface is re-exported here; modules behind it are private details.

Names are resolved on first use (PEP 562, :func:`evalstats._surface.lazy_surface`), so
``import evalstats`` loads neither pandas nor scipy, no provider SDK, no matplotlib and no
notebook machinery; ``evalstats.win_rates`` loads the statistics when it is first touched.
``__all__`` and ``dir()`` list the whole surface; the README's API section documents it.

Examples
--------
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

# submodule -> the public names it defines (the README's API table lists each one).
__all__, __getattr__, __dir__ = lazy_surface(
    __name__,
    {
        ".errors": ["DataError", "EvalstatsError", "ParameterError", "ParseError"],
        ".frames": [
            "load_frame",
            "resolve_rubrics",
            "select_rubric",
            "verdict_frame",
            "wide_by_judge",
        ],
        ".judging": [
            "Journal",
            "JudgeSpec",
            "parse_judge",
            "plan_calls",
            "read_journal",
            "run_judges",
        ],
        ".labelsheet": ["draw_sheet", "read_sheet"],
        ".methodology": ["AUDIT_CHECKS", "audit", "model_family"],
        ".plan": ["Plan", "load_plan", "parse_plan"],
        ".records": [
            "Arms",
            "Dataset",
            "EvalstatsWarning",
            "load_arm_names",
            "load_arms",
            "load_dir",
            "load_judgments",
            "load_labels",
            "load_runs",
            "load_tasks",
            "pair_runs",
            "write_frame_atomic",
            "write_jsonl_atomic",
            "write_labels",
        ],
        ".simulation": ["Simulation", "SimulationParams", "draw_outcomes", "simulate"],
        # The statistics are curated in stats/__init__ and re-exported whole.
        ".stats": stats.__all__,
        ".summary": ["status_table"],
        ".tokens": ["annotate_runs", "count_tokens"],
    },
    submodules=["rubrics"],
)


if TYPE_CHECKING:  # what type checkers and IDEs see; nothing here runs
    from . import rubrics
    from .errors import DataError, EvalstatsError, ParameterError, ParseError
    from .frames import load_frame, resolve_rubrics, select_rubric, verdict_frame, wide_by_judge
    from .judging import Journal, JudgeSpec, parse_judge, plan_calls, read_journal, run_judges
    from .labelsheet import draw_sheet, read_sheet
    from .methodology import AUDIT_CHECKS, audit, model_family
    from .plan import Plan, load_plan, parse_plan
    from .records import (
        Arms,
        Dataset,
        EvalstatsWarning,
        load_arm_names,
        load_arms,
        load_dir,
        load_judgments,
        load_labels,
        load_runs,
        load_tasks,
        pair_runs,
        write_frame_atomic,
        write_jsonl_atomic,
        write_labels,
    )
    from .simulation import Simulation, SimulationParams, draw_outcomes, simulate
    from .stats import *  # noqa: F403
    from .summary import status_table
    from .tokens import annotate_runs, count_tokens
