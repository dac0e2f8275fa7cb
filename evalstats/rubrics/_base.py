"""Rubric, verdict and rendered-prompt types, and the helpers both rubric kinds share."""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from evalstats._schema import ORDERS
from evalstats.errors import ParseError

from ._lenient_json import find_objects, iter_dicts


@dataclass(frozen=True)
class RenderedPrompt:
    """The two messages a judge receives: ``system`` and ``user``."""

    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        """Chat messages in the order the providers expect."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


@dataclass(frozen=True)
class Verdict:
    """One judge output, read and mapped back to WITH's point of view.

    ``label`` is the rubric's own (``"(a)"`` or ``"a_wins"``); ``outcome`` is win/tie/loss for
    WITH (None for blind-pair without an order); ``scores`` are blind-pair scores
    (``with_<dim>``, or ``a_<dim>`` without an order); ``fields`` every other field, verbatim.
    """

    label: str
    outcome: str | None
    reasoning: str | None
    uncertainty: str | None
    judge_cost_ratio: float | None
    scores: dict[str, int]
    fields: dict[str, str]


@dataclass(frozen=True)
class Rubric:
    """A judge prompt at one revision: the text, how to fill it in and how to read the answer.

    ``sha256`` is that of the package-data files (or the rubric file, at ``path``);
    ``user_template`` holds ``{placeholder}`` fields; ``dimensions`` are blind-pair scores;
    ``needs_order``: :meth:`render` and :meth:`parse` take an ``order``; ``family``: the seed
    rubric it was made from (``rubric new --from``; a seed's own name), which the headline
    rule reads as that seed.
    """

    name: str
    revision: int
    sha256: str
    system: str = field(repr=False)
    user_template: str = field(repr=False)
    dimensions: tuple[str, ...]
    needs_order: bool
    path: str | None = field(default=None, kw_only=True)
    family: str | None = field(default=None, kw_only=True)

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The ``{placeholder}`` names of :attr:`user_template`, in order of appearance."""
        return tuple(dict.fromkeys(PLACEHOLDER_PATTERN.findall(self.user_template)))

    def render(
        self,
        task: Mapping[str, Any],
        with_run: Mapping[str, Any],
        without_run: Mapping[str, Any],
        *,
        order: str | None = None,
    ) -> RenderedPrompt:
        """Fill the prompt for one pair of runs (``task``: prompt, canonical_answer; runs:
        answer and, when shown, tokens, wall_s, files_inspected)."""
        return self._fill(task, self._runs(with_run, without_run, order))

    def _runs(self, with_run: Any, without_run: Any, order: str | None) -> dict[str, tuple]:
        """Placeholder prefix -> (run, its name in errors), for ``order``."""
        raise NotImplementedError

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge output; raise :class:`~evalstats.errors.ParseError` if impossible."""
        raise NotImplementedError

    def _fill(self, task: Mapping[str, Any], runs: Mapping[str, tuple[Any, str]]) -> RenderedPrompt:
        used = set(self.placeholders)
        values: dict[str, str] = {}
        for key, src in (("task_prompt", "prompt"), ("canonical_answer", "canonical_answer")):
            if key in used:
                values[key] = require(task, src, what="task", text=True)
        for prefix, (run, what) in runs.items():
            if f"{prefix}_answer" in used:
                values[f"{prefix}_answer"] = require(run, "answer", what=what, text=True)
            if f"{prefix}_token_cost" in used:
                tokens = require(run, "tokens", what=what)
                values[f"{prefix}_token_cost"] = format_tokens(tokens, what=f"{what}['tokens']")
            if f"{prefix}_wall_clock" in used:
                wall = require(run, "wall_s", what=what)
                values[f"{prefix}_wall_clock"] = format_wall_clock(wall)
            if f"{prefix}_files" in used:
                values[f"{prefix}_files"] = format_files(run.get("files_inspected"))
        pattern = re.compile("|".join(re.escape("{" + k + "}") for k in values))
        user = pattern.sub(lambda m: values[m.group()[1:-1]], self.user_template)
        return RenderedPrompt(system=self.system, user=user)


def read_data(filename: str) -> bytes:
    return resources.files("evalstats.rubrics").joinpath("data", filename).read_bytes()


def sha256_of(*blobs: bytes) -> str:
    return hashlib.sha256(b"".join(blobs)).hexdigest()


PLACEHOLDER_PATTERN = re.compile(r"\{([a-z_]+)\}")


def check_placeholders(template: str, expected: Sequence[str], source: str) -> None:
    found = PLACEHOLDER_PATTERN.findall(template)
    if sorted(found) != sorted(expected):
        raise RuntimeError(f"{source}: placeholders {found} differ from {list(expected)}")


def format_wall_clock(seconds: float) -> str:
    """Wall-clock time as the judge sees it: always seconds, one decimal.

    >>> format_wall_clock(83.24), format_wall_clock(600)
    ('83.2 s', '600.0 s')
    """
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"wall-clock seconds must be a number, got {type(seconds).__name__}")
    x = float(seconds)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"wall-clock seconds must be finite and >= 0, got {seconds!r}")
    return f"{x:.1f} s"


def format_tokens(tokens: Any, *, what: str) -> str:
    if isinstance(tokens, bool) or not isinstance(tokens, numbers.Real):
        raise TypeError(f"{what} must be an integer token count, got {type(tokens).__name__}")
    x = tokens if isinstance(tokens, numbers.Integral) else float(tokens)
    if isinstance(x, float) and (not math.isfinite(x) or not x.is_integer()):
        raise ValueError(f"{what} must be an integer token count, got {tokens!r}")
    if int(x) < 0:
        raise ValueError(f"{what} must be >= 0, got {int(x)}")
    return str(int(x))


def format_files(files: Any) -> str:
    """Files an agent inspected, one ``- path`` per line; ``(none)`` if empty or missing."""
    if is_missing(files):
        return "(none)"
    if isinstance(files, str | bytes) or not hasattr(files, "__iter__"):
        raise TypeError(f"files_inspected must be a list of paths, got {type(files).__name__}")
    paths = [str(p) for p in files if not is_missing(p) and str(p).strip()]
    return "\n".join(f"- {p}" for p in paths) if paths else "(none)"


def require(mapping: Mapping[str, Any], key: str, *, what: str, text: bool = False) -> Any:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping, got {type(mapping).__name__}")
    if key not in mapping:
        raise ValueError(f"{what} has no {key!r}")
    value = mapping[key]
    if text and not isinstance(value, str):
        raise TypeError(f"{what}[{key!r}] must be a string, got {type(value).__name__}")
    return value


def is_missing(value: Any) -> bool:
    nan = isinstance(value, float) and math.isnan(value)
    return value is None or nan or type(value).__name__ == "NAType"


def normalise_order(order: Any) -> str | None:
    if is_missing(order):
        return None
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS} or None, got {order!r}")
    return str(order)


@lru_cache(maxsize=4096)  # judges repeat the same few keys in every verdict
def norm_key(key: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", str(key).lower()).strip("_")


def values_for(obj: Mapping[str, Any], keys: Sequence[str]) -> list[Any]:
    """Every value in ``obj`` whose normalised key is in ``keys`` (duplicates included)."""
    out: list[Any] = []
    dupes = getattr(obj, "dupes", {})
    for k, v in obj.items():
        if norm_key(k) in keys:
            out.extend(dupes.get(k, [v]))
    return out


def as_field_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return str(value)


def last_text(values: Sequence[Any]) -> str | None:
    """The last non-empty value as text (a judge that repeats a field corrects it last)."""
    texts = [t for t in (as_field_text(v) for v in values) if t is not None]
    return texts[-1] if texts else None


def labels_named(value: Any, read_text: Callable[[str], set[str]], *, what: str) -> set[str]:
    """Every label a judge's field names: a string, or a list of strings (first 20 read)."""
    if isinstance(value, list) and value:
        return set().union(*(labels_named(v, read_text, what=what) for v in value[:20]))
    if not isinstance(value, str):
        raise ParseError(f"unrecognised {what}: {as_field_text(value)!r:.80}")
    return read_text(value)


def read_label(
    text: str,
    keys: Sequence[str],
    fallback: Sequence[str],
    read_text: Callable[[str], set[str]],
    *,
    what: str,
) -> tuple[str, Any, Mapping[str, Any]]:
    """(label, outermost object, dict that carried it last); two labels are a ParseError."""
    objects = find_objects(text)
    if not objects:
        raise ParseError("no JSON object found")
    dicts = [(obj, d) for obj in objects for d in iter_dicts(obj)]
    for ks in (keys, fallback):
        carriers = [(obj, d) for obj, d in dicts if values_for(d, ks)]
        if carriers:
            break
    else:
        raise ParseError(f"{what} missing: no JSON object has a {keys[0]!r} field")
    found: set[str] = set()
    for _, d in carriers:
        for v in values_for(d, ks):
            found |= labels_named(v, read_text, what=what)
    if len(found) > 1:
        plural = "labels" if what == "label" else f"labels ({what}s)"
        raise ParseError(f"two different {plural}: {', '.join(sorted(found))}")
    return found.pop(), *carriers[-1]
