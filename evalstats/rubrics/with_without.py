"""The ``with-without`` rubric (seed 000, revision 1): WITH and WITHOUT shown labelled.

The package-data file ``data/with-without.r1.txt`` is the seed, byte for byte.  The system
prompt is the first ``` block under ``## System prompt`` and the user message the ``` block
under ``## User-message template``; both are cut out of that file when the rubric is loaded,
so the text lives in one place only.  Token costs are the counted (cl100k_base) totals as
plain integers; wall-clock times go through :func:`~evalstats.rubrics.format_wall_clock`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalstats.errors import ParseError

from ._base import (
    RenderedPrompt,
    Rubric,
    Verdict,
    as_field_text,
    check_placeholders,
    fenced_block_after,
    fill,
    format_tokens,
    format_wall_clock,
    is_missing,
    labels_named,
    last_text,
    norm_key,
    one_label,
    read_data,
    register,
    require_text,
    require_value,
    sha256_of,
    values_for,
)
from ._lenient_json import find_objects, iter_dicts

__all__ = ["WithWithoutRubric", "parse_label"]

NAME = "with-without"
REVISION = 1
DATA_FILE = "with-without.r1.txt"
PLACEHOLDERS = (
    "task_prompt",
    "canonical_answer",
    "with_token_cost",
    "with_wall_clock",
    "with_answer",
    "without_token_cost",
    "without_wall_clock",
    "without_answer",
)
LABELS = ("(a)", "(b)", "(c)")
OUTCOME_OF_LABEL = {"(a)": "win", "(b)": "tie", "(c)": "loss"}

_LABEL_KEYS = ("label",)
# Only consulted when no object carries a "label" key.
_LABEL_FALLBACK_KEYS = ("verdict",)
_REASONING_KEYS = ("reasoning", "rationale")
_UNCERTAINTY_KEYS = ("uncertainty",)
_COST_KEYS = ("cost_ratio",)

_PAREN = re.compile(r"\(\s*([abc])\s*\)")
# A bare letter at the start: "a", "A.", "a) WITH was better", "b - equivalent", "c: worse",
# "a WITH was better".  Not "a tie" or "a or b": those are prose, not a label.
_LEADING = re.compile(r"^([abc])(?:$|\s*[).:\]\-\u2013\u2014,;]|\s+with\b)")
_STRIP = " \t\r\n\"'`*_[]\u201c\u201d\u2018\u2019"
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_QUOTIENT = re.compile(
    r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*/\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$"
)
_UNCERTAINTY = {
    "low": "low",
    "medium": "medium",
    "med": "medium",
    "moderate": "medium",
    "mid": "medium",
    "high": "high",
}


def parse_label(value: Any) -> str:
    """One label value as written by a judge -> ``"(a)"``, ``"(b)"`` or ``"(c)"``.

    Raises
    ------
    ParseError
        If the value names no label or two different ones.

    Examples
    --------
    >>> parse_label("(a) WITH was better")
    '(a)'
    >>> parse_label("B")
    '(b)'
    """
    return one_label(labels_named(value, _labels_in_text, what="label"), what="labels")


def _labels_in_text(value: str) -> set[str]:
    s = value.strip(_STRIP).lower()
    s = re.sub(r"^label\s*[:=]?\s*", "", s).strip(_STRIP)
    paren = set(_PAREN.findall(s))
    if paren:
        return {f"({c})" for c in paren}
    m = _LEADING.match(s)
    if m is None:
        raise ParseError(f"unrecognised label: {value!r:.80}")
    return {f"({m.group(1)})"}


def _uncertainty(values: list[Any]) -> str | None:
    seen = set()
    for v in values:
        if not isinstance(v, str):
            continue
        words = re.findall(r"[a-z]+", v.lower())
        if words and words[0] in _UNCERTAINTY:
            seen.add(_UNCERTAINTY[words[0]])
    # Two different readings are not fatal (the label is what counts) but are not guessed.
    return seen.pop() if len(seen) == 1 else None


def _ratio_in_text(v: str) -> float | None:
    # "12000/20000 = 0.6": the judge's result follows the last "="; "12000 / 20000" alone is
    # a quotient; otherwise ("0.6", "~1.4x", "0.6 (cheaper)") the first number.
    if "=" in v:
        m = _NUMBER.search(v, v.rindex("=") + 1)
        return None if m is None else float(m.group())
    q = _QUOTIENT.match(v)
    if q is not None:
        den = float(q.group(2))
        return float(q.group(1)) / den if den != 0 else None
    m = _NUMBER.search(v)
    return None if m is None else float(m.group())


def _cost_ratio(values: list[Any]) -> float | None:
    for v in reversed(values):
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int | float):
            x = float(v)
        elif isinstance(v, str):
            x = _ratio_in_text(v)
            if x is None:
                continue
        else:
            continue
        if math.isfinite(x):
            return x
    return None


@dataclass(frozen=True)
class WithWithoutRubric(Rubric):
    """Seed 000: the judge sees WITH and WITHOUT labelled and picks (a), (b) or (c)."""

    def render(
        self,
        task: Mapping[str, Any],
        with_run: Mapping[str, Any],
        without_run: Mapping[str, Any],
        *,
        order: str | None = None,
    ) -> RenderedPrompt:
        """Fill seed 000's user-message template for one pair.

        Parameters
        ----------
        task : Mapping
            ``prompt`` and ``canonical_answer`` (strings).
        with_run, without_run : Mapping
            ``answer`` (str), ``tokens`` (counted cl100k_base total, int) and ``wall_s``.
        order : None
            This rubric shows the arms labelled; any order other than ``None`` is an error.

        Examples
        --------
        >>> from evalstats import rubrics
        >>> r = rubrics.get("with-without")
        >>> p = r.render(
        ...     {"prompt": "Where is X?", "canonical_answer": "x.go"},
        ...     {"answer": "x.go:10", "tokens": 1200, "wall_s": 41.25},
        ...     {"answer": "not sure", "tokens": 3400, "wall_s": 90.0},
        ... )
        >>> print(p.user.splitlines()[7])
        [1200 tokens · 41.2 s]
        """
        if not is_missing(order):
            raise ValueError(
                f"rubric {self.name!r} shows WITH/WITHOUT labelled; order must be None"
            )
        values = {
            "task_prompt": require_text(task, "prompt", what="task"),
            "canonical_answer": require_text(task, "canonical_answer", what="task"),
        }
        for arm, run in (("with", with_run), ("without", without_run)):
            what = f"{arm}_run"
            values[f"{arm}_answer"] = require_text(run, "answer", what=what)
            values[f"{arm}_token_cost"] = format_tokens(
                require_value(run, "tokens", what=what), what=f"{what}['tokens']"
            )
            values[f"{arm}_wall_clock"] = format_wall_clock(require_value(run, "wall_s", what=what))
        return RenderedPrompt(system=self.system, user=fill(self.user_template, values))

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge's output into a :class:`Verdict` (``(a)``→win, ``(b)``→tie, ``(c)``→loss).

        Raises
        ------
        ParseError
            No JSON object, no label, an unrecognised label, or two different labels.

        Examples
        --------
        >>> from evalstats import rubrics
        >>> v = rubrics.get("with-without").parse('Sure!\\n```json\\n{"label": "A", }\\n```')
        >>> v.label, v.outcome
        ('(a)', 'win')
        """
        if not is_missing(order):
            raise ValueError(f"rubric {self.name!r} has no order; pass order=None")
        objects = find_objects(text)
        if not objects:
            raise ParseError("no JSON object found")
        dicts = [d for obj in objects for d in iter_dicts(obj)]
        keys = _LABEL_KEYS
        carriers = [d for d in dicts if values_for(d, keys)]
        if not carriers:
            keys = _LABEL_FALLBACK_KEYS
            carriers = [d for d in dicts if values_for(d, keys)]
        if not carriers:
            raise ParseError("label missing: no JSON object has a 'label' field")
        labels: set[str] = set()
        for d in carriers:
            for v in values_for(d, keys):
                labels |= labels_named(v, _labels_in_text, what="label")
        if len(labels) > 1:
            raise ParseError(f"two different labels: {', '.join(sorted(labels))}")
        label = labels.pop()
        # A judge that writes its verdict twice corrects it last.
        src = carriers[-1]
        used = set(keys) | set(_REASONING_KEYS) | set(_UNCERTAINTY_KEYS) | set(_COST_KEYS)
        fields: dict[str, str] = {}
        for k, v in src.items():
            nk = norm_key(k)
            if nk in used or not nk:
                continue
            t = as_field_text(v)
            if t is not None:
                fields[nk] = t
        return Verdict(
            label=label,
            outcome=OUTCOME_OF_LABEL[label],
            reasoning=last_text(values_for(src, _REASONING_KEYS)),
            uncertainty=_uncertainty(values_for(src, _UNCERTAINTY_KEYS)),
            judge_cost_ratio=_cost_ratio(values_for(src, _COST_KEYS)),
            scores={},
            fields=fields,
        )


def load() -> WithWithoutRubric:
    raw = read_data(DATA_FILE)
    text = raw.decode("utf-8")
    system = fenced_block_after(text, "## System prompt", source=DATA_FILE)
    user = fenced_block_after(text, "## User-message template", source=DATA_FILE)
    check_placeholders(user, PLACEHOLDERS, source=DATA_FILE)
    return WithWithoutRubric(
        name=NAME,
        revision=REVISION,
        sha256=sha256_of(raw),
        system=system,
        user_template=user,
        dimensions=(),
        needs_order=False,
    )


register(NAME, load)
