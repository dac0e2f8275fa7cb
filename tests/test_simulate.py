"""Simulator: known truth, reproducibility, realistic raw outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import evalstats
from evalstats.simulate import draw_outcomes


def test_marginals_equal_truth_for_every_judge():
    y = draw_outcomes(
        20,
        6,
        p_win=0.45,
        p_tie=0.35,
        p_loss=0.20,
        icc=0.3,
        n_judges=2,
        judge_noise=0.7,
        n_evals=2000,
        rng=7,
    )
    n = y[..., 0].size
    for j in range(2):
        for code, p in ((0, 0.20), (1, 0.35), (2, 0.45)):
            k = int((y[..., j] == code).sum())
            # binomial two-sided test at 1e-4 would only fail on a real bias
            assert stats.binomtest(k, n, p).pvalue > 1e-4 or abs(k / n - p) < 0.004


def test_icc_is_on_the_latent_scale():
    # With icc=0 the replicates of a task are independent; with high icc they agree more often.
    lo = draw_outcomes(200, 2, p_win=0.4, p_tie=0.2, p_loss=0.4, icc=0.0, n_evals=50, rng=1)
    hi = draw_outcomes(200, 2, p_win=0.4, p_tie=0.2, p_loss=0.4, icc=0.8, n_evals=50, rng=1)
    same = lambda y: (y[:, :, 0, 0] == y[:, :, 1, 0]).mean()  # noqa: E731
    expected_indep = 0.4**2 + 0.2**2 + 0.4**2
    assert abs(same(lo) - expected_indep) < 0.02
    assert same(hi) > expected_indep + 0.15


def test_judge_noise_lowers_agreement():
    kw = dict(p_win=0.45, p_tie=0.35, p_loss=0.2, icc=0.3, n_judges=2, n_evals=200, rng=3)
    quiet = draw_outcomes(15, 6, judge_noise=0.1, **kw)
    noisy = draw_outcomes(15, 6, judge_noise=1.5, **kw)
    agree = lambda y: (y[..., 0] == y[..., 1]).mean()  # noqa: E731
    assert agree(quiet) > agree(noisy) + 0.2


@pytest.mark.parametrize(
    "bad", [dict(p_win=0.5, p_tie=0.5, p_loss=0.5), dict(icc=1.0), dict(judge_noise=-1)]
)
def test_rejects_bad_parameters(bad):
    kw = dict(p_win=0.4, p_tie=0.4, p_loss=0.2, icc=0.3) | bad
    with pytest.raises(ValueError):
        draw_outcomes(3, 2, **kw)


def test_simulate_writes_reproducible_files(tmp_path):
    a = evalstats.simulate(tmp_path / "a", n_tasks=4, n_replicates=3, seed=5)
    b = evalstats.simulate(tmp_path / "b", n_tasks=4, n_replicates=3, seed=5)
    for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl"):
        assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes()
    truth = json.loads(a.truth.read_text())
    assert truth["simulated"] is True and truth["params"]["seed"] == 5
    assert truth["true_net_win"] == pytest.approx(0.25)
    c = evalstats.simulate(tmp_path / "c", n_tasks=4, n_replicates=3, seed=6)
    assert (c.out_dir / "judgments.jsonl").read_bytes() != (
        a.out_dir / "judgments.jsonl"
    ).read_bytes()


def test_simulated_data_loads_and_has_every_status(tmp_path):
    sim = evalstats.simulate(
        tmp_path,
        n_tasks=15,
        n_replicates=6,
        over_budget_rate=0.1,
        malformed_rate=0.1,
        error_rate=0.05,
        orders="both",
        seed=11,
    )
    ds = evalstats.load_dir(sim.out_dir)
    f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    counts = f["status"].value_counts()
    assert all(counts[s] > 0 for s in ("ok", "no_answer", "invalid", "error"))
    # over-budget pairs got no judge calls, yet appear as no_answer for each judge x rubric
    assert ds.runs["over_budget"].any()
    n_over = int(ds.runs.groupby(["task_id", "replicate"])["over_budget"].any().sum())
    assert (f["status"] == "no_answer").sum() == n_over * 2 * 2
    # both orders of the blind rubric for every judged pair
    blind = f.loc[(f.rubric == "blind-pair") & (f.status != "no_answer")]
    assert set(blind["order"].astype(str)) == {"with_first", "without_first"}
    # raw outputs look like real model output: some fenced, some with a preamble
    raws = ds.judgments["raw"].dropna()
    assert raws.str.startswith("```json").any() and raws.str.startswith("Here is").any()
    assert raws.str.startswith("{").any()


def test_simulated_rates_track_truth(tmp_path):
    sim = evalstats.simulate(
        tmp_path,
        n_tasks=40,
        n_replicates=6,
        rubrics=("with-without",),
        malformed_rate=0.0,
        error_rate=0.0,
        over_budget_rate=0.0,
        icc=0.0,
        seed=2,
    )
    ds = evalstats.load_dir(sim.out_dir)
    f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    share = f["outcome"].value_counts(normalize=True)
    np.testing.assert_allclose(
        [share["win"], share["tie"], share["loss"]], [0.45, 0.35, 0.20], atol=0.06
    )


def test_outcome_model_lives_in_stats_and_stats_never_imports_simulate():
    import ast
    from pathlib import Path

    import evalstats.stats
    from evalstats.stats import outcome_model

    assert evalstats.draw_outcomes is outcome_model.draw_outcomes is draw_outcomes
    for path in Path(evalstats.stats.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any("simulate" in n.split(".") for n in names), (path.name, names)


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(n_tasks=0), "n_tasks"),
        (dict(n_replicates=1.5), "n_replicates"),
        (dict(malformed_rate=1.2), "malformed_rate"),
    ],
)
def test_simulate_rejects_bad_design(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        evalstats.simulate(tmp_path, **bad)
    assert not list(tmp_path.iterdir())  # nothing written
