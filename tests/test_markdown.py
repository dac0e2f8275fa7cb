"""report._markdown against nbconvert's markdown2html_mistune (the oracle): the same HTML for
every markdown cell the package ships and for a corpus of constructs; what only nbconvert
handles is handed to it; the shipped notebooks' pages are built without importing it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from evalstats.report import _markdown

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

CORPUS = [
    "# Title with — dash and “quotes” & <b>bold</b>",
    "## A `code` heading *em*",
    "### Héllo wörld: 95 % CI [0.1, 0.2]",
    "#### h4 with &amp; entity",
    "# Heading with [link](#x)",
    "# ",
    "Heading\n=======\n\nSetext",
    "Text with <span class='x'>html</span>, a [link](http://example.com) and https://auto.link.",
    "- a\n- b\n  - nested\n\n1. one\n2. two",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "~~strike~~ and\n\n- [ ] task\n- [x] done",
    "Term\n: definition",
    "    indented code\n    block",
    "> quote\n> more",
    "para one\n\npara two\nline",
    "<div>raw block</div>\n\nafter",
    "a * b * c and 5 < 6 > 4 & 'q' \"dq\"",
    "**bold** _it_ __b__",
    "Line with trailing spaces  \nnext",
    "[ref][1]\n\n[1]: http://x.org 'T'",
    "<!-- comment -->\ntext",
    "a [link](javascript:alert(1)) kept as nbconvert keeps it",
]
# What the fast path hands to nbconvert: math, backslashes, fenced code, images, "#Title".
NBCONVERT_ONLY = [
    "Inline $x_i$ math",
    "$$\\sum_i x_i$$",
    "An escaped \\* star",
    "\\begin{equation}a\\end{equation}",
    "```python\nx = 1\n```",
    "~~~\nplain fence\n~~~",
    "![a figure](figure.png)",
    "#NoSpace heading",
]


def _cells() -> list[tuple[str, str]]:
    out = []
    for path in NOTEBOOKS:
        nb = json.loads(path.read_text(encoding="utf-8"))
        for i, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "markdown":
                out.append((f"{path.name}:{i}", "".join(cell["source"])))
    return out


def test_every_shipped_markdown_cell_renders_as_nbconvert_renders_it():
    cells = _cells()
    assert len(cells) >= 30 and len(NOTEBOOKS) >= 5
    for where, source in cells:
        assert not _markdown._NBCONVERT_ONLY.search(source), f"{where} would need nbconvert"
        assert _markdown.markdown_to_html(source) == markdown2html_mistune(source), where


@pytest.mark.parametrize("source", CORPUS)
def test_a_corpus_of_constructs_renders_as_nbconvert_renders_it(source):
    assert not _markdown._NBCONVERT_ONLY.search(source)
    assert _markdown.markdown_to_html(source) == markdown2html_mistune(source)


@pytest.mark.parametrize("source", NBCONVERT_ONLY)
def test_what_only_nbconvert_handles_is_handed_to_it(source):
    assert _markdown._NBCONVERT_ONLY.search(source)
    assert _markdown.markdown_to_html(source) == markdown2html_mistune(source)


def test_the_shipped_pages_are_built_without_importing_nbconvert():
    code = (
        "import json, sys\n"
        "from evalstats.report import _html\n"
        f"for path in {[str(p) for p in NOTEBOOKS]!r}:\n"
        "    _html.notebook_body(json.load(open(path, encoding='utf-8')))\n"
        "assert 'mistune' in sys.modules\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'nbconvert'], 'nbconvert'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=REPO)
