"""Fault injection at scale, and kill -9 in the middle of a run followed by a rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from fakellm import FakeLLM, body_key, make_data

from evalstats.judging import JudgeOptions, parse_judge, plan_calls, read_journal, run_judges
from evalstats.judging.providers import request_params

# Integration (slow: make test runs it, make check does not): judges through both SDKs with injected faults.
pytestmark = pytest.mark.slow

KEY = "sk-test-kill9-0000000000000000"
JUDGES = ["anthropic:claude-sonnet-4-20250514", "openai:gpt-4o"]
N_TASKS = 125  # x 2 orders x 2 judges = 500 calls


def _body_keys(plan):
    out = {}
    for row in plan.itertuples():
        messages = [
            {"role": "system", "content": row.system},
            {"role": "user", "content": row.user},
        ]
        params = request_params(parse_judge(row.judge), messages, temperature=None, max_tokens=1024)
        out[row.call_key] = body_key(params)
    return out


@pytest.mark.slow  # kills a judge process
def test_faults_and_kill9_never_pay_twice_for_a_finished_call(tmp_path, monkeypatch):
    tests_dir = Path(__file__).resolve().parent
    out = tmp_path / "judgments.jsonl"
    tasks, pairs = make_data(N_TASKS)
    plan = plan_calls(tasks, pairs, rubric="blind-pair", judges=JUDGES, orders="both")
    assert len(plan) == 500
    to_body = _body_keys(plan)
    kw = dict(rubric="blind-pair", judges=JUDGES, orders="both")
    opts = dict(concurrency=16, timeout=0.25, max_retries=2)
    with FakeLLM(latency=0.01, fault_rate=0.2, stall_s=0.35, seed=3, api_key=KEY) as fake:
        env = dict(
            os.environ,
            ANTHROPIC_API_KEY=KEY,
            OPENAI_API_KEY=KEY,
            ANTHROPIC_BASE_URL=fake.anthropic_url,
            OPENAI_BASE_URL=fake.openai_url,
            PYTHONPATH=os.pathsep.join([str(tests_dir), os.environ.get("PYTHONPATH", "")]),
        )
        for name in (
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OPENAI_BASE_URL",
        ):
            monkeypatch.setenv(name, env[name])
        script = textwrap.dedent(f"""
            from fakellm import make_data
            from evalstats.judging import JudgeOptions, run_judges
            tasks, pairs = make_data({N_TASKS})
            strict = {{"_strict_response_validation": True}}
            opts = JudgeOptions(progress=False, client_options=strict, **{opts!r})
            run_judges(tasks, pairs, out={str(out)!r}, options=opts, **{kw!r})
        """)
        child = subprocess.Popen(
            [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if out.exists() and out.read_bytes().count(b"\n") >= 150:
                break
            if child.poll() is not None:
                raise AssertionError(child.stderr.read().decode())
            time.sleep(0.005)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL
        time.sleep(0.5)  # let the server finish the calls that were in flight
        before_kill = read_journal(out)
        finished_1 = {x["call_key"] for x in before_kill if x["error"] is None}
        assert 100 <= len(finished_1) < 500
        paid_1 = Counter(fake.paid)

        # Rerun until nothing fails (failures after the SDK's retries are recorded, then retried).
        for _ in range(4):
            strict = {"_strict_response_validation": True}
            res = run_judges(
                tasks,
                pairs,
                out=out,
                **kw,
                options=JudgeOptions(progress=False, client_options=strict, **opts),
            )
            assert res.per_judge["done_before"].sum() >= len(finished_1)
            if res.failed == 0:
                break
        assert res.failed == 0
        paid = Counter(fake.paid)
        faults = Counter(fake.faults)

    lines = read_journal(out)
    assert sorted(x["call_key"] for x in lines) == sorted(plan["call_key"])
    assert all(x["error"] is None for x in lines)
    all_lines = read_journal(out, all_attempts=True)
    # Faults really happened, including recorded failures, and every kind was exercised.
    assert sum(faults.values()) >= 0.15 * 500
    assert set(faults) == {"429", "500", "529", "timeout", "reset", "badjson"}
    # Exactly one successful line per call key.
    ok_counts = Counter(x["call_key"] for x in all_lines if x["error"] is None)
    assert set(ok_counts.values()) == {1}
    # Every payment is journaled, as an answer or as an attempt that may have been billed
    # (sent, then timed out: a slow answer under load is billed and asked again), except for
    # calls in flight at the kill; nothing finished before the kill was paid again.
    maybe = Counter()
    for x in all_lines:
        maybe[x["call_key"]] += x.get("maybe_billed") or 0
    extra = {k: paid[to_body[k]] - 1 - maybe[k] for k in plan["call_key"]}
    killed = [k for k, n in extra.items() if n > 0]
    for key in finished_1:
        assert paid[to_body[key]] == paid_1[to_body[key]] and extra[key] <= 0, key
    assert len(killed) <= 16 and all(extra[k] <= 1 + opts["max_retries"] for k in killed)
    # Every call was paid at least once; the server saw nothing else.
    assert set(paid) == set(to_body.values())
    # Invalid judge text is a finished call: kept, never retried (except a call in flight
    # at the kill, whose answer never reached the journal, or one that timed out).
    n_bad = sum(1 for x in lines if x["raw"] == "I would pick (a), the WITH answer.")
    slack = len(killed) + sum(maybe.values())
    assert faults["badjson"] - slack <= n_bad <= faults["badjson"] and n_bad > 0
