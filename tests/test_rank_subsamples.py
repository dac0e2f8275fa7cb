"""The repeated-subsample study of prediction-powered ranking (evalstats.stats.rank_subsamples),
on a slice of the Chatbot Arena battles: its fits are `rank`'s (checked exactly on the point
strengths, within Monte Carlo error on the bootstrap), its type-weighted sandwich is the
per-task one, its lambda the brute-force minimiser, its scores hand-counted.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalstats.errors import DataError, ParameterError
from evalstats.stats import rank, rank_subsamples, subsample_coverage

# The study's type design, fits and PPI++ weight are private: checked against rank() here.
from evalstats.stats import ranking as rs

ARENA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena" / "battles.csv.gz"
TOP = ["gpt-4", "claude-v1", "claude-instant-v1", "gpt-3.5-turbo", "vicuna-13b", "palm-2"]
JUDGE = "gpt-4-0125-preview"


@pytest.fixture(scope="module")
def battles() -> pd.DataFrame:
    """Human and GPT-4 verdicts on the first 1,200 battles among six models."""
    if not ARENA.exists():
        pytest.skip(f"{ARENA} not found: ../shared (the public Arena battles) is not beside "
                    "this clone of the repo")  # fmt: skip
    from evalstats.adapters import arena

    f = arena.load(ARENA, judge=["human", JUDGE])
    keep = f["arm_a"].isin(TOP) & f["arm_b"].isin(TOP)
    tasks = f.loc[keep & (f["judge"] == "human"), "task_id"].iloc[:1200]
    return f[f["task_id"].isin(set(tasks))].reset_index(drop=True)


@pytest.fixture(scope="module")
def design(battles):
    return rs._Design(battles, "human", [JUDGE], None)


def _strength(res) -> pd.Series:
    return res[res["statistic"] == "strength"].set_index("arm")["estimate"]


def test_full_human_fit_is_rank_s(battles, design):
    human = battles[battles["judge"] == "human"]
    want = _strength(rank(human, n_resamples=50, rng=0)).reindex(design.arms).to_numpy()
    beta, _ = rs._human_like(design, design.types("human"), np.ones((1, design.n), bool), 60,
                             np.random.default_rng(1), 0.95, ("simultaneous",))  # fmt: skip
    np.testing.assert_allclose(beta[0], want, atol=1e-9)


def test_human_only_and_ppr_points_are_rank_s(battles, design):
    human = battles[battles["judge"] == "human"]
    judge = battles[battles["judge"] == JUDGE]
    mask = np.zeros(design.n, bool)
    mask[np.random.default_rng(3).choice(design.n, 300, replace=False)] = True
    labels = human[mask]  # the design's battles are in the human rows' order
    gen = np.random.default_rng(4)
    beta, _ = rs._human_like(design, design.types("human"), mask[None], 60, gen, 0.95,
                             ("simultaneous",))  # fmt: skip
    want = _strength(rank(labels, n_resamples=50, rng=0)).reindex(design.arms).to_numpy()
    np.testing.assert_allclose(beta[0], want, atol=1e-9)
    ppr = rank(judge, labels=labels, n_resamples=100, rng=5)
    lam = float(ppr.diagnostics["lambda"].iloc[0])
    beta, _, got = rs._ppr(design, JUDGE, "human", mask[None], 60, gen, 0.95, ("simultaneous",),
                           lam=[lam])  # fmt: skip
    assert got[0] == lam
    np.testing.assert_allclose(beta[0], _strength(ppr).reindex(design.arms), atol=1e-9)


def test_bootstrap_spread_matches_rank_s(battles, design):
    # The multinomial over battle types is the task bootstrap in distribution: the strengths'
    # bootstrap SDs agree with rank()'s within Monte Carlo error (B = 400: ~4 % each).
    human = battles[battles["judge"] == "human"]
    want = rank(human, n_resamples=400, rng=7)
    want = want[want["statistic"] == "strength"].set_index("arm")["se"].reindex(design.arms)
    counts = np.bincount(design.types("human"), minlength=3 * design.n_cells)[None].astype(float)
    point = rs._type_fit(counts, design.x)
    boot = rs._multinomial(np.random.default_rng(8), design.n, counts, 400)
    draws = rs._type_fit(boot, design.x, np.repeat(point, 400, axis=0))
    sd = rs._strengths(draws, design.k).std(axis=0, ddof=1)
    ratio = sd / want.to_numpy()
    assert np.all(np.abs(ratio - 1) < 0.2), ratio


def test_type_sandwich_is_the_per_task_sandwich(design):
    # One "task" per type weighted by its count gives the same meat as one row per battle.
    counts = np.bincount(design.types("human"), minlength=3 * design.n_cells).astype(float)
    theta = rs._btd_fit(counts.reshape(1, -1, 3), design.x)[0]
    got = rs._type_se(design, counts[None], theta)[0]
    per_task = np.zeros((design.n, 3 * design.n_cells))
    per_task[np.arange(design.n), design.types("human")] = 1.0
    scores = rs._task_scores(per_task, theta, design.x, True)
    cov = rs._sandwich(counts.reshape(1, -1, 3), scores, np.ones((1, design.n)), theta,
                        design.x, True)  # fmt: skip
    np.testing.assert_allclose(got, rs._difference_se(cov, design.k)[0], rtol=1e-9)


def test_lambda_is_the_variance_minimiser():
    rng = np.random.default_rng(0)
    bh = rng.normal(size=(2, 500, 4))
    delta = -0.4 * bh + rng.normal(scale=0.7, size=bh.shape)
    bl = rng.normal(size=bh.shape)
    ba = bl + delta
    got = rs._ppi_lambda(bh, ba, bl)
    grid = np.linspace(0, 1, 2001)
    for s in range(2):
        var = [((bh[s] + g * delta[s]) - (bh[s] + g * delta[s]).mean(0)).var(0).sum() for g in grid]
        assert got[s] == pytest.approx(grid[int(np.argmin(var))], abs=1e-3)
    assert rs._ppi_lambda(bh, bh + 0.5 * bh, bh).tolist() == [0.0, 0.0]  # clipped at 0


@pytest.fixture(scope="module")
def study(battles):
    return rank_subsamples(battles, n_labels=300, n_subsamples=3, n_resamples=80, rng=11,
                           sets=("simultaneous", "marginal"))  # fmt: skip


def test_shape_and_subsamples(study, design):
    ranks = study[study["statistic"] == "rank"]
    assert set(ranks["estimator"]) == set(rs.SUBSAMPLE_ESTIMATORS)
    per = ranks.groupby(["estimator", "method"], dropna=False)["arm"].count().to_dict()
    for m in ("simultaneous_stepdown", "marginal_stepdown"):
        assert per[("full_human", m)] == per[("judge_only", m)] == design.k
        assert per[("human_only", m)] == per[("ppr", m)] == 3 * design.k
        assert per[("human_only_percentile", m)] == 3 * design.k  # 300 votes: studentized
    assert (ranks["ci_low"] <= ranks["estimate"]).all()
    assert (ranks["estimate"] <= ranks["ci_high"]).all()
    assert ranks["ci_low"].min() >= 1 and ranks["ci_high"].max() <= design.k
    # Marginal sets are never wider than simultaneous ones (a smaller family per arm).
    key = ["estimator", "judge", "subsample", "arm"]
    s = ranks[ranks["method"] == "simultaneous_stepdown"].set_index(key)
    m = ranks[ranks["method"] == "marginal_stepdown"].set_index(key).reindex(s.index)
    assert ((m["ci_high"] - m["ci_low"]) <= (s["ci_high"] - s["ci_low"])).all()
    lam = study[study["statistic"] == "lambda"]["estimate"]
    assert len(lam) == 3 and ((lam >= 0) & (lam <= 1)).all()
    assert study.diagnostics["n_battles"].iloc[0] == design.n


def test_coverage_is_the_hand_count(study):
    cov = subsample_coverage(study)
    r = study[(study["statistic"] == "rank") & (study["method"] == "simultaneous_stepdown")]
    truth = r[r["estimator"] == "full_human"].set_index("arm")
    for est in ("human_only", "ppr"):
        rows = r[r["estimator"] == est]
        covered, sizes, meets = [], [], []
        for _, g in rows.groupby("subsample"):
            t = truth.loc[g["arm"]]
            covered.append(
                all(
                    (g["ci_low"].to_numpy() <= t["estimate"].to_numpy())
                    & (t["estimate"].to_numpy() <= g["ci_high"].to_numpy())
                )
            )
            meets.append(
                all(
                    (g["ci_low"].to_numpy() <= t["ci_high"].to_numpy())
                    & (t["ci_low"].to_numpy() <= g["ci_high"].to_numpy())
                )
            )
            sizes.append((g["ci_high"] - g["ci_low"] + 1).mean())  # fmt: skip
        got = cov[cov["estimator"] == est].set_index("statistic")
        assert got.loc["coverage", "estimate"] == pytest.approx(np.mean(covered))
        assert got.loc["intersects", "estimate"] == pytest.approx(np.mean(meets))
        assert got.loc["set_size", "estimate"] == pytest.approx(np.mean(sizes))
        p = np.mean(covered)
        assert got.loc["coverage", "se"] == pytest.approx(np.sqrt(p * (1 - p) / 3))
        assert got.loc["set_size", "n"] == 3
    assert set(cov.loc[cov["estimator"] == "ppr", "statistic"]) >= {
        "size_vs_human_only",
        "size_vs_human_only_percentile",
    }
    diff = cov[cov["statistic"] == "size_vs_human_only"].iloc[0]
    hum = cov[(cov["estimator"] == "human_only") & (cov["statistic"] == "set_size")].iloc[0]
    ppr = cov[(cov["estimator"] == "ppr") & (cov["statistic"] == "set_size")].iloc[0]
    assert diff["estimate"] == pytest.approx(ppr["estimate"] - hum["estimate"])
    assert diff["ci_low"] <= diff["estimate"] <= diff["ci_high"]
    jo = cov[cov["estimator"] == "judge_only"].set_index("statistic")
    assert jo.loc["coverage", "n"] == 1 and np.isnan(jo.loc["coverage", "se"])


def test_set_size_monotone_in_confidence(battles):
    # The same seed gives the same subsamples and resamples: a higher level can only widen.
    sizes = []
    for level in (0.8, 0.9, 0.95):
        r = rank_subsamples(battles, n_labels=300, n_subsamples=2, n_resamples=60, rng=2,
                            confidence=level)  # fmt: skip
        r = r[r["statistic"] == "rank"]
        sizes.append((r["ci_high"] - r["ci_low"]).to_numpy())
    assert np.all(sizes[0] <= sizes[1]) and np.all(sizes[1] <= sizes[2])
    assert sizes[2].sum() > sizes[0].sum()


def test_bad_inputs(battles):
    with pytest.raises(DataError, match="one battle per task"):
        rank_subsamples(pd.concat([battles, battles[battles["judge"] == "human"]]), n_labels=50)
    short = battles.drop(index=battles.index[battles["judge"] == JUDGE][:3])
    with pytest.raises(DataError, match="must judge exactly"):
        rank_subsamples(short, n_labels=50)
    with pytest.raises(ParameterError, match="n_labels"):
        rank_subsamples(battles, n_labels=10**6)
    with pytest.raises(ParameterError, match="sets"):
        rank_subsamples(battles, n_labels=50, sets=("joint",))
    with pytest.raises(DataError, match="full_human"):
        subsample_coverage(pd.DataFrame({"statistic": ["rank"], "method": ["simultaneous_stepdown"],
                                         "estimator": ["ppr"]}))  # fmt: skip
