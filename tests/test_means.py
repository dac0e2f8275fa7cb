"""cluster_mean against statsmodels' cluster-robust OLS, scipy's sem and scipy's bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from contract import TIDY_COLUMNS
from scipy import stats as sps

from evalstats.errors import DataError
from evalstats.stats.rates import cluster_mean as _long_cluster_mean


def cluster_mean(*args, **kwargs) -> pd.DataFrame:
    """The long result with its diagnostics on each row and ``estimate`` read as ``mean``
    (one statistic per group): the view the checks below read."""
    res = _long_cluster_mean(*args, **kwargs)  # one row per group, as its diagnostics
    detail = res.diagnostics.drop(columns=[c for c in res.diagnostics if c in res.columns])
    return pd.concat([pd.DataFrame(res), detail], axis=1).rename(columns={"estimate": "mean"})


def test_long_shape() -> None:
    df = pd.DataFrame({"task_id": list("aabbc"), "g": list("xxyyy"), "y": [1.0, 2, 3, 4, 5]})
    res = _long_cluster_mean(df, "y", by="g")
    assert list(res.columns) == ["g", *TIDY_COLUMNS, "t"]
    assert res["statistic"].tolist() == ["mean", "mean"]
    assert res.diagnostics["n_tasks"].tolist() == [1, 2]


def _clustered(seed: int, n_clusters: int = 15, max_size: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_clusters)
    task = np.repeat([f"t{i:02d}" for i in range(n_clusters)], sizes)
    effect = np.repeat(rng.normal(0.0, 0.7, n_clusters), sizes)
    y = 0.3 + effect + rng.normal(0.0, 1.0, sizes.sum())
    return pd.DataFrame({"task_id": task, "y": y})


@pytest.mark.parametrize("seed", range(8))
def test_matches_statsmodels_cluster_ols(seed):
    df = _clustered(seed)
    res = cluster_mean(df, "y", null=0.0).iloc[0]
    groups = pd.factorize(df["task_id"])[0]
    ols = sm.OLS(df["y"].to_numpy(), np.ones(len(df))).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    assert res["mean"] == pytest.approx(ols.params[0], rel=1e-12)
    assert res["se"] == pytest.approx(ols.bse[0], rel=1e-10)
    lo, hi = ols.conf_int(alpha=0.05)[0]
    assert res["ci_low"] == pytest.approx(lo, rel=1e-10)
    assert res["ci_high"] == pytest.approx(hi, rel=1e-10)
    assert res["p_value"] == pytest.approx(ols.pvalues[0], rel=1e-8)
    assert res["n"] == len(df)
    assert res["n_tasks"] == df["task_id"].nunique()
    assert res["df"] == df["task_id"].nunique() - 1


@pytest.mark.parametrize("seed", range(4))
def test_cr2_t_matches_the_explicit_matrix_cr2(seed):
    import scipy.linalg as sl

    df = _clustered(seed, n_clusters=9, max_size=10)
    res = cluster_mean(df, "y", method="cr2_t", null=0.1).iloc[0]
    y = df["y"].to_numpy()
    g = pd.factorize(df["task_id"])[0]
    n = len(y)
    H = np.full((n, n), 1.0 / n)  # hat matrix of a constant
    e = y - y.mean()
    M, V = [], 0.0
    for c in np.unique(g):
        i = g == c
        A = sl.sqrtm(np.linalg.inv(np.eye(i.sum()) - H[np.ix_(i, i)])).real
        u = A @ np.ones(i.sum()) / n
        V += (u @ e[i]) ** 2
        pad = np.zeros(n)
        pad[i] = u
        M.append(pad - H @ pad)
    G = np.array(M) @ np.array(M).T
    bm = np.trace(G) ** 2 / (G**2).sum()
    assert res["se"] == pytest.approx(np.sqrt(V), rel=1e-9)
    assert res["df"] == pytest.approx(bm, rel=1e-9)
    q = sps.t.ppf(0.975, bm)
    assert res["ci_low"] == pytest.approx(y.mean() - q * np.sqrt(V), rel=1e-9)
    assert res["p_value"] == pytest.approx(2 * sps.t.sf(abs(y.mean() - 0.1) / np.sqrt(V), bm))


@pytest.mark.parametrize("seed", range(5))
def test_one_row_per_cluster_is_the_ordinary_sem(seed):
    rng = np.random.default_rng(100 + seed)
    y = rng.uniform(0.0, 1.0, 40 + 37 * seed)
    df = pd.DataFrame({"task_id": np.arange(y.size), "y": y})
    res = cluster_mean(df, "y").iloc[0]
    assert res["mean"] == pytest.approx(y.mean(), rel=1e-13)
    assert res["se"] == pytest.approx(sps.sem(y), rel=1e-12)
    assert res["se"] == pytest.approx(df["y"].sem(), rel=1e-12)
    # The t interval is scipy's one-sample t interval.
    lo, hi = sps.t.interval(0.9, y.size - 1, loc=y.mean(), scale=sps.sem(y))
    res90 = cluster_mean(df, "y", confidence=0.9).iloc[0]
    assert (res90["ci_low"], res90["ci_high"]) == pytest.approx((lo, hi), rel=1e-12)
    # And its test of mean == null is scipy's one-sample t test.
    tt = sps.ttest_1samp(y, 0.45)
    res_null = cluster_mean(df, "y", null=0.45).iloc[0]
    assert res_null["t"] == pytest.approx(tt.statistic, rel=1e-10)
    assert res_null["p_value"] == pytest.approx(tt.pvalue, rel=1e-8)


def test_groups_equal_separate_fits_and_missing_values_are_left_out():
    a, b = _clustered(1), _clustered(2, n_clusters=9)
    b = b.assign(y=b["y"].where(np.arange(len(b)) % 4 != 0))  # some NaN
    df = pd.concat([a.assign(g="a"), b.assign(g="b")], ignore_index=True)
    res = cluster_mean(df, "y", by="g")
    assert res["g"].tolist() == ["a", "b"]
    for g, part in (("a", a), ("b", b.dropna())):
        one = cluster_mean(part, "y").iloc[0]
        row = res.loc[res["g"] == g].iloc[0]
        for col in ("n", "n_tasks", "mean", "se", "ci_low", "ci_high", "p_value"):
            assert row[col] == pytest.approx(one[col], rel=1e-12), col
    assert res.loc[res["g"] == "b", "n_missing"].item() == int(b["y"].isna().sum())
    assert res.loc[res["g"] == "a", "n_missing"].item() == 0


def test_degenerate_groups():
    df = pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "c"],
            "g": ["one", "one", "empty", "empty"],
            "y": [0.2, 0.4, np.nan, np.nan],
        }
    )
    res = cluster_mean(df, "y", by=["g"]).set_index("g")
    assert res.loc["empty", "n"] == 0 and np.isnan(res.loc["empty", "mean"])
    assert res.loc["empty", "n_missing"] == 2
    # One cluster: a mean but no SE.
    assert res.loc["one", "mean"] == pytest.approx(0.3)
    assert np.isnan(res.loc["one", "se"]) and np.isnan(res.loc["one", "ci_low"])


@pytest.mark.parametrize("method", ["percentile", "basic", "bca"])
def test_bootstrap_matches_scipy_with_one_row_per_cluster(method):
    rng = np.random.default_rng(7)
    y = rng.exponential(1.0, 30)
    df = pd.DataFrame({"task_id": np.arange(y.size), "y": y})
    res = cluster_mean(df, "y", method=method, n_resamples=2000, rng=11).iloc[0]
    ref = sps.bootstrap((y,), np.mean, n_resamples=2000, method={"bca": "BCa"}.get(method, method),
                        rng=np.random.default_rng(11))  # fmt: skip
    assert res["ci_low"] == pytest.approx(ref.confidence_interval.low, rel=1e-10)
    assert res["ci_high"] == pytest.approx(ref.confidence_interval.high, rel=1e-10)
    assert res["method"] == method


def test_bootstrap_resamples_clusters_not_rows():
    # Strong clustering: the cluster bootstrap interval must be much wider than an
    # IID one over rows, and close to the CR1 t interval.
    rng = np.random.default_rng(3)
    effect = rng.normal(0.0, 2.0, 20)
    task = np.repeat(np.arange(20), 10)
    y = effect[task] + rng.normal(0.0, 0.1, task.size)
    df = pd.DataFrame({"task_id": task, "y": y})
    boot = cluster_mean(df, "y", method="percentile", n_resamples=4000, rng=0).iloc[0]
    t_int = cluster_mean(df, "y").iloc[0]
    iid_half = 1.96 * sps.sem(y)
    boot_half = (boot["ci_high"] - boot["ci_low"]) / 2
    assert boot_half > 2.5 * iid_half
    assert boot_half == pytest.approx((t_int["ci_high"] - t_int["ci_low"]) / 2, rel=0.25)


def test_input_validation():
    df = pd.DataFrame({"task_id": ["a", "b"], "y": [1.0, 2.0], "s": ["x", "y"]})
    with pytest.raises(DataError, match="lacks column"):
        cluster_mean(df, "nope")
    with pytest.raises(DataError, match="not numeric"):
        cluster_mean(df, "s")
    with pytest.raises(ValueError, match="method"):
        cluster_mean(df, "y", method="wald")
    with pytest.raises(ValueError, match="confidence"):
        cluster_mean(df, "y", confidence=95)
    with pytest.raises(DataError, match="cluster"):
        cluster_mean(df.assign(task_id=["a", None]), "y")
    with pytest.raises(DataError, match="infinite"):
        cluster_mean(df.assign(y=[1.0, np.inf]), "y")
    with pytest.raises(TypeError):
        _long_cluster_mean(df.to_dict(), "y")
