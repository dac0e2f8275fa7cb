"""The report package's seams: one scaffold for every kind, light imports, packaged notebooks,
figures rendered once, and the case-study findings stored with the numbers they quote."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from conftest import first_difference, shared_path

from evalstats import plots
from evalstats.cli import build_parser
from evalstats.report import (
    REPORT_KINDS,
    ReportError,
    compute,
    compute_case_study,
    compute_methodology,
    compute_results,
    dump_json,
    merge_results,
    notebook_path,
)

# Integration (slow: make test runs it, make check does not): renders report pages.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PARAMS = {"n_resamples": 200, "seed": 3, "confidence": 0.9}


def _sample() -> Path:
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    return SAMPLE


def test_kind_names_of_the_cli_are_the_registry():
    parser = build_parser("report")
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    (kind,) = [a for a in commands.choices["report"]._actions if "--kind" in a.option_strings]
    assert list(kind.choices) == list(REPORT_KINDS)


@pytest.mark.slow  # computes the whole sample report three times
def test_one_scaffold_pages_are_independent():
    """All pages at once, or page by page (as the renderer does), give the same numbers."""
    data = _sample()
    whole = json.loads(dump_json(compute("evaluation", data, **PARAMS).to_json()))
    parts = merge_results(
        compute_results(data, **PARAMS).to_json(), compute_methodology(data, **PARAMS).to_json()
    )
    parts = json.loads(dump_json(parts))
    assert first_difference(whole, parts) is None, first_difference(whole, parts)
    assert {"headline", "audit", "design", "coverage"} <= set(whole["tables"])
    other = compute("evaluation", data, **{**PARAMS, "seed": 4}).to_json()
    # simulations depend on the seed: not vacuous
    assert other["tables"]["design_coverage"] != whole["tables"]["design_coverage"]


def test_compute_validates_before_loading(tmp_path):
    with pytest.raises(ValueError, match="confidence"):
        compute("evaluation", tmp_path, confidence=1.5)
    with pytest.raises(ValueError, match="n_resamples"):
        compute("evaluation", tmp_path, n_resamples=0)
    with pytest.raises(TypeError, match="unexpected parameter"):
        compute("alpaca_eval", tmp_path, judges=["a:b"])
    with pytest.raises(ReportError, match="unknown report kind"):
        compute("nope", tmp_path)
    with pytest.raises(ReportError, match="unknown page"):
        compute("evaluation", _sample(), pages=["appendix"], n_resamples=10)


def test_importing_the_report_package_is_light():
    """The CLI imports evalstats.report for `register`: it must add no heavy module."""
    code = (
        "import sys, evalstats\n"
        "before = set(sys.modules)\n"
        "import evalstats.report\n"
        "from evalstats.report import register\n"
        "new = set(sys.modules) - before\n"
        "heavy = sorted(m for m in new if m.split('.')[0] in "
        "{'pandas', 'numpy', 'matplotlib', 'nbclient', 'nbformat', 'nbconvert', "
        "'jupyter_client', 'IPython', 'scipy'})\n"
        "assert not heavy, heavy\n"
        "assert 'evalstats.report._render' not in new and 'evalstats.report._kinds' not in new\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_notebooks_found_in_the_checkout_when_not_packaged():
    path = notebook_path("report.ipynb")
    assert path == REPO / "notebooks" / "report.ipynb" or path.parent.name == "notebooks"
    assert nbformat.read(path, as_version=4).cells
    with pytest.raises(ReportError, match="not found"):
        notebook_path("absent.ipynb")


def test_notebooks_are_shipped_as_package_data():
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"notebooks" = "evalstats/report/notebooks"' in text
    for kind in REPORT_KINDS.values():
        for nb_name, _, _ in kind.notebooks:
            assert (REPO / "notebooks" / nb_name).is_file(), nb_name


def test_render_figure_lays_out_once_and_matches_a_tight_savefig():
    curve = pd.DataFrame({"n_tasks": [10, 20, 40], "power": [0.2, 0.5, 0.8]})
    fig = plots.plot_power_curve(curve)
    out = plots.render_figure(fig, dpi=200)
    assert out["png"][:8] == b"\x89PNG\r\n\x1a\n" and b"<svg" in out["svg"][:400]
    # Same pixel size as matplotlib's own bbox_inches="tight" save at that dpi (within a
    # pixel or two of rounding), and the same bytes when rendered again.
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=200, bbox_inches="tight")
    w_tight = int.from_bytes(buf.getvalue()[16:20], "big")
    w_once = int.from_bytes(out["png"][16:20], "big")
    assert abs(w_tight - w_once) <= 3
    assert plots.render_figure(plots.plot_power_curve(curve), dpi=200) == out


def test_case_study_findings_are_in_results_json():
    data = shared_path("data", "alpaca_eval")
    res = compute_case_study(data, n_resamples=100, seed=1)
    findings = res.tables["findings"]
    assert list(findings.columns) == ["topic", "text"]
    assert findings["topic"].tolist()[0] == "leaderboard"
    assert "4 of 4 published rows" in findings["text"].iloc[0]
    doc = res.to_json()
    assert doc["tables"]["findings"][0]["text"] == findings["text"].iloc[0]
    # Each agreement sentence quotes the agreement table's numbers.
    agreement = res.tables["agreement"].diagnostics  # the counts, one row per judge pair
    for row in agreement.loc[agreement["judge_a"] != "all judges"].to_dict("records"):
        sentence = f"disagree on {row['disagreements']} of {row['n']} pairs"
        assert any(sentence in t for t in findings["text"]), sentence
    assert np.isfinite(res.tables["standard_errors"]["se"]).all()
