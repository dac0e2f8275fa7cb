"""evalstats: statistically honest reports from LLM-judge verdicts on WITH/WITHOUT runs.

The public surface is re-exported here; modules behind it are private details.

Names are resolved on first use (PEP 562), so ``import evalstats`` loads neither pandas nor
scipy, no provider SDK, no matplotlib and no notebook machinery; ``evalstats.win_rates`` loads
the statistics when it is first touched. ``__all__`` and ``dir()`` list the whole surface.

Examples
--------
>>> import evalstats
>>> evalstats.DataError.__name__, "win_rates" in evalstats.__all__
('DataError', True)
"""

# The TYPE_CHECKING imports at the bottom are re-exports that ``__all__`` (computed on first
# use) names; ruff cannot see a computed ``__all__``.
# ruff: noqa: F401

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ._surface import LazySurface

__version__ = "0.1.0"

# public name -> module (relative to this package) that defines it
_LAZY: dict[str, str] = {
    "AUDIT_CHECKS": ".audit",
    "audit": ".audit",
    "model_family": ".audit",
    "DataError": ".errors",
    "EvalstatsError": ".errors",
    "ParseError": ".errors",
    "load_frame": ".frames",
    "resolve_rubrics": ".frames",
    "select_rubric": ".frames",
    "verdict_frame": ".frames",
    "wide_by_judge": ".frames",
    "Journal": ".judging",
    "JudgeSpec": ".judging",
    "parse_judge": ".judging",
    "plan_calls": ".judging",
    "read_journal": ".judging",
    "run_judges": ".judging",
    "load_labels": ".labels",
    "write_labels": ".labels",
    "draw_sheet": ".labelsheet",
    "read_sheet": ".labelsheet",
    "Plan": ".plan",
    "load_plan": ".plan",
    "parse_plan": ".plan",
    "Dataset": ".records",
    "EvalstatsWarning": ".records",
    "load_arm_names": ".records",
    "load_dir": ".records",
    "load_judgments": ".records",
    "load_runs": ".records",
    "load_tasks": ".records",
    "pair_runs": ".records",
    "write_frame_atomic": ".records",
    "write_jsonl_atomic": ".records",
    "Simulation": ".simulate",
    "SimulationParams": ".simulate",
    "draw_outcomes": ".simulate",
    "simulate": ".simulate",
    "status_table": ".summary",
    "annotate_runs": ".tokens",
    "count_tokens": ".tokens",
}
_SUBMODULES = ("rubrics",)
# The statistics surface is curated in stats/__init__ (its ``__all__``); it is re-exported
# whole, so it is read from there on first use instead of being copied here.
_STATS = ".stats"


def _stats_names() -> list[str]:
    return list(importlib.import_module(_STATS, __name__).__all__)


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = [*sorted(["__version__", *_LAZY, *_SUBMODULES]), *_stats_names()]
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    elif name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    else:
        stats = None if name.startswith("_") else importlib.import_module(_STATS, __name__)
        if stats is not None and name in stats.__all__:
            value = getattr(stats, name)
        else:
            # ``evalstats.frames`` etc. worked after a bare ``import evalstats`` when the
            # package imported everything eagerly; keep that for every submodule.
            try:
                value = importlib.import_module(f".{name}", __name__)
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value  # resolve once; later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})


# Keeps a public name bound to its object when the submodule of that name is imported.
sys.modules[__name__].__class__ = LazySurface


if TYPE_CHECKING:  # what type checkers and IDEs see; nothing here runs
    from . import rubrics
    from .audit import AUDIT_CHECKS, audit, model_family
    from .errors import DataError, EvalstatsError, ParseError
    from .frames import load_frame, resolve_rubrics, select_rubric, verdict_frame, wide_by_judge
    from .judging import Journal, JudgeSpec, parse_judge, plan_calls, read_journal, run_judges
    from .labels import load_labels, write_labels
    from .labelsheet import draw_sheet, read_sheet
    from .plan import Plan, load_plan, parse_plan
    from .records import (
        Dataset,
        EvalstatsWarning,
        load_arm_names,
        load_dir,
        load_judgments,
        load_runs,
        load_tasks,
        pair_runs,
        write_frame_atomic,
        write_jsonl_atomic,
    )
    from .simulate import Simulation, SimulationParams, draw_outcomes, simulate
    from .stats import *  # noqa: F403
    from .summary import status_table
    from .tokens import annotate_runs, count_tokens
