"""rank() and rank_sets(): Bradley-Terry-Davidson fits and rank confidence sets.

Oracles: statsmodels' Logit (Bradley-Terry without ties is a logistic regression on +1/-1
arm indicators), scipy.optimize on the Davidson likelihood written out row by row, a loop of
one-at-a-time fits for the batched Newton, and for the rank sets scipy's multivariate normal
(the exact critical value of the max-|Z| statistic) plus the documented behaviour of the R
package csranks (danielwilhelm/R-CS-ranks: ``R/ranks.R`` and
``tests/testthat/test_csranks_simul.R`` / ``test_cstaubest.R``: bounds within 1..K, L <= U,
one-sided "lower" sets have U = K, the tau-best set grows with tau). csranks' published PISA
example (README: ``csranks(math_score, diag(math_se^2), ...)``) needs the 37-country data,
of which only ``head(pisa)`` is printed there; its six printed rows are used as estimates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.optimize
import scipy.stats
import statsmodels.api as sm
from pair_simulation import simulate_pairwise

from evalstats.errors import ParameterError
from evalstats.stats import rank, rank_sets

# The Bradley-Terry-Davidson fitter and its sandwich are private: checking them against
# statsmodels and scipy needs them directly.
from evalstats.stats import ranking as _btd
from evalstats.stats.ranking import encode

# head(pisa) of csranks' README: math_score and math_se of Australia .. Colombia.
PISA_HEAD = pd.DataFrame(
    {
        "score": [491.3600, 498.9423, 508.0703, 512.0169, 417.4066, 390.9323],
        "se": [1.939833, 2.970999, 2.262662, 2.357476, 2.415888, 2.989559],
    },
    index=["Australia", "Austria", "Belgium", "Canada", "Chile", "Colombia"],
)


@pytest.fixture(scope="module")
def sim() -> pd.DataFrame:
    return simulate_pairwise(np.random.default_rng(11), np.array([0.0, 0.5, -0.4, 0.9]), gamma=0.4)


def _cells(frame):
    e = encode(frame)
    keys, cell, col = _btd._btd_cells(e.a, e.b, e.pos, e.y, len(e.arms))
    counts = np.zeros((len(keys), 3))
    np.add.at(counts, (cell, col), 1)
    return e, keys, counts


def test_bradley_terry_without_ties_is_statsmodels_logit():
    rng = np.random.default_rng(0)
    beta = np.array([0.0, 0.7, -0.5, 1.2])
    a = rng.integers(0, 4, 4000)
    b = (a + rng.integers(1, 4, 4000)) % 4
    win = rng.random(4000) < 1 / (1 + np.exp(-(beta[a] - beta[b])))
    frame = pd.DataFrame({"task_id": np.arange(4000).astype(str), "judge": "j",
                          "arm_a": [f"m{i}" for i in a], "arm_b": [f"m{i}" for i in b],
                          "status": "ok", "outcome": np.where(win, "win", "loss")})  # fmt: skip
    res = rank(frame, model="bradley-terry", arms=["m0", "m1", "m2", "m3"], n_resamples=50, rng=0)
    x = np.zeros((4000, 4))
    x[np.arange(4000), a] += 1
    x[np.arange(4000), b] -= 1
    logit = sm.Logit(win.astype(float), x[:, 1:]).fit(disp=0)
    ref = np.concatenate([[0.0], logit.params])
    strength = res[res.statistic == "strength"].estimate.to_numpy()
    np.testing.assert_allclose(strength, ref - ref.mean(), atol=1e-7)
    p = res[(res.statistic == "p_beats") & (res.arm == "m1") & (res.opponent == "m2")].estimate
    assert p.iloc[0] == pytest.approx(1 / (1 + np.exp(-(ref[1] - ref[2]))), abs=1e-7)


def test_davidson_with_position_matches_scipy_on_the_row_likelihood(sim):
    e, keys, counts = _cells(sim)
    x = _btd._btd_design(keys, len(e.arms), position=True)
    theta, ok = _btd._btd_fit(counts[None], x)
    assert ok.all()

    def nll(t):  # row by row, written independently of _btd
        beta = np.concatenate([[0.0], t[:3]])
        u = beta[e.a] - beta[e.b] + t[3] * e.pos
        nu = np.exp(t[4])
        den = np.exp(u / 2) + np.exp(-u / 2) + nu
        p = np.choose(e.y, [np.exp(-u / 2), np.full_like(u, nu), np.exp(u / 2)]) / den
        return -np.log(p).sum()

    opt = scipy.optimize.minimize(nll, np.zeros(5), method="BFGS", options={"gtol": 1e-9})
    np.testing.assert_allclose(theta[0], opt.x, atol=1e-5)
    assert theta[0][3] == pytest.approx(0.4, abs=0.15)  # the simulated position bonus


def test_batched_newton_equals_one_fit_per_resample(sim):
    e, keys, counts = _cells(sim)
    x = _btd._btd_design(keys, len(e.arms), position=True)
    rng = np.random.default_rng(4)
    sets = counts[None] * rng.poisson(1.0, size=(25, *counts.shape))
    batched, ok = _btd._btd_fit(sets, x)
    looped = np.stack([_btd._btd_fit(s[None], x)[0][0] for s in sets])
    assert ok.all()
    np.testing.assert_allclose(batched, looped, atol=1e-9)


def test_rank_result_shape_and_position_covariate(sim):
    res = rank(sim, n_resamples=200, rng=0)
    assert set(res.statistic) == {"strength", "rank", "p_beats", "tie_nu", "position"}
    r = res[res.statistic == "rank"].set_index("arm")
    assert r.loc["arm3", "estimate"] == 1 and (r.ci_low <= r.estimate).all()
    p = res[res.statistic == "p_beats"]
    assert len(p) == 12 and ((p.estimate > 0) & (p.estimate < 1)).all()
    assert res.diagnostics.position_effect.iloc[0]
    one_order = sim.assign(order="a_first")
    one_order = one_order[one_order.arm_a < one_order.arm_b]  # one orientation: not identified
    assert "position" not in set(rank(one_order, n_resamples=50, rng=0).statistic)


def test_rank_sets_critical_value_is_the_exact_normal_one():
    """Two arms: the set is a singleton exactly when |x1 - x2| / se > z_0.975 (scipy); with
    three, the max-|Z| quantile of the three differences by scipy's bivariate normal cdf
    (d23 = d13 - d12, so two standard normals with correlation 1/2 carry it)."""
    z = scipy.stats.norm.ppf(0.975)
    for gap, split in ((z * 1.04, True), (z * 0.96, False)):
        res = rank_sets([gap * np.sqrt(2.0), 0.0], cov=np.eye(2), n_resamples=40_000)
        assert (res.ci_low.tolist() == [1, 2]) is split
        assert (res.ci_high.tolist() == [1, 2]) is split

    def outside(c):  # P(max(|d12|, |d13|, |d13 - d12|) > c) for standardised differences
        rng = np.random.default_rng(0)
        e = rng.standard_normal((400_000, 3))
        d = (e[:, [0, 0, 1]] - e[:, [1, 2, 2]]) / np.sqrt(2)
        return (np.abs(d).max(axis=1) > c).mean()

    c = scipy.optimize.brentq(lambda v: outside(v) - 0.05, 1.8, 3.2, xtol=1e-4)
    for gap, split in ((c * 1.05, True), (c * 0.95, False)):
        x = np.array([gap * np.sqrt(2.0), 0.0, -10.0])
        res = rank_sets(x, cov=np.eye(3), n_resamples=40_000, stepdown=False)
        assert bool(res.ci_low.iloc[1] == 2) is split, (gap, res)


def test_rank_sets_behave_as_csranks_documents():
    x = PISA_HEAD["score"]
    cov = np.diag(PISA_HEAD["se"] ** 2)
    simul = rank_sets(x, cov=cov, tau=2)
    marg = rank_sets(x, cov=cov, simultaneous=False)
    assert simul.arm.tolist() == PISA_HEAD.index.tolist()
    assert simul.estimate.tolist() == [4, 3, 2, 1, 5, 6]  # irank(math_score) on these rows
    for r in (simul, marg):
        assert ((1 <= r.ci_low) & (r.ci_low <= r.estimate) & (r.estimate <= r.ci_high)).all()
        assert (r.ci_high <= 6).all()
    # marginal sets are never wider than simultaneous ones
    assert ((marg.ci_low >= simul.ci_low) & (marg.ci_high <= simul.ci_high)).all()
    # Chile and Colombia are 26+ points (>7 SE) below the rest: ranks 5 and 6 for sure
    assert simul.set_index("arm").loc[
        ["Chile", "Colombia"], ["ci_low", "ci_high"]
    ].values.tolist() == [[5, 5], [6, 6]]
    best1 = rank_sets(x, cov=cov, tau=1).in_tau_best
    best3 = rank_sets(x, cov=cov, tau=3).in_tau_best
    assert (best1 <= best3).all() and best1.sum() <= best3.sum() and not best3.iloc[4:].any()
    assert simul.in_tau_best.tolist()[:4] == [False, True, True, True]


def test_rank_sets_from_draws_equal_sets_from_their_covariance():
    rng = np.random.default_rng(5)
    x = np.array([1.0, 0.8, 0.3, 0.0])
    cov = np.diag([0.01, 0.01, 0.02, 0.01])
    draws = x + rng.multivariate_normal(np.zeros(4), cov, size=20_000)
    a = rank_sets(x, draws=draws)
    b = rank_sets(x, cov=cov, n_resamples=20_000)
    assert a.ci_low.tolist() == b.ci_low.tolist() and a.ci_high.tolist() == b.ci_high.tolist()
    with pytest.raises(ParameterError, match="exactly one"):
        rank_sets(x)


@pytest.mark.slow  # simulation study
def test_seeded_rank_set_coverage_in_the_least_favourable_case():
    """Five equal arms: every true rank is 1 and the simultaneous sets cover only when no
    pair is separated. 50 simulations (40 tasks x 3 replicates, task SD 1, ~30 % ties) must
    cover at least 43 times (nominal 47.5; P(X <= 42) < 1 % at 0.95) and not all 50 times with
    sets that are always full (a test that a do-nothing rank set would pass is no test)."""
    rng = np.random.default_rng(99)
    hits, sizes = 0, []
    for s in range(50):
        f = simulate_pairwise(rng, np.zeros(5))
        r = rank(f, n_resamples=300, rng=s)
        r = r[r.statistic == "rank"]
        hits += bool((r.ci_low == 1).all())
        sizes.append(float((r.ci_high - r.ci_low + 1).mean()))
    assert 43 <= hits <= 50
    spread = simulate_pairwise(rng, np.array([0.0, 0.0, 0.0, 0.0, 2.5]))
    top = rank(spread, n_resamples=300, rng=1)
    top = top[top.statistic == "rank"].set_index("arm")
    assert top.loc["arm4", ["ci_low", "ci_high"]].tolist() == [1, 1]  # a clear winner is found


def test_prediction_powered_rank_uses_the_judge_and_the_labels():
    rng = np.random.default_rng(8)
    beta = np.array([0.0, 0.4, 0.8, 1.2])
    human = simulate_pairwise(rng, beta, n_tasks=150, n_reps=1, gamma=0.0).assign(judge="human")
    # a judge that agrees with people 80 % of the time, else says "win" for arm_a
    agree = rng.random(len(human)) < 0.8
    judge = human.assign(judge="llm", outcome=np.where(agree, human.outcome, "win"))
    labelled_tasks = rng.choice(human.task_id.unique(), 50, replace=False)
    labels = human[human.task_id.isin(labelled_tasks)]
    ppr = rank(judge, labels=labels, n_resamples=300, rng=0)
    lam = ppr.diagnostics["lambda"].iloc[0]
    assert 0.0 < lam <= 1.0
    only = rank(labels, n_resamples=300, rng=0)

    def w(r):
        s = r[r.statistic == "strength"]
        return (s.ci_high - s.ci_low).mean()

    assert w(ppr) < w(only)  # the judge's verdicts on the other 100 tasks help
    same = rank(human, labels=labels, n_resamples=300, rng=0)  # a perfect judge: lambda ~ 1
    assert same.diagnostics["lambda"].iloc[0] > 0.8


def test_sandwich_se_is_statsmodels_cluster_robust_logit():
    """Without ties Bradley-Terry is a logit; its CR1 cluster-robust covariance is
    statsmodels' (which also multiplies by (N - 1) / (N - K))."""
    rng = np.random.default_rng(12)
    n_tasks, per = 60, 6
    task = np.repeat(np.arange(n_tasks), per)
    a = rng.integers(0, 3, len(task))
    b = (a + rng.integers(1, 3, len(task))) % 3
    beta = np.array([0.0, 0.6, -0.4])
    eff = rng.normal(0, 0.8, (n_tasks, 3))
    u = beta[a] - beta[b] + eff[task, a] - eff[task, b]
    win = rng.random(len(task)) < 1 / (1 + np.exp(-u))
    frame = pd.DataFrame({"task_id": task.astype(str), "judge": "j",
                          "arm_a": [f"m{i}" for i in a], "arm_b": [f"m{i}" for i in b],
                          "status": "ok", "outcome": np.where(win, "win", "loss")})  # fmt: skip
    e, keys, counts = _cells(frame)
    x = _btd._btd_design(keys, 3, position=False)
    kk, cell, col = _btd._btd_cells(e.a, e.b, e.pos, e.y, 3)
    per_task = np.zeros((e.n_tasks, len(keys) * 3))
    np.add.at(per_task, (e.task, cell * 3 + col), 1)
    theta, _ = _btd._btd_fit(counts[None], x, ties=False)
    scores = _btd._task_scores(per_task, theta, x, False)
    cov = _btd._sandwich(counts[None], scores, np.ones((1, e.n_tasks)), theta, x, False)[0]
    design = np.zeros((len(task), 3))
    design[np.arange(len(task)), e.a] += 1
    design[np.arange(len(task)), e.b] -= 1
    fit = sm.Logit((e.y == 2).astype(float), design[:, 1:]).fit(
        disp=0, cov_type="cluster", cov_kwds={"groups": e.task}
    )
    n, k = len(task), 2
    np.testing.assert_allclose(theta[0], fit.params, atol=1e-7)
    np.testing.assert_allclose(cov * (n - 1) / (n - k), fit.cov_params(), rtol=1e-6)


def test_rank_sets_do_not_depend_on_the_seed_on_the_three_arm_data():
    # data/karm (3 arms, 15 tasks x 6 verdicts per pair, two judges): rank()'s marginal and
    # simultaneous sets from two seeds at the default resamples, and rank_sets from the
    # strengths' covariance (deterministic draws) computed twice.
    from pathlib import Path

    import evalstats

    frame = evalstats.load_frame(Path(__file__).parents[1] / "data" / "karm")
    frame = frame[frame.rubric == "with-without"]
    for judge in sorted(set(frame.judge)):
        for simultaneous in (True, False):
            sets = []
            for seed in (0, 1):
                kind = "simultaneous" if simultaneous else "marginal"
                r = rank(frame, judge=judge, sets=(kind,), rng=seed)
                sets.append(r.loc[r.statistic == "rank", ["arm", "ci_low", "ci_high"]])
            pd.testing.assert_frame_equal(sets[0], sets[1])
        # both families in one call: each equals its own call's (the same resamples)
        both = rank(frame, judge=judge, sets=("simultaneous", "marginal"), rng=0)
        for kind in ("simultaneous", "marginal"):
            alone = rank(frame, judge=judge, sets=(kind,), rng=0)
            rows = both.loc[(both.statistic != "rank") | (both.method == f"{kind}_stepdown")]
            pd.testing.assert_frame_equal(
                pd.DataFrame(rows).reset_index(drop=True), pd.DataFrame(alone)
            )
    x, cov = (
        np.array([0.3, 0.0, -0.2]),
        np.array([[0.02, 0.01, 0.0], [0.01, 0.03, 0], [0, 0, 0.02]]),
    )
    a = rank_sets(x, cov=cov, simultaneous=False)
    pd.testing.assert_frame_equal(
        pd.DataFrame(a), pd.DataFrame(rank_sets(x, cov=cov, simultaneous=False))
    )


def test_rank_takes_a_verdict_frame_with_rubrics_and_with_first_orders(sim):
    v = sim.assign(order=sim.order.map({"a_first": "with_first", "b_first": "without_first"}))
    both = pd.concat([v.assign(rubric="r"), v.assign(rubric="s", outcome="tie")])
    a = rank(sim, n_resamples=50, rng=0)
    b = rank(both, rubric="r", n_resamples=50, rng=0)
    pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))
    with pytest.raises(ParameterError, match="rubric"):
        rank(both, n_resamples=50)
