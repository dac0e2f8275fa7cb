"""``arms.toml``: the arms of a data directory, their display names, tools and reference.

Two forms are read. The seeds' two-arm form names WITH and WITHOUT at the top level::

    with = "Serena MCP"
    without = "plain Claude Code"

The K-arm form lists every arm, in the order the report shows them, in an ``[arms]`` table;
a value is the display name, or a table with ``name`` and the ``tool`` the three-way rubric
names for that arm. ``reference`` (either form) is the arm the others are compared with::

    reference = "none"

    [arms]
    none = "no tool"
    v1 = { name = "tool v1", tool = "Serena 0.9" }
    v2 = { name = "tool v2", tool = "Serena 1.0" }
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._schema import ARMS
from ..errors import DataError

__all__ = ["DEFAULT_ARM_NAMES", "Arms", "load_arms"]

_ARM_ID = re.compile(r"\S(.*\S)?", re.DOTALL)
_ARM_KEYS = ("name", "tool")

#: What the two arms are called when nothing names them.
DEFAULT_ARM_NAMES = {"with": "WITH", "without": "WITHOUT"}


@dataclass(frozen=True)
class Arms:
    """The arms of a data directory: ids in display order, names, tools and the reference.

    ``ids`` are the values of the runs' ``arm`` field; ``names`` their display names (the id
    when ``arms.toml`` gives none); ``tools`` the tool each arm used, where ``arms.toml``
    names one; ``reference`` the arm the others are compared with, or None; ``path`` the
    ``arms.toml`` read, or None.

    Examples
    --------
    >>> a = Arms(("none", "v1"), names={"v1": "tool v1"}, reference="none")
    >>> a.name("v1"), a.name("none"), a.two_arm
    ('tool v1', 'none', False)
    """

    ids: tuple[str, ...]
    names: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, str] = field(default_factory=dict)
    reference: str | None = None
    path: str | None = None

    def name(self, arm: str) -> str:
        """The display name of ``arm`` (its id, or WITH / WITHOUT, when none was given)."""
        return self.names.get(arm) or DEFAULT_ARM_NAMES.get(arm, arm)

    @property
    def two_arm(self) -> bool:
        """True for the seeds' case: the arms are exactly ``with`` and ``without``."""
        return set(self.ids) == set(ARMS)

    def __deepcopy__(self, memo: dict) -> Arms:
        # Immutable, and kept in runs.attrs: pandas deep-copies attrs on every operation.
        return self


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+)", str(e))
        raise DataError(
            f"not valid TOML: {e}", path=path, line=int(m.group(1)) if m else None
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read: {e}", path=path) from None


def key_line(path: Path, key: str, *, table: str | None = None) -> int | None:
    """The line of ``key = ...`` in a TOML file (inside ``[table]`` when given), or None."""
    pat = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    head = re.compile(r"^\s*\[\s*([^\]]*?)\s*\]")
    current: str | None = None
    for i, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        m = head.match(text)
        if m:
            current = m.group(1)
            if table is not None and current == f"{table}.{key}":
                return i
            continue
        if current == table and pat.match(text):
            return i
    return None


def _text(value: Any, path: Path, field: str, line: int | None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DataError(
            f"must be a non-empty string, got {value!r:.60}", path=path, line=line, field=field
        )
    return value.strip()


def load_arms(path: str | Path) -> Arms:
    """Read an ``arms.toml``: the arms in order, display names, tools and ``reference``.

    Either form: the seeds' ``with = ...`` / ``without = ...`` at the top level, or every
    arm in an ``[arms]`` table (a display name, or ``{name = ..., tool = ...}``).

    Raises
    ------
    DataError
        Not TOML; an unknown key; a name, tool or reference that is not a non-empty string;
        fewer than two arms in ``[arms]``; a ``reference`` that is not one of the arms. The
        message names the file, the line and the field (``arms.v1.name``, ``reference``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "arms.toml"
    >>> _ = p.write_text('reference = "a"\\n[arms]\\na = "A"\\nb = {name = "B", tool = "T"}\\n')
    >>> arms = load_arms(p)
    >>> arms.ids, dict(arms.names), dict(arms.tools), arms.reference
    (('a', 'b'), {'a': 'A', 'b': 'B'}, {'b': 'T'}, 'a')
    >>> _ = p.write_text('with = "Serena MCP"\\n')
    >>> load_arms(p).ids, load_arms(p).name("with"), load_arms(p).name("without")
    (('with', 'without'), 'Serena MCP', 'WITHOUT')
    """
    p = Path(path)
    doc = _read_toml(p)
    names: dict[str, str] = {}
    tools: dict[str, str] = {}
    listed = "arms" in doc
    allowed = ("arms", "reference") if listed else (*ARMS, "reference")
    for key in doc:
        if key not in allowed:
            hint = (
                "arms.toml has 'reference' and the [arms] table"
                if listed
                else "arms.toml names the arms 'with' and 'without', or lists them in [arms]"
            )
            raise DataError(f"unknown key; {hint}", path=p, line=key_line(p, key), field=key)
    if listed:
        table = doc["arms"]
        if not isinstance(table, dict):
            raise DataError(
                "must be a table of arm = display name",
                path=p,
                line=key_line(p, "arms"),
                field="arms",
            )
        for arm, value in table.items():
            line = key_line(p, arm, table="arms")
            if not _ARM_ID.fullmatch(arm):
                raise DataError("an arm's id must not be blank", path=p, line=line, field="arms")
            where = f"arms.{arm}"
            if isinstance(value, dict):
                for k in value:
                    if k not in _ARM_KEYS:
                        raise DataError(
                            "unknown key; an arm has 'name' and 'tool'",
                            path=p,
                            line=key_line(p, k, table=where) or line,
                            field=f"{where}.{k}",
                        )
                if "name" in value:
                    names[arm] = _text(value["name"], p, f"{where}.name", line)
                if "tool" in value:
                    tools[arm] = _text(value["tool"], p, f"{where}.tool", line)
            else:
                names[arm] = _text(value, p, where, line)
        ids = tuple(table)
        if len(ids) < 2:
            raise DataError(
                f"lists {len(ids)} arm(s); a comparison needs at least two",
                path=p,
                line=key_line(p, "arms") or 1,
                field="arms",
            )
    else:
        ids = ARMS
        for arm in ARMS:
            if arm in doc:
                names[arm] = _text(doc[arm], p, arm, key_line(p, arm))
    reference = None
    if "reference" in doc:
        line = key_line(p, "reference")
        reference = _text(doc["reference"], p, "reference", line)
        if reference not in ids:
            raise DataError(
                f"{reference!r} is not one of the arms ({', '.join(ids)})",
                path=p,
                line=line,
                field="reference",
            )
    return Arms(ids, names=names, tools=tools, reference=reference, path=str(p))
