"""``evalstats judge --stop-when-decided`` (issue 33): no new call once the anytime-valid
sequence of the net win decides; calls in flight are journaled, with one line saying why."""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest
from fakellm import WITH_WITHOUT_REPLY, FakeLLM, make_data

from evalstats.cli import build_parser
from evalstats.errors import ParameterError
from evalstats.judging import read_journal

# Integration (slow: make test runs it, make check does not): judges through the OpenAI SDK.
pytestmark = pytest.mark.slow

KEY = "sk-test-RECOGNISABLE-KEY-4242424242"
N_TASKS, N_REPLICATES = 40, 2


def _reply(labels):
    """Judge text giving the next of ``labels`` on each call ("(a)" win, "(b)" tie, "(c)" loss)."""
    it = itertools.cycle(labels)
    return lambda system, user, model: json.dumps(dict(WITH_WITHOUT_REPLY, label=next(it)))


def _data(tmp_path):
    tasks, pairs = make_data(N_TASKS, N_REPLICATES)
    data = tmp_path / "data"
    data.mkdir()
    tasks.assign(
        canonical_written_at="2026-01-01T00:00:00Z", budget_tokens=10_000, budget_wall_s=600.0
    ).to_json(data / "tasks.jsonl", orient="records", lines=True)
    runs = [
        {"task_id": row.task_id, "replicate": row.replicate, "arm": arm, "agent_model": "agent",
         "answer": getattr(row, f"{arm}_answer"), "wall_s": getattr(row, f"{arm}_wall_s"),
         "started_at": "2026-01-02T00:00:00Z"}
        for row in pairs.itertuples() for arm in ("with", "without")
    ]  # fmt: skip
    pd.DataFrame(runs).to_json(data / "runs.jsonl", orient="records", lines=True)
    return data


def _judge(data, *extra):
    argv = ["judge", str(data), "--rubric", "with-without", "--judge", "openai:gpt-4o"]
    args = build_parser().parse_args([*argv, "--no-progress", "--concurrency", "1", *extra])
    return args.func(args)


def _stops(data):
    lines = [json.loads(x) for x in (data / "judgments.jsonl").read_text().splitlines()]
    return [x for x in lines if x.get("kind") == "stopped_early"]


@pytest.mark.parametrize(
    ("labels", "margin", "decision"), [(["(a)"], None, "better"), (["(b)"], "0.4", "equivalent")]
)
def test_a_clear_answer_stops_paying(monkeypatch, tmp_path, capsys, labels, margin, decision):
    data = _data(tmp_path)
    with FakeLLM(api_key=KEY, reply=_reply(labels)) as fake:
        fake.point_sdks(monkeypatch)
        extra = ["--stop-when-decided", *(["--margin", margin] if margin else [])]
        assert _judge(data, *extra) == 0
        paid = sum(fake.counts()["paid"].values())
        assert 0 < paid < N_TASKS * N_REPLICATES  # stopped before every call was paid
        assert len(read_journal(data / "judgments.jsonl")) == paid  # every paid answer kept
        (stop,) = _stops(data)
        assert stop["decision"] == decision and stop["ci_low"] <= stop["ci_high"]
        # Each task's two verdicts count once both are in: n_tasks tasks were complete.
        assert stop["n_tasks"] == paid // N_REPLICATES
        assert "decided after" in capsys.readouterr().err
        # A rerun decides from the journal at once and sends nothing.
        assert _judge(data, *extra) == 0
        assert sum(fake.counts()["paid"].values()) == paid and len(_stops(data)) == 2
        # Without the flag it resumes and pays for the rest.
        assert _judge(data) == 0
        assert sum(fake.counts()["paid"].values()) == N_TASKS * N_REPLICATES


def test_no_effect_does_not_stop(monkeypatch, tmp_path):
    data = _data(tmp_path)
    # Every task: one win and one loss (the calls go one at a time, task by task).
    with FakeLLM(api_key=KEY, reply=_reply(["(a)", "(c)"])) as fake:
        fake.point_sdks(monkeypatch)
        assert _judge(data, "--stop-when-decided") == 0
        assert sum(fake.counts()["paid"].values()) == N_TASKS * N_REPLICATES
        assert not _stops(data)


def test_bad_margin_and_batch_refused_before_any_call(monkeypatch, tmp_path):
    data = _data(tmp_path)
    with FakeLLM(api_key=KEY) as fake:
        fake.point_sdks(monkeypatch)
        with pytest.raises(ParameterError, match="margin"):
            _judge(data, "--stop-when-decided", "--margin", "3")
        with pytest.raises(ParameterError, match="--margin is the equivalence margin"):
            _judge(data, "--margin", "0.1")
        with pytest.raises(ParameterError, match="batch"):
            _judge(data, "--stop-when-decided", "--batch")
        assert fake.counts()["requests"] == 0


def test_three_arms_stop_on_the_first_pair_and_the_report_says_why(monkeypatch, tmp_path):
    """K = 3 (issue 33): the watched pair is the first (v1 vs none); its decision stops every
    pair's calls, and each pair's monitor row in the report says the run stopped and why."""
    import evalstats
    from evalstats.report import compute_results

    data = tmp_path / "data"
    evalstats.simulate(data, arms=("none", "v1", "v2"), reference="none", n_tasks=N_TASKS,
                       n_replicates=N_REPLICATES, judges=())  # fmt: skip
    (data / "judgments.jsonl").unlink()
    n_calls = 2 * N_TASKS * N_REPLICATES  # two pairs against the reference
    with FakeLLM(api_key=KEY, reply=_reply(["(a)"])) as fake:
        fake.point_sdks(monkeypatch)
        assert _judge(data, "--pairs", "reference", "--stop-when-decided") == 0
        paid = sum(fake.counts()["paid"].values())
        assert 0 < paid < n_calls and len(read_journal(data / "judgments.jsonl")) == paid
        (stop,) = _stops(data)
        assert (stop["arm_a"], stop["arm_b"], stop["decision"]) == ("v1", "none", "better")
        assert stop["reason"].startswith(
            f"decided after {stop['n_tasks']} task(s): better (v1 vs none"
        )
        assert _judge(data, "--pairs", "reference", "--stop-when-decided") == 0  # nothing new
        assert sum(fake.counts()["paid"].values()) == paid
    monitor = compute_results(data, n_resamples=200).tables["monitor"]
    last = monitor.groupby(["arm_a", "arm_b"]).tail(1).set_index(["arm_a", "arm_b"])
    assert set(last.index) == {("v1", "none"), ("v2", "none")}
    assert (last["stopped_early"] == stop["reason"]).all()
    assert last.loc[("v1", "none"), "decision"] == "better"
