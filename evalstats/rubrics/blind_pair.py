"""The ``blind-pair`` rubric (seed 001, revision 1): WITH and WITHOUT shown as Agent A / B.

How it works: docs/judging.md, "The blind-pair rubric".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalstats._schema import BLIND_DIMENSIONS
from evalstats.errors import ParseError

from ._base import (
    RenderedPrompt,
    Rubric,
    Verdict,
    as_field_text,
    check_placeholders,
    fill,
    is_missing,
    labels_named,
    last_text,
    norm_key,
    normalise_order,
    one_label,
    read_data,
    register,
    require_text,
    sha256_of,
    values_for,
)
from ._lenient_json import find_objects, iter_dicts

__all__ = [
    "KNOWN_PLACEHOLDERS",
    "BlindPairRubric",
    "BlindScores",
    "format_files",
    "parse_verdict_label",
]

NAME = "blind-pair"
REVISION = 1
SYSTEM_FILE = "blind-pair.r1.txt"
USER_FILE = "blind-pair.r1.user.txt"
HEADER = "eval-judge"
PLACEHOLDERS = ("task_prompt", "agent_a_answer", "agent_a_files", "agent_b_answer", "agent_b_files")
LABELS = ("a_wins", "b_wins", "tie")
NO_FILES = "(none)"

KNOWN_PLACEHOLDERS = (
    "task_prompt",
    "canonical_answer",
    "agent_a_answer",
    "agent_a_files",
    "agent_b_answer",
    "agent_b_files",
)
REQUIRED_PLACEHOLDERS = ("agent_a_answer", "agent_b_answer")

_VERDICT_KEYS = ("verdict", "winner")
_REASONING_KEYS = ("verdict_reasoning", "reasoning")
_BLOCK_KEYS = {"a": ("agent_a", "agenta", "a"), "b": ("agent_b", "agentb", "b")}
_DIM_KEYS = {d: (d,) for d in BLIND_DIMENSIONS}
_DIM_KEYS["hallucination_safety"] = ("hallucination_safety", "hallucination")
_NOTES_KEYS = ("notes", "note")

_TIE_WORDS = frozenset({"tie", "tied", "draw", "even", "equal", "equivalent", "neither"})
_FILLER = frozenset(
    {"agent", "wins", "win", "winner", "won", "is", "the", "verdict", "answer", "better", "it", "s"}
)
_SCORE_TEXT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*(?:/\s*5)?\s*$")


@dataclass(frozen=True)
class BlindScores:
    """How a blind-scores rubric's output is read; the defaults are seed 001's.

    Each agent's block (``blocks``: the keys that may hold agent A's and agent B's scores)
    holds one integer score per dimension in ``scores`` (inclusive range); ``verdicts`` adds
    exact spellings of ``a_wins`` / ``b_wins`` / ``tie`` to the seed's reading (letters
    ``a``/``b`` and tie words such as ``draw``).

    Examples
    --------
    >>> spec = BlindScores(verdicts=(("first", "a_wins"), ("second", "b_wins")))
    >>> spec.verdicts_in_text("First"), spec.verdicts_in_text("Agent B wins")
    ({'a_wins'}, {'b_wins'})
    """

    verdict_fields: tuple[str, ...] = _VERDICT_KEYS
    reasoning_fields: tuple[str, ...] = _REASONING_KEYS
    notes_fields: tuple[str, ...] = _NOTES_KEYS
    blocks: tuple[tuple[str, ...], tuple[str, ...]] = (_BLOCK_KEYS["a"], _BLOCK_KEYS["b"])
    dimension_keys: tuple[tuple[str, tuple[str, ...]], ...] = tuple(_DIM_KEYS.items())
    verdicts: tuple[tuple[str, str], ...] = ()
    scores: tuple[int, int] = (1, 5)

    def keys_of(self, dim: str) -> tuple[str, ...]:
        return dict(self.dimension_keys).get(dim, (dim,))

    def block_keys(self, side: str) -> tuple[str, ...]:
        return self.blocks[0] if side == "a" else self.blocks[1]

    def verdicts_in_text(self, value: str) -> set[str]:
        low = norm_key(value)
        for spelling, label in self.verdicts:
            if low == norm_key(spelling):
                return {label}
        return _verdicts_in_text(value)

    def score(self, value: Any, where: str) -> int:
        return _score(value, where, self.scores)


def parse_verdict_label(value: Any) -> str:
    """One verdict value as written by a judge -> ``"a_wins"``, ``"b_wins"`` or ``"tie"``.

    Raises
    ------
    ParseError
        If the value names no verdict or two different ones.

    Examples
    --------
    >>> parse_verdict_label("Agent A")
    'a_wins'
    >>> parse_verdict_label("draw")
    'tie'
    """
    found = labels_named(value, _verdicts_in_text, what="verdict")
    return one_label(found, what="labels (verdicts)")


def _verdicts_in_text(value: str) -> set[str]:
    tokens = re.findall(r"[a-z]+", value.lower())
    letters = {t for t in tokens if t in ("a", "b")}
    tie = any(t in _TIE_WORDS for t in tokens)
    other = [t for t in tokens if t not in _FILLER and t not in _TIE_WORDS and t not in ("a", "b")]
    found = {f"{c}_wins" for c in letters} | ({"tie"} if tie else set())
    if len(found) > 1:
        return found
    if other or not found:
        raise ParseError(f"unrecognised verdict: {value!r:.80}")
    return found


def _score(value: Any, where: str, bounds: tuple[int, int] = (1, 5)) -> int:
    lo, hi = bounds
    if isinstance(value, bool) or value is None:
        raise ParseError(f"score {where} is not a number: {as_field_text(value)!r}")
    if isinstance(value, str):
        m = _SCORE_TEXT.match(value) if hi == 5 else _score_text(hi).match(value)
        if m is None:
            raise ParseError(f"score {where} is not a number: {value!r:.40}")
        value = float(m.group(1))
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ParseError(f"score {where} is not an integer: {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise ParseError(f"score {where} is not a number: {as_field_text(value)!r:.40}")
    if not lo <= value <= hi:
        raise ParseError(f"score {where} = {value} is outside {lo}-{hi}")
    return value


def _score_text(hi: int) -> re.Pattern[str]:
    return re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+))\s*(?:/\s*" + str(hi) + r")?\s*$")


def _block(
    src: Mapping[str, Any], root: Any, side: str, keys: tuple[str, ...]
) -> Mapping[str, Any]:
    found = [v for v in values_for(src, keys) if isinstance(v, dict)]
    if not found:
        # Tolerate a wrapper such as {"scores": {"agent_a": {...}, ...}, "verdict": ...}.
        for d in iter_dicts(root):
            found = [v for v in values_for(d, keys) if isinstance(v, dict)]
            if found:
                break
    if not found:
        raise ParseError(f"missing agent block: agent_{side}")
    return found[-1]


def format_files(files: Any) -> str:
    """Files an agent inspected, one ``- path`` per line; ``(none)`` if empty or missing.

    Examples
    --------
    >>> print(format_files(["a/b.go", "c.py"]))
    - a/b.go
    - c.py
    >>> format_files(None)
    '(none)'
    """
    if is_missing(files):
        return NO_FILES
    if isinstance(files, str | bytes) or not hasattr(files, "__iter__"):
        raise TypeError(f"files_inspected must be a list of paths, got {type(files).__name__}")
    paths = [str(p) for p in files if not is_missing(p) and str(p).strip()]
    if not paths:
        return NO_FILES
    return "\n".join(f"- {p}" for p in paths)


@dataclass(frozen=True)
class BlindPairRubric(Rubric):
    """Seed 001: four 1-5 scores per agent and a winner, arms hidden behind Agent A / B.

    Also the class of every ``blind-scores`` rubric file: ``spec`` says how its output is
    read, and :meth:`render` fills whichever of :data:`KNOWN_PLACEHOLDERS` its template uses.
    """

    spec: BlindScores = field(default=BlindScores(), kw_only=True, repr=False)

    @property
    def kind(self) -> str:
        return "blind-scores"

    def render(
        self,
        task: Mapping[str, Any],
        with_run: Mapping[str, Any],
        without_run: Mapping[str, Any],
        *,
        order: str | None = None,
    ) -> RenderedPrompt:
        """Fill the blind user message for one pair, Agent A first.

        Parameters
        ----------
        task : Mapping
            ``prompt`` (str); the canonical answer is deliberately not shown.
        with_run, without_run : Mapping
            ``answer`` (str) and optional ``files_inspected`` (list of paths or None).
        order : {"with_first", "without_first"}
            Which arm is shown as Agent A.  Required.

        Examples
        --------
        >>> from evalstats import rubrics
        >>> r = rubrics.get("blind-pair")
        >>> p = r.render(
        ...     {"prompt": "Where is X?", "canonical_answer": "x.go"},
        ...     {"answer": "x.go:10", "files_inspected": ["x.go"]},
        ...     {"answer": "not sure"},
        ...     order="without_first",
        ... )
        >>> print(p.user.split("\\n\\n")[1])
        AGENT A ANSWER:
        not sure
        """
        o = normalise_order(order)
        if o is None:
            raise ValueError(
                f"rubric {self.name!r} needs order='with_first' or 'without_first' "
                "(which arm is shown as Agent A)"
            )
        runs = {"a": with_run, "b": without_run}
        if o == "without_first":
            runs = {"a": without_run, "b": with_run}
        used = set(self.placeholders)
        values: dict[str, str] = {}
        if "task_prompt" in used:
            values["task_prompt"] = require_text(task, "prompt", what="task")
        if "canonical_answer" in used:
            values["canonical_answer"] = require_text(task, "canonical_answer", what="task")
        for side, run in runs.items():
            # Name the run by its blind side only: an error message is not a leak, but the
            # code should not need the arm to fill a blind slot.
            if f"agent_{side}_answer" in used:
                values[f"agent_{side}_answer"] = require_text(
                    run, "answer", what=f"agent {side} run"
                )
            if f"agent_{side}_files" in used:
                values[f"agent_{side}_files"] = format_files(run.get("files_inspected"))
        return RenderedPrompt(system=self.system, user=fill(self.user_template, values))

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge's output; with ``order``, map it back to WITH/WITHOUT.

        Raises
        ------
        ParseError
            No JSON object, no verdict, an unrecognised verdict, two different verdicts, a
            missing agent block, or a score that is missing, not an integer or outside 1-5.

        Examples
        --------
        >>> from evalstats import rubrics
        >>> r = rubrics.get("blind-pair")
        >>> block = '"correctness": 4, "specificity": 4, "completeness": 3, "hallucination_safety": 5'
        >>> out = '{"agent_a": {%s}, "agent_b": {%s}, "verdict": "B"}' % (block, block)
        >>> r.parse(out, order="without_first").outcome
        'win'
        """
        o = normalise_order(order)
        spec = self.spec
        objects = find_objects(text)
        if not objects:
            raise ParseError("no JSON object found")
        vkeys = spec.verdict_fields
        carriers = [(obj, d) for obj in objects for d in iter_dicts(obj) if values_for(d, vkeys)]
        if not carriers:
            raise ParseError(f"verdict missing: no JSON object has a {vkeys[0]!r} field")
        labels: set[str] = set()
        for _, d in carriers:
            for v in values_for(d, vkeys):
                labels |= labels_named(v, spec.verdicts_in_text, what="verdict")
        if len(labels) > 1:
            raise ParseError(f"two different labels (verdicts): {', '.join(sorted(labels))}")
        label = labels.pop()
        root, src = carriers[-1]

        # a/b -> with/without (or kept as a/b when the order is unknown).
        if o is None:
            prefix = {"a": "a", "b": "b"}
        elif o == "with_first":
            prefix = {"a": "with", "b": "without"}
        else:
            prefix = {"a": "without", "b": "with"}
        side_scores: dict[str, dict[str, int]] = {}
        fields: dict[str, str] = {}
        block_keys: set[str] = set()
        blocks = {side: _block(src, root, side, spec.block_keys(side)) for side in ("a", "b")}
        known = {k for dim in self.dimensions for k in spec.keys_of(dim)} | set(spec.notes_fields)
        for side, block in blocks.items():
            block_keys.update(spec.block_keys(side))
            got: dict[str, int] = {}
            for dim in self.dimensions:
                vals = values_for(block, spec.keys_of(dim))
                where = f"agent_{side}.{dim}"
                if not vals:
                    raise ParseError(f"missing score: {where}")
                scores = {spec.score(v, where) for v in vals}
                if len(scores) > 1:
                    raise ParseError(f"two different scores for {where}: {sorted(scores)}")
                got[dim] = scores.pop()
            side_scores[side] = got
            notes = last_text(values_for(block, spec.notes_fields))
            if notes is not None:
                fields[f"notes_{prefix[side]}"] = notes
            for k, v in block.items():
                nk = norm_key(k)
                t = as_field_text(v)
                if nk and nk not in known and t is not None:
                    fields[f"{prefix[side]}_{nk}"] = t

        used = set(vkeys) | set(spec.reasoning_fields) | block_keys
        block_ids = {id(b) for b in blocks.values()}
        for k, v in src.items():
            nk = norm_key(k)
            if not nk or nk in used or any(id(d) in block_ids for d in iter_dicts(v)):
                continue  # a wrapper such as "scores" holding the agent blocks
            t = as_field_text(v)
            if t is not None:
                fields.setdefault(nk, t)

        ordered = ("a", "b") if o != "without_first" else ("b", "a")
        scores_out = {
            f"{prefix[side]}_{dim}": side_scores[side][dim]
            for side in ordered
            for dim in self.dimensions
        }
        return Verdict(
            label=label,
            outcome=_outcome(label, o),
            reasoning=last_text(values_for(src, spec.reasoning_fields)),
            uncertainty=None,
            judge_cost_ratio=None,
            scores=scores_out,
            fields=fields,
        )


def _outcome(label: str, order: str | None) -> str | None:
    if label == "tie":
        return "tie"
    if order is None:
        return None
    a_is_with = order == "with_first"
    return "win" if (label == "a_wins") == a_is_with else "loss"


def load() -> BlindPairRubric:
    raw_system = read_data(SYSTEM_FILE)
    raw_user = read_data(USER_FILE)
    header, sep, rest = raw_system.decode("utf-8").partition("\n")
    if header.strip() != HEADER or not sep:
        raise RuntimeError(f"{SYSTEM_FILE}: expected the header line {HEADER!r}")
    system = rest.lstrip("\n")
    user = raw_user.decode("utf-8")
    user = user.removesuffix("\n")
    check_placeholders(user, PLACEHOLDERS, source=USER_FILE)
    return BlindPairRubric(
        name=NAME,
        revision=REVISION,
        sha256=sha256_of(raw_system, raw_user),
        system=system,
        user_template=user,
        dimensions=BLIND_DIMENSIONS,
        needs_order=True,
    )


register(NAME, load)
