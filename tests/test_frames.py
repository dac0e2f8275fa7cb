"""Verdict frames: statuses, de-blinding, no_answer, superseded failures, wide frame."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from conftest import make_run, make_task, write_jsonl

import evalstats
from evalstats import DataError

WW = evalstats.rubrics.get("with-without")
BP = evalstats.rubrics.get("blind-pair")


def ww_raw(label: str) -> str:
    return json.dumps(
        {
            "label": label,
            "reasoning": "r",
            "facts_correct_with": "3/4",
            "facts_correct_without": "2/4",
            "hallucinations_with": "0",
            "hallucinations_without": "1",
            "cost_ratio": "0.5",
            "uncertainty": "low",
        }
    )


def bp_raw(verdict: str, a: int, b: int) -> str:
    def block(s: int) -> dict:
        return {
            "correctness": s,
            "specificity": s,
            "completeness": s,
            "hallucination_safety": s,
            "notes": "n",
        }

    return (
        "```json\n"
        + json.dumps(
            {"agent_a": block(a), "agent_b": block(b), "verdict": verdict, "verdict_reasoning": "x"}
        )
        + "\n```"
    )


def judgment(task_id, replicate, judge, rubric, raw, *, order=None, error=None, at="01", jid=None):
    r = WW if rubric == "with-without" else BP
    return {
        "judgment_id": jid or f"{task_id}-{replicate}-{judge}-{rubric}-{order}-{at}",
        "task_id": task_id,
        "replicate": replicate,
        "judge": judge,
        "rubric": rubric,
        "prompt_revision": r.revision,
        "prompt_sha256": r.sha256,
        "order": order,
        "raw": raw,
        "created_at": f"2026-05-03T00:00:{at}Z",
        "input_tokens": 100,
        "output_tokens": 20,
        "usd": 0.001,
        "latency_s": 1.0,
        "error": error,
    }


@pytest.fixture
def dataset(tmp_path):
    tasks = [make_task("T1", budget_wall_s=100.0), make_task("T2", budget_wall_s=100.0)]
    runs = []
    for t in ("T1", "T2"):
        for r in (1, 2, 3):
            # T2/3: WITHOUT ran over the wall-clock budget -> no_answer pair
            runs.append(make_run(t, r, "with", answer="short answer", wall_s=50.0))
            runs.append(
                make_run(
                    t,
                    r,
                    "without",
                    answer="a much longer answer " * 3,
                    wall_s=150.0 if (t, r) == ("T2", 3) else 70.0,
                )
            )
    J1, J2 = "anthropic:claude-x", "openai:gpt-y"
    js = [
        judgment("T1", 1, J1, "with-without", ww_raw("(a)")),
        judgment("T1", 1, J2, "with-without", ww_raw("b")),
        judgment("T1", 2, J1, "with-without", ww_raw("(c) WITH was worse")),
        judgment("T1", 2, J2, "with-without", "I refuse to label this."),
        judgment("T1", 3, J1, "with-without", None, error="RateLimitError: 429", at="01"),
        judgment("T1", 3, J1, "with-without", ww_raw("(a)"), at="05"),  # retry succeeded
        judgment("T1", 3, J2, "with-without", None, error="InternalServerError: 500"),
        # blind rubric, both orders of the same pair, same judge
        judgment("T2", 1, J1, "blind-pair", bp_raw("a_wins", 5, 2), order="with_first"),
        judgment("T2", 1, J1, "blind-pair", bp_raw("a_wins", 5, 2), order="without_first"),
        judgment("T2", 2, J1, "blind-pair", bp_raw("b_wins", 1, 4), order="with_first"),
        judgment("T2", 2, J1, "blind-pair", bp_raw("tie", 3, 3), order="without_first"),
        # over-budget pair judged anyway by J1 (must still be no_answer, raw kept)
        judgment("T2", 3, J1, "with-without", ww_raw("(a)")),
    ]
    write_jsonl(tmp_path / "tasks.jsonl", tasks)
    write_jsonl(tmp_path / "runs.jsonl", runs)
    write_jsonl(tmp_path / "judgments.jsonl", js)
    return tmp_path


def frame_of(d):
    ds = evalstats.load_dir(d)
    return evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks), ds


def row(f, task, rep, judge, rubric, order=None):
    m = (f.task_id == task) & (f.replicate == rep) & (f.judge == judge) & (f.rubric == rubric)
    m &= f.order.isna() if order is None else (f.order == order)
    sub = f.loc[m]
    assert len(sub) == 1, sub
    return sub.iloc[0]


def test_columns_and_dtypes(dataset):
    f, _ = frame_of(dataset)
    contract = evalstats._schema.VERDICT_COLUMNS
    assert tuple(f.columns[: len(contract)]) == contract
    # Then what the runs say about their token counts (issue 22 item 1), when they say it.
    assert set(f.columns[len(contract) :]) <= {
        "billed_with",
        "billed_without",
        "tokens_counted_from",
    }
    assert list(f["status"].cat.categories) == ["ok", "no_answer", "invalid", "error", "conflict"]
    assert f["outcome"].cat.ordered and list(f["outcome"].cat.categories) == ["loss", "tie", "win"]


def test_with_without_statuses(dataset):
    f, _ = frame_of(dataset)
    J1, J2 = "anthropic:claude-x", "openai:gpt-y"
    assert row(f, "T1", 1, J1, "with-without")[["status", "outcome", "label"]].tolist() == [
        "ok",
        "win",
        "(a)",
    ]
    assert row(f, "T1", 1, J2, "with-without")["outcome"] == "tie"
    assert row(f, "T1", 2, J1, "with-without")["outcome"] == "loss"
    bad = row(f, "T1", 2, J2, "with-without")
    assert bad["status"] == "invalid" and pd.isna(bad["outcome"])
    assert bad["raw"] == "I refuse to label this." and "JSON" in bad["parse_error"]
    # failure superseded by a later success of the same call
    assert row(f, "T1", 3, J1, "with-without")["status"] == "ok"
    assert row(f, "T1", 3, J2, "with-without")["status"] == "error"
    assert f.attrs["superseded_failures"] == 1


def test_deblinding_both_orders(dataset):
    f, _ = frame_of(dataset)
    J1 = "anthropic:claude-x"
    wf = row(f, "T2", 1, J1, "blind-pair", "with_first")  # A = WITH wins
    nf = row(f, "T2", 1, J1, "blind-pair", "without_first")  # A = WITHOUT wins
    assert (wf["outcome"], nf["outcome"]) == ("win", "loss")
    assert (wf["with_correctness"], wf["without_correctness"]) == (5, 2)
    assert (nf["with_correctness"], nf["without_correctness"]) == (2, 5)
    b = row(f, "T2", 2, J1, "blind-pair", "with_first")  # B = WITHOUT wins
    assert b["outcome"] == "loss" and b["with_specificity"] == 1 and b["without_specificity"] == 4
    assert row(f, "T2", 2, J1, "blind-pair", "without_first")["outcome"] == "tie"


def test_over_budget_arm_names_the_arm_that_ran_over(dataset, tmp_path):
    f, _ = frame_of(dataset)
    assert f["over_budget_arm"].dtype == evalstats._schema.OVER_BUDGET_DTYPE
    over = (f.task_id == "T2") & (f.replicate == 3)
    assert set(f.loc[over, "over_budget_arm"].astype(str)) == {"without"}
    assert f.loc[~over, "over_budget_arm"].isna().all()
    # every no_answer row says which arm went over; no in-budget row does
    assert (f["status"].eq("no_answer") == f["over_budget_arm"].notna()).all()

    # over the 100 s wall-clock budget: WITH on T1/1, both on T1/2, WITHOUT on T1/3
    d = tmp_path / "arms"
    d.mkdir()
    tasks = [make_task("T1", budget_wall_s=100.0)]
    runs = []
    for r, (w, wo) in enumerate([(150.0, 50.0), (150.0, 150.0), (50.0, 150.0), (50.0, 50.0)], 1):
        runs.append(make_run("T1", r, "with", answer="a", wall_s=w))
        runs.append(make_run("T1", r, "without", answer="b", wall_s=wo))
    js = [judgment("T1", r, "openai:gpt-y", "with-without", ww_raw("(a)")) for r in (1, 2, 3, 4)]
    write_jsonl(d / "tasks.jsonl", tasks)
    write_jsonl(d / "runs.jsonl", runs)
    write_jsonl(d / "judgments.jsonl", js)
    g, _ = frame_of(d)
    arms = g.sort_values("replicate")["over_budget_arm"].astype(object).tolist()
    assert arms[:3] == ["with", "both", "without"] and pd.isna(arms[3])
    assert g.sort_values("replicate")["status"].astype(str).tolist() == ["no_answer"] * 3 + ["ok"]


def test_over_budget_pairs_are_no_answer(dataset):
    f, _ = frame_of(dataset)
    pair = f.loc[(f.task_id == "T2") & (f.replicate == 3)]
    # judged by J1 with-without (kept, raw preserved) + added rows for the other judge/rubric combos
    assert set(pair["status"]) == {"no_answer"}
    assert pair["outcome"].isna().all()
    judged = row(f, "T2", 3, "anthropic:claude-x", "with-without")
    assert '"label"' in judged["raw"]
    combos = set(zip(pair["judge"].astype(str), pair["rubric"].astype(str), strict=True))
    assert combos == {
        ("anthropic:claude-x", "with-without"),
        ("openai:gpt-y", "with-without"),
        ("anthropic:claude-x", "blind-pair"),
    }


def test_cost_ratio_from_counted_tokens(dataset):
    f, ds = frame_of(dataset)
    tw = evalstats.count_tokens("short answer")
    two = evalstats.count_tokens("a much longer answer " * 3)
    ok = f.loc[f.status == "ok"]
    assert (ok["tokens_with"] == tw).all() and (ok["tokens_without"] == two).all()
    np.testing.assert_allclose(ok["cost_ratio"], tw / two)
    assert (ok.loc[ok.rubric == "with-without", "judge_cost_ratio"] == 0.5).all()


def test_unknown_pair_names_line(dataset):
    p = dataset / "judgments.jsonl"
    lines = p.read_text().splitlines()
    lines.append(json.dumps(judgment("T9", 1, "x:y", "with-without", ww_raw("(a)"))))
    p.write_text("\n".join(lines) + "\n")
    ds = evalstats.load_dir(dataset)
    with pytest.raises(DataError) as info:
        evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    assert info.value.line == len(lines) and info.value.field == "task_id"


def test_blind_without_order_is_invalid_not_dropped(dataset):
    p = dataset / "judgments.jsonl"
    with p.open("a") as fh:
        fh.write(
            json.dumps(judgment("T1", 1, "openai:gpt-y", "blind-pair", bp_raw("a_wins", 4, 3)))
            + "\n"
        )
    f, _ = frame_of(dataset)
    r = row(f, "T1", 1, "openai:gpt-y", "blind-pair")
    assert r["status"] == "invalid" and "order" in r["parse_error"]


def test_wide_by_judge(dataset):
    f, _ = frame_of(dataset)
    w = evalstats.wide_by_judge(f, rubric="with-without")
    keys = ["task_id", "replicate", "arm_a", "arm_b"]  # the pair of arms is part of the key
    assert list(w.columns) == [*keys, "anthropic:claude-x", "openai:gpt-y"]
    assert len(w) == 4  # T1 x3 and T2/3 (no_answer); T2/1-2 only have blind judgments
    first = w.iloc[0]
    assert (first["anthropic:claude-x"], first["openai:gpt-y"]) == ("win", "tie")
    wb = evalstats.wide_by_judge(f, rubric="blind-pair")
    assert "order" in wb.columns
    with pytest.raises(ValueError, match="several rubrics"):
        evalstats.wide_by_judge(f)


def _with_extra_lines(d, *lines):
    with (d / "judgments.jsonl").open("a") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return evalstats.load_dir(d)


def test_two_different_answers_for_one_call_are_a_conflict(dataset):
    J1 = "anthropic:claude-x"
    # T1/1 by J1 said (a) (a win); a second successful line for the same call says (c).
    ds = _with_extra_lines(
        dataset, judgment("T1", 1, J1, "with-without", ww_raw("(c)"), at="09", jid="late")
    )
    f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    r = row(f, "T1", 1, J1, "with-without")
    assert r["status"] == "conflict" and pd.isna(r["outcome"])
    assert "line 1" in r["parse_error"] and "late" in r["parse_error"]
    assert f.attrs["conflicts"] == 1 and len(f) == len(frame_of(dataset)[0])
    # Neither answer is counted as a judgment.
    assert r["judgment_id"] != "late" and r["raw"] == ww_raw("(a)")
    # The user's rules.
    first = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks, on_conflict="first")
    last = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks, on_conflict="last")
    assert row(first, "T1", 1, J1, "with-without")["outcome"] == "win"
    assert row(last, "T1", 1, J1, "with-without")["outcome"] == "loss"
    assert (first["status"] == "conflict").sum() == 0 == (last["status"] == "conflict").sum()
    with pytest.raises(DataError, match="different successful answers") as err:
        evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks, on_conflict="error")
    assert err.value.line == 13 and "late" in str(err.value) and "line 1 " in str(err.value)
    with pytest.raises(ValueError, match="on_conflict"):
        evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks, on_conflict="newest")


def test_conflict_by_call_key_and_same_answer_twice_is_one_judgment(tmp_path):
    tasks = [make_task("T1")]
    runs = [make_run("T1", 1, "with"), make_run("T1", 1, "without")]
    J = "openai:gpt-y"
    lines = [
        dict(judgment("T1", 1, J, "with-without", ww_raw("(a)"), jid="a"), call_key="k1"),
        dict(judgment("T1", 1, J, "with-without", ww_raw("(a)"), at="02", jid="b"), call_key="k1"),
    ]
    write_jsonl(tmp_path / "tasks.jsonl", tasks)
    write_jsonl(tmp_path / "runs.jsonl", runs)
    write_jsonl(tmp_path / "judgments.jsonl", lines)
    f, _ = frame_of(tmp_path)
    assert f["status"].tolist() == ["ok"] and f["outcome"].tolist() == ["win"]
    ds = _with_extra_lines(
        tmp_path,
        dict(judgment("T1", 1, J, "with-without", ww_raw("(c)"), at="03", jid="c"), call_key="k1"),
    )
    f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    assert f["status"].tolist() == ["conflict"]
    assert all(f"judgment_id {x}" in f["parse_error"].iloc[0] for x in "abc")
