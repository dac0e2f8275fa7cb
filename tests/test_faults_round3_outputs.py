"""Issue 32, Deliver 2 and the renders: no -o writes over the data or a file evalstats did not
write (unless --force), a filled sheet is not redrawn over, concurrent sheet reads keep every
label, an interrupted re-render keeps the last report, bad -p types and a malformed
results.json are one line and exit 2."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalstats.cli import main
from evalstats.records import load_labels
from evalstats.report import render_report

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample"
CLI = "import sys; from evalstats.cli import main; sys.exit(main())"


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return shutil.copytree(SAMPLE, tmp_path / "data")


def test_outputs_naming_data_files_are_refused(data, capsys):
    (data / "truth.json").unlink()  # judgments paid for, not simulated
    before = _snapshot(data)
    for argv in (
        ["frame", str(data), "-o", str(data / "judgments.jsonl")],
        ["frame", str(data), "-o", str(data / "runs.jsonl")],
        ["summary", str(data), "-o", str(data / "tasks.jsonl")],
        ["label", str(data), "-n", "3", "--seed", "1", "-o", str(data / "judgments.jsonl")],
        ["label", str(data), "-n", "3", "--seed", "1", "-o", str(data / "rubrics" / "x.csv")],
    ):
        assert "data file" in _refused(argv, capsys)
    _refused(["simulate", str(data)], capsys)
    assert _snapshot(data) == before


def test_an_existing_file_is_replaced_only_when_evalstats_wrote_it(data, tmp_path, capsys):
    mine = tmp_path / "notes.csv"
    mine.write_text("my notes\n", encoding="utf-8")
    assert "--force" in _refused(["frame", str(data), "-o", str(mine)], capsys)
    assert mine.read_text(encoding="utf-8") == "my notes\n"
    ours = tmp_path / "frame.csv"
    assert main(["frame", str(data), "-o", str(ours)]) == 0
    assert main(["frame", str(data), "-o", str(ours)]) == 0  # its own output: replaced
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (elsewhere / "judgments.jsonl").write_text("{}\n", encoding="utf-8")
    _refused(["frame", str(data), "-o", str(elsewhere / "judgments.jsonl")], capsys)
    assert main(["frame", str(data), "-o", str(mine), "--force"]) == 0
    user_dir = tmp_path / "mine"
    user_dir.mkdir()
    (user_dir / "thesis.tex").write_text("x", encoding="utf-8")
    _refused(["report", str(data), "-o", str(user_dir)], capsys)
    _refused(["simulate", str(user_dir)], capsys)
    _refused(["import", "table", str(tmp_path / "runs.csv"), "-o", str(user_dir)], capsys)
    assert sorted(os.listdir(user_dir)) == ["thesis.tex"]


def _fill(sheet: Path, labeler: str) -> None:
    with open(sheet, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["verdict"], row["labeler"] = "a", labeler
    with open(sheet, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_a_filled_sheet_is_not_redrawn_over(data, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    draw = ["label", str(data), "-n", "4", "--seed", "1", "-o", str(sheet)]
    assert main(draw) == 0
    assert main([*draw[:-2], "--seed", "2", "-o", str(sheet)]) == 0  # unfilled: redrawn
    _fill(sheet, "ann")
    filled = sheet.read_bytes()
    _refused(draw, capsys)
    assert sheet.read_bytes() == filled
    assert main([*draw, "--force"]) == 0


def test_concurrent_sheet_reads_keep_every_label(data, tmp_path):
    sheets = []
    for seed in range(1, 5):
        sheet = tmp_path / f"s{seed}.csv"
        assert main(["label", str(data), "-n", "4", "--seed", str(seed), "-o", str(sheet)]) == 0
        _fill(sheet, f"labeler{seed}")
        sheets.append(sheet)
    (data / "labels.jsonl").unlink(missing_ok=True)
    procs = [
        subprocess.Popen([sys.executable, "-c", CLI, "label", str(data), "--read", str(s)])
        for s in sheets
    ]
    assert [p.wait(timeout=600) for p in procs] == [0] * len(procs)
    assert len(load_labels(data / "labels.jsonl")) == 4 * len(sheets)


def test_report_parameter_types_are_checked_before_a_kernel(data, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text('{"last": "report"}', encoding="utf-8")
    for param in ('confidence="0.9"', "judges=5", "judges=[5]", "seed=true", "n_resamples=2.5"):
        err = _refused(["report", str(data), "-o", str(out), "-p", param], capsys)
        assert param.split("=")[0] in err
    assert (out / "results.json").read_text(encoding="utf-8") == '{"last": "report"}'


def test_export_of_a_malformed_results_json_is_one_line(tmp_path, capsys):
    from evalstats.report import compute_results, dump_json, merge_results

    doc = merge_results(compute_results(SAMPLE, n_resamples=40, seed=0).to_json())
    path = tmp_path / "results.json"
    cases = (("headline", 5), ("headline", [{"x": 1}]), ("cost", [{"zz": 1}]))
    for i, (name, bad) in enumerate(cases):
        path.write_text(dump_json(doc | {"tables": doc["tables"] | {name: bad}}), "utf-8")
        outs = ["--markdown", str(tmp_path / f"md{i}"), "--sentences", str(tmp_path / f"{i}.md")]
        err = _refused(["export", str(path), *outs], capsys)
        assert str(path) in err and "field" in err


@pytest.mark.slow
def test_an_interrupted_rerender_keeps_the_last_report(tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    assert main(["simulate", str(data), "--tasks", "4", "--replicates", "2"]) == 0
    params = {"n_resamples": 40, "seed": 1}
    render_report(data, out, params=params, figures="svg")
    before = _snapshot(out)
    argv = ["report", str(data), "-o", str(out), "-p", "n_resamples=40", "--figures", "svg"]
    proc = subprocess.Popen([sys.executable, "-c", CLI, *argv], stderr=subprocess.PIPE)
    while not any(tmp_path.glob(".out.render-*/results.json")):
        assert proc.poll() is None, "the render ended before it could be interrupted"
        time.sleep(0.05)
    (out / "figures" / "mine.svg").write_text("<svg>user</svg>", encoding="utf-8")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=600) != 0
    assert b"Traceback" not in proc.stderr.read()
    after = _snapshot(out)
    assert after.pop("figures/mine.svg") and after == before
    assert not list(tmp_path.glob(".out.render-*"))
    render_report(data, out, params=params, figures="svg")
    listed = json.loads((out / ".evalstats-report.json").read_text(encoding="utf-8"))["files"]
    assert (out / "figures" / "mine.svg").is_file() and "figures/mine.svg" not in listed


def test_a_sheet_key_with_a_null_seed_is_one_line(data, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    assert main(["label", str(data), "-n", "3", "--seed", "1", "-o", str(sheet)]) == 0
    _fill(sheet, "ann")
    key = Path(f"{sheet}.key.json")
    key.write_text(json.dumps(json.loads(key.read_text("utf-8")) | {"seed": None}), "utf-8")
    err = _refused(["label", str(data), "--read", str(sheet)], capsys)
    assert str(key) in err and "'seed'" in err
