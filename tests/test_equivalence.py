"""Equivalence and non-inferiority tests: statsmodels' TOST and one-sided t tests as oracles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.weightstats import DescrStatsW, ttost_ind, ttost_paired

from evalstats.stats.equivalence import EquivalenceResult, cost_equivalence, noninferiority, tost

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _one_pair_per_task(rng, n_tasks=12, log_saving=-0.05, sd=0.15):
    size = rng.normal(7.5, 1.0, n_tasks)
    without = np.round(np.exp(size + rng.normal(0, 0.1, n_tasks)))
    with_ = np.round(np.exp(size + log_saving + rng.normal(0, sd, n_tasks)))
    return pd.DataFrame(
        {
            "task_id": [f"t{i:02d}" for i in range(n_tasks)],
            "replicate": 1,
            "status": "ok",
            "tokens_with": with_,
            "tokens_without": without,
            "wall_with_s": with_ / 100,
            "wall_without_s": without / 100,
        }
    )


# ------------------------------------------------------------------- generic tests


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tost_matches_statsmodels_one_sample_ttost(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.03, 0.2, 15)
    d = DescrStatsW(x)
    for low, upp in ((-0.1, 0.1), (-0.3, 0.05), (0.0, 0.4)):
        p, (t1, p1, df1), (t2, p2, df2) = d.ttost_mean(low, upp)
        res = tost(x.mean(), d.std_mean, x.size - 1, lower=low, upper=upp)
        assert res.p_lower == pytest.approx(p1, rel=1e-10)
        assert res.p_upper == pytest.approx(p2, rel=1e-10)
        assert res.p_value == pytest.approx(p, rel=1e-10)
        assert res.df == df1 == df2


@pytest.mark.parametrize("seed", [3, 4])
def test_tost_matches_statsmodels_ttost_ind_with_pooled_variance(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0.5, 1.0, 14), rng.normal(0.4, 1.0, 19)
    p, (_, p1, _), (_, p2, _) = ttost_ind(a, b, -0.5, 0.5, usevar="pooled")
    n1, n2 = a.size, b.size
    pooled = ((n1 - 1) * a.var(ddof=1) + (n2 - 1) * b.var(ddof=1)) / (n1 + n2 - 2)
    se = np.sqrt(pooled * (1 / n1 + 1 / n2))
    res = tost(a.mean() - b.mean(), se, n1 + n2 - 2, lower=-0.5, upper=0.5)
    assert (res.p_lower, res.p_upper, res.p_value) == pytest.approx((p1, p2, p), rel=1e-10)


def test_noninferiority_matches_statsmodels_one_sided_t_test_both_directions():
    rng = np.random.default_rng(5)
    x = rng.normal(-0.02, 0.1, 10)
    d = DescrStatsW(x)
    _, p_larger, _ = d.ttest_mean(-0.05, alternative="larger")
    res = noninferiority(x.mean(), d.std_mean, 9, bound=-0.05, better="higher")
    assert res.p_value == pytest.approx(p_larger, rel=1e-10)
    assert res.p_lower == res.p_value and np.isnan(res.p_upper)
    assert (res.lower_margin, res.upper_margin) == (-0.05, np.inf)
    _, p_smaller, _ = d.ttest_mean(0.04, alternative="smaller")
    res = noninferiority(x.mean(), d.std_mean, 9, bound=0.04, better="lower")
    assert res.p_value == pytest.approx(p_smaller, rel=1e-10)
    assert res.upper_margin == 0.04 and np.isnan(res.p_lower)


@pytest.mark.slow  # simulation study
def test_conclusion_agrees_with_the_1_minus_2alpha_interval_in_every_case():
    rng = np.random.default_rng(6)
    est = rng.normal(0, 0.1, 4000)
    se = rng.uniform(0.005, 0.1, 4000)
    df = rng.choice([2.5, 7.0, 30.0, np.inf], 4000)
    n_equiv = n_ni = 0
    for e, s, f in zip(est, se, df, strict=True):
        res = tost(e, s, f, lower=-0.1, upper=0.1)
        inside = -0.1 < res.ci_low and res.ci_high < 0.1
        assert res.rejected == inside == (res.conclusion == "equivalent")
        n_equiv += inside
        ni = noninferiority(e, s, f, bound=-0.1)
        assert ni.rejected == (ni.ci_low > -0.1)
        n_ni += ni.rejected
    assert 0 < n_equiv < 4000 and 0 < n_ni < 4000  # both outcomes occur: not vacuous


def test_z_version_and_the_interval_level():
    res = tost(0.0, 0.05, np.inf, lower=-0.1, upper=0.1, alpha=0.05)
    assert res.p_value == pytest.approx(0.02275013, rel=1e-6)  # Phi(-2)
    assert res.ci_high == pytest.approx(1.6448536 * 0.05, rel=1e-6)  # a 90 % interval


def test_zero_se_is_an_exact_boundary_result_not_nan():
    inside = tost(0.05, 0.0, 7, lower=-0.1, upper=0.1)
    assert (inside.p_value, inside.conclusion) == (0.0, "equivalent")
    assert inside.ci_low == inside.ci_high == 0.05
    outside = tost(0.2, 0.0, 7, lower=-0.1, upper=0.1)
    assert (outside.p_lower, outside.p_upper, outside.p_value) == (0.0, 1.0, 1.0)
    on_bound = noninferiority(-0.1, 0.0, 7, bound=-0.1)
    assert on_bound.p_value == 1.0  # the bound itself is in H0


def test_result_is_frozen_and_tidy():
    res = tost(0.0, 0.05, 10, lower=-0.1, upper=0.1)
    assert isinstance(res, EquivalenceResult)
    with pytest.raises(AttributeError):
        res.p_value = 0.5  # type: ignore[misc]
    frame = res.to_frame()
    assert frame.shape == (1, 13) and frame.loc[0, "kind"] == "equivalence"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lower=0.1, upper=-0.1), "lower must be below upper"),
        (dict(lower=-0.1, upper=0.1, alpha=0.6), "alpha"),
        (dict(lower=-0.1, upper=0.1, alpha=0.0), "alpha"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        tost(0.0, 0.1, 5, **kwargs)


def test_bad_estimates_raise():
    with pytest.raises(ValueError, match="se"):
        tost(0.0, -0.1, 5, lower=-1, upper=1)
    with pytest.raises(ValueError, match="df"):
        tost(0.0, 0.1, np.nan, lower=-1, upper=1)
    with pytest.raises(ValueError, match="estimate"):
        noninferiority(np.nan, 0.1, 5, bound=0.0)
    with pytest.raises(ValueError, match="better"):
        noninferiority(0.0, 0.1, 5, bound=0.0, better="more")


# ------------------------------------------------------------------- frame level


def test_cost_equivalence_with_one_pair_per_task_is_statsmodels_paired_ttost_on_logs():
    pairs = _one_pair_per_task(np.random.default_rng(7))
    out = cost_equivalence(pairs, margin=1.10, kind="equivalence").set_index("metric")
    lw, lwo = np.log(pairs["tokens_with"]), np.log(pairs["tokens_without"])
    p, (_, p1, df1), (_, p2, _) = ttost_paired(lw, lwo, -np.log(1.1), np.log(1.1))
    row = out.loc["tokens_geomean_ratio"]
    assert (row["p_lower"], row["p_upper"], row["p_value"]) == pytest.approx((p1, p2, p), rel=1e-9)
    assert row["df"] == pytest.approx(df1)
    assert row["lower_margin"] == pytest.approx(1 / 1.1) and row["upper_margin"] == 1.1
    assert row["estimand"].startswith("geometric mean")
    assert out.loc["tokens_total_ratio", "estimand"] == "ratio of means"


def test_cost_noninferiority_is_the_one_sided_test_of_log_ratio_below_log_margin():
    pairs = _one_pair_per_task(np.random.default_rng(8), log_saving=0.03)
    out = cost_equivalence(pairs, margin=1.10).set_index("metric")
    lr = np.log(pairs["tokens_with"] / pairs["tokens_without"]).to_numpy()
    _, p_ref, _ = DescrStatsW(lr).ttest_mean(np.log(1.1), alternative="smaller")
    row = out.loc["tokens_geomean_ratio"]
    assert row["p_value"] == pytest.approx(p_ref, rel=1e-9)
    assert row["kind"] == "noninferiority" and np.isnan(row["p_lower"])
    assert (row["p_value"] < 0.05) == (row["ci_high"] < 1.1)


@pytest.mark.parametrize("interval", ["default", "cr2", "analytic"])
def test_cost_equivalence_inverts_the_interval_cost_ratios_reports(interval):
    from evalstats.stats.cost import GPQ_METHOD, cost_ratios, total_ratio_draws

    rng = np.random.default_rng(9)
    pairs = pd.concat([_one_pair_per_task(rng).assign(replicate=r) for r in (1, 2, 3)])
    pairs = pairs.iloc[:-5]  # unequal task sizes: BM df below C - 1
    # the test at alpha is the 1 - 2 alpha interval of the same construction
    ref = cost_ratios(pairs, interval=interval, confidence=0.90).set_index("statistic")
    out = cost_equivalence(pairs, margin=1.2, kind="equivalence", interval=interval)
    out = out.set_index("metric")
    for metric in ("tokens_total_ratio", "tokens_geomean_ratio"):
        r = ref.loc[metric]
        assert out.loc[metric, "ci_low"] == pytest.approx(r["ci_low"], rel=1e-12)
        assert out.loc[metric, "ci_high"] == pytest.approx(r["ci_high"], rel=1e-12)
        assert out.loc[metric, "estimate"] == r["estimate"]  # the plain ratio, always
        if r["method"] == GPQ_METHOD:  # the default total: generalized p-values of its draws
            draws = total_ratio_draws(pairs)
            p = max(np.mean(draws <= -np.log(1.2)), np.mean(draws >= np.log(1.2)))
            assert out.loc[metric, "p_value"] == p and np.isnan(out.loc[metric, "df"])
        else:
            assert out.loc[metric, "df"] == r["df"]
            centre = np.log(out.loc[metric, "test_centre"])
            res = tost(centre, r["se"], r["df"], lower=-np.log(1.2), upper=np.log(1.2))
            assert out.loc[metric, "p_value"] == pytest.approx(res.p_value, rel=1e-12)
        inside = 1 / 1.2 < r["ci_low"] and r["ci_high"] < 1.2
        assert (out.loc[metric, "p_value"] < 0.05) == inside
    geo = out.loc["tokens_geomean_ratio"]
    assert geo["test_centre"] == pytest.approx(geo["estimate"], rel=1e-12)
    if interval != "analytic":  # CR2: Bell-McCaffrey df below C - 1 = 11
        assert geo["df"] < 11


def test_cost_equivalence_refuses_the_median_and_bad_margins():
    pairs = _one_pair_per_task(np.random.default_rng(10))
    with pytest.raises(ValueError, match="metrics"):
        cost_equivalence(pairs, metrics=("tokens_median_ratio",))
    with pytest.raises(ValueError, match="margin"):
        cost_equivalence(pairs, margin=0.9)


def test_cost_equivalence_with_one_task_says_why_there_is_no_test():
    pairs = _one_pair_per_task(np.random.default_rng(11)).iloc[:1]
    out = cost_equivalence(pairs)
    assert out["conclusion"].str.startswith("no test").all()
    assert out["p_value"].isna().all()


def _verdicts(rng, n_tasks=20, p=(0.3, 0.4, 0.3)):
    outcome = rng.choice(["win", "tie", "loss"], n_tasks, p=p)
    return pd.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(n_tasks)],
            "judge": "j",
            "status": "ok",
            "outcome": outcome,
        }
    )


def _net_win_row(frame, **kw):
    """win_rates' net-win row (one group): the estimate, SE and df a declared test takes."""
    from evalstats.stats import win_rates

    return win_rates(frame, **kw).wide().iloc[0]


def test_net_win_tost_with_one_verdict_per_task_is_statsmodels_ttost():
    # net_win_equivalence (removed) was tost on win_rates' net-win row, as here.
    frame = _verdicts(np.random.default_rng(12))
    row = _net_win_row(frame)
    res = tost(row["net_win"], row["net_win_se"], row["net_win_df"], lower=-0.3, upper=0.3)
    d = frame["outcome"].map({"win": 1.0, "tie": 0.0, "loss": -1.0}).to_numpy()
    p, (_, p1, df1), (_, p2, _) = DescrStatsW(d).ttost_mean(-0.3, 0.3)
    assert row["judge"] == "j" and row["net_win"] == pytest.approx(d.mean())
    assert (res.p_lower, res.p_upper, res.p_value) == pytest.approx((p1, p2, p), rel=1e-9)
    assert row["net_win_df"] == df1


@pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is not in this checkout")
def test_on_the_sample_data():
    from evalstats.frames import load_frame
    from evalstats.stats import win_rates

    frame = load_frame(SAMPLE)
    cost = cost_equivalence(frame, margin=1.10)
    assert (cost["conclusion"] == "non-inferior").all()  # the sample's WITH saves ~27 %
    # the sample has a clear WITH lead: not equivalent to 0 within 0.1
    rows = win_rates(frame, by=["rubric", "judge"]).wide()
    assert len(rows) == 4
    for _, r in rows.iterrows():
        res = tost(r["net_win"], r["net_win_se"], r["net_win_df"], lower=-0.1, upper=0.1)
        assert res.conclusion == "not shown equivalent"


def test_cost_equivalence_passes_its_documented_arguments_through():
    """cluster, include_no_answer and confidence reach cost_ratios; the tested rows are at
    1 - 2 alpha whatever cost_ratios' confidence; an unknown name (here one cost_ratios no
    longer takes) is a TypeError naming it."""
    pairs = _one_pair_per_task(np.random.default_rng(9))
    plain = cost_equivalence(pairs, margin=1.10)
    passed = cost_equivalence(pairs, margin=1.10, confidence=0.99)
    cols = ["metric", "p_value", "ci_low", "ci_high", "conclusion"]
    pd.testing.assert_frame_equal(plain[cols], passed[cols])
    with pytest.raises(TypeError, match="rng"):
        cost_equivalence(pairs, margin=1.10, rng=0)
    by_task = cost_equivalence(pairs, margin=1.10, cluster="task_id", include_no_answer=False)
    assert by_task["metric"].tolist() == plain["metric"].tolist()
    with pytest.raises(TypeError, match="n_resample"):
        cost_equivalence(pairs, margin=1.10, n_resample=500)
