"""Issue 10, the runner side: whatever a server answers, every paid call ends in the journal
(a success, or a failure with a reason), the run goes on, and no secret is kept.

Real SDK clients (strict validation) against the loopback fake in ``fakellm.py``.
"""

from __future__ import annotations

import base64
import json
import os

import pytest
from fakellm import ANSWERED_BAD, FAULT_KINDS, HOSTILE_KINDS, FakeLLM, make_data

from evalstats.cli import build_parser, main
from evalstats.judging import (
    Journal,
    JournalLockedError,
    JudgeOptions,
    MissingKeyError,
    read_journal,
    redact,
    run_judges,
)
from evalstats.judging.providers import MAX_BODY_BYTES

# Integration (slow: make test runs it, make check does not): judges through both SDKs against hostile answers.
pytestmark = pytest.mark.slow

# Deliberately not "sk-" shaped: scrubbing must not depend on a key's prefix.
KEY = "live-Zq8RECOGNISABLE-4242-key-0000"
STRICT = {"_strict_response_validation": True}
JUDGES = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}
PROVIDERS = ["anthropic", "openai"]


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


REASONS = {
    "notjson": "NonJSONBody",
    "notutf8": "NonUTF8Body",
    "textplain": "NonJSONBody: content-type 'text/plain'",
    "emptycontent": "EmptyAnswer",
    "nochoices": "EmptyAnswer",
    "tooluse": "EmptyAnswer",
    "truncated": "BodyCutShort",
    "midreset": "BodyCutShort",
}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", sorted(REASONS))
def test_answer_without_judge_text_is_journaled_failure_then_retried(
    fake, tmp_path, provider, fault
):
    out = tmp_path / "j.jsonl"
    fake.script([fault])
    res = _run(out, provider)  # no exception, whatever the body
    (line,) = read_journal(out, all_attempts=True)
    assert res.failed == 1 and line["error"].startswith(REASONS[fault])
    assert line["call_status"] == "failed" and line["raw"] != ""
    # The answer was paid for: it is journaled under the server's request id, and counted.
    assert fake.paid_ids == [line["request_id"]]
    assert line["usd_counted"] > 0
    if fault in ANSWERED_BAD and fault not in ("truncated", "midreset"):
        assert line["raw"]  # the body is kept verbatim (scrubbed)
    # Transient: a rerun asks again and gets a judgment.
    res = _run(out, provider)
    assert res.failed == 0 and fake.requests == 2
    assert [x["error"] for x in read_journal(out)] == [None]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_answer_without_text_is_asked_again_in_the_same_run(fake, tmp_path, provider):
    out = tmp_path / "j.jsonl"
    fake.script(["nochoices", "notjson"])
    res = _run(out, provider, max_retries=2)
    lines = read_journal(out, all_attempts=True)
    assert [x["error"] is None for x in lines] == [False, False, True]
    assert res.failed == 0 and res.per_judge["ok"].tolist() == [1]
    assert len(fake.paid_ids) == 3 and {x["request_id"] for x in lines} == set(fake.paid_ids)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", ["400", "404", "413", "422"])
def test_permanent_4xx_is_not_resent_unless_asked(fake, tmp_path, provider, status):
    out = tmp_path / "j.jsonl"
    fake.script([status])
    res = _run(out, provider, max_retries=2)
    (line,) = read_journal(out, all_attempts=True)
    assert res.failed == 1 and fake.requests == 1  # the SDK does not retry a 4xx either
    assert line["call_status"] == "failed_permanent" and status in line["error"]
    assert line["usd_counted"] is None and fake.paid_ids == []
    _run(out, provider)
    assert fake.requests == 1  # not re-sent
    res = _run(out, provider, retry_failed=True)
    assert fake.requests == 2 and res.failed == 0
    assert [x["error"] for x in read_journal(out)] == [None]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_huge_body_is_kept_cut_with_a_status(fake, tmp_path, provider):
    out = tmp_path / "j.jsonl"
    fake.script(["huge"])
    res = _run(out, provider)
    (line,) = read_journal(out, all_attempts=True)
    assert res.failed == 1 and line["call_status"] == "truncated"
    assert line["error"].startswith("ResponseTooLarge")
    assert 0.9 * MAX_BODY_BYTES <= len(line["raw"]) <= MAX_BODY_BYTES
    assert out.stat().st_size < 2 * MAX_BODY_BYTES  # never the 20 MB
    assert fake.paid_ids == [line["request_id"]] and line["usd_counted"] > 0
    _run(out, provider)
    assert fake.requests == 1  # a cut body is not re-sent by itself
    _run(out, provider, retry_failed=True)
    assert fake.requests == 2 and [x["error"] for x in read_journal(out)] == [None]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_above_max_tokens_is_flagged_and_counted_for_the_cap(fake, tmp_path, provider):
    out = tmp_path / "j.jsonl"
    fake.script(["overusage"])
    res = _run(out, provider, n=6, concurrency=1, max_usd=5.0)
    lines = read_journal(out, all_attempts=True)
    assert lines[0]["error"] is None and "above max_tokens 1024" in lines[0]["flag"]
    assert lines[0]["usd_counted"] == lines[0]["usd"] > 5.0
    # The claimed spend passed the cap: the run stopped starting calls.
    assert res.stopped and "max_usd" in res.stopped and len(lines) == 1
    # Plausible spend counts when the claim is lower: a normal call's counted spend is
    # at least the price of our own input count.
    res = _run(tmp_path / "k.jsonl", provider, n=1)
    (normal,) = read_journal(tmp_path / "k.jsonl")
    assert normal["flag"] is None and normal["usd_counted"] >= normal["usd"] > 0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_echoed_key_and_url_credentials_are_scrubbed(fake, tmp_path, provider, monkeypatch):
    creds = "judgeuser:pa55-word-secret"
    url = fake.anthropic_url if provider == "anthropic" else fake.openai_url
    env = "ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL"
    monkeypatch.setenv(env, url.replace("http://", f"http://{creds}@"))
    # httpx turns URL credentials into "Authorization: Basic base64(user:password)", which
    # may replace the key's header: accept any caller, and echo every header back.
    fake.api_key = None
    fake.echo_key = True
    fake.script(["echo", "500"])
    out = tmp_path / "j.jsonl"
    _run(out, provider, n=2, concurrency=1)
    text = out.read_text()
    lines = read_journal(out, all_attempts=True)
    assert "[redacted]" in lines[0]["raw"] and lines[0]["error"] is None
    assert any(x["error"] and "[redacted]" in x["error"] for x in lines)
    for secret in _forms(KEY) + _forms(creds) + _forms("pa55-word-secret"):
        assert secret not in text, secret
    assert KEY[:4] + "****" not in text


def _forms(secret):
    raw = secret.encode()
    b64 = base64.b64encode(raw).decode()
    return [secret, b64, b64.rstrip("="), base64.b64encode(b":" + raw).decode().rstrip("=")]


def test_redact_is_prefix_agnostic_and_leaves_ordinary_text():
    key = "AbCdEfGh-1234-5678-ijkl-MNOP"
    text = f"k={key} part={key[3:17]} masked={key[:4]}***{key[-4:]} b64={_forms(key)[1]}"
    cleaned = redact(text, [key])
    assert key[3:17] not in cleaned and key[:4] + "***" not in cleaned
    assert cleaned.count("[redacted]") == 4
    verbatim = '{"label": "(a)", "reasoning": "***Bold*** move; foo***bar"}'
    assert redact(verbatim, [key]) == verbatim


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unusable_base_url_stops_before_any_work(fake, tmp_path, provider, monkeypatch):
    env = "ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL"
    monkeypatch.setenv(env, "http://127.0.0.1:99999/v1")
    out = tmp_path / "j.jsonl"
    with pytest.raises(MissingKeyError, match=f"{env} is not a usable URL"):
        _run(out, provider)
    assert fake.requests == 0 and list(tmp_path.iterdir()) == []


def test_mixed_faults_lose_no_paid_answer(fake, tmp_path, capfd):
    fake.fault_rate = 0.5
    fake.fault_kinds = (*FAULT_KINDS, *HOSTILE_KINDS)
    fake.stall_s = 0.3
    out = tmp_path / "j.jsonl"
    tasks, pairs = make_data(40)
    res = run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=list(JUDGES.values()),
        out=out,
        options=JudgeOptions(
            progress=True, client_options=STRICT, concurrency=8, timeout=0.25, max_retries=1
        ),
    )
    lines = read_journal(out, all_attempts=True)
    # Every 200 the server sent is a journal line (its request id), and nothing else; except a
    # 200 sent after the client's deadline (a loaded machine), counted at its worst case.
    journaled = [x["request_id"] for x in lines if x["request_id"]]
    assert set(journaled) <= set(fake.paid_ids) and len(journaled) == len(set(journaled))
    unread = len(fake.paid_ids) - len(journaled)
    assert unread <= sum(x["maybe_billed"] for x in lines)
    assert sum(fake.faults.values()) >= 20 and len(fake.faults) >= 10
    # Every call ends judged or failed with a reason.
    last = read_journal(out)
    assert len(last) == 80 and all(x["error"] is None or x["error"] for x in last)
    assert res.per_judge["ok"].sum() + res.failed == 80
    # The server echoed the key in judge texts and error bodies: nothing written keeps it.
    assert fake.faults["echo"] > 0
    written = "".join(p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())
    printed = capfd.readouterr()
    for secret in _forms(KEY):
        assert secret not in written + printed.out + printed.err


# -- the journal: lock follows the file, nothing left behind ------------------------------


def test_lock_follows_the_file_not_the_path(tmp_path):
    path = tmp_path / "judgments.jsonl"
    link = tmp_path / "link.jsonl"
    hard = tmp_path / "hard.jsonl"
    (tmp_path / "sub").mkdir()
    with Journal(path) as j:
        j.write({"call_key": "k", "error": None})
        link.symlink_to(path)
        os.link(path, hard)
        for other in (link, hard, tmp_path / "sub" / ".." / "judgments.jsonl"):
            with pytest.raises(JournalLockedError, match="another evalstats run"):
                Journal(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "hard.jsonl",
        "judgments.jsonl",
        "link.jsonl",
        "sub",
    ]  # no lock file
    with Journal(link) as j:  # released on close
        assert j.finished_keys() == {"k"}


def test_symlinked_journal_cannot_be_run_twice_at_once(fake, tmp_path):
    out = tmp_path / "judgments.jsonl"
    link = tmp_path / "elsewhere.jsonl"
    out.touch()
    link.symlink_to(out)
    with Journal(out):
        with pytest.raises(JournalLockedError):
            _run(link, "openai")
    assert fake.requests == 0


def test_a_run_with_nothing_to_write_leaves_nothing(fake, tmp_path, monkeypatch):
    out = tmp_path / "judgments.jsonl"
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingKeyError):
        _run(out, "openai")
    assert list(tmp_path.iterdir()) == []
    # An over-budget-only data set: the journal would stay empty, so it is not kept.
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    tasks, pairs = make_data(2, over_budget=2)
    run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=[JUDGES["openai"]],
        out=out,
        options=JudgeOptions(progress=False),
    )
    assert list(tmp_path.iterdir()) == []


def _data_dir(tmp_path):
    import pandas as pd

    tasks, pairs = make_data(3)
    data = tmp_path / "data"
    data.mkdir()
    tasks.assign(
        canonical_written_at="2026-01-01T00:00:00Z", budget_tokens=10_000, budget_wall_s=600.0
    ).to_json(data / "tasks.jsonl", orient="records", lines=True)
    runs = [
        {
            "task_id": row.task_id,
            "replicate": row.replicate,
            "arm": arm,
            "agent_model": "agent",
            "answer": getattr(row, f"{arm}_answer"),
            "wall_s": getattr(row, f"{arm}_wall_s"),
            "started_at": "2026-01-02T00:00:00Z",
        }
        for row in pairs.itertuples()
        for arm in ("with", "without")
    ]
    pd.DataFrame(runs).to_json(data / "runs.jsonl", orient="records", lines=True)
    return data


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_cli_dry_run_and_missing_key_write_nothing(fake, tmp_path, monkeypatch, capsys):
    data = _data_dir(tmp_path)
    parser = build_parser()
    argv = ["judge", str(data), "--rubric", "with-without", "--judge", JUDGES["openai"]]
    before = _snapshot(data)
    args = parser.parse_args([*argv, "--dry-run", "--no-progress"])
    assert args.func(args) == 0 and "est_usd" in capsys.readouterr().out
    assert _snapshot(data) == before
    monkeypatch.delenv("OPENAI_API_KEY")
    # A refused call is raised; evalstats.cli.main prints it as one line and exits 2.
    assert main([*argv, "--no-progress"]) == 2 and "OPENAI_API_KEY" in capsys.readouterr().err
    assert _snapshot(data) == before and fake.requests == 0
    # --retry-failed is wired through: a permanent failure is re-sent only with it.
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    fake.script(["400"])
    args = parser.parse_args([*argv, "--no-progress"])
    assert args.func(args) == 1
    args = parser.parse_args([*argv, "--no-progress"])
    assert args.func(args) == 1 and fake.requests == 3
    assert "--retry-failed" in capsys.readouterr().err
    args = parser.parse_args([*argv, "--no-progress", "--retry-failed"])
    assert args.func(args) == 0 and fake.requests == 4
    lines = [json.loads(x) for x in (data / "judgments.jsonl").read_text().splitlines()]
    # The first run's calls are journalled as they finish (concurrently: any order); the
    # retried call comes last and is the one that had failed.
    first, retried = lines[:-1], lines[-1]
    assert sorted(x["call_status"] for x in first) == ["failed_permanent", "ok", "ok"]
    failed = next(x for x in first if x["call_status"] == "failed_permanent")
    assert retried["call_status"] == "ok" and retried["call_key"] == failed["call_key"]
    assert sorted(p.name for p in data.iterdir()) == [
        "judgments.jsonl",
        "runs.jsonl",
        "tasks.jsonl",
    ]


# -- rate limits ---------------------------------------------------------------------------


@pytest.mark.slow  # waits out real Retry-After delays
@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limited_run_slows_down_instead_of_failing(monkeypatch, tmp_path, provider):
    # 600 requests/min = 10/s with a 3-call burst, and a tokens limit that binds too.
    with FakeLLM(api_key=KEY, rate_limit=(600, 600 * 900), burst_s=0.3) as server:
        server.point_sdks(monkeypatch)
        import time

        t0 = time.perf_counter()
        res = _run(tmp_path / "j.jsonl", provider, n=23, concurrency=8, max_retries=2)
        wall = time.perf_counter() - t0
    assert res.failed == 0 and len(read_journal(tmp_path / "j.jsonl", all_attempts=True)) == 23
    assert max(server.paid.values()) == 1 and sum(server.paid.values()) == 23
    # 20 calls past the burst at 10/s take at least ~2 s: the client kept to the limit. (No
    # upper bound: a stalled run is caught by the test's timeout, not by a wall-clock figure.)
    assert wall >= 1.8


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_left_after_sdk_retries_goes_back_in_the_queue(fake, tmp_path, provider):
    fake.script(["429"] * 3)  # the SDK's three attempts all rate limited
    res = _run(tmp_path / "j.jsonl", provider, max_retries=2)
    lines = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert res.failed == 0 and [x["error"] for x in lines] == [None]
    assert fake.requests == 4 and len(fake.paid_ids) == 1


def test_rate_limit_headers_are_read():
    from evalstats.judging._ratelimit import (  # private: headers a fake server never sends
        Throttle,
        parse_reset,
        retry_after,
    )

    assert retry_after({"retry-after-ms": "250", "retry-after": "3"}) == 0.25
    assert retry_after({"retry-after": "3"}) == 3.0
    assert parse_reset("1m30s") == 90.0 and parse_reset("2026-01-01T00:00:00Z") == 0.0
    t = Throttle(8)
    t.observe(
        200,
        {
            "anthropic-ratelimit-requests-limit": "60",
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": "2099-01-01T00:00:00Z",
            "x-ratelimit-limit-tokens": "6000",
            "x-ratelimit-remaining-tokens": "5000",
        },
        None,
    )
    # Empty request bucket refilled at 1/s: the next call waits about a second.
    import time

    assert 0.9 <= t.requests.wait(1, time.monotonic()) <= 1.0
    assert t.tokens.limit == 6000 and t.tokens.level == 5000
    t.observe(429, {"retry-after": "2"}, None)
    assert t.window == 4 and t.pause_until - time.monotonic() > 1.5


# -- bounded waits (issue 21.4): a server's wait hints and rate-limit resets are capped --------


@pytest.fixture
def fresh_notes(monkeypatch):
    """The once-per-process rate-limit notes, empty for the test that reads them."""
    from evalstats.judging import _ratelimit  # private: its module-level note cache, reset

    monkeypatch.setattr(_ratelimit, "_noted", set())


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", ["waitforever", "waitinf"])
def test_a_server_wait_hint_is_capped_and_said(
    fake, fresh_notes, tmp_path, provider, fault, monkeypatch, capfd
):
    monkeypatch.setenv("EVALSTATS_MAX_WAIT_S", "0.1")
    fake.script([fault, None])
    out = tmp_path / "j.jsonl"
    res = _run(out, provider, max_retries=1)
    assert res.failed == 0 and fake.counts()["requests"] == 2  # waited (capped), then retried
    assert [x["error"] for x in read_journal(out)] == [None]
    assert "waiting at most 0.1 s (EVALSTATS_MAX_WAIT_S)" in capfd.readouterr().err


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rate_limit_reset_in_2999_is_capped_and_said(
    fake, fresh_notes, tmp_path, provider, monkeypatch, capfd
):
    monkeypatch.setenv("EVALSTATS_MAX_WAIT_S", "0.1")
    fake.script(["reset2999", None, None])
    out = tmp_path / "j.jsonl"
    res = _run(out, provider, n=3, concurrency=1)
    assert res.failed == 0 and len(read_journal(out)) == 3
    assert "a rate-limit reset); waiting at most 0.1 s" in capfd.readouterr().err


def test_wait_caps_refuse_nonsense_settings(monkeypatch):
    from evalstats.judging import _ratelimit  # private: settings and headers no server sends

    for bad in ("0", "-5", "nan", "inf", "soon"):
        monkeypatch.setenv("EVALSTATS_MAX_WAIT_S", bad)
        assert _ratelimit.max_wait_s() == _ratelimit.MAX_WAIT_S
    assert _ratelimit.parse_reset("Wed, 01 Jan 2999 00:00:00 GMT", capped=False) > 1e10
    assert _ratelimit.retry_after({"retry-after": "nan"}) is None
    assert _ratelimit.capped_wait(float("nan"), "x") == 0.0
