"""K arms through judging (issue 24 item 2): pairs of arms, the runner, the journal, the audit,
the simulated K-arm directory and the verdict frame of a K-arm data directory."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from fakellm import FakeLLM
from karm_dir import import_hand_karm, write_hand_karm

import evalstats
from evalstats import rubrics
from evalstats.cli import build_parser
from evalstats.errors import DataError, ParameterError
from evalstats.judging import JudgeOptions, plan_calls, read_journal, run_judges
from evalstats.methodology import audit
from evalstats.records import Arms, arm_pairs, load_judgments, pair_runs

# Integration (slow: make test runs it, make check does not): judges K arms through both SDKs and audits them.
pytestmark = pytest.mark.slow

KEY = "sk-test-RECOGNISABLE-KEY-4242424242"
J1, J2 = "anthropic:claude-sonnet-4-20250514", "openai:gpt-4o"
ARMS = ("none", "v1", "v2", "v3")


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        yield server


def _karm_dir(tmp_path: Path, arms=ARMS, *, judges=(), n_tasks=3, n_replicates=2, **kw) -> Path:
    d = tmp_path / "data"
    evalstats.simulate(
        d,
        arms=arms,
        reference="none",
        n_tasks=n_tasks,
        n_replicates=n_replicates,
        judges=judges,
        **kw,
    )
    if not judges:
        (d / "judgments.jsonl").unlink()
    return d


# ----------------------------------------------------------------------------- pairs of arms


def test_arm_pairs_all_and_reference():
    a = Arms(ARMS, reference="none")
    every = arm_pairs(a)
    assert len(every) == 4 * 3 // 2
    assert {frozenset(p) for p in every} == {
        frozenset((x, y)) for i, x in enumerate(ARMS) for y in ARMS[i + 1 :]
    }
    assert all(b == "none" for x, b in every if "none" in (x, b))  # the reference is arm_b
    assert arm_pairs(a, "reference") == [("v1", "none"), ("v2", "none"), ("v3", "none")]
    with pytest.raises(ParameterError, match="names none"):
        arm_pairs(Arms(ARMS), "reference")
    with pytest.raises(ParameterError, match="pairs must be"):
        arm_pairs(a, "some")


def test_pair_runs_puts_the_two_runs_side_by_side(tmp_path):
    ds = evalstats.load_dir(_karm_dir(tmp_path))
    p = pair_runs(ds.runs, ds.arms)
    assert len(p) == 3 * 2 * 6
    runs = ds.runs.assign(arm=ds.runs["arm"].astype(str)).set_index(["task_id", "replicate", "arm"])
    for row in p.sample(8, random_state=0).itertuples():
        assert row.with_answer == runs.loc[(row.task_id, row.replicate, row.arm_a), "answer"]
        assert row.without_tokens == runs.loc[(row.task_id, row.replicate, row.arm_b), "tokens"]
    lonely = ds.runs.iloc[1:]  # T01 replicate 1 lacks the first arm
    with pytest.warns(evalstats.EvalstatsWarning, match="left out"):
        assert len(pair_runs(lonely, ds.arms, "reference")) == 3 * 2 * 3 - 3


# ----------------------------------------------------------------------------- planning


def test_dry_run_prices_every_pair_both_orders(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ds = evalstats.load_dir(_karm_dir(tmp_path))
    n_units = 3 * 2  # tasks x replicates
    # K(K-1)/2 = 6 pairs of the four arms; 3 against the reference.
    for pairs, n_pairs in (("all", 6), ("reference", 3)):
        res = run_judges(ds.tasks, ds.runs, rubric='with-without', judges=[J2], out=tmp_path / 'j.jsonl', dry_run=True, pairs=pairs, arms=ds.arms, options=JudgeOptions(progress=False))  # fmt: skip
        assert res.to_frame()["to_call"].tolist() == [n_units * n_pairs], pairs
    plan = plan_calls(
        ds.tasks,
        ds.runs,
        rubric="blind-pair",
        judges=[J2],
        orders="both",
        pairs="all",
        arms=ds.arms,
    )
    assert len(plan) == n_units * 6 * 2
    assert set(plan["order"]) == {"a_first", "b_first"} and plan["call_key"].is_unique
    assert plan.groupby(["arm_a", "arm_b"]).size().tolist() == [n_units * 2] * 6
    assert not (tmp_path / "j.jsonl").exists()
    with pytest.raises(ParameterError, match="choose the pairs"):
        plan_calls(ds.tasks, ds.runs, rubric="with-without", judges=[J2], arms=ds.arms)


def test_three_way_prompt_names_both_tools(tmp_path):
    ds = evalstats.load_dir(_karm_dir(tmp_path))
    plan = plan_calls(
        ds.tasks, ds.runs, rubric="with-without", judges=[J2], pairs="all", arms=ds.arms
    )
    for row in plan.drop_duplicates(["arm_a", "arm_b"]).itertuples():
        tool_a, tool_b = (ds.arms.tools[row.arm_a], ds.arms.tools[row.arm_b])
        assert f"WITH ({tool_a}):" in row.user and f"WITHOUT ({tool_b}):" in row.user
        assert f'with {tool_a} ("WITH") and the other with {tool_b}' in row.system
        assert "gortex" not in row.user + row.system
    # The seed's two-arm prompt is untouched.
    seed = rubrics.get("with-without")
    assert rubrics.with_pair_tools(seed, "x", "y").sha256 == seed.sha256
    assert "gortex MCP available" in seed.user_template


def _key(call, **arms) -> str:
    """sha256 of exactly the fields that make a call (the planned call's messages)."""
    rub = rubrics.get("with-without")
    messages = [{"role": "system", "content": call.system}, {"role": "user", "content": call.user}]
    ident = {
        "rubric": rub.name,
        "revision": rub.revision,
        "judge": J2,
        "messages": messages,
        "temperature": None,
        "max_tokens": 1024,
        "order": call.order,
        "task_id": call.task_id,
        "replicate": int(call.replicate),
        **arms,
    }
    text = json.dumps(ident, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_two_arm_call_keys_are_unchanged(tmp_path):
    # The key of the seeds' calls: sha256 of exactly these fields (no arm_a / arm_b).
    d = tmp_path / "two"
    evalstats.simulate(d, n_tasks=2, n_replicates=1, judges=())
    ds = evalstats.load_dir(d)
    calls = plan_calls(ds.tasks, ds.runs, rubric="with-without", judges=[J2])
    assert len(calls) == 2 and all(c.call_key == _key(c) for c in calls.itertuples())
    # K arms: the pair is part of the key.
    ds = evalstats.load_dir(_karm_dir(tmp_path, n_tasks=1, n_replicates=1))
    calls = plan_calls(ds.tasks, ds.runs, rubric="with-without", judges=[J2], pairs="reference",
                       arms=ds.arms)  # fmt: skip
    assert len(calls) == 3
    for c in calls.itertuples():
        assert c.call_key == _key(c, arm_a=c.arm_a, arm_b=c.arm_b) != _key(c)


# ----------------------------------------------------------------------------- running


@pytest.mark.slow
def test_k_arm_directory_judged_and_resumed_after_a_kill(fake, tmp_path):
    d = _karm_dir(tmp_path, n_tasks=2, n_replicates=1)
    ds = evalstats.load_dir(d)
    out = d / "judgments.jsonl"
    kw = dict(
        rubric="blind-pair",
        judges=[J1, J2],
        out=out,
        options=JudgeOptions(progress=False),
        pairs="all",
        arms=ds.arms,
        orders="both",
    )
    n_calls = 2 * 2 * 1 * 6 * 2  # judges x tasks x replicates x pairs x orders
    res = run_judges(ds.tasks, ds.runs, **kw)
    assert res.per_judge["ok"].sum() == n_calls and fake.requests == n_calls
    lines = read_journal(out)
    assert all({"arm_a", "arm_b"} <= set(x) for x in lines)
    assert {x["order"] for x in lines} == {"a_first", "b_first"}
    # A kill -9 mid-run: the journal keeps its first lines and a torn last one.
    raw = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(raw[:20]) + raw[20][: len(raw[20]) // 2])
    before = fake.requests
    with pytest.warns(evalstats.EvalstatsWarning):
        pass_ = evalstats.load_dir(d)  # the torn line is skipped with a warning
    assert len(pass_.judgments) == 20
    with pytest.warns(UserWarning, match="cut short"):
        res = run_judges(ds.tasks, ds.runs, **kw)
    assert fake.requests - before == n_calls - 20  # nothing finished is paid twice
    # The 20 calls the journal kept were paid once; only the lost ones were made again.
    assert sorted(Counter(fake.paid.values()).items()) == [(1, 20), (2, n_calls - 20)]
    assert res.per_judge["done_before"].sum() == 20
    keys = [x["call_key"] for x in read_journal(out)]
    assert len(keys) == len(set(keys)) == n_calls
    # The journal reads back: every judgment a verdict on its own pair, from arm_a's view.
    frame = evalstats.load_frame(d)
    assert len(frame) == n_calls and (frame["status"] == "ok").all()
    j = load_judgments(out)
    rub = rubrics.get("blind-pair")
    seed_order = {"a_first": "with_first", "b_first": "without_first"}
    brute = pd.DataFrame(
        {
            "task_id": j["task_id"],
            "replicate": j["replicate"],
            "judge": j["judge"],
            "arm_a": j["arm_a"],
            "arm_b": j["arm_b"],
            "order": j["order"].astype(str).map(seed_order),  # arm_a shown first: with_first
            "expect": [
                rub.parse(r, order=seed_order[o]).outcome
                for r, o in zip(j["raw"], j["order"].astype(str), strict=True)
            ],
        }
    )
    frame = frame.assign(order=frame["order"].astype(str))
    both = frame.merge(brute, on=["task_id", "replicate", "judge", "arm_a", "arm_b", "order"])
    assert len(both) == n_calls and (both["outcome"] == both["expect"]).all()


def test_cli_pairs_dry_run(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    d = _karm_dir(tmp_path)
    parser = build_parser()
    args = parser.parse_args(
        [
            "judge",
            str(d),
            "--rubric",
            "with-without",
            "--judge",
            J2,
            "--pairs",
            "all",
            "--dry-run",
            "--no-progress",
        ]
    )
    assert args.func(args) == 0
    assert "36" in capsys.readouterr().out  # 3 tasks x 2 replicates x 6 pairs
    args = parser.parse_args(
        ["judge", str(d), "--rubric", "with-without", "--judge", J2, "--dry-run", "--no-progress"]
    )
    with pytest.raises(ParameterError, match="--pairs all\\|reference"):
        args.func(args)


def test_cli_judge_pairs_on_an_imported_three_arm_directory(fake, tmp_path, capsys):
    from evalstats.cli import main

    src = write_hand_karm(tmp_path / "src", n_tasks=3)
    d = import_hand_karm(src, tmp_path / "d", judgments=False)
    argv = ["judge", str(d), "--rubric", "with-without", "--judge", J1, "--judge", J2]
    assert main([*argv, "--pairs", "reference", "--no-progress"]) == 0
    n_calls = 2 * 3 * 2 * 2  # judges x tasks x replicates x pairs against the reference
    assert fake.requests == n_calls
    assert main(["summary", str(d)]) == 0
    frame = evalstats.load_frame(d)
    assert len(frame) == n_calls and (frame["status"] == "ok").all()
    assert set(zip(frame["arm_a"], frame["arm_b"], strict=True)) == {("v1", "none"), ("v2", "none")}


# ----------------------------------------------------------------------------- frame, audit


def test_simulated_k_arm_frame_follows_the_strengths(tmp_path):
    d = _karm_dir(
        tmp_path,
        ("none", "v1", "v2"),
        judges=(J1,),
        n_tasks=60,
        n_replicates=3,
        strengths=[0.0, 0.0, 2.0],
        seed=4,
    )
    truth = json.loads((d / "truth.json").read_text())
    assert truth["strengths"] == {"none": 0.0, "v1": 0.0, "v2": 2.0}
    f = evalstats.load_frame(d)
    net = (
        f.assign(s=f["outcome"].astype(object).map({"win": 1, "tie": 0, "loss": -1}))
        .groupby(["arm_a", "arm_b"])["s"]
        .mean()
    )
    assert abs(net[("v1", "none")]) < 0.15 and net[("v2", "none")] > 0.4
    assert net[("v2", "v1")] > 0.4
    with pytest.raises(ParameterError, match="need arms"):
        evalstats.simulate(tmp_path / "x", reference="none")


def test_audit_flags_the_one_pair_over_the_trigger(tmp_path):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), judges=(J1, J2), n_tasks=10, n_replicates=2)
    lines = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    first = {
        (x["task_id"], x["replicate"], x["arm_a"], x["arm_b"]): x["raw"]
        for x in lines
        if x["judge"] == J1
    }
    flip = {"(a)": "(c)", "(b)": "(a)", "(c)": "(b)"}
    for x in lines:
        if x["judge"] == J2:  # J2 agrees with J1 everywhere but on v2 vs v1 (all differ)
            key = (x["task_id"], x["replicate"], x["arm_a"], x["arm_b"])
            label = rubrics.get("with-without").parse(first[key]).label
            x["raw"] = json.dumps({"label": flip[label] if key[2:] == ("v2", "v1") else label})
    (d / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    table = audit(evalstats.load_dir(d)).set_index("check")
    row = table.loc["judge_disagreement"]
    assert row["status"] == "fail"
    assert "1 pair(s)" in row["detail"] and "v2 vs v1 (with-without)" in row["detail"]
    assert "20 of 20 pairs, 100.0 % of the pairs" in row["detail"]
    assert "v1 vs none (with-without): " in row["detail"].split("Within it:")[1]
    assert table.loc["judge_not_self", "status"] == "pass"


def test_audit_family_rule_per_pair(tmp_path):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), judges=(J1, J2), n_tasks=2, n_replicates=1)
    runs = [json.loads(x) for x in (d / "runs.jsonl").read_text().splitlines()]
    for r in runs:  # v2 ran on a Claude model: the Claude judge is of its family
        if r["arm"] == "v2":
            r["agent_model"] = "anthropic:claude-opus-4"
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    row = audit(evalstats.load_dir(d)).set_index("check").loc["judge_not_self"]
    assert row["status"] == "fail" and row["detail"].startswith("2 of 3 pairs of arms")
    assert "v2 vs none" in row["detail"] and "v2 vs v1" in row["detail"]
    assert "v1 vs none" not in row["detail"]


def test_judgments_name_the_pair_on_every_line_or_none(tmp_path):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), judges=(J1,), n_tasks=2, n_replicates=1)
    lines = (d / "judgments.jsonl").read_text().splitlines()
    x = json.loads(lines[1])
    del x["arm_b"]
    (d / "judgments.jsonl").write_text("\n".join([lines[0], json.dumps(x)]) + "\n")
    with pytest.raises(DataError, match="on every line"):
        load_judgments(d / "judgments.jsonl")
    x = json.loads(lines[1]) | {"order": "with_first"}
    (d / "judgments.jsonl").write_text(json.dumps(x) + "\n")
    with pytest.raises(DataError, match="a_first or b_first"):
        load_judgments(d / "judgments.jsonl")


def test_over_budget_run_makes_its_pairs_no_answer(tmp_path):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), judges=(J1, J2), n_tasks=3, n_replicates=2)
    runs = [json.loads(x) for x in (d / "runs.jsonl").read_text().splitlines()]
    for r in runs:  # v1's run of (T02, 2) overruns the 600 s budget
        if (r["task_id"], r["replicate"], r["arm"]) == ("T02", 2, "v1"):
            r["wall_s"] = 700.0
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    ds = evalstats.load_dir(d)
    f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    hit = (
        (f["task_id"] == "T02")
        & (f["replicate"] == 2)
        & ((f["arm_a"] == "v1") | (f["arm_b"] == "v1"))
    )
    assert (f.loc[hit, "status"] == "no_answer").all() and hit.sum() == 2 * 2  # pairs x judges
    assert (f.loc[~hit, "status"] == "ok").all()
    plan = plan_calls(
        ds.tasks, ds.runs, rubric="with-without", judges=[J2], pairs="all", arms=ds.arms
    )
    assert plan.attrs["no_answer_pairs"] == 2 and len(plan) == 3 * 2 * 3 - 2


def test_cli_simulate_arms(tmp_path, capsys):
    from evalstats.cli import main

    out = tmp_path / "k"
    assert (
        main(
            [
                "simulate",
                str(out),
                "--arms",
                "none,v1,v2",
                "--reference",
                "none",
                "--strengths",
                "0,0.5,1",
                "--tasks",
                "2",
                "--replicates",
                "1",
                "--pairs",
                "reference",
            ]
        )
        == 0
    )
    ds = evalstats.load_dir(out)
    assert ds.arms.ids == ("none", "v1", "v2") and ds.arms.reference == "none"
    assert set(zip(ds.judgments["arm_a"], ds.judgments["arm_b"], strict=True)) == {
        ("v1", "none"),
        ("v2", "none"),
    }
    assert main(["simulate", str(tmp_path / "x"), "--reference", "none"]) == 2
    assert "need --arms" in capsys.readouterr().err


def _split_reply(system: str, user: str, model: str) -> str:
    # Both judges say (a), except gpt-4o on v2 vs v1 (the prompt names both tools).
    pair = "WITH (tool v2):" in user and "WITHOUT (tool v1):" in user
    label = "(c)" if model == "gpt-4o" and pair else "(a)"
    return json.dumps({"label": label, "reasoning": "r", "uncertainty": "low"})


@pytest.mark.slow
def test_adjudicator_is_called_on_the_disputed_pair_only(tmp_path, monkeypatch):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), n_tasks=2, n_replicates=1)
    ds = evalstats.load_dir(d)
    with FakeLLM(api_key=KEY, reply=_split_reply) as server:
        server.point_sdks(monkeypatch)
        run_judges(
            ds.tasks,
            ds.runs,
            rubric="with-without",
            judges=[J1, J2],
            out=d / "judgments.jsonl",
            pairs="all",
            arms=ds.arms,
            options=JudgeOptions(adjudicate="openai:gpt-4.1", progress=False),
        )
    lines = read_journal(d / "judgments.jsonl")
    adjudicated = [x for x in lines if x["judge"] == "openai:gpt-4.1"]
    assert len(lines) == 2 * 2 * 3 + 2  # two judges on every pair, the third on 2 units
    assert {(x["arm_a"], x["arm_b"]) for x in adjudicated} == {("v2", "v1")}
    assert sorted(x["task_id"] for x in adjudicated) == ["T01", "T02"]


@pytest.mark.slow
def test_batch_mode_keeps_the_pair(fake, tmp_path):
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), n_tasks=2, n_replicates=1)
    ds = evalstats.load_dir(d)
    fake.batch_polls = 1
    res = run_judges(
        ds.tasks,
        ds.runs,
        rubric="blind-pair",
        judges=[J2],
        out=d / "j.jsonl",
        pairs="all",
        arms=ds.arms,
        options=JudgeOptions(progress=False, batch=True, poll_interval=0.01),
    )
    lines = read_journal(d / "j.jsonl")
    assert res.failed == 0 and len(lines) == 2 * 3
    plan = plan_calls(
        ds.tasks, ds.runs, rubric="blind-pair", judges=[J2], pairs="all", arms=ds.arms
    )
    want = {(r.call_key, r.arm_a, r.arm_b, r.order) for r in plan.itertuples()}
    assert {(x["call_key"], x["arm_a"], x["arm_b"], x["order"]) for x in lines} == want


def test_two_arm_data_with_pairs_is_judged_as_before(tmp_path):
    sim = evalstats.simulate(tmp_path, n_tasks=3, n_replicates=2, seed=5)
    ds = evalstats.load_dir(sim.out_dir)
    for rubric, orders in (("with-without", "random"), ("blind-pair", "both")):
        before = plan_calls(ds.tasks, ds.runs, rubric=rubric, judges=[J2], orders=orders)
        for pairs in ("all", "reference"):
            now = plan_calls(
                ds.tasks, ds.runs, rubric=rubric, judges=[J2], orders=orders, pairs=pairs
            )
            pd.testing.assert_frame_equal(now, before)
    assert "arm_a" not in before.columns and set(before["order"]) <= {"with_first", "without_first"}


def test_every_audit_check_is_evaluated_per_pair_of_arms(tmp_path):
    # One pair's judge fails on every call; the other pairs are clean: the failure-rate check
    # fails naming that pair only, and no check is left unknown.
    d = _karm_dir(tmp_path, ("none", "v1", "v2"), judges=(J1, J2), n_tasks=4, n_replicates=2)
    lines = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    broken = 0
    for x in lines:
        if (x["arm_a"], x["arm_b"]) == ("v2", "v1") and x["judge"] == J2:
            x.update(raw=None, error="APIError: simulated", output_tokens=0)
            broken += 1
    (d / "judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    table = audit(evalstats.load_dir(d)).set_index("check")
    assert "unknown" not in set(table["status"].astype(str))
    row = table.loc["judge_failure_rate"]  # over its threshold the two-arm check warns
    assert row["status"] == "warn"
    assert row["detail"].startswith("1 of 3 pairs of arms: v2 vs v1 (warn): ")
    assert (
        f"{J2} on with-without: {broken} of {broken} pairs, 100.0 % of the pairs" in row["detail"]
    )
    # The two-arm audit of the pair gives the same row, the pair's arms as WITH / WITHOUT.
    assert table.loc["same_agent_both_arms", "status"] == "pass"
    # Billed usage and no transcripts: nothing to compare, and the cost's source is said.
    tokens = table.loc["reported_tokens", "detail"]
    assert "have no transcript" in tokens and "the cost ratios use the billed counts" in tokens
