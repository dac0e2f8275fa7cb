"""Issue 21, the judging side: nothing paid is lost, no run hangs, nothing leaks.

Real SDK clients (strict validation) against the loopback fake in ``fakellm.py``. No test
here asserts a wall-clock bound: each checks the server's counters, the journal's contents
and the caps; a run that hung would hit the test's own process timeout instead.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from fakellm import FakeLLM, make_data

from evalstats.errors import DataError
from evalstats.judging import JudgeOptions, read_journal, run_judges
from evalstats.judging import journal as journal_module
from evalstats.judging.batch import BatchError
from evalstats.judging.journal import JournalWriteError
from evalstats.judging.providers import MAX_ERROR_BODY_BYTES

# Integration (slow: make test runs it, make check does not): judges through both SDKs with injected faults.
pytestmark = pytest.mark.slow

KEY = "live-Zq8ROUND2-4242-key-0000"
STRICT = {"_strict_response_validation": True}
JUDGES = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}
PROVIDERS = ["anthropic", "openai"]
TESTS = Path(__file__).resolve().parent


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY, stall_s=0.3) as server:
        server.point_sdks(monkeypatch)
        yield server


def _run(out, provider, n=1, **kw):
    tasks, pairs = make_data(n)
    kw.setdefault("timeout", 2.0)
    kw.setdefault("max_retries", 0)
    return run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=[JUDGES[provider]],
        out=out,
        options=JudgeOptions(progress=False, client_options=STRICT, **kw),
    )


def _request_ids(out):
    return {x["request_id"] for x in read_journal(out, all_attempts=True) if x["request_id"]}


# -- bounded waits (21.4) -------------------------------------------------------------------


@pytest.mark.slow  # waits for a real read timeout
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_trickled_body_ends_within_timeout_as_a_journaled_cut(fake, tmp_path, provider):
    # 300-odd bytes at 50 ms each would take ~15 s; every read returns within the SDK's
    # per-read timeout, so only a bound on the whole attempt ends it.
    fake.script(["trickle"])
    out = tmp_path / "j.jsonl"
    res = _run(out, provider, timeout=0.3, max_retries=1)
    (line,) = read_journal(out, all_attempts=True)
    assert res.failed == 1 and line["call_status"] == "truncated"
    assert line["error"].startswith("BodyTooSlow: AttemptDeadline: the attempt did not finish")
    assert "within --timeout 0.3 s" in line["error"]
    assert set(fake.counts()["paid_ids"]) <= _request_ids(out)  # the paid call is journaled
    # Paid once: not bought again in this run, nor by a plain rerun (only --retry-failed).
    _run(out, provider, timeout=0.3, max_retries=2)
    assert len(fake.counts()["paid_ids"]) == 1


# -- bounded memory (21.6) ------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_huge_error_body_is_not_read_whole(fake, tmp_path, provider):
    fake.huge_error_bytes = 60_000_000
    fake.script(["hugeerror"])
    out = tmp_path / "j.jsonl"
    res = _run(out, provider)
    (line,) = read_journal(out, all_attempts=True)
    assert res.failed == 1 and line["error"].startswith("InternalServerError")
    # The client stopped reading after the cap: what the server got out is the cap plus
    # the kernel's socket buffers, far below the body.
    assert fake.error_bytes_sent < 20_000_000
    assert MAX_ERROR_BODY_BYTES < 100_000


# -- batch mode keeps every paid result (21.2) ----------------------------------------------


def _batch_run(out, provider, n, **kw):
    return _run(out, provider, n=n, batch=True, poll_interval=0.01, **kw)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_poll_error_is_one_redacted_line_and_resume_keeps_every_result(
    fake, tmp_path, provider
):
    fake.echo_key = True
    fake.batch_fail = "poll"
    out = tmp_path / "j.jsonl"
    with pytest.raises(BatchError) as info:
        _batch_run(out, provider, 3)
    message = str(info.value)
    assert KEY not in message and "InternalServerError" in message and "\n" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__
    # The batch was paid (3 answers) and journaled; resume with another max_tokens: its
    # calls have other keys, yet the first batch's results are all kept under theirs.
    fake.batch_fail = None
    _batch_run(out, provider, 3, max_tokens=512)
    lines = read_journal(out)
    assert len(lines) == 6 and all(x["error"] is None for x in lines)
    assert sorted(x["max_tokens"] for x in lines) == [512] * 3 + [1024] * 3
    raw = [json.loads(x) for x in out.read_text().splitlines()]
    assert sum(x.get("kind") == "batch" for x in raw) == 2
    assert sum(x.get("kind") == "batch_done" for x in raw) == 2
    assert sum(fake.counts()["paid"].values()) == 6  # nothing paid twice
    # And a rerun with the original options pays nothing more.
    _batch_run(out, provider, 3)
    assert sum(fake.counts()["paid"].values()) == 6


@pytest.mark.parametrize("provider", PROVIDERS)
def test_batch_submit_error_is_one_redacted_line(fake, tmp_path, provider):
    fake.echo_key = True
    fake.batch_fail = "submit"
    out = tmp_path / "j.jsonl"
    with pytest.raises(BatchError) as info:
        _batch_run(out, provider, 2)
    assert KEY not in str(info.value) and "submission failed" in str(info.value)
    assert not out.exists() and sum(fake.counts()["paid"].values()) == 0


# -- the journal is trusted only as far as it is valid (21.5) -------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("usd_counted", float("nan")),
        ("usd_counted", -1.0),
        ("usd", float("inf")),
        ("usd_counted", "0.1"),
        ("call_key", ["k"]),
        ("error", 5),
        ("input_tokens", -3),
    ],
)
def test_a_journal_line_that_would_be_trusted_wrongly_is_a_data_error(fake, tmp_path, field, value):
    out = tmp_path / "j.jsonl"
    good = {"call_key": "a" * 64, "error": None, "usd": 0.01, "usd_counted": 0.01}
    out.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, **{field: value})) + "\n")
    with pytest.raises(DataError) as info:
        _run(out, "openai", max_usd=1.0)
    assert str(info.value).startswith(f"{out}:2, field {field!r}")
    assert fake.counts()["requests"] == 0  # before anything is paid


def test_deeply_nested_journal_line_is_a_data_error(fake, tmp_path):
    out = tmp_path / "j.jsonl"
    out.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataError, match=r":1: the line nests too deeply"):
        _run(out, "openai")


def test_the_journal_must_be_a_regular_file(fake, tmp_path):
    link = tmp_path / "j.jsonl"
    link.symlink_to("/dev/null")
    for out in ("/dev/null", link, tmp_path):
        with pytest.raises(DataError, match="must be a regular file"):
            _run(out, "openai")
    assert fake.counts()["requests"] == 0


def test_a_short_write_is_cut_back_and_stops_new_calls(fake, tmp_path, monkeypatch, capfd):
    out = tmp_path / "j.jsonl"
    real_write = os.write
    writes = {"n": 0}

    def flaky(fd, data):
        if data.startswith(b"{") and data.endswith(b"\n"):
            writes["n"] += 1
            if writes["n"] == 3:  # the disk fills up mid-line
                return real_write(fd, data[: len(data) // 2])
        return real_write(fd, data)

    # Private on purpose: a full disk is injected into the journal's own os.write.
    monkeypatch.setattr(journal_module.os, "write", flaky)
    fake.latency = 0.02
    with pytest.raises(JournalWriteError, match=r"short write .*no new call is started"):
        _run(out, "openai", n=40, concurrency=4)
    monkeypatch.setattr(journal_module.os, "write", real_write)
    data = out.read_bytes()
    assert data.endswith(b"\n") and len(data.splitlines()) == 2  # no torn bytes left
    # At most the calls already in flight when the write failed went out after it, and
    # each answer the journal could not take is on stderr, not dropped.
    counts = fake.counts()
    assert counts["requests"] <= 3 + 4
    prefix = f"evalstats judge: not journaled ({out}): "
    rescued = [
        json.loads(x[len(prefix) :]) for x in capfd.readouterr().err.splitlines() if prefix in x
    ]
    assert rescued and set(counts["paid_ids"]) <= _request_ids(out) | {
        x["request_id"] for x in rescued
    }
    res = _run(out, "openai", n=40, concurrency=4)  # the journal is fine: resume
    assert res.failed == 0 and len(read_journal(out)) == 40


# -- interrupts drain (21.3) ----------------------------------------------------------------


def _child(out: Path, fake: FakeLLM, n: int, timeout: float) -> subprocess.Popen:
    script = textwrap.dedent(f"""
        from fakellm import make_data
        from evalstats.judging import JudgeOptions, run_judges
        tasks, pairs = make_data({n})
        opts = JudgeOptions(progress=False, concurrency=4, max_retries=0, timeout={timeout},
                            client_options={{"_strict_response_validation": True}})
        res = run_judges(tasks, pairs, rubric="with-without", judges=["openai:gpt-4o"],
                         out={str(out)!r}, options=opts)
        print("STOPPED", res.stopped)
    """)
    env = dict(
        os.environ,
        OPENAI_API_KEY=KEY,
        OPENAI_BASE_URL=fake.openai_url,
        PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.Popen(
        [sys.executable, "-c", script],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_requests(fake: FakeLLM, child: subprocess.Popen, n: int) -> None:
    for _ in range(3000):  # bounded: 30 s at most
        if fake.counts()["requests"] >= n or child.poll() is not None:
            return
        time.sleep(0.01)


@pytest.mark.slow  # signals a judge run in a child process
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_first_interrupt_lets_calls_in_flight_finish_and_journals_them(fake, tmp_path, sig):
    fake.latency = 0.6
    out = tmp_path / "j.jsonl"
    child = _child(out, fake, 12, timeout=10.0)
    _wait_for_requests(fake, child, 4)
    child.send_signal(sig)
    stdout, stderr = child.communicate(timeout=60)
    assert "Traceback" not in stderr and child.returncode == 0, stderr
    assert "STOPPED interrupted by" in stdout
    counts = fake.counts()
    assert counts["requests"] == 4  # no new call after the signal
    assert set(counts["paid_ids"]) <= _request_ids(out)  # every paid answer journaled
    assert [x["error"] for x in read_journal(out)] == [None] * 4


@pytest.mark.slow  # signals a judge run in a child process
def test_second_interrupt_stops_at_once_and_journals_what_it_has(fake, tmp_path):
    fake.latency = 30.0  # the calls in flight would take long
    out = tmp_path / "j.jsonl"
    child = _child(out, fake, 12, timeout=60.0)
    _wait_for_requests(fake, child, 4)
    child.send_signal(signal.SIGINT)
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=30)
    assert "Traceback" not in stderr and child.returncode == 0, stderr
    assert "STOPPED interrupted by a second SIGINT" in stdout
    lines = read_journal(out, all_attempts=True)
    assert len(lines) == 4 and all(x["error"].startswith("Interrupted:") for x in lines)
    assert {x["call_status"] for x in lines} == {"failed"}  # made again on a rerun


@pytest.mark.parametrize(
    "bad",
    [
        {"timeout": float("inf")},
        {"timeout": float("nan")},
        {"timeout": 0},
        {"poll_interval": -1.0},
        {"poll_interval": 1e9},
        {"max_retries": 10**6},
        {"max_batch_size": 0},
    ],
)
def test_run_parameters_that_would_hang_are_refused_before_any_call(fake, tmp_path, bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        _run(tmp_path / "j.jsonl", "openai", **bad)
    assert fake.counts()["requests"] == 0 and not (tmp_path / "j.jsonl").exists()
