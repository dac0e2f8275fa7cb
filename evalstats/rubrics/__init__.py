"""The judge prompts (rubrics): package data byte-for-byte from the seeds, rendering, parsing.

Two rubrics, each at revision 1:

``with-without`` (seed 000)
    The judge sees the WITH and WITHOUT answers labelled, with token costs and wall-clock
    times, and picks ``(a)`` WITH better, ``(b)`` equivalent or ``(c)`` WITH worse.
``blind-pair`` (seed 001)
    The judge sees two answers as Agent A / Agent B (in an ``order`` the runner chooses) with
    the files each inspected, scores both on four dimensions and names a winner; parsing maps
    the result back to WITH/WITHOUT.

:func:`get` returns a :class:`Rubric` whose ``render`` fills the prompt and whose ``parse``
reads a judge's output tolerantly (code fences, prose, trailing commas, single quotes, label
spellings), raising :class:`evalstats.errors.ParseError` with a reason when it cannot.

Your own rubric is a TOML file (see :mod:`evalstats.rubrics._file` for the format):
:func:`get` takes its path wherever it takes a name, :func:`load` reads one,
:func:`seed_toml` writes a built-in rubric in that form and :func:`with_tool_name` makes a
seed's prompt name your tool instead of gortex (``evalstats rubric new``).

Examples
--------
>>> from evalstats import rubrics
>>> r = rubrics.get("with-without")
>>> v = r.parse('Here you go:\\n```json\\n{"label": "(c) WITH was worse", "uncertainty": "Low"}\\n```')
>>> v.label, v.outcome, v.uncertainty
('(c)', 'loss', 'low')
"""

from __future__ import annotations

# Importing the rubric modules registers them.
from . import blind_pair as _blind_pair  # noqa: F401
from . import with_without as _with_without  # noqa: F401
from ._base import RenderedPrompt, Rubric, Verdict, format_wall_clock, names
from ._file import KINDS, get, load, seed_toml, to_toml, with_tool_name
from .blind_pair import BlindPairRubric, BlindScores
from .with_without import ThreeWay, WithWithoutRubric, with_pair_tools

__all__ = [
    "KINDS",
    "BlindPairRubric",
    "BlindScores",
    "RenderedPrompt",
    "Rubric",
    "ThreeWay",
    "Verdict",
    "WithWithoutRubric",
    "format_wall_clock",
    "get",
    "load",
    "names",
    "seed_toml",
    "to_toml",
    "with_pair_tools",
    "with_tool_name",
]
