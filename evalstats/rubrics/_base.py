"""Rubric, verdict and rendered-prompt types, the rubric registry and package-data loading."""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from evalstats._schema import ORDERS
from evalstats.errors import ParseError

__all__ = [
    "RenderedPrompt",
    "Rubric",
    "Verdict",
    "format_wall_clock",
    "get",
    "names",
]


@dataclass(frozen=True)
class RenderedPrompt:
    """The two messages a judge receives: ``system`` and ``user``."""

    system: str
    user: str

    def messages(self) -> list[dict[str, str]]:
        """Chat messages in the order the providers expect."""
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]


@dataclass(frozen=True)
class Verdict:
    """One judge output, read and mapped back to WITH's point of view.

    Attributes
    ----------
    label : str
        The rubric's own canonical label: ``"(a)"``, ``"(b)"``, ``"(c)"`` (with-without) or
        ``"a_wins"``, ``"b_wins"``, ``"tie"`` (blind-pair).
    outcome : str or None
        ``"win"``, ``"tie"`` or ``"loss"`` for WITH; ``None`` for blind-pair read without an
        order (Agent A cannot be mapped to an arm).
    reasoning : str or None
        The judge's ``reasoning`` (with-without) or ``verdict_reasoning`` (blind-pair).
    uncertainty : str or None
        ``"low"``, ``"medium"`` or ``"high"`` (with-without); ``None`` when absent or
        unreadable, and always for blind-pair.
    judge_cost_ratio : float or None
        The cost ratio the judge claimed (with-without), first number of the field.
    scores : dict of str to int
        Blind-pair scores, keyed ``with_<dim>``/``without_<dim>`` when the order is known,
        ``a_<dim>``/``b_<dim>`` otherwise.  Empty for with-without.
    fields : dict of str to str
        Every other field, verbatim as a string.
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

    Attributes
    ----------
    name, revision : str, int
        Identity of the prompt; a changed word needs a new revision.
    sha256 : str
        Hex sha256 over the bytes of the rubric's package-data files, concatenated in a
        fixed order (for a one-file rubric, ``sha256sum`` of that file).
    system : str
        The system prompt.
    user_template : str
        The user message with ``{placeholder}`` fields (filled by exact replacement, not
        ``str.format``).
    dimensions : tuple of str
        Score dimensions (blind-pair) or ``()``.
    needs_order : bool
        Whether :meth:`render` and the mapping back to WITH/WITHOUT need an ``order``.
    arms : tuple of (str, str)
        Display names of the WITH and WITHOUT arms (``("WITH", "WITHOUT")`` unless a rubric
        file names them); see :attr:`arm_names`.
    path : str or None
        The rubric file this rubric was read from; ``None`` for the built-in ones.
    """

    name: str
    revision: int
    sha256: str
    system: str = field(repr=False)
    user_template: str = field(repr=False)
    dimensions: tuple[str, ...]
    needs_order: bool
    arms: tuple[str, str] = field(default=("WITH", "WITHOUT"), kw_only=True)
    path: str | None = field(default=None, kw_only=True)

    @property
    def arm_names(self) -> dict[str, str]:
        """``{"with": ..., "without": ...}``: what the report calls the two arms."""
        return {"with": self.arms[0], "without": self.arms[1]}

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The ``{placeholder}`` names of :attr:`user_template`, in order of appearance."""
        return tuple(dict.fromkeys(_PLACEHOLDER.findall(self.user_template)))

    def render(
        self,
        task: Mapping[str, Any],
        with_run: Mapping[str, Any],
        without_run: Mapping[str, Any],
        *,
        order: str | None = None,
    ) -> RenderedPrompt:
        """Fill the prompt for one pair of runs."""
        raise NotImplementedError

    def parse(self, text: str, order: str | None = None) -> Verdict:
        """Read a judge output; raise :class:`~evalstats.errors.ParseError` if impossible."""
        raise NotImplementedError


# --------------------------------------------------------------------------- registry

_FACTORIES: dict[str, Callable[[], Rubric]] = {}


def register(name: str, factory: Callable[[], Rubric]) -> None:
    """Make ``factory`` (called once, lazily) the source of rubric ``name``."""
    _FACTORIES[name] = factory


def names() -> tuple[str, ...]:
    """Names of the known rubrics, sorted.

    Examples
    --------
    >>> from evalstats import rubrics
    >>> rubrics.names()
    ('blind-pair', 'with-without')
    """
    return tuple(sorted(_FACTORIES))


def get(name: str) -> Rubric:
    """The rubric called ``name`` (see :func:`names`).

    Raises
    ------
    KeyError
        If no rubric has that name; the message lists the known names.

    Examples
    --------
    >>> from evalstats import rubrics
    >>> r = rubrics.get("with-without")
    >>> r.revision, r.needs_order
    (1, False)
    """
    if not isinstance(name, str) or name not in _FACTORIES:
        raise KeyError(f"unknown rubric {name!r}; known rubrics: {', '.join(names())}")
    return _build(name)


@cache
def _build(name: str) -> Rubric:
    return _FACTORIES[name]()


# --------------------------------------------------------------------------- package data


def read_data(filename: str) -> bytes:
    """Bytes of ``evalstats/rubrics/data/<filename>``."""
    return resources.files("evalstats.rubrics").joinpath("data", filename).read_bytes()


def sha256_of(*blobs: bytes) -> str:
    h = hashlib.sha256()
    for b in blobs:
        h.update(b)
    return h.hexdigest()


def fenced_block_after(text: str, heading: str, *, source: str) -> str:
    """Content of the first ``` block after the Markdown heading line ``heading``."""
    lines = text.split("\n")
    try:
        h = next(i for i, line in enumerate(lines) if line.rstrip() == heading)
    except StopIteration:
        raise RuntimeError(f"{source}: heading {heading!r} not found") from None
    try:
        start = next(i for i in range(h + 1, len(lines)) if lines[i].startswith("```"))
        end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == "```")
    except StopIteration:
        raise RuntimeError(f"{source}: no complete ``` block after {heading!r}") from None
    return "\n".join(lines[start + 1 : end])


_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
# Public for the rubric-file reader: what counts as a {placeholder} in a user template.
PLACEHOLDER_PATTERN = _PLACEHOLDER


def check_placeholders(template: str, expected: Sequence[str], *, source: str) -> None:
    """The template holds each expected placeholder exactly once, and no other."""
    found = _PLACEHOLDER.findall(template)
    if sorted(found) != sorted(expected):
        raise RuntimeError(f"{source}: placeholders {found} differ from {list(expected)}")


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each ``{name}`` of ``values`` in one pass."""
    pattern = re.compile("|".join(re.escape("{" + k + "}") for k in values))
    return pattern.sub(lambda m: values[m.group()[1:-1]], template)


# --------------------------------------------------------------------------- inputs


def format_wall_clock(seconds: float) -> str:
    """Wall-clock time as the judge sees it: seconds with one decimal, e.g. ``"83.2 s"``.

    Always seconds (no minutes), so that the two runs of a pair read on the same scale and
    the judge compares numbers, not formats.

    Examples
    --------
    >>> format_wall_clock(83.24)
    '83.2 s'
    >>> format_wall_clock(600)
    '600.0 s'
    """
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):
        raise TypeError(f"wall-clock seconds must be a number, got {type(seconds).__name__}")
    x = float(seconds)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"wall-clock seconds must be finite and >= 0, got {seconds!r}")
    return f"{x:.1f} s"


def format_tokens(tokens: Any, *, what: str) -> str:
    """A counted token number as a plain integer string (no separators)."""
    if isinstance(tokens, bool) or not isinstance(tokens, numbers.Real):
        raise TypeError(f"{what} must be an integer token count, got {type(tokens).__name__}")
    if isinstance(tokens, numbers.Integral):
        n = int(tokens)
    else:
        x = float(tokens)
        # Integer columns with missing values arrive as floats from pandas.
        if not math.isfinite(x) or not x.is_integer():
            raise ValueError(f"{what} must be an integer token count, got {tokens!r}")
        n = int(x)
    if n < 0:
        raise ValueError(f"{what} must be >= 0, got {n}")
    return str(n)


def require_text(mapping: Mapping[str, Any], key: str, *, what: str) -> str:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping, got {type(mapping).__name__}")
    if key not in mapping:
        raise ValueError(f"{what} has no {key!r}")
    value = mapping[key]
    if not isinstance(value, str):
        raise TypeError(f"{what}[{key!r}] must be a string, got {type(value).__name__}")
    return value


def require_value(mapping: Mapping[str, Any], key: str, *, what: str) -> Any:
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{what} must be a mapping, got {type(mapping).__name__}")
    if key not in mapping:
        raise ValueError(f"{what} has no {key!r}")
    return mapping[key]


def is_missing(value: Any) -> bool:
    """None, a float NaN or pandas' NA (what a frame gives for an absent optional field)."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return type(value).__name__ == "NAType"


def normalise_order(order: Any) -> str | None:
    if is_missing(order):
        return None
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS} or None, got {order!r}")
    return str(order)


# --------------------------------------------------------------------------- parse helpers


def norm_key(key: Any) -> str:
    """``"Hallucination Safety"`` -> ``"hallucination_safety"``."""
    return _norm_text(str(key))


_NON_WORD = re.compile(r"[^0-9a-z]+")


@lru_cache(maxsize=4096)  # judges repeat the same few keys in every verdict
def _norm_text(key: str) -> str:
    return _NON_WORD.sub("_", key.lower()).strip("_")


def values_for(obj: Mapping[str, Any], keys: Sequence[str]) -> list[Any]:
    """Every value in ``obj`` whose normalised key is in ``keys`` (duplicates included)."""
    out: list[Any] = []
    dupes = getattr(obj, "dupes", {})
    for k, v in obj.items():
        if norm_key(k) in keys:
            out.extend(dupes.get(k, [v]))
    return out


def as_field_text(value: Any) -> str | None:
    """A field value as the verbatim string stored in :attr:`Verdict.fields`."""
    if value is None:
        return None
    if isinstance(value, str):
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
        out: set[str] = set()
        for v in value[:20]:
            out |= labels_named(v, read_text, what=what)
        return out
    if not isinstance(value, str):
        raise ParseError(f"unrecognised {what}: {as_field_text(value)!r:.80}")
    return read_text(value)


def one_label(found: set[str], *, what: str) -> str:
    """The single label in ``found``; two different ones are a ParseError, never a guess."""
    if len(found) > 1:
        raise ParseError(f"two different {what}: {', '.join(sorted(found))}")
    return found.pop()
