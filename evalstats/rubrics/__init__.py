"""The judge prompts (rubrics): package data byte-for-byte from the seeds, rendering, parsing.

:func:`get` returns a built-in rubric (``with-without``, seed 000; ``blind-pair``, seed 001)
or one of your own (a TOML file): ``render`` fills the prompt and ``parse`` reads a judge's
output tolerantly, raising :class:`evalstats.errors.ParseError` with a reason when it cannot.
How they work and the file format: docs/judging.md.

>>> from evalstats import rubrics
>>> v = rubrics.get("with-without").parse('```json\\n{"label": "(c) WITH was worse"}\\n```')
>>> v.label, v.outcome
('(c)', 'loss')
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
