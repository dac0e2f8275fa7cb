"""The public surface: one lazy mechanism, no name hidden by a module, one table in docs/.

Every package's public names resolve through :func:`evalstats._surface.lazy_surface` (or are
imported eagerly, as ``evalstats.plots`` does). docs/reference.md is one table of every public
name; :func:`api_rows` generates it from the packages' ``__all__`` and the objects'
docstrings, and the test compares. After adding or moving a name, rewrite the table with::

    PYTHONPATH=. python tests/test_stats_surface.py --write
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import evalstats
import evalstats.stats as st
from evalstats._surface import lazy_surface  # private: the surface table is what this test checks

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "docs" / "reference.md"
START, END = "<!-- api-table:start -->", "<!-- api-table:end -->"

# The packages whose ``__all__`` is public, in the order the table lists them.
PUBLIC_PACKAGES = (
    "evalstats",
    "evalstats.records",
    "evalstats.frames",
    "evalstats.labelsheet",
    "evalstats.plan",
    "evalstats.tokens",
    "evalstats.simulation",
    "evalstats.stats",
    "evalstats.plots",
    "evalstats.report",
    "evalstats.judging",
    "evalstats.rubrics",
    "evalstats.importers",
    "evalstats.adapters",
    "evalstats.methodology",
)
LAZY_PACKAGES = ("evalstats", "evalstats.stats", "evalstats.report")


def _summary(obj: object) -> str | None:
    """The first sentence of an object's own docstring (None for a plain value)."""
    if not (inspect.isroutine(obj) or inspect.isclass(obj) or isinstance(obj, types.ModuleType)):
        return None
    doc = inspect.getdoc(obj) or ""
    first = " ".join(doc.strip().split("\n\n")[0].split())
    cut = re.search(r"(?<=[.;:])\s", first)
    if cut and len(first) > 110:
        first = first[: cut.start()]
    return first.replace("|", "\\|") or None


def api_rows() -> dict[str, tuple[str, str | None]]:
    """Public name -> (the packages it is reachable from, its docstring's first sentence)."""
    where: dict[str, list[str]] = {}
    what: dict[str, str | None] = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            where.setdefault(name, []).append(package)
            what.setdefault(name, _summary(getattr(module, name)))
    return {n: (", ".join(f"`{p}`" for p in where[n]), what[n]) for n in where}


def _readme_rows() -> dict[str, tuple[str, str]]:
    text = README.read_text(encoding="utf-8")
    assert START in text and END in text, "docs/reference.md lacks the API table's markers"
    body = text.split(START, 1)[1].split(END, 1)[0]
    rows = {}
    for line in body.strip().splitlines()[2:]:  # after the header and the rule
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        rows[cells[0].strip("`")] = (cells[1], cells[2])
    return rows


def _table(old: dict[str, tuple[str, str]]) -> str:
    lines = ["| name | where | what |", "| --- | --- | --- |"]
    for name, (where, what) in api_rows().items():
        # A plain value (a constant) has no docstring of its own: its line is written by hand.
        text = what or old.get(name, ("", ""))[1] or "TODO: one line"
        lines.append(f"| `{name}` | {where} | {text} |")
    return "\n".join(lines)


def write_readme_table() -> None:
    text = README.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    old = _readme_rows()
    README.write_text(f"{head}{START}\n{_table(old)}\n{END}{tail}", encoding="utf-8")


def test_the_reference_documents_every_public_name_in_one_table():
    readme, generated = _readme_rows(), api_rows()
    missing = sorted(set(generated) - set(readme))
    stale = sorted(set(readme) - set(generated))
    moved = sorted(n for n in generated if n in readme and readme[n][0] != generated[n][0])
    undocumented = sorted(n for n, (_, what) in readme.items() if not what or "TODO" in what)
    assert not (missing or stale or moved or undocumented), (
        f"docs/reference.md API table: missing {missing}, stale {stale}, moved {moved}, "
        f"undocumented {undocumented}; run: PYTHONPATH=. python tests/test_stats_surface.py "
        "--write (and write the lines of new constants by hand)"
    )


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_resolves_and_is_listed(package):
    module = importlib.import_module(package)
    assert len(module.__all__) == len(set(module.__all__))
    assert set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = module.no_such_name


def test_the_root_is_small_and_each_root_name_is_defined_once():
    # A newcomer's names (at most 60); every root name resolves to the object its package
    # defines, so one name is one object wherever it is reached from.
    assert len(evalstats.__all__) <= 60
    for name in evalstats.__all__:
        value = getattr(evalstats, name)
        for package in PUBLIC_PACKAGES[1:]:
            module = importlib.import_module(package)
            if name in module.__all__:
                assert getattr(module, name) is value, (name, package)
    assert evalstats.win_rates is st.win_rates
    namespace: dict[str, object] = {}
    exec("from evalstats import *", namespace)
    assert namespace["load_dir"] is evalstats.load_dir


def test_no_public_name_is_a_submodule_name():
    # What made the module-class hack necessary (``evalstats.audit`` the module hiding
    # ``evalstats.audit`` the function once imported) cannot come back.
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        if not hasattr(module, "__path__"):
            continue
        subs = {p.stem for p in Path(module.__path__[0]).iterdir() if p.suffix == ".py"}
        subs |= {p.name for p in Path(module.__path__[0]).iterdir() if (p / "__init__.py").exists()}
        subs.discard("__init__")
        values = [n for n in module.__all__ if not isinstance(getattr(module, n), types.ModuleType)]
        assert not set(values) & subs, (package, sorted(set(values) & subs))


def test_lazy_surface_refuses_a_clash_and_a_duplicate():
    with pytest.raises(ValueError, match="also submodule names"):
        lazy_surface("evalstats", {".simulate": ["simulate"]})
    with pytest.raises(ValueError, match="listed twice"):
        lazy_surface("evalstats", {".frames": ["load_frame"], ".records": ["load_frame"]})


def test_one_lazy_mechanism():
    """No package resolves names any other way (no module class, no second table)."""
    for path in (ROOT / "evalstats").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        assert "__class__ =" not in text, rel
        if path.name == "__init__.py" and "def __getattr__" in text:
            pytest.fail(f"{rel} defines its own __getattr__; use evalstats._surface.lazy_surface")


@pytest.mark.slow  # starts a Python subprocess
def test_the_report_kernels_formatting_import_loads_no_scipy():
    # What the report's notebooks display with (the headline card's words): the kernel
    # never imports scipy.stats or the estimators for it.
    code = (
        "import sys, evalstats.report._export, evalstats.report._display; "
        "print(sorted(m for m in ('scipy', 'scipy.stats', 'evalstats.stats.rates') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_readme_table()
    else:
        print(_table(_readme_rows() if START in README.read_text(encoding="utf-8") else {}))
