"""Tests exercise the public API: a test that imports a private module or name says why.

The reason is a ``# private: <why>`` comment on the import statement (any of its lines).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Owned by another wave-2 helper (compare, rank); drop an entry once its imports say why.
NOT_YET = {"test_compare.py", "test_rank.py"}


def _is_private(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalstats"):
        parts = node.module.split(".")
        return any(p.startswith("_") for p in parts) or any(
            a.name.startswith("_") for a in node.names
        )
    if isinstance(node, ast.Import):
        return any(
            a.name.startswith("evalstats") and any(p.startswith("_") for p in a.name.split("."))
            for a in node.names
        )
    return False


def unexplained_private_imports(path: Path) -> list[int]:
    """Line numbers of ``path``'s private imports that carry no ``# private:`` reason."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if _is_private(node)
        and "# private:" not in "\n".join(lines[node.lineno - 1 : node.end_lineno])
    ]


def test_every_private_import_says_why():
    bad = {
        p.name: lines
        for p in sorted(TESTS.glob("*.py"))
        if p.name not in NOT_YET and (lines := unexplained_private_imports(p))
    }
    assert not bad, f"private imports without a '# private: <why>' comment: {bad}"


def test_the_check_sees_a_private_import(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(
        "from evalstats._tidy import wide\n"
        "from evalstats.stats import ranking, _x\n"
        "import evalstats.report._html as h  # private: the page writer\n"
        "from evalstats.stats import win_rates\n"
    )
    assert unexplained_private_imports(f) == [1, 2]
