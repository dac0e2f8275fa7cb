"""The README's Python quickstart runs as written (documentation that drifts is a defect)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# Integration (slow: make test runs it, make check does not): runs the README's quickstart (a whole report).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_blocks_run(monkeypatch):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README has no Python example"
    monkeypatch.chdir(ROOT)
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
