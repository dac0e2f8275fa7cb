"""The exact (enumerated) coverage of the rate intervals, benchmarks/coverage_exact_rates.py.

Its pieces are checked against independent oracles (the per-task probabilities against
scipy's adaptive quadrature, the multiset weights against a plain loop over ordered task
tuples, the coverage against the Monte-Carlo battery), and the floor it documents in
:mod:`evalstats.stats.rates` (8 tasks x 3, net win +0.8) is pinned.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from evalstats.records import EvalstatsWarning
from evalstats.stats.models import latent_thresholds

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    # Registered under another name: "coverage" in sys.modules would shadow coverage.py, which
    # numba (imported by wildboottest in test_robust, same worker) then fails to use.
    key = f"bench_{name}"
    spec = importlib.util.spec_from_file_location(key, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def exact():
    return _load("coverage_exact_rates")


@pytest.fixture(scope="module")
def plus_08(exact):
    d = exact.enumerate_design(8, 3, (0.85, 0.10, 0.05), 0.3)
    r = exact.rate_arrays(
        d["wins"], d["ties"], d["losses"], d["gid"], d["n_groups"], net_win_test=False
    )
    res = exact.exact_coverage(r["low"], r["high"], exact.truth((0.85, 0.10, 0.05)), d["prob"])
    return d, r, res


@pytest.mark.slow  # adaptive quadrature of every composition
@pytest.mark.parametrize("probs, icc", [((0.85, 0.10, 0.05), 0.3), ((0.3, 0.5, 0.2), 0.8)])
def test_task_probabilities_match_adaptive_quadrature(exact, probs, icc) -> None:
    comp, q = exact.composition_probs(3, probs, icc)
    sigma = np.sqrt(icc / (1 - icc))
    lo, hi = latent_thresholds(probs[1], probs[2], np.sqrt(1 + sigma**2))

    def density(u, w, t, loss):
        pl = stats.norm.cdf(lo - u)
        pt = stats.norm.cdf(hi - u) - pl
        pmf = stats.multinomial.pmf([w, t, loss], 3, [1 - pl - pt, pt, pl])
        return pmf * stats.norm.pdf(u, scale=sigma)

    oracle = [integrate.quad(density, -12 * sigma, 12 * sigma, args=tuple(c))[0] for c in comp]
    np.testing.assert_allclose(q, oracle, rtol=1e-8, atol=1e-12)
    assert q.sum() == pytest.approx(1.0, abs=1e-12)


def test_multiset_weights_match_a_loop_over_ordered_tuples(exact) -> None:
    probs, icc = (0.5, 0.2, 0.3), 0.4
    d = exact.enumerate_design(3, 2, probs, icc)
    comp, q = exact.composition_probs(2, probs, icc)
    oracle: dict[tuple, float] = {}
    for tup in itertools.product(range(len(comp)), repeat=3):  # every ordered evaluation
        key = tuple(sorted(tup))
        oracle[key] = oracle.get(key, 0.0) + float(np.prod(q[list(tup)]))
    assert d["n_groups"] == len(oracle)
    cells = np.stack([d["wins"], d["ties"], d["losses"]], axis=1).reshape(d["n_groups"], 3, 3)
    index = {tuple(c): i for i, c in enumerate(comp.tolist())}
    for g in range(d["n_groups"]):
        key = tuple(sorted(index[tuple(c)] for c in cells[g].tolist()))
        assert d["prob"][g] == pytest.approx(oracle[key], rel=1e-12)
    assert d["prob"].sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.slow  # simulation study
def test_exact_coverage_agrees_with_the_simulated_battery(exact, plus_08) -> None:
    _, _, res = plus_08
    battery = _load("coverage")
    battery.WILD = False
    design = next(d for d in battery.DESIGNS if d.name == "8x3 net +.8")
    n_evals = 4000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        row = battery.rate_coverage(
            design, n_evals, np.random.default_rng(3), methods=(battery.DEFAULT_METHOD,)
        ).iloc[0]
    simulated = row[list(exact.RATE_NAMES)].to_numpy(dtype=float)
    mcse = np.sqrt(res["coverage"] * (1 - res["coverage"]) / n_evals)
    assert np.all(np.abs(simulated - res["coverage"]) < 4 * mcse), (simulated, res["coverage"])


def test_the_floor_at_8x3_net_plus_08(exact, plus_08) -> None:
    """Every miss of the default is on the reachable side: the all-wins atom (P > 0.025)
    keeps any interval whose upper-side error is at most 0.025 from missing above, so
    coverage of at least 0.975 is the price of equal tails here, not a slack the default
    leaves."""
    d, r, res = plus_08
    o = exact.oracle_tails(r["est"][:, :4], d["prob"])
    assert o["p_max"][0] > 0.025 and o["p_min"][2] > 0.025 and o["p_min"][1] > 0.025
    np.testing.assert_array_equal(res["above"][[0, 3]], 0.0)  # win, net win
    np.testing.assert_array_equal(res["below"][[1, 2]], 0.0)  # tie, loss
    # The reachable tails stay at about their nominal 0.025 (coverage 0.968-0.982) ...
    assert np.all(np.abs(res["coverage"][:4] - 0.975) < 0.008), res["coverage"]
    # ... and the oracle exact test ordered by the estimate covers more than the default.
    assert np.all(o["oracle"][[0, 3]] > res["coverage"][[0, 3]])


def test_chunks_give_the_unchunked_intervals(exact) -> None:
    d = exact.enumerate_design(4, 3, (0.45, 0.25, 0.30), 0.3)
    r = exact.rate_arrays(
        d["wins"], d["ties"], d["losses"], d["gid"], d["n_groups"], net_win_test=False
    )
    chunked = exact.in_chunks(d, lambda sub: exact.rates_of(sub), size=97)
    for key in ("est", "low", "high"):
        np.testing.assert_array_equal(chunked[key], r[key])


@pytest.mark.parametrize("sizes, icc", [((3,) * 4, 0.3), ((1, 2, 2, 3), 0.6)])
def test_extreme_atoms_match_a_loop_over_every_evaluation(exact, sizes, icc) -> None:
    """The atoms against the probability of every ordered evaluation, summed where a rate
    is at its smallest or largest value (the rates computed by hand, not by rate_arrays)."""
    probs = (0.45, 0.25, 0.30)
    per_task = [exact.composition_probs(m, probs, icc) for m in sizes]
    p_min, p_max = np.zeros(5), np.zeros(5)
    values, weights = [], []
    for pick in itertools.product(*(range(len(c)) for c, _ in per_task)):
        counts = sum(per_task[t][0][k] for t, k in enumerate(pick))
        w, t, lo = counts / counts.sum()
        values.append([w, t, lo, w - lo, w + t / 2])
        weights.append(np.prod([per_task[t][1][k] for t, k in enumerate(pick)]))
    values, weights = np.array(values), np.array(weights)
    for j in range(5):
        p_min[j] = weights[np.isclose(values[:, j], values[:, j].min())].sum()
        p_max[j] = weights[np.isclose(values[:, j], values[:, j].max())].sum()
    got_min, got_max = exact.extreme_atoms(sizes, probs, icc)
    np.testing.assert_allclose(got_min, p_min, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(got_max, p_max, rtol=1e-10, atol=1e-15)


def test_the_floors_the_battery_prints(exact) -> None:
    """8 x 3, net win +0.8: every rate has an atom above 0.025 at its design ICC; 6 x 3
    (ICC .3): none, but the loss rate's no-loss atom is 0.0313 at ICC 0.8 (0.0053 at .3),
    so an interval that keeps 0.025 a side up to ICC 0.8 cannot exclude 0.30 at no losses."""
    plus = exact.rate_floors((3,) * 8, (0.85, 0.10, 0.05), 0.3)
    np.testing.assert_array_equal(plus["floor"], 0.975)
    six = exact.rate_floors((3,) * 6, (0.45, 0.25, 0.30), 0.3)
    assert six["floor"].isna().all()
    assert six["floor_icc_top"].notna().tolist() == [False, False, True, False, False]
    assert six.loc["loss_rate", "atom"] == pytest.approx(0.0053, abs=5e-5)
    assert six.loc["loss_rate", "atom_icc_top"] == pytest.approx(0.0313, abs=5e-5)
    # A judge's noise of 0.08 at ICC .3 leaves the verdicts' ICC at 0.2987: the same floors.
    noisy = exact.rate_floors((3,) * 6, (0.45, 0.25, 0.30), 0.3, judge_noise=0.08)
    assert noisy["floor_icc_top"].notna().tolist() == [False, False, True, False, False]


def test_floor_table_of_the_battery_designs(exact) -> None:
    """The battery's floor table: a row per (design, rate) with a floor at ICC <= 0.8, the
    default's coverage beside it; the blind two-order design gets none."""
    battery = _load("coverage")
    designs = battery.DESIGNS
    coverage = pd.DataFrame(
        np.arange(len(designs) * 5).reshape(-1, 5) / 1000.0,
        index=[d.name for d in designs],
        columns=list(exact.RATE_NAMES),
    )
    table = exact.floor_table(coverage, designs)
    by_design = table.groupby("design")["rate"].apply(list).to_dict()
    assert by_design["8x3 net +.8"] == list(exact.RATE_NAMES)
    assert by_design["8x3 net -.8"] == list(exact.RATE_NAMES)
    assert by_design["kappa .92 6x3"] == ["loss_rate"]
    assert by_design["costs 6x3 logsd 1.5"] == ["loss_rate"]
    assert "blind 15x3x2 orders" not in by_design and "15x6 ICC .3" not in by_design
    row = table[(table["design"] == "8x3 net +.8") & (table["rate"] == "tie_rate")].iloc[0]
    assert row["coverage"] == coverage.loc["8x3 net +.8", "tie_rate"]
    assert row["atom"] == pytest.approx(0.0934, abs=5e-5) and row["floor"] == 0.975
