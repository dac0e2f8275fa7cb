"""The ``blind-pair`` rubric (seed 001, r1; arms shown as Agent A / B): docs/judging.md."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from evalstats._schema import BLIND_DIMENSIONS
from evalstats.errors import ParseError

from ._base import (
    Rubric,
    Verdict,
    as_field_text,
    check_placeholders,
    last_text,
    norm_key,
    normalise_order,
    read_data,
    read_label,
    sha256_of,
    values_for,
)
from ._lenient_json import iter_dicts

NAME = "blind-pair"
SYSTEM_FILE = "blind-pair.r1.txt"
USER_FILE = "blind-pair.r1.user.txt"
KNOWN_PLACEHOLDERS = tuple(
    "task_prompt canonical_answer agent_a_answer agent_a_files agent_b_answer agent_b_files".split()
)
REQUIRED_PLACEHOLDERS = ("agent_a_answer", "agent_b_answer")

_TIE_WORDS = frozenset({"tie", "tied", "draw", "even", "equal", "equivalent", "neither"})
_FILLER = frozenset("agent wins win winner won is the verdict answer better it s".split())


@dataclass(frozen=True)
class BlindScores:
    """How a blind-scores rubric's output is read (defaults: seed 001's); docs/judging.md.

    >>> spec = BlindScores(verdicts=(("first", "a_wins"), ("second", "b_wins")))
    >>> spec.verdicts_in_text("First"), spec.verdicts_in_text("Agent B wins")
    ({'a_wins'}, {'b_wins'})
    """

    verdict_fields: tuple[str, ...] = ("verdict", "winner")
    reasoning_fields: tuple[str, ...] = ("verdict_reasoning", "reasoning")
    notes_fields: tuple[str, ...] = ("notes", "note")
    blocks: tuple[tuple[str, ...], tuple[str, ...]] = (
        ("agent_a", "agenta", "a"),
        ("agent_b", "agentb", "b"),
    )
    dimension_keys: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
        (d, (d, "hallucination") if d == "hallucination_safety" else (d,)) for d in BLIND_DIMENSIONS
    )
    verdicts: tuple[tuple[str, str], ...] = ()
    scores: tuple[int, int] = (1, 5)

    def keys_of(self, dim: str) -> tuple[str, ...]:
        return dict(self.dimension_keys).get(dim, (dim,))

    def verdicts_in_text(self, value: str) -> set[str]:
        low = norm_key(value)
        for spelling, label in self.verdicts:
            if low == norm_key(spelling):
                return {label}
        tokens = re.findall(r"[a-z]+", value.lower())
        found = {f"{t}_wins" for t in tokens if t in ("a", "b")}
        found |= {"tie"} if any(t in _TIE_WORDS for t in tokens) else set()
        other = [t for t in tokens if t not in _FILLER | _TIE_WORDS and t not in ("a", "b")]
        if len(found) > 1 or (found and not other):
            return found
        raise ParseError(f"unrecognised verdict: {value!r:.80}")

    def score(self, value: Any, where: str) -> int:
        lo, hi = self.scores
        if isinstance(value, str):
            m = _score_text(hi).match(value)
            if m is None:
                raise ParseError(f"score {where} is not a number: {value!r:.40}")
            value = float(m.group(1))
        if isinstance(value, float):
            if not math.isfinite(value) or not value.is_integer():
                raise ParseError(f"score {where} is not an integer: {value!r}")
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParseError(f"score {where} is not a number: {as_field_text(value)!r:.40}")
        if not lo <= value <= hi:
            raise ParseError(f"score {where} = {value} is outside {lo}-{hi}")
        return value


@lru_cache
def _score_text(hi: int) -> re.Pattern[str]:
    return re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*(?:/\s*" + str(hi) + r")?\s*$")


def _block(src: Mapping[str, Any], root: Any, side: str, keys: tuple[str, ...]) -> Any:
    for d in (src, *iter_dicts(root)):
        found = [v for v in values_for(d, keys) if isinstance(v, dict)]
        if found:
            return found[-1]
    raise ParseError(f"missing agent block: agent_{side}")


_PREFIX = {
    None: {"a": "a", "b": "b"},
    "with_first": {"a": "with", "b": "without"},
    "without_first": {"a": "without", "b": "with"},
}


@dataclass(frozen=True)
class BlindPairRubric(Rubric):
    """Seed 001 (1-5 scores per agent and a winner, arms hidden) and every blind-scores file."""

    spec: BlindScores = field(default=BlindScores(), kw_only=True, repr=False)

    kind: ClassVar[str] = "blind-scores"

    def _runs(self, with_run: Any, without_run: Any, order: str | None) -> dict[str, tuple]:
        o = normalise_order(order)
        if o is None:
            raise ValueError(
                f"rubric {self.name!r} needs order='with_first' or 'without_first' "
                "(which arm is shown as Agent A)"
            )
        a, b = (with_run, without_run) if o == "with_first" else (without_run, with_run)
        return {"agent_a": (a, "agent a run"), "agent_b": (b, "agent b run")}

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge's output (mapped to WITH/WITHOUT with ``order``); ParseError if unreadable.

        >>> from evalstats import rubrics
        >>> r = rubrics.get("blind-pair")
        >>> block = '"correctness": 4, "specificity": 4, "completeness": 3, "hallucination_safety": 5'
        >>> out = '{"agent_a": {%s}, "agent_b": {%s}, "verdict": "B"}' % (block, block)
        >>> r.parse(out, order="without_first").outcome
        'win'
        """
        o = normalise_order(order)
        spec = self.spec
        label, root, src = read_label(
            text, spec.verdict_fields, (), spec.verdicts_in_text, what="verdict"
        )
        prefix = _PREFIX[o]
        blocks = {s: _block(src, root, s, keys) for s, keys in zip("ab", spec.blocks, strict=True)}
        known = {k for dim in self.dimensions for k in spec.keys_of(dim)} | set(spec.notes_fields)
        scores: dict[str, dict[str, int]] = {}
        fields: dict[str, str] = {}
        for side, block in blocks.items():
            scores[side] = {}
            for dim in self.dimensions:
                vals = values_for(block, spec.keys_of(dim))
                where = f"agent_{side}.{dim}"
                if not vals:
                    raise ParseError(f"missing score: {where}")
                got = {spec.score(v, where) for v in vals}
                if len(got) > 1:
                    raise ParseError(f"two different scores for {where}: {sorted(got)}")
                scores[side][dim] = got.pop()
            notes = last_text(values_for(block, spec.notes_fields))
            if notes is not None:
                fields[f"notes_{prefix[side]}"] = notes
            for k, v in block.items():
                nk, t = norm_key(k), as_field_text(v)
                if nk and nk not in known and t is not None:
                    fields[f"{prefix[side]}_{nk}"] = t
        used = {*spec.verdict_fields, *spec.reasoning_fields, *spec.blocks[0], *spec.blocks[1]}
        block_ids = {id(b) for b in blocks.values()}
        for k, v in src.items():
            nk = norm_key(k)
            if not nk or nk in used or any(id(d) in block_ids for d in iter_dicts(v)):
                continue  # a wrapper such as "scores" holding the agent blocks
            t = as_field_text(v)
            if t is not None:
                fields.setdefault(nk, t)
        outcome = "tie" if label == "tie" else None
        if outcome is None and o is not None:
            outcome = "win" if (label == "a_wins") == (o == "with_first") else "loss"
        return Verdict(
            label=label,
            outcome=outcome,
            reasoning=last_text(values_for(src, spec.reasoning_fields)),
            uncertainty=None,
            judge_cost_ratio=None,
            scores={
                f"{prefix[side]}_{dim}": scores[side][dim]
                for side in (("b", "a") if o == "without_first" else ("a", "b"))
                for dim in self.dimensions
            },
            fields=fields,
        )


def load() -> BlindPairRubric:
    raw_system, raw_user = read_data(SYSTEM_FILE), read_data(USER_FILE)
    header, sep, rest = raw_system.decode("utf-8").partition("\n")
    if header.strip() != "eval-judge" or not sep:
        raise RuntimeError(f"{SYSTEM_FILE}: expected the header line 'eval-judge'")
    user = raw_user.decode("utf-8").removesuffix("\n")
    check_placeholders(user, [p for p in KNOWN_PLACEHOLDERS if p != "canonical_answer"], USER_FILE)
    sha, system = sha256_of(raw_system, raw_user), rest.lstrip("\n")
    return BlindPairRubric(
        NAME, 1, sha, system, user, BLIND_DIMENSIONS, needs_order=True, family=NAME
    )
