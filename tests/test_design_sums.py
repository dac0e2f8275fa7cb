"""design_coverage on large designs: the per-size-class sums path against its oracles.

* the intervals from the sums equal ``rate_arrays``' on the very same simulated tasks;
* the configuration probabilities are scipy's Dirichlet-multinomial (and multinomial,
  beta-binomial where an outcome has probability 0);
* the sums path and the task-by-task path give the same coverage within Monte-Carlo error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

# The large-design path's pieces are private: checked against rate_arrays and scipy here.
from evalstats.stats import design, design_coverage
from evalstats.stats.design import (
    _features,  # private: the sums design's feature core
    config_pmf,
    configurations,
    interval_ends,
    simulated_sums,
)
from evalstats.stats.rates import rate_arrays


def sums_from_tasks(sim: np.ndarray, m, gid, n_groups, probs) -> dict:
    """The sums of :func:`simulated_sums` from simulated tasks themselves, ``sim``
    (n_resamples, cells, 3): what the tests compare :func:`interval_ends` on with
    ``rate_arrays``."""
    m = np.asarray(m, dtype=np.int64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = m / n[gid]
        adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
    f = _features(sim.astype(np.float64), m[None, :, None], probs[gid][None])
    onehot = np.eye(n_groups)[gid]  # (cells, groups)
    keys, n_tasks = np.unique(np.stack([gid, m], axis=1), axis=0, return_counts=True)
    kh = keys[:, 1] / n[keys[:, 0]]
    with np.errstate(divide="ignore"):
        k_adj = np.where(kh < 1, 1.0 / (1.0 - kh), np.nan)
    return {
        "total": np.einsum("scf,cg->sgf", f[..., :3], onehot),
        "z1": np.einsum("scf,cg->sgf", f[..., 3:6], onehot),
        "a1": np.einsum("scf,cg->sgf", (adj * m)[None, :, None] * f[..., 3:6], onehot),
        "a2": np.einsum("scf,cg->sgf", adj[None, :, None] * f[..., 6:], onehot),
        "q2": np.einsum("scf,cg->sgf", f[..., 6:] / m[None, :, None], onehot),
        "am2": np.bincount(gid, weights=adj * m * m, minlength=n_groups),
        "keys": keys,
        "n_tasks": n_tasks,
        "adj": k_adj,
        "m": m,
        "gid": gid,
    }


def _tasks(sizes, probs, conc, n_sims, rng):
    """Dirichlet-multinomial tasks, (n_sims, cells, 3), as design_coverage draws them."""
    if np.isfinite(conc):
        a = np.broadcast_to(probs * conc, (n_sims, len(sizes), 3))
        draws = rng.gamma(a)
        with np.errstate(invalid="ignore"):
            p = draws / draws.sum(axis=2, keepdims=True)
        p = np.where(np.isfinite(p), p, probs)
    else:
        p = np.broadcast_to(probs, (n_sims, len(sizes), 3))
    return rng.multinomial(np.broadcast_to(sizes, (n_sims, len(sizes))), p)


@pytest.mark.parametrize(
    ("sizes", "probs", "conc"),
    [
        ([3, 3, 5, 2, 7, 3, 3, 4, 1, 6], [0.5, 0.2, 0.3], 4.0),  # unequal sizes, correlated
        ([4] * 9, [0.6, 0.0, 0.4], np.inf),  # equal sizes (df = C - 1), no ties
        ([1, 1, 2, 8, 8, 3], [0.9, 0.05, 0.05], 0.5),  # many tasks at one outcome
        ([1] * 12, [0.4, 0.3, 0.3], np.inf),  # one verdict a task (no ICC)
        ([5, 5], [0.5, 0.25, 0.25], 2.0),  # two tasks
    ],
)
def test_sums_give_rate_arrays_intervals_on_the_same_tasks(sizes, probs, conc):
    rng = np.random.default_rng(7)
    sizes, probs = np.asarray(sizes), np.asarray(probs, dtype=float)
    n_groups, n_sims = 2, 400
    m = np.tile(sizes, n_groups)
    gid = np.repeat(np.arange(n_groups), len(sizes))
    group_probs = np.repeat(probs[None], n_groups, axis=0)
    sim = _tasks(m, probs, conc, n_sims, rng)
    low, high = interval_ends(
        sums_from_tasks(sim, m, gid, n_groups, group_probs), group_probs, n_groups, 0.95
    )
    sim_gid = (np.arange(n_sims)[:, None] * n_groups + gid[None]).ravel()
    ref = rate_arrays(
        *(sim[..., k].ravel() for k in range(3)), sim_gid, n_sims * n_groups, net_win_test=False
    )
    ref_low = ref["low"].reshape(n_sims, n_groups, 5)
    ref_high = ref["high"].reshape(n_sims, n_groups, 5)
    np.testing.assert_array_equal(np.isnan(low), np.isnan(ref_low))
    np.testing.assert_allclose(low, ref_low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, ref_high, rtol=0, atol=1e-12)


def test_one_task_groups_have_no_interval():
    sim = np.array([[[2, 1, 0], [1, 1, 1]]])
    probs = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    low, high = interval_ends(
        sums_from_tasks(sim, [3, 3], np.array([0, 1]), 2, probs), probs, 2, 0.95
    )
    assert np.isnan(low).all() and np.isnan(high).all()


def test_configurations_are_every_count_once():
    x = configurations(6)
    assert len(x) == 7 * 8 // 2
    assert (x.sum(axis=1) == 6).all() and (x >= 0).all()
    assert len({tuple(r) for r in x}) == len(x)


@pytest.mark.parametrize("m", [1, 4, 9])
def test_config_pmf_is_scipys_dirichlet_multinomial(m):
    x = configurations(m)
    p = np.array([0.45, 0.2, 0.35])
    for conc in (0.3, 2.0, 40.0):
        ref = stats.dirichlet_multinomial.pmf(x, p * conc, m)
        np.testing.assert_allclose(config_pmf(x, p, conc), ref, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(
        config_pmf(x, p, np.inf), stats.multinomial.pmf(x, m, p), rtol=1e-10, atol=1e-15
    )
    # No ties: the tie count is 0 and the wins are beta-binomial (binomial at rho = 0).
    q = np.array([0.6, 0.0, 0.4])
    no_tie = x[:, 1] == 0
    pm = config_pmf(x, q, 3.0)
    assert (pm[~no_tie] == 0).all()
    np.testing.assert_allclose(pm[no_tie], stats.betabinom.pmf(x[no_tie, 0], m, 1.8, 1.2))
    np.testing.assert_allclose(
        config_pmf(x, q, np.inf)[no_tie], stats.binom.pmf(x[no_tie, 0], m, 0.6)
    )


def _design(n_tasks: int, seed: int = 0) -> pd.DataFrame:
    """Two judges, 3-7 verdicts a task, task-level correlation."""
    rng = np.random.default_rng(seed)
    rows = []
    for judge in ("a", "b"):
        for t in range(n_tasks):
            p = rng.dirichlet([2.0, 1.0, 1.5])
            for _ in range(rng.integers(3, 8)):
                rows.append((judge, t, rng.choice(["win", "tie", "loss"], p=p)))
    f = pd.DataFrame(rows, columns=["judge", "task_id", "outcome"])
    return f.assign(status="ok")


@pytest.mark.parametrize("max_configs", [None, 0])  # by configuration counts; task by task
def test_sums_path_matches_the_task_by_task_coverage(monkeypatch, max_configs):
    f = _design(12)
    per_task = design_coverage(f, n_resamples=2000, rng=3)
    monkeypatch.setattr(design, "PER_TASK_LIMIT", 0)
    if max_configs is not None:
        monkeypatch.setattr(design, "MAX_CONFIGS", max_configs)
    sums = design_coverage(f, n_resamples=2000, rng=3)
    cols = [c for c in per_task.columns if c.endswith("_coverage")]
    pd.testing.assert_frame_equal(
        per_task.drop(columns=cols + ["in_band", "ci_note"]),
        sums.drop(columns=cols + ["in_band", "ci_note"]),
    )
    # Two independent simulations of one coverage: their difference has SE <= 0.01 here.
    diff = (per_task[cols] - sums[cols]).abs().to_numpy()
    assert diff.max() < 0.03, diff
    assert not np.allclose(per_task[cols], sums[cols])  # two different random streams


def test_simulated_totals_have_the_design_mean_and_variance():
    # Sizes 4 (by configuration counts) for 30 tasks: totals are sums of 30 DM(4) tasks.
    counts = np.tile([[2, 1, 1]], (30, 1))
    p, rho = np.array([[0.5, 0.2, 0.3]]), np.array([0.25])
    gen = np.random.default_rng(0)
    s = simulated_sums(counts, np.zeros(30, np.int64), 1, p, rho, 20000, gen)
    w = s["total"][:, 0, 0]
    # Dirichlet-multinomial variance of a count: m p (1 - p) (1 + (m - 1) rho), times 30.
    var = 30 * 4 * 0.5 * 0.5 * (1 + 3 * 0.25)
    assert w.mean() == pytest.approx(60.0, abs=4 * np.sqrt(var / 20000))
    assert w.var() == pytest.approx(var, rel=0.05)
