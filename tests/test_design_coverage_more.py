"""design_coverage(statistic="kappa" | "cost"): the intervals they simulate are the
ones the report gives (judge_agreement's kappa, cost_ratios' total ratio), and their
coverage behaves as a coverage should."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_design_cost_ends import total_ratio_ends

from evalstats.stats import clustered_agreement, cost_ratios, design_coverage, judge_agreement
from evalstats.stats.cost import GPQ_HULL_METHOD, GPQ_METHOD
from evalstats.stats.design import kappa_ends

OUT = np.array(["loss", "tie", "win"])


def _two_judges(n_tasks: int, reps: int, agree: float, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(n_tasks):
        p = rng.dirichlet([2.0, 1.0, 2.0])
        for r in range(reps):
            a = rng.choice(3, p=p)
            b = a if rng.random() < agree else rng.choice(3, p=p)
            for judge, o in (("A", a), ("B", b)):
                rows.append(
                    {
                        "rubric": "with-without",
                        "judge": judge,
                        "task_id": f"t{t:02d}",
                        "replicate": r + 1,
                        "order": "with_first",
                        "status": "ok",
                        "outcome": OUT[o],
                    }
                )
    return pd.DataFrame(rows)


def test_kappa_ends_are_clustered_agreement_on_the_same_tables():
    rng = np.random.default_rng(1)
    tables = rng.multinomial(np.array([3, 5, 2, 4, 6, 3]), np.full(9, 1 / 9), size=(5, 6))
    tables[0] = np.diag(np.arange(1, 4)).ravel()[None] * np.ones((6, 1), dtype=int)  # kappa 1
    lo, hi = kappa_ends(tables, 0.95)
    for s in range(len(tables)):  # the oracle, one data set at a time, from the units
        task, a, b = [], [], []
        for c, tab in enumerate(tables[s]):
            for cell, count in enumerate(tab):
                task += [c] * int(count)
                a += [cell // 3] * int(count)
                b += [cell % 3] * int(count)
        ref = clustered_agreement(a, b, cluster=task, categories=[0, 1, 2]).iloc[0]
        assert lo[s] == pytest.approx(ref["ci_low"], abs=1e-12)
        assert hi[s] == pytest.approx(ref["ci_high"], abs=1e-12)


def test_kappa_coverage_estimate_is_judge_agreements_and_in_a_sane_range():
    f = _two_judges(30, 4, 0.6)
    cov = design_coverage(f, statistic="kappa", n_resamples=600, rng=2)
    assert len(cov) == 1
    row = cov.iloc[0]
    agr = judge_agreement(f, rubric="with-without")
    kappa = agr.loc[agr["statistic"] == "kappa", "estimate"].iloc[0]
    assert row["estimate"] == pytest.approx(kappa, abs=1e-12)
    assert (row["n"], row["n_tasks"]) == (120, 30)
    # 30 tasks, kappa ~ 0.6: the interval is close to nominal (the battery: 0.93-0.97).
    assert 0.90 <= row["coverage"] <= 0.99, row["coverage"]
    assert row["method"] == "atanh_jackknife_midp_blaker"


def test_kappa_coverage_without_an_order_column_and_with_no_answers():
    f = _two_judges(8, 3, 0.9, seed=4)
    f.loc[::7, ["status", "outcome"]] = ["no_answer", None]
    cov = design_coverage(f, statistic="kappa", n_resamples=200, rng=0)
    both = f.pivot(index=["task_id", "replicate"], columns="judge", values="status")
    assert cov["n"].iloc[0] == int((both == "ok").all(axis=1).sum())
    assert np.isfinite(cov["coverage"].iloc[0])


def _cost_frame(tw, to) -> pd.DataFrame:
    n = len(tw)
    return pd.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(n)],
            "replicate": 1,
            "status": "ok",
            "tokens_with": tw,
            "tokens_without": to,
            "wall_with_s": np.asarray(tw, dtype=float) / 50.0,
            "wall_without_s": np.asarray(to, dtype=float) / 40.0,
        }
    )


def test_total_ratio_ends_are_cost_ratios_default_interval():
    rng = np.random.default_rng(5)
    hulls = switched = 0
    # Eight tasks where the plain ratio falls outside the pivot's 95 % interval (found by a
    # search over skewed designs): the widened branch.
    fired = (
        np.array([2665.0, 596, 989, 19, 2464, 1690, 812, 4053]),
        np.array([5930.0, 404, 1078, 3, 4509, 2067, 833, 5872]),
    )
    for s in range(10):  # the oracle, one data set at a time
        size = np.exp(rng.normal(7, 1.2, 8))
        tw = np.round(size * np.exp(rng.normal(-0.2, 0.5, 8)))
        to = np.round(size * np.exp(rng.normal(0, 0.5, 8)))
        if s % 3 == 0:
            tw[0] *= 40  # an outlier task
        if s == 9:
            tw, to = fired
        row = cost_ratios(_cost_frame(tw, to)).set_index("statistic").loc["tokens_total_ratio"]
        lo, hi, log_est, rejected = total_ratio_ends(tw[None], to[None], 0.95)
        assert np.exp(log_est[0]) == pytest.approx(row["estimate"], rel=1e-12)
        assert np.exp(lo[0]) == pytest.approx(row["ci_low"], rel=1e-12)
        assert np.exp(hi[0]) == pytest.approx(row["ci_high"], rel=1e-12)
        # Either check fired: the pivot's own (the hull) or the lognormal check (CR2).
        assert bool(rejected[0]) == (row["method"] != GPQ_METHOD)
        hulls += row["method"] == GPQ_HULL_METHOD
        switched += row["method"] not in (GPQ_METHOD, GPQ_HULL_METHOD)
    assert hulls >= 1 and switched >= 1  # both widened branches were compared too


@pytest.mark.slow
def test_cost_coverage_rows_truth_and_a_sane_range():
    rng = np.random.default_rng(6)
    size = np.exp(rng.normal(7, 0.8, 40))
    tw = np.round(size * np.exp(rng.normal(-0.2, 0.3, 40)))
    to = np.round(size * np.exp(rng.normal(0, 0.3, 40)))
    cov = design_coverage(_cost_frame(tw, to), statistic="cost", n_resamples=300, rng=1).set_index(
        "statistic"
    )
    assert list(cov.index) == ["tokens_total_ratio", "wall_total_ratio"]
    assert cov.loc["tokens_total_ratio", "estimate"] == pytest.approx(tw.sum() / to.sum())
    # The lognormal world's truth: exp(mu_x + s_xx / 2 - mu_y - s_yy / 2) of the log totals.
    lx, ly = np.log(tw), np.log(to)
    truth = np.exp(lx.mean() + lx.var(ddof=1) / 2 - ly.mean() - ly.var(ddof=1) / 2)
    assert cov.loc["tokens_total_ratio", "truth"] == pytest.approx(truth, rel=1e-12)
    assert (cov["n_tasks"] == 40).all()
    # Its own model at 40 tasks: close to nominal (0.936-0.948 at 2,000 simulations; here
    # 300, MC SE 0.013).
    assert ((cov["coverage"] >= 0.88) & (cov["coverage"] <= 0.99)).all(), cov["coverage"]


def test_cost_coverage_without_a_lognormal_interval_says_why():
    cov = design_coverage(_cost_frame([10, 20], [12, 25]), statistic="cost", n_resamples=50)
    assert cov["coverage"].isna().all()
    assert cov["ci_note"].str.contains("fewer than 3 tasks").all()


def test_design_coverage_refuses_unknown_statistics_and_options():
    from evalstats.errors import ParameterError

    f = _two_judges(8, 3, 0.8, seed=2)
    with pytest.raises(ParameterError, match="takes no \\['world'\\]"):
        design_coverage(_cost_frame([1.0, 2, 3], [2.0, 2, 3]), statistic="cost", world="x")
    with pytest.raises(ParameterError, match="statistic must be one of"):
        design_coverage(f, statistic="alpha")
    with pytest.raises(ParameterError, match="takes no \\['world'\\]"):
        design_coverage(f, statistic="kappa", world="tasks")
    with pytest.raises(ParameterError, match="takes no"):
        design_coverage(f, world="tasks")


def test_one_row_per_pair_of_arms():
    f = _two_judges(8, 3, 0.8)
    k = pd.concat([f.assign(arm_a="v1", arm_b="none"), f.assign(arm_a="v2", arm_b="none")])
    kappa = design_coverage(k, statistic="kappa", n_resamples=50)
    assert kappa[["arm_a", "arm_b"]].values.tolist() == [["v1", "none"], ["v2", "none"]]
    assert (kappa["n"] == design_coverage(f, statistic="kappa", n_resamples=50)["n"].item()).all()
    rates = design_coverage(k, n_resamples=50)
    assert len(rates) == 4 and {"arm_a", "arm_b", "judge"} <= set(rates.columns)


@pytest.mark.parametrize(("c", "n"), [(8, 400), (40, 300), (6000, 40)])
def test_cost_coverage_is_the_one_of_total_ratio_ends(monkeypatch, c, n):
    # The same simulated evaluations with their interval from total_ratio_ends (cost_ratios'
    # own pivot_hull_ends: every draw formed and sorted, the check in float64) instead of
    # the fast ends_from_logs: the same frame, coverage and model_rejected counts included.
    from evalstats.stats import design

    rng = np.random.default_rng(c)
    size = np.exp(rng.normal(7, 1.0, c))
    tw = np.round(size * np.exp(rng.normal(-0.2, 0.4, c)))
    to = np.round(size * np.exp(rng.normal(0, 0.4, c)))
    tw[0] *= 20  # an outlier task: the checks fire in some evaluations
    frame = _cost_frame(tw, to)
    fast = design_coverage(frame, statistic="cost", n_resamples=n, rng=2)
    monkeypatch.setattr(
        design,
        "ends_from_logs",
        lambda lx, ly, conf, work: total_ratio_ends(np.exp(lx), np.exp(ly), conf),
    )
    ref = design_coverage(frame, statistic="cost", n_resamples=n, rng=2)
    pd.testing.assert_frame_equal(fast, ref, check_exact=True)
    assert (0 < ref["model_rejected"]).all() and (ref["model_rejected"] < 1).all()
