"""Journal, planning, resume, budget, prices, batches, adjudication and the CLI."""

from __future__ import annotations

import json
import logging

import pytest
from fakellm import FakeLLM, make_data

from evalstats.cli import build_parser
from evalstats.errors import ParameterError
from evalstats.judging import (
    Journal,
    JournalLockedError,
    JudgeOptions,
    load_prices,
    parse_judge,
    plan_calls,
    read_journal,
    redact,
    run_judges,
)

# Integration (slow: make test runs it, make check does not): judges through both SDKs and resumes.
pytestmark = pytest.mark.slow

ORDERS = ("with_first", "without_first")  # the data contract's blind-rubric orders

KEY = "sk-test-RECOGNISABLE-KEY-4242424242"
STRICT = {"_strict_response_validation": True}
J1, J2, J3 = "anthropic:claude-sonnet-4-20250514", "openai:gpt-4o", "openai:gpt-4.1"


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        yield server


def test_parse_judge():
    assert parse_judge("openai:llama3:8b").model == "llama3:8b"
    for bad in ("gpt-4o", "google:gemini", "openai:"):
        with pytest.raises(ValueError, match="provider:model"):
            parse_judge(bad)


def test_plan_orders_over_budget_and_keys():
    tasks, pairs = make_data(30, 2, over_budget=3)
    plan = plan_calls(tasks, pairs, rubric="blind-pair", judges=[J1, J2], seed=7)
    assert plan.attrs["no_answer_pairs"] == 3 and len(plan) == 2 * 57
    # Same order for both judges of a pair (comparable), both orders used, seeded.
    by_judge = plan.pivot_table(
        index=["task_id", "replicate"], columns="judge", values="order", aggfunc="first"
    )
    assert (by_judge[J1] == by_judge[J2]).all()
    assert set(plan["order"]) == set(ORDERS)
    again = plan_calls(tasks, pairs, rubric="blind-pair", judges=[J1, J2], seed=7)
    assert again["call_key"].tolist() == plan["call_key"].tolist()
    other = plan_calls(tasks, pairs, rubric="blind-pair", judges=[J1, J2], seed=8)
    assert (other["order"] != plan["order"]).any()
    # Order depends on the pair only: dropping pairs leaves the others' orders.
    sub = plan_calls(tasks, pairs.iloc[10:], rubric="blind-pair", judges=[J1], seed=7)
    merged = sub.merge(plan, on=["judge", "task_id", "replicate"])
    assert (merged["order_x"] == merged["order_y"]).all()
    # Over-budget pairs are absent; keys are unique and depend on the parameters.
    assert not set(plan["task_id"]) & {"t029"}
    assert plan["call_key"].is_unique
    hot = plan_calls(
        tasks,
        pairs,
        rubric="blind-pair",
        judges=[J1, J2],
        seed=7,
        options=JudgeOptions(temperature=0.5),
    )
    assert not set(hot["call_key"]) & set(plan["call_key"])
    both = plan_calls(tasks, pairs, rubric="blind-pair", judges=[J1], orders="both")
    assert (
        len(both) == 2 * 57 and both.groupby(["task_id", "replicate"]).order.nunique().eq(2).all()
    )
    # Blind prompts never name the arms.
    assert not plan["user"].str.contains("WITH").any()
    with pytest.raises(ValueError, match="blind-pair"):
        plan_calls(tasks, pairs, rubric="with-without", judges=[J1], orders="both")


def test_plan_from_long_runs_counts_tokens_and_budgets():
    import pandas as pd

    tasks = pd.DataFrame(
        {
            "task_id": ["a", "b"],
            "prompt": ["p", "q"],
            "canonical_answer": ["x", "y"],
            "budget_tokens": [50, 50],
            "budget_wall_s": [100.0, 100.0],
        }
    )
    runs = pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "b"],
            "replicate": [1, 1, 1, 1],
            "arm": ["with", "without", "with", "without"],
            "answer": ["short", "short too", "word " * 200, "ok"],
            "wall_s": [1.0, 2.0, 3.0, 4.0],
        }
    )
    plan = plan_calls(tasks, runs, rubric="with-without", judges=[J1])
    assert plan["task_id"].tolist() == ["a"] and plan.attrs["no_answer_pairs"] == 1


def test_journal_lock_torn_line_and_dedupe(tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path) as j:
        with pytest.raises(JournalLockedError, match="another evalstats run"):
            Journal(path)
        j.write({"call_key": "k1", "error": "APITimeoutError: Request timed out."})
        j.write({"kind": "batch", "batch_id": "b1", "call_keys": ["k2"]})
        j.write({"call_key": "k1", "error": None, "raw": "{}"})
        j.write({"call_key": "k2", "error": "X"})
        j.write({"call_key": "k2", "error": "Y"})
    with path.open("ab") as fh:
        fh.write(b'{"call_key": "k3", "err')  # a write cut short by a kill
    with pytest.warns(UserWarning, match="cut short"):
        with Journal(path) as j:
            assert j.finished_keys() == {"k1"}
            assert [b["batch_id"] for b in j.pending_batches()] == ["b1"]
            j.write({"call_key": "k3", "error": None})
    # The torn bytes were set aside, not dropped; the journal is clean JSON Lines again.
    assert (tmp_path / "j.jsonl.torn").read_bytes() == b'{"call_key": "k3", "err\n'
    lines = read_journal(path)
    assert [(x["call_key"], x["error"]) for x in lines] == [("k1", None), ("k2", "Y"), ("k3", None)]
    assert len(read_journal(path, all_attempts=True)) == 5
    # A corrupt line inside the file (not a torn tail) is still skipped with a warning.
    with path.open("ab") as fh:
        fh.write(b"garbage\n")
    with pytest.warns(UserWarning, match="unreadable journal line"):
        assert len(read_journal(path, all_attempts=True)) == 5


def test_resume_skips_finished_and_budget_stops(fake, tmp_path):
    tasks, pairs = make_data(20)
    out = tmp_path / "j.jsonl"
    kw = dict(
        rubric="with-without",
        judges=[J1],
        out=out,
        options=JudgeOptions(progress=False, client_options=STRICT),
    )
    res = run_judges(tasks.iloc[:5], pairs.iloc[:5], **kw)
    assert res.per_judge["ok"].tolist() == [5] and fake.requests == 5
    # A call's worst case (~900 in, 1024 out) is ~$0.018, its actual cost ~$0.004: a budget
    # of $0.03 more lets a few calls start, never all 15, and is never passed.
    spent = sum(x["usd"] for x in read_journal(out))
    opts = JudgeOptions(progress=False, client_options=STRICT, max_usd=spent + 0.03, concurrency=1)
    res = run_judges(tasks, pairs, **{**kw, "options": opts})
    assert res.stopped and "max_usd" in res.stopped
    assert res.per_judge["done_before"].tolist() == [5]
    sent = res.per_judge["sent"].iloc[0]
    assert 1 <= sent <= 8 and fake.requests == 5 + sent
    assert sum(x["usd"] for x in read_journal(out)) <= spent + 0.03
    res = run_judges(tasks, pairs, **kw)
    assert res.stopped is None and len(read_journal(out)) == 20 and fake.requests == 20
    assert max(fake.paid.values()) == 1


def test_prices_and_max_usd_refusal(tmp_path, fake):
    table = load_prices({"my-model": [1, 2], "openai:gpt-4o": {"input": 9, "output": 9}})
    assert table["my-model"].usd(1e6, 1e6) == 3.0 and table["gpt-4o"].input_per_mtok == 2.5
    assert table["claude-sonnet-4"].usd(1e6, 0, batch=True) == 1.5
    tasks, pairs = make_data(3)
    with pytest.raises(ValueError, match="needs a price for every judge"):
        run_judges(
            tasks,
            pairs,
            rubric="with-without",
            judges=["openai:my-unknown"],
            out=tmp_path / "j.jsonl",
            options=JudgeOptions(max_usd=1.0, progress=False),
        )
    assert fake.requests == 0
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"my-unknown": {"input": 1.0, "output": 1.0}}))
    res = run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=["openai:my-unknown"],
        out=tmp_path / "j.jsonl",
        options=JudgeOptions(max_usd=1.0, progress=False, prices=prices),
    )
    assert res.per_judge["ok"].tolist() == [3]


def test_dry_run_prints_per_judge_estimate(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    tasks, pairs = make_data(10, over_budget=2)
    res = run_judges(
        tasks,
        pairs,
        rubric="blind-pair",
        judges=[J1, "openai:mystery"],
        orders="both",
        out=tmp_path / "j.jsonl",
        dry_run=True,
        options=JudgeOptions(progress=False),
    )
    text = capsys.readouterr().out
    assert J1 in text and "openai:mystery" in text and "2 pair(s) over budget" in text
    frame = res.to_frame()
    plan = plan_calls(tasks, pairs, rubric="blind-pair", judges=[J1], orders="both")
    assert frame["to_call"].tolist() == [16, 16]
    assert frame["input_tokens"].iloc[0] == plan["input_tokens"].sum()
    assert frame["est_usd"].iloc[0] == pytest.approx(
        (plan["input_tokens"].sum() * 3 + 16 * 300 * 15) / 1e6, abs=1e-4
    )
    assert frame["est_usd"].isna().iloc[1]
    assert list(tmp_path.iterdir()) == []  # a dry run writes nothing, not even a lock


@pytest.mark.parametrize("provider_judge", [J1, J2])
def test_batch_submit_collect_and_resume(fake, tmp_path, provider_judge):
    tasks, pairs = make_data(12)
    out = tmp_path / "j.jsonl"
    fake.batch_polls = 3
    fake.batch_error_every = 3
    kw = dict(
        rubric="blind-pair",
        judges=[provider_judge],
        out=out,
        options=JudgeOptions(
            progress=False, client_options=STRICT, batch=True, poll_interval=0.01, max_batch_size=5
        ),
    )
    res = run_judges(tasks, pairs, **kw)
    lines = read_journal(out, all_attempts=True)
    # Batches of 5, 5, 2: the 3rd request of each full batch errors.
    assert len(lines) == 12 and res.failed == sum(x["error"] is not None for x in lines) == 2
    ok = [x for x in lines if x["error"] is None]
    assert all(x["usd"] > 0 and x["order"] in ORDERS and x["raw"] for x in ok)
    raw = [json.loads(x) for x in out.read_text().splitlines()]
    batches = [x for x in raw if x.get("kind") == "batch"]
    assert len(batches) == 3 and len([x for x in raw if x.get("kind") == "batch_done"]) == 3
    # Half price: the same usage direct would cost twice as much.
    price = load_prices(None)[
        provider_judge.split(":")[1].rsplit("-", 1)[0] if provider_judge == J1 else "gpt-4o"
    ]
    assert ok[0]["usd"] == pytest.approx(
        price.usd(ok[0]["input_tokens"], ok[0]["output_tokens"]) / 2
    )
    # Rerun: only the failed ones are resubmitted.
    fake.batch_error_every = 0
    before = sum(fake.paid.values())
    res = run_judges(tasks, pairs, **kw)
    assert sum(fake.paid.values()) - before == len(lines) - len(ok)
    assert all(x["error"] is None for x in read_journal(out)) and len(read_journal(out)) == 12
    assert max(fake.paid.values()) == 1


def test_batch_resumes_by_batch_id_after_restart(fake, tmp_path):
    tasks, pairs = make_data(6)
    out = tmp_path / "j.jsonl"
    # A run that submitted a batch and died before collecting it.
    plan = plan_calls(tasks, pairs, rubric="with-without", judges=[J1])
    from evalstats.judging.providers import request_params

    params = [
        request_params(
            parse_judge(J1),
            [{"role": "system", "content": s}, {"role": "user", "content": u}],
            temperature=None,
            max_tokens=1024,
        )
        for s, u in zip(plan.system, plan.user, strict=True)
    ]
    import anthropic

    client = anthropic.Anthropic(base_url=fake.anthropic_url, api_key=KEY)
    batch = client.messages.batches.create(
        requests=[{"custom_id": k, "params": p} for k, p in zip(plan.call_key, params, strict=True)]
    )
    with Journal(out) as j:
        j.write(
            {
                "kind": "batch",
                "batch_id": batch.id,
                "provider": "anthropic",
                "judge": J1,
                "call_keys": plan.call_key.tolist(),
                "created_at": "2026-01-01T00:00:00Z",
            }
        )
    paid = sum(fake.paid.values())
    run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=[J1],
        out=out,
        options=JudgeOptions(progress=False, batch=True, poll_interval=0.01, client_options=STRICT),
    )
    assert sum(fake.paid.values()) == paid == 6  # collected, not resubmitted
    assert sorted(x["call_key"] for x in read_journal(out)) == sorted(plan.call_key)


def test_adjudication_only_on_disagreements(fake, tmp_path):
    tasks, pairs = make_data(12)

    def reply(system, user, model):
        if model == "gpt-4o":  # disagrees with the first judge on odd tasks
            i = int(user.split("symbol S")[1].split()[0])
            return json.dumps({"label": "(a)" if i % 2 else "(b)"})
        return json.dumps({"label": "(b)"})

    fake.reply = reply
    out = tmp_path / "j.jsonl"
    res = run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=[J1, J2],
        out=out,
        options=JudgeOptions(adjudicate=J3, progress=False, client_options=STRICT),
    )
    frame = res.to_frame().set_index("judge")
    assert frame.loc[J3, "role"] == "adjudicator" and frame.loc[J3, "ok"] == 6
    adjudicated = {x["task_id"] for x in read_journal(out) if x["judge"] == J3}
    assert adjudicated == {f"t{i:03d}" for i in range(1, 12, 2)}
    with pytest.raises(ValueError, match="exactly two"):
        run_judges(
            tasks,
            pairs,
            rubric="with-without",
            judges=[J1],
            out=out,
            options=JudgeOptions(adjudicate=J3),
        )


def test_key_never_leaks(fake, tmp_path, capfd, caplog):
    fake.echo_key = True
    fake.script(["429", "500", "529"] * 2)
    tasks, pairs = make_data(3)
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "j.jsonl"
    errors = []
    res = run_judges(
        tasks,
        pairs,
        rubric="with-without",
        judges=[J1, J2],
        out=out,
        options=JudgeOptions(progress=True, max_retries=2, client_options=STRICT, concurrency=1),
    )
    assert res.failed == 2  # both judges' first call failed three times
    failed = [x["error"] for x in read_journal(out, all_attempts=True) if x["error"]]
    assert all("[redacted]" in e for e in failed)
    # A refused key: the server quotes it back in the 401 body.
    wrong = "sk-test-WRONG-KEY-0987654321abcdef"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", wrong)
        try:
            run_judges(
                tasks,
                pairs,
                rubric="with-without",
                judges=["openai:gpt-4.1"],
                out=out,
                options=JudgeOptions(progress=False, client_options=STRICT),
            )
        except Exception as exc:
            errors.append(repr(exc) + str(exc))
    assert errors and "AuthenticationError" in errors[0]
    captured = capfd.readouterr()
    assert "judging" in captured.err  # the progress bar was shown
    everything = "\n".join(
        [out.read_text(), captured.out, captured.err, caplog.text, *errors, *failed]
    )
    for part in (KEY, KEY[8:20], KEY[-12:], wrong, wrong[8:20]):
        assert part not in everything
    assert set(fake.seen_auth) == {KEY, wrong}  # the keys were really sent
    assert redact(f"bad key {KEY}!", [KEY]) == "bad key [redacted]!"


def test_cli_judge(fake, tmp_path, capsys):
    import pandas as pd

    tasks, pairs = make_data(4)
    data = tmp_path / "data"
    data.mkdir()
    tasks.assign(
        canonical_written_at="2026-01-01T00:00:00Z", budget_tokens=10_000, budget_wall_s=600.0
    ).to_json(data / "tasks.jsonl", orient="records", lines=True)
    runs = []
    for row in pairs.itertuples():
        for arm in ("with", "without"):
            runs.append(
                {
                    "task_id": row.task_id,
                    "replicate": row.replicate,
                    "arm": arm,
                    "agent_model": "agent",
                    "answer": getattr(row, f"{arm}_answer"),
                    "wall_s": getattr(row, f"{arm}_wall_s"),
                    "started_at": "2026-01-02T00:00:00Z",
                }
            )
    pd.DataFrame(runs).to_json(data / "runs.jsonl", orient="records", lines=True)
    parser = build_parser()
    argv = [
        "judge",
        str(data),
        "--rubric",
        "blind-pair",
        "--judge",
        J1,
        "--judge",
        J2,
        "--orders",
        "both",
        "--no-progress",
    ]
    args = parser.parse_args([*argv, "--dry-run"])
    assert args.func(args) == 0 and "est_usd" in capsys.readouterr().out
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    assert len(read_journal(data / "judgments.jsonl")) == 16
    from evalstats.records import load_judgments

    assert len(load_judgments(data / "judgments.jsonl")) == 16
    # A line torn by kill -9 (no newline) must not stop the rerun that repairs it.
    with (data / "judgments.jsonl").open("a") as fh:
        fh.write('{"judgment_id": "torn", "task_')
    args = parser.parse_args(argv)
    with pytest.warns(UserWarning, match="cut short"):
        assert args.func(args) == 0
    assert len(read_journal(data / "judgments.jsonl")) == 16
    assert len(load_judgments(data / "judgments.jsonl")) == 16  # valid JSON Lines again
    assert (data / "judgments.jsonl.torn").read_text() == '{"judgment_id": "torn", "task_\n'
    args = parser.parse_args(["judge", str(data), "--rubric", "blind-pair", "--judge", "nope"])
    with pytest.raises(ParameterError, match="provider:model"):  # cli.main: one line, exit 2
        args.func(args)
    with pytest.raises(SystemExit):
        parser.parse_args(["judge", "--help"])
