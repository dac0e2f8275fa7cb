"""The runs' own outcome (``passed``, issue 33): loading, importing, simulating, and the
``evalstats replicates`` / ``evalstats monitor`` commands run as a user runs them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalstats
from evalstats.importers import from_table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE, KARM = ROOT / "data" / "sample", ROOT / "data" / "karm"


def _cli(*argv: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "evalstats.cli", *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=False)


def _runs_with(tmp_path: Path, line: int, value) -> Path:
    """A copy of the sample whose runs.jsonl line ``line`` has ``passed = value``."""
    d = tmp_path / "data"
    shutil.copytree(SAMPLE, d)
    lines = (d / "runs.jsonl").read_text().splitlines()
    lines[line - 1] = json.dumps(json.loads(lines[line - 1]) | {"passed": value})
    (d / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return d


@pytest.mark.parametrize("value", ["yes", 2, 0.5, [True]])
def test_a_passed_that_is_not_true_false_or_0_1_is_refused_by_line(tmp_path, value):
    d = _runs_with(tmp_path, 7, value)
    res = _cli("replicates", d)
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert res.stderr.splitlines() == [
        f"evalstats replicates: error: {d / 'runs.jsonl'}:7, field 'passed': expected "
        f"true/false or 0/1, got {value!r}"
    ]


@pytest.mark.parametrize("value", [True, 1, 0, False])
def test_passed_reads_true_false_and_0_1(tmp_path, value):
    runs = evalstats.load_runs(_runs_with(tmp_path, 7, value) / "runs.jsonl")
    assert bool(runs["passed"].iloc[6]) is bool(value)


@pytest.mark.parametrize("column", ["resolved", "success", "mine"])
def test_a_table_s_pass_fail_column_becomes_passed(tmp_path, column):
    runs = pd.read_json(SAMPLE / "runs.jsonl", lines=True, dtype=False)
    truth = runs.pop("passed")
    runs[column] = truth.map({True: "TRUE", False: "false"})
    runs["files_inspected"] = runs["files_inspected"].map(json.dumps)
    runs.to_csv(tmp_path / "runs.csv", index=False)
    mapping = {"passed": "mine"} if column == "mine" else {}
    imported = from_table(tmp_path / "runs.csv", tasks_file=SAMPLE / "tasks.jsonl", mapping=mapping)
    assert imported.runs["passed"].tolist() == truth.tolist()
    # a cell that is no pass/fail names its row
    runs.loc[3, column] = "maybe"
    runs.to_csv(tmp_path / "runs.csv", index=False)
    with pytest.raises(evalstats.DataError, match=r"runs.csv:5, field 'passed'.*'maybe'"):
        from_table(tmp_path / "runs.csv", tasks_file=SAMPLE / "tasks.jsonl", mapping=mapping)


def test_simulated_pass_rates_follow_the_arms_strengths(tmp_path):
    sim = evalstats.simulate(tmp_path, arms=("a", "b"), strengths=(-2.0, 2.0), n_tasks=30, seed=3)
    runs = pd.read_json(sim.runs, lines=True)
    rate = runs.groupby("arm")["passed"].mean()
    assert rate["a"] < 0.25 and rate["b"] > 0.75
    assert json.loads(sim.truth.read_text())["passed"]["mean"]["b"] == pytest.approx(0.8808, 1e-3)


@pytest.mark.parametrize("data", [SAMPLE, KARM])
def test_replicates_command_prints_and_writes_each_arm_s_pass_k(tmp_path, data):
    res = _cli("replicates", data, "-o", tmp_path / "rep.csv")
    assert res.returncode == 0, res.stderr
    table = pd.read_csv(tmp_path / "rep.csv")
    runs = pd.read_json(data / "runs.jsonl", lines=True)
    # pass^1 is the mean over tasks of each task's share of passed runs
    oracle = runs.groupby(["arm", "task_id"])["passed"].mean().groupby("arm").mean()
    own = table[table["reference"].isna() & (table["statistic"] == "pass^1")]
    assert own.set_index("arm")["estimate"].to_dict() == pytest.approx(oracle.to_dict())
    assert "pass^6" in res.stdout and "flip_rate" in res.stdout


@pytest.mark.parametrize(("data", "groups"), [(SAMPLE, 4), (KARM, 6)])
def test_monitor_command_follows_tasks_in_completion_order(tmp_path, data, groups):
    res = _cli("monitor", data, "--margin", "0.3", "-o", tmp_path / "looks.csv")
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.splitlines()) == 1 + groups and "decision" in res.stdout
    looks = pd.read_csv(tmp_path / "looks.csv")
    by = ["arm_a", "arm_b", "judge", "rubric"]
    assert looks.groupby(by).ngroups == groups
    assert (looks.groupby(by)["n_tasks"].diff().dropna() == 1).all()
    # the last look's estimate is the mean over tasks of each task's net win
    assert _cli("frame", data, "-o", tmp_path / "frame.csv").returncode == 0
    frame = pd.read_csv(tmp_path / "frame.csv").dropna(subset=["outcome"])
    frame["y"] = frame["outcome"].map({"win": 1, "tie": 0, "loss": -1})
    oracle = frame.groupby([*by, "task_id"])["y"].mean().groupby(by).mean()
    last = looks.groupby(by).tail(1).set_index(by)["estimate"]
    assert last.to_dict() == pytest.approx(oracle.to_dict())
    # the first look is the task whose last run ended first
    runs = pd.read_json(data / "runs.jsonl", lines=True)
    ends = (pd.to_datetime(runs["started_at"]) + pd.to_timedelta(runs["wall_s"], "s")).groupby(
        runs["task_id"]
    )
    first = ends.max().idxmin()
    one = frame[frame[by].apply(tuple, axis=1) == tuple(looks.iloc[0][by])]
    assert looks.iloc[0]["estimate"] == pytest.approx(one[one["task_id"] == first]["y"].mean())


def test_monitor_refuses_an_unknown_judge_in_one_line(tmp_path):
    res = _cli("monitor", KARM, "--judge", "openai:nobody", "-o", tmp_path / "x.csv")
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert "--judge 'openai:nobody' judged nothing here" in res.stderr
    assert not (tmp_path / "x.csv").exists()
