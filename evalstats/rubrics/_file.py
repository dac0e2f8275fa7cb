"""Rubric files: your own judge prompt in TOML, read into a :class:`Rubric` (docs/judging.md)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from evalstats.errors import DataError

from . import blind_pair, with_without
from ._base import PLACEHOLDER_PATTERN, Rubric, norm_key
from .blind_pair import BlindPairRubric, BlindScores
from .with_without import GORTEX_MENTION, OUTCOMES, ThreeWay, WithWithoutRubric, tool_name

# A prompt of a few pages and its fields; anything past this is not a rubric.
MAX_RUBRIC_BYTES = 4_000_000

KINDS = ("three-way", "blind-scores")
_BUILT_IN = {"blind-pair": blind_pair.load, "with-without": with_without.load}
_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_TOP_KEYS = {"name", "revision", "kind", "family", "description", "prompt", "output"}
# The [output] lists of each kind, in the order they are checked and written.
_THREE_WAY_LISTS = tuple(
    "label_fields fallback_fields reasoning_fields uncertainty_fields cost_ratio_fields".split()
)
_BLIND_LISTS = ("verdict_fields", "reasoning_fields", "notes_fields")
_THREE_WAY_KEYS = {"labels", "aliases", *_THREE_WAY_LISTS}
_BLIND_KEYS = {"dimensions", "dimension_aliases", "blocks", "verdicts", "scores", *_BLIND_LISTS}


def names() -> tuple[str, ...]:
    """Names of the built-in rubrics: ``('blind-pair', 'with-without')``."""
    return tuple(_BUILT_IN)


@cache
def _built_in(name: str) -> Rubric:
    return _BUILT_IN[name]()


def get(name_or_path: str | os.PathLike[str]) -> Rubric:
    """A built-in rubric by name, or the rubric in a ``.toml`` file by path.

    A KeyError for an unknown name; a DataError (file, line, field) for an invalid file.

    >>> from evalstats import rubrics
    >>> r = rubrics.get("with-without")
    >>> r.kind, r.revision, r.needs_order
    ('three-way', 1, False)
    """
    if isinstance(name_or_path, str) and name_or_path in _BUILT_IN:
        return _built_in(name_or_path)
    if isinstance(name_or_path, os.PathLike) or (
        isinstance(name_or_path, str)
        and (name_or_path.endswith(".toml") or os.sep in name_or_path or "/" in name_or_path)
    ):
        return load(name_or_path)
    raise KeyError(
        f"unknown rubric {name_or_path!r}; known rubrics: {', '.join(names())}, "
        "or a path to a rubric .toml file"
    )


def load(path: str | os.PathLike[str]) -> Rubric:
    """Read a rubric file (TOML) into a :class:`Rubric`; a DataError names file, line, field.

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
        if p.exists() and not p.is_file():
            raise DataError("not a regular file", path=p)
        with p.open("rb") as fh:
            raw = fh.read(MAX_RUBRIC_BYTES + 1)
    except OSError as e:
        raise DataError(f"cannot read rubric file: {e.strerror or e}", path=p) from None
    if len(raw) > MAX_RUBRIC_BYTES:
        raise DataError(
            f"a rubric file is a prompt and a few fields: over {MAX_RUBRIC_BYTES:,} bytes", path=p
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text ({e.reason} at byte {e.start})", path=p) from None
    try:
        doc = tomllib.loads(text)
        return _from_document(doc, _Where(p, text), hashlib.sha256(raw).hexdigest())
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e)) or "invalid TOML"
        col = f" (column {m.group(2)})" if m else ""
        line = int(m.group(1)) if m else None
        raise DataError(f"not valid TOML: {msg}{col}", path=p, line=line) from None
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise DataError("not valid TOML for a rubric: it nests too deeply", path=p) from None


class _Where:
    """Turns a field problem into a DataError naming the file and (best effort) the line."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")

    def line_of(self, field: str) -> int | None:
        parts = field.split(".")
        key = parts[-1].split("[")[0]
        table = ".".join(parts[:-1])
        start = 0
        if table:
            head = re.compile(r"^\s*\[\s*" + re.escape(table) + r"\s*\]")
            start = next((i for i, s in enumerate(self.lines) if head.match(s)), 0)
        k = r'(?:"' + re.escape(key) + r'"|' + re.escape(key) + ")"
        pat = re.compile(r"^\s*(?:" + k + r"\s*=|\[\s*" + k + r"\s*[].])")  # key = or [key]
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
    v = [doc[key]] if isinstance(doc[key], str) else doc[key]
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


def _pairs(output: Mapping[str, Any], key: str, allowed, where: _Where, what: str):
    table = _table(output, key, where, f"output.{key}")
    for k, v in table.items():
        if v not in allowed:
            raise where.error(f"output.{key}.{k}", f"{what} {', '.join(allowed)}, got {v!r}")
    return tuple(table.items())


def _lists(output: Mapping[str, Any], names: tuple[str, ...], spec: Any, where: _Where) -> dict:
    # An empty fallback_fields is allowed: no fallback field at all.
    return {
        k: ()
        if k == "fallback_fields" and output.get(k) == []
        else _strs(output, k, getattr(spec, k), where, f"output.{k}")
        for k in names
    }


def _from_document(doc: dict[str, Any], where: _Where, sha: str) -> Rubric:
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
    family = doc.get("family")
    if family is not None and (family not in names() or _built_in(str(family)).kind != kind):
        seeds = ", ".join(names())
        raise where.error("family", f"{family!r} is not a seed rubric of kind {kind!r} ({seeds})")
    if "description" in doc and not isinstance(doc["description"], str):
        raise where.error("description", "must be a string")

    if "prompt" not in doc:
        raise where.error("prompt", "missing: a [prompt] table with 'system' and 'user'")
    prompt = _table(doc, "prompt", where, "prompt")
    _no_unknown(prompt, {"system", "user"}, where, "prompt.")
    system = _str(prompt, "system", where, "prompt.system")
    user = _str(prompt, "user", where, "prompt.user")
    three_way = kind == "three-way"
    module = with_without if three_way else blind_pair
    found = PLACEHOLDER_PATTERN.findall(user)
    for ph in found:
        if ph not in module.KNOWN_PLACEHOLDERS:
            hint = (
                " (a blind-scores prompt must not say which answer is WITH or WITHOUT)"
                if not three_way and ph.split("_")[0] in ("with", "without")
                else ""
            )
            raise where.error(
                "prompt.user",
                f"unknown placeholder {{{ph}}} for kind {kind!r}{hint}; "
                f"known: {', '.join('{' + k + '}' for k in module.KNOWN_PLACEHOLDERS)}",
            )
    for ph in module.REQUIRED_PLACEHOLDERS:
        if ph not in found:
            raise where.error("prompt.user", f"missing placeholder {{{ph}}}")

    output = _table(doc, "output", where, "output")
    _no_unknown(output, _THREE_WAY_KEYS if three_way else _BLIND_KEYS, where, "output.")
    common = {"name": name, "revision": revision, "sha256": sha, "system": system}
    common |= {"user_template": user, "path": str(where.path), "family": family}
    if three_way:
        spec = _three_way(output, where)
        return WithWithoutRubric(**common, dimensions=(), needs_order=False, spec=spec)
    dims, spec = _blind(output, where)
    return BlindPairRubric(**common, dimensions=dims, needs_order=True, spec=spec)


def _three_way(output: Mapping[str, Any], where: _Where) -> ThreeWay:
    if "labels" not in output:
        raise where.error(
            "output.labels", 'missing: a table of label = outcome, e.g. "(a)" = "win"'
        )
    labels = _pairs(output, "labels", OUTCOMES, where, "outcome must be one of")
    if any(not label.strip() for label, _ in labels):
        raise where.error("output.labels", "a label is empty")
    if sorted(o for _, o in labels) != sorted(OUTCOMES):
        raise where.error(
            "output.labels", f"must map one label each to win, tie and loss, got {dict(labels)!r}"
        )
    names = tuple(label for label, _ in labels)
    return ThreeWay(
        labels=names,
        outcomes=tuple(o for _, o in labels),
        aliases=_pairs(output, "aliases", names, where, "must name one of the labels"),
        **_lists(output, _THREE_WAY_LISTS, ThreeWay(), where),
    )


def _blind(output: Mapping[str, Any], where: _Where) -> tuple[tuple[str, ...], BlindScores]:
    if "dimensions" not in output:
        raise where.error("output.dimensions", "missing: the score dimensions, a list of names")
    dims = _strs(output, "dimensions", (), where, "output.dimensions")
    d = BlindScores()
    aliases_t = _table(output, "dimension_aliases", where, "output.dimension_aliases")
    dim_keys = []
    for dim in dims:
        extra = _strs(aliases_t, dim, (), where, f"output.dimension_aliases.{dim}")
        dim_keys.append((dim, tuple(dict.fromkeys((dim, *extra)))))
    for k in aliases_t:
        if norm_key(k) not in dims:
            raise where.error(f"output.dimension_aliases.{k}", f"{k!r} is not a dimension")
    blocks_t = _table(output, "blocks", where, "output.blocks")
    _no_unknown(blocks_t, {"a", "b"}, where, "output.blocks.")
    blocks = tuple(
        _strs(blocks_t, s, default, where, f"output.blocks.{s}")
        for s, default in zip("ab", d.blocks, strict=True)
    )
    if set(blocks[0]) & set(blocks[1]):
        raise where.error("output.blocks", "agent A and agent B share a block key")
    verdicts = _pairs(output, "verdicts", ("a_wins", "b_wins", "tie"), where, "must be one of")
    scores = output.get("scores", list(d.scores))
    ok = isinstance(scores, list) and len(scores) == 2 and all(type(x) is int for x in scores)
    if not ok or scores[0] >= scores[1]:
        raise where.error("output.scores", f"must be [lowest, highest] integers, got {scores!r}")
    return dims, BlindScores(
        blocks=blocks,
        dimension_keys=tuple(dim_keys),
        verdicts=verdicts,
        scores=(scores[0], scores[1]),
        **_lists(output, _BLIND_LISTS, d, where),
    )


def _toml_string(s: str) -> str:
    # A multi-line literal string keeps prompt text byte-exact (no escapes; TOML drops the
    # newline after the opening quotes); text it cannot hold gets a basic string instead.
    if "'''" not in s and not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", s) and not s.endswith("'"):
        return "'''\n" + s + "'''"
    return '"' + "".join(_ESCAPES.get(ch, ch) for ch in s) + '"'


_ESCAPES = {chr(c): f"\\u{c:04x}" for c in (*range(0x20), 0x7F)}
_ESCAPES |= {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def _inline(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _inline(k)


def _list(xs) -> str:
    return "[" + ", ".join(_inline(x) for x in xs) + "]"


def to_toml(rubric: Rubric, *, description: str | None = None) -> str:
    """The complete rubric-file form of ``rubric``, which :func:`load` reads back alike.

    >>> from evalstats import rubrics
    >>> print(rubrics.to_toml(rubrics.get("blind-pair")).splitlines()[0])
    name = "blind-pair"
    """
    if not isinstance(rubric, WithWithoutRubric | BlindPairRubric):
        raise TypeError(f"cannot write a {type(rubric).__name__} as a rubric file")
    s = rubric.spec
    lines = [
        f"name = {_inline(rubric.name)}",
        f"revision = {rubric.revision}",
        f"kind = {_inline(rubric.kind)}",
        *(
            [f"family = {_inline(rubric.family)}"]
            if rubric.family not in (None, rubric.name)
            else []
        ),
        *([f"description = {_inline(description)}"] if description else []),
        "",
        "[prompt]",
        f"system = {_toml_string(rubric.system)}",
        f"user = {_toml_string(rubric.user_template)}",
        "",
        "[output]",
    ]
    if isinstance(s, ThreeWay):
        lines += [
            *(f"{k} = {_list(getattr(s, k))}" for k in _THREE_WAY_LISTS),
            "",
            "[output.labels]",
            *(f"{_key(lab)} = {_inline(o)}" for lab, o in zip(s.labels, s.outcomes, strict=True)),
            "",
            "[output.aliases]",
            '# more spellings of a label, e.g.  better = "(a)"',
            *(f"{_key(sp)} = {_inline(lab)}" for sp, lab in s.aliases),
        ]
    else:
        keys = dict(s.dimension_keys)
        lines += [
            f"dimensions = {_list(rubric.dimensions)}",
            *(f"{k} = {_list(getattr(s, k))}" for k in _BLIND_LISTS),
            f"scores = [{s.scores[0]}, {s.scores[1]}]",
            "",
            "[output.blocks]",
            f"a = {_list(s.blocks[0])}",
            f"b = {_list(s.blocks[1])}",
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
            *(f"{_key(sp)} = {_inline(lab)}" for sp, lab in s.verdicts),
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def seed_toml(name: str) -> str:
    """The rubric-file form of a built-in rubric (``"with-without"`` or ``"blind-pair"``)."""
    r = get(name)
    seed = {"with-without": "seed 000", "blind-pair": "seed 001"}[name]
    text = f"The built-in {name!r} rubric ({seed}, revision {r.revision}) as a file"
    return to_toml(r, description=text)


def with_tool_name(rubric: Rubric, tool: str, *, name: str | None = None) -> Rubric:
    """``rubric`` renamed (default: name + slug of ``tool``), revision 1, gortex -> ``tool``.

    >>> from evalstats import rubrics
    >>> r = rubrics.with_tool_name(rubrics.get("with-without"), "Serena MCP")
    >>> r.name, "gortex" in r.system + r.user_template, "WITH (Serena MCP available):" in r.user_template
    ('with-without-serena-mcp', False, True)
    """
    tool = tool_name(tool)
    if name is None:
        slug = re.sub(r"[^a-z0-9]+", "-", tool.lower()).strip("-")
        name = f"{rubric.name}-{slug or 'custom'}"
    if not _NAME.match(name):
        raise ValueError(f"rubric name {name!r} must be lower-case letters, digits, '.', '_', '-'")
    system, user = (
        GORTEX_MENTION.sub(lambda _m: tool, t) for t in (rubric.system, rubric.user_template)
    )
    draft = dataclasses.replace(
        rubric, name=name, revision=1, sha256="", system=system, user_template=user, path=None
    )
    sha = hashlib.sha256(to_toml(draft).encode("utf-8")).hexdigest()
    return dataclasses.replace(draft, sha256=sha)
