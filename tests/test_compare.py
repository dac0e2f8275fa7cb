"""compare(): pairwise win / tie / loss / net win of K arms, checked against statsmodels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from pair_simulation import simulate_pairwise, true_net_wins

from evalstats.errors import DataError, ParameterError
from evalstats.stats import compare, win_rates


@pytest.fixture(scope="module")
def sim() -> pd.DataFrame:
    return simulate_pairwise(np.random.default_rng(3), np.array([0.0, 0.3, 0.8, 0.1]))


def _oriented(frame: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The pair's rows from ``a``'s view, by plain pandas (the oracle's own flip)."""
    fwd = frame[(frame.arm_a == a) & (frame.arm_b == b)]
    back = frame[(frame.arm_a == b) & (frame.arm_b == a)]
    flip = back.outcome.map({"win": "loss", "loss": "win", "tie": "tie"})
    return pd.concat([fwd, back.assign(outcome=flip)])


def test_estimates_and_se_match_statsmodels_clustered_ols(sim):
    # Every task judges every pair equally often: CR2 is CR1 and Bell-McCaffrey's df C - 1.
    res = compare(sim)
    for (a, b), rows in res.groupby(["arm_a", "arm_b"]):
        pair = _oriented(sim, a, b)
        for stat, y in {
            "win_rate": (pair.outcome == "win").astype(float),
            "tie_rate": (pair.outcome == "tie").astype(float),
            "net_win": (pair.outcome == "win").astype(float) - (pair.outcome == "loss"),
        }.items():
            ols = sm.OLS(y.to_numpy(), np.ones(len(y))).fit(
                cov_type="cluster", cov_kwds={"groups": pd.factorize(pair.task_id)[0]}, use_t=True
            )
            row = rows[rows.statistic == stat].iloc[0]
            assert row.estimate == pytest.approx(ols.params[0], abs=1e-12)
            assert row.se == pytest.approx(ols.bse[0], rel=1e-9)
            assert row.df == pytest.approx(ols.df_resid_inference)  # C - 1 when balanced


def test_holm_adjustment_is_the_step_down_of_the_net_win_p_values(sim):
    res = compare(sim)
    net = res[res.statistic == "net_win"]
    p = net.p_value.to_numpy()
    order = np.argsort(p)
    m = len(p)
    expected = np.empty(m)
    running = 0.0
    for rank_, i in enumerate(order):  # Holm (1979) by hand
        running = max(running, min(1.0, (m - rank_) * p[i]))
        expected[i] = running
    np.testing.assert_allclose(net.p_holm.to_numpy(), expected, rtol=1e-12)
    assert res.loc[res.statistic != "net_win", "p_holm"].isna().all()


def test_orientation_of_rows_does_not_matter(sim):
    flipped = sim.copy()
    swap = np.arange(len(sim)) % 2 == 1
    flipped.loc[swap, ["arm_a", "arm_b"]] = sim.loc[swap, ["arm_b", "arm_a"]].to_numpy()
    flipped.loc[swap, "outcome"] = sim.loc[swap, "outcome"].map(
        {"win": "loss", "loss": "win", "tie": "tie"}
    )
    arms = ["arm0", "arm1", "arm2", "arm3"]
    a = compare(sim, arms=arms)
    b = compare(flipped, arms=arms)
    pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))


def test_simultaneous_intervals_are_wider_than_marginal_and_reference_pairs(sim):
    res = compare(sim)
    net = res[res.statistic == "net_win"]
    assert (net.sim_low <= net.ci_low + 1e-12).all() and (net.sim_high >= net.ci_high - 1e-12).all()
    ref = compare(sim, reference="arm2")
    assert set(ref.arm_b) == {"arm2"} and len(ref) == 3 * 4


def test_two_arm_verdict_frame_is_the_case_k_2():
    v = pd.DataFrame(
        {
            "task_id": ["t1", "t1", "t2", "t2", "t3", "t3"],
            "replicate": [1, 2, 1, 2, 1, 2],
            "judge": "j",
            "order": ["with_first", "without_first", None, "with_first", "with_first", None],
            "status": ["ok", "ok", "ok", "invalid", "ok", "ok"],
            "outcome": ["win", "loss", "win", None, "tie", "win"],
        }
    )
    # the seeds' frame: no arm columns (WITH vs WITHOUT), orders with_first / without_first
    res = compare(v)
    net = res[res.statistic == "net_win"].iloc[0]
    assert (net.arm_a, net.arm_b, net.n, net.n_tasks) == ("with", "without", 5, 3)
    assert net.estimate == pytest.approx((3 - 1) / 5)


def test_bad_input_names_the_row_and_field(sim):
    bad = sim.head(5).copy()
    bad.loc[bad.index[3], "outcome"] = "draw"
    with pytest.raises(DataError, match="line 4.*outcome"):
        compare(bad)
    with pytest.raises(ParameterError, match="judge"):
        compare(pd.concat([sim, sim.assign(judge="other")]))
    with pytest.raises(ParameterError, match="reference"):
        compare(sim, reference="nope")
    with pytest.raises(ParameterError, match="method"):
        compare(sim, method="bca")


@pytest.mark.slow  # simulation study
def test_seeded_simultaneous_coverage_of_all_net_wins():
    """A small coverage check that fails when the max-t or the clustering is wrong: 60
    simulations of 5 equal arms (40 tasks x 3 replicates, task SD 1) must cover all ten net
    wins at once at least 51 times (nominal 57; P(X <= 50) is below 1 % at level 0.95)."""
    beta = np.zeros(5)
    truth = true_net_wins(beta, n_draws=50_000)
    rng = np.random.default_rng(2024)
    hits = 0
    for _ in range(60):
        f = simulate_pairwise(rng, beta)
        net = compare(f, arms=[f"arm{m}" for m in range(5)])
        net = net[net.statistic == "net_win"]
        hits += bool(((net.sim_low <= truth) & (truth <= net.sim_high)).all())
    assert 51 <= hits <= 60


@pytest.mark.filterwarnings("ignore:fewer than 8 effective clusters")
def test_marginal_and_simultaneous_numbers_are_win_rates():
    # A small unbalanced design (6 tasks, rows dropped): each pair's estimate, SE, interval,
    # df and p-value are win_rates' on that pair's verdicts, and its simultaneous interval is
    # win_rates' at Bonferroni's level 1 - alpha / P.
    frame = simulate_pairwise(np.random.default_rng(11), np.array([0.0, 0.4, 0.9]), n_tasks=6)
    frame = frame.sample(frac=0.7, random_state=3).sort_index()
    conf = 0.9
    res = compare(frame, confidence=conf)
    assert res.diagnostics.sim_level.iloc[0] == pytest.approx(1 - 0.1 / 3)
    for (a, b), rows in res.groupby(["arm_a", "arm_b"], sort=False):
        pair = _oriented(frame, a, b)
        got = rows.set_index("statistic")
        wr = win_rates(pair, by=None, confidence=conf).set_index("statistic")
        for col in ("estimate", "se", "ci_low", "ci_high", "df"):
            np.testing.assert_allclose(got[col], wr.loc[got.index, col], rtol=1e-12)
        assert got.loc["net_win", "p_value"] == pytest.approx(wr.loc["net_win", "p_value"])
        bonf = win_rates(pair, by=None, confidence=1 - 0.1 / 3).set_index("statistic")
        np.testing.assert_allclose(got["sim_low"], bonf.loc[got.index, "ci_low"], rtol=1e-12)
        np.testing.assert_allclose(got["sim_high"], bonf.loc[got.index, "ci_high"], rtol=1e-12)


def test_p_values_agree_with_the_marginal_and_the_simultaneous_intervals(sim):
    # p_value < 1 - confidence exactly when the marginal interval excludes 0, and the
    # simultaneous one excludes 0 exactly when P p_value < 1 - confidence (so p_holm too).
    small = sim[sim.task_id.isin([f"t{i}" for i in range(15)])]
    small = small.sample(frac=0.6, random_state=1).sort_index()  # 1-3 replicates per task
    for conf in (0.8, 0.9, 0.95):
        for data in (sim, small):
            net = compare(data, confidence=conf)
            net = net[net.statistic == "net_win"]
            excl = (net.ci_low > 0) | (net.ci_high < 0)
            assert ((net.p_value < 1 - conf) == excl).all()
            sim_excl = (net.sim_low > 0) | (net.sim_high < 0)
            assert (sim_excl == (net.p_value * len(net) < 1 - conf)).all()
            assert (~sim_excl | (net.p_holm < 1 - conf)).all()
            assert ((net.sim_low <= net.ci_low) & (net.ci_high <= net.sim_high)).all()


def test_no_infinite_or_unit_interval_at_twelve_tasks_by_two():
    # 12 tasks x 2 replicates, a rare loss: the bootstrap max-t used to give an infinite
    # critical value and simultaneous intervals of [0, 1] here.
    rng = np.random.default_rng(4)
    frame = simulate_pairwise(rng, np.array([0.0, 1.5, 2.5]), n_tasks=12, n_reps=2)
    res = compare(frame)
    assert np.isfinite(res[["sim_low", "sim_high"]].to_numpy()).all()
    assert not ((res.sim_low == 0) & (res.sim_high == 1)).any()


def test_verdict_frame_with_arm_columns_and_with_first_orders():
    # The verdict frame's own order names (the arm_a / arm_b side) and a rubric column.
    f = simulate_pairwise(np.random.default_rng(5), np.array([0.0, 0.5, 1.0]), n_tasks=10)
    v = f.assign(
        order=f.order.map({"a_first": "with_first", "b_first": "without_first"}), rubric="r"
    )
    a = compare(f)
    b = compare(v)
    pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))
    with pytest.raises(ParameterError, match="rubric"):
        compare(pd.concat([v, v.assign(rubric="s")]))
    two = compare(pd.concat([v, v.assign(rubric="s")]), rubric="s")
    pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(two))


def test_intervals_stay_in_range_and_an_edge_gets_a_bound():
    # Few tasks and no tie anywhere: every end finite and in range, the tie rate observed at
    # 0 has the lower end 0 and a positive upper end (win_rates' boundary construction).
    rng = np.random.default_rng(2)
    frame = simulate_pairwise(rng, np.array([0.0, 0.5, 1.0]), n_tasks=5, n_reps=2)
    frame = frame.assign(outcome=frame.outcome.replace({"tie": "win"}))
    res = compare(frame)
    for lo_col, hi_col in (("ci_low", "ci_high"), ("sim_low", "sim_high")):
        assert np.isfinite(res[[lo_col, hi_col]].to_numpy()).all()
        rates = res.statistic != "net_win"
        assert ((res.loc[rates, lo_col] >= 0) & (res.loc[rates, hi_col] <= 1)).all()
        assert ((res[lo_col] >= -1) & (res[hi_col] <= 1)).all()
    tie = res.loc[res.statistic == "tie_rate"]
    assert (tie.estimate == 0).all() and (tie.ci_low == 0).all()
    assert ((tie.ci_high > 0) & (tie.sim_high >= tie.ci_high) & (tie.sim_high < 1)).all()
