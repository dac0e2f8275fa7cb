"""Real SDK clients (strict validation) against the loopback fake: both providers, both
rubrics, every fault kind the issue lists."""

from __future__ import annotations

import json

import pytest
from fakellm import FakeLLM, make_data

from evalstats import rubrics
from evalstats.errors import ParseError
from evalstats.judging import JudgeOptions, MissingKeyError, read_journal, run_judges
from evalstats.records import JUDGMENT_FIELDS

# Integration (slow: make test runs it, make check does not): judges through both SDKs, with faults.
pytestmark = pytest.mark.slow

KEY = "sk-test-0123456789abcdefFAKEKEY"
STRICT = {"_strict_response_validation": True}
JUDGES = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY, stall_s=0.4) as server:
        server.point_sdks(monkeypatch)
        yield server


def _run(tmp_path, provider, rubric, **kw):
    tasks, pairs = make_data(1)
    kw.setdefault("timeout", 0.25)
    return run_judges(
        tasks,
        pairs,
        rubric=rubric,
        judges=[JUDGES[provider]],
        out=tmp_path / "j.jsonl",
        options=JudgeOptions(progress=False, client_options=STRICT, **kw),
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("rubric", ["with-without", "blind-pair"])
@pytest.mark.parametrize("fault", [None, "429", "500", "529", "timeout", "reset"])
def test_fault_is_retried_to_a_valid_judgment(fake, tmp_path, provider, rubric, fault):
    fake.script([fault])
    res = _run(tmp_path, provider, rubric, temperature=0.0, max_tokens=777)
    (line,) = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert res.failed == 0 and line["error"] is None
    assert fake.requests == (1 if fault is None else 2)
    if fault:
        assert fake.faults[fault] == 1
    # Two arms: every field but the K-arm pair's (arm_a / arm_b), so the seeds' journal
    # lines stay exactly what they were.
    assert set(line) == set(JUDGMENT_FIELDS) - {"arm_a", "arm_b"}
    r = rubrics.get(rubric)
    assert (line["rubric"], line["prompt_revision"], line["prompt_sha256"]) == (
        r.name,
        r.revision,
        r.sha256,
    )
    assert line["judge"] == JUDGES[provider]
    assert line["model_id"] == JUDGES[provider].split(":", 1)[1] + "-fake"
    assert line["request_id"].startswith("req_")
    assert line["input_tokens"] > 0 and line["output_tokens"] > 0 and line["usd"] > 0
    assert (line["temperature"], line["max_tokens"]) == (0.0, 777)
    assert (line["order"] is None) == (rubric == "with-without")
    verdict = r.parse(line["raw"], order=line["order"])
    assert verdict.outcome in ("win", "tie", "loss")
    assert line["created_at"].endswith("Z") and line["latency_s"] > 0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
@pytest.mark.parametrize("rubric", ["with-without", "blind-pair"])
def test_invalid_judge_text_is_kept_not_retried(fake, tmp_path, provider, rubric):
    fake.script(["badjson"])
    _run(tmp_path, provider, rubric)
    (line,) = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert line["error"] is None and fake.requests == 1
    assert line["raw"] == "I would pick (a), the WITH answer."
    with pytest.raises(ParseError):
        rubrics.get(rubric).parse(line["raw"], order=line["order"])
    # Finished: a rerun sends nothing.
    _run(tmp_path, provider, rubric)
    assert fake.requests == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_exhausted_retries_are_recorded_then_retried(fake, tmp_path, provider):
    fake.script(["429", "529", "500"])
    res = _run(tmp_path, provider, "with-without", max_retries=2)
    (line,) = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert res.failed == 1 and fake.requests == 3
    assert line["error"].startswith("InternalServerError") and line["raw"] is None
    assert line["usd"] is None and line["call_key"] and line["call_status"] == "failed"
    res = _run(tmp_path, provider, "with-without")
    lines = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert [x["error"] is None for x in lines] == [False, True]
    assert lines[0]["call_key"] == lines[1]["call_key"]
    assert [x["error"] for x in read_journal(tmp_path / "j.jsonl")] == [None]


def test_request_body_matches_the_rendered_prompt(fake, tmp_path):
    seen = []

    def reply(system, user, model):
        seen.append((system, user, model))
        return json.dumps({"label": "(b)"})

    fake.reply = reply
    tasks, pairs = make_data(1)
    for provider in ("anthropic", "openai"):
        run_judges(
            tasks,
            pairs,
            rubric="with-without",
            judges=[JUDGES[provider]],
            out=tmp_path / f"{provider}.jsonl",
            options=JudgeOptions(progress=False, client_options=STRICT),
        )
    prompt = rubrics.get("with-without").render(
        tasks.iloc[0].to_dict(),
        {"answer": pairs.with_answer[0], "tokens": 1000, "wall_s": 31.0},
        {"answer": pairs.without_answer[0], "tokens": 2500, "wall_s": 61.0},
    )
    assert [s[:2] for s in seen] == [(prompt.system, prompt.user)] * 2


def test_missing_key_fails_before_any_request(fake, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    tasks, pairs = make_data(2)
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        run_judges(
            tasks,
            pairs,
            rubric="with-without",
            judges=list(JUDGES.values()),
            out=tmp_path / "j.jsonl",
            options=JudgeOptions(progress=False),
        )
    assert fake.requests == 0 and not (tmp_path / "j.jsonl").exists()
    # A dry run needs no key.
    res = run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=list(JUDGES.values()),
        out=tmp_path / "j.jsonl",
        dry_run=True,
        options=JudgeOptions(progress=False),
    )
    assert res.per_judge["to_call"].tolist() == [2, 2] and fake.requests == 0


def test_rejected_key_stops_the_run(fake, tmp_path, monkeypatch):
    from evalstats.judging import JudgeAuthError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-000000000000")
    tasks, pairs = make_data(20)
    with pytest.raises(JudgeAuthError, match="AuthenticationError"):
        run_judges(
            tasks,
            pairs,
            rubric="with-without",
            judges=[JUDGES["openai"]],
            out=tmp_path / "j.jsonl",
            options=JudgeOptions(progress=False, concurrency=2),
        )
    lines = read_journal(tmp_path / "j.jsonl", all_attempts=True)
    assert 1 <= len(lines) <= 2 and all(x["error"] for x in lines)
    assert "sk-wrong" not in (tmp_path / "j.jsonl").read_text()
