"""Issue 32, area F: the exports are inert (no live link, image, heading or raw HTML from a task
id, arm or judge name), macro names stay valid and distinct for any arm id, the K-arm report
builds its pairs' frames once, and the comparison report shows the audit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from evalstats.report import (
    compute,
    compute_results,
    export,
    headline_paragraph,
    latex_macros,
    markdown_tables,
    result_sentences,
    sentences_markdown,
)

ROOT = Path(__file__).resolve().parents[1]
BEACON = "![x](https://e.example/b.png)"
HOSTILE = f"{BEACON} [y](https://e.example/l)\n# Pwned\r\n<img src=x>\x07\\"


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def _inert(markdown: str) -> None:
    html = _html(markdown)
    assert "<img" not in html and "<a " not in html and "<h1>Pwned" not in html, html
    assert "e.example/b.png" in html  # shown as text, not dropped


def _rename(src: Path, dst: Path, old: str, new: str) -> Path:
    shutil.copytree(src, dst)
    for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl"):
        rows = [json.loads(x) for x in (dst / name).read_text("utf-8").splitlines() if x]
        for r in rows:
            r["task_id"] = new if r["task_id"] == old else r["task_id"]
        (dst / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return dst


@pytest.fixture(scope="module")
def sample_doc(tmp_path_factory):
    d = _rename(ROOT / "data" / "sample", tmp_path_factory.mktemp("s") / "d", "T01", HOSTILE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        doc = compute_results(d, n_resamples=50, seed=0).to_json()
    doc["provenance"]["arm_names"] = {"with": HOSTILE, "without": "plain\n## injected"}
    return doc


def test_markdown_tables_and_sentences_of_hostile_ids_are_inert(sample_doc):
    tables = markdown_tables(sample_doc)
    assert any("e.example/b.png" in t for t in tables.values())  # the task id is in per_task
    for text in tables.values():
        _inert(text) if "e.example" in text else None
    _inert(sentences_markdown(sample_doc))
    for s in [headline_paragraph(sample_doc), *result_sentences(sample_doc)]:
        assert "\n" not in s and "\r" not in s and "\x07" not in s
    assert "[U+000A]# Pwned" in headline_paragraph(sample_doc)


@pytest.fixture(scope="module")
def karm_doc(tmp_path_factory):
    """data/karm with arm ids that collide in letters (v-1, v_1) and one of no ASCII (β)."""
    d = tmp_path_factory.mktemp("k") / "d"
    shutil.copytree(ROOT / "data" / "karm", d)
    ids = {"none": "none", "v1": "v-1", "v2": "β"}
    for name in ("runs.jsonl", "judgments.jsonl"):
        rows = [json.loads(x) for x in (d / name).read_text("utf-8").splitlines() if x]
        for r in rows:
            for k in ("arm", "arm_a", "arm_b"):
                if r.get(k) is not None:
                    r[k] = ids[r[k]]
        (d / name).write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    (d / "arms.toml").write_text(
        'reference = "none"\n[arms]\nnone = "no tool"\n"v-1" = "tool v1\\n# Pwned"\n'
        f'"β" = {json.dumps(HOSTILE)}\n',
        "utf-8",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute("evaluation", d, n_resamples=50, seed=0)
    return d, res


def test_k_arm_exports_are_inert_and_macro_names_valid(karm_doc, tmp_path):
    _, res = karm_doc
    doc = res.to_json()
    _inert(sentences_markdown(doc))
    for name, text in markdown_tables(doc).items():
        assert "<h" not in _html(text) and "<img" not in _html(text), name
    macros = latex_macros(doc)
    names = [line.split("}{")[0] for line in macros.splitlines() if line.startswith("\\new")]
    assert all(n.removeprefix("\\newcommand{\\").isalpha() for n in names)
    assert len(names) == len(set(names))
    assert any("GreekSmallLetterBeta" in n for n in names)


def test_colliding_arm_ids_in_macros_are_one_line_exit_2(karm_doc, tmp_path):
    _, res = karm_doc
    doc = res.to_json()
    swap = {"β": "v_1"}  # v-1 and v_1 both give VOne

    def rename(v):
        return swap.get(v, v) if isinstance(v, str) else v

    for rows in doc["tables"].values():
        if isinstance(rows, list):
            for r in rows:
                for k in ("arm", "arm_a", "arm_b", "opponent", "reference"):
                    if k in r:
                        r[k] = rename(r[k])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc), "utf-8")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalstats.cli",
            "export",
            str(path),
            "--macros",
            str(tmp_path / "m"),
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "--alias" in run.stderr
    out = export(path, macros=tmp_path / "m.tex", aliases={"v_1": "VUnderscoreOne"})
    assert "VUnderscoreOneVsNone" in out[0].read_text()


def test_holm_does_not_walk_the_heap(monkeypatch):
    """A K-arm report adjusts once per pair: a gc.collect() per call grew with every pair
    held (statsmodels' multipletests); the values are the step-down Holm's all the same."""
    import gc

    from evalstats.stats import holm

    calls = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(a) or 0)
    got = holm([0.01, float("nan"), 0.04, 0.03, 0.2, 0.01])
    assert calls == []
    assert got.round(6).tolist()[:1] + got.round(6).tolist()[2:] == [0.05, 0.09, 0.09, 0.2, 0.05]
    assert str(got[1]) == "nan"


def test_the_comparison_page_carries_the_pairs_audit(karm_doc):
    """`evalstats report` hands each notebook its own page's Results: the comparison page's
    own tables must hold the audit of the pairs it compares."""
    d, _ = karm_doc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute("evaluation", d, pages=["comparison"], n_resamples=50, seed=0)
    audit = res.tables["pair_audit"]
    failed = audit.loc[audit["check"] == "judge_disagreement", "status"]
    assert len(failed) == 3 and set(failed) == {"fail"}  # data/karm's judges disagree: each pair
    assert set(zip(audit["arm_a"], audit["arm_b"], strict=True)) >= {("v-1", "none")}
