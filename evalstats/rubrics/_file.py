"""Rubric files: a judge prompt of your own, in TOML, read into the same :class:`Rubric` types.

How it works: docs/judging.md, "Rubric files".
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalstats.errors import DataError

from . import _base
from ._base import PLACEHOLDER_PATTERN, Rubric, norm_key
from .blind_pair import KNOWN_PLACEHOLDERS as BLIND_PLACEHOLDERS
from .blind_pair import REQUIRED_PLACEHOLDERS as BLIND_REQUIRED
from .blind_pair import BlindPairRubric, BlindScores
from .with_without import GORTEX_MENTION, OUTCOMES, ThreeWay, WithWithoutRubric, tool_name
from .with_without import KNOWN_PLACEHOLDERS as THREE_WAY_PLACEHOLDERS
from .with_without import REQUIRED_PLACEHOLDERS as THREE_WAY_REQUIRED

__all__ = ["KINDS", "get", "load", "seed_toml", "to_toml", "with_tool_name"]

# A prompt of a few pages and its fields; anything past this is not a rubric.
MAX_RUBRIC_BYTES = 4_000_000

KINDS = ("three-way", "blind-scores")
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_TOP_KEYS = {"name", "revision", "kind", "description", "arms", "prompt", "output"}
_THREE_WAY_KEYS = {
    "labels",
    "aliases",
    "label_fields",
    "fallback_fields",
    "reasoning_fields",
    "uncertainty_fields",
    "cost_ratio_fields",
}
_BLIND_KEYS = {
    "dimensions",
    "dimension_aliases",
    "verdict_fields",
    "reasoning_fields",
    "notes_fields",
    "blocks",
    "verdicts",
    "scores",
}
_VERDICT_LABELS = ("a_wins", "b_wins", "tie")


# --------------------------------------------------------------------------- lookup


def get(name_or_path: str | os.PathLike[str]) -> Rubric:
    """A built-in rubric by name, or the rubric in a ``.toml`` file by path.

    Raises
    ------
    KeyError
        If ``name_or_path`` is neither a known rubric name nor a path to a file.
    DataError
        If the file is not a valid rubric file (the message names the file, line and field).

    Examples
    --------
    >>> from evalstats import rubrics
    >>> rubrics.get("blind-pair").kind
    'blind-scores'
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "mine.toml"
    >>> _ = path.write_text(rubrics.seed_toml("with-without").replace(
    ...     'name = "with-without"', 'name = "mine"'), encoding="utf-8")
    >>> rubrics.get(path).name, rubrics.get(str(path)).kind
    ('mine', 'three-way')
    """
    if isinstance(name_or_path, str) and name_or_path in _base.names():
        return _base.get(name_or_path)
    if isinstance(name_or_path, os.PathLike) or (
        isinstance(name_or_path, str)
        and (name_or_path.endswith(".toml") or os.sep in name_or_path or "/" in name_or_path)
    ):
        return load(name_or_path)
    raise KeyError(
        f"unknown rubric {name_or_path!r}; known rubrics: {', '.join(_base.names())}, "
        "or a path to a rubric .toml file"
    )


def load(path: str | os.PathLike[str]) -> Rubric:
    """Read a rubric file (TOML) into a :class:`Rubric`.

    Raises
    ------
    DataError
        The file is missing or not TOML (with the line tomllib reports), or a field is
        missing or wrong: unknown ``kind``, a placeholder the kind does not know or a
        required one missing, labels that do not cover win / tie / loss, ...

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from evalstats import rubrics
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.toml"
    >>> _ = path.write_text('name = "x"\\nrevision = 1\\nkind = "pairwise"\\n')
    >>> rubrics.load(path)
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: .../bad.toml:3, field 'kind': unknown output kind 'pairwise'; known kinds: three-way, blind-scores
    """
    p = Path(path)
    try:
        if p.is_file() and p.stat().st_size > MAX_RUBRIC_BYTES:
            raise DataError(
                f"a rubric file is a prompt and a few fields; this one is over "
                f"{MAX_RUBRIC_BYTES:,} bytes",
                path=p,
            )
        if p.exists() and not p.is_file():
            raise DataError("not a regular file", path=p)
        raw = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read rubric file: {e.strerror or e}", path=p) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text ({e.reason} at byte {e.start})", path=p) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line = int(m.group(1)) if m else None
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        col = f" (column {m.group(2)})" if m else ""
        raise DataError(f"not valid TOML: {msg}{col}", path=p, line=line) from None
    except RecursionError:
        # tomllib recurses once per nested array or inline table.
        raise DataError("not valid TOML for a rubric: it nests too deeply", path=p) from None
    try:
        return _from_document(doc, text, p, hashlib.sha256(raw).hexdigest())
    except RecursionError:
        raise DataError("a field nests too deeply to be a rubric field", path=p) from None


# --------------------------------------------------------------------------- validation


class _Where:
    """Turns a field problem into a DataError with the file and the field's line."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")

    def line_of(self, field: str) -> int | None:
        # The line of "key =" for the last part of a dotted field, inside its table when
        # the field is in one; a best effort, for the message only.
        parts = field.split(".")
        key = parts[-1].split("[")[0]
        table = ".".join(parts[:-1])
        start = 0
        if table:
            head = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]")
            start = next((i for i, s in enumerate(self.lines) if head.match(s)), 0)
        pat = re.compile(r'^\s*(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")\s*=")
        for i in range(start, len(self.lines)):
            if pat.match(self.lines[i]):
                return i + 1
        return start + 1 if table and start else None

    def error(self, field: str, message: str) -> DataError:
        return DataError(message, path=self.path, line=self.line_of(field), field=field)


def _str(doc: Mapping[str, Any], key: str, where: _Where, field: str) -> str:
    if key not in doc:
        raise where.error(field, "missing")
    v = doc[key]
    if not isinstance(v, str) or not v.strip():
        raise where.error(field, f"must be a non-empty string, got {v!r:.60}")
    return v


def _strs(doc: Mapping[str, Any], key: str, default: tuple[str, ...], where: _Where, field: str):
    if key not in doc:
        return default
    v = doc[key]
    if isinstance(v, str):
        v = [v]
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x.strip() for x in v):
        raise where.error(field, f"must be a non-empty list of strings, got {v!r:.60}")
    keys = tuple(dict.fromkeys(norm_key(x) for x in v))
    if not all(keys):
        raise where.error(field, f"has an empty field name: {v!r:.60}")
    return keys


def _table(doc: Mapping[str, Any], key: str, where: _Where, field: str) -> dict[str, Any]:
    v = doc.get(key, {})
    if not isinstance(v, dict):
        raise where.error(field, f"must be a table, got {type(v).__name__}")
    return v


def _no_unknown(table: Mapping[str, Any], known: set[str], where: _Where, prefix: str) -> None:
    for k in table:
        if k not in known:
            raise where.error(
                f"{prefix}{k}", f"unknown field; expected one of {', '.join(sorted(known))}"
            )


def _from_document(doc: dict[str, Any], text: str, path: Path, sha: str) -> Rubric:
    where = _Where(path, text)
    _no_unknown(doc, _TOP_KEYS, where, "")
    name = _str(doc, "name", where, "name")
    if not _NAME.match(name):
        raise where.error("name", f"{name!r} must be lower-case letters, digits, '.', '_' or '-'")
    if "revision" not in doc:
        raise where.error("revision", "missing")
    revision = doc["revision"]
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        raise where.error("revision", f"must be an integer >= 1, got {revision!r}")
    if "kind" not in doc:
        raise where.error("kind", f"missing; one of {', '.join(KINDS)}")
    kind = doc["kind"]
    if kind not in KINDS:
        raise where.error("kind", f"unknown output kind {kind!r}; known kinds: {', '.join(KINDS)}")
    if "description" in doc and not isinstance(doc["description"], str):
        raise where.error("description", "must be a string")

    arms_t = _table(doc, "arms", where, "arms")
    _no_unknown(arms_t, {"with", "without"}, where, "arms.")
    arms = (
        _str(arms_t, "with", where, "arms.with") if "with" in arms_t else "WITH",
        _str(arms_t, "without", where, "arms.without") if "without" in arms_t else "WITHOUT",
    )

    if "prompt" not in doc:
        raise where.error("prompt", "missing: a [prompt] table with 'system' and 'user'")
    prompt = _table(doc, "prompt", where, "prompt")
    _no_unknown(prompt, {"system", "user"}, where, "prompt.")
    system = _str(prompt, "system", where, "prompt.system")
    user = _str(prompt, "user", where, "prompt.user")
    known, required = (
        (THREE_WAY_PLACEHOLDERS, THREE_WAY_REQUIRED)
        if kind == "three-way"
        else (BLIND_PLACEHOLDERS, BLIND_REQUIRED)
    )
    found = PLACEHOLDER_PATTERN.findall(user)
    for ph in found:
        if ph not in known:
            hint = (
                " (a blind-scores prompt must not say which answer is WITH or WITHOUT)"
                if kind == "blind-scores" and ph.split("_")[0] in ("with", "without")
                else ""
            )
            raise where.error(
                "prompt.user",
                f"unknown placeholder {{{ph}}} for kind {kind!r}{hint}; "
                f"known: {', '.join('{' + k + '}' for k in known)}",
            )
    for ph in required:
        if ph not in found:
            raise where.error("prompt.user", f"missing placeholder {{{ph}}}")

    output = _table(doc, "output", where, "output")
    common = {"name": name, "revision": revision, "sha256": sha, "system": system}
    common |= {"user_template": user, "arms": arms, "path": str(path)}
    if kind == "three-way":
        _no_unknown(output, _THREE_WAY_KEYS, where, "output.")
        spec = _three_way(output, where)
        return WithWithoutRubric(**common, dimensions=(), needs_order=False, spec=spec)
    _no_unknown(output, _BLIND_KEYS, where, "output.")
    dims, spec = _blind(output, where)
    return BlindPairRubric(**common, dimensions=dims, needs_order=True, spec=spec)


def _three_way(output: Mapping[str, Any], where: _Where) -> ThreeWay:
    if "labels" not in output:
        raise where.error(
            "output.labels", 'missing: a table of label = outcome, e.g. "(a)" = "win"'
        )
    labels_t = _table(output, "labels", where, "output.labels")
    labels, outcomes = [], []
    for label, outcome in labels_t.items():
        if outcome not in OUTCOMES:
            raise where.error(
                f"output.labels.{label}",
                f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}",
            )
        if not label.strip():
            raise where.error("output.labels", "a label is empty")
        labels.append(label)
        outcomes.append(outcome)
    if sorted(outcomes) != sorted(OUTCOMES):
        raise where.error(
            "output.labels", f"must map one label each to win, tie and loss, got {labels_t!r}"
        )
    aliases_t = _table(output, "aliases", where, "output.aliases")
    aliases = []
    for spelling, label in aliases_t.items():
        if label not in labels:
            raise where.error(
                f"output.aliases.{spelling}", f"{label!r} is not one of the labels {labels}"
            )
        aliases.append((spelling, label))
    d = ThreeWay()
    return ThreeWay(
        labels=tuple(labels),
        outcomes=tuple(outcomes),
        aliases=tuple(aliases),
        label_fields=_strs(output, "label_fields", d.label_fields, where, "output.label_fields"),
        fallback_fields=_fallback(output, where),
        reasoning_fields=_strs(
            output, "reasoning_fields", d.reasoning_fields, where, "output.reasoning_fields"
        ),
        uncertainty_fields=_strs(
            output, "uncertainty_fields", d.uncertainty_fields, where, "output.uncertainty_fields"
        ),
        cost_ratio_fields=_strs(
            output, "cost_ratio_fields", d.cost_ratio_fields, where, "output.cost_ratio_fields"
        ),
    )


def _fallback(output: Mapping[str, Any], where: _Where) -> tuple[str, ...]:
    # An empty list is allowed here: no fallback field at all.
    if output.get("fallback_fields") == []:
        return ()
    return _strs(
        output, "fallback_fields", ThreeWay().fallback_fields, where, "output.fallback_fields"
    )


def _blind(output: Mapping[str, Any], where: _Where) -> tuple[tuple[str, ...], BlindScores]:
    if "dimensions" not in output:
        raise where.error("output.dimensions", "missing: the score dimensions, a list of names")
    dims = _strs(output, "dimensions", (), where, "output.dimensions")
    d = BlindScores()
    aliases_t = _table(output, "dimension_aliases", where, "output.dimension_aliases")
    dim_keys = []
    for dim in dims:
        extra = ()
        if dim in aliases_t:
            extra = _strs(aliases_t, dim, (), where, f"output.dimension_aliases.{dim}")
        dim_keys.append((dim, tuple(dict.fromkeys((dim, *extra)))))
    for k in aliases_t:
        if norm_key(k) not in dims:
            raise where.error(f"output.dimension_aliases.{k}", f"{k!r} is not a dimension")
    blocks_t = _table(output, "blocks", where, "output.blocks")
    _no_unknown(blocks_t, {"a", "b"}, where, "output.blocks.")
    blocks = (
        _strs(blocks_t, "a", d.blocks[0], where, "output.blocks.a"),
        _strs(blocks_t, "b", d.blocks[1], where, "output.blocks.b"),
    )
    if set(blocks[0]) & set(blocks[1]):
        raise where.error("output.blocks", "agent A and agent B share a block key")
    verdicts_t = _table(output, "verdicts", where, "output.verdicts")
    verdicts = []
    for spelling, label in verdicts_t.items():
        if label not in _VERDICT_LABELS:
            raise where.error(
                f"output.verdicts.{spelling}",
                f"must be one of {', '.join(_VERDICT_LABELS)}, got {label!r}",
            )
        verdicts.append((spelling, label))
    scores = output.get("scores", list(d.scores))
    if (
        not isinstance(scores, list)
        or len(scores) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in scores)
        or scores[0] >= scores[1]
    ):
        raise where.error("output.scores", f"must be [lowest, highest] integers, got {scores!r}")
    return dims, BlindScores(
        verdict_fields=_strs(
            output, "verdict_fields", d.verdict_fields, where, "output.verdict_fields"
        ),
        reasoning_fields=_strs(
            output, "reasoning_fields", d.reasoning_fields, where, "output.reasoning_fields"
        ),
        notes_fields=_strs(output, "notes_fields", d.notes_fields, where, "output.notes_fields"),
        blocks=blocks,
        dimension_keys=tuple(dim_keys),
        verdicts=tuple(verdicts),
        scores=(scores[0], scores[1]),
    )


# --------------------------------------------------------------------------- writing


def _toml_string(s: str) -> str:
    # A multi-line literal string keeps prompt text readable and byte-exact (no escapes);
    # the newline right after the opening quotes is dropped by TOML.  Text that a literal
    # string cannot hold gets a basic string with escapes instead.
    if "'''" not in s and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", s) and not s.endswith("'"):
        return "'''\n" + s + "'''"
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _inline(k)


def _inline(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _list(xs) -> str:
    return "[" + ", ".join(_inline(x) for x in xs) + "]"


def to_toml(rubric: Rubric, *, description: str | None = None) -> str:
    """The complete rubric-file form of ``rubric`` (every ``[output]`` key written out).

    :func:`load` of the result gives a rubric that renders and parses as ``rubric`` does.

    Examples
    --------
    >>> from evalstats import rubrics
    >>> print(rubrics.to_toml(rubrics.get("blind-pair")).splitlines()[0])
    name = "blind-pair"
    """
    if not isinstance(rubric, WithWithoutRubric | BlindPairRubric):
        raise TypeError(f"cannot write a {type(rubric).__name__} as a rubric file")
    lines = [
        f"name = {_inline(rubric.name)}",
        f"revision = {rubric.revision}",
        f"kind = {_inline(rubric.kind)}",
    ]
    if description:
        lines.append(f"description = {_inline(description)}")
    lines += [
        "",
        "[arms]",
        f"with = {_inline(rubric.arms[0])}",
        f"without = {_inline(rubric.arms[1])}",
        "",
        "[prompt]",
        f"system = {_toml_string(rubric.system)}",
        f"user = {_toml_string(rubric.user_template)}",
        "",
        "[output]",
    ]
    if isinstance(rubric, WithWithoutRubric):
        s = rubric.spec
        lines += [
            f"label_fields = {_list(s.label_fields)}",
            f"fallback_fields = {_list(s.fallback_fields)}",
            f"reasoning_fields = {_list(s.reasoning_fields)}",
            f"uncertainty_fields = {_list(s.uncertainty_fields)}",
            f"cost_ratio_fields = {_list(s.cost_ratio_fields)}",
            "",
            "[output.labels]",
            *(f"{_key(lab)} = {_inline(o)}" for lab, o in zip(s.labels, s.outcomes, strict=True)),
            "",
            "[output.aliases]",
            '# more spellings of a label, e.g.  better = "(a)"',
            *(f"{_key(sp)} = {_inline(lab)}" for sp, lab in s.aliases),
        ]
    else:
        b = rubric.spec
        keys = dict(b.dimension_keys)
        lines += [
            f"dimensions = {_list(rubric.dimensions)}",
            f"verdict_fields = {_list(b.verdict_fields)}",
            f"reasoning_fields = {_list(b.reasoning_fields)}",
            f"notes_fields = {_list(b.notes_fields)}",
            f"scores = [{b.scores[0]}, {b.scores[1]}]",
            "",
            "[output.blocks]",
            f"a = {_list(b.blocks[0])}",
            f"b = {_list(b.blocks[1])}",
            "",
            "[output.dimension_aliases]",
            *(
                f"{_key(d)} = {_list(keys[d][1:])}"
                for d in rubric.dimensions
                if len(keys.get(d, (d,))) > 1
            ),
            "",
            "[output.verdicts]",
            '# more spellings of a verdict, e.g.  first = "a_wins"',
            *(f"{_key(sp)} = {_inline(lab)}" for sp, lab in b.verdicts),
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def seed_toml(name: str) -> str:
    """The rubric-file form of a built-in rubric (``"with-without"`` or ``"blind-pair"``)."""
    r = _base.get(name)
    seed = {"with-without": "seed 000", "blind-pair": "seed 001"}.get(name, "built-in")
    return to_toml(
        r,
        description=f"The built-in {name!r} rubric ({seed}, revision {r.revision}) as a file",
    )


# --------------------------------------------------------------------------- new from a seed


def with_tool_name(rubric: Rubric, tool: str, *, name: str | None = None) -> Rubric:
    """``rubric`` with every mention of the seed's tool (gortex) replaced by ``tool``.

    The result is a new rubric: ``name`` (default: the rubric's name and a slug of ``tool``)
    at revision 1, not yet written to a file (its ``sha256`` is that of :func:`to_toml`'s
    text, which is what the file will hold).

    Examples
    --------
    >>> from evalstats import rubrics
    >>> r = rubrics.with_tool_name(rubrics.get("with-without"), "Serena MCP")
    >>> r.name, "gortex" in r.system + r.user_template, "WITH (Serena MCP available):" in r.user_template
    ('with-without-serena-mcp', False, True)
    """
    tool = tool_name(tool)
    if name is None:
        slug = re.sub(r"[^a-z0-9]+", "-", tool.lower()).strip("-")
        name = f"{rubric.name}-{slug}" if slug else f"{rubric.name}-custom"
    if not _NAME.match(name):
        raise ValueError(f"rubric name {name!r} must be lower-case letters, digits, '.', '_', '-'")

    def swap(text: str) -> str:
        return GORTEX_MENTION.sub(lambda _m: tool, text)

    fields = {
        "name": name,
        "revision": 1,
        "sha256": "",
        "system": swap(rubric.system),
        "user_template": swap(rubric.user_template),
        "dimensions": rubric.dimensions,
        "needs_order": rubric.needs_order,
        "arms": rubric.arms if rubric.arms != ("WITH", "WITHOUT") else (tool, "WITHOUT"),
        "path": None,
        "spec": rubric.spec,  # type: ignore[attr-defined]
    }
    draft = type(rubric)(**fields)
    sha = hashlib.sha256(to_toml(draft).encode("utf-8")).hexdigest()
    return type(rubric)(**{**fields, "sha256": sha})
