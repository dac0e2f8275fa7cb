"""The exported LaTeX tables in a paper: each a float with its caption then its label, so
``Table~\\ref`` prints the table's number; a math minus; ``< 0.001`` for a small p; columns that
do not justify a formula; a table that fits by design (no scaling), with no overfull box.

The compiling tests need pdflatex (``scripts/install-texlive.sh``, run by ``make test``) and skip
without it; they start outside processes, like the browser tests: marked slow.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import evalstats.report as ex

DATA = Path(__file__).resolve().parents[1] / "data"
PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex not installed (scripts/install-texlive.sh installs it)"
)
PREAMBLE = "\\documentclass[twocolumn]{article}\n\\usepackage{booktabs,tabularx}\n"
# One column spec: l, r, c or a ragged-right X (a justified p{} breaks "t(C - 1)").
COLUMN = r"[lrc]|>\{\\raggedright\\arraybackslash\}X"


@functools.cache
def results(name: str) -> dict:
    """``data/<name>``'s results.json, as the report writes it."""
    from evalstats.report import compute, dump_json, merge_results

    pages = ["report", "comparison"] if name == "karm" else ["report"]
    res = compute("evaluation", DATA / name, pages=pages, n_resamples=100, seed=0)
    return json.loads(dump_json(merge_results(res.to_json())))


@pytest.fixture(params=["sample", "karm"])
def doc(request) -> dict:
    return copy.deepcopy(results(request.param))


def rows(tex: str) -> list[str]:
    """The body rows of a tabular (no header, no notes)."""
    return tex.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0].strip().splitlines()


def compile_paper(doc: dict, where: Path) -> tuple[str, dict[str, str], list[str]]:
    """Export ``doc``'s tables into a two-column article under a numbered section, each
    referenced by ``Table~\\ref``; compile twice. The log, each label's number, the stems."""
    paths = ex.export(doc, latex=where / "tex")
    labels = [f"tab:evalstats-{p.stem.replace('_', '-')}" for p in paths]
    body = "".join(
        f"See Table~\\ref{{{label}}}.\n\\input{{tex/{p.stem}}}\n"
        for p, label in zip(paths, labels, strict=True)
    )
    (where / "paper.tex").write_text(
        PREAMBLE + "\\begin{document}\n\\section{Results}\n" + body + "\\end{document}\n",
        encoding="utf-8",
    )
    for _ in range(2):  # the second pass reads the references the first wrote
        run = subprocess.run(
            [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=120,
        )
        log = (where / "paper.log").read_text(encoding="utf-8", errors="replace")
        assert run.returncode == 0, log[-2000:]
    aux = (where / "paper.aux").read_text(encoding="utf-8")
    numbers = dict(re.findall(r"\\newlabel\{([^}]*)\}\{\{([^}]*)\}", aux))
    return log, numbers, labels


@pytest.mark.slow
@needs_pdflatex
def test_every_table_is_referenced_by_its_own_number_and_fits(doc, tmp_path):
    log, numbers, labels = compile_paper(doc, tmp_path)
    assert "undefined" not in log.lower() and "??" not in log
    # Table 1, 2, ... in order: the table counter, not the section's number (1 for all).
    assert [numbers[label] for label in labels] == [str(k) for k in range(1, len(labels) + 1)]
    assert "Overfull \\hbox" not in log and "Overfull \\vbox" not in log


@pytest.mark.slow
@needs_pdflatex
def test_long_names_wrap_not_overfull(doc, tmp_path):
    long = copy.deepcopy(doc)
    judge = "openai:gpt-4o-mini-with-a-very-long-custom-fine-tune-name-2024-07-18"
    for row in long["tables"]["headline"] + long["tables"]["headline_diagnostics"]:
        row["rubric"] = "a-user-rubric-with-a-long-name-" + row["rubric"]
        if row["judge"].startswith("openai:"):
            row["judge"] = judge
    log, _, _ = compile_paper(long, tmp_path)
    assert "Overfull \\hbox" not in log
    tex = (tmp_path / "tex" / "headline.tex").read_text(encoding="utf-8")
    # The short name in the table, the full id (escaped) in the note.
    assert "GPT 4o Mini With A Very Long" in "".join(rows(tex))
    assert judge.replace("_", "\\_") in tex.split("\\parbox", 1)[1]


def test_caption_then_label_in_a_float_and_no_scaling(doc):
    captions = set()
    for name, tex in ex.latex_tables(doc).items():
        begin, caption = tex.index("\\begin{table*}"), tex.index("\\caption{")
        label = tex.index(f"\\label{{tab:evalstats-{name.replace('_', '-')}}}")
        assert begin < caption < label < tex.index("\\begin{tabular"), name
        said = tex[caption:].split("}", 1)[0]
        assert ": estimate [95 \\% CI]." in said and not said.startswith(f"\\caption{{{name}")
        captions.add(said)
        assert not re.search(r"resizebox|scalebox|adjustbox", tex), name
        assert "\\small" in tex and "\\scriptsize" not in tex
        spec = re.search(r"\\begin\{tabularx?\}(\{\\linewidth\})?\{(.*)\}\n", tex).group(2)
        assert re.fullmatch(f"({COLUMN})+", spec), (name, spec)
    assert len(captions) == len(ex.latex_tables(doc))  # a title of its own each


def test_numbers_have_a_minus_and_p_values_no_zeros(doc):
    tex = ex.latex_tables(doc)
    body = "\n".join(r for t in tex.values() for r in rows(t))
    assert not re.search(r"(?<![\w$.])-\d", body), "a hyphen before a digit"
    assert "$-$" in body  # both data sets have negative bounds
    assert "0.000" not in "".join(tex.values())


def test_small_p_values_print_below_a_thousandth():
    small = copy.deepcopy(results("karm"))
    for row in small["tables"]["compare"]:
        row["p_holm"] = 1e-7 if row.get("p_holm") is not None else None
    tex, md = ex.latex_tables(small)["compare"], ex.markdown_tables(small)["compare"]
    assert "0.000" not in tex + md
    assert "$<$\\,0.001" in "".join(rows(tex)) and "| < 0.001 |" in md
    assert "< 0.001" not in tex.replace("$<$\\,0.001", "")  # "<" is "¡" in a text font
    said = " ".join(ex.result_sentences(small))
    assert "Holm-adjusted p < 0.001" in said and "e-0" not in said


def test_shared_columns_go_to_the_note(doc):
    """A column every row shares (the task count) is said once, in the note."""
    tex = ex.latex_tables(doc)["headline"]
    header = tex.split("\\toprule\n", 1)[1].split("\\\\", 1)[0]
    tasks = {r["n_tasks"] for r in doc["tables"]["headline"]}
    assert len(tasks) == 1 and "Tasks" not in header
    assert f"Tasks: {tasks.pop()}." in tex.split("\\parbox", 1)[1]


def test_headers_are_words_and_notes_name_models_and_methods():
    from evalstats.report import method_words

    doc = results("sample")
    tex = ex.latex_tables(doc)
    head = tex["headline"].split("\\toprule\n", 1)[1].split("\\\\", 1)[0]
    assert [c.strip() for c in head.split("&")] == [
        "Rubric",
        "Judge",
        "n",
        "Pairs",
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
    # the statistics sharing kappa's method are named together, kappa first
    said = re.escape(f"95 \\% CI by {method_words(kappa.pop())}.")
    assert re.search(rf"Kappa(, [^:.]+)?: {said}", agreement), agreement
