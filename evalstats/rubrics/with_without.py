"""The ``with-without`` rubric (seed 000, revision 1): WITH and WITHOUT shown labelled.

The package-data file ``data/with-without.r1.txt`` is the seed, byte for byte.  The system
prompt is the first ``` block under ``## System prompt`` and the user message the ``` block
under ``## User-message template``; both are cut out of that file when the rubric is loaded,
so the text lives in one place only.  Token costs are the counted (cl100k_base) totals as
plain integers; wall-clock times go through :func:`~evalstats.rubrics.format_wall_clock`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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
from .blind_pair import format_files

__all__ = ["KNOWN_PLACEHOLDERS", "ThreeWay", "WithWithoutRubric", "parse_label", "with_pair_tools"]

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

# Placeholders a three-way template may use, in the order their values are read (so that the
# first missing input is the one reported, as with the seed's fixed order).
KNOWN_PLACEHOLDERS = (
    "task_prompt",
    "canonical_answer",
    "with_answer",
    "with_token_cost",
    "with_wall_clock",
    "with_files",
    "without_answer",
    "without_token_cost",
    "without_wall_clock",
    "without_files",
)
REQUIRED_PLACEHOLDERS = ("with_answer", "without_answer")
OUTCOMES = ("win", "tie", "loss")

_PAREN = re.compile(r"\(\s*([abc])\s*\)")
# A bare letter at the start: "a", "A.", "a) WITH was better", "b - equivalent", "c: worse",
# "a WITH was better".  Not "a tie" or "a or b": those are prose, not a label.
_LEADING = re.compile(r"^([abc])(?:$|\s*[).:\]\-\u2013\u2014,;]|\s+with\b)")
_STRIP = " \t\r\n\"'`*_[]\u201c\u201d\u2018\u2019"
_LETTER_LABEL = re.compile(r"^\(([a-z])\)$")
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


@dataclass(frozen=True)
class ThreeWay:
    """How a three-way rubric's output is read: its labels, their outcomes, its field names.

    The defaults are seed 000's.  Labels written ``"(x)"`` (one letter) are read the seed's
    way: a parenthesised letter anywhere (``"**(b)**"``, ``"(a) WITH was better"``) or a
    leading bare letter (``"A."``, ``"c: worse"``).  Other labels (``"better"``) are read as
    words: every label the value names as a whole word, case-insensitively (one is the
    label; two or more are a ParseError upstream).  ``aliases`` adds exact spellings.

    Examples
    --------
    >>> spec = ThreeWay(labels=("better", "same", "worse"), aliases=(("tie", "same"),))
    >>> sorted(spec.labels_in_text("Better: WITH found it")), spec.outcome_of("same")
    (['better'], 'tie')
    """

    labels: tuple[str, ...] = LABELS
    outcomes: tuple[str, ...] = OUTCOMES
    aliases: tuple[tuple[str, str], ...] = ()
    label_fields: tuple[str, ...] = _LABEL_KEYS
    fallback_fields: tuple[str, ...] = _LABEL_FALLBACK_KEYS
    reasoning_fields: tuple[str, ...] = _REASONING_KEYS
    uncertainty_fields: tuple[str, ...] = _UNCERTAINTY_KEYS
    cost_ratio_fields: tuple[str, ...] = _COST_KEYS

    def outcome_of(self, label: str) -> str:
        """``"win"``, ``"tie"`` or ``"loss"`` for one of :attr:`labels`."""
        return self.outcomes[self.labels.index(label)]

    @property
    def letters(self) -> str | None:
        """The label letters (``"abc"``) when every label is ``"(x)"``, else ``None``."""
        ms = [_LETTER_LABEL.match(lab.lower()) for lab in self.labels]
        return "".join(m.group(1) for m in ms if m) if all(ms) else None

    def labels_in_text(self, value: str) -> set[str]:
        """Every label one string names (two or more is the caller's error to raise)."""
        s = value.strip(_STRIP).lower()
        prefixes = "|".join(re.escape(f) for f in self.label_fields)
        s = re.sub(rf"^(?:{prefixes})\s*[:=]?\s*", "", s).strip(_STRIP)
        for spelling, label in self.aliases:
            if s == spelling.strip(_STRIP).lower():
                return {label}
        letters = self.letters
        if letters is not None:
            paren_re, leading_re = _letter_patterns(letters)
            paren = set(paren_re.findall(s))
            if paren:
                return {self._label_of_letter(c) for c in paren}
            m = leading_re.match(s)
            if m is None:
                raise ParseError(f"unrecognised label: {value!r:.80}")
            return {self._label_of_letter(m.group(1))}
        # Every label named as a whole word: "better" and "Better: WITH cited it" name one,
        # "better or worse" two (an error for the caller, never a guess).
        found = {
            label
            for label in self.labels
            if re.search(r"(?<!\w)" + re.escape(label.strip(_STRIP).lower()) + r"(?!\w)", s)
        }
        if not found:
            raise ParseError(f"unrecognised label: {value!r:.80}")
        return found

    def _label_of_letter(self, c: str) -> str:
        return next(lab for lab in self.labels if lab.lower() == f"({c})")


def _letter_patterns(letters: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    if letters == "abc":  # the seed's
        return _PAREN, _LEADING
    cls = "[" + re.escape(letters) + "]"
    return (
        re.compile(r"\(\s*(" + cls + r")\s*\)"),
        re.compile("^(" + cls + r")(?:$|\s*[).:\]\-\u2013\u2014,;]|\s+with\b)"),
    )


SEED_SPEC = ThreeWay()


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
    return one_label(labels_named(value, SEED_SPEC.labels_in_text, what="label"), what="labels")


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
    """Seed 000: the judge sees WITH and WITHOUT labelled and picks (a), (b) or (c).

    Also the class of every ``three-way`` rubric file: ``spec`` says how its output is read,
    and :meth:`render` fills whichever of :data:`KNOWN_PLACEHOLDERS` its template uses.
    """

    spec: ThreeWay = field(default=SEED_SPEC, kw_only=True, repr=False)

    @property
    def kind(self) -> str:
        return "three-way"

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
        used = set(self.placeholders)
        values: dict[str, str] = {}
        if "task_prompt" in used:
            values["task_prompt"] = require_text(task, "prompt", what="task")
        if "canonical_answer" in used:
            values["canonical_answer"] = require_text(task, "canonical_answer", what="task")
        for arm, run in (("with", with_run), ("without", without_run)):
            what = f"{arm}_run"
            if f"{arm}_answer" in used:
                values[f"{arm}_answer"] = require_text(run, "answer", what=what)
            if f"{arm}_token_cost" in used:
                values[f"{arm}_token_cost"] = format_tokens(
                    require_value(run, "tokens", what=what), what=f"{what}['tokens']"
                )
            if f"{arm}_wall_clock" in used:
                values[f"{arm}_wall_clock"] = format_wall_clock(
                    require_value(run, "wall_s", what=what)
                )
            if f"{arm}_files" in used:
                values[f"{arm}_files"] = format_files(run.get("files_inspected"))
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
        spec = self.spec
        dicts = [d for obj in objects for d in iter_dicts(obj)]
        keys = spec.label_fields
        carriers = [d for d in dicts if values_for(d, keys)]
        if not carriers:
            keys = spec.fallback_fields
            carriers = [d for d in dicts if values_for(d, keys)]
        if not carriers:
            raise ParseError(f"label missing: no JSON object has a {spec.label_fields[0]!r} field")
        labels: set[str] = set()
        for d in carriers:
            for v in values_for(d, keys):
                labels |= labels_named(v, spec.labels_in_text, what="label")
        if len(labels) > 1:
            raise ParseError(f"two different labels: {', '.join(sorted(labels))}")
        label = labels.pop()
        # A judge that writes its verdict twice corrects it last.
        src = carriers[-1]
        used = (
            set(keys)
            | set(spec.reasoning_fields)
            | set(spec.uncertainty_fields)
            | set(spec.cost_ratio_fields)
        )
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
            outcome=spec.outcome_of(label),
            reasoning=last_text(values_for(src, spec.reasoning_fields)),
            uncertainty=_uncertainty(values_for(src, spec.uncertainty_fields)),
            judge_cost_ratio=_cost_ratio(values_for(src, spec.cost_ratio_fields)),
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


_SEED_ROLES = re.compile(
    r"one had access to the gortex\s+MCP tool surface \(\"WITH\"\)\s+and the other did not "
    r"\(\"WITHOUT\"\)"
)
_SEED_WITH = "WITH (gortex MCP available):"
_SEED_WITHOUT = "WITHOUT (no gortex MCP):"
# How seed 000 names its tool: "gortex MCP" is one name, replaced as a whole, then any other
# "gortex" (also what :func:`evalstats.rubrics.with_tool_name` replaces).
GORTEX_MENTION = re.compile(r"gortex(?:\s+MCP\b)?", re.IGNORECASE)


def tool_name(tool: Any) -> str:
    """A tool's name as a prompt shows it: one non-empty line, stripped."""
    if not isinstance(tool, str) or not tool.strip() or "\n" in tool:
        raise ValueError(f"tool name must be a non-empty one-line string, got {tool!r}")
    return tool.strip()


def with_pair_tools(rubric: Rubric, candidate: str, reference: str) -> Rubric:
    """The prompt of a K-arm pair: the seed's tool mentions name the two arms' tools.

    Where seed 000 names its tool, the candidate (``arm_a``, the WITH role) and the
    reference (``arm_b``, the WITHOUT role) are named instead: the roles sentence of the
    system prompt says which tool each answer ran with, and the two answer headers read
    ``WITH (<candidate>):`` / ``WITHOUT (<reference>):``; any other mention of the seed's
    tool names the candidate's. A template without the seed's mentions (a rubric file that
    already names its tool) is returned unchanged. Name, revision and sha256 stay the
    rubric's: they identify the template the judgments are parsed with, which this does not
    change, while the prompt itself is in each call's key.

    Examples
    --------
    >>> from evalstats import rubrics
    >>> r = with_pair_tools(rubrics.get("with-without"), "Serena 1.0", "no tool")
    >>> "WITH (Serena 1.0):" in r.user_template, "WITHOUT (no tool):" in r.user_template
    (True, True)
    >>> "gortex" in r.system + r.user_template, r.sha256 == rubrics.get("with-without").sha256
    (False, True)
    """
    cand, ref = tool_name(candidate), tool_name(reference)

    def swap(text: str) -> str:
        text = _SEED_ROLES.sub(
            lambda _m: f'one ran with {cand} ("WITH") and the other with {ref} ("WITHOUT")', text
        )
        text = text.replace(_SEED_WITH, f"WITH ({cand}):").replace(
            _SEED_WITHOUT, f"WITHOUT ({ref}):"
        )
        return GORTEX_MENTION.sub(lambda _m: cand, text)

    system, user = swap(rubric.system), swap(rubric.user_template)
    if (system, user) == (rubric.system, rubric.user_template):
        return rubric
    return dataclasses.replace(rubric, system=system, user_template=user)
