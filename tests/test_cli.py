"""The evalstats console script."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import evalstats
from evalstats.cli import build_parser, main


def test_every_subcommand_has_help(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"simulate", "frame", "summary"} <= set(sub.choices)
    for name in sub.choices:
        with pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0
        assert "usage: evalstats " + name in capsys.readouterr().out


def test_simulate_then_frame(tmp_path, capsys):
    assert (
        main(["simulate", str(tmp_path / "d"), "--tasks", "3", "--replicates", "2", "--seed", "4"])
        == 0
    )
    for ext in ("parquet", "csv"):
        out = tmp_path / f"verdicts.{ext}"
        assert main(["frame", str(tmp_path / "d"), "-o", str(out)]) == 0
        got = pd.read_parquet(out) if ext == "parquet" else pd.read_csv(out)
        ds = evalstats.load_dir(tmp_path / "d")
        assert len(got) == len(evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks))
    assert main(["summary", str(tmp_path / "d")]) == 0
    assert "with-without" in capsys.readouterr().out


def test_errors_are_reported_without_traceback(tmp_path):
    (tmp_path / "tasks.jsonl").write_text("{broken\n")
    (tmp_path / "runs.jsonl").write_text("")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalstats.cli",
            "frame",
            str(tmp_path),
            "-o",
            str(tmp_path / "x.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{tmp_path / 'tasks.jsonl'}:1" in proc.stderr and "Traceback" not in proc.stderr
