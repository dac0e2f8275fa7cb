"""Issue 32, the judging side: the spending cap is a promise (pending batches, calls that may
have been billed, waiting for calls in flight), no journal over a data file, nothing to judge
is an error, and redaction of whole secrets only.

Real SDK clients against the loopback fake in ``fakellm.py`` (it counts what it answered).
"""

from __future__ import annotations

import json

import pytest
from fakellm import FakeLLM, make_data

from evalstats.cli import main
from evalstats.errors import EvalstatsError
from evalstats.judging import JudgeOptions, read_journal, redact, run_judges

pytestmark = pytest.mark.slow

KEY = "live-Zq8RECOGNISABLE-4242-key-0000"
JUDGE = "anthropic:claude-sonnet-4-20250514"
# Output only: each call's worst case is 1024 output tokens, whatever its prompt.
PRICES = {"claude-sonnet-4": {"input": 0.0, "output": 10.0}}
WORST = 1024 * 10.0 / 1e6


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        yield server


def _judge(out, n, **kw):
    tasks, pairs = make_data(n)
    kw = {"progress": False, "prices": PRICES, "max_retries": 0, **kw}
    return run_judges(
        tasks, pairs, rubric="with-without", judges=[JUDGE], out=out, options=JudgeOptions(**kw)
    )


def test_calls_in_flight_are_waited_for_not_a_reason_to_stop(fake, tmp_path):
    # Three worst cases fit the cap at once; the actual costs let all ten calls through.
    res = _judge(tmp_path / "j.jsonl", 10, max_usd=3.5 * WORST, concurrency=16)
    assert res.stopped is None and int(res.per_judge["ok"].sum()) == 10
    assert sum(x["usd_counted"] for x in read_journal(tmp_path / "j.jsonl")) <= 3.5 * WORST


def test_an_attempt_that_timed_out_counts_its_worst_case(tmp_path, monkeypatch):
    # The server answers (and bills) after the client gave up: the attempt may have cost.
    with FakeLLM(api_key=KEY, latency=0.6) as fake:
        fake.point_sdks(monkeypatch)
        out = tmp_path / "j.jsonl"
        res = _judge(out, 5, max_usd=2.5 * WORST, concurrency=1, timeout=0.2)
        assert res.stopped and "max_usd" in res.stopped
        assert fake.requests == 2  # two worst cases spent the cap; the third was not sent
    lines = read_journal(out, all_attempts=True)
    assert [x["usd_counted"] for x in lines] == [pytest.approx(WORST)] * 2


def test_a_pending_batch_counts_against_the_cap_on_every_resume(fake, tmp_path):
    out = tmp_path / "j.jsonl"
    fake.batch_fail = "poll"  # every run submits, then fails to collect: the batch stays pending
    for _ in range(3):
        with pytest.raises(EvalstatsError, match="polling"):
            _judge(out, 10, max_usd=3.5 * WORST, batch=True, poll_interval=0)
    batches = [json.loads(x) for x in out.read_text().splitlines()]
    submitted = sum(len(b["call_keys"]) for b in batches if b.get("kind") == "batch")
    assert submitted * WORST / 2 <= 3.5 * WORST  # batches bill half price
    fake.batch_fail = None
    res = _judge(out, 10, max_usd=3.5 * WORST, batch=True, poll_interval=0)
    assert int(res.per_judge["ok"].sum()) == submitted


def _cli(tmp_path, *extra):
    tasks, pairs = make_data(2, over_budget=2)
    data = tmp_path / "data"
    data.mkdir()
    runs = []
    for _, p in pairs.iterrows():
        for arm in ("with", "without"):
            runs.append(
                {
                    "task_id": p.task_id,
                    "replicate": int(p.replicate),
                    "arm": arm,
                    "agent_model": "gpt-4o",
                    "answer": p[f"{arm}_answer"],
                    "wall_s": 9999.0 if arm == "with" else 1.0,
                    "started_at": "2026-01-01T00:00:00Z",
                }
            )
    task_rows = [
        {**t, "canonical_written_at": "2025-12-01T00:00:00Z", "budget_tokens": 100000,
         "budget_wall_s": 600.0}
        for t in tasks.to_dict("records")
    ]  # fmt: skip
    for name, rows in (("tasks", task_rows), ("runs", runs)):
        (data / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = (data / "runs.jsonl").read_bytes()
    code = main(["judge", str(data), "--rubric", "with-without", "--judge", JUDGE, *extra])
    return code, data, before


def test_judge_refuses_to_journal_into_a_data_file(fake, tmp_path, capsys):
    code, data, before = _cli(tmp_path, "--out", str(tmp_path / "data" / "runs.jsonl"))
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "runs.jsonl" in err
    assert "--force" in err and (data / "runs.jsonl").read_bytes() == before
    assert fake.requests == 0


def test_nothing_to_judge_is_an_error_that_says_why(fake, tmp_path, capsys):
    code, _, _ = _cli(tmp_path, "--no-progress")
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "nothing to judge" in err and "over" in err and "budget" in err
    assert fake.requests == 0


def test_redaction_leaves_short_dummy_keys_and_catches_base_url_query_secrets(
    fake, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", "ollama")
    assert redact("ollama says: run `ollama serve`") == "ollama says: run `ollama serve`"
    secret = "Qs7-query-secret-00112233"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"{fake.anthropic_url}?api-key={secret}")
    fake.echo_key = True  # the SDK's URL with a query string is a 404 quoting the request
    out = tmp_path / "j.jsonl"
    _judge(out, 1)
    (line,) = read_journal(out, all_attempts=True)
    assert line["error"] and "[redacted]" in line["error"]
    assert secret not in out.read_text()
