"""Issue 32, area D: no estimate without data; ranges checked where they enter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from karm_dir import write_karm_dir

import evalstats as es
from evalstats.cli import main

ARMS = ["none", "v1", "v2"]


@pytest.fixture(scope="module")
def no_v2(tmp_path_factory) -> Path:
    """A three-arm directory whose arm v2 has runs but not one judgment."""
    d = write_karm_dir(tmp_path_factory.mktemp("nov2") / "data")
    rows = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    keep = [r for r in rows if "v2" not in (r["arm_a"], r["arm_b"])]
    (d / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    return d


def test_an_arm_without_verdicts_gets_a_reason_not_the_references_numbers(no_v2):
    f = es.load_frame(no_v2)
    r = es.rank(f, arms=ARMS, n_resamples=100, rng=0)
    v2 = r.loc[r["arm"] == "v2"]
    assert set(v2["statistic"]) == {"strength", "rank"}
    assert v2["estimate"].isna().all() and (v2["ci_note"] == "no verdicts: no estimate").all()
    assert not v2["in_tau_best"].fillna(False).astype(bool).any()
    ranked = r.loc[r["statistic"] == "rank"].set_index("arm")["estimate"]
    assert sorted(ranked.dropna()) == [1.0, 2.0]  # two judged arms, two ranks
    assert not (r["opponent"] == "v2").any()
    c = es.compare(f, arms=ARMS)
    pair = c["arm_b"] == "v2"
    assert pair.sum() == 8 and c.loc[pair, "estimate"].isna().all()
    assert (c.loc[pair, "ci_note"] == "no verdicts: no estimate").all()
    assert c.loc[~pair, "ci_note"].isna().all() and c.loc[~pair, "estimate"].notna().all()
    p = es.pareto(f, es.load_runs(no_v2 / "runs.jsonl"), reference="none", arms=ARMS,
                  n_resamples=100, rng=0)  # fmt: skip
    q = p.loc[(p["arm"] == "v2") & (p["statistic"] != "tokens_total_ratio")]
    assert q["estimate"].isna().all() and not p.loc[p["arm"] == "v2", "on_frontier"].any()


@pytest.mark.slow
def test_the_reports_results_carry_the_reason(no_v2, tmp_path):
    out = tmp_path / "rep"
    assert main(["report", str(no_v2), "-o", str(out), "-p", "n_resamples=100"]) == 0
    tables = json.loads((out / "results.json").read_text())["tables"]
    for name in ("rank", "rank_sets", "compare"):
        rows = [r for r in tables[name] if "v2" in (r.get("arm"), r.get("arm_b"))]
        assert rows and all(r["estimate"] is None for r in rows), name
        assert all(r["ci_note"] == "no verdicts: no estimate" for r in rows), name
    assert not any("v2" in (r["arm"], r["opponent"]) for r in tables["beats"])


def _cli(*argv: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("evalstats")
    return subprocess.run([str(exe), *argv], capture_output=True, text=True, timeout=600)


def _refused(run: subprocess.CompletedProcess, words: str) -> None:
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("tau", [float("nan"), 0, -1, 1.5, "1"])
def test_rank_refuses_a_tau_that_is_not_a_positive_integer(no_v2, tau):
    with pytest.raises(es.ParameterError, match="tau must be an integer >= 1"):
        es.rank(es.load_frame(no_v2), n_resamples=50, rng=0, tau=tau)


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("--icc=nan", "icc must be in [0, 1), got nan"),
        ("--icc=1", "icc must be in [0, 1), got 1.0"),
        ("--judge-noise=inf", "judge_noise must be in [0, inf)"),
        ("--position-bias=nan", "position_bias must be in (-inf, inf)"),
    ],
)
@pytest.mark.slow
def test_simulate_refuses_parameters_out_of_range(tmp_path, flag, words):
    _refused(_cli("simulate", str(tmp_path / "sim"), flag), words)
    assert not (tmp_path / "sim").exists()


def test_simulate_refuses_parameters_out_of_range_through_the_api(tmp_path):
    with pytest.raises(es.ParameterError, match="task_sd must be in"):
        es.simulate(tmp_path / "k", arms=("a", "b"), task_sd=float("inf"))
    for bad in ({"icc": float("nan")}, {"icc": 1.0}, {"token_ratio": 0.0}):
        with pytest.raises(es.ParameterError, match="must be in"):
            es.simulate(tmp_path / "two", **bad)
    assert not (tmp_path / "k").exists() and not (tmp_path / "two").exists()


@pytest.mark.slow
def test_a_margin_wider_than_the_statistic_is_refused_with_file_line_field(tmp_path):
    d = tmp_path / "data"
    es.simulate(d, n_tasks=3, n_replicates=2)
    (d / "plan.toml").write_text(
        'primary_rubric = "with-without"\nconsensus = "majority"\nstatistic = "net_win"\n'
        'margin = 50\nmargin_kind = "equivalence"\n'
    )
    run = _cli("summary", str(d))
    _refused(run, "plan.toml:4, field 'margin': margin must be < 1 for net_win")


def test_resamples_are_capped_alone_and_times_pairs(tmp_path):
    d = tmp_path / "k10"
    es.simulate(d, arms=tuple("abcdefghij"), n_tasks=4, n_replicates=1)
    f = es.load_frame(d)
    f = f.loc[(f["judge"] == f["judge"].iloc[0]) & (f["rubric"] == f["rubric"].iloc[0])]
    with pytest.raises(es.ParameterError, match="n_resamples must be an integer <= 1,000,000"):
        es.rank(f, n_resamples=1e30)
    with pytest.raises(es.ParameterError, match="1,000,000 x 45 exceeds 20,000,000"):
        es.rank(f, n_resamples=1_000_000)
    runs = es.load_runs(d / "runs.jsonl")
    with pytest.raises(es.ParameterError, match="n_resamples must be an integer <= 1,000,000"):
        es.pareto(f, runs, reference="a", n_resamples=1e30)


@pytest.mark.slow
def test_the_report_refuses_resamples_times_pairs_over_the_cap(tmp_path):
    d = tmp_path / "k10"
    es.simulate(d, arms=tuple("abcdefghij"), n_tasks=4, n_replicates=1)
    run = _cli("report", str(d), "-o", str(tmp_path / "rep"), "-p", "n_resamples=1000000")
    _refused(run, "n_resamples x pairs of arms = 1,000,000 x 45 exceeds 20,000,000")
    assert not (tmp_path / "rep").exists()


def test_the_audit_reads_the_journaled_model_id_beside_the_judges_name(tmp_path):
    d = tmp_path / "sim"
    judges = ("openai:gpt-4o", "google:gemini-2.5-pro")
    es.simulate(d, n_tasks=3, n_replicates=1, judges=judges, agent_model="claude-sonnet-4")

    def check():
        return es.audit(es.load_dir(d)).set_index("check").loc["judge_not_self"]

    assert check()["status"] == "pass"
    rows = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    for r in rows:
        if r["judge"] == "openai:gpt-4o":  # a Claude answered behind an OpenAI-style name
            r["model_id"] = "claude-3-5-sonnet-20241022"
    (d / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    row = check()
    assert row["status"] == "fail" and "openai:gpt-4o (anthropic, openai)" in row["detail"]


@pytest.fixture(scope="module")
def hand_picked(tmp_path_factory) -> Path:
    """A two-arm directory with labels chosen by hand (no sheet provenance)."""
    d = tmp_path_factory.mktemp("hand") / "data"
    es.simulate(d, n_tasks=8, n_replicates=3, seed=2)
    pairs = sorted(
        {
            (r["task_id"], r["replicate"])
            for r in map(json.loads, (d / "runs.jsonl").read_text().splitlines())
        }
    )
    labels = [{"task_id": t, "replicate": r, "labeler": "ann", "outcome": ("win", "tie", "loss")[i % 3],
               "created_at": "2026-06-01T09:00:00+00:00"} for i, (t, r) in enumerate(pairs[:18])]  # fmt: skip
    (d / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    return d


def test_ppi_from_hand_picked_labels_says_so_in_its_rows(hand_picked):
    d = hand_picked
    with pytest.warns(es.EvalstatsWarning, match="not shown to be a random sample"):
        r = es.ppi_win_rates(es.load_frame(d), es.load_labels(d / "labels.jsonl"),
                             judge=es.load_frame(d)["judge"].iloc[0], rubric="with-without")  # fmt: skip
    assert r["ci_note"].str.contains("not shown to be a random sample").all()


@pytest.mark.slow
def test_the_reports_labels_section_keeps_the_ppi_warning(hand_picked, tmp_path):
    d = hand_picked
    out = tmp_path / "rep"
    assert main(["report", str(d), "-o", str(out), "-p", "n_resamples=100"]) == 0
    rows = json.loads((out / "results.json").read_text())["tables"]["labels_ppi"]
    assert rows and all("not shown to be a random sample" in r["ci_note"] for r in rows)
    assert "not shown to be a random sample" in (out / "index.html").read_text()
