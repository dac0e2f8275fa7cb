"""End to end: runs on disk -> real SDK judge calls (loopback fake) -> verdict frame -> numbers."""

from __future__ import annotations

import pytest
from fakellm import FakeLLM

import evalstats
from evalstats.cli import main

# Integration (slow: make test runs it, make check does not): judges, computes and reports end to end.
pytestmark = pytest.mark.slow

KEY = "sk-pipeline-test-000000000000"
JUDGES = ["anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4"]


@pytest.fixture
def judged_dir(tmp_path, monkeypatch):
    sim = evalstats.simulate(
        tmp_path / "d", n_tasks=6, n_replicates=2, over_budget_rate=0.1, seed=4
    )
    sim.judgments.unlink()  # keep the runs; the judges below replace the simulated verdicts
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        for rubric in ("with-without", "blind-pair"):
            argv = ["judge", str(sim.out_dir), "--rubric", rubric, "--no-progress"]
            for judge in JUDGES:
                argv += ["--judge", judge]
            assert main(argv) == 0
        requests = server.requests
    return sim.out_dir, requests


def test_judged_runs_flow_into_statistics(judged_dir):
    data_dir, requests = judged_dir
    ds = evalstats.load_dir(data_dir)
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    over = int(ds.runs.groupby(["task_id", "replicate"])["over_budget"].any().sum())
    n_pairs = 6 * 2
    # Every in-budget pair was judged once per judge and rubric (one seeded order each), each
    # distinct request body paid once (replicates with one answer share a blind-pair body), and
    # the over-budget ones never were; they still appear as no_answer.
    bodies = ds.judgments["request_sha256"]
    assert requests == bodies.nunique() and len(bodies) == (n_pairs - over) * len(JUDGES) * 2
    assert (frame["status"] == "no_answer").sum() == over * len(JUDGES) * 2
    ok = frame.loc[frame["status"] == "ok"]
    assert len(ok) == (n_pairs - over) * len(JUDGES) * 2
    assert set(ds.judgments["prompt_sha256"]) == {
        evalstats.rubrics.get(r).sha256 for r in ("with-without", "blind-pair")
    }
    # Both judges saw each blind pair in the same order (so they can be compared).
    blind = ds.judgments.loc[ds.judgments["rubric"] == "blind-pair"]
    assert (blind.groupby(["task_id", "replicate"])["order"].nunique() == 1).all()
    rates = evalstats.win_rates(frame, by=["rubric", "judge"], rng=0)
    assert len(rates.diagnostics) == 4 and (rates["n"] == n_pairs - over).all()
    agreement = evalstats.judge_agreement(frame, rubric="blind-pair", n_resamples=200, rng=0)
    assert agreement.diagnostics.loc[0, "n"] == n_pairs - over
    audit = evalstats.audit(ds).set_index("check")
    assert audit.loc["prompt_hash_pinned", "status"] == "pass"
    assert audit.loc["judge_families", "status"] == "pass"
    assert KEY not in (data_dir / "judgments.jsonl").read_text()
