"""Simulator: known truth, reproducibility, realistic raw outputs."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import evalstats
import evalstats.rubrics
from evalstats import simulation
from evalstats.errors import ParameterError
from evalstats.simulation import DEFAULT_DIMENSION_NOISE
from evalstats.stats.models import draw_outcomes
from evalstats.stats.rates import dimension_means

BLIND_DIMENSIONS = evalstats.rubrics.get("blind-pair").dimensions


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


@pytest.mark.slow  # simulation study
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
    from evalstats.stats import models as outcome_model

    assert outcome_model.draw_outcomes is draw_outcomes
    assert not hasattr(simulation, "draw_outcomes")  # defined once, not re-exported
    for path in Path(evalstats.stats.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any({"simulate", "simulation"} & set(n.split(".")) for n in names), (
                path.name,
                names,
            )


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(n_tasks=0), "n_tasks"),
        (dict(n_replicates=1.5), "n_replicates"),
        (dict(malformed_rate=1.2), "malformed_rate"),
        (dict(judges=("nope",)), "provider:model"),
        (dict(seed="abc"), "seed"),
    ],
)
def test_simulate_rejects_bad_design(tmp_path, bad, match):
    with pytest.raises(ParameterError, match=match):
        evalstats.simulate(tmp_path, **bad)
    assert not list(tmp_path.iterdir())  # nothing written


# --------------------------------------------------------------------------- blind-rubric dimensions

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
# `make sample`: the committed sample's recipe.
SAMPLE_KW = dict(seed=20260518, orders="both", position_bias=0.2, judge_noise=0.25)
_DIM_SCORE = re.compile(
    r'("(?:correctness|specificity|completeness|hallucination_safety)":\s*"?)[1-5]'
)
# sha256 of the sample's judgments with the dimension scores masked, taken from the sample as it
# was generated BEFORE the dimensions had effects of their own (truth.json judgments sha256
# 93f17523…): verdicts, fences, tokens, spend, timestamps and ids must never move.
SAMPLE_MASKED_JUDGMENTS_SHA256 = "0f55ee57deaa3ca88bb5f79ccea4713f9e5fb1749a4bea4c03d8e828a39cebe2"
# and the tasks/runs files of that sample, byte for byte
SAMPLE_FILES_SHA256 = {
    "tasks": "90f9469396753ae940122a509363e46815e324606db25b0924f068bfa90444e1",
    "runs": "e62778c431f8f1585a4531bb0337770f671e3f301d7ac7ae73ff594b15f293db",
}


def _masked_judgments(path: Path) -> list[dict]:
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    for r in recs:
        if r["raw"] is not None:
            r["raw"] = _DIM_SCORE.sub(r"\1#", r["raw"])
    return recs


def _masked_sha256(path: Path) -> str:
    text = "\n".join(json.dumps(r, sort_keys=True) for r in _masked_judgments(path))
    return hashlib.sha256(text.encode()).hexdigest()


def _frame(out_dir: Path):
    ds = evalstats.load_dir(out_dir)
    return evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)


def _differences(frame, confidence=0.95):
    res = dimension_means(frame.loc[frame["rubric"] == "blind-pair"], confidence=confidence)
    return res.loc[res["arm"] == "difference"].set_index("dim")


@pytest.fixture(scope="module")
def sample_dir() -> Path:
    if not (SAMPLE / "truth.json").exists():
        pytest.skip(f"{SAMPLE} is absent")
    return SAMPLE


def test_sample_dimension_differences_are_distinct_and_track_truth(sample_dir):
    truth = json.loads((sample_dir / "truth.json").read_text())["dimensions"]
    diff = _differences(_frame(sample_dir))
    assert list(diff.index) == list(BLIND_DIMENSIONS) == list(truth)
    means = diff["mean"].to_numpy()
    # four different numbers, not one number four times (issue 14)
    assert np.min(np.abs(np.subtract.outer(means, means))[np.triu_indices(4, 1)]) > 0.05
    for dim, row in diff.iterrows():
        assert row["ci_low"] < truth[dim]["true_difference"] < row["ci_high"], (dim, row)
    # the effects' order survives in the sample: correctness helped most, safety barely
    assert means[0] == means.max() and abs(means[3]) == np.abs(means).min()


def test_sample_readme_quotes_the_sample(sample_dir):
    truth = json.loads((sample_dir / "truth.json").read_text())["dimensions"]
    diff = _differences(_frame(sample_dir))
    text = (sample_dir / "README.md").read_text().replace("−", "-")
    for dim, row in diff.iterrows():
        line = next(ln for ln in text.splitlines() if ln.strip().startswith(f"| {dim} "))
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        t = truth[dim]
        assert [float(c) for c in cells[1:5]] == pytest.approx(
            [t["effect"], t["noise"], t["verdict_loading"], round(t["true_difference"], 3)]
        )
        assert cells[5] == f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


def test_make_sample_reproduces_the_committed_sample(sample_dir, tmp_path):
    sim = evalstats.simulate(tmp_path, **SAMPLE_KW)
    for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl", "truth.json"):
        assert (sim.out_dir / name).read_bytes() == (sample_dir / name).read_bytes(), name


def test_sample_outside_the_dimension_scores_is_what_it_was(sample_dir):
    truth = json.loads((sample_dir / "truth.json").read_text())
    for name, sha in SAMPLE_FILES_SHA256.items():
        data = (sample_dir / f"{name}.jsonl").read_bytes()
        assert truth["files_sha256"][name] == hashlib.sha256(data).hexdigest()
        # the runs' own outcome (issue 33) was added after every other value: mask it
        assert hashlib.sha256(re.sub(rb', "passed": (true|false)}', b"}", data)).hexdigest() == sha
    assert _masked_sha256(sample_dir / "judgments.jsonl") == SAMPLE_MASKED_JUDGMENTS_SHA256


def test_dimension_parameters_change_only_the_dimension_scores(tmp_path):
    kw = dict(n_tasks=6, n_replicates=4, orders="random", position_bias=0.3, seed=9)
    a = evalstats.simulate(tmp_path / "a", **kw)
    flat = {d: 0.3 for d in BLIND_DIMENSIONS}
    b = evalstats.simulate(
        tmp_path / "b", dimension_effects=flat, dimension_noise={"correctness": 2.0}, **kw
    )
    for name in ("tasks.jsonl", "runs.jsonl"):
        assert (a.out_dir / name).read_bytes() == (b.out_dir / name).read_bytes()
    assert _masked_judgments(a.judgments) == _masked_judgments(b.judgments)
    fa, fb = _frame(a.out_dir), _frame(b.out_dir)
    dims = [f"{arm}_{d}" for arm in ("with", "without") for d in BLIND_DIMENSIONS]
    rest = [c for c in fa.columns if c not in dims and c != "raw"]
    pd.testing.assert_frame_equal(fa[rest], fb[rest])
    blind = (fa["rubric"] == "blind-pair") & (fa["status"] == "ok")
    assert blind.sum() > 20
    assert not fa.loc[blind, dims].equals(fb.loc[blind, dims])
    tb = json.loads(b.truth.read_text())
    assert tb["params"]["dimension_effects"] == flat
    assert tb["params"]["dimension_noise"]["correctness"] == 2.0
    assert tb["params"]["dimension_noise"]["specificity"] == DEFAULT_DIMENSION_NOISE["specificity"]


def test_true_dimension_differences_against_monte_carlo(tmp_path):
    # The exact expectation (normal CDF sums) against brute-force draws of the score model as
    # the module docstring states it.
    # The score model's constants, written out (pinned): a dimension's level and loading on
    # the latent quality, and the level's spread between tasks.
    _DIMENSION_LEVEL = {"correctness": 3.4, "specificity": 3.0, "completeness": 3.2,
                        "hallucination_safety": 3.7}  # fmt: skip
    _DIMENSION_LOADING = {"correctness": 0.9, "specificity": 0.6, "completeness": 0.5,
                          "hallucination_safety": 0.3}  # fmt: skip
    _LEVEL_SD = 0.6

    effects = {
        "correctness": 1.8,
        "specificity": 0.4,
        "completeness": 0.0,
        "hallucination_safety": -0.9,
    }
    noise = {
        "correctness": 0.3,
        "specificity": 1.5,
        "completeness": 0.8,
        "hallucination_safety": 0.6,
    }
    pb, judge_noise, icc = 0.6, 0.5, 0.3
    sim = evalstats.simulate(
        tmp_path,
        n_tasks=2,
        n_replicates=1,
        dimension_effects=effects,
        dimension_noise=noise,
        position_bias=pb,
        judge_noise=judge_noise,
        icc=icc,
    )
    truth = json.loads(sim.truth.read_text())["dimensions"]
    rng = np.random.default_rng(123)
    n = 400_000
    scale = np.sqrt(1.0 + icc / (1.0 - icc) + judge_noise**2)
    y = rng.normal(0.0, scale, n) + rng.choice([-pb, pb], n)  # impression + position bias
    for dim in BLIND_DIMENSIONS:
        level = _DIMENSION_LEVEL[dim] + _LEVEL_SD * rng.standard_normal(n)
        d = effects[dim] + _DIMENSION_LOADING[dim] * y / scale + noise[dim] * rng.standard_normal(n)
        w = np.clip(np.floor(level + d / 2 + 0.5), 1, 5)
        wo = np.clip(np.floor(level - d / 2 + 0.5), 1, 5)
        x = w - wo
        se = x.std() / np.sqrt(n)
        assert abs(x.mean() - truth[dim]["true_difference"]) < 4 * se, dim
        assert truth[dim]["effect"] == effects[dim] and truth[dim]["noise"] == noise[dim]
    # clipping pulls the large effect in: the 1–5 truth is not the latent effect
    assert truth["correctness"]["true_difference"] < 1.8 - 0.05


@pytest.mark.slow  # simulation study
def test_large_simulation_estimates_each_dimension_near_truth(tmp_path):
    sim = evalstats.simulate(
        tmp_path,
        n_tasks=60,
        n_replicates=6,
        orders="both",
        position_bias=0.2,
        seed=31,
        dimension_effects={"completeness": -0.4},
    )
    truth = json.loads(sim.truth.read_text())["dimensions"]
    diff = _differences(_frame(sim.out_dir), confidence=0.99)
    for dim, row in diff.iterrows():
        assert row["ci_low"] < truth[dim]["true_difference"] < row["ci_high"], (dim, row)
    assert diff.loc["completeness", "ci_high"] < 0 < diff.loc["correctness", "ci_low"]


def test_dimension_scores_lean_with_the_verdict_without_copying_it(sample_dir):
    f = _frame(sample_dir)
    ok = f.loc[(f["rubric"] == "blind-pair") & (f["status"] == "ok")]
    code = ok["outcome"].map({"loss": -1, "tie": 0, "win": 1}).astype(float).to_numpy()
    diffs = np.column_stack(
        [ok[f"with_{d}"].astype(float) - ok[f"without_{d}"].astype(float) for d in BLIND_DIMENSIONS]
    )
    rho = [stats.spearmanr(code, diffs[:, k]).statistic for k in range(4)]
    # every dimension follows the verdict, correctness most, none perfectly
    assert all(0.1 < r < 0.9 for r in rho) and rho[0] == max(rho)
    # and a judgment's four differences are not one number repeated
    assert (np.ptp(diffs, axis=1) > 0).mean() > 0.5


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(dimension_effects={"readability": 0.1}), "unknown dimension"),
        (
            dict(dimension_effects={"correctness": float("nan")}),
            r"dimension_effects\['correctness'\]",
        ),
        (dict(dimension_noise={"specificity": -0.1}), r"dimension_noise\['specificity'\]"),
        (dict(dimension_effects=[0.1, 0.2]), "mapping"),
    ],
)
def test_simulate_rejects_bad_dimension_parameters(tmp_path, bad, match):
    with pytest.raises(ValueError, match=match):
        evalstats.simulate(tmp_path, **bad)
    assert not list(tmp_path.iterdir())
