"""Agent cost ratios and judge spend: statsmodels, scipy and brute-force oracles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from contract import TIDY_COLUMNS
from scipy import stats

from evalstats.errors import DataError
from evalstats.frames import STATUS_DTYPE
from evalstats.stats.cost import (
    COST_METRICS,
    _woodruff_median_interval,  # private: Woodruff core against its oracle
    bm_df_from_leverage,
    cost_ratios,
    judge_spend,
)
from evalstats.stats.resample import cluster_bootstrap


def _pairs(rng, n_tasks=25, max_reps=4, one_per_task=False, effect_sd=0.3):
    """One row per pair with task-level effects, so clustering matters."""
    reps = np.ones(n_tasks, int) if one_per_task else rng.integers(1, max_reps + 1, n_tasks)
    task = np.repeat(np.arange(n_tasks), reps)
    replicate = np.concatenate([np.arange(1, r + 1) for r in reps])
    size = rng.normal(8, 1, n_tasks)[task]  # task difficulty drives both arms
    effect = rng.normal(-0.2, effect_sd, n_tasks)[task]  # task-specific saving
    tok_without = np.round(np.exp(size + rng.normal(0, 0.5, task.size)))
    tok_with = np.round(np.exp(size + effect + rng.normal(0, 0.5, task.size)))
    wall_without = np.exp(size / 3 + rng.normal(0, 0.4, task.size))
    wall_with = np.exp(size / 3 + effect + rng.normal(0, 0.4, task.size))
    return pd.DataFrame(
        {
            "task_id": [f"t{t:03d}" for t in task],
            "replicate": replicate,
            "status": pd.Categorical(["ok"] * task.size, dtype=STATUS_DTYPE),
            "tokens_with": pd.array(tok_with.astype(int), dtype="Int64"),
            "tokens_without": pd.array(tok_without.astype(int), dtype="Int64"),
            "wall_with_s": wall_with,
            "wall_without_s": wall_without,
        }
    )


def _expand_judgments(pairs):
    """Repeat each pair for 2 judges x 2 orders, as the verdict frame does."""
    out = pairs.merge(
        pd.DataFrame(
            {"judge": ["a:x", "a:x", "b:y", "b:y"], "order": ["with_first", "without_first"] * 2}
        ),
        how="cross",
    )
    return out.sample(frac=1.0, random_state=0).reset_index(drop=True)


def _row(out, metric):
    return out.set_index("statistic").loc[metric]


# ------------------------------------------------------------------- analytic vs statsmodels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_total_ratio_cr1_se_matches_statsmodels_wls_cluster(seed):
    pairs = _pairs(np.random.default_rng(seed))
    out = cost_ratios(pairs, interval="analytic")
    groups = pd.factorize(pairs["task_id"])[0]
    for measure, (cw, cwo) in {
        "tokens": ("tokens_with", "tokens_without"),
        "wall": ("wall_with_s", "wall_without_s"),
    }.items():
        x = pairs[cw].to_numpy(dtype=float)
        y = pairs[cwo].to_numpy(dtype=float)
        # WLS through the origin with weights 1/y is the ratio-of-totals estimator.
        fit = sm.WLS(x, y, weights=1.0 / y).fit(
            cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
        )
        r = _row(out, f"{measure}_total_ratio")
        assert r["estimate"] == pytest.approx(fit.params[0], rel=1e-12)
        # delta method: se(log R) = se(R) / R
        assert r["se"] == pytest.approx(fit.bse[0] / fit.params[0], rel=1e-10)
        q = stats.t.ppf(0.975, fit.df_resid_inference)
        assert fit.df_resid_inference == pairs["task_id"].nunique() - 1
        assert r["ci_low"] == pytest.approx(np.exp(np.log(fit.params[0]) - q * r["se"]))
        assert r["ci_high"] == pytest.approx(np.exp(np.log(fit.params[0]) + q * r["se"]))
        assert r["n_tasks"] == pairs["task_id"].nunique()
        assert r["n"] == len(pairs)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_geomean_cr1_se_matches_statsmodels_ols_cluster(seed):
    pairs = _pairs(np.random.default_rng(seed))
    out = cost_ratios(pairs, interval="analytic")
    groups = pd.factorize(pairs["task_id"])[0]
    for measure, (cw, cwo) in {
        "tokens": ("tokens_with", "tokens_without"),
        "wall": ("wall_with_s", "wall_without_s"),
    }.items():
        lr = np.log(pairs[cw].to_numpy(dtype=float) / pairs[cwo].to_numpy(dtype=float))
        fit = sm.OLS(lr, np.ones_like(lr)).fit(
            cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
        )
        r = _row(out, f"{measure}_geomean_ratio")
        assert r["estimate"] == pytest.approx(np.exp(fit.params[0]), rel=1e-12)
        # statsmodels' CR1 factor is C/(C-1) * (n-1)/(n-k); with k = 1 it is C/(C-1), ours
        assert r["se"] == pytest.approx(fit.bse[0], rel=1e-10)
        lo, hi = np.exp(fit.conf_int(alpha=0.05)[0])
        assert r["ci_low"] == pytest.approx(lo, rel=1e-10)
        assert r["ci_high"] == pytest.approx(hi, rel=1e-10)


def test_geomean_with_one_pair_per_task_is_the_t_interval_on_logs():
    pairs = _pairs(np.random.default_rng(6), n_tasks=30, one_per_task=True)
    out = cost_ratios(pairs, interval="analytic", confidence=0.9)
    lr = np.log(pairs["tokens_with"].to_numpy(float) / pairs["tokens_without"].to_numpy(float))
    ci = stats.ttest_1samp(lr, 0.0).confidence_interval(0.9)
    r = _row(out, "tokens_geomean_ratio")
    assert r["ci_low"] == pytest.approx(np.exp(ci.low), rel=1e-10)
    assert r["ci_high"] == pytest.approx(np.exp(ci.high), rel=1e-10)
    assert r["se"] == pytest.approx(stats.sem(lr), rel=1e-10)


# ------------------------------------------------------------------- bootstrap vs scipy
# The cost ratios' bootstrap construction (task sums through cluster_bootstrap), kept as an
# oracle check of the public resampling engine on the cost statistics.


def _log_ratio_of_sums(s):
    return np.log(s[..., 0]) - np.log(s[..., 1])


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_geomean_bootstrap_with_one_pair_per_task_matches_scipy_bootstrap(method):
    pairs = _pairs(np.random.default_rng(7), n_tasks=40, one_per_task=True)
    lr = np.log(pairs["tokens_with"].to_numpy(float) / pairs["tokens_without"].to_numpy(float))
    sums = np.column_stack([lr, np.ones_like(lr)])
    res = cluster_bootstrap(
        sums, lambda s: s[..., 0] / s[..., 1], method=method, n_resamples=20_000, rng=1
    )
    ref = stats.bootstrap(
        (lr,), np.mean, n_resamples=20_000, method=method.replace("bca", "BCa"), rng=2
    )
    se = ref.standard_error
    # independent streams: endpoints agree to Monte-Carlo error (~0.04 SE at B = 20 000)
    assert res.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert res.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)
    assert res.se[0] == pytest.approx(se, rel=0.05)


@pytest.mark.parametrize("method", ["percentile", "bca", "basic"])
def test_total_ratio_bootstrap_matches_scipy_paired_bootstrap_of_task_totals(method):
    pairs = _pairs(np.random.default_rng(8), n_tasks=35)
    tot = pairs.groupby("task_id")[["tokens_with", "tokens_without"]].sum()
    xw = tot["tokens_with"].to_numpy(float)
    xo = tot["tokens_without"].to_numpy(float)
    res = cluster_bootstrap(
        np.column_stack([xw, xo]), _log_ratio_of_sums, method=method, n_resamples=20_000, rng=3
    )

    def log_ratio(a, b, axis=-1):
        return np.log(a.sum(axis=axis)) - np.log(b.sum(axis=axis))

    ref = stats.bootstrap((xw, xo), log_ratio, paired=True, n_resamples=20_000,
                          method=method.replace("bca", "BCa"), rng=4)  # fmt: skip
    se = ref.standard_error
    assert res.ci_low[0] == pytest.approx(ref.confidence_interval.low, abs=0.15 * se)
    assert res.ci_high[0] == pytest.approx(ref.confidence_interval.high, abs=0.15 * se)
    assert res.se[0] == pytest.approx(se, rel=0.05)


# ------------------------------------------------------------------- median


def test_median_woodruff_interval_matches_statsmodels_cluster_se_and_quantiles():
    rng = np.random.default_rng(10)
    g = np.repeat(np.arange(9), rng.integers(1, 6, 9))
    lr = rng.normal(0, 0.5, 9)[g] + rng.normal(0, 0.3, g.size)
    frame = pd.DataFrame({"task_id": g, "replicate": np.arange(g.size), "status": "ok",
                          "tokens_with": np.exp(lr), "tokens_without": 1.0,
                          "wall_with_s": 1.0, "wall_without_s": 1.0})  # fmt: skip
    row = cost_ratios(frame, confidence=0.9).set_index("statistic").loc["tokens_median_ratio"]
    # Oracle: CR1 SE of the share at or below the median (OLS on a constant, clustered by
    # task), then the empirical quantiles at 0.5 -/+ t(C - 1) * se.
    z = (lr <= np.median(lr)).astype(float)
    fit = sm.OLS(z, np.ones((z.size, 1))).fit(cov_type="cluster", cov_kwds={"groups": g})
    se = float(fit.bse[0])
    t = stats.t.ppf(0.95, 8)
    lo, hi = np.quantile(lr, [0.5 - t * se, 0.5 + t * se], method="inverted_cdf")
    assert _woodruff_median_interval(lr, g, 0.9)[2] == pytest.approx(se, rel=1e-12)
    assert row["ci_low"] == pytest.approx(np.exp(lo), rel=1e-12)
    assert row["ci_high"] == pytest.approx(np.exp(hi), rel=1e-12)
    assert row["estimate"] == pytest.approx(np.exp(np.median(lr)))
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    assert row["method"].startswith("Woodruff") and row["df"] == 8


def test_repeated_judgments_of_a_pair_count_once():
    pairs = _pairs(np.random.default_rng(12))
    long = _expand_judgments(pairs)
    a = cost_ratios(pairs)
    b = cost_ratios(long)
    pd.testing.assert_frame_equal(a, b)
    assert (a["n"] == len(pairs)).all()


def test_disagreeing_rows_of_one_pair_raise():
    long = _expand_judgments(_pairs(np.random.default_rng(13)))
    long.loc[3, "tokens_with"] = long.loc[3, "tokens_with"] + 1
    with pytest.raises(DataError, match="disagree on tokens_with"):
        cost_ratios(long, interval="analytic")
    long = _expand_judgments(_pairs(np.random.default_rng(13)))
    long.loc[5, "wall_without_s"] = np.nan
    with pytest.raises(DataError, match="disagree on wall_without_s"):
        cost_ratios(long, interval="analytic")


def test_negative_cost_and_missing_columns_raise():
    pairs = _pairs(np.random.default_rng(14))
    bad = pairs.assign(wall_with_s=-pairs["wall_with_s"])
    with pytest.raises(DataError, match="negative"):
        cost_ratios(bad)
    with pytest.raises(DataError, match="lacks column"):
        cost_ratios(pairs.drop(columns="tokens_without"))


def test_no_answer_pairs_are_included_by_default_and_can_be_dropped():
    pairs = _pairs(np.random.default_rng(15), n_tasks=30)
    status = np.array(["ok"] * len(pairs), dtype=object)
    status[[0, 4, 9]] = "no_answer"
    pairs["status"] = pd.Categorical(status, dtype=STATUS_DTYPE)
    long = _expand_judgments(pairs)
    inc = cost_ratios(long, interval="analytic")
    exc = cost_ratios(long, interval="analytic", include_no_answer=False)
    ref = cost_ratios(pairs.loc[status != "no_answer"], interval="analytic")
    assert (inc["n_no_answer"] == 3).all() and (inc["n"] == len(pairs)).all()
    assert (exc["n_no_answer"] == 0).all()
    pd.testing.assert_frame_equal(exc, ref)


def test_zero_and_missing_costs_are_counted_not_silently_used():
    pairs = _pairs(np.random.default_rng(16), n_tasks=20)
    pairs.loc[2, "tokens_with"] = 0  # a real run that used nothing: kept in totals
    pairs.loc[7, "tokens_without"] = pd.NA  # unknown: out of every token metric
    out = cost_ratios(pairs, interval="analytic").set_index("statistic")
    n = len(pairs)
    assert out.loc["tokens_total_ratio", ["n", "n_excluded"]].tolist() == [n - 1, 1]
    for m in ("tokens_geomean_ratio", "tokens_median_ratio"):
        assert out.loc[m, ["n", "n_excluded"]].tolist() == [n - 2, 2]
    for m in ("wall_total_ratio", "wall_geomean_ratio"):
        assert out.loc[m, "n_excluded"] == 0
    keep = pairs.drop(index=7)
    assert out.loc["tokens_total_ratio", "estimate"] == pytest.approx(
        keep["tokens_with"].sum() / keep["tokens_without"].sum()
    )
    pos = pairs.drop(index=[2, 7])
    lr = np.log(pos["tokens_with"].to_numpy(float) / pos["tokens_without"].to_numpy(float))
    assert out.loc["tokens_geomean_ratio", "estimate"] == pytest.approx(np.exp(lr.mean()))
    assert out.loc["tokens_median_ratio", "estimate"] == pytest.approx(np.exp(np.median(lr)))


def test_swapping_the_arms_gives_reciprocal_ratios_and_intervals():
    pairs = _pairs(np.random.default_rng(17), n_tasks=24)
    swapped = pairs.rename(
        columns={
            "tokens_with": "tokens_without",
            "tokens_without": "tokens_with",
            "wall_with_s": "wall_without_s",
            "wall_without_s": "wall_with_s",
        }
    )
    for kw in (dict(interval="analytic"),):
        a = cost_ratios(pairs, **kw)
        b = cost_ratios(swapped, **kw)
        np.testing.assert_allclose(a["estimate"], 1 / b["estimate"], rtol=1e-12)
        np.testing.assert_allclose(a["ci_low"], 1 / b["ci_high"], rtol=1e-9)
        np.testing.assert_allclose(a["ci_high"], 1 / b["ci_low"], rtol=1e-9)
    # the default (lognormal total, CR2 geomean) is exactly reciprocal; CR2 on the total is
    # not: its leverages (Y_c / Y) belong to the denominator, so only the estimate is
    a, b = cost_ratios(pairs), cost_ratios(swapped)
    med = a["statistic"].str.contains("median")
    np.testing.assert_allclose(a["ci_low"][~med], 1 / b["ci_high"][~med], rtol=1e-9)
    np.testing.assert_allclose(a["ci_high"][~med], 1 / b["ci_low"][~med], rtol=1e-9)
    a, b = cost_ratios(pairs, interval="cr2"), cost_ratios(swapped, interval="cr2")
    np.testing.assert_allclose(a["estimate"], 1 / b["estimate"], rtol=1e-12)


def test_output_shape_and_single_cluster():
    pairs = _pairs(np.random.default_rng(18), n_tasks=10)
    out = cost_ratios(pairs)
    assert out["statistic"].tolist() == list(COST_METRICS)
    assert list(out.columns) == [
        *TIDY_COLUMNS,
        "estimand",
        "n_excluded",
        "n_no_answer",
        "token_source",
        "ci_note",
    ]
    assert {"estimate", "ci_low", "ci_high", "se", "n", "n_tasks", "method"} <= set(out.columns)
    assert (out["ci_low"] <= out["estimate"]).all() and (out["estimate"] <= out["ci_high"]).all()
    one = cost_ratios(pairs.loc[pairs["task_id"] == pairs["task_id"].iloc[0]])
    assert one["estimate"].notna().all() and one["ci_low"].isna().all()
    with pytest.raises(ValueError, match="interval"):
        cost_ratios(pairs, interval="delta")


def test_task_clustering_widens_the_interval_against_naive_iid():
    # Strong task effects and several replicates: the clustered SE must exceed the iid one.
    pairs = _pairs(np.random.default_rng(19), n_tasks=40, max_reps=6, effect_sd=0.8)
    lr = np.log(pairs["tokens_with"].to_numpy(float) / pairs["tokens_without"].to_numpy(float))
    out = cost_ratios(pairs, interval="analytic")
    assert _row(out, "tokens_geomean_ratio")["se"] > 1.2 * stats.sem(lr)


# ------------------------------------------------------------------- judge spend


def test_judge_spend_is_nan_aware_and_skips_unjudged_no_answer_rows():
    frame = pd.DataFrame(
        {
            "judge": ["a:x", "a:x", "a:x", "b:y", "b:y", "b:y"],
            "rubric": ["r1", "r1", "r2", "r1", "r1", "r1"],
            "status": pd.Categorical(
                ["ok", "error", "no_answer", "ok", "no_answer", "invalid"], dtype=STATUS_DTYPE
            ),
            "judge_input_tokens": pd.array([1000, 900, None, 1200, 800, 1100], dtype="Int64"),
            "judge_output_tokens": pd.array([200, None, None, 150, 90, 120], dtype="Int64"),
            "judge_usd": [0.01, np.nan, np.nan, 0.02, 0.005, np.nan],
        }
    )
    out = judge_spend(frame).set_index("judge")
    assert out.loc["a:x"].to_dict() == {
        "calls": 2,
        "n_errors": 1,
        "input_tokens": 1900.0,
        "output_tokens": 200.0,
        "usd": 0.01,
        "n_unpriced": 1,
        "n_unknown_tokens": 1,
    }
    # a no_answer row with recorded usage was paid for, so it counts
    assert out.loc["b:y", "calls"] == 3
    assert out.loc["b:y", "usd"] == pytest.approx(0.025)
    assert out.loc["b:y", "n_unpriced"] == 1
    by2 = judge_spend(frame, by=["judge", "rubric"])
    # a:x's only r2 row is an unjudged no_answer pair: no call, so no row
    assert by2[["judge", "rubric"]].to_numpy().tolist() == [["a:x", "r1"], ["b:y", "r1"]]
    assert by2["calls"].sum() == 5


def test_a_coarser_cluster_column_is_respected_and_must_be_constant_within_pairs():
    pairs = _pairs(np.random.default_rng(21), n_tasks=30)
    pairs["repo"] = pairs["task_id"].str[-1]  # ten repos of three tasks
    out = cost_ratios(pairs, cluster="repo", interval="analytic")
    assert (out["n_tasks"] == pairs["repo"].nunique()).all()
    groups = pd.factorize(pairs["repo"])[0]
    lr = np.log(pairs["tokens_with"].to_numpy(float) / pairs["tokens_without"].to_numpy(float))
    fit = sm.OLS(lr, np.ones_like(lr)).fit(cov_type="cluster", cov_kwds={"groups": groups})
    assert _row(out, "tokens_geomean_ratio")["se"] == pytest.approx(fit.bse[0], rel=1e-10)
    long = _expand_judgments(pairs)
    long.loc[0, "repo"] = "elsewhere"
    with pytest.raises(DataError, match="disagree on repo"):
        cost_ratios(long, cluster="repo")


def test_judge_spend_with_categorical_judges():
    frame = pd.DataFrame(
        {
            "judge": pd.Categorical(["a:x", "b:y", "a:x"], categories=["a:x", "b:y", "c:z"]),
            "status": pd.Categorical(["ok", "ok", "invalid"], dtype=STATUS_DTYPE),
            "judge_input_tokens": pd.array([10, 20, 30], dtype="Int64"),
            "judge_output_tokens": pd.array([1, 2, 3], dtype="Int64"),
            "judge_usd": [0.1, 0.2, 0.3],
        }
    )
    out = judge_spend(frame)
    assert out["judge"].astype(str).tolist() == ["a:x", "b:y"]
    assert out["usd"].tolist() == pytest.approx([0.4, 0.2])
    assert out["calls"].tolist() == [2, 1]


# ------------------------------------------------------------------- CR2, BM df, Fieller


def _cr2_direct(design, resp, weights, groups):
    """CR2 SE and Bell-McCaffrey df of a one-column WLS, by explicit matrices.

    Pustejovsky & Tipton (2018): A_c = (I - H_cc)^(-1/2) on the weighted scale, working model
    Var = 1 / w; df = tr(G'G)^2 / ||G'G||_F^2 with g_c = (I - H)'_c A_c X_c M.
    """
    from scipy import linalg

    sw = np.sqrt(weights)
    xt, yt = design * sw[:, None], resp * sw
    m = np.linalg.inv(xt.T @ xt)
    beta = m @ xt.T @ yt
    e = yt - xt @ beta
    hat = xt @ m @ xt.T
    ih = np.eye(len(resp)) - hat
    meat, cols = 0.0, []
    for c in np.unique(groups):
        i = np.flatnonzero(groups == c)
        a = linalg.sqrtm(np.linalg.inv(np.eye(i.size) - hat[np.ix_(i, i)])).real
        u = (m @ xt[i].T @ a @ e[i])[0]
        meat += u**2
        cols.append(ih[i, :].T @ a @ xt[i] @ m[:, 0])
    gg = np.array(cols) @ np.array(cols).T
    return float(beta[0]), float(np.sqrt(meat)), float(np.trace(gg) ** 2 / np.sum(gg**2))


@pytest.mark.parametrize("seed", [30, 31])
def test_cr2_and_bell_mccaffrey_df_match_a_direct_matrix_computation(seed):
    pairs = _pairs(np.random.default_rng(seed), n_tasks=9, max_reps=5, effect_sd=0.5)
    out = cost_ratios(pairs, interval="cr2", confidence=0.9)
    groups = pd.factorize(pairs["task_id"])[0]
    x = pairs["tokens_with"].to_numpy(float)
    y = pairs["tokens_without"].to_numpy(float)
    # ratio of totals: through-origin WLS of x on y, weights 1/y
    r, se, df = _cr2_direct(y[:, None], x, 1.0 / y, groups)
    row = _row(out, "tokens_total_ratio")
    assert row["estimate"] == pytest.approx(r, rel=1e-12)
    assert row["se"] == pytest.approx(se / r, rel=1e-9)
    assert row["df"] == pytest.approx(df, rel=1e-9)
    q = stats.t.ppf(0.95, df)
    assert row["ci_low"] == pytest.approx(r * np.exp(-q * se / r), rel=1e-9)
    assert row["estimand"] == "ratio of means"
    # geometric mean: intercept-only OLS of the log ratio
    lr = np.log(x / y)
    mu, se, df = _cr2_direct(np.ones((lr.size, 1)), lr, np.ones(lr.size), groups)
    row = _row(out, "tokens_geomean_ratio")
    assert row["se"] == pytest.approx(se, rel=1e-9)
    assert row["df"] == pytest.approx(df, rel=1e-9)
    assert row["df"] < pairs["task_id"].nunique() - 1  # unequal clusters: fewer df than C - 1
    q = stats.t.ppf(0.95, df)
    assert row["ci_high"] == pytest.approx(np.exp(mu + q * se), rel=1e-9)
    assert row["estimand"].startswith("geometric mean")


def test_bm_df_is_c_minus_1_when_balanced_and_cr2_equals_cr1_then():
    from evalstats.stats.cost import bm_df_from_leverage

    assert bm_df_from_leverage(np.full((3, 8), 1 / 8)).tolist() == pytest.approx([7.0] * 3)
    rng = np.random.default_rng(32)
    pairs = _pairs(rng, n_tasks=8).query("replicate <= 1")
    a = _row(cost_ratios(pairs, interval="cr2"), "tokens_geomean_ratio")
    b = _row(cost_ratios(pairs, interval="analytic"), "tokens_geomean_ratio")
    assert a["se"] == pytest.approx(b["se"], rel=1e-12)
    assert a["df"] == pytest.approx(7.0) and b["df"] == 7.0


def _gpq_by_matrices(x, y, n, seed):
    """The pivot by explicit matrices: W ~ Wishart(C - 1, I) from scipy, T = chol(W),
    A = L L' (order d, s), Sigma* = (L T^-1)(L T^-1)', theta* = dbar - Z sqrt(S*_dd / C)
    + S*_ds / 2."""
    rng = np.random.default_rng(seed)
    lx, ly = np.log(x), np.log(y)
    d, s = lx - ly, lx + ly
    c = d.size
    big_l = np.linalg.cholesky(np.cov(np.vstack([d, s])) * (c - 1))
    w = stats.wishart(df=c - 1, scale=np.eye(2)).rvs(size=n, random_state=rng)
    b = big_l @ np.linalg.inv(np.linalg.cholesky(w))
    sig = b @ np.swapaxes(b, 1, 2)
    z = rng.standard_normal(n)
    return d.mean() - z * np.sqrt(sig[:, 0, 0] / c) + sig[:, 0, 1] / 2


def test_default_total_interval_is_the_generalized_pivotal_one_on_task_totals():
    from evalstats.stats.cost import GPQ_METHOD

    pairs = _pairs(np.random.default_rng(33), n_tasks=8, max_reps=3, effect_sd=0.4)
    out = cost_ratios(pairs)
    cr2 = cost_ratios(pairs, interval="cr2")
    geo = out["statistic"].str.contains("geomean")
    pd.testing.assert_frame_equal(out.loc[geo], cr2.loc[geo])  # the geomean: CR2 + BM
    row = _row(out, "tokens_total_ratio")
    tot = pairs.groupby("task_id")[["tokens_with", "tokens_without"]].sum().to_numpy(float)
    assert row["estimate"] == pytest.approx(tot[:, 0].sum() / tot[:, 1].sum())  # plain ratio
    assert row["method"] == GPQ_METHOD and np.isnan(row["df"])
    ref = _gpq_by_matrices(tot[:, 0], tot[:, 1], 200_000, seed=1)
    lo, hi = np.quantile(ref, [0.025, 0.975])
    # 8,192 package draws against 200,000 independent ones: limits agree to ~1 % of the width
    tol = 0.02 * (hi - lo)
    assert np.log(row["ci_low"]) == pytest.approx(lo, abs=tol)
    assert np.log(row["ci_high"]) == pytest.approx(hi, abs=tol)
    assert row["se"] == pytest.approx(np.std(ref), rel=0.05)
    assert row["ci_low"] < row["estimate"] < row["ci_high"]
    assert _row(out, "tokens_geomean_ratio")["method"].startswith("CR2")
    assert out["estimand"].tolist()[:3] == [
        "ratio of means",
        "geometric mean ratio (mean of log ratios)",
        "median ratio (median of log ratios)",
    ]
    # deterministic: the pivot's draws do not use the caller's random source
    again = _row(cost_ratios(pairs), "tokens_total_ratio")
    assert (again["ci_low"], again["ci_high"]) == (row["ci_low"], row["ci_high"])
    # a task total of 0 has no log: the total falls back to CR2 and says so
    zero = pairs.copy()
    zero.loc[zero["task_id"] == zero["task_id"].iloc[0], "tokens_with"] = 0
    r0 = _row(cost_ratios(zero), "tokens_total_ratio")
    assert r0["method"].startswith("CR2") and "task total of 0" in r0["method"]
    assert np.isfinite(r0["ci_low"])
    # two tasks: the pivot needs C >= 3, CR2 says why
    two = pairs[pairs["task_id"].isin(pairs["task_id"].unique()[:2])]
    r2 = _row(cost_ratios(two), "tokens_total_ratio")
    assert r2["method"].startswith("CR2") and "fewer than 3 tasks" in r2["method"]


def test_generalized_pivot_reduces_to_krishnamoorthy_mathew_for_one_lognormal_mean():
    from evalstats.stats.cost import gpq_interval, lognormal_ratio_gpq

    rng = np.random.default_rng(37)
    x = np.exp(rng.normal(3.0, 1.2, 11))
    lo, hi = gpq_interval(lognormal_ratio_gpq(x, np.full(11, 5.0)), 0.95)
    # Krishnamoorthy & Mathew (2003): T = ybar - Z s / sqrt(U / (n - 1)) / sqrt(n)
    #   + s^2 / (2 U / (n - 1)), U ~ chi2(n - 1), for log E[x]
    ly = np.log(x)
    s2 = ly.var(ddof=1)
    u = stats.chi2(10).rvs(400_000, random_state=1)
    z = stats.norm.rvs(size=400_000, random_state=2)
    sig2 = s2 * 10 / u
    t = ly.mean() - z * np.sqrt(sig2 / 11) + sig2 / 2 - np.log(5.0)
    ref_lo, ref_hi = np.quantile(t, [0.025, 0.975])
    tol = 0.02 * (ref_hi - ref_lo)
    assert lo == pytest.approx(ref_lo, abs=tol) and hi == pytest.approx(ref_hi, abs=tol)


def test_gpq_interval_and_generalized_p_values_agree():
    from evalstats.stats.cost import gpq_interval

    draws = np.random.default_rng(38).normal(size=8192)
    for conf in (0.8, 0.9, 0.95, 0.99):
        lo, hi = gpq_interval(draws, conf)
        a = (1 - conf) / 2
        # a bound just beyond a limit is rejected at level a, one just inside is not
        assert np.mean(draws >= np.nextafter(hi, np.inf)) < a <= np.mean(draws >= hi)
        assert np.mean(draws <= np.nextafter(lo, -np.inf)) < a <= np.mean(draws <= lo)


def test_the_default_widens_to_cr2_when_the_lognormal_model_excludes_the_plain_ratio():
    from evalstats.stats.cost import GPQ_HULL_METHOD, gpq_interval, lognormal_ratio_gpq
    from evalstats.stats.equivalence import cost_equivalence

    # eight tasks, log task sizes left-skewed (one tiny task) and the saving growing with
    # size: the lognormal model puts the ratio of means far above the ratio of totals
    # (two runs per task with normal log noise: the runs' check passes, the model still fails)
    sizes = np.array([3.0, 8.0, 8.3, 8.5, 8.6, 8.8, 9.0, 9.1])
    saving = -0.2 + 0.6 * (sizes - sizes.mean()) + np.array([0, 1, -1, 1, -1, 1, -1, 0]) * 0.05
    noise = np.random.default_rng(40).normal(0.0, 0.05, (2, 16))
    pairs = pd.DataFrame(
        {
            "task_id": [f"t{i}" for i in range(8)] * 2,
            "replicate": np.repeat([1, 2], 8),
            "status": "ok",
            "tokens_with": np.round(np.exp(np.tile(sizes + saving, 2) + noise[0])).astype(int),
            "tokens_without": np.round(np.exp(np.tile(sizes, 2) + noise[1])).astype(int),
            "wall_with_s": 1.0,
            "wall_without_s": 1.0,
        }
    )
    row = _row(cost_ratios(pairs), "tokens_total_ratio")
    assert row["method"] == GPQ_HULL_METHOD
    tot = pairs.groupby("task_id")[["tokens_with", "tokens_without"]].sum().to_numpy(float)
    x, y = tot[:, 0], tot[:, 1]
    glo, ghi = np.exp(gpq_interval(lognormal_ratio_gpq(x, y), 0.95))
    assert not glo <= row["estimate"] <= ghi  # the model's interval misses the plain ratio
    c2 = _row(cost_ratios(pairs, interval="cr2"), "tokens_total_ratio")
    assert row["ci_low"] == pytest.approx(min(glo, c2["ci_low"]), rel=1e-12)
    assert row["ci_high"] == pytest.approx(max(ghi, c2["ci_high"]), rel=1e-12)
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"]
    # the equivalence test on that construction inverts the hull at 1 - 2 alpha
    ref = _row(cost_ratios(pairs, confidence=0.90), "tokens_total_ratio")
    for margin in (1.05, 1.5, 3.0, 10.0):
        eq = cost_equivalence(pairs, margin=margin, metrics=("tokens_total_ratio",))
        eq = eq.set_index("metric").loc["tokens_total_ratio"]
        assert eq["ci_low"] == pytest.approx(ref["ci_low"], rel=1e-12)
        assert eq["ci_high"] == pytest.approx(ref["ci_high"], rel=1e-12)
        assert (eq["p_value"] < 0.05) == (eq["ci_high"] < margin)


def test_coverage_slice_at_8_tasks_x_3_with_skewed_costs():
    """A fast slice of benchmarks/coverage_cost.py: loose bounds, vectorised over evaluations.

    Log-sd of task size 1.5 and savings growing with size (slope +0.3): the design where the
    CR2 interval on the plain ratio covers 0.69 and the former lognormal t interval 0.90-0.94.
    """
    from evalstats.stats.cost import gpq_interval, lognormal_ratio_gpq

    rng = np.random.default_rng(36)
    e, c, r, sd, slope, sd_u, sd_e, a = 1000, 8, 3, 1.5, 0.3, 0.25, 0.4, np.log(0.7)
    s = sd * rng.standard_normal((e, c, 1))
    b = a + slope * s + sd_u * rng.standard_normal((e, c, 1))
    y = np.exp(s + sd_e * rng.standard_normal((e, c, r)))
    x = np.exp(s + b + sd_e * rng.standard_normal((e, c, r)))
    true_total = a + ((1 + slope) ** 2 * sd**2 + sd_u**2 - sd**2) / 2
    xc, yc = x.sum(2), y.sum(2)
    lo, hi = np.empty(e), np.empty(e)
    for k in range(0, e, 250):  # 8,192 draws per evaluation: chunks keep memory small
        lo[k : k + 250], hi[k : k + 250] = gpq_interval(
            lognormal_ratio_gpq(xc[k : k + 250], yc[k : k + 250]), 0.95
        )
    cover_total = np.mean((lo <= true_total) & (true_total <= hi))
    lr = (np.log(x) - np.log(y)).mean(2)  # balanced: CR2 + BM is the t interval on task means
    m, sem = lr.mean(1), lr.std(1, ddof=1) / np.sqrt(c)
    cover_geo = np.mean(np.abs(m - a) <= stats.t.ppf(0.975, c - 1) * sem)
    assert 0.925 < cover_total < 0.985  # Monte-Carlo SE 0.007
    assert 0.925 < cover_geo < 0.975
    # for contrast: the CR2 + BM interval on the plain ratio fails here
    est = np.log(xc.sum(1) / yc.sum(1))
    z = xc / xc.sum(1, keepdims=True) - yc / yc.sum(1, keepdims=True)
    h = yc / yc.sum(1, keepdims=True)
    se2 = np.sqrt((z**2 / (1 - h)).sum(1))
    q = stats.t.ppf(0.975, bm_df_from_leverage(h))
    assert np.mean(np.abs(est - true_total) <= q * se2) < 0.80


def test_one_result_per_pair_of_arms_each_its_own_two_arm_result():
    a, b = _pairs(np.random.default_rng(40)), _pairs(np.random.default_rng(41), n_tasks=12)
    k_arms = pd.concat([a.assign(arm_a="v1", arm_b="none"), b.assign(arm_a="v2", arm_b="none")])
    out = cost_ratios(k_arms)
    assert list(out.columns[:2]) == ["arm_a", "arm_b"] and len(out) == 2 * len(COST_METRICS)
    for arm, part in (("v1", a), ("v2", b)):
        got = out.loc[out["arm_a"] == arm].drop(columns=["arm_a", "arm_b"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, pd.DataFrame(cost_ratios(part)))
    assert out.attrs["token_source"] == "as given"
