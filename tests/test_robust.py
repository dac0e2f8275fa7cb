"""Small-sample cluster-robust machinery (evalstats.stats.rates) against independent oracles.

CR1 is checked against statsmodels' cluster covariance; CR2 and the Bell-McCaffrey df
against a direct matrix computation with explicit (I - H_gg)^{-1/2} blocks (scipy's
sqrtm), written here independently of the closed forms in the module — the net-win df
under the exchangeable working model with an explicit block covariance matrix, and the
ICC it is computed at against scipy's one-way ANOVA F (``f_oneway``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.linalg as sl
import statsmodels.api as sm
from scipy import stats

from evalstats.frames import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats.stats.rates import (
    RATE_NAMES,
    anova_icc,
    bm_df,
    bm_df_exchangeable,
    cluster_ratio,
    rate_arrays,
    t_interval,
    t_test_p,
    wilson_interval,
    wilson_test_p,
)
from evalstats.stats.rates import win_rates as _long_win_rates
from evalstats.stats.resample import wild_cluster_interval, wild_cluster_p, wild_weights


def win_rates(*args, **kwargs):
    """The long result pivoted to one row per group, the view the checks below read
    (``df``: the rates' df, every rate's row has it; net win's is ``net_win_df``)."""
    view = _long_win_rates(*args, **kwargs).wide()
    return view.assign(df=view["win_rate_df"])


def matrix_cr2(x: np.ndarray, g: np.ndarray, rho: float = 0.0) -> tuple[float, float, float]:
    """Intercept-only OLS: estimate, CR2 SE and BM df by explicit matrices (the oracle).

    The df is the Satterthwaite df of the CR2 quadratic form ``V = y' M' M y`` when the
    rows' covariance is ``Sigma`` (exchangeable within cluster at ``rho``; identity at
    0): ``tr(M Sigma M')^2 / ||M Sigma M'||_F^2``.
    """
    n = len(x)
    X = np.ones((n, 1))
    XtXi = np.linalg.inv(X.T @ X)
    H = X @ XtXi @ X.T
    e = x - (H @ x)
    IH = np.eye(n) - H
    V = 0.0
    M = []
    for c in np.unique(g):
        i = g == c
        A = sl.sqrtm(np.linalg.inv(np.eye(i.sum()) - H[np.ix_(i, i)])).real
        u = (XtXi @ X[i].T @ A @ e[i]).item()
        V += u * u
        # Satterthwaite under working independence: V = sum_c (M_c' y)^2.
        pad = np.zeros(n)
        pad[i] = (A @ X[i] @ XtXi).ravel()
        M.append(IH @ pad)
    M = np.array(M)
    sigma = np.where(g[:, None] == g[None, :], rho, 0.0) + (1.0 - rho) * np.eye(n)
    G = M @ sigma @ M.T
    return float(x.mean()), float(np.sqrt(V)), float(np.trace(G) ** 2 / (G**2).sum())


def oracle_icc(x: np.ndarray, g: np.ndarray) -> float:
    """One-way ANOVA ICC from scipy's F statistic, ``(F - 1) / (F + m0 - 1)``, floored at 0."""
    groups = [x[g == c] for c in np.unique(g)]
    f = stats.f_oneway(*groups).statistic
    m = np.array([len(v) for v in groups], dtype=float)
    m0 = (m.sum() - (m**2).sum() / m.sum()) / (len(m) - 1)
    return max(float((f - 1) / (f + m0 - 1)), 0.0)


def clustered_rows(rng: np.random.Generator, sizes) -> tuple[np.ndarray, np.ndarray]:
    g = np.repeat(np.arange(len(sizes)), sizes)
    p = rng.beta(2, 2, len(sizes))[g]
    return (rng.random(len(g)) < p).astype(float), g


@pytest.mark.parametrize("seed", range(6))
def test_cr2_and_bm_df_match_the_matrix_computation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, size=int(rng.integers(3, 15)))
    x, g = clustered_rows(rng, sizes)
    # Each cluster in its own row of y, all in group 0.
    m, gid = np.bincount(g).astype(float), np.zeros(len(sizes), dtype=int)
    est, se, n_clusters, n = cluster_ratio(np.bincount(g, weights=x)[:, None], m, gid, 1)
    df, kish = bm_df(m, gid, 1)
    m_est, m_se, m_df = matrix_cr2(x, g)
    assert est[0, 0] == pytest.approx(m_est, rel=1e-12)
    assert se[0, 0] == pytest.approx(m_se, rel=1e-9)
    assert df[0] == pytest.approx(m_df, rel=1e-9)
    assert n_clusters[0] == len(sizes) and n[0] == len(x)
    assert kish[0] == pytest.approx(len(x) ** 2 / (sizes**2).sum())


@pytest.mark.parametrize("seed", range(6))
def test_exchangeable_df_and_icc_match_the_matrix_computation(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    sizes = rng.integers(1, 12, size=int(rng.integers(3, 15)))
    sizes[0] = max(sizes[0], 2)  # at least one cluster with within-cluster spread
    x, g = clustered_rows(rng, sizes)
    gid = np.zeros(len(sizes), dtype=int)
    y, y2 = np.bincount(g, weights=x), np.bincount(g, weights=x * x)
    m = np.bincount(g).astype(float)
    rho = anova_icc(y, y2, m, gid, 1)
    assert rho[0] == pytest.approx(oracle_icc(x, g), rel=1e-9, abs=1e-12)
    for r in (0.0, 0.2, 0.7, float(rho[0])):
        df = bm_df_exchangeable(m, r, gid, 1)
        assert df[0] == pytest.approx(matrix_cr2(x, g, rho=r)[2], rel=1e-9)
    # rho = 0 is the working-independence df of bm_df.
    assert bm_df_exchangeable(m, 0.0, gid, 1)[0] == pytest.approx(bm_df(m, gid, 1)[0][0])


def test_exchangeable_df_many_groups_balanced_and_degenerate() -> None:
    # Equal sizes: C - 1 at every rho (the balanced battery designs are unchanged).
    for rho in (0.0, 0.3, 0.95, 1.0):
        df = bm_df_exchangeable(np.full(8, 3.0), rho, np.zeros(8, int), 1)
        assert df[0] == 7.0  # exactly: a t test on C - 1 df is the textbook one
    # Several groups at once, each its own rho; one cluster gives NaN.
    sizes = np.array([1.0, 1, 2, 3, 5, 8, 2, 2, 7, 4.0])
    gid = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 2])
    df = bm_df_exchangeable(sizes, np.array([0.4, 0.1, 0.0]), gid, 3)
    for k, r in ((0, 0.4), (1, 0.1)):
        i = gid == k
        g = np.repeat(np.arange(i.sum()), sizes[i].astype(int))
        assert df[k] == pytest.approx(matrix_cr2(np.zeros(len(g)), g, rho=r)[2], rel=1e-9)
    assert np.isnan(df[2])
    # The ICC: negative estimates floored at 0; undefined (all singletons, one cluster,
    # no spread) is 0; every cluster uniform but different is 1.
    m = np.array([2.0, 2, 2, 2])
    z = np.zeros(4, int)
    assert anova_icc(np.array([1.0, 1, 1, 1]), np.array([1.0, 1, 1, 1]), m, z, 1)[0] == 0.0
    assert anova_icc(np.array([1.0, 0, 1]), np.array([1.0, 0, 1]), np.ones(3), z[:3], 1)[0] == 0
    assert anova_icc(np.array([2.0, 0, 2, 0]), np.array([2.0, 0, 2, 0]), m, z, 1)[0] == 1.0
    assert anova_icc(np.array([2.0]), np.array([2.0]), np.array([4.0]), z[:1], 1)[0] == 0.0


def test_published_design_bm_df_and_balanced_case() -> None:
    # Issue 11: 12 tasks of 1, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30 verdicts -> BM df 4.1,
    # Kish 5.0; balanced clusters -> C - 1 and CR2 = CR1.
    sizes = np.array([1, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30], dtype=float)
    df, kish = bm_df(sizes, np.zeros(12, dtype=int), 1)
    assert round(float(df[0]), 1) == 4.1 and round(float(kish[0]), 1) == 5.0
    rng = np.random.default_rng(3)
    x, g = clustered_rows(rng, [4] * 9)
    y, m = np.bincount(g, weights=x)[:, None], np.bincount(g).astype(float)
    _, se2, *_ = cluster_ratio(y, m, np.zeros(9, dtype=int), 1)
    _, se1, *_ = cluster_ratio(y, m, np.zeros(9, dtype=int), 1, cr2=False)
    df2 = bm_df(m, np.zeros(9, dtype=int), 1)[0]
    assert df2[0] == pytest.approx(8.0) and se2[0, 0] == pytest.approx(se1[0, 0], rel=1e-12)


def test_cr1_matches_statsmodels_and_many_groups_at_once() -> None:
    rng = np.random.default_rng(11)
    ys, ms, gids, oracle = [], [], [], []
    for grp in range(5):
        sizes = rng.integers(1, 9, size=int(rng.integers(4, 12)))
        x, g = clustered_rows(rng, sizes)
        fit = sm.OLS(x, np.ones_like(x)).fit(cov_type="cluster", cov_kwds={"groups": g})
        oracle.append((fit.params[0], fit.bse[0], *matrix_cr2(x, g)[1:]))
        ys.append(np.bincount(g, weights=x))
        ms.append(np.bincount(g).astype(float))
        gids.append(np.full(len(sizes), grp))
    y, m, gid = np.concatenate(ys)[:, None], np.concatenate(ms), np.concatenate(gids)
    est, se2, *_ = cluster_ratio(y, m, gid, 5)
    _, se1, *_ = cluster_ratio(y, m, gid, 5, cr2=False)
    df = bm_df(m, gid, 5)[0]
    ref = np.array(oracle)
    np.testing.assert_allclose(est[:, 0], ref[:, 0], rtol=1e-12)
    np.testing.assert_allclose(se1[:, 0], ref[:, 1], rtol=1e-9)
    np.testing.assert_allclose(se2[:, 0], ref[:, 2], rtol=1e-9)
    np.testing.assert_allclose(df, ref[:, 3], rtol=1e-9)


def verdict_frame(rng: np.random.Generator, n_evals: int, sizes) -> pd.DataFrame:
    sizes = np.asarray(sizes)
    ev = np.repeat(np.arange(n_evals), sizes.sum())
    task = np.tile(np.repeat(np.arange(len(sizes)), sizes), n_evals)
    task_effect = rng.normal(size=(n_evals, len(sizes)))[ev, task]
    latent = task_effect * 0.6 + rng.normal(size=len(ev))
    codes = np.digitize(latent, [-0.5, 0.3])  # loss / tie / win
    return pd.DataFrame(
        {
            "eval": ev,
            "task_id": task,
            "status": pd.Categorical.from_codes(np.zeros(len(ev), int), dtype=STATUS_DTYPE),
            "outcome": pd.Categorical.from_codes(codes, dtype=OUTCOME_DTYPE),
        }
    )


def test_win_rates_cr2_se_and_df_against_the_matrix_oracle() -> None:
    rng = np.random.default_rng(5)
    sizes = [1, 1, 2, 3, 5, 8, 13]
    frame = verdict_frame(rng, 3, sizes)
    res = win_rates(frame, by="eval", method="cr2_t").set_index("eval")
    rhos = []
    for e, sub in frame.groupby("eval"):
        oc = sub["outcome"].astype(str).to_numpy()
        values = {
            "win_rate": (oc == "win").astype(float),
            "tie_rate": (oc == "tie").astype(float),
            "loss_rate": (oc == "loss").astype(float),
        }
        values["net_win"] = values["win_rate"] - values["loss_rate"]
        values["score"] = values["win_rate"] + values["tie_rate"] / 2
        g = sub["task_id"].to_numpy()
        # Net win and score: the df under the exchangeable working model at the ICC of
        # the net-win row values (the score's: an affine map of them).
        rho = oracle_icc(values["net_win"], g)
        rhos.append(rho)
        net_df = matrix_cr2(values["net_win"], g, rho=rho)[2]
        assert res.loc[e, "net_win_df"] == pytest.approx(net_df, rel=1e-9)
        for name in RATE_NAMES:
            m_est, m_se, m_df = matrix_cr2(values[name], g)
            assert res.loc[e, name] == pytest.approx(m_est, rel=1e-12)
            assert res.loc[e, f"{name}_se"] == pytest.approx(m_se, rel=1e-9)
            assert res.loc[e, "df"] == pytest.approx(m_df, rel=1e-9)
            q = stats.t.ppf(0.975, net_df if name in ("net_win", "score") else m_df)
            lo = max(m_est - q * m_se, -1 if name == "net_win" else 0)
            assert res.loc[e, f"{name}_ci_low"] == pytest.approx(lo, rel=1e-9, abs=1e-12)
        if rho > 0:  # unequal sizes: the working model's df is lower
            assert res.loc[e, "net_win_df"] < res.loc[e, "df"]
        # net_win_p: the CR2 t test on the net-win df, as the oracle computes it.
        m_est, m_se, _ = matrix_cr2(values["net_win"], g)
        p = 2 * stats.t.sf(abs(m_est / m_se), net_df)
        assert res.loc[e, "net_win_p"] == pytest.approx(p, rel=1e-8)
    assert max(rhos) > 0.05  # the working model is exercised, not only its rho = 0 case


@pytest.mark.parametrize("method", ["cr2_wilson", "cr2_t", "cluster_wilson", "cluster_t"])
def test_p_value_and_interval_agree_in_every_simulated_evaluation(method: str) -> None:
    # 3,000 evaluations over three designs near the null and away from it: p < alpha
    # exactly when the interval excludes 0, at three levels.
    rng = np.random.default_rng(8)
    for sizes, shift in (([3] * 8, 0.0), ([1, 1, 2, 3, 5, 8, 12, 20], 0.15), ([2] * 40, 0.1)):
        n_evals, c = 1000, len(sizes)
        size = np.asarray(sizes)
        # 0.41 = 0.7 / 1.7: wins and losses equally likely at shift 0.
        task_p = np.clip(0.41 + shift + 0.25 * rng.normal(size=(n_evals, c)), 0, 1)
        wins = rng.binomial(size, task_p)
        ties = rng.binomial(size - wins, 0.3)
        losses = size - wins - ties
        gid = np.repeat(np.arange(n_evals), c)
        for conf in (0.9, 0.95, 0.99):
            r = rate_arrays(wins.ravel(), ties.ravel(), losses.ravel(), gid, n_evals,
                            method=method, confidence=conf)  # fmt: skip
            excludes = (r["low"][:, 3] > 0) | (r["high"][:, 3] < 0)
            rejects = r["net_win_p"] < 1 - conf
            ok = np.isfinite(r["net_win_p"])
            assert ok.all()
            assert np.array_equal(excludes, rejects)
            assert 0 < rejects.sum() < n_evals  # both outcomes occur: the check can fail


def test_wilson_inversion_is_exact_at_the_interval_end() -> None:
    # At the lower end of the interval the test of that value has p = 1 - confidence.
    p, se, n, df, kish = 0.7, 0.08, 60.0, 6.5, 9.0
    lo, hi = wilson_interval(p, se, n, df, kish, 0.9)
    assert float(wilson_test_p(p, se, n, df, kish, lo)) == pytest.approx(0.1, rel=1e-8)
    assert float(wilson_test_p(p, se, n, df, kish, hi)) == pytest.approx(0.1, rel=1e-8)


def test_t_machinery_and_degenerate() -> None:
    lo, hi = t_interval(0.3, 0.1, 5.0, 0.95)
    assert float(lo) == pytest.approx(0.3 - stats.t.ppf(0.975, 5) * 0.1)
    assert float(t_test_p(0.3, 0.1, 5.0)) == pytest.approx(2 * stats.t.sf(3.0, 5))
    assert float(t_test_p(0.3, 0.1, 5.0, 0.5)) == pytest.approx(2 * stats.t.cdf(-2.0, 5))
    assert float(t_test_p(0.0, 0.0, 5.0)) == 1.0 and float(t_test_p(0.2, 0.0, 5.0)) == 0.0


def test_cr2_t_net_win_test_is_the_declared_t_test() -> None:
    # cluster_ratio_test (removed) was this t test on win_rates' net-win row: declared_test
    # on that row reproduces the two-sided test and gives the one-sided ones.
    from evalstats.stats import Hypothesis, declared_test

    rng = np.random.default_rng(2)
    frame = verdict_frame(rng, 1, [1, 2, 2, 4, 6, 9, 3, 3])
    res = win_rates(frame, by=None, method="cr2_t").iloc[0]
    oc = frame["outcome"].astype(str)
    net = ((oc == "win").astype(int) - (oc == "loss").astype(int)).sum()
    assert res["net_win"] == pytest.approx(net / len(frame))
    est, se, df = res["net_win"], res["net_win_se"], res["net_win_df"]
    two = declared_test(est, se, df).iloc[0]
    assert two["p_value"] == pytest.approx(res["net_win_p"])
    assert (two["ci_low"], two["ci_high"]) == pytest.approx(
        (res["net_win_ci_low"], res["net_win_ci_high"])
    )
    up = declared_test(est, se, df, Hypothesis(null=-0.5, sidedness="greater")).iloc[0]
    assert (up["p_value"] < 0.05) == (up["ci_low"] > -0.5)


def test_one_cluster_is_nan_with_reason_and_iid_only_when_asked() -> None:
    frame = pd.DataFrame({"task_id": "a", "status": "ok", "outcome": ["win"] * 5 + ["loss"]})
    res = win_rates(frame, by=None).iloc[0]
    assert np.isnan(res["win_rate_ci_low"]) and np.isnan(res["net_win_p"])
    assert "one cluster" in res["ci_note"] and res["win_rate"] == pytest.approx(5 / 6)
    iid = win_rates(frame, by=None, method="iid_wilson").iloc[0]
    assert iid["method"] == "iid_wilson" and "IID" in iid["ci_note"]
    assert (iid["win_rate_ci_low"], iid["win_rate_ci_high"]) == pytest.approx(
        sm.stats.proportion_confint(5, 6, method="wilson"), rel=1e-10
    )


def test_few_clusters_warn_and_flag() -> None:
    from evalstats.records import EvalstatsWarning

    rng = np.random.default_rng(4)
    frame = verdict_frame(rng, 1, [1, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30])
    with pytest.warns(EvalstatsWarning, match="effective clusters"):
        res = win_rates(frame, by=None).iloc[0]
    assert res["few_clusters"] and res["n_eff_clusters"] == pytest.approx(4.958, abs=1e-3)
    assert res["df"] == pytest.approx(4.0885, abs=1e-3)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.slow  # wildboottest's full enumeration
def test_wild_cluster_p_matches_wildboottest_full_enumeration(seed: int) -> None:
    # Rademacher weights with 2^C <= B: both enumerate every sign vector, so the p-values
    # are exact and must agree; the sign vectors +/-1 reproduce the observed t exactly,
    # and whether those two count as "beyond" is rounding, so allow 2 / 2^C.
    import warnings

    from wildboottest.wildboottest import wildboottest

    rng = np.random.default_rng(seed)
    c = 9
    x, g = clustered_rows(rng, rng.integers(1, 8, c))
    null = 0.35
    model = sm.OLS(x - null, np.ones((len(x), 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = wildboottest(
            model, B=9999, cluster=g, param="const", weights_type="rademacher", show=False, seed=1
        )
    v = wild_weights(c, 9999, method="rademacher")
    assert v.shape == (2**c, c)
    ours = wild_cluster_p(
        np.bincount(g, weights=x), np.bincount(g).astype(float), np.zeros(c, int), 1, null, v
    )
    assert float(ours[0]) == pytest.approx(float(ref["p-value"].iloc[0]), abs=2 / 2**c + 1e-12)


def test_wild_interval_inverts_the_wild_test() -> None:
    rng = np.random.default_rng(21)
    ys, ms, gids = [], [], []
    for grp in range(40):
        x, g = clustered_rows(rng, rng.integers(1, 6, 8))
        ys.append(np.bincount(g, weights=x))
        ms.append(np.bincount(g).astype(float))
        gids.append(np.full(8, grp))
    y, m, gid = np.concatenate(ys), np.concatenate(ms), np.concatenate(gids)
    v = wild_weights(8, 999, 3)
    assert set(np.unique(np.abs(v)).round(6)) == {0.707107, 1.0, 1.224745}  # Webb
    low, high = wild_cluster_interval(y, m, gid, 40, weights=v, bounds=(0.0, 1.0), tol=1e-7)
    est = np.bincount(gid, weights=y) / np.bincount(gid, weights=m)
    ok = np.isfinite(low)
    assert ok.sum() > 30 and np.all(low[ok] <= est[ok]) and np.all(est[ok] <= high[ok])
    # Just inside each end the test keeps the null, just outside it rejects (or the end is
    # the parameter bound).
    for end, step in ((low, -1e-5), (high, 1e-5)):
        inside = wild_cluster_p(y, m, gid, 40, end - step, v)
        outside = wild_cluster_p(y, m, gid, 40, end + step, v)
        interior = ok & (end > 1e-4) & (end < 1 - 1e-4)
        assert np.all(inside[interior] >= 0.05) and np.all(outside[interior] < 0.05)


def test_wild_webb_method_in_win_rates() -> None:
    rng = np.random.default_rng(6)
    frame = verdict_frame(rng, 4, [1, 2, 2, 3, 5, 8, 4, 3, 6])
    res = win_rates(frame, by="eval", method="wild_webb", n_resamples=499, rng=0)
    assert (res["method"] == "wild_webb").all()
    excl = (res["net_win_ci_low"] > 0) | (res["net_win_ci_high"] < 0)
    assert np.array_equal(excl.to_numpy(), (res["net_win_p"] < 0.05).to_numpy())
    for name in RATE_NAMES:
        assert (res[f"{name}_ci_low"] <= res[name]).all() and (
            res[name] <= res[f"{name}_ci_high"]
        ).all()


# --------------------------------------------------------------------------- Korn-Graubard score


def _scipy_ci(k, n, method: str, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """scipy's binomtest intervals, one count at a time: an implementation independent of
    statsmodels' proportion_confint, which the package calls."""
    from scipy.stats import binomtest

    ends = [
        tuple(binomtest(int(a), int(b)).proportion_ci(confidence, method=method))
        for a, b in zip(k, n, strict=True)
    ]
    lo, hi = np.array(ends).T
    return lo, hi


def test_iid_score_interval_is_the_wilson_interval() -> None:
    """With the IID SE and df = n - 1 (or inf) the interval is the plain Wilson interval."""
    k = np.array([0, 1, 5, 12, 19, 24])
    n = np.full(6, 24.0)
    p = k / n
    se = np.sqrt(p * (1 - p) / n)
    for df in (n - 1, np.full(6, np.inf)):
        lo, hi = wilson_interval(p, se, n, df, n)
        ok = se > 0
        ref_lo, ref_hi = _scipy_ci(k[ok], n[ok], "wilson")
        np.testing.assert_allclose(lo[ok], ref_lo, rtol=1e-10)
        np.testing.assert_allclose(hi[ok], ref_hi, rtol=1e-10)


@pytest.mark.parametrize(("ours", "scipys"), [("wilson", "wilson"), ("clopper_pearson", "exact")])
def test_proportion_ci_matches_scipy_binomtest(ours: str, scipys: str) -> None:
    from evalstats.stats import proportion_ci

    rng = np.random.default_rng(12)
    n = rng.integers(1, 300, 120)
    k = rng.integers(0, n + 1)
    k[:3], n[:3] = 0, 7  # zero count
    k[3:6] = n[3:6]  # all successes
    # scipy finds the exact interval's ends by root-finding (~1e-13 absolute).
    atol = 1e-12 if scipys == "exact" else 1e-14
    for confidence in (0.9, 0.99):
        ci = proportion_ci(k, n, method=ours, confidence=confidence)
        lo, hi = _scipy_ci(k, n, scipys, confidence)
        np.testing.assert_allclose(ci.ci_low, lo, rtol=1e-10, atol=atol)
        np.testing.assert_allclose(ci.ci_high, hi, rtol=1e-10, atol=atol)


@pytest.mark.parametrize("seed", range(4))
def test_score_interval_solves_korn_graubard_by_root_finding(seed: int) -> None:
    """The ends solve |p - p0| = z sqrt(p0 (1 - p0) / n_eff), n_eff = A (t_(n-1) / t_df)^2."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(seed)
    for _ in range(5):
        p, n = rng.uniform(0.1, 0.9), float(rng.integers(10, 200))
        se = np.sqrt(p * (1 - p) / n) * rng.uniform(0.8, 2.5)
        df = rng.uniform(2.0, 20.0)
        conf = rng.choice([0.8, 0.9, 0.95, 0.99])
        q = 0.5 + conf / 2
        n_eff = p * (1 - p) / se**2 * (stats.t.ppf(q, n - 1) / stats.t.ppf(q, df)) ** 2
        z = stats.norm.ppf(q)

        def gap(p0, p=p, n_eff=n_eff, z=z):
            return abs(p - p0) - z * np.sqrt(p0 * (1 - p0) / n_eff)

        ref = (brentq(gap, 1e-12, p), brentq(gap, p, 1 - 1e-12))
        got = wilson_interval(p, se, n, df, 5.0, conf)
        assert float(got[0]) == pytest.approx(ref[0], abs=1e-9)
        assert float(got[1]) == pytest.approx(ref[1], abs=1e-9)
        # The test inverts it at every level: p-value = 1 - conf at both ends.
        for end in ref:
            assert float(wilson_test_p(p, se, n, df, 5.0, end)) == pytest.approx(1 - conf, rel=1e-6)


def test_design_coverage_flags_a_rare_outcome_design_and_passes_a_balanced_one() -> None:
    from evalstats.stats import design_coverage
    from evalstats.stats.design import pooled_icc

    rng = np.random.default_rng(3)
    rows = []
    for name, n_tasks, reps, probs in (("rare", 8, 3, (0.85, 0.1, 0.05)), ("bal", 15, 6, None)):
        for t in range(n_tasks):
            pr = probs or rng.dirichlet([4.0, 3.0, 3.0])
            for o in rng.choice(["win", "tie", "loss"], size=reps, p=pr):
                rows.append({"design": name, "task_id": t, "status": "ok", "outcome": o})
    frame = pd.DataFrame(rows)
    cov = design_coverage(frame, by="design", n_resamples=600, rng=1).set_index("design")
    assert cov.loc["rare", "max_coverage"] > 0.97
    assert cov.loc["rare", "ci_note"].startswith("conservative: simulated coverage")
    assert "for 8 tasks" in cov.loc["rare", "ci_note"]
    bal = cov.loc["bal", [f"{r}_coverage" for r in RATE_NAMES]].to_numpy(float)
    assert np.all((bal > 0.91) & (bal < 0.985)), bal
    # The pooled ANOVA ICC against a direct loop over tasks (Searle's unequal-size m0).
    counts = frame.groupby(["design", "task_id"])["outcome"].value_counts().unstack(fill_value=0)
    counts = counts[["win", "tie", "loss"]]
    gid = pd.factorize(counts.index.get_level_values(0), sort=True)[0]
    got = pooled_icc(counts.to_numpy(), gid, 2)
    for g, (_, block) in enumerate(counts.groupby(level=0, sort=True)):
        y = block.to_numpy(float)
        m = y.sum(1)
        n, c = m.sum(), len(m)
        p = y.sum(0) / n
        ssb = sum(m[i] * ((y[i] / m[i] - p) ** 2).sum() for i in range(c))
        ssw = sum((m[i] * (y[i] / m[i]) * (1 - y[i] / m[i])).sum() for i in range(c))
        msb, msw = ssb / (c - 1), ssw / (n - c)
        m0 = (n - (m**2).sum() / n) / (c - 1)
        assert got[g] == pytest.approx(max((msb - msw) / (msb + (m0 - 1) * msw), 0.0), abs=1e-12)


def test_net_win_df_holds_the_type_one_error_on_unequal_tasks() -> None:
    # The battery's 12 unequal tasks at ICC 0.3 and a true net win of 0: the test on the
    # rates' working-independence df rejects more than 5 %, on net_win_df it does not.
    # Both p-values invert their intervals, computed here from the same draws.
    from evalstats.stats.models import draw_outcomes

    sizes = np.array([1, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30])
    n_evals = 6000
    codes = draw_outcomes(12, 30, p_win=0.375, p_tie=0.25, p_loss=0.375, icc=0.3,
                          n_evals=n_evals, rng=2)[..., 0]  # fmt: skip
    mask = np.arange(30)[None, None, :] < sizes[None, :, None]
    wins, ties, losses = (((codes == k) & mask).sum(axis=2).ravel() for k in (2, 1, 0))
    gid = np.repeat(np.arange(n_evals), 12)
    r = rate_arrays(wins, ties, losses, gid, n_evals)
    assert np.all(r["net_win_df"] < r["df"] + 1e-12) and np.mean(r["net_win_df"]) < 3.0
    score = r["est"][:, 4]
    args = (r["se"][:, 4], r["n"], r["n_eff_clusters"])
    row_var = np.maximum(
        np.bincount(gid, weights=(wins + 0.25 * ties).astype(float)) / r["n"] - score**2, 0
    )
    p_indep = wilson_test_p(score, args[0], args[1], r["df"], args[2], 0.5, row_var=row_var)
    p_net = wilson_test_p(score, *args[:2], r["net_win_df"], args[2], 0.5, row_var=row_var)
    assert np.allclose(p_net, r["net_win_p"], rtol=1e-9, equal_nan=True)
    mc_se = np.sqrt(0.05 * 0.95 / n_evals)  # 0.0028
    assert (p_indep < 0.05).mean() > 0.05 + mc_se
    assert (p_net < 0.05).mean() < 0.05
