"""K-arm cost ratios and the Pareto frontier against brute-force loops and statsmodels."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from pair_simulation import simulate_pairwise  # K-arm verdicts of known truth, in memory

from evalstats.errors import DataError, ParameterError
from evalstats.stats import arm_costs, compare, pareto, pareto_frontier

ARMS = ("arm0", "arm1", "arm2")


def _runs(seed: int = 0, n_tasks: int = 9, n_reps: int = 2) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    size = rng.lognormal(7, 0.8, n_tasks)
    mult = {"arm0": 1.0, "arm1": 0.7, "arm2": 1.4}
    rows = []
    for t, r, a in itertools.product(range(n_tasks), range(1, n_reps + 1), ARMS):
        tok = size[t] * mult[a] * rng.lognormal(0, 0.3)
        rows.append({"task_id": f"t{t}", "replicate": r, "arm": a,
                     "reported_tokens": int(tok), "tokens": int(tok * 0.5),
                     "tokens_source": "transcript",
                     "wall_s": float(size[t] / 50 * mult[a] * rng.lognormal(0, 0.2))})  # fmt: skip
    out = pd.DataFrame(rows)
    # one lonely run (its reference twin missing) must not count
    return out.drop(
        index=out.index[(out.task_id == "t1") & (out.replicate == 1) & (out.arm == "arm0")]
    )


def _cr1_log(x: pd.Series, y: pd.Series, cluster: pd.Series) -> tuple[float, float]:
    """log ratio and the CR1 SE of the log, by the per-cluster residual formula."""
    xs, ys = x.groupby(cluster).sum(), y.groupby(cluster).sum()
    X, Y, C = xs.sum(), ys.sum(), len(xs)
    return np.log(X / Y), np.sqrt(C / (C - 1) * ((xs / X - ys / Y) ** 2).sum())


def _paired(runs: pd.DataFrame, arm: str, col: str) -> pd.DataFrame:
    w = runs.pivot(index=["task_id", "replicate"], columns="arm", values=col)
    return w[[arm, "arm0"]].dropna().reset_index()


def test_se_log_is_statsmodels_wls_cluster_se_over_the_ratio():
    runs = _runs()
    res = arm_costs(runs, reference="arm0", n_resamples=50, rng=0)
    for arm in ("arm1", "arm2"):
        p = _paired(runs, arm, "reported_tokens")
        fit = sm.WLS(p[arm].astype(float), p[["arm0"]].astype(float),
                     weights=1 / p["arm0"].astype(float)).fit(
            cov_type="cluster", cov_kwds={"groups": pd.factorize(p["task_id"])[0]})  # fmt: skip
        row = res.loc[(res.arm == arm) & (res.statistic == "tokens_total_ratio")].iloc[0]
        assert row["estimate"] == pytest.approx(fit.params.iloc[0], rel=1e-12)
        assert row["se_log"] == pytest.approx(fit.bse.iloc[0] / fit.params.iloc[0], rel=1e-9)
        assert row["n"] == len(p) and row["n_tasks"] == p["task_id"].nunique()
        assert row["token_source"] == "billed"


@pytest.mark.parametrize("method", ["studentized", "percentile"])
def test_intervals_match_a_per_resample_loop_with_the_same_draws(method):
    runs = _runs(seed=3)
    b, conf = 40, 0.9
    res = arm_costs(runs, reference="arm0", n_resamples=b, rng=11, method=method,
                    confidence=conf)  # fmt: skip
    tasks = np.unique(runs["task_id"])
    draws = np.random.default_rng(11).integers(0, len(tasks), size=(b, len(tasks)))
    for arm, (stat, col) in itertools.product(
        ("arm1", "arm2"),
        [("tokens_total_ratio", "reported_tokens"), ("wall_total_ratio", "wall_s")],
    ):
        p = _paired(runs, arm, col)
        lr, se = _cr1_log(p[arm], p["arm0"], p["task_id"])
        by_task = {t: g[[arm, "arm0"]].to_numpy(float) for t, g in p.groupby("task_id")}
        boot_lr, boot_t = [], []
        for d in draws:  # the brute force: a resampled data set, clusters relabelled
            parts = [by_task[tasks[k]] for k in d if tasks[k] in by_task]
            rows = np.concatenate(parts)
            c = np.repeat(np.arange(len(parts)), [len(q) for q in parts])
            lb, sb = _cr1_log(pd.Series(rows[:, 0]), pd.Series(rows[:, 1]), pd.Series(c))
            boot_lr.append(lb)
            boot_t.append((lb - lr) / sb)
        a = 1 - conf
        if method == "studentized":
            q = np.quantile(boot_t, [a / 2, 1 - a / 2])
            lo, hi = lr - q[1] * se, lr - q[0] * se
        else:
            lo, hi = np.quantile(boot_lr, [a / 2, 1 - a / 2])
        row = res.loc[(res.arm == arm) & (res.statistic == stat)].iloc[0]
        assert row["ci_low"] == pytest.approx(np.exp(lo), rel=1e-9)
        assert row["ci_high"] == pytest.approx(np.exp(hi), rel=1e-9)
        assert row["ci_low"] < row["estimate"] < row["ci_high"]


def test_token_source_rule():
    runs = _runs().assign(reported_tokens=None)
    res = arm_costs(runs, reference="arm0", n_resamples=30, rng=0)
    assert set(res.loc[res.statistic == "tokens_total_ratio", "token_source"]) == {"transcript"}
    est = res.loc[(res.arm == "arm1") & (res.statistic == "tokens_total_ratio"), "estimate"]
    p = _paired(runs, "arm1", "tokens")
    assert est.iloc[0] == pytest.approx(p["arm1"].sum() / p["arm0"].sum())
    answer = runs.assign(tokens_source="answer")
    res = arm_costs(answer, reference="arm0", n_resamples=30, rng=0)
    assert set(res["statistic"]) == {"wall_total_ratio"}
    assert "answer alone" in res.diagnostics["token_reason"].iloc[0]
    with pytest.raises(ParameterError, match="reference"):
        arm_costs(runs, reference="nope", n_resamples=30)


def _brute_front(q, c):
    k = len(q)
    return [
        not any(q[j] >= q[i] and c[j] <= c[i] and (q[j] > q[i] or c[j] < c[i]) for j in range(k))
        for i in range(k)
    ]


def test_pareto_frontier_matches_the_definition():
    rng = np.random.default_rng(5)
    q = rng.integers(0, 4, size=(300, 5)).astype(float)  # many ties
    c = rng.integers(0, 4, size=(300, 5)).astype(float)
    got = pareto_frontier(q, c)
    assert got.tolist() == [_brute_front(a, b) for a, b in zip(q, c, strict=True)]
    assert pareto_frontier(np.array([np.nan, 1.0]), np.array([0.0, 1.0])).tolist() == [False, True]


def _frame_and_runs():
    f = simulate_pairwise(np.random.default_rng(2), np.array([0.0, 0.5, 0.2]), n_tasks=10, n_reps=2)
    runs = _runs(seed=4, n_tasks=11)  # one task run but never judged
    return f, runs


def test_pareto_quality_is_compare_and_p_frontier_matches_a_loop():
    f, runs = _frame_and_runs()
    b = 40
    res = pareto(f, runs, reference="arm0", n_resamples=b, rng=7)
    cmp_ = compare(f, reference="arm0")
    net = cmp_.loc[cmp_.statistic == "net_win"].set_index("arm_a")["estimate"]
    q = res.loc[res.statistic == "net_win"].set_index("arm")["estimate"]
    assert q["arm0"] == 0.0
    for arm in ("arm1", "arm2"):
        assert q[arm] == pytest.approx(net[arm], rel=1e-12)
    ac = arm_costs(runs, reference="arm0", n_resamples=20, rng=0)
    cost = res.loc[res.statistic == "tokens_total_ratio"].set_index("arm")["estimate"]
    tok = ac.loc[ac.statistic == "tokens_total_ratio"].set_index("arm")["estimate"]
    assert cost["arm0"] == 1.0
    assert cost[["arm1", "arm2"]].to_numpy() == pytest.approx(tok[["arm1", "arm2"]].to_numpy())

    # brute force: every resample rebuilt from rows, the same task draws for both axes
    tasks = np.union1d(f["task_id"].unique(), runs["task_id"].unique())
    draws = np.random.default_rng(7).integers(0, len(tasks), size=(b, len(tasks)))
    arms = list(res.loc[res.statistic == "p_frontier", "arm"])
    score = f.outcome.map({"win": 1, "tie": 0, "loss": -1}).to_numpy()
    sign = np.where(f.arm_b == "arm0", 1, np.where(f.arm_a == "arm0", -1, 0))
    other = np.where(f.arm_b == "arm0", f.arm_a, f.arm_b)
    tok = runs.pivot(index=["task_id", "replicate"], columns="arm", values="reported_tokens")
    hits = np.zeros(len(arms))
    for d in draws:
        qs, cs = [], []
        for arm in arms:
            if arm == "arm0":
                qs.append(0.0)
                cs.append(1.0)
                continue
            pick = (other == arm) & (sign != 0)
            vals = [
                score[pick & (f.task_id == tasks[k]).to_numpy()]
                * sign[pick & (f.task_id == tasks[k]).to_numpy()]
                for k in d
            ]
            qs.append(np.concatenate(vals).mean())
            w = tok[[arm, "arm0"]].dropna()
            per = w.groupby(level="task_id").sum().reindex(tasks, fill_value=0).to_numpy()
            tot = per[d].sum(0)
            cs.append(tot[0] / tot[1])
        hits += _brute_front(qs, cs)
    p = res.loc[res.statistic == "p_frontier"].set_index("arm")["estimate"]
    assert p.to_numpy() == pytest.approx(hits / b, abs=1e-12)
    assert set(res["on_frontier"]) <= {True, False}


def test_pareto_refuses_mismatched_arms():
    f, runs = _frame_and_runs()
    with pytest.raises(DataError, match="differ"):
        pareto(f, runs.loc[runs.arm != "arm2"], reference="arm0", n_resamples=30)


def test_a_dataset_gives_its_arms_toml_reference_and_order():
    import evalstats

    ds = evalstats.load_dir(Path(__file__).resolve().parents[1] / "data" / "karm")
    res = arm_costs(ds, n_resamples=50, rng=0)
    assert set(res["reference"]) == {ds.arms.reference} == {"none"}
    assert list(dict.fromkeys(res["arm"])) == ["v1", "v2"]
    same = arm_costs(ds.runs, reference="none", arms=ds.arms.ids, n_resamples=50, rng=0)
    pd.testing.assert_frame_equal(pd.DataFrame(res), pd.DataFrame(same))
    with pytest.raises(ParameterError, match="reference"):
        arm_costs(ds.runs, n_resamples=50)
