"""Costs with outlier runs (issue 23 item 4): the lognormal model check and its CR2 interval.

Oracles: scipy's Shapiro-Wilk on within-task residuals computed by a plain loop over the
(task, arm) cells, and a dense CR2 computation (hat blocks, inverse square roots by eigh) of
the ratio of totals' log-scale SE.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalstats.stats.cost import (
    GPQ_METHOD,
    LOGNORMAL_CHECK_ALPHA,
    _lognormal_check,  # private: the lognormal model check itself
    cost_ratios,
    total_ratio_draws,
)


def _costs(seed: int, n_tasks: int = 8, reps: int = 3, outliers: tuple = (0.0, 1.0)):
    """Tokens per pair: lognormal task sizes, a task-level saving, lognormal run noise; a
    share of runs of either arm multiplied by a factor (the outliers)."""
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(n_tasks), reps)
    size = rng.normal(0.0, 1.5, n_tasks)[task]
    without = 1000.0 * np.exp(size + rng.normal(0.0, 0.3, task.size))
    with_ = without * np.exp(rng.normal(-0.2, 0.2, n_tasks)[task] + rng.normal(0, 0.3, task.size))
    share, factor = outliers
    with_ *= np.where(rng.random(task.size) < share, factor, 1.0)
    without *= np.where(rng.random(task.size) < share, factor, 1.0)
    return task, np.round(with_), np.round(without)


def _frame(task, x, y) -> pd.DataFrame:
    reps = np.concatenate([np.arange(1, (task == t).sum() + 1) for t in np.unique(task)])
    return pd.DataFrame(
        {
            "task_id": [f"t{t}" for t in task],
            "replicate": reps,
            "status": "ok",
            "tokens_with": x,
            "tokens_without": y,
            "wall_with_s": x / 50.0,  # the tokens' spread: the same check's outcome
            "wall_without_s": y / 40.0,
        }
    )


def _loop_residuals(task, x, y) -> np.ndarray:
    """Within-(task, arm) residuals of the log costs, scaled by sqrt(r / (r - 1)), by a loop."""
    out = []
    for v in (x, y):
        for t in np.unique(task):
            cell = np.log(v[task == t])
            if cell.size >= 2:
                out.extend((cell - cell.mean()) * np.sqrt(cell.size / (cell.size - 1)))
    return np.array(out)


def test_check_is_shapiro_wilk_on_the_within_task_residuals():
    task, x, y = _costs(1, n_tasks=7, reps=3)
    keep = np.ones(task.size, bool)
    keep[[4, 5]] = False  # unequal runs per task: 3, 1 (no residual) and 3s
    task, x, y = task[keep], x[keep], y[keep]
    res = _lognormal_check(x, y, np.unique(task, return_inverse=True)[1])
    want = stats.shapiro(_loop_residuals(task, x, y))
    assert res.n == _loop_residuals(task, x, y).size == 2 * (task.size - 1)
    assert res.p_value == pytest.approx(want.pvalue, rel=1e-12)
    assert res.test.startswith("Shapiro-Wilk on within-task")


def test_check_without_replication_tests_the_task_log_ratios():
    task, x, y = _costs(2, n_tasks=9, reps=1)
    res = _lognormal_check(x, y, task)
    assert res.p_value == pytest.approx(stats.shapiro(np.log(x / y)).pvalue, rel=1e-12)
    assert res.test == "Shapiro-Wilk on task log ratios" and res.n == 9


def test_check_without_replication_above_5000_tasks_is_dagostino_pearson():
    task, x, y = _costs(5, n_tasks=6000, reps=1)
    res = _lognormal_check(x, y, task)
    assert res.p_value == pytest.approx(stats.normaltest(np.log(x / y)).pvalue, rel=1e-10)
    assert res.test == "D'Agostino-Pearson on task log ratios" and res.n == 6000


def test_check_fires_on_planted_outliers_and_not_on_clean_costs():
    clean = [_lognormal_check(x, y, t).rejected for t, x, y in (_costs(s) for s in range(40))]
    dirty = [
        _lognormal_check(x, y, t).rejected
        for t, x, y in (_costs(s, outliers=(0.1, 10.0)) for s in range(40))
    ]
    # 40 seeds each: the clean share is about the level (0.03-0.05 measured), the planted
    # one about the power (0.9 at 8 x 3 with 10 % of runs x10 in benchmarks/coverage.py).
    assert sum(clean) <= 5 and sum(dirty) >= 28


def test_rejected_check_switches_the_default_to_cr2_with_a_note():
    task, x, y = _costs(3)
    x[[1, 11]] *= 10.0  # two runs of WITH ten times their task's others
    y[[20]] *= 10.0
    frame = _frame(task, x, y)
    check = _lognormal_check(x, y, task)
    assert check.p_value < LOGNORMAL_CHECK_ALPHA
    row = cost_ratios(frame).set_index("statistic").loc["tokens_total_ratio"]
    cr2 = cost_ratios(frame, interval="cr2").set_index("statistic").loc["tokens_total_ratio"]
    assert (
        row["method"].startswith("CR2 delta method") and "lognormal model rejected" in row["method"]
    )
    for col in ("estimate", "se", "df", "ci_low", "ci_high"):
        assert row[col] == pytest.approx(cr2[col], rel=1e-12)
    assert row["ci_note"].startswith("lognormal model rejected (Shapiro-Wilk")
    assert f"p = {check.p_value:.2g}" in row["ci_note"] and "geometric mean" in row["ci_note"]
    assert cr2["ci_note"] == ""  # CR2 asked for: no model to reject
    assert total_ratio_draws(frame) is None  # tests on this row use its CR2 interval too
    # The oracle: a dense CR2 SE of the log ratio of totals (WLS x ~ 0 + y, weights 1 / y).
    assert row["se"] == pytest.approx(_dense_cr2_log_se(task, x, y), rel=1e-10)
    q = stats.t.ppf(0.975, row["df"])
    est = np.log(x.sum() / y.sum())
    assert np.log(row["ci_low"]) == pytest.approx(est - q * row["se"], rel=1e-12)
    assert np.log(row["ci_high"]) == pytest.approx(est + q * row["se"], rel=1e-12)


def test_clean_costs_keep_the_pivotal_interval_and_no_note():
    task, x, y = _costs(0)
    assert not _lognormal_check(x, y, task).rejected
    out = cost_ratios(_frame(task, x, y)).set_index("statistic")
    assert out.loc["tokens_total_ratio", "method"] == GPQ_METHOD
    assert (out["ci_note"] == "").all()
    assert total_ratio_draws(_frame(task, x, y)) is not None


def test_cost_sentence_says_the_note():
    from evalstats.report import FORMAT, result_sentences

    task, x, y = _costs(3)
    x[[1, 11]] *= 10.0
    y[[20]] *= 10.0
    row = cost_ratios(_frame(task, x, y)).set_index("statistic").loc["tokens_total_ratio"]
    row = row.to_dict() | {"statistic": "tokens_total_ratio"}
    (text,) = result_sentences({"format": FORMAT, "tables": {"cost": [row]}})
    assert "Note: lognormal model rejected" in text and text.endswith("summary.")


def _dense_cr2_log_se(task, x, y) -> float:
    """CR2 SE of log(sum x / sum y) from the dense WLS algebra (Bell & McCaffrey 2002)."""
    xt, yt = x / np.sqrt(y), np.sqrt(y)  # the WLS fit as an OLS of xt on yt
    beta = (yt @ xt) / (yt @ yt)
    e = xt - beta * yt
    meat = 0.0
    for t in np.unique(task):
        c = task == t
        h = np.outer(yt[c], yt[c]) / (yt @ yt)
        w, v = np.linalg.eigh(np.eye(c.sum()) - h)
        a = v @ np.diag(w**-0.5) @ v.T
        meat += (yt[c] @ a @ e[c]) ** 2
    return float(np.sqrt(meat) / (yt @ yt) / beta)


def test_check_above_5000_residuals_is_dagostino_pearson():
    task, x, y = _costs(4, n_tasks=1500, reps=2)  # 6,000 residuals
    res = _lognormal_check(x, y, task)
    want = stats.normaltest(_loop_residuals(task, x, y))
    assert res.test.startswith("D'Agostino-Pearson") and res.n == 6000
    assert res.p_value == pytest.approx(want.pvalue, rel=1e-10)


def test_one_run_per_task_with_a_stray_task_fires_on_the_task_log_ratios():
    # Left-skewed log task sizes (one tiny task) with savings growing with size: the task log
    # ratios hold one far below the rest, which the lognormal model does not produce.
    sizes = np.array([3.0, 8.0, 8.3, 8.5, 8.6, 8.8, 9.0, 9.1])
    saving = -0.2 + 0.6 * (sizes - sizes.mean()) + np.array([0, 1, -1, 1, -1, 1, -1, 0]) * 0.05
    x, y = np.round(np.exp(sizes + saving)), np.round(np.exp(sizes))
    task = np.arange(8)
    check = _lognormal_check(x, y, task)
    assert check.test == "Shapiro-Wilk on task log ratios" and check.rejected
    row = cost_ratios(_frame(task, x, y)).set_index("statistic").loc["tokens_total_ratio"]
    assert "lognormal model rejected" in row["method"] and "task log ratios" in row["ci_note"]


def test_equivalence_on_a_rejected_total_inverts_its_cr2_interval():
    from evalstats.stats.equivalence import cost_equivalence

    task, x, y = _costs(3)
    x[[1, 11]] *= 10.0
    y[[20]] *= 10.0
    frame = _frame(task, x, y)
    ref = cost_ratios(frame, confidence=0.90).set_index("statistic").loc["tokens_total_ratio"]
    assert "lognormal model rejected" in ref["method"]
    for margin in (1.1, 2.0, 5.0):
        eq = cost_equivalence(frame, margin=margin, kind="equivalence")
        eq = eq.set_index("metric").loc["tokens_total_ratio"]
        assert eq["ci_low"] == pytest.approx(ref["ci_low"], rel=1e-12)
        assert eq["ci_high"] == pytest.approx(ref["ci_high"], rel=1e-12)
        assert eq["df"] == ref["df"]
        inside = 1 / margin < ref["ci_low"] and ref["ci_high"] < margin
        assert (eq["p_value"] < 0.05) == inside
