"""Methodology audit: each seed rule flipped on a simulated dataset gives the exact status."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import evalstats
from evalstats.methodology import (
    AUDIT_CHECKS,
    AUDIT_STATUSES,
    AuditLimits,
    audit,
    audit_rows,
    model_family,
)
from evalstats.plan import load_plan

CLEAN = dict(
    n_tasks=8,
    n_replicates=3,
    judge_noise=0.0,
    over_budget_rate=0.0,
    malformed_rate=0.0,
    error_rate=0.0,
    orders="both",
    seed=11,
)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


class Sim:
    """A simulated dataset whose files can be edited before loading."""

    def __init__(self, base: Path, out: Path):
        shutil.copytree(base, out)
        self.dir = out
        self.tasks = read_jsonl(out / "tasks.jsonl")
        self.runs = read_jsonl(out / "runs.jsonl")
        self.judgments = read_jsonl(out / "judgments.jsonl")
        # The simulator over-reports tokens now and then; a clean baseline reports none.
        for r in self.runs:
            r["reported_tokens"] = None
        # A clean dataset declares its analysis plan a day before the first judgment.
        first = min(pd.Timestamp(j["created_at"]) for j in self.judgments)
        self.plan: dict | None = {
            "written_at": (first - pd.Timedelta(days=1)).isoformat(),
            "primary_rubric": "with-without",
            "primary_judge": sorted({j["judge"] for j in self.judgments})[0],
            "statistic": "net_win",
            "tasks": len(self.tasks),
            "replicates": CLEAN["n_replicates"],
            "judges": sorted({j["judge"] for j in self.judgments}),
            "rubrics": sorted({j["rubric"] for j in self.judgments}),
        }

    def write_plan(self) -> None:
        path = self.dir / "plan.toml"
        if self.plan is None:
            path.unlink(missing_ok=True)
            return
        # JSON strings, integers and arrays of strings are TOML too; a time is a bare value.
        lines = [
            f"{k} = {v}" if k == "written_at" else f"{k} = {json.dumps(v)}"
            for k, v in self.plan.items()
        ]
        path.write_text("\n".join(lines) + "\n")

    def load(self, **kw) -> evalstats.Dataset:
        write_jsonl(self.dir / "tasks.jsonl", self.tasks)
        write_jsonl(self.dir / "runs.jsonl", self.runs)
        write_jsonl(self.dir / "judgments.jsonl", self.judgments)
        self.write_plan()
        return evalstats.load_dir(self.dir, **kw)

    def audit(self, load_kw=None, **kw) -> pd.DataFrame:
        return audit(self.load(**(load_kw or {})), **kw)


def row(table: pd.DataFrame, check: str) -> tuple[str, str]:
    hit = table.loc[table["check"] == check]
    assert len(hit) == 1
    return str(hit["status"].iloc[0]), str(hit["detail"].iloc[0])


@pytest.fixture(scope="module")
def clean_base(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("clean")
    evalstats.simulate(out, **CLEAN)
    return out


@pytest.fixture
def sim(clean_base, tmp_path) -> Sim:
    return Sim(clean_base, tmp_path / "data")


def make_sim(tmp_path: Path, name: str, **overrides) -> Sim:
    base = tmp_path / f"base_{name}"
    evalstats.simulate(base, **{**CLEAN, **overrides})
    return Sim(base, tmp_path / name)


# --------------------------------------------------------------------------- model families


@pytest.mark.parametrize(
    "model, family",
    [
        ("anthropic:claude-sonnet-4-20250514", "anthropic"),
        ("claude-3-5-haiku", "anthropic"),
        ("bedrock:anthropic.claude-3-sonnet", "anthropic"),
        ("openai:gpt-5.4", "openai"),
        ("openai:o3-mini", "openai"),
        ("o1", "openai"),
        ("openrouter:openai/o4-mini", "openai"),
        ("azure:gpt-4o", "openai"),
        ("google:gemini-2.5-pro", "google"),
        ("vertex:gemini-1.5-flash", "google"),
        ("qwen:qwen3-coder-480b", "qwen"),
        ("together:Qwen/Qwen2.5-Coder-32B", "qwen"),
        ("together:meta-llama/Llama-3-70b", "meta"),
        ("mistral:codestral-latest", "mistral"),
        ("mistral-large", "mistral"),
        ("deepseek:deepseek-chat", "deepseek"),
        ("anthropic:some-future-model", "anthropic"),  # provider prefix as the fallback
        ("acme:zeta-7b", "unknown"),
        ("bedrock:titan-express", "unknown"),  # a hosting provider says nothing
        ("proto1-model", "unknown"),  # "o1" inside a word is not OpenAI's o1
    ],
)
def test_model_family(model, family):
    assert model_family(model) == family


def test_model_family_explicit_mapping_wins():
    assert model_family("acme:zeta-7b", {"acme:zeta-7b": "acme"}) == "acme"
    assert model_family("openai:gpt-5.4", {"openai:gpt-5.4": "custom"}) == "custom"


# --------------------------------------------------------------------------- structure


def test_clean_dataset_passes_every_check(sim):
    table = sim.audit()
    assert table.columns.tolist() == ["check", "status", "detail", "rule"]
    assert table["check"].tolist() == list(AUDIT_CHECKS)
    assert list(table["status"].cat.categories) == list(AUDIT_STATUSES)
    assert table["status"].cat.ordered
    assert (table["status"] == "pass").all(), table.loc[table["status"] != "pass"].to_dict(
        "records"
    )
    assert table["rule"].str.len().gt(20).all()
    status, detail = row(table, "both_arms_present")
    assert detail == "All 24 pairs have both arms."
    status, detail = row(table, "blind_order_balance")
    # Both orders of each of the 24 pairs: 48 pair-orders, the pairs named beside, and each
    # percentage of its own denominator.
    assert "24 of 48 pair-orders (24 pairs), 50.0 % of the pair-orders (exact binomial" in detail
    status, detail = row(table, "judge_disagreement")
    assert "disagree on 0 of 24 pairs, 0.0 % of the pairs" in detail
    assert "disagree on 0 of 48 pair-orders (24 pairs), 0.0 % of the pair-orders" in detail


def test_dataset_and_separate_frames_agree(sim):
    ds = sim.load()
    a = audit(ds)
    b = audit(ds.tasks, ds.runs, ds.judgments, plan=ds.plan)
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    c = audit(ds.tasks, ds.runs, ds.judgments, frame=frame, plan=ds.plan)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_bad_arguments(sim):
    ds = sim.load()
    with pytest.raises(TypeError, match="either a Dataset"):
        audit(ds, ds.runs)
    with pytest.raises(TypeError, match="needs runs"):
        audit(ds.tasks)
    with pytest.raises(ValueError, match="disagreement_threshold"):
        audit(ds, disagreement_threshold=1.5)


def test_without_judgments_judge_checks_are_unknown(sim):
    ds = sim.load()
    table = audit(ds.tasks, ds.runs)
    judge_checks = [
        "judge_not_self",
        "judge_families",
        "prompt_hash_pinned",
        "judge_disagreement",
        "judgment_coverage",
        "blind_order_balance",
        "judge_failure_rate",
    ]
    for check in judge_checks:
        # Issue 22 item 5: missing evidence reads unknown, never pass (nor a mere warn).
        assert row(table, check) == ("unknown", "No judgments given: not checked.")
    assert audit_rows(table, "unknown")["check"].tolist() == judge_checks
    assert row(table, "canonical_before_runs")[0] == "pass"


def test_plain_runs_are_annotated(sim):
    ds = sim.load()
    plain = ds.runs[list(evalstats._schema.RUN_FIELDS)]
    table = audit(ds.tasks, plain, ds.judgments, plan=ds.plan)
    assert (table["status"] == "pass").all()


# --------------------------------------------------------------------------- judge families


def test_self_evaluation_fails(tmp_path):
    # Issue 22: the seed says run the judge as a different model; a same-family judge fails.
    s = make_sim(tmp_path, "self", agent_model="anthropic:claude-sonnet-4-20250514")
    status, detail = row(s.audit(), "judge_not_self")
    assert status == "fail"
    assert "1 of 2 judges share a model family" in detail
    assert "anthropic:claude-sonnet-4-20250514 (anthropic)" in detail
    assert "self-evaluation" in detail


def test_agent_family_override(sim):
    status, detail = row(sim.audit(agent_family="openai"), "judge_not_self")
    assert status == "fail"
    assert "openai:gpt-5.4 (openai)" in detail


def test_unknown_agent_family_is_unknown(sim):
    for r in sim.runs:
        r["agent_model"] = "acme:zeta-7b"
    table = sim.audit()
    status, detail = row(table, "judge_not_self")
    assert status == "unknown" and "Model family unknown for acme:zeta-7b" in detail
    table = audit(sim.load(), families={"acme:zeta-7b": "acme"})
    assert row(table, "judge_not_self")[0] == "pass"


def test_one_family_fails(tmp_path):
    s = make_sim(
        tmp_path, "onefam", judges=("anthropic:claude-sonnet-4-20250514", "anthropic:claude-opus-4")
    )
    status, detail = row(s.audit(), "judge_families")
    assert status == "fail"
    assert "Fewer than two judge families for blind-pair, with-without" in detail
    assert "2 judges, families ['anthropic']" in detail


def test_single_judge_fails(tmp_path):
    s = make_sim(tmp_path, "onejudge", judges=("openai:gpt-5.4",))
    table = s.audit()
    status, detail = row(table, "judge_families")
    assert status == "fail" and "1 judges, families ['openai']" in detail
    # Disagreement needs two judges.
    assert row(table, "judge_disagreement")[0] == "warn"


def test_unknown_judge_family_warns(tmp_path):
    s = make_sim(tmp_path, "unknownjudge", judges=("acme:zeta-judge", "openai:gpt-5.4"))
    status, detail = row(s.audit(), "judge_families")
    assert status == "warn"
    assert "families ['openai', 'unknown']" in detail


# --------------------------------------------------------------------------- canonical answers


def test_canonical_written_after_first_run_fails(sim):
    first_run = min(pd.Timestamp(r["started_at"]) for r in sim.runs if r["task_id"] == "T03")
    sim.tasks[2]["canonical_written_at"] = (first_run + pd.Timedelta(minutes=5)).isoformat()
    status, detail = row(sim.audit(), "canonical_before_runs")
    assert status == "fail"
    assert detail.startswith("1 of 8 tasks have a canonical answer written at or after")
    assert "T03 (written" in detail and "T01" not in detail


def test_canonical_written_at_the_same_instant_fails(sim):
    first_run = min(pd.Timestamp(r["started_at"]) for r in sim.runs if r["task_id"] == "T01")
    sim.tasks[0]["canonical_written_at"] = first_run.isoformat()
    assert row(sim.audit(), "canonical_before_runs")[0] == "fail"


# --------------------------------------------------------------------------- arms and budgets


def test_different_agent_in_one_arm_fails(sim):
    sim.runs[1]["agent_model"] = "qwen:qwen2.5-coder-32b"  # T01 replicate 1, WITHOUT
    status, detail = row(sim.audit(), "same_agent_both_arms")
    assert status == "fail"
    assert "1 of 24 pairs ran different agent models" in detail
    assert "(T01, 1): qwen:qwen3-coder-480b vs qwen:qwen2.5-coder-32b" in detail


def test_missing_arm_fails(sim):
    del sim.runs[3]  # T01 replicate 2, WITHOUT
    sim.judgments = [
        j for j in sim.judgments if not (j["task_id"] == "T01" and j["replicate"] == 2)
    ]
    with pytest.warns(evalstats.EvalstatsWarning):
        table = sim.audit(load_kw={"allow_incomplete": True})
    status, detail = row(table, "both_arms_present")
    assert status == "fail"
    assert detail == "1 of 24 pairs lack an arm: (T01, 2) only with."


def test_zero_budget_fails(sim):
    sim.tasks[4]["budget_tokens"] = 0
    table = sim.audit()
    status, detail = row(table, "budgets_symmetric")
    assert status == "fail" and "1 tasks have a zero budget" in detail and "T05" in detail


def test_budget_binding_one_arm_warns(sim):
    over = 0
    for r in sim.runs:
        if r["arm"] == "with" and r["task_id"] in ("T01", "T02", "T03"):
            r["wall_s"] = 5000.0
            over += 1
    assert over == 9
    table = sim.audit()
    status, detail = row(table, "budgets_symmetric")
    p = sps.binomtest(9, 9, 0.5).pvalue
    assert status == "warn"
    assert "binds WITH more often" in detail
    assert "WITH only 9, WITHOUT only 0, both 0 of 24 pairs" in detail
    assert f"p = {p:.3g}" in detail
    status, detail = row(table, "no_answer_rate")
    assert status == "warn" and "9 of 24 pairs (37.5 % of the pairs) are no_answer" in detail
    assert "in 3 tasks" in detail


def test_balanced_over_budget_passes(sim):
    sim.runs[0]["wall_s"] = 5000.0  # T01/1 WITH
    sim.runs[3]["wall_s"] = 5000.0  # T01/2 WITHOUT
    table = sim.audit()
    status, detail = row(table, "budgets_symmetric")
    assert status == "pass" and "WITH only 1, WITHOUT only 1, both 0 of 24" in detail
    assert row(table, "no_answer_rate") == (
        "pass",
        "2 of 24 pairs (8.3 % of the pairs) are no_answer (over budget), in 1 tasks; "
        "threshold 10.0 % of the pairs.",
    )
    assert row(table, "no_answer_rate")[0] == "pass"
    assert row(table, "judgment_coverage")[0] == "pass"  # over-budget pairs need no judge
    # A verdict frame alone (no raw judgments) gives the same table: its no_answer rows
    # carry no order and must not count as unordered blind judgments.
    ds = sim.load()
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    assert (frame["status"] == "no_answer").sum() > 0
    alone = audit(ds.tasks, ds.runs, frame=frame, plan=ds.plan)
    timed = alone["check"] == "plan_before_judging"  # a frame carries no created_at
    assert row(alone, "plan_before_judging")[0] == "warn"
    assert alone.loc[~timed, "status"].tolist() == table.loc[~timed, "status"].tolist()
    # raw judgments also count unscored ones
    same = ~alone["check"].isin(["blind_order_balance", "plan_before_judging"])
    assert alone.loc[same, "detail"].tolist() == table.loc[same, "detail"].tolist()
    assert "22 of 44 pair-orders" in row(alone, "blind_order_balance")[1]
    assert "(22 pairs)" in row(alone, "blind_order_balance")[1]


def test_over_budget_pair_scored_as_verdict_fails(sim):
    sim.runs[0]["wall_s"] = 5000.0  # T01/1 over budget
    ds = sim.load()
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    hit = (frame["task_id"] == "T01") & (frame["replicate"] == 1)
    assert (frame.loc[hit, "status"] == "no_answer").all()
    assert row(audit(ds, frame=frame), "budgets_symmetric")[0] == "pass"
    forged = frame.copy()
    forged.loc[hit, "status"] = "ok"
    forged.loc[hit, "outcome"] = "loss"
    status, detail = row(audit(ds.tasks, ds.runs, ds.judgments, frame=forged), "budgets_symmetric")
    assert status == "fail"
    assert f"{int(hit.sum())} verdicts on over-budget pairs are not scored no_answer" in detail


# --------------------------------------------------------------------------- prompt pins


def test_changed_prompt_sha_fails(sim):
    sim.judgments[5]["prompt_sha256"] = "0" * 64
    n = len(sim.judgments)
    status, detail = row(sim.audit(), "prompt_hash_pinned")
    assert status == "fail"
    assert detail.startswith(f"1 of {n} judgments fail the pin")
    assert "000000000000" in detail


def test_mixed_revisions_fail(sim):
    bp = [j for j in sim.judgments if j["rubric"] == "blind-pair"]
    for j in bp[:3]:
        j["prompt_revision"] = 2
    status, detail = row(sim.audit(), "prompt_hash_pinned")
    assert status == "fail"
    assert "3 judgments of blind-pair at revision 2, but the packaged prompt is revision 1" in (
        detail
    )
    assert "blind-pair mixes prompt revisions [1, 2]" in detail


# --------------------------------------------------------------------------- disagreement


def independent_disagreement(ds, rubric):
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    wide = evalstats.wide_by_judge(frame, rubric=rubric)
    judges = [c for c in wide.columns if ":" in c]
    both = wide.dropna(subset=judges)
    n_pairs = len(both[["task_id", "replicate"]].drop_duplicates())
    return int((both[judges[0]] != both[judges[1]]).sum()), len(both), n_pairs


def test_noisy_judges_fail_disagreement(tmp_path):
    s = make_sim(tmp_path, "noisy", judge_noise=2.0)
    ds = s.load()
    table = audit(ds)
    status, detail = row(table, "judge_disagreement")
    assert status == "fail"
    assert "Above the 20.0 % disagreement trigger" in detail
    for rubric, unit in (("with-without", "pairs"), ("blind-pair", "pair-orders")):
        k, n, n_pairs = independent_disagreement(ds, rubric)
        assert k / n > 0.2
        of_pairs = f" ({n_pairs} pairs)" if unit == "pair-orders" else ""
        assert n_pairs < n if unit == "pair-orders" else n_pairs == n
        pct = f"{100 * k / n:.1f} % of the {unit}"
        assert f"disagree on {k} of {n} {unit}{of_pairs}, {pct} > threshold" in detail
    relaxed = audit(ds, disagreement_threshold=1.0)
    assert row(relaxed, "judge_disagreement")[0] == "pass"


def test_disagreement_threshold_is_inclusive(sim):
    """Exactly at the threshold passes: the seed's trigger is '> 20 %'."""
    ww = [
        j for j in sim.judgments if j["rubric"] == "with-without" and j["judge"] == "openai:gpt-5.4"
    ]
    for j in ww[:4]:  # flip 4 of the 24 verdicts: 16.7 % disagreement
        raw = json.loads(
            j["raw"].split("```json\n")[-1].split("\n```")[0] if "```" in j["raw"] else j["raw"]
        )
        raw["label"] = "(c)" if not str(raw["label"]).lower().startswith("(c") else "(a)"
        j["raw"] = json.dumps(raw)
    ds = sim.load()
    k, n, _ = independent_disagreement(ds, "with-without")
    assert (k, n) == (4, 24)
    assert row(audit(ds, disagreement_threshold=4 / 24), "judge_disagreement")[0] == "pass"
    assert row(audit(ds, disagreement_threshold=4 / 24 - 1e-9), "judge_disagreement")[0] == ("fail")


# --------------------------------------------------------------------------- coverage, orders


def test_unjudged_pair_warns(sim):
    sim.judgments = [
        j
        for j in sim.judgments
        if not (
            j["task_id"] == "T02"
            and j["replicate"] == 3
            and j["judge"] == "openai:gpt-5.4"
            and j["rubric"] == "with-without"
        )
    ]
    status, detail = row(sim.audit(), "judgment_coverage")
    assert status == "warn"
    assert detail.endswith("openai:gpt-5.4 on with-without: 1 of 24 pairs unjudged.")


def test_unbalanced_orders_warn(tmp_path):
    s = make_sim(tmp_path, "orders", orders="random")
    bp = [j for j in s.judgments if j["rubric"] == "blind-pair"]
    for j in bp:
        j["order"] = "with_first"
    status, detail = row(s.audit(), "blind_order_balance")
    p = sps.binomtest(24, 24, 0.5).pvalue
    assert status == "warn"
    # One order per pair: 24 pair-orders of 24 pairs.
    text = "WITH shown first in 24 of 24 pair-orders (24 pairs), 100.0 % of the pair-orders"
    assert f"{text} (exact binomial p = {p:.3g})" in detail


def test_blind_judgment_without_order_warns(sim):
    bp = [j for j in sim.judgments if j["rubric"] == "blind-pair"]
    bp[0]["order"] = None
    status, detail = row(sim.audit(), "blind_order_balance")
    assert status == "warn"
    assert "1 judgments without an order" in detail


def test_order_rules(tmp_path):
    """Warn on p < alpha or a share more than 0.1 from 1/2; pass otherwise."""
    s = make_sim(tmp_path, "orders2", orders="random")
    ds = s.load()
    bp = ds.judgments["rubric"] == "blind-pair"
    pairs = ds.judgments.loc[bp, ["task_id", "replicate"]].drop_duplicates()
    assert len(pairs) == 24
    for n_wf, expected in ((12, "pass"), (10, "pass"), (9, "warn"), (15, "warn"), (14, "pass")):
        wf = set(map(tuple, pairs.iloc[:n_wf].to_numpy().tolist()))
        j = ds.judgments.copy()
        key = list(zip(j["task_id"], j["replicate"], strict=True))
        order = ["with_first" if k in wf else "without_first" for k in key]
        j["order"] = pd.Series(order, index=j.index).where(bp).astype(j["order"].dtype)
        status, detail = row(audit(ds.tasks, ds.runs, j), "blind_order_balance")
        assert status == expected, (n_wf, detail)
        assert f"{n_wf} of 24 pair-orders (24 pairs)" in detail


# --------------------------------------------------------------------------- failures, tokens


def test_failure_rate_warns(tmp_path):
    s = make_sim(tmp_path, "malformed", malformed_rate=0.3)
    ds = s.load()
    frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    status, detail = row(audit(ds, frame=frame), "judge_failure_rate")
    assert status == "warn"
    st = frame.assign(judge=frame["judge"].astype(str), rubric=frame["rubric"].astype(str))
    for (rubric, judge), g in st.groupby(["rubric", "judge"]):
        bad = int(g["status"].isin(["invalid", "error"]).sum())
        # blind-pair is judged in both orders here: its judgments are pair-orders
        n_pairs = len(g[["task_id", "replicate"]].drop_duplicates())
        unit = "pair-orders" if rubric == "blind-pair" else "pairs"
        assert (n_pairs < len(g)) == (rubric == "blind-pair")
        of_pairs = f" ({n_pairs} pairs)" if unit == "pair-orders" else ""
        pct = f"{100 * bad / len(g):.1f} % of the {unit}"
        text = f"{judge} on {rubric}: {bad} of {len(g)} {unit}{of_pairs}, {pct}"
        assert (text in detail) == (bad / len(g) > 0.05)
    assert (
        row(audit(ds, frame=frame, limits=AuditLimits(failure_rate=1.0)), "judge_failure_rate")[0]
        == "pass"
    )


def test_token_mismatch_warns(sim):
    sim.runs[6]["reported_tokens"] = 99_999
    sim.runs[7]["reported_tokens"] = 5
    ds = sim.load()
    counted = ds.runs.loc[6, "tokens"]
    status, detail = row(audit(ds), "reported_tokens")
    assert status == "warn"
    assert detail.startswith("2 of the 2 runs that report tokens disagree")
    ratios = sorted(r / c for r, c in ((99_999, counted), (5, ds.runs.loc[7, "tokens"])))
    assert f"(reported tokens are {ratios[0]:.2f}× to {ratios[1]:.2f}× the count)" in detail
    assert f"(T02, 1, with) reported 99999 vs counted {counted}" in detail


def test_token_match_passes(sim):
    ds = sim.load()
    runs = ds.runs.copy()
    runs["reported_tokens"] = runs["tokens"] + 1  # within the tolerance of 2
    runs["tokens_mismatch"] = False
    status, detail = row(audit(ds.tasks, runs, ds.judgments), "reported_tokens")
    assert status == "pass" and detail.startswith("All 48 reported token counts agree")


def test_sample_data_audit_matches_independent_numbers():
    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    if not (sample / "tasks.jsonl").exists():
        pytest.skip("data/sample is absent")
    ds = evalstats.load_dir(sample)
    table = audit(ds)
    assert table["check"].tolist() == list(AUDIT_CHECKS)
    k, n, _ = independent_disagreement(ds, "with-without")
    assert (
        f"disagree on {k} of {n} pairs, {100 * k / n:.1f} % of the pairs"
        in row(table, "judge_disagreement")[1]
    )
    n_mismatch = int(np.sum(ds.runs["tokens_mismatch"]))
    status, detail = row(table, "reported_tokens")
    assert (status == "warn") == (n_mismatch > 0)
    assert detail.startswith(f"{n_mismatch} of the {ds.runs['reported_tokens'].notna().sum()} ")
    # The sample's harness bills every mismatched run 1.25 times the cl100k_base count: said so.
    mism = ds.runs.loc[ds.runs["tokens_mismatch"].astype(bool)]
    assert set((mism["reported_tokens"] / mism["tokens"]).round(2)) == {1.25}
    assert f"(reported tokens are 1.25× the count in all {n_mismatch})" in detail


# --------------------------------------------------------------------------- analysis plan


def test_no_plan_warns(sim):
    sim.plan = None
    table = sim.audit()
    status, detail = row(table, "plan_before_judging")
    assert status == "warn" and detail.startswith("No declared analysis plan")
    status, detail = row(table, "plan_design")
    assert status == "warn" and detail.startswith("No declared analysis plan")
    others = table.loc[~table["check"].str.startswith("plan_")]
    assert (others["status"] == "pass").all()


def test_plan_written_after_the_first_judgment_fails(sim):
    first = min(pd.Timestamp(j["created_at"]) for j in sim.judgments)
    sim.plan["written_at"] = (first + pd.Timedelta(hours=2)).isoformat()
    status, detail = row(sim.audit(), "plan_before_judging")
    assert status == "fail"
    assert "(its written_at)" in detail and "written 2.0 h after judging began" in detail
    # at (TOML keeps microseconds) the very instant of the first judgment is not before it
    sim.plan["written_at"] = first.ceil("us").isoformat()
    assert row(sim.audit(), "plan_before_judging")[0] == "fail"
    sim.plan["written_at"] = (first - pd.Timedelta(hours=3)).isoformat()
    status, detail = row(sim.audit(), "plan_before_judging")
    assert status == "pass" and detail.endswith(": 3.0 h before.")


def test_plan_without_written_at_uses_the_file_mtime(sim):
    import os

    first = min(pd.Timestamp(j["created_at"]) for j in sim.judgments)
    del sim.plan["written_at"]
    ds = sim.load()
    for offset, want in ((-5.0, "pass"), (5.0, "fail")):
        t = (first + pd.Timedelta(hours=offset)).timestamp()
        os.utime(sim.dir / "plan.toml", (t, t))
        plan = load_plan(sim.dir / "plan.toml")
        status, detail = row(audit(ds, plan=plan), "plan_before_judging")
        assert status == want and "the file's modification time" in detail


@pytest.mark.parametrize(
    "change, needle",
    [
        ({"tasks": 9}, "8 tasks, 9 planned"),
        ({"tasks": [f"T{i:02d}" for i in range(1, 8)] + ["T99"]}, "not planned: T08"),
        ({"replicates": 4}, "8 of 8 tasks do not have the 4 planned replicates"),
        ({"judges": ["anthropic:claude-sonnet-4-20250514"]}, "judges differ (not planned:"),
        ({"rubrics": ["blind-pair", "with-without", "x"]}, "planned but absent: x"),
    ],
)
def test_dataset_differing_from_the_plan_fails(sim, change, needle):
    table = sim.audit()
    assert row(table, "plan_design")[0] == "pass"
    assert sim.plan["tasks"] == 8 and sim.tasks[0]["task_id"] == "T01"
    sim.plan.update(change)
    if "judges" in change:
        sim.plan["primary_judge"] = change["judges"][0]
    if "rubrics" in change:
        sim.plan["primary_rubric"] = "with-without"
    status, detail = row(sim.audit(), "plan_design")
    assert status == "fail" and needle in detail, detail
    assert detail.startswith("The dataset differs from the plan (")


def test_plan_primary_judge_absent_fails(sim):
    del sim.plan["judges"]
    sim.plan["primary_judge"] = "google:gemini-2.5-pro"
    status, detail = row(sim.audit(), "plan_design")
    assert status == "fail" and "primary judge 'google:gemini-2.5-pro' has no judgments" in detail
    del sim.plan["rubrics"]
    sim.plan["primary_judge"] = sim.judgments[0]["judge"]
    sim.plan["primary_rubric"] = "pairwise-x"
    status, detail = row(sim.audit(), "plan_design")
    assert status == "fail" and "primary rubric 'pairwise-x' has no judgments" in detail


def test_plan_design_without_judgments_warns(sim):
    ds = sim.load()
    table = audit(ds.tasks, ds.runs, plan=ds.plan)
    status, detail = row(table, "plan_design")
    assert status == "warn" and "rubrics and judges not compared" in detail
    assert row(table, "plan_before_judging")[0] == "pass"
