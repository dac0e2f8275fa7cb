"""Tests of win rates, proportion intervals and position bias (evalstats.stats.rates)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from contract import TIDY_COLUMNS
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import evalstats
from evalstats.errors import DataError
from evalstats.frames import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats.stats import design as coverage
from evalstats.stats.rates import (
    DEFAULT_METHOD,
    RATE_NAMES,
    WIN_RATE_METHODS,
    position_bias,
    proportion_ci,
    sign_test_p,
    wilson_interval,
    wilson_test_p,
    win_rates,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def rates(*args, **kwargs) -> pd.DataFrame:
    """``win_rates`` pivoted to one row per group (``<statistic>_ci_low``..., diagnostics
    joined): the oracle checks below read the long result through this view."""
    return win_rates(*args, **kwargs).wide()


def orders(*args, **kwargs) -> pd.DataFrame:
    """``position_bias`` pivoted to one row per group, as :func:`rates`."""
    return position_bias(*args, **kwargs).wide()


def random_frame(
    seed: int, n_tasks: int = 12, judges: tuple[str, ...] = ("j1", "j2")
) -> pd.DataFrame:
    """Clustered verdicts with unequal task sizes and every status."""
    rng = np.random.default_rng(seed)
    rows = []
    for judge in judges:
        for t in range(n_tasks):
            size = int(rng.integers(1, 9))
            p = rng.dirichlet([2, 1, 2])  # task-level outcome probabilities: clustering
            outcome = rng.choice(3, size=size, p=p)
            status = rng.choice(4, size=size, p=[0.8, 0.1, 0.05, 0.05])
            for r in range(size):
                rows.append((f"task{t:02d}", r + 1, judge, int(status[r]), int(outcome[r])))
    task, rep, judge, status, outcome = map(np.array, zip(*rows, strict=True))
    return pd.DataFrame(
        {
            "task_id": task,
            "replicate": rep,
            "judge": judge,
            "status": pd.Categorical.from_codes(status, dtype=STATUS_DTYPE),
            "outcome": pd.Categorical.from_codes(
                np.where(status == 0, outcome, -1), dtype=OUTCOME_DTYPE
            ),
        }
    )


def row_values(sub: pd.DataFrame, no_answer_as: str) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    status = sub["status"].astype(str)
    outcome = sub["outcome"].astype(object)
    if no_answer_as == "exclude":
        keep = status == "ok"
    else:
        keep = status.isin(["ok", "no_answer", "invalid"])
    sub, status, outcome = sub[keep], status[keep], outcome[keep]
    win = (outcome == "win").to_numpy(float)
    tie = (outcome == "tie").to_numpy(float)
    loss = ((outcome == "loss") | (status != "ok")).to_numpy(float)
    values = {
        "win_rate": win,
        "tie_rate": tie,
        "loss_rate": loss,
        "net_win": win - loss,
        "score": win + tie / 2,
    }
    return sub, values


@pytest.mark.parametrize("no_answer_as", ["exclude", "loss"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cr1_se_and_cluster_t_p_match_statsmodels(seed: int, no_answer_as: str) -> None:
    frame = random_frame(seed)
    res = rates(frame, no_answer_as=no_answer_as, method="cluster_t").set_index("judge")
    for judge, sub in frame.groupby("judge"):
        kept, values = row_values(sub, no_answer_as)
        groups = pd.factorize(kept["task_id"])[0]
        assert res.loc[judge, "n"] == len(kept)
        assert res.loc[judge, "n_tasks"] == groups.max() + 1
        for name, y in values.items():
            fit = sm.OLS(y, np.ones_like(y)).fit(
                cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
            )
            # Intercept-only: statsmodels' (n-1)/(n-k) factor is 1, leaving C/(C-1).
            assert res.loc[judge, name] == pytest.approx(fit.params[0], rel=1e-12, abs=1e-15)
            assert res.loc[judge, f"{name}_se"] == pytest.approx(fit.bse[0], rel=1e-10)
            if name == "net_win":
                assert res.loc[judge, "net_win_p"] == pytest.approx(fit.pvalues[0], rel=1e-8)
            tq = stats.t.ppf(0.975, groups.max())
            lo, hi = (-1, 1) if name == "net_win" else (0, 1)
            assert res.loc[judge, f"{name}_ci_low"] == pytest.approx(
                max(lo, fit.params[0] - tq * fit.bse[0]), rel=1e-9, abs=1e-12
            )
            assert res.loc[judge, f"{name}_ci_high"] == pytest.approx(
                min(hi, fit.params[0] + tq * fit.bse[0]), rel=1e-9, abs=1e-12
            )


def test_one_row_per_cluster_se_is_ordinary_se_and_bca_is_scipy() -> None:
    rng = np.random.default_rng(4)
    n = 40
    codes = rng.choice(3, size=n, p=[0.3, 0.3, 0.4])
    frame = pd.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(n)],
            "status": "ok",
            "outcome": pd.Categorical.from_codes(codes, dtype=OUTCOME_DTYPE),
        }
    )
    res = rates(frame, by=None, method="bca", n_resamples=4000, rng=77).iloc[0]
    win = (codes == 2).astype(float)
    score = win + (codes == 1) / 2
    for name, y in (("win_rate", win), ("score", score)):
        assert res[f"{name}_se"] == pytest.approx(y.std(ddof=1) / np.sqrt(n), rel=1e-12)
        ref = stats.bootstrap(
            (y,), np.mean, method="BCa", n_resamples=4000, rng=np.random.default_rng(77)
        )
        assert res[f"{name}_ci_low"] == pytest.approx(ref.confidence_interval.low, rel=1e-12)
        assert res[f"{name}_ci_high"] == pytest.approx(ref.confidence_interval.high, rel=1e-12)


def test_counts_views_and_grouping() -> None:
    frame = pd.DataFrame(
        {
            "task_id": ["a", "a", "a", "b", "b", "c", "c", "c"],
            "judge": ["x", "x", "y", "x", "y", "x", "x", "y"],
            "status": ["ok", "no_answer", "ok", "ok", "invalid", "ok", "error", "ok"],
            "outcome": ["win", None, "tie", "loss", None, "win", None, "win"],
        }
    )
    res = rates(frame, method="cluster_t").set_index("judge")
    x = res.loc["x"]
    assert (x["n"], x["n_tasks"], x["wins"], x["ties"], x["losses"]) == (3, 3, 2, 0, 1)
    assert (x["no_answer"], x["invalid"], x["error"]) == (1, 0, 1)
    assert x["win_rate"] == pytest.approx(2 / 3) and x["net_win"] == pytest.approx(1 / 3)
    y = res.loc["y"]
    assert (y["n"], y["n_tasks"], y["invalid"]) == (2, 2, 1)  # task b has no ok verdict
    assert y["score"] == pytest.approx(0.75)

    loss = rates(frame, no_answer_as="loss", method="cluster_t").set_index("judge")
    assert loss.loc["x", "n"] == 4 and loss.loc["x", "loss_rate"] == pytest.approx(0.5)
    assert loss.loc["y", "n"] == 3 and loss.loc["y", "loss_rate"] == pytest.approx(1 / 3)
    assert loss.loc["x", "sign_test_p"] == pytest.approx(stats.binomtest(2, 4).pvalue)
    assert set(loss["no_answer_as"]) == {"loss"}

    overall = rates(frame, by=None)
    assert len(overall) == 1 and overall["n"].iloc[0] == 5
    assert "judge" not in overall.columns
    two = rates(frame.assign(rubric="r"), by=["rubric", "judge"])
    assert list(two[["rubric", "judge"]].itertuples(index=False, name=None)) == [
        ("r", "x"),
        ("r", "y"),
    ]
    # Plain strings and the schema's categoricals give the same answer.
    cat = frame.assign(
        status=frame["status"].astype(STATUS_DTYPE), outcome=frame["outcome"].astype(OUTCOME_DTYPE)
    )
    pd.testing.assert_frame_equal(rates(cat), rates(frame))


def test_output_is_long_and_tidy() -> None:
    res = win_rates(random_frame(3))
    assert list(res.columns) == ["judge", *TIDY_COLUMNS, "ci_note"]
    assert len(res.columns) <= 16
    assert res["statistic"].tolist() == list(RATE_NAMES) * 2
    assert (res["method"] == DEFAULT_METHOD).all() and (res["confidence"] == 0.95).all()
    # p_value is the net-win test, for net win and the score only; their df is net win's
    rates_rows = res["statistic"].isin(["win_rate", "tie_rate", "loss_rate"])
    assert res.loc[rates_rows, "p_value"].isna().all()
    assert res.loc[~rates_rows, "p_value"].notna().all()
    assert list(res.diagnostics.columns) == [
        "judge",
        "n",
        "n_pairs",
        "n_tasks",
        "wins",
        "ties",
        "losses",
        "no_answer",
        "invalid",
        "error",
        "sign_test_p",
        "n_eff_clusters",
        "few_clusters",
        "no_answer_as",
        "invalid_as",
    ]
    detail = win_rates(random_frame(3), detail=True)
    assert len(detail) == len(res) and {"wins", "sign_test_p", "estimate"} <= set(detail.columns)


def test_summary_is_one_line_per_row() -> None:
    res = win_rates(random_frame(3))
    lines = res.summary()
    assert len(lines) == len(res)
    row = res.iloc[3]  # j1, net win
    assert lines.loc[("j1", "net_win")] == (
        f"{row['estimate']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}], "
        f"p = {row['p_value']:.3g}"
    )


def test_mixed_rubrics_are_grouped_by_default_and_never_pooled() -> None:
    one = random_frame(3)
    two = pd.concat([one.assign(rubric="r1"), one.assign(rubric="r2")], ignore_index=True)
    res = win_rates(two)
    assert list(res.columns[:2]) == ["rubric", "judge"]
    assert res.groupby("rubric").size().to_dict() == {"r1": 10, "r2": 10}
    # each rubric's numbers are those of the rubric alone
    alone = win_rates(one)
    np.testing.assert_allclose(res.loc[res["rubric"] == "r2", "estimate"], alone["estimate"])
    for by in ("judge", None, ["task_id"]):
        with pytest.raises(DataError, match="mixes 2 rubrics"):
            win_rates(two, by=by)
        with pytest.raises(DataError, match="never pooled"):
            position_bias(two.assign(order="with_first"), by=by)
    # one rubric in the column: nothing to pool
    assert len(win_rates(one.assign(rubric="r1"), by="judge")) == 10


@pytest.mark.parametrize("method", WIN_RATE_METHODS)
def test_intervals_contain_estimate_and_stay_in_range(method: str) -> None:
    res = rates(random_frame(5, n_tasks=15), method=method, n_resamples=999, rng=1)
    for name in RATE_NAMES:
        lo, est, hi = res[f"{name}_ci_low"], res[name], res[f"{name}_ci_high"]
        assert (lo <= est + 1e-12).all() and (est <= hi + 1e-12).all()
        assert (lo >= (-1 if name == "net_win" else 0)).all() and (hi <= 1).all()
        assert (hi - lo > 0).all()


@pytest.mark.parametrize("method", WIN_RATE_METHODS)
def test_boundary_rates_keep_the_clustering(method: str) -> None:
    # All wins in 4 tasks of 3: no spread, so the clustered SE is 0. The interval is the
    # Wilson interval over the Kish effective number of tasks (4 here), not over the 12
    # verdicts; only iid_wilson (asked for) gives the IID one. net_win_p is a valid p.
    frame = pd.DataFrame(
        {"task_id": np.repeat(["a", "b", "c", "d"], 3), "status": "ok", "outcome": "win"}
    )
    res = rates(frame, by=None, method=method, n_resamples=200, rng=0).iloc[0]
    n_units = 12 if method == "iid_wilson" else 4
    hi_ci, lo_ci = proportion_ci(n_units, n_units), proportion_ci(0, n_units)
    assert res["win_rate"] == 1.0 and res["loss_rate"] == 0.0
    assert res["win_rate_ci_low"] == pytest.approx(float(hi_ci.ci_low), rel=1e-12)
    assert res["win_rate_ci_high"] == 1.0
    assert res["loss_rate_ci_low"] == 0.0
    assert res["loss_rate_ci_high"] == pytest.approx(float(lo_ci.ci_high), rel=1e-12)
    assert res["net_win_ci_low"] == pytest.approx(2 * float(hi_ci.ci_low) - 1, rel=1e-12)
    assert res["sign_test_p"] == pytest.approx(stats.binomtest(12, 12).pvalue)
    assert res["n_eff_clusters"] == pytest.approx(4.0)
    if method not in ("bca", "percentile", "basic"):
        # Score test of score = 1/2 at n_eff = 4 (12 for IID): z = 0.5 / sqrt(0.25 / n).
        expected = 2 * stats.norm.sf(np.sqrt(n_units))
        assert res["net_win_p"] == pytest.approx(expected, rel=1e-10)
        assert (res["net_win_p"] < 0.05) == (res["net_win_ci_low"] > 0)


def test_sign_test_matches_scipy_binomtest() -> None:
    rng = np.random.default_rng(9)
    wins = rng.integers(0, 60, 300)
    losses = rng.integers(0, 60, 300)
    losses[:5] = wins[:5]  # ties of the two counts give p = 1
    expected = [
        stats.binomtest(int(w), int(w + lo)).pvalue if w + lo else np.nan
        for w, lo in zip(wins, losses, strict=True)
    ]
    np.testing.assert_allclose(sign_test_p(wins, losses), expected, rtol=1e-10)
    assert np.isnan(sign_test_p(np.array([0]), np.array([0]))[0])


def test_sign_test_p_column_matches_binomtest_per_group() -> None:
    frame = random_frame(6, judges=("a", "b", "c"))
    res = rates(frame).set_index("judge")
    for judge in "abc":
        w, lo = res.loc[judge, "wins"], res.loc[judge, "losses"]
        assert res.loc[judge, "sign_test_p"] == pytest.approx(
            stats.binomtest(int(w), int(w + lo)).pvalue, rel=1e-10
        )


def test_validation_errors() -> None:
    frame = random_frame(7)
    with pytest.raises(ValueError, match="method"):
        rates(frame, method="wald")
    with pytest.raises(ValueError, match="no_answer_as"):
        rates(frame, no_answer_as="maybe")
    with pytest.raises(ValueError, match="invalid_as"):
        rates(frame, invalid_as="maybe")
    with pytest.raises(DataError, match="status"):
        rates(frame.assign(status="maybe"))
    bad = frame.assign(outcome=frame["outcome"].astype(object))
    bad.loc[bad.index[bad["status"] == "ok"][0], "outcome"] = None
    with pytest.raises(DataError, match="outcome is missing"):
        rates(bad)
    with pytest.raises(DataError, match="column"):
        rates(frame.drop(columns="task_id"))
    with pytest.raises(TypeError):
        win_rates(frame.to_dict())  # type: ignore[arg-type]


# --------------------------------------------------------------------------- proportion_ci


@pytest.mark.parametrize(("ours", "theirs"), [("wilson", "wilson"), ("clopper_pearson", "beta")])
def test_proportion_ci_matches_statsmodels(ours: str, theirs: str) -> None:
    rng = np.random.default_rng(10)
    n = rng.integers(1, 500, 300)
    k = rng.integers(0, n + 1)
    k[:3], n[:3] = 0, 7  # zero count
    k[3:6] = n[3:6]  # all successes
    for confidence in (0.9, 0.95, 0.99):
        ci = proportion_ci(k, n, method=ours, confidence=confidence)
        lo, hi = proportion_confint(k, n, alpha=1 - confidence, method=theirs)
        np.testing.assert_allclose(ci.ci_low, lo, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(ci.ci_high, hi, rtol=1e-10, atol=1e-14)


def test_wilson_cc_matches_scipy() -> None:
    rng = np.random.default_rng(11)
    n = rng.integers(1, 400, 100)
    k = rng.integers(0, n + 1)
    ci = proportion_ci(k, n, method="wilson_cc")
    ref = np.array(
        [
            tuple(stats.binomtest(int(a), int(b)).proportion_ci(method="wilsoncc"))
            for a, b in zip(k, n, strict=True)
        ]
    )
    np.testing.assert_allclose(ci.ci_low, ref[:, 0], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ci.ci_high, ref[:, 1], rtol=1e-10, atol=1e-14)


def test_proportion_ci_reference_newcombe1998() -> None:
    path = SHARED / "data" / "reference_cases.json"
    if not path.exists():
        pytest.skip(f"shared reference data not found at {path}")
    case = next(
        c for c in json.loads(path.read_text()) if c["id"] == "newcombe1998_single_proportion_ci"
    )
    confidence = case["data"]["confidence_level"]
    checked = 0
    for item in case["data"]["cases"]:
        k, n = item["successes"], item["n"]
        for method in ("wilson", "wilson_cc", "clopper_pearson"):
            ci = proportion_ci(k, n, method=method, confidence=confidence)
            for end, value in (("low", ci.ci_low), ("high", ci.ci_high)):
                exp = case["expected"][f"{method}_{k}_of_{n}_{end}"]
                assert float(value) == pytest.approx(exp["value"], abs=exp["tol"]), (method, k, n)
                checked += 1
    assert checked == len(case["expected"]) == 24


def test_proportion_ci_edges() -> None:
    ci = proportion_ci([0, 3], [0, 5])
    assert np.isnan(ci.ci_low[0]) and np.isnan(ci.estimate[0])
    assert ci.estimate[1] == pytest.approx(0.6)
    assert len(ci.to_frame()) == 2
    with pytest.raises(ValueError):
        proportion_ci(6, 5)
    with pytest.raises(ValueError):
        proportion_ci(1, 5, method="agresti")


# --------------------------------------------------------------------------- position bias


def test_position_bias_by_hand_and_against_binomtest() -> None:
    frame = pd.DataFrame(
        {
            "task_id": ["a"] * 4 + ["b"] * 4 + ["c"] * 2,
            "replicate": [1, 1, 2, 2, 1, 1, 2, 2, 1, 1],
            "judge": "j",
            "order": ["with_first", "without_first"] * 5,
            "status": ["ok"] * 9 + ["error"],
            "outcome": ["win", "win", "win", "loss", "tie", "tie", "loss", "win", "win", None],
        }
    )
    res = orders(frame).iloc[0]
    # first shown won: a1 w/f win yes, a1 wo/f win no, a2 w/f win yes, a2 wo/f loss yes,
    # b2 w/f loss no, b2 wo/f win no, c1 w/f win yes -> 4 of 7 decisive.
    assert res["n_decisive"] == 7 and res["first_shown_wins"] == 4
    assert res["first_shown_sign_test_p"] == pytest.approx(stats.binomtest(4, 7).pvalue)
    # Pairs in both orders: a1 (same), a2 (differ), b1 (same), b2 (differ); c1 lost one order.
    assert res["n_pairs_both_orders"] == 4 and res["order_consistent"] == 2
    assert res["order_consistency"] == pytest.approx(0.5)
    assert res["order_consistency_ci_low"] <= 0.5 <= res["order_consistency_ci_high"]
    assert res["method"] == "cr2_wilson" and res["ci_note"] == ""


def blind_frame(seed: int, n_tasks: int = 11, bias: float = 0.0) -> pd.DataFrame:
    """Blind-rubric verdicts in both orders, unequal task sizes, a position effect."""
    rng = np.random.default_rng(seed)
    reps = rng.integers(1, 7, size=n_tasks)
    task = np.repeat(np.arange(n_tasks), reps * 2)
    replicate = np.concatenate([np.repeat(np.arange(1, r + 1), 2) for r in reps])
    order = np.tile(["with_first", "without_first"], int(reps.sum()))
    quality = rng.normal(0, 0.8, n_tasks)[task] + np.where(order == "with_first", bias, -bias)
    codes = np.digitize(quality + rng.normal(0, 1, task.size), [-0.4, 0.4])
    status = np.where(rng.random(task.size) < 0.05, "error", "ok")
    return pd.DataFrame(
        {
            "task_id": [f"t{t}" for t in task],
            "replicate": replicate,
            "judge": "j",
            "order": order,
            "status": status,
            "outcome": pd.Categorical.from_codes(
                np.where(status == "ok", codes, -1), dtype=OUTCOME_DTYPE
            ),
        }
    )


@pytest.mark.parametrize("seed", range(4))
def test_position_bias_is_cr2_bell_mccaffrey_against_the_matrix_oracle(seed: int) -> None:
    from test_robust import matrix_cr2

    frame = blind_frame(seed, bias=0.3)
    res = orders(frame).iloc[0]
    ok = frame.loc[frame["status"] == "ok"]
    code = ok["outcome"].cat.codes.to_numpy()
    decisive = code != 1
    first_won = np.where(ok["order"] == "with_first", code == 2, code == 0)[decisive]
    est, se, df = matrix_cr2(first_won.astype(float), ok["task_id"].to_numpy()[decisive])
    assert res["first_shown_win_rate"] == pytest.approx(est, rel=1e-12)
    assert res["first_shown_win_rate_se"] == pytest.approx(se, rel=1e-9)
    assert res["first_shown_win_rate_df"] == pytest.approx(df, rel=1e-9)
    # The interval is the design-effect Wilson interval at that SE and df, and the p-value
    # the test it inverts (one construction, as win_rates' default).
    n = decisive.sum()
    sizes = pd.Series(ok["task_id"].to_numpy()[decisive]).value_counts().to_numpy()
    kish = n**2 / (sizes**2).sum()
    low, high = wilson_interval(est, se, n, df, kish, 0.95)
    assert res["first_shown_win_rate_ci_low"] == pytest.approx(float(low), rel=1e-9)
    assert res["first_shown_win_rate_ci_high"] == pytest.approx(float(high), rel=1e-9)
    p = wilson_test_p(est, se, n, df, kish, 0.5)
    assert res["first_shown_win_rate_p"] == pytest.approx(float(p), rel=1e-9)

    # Order consistency: one row per pair judged ok in both orders, clustered by task.
    wide = ok.pivot_table(
        index=["task_id", "replicate"],
        columns="order",
        values="outcome",
        aggfunc="first",
        observed=True,
    ).dropna()
    same = (wide["with_first"] == wide["without_first"]).to_numpy(float)
    c_est, c_se, c_df = matrix_cr2(same, wide.index.get_level_values("task_id").to_numpy())
    assert res["n_pairs_both_orders"] == len(wide)
    assert res["order_consistency"] == pytest.approx(c_est, rel=1e-12)
    assert res["order_consistency_se"] == pytest.approx(c_se, rel=1e-9)
    assert res["order_consistency_df"] == pytest.approx(c_df, rel=1e-9)


@pytest.mark.slow  # simulation study
def test_position_bias_p_value_and_interval_agree() -> None:
    agree = []
    for seed in range(60):
        res = orders(blind_frame(100 + seed, bias=0.35)).iloc[0]
        excludes = not (
            res["first_shown_win_rate_ci_low"] <= 0.5 <= res["first_shown_win_rate_ci_high"]
        )
        agree.append((excludes, bool(res["first_shown_win_rate_p"] < 0.05)))
    assert all(a == b for a, b in agree)
    assert 10 <= sum(b for _, b in agree) <= 50  # both outcomes are exercised


def test_position_bias_with_balanced_tasks_is_statsmodels_cluster_se() -> None:
    # Every task with the same number of decisive verdicts: CR2 = CR1 (statsmodels).
    rng = np.random.default_rng(12)
    n_tasks, reps = 14, 4
    task = np.repeat(np.arange(n_tasks), reps * 2)
    order = np.tile(["with_first", "without_first"], n_tasks * reps)
    codes = rng.choice([0, 2], size=task.size)
    frame = pd.DataFrame(
        {
            "task_id": task,
            "replicate": np.repeat(np.arange(n_tasks * reps), 2) % reps,
            "judge": "j",
            "order": order,
            "status": "ok",
            "outcome": pd.Categorical.from_codes(codes, dtype=OUTCOME_DTYPE),
        }
    )
    res = orders(frame).iloc[0]
    first_won = np.where(order == "with_first", codes == 2, codes == 0).astype(float)
    fit = sm.OLS(first_won, np.ones_like(first_won)).fit(
        cov_type="cluster", cov_kwds={"groups": task}
    )
    assert res["first_shown_win_rate"] == pytest.approx(fit.params[0], rel=1e-12)
    assert res["first_shown_win_rate_se"] == pytest.approx(fit.bse[0], rel=1e-10)
    assert res["first_shown_win_rate_df"] == pytest.approx(n_tasks - 1)


def test_position_bias_one_task_is_nan_with_a_reason() -> None:
    frame = blind_frame(3, n_tasks=1)
    res = orders(frame).iloc[0]
    assert np.isnan(res["first_shown_win_rate_ci_low"]) and np.isnan(res["first_shown_win_rate_p"])
    assert "one task" in res["first_shown_win_rate_ci_note"]
    assert res["n_decisive"] > 0


def test_n_pairs_counts_pairs_not_pair_orders() -> None:
    frame = blind_frame(5)
    res = rates(frame).iloc[0]
    ok = frame.loc[frame["status"] == "ok"]
    assert res["n"] == len(ok)
    assert res["n_pairs"] == len(ok.drop_duplicates(["task_id", "replicate"]))
    # Every pair judged once per order and nothing lost: exactly n / 2.
    clean = frame.assign(status="ok", outcome=frame["outcome"].fillna("tie"))
    both = rates(clean).iloc[0]
    assert both["n_pairs"] * 2 == both["n"]
    # One verdict per pair (the with-without rubric): n_pairs == n, per group.
    once = clean.loc[clean["order"] == "with_first"].assign(order=None)
    two = pd.concat([once, once.assign(judge="k")], ignore_index=True)
    res2 = rates(two, by="judge")
    assert (res2["n_pairs"] == res2["n"]).all() and res2["n"].tolist() == [len(once)] * 2
    # Without a replicate column each verdict is taken as its own pair.
    assert rates(once.drop(columns="replicate"))["n_pairs"].item() == len(once)


def test_n_pairs_of_the_sample_names_pairs_in_the_headline_figure() -> None:
    from evalstats.frames import load_frame
    from evalstats.plots import plot_headline

    f = load_frame(Path(__file__).resolve().parents[1] / "data" / "sample")
    res = rates(f, by=["rubric", "judge"]).set_index("rubric")
    blind, ww = res.loc["blind-pair"], res.loc["with-without"]
    assert (ww["n_pairs"] == ww["n"]).all()
    assert (blind["n_pairs"] < blind["n"]).all() and (blind["n"] <= 2 * blind["n_pairs"]).all()
    row = blind.iloc[0]
    fig = plot_headline(rates(f.loc[f["rubric"] == "blind-pair"], by="judge"))
    ticks = [t.get_text() for ax in fig.axes for t in ax.get_xticklabels()]
    want = f"{int(row['n'])} pair-orders\n({int(row['n_pairs'])} pairs)"
    assert any(want in t for t in ticks), ticks


# --------------------------------------------------------------------------- validity


def test_coverage_study_is_tidy_and_reproducible() -> None:
    kw = dict(n_tasks=10, n_replicates=3, p_win=0.4, p_tie=0.3, p_loss=0.3, icc=0.3, n_evals=100,
              n_resamples=100)  # fmt: skip
    a = coverage.coverage_study(**kw, rng=5)
    b = coverage.coverage_study(**kw, rng=5)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["method"]) == {*WIN_RATE_METHODS, "naive IID Wilson", "naive IID Wald"}
    assert a["coverage"].between(0, 1).all() and (a["n_evals"] == 100).all()


@pytest.mark.slow  # simulation study
def test_fast_coverage_study() -> None:
    # Fast version of benchmarks/coverage.py: 600 evaluations, 15 tasks x 6
    # replicates, ICC 0.3. Monte Carlo SE of a coverage near 0.95 is ~0.009.
    cov = coverage.coverage_study(n_tasks=15, n_replicates=6, p_win=0.45, p_tie=0.25, p_loss=0.30,
                                  icc=0.3, n_evals=600, n_resamples=400, rng=2024)  # fmt: skip
    table = cov.pivot(index="method", columns="statistic", values="coverage")
    default = table.loc[DEFAULT_METHOD]
    assert ((default >= 0.92) & (default <= 0.98)).all(), table
    for method in WIN_RATE_METHODS:
        if method != "iid_wilson":  # ignores the clustering, like the naive rows
            assert 0.85 <= table.loc[method, "win_rate"] <= 0.99, table
    # Ignoring the clustering undercovers (design effect ~2 here).
    assert table.loc["naive IID Wilson", "win_rate"] < 0.89, table
    assert table.loc["naive IID Wald", "net_win"] < 0.89, table
    assert default["win_rate"] - table.loc["naive IID Wilson", "win_rate"] > 0.05


def test_fast_type_one_error() -> None:
    from evalstats.stats.models import draw_outcomes

    codes = draw_outcomes(15, 6, p_win=0.35, p_tie=0.3, p_loss=0.35, icc=0.3, n_evals=1000,
                          rng=np.random.default_rng(7))[..., 0]  # fmt: skip
    ev, task, rep = np.indices(codes.shape)
    frame = pd.DataFrame({"eval": ev.ravel(), "task_id": task.ravel(), "replicate": rep.ravel(),
                          "status": "ok",
                          "outcome": np.array(["loss", "tie", "win"])[codes.ravel()]})  # fmt: skip
    res = win_rates(frame, by="eval").wide()
    rates = [(res[c] < 0.05).mean() for c in ("sign_test_p", "net_win_p")]
    sign, cluster_t = rates
    # SE of a rejection rate near 0.05 over 1000 evaluations is ~0.007.
    assert 0.025 <= cluster_t <= 0.08
    assert sign > 0.09  # the IID sign test ignores clustering


@pytest.mark.parametrize("method", ["bca", "percentile", "basic"])
def test_bootstrap_intervals_of_many_groups_are_each_groups_own_bootstrap(method: str) -> None:
    from evalstats.stats.resample import cluster_bootstrap

    frame = random_frame(8, n_tasks=9, judges=("a", "b", "c"))
    res = rates(frame, method=method, n_resamples=500, rng=3)
    gen = np.random.default_rng(3)  # the groups draw from one generator, in group order
    for i, judge in enumerate(res["judge"]):
        ok = frame.loc[(frame["judge"] == judge) & (frame["status"] == "ok")]
        cs = (
            ok.assign(
                w=ok["outcome"].eq("win").astype(float),
                t=ok["outcome"].eq("tie").astype(float),
                one=1.0,
            )
            .groupby("task_id")[["w", "t", "one"]]
            .sum()
            .to_numpy()
        )

        def rate_stats(s: np.ndarray) -> np.ndarray:
            w, t, n = s[..., 0], s[..., 1], s[..., 2]
            loss = n - w - t
            return np.stack([w / n, t / n, loss / n, (w - loss) / n, (w + t / 2) / n], -1)

        boot = cluster_bootstrap(cs, rate_stats, method=method, n_resamples=500, rng=gen)
        lo = np.clip(boot.ci_low, [0, 0, 0, -1, 0], 1)
        hi = np.clip(boot.ci_high, [0, 0, 0, -1, 0], 1)
        for j, name in enumerate(RATE_NAMES):
            if hi[j] > lo[j]:  # zero-width ends are replaced by the boundary construction
                assert res.loc[i, f"{name}_ci_low"] == pytest.approx(lo[j], abs=1e-12)
                assert res.loc[i, f"{name}_ci_high"] == pytest.approx(hi[j], abs=1e-12)


@pytest.fixture(scope="module")
def three_arm_frame(tmp_path_factory) -> pd.DataFrame:
    d = tmp_path_factory.mktemp("karm")
    evalstats.simulate(d, arms=("none", "v1", "v2"), reference="none", n_tasks=8, n_replicates=2)
    return evalstats.load_frame(d)


@pytest.mark.filterwarnings("ignore::evalstats.EvalstatsWarning")
def test_win_rates_gives_one_result_per_pair_of_arms(three_arm_frame):
    frame = three_arm_frame
    res = evalstats.win_rates(frame)
    assert list(res.by) == ["rubric", "judge", "arm_a", "arm_b"]
    pairs = frame[["arm_a", "arm_b"]].drop_duplicates()
    per_judge = res.loc[res["statistic"] == "net_win"].groupby("judge", observed=True).size()
    assert (per_judge == len(pairs)).all()
    # Each pair's numbers are those of its own rows alone: K = 2 of the same pipeline.
    for (a, b), rows in frame.groupby(["arm_a", "arm_b"]):
        alone = evalstats.win_rates(rows.drop(columns=["arm_a", "arm_b"]))
        mine = res.loc[(res["arm_a"] == a) & (res["arm_b"] == b)].reset_index(drop=True)
        cols = ["statistic", "estimate", "ci_low", "ci_high", "p_value", "n", "n_tasks"]
        pd.testing.assert_frame_equal(mine[cols], alone[cols])


def test_dimension_means_per_pair_of_arms():
    dims = ("correctness", "specificity", "completeness", "hallucination_safety")
    one = pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "c"],
            "status": "ok",
            **{f"with_{d}": [4, 5, 3, 4] for d in dims},
            **{f"without_{d}": [3, 3, 3, 4] for d in dims},
        }
    )
    two = one.assign(**{f"with_{d}": [1, 2, 3, 4] for d in dims})
    frame = pd.concat([one.assign(arm_a="v1", arm_b="none"), two.assign(arm_a="v2", arm_b="none")])
    res = evalstats.stats.dimension_means(frame)
    assert list(res.columns[:2]) == ["arm_a", "arm_b"]
    for arms, alone in ((("v1", "none"), one), (("v2", "none"), two)):
        mine = res.loc[(res["arm_a"] == arms[0]) & (res["arm_b"] == arms[1])]
        expected = evalstats.stats.dimension_means(alone)
        pd.testing.assert_frame_equal(mine.iloc[:, 2:].reset_index(drop=True), expected)


def test_win_rates_refuses_to_pool_pairs_of_arms(three_arm_frame):
    with pytest.raises(evalstats.DataError, match="3 pairs of arms"):
        evalstats.win_rates(three_arm_frame, by=["rubric", "judge"])
