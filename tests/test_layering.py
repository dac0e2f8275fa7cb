"""The package's import structure, read with ``ast`` (nothing is imported).

An *import* is anything that runs a module of the package: an ``import`` statement at module
level or inside a function, an ``importlib.import_module("...")`` / ``__import__`` string, an
attribute reached through a bound module (``import evalstats; evalstats.plots.foo``) and an
entry of a lazy table (``lazy_surface(__name__, {".winrates": [...]})``: its strings are
imports too). Only ``if TYPE_CHECKING:`` bodies are skipped (they never run). An
``import_module`` whose target is not a string literal is refused: it cannot be checked.

The rules, each a test, each proven on a synthetic violation written to ``tmp_path``:

(a) no import cycle between modules;
(b) no import that runs UP the pipeline order of ../shared/DESIGN.md (:data:`RANK`);
(c) no private name, and no private module, of another unit (``from .stats._dist import``);
(d) third-party confinement (:data:`CONFINED`): matplotlib only in ``plots`` and ``report``,
    the provider SDKs only in ``judging``, the notebook machinery only in ``report``;
(e) no stale entry: a :data:`RANK` unit, a :data:`SAME_RANK` pair or an allow-list entry that
    matches nothing fails.

A module's *unit* is its first component below ``evalstats``: ``evalstats.stats.winrates`` is in
unit ``stats``, ``evalstats.report._render`` in unit ``report``. Ranks are per unit.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = "evalstats"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# The pipeline order of DESIGN.md, top to bottom:
#   cli -> report -> {plots, methodology (the audit), adapters} -> stats -> frames
#       -> {judging, rubrics, tokens, records, importers} -> errors/_schema
# A unit may import units of a strictly LOWER rank, and units of its own rank only where
# SAME_RANK allows it. A unit missing from this table fails test_every_unit_has_a_rank, so a
# new module has to be placed deliberately; a unit that no longer exists fails as stale.
RANK: dict[str, int] = {
    "cli": 90,  # the console script: may import everything below
    "report": 80,  # everything after the statistics
    "summary": 80,  # "summary with report"
    "plots": 70,
    "methodology": 70,  # the audit (DESIGN.md's audit.py)
    "adapters": 70,
    "simulation": 60,  # above stats (stats must not import it), below report
    "stats": 50,
    "frames": 40,
    "judging": 30,
    "rubrics": 30,
    "tokens": 30,
    "records": 30,
    "plan": 30,  # plan.toml, read with the other records of a data directory
    "importers": 30,
    "labelsheet": 30,  # draws pairs for people and reads their sheet back into labels
    # The shared bottom modules: argument checks and the one disagreement rule.
    "_validate": 20,
    "_disagreement": 20,
    "_families": 20,  # model families: judging refuses, methodology audits a same-family judge
    "_atomic": 20,  # atomic file writes (records, rubrics, plots, report)
    "_csvsafe": 20,  # CSV cells a spreadsheet would run, neutralised (labelsheet, records, report)
    "_tidy": 20,  # the one result shape (ResultFrame), used by stats and everything above
    "_display": 20,  # how results show themselves (stats' result classes, records' Dataset)
    "_schema": 10,
    "_surface": 10,  # the one lazy-import mechanism of the public surfaces
    "errors": 10,
}

# Allowed imports between two different units of the same rank (importer, imported).
SAME_RANK: frozenset[tuple[str, str]] = frozenset(
    {
        ("report", "summary"),
        ("importers", "records"),  # other harnesses' logs become tasks/runs records
        ("judging", "rubrics"),  # the runner renders prompts and parses answers
        # DESIGN.md's data flow is records -> tokens -> judging: the runner pairs the runs
        # (records) and counts prompt tokens (tokens) before it sends anything.
        ("judging", "records"),
        ("judging", "tokens"),
        ("records", "tokens"),  # load_runs(tasks=...) counts tokens and applies budgets
        ("labelsheet", "records"),
        ("records", "plan"),  # load_dir reads the plan with the tasks, runs and judgments
    }
)

# Third-party packages confined to some units (top-level import name -> units allowed).
CONFINED: dict[str, frozenset[str]] = {
    "matplotlib": frozenset({"plots", "report"}),
    "anthropic": frozenset({"judging"}),
    "openai": frozenset({"judging"}),
    "nbclient": frozenset({"report"}),
    "nbconvert": frozenset({"report"}),
    "nbformat": frozenset({"report"}),
    "jupyter_client": frozenset({"report"}),
}

# The console script registers each hooked subcommand from that unit's own ``_cli`` module:
# the one private module of another unit that ``cli`` may import (DESIGN.md: the parser of a
# subcommand lives with its code).
CLI_HOOKS: frozenset[str] = frozenset(
    {
        "evalstats.judging._cli",
        "evalstats.importers._cli",
        "evalstats.rubrics._cli",
        "evalstats.report._cli",
    }
)

# The one module that may import a computed name: the lazy mechanism, whose tables' strings
# are read (and checked) where each package writes them.
LAZY_MECHANISM = "evalstats._surface"

# TEMPORARY: violations in modules other helpers of issue 20 own, left for the lead to fix
# after merging. Each entry is (rule, importer module, target); the stale-entry rule fails
# as soon as the violation is gone, so the entry has to be deleted then.
TEMPORARY: frozenset[tuple[str, str, str]] = frozenset(
    {
        # report/_kinds.py `_lazy(module, name)`: importlib.import_module(f"{__package__}.
        # {module}"), a second lazy mechanism whose targets no test can read (helper render's).
        ("dynamic", "evalstats.report._kinds", "?")
    }
)


# --------------------------------------------------------------------------- reading a tree


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name (a module or package that exists in the package)
    names: tuple[str, ...]  # names taken from target (``from target import ...``, ``t.name``)
    line: int
    lazy: bool  # inside a function, or resolved on first use (a lazy table)
    how: str = "import"  # import | import_module | attribute | lazy table


@dataclass(frozen=True)
class External:
    importer: str
    name: str  # top-level name of a third-party (or standard-library) package
    line: int


@dataclass
class Tree:
    """Every module of a package directory and what each imports."""

    root: Path
    package: str = PACKAGE
    modules: dict[str, Path] = field(default_factory=dict)
    imports: list[Import] = field(default_factory=list)
    external: list[External] = field(default_factory=list)
    dynamic: list[tuple[str, int]] = field(default_factory=list)  # unresolvable import_module

    def __post_init__(self) -> None:
        for path in sorted(self.root.rglob("*.py")):
            parts = list(path.relative_to(self.root.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            self.modules[".".join(parts)] = path
        for module in self.modules:
            self._read(module)

    # -- helpers
    def unit(self, module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else ""

    def is_package(self, module: str) -> bool:
        return self.modules[module].name == "__init__.py"

    def where(self, module: str, line: int) -> str:
        return f"{self.modules[module].relative_to(self.root.parent)}:{line}"

    def anchor(self, importer: str, level: int) -> list[str]:
        base = importer.split(".")
        if not self.is_package(importer):
            base = base[:-1]
        return base[: len(base) - (level - 1)] if level > 1 else base

    def resolve(self, importer: str, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        return ".".join([*self.anchor(importer, level), *([module] if module else [])])

    def _add(self, imp: Import) -> None:
        self.imports.append(imp)

    def _target(self, importer: str, dotted: str, line: int, lazy: bool, how: str) -> None:
        """An import of the dotted name (a module, or a module then the name of one of its
        attributes) as ``import_module`` or a lazy table gives it."""
        if dotted.split(".")[0] != self.package:
            self.external.append(External(importer, dotted.split(".")[0], line))
        elif dotted in self.modules:
            self._add(Import(importer, dotted, (), line, lazy, how))
        else:
            head, _, name = dotted.rpartition(".")
            self._add(Import(importer, head or dotted, (name,) if head else (), line, lazy, how))

    # -- one module
    def _read(self, module: str) -> None:
        path = self.modules[module]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        bound: dict[str, str] = {}  # local name -> module of this package it is bound to
        nodes = list(_walk(tree))
        for node, lazy in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    if top != self.package:
                        self.external.append(External(module, top, node.lineno))
                        continue
                    self._add(Import(module, alias.name, (), node.lineno, lazy))
                    bound[alias.asname or top] = alias.name if alias.asname else top
            elif isinstance(node, ast.ImportFrom):
                target = self.resolve(module, node.module, node.level)
                if target.split(".")[0] != self.package:
                    self.external.append(External(module, target.split(".")[0], node.lineno))
                    continue
                plain = []
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in self.modules:  # ``from pkg import submodule``
                        self._add(Import(module, sub, (), node.lineno, lazy))
                        bound[alias.asname or alias.name] = sub
                    else:
                        plain.append(alias.name)
                if plain or target not in self.modules:
                    self._add(Import(module, target, tuple(plain), node.lineno, lazy))
            elif isinstance(node, ast.Call):
                self._call(module, node, lazy)
        for node, lazy in nodes:  # attribute use through a bound module
            if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Del):
                chain = _chain(node)
                if chain and chain[0] in bound and len(chain) > 1:
                    self._attribute(module, bound[chain[0]], chain[1:], node.lineno, lazy)

    def _attribute(self, module: str, base: str, attrs: list[str], line: int, lazy: bool) -> None:
        target = base
        for attr in attrs:
            if f"{target}.{attr}" in self.modules:
                target = f"{target}.{attr}"
                continue
            self._add(Import(module, target, (attr,), line, lazy, "attribute"))
            return
        self._add(Import(module, target, (), line, lazy, "attribute"))

    def _call(self, module: str, node: ast.Call, lazy: bool) -> None:
        func = _chain(node.func) if isinstance(node.func, ast.Attribute | ast.Name) else None
        if not func:
            return
        if func[-1] in ("import_module", "__import__"):
            arg = node.args[0] if node.args else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                self.dynamic.append((module, node.lineno))
                return
            name = arg.value
            if name.startswith("."):
                level = len(name) - len(name.lstrip("."))
                anchor = node.args[1] if len(node.args) > 1 else None
                if not (isinstance(anchor, ast.Name) and anchor.id in ("__name__", "__package__")):
                    self.dynamic.append((module, node.lineno))
                    return
                # ``import_module(".x", __name__)`` anchors at the module as a package.
                base = module.split(".")
                if anchor.id == "__package__" and not self.is_package(module):
                    base = base[:-1]
                base = base[: len(base) - (level - 1)] if level > 1 else base
                name = ".".join([*base, name.lstrip(".")]) if name.lstrip(".") else ".".join(base)
            self._target(module, name, node.lineno, True, "import_module")
        elif func[-1] == "lazy_surface" and len(node.args) >= 2:
            table = node.args[1]
            if not isinstance(table, ast.Dict):
                self.dynamic.append((module, node.lineno))
                return
            for key, value in zip(table.keys, table.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    self.dynamic.append((module, node.lineno))
                    continue
                level = len(key.value) - len(key.value.lstrip("."))
                target = self.resolve(module, key.value.lstrip(".") or None, level)
                names = tuple(
                    e.value
                    for e in getattr(value, "elts", [])
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
                if target.split(".")[0] != self.package:
                    self.external.append(External(module, target.split(".")[0], node.lineno))
                else:
                    self._add(Import(module, target, names, node.lineno, True, "lazy table"))
            for kw in node.keywords:
                if kw.arg == "submodules":
                    for e in getattr(kw.value, "elts", []):
                        if isinstance(e, ast.Constant):
                            self._target(
                                module, f"{module}.{e.value}", node.lineno, True, "lazy table"
                            )


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Yield (node, inside_function) for every node, skipping ``if TYPE_CHECKING:`` bodies."""
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, in_func = stack.pop()
        yield node, in_func
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            children = list(node.orelse)
        else:
            children = list(ast.iter_child_nodes(node))
        lazy = in_func or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        stack.extend((c, lazy) for c in reversed(children))


def _chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]`` (None unless it is names and attributes only)."""
    out: list[str] = []
    while isinstance(node, ast.Attribute):
        out.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(out)]


# --------------------------------------------------------------------------- the rules


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def edges(tree: Tree) -> dict[str, set[str]]:
    """Module -> modules its imports execute (the target and the target's packages)."""
    graph: dict[str, set[str]] = {m: set() for m in tree.modules}
    for imp in tree.imports:
        if imp.target not in tree.modules:
            continue
        parts = imp.target.split(".")
        # Importing a.b.c runs a/__init__ and a/b/__init__ too, unless the importer is already
        # inside them (then they are being initialised and Python does not run them again).
        for k in range(2, len(parts) + 1):
            mod = ".".join(parts[:k])
            inside = imp.importer == mod or imp.importer.startswith(mod + ".")
            if mod in tree.modules and not inside:
                graph[imp.importer].add(mod)
        if imp.target == tree.package and imp.importer != tree.package:
            graph[imp.importer].add(tree.package)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), plus self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def cycle_violations(tree: Tree) -> list[str]:
    graph = edges(tree)
    out = []
    for comp in cycles(graph):
        members = set(comp)
        lines = sorted(
            {
                f"{tree.where(i.importer, i.line)} imports {i.target} ({i.how})"
                for i in tree.imports
                if i.importer in members and graph[i.importer] & members and i.target in members
            }
        )
        out.append(" <-> ".join(comp) + ": " + "; ".join(lines))
    return out


def _root_constants(tree: Tree) -> set[str]:
    """Names the root ``__init__`` assigns itself (importing them runs no other module)."""
    body = ast.parse(tree.modules[tree.package].read_text(encoding="utf-8")).body
    return {
        t.id
        for node in body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }


def upward_violations(
    tree: Tree, rank: dict[str, int] = RANK, same_rank: frozenset = SAME_RANK
) -> list[tuple[str, str, str, str]]:
    """(rule, importer, target, message) for every import against the pipeline order."""
    constants = _root_constants(tree) if tree.package in tree.modules else set()
    bad = []
    for imp in tree.imports:
        a, b = tree.unit(imp.importer), tree.unit(imp.target)
        if imp.importer == tree.package:
            continue  # the public surface re-exports everything (DESIGN.md)
        where = tree.where(imp.importer, imp.line)
        if imp.target == tree.package:
            # The root re-exports the whole package; only its own constants are safe to take.
            if set(imp.names) - constants:
                msg = f"{where}: {imp.importer} takes {imp.names} from the package root ({imp.how})"
                bad.append(("upward", imp.importer, imp.target, msg))
            continue
        if a == b or a not in rank or b not in rank:
            continue
        if rank[b] > rank[a] or (rank[b] == rank[a] and (a, b) not in same_rank):
            msg = f"{where}: {a} (rank {rank[a]}) imports {imp.target} (rank {rank[b]}, {imp.how})"
            bad.append(("upward", imp.importer, imp.target, msg))
    return bad


def private_violations(tree: Tree, hooks: frozenset[str] = CLI_HOOKS) -> list[tuple]:
    """Private names, and private modules, taken from a module of another unit."""
    bad = []
    for imp in tree.imports:
        if tree.unit(imp.importer) == tree.unit(imp.target):
            continue
        where = tree.where(imp.importer, imp.line)
        # ``evalstats._schema`` is a bottom unit of its own; ``evalstats.stats._dist`` is a
        # private module inside the unit ``stats``.
        inner = imp.target.split(".")[2:]
        if any(_private(p) for p in inner) and not (
            tree.unit(imp.importer) == "cli" and imp.target in hooks
        ):
            msg = f"{where}: {imp.importer} imports the private module {imp.target} ({imp.how})"
            bad.append(("private", imp.importer, imp.target, msg))
        for name in imp.names:
            if _private(name):
                msg = f"{where}: {imp.importer} takes {name} from {imp.target} ({imp.how})"
                bad.append(("private", imp.importer, imp.target, msg))
    return bad


def confinement_violations(
    tree: Tree, confined: dict = CONFINED, mechanism: str = LAZY_MECHANISM
) -> list[tuple]:
    bad = []
    for ext in tree.external:
        allowed = confined.get(ext.name)
        if allowed is not None and tree.unit(ext.importer) not in allowed:
            msg = (
                f"{tree.where(ext.importer, ext.line)}: {ext.importer} imports {ext.name} "
                f"(only {sorted(allowed)} may)"
            )
            bad.append(("confined", ext.importer, ext.name, msg))
    for module, line in tree.dynamic:
        if module == mechanism:
            continue
        msg = f"{tree.where(module, line)}: an import whose target is not a string literal"
        bad.append(("dynamic", module, "?", msg))
    return bad


def stale_entries(
    tree: Tree,
    rank: dict[str, int] = RANK,
    same_rank: frozenset = SAME_RANK,
    hooks: frozenset[str] = CLI_HOOKS,
    temporary: frozenset = TEMPORARY,
    found: list[tuple] | None = None,
    mechanism: str = LAZY_MECHANISM,
) -> list[str]:
    units = {tree.unit(m) for m in tree.modules} - {""}
    out = [f"RANK lists {u!r}, a unit that does not exist" for u in sorted(set(rank) - units)]
    used = {(tree.unit(i.importer), tree.unit(i.target)) for i in tree.imports}
    out += [f"SAME_RANK allows {p}, which no import uses" for p in sorted(same_rank - used)]
    targets = {i.target for i in tree.imports if tree.unit(i.importer) == "cli"}
    if mechanism not in {m for m, _ in tree.dynamic}:
        out.append(f"LAZY_MECHANISM names {mechanism}, which imports no computed name")
    out += [f"CLI_HOOKS lists {h}, which cli does not import" for h in sorted(hooks - targets)]
    hits = {(rule, a, b) for rule, a, b, _ in (found or [])}
    out += [
        f"TEMPORARY allows {t}, which is no longer a violation" for t in sorted(temporary - hits)
    ]
    return out


def all_violations(tree: Tree) -> list[tuple]:
    """(rule, importer, target, message) of every violation of rules (b) to (d)."""
    return [*upward_violations(tree), *private_violations(tree), *confinement_violations(tree)]


def _failures(found: list[tuple], temporary: frozenset = TEMPORARY) -> list[str]:
    return sorted({msg for rule, a, b, msg in found if (rule, a, b) not in temporary})


TREE = Tree(ROOT)


# --------------------------------------------------------------------------- the real package


def test_every_unit_has_a_rank():
    units = {TREE.unit(m) for m in TREE.modules} - {""}
    missing = sorted(units - RANK.keys())
    assert not missing, f"units without a rank in RANK (place them in the pipeline): {missing}"


def test_no_import_cycles():
    bad = cycle_violations(TREE)
    assert not bad, "import cycles:\n  " + "\n  ".join(bad)


@pytest.mark.parametrize("rule", ["upward", "private", "confined", "dynamic"])
def test_the_package_keeps_the_rule(rule):
    bad = _failures([v for v in all_violations(TREE) if v[0] == rule])
    assert not bad, f"{rule} imports:\n  " + "\n  ".join(bad)


def test_no_stale_entries():
    stale = stale_entries(TREE, found=all_violations(TREE))
    assert not stale, "\n".join(stale)


def test_the_reader_sees_imports_of_every_kind():
    """Relative, absolute, lazy, ``from pkg import submodule``, tables and strings."""
    by = {(i.importer, i.target, i.how) for i in TREE.imports}
    assert any(i.importer == "evalstats.cli" and i.lazy for i in TREE.imports)
    assert ("evalstats.frames", "evalstats.rubrics", "import") in by
    assert ("evalstats", "evalstats.stats.rates", "lazy table") not in by  # root: .stats
    assert ("evalstats.stats", "evalstats.stats.rates", "lazy table") in by
    assert ("evalstats", "evalstats.rubrics", "lazy table") in by  # a table's submodule
    assert any(e.name == "matplotlib" and TREE.unit(e.importer) == "plots" for e in TREE.external)


# --------------------------------------------------------------------------- proven on fakes


def _fake(tmp_path: Path, files: dict[str, str]) -> Tree:
    """A package named evalstats in tmp_path, holding ``files`` (path -> source)."""
    base = {"__init__.py": "", "stats/__init__.py": "", "plots/__init__.py": ""}
    for rel, src in {**base, **files}.items():
        path = tmp_path / PACKAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(src), encoding="utf-8")
    return Tree(tmp_path / PACKAGE)


def _rules(tree: Tree) -> set[str]:
    return {rule for rule, *_ in all_violations(tree)}


def test_a_cycle_fails(tmp_path):
    tree = _fake(
        tmp_path,
        {
            "stats/a.py": "from . import b\n",
            "stats/b.py": "def f():\n    from .a import x\n",  # lazy: still a cycle
        },
    )
    assert cycle_violations(tree)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}) == [
        ["a", "b", "c"],
        ["e"],
    ]


@pytest.mark.parametrize(
    "source",
    [
        "from ..plots import figure\n",  # a plain import
        "def f():\n    from evalstats.plots import figure\n",  # lazily
        "import importlib\nP = importlib.import_module('evalstats.plots.figure')\n",  # a string
        "import evalstats\ndef f():\n    return evalstats.plots.figure.draw()\n",  # attribute
        "import evalstats\ndef f():\n    return evalstats.plot_headline\n",  # the root's name
    ],
)
def test_an_upward_import_fails_however_it_is_written(tmp_path, source):
    tree = _fake(tmp_path, {"stats/winrates.py": source, "plots/figure.py": "def draw(): ...\n"})
    assert _rules(tree) == {"upward"}, all_violations(tree)


def test_a_lazy_tables_strings_are_imports(tmp_path):
    tree = _fake(
        tmp_path,
        {
            "stats/__init__.py": "from .._surface import lazy_surface\n"
            "__all__, __getattr__, __dir__ = lazy_surface(__name__, {'..plots.figure': ['f']})\n",
            "plots/figure.py": "def f(): ...\n",
            "_surface.py": "",
        },
    )
    assert _rules(tree) == {"upward"}


@pytest.mark.parametrize(
    "source",
    [
        "from ..stats._dist import t_ppf\n",  # a private module of another unit
        "from ..stats import _dist\n",  # the same, as a submodule
        "def f():\n    from evalstats.stats._cluster import by_columns\n",  # absolute, lazily
        "from evalstats.stats.winrates import _by_columns\n",  # a private name
        "from .. import stats\nX = stats._dist.t_ppf\n",  # through a bound module
        "import importlib\nD = importlib.import_module('evalstats.stats._dist')\n",
    ],
)
def test_a_private_module_or_name_of_another_unit_fails(tmp_path, source):
    tree = _fake(
        tmp_path,
        {
            "plots/figure.py": source,
            "stats/_dist.py": "def t_ppf(): ...\n",
            "stats/_cluster.py": "def by_columns(): ...\n",
            "stats/winrates.py": "def _by_columns(): ...\n",
        },
    )
    assert _rules(tree) == {"private"}, all_violations(tree)
    inside = _fake(tmp_path / "in", {"stats/means.py": "from ._dist import t_ppf\n"})
    assert _rules(inside) == set()  # inside its own unit a private module is fine


@pytest.mark.parametrize(
    ("where", "source"),
    [
        ("stats/winrates.py", "def f():\n    import matplotlib.pyplot as plt\n"),
        ("stats/winrates.py", "import importlib\nM = importlib.import_module('matplotlib')\n"),
        ("report/page.py", "from anthropic import Anthropic\n"),
        ("plots/figure.py", "import nbclient\n"),
        ("stats/winrates.py", "import importlib\nM = importlib.import_module(NAME)\n"),
    ],
)
def test_a_confined_library_outside_its_units_fails(tmp_path, where, source):
    tree = _fake(tmp_path, {"report/__init__.py": "", where: source})
    assert _rules(tree) & {"confined", "dynamic"}, all_violations(tree)
    allowed = _fake(tmp_path / "ok", {"plots/figure.py": "import matplotlib.figure\n"})
    assert _rules(allowed) == set()


def test_type_checking_imports_are_ignored(tmp_path):
    tree = _fake(
        tmp_path,
        {
            "stats/winrates.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from ..plots import figure\n    import matplotlib\n",
            "plots/figure.py": "",
        },
    )
    assert _rules(tree) == set()


def test_a_stale_entry_fails(tmp_path):
    tree = _fake(tmp_path, {"stats/winrates.py": "from .. import errors\n", "errors.py": ""})
    stale = stale_entries(
        tree,
        rank={"stats": 50, "plots": 70, "errors": 10, "gone": 30},
        same_rank=frozenset({("stats", "plots")}),
        hooks=frozenset({"evalstats.judging._cli"}),
        temporary=frozenset({("upward", "evalstats.stats.winrates", "evalstats.plots")}),
        found=all_violations(tree),
        mechanism="evalstats.stats.winrates",
    )
    assert len(stale) == 5, stale
    dynamic = _fake(
        tmp_path / "d", {"_surface.py": "import importlib\nM = importlib.import_module(N)\n"}
    )
    assert stale_entries(
        dynamic, rank={"stats": 50, "plots": 70, "_surface": 10}, same_rank=frozenset(),
        hooks=frozenset(), temporary=frozenset(), found=[], mechanism="evalstats._surface",
    ) == []  # fmt: skip
