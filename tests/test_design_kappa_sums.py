"""design_coverage(statistic="kappa") on large designs: the drawn (T, S) sums against the task-by-task
simulation they replace, and the sums' interval against cluster_intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

# The large-design path's private pieces (monkeypatched to force either path).
from evalstats.stats import design, design_coverage
from evalstats.stats.design import kappa_ends

# A design with rare off-diagonal cells, unequal task sizes and correlated tasks.
P = np.array([0.3, 0.03, 0.02, 0.04, 0.15, 0.03, 0.02, 0.03, 0.38])
P = P / P.sum()


def sums_of_tables(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(T, S)``: the summed tables (..., 9) and their scatter about the mean (..., 9, 9)
    of per-task tables (..., C, 9), which design's large-design path draws."""
    t = np.asarray(tables, dtype=np.float64)
    total = t.sum(axis=-2)
    dev = t - total[..., None, :] / t.shape[-2]
    return total, np.einsum("...ci,...cj->...ij", dev, dev)


def _tasks(m, rho, n_sims, gen):
    """Per-task tables (n_sims, C, 9), as design_coverage(statistic="kappa") draws them task by task."""
    conc = (1.0 - rho) / rho
    task_p = gen.dirichlet(P * conc, size=(n_sims, len(m)))
    return gen.multinomial(np.broadcast_to(m, (n_sims, len(m))), task_p)


def test_ends_from_sums_are_the_jackknife_interval_of_the_same_tables():
    gen = np.random.default_rng(0)
    m = gen.integers(1, 30, 1500)
    tables = _tasks(m, 0.2, 20, gen)
    lo, hi = kappa_ends(tables, 0.95)
    total, scatter = sums_of_tables(tables)
    lo2, hi2 = design.ends_from_sums(total, scatter, len(m), 0.95)
    # The linearised jackknife is off by O(m / n) of the SE: 2e-5 here, widths ~0.03.
    assert np.abs(lo - lo2).max() < 1e-4 and np.abs(hi - hi2).max() < 1e-4
    assert np.abs(lo - lo2).max() > 0  # two computations, not one


@pytest.mark.slow  # simulation study
def test_drawn_sums_have_the_task_by_task_mean_and_scatter():
    gen = np.random.default_rng(1)
    m = gen.integers(1, 30, 300)
    total, scatter = sums_of_tables(_tasks(m, 0.3, 4000, gen))
    t2, s2 = design.simulated_table_sums(m, P, 0.3, 4000, gen)
    for a, b in ((total, t2), (scatter, s2)):
        se = np.sqrt((a.var(axis=0) + b.var(axis=0)) / 4000) + 1e-9
        assert np.abs((a.mean(axis=0) - b.mean(axis=0)) / se).max() < 4.5
    # The spread of T: the Dirichlet-multinomial's covariance, summed over the tasks.
    exact = (m * (1.0 + (m - 1.0) * 0.3)).sum() * (np.diag(P) - np.outer(P, P))
    sd = np.sqrt(np.diag(exact))
    se = np.sqrt((np.outer(sd, sd) ** 2 + exact**2) / 4000)
    for t in (total, t2):
        assert np.abs((np.cov(t.T) - exact) / se).max() < 4.5


def _frame(m, rho, seed):
    """Two judges' verdicts: each task's 9-cell table Dirichlet-multinomial."""
    gen = np.random.default_rng(seed)
    tables = _tasks(m, rho, 1, gen)[0]
    cell = np.repeat(np.tile(np.arange(9), len(m)), tables.ravel())
    task = np.repeat(np.repeat(np.arange(len(m)), 9), tables.ravel())
    out = np.array(["win", "tie", "loss"])
    rep = np.arange(len(cell)) - np.searchsorted(task, task)
    common = {"rubric": "r", "task_id": task, "replicate": rep, "status": "ok"}
    return pd.concat(
        [
            pd.DataFrame(common | {"judge": "A", "outcome": out[cell // 3]}),
            pd.DataFrame(common | {"judge": "B", "outcome": out[cell % 3]}),
        ],
        ignore_index=True,
    )


@pytest.mark.slow  # simulation study
def test_sums_path_coverage_agrees_with_the_task_by_task_one(monkeypatch):
    gen = np.random.default_rng(2)
    m = gen.integers(2, 30, 1000)
    f = _frame(m, 0.1, 3)
    assert design.use_sums(m, P, 0.1)
    sums = design_coverage(f, statistic="kappa", n_resamples=1500, rng=4).iloc[0]
    monkeypatch.setattr(design, "CLT_TASKS", 10**9)
    tasks = design_coverage(f, statistic="kappa", n_resamples=1500, rng=4).iloc[0]
    assert (sums["icc"], sums["truth"]) == (tasks["icc"], tasks["truth"])
    # Two independent estimates of one coverage: within 3 combined Monte-Carlo SEs.
    se = np.sqrt(2 * 0.95 * 0.05 / 1500)
    assert abs(sums["coverage"] - tasks["coverage"]) < 3 * se, (sums, tasks)


def test_small_or_rare_cell_designs_keep_the_task_by_task_draw(monkeypatch):
    calls = []
    monkeypatch.setattr(design, "simulated_table_sums", lambda *a: calls.append(a) or 0.5)
    m = np.full(999, 20)
    assert not design.use_sums(m, P, 0.0)  # too few tasks
    m = np.full(2000, 5)
    rare = np.r_[P[:8] * (1 - 1e-4) / P[:8].sum(), 1e-4]
    assert not design.use_sums(m, rare, 0.0)  # 1 expected count in a cell
    assert design.use_sums(m, P, 0.0)
    design_coverage(_frame(np.full(50, 4), 0.1, 5), statistic="kappa", n_resamples=20)
    assert not calls
