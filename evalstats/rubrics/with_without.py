"""The ``with-without`` rubric (seed 000, r1; WITH and WITHOUT labelled) and three-way files."""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from evalstats.errors import ParseError

from ._base import (
    Rubric,
    Verdict,
    as_field_text,
    check_placeholders,
    is_missing,
    last_text,
    norm_key,
    read_data,
    read_label,
    sha256_of,
    values_for,
)

NAME = "with-without"
DATA_FILE = "with-without.r1.txt"
OUTCOMES = ("win", "tie", "loss")
# Placeholders a three-way template may use, in the order their values are read.
KNOWN_PLACEHOLDERS = tuple(
    "task_prompt canonical_answer with_answer with_token_cost with_wall_clock with_files "
    "without_answer without_token_cost without_wall_clock without_files".split()
)
REQUIRED_PLACEHOLDERS = ("with_answer", "without_answer")

_STRIP = " \t\r\n\"'`*_[]\u201c\u201d\u2018\u2019"
_LETTER_LABEL = re.compile(r"^\(([a-z])\)$")
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_QUOTIENT = re.compile(rf"^\s*({_NUMBER})\s*/\s*({_NUMBER})\s*$")
_UNCERTAINTY = {"low": "low", "high": "high"} | dict.fromkeys(
    ("medium", "med", "moderate", "mid"), "medium"
)


@dataclass(frozen=True)
class ThreeWay:
    """How a three-way rubric's output is read (defaults: seed 000's); docs/judging.md.

    >>> spec = ThreeWay(labels=("better", "same", "worse"), aliases=(("tie", "same"),))
    >>> sorted(spec.labels_in_text("Better: WITH found it")), spec.outcome_of("same")
    (['better'], 'tie')
    """

    labels: tuple[str, ...] = ("(a)", "(b)", "(c)")
    outcomes: tuple[str, ...] = OUTCOMES
    aliases: tuple[tuple[str, str], ...] = ()
    label_fields: tuple[str, ...] = ("label",)
    fallback_fields: tuple[str, ...] = ("verdict",)
    reasoning_fields: tuple[str, ...] = ("reasoning", "rationale")
    uncertainty_fields: tuple[str, ...] = ("uncertainty",)
    cost_ratio_fields: tuple[str, ...] = ("cost_ratio",)

    def outcome_of(self, label: str) -> str:
        return self.outcomes[self.labels.index(label)]

    def labels_in_text(self, value: str) -> set[str]:
        s = value.strip(_STRIP).lower()
        prefixes = "|".join(re.escape(f) for f in self.label_fields)
        s = re.sub(rf"^(?:{prefixes})\s*[:=]?\s*", "", s).strip(_STRIP)
        for spelling, label in self.aliases:
            if s == spelling.strip(_STRIP).lower():
                return {label}
        letters = [_LETTER_LABEL.match(lab.lower()) for lab in self.labels]
        if all(letters):
            pairs = zip(letters, self.labels, strict=True)
            by_letter = {m.group(1): lab for m, lab in reversed(list(pairs))}  # first wins
            paren_re, leading_re = _letter_patterns("".join(by_letter))
            found = set(paren_re.findall(s))
            if not found and (m := leading_re.match(s)) is not None:
                found = {m.group(1)}
            if not found:
                raise ParseError(f"unrecognised label: {value!r:.80}")
            return {by_letter[c] for c in found}
        # "better" and "Better: WITH cited it" name one label, "better or worse" two.
        words = {label: re.escape(label.strip(_STRIP).lower()) for label in self.labels}
        found = {label for label, w in words.items() if re.search(rf"(?<!\w){w}(?!\w)", s)}
        if not found:
            raise ParseError(f"unrecognised label: {value!r:.80}")
        return found


@lru_cache
def _letter_patterns(letters: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # A bare leading letter: "a", "A.", "a) WITH was better", "c: worse", "a WITH was better";
    # not "a tie" or "a or b", which are prose.
    cls = "[" + re.escape(letters) + "]"
    return (
        re.compile(r"\(\s*(" + cls + r")\s*\)"),
        re.compile("^(" + cls + r")(?:$|\s*[).:\]\-\u2013\u2014,;]|\s+with\b)"),
    )


def _uncertainty(values: list[Any]) -> str | None:
    seen = set()
    for v in values:
        words = re.findall(r"[a-z]+", v.lower()) if isinstance(v, str) else []
        if words and words[0] in _UNCERTAINTY:
            seen.add(_UNCERTAINTY[words[0]])
    # Two different readings are not fatal (the label is what counts) but are not guessed.
    return seen.pop() if len(seen) == 1 else None


def _ratio_in_text(v: str) -> float | None:
    # "12000/20000 = 0.6": the result follows the last "="; "12000 / 20000" alone is a
    # quotient; otherwise ("0.6", "~1.4x", "0.6 (cheaper)") the first number.
    if "=" in v:
        m = re.compile(_NUMBER).search(v, v.rindex("=") + 1)
        return None if m is None else float(m.group())
    q = _QUOTIENT.match(v)
    if q is not None:
        den = float(q.group(2))
        return float(q.group(1)) / den if den != 0 else None
    m = re.search(_NUMBER, v)
    return None if m is None else float(m.group())


def _cost_ratio(values: list[Any]) -> float | None:
    for v in reversed(values):
        if isinstance(v, bool) or not isinstance(v, int | float | str):
            continue
        x = _ratio_in_text(v) if isinstance(v, str) else float(v)
        if x is not None and math.isfinite(x):
            return x
    return None


@dataclass(frozen=True)
class WithWithoutRubric(Rubric):
    """Seed 000 (WITH and WITHOUT labelled; (a), (b) or (c)) and every ``three-way`` file."""

    spec: ThreeWay = field(default=ThreeWay(), kw_only=True, repr=False)

    kind: ClassVar[str] = "three-way"

    def _runs(self, with_run: Any, without_run: Any, order: str | None) -> dict[str, tuple]:
        if not is_missing(order):
            raise ValueError(
                f"rubric {self.name!r} shows WITH/WITHOUT labelled; order must be None"
            )
        return {"with": (with_run, "with_run"), "without": (without_run, "without_run")}

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge's output into a :class:`Verdict`; a ParseError when it cannot.

        >>> from evalstats import rubrics
        >>> v = rubrics.get("with-without").parse('Sure!\\n```json\\n{"label": "A", }\\n```')
        >>> v.label, v.outcome
        ('(a)', 'win')
        """
        if not is_missing(order):
            raise ValueError(f"rubric {self.name!r} has no order; pass order=None")
        spec = self.spec
        label, _, src = read_label(
            text, spec.label_fields, spec.fallback_fields, spec.labels_in_text, what="label"
        )
        # The label's fields: the fallback ones only when no object had a label field.
        keys = spec.label_fields if values_for(src, spec.label_fields) else spec.fallback_fields
        used = {*keys, *spec.reasoning_fields, *spec.uncertainty_fields, *spec.cost_ratio_fields}
        fields: dict[str, str] = {}
        for k, v in src.items():
            nk, t = norm_key(k), as_field_text(v)
            if nk and nk not in used and t is not None:
                fields[nk] = t
        return Verdict(label=label, outcome=spec.outcome_of(label),
                       reasoning=last_text(values_for(src, spec.reasoning_fields)),
                       uncertainty=_uncertainty(values_for(src, spec.uncertainty_fields)),
                       judge_cost_ratio=_cost_ratio(values_for(src, spec.cost_ratio_fields)),
                       scores={}, fields=fields)  # fmt: skip


def _fenced_block_after(text: str, heading: str) -> str:
    lines = text.split("\n")
    h = next(i for i, line in enumerate(lines) if line.rstrip() == heading)
    start = next(i for i in range(h + 1, len(lines)) if lines[i].startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "```")
    return "\n".join(lines[start + 1 : end])


def load() -> WithWithoutRubric:
    raw = read_data(DATA_FILE)
    text = raw.decode("utf-8")
    user = _fenced_block_after(text, "## User-message template")
    check_placeholders(user, [p for p in KNOWN_PLACEHOLDERS if not p.endswith("_files")], DATA_FILE)
    system = _fenced_block_after(text, "## System prompt")
    raw_sha = sha256_of(raw)
    return WithWithoutRubric(NAME, 1, raw_sha, system, user, (), needs_order=False, family=NAME)


_SEED_ROLES = re.compile(
    r"one had access to the gortex\s+MCP tool surface \(\"WITH\"\)\s+and the other did not "
    r"\(\"WITHOUT\"\)"
)
# "gortex MCP" is one name, replaced as a whole, then any other "gortex".
GORTEX_MENTION = re.compile(r"gortex(?:\s+MCP\b)?", re.IGNORECASE)


def tool_name(tool: Any) -> str:
    if not isinstance(tool, str) or not tool.strip() or "\n" in tool:
        raise ValueError(f"tool name must be a non-empty one-line string, got {tool!r}")
    return tool.strip()


def with_pair_tools(rubric: Rubric, candidate: str, reference: str) -> Rubric:
    """The prompt of a K-arm pair: the seed's tool mentions name the two arms' tools.

    Name, revision and sha256 stay the rubric's; a template without the mentions is unchanged.

    >>> from evalstats import rubrics
    >>> r = with_pair_tools(rubrics.get("with-without"), "Serena 1.0", "no tool")
    >>> "WITH (Serena 1.0):" in r.user_template, "WITHOUT (no tool):" in r.user_template
    (True, True)
    >>> "gortex" in r.system + r.user_template, r.sha256 == rubrics.get("with-without").sha256
    (False, True)
    """
    cand, ref = tool_name(candidate), tool_name(reference)
    roles = f'one ran with {cand} ("WITH") and the other with {ref} ("WITHOUT")'

    def swap(text: str) -> str:
        text = _SEED_ROLES.sub(lambda _m: roles, text)
        text = text.replace("WITH (gortex MCP available):", f"WITH ({cand}):")
        text = text.replace("WITHOUT (no gortex MCP):", f"WITHOUT ({ref}):")
        return GORTEX_MENTION.sub(lambda _m: cand, text)

    system, user = swap(rubric.system), swap(rubric.user_template)
    if (system, user) == (rubric.system, rubric.user_template):
        return rubric
    return dataclasses.replace(rubric, system=system, user_template=user)
