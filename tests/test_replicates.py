"""Replicates as evidence (issue 33): pass@k / pass^k / flip / agreement / ICC per arm and
the anytime-valid monitor, each against an independent oracle."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, special, stats

from evalstats.errors import DataError, ParameterError
from evalstats.stats import betting_cs, monitor, replicates

FIXTURES = Path(__file__).parent / "fixtures"


def _runs(rng: np.random.Generator, n_tasks: int, reps, arms=("with", "without")) -> pd.DataFrame:
    rows = []
    for t in range(n_tasks):
        p = rng.beta(0.8, 0.8)
        for a, arm in enumerate(arms):
            n = reps if np.isscalar(reps) else reps[(t + a) % len(reps)]
            for r in range(n):
                rows.append((f"t{t}", arm, r + 1, bool(rng.random() < min(1.0, p + 0.1 * a))))
    return pd.DataFrame(rows, columns=["task_id", "arm", "replicate", "passed"])


def _brute(outcomes: list[bool], k: int) -> tuple[float, float]:
    """pass@k and pass^k of one task by enumerating every k-subset of its replicates."""
    subsets = list(itertools.combinations(outcomes, k))
    return np.mean([any(s) for s in subsets]), np.mean([all(s) for s in subsets])


def test_pass_at_k_and_pass_hat_k_equal_the_mean_over_all_k_subsets():
    runs = _runs(np.random.default_rng(5), 9, [2, 3, 5, 6])
    res = replicates(runs).set_index(["arm", "reference", "statistic"], drop=False)
    for arm, group in runs.groupby("arm"):
        tasks = [g["passed"].tolist() for _, g in group.groupby("task_id")]
        for k in range(1, 7):
            per_task = [_brute(t, k) for t in tasks if len(t) >= k]
            at, hat = np.mean(per_task, axis=0)
            assert res.loc[(arm, None, f"pass@{k}"), "estimate"] == pytest.approx(at)
            assert res.loc[(arm, None, f"pass^{k}"), "estimate"] == pytest.approx(hat)
            assert res.loc[(arm, None, f"pass^{k}"), "n_tasks"] == len(per_task)


def test_flip_rate_and_agreement_by_enumerating_replicate_pairs():
    runs = _runs(np.random.default_rng(6), 12, [1, 2, 4])
    res = replicates(runs).set_index(["arm", "reference", "statistic"])["estimate"]
    for arm, group in runs.groupby("arm"):
        tasks = [g["passed"].tolist() for _, g in group.groupby("task_id") if len(g) >= 2]
        flip = np.mean([len(set(t)) > 1 for t in tasks])
        agree = np.mean([np.mean([a == b for a, b in itertools.combinations(t, 2)]) for t in tasks])
        assert res[(arm, None, "flip_rate")] == pytest.approx(flip)
        assert res[(arm, None, "agreement")] == pytest.approx(agree)


def _betabinom_profile(n: np.ndarray, c: np.ndarray, rho: float) -> float:
    """scipy's beta-binomial log-likelihood at ``rho``, maximised over the mean by scipy."""
    s = 1.0 / rho - 1.0

    def nll(logit_mu: float) -> float:
        mu = special.expit(logit_mu)
        return -stats.betabinom.logpmf(c, n, mu * s, (1.0 - mu) * s).sum()

    return -optimize.minimize_scalar(nll, bounds=(-9, 9), method="bounded").fun


def test_icc_is_the_beta_binomial_ml_with_its_profile_likelihood_interval():
    runs = _runs(np.random.default_rng(7), 25, 4)
    res = replicates(runs).set_index(["arm", "reference", "statistic"])
    for arm, group in runs.groupby("arm"):
        counts = group.groupby("task_id")["passed"].agg(["size", "sum"]).to_numpy(float)
        n, c = counts[:, 0], counts[:, 1]
        grid = np.linspace(0.002, 0.99, 400)
        profile = np.array([_betabinom_profile(n, c, r) for r in grid])
        best = optimize.minimize_scalar(
            lambda r, n=n, c=c: -_betabinom_profile(n, c, r), bounds=(1e-4, 0.995), method="bounded"
        )
        top = -best.fun
        # the likelihood-ratio region at F(1, tasks - 1), the small-sample calibration
        inside = grid[2 * (top - profile) <= stats.f.ppf(0.95, 1, len(n) - 1)]
        row = res.loc[(arm, None, "icc")]
        assert row["estimate"] == pytest.approx(best.x, abs=0.01)
        assert row["ci_low"] == pytest.approx(inside.min(), abs=0.01)
        assert row["ci_high"] == pytest.approx(inside.max(), abs=0.01)
        assert row["method"] == "profile_likelihood"


def _mean_profile(n: np.ndarray, c: np.ndarray, mu: float) -> float:
    """scipy's beta-binomial log-likelihood at mean ``mu``, maximised over rho (0 included)."""

    def nll(rho: float) -> float:
        s = 1.0 / rho - 1.0
        return -stats.betabinom.logpmf(c, n, mu * s, (1.0 - mu) * s).sum()

    binomial = stats.binom.logpmf(c, n, mu).sum()
    return max(binomial, -optimize.minimize_scalar(nll, bounds=(1e-5, 0.995), method="bounded").fun)


@pytest.mark.parametrize("n_tasks, reps, seed", [(8, 10, 3), (15, [2, 6], 4)])
def test_pass_at_1_interval_is_the_profile_likelihood_interval_of_the_mean(n_tasks, reps, seed):
    runs = _runs(np.random.default_rng(seed), n_tasks, reps)
    res = replicates(runs).set_index(["arm", "reference", "statistic"])
    for arm, group in runs.groupby("arm"):
        counts = group.groupby("task_id")["passed"].agg(["size", "sum"]).to_numpy(float)
        n, c = counts[:, 0], counts[:, 1]
        grid = np.linspace(0.005, 0.995, 397)
        profile = np.array([_mean_profile(n, c, m) for m in grid])
        inside = grid[2 * (profile.max() - profile) <= stats.chi2.ppf(0.95, 1)]
        row = res.loc[(arm, None, "pass@1")]
        assert row["estimate"] == pytest.approx(np.mean(c / n))
        assert row["ci_low"] == pytest.approx(min(inside.min(), row["estimate"]), abs=0.006)
        assert row["ci_high"] == pytest.approx(max(inside.max(), row["estimate"]), abs=0.006)
        assert row["method"] == "profile_likelihood"


def test_differences_are_paired_by_task_and_p_values_agree_with_intervals():
    runs = _runs(np.random.default_rng(8), 30, [3, 5])
    res = replicates(runs)
    diff = res[res["reference"] == "without"].set_index("statistic")
    own = res[res["reference"].isna()].set_index(["arm", "statistic"])["estimate"]
    for stat in ("pass^2", "flip_rate", "agreement", "icc"):
        assert diff.loc[stat, "estimate"] == pytest.approx(
            own[("with", stat)] - own[("without", stat)]
        )
    rates = diff[diff.index != "icc"]
    excludes = (rates["ci_low"] > 0) | (rates["ci_high"] < 0)
    assert ((rates["p_value"] < 0.05) == excludes).all()
    assert (rates["method"] == "mover").all() and diff.loc["icc", "method"] == "mover"


def test_a_pass_hat_k_of_zero_keeps_an_interval_above_zero():
    runs = pd.DataFrame({"task_id": np.repeat([f"t{i}" for i in range(8)], 3), "arm": "a",
                         "passed": False})  # fmt: skip
    row = replicates(runs).set_index("statistic").loc["pass^3"]
    assert row["estimate"] == 0 and row["ci_low"] == 0 and 0.2 < row["ci_high"] < 0.4


def test_bad_outcomes_and_reference_are_refused():
    runs = _runs(np.random.default_rng(9), 4, 2)
    with pytest.raises(DataError, match="not true/false") as err:
        replicates(runs.assign(passed=runs["passed"].astype(object).where(runs.index != 3, "yes")))
    assert err.value.field == "passed"
    with pytest.raises(ParameterError, match="reference arm"):
        replicates(runs, reference="v9")


@pytest.mark.parametrize(
    "case", json.loads((FIXTURES / "confseq_betting_cs.json").read_text())["cases"]
)
def test_betting_cs_equals_confseq_to_the_grid(case):
    low, high = betting_cs(np.asarray(case["x"]))
    assert np.abs(low - np.asarray(case["low"])).max() <= 1e-3
    assert np.abs(high - np.asarray(case["high"])).max() <= 1e-3


def test_monitor_holds_its_level_when_looking_after_every_task():
    rng = np.random.default_rng(11)
    wrong = 0
    for _ in range(200):
        outcome = rng.choice(["win", "tie", "loss"], size=150, p=[0.35, 0.3, 0.35])
        looks = monitor(pd.DataFrame({"task_id": range(150), "outcome": outcome}))
        wrong += bool(looks["decision"].isin(["better", "worse"]).any())
    assert wrong / 200 <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 200)


def test_monitor_orders_tasks_by_completion_and_decides():
    frame = pd.DataFrame({"task_id": np.arange(80), "finished": np.arange(80)[::-1],
                          "outcome": (["win"] * 3 + ["loss"]) * 20})  # fmt: skip
    looks = monitor(frame, order="finished")
    assert looks["estimate"].iloc[0] == -1.0  # the last task finished first
    assert looks["decision"].iloc[-1] == "better"
    eq = monitor(frame.assign(outcome=["win", "loss"] * 40), margin=0.5)
    assert eq["decision"].iloc[-1] == "equivalent"
    assert np.isnan(eq["more_tasks"].iloc[-1])
    with pytest.raises(ParameterError, match="margin"):
        monitor(frame, margin=5)
