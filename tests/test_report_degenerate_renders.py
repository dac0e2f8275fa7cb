"""The report renders on every degenerate design (issue 10, §6): the pages of
:mod:`test_report_degenerate`'s designs, kept apart from its computes so that the two test
workers share the kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_report_degenerate import DESIGNS, FAST, TRACEBACK_MARKERS, make_design

from evalstats.report import render_report


@pytest.mark.slow  # starts a Jupyter kernel
@pytest.mark.parametrize("name", list(DESIGNS))
def test_degenerate_design_renders(name: str, tmp_path: Path) -> None:
    data = make_design(name, tmp_path / "data")
    out = tmp_path / "out"
    index = render_report(data, out, params=FAST, figures="svg")  # PDFs: test_report_pdf
    assert index == out / "index.html" and index.is_file()
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    pages = {p: (out / p).read_text(encoding="utf-8") for p in ("index.html", "methodology.html")}
    for page, text in pages.items():
        for marker in TRACEBACK_MARKERS:
            assert marker not in text, f"{page}: {marker!r} (a traceback on the page)"
    for section in DESIGNS[name][2]:
        reason = doc["unavailable"].get(section)
        assert reason, f"results.json: no reason for {section}"
        assert doc["tables"].get(section) is None  # null: not an empty or made-up table
        shown = f"{section}: not available ({reason})"
        assert any(shown.replace("'", "&#x27;") in t for t in pages.values()), shown
