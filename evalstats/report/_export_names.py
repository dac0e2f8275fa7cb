"""Names for the paper export: LaTeX macro names (letters only) and readable judge names.

Macro names are ``\\es`` + parts, each part a word made of ASCII letters:

* a rubric, a metric or a statistic: split at every non-letter, each piece capitalised, each
  digit spelled (``with-without`` -> ``WithWithout``, ``ac1`` -> ``AcOne``,
  ``tokens_total_ratio`` -> ``TokensTotalRatio``);
* a judge ``provider:model``: the provider and a trailing date (``-20250514``,
  ``-2024-08-06``) dropped, then as above (``anthropic:claude-sonnet-4-20250514`` ->
  ``ClaudeSonnetFour``, ``openai:gpt-5.4`` -> ``GptFiveFour``); ``consensus:<rule>`` keeps
  its prefix (``ConsensusUnanimous``).

Two different sources that map to one name are an error that names both; ``aliases`` (a
mapping of a rubric, judge or metric string to letters) resolves it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# One reader's name for a judge, in the figures (which may not import this layer) as here.
from .._display import judge_label, judge_model

__all__ = ["judge_label", "judge_word", "word"]

_DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
_LETTERS = re.compile(r"^[A-Za-z]+$")


def word(text: str, aliases: Mapping[str, str] | None = None) -> str:
    """``text`` as a macro-name part of letters only (see the module docstring).

    >>> word("with-without"), word("ac1"), word("kappa_boot")
    ('WithWithout', 'AcOne', 'KappaBoot')
    """
    if aliases and text in aliases:
        alias = aliases[text]
        if not _LETTERS.match(alias):
            raise ValueError(f"alias for {text!r} must be ASCII letters only, got {alias!r}")
        return alias
    tokens = re.findall(r"[A-Za-z]+|\d", text)
    out = "".join(t[:1].upper() + t[1:] if t.isalpha() else _DIGITS[int(t)] for t in tokens)
    if not out:
        raise ValueError(f"{text!r} gives no letters for a macro name: pass an alias for it")
    return out


def judge_word(judge: str, aliases: Mapping[str, str] | None = None) -> str:
    """Macro-name part of a judge.

    >>> judge_word("anthropic:claude-sonnet-4-20250514"), judge_word("openai:gpt-5.4")
    ('ClaudeSonnetFour', 'GptFiveFour')
    >>> judge_word("consensus:unanimous")
    'ConsensusUnanimous'
    """
    if aliases and judge in aliases:
        return word(judge, aliases)
    return word(judge_model(judge))
