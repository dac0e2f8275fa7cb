"""The judge prompts (rubrics): package data byte-for-byte from the seeds, rendering, parsing.

The two seed rubrics (``with-without``, seed 000; ``blind-pair``, seed 001) and rubric files
of your own (TOML): :func:`get` returns a :class:`Rubric` whose ``render`` fills the prompt
and whose ``parse`` reads a judge's output tolerantly, raising
:class:`evalstats.errors.ParseError` with a reason when it cannot. How they work and the file
format: docs/judging.md.

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
