"""Missing answers by arm: the rules of apply_missing_rule and the bounds of missing_bounds."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalstats
from evalstats import DataError
from evalstats.frames import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats.stats.rates import (
    FILLINGS,
    RATE_NAMES,
    apply_missing_rule,
    bounds_view,
    missing_bounds,
)
from evalstats.stats.rates import win_rates as _long_win_rates


def win_rates(*args, **kwargs) -> pd.DataFrame:
    """The long result pivoted to one row per group, the view these checks read."""
    return _long_win_rates(*args, **kwargs).wide()


def bounds_by_rate(frame: pd.DataFrame, **kwargs) -> pd.DataFrame:
    """The bounds of each rate of one group (``bounds_view``), indexed by the rate."""
    b = missing_bounds(frame, **kwargs)
    views = {rate: bounds_view(b, rate).iloc[0] for rate in RATE_NAMES}
    return pd.DataFrame(views).T.rename_axis("rate")


SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def small() -> pd.DataFrame:
    # a: one win, one loss; b: only WITH over budget; c: only WITHOUT; d: both; e: unreadable
    # judge output; f: a tie.
    return pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "c", "d", "e", "f"],
            "judge": "j",
            "status": ["ok", "ok", "no_answer", "no_answer", "no_answer", "invalid", "ok"],
            "over_budget_arm": [None, None, "with", "without", "both", None, None],
            "outcome": ["win", "loss", None, None, None, None, "tie"],
        }
    )


def objs(s: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in s.astype(object)]


def rates(frame, **kw) -> dict[str, float]:
    r = win_rates(frame, **kw).iloc[0]
    return {k: float(r[k]) for k in ("n", "wins", "ties", "losses", "net_win", "score")}


def test_exclude_is_the_default_and_changes_nothing_counted():
    f = small()
    out = apply_missing_rule(f)
    assert out["status"].astype(str).tolist() == f["status"].tolist()
    assert out["imputed_from"].isna().all()
    assert rates(out) == rates(f) == {
        "n": 3.0, "wins": 1.0, "ties": 1.0, "losses": 1.0, "net_win": 0.0, "score": 0.5
    }  # fmt: skip


def test_arm_aware_rule_by_hand():
    out = apply_missing_rule(small(), no_answer_as="arm_aware")
    assert objs(out["outcome"])[:6] == ["win", "loss", "loss", "win", "tie", None]
    assert objs(out["imputed_from"]) == [
        None, None, "no_answer", "no_answer", "no_answer", None, None
    ]  # fmt: skip
    # invalid is never a loss by default: e stays invalid and out of the denominator
    assert out.loc[5, "status"] == "invalid"
    # wins a, c; losses a, b; ties d, f -> n 6, net 0, score 1/2
    r = win_rates(out).iloc[0]
    assert (r["n"], r["wins"], r["losses"], r["ties"]) == (6, 2, 2, 2)
    assert r["net_win"] == pytest.approx(0.0) and r["score"] == pytest.approx(0.5)
    assert r["no_answer"] == 0 and r["invalid"] == 1


def test_blanket_loss_counts_only_over_budget_pairs_not_invalid():
    r = rates(apply_missing_rule(small(), no_answer_as="loss"))
    # wins 1 (a), losses a + b, c, d = 4, tie f: n 6, net (1 - 4) / 6
    assert (r["n"], r["wins"], r["losses"], r["ties"]) == (6, 1, 4, 1)
    assert r["net_win"] == pytest.approx(-0.5)
    both = rates(apply_missing_rule(small(), no_answer_as="loss", invalid_as="loss"))
    assert (both["n"], both["losses"]) == (7, 5)
    assert both["net_win"] == pytest.approx(-4 / 7)
    tie = rates(apply_missing_rule(small(), invalid_as="tie"))
    assert (tie["n"], tie["ties"], tie["score"]) == (4, 2, pytest.approx(2 / 4))
    win = rates(apply_missing_rule(small(), no_answer_as="win"))
    assert (win["n"], win["wins"], win["net_win"]) == (6, 4, pytest.approx(3 / 6))


def test_rules_are_validated():
    with pytest.raises(ValueError, match="no_answer_as must be one of"):
        apply_missing_rule(small(), no_answer_as="drop")
    with pytest.raises(ValueError, match="invalid_as must be one of"):
        apply_missing_rule(small(), invalid_as="arm_aware")
    with pytest.raises(DataError, match="over_budget_arm"):
        apply_missing_rule(small().drop(columns="over_budget_arm"), no_answer_as="arm_aware")
    f = small()
    f.loc[3, "over_budget_arm"] = None
    with pytest.raises(DataError, match="cannot tell which arm") as err:
        apply_missing_rule(f, no_answer_as="arm_aware")
    assert err.value.line == 3 and err.value.field == "over_budget_arm"
    # a frame without the column is fine for the rules that do not read it
    assert len(apply_missing_rule(small().drop(columns="over_budget_arm"), no_answer_as="tie"))


def blind() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task_id": ["t1", "t1", "t2", "t3", "t3"],
            "replicate": 1,
            "judge": "j",
            "rubric": "blind-pair",
            "order": pd.Categorical(
                ["with_first", "without_first", None, "with_first", "without_first"],
                dtype=evalstats._schema.ORDER_DTYPE,
            ),
            "status": ["ok", "ok", "no_answer", "ok", "ok"],
            "over_budget_arm": [None, None, "without", None, None],
            "outcome": ["win", "win", None, "loss", "tie"],
        }
    )


def test_unshown_blind_pair_weighs_as_much_as_a_judged_pair():
    out = apply_missing_rule(blind(), no_answer_as="arm_aware")
    t2 = out.loc[out["task_id"] == "t2"]
    assert sorted(t2["order"].astype(str)) == ["with_first", "without_first"]
    assert set(t2["outcome"].astype(str)) == {"win"}
    r = win_rates(out).iloc[0]
    # t1 win win, t2 win win (imputed), t3 loss tie: 6 verdicts, 4 wins
    assert (r["n"], r["wins"], r["losses"], r["ties"]) == (6, 4, 1, 1)
    # one order per pair (a seeded single order): the missing pair stays one row
    single = blind().drop(index=[1, 4]).reset_index(drop=True)
    assert len(apply_missing_rule(single, no_answer_as="win")) == len(single)
    # exclude never adds rows
    assert len(apply_missing_rule(blind())) == len(blind())


def bruteforce_range(frame: pd.DataFrame, rate: str) -> tuple[float, float]:
    """Min and max of a rate over every way of filling in the no_answer rows, each filling's
    rate counted directly (an oracle that does not call the code under test)."""
    miss = int(frame["status"].eq("no_answer").sum())
    ok = frame.loc[frame["status"] == "ok", "outcome"]
    counts = np.array([(ok == o).sum() for o in ("win", "tie", "loss")])
    values = []
    for fill in itertools.product(range(3), repeat=miss):
        w, t, lo = counts + np.bincount(fill, minlength=3)
        n = w + t + lo
        values.append(
            {"win_rate": w / n, "tie_rate": t / n, "loss_rate": lo / n, "net_win": (w - lo) / n,
             "score": (w + t / 2) / n}[rate]
        )  # fmt: skip
    return min(values), max(values)


def test_bounds_match_every_filling_by_brute_force():
    rng = np.random.default_rng(7)
    n = 24
    f = pd.DataFrame(
        {
            "task_id": rng.integers(0, 6, n).astype(str),
            "status": "ok",
            "outcome": rng.choice(["win", "tie", "loss"], n, p=[0.5, 0.2, 0.3]),
        }
    )
    f.loc[[2, 9, 15], ["status", "outcome"]] = ["no_answer", None]
    b = bounds_by_rate(f, by=None)
    assert b["n_missing"].eq(3).all()
    excluded = win_rates(f, by=None).iloc[0]
    for rate in ("win_rate", "tie_rate", "loss_rate", "net_win", "score"):
        low, high = bruteforce_range(f, rate)
        assert b.loc[rate, "low"] == pytest.approx(low)
        assert b.loc[rate, "high"] == pytest.approx(high)
        assert b.loc[rate, "ci_low"] <= b.loc[rate, "low"] + 1e-12
        assert b.loc[rate, "ci_high"] >= b.loc[rate, "high"] - 1e-12
        assert b.loc[rate, "estimate"] == pytest.approx(excluded[rate])
    # worst / best case: every missing answer a loss, resp. a win, for WITH
    ok = f.loc[f["status"] == "ok", "outcome"]
    w, t, lo, m = (ok == "win").sum(), (ok == "tie").sum(), (ok == "loss").sum(), 3
    assert b.loc["net_win", "worst_case"] == pytest.approx((w - lo - m) / (w + t + lo + m))
    assert b.loc["net_win", "best_case"] == pytest.approx((w + m - lo) / (w + t + lo + m))
    assert b.loc["score", "best_case"] == pytest.approx((w + m + t / 2) / (w + t + lo + m))


def test_bounds_invalid_options():
    f = small()
    plain = bounds_by_rate(f)
    # invalid excluded in every scenario: 3 missing (b, c, d) of 6
    assert plain["n_missing"].eq(3).all()
    assert plain.loc["win_rate", "best_case"] == pytest.approx(4 / 6)
    assert plain.loc["loss_rate", "worst_case"] == pytest.approx(4 / 6)
    both = bounds_by_rate(f, invalid_as="bounds")
    assert both["n_missing"].eq(4).all()
    assert both.loc["net_win", "worst_case"] == pytest.approx((1 - 5) / 7)
    assert both.loc["net_win", "best_case"] == pytest.approx((5 - 1) / 7)
    with pytest.raises(ValueError, match="invalid_as must be one of"):
        missing_bounds(f, invalid_as="arm_aware")


def test_bounds_per_group_keep_group_order():
    f = pd.concat([small(), small().assign(judge="k", status="ok", outcome="win")])
    b = missing_bounds(f.reset_index(drop=True))
    assert list(b.columns[:3]) == ["judge", "filling", "statistic"] and len(b.columns) <= 16
    assert b["judge"].tolist() == ["j"] * 20 + ["k"] * 20
    assert b["filling"].tolist() == [f for f in FILLINGS for _ in RATE_NAMES] * 2
    assert b["statistic"].tolist() == list(RATE_NAMES) * 8
    assert b.diagnostics["n_missing"].tolist() == [3, 0]
    k = bounds_view(b, "win_rate").set_index("judge").loc["k"]
    assert k["low"] == k["high"] == k["estimate"] == 1.0


def test_bounds_refuse_to_pool_rubrics():
    f = pd.concat([small().assign(rubric="a"), small().assign(rubric="b")], ignore_index=True)
    assert missing_bounds(f)["rubric"].nunique() == 2
    with pytest.raises(DataError, match="never pooled"):
        missing_bounds(f, by="judge")


@pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is not in this checkout")
def test_arm_aware_on_the_sample():
    frame = evalstats.load_frame(SAMPLE)
    ww = frame.loc[frame["rubric"] == "with-without"]
    base = win_rates(ww).set_index("judge")
    aware = win_rates(apply_missing_rule(ww, no_answer_as="arm_aware")).set_index("judge")
    # 5 over-budget pairs: WITH alone over in 3 (losses), WITHOUT alone in 2 (wins)
    assert (aware["losses"] - base["losses"]).eq(3).all()
    assert (aware["wins"] - base["wins"]).eq(2).all()
    assert (aware["n"] - base["n"]).eq(5).all()
    bp = frame.loc[frame["rubric"] == "blind-pair"]
    # the blind rubric shows every pair in both orders: each missing pair counts twice
    grown = apply_missing_rule(bp, no_answer_as="loss")
    assert len(grown) == len(bp) + 5 * bp["judge"].nunique()


def _arm_frame(n_with: int, n_without: int, seed: int = 0) -> pd.DataFrame:
    """12 tasks x 4 pairs, one judge; the first pairs' WITH (then WITHOUT) went over budget."""
    rng = np.random.default_rng(seed)
    n = 48
    outcome = rng.choice(["win", "tie", "loss"], size=n, p=[0.5, 0.2, 0.3]).astype(object)
    arm = np.array([None] * n, dtype=object)
    arm[:n_with] = "with"
    arm[n_with : n_with + n_without] = "without"
    status = np.where(pd.isna(arm), "ok", "no_answer")
    outcome[status == "no_answer"] = None
    return pd.DataFrame(
        {
            "task_id": np.repeat([f"t{i:02d}" for i in range(12)], 4),
            "replicate": np.tile([1, 2, 3, 4], 12),
            "judge": "j",
            "status": status,
            "outcome": outcome,
            "over_budget_arm": arm,
        }
    )


def test_unbalanced_no_answers_are_named_in_the_note_with_the_arm_aware_net_win():
    from evalstats.stats.rates import win_rates

    f = _arm_frame(10, 0)
    res = win_rates(f)
    note = res.loc[res["statistic"] == "net_win", "ci_note"].iloc[0]
    assert "no-answers unbalanced between arms" in note and "WITH alone over budget 10" in note
    d = res.diagnostics.iloc[0]
    # the exact two-sided binomial test of 10 vs 0 (scipy as the oracle)
    assert d["no_answer_balance_p"] == pytest.approx(stats.binomtest(0, 10, 0.5).pvalue)
    assert d["no_answer_unbalanced"]
    aware = win_rates(f, no_answer_as="arm_aware").set_index("statistic").loc["net_win"]
    assert d["arm_aware_net_win"] == pytest.approx(aware["estimate"])
    assert (d["arm_aware_ci_low"], d["arm_aware_ci_high"]) == pytest.approx(
        (aware["ci_low"], aware["ci_high"])
    )
    assert f"{aware['estimate']:+.3f}" in note
    # The default's own numbers are untouched by the note.
    plain = win_rates(f.drop(columns="over_budget_arm"))
    assert np.allclose(plain["estimate"], res["estimate"])
    assert (plain["ci_note"] == "").all()


def test_balanced_no_answers_leave_the_note_empty():
    from evalstats.stats.rates import win_rates

    res = win_rates(_arm_frame(3, 3))
    d = res.diagnostics.iloc[0]
    assert d["no_answer_with"] == 3 and d["no_answer_without"] == 3
    assert d["no_answer_balance_p"] == pytest.approx(1.0)
    assert not d["no_answer_unbalanced"]
    if not d["no_answer_changes_conclusion"]:
        assert (res["ci_note"] == "").all()


def test_arm_aware_without_over_budget_arm_works_when_nothing_is_missing():
    from evalstats.errors import DataError
    from evalstats.stats.rates import win_rates

    f = _arm_frame(0, 0).drop(columns="over_budget_arm")
    a = win_rates(f, no_answer_as="arm_aware")
    assert np.allclose(a["estimate"], win_rates(f)["estimate"])
    with pytest.raises(DataError, match="over_budget_arm"):
        win_rates(_arm_frame(2, 0).drop(columns="over_budget_arm"), no_answer_as="arm_aware")


def _rule_by_loop(frame: pd.DataFrame, no_answer_as: str, invalid_as: str) -> list:
    """(status, outcome, imputed_from) of each row, rewritten one row at a time."""
    aware = {"with": "loss", "without": "win", "both": "tie"}
    rows = []
    for st, out, arm in zip(
        frame["status"], frame["outcome"], frame["over_budget_arm"], strict=True
    ):
        st, out = (None if pd.isna(v) else v for v in (st, out))
        if st == "no_answer" and no_answer_as != "exclude":
            fill = aware[arm] if no_answer_as == "arm_aware" else no_answer_as
            rows.append(("ok", fill, "no_answer"))
        elif st == "invalid" and invalid_as != "exclude":
            rows.append(("ok", invalid_as, "invalid"))
        else:
            rows.append((st, out, None))
    return rows


@pytest.mark.parametrize("categorical", [False, True])
def test_every_rule_matches_a_row_by_row_loop(categorical):
    rng = np.random.default_rng(3)
    n = 300
    status = rng.choice(["ok", "no_answer", "invalid", "error"], n, p=[0.7, 0.15, 0.1, 0.05])
    outcome = np.where(status == "ok", rng.choice(["win", "tie", "loss"], n), None)
    arm = np.where(status == "no_answer", rng.choice(["with", "without", "both"], n), None)
    f = pd.DataFrame(
        {
            "task_id": rng.integers(0, 20, n).astype(str),
            "judge": "j",
            "status": pd.array(status, dtype="string"),
            "outcome": outcome,
            "over_budget_arm": arm,
        }
    )
    if categorical:
        f = f.assign(
            status=pd.Categorical(status, dtype=STATUS_DTYPE),
            outcome=pd.Categorical(outcome, dtype=OUTCOME_DTYPE),
        )
    before = f.copy()
    for na in ("exclude", "arm_aware", "loss", "win", "tie"):
        for inv in ("exclude", "loss", "win", "tie"):
            out = apply_missing_rule(f, no_answer_as=na, invalid_as=inv)
            cols = (objs(out[c]) for c in ("status", "outcome", "imputed_from"))
            got = list(zip(*cols, strict=True))
            assert got == _rule_by_loop(f, na, inv), (na, inv)
    pd.testing.assert_frame_equal(f, before)  # the caller's frame is left as it was


@pytest.mark.filterwarnings("ignore::evalstats.EvalstatsWarning")
def test_missing_answer_rules_per_pair_of_arms(tmp_path):
    evalstats.simulate(
        tmp_path, arms=("none", "v1", "v2"), reference="none", n_tasks=8, n_replicates=2
    )
    frame = evalstats.load_frame(tmp_path)
    # Two over-budget pairs of v2 vs none: one where v2 (arm_a) went over, named by its
    # arm, one where none (arm_b) did, named by its role.
    rows = frame.index[(frame["arm_a"] == "v2") & (frame["arm_b"] == "none")][:2]
    frame = frame.assign(over_budget_arm=pd.Series([None] * len(frame), dtype=object))
    frame.loc[rows, ["status", "outcome"]] = ["no_answer", None]
    frame.loc[rows, "over_budget_arm"] = ["v2", "without"]
    out = apply_missing_rule(frame, no_answer_as="arm_aware")
    assert out.loc[rows, "outcome"].astype(str).tolist() == ["loss", "win"]
    b = missing_bounds(frame)
    assert list(b.by) == ["rubric", "judge", "arm_a", "arm_b", "filling"]
    n_missing = b.diagnostics.set_index(["arm_a", "arm_b"])["n_missing"].groupby(level=[0, 1]).sum()
    assert n_missing.to_dict() == {("v1", "none"): 0, ("v2", "none"): 2, ("v2", "v1"): 0}
    aware = win_rates(frame, no_answer_as="arm_aware")
    assert aware.groupby(["arm_a", "arm_b"])["n"].sum().loc[("v2", "none")] == 32
