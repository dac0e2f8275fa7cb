"""The package's import structure, read with ``ast`` (nothing is imported).

Three rules, each a test:

(a) no import cycle between modules, counting module-level AND function-level imports (a cycle
    through a lazy import is still a cycle; it only fails later and less predictably);
(b) no import that runs UP the pipeline order of ../shared/DESIGN.md;
(c) no underscore name imported (or reached as ``module._name``) from a module of another unit.

Every ``import`` statement in every ``evalstats/**/*.py`` counts, wherever it sits, except those
under ``if TYPE_CHECKING:`` (they never run). Importing ``a.b.c`` from outside ``a.b`` also runs
``a/b/__init__.py``, so the edge goes to the package too.

A module's *unit* is its first component below ``evalstats``: ``evalstats.stats.winrates`` is in
unit ``stats``, ``evalstats.records`` in unit ``records``. Ranks below are per unit.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "evalstats"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE

# The pipeline order of DESIGN.md, top to bottom:
#   cli -> report -> {plots, audit, adapters} -> stats -> frames
#       -> {judging, rubrics, tokens, records, importers} -> errors/_schema
# A unit may import units of a strictly LOWER rank, and units of its own rank only where
# SAME_RANK allows it. A unit missing from this table fails test_every_unit_has_a_rank, so a
# new module has to be placed deliberately.
RANK: dict[str, int] = {
    "cli": 90,  # the console script: may import everything below
    "_label_cli": 85,  # the `evalstats label` subcommand, hooked into cli
    # Everything after the statistics (issue 9 turns results.py and report.py into report/).
    "report": 80,
    "results": 80,
    "summary": 80,  # "summary with report"
    "_html": 80,  # HTML writing of the report
    "plots": 70,
    "audit": 70,
    "adapters": 70,
    "simulate": 60,  # above stats (stats must not import it), below report
    "stats": 50,
    "frames": 40,
    "judging": 30,
    "rubrics": 30,
    "tokens": 30,
    "records": 30,
    "plan": 30,  # plan.toml, read with the other records of a data directory
    "importers": 30,
    "labels": 30,  # people's verdicts on pairs: a records table (DESIGN.md)
    "labelsheet": 30,  # draws pairs for people and reads their sheet back into labels
    # The shared bottom modules: argument checks and the one disagreement rule.
    "_validate": 20,
    "_disagreement": 20,
    "_atomic": 20,  # atomic file writes (records, rubrics, plots, report)
    "_tidy": 20,  # the one result shape (ResultFrame), used by stats and everything above
    "_display": 20,  # how results show themselves (stats' result classes, records' Dataset)
    "_schema": 10,
    "_surface": 10,  # the lazy packages' module class (evalstats and evalstats.stats)
    "errors": 10,
}

# Allowed imports between two different units of the same rank (importer, imported).
SAME_RANK: frozenset[tuple[str, str]] = frozenset(
    {
        ("report", "results"),  # today's split of the report layer
        ("report", "_html"),
        ("report", "summary"),
        ("results", "summary"),
        ("importers", "records"),  # other harnesses' logs become tasks/runs records
        ("importers", "tokens"),
        ("judging", "rubrics"),  # the runner renders prompts and parses answers
        # DESIGN.md's data flow is records -> tokens -> judging: the runner pairs the runs
        # (records) and counts prompt tokens (tokens) before it sends anything.
        ("judging", "records"),
        ("judging", "tokens"),
        ("records", "tokens"),  # load_runs(tasks=...) counts tokens and applies budgets
        ("labels", "records"),  # validated with the records loaders' rules
        ("labelsheet", "records"),
        ("labelsheet", "labels"),
        ("records", "plan"),  # load_dir reads the plan with the tasks, runs and judgments
        ("_schema", "errors"),
    }
)


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # dotted module name (a module or package that exists in the package)
    names: tuple[str, ...]  # names taken from target by ``from target import ...``
    line: int
    lazy: bool  # inside a function

    def where(self) -> str:
        return f"{_path_of(self.importer)}:{self.line}"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _path_of(module: str) -> str:
    return str(MODULES[module].relative_to(ROOT.parent))


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _walk(tree: ast.AST):
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


def _resolve(importer: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base = base[:-1]
    if node.level > 1:
        base = base[: -(node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imports() -> list[Import]:
    found: list[Import] = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, lazy in _walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == PACKAGE:
                        found.append(Import(module, alias.name, (), node.lineno, lazy))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, node)
                if target.split(".")[0] != PACKAGE:
                    continue
                plain = []
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in MODULES:  # ``from pkg import submodule``
                        # A private submodule of a subpackage counts as a private name of it.
                        names = (alias.name,) if target != PACKAGE else ()
                        found.append(Import(module, sub, names, node.lineno, lazy))
                    else:
                        plain.append(alias.name)
                if plain or target not in MODULES:
                    found.append(Import(module, target, tuple(plain), node.lineno, lazy))
    return found


IMPORTS = _imports()


def _root_constants() -> set[str]:
    """Names the root ``__init__`` assigns itself (importing them runs no other module)."""
    tree = ast.parse(MODULES[PACKAGE].read_text(encoding="utf-8"))
    return {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }


def _edges(imports: list[Import] | None = None) -> dict[str, set[str]]:
    """Module -> modules its imports execute (the target and the target's packages)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for imp in IMPORTS if imports is None else imports:
        if imp.target not in MODULES:
            continue
        parts = imp.target.split(".")
        # Importing a.b.c runs a/__init__ and a/b/__init__ too, unless the importer is already
        # inside them (then they are being initialised and Python does not run them again).
        for k in range(2, len(parts) + 1):
            mod = ".".join(parts[:k])
            inside = imp.importer == mod or imp.importer.startswith(mod + ".")
            if mod in MODULES and not inside:
                graph[imp.importer].add(mod)
        if imp.target == PACKAGE:
            graph[imp.importer].add(PACKAGE)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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


def _describe_cycle(comp: list[str], graph: dict[str, set[str]]) -> str:
    members = set(comp)
    lines = []
    for imp in IMPORTS:
        if imp.importer in members and (graph[imp.importer] & members):
            hit = {imp.target} & members or {
                m for m in members if imp.target.startswith(m + ".") and m in graph[imp.importer]
            }
            if hit:
                kind = "in a function" if imp.lazy else "at module level"
                lines.append(f"{imp.where()} imports {imp.target} ({kind})")
    return " <-> ".join(comp) + ":\n      " + "\n      ".join(sorted(set(lines)))


# --------------------------------------------------------------------------- the checker itself


def test_the_reader_sees_imports_of_every_kind():
    """The checker must see relative, absolute, lazy and ``from pkg import submodule`` imports."""
    by = {(i.importer, i.target): i for i in IMPORTS}
    # cli imports its subcommands inside functions; frames imports rubrics as a submodule.
    assert any(i.importer == "evalstats.cli" and i.lazy for i in IMPORTS)
    assert ("evalstats.frames", "evalstats.rubrics") in by
    assert ("evalstats.frames", "evalstats.records") in by
    assert all(i.target.startswith(PACKAGE) for i in IMPORTS)
    src = "from .x import y\nfrom ..stats.winrates import _a\n"
    node_a, node_b = ast.parse(src).body
    assert _resolve("evalstats.audit", node_a) == "evalstats.x"  # a module
    assert _resolve("evalstats.stats", node_a) == "evalstats.stats.x"  # a package
    assert _resolve("evalstats.adapters.alpaca_eval", node_b) == "evalstats.stats.winrates"


def test_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"], ["e"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_importing_a_submodule_runs_its_package():
    graph = _edges(
        [
            Import("evalstats.simulate", "evalstats.stats.resample", (), 1, True),
            Import("evalstats.stats.means", "evalstats.stats.winrates", (), 1, False),
        ]
    )
    assert graph["evalstats.simulate"] == {"evalstats.stats", "evalstats.stats.resample"}
    # Inside its own package a module does not run the package's __init__ again.
    assert graph["evalstats.stats.means"] == {"evalstats.stats.winrates"}


def test_type_checking_imports_are_ignored():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import evalstats.plots\nelse:\n    import evalstats.errors\n"
        "def f():\n    import evalstats.stats\n"
    )
    seen = {
        (n.names[0].name, lazy) for n, lazy in _walk(tree) if isinstance(n, ast.Import) and n.names
    }
    assert ("evalstats.plots", False) not in seen
    assert ("evalstats.errors", False) in seen
    assert ("evalstats.stats", True) in seen


# --------------------------------------------------------------------------- the three rules


def test_every_unit_has_a_rank():
    units = {_unit(m) for m in MODULES} - {""}
    missing = sorted(units - RANK.keys())
    assert not missing, f"units without a rank in RANK (place them in the pipeline): {missing}"


def test_no_import_cycles():
    graph = _edges()
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n  " + "\n  ".join(_describe_cycle(c, graph) for c in cycles)


def _upward(imports: list[Import]) -> list[str]:
    constants = _root_constants()
    bad = []
    for imp in imports:
        a, b = _unit(imp.importer), _unit(imp.target)
        if imp.importer == PACKAGE:
            continue  # the public surface re-exports everything (DESIGN.md)
        if imp.target == PACKAGE:
            # The root re-exports the whole package; only its own constants are safe to take.
            if set(imp.names) - constants:
                bad.append(
                    f"{imp.where()}: {imp.importer} imports the package root for {imp.names}"
                )
            continue
        if a == b or a not in RANK or b not in RANK:
            continue
        if RANK[b] > RANK[a] or (RANK[b] == RANK[a] and (a, b) not in SAME_RANK):
            bad.append(f"{imp.where()}: {a} (rank {RANK[a]}) imports {imp.target} (rank {RANK[b]})")
    return sorted(set(bad))


def test_no_upward_imports():
    bad = _upward(IMPORTS)
    assert not bad, "imports against the pipeline order:\n  " + "\n  ".join(bad)


def test_upward_rule_flags_what_it_should():
    def imp(a: str, b: str, *names: str) -> Import:
        return Import(a, b, names, 1, True)

    flagged = [
        imp("evalstats.records", "evalstats.plots"),  # up several ranks, even lazily
        imp("evalstats.stats.power", "evalstats.simulate"),
        imp("evalstats.tokens", "evalstats.records"),  # same rank, not in SAME_RANK
        imp("evalstats.frames", PACKAGE, "verdict_frame"),  # the root pulls in everything
    ]
    allowed = [
        imp("evalstats.records", "evalstats.tokens"),
        imp("evalstats.judging.runner", "evalstats.rubrics"),
        imp("evalstats.stats.means", "evalstats.stats.winrates"),  # inside one unit
        imp("evalstats.cli", PACKAGE, "__version__"),  # a constant of the root itself
        imp(PACKAGE, "evalstats.cli"),  # the public surface is exempt
    ]
    assert len(_upward(flagged)) == len(flagged)
    assert _upward(allowed) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        if imp.target not in MODULES or _unit(imp.importer) == _unit(imp.target):
            continue
        for name in imp.names:  # for a submodule import: its own last name
            if _private(name):
                bad.append(f"{imp.where()}: {imp.importer} takes {name} from {imp.target}")
    return bad


def test_private_rule_flags_what_it_should():
    def imp(a: str, b: str, *names: str) -> Import:
        return Import(a, b, names, 1, False)

    assert len(_private_imports([imp("evalstats.plots", "evalstats.records", "_x")])) == 1
    other = imp("evalstats.adapters.alpaca_eval", "evalstats.stats.winrates", "_by_columns")
    assert len(_private_imports([other])) == 1
    assert (
        _private_imports(
            [
                imp("evalstats.stats.means", "evalstats.stats.winrates", "_by_columns"),
                imp("evalstats.frames", "evalstats._schema", "ORDERS"),  # a private bottom module
                imp("evalstats.cli", "evalstats.records", "__all__"),
            ]
        )
        == []
    )


def test_no_private_names_across_units():
    bad = _private_imports(IMPORTS)
    # ``from . import records`` then ``records._atomic_write(...)`` is the same thing.
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases: dict[str, str] = {}
        for node, _lazy in _walk(tree):
            if isinstance(node, ast.ImportFrom):
                target = _resolve(module, node)
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in MODULES:
                        aliases[alias.asname or alias.name] = sub
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname and alias.name in MODULES:
                        aliases[alias.asname] = alias.name
        for node, _lazy in _walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                target = aliases[node.value.id]
                if _unit(target) != _unit(module):
                    bad.append(
                        f"{_path_of(module)}:{node.lineno}: {module} uses {target}.{node.attr}"
                    )
    assert not bad, "private names across units:\n  " + "\n  ".join(sorted(set(bad)))
