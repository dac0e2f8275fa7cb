"""evalstats: statistically honest reports from LLM-judge verdicts on WITH/WITHOUT runs.

The public surface is re-exported here; modules behind it are private details.
"""

from __future__ import annotations

from . import rubrics
from .audit import AUDIT_CHECKS, audit, model_family
from .errors import DataError, EvalstatsError, ParseError
from .frames import verdict_frame, wide_by_judge
from .judging import Journal, JudgeSpec, parse_judge, plan_calls, read_journal, run_judges
from .records import (
    Dataset,
    EvalstatsWarning,
    load_dir,
    load_judgments,
    load_runs,
    load_tasks,
    pair_runs,
    write_frame_atomic,
    write_jsonl_atomic,
)
from .simulate import Simulation, SimulationParams, draw_outcomes, simulate
from .stats import *  # noqa: F403 - the statistics surface is curated in stats/__init__
from .stats import __all__ as _stats_all
from .summary import status_table
from .tokens import annotate_runs, count_tokens

__version__ = "0.1.0"

__all__ = [
    "AUDIT_CHECKS",
    "DataError",
    "Dataset",
    "EvalstatsError",
    "EvalstatsWarning",
    "Journal",
    "JudgeSpec",
    "ParseError",
    "Simulation",
    "SimulationParams",
    "__version__",
    "annotate_runs",
    "audit",
    "count_tokens",
    "draw_outcomes",
    "load_dir",
    "load_judgments",
    "load_runs",
    "load_tasks",
    "model_family",
    "pair_runs",
    "parse_judge",
    "plan_calls",
    "read_journal",
    "run_judges",
    "rubrics",
    "simulate",
    "status_table",
    "verdict_frame",
    "wide_by_judge",
    "write_frame_atomic",
    "write_jsonl_atomic",
    *_stats_all,
]
