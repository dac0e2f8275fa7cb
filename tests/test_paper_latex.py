"""The exported LaTeX tables compiled with pdflatex in a two-column paper: no overfull box.

Skips when pdflatex is absent (``scripts/install-texlive.sh`` installs Debian's). The two
compiling tests start pdflatex, an outside process like the browser tests: marked slow.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import evalstats.report as ex

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
PDFLATEX = shutil.which("pdflatex")
pytestmark = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex not installed (scripts/install-texlive.sh installs it)"
)
PREAMBLE = "\\documentclass[twocolumn]{article}\n\\usepackage{booktabs,graphicx}\n"


@pytest.fixture(scope="module")
def doc() -> dict:
    from evalstats.report import compute_results, dump_json, merge_results

    res = compute_results(SAMPLE, n_resamples=100, seed=0)
    return json.loads(dump_json(merge_results(res.to_json())))


def compile_tables(doc: dict, where: Path) -> str:
    """Export ``doc``'s tables, \\input each into a two-column article, compile; the log."""
    paths = ex.export(doc, latex=where / "tex")
    body = "\n".join(f"\\input{{tex/{p.stem}}}\n\\clearpage" for p in paths)
    (where / "paper.tex").write_text(
        PREAMBLE + "\\begin{document}\nSome text.\n" + body + "\n\\end{document}\n",
        encoding="utf-8",
    )
    run = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
    )
    log = (where / "paper.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log[-2000:]
    return log


@pytest.mark.slow
def test_sample_tables_fit_the_page(doc, tmp_path):
    log = compile_tables(doc, tmp_path)
    assert "Overfull \\hbox" not in log
    assert "Overfull \\vbox" not in log
    # Every table but agreement (11 columns of intervals) fits at its natural size; the
    # agreement table is scaled to the line, and the log says so.
    scaled = set(re.findall(r"evalstats: table (\S+) scaled", log))
    assert scaled <= {"agreement"}, scaled
    assert (tmp_path / "paper.pdf").stat().st_size > 0


@pytest.mark.slow
def test_long_names_are_scaled_not_overfull(doc, tmp_path):
    long = copy.deepcopy(doc)
    judge = "openai:gpt-4o-mini-with-a-very-long-custom-fine-tune-name-2024-07-18"
    for row in long["tables"]["headline"] + long["tables"]["headline_diagnostics"]:
        row["rubric"] = "a-user-rubric-with-a-long-name-" + row["rubric"]
        if row["judge"].startswith("openai:"):
            row["judge"] = judge
    log = compile_tables(long, tmp_path)
    assert "Overfull \\hbox" not in log
    assert "evalstats: table headline scaled" in log
    tex = (tmp_path / "tex" / "headline.tex").read_text(encoding="utf-8")
    # The short name in the table, the full id (escaped) in the note.
    assert "GPT 4o Mini With A Very Long" in tex.split("\\midrule", 1)[1].split("\\bottomrule")[0]
    assert judge.replace("_", "\\_") in tex.split("\\parbox", 1)[1]


def test_headers_are_words_and_notes_name_models_and_methods(doc):
    tex = ex.latex_tables(doc)
    head = tex["headline"].split("\\toprule\n", 1)[1].split("\\\\", 1)[0]
    assert [c.strip() for c in head.split("&")] == [
        "Rubric",
        "Judge",
        "n",
        "Pairs",
        "Tasks",
        "Win (\\%)",
        "Tie (\\%)",
        "Loss (\\%)",
        "Net win (\\%)",
        "Score (\\%)",
    ]
    for name, text in tex.items():
        header = text.split("\\toprule\n", 1)[1].split("\\midrule", 1)[0]
        assert "\\_" not in header, (name, header)  # no snake_case column names
    note = tex["headline"].split("\\parbox", 1)[1]
    assert "Claude Sonnet 4: anthropic:claude-sonnet-4-20250514." in note
    # The method is the one results.json's rows carry, not a name fixed here.
    methods = {r["method"] for r in doc["tables"]["headline"]}
    assert len(methods) == 1 and methods.pop().replace("_", "\\_") in note
    agreement = tex["agreement"].split("\\parbox", 1)[1]
    kappa = {r["method"] for r in doc["tables"]["agreement"] if r["statistic"] == "kappa"}
    from evalstats.report import method_words

    # the statistics sharing kappa's method are named together, kappa first
    said = re.escape(f"95 \\% CI by {method_words(kappa.pop())}.")
    assert re.search(rf"Kappa(, [^:.]+)?: {said}", agreement), agreement
