"""The judge prompts (rubrics): the seeds byte for byte, your TOML files, rendering, parsing.

:func:`get` returns one; ``render`` fills its prompt and ``parse`` reads a judge's output
(a :class:`evalstats.errors.ParseError` when it cannot). See docs/judging.md.
"""

from __future__ import annotations

from ._base import RenderedPrompt, Rubric, Verdict, format_wall_clock
from ._file import KINDS, get, load, names, seed_toml, to_toml, with_tool_name
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
