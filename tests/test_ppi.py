"""ppi_win_rates against a direct implementation of the PPI / PPI++ mean estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from evalstats.records import EvalstatsWarning
from evalstats.stats.ppi import ppi_win_rates as _long_ppi


def ppi_win_rates(*args, **kwargs) -> pd.DataFrame:
    """The long result pivoted to one row (``<rate>_ci_low``, ``<rate>_lambda``...), the
    view the checks below read."""
    return _long_ppi(*args, **kwargs).wide()


OUT = np.array(["loss", "tie", "win"])
NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")


def _simulate(seed: int, n_tasks: int = 40, reps: int = 5, n_lab: int = 60, bias: float = 0.1):
    rng = np.random.default_rng(seed)
    task = np.repeat([f"t{i:03d}" for i in range(n_tasks)], reps)
    rep = np.tile(np.arange(1, reps + 1), n_tasks)
    shift = rng.normal(0, 0.8, n_tasks)[np.repeat(np.arange(n_tasks), reps)]
    human = np.digitize(shift + rng.normal(0, 1, len(task)), [-0.5, 0.5])
    # The judge mostly agrees, and turns some non-wins into wins (biased toward WITH).
    judged = np.where(rng.random(len(task)) < 0.85, human, rng.integers(0, 3, len(task)))
    judged = np.where((judged != 2) & (rng.random(len(task)) < bias / 0.6), 2, judged)
    frame = pd.DataFrame(
        {
            "task_id": task,
            "replicate": rep,
            "judge": "j",
            "rubric": "with-without",
            "status": "ok",
            "outcome": OUT[judged],
        }
    )
    pick = rng.choice(len(task), size=n_lab, replace=False)
    labels = pd.DataFrame(
        {
            "task_id": task[pick],
            "replicate": rep[pick],
            "labeler": "ann",
            "outcome": OUT[human[pick]],
            "sample_seed": seed,
            "frame_sha256": "abc",
        }
    )
    return frame, labels, human, judged, pick


def _values(codes: np.ndarray) -> np.ndarray:
    """Per-pair (win, tie, loss, net, score) from outcome codes 0/1/2, written out directly."""
    win = (codes == 2).astype(float)
    tie = (codes == 1).astype(float)
    loss = (codes == 0).astype(float)
    return np.column_stack([win, tie, loss, win - loss, win + tie / 2])


def _direct_ppi(y: np.ndarray, f_lab: np.ndarray, f_all: np.ndarray, lam=None) -> np.ndarray:
    """theta = lam * mean(f over all) + mean(y - lam * f over labelled), one lam per column."""
    out = []
    for j in range(y.shape[1]):
        yj, flj, fuj = y[:, j], f_lab[:, j], f_all[:, j]
        if lam is None:
            cov = np.mean(yj * flj) - yj.mean() * flj.mean()
            var = np.var(fuj)
            lj = float(np.clip(cov / var, 0, 1)) if var > 1e-12 else 0.0
        else:
            lj = lam
        out.append(lj * fuj.mean() + np.mean(yj - lj * flj))
    return np.array(out)


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_estimate_equals_direct_ppi(lam) -> None:
    frame, labels, human, judged, pick = _simulate(seed=11)
    res = ppi_win_rates(frame, labels, judge="j", lam=lam, n_resamples=200, rng=0).iloc[0]
    expected = _direct_ppi(_values(human[pick]), _values(judged[pick]), _values(judged), lam)
    got = np.array([res[n] for n in NAMES])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    labels_only = _values(human[pick]).mean(axis=0)
    np.testing.assert_allclose([res[f"{n}_labels_only"] for n in NAMES], labels_only, atol=1e-12)
    judge_only = _values(judged).mean(axis=0)
    np.testing.assert_allclose([res[f"{n}_judge_only"] for n in NAMES], judge_only, atol=1e-12)
    if lam == 0.0:
        np.testing.assert_allclose(got, labels_only, atol=1e-12)


def test_bootstrap_se_matches_the_ppi_clt_formula_for_iid_pairs() -> None:
    # One pair per task: the cluster bootstrap is an ordinary bootstrap and its SE must match
    # the PPI central-limit SE sqrt(var(f)/N + var(y - f)/n) (lam = 1), N >> n.
    frame, labels, human, judged, pick = _simulate(seed=4, n_tasks=3000, reps=1, n_lab=300)
    res = ppi_win_rates(frame, labels, judge="j", lam=1.0, n_resamples=2000, rng=5).iloc[0]
    y, fl, fu = _values(human[pick]), _values(judged[pick]), _values(judged)
    clt = np.sqrt(fu.var(axis=0, ddof=1) / len(fu) + (y - fl).var(axis=0, ddof=1) / len(y))
    got = np.array([res[f"{n}_se"] for n in NAMES])
    np.testing.assert_allclose(got, clt, rtol=0.12)
    for n in NAMES:
        assert res[f"{n}_ci_low"] < res[n] < res[f"{n}_ci_high"]


def test_tuned_ppi_gains_over_labels_and_corrects_the_bias() -> None:
    frame, labels, human, judged, pick = _simulate(seed=8, n_tasks=60, n_lab=120, bias=0.15)
    res = ppi_win_rates(frame, labels, judge="j", n_resamples=2000, rng=1).iloc[0]
    truth = (human == 2).mean()
    assert res["win_rate_judge_only"] - truth > 0.08  # the judge alone is biased
    assert res["win_rate_ci_low"] < truth < res["win_rate_ci_high"]
    assert res["win_rate_ess_gain"] > 1.0
    assert res["n_labelled"] == 120  # times ess_gain: the effective number of labels
    assert 0 < res["win_rate_lambda"] <= 1
    assert res["random_sample"]
    assert res["estimand"] == "human"
    # A judge that agrees with people more is worth more labels.
    frame, labels, *_ = _simulate(seed=8, n_tasks=60, n_lab=60, bias=0.0)
    good = ppi_win_rates(frame, labels, judge="j", n_resamples=2000, rng=1).iloc[0]
    assert good["win_rate_ess_gain"] > 1.5


def test_warnings_for_few_or_non_random_labels() -> None:
    frame, labels, *_ = _simulate(seed=2, n_lab=10)
    with pytest.warns(EvalstatsWarning, match="only 10 labelled pairs"):
        ppi_win_rates(frame, labels, judge="j", n_resamples=100, rng=0)
    frame, labels, *_ = _simulate(seed=2, n_lab=40)
    with pytest.warns(EvalstatsWarning, match="no sheet provenance"):
        res = ppi_win_rates(
            frame, labels.drop(columns=["sample_seed"]), judge="j", n_resamples=100, rng=0
        )
    assert not res["random_sample"].item()
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalstatsWarning)
        ppi_win_rates(frame, labels, judge="j", n_resamples=100, rng=0)
    with pytest.raises(ValueError, match="judge 'nobody'"):
        ppi_win_rates(frame, labels, judge="nobody")
    with pytest.raises(ValueError, match="lam"):
        ppi_win_rates(frame, labels, judge="j", lam=1.5)


def test_long_shape() -> None:
    frame, labels, *_ = _simulate(seed=8, n_tasks=60, n_lab=120, bias=0.15)
    res = _long_ppi(frame, labels, judge="j", n_resamples=200, rng=1)
    assert list(res.columns) == [
        "judge", "statistic", "estimate", "se", "ci_low", "ci_high", "p_value", "df", "n",
        "n_tasks", "method", "confidence", "lambda", "labels_only", "judge_only", "ess_gain",
    ]  # fmt: skip
    assert res["statistic"].tolist() == ["win_rate", "tie_rate", "loss_rate", "net_win", "score"]
    assert res.diagnostics["n_labelled"].item() == 120
    assert len(res.summary()) == 5


def _mid_p_upper(x: int, n: int, alpha: float) -> float:
    """Mid-p upper bound by root-finding on scipy's binomial: P(X < x) + P(X = x) / 2 = a/2."""
    from scipy import optimize, stats

    def f(p):
        return stats.binom.cdf(x - 1, n, p) + 0.5 * stats.binom.pmf(x, n, p) - alpha / 2

    return optimize.brentq(f, 1e-12, 1 - 1e-12, xtol=1e-14)


def _mid_p_lower(x: int, n: int, alpha: float) -> float:
    from scipy import optimize, stats

    if x == 0:
        return 0.0

    def f(p):
        return stats.binom.sf(x, n, p) + 0.5 * stats.binom.pmf(x, n, p) - alpha / 2

    return optimize.brentq(f, 1e-12, 1 - 1e-12, xtol=1e-14)


def test_an_outcome_without_labelled_examples_never_gets_a_zero_width_interval():
    """No labelled win among 20 labels: the PPI win rate is 0 with no bootstrap spread; the
    interval is joined with the labels-only mid-p one (scipy's binomial, by root-finding, as
    the oracle; 0 of n in closed form), the method and the note say so, and the minimum of
    labels per outcome is stated."""
    from evalstats.stats.ppi import LABELS_ONLY_BOUND, MIN_PER_OUTCOME

    assert LABELS_ONLY_BOUND == "mid_p"
    frame, labels, human, judged, pick = _simulate(11, n_lab=40)
    lab = labels.loc[labels["outcome"] != "win"].head(20)  # a sample with no labelled win
    with pytest.warns(EvalstatsWarning, match="labelled win"):
        res = _long_ppi(frame, lab, judge="j", rng=0, n_resamples=400)
    row = res.set_index("statistic")
    win = row.loc["win_rate"]
    # mid-p at 0 of n: (1 - p)^n / 2 = alpha / 2
    assert win["estimate"] == 0.0 and win["ci_low"] == 0.0
    assert win["ci_high"] == pytest.approx(1 - 0.05 ** (1 / 20), rel=1e-9)
    assert win["ci_high"] == pytest.approx(_mid_p_upper(0, 20, 0.05), rel=1e-7)
    assert win["ci_high"] > 0.1
    assert (
        win["method"]
        == f"cluster_wilson + labels-only mid_p (win: 0 of 20 labelled, minimum {MIN_PER_OUTCOME})"
    )
    # net win and score depend on the win rate: joined too, with the Bonferroni bound
    n_loss = int((lab["outcome"] == "loss").sum())
    w_hi = _mid_p_upper(0, 20, 0.025)
    l_lo, l_hi = _mid_p_lower(n_loss, 20, 0.025), _mid_p_upper(n_loss, 20, 0.025)
    net = row.loc["net_win"]
    assert net["ci_low"] <= -l_hi + 1e-7 and net["ci_high"] >= w_hi - l_lo - 1e-7
    assert "labels-only mid_p (win: 0 of 20" in row.loc["score", "method"]
    assert row.loc["tie_rate", "method"] == "cluster_wilson"  # ties and losses are common
    assert (row["ci_high"] > row["ci_low"]).all()
    d = res.diagnostics.iloc[0]
    assert d["n_labelled_win"] == 0 and d["n_labelled_tie"] + d["n_labelled_loss"] == 20
    assert d["min_labels_per_outcome"] == MIN_PER_OUTCOME
    assert d["labels_only_bound"] == "mid_p"
    assert "0 labelled win of 20 (fewer than 1 win per outcome" in d["ci_note"]
    assert "labels would hold" in d["ci_note"] and "labels-only mid_p" in d["ci_note"]
    # a rare outcome that was labelled once keeps the PPI interval (MIN_PER_OUTCOME = 1)
    one = pd.concat([lab.iloc[:19], labels.loc[labels["outcome"] == "win"].head(1)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        kept = _long_ppi(frame, one, judge="j", rng=0, n_resamples=400).set_index("statistic")
    assert kept.loc["win_rate", "method"] == "cluster_wilson"
    assert kept.loc["win_rate", "ci_high"] > kept.loc["win_rate", "ci_low"]


def test_common_outcomes_keep_the_plain_ppi_interval():
    frame, labels, *_ = _simulate(12, n_lab=60)
    res = _long_ppi(frame, labels, judge="j", rng=0, n_resamples=400)
    assert (res["method"] == "cluster_wilson").all()
    assert res.diagnostics["ci_note"].iloc[0] == ""


@pytest.mark.parametrize(("n_lab", "seed"), [(60, 12), (25, 3)])
def test_cluster_wilson_is_statsmodels_wilson_at_the_effective_size(n_lab, seed):
    """The default's ends: statsmodels' Wilson interval at n_eff = theta (1 - theta) / SE^2
    (SE: the bootstrap SD times the CR1 factor), with the t(C - 1) quantile as its z; net
    win through the score scale; and a plain grid inversion of the score test agrees."""
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    frame, labels, *_ = _simulate(seed, n_lab=n_lab)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)
        res = _long_ppi(frame, labels, judge="j", rng=0, n_resamples=400)
    assert res.diagnostics["ci_note"].iloc[0] == ""
    c = res["n_tasks"].iloc[0]
    crit = stats.t.ppf(0.975, c - 1)
    alpha = 2 * stats.norm.sf(crit)  # the level at which statsmodels' z is that t quantile
    for _, r in res.iterrows():
        net = r["statistic"] == "net_win"
        theta = (1 + r["estimate"]) / 2 if net else r["estimate"]
        se = r["se"] * np.sqrt(c / (c - 1)) / (2 if net else 1)
        n_eff = theta * (1 - theta) / se**2
        lo, hi = proportion_confint(theta * n_eff, n_eff, alpha=alpha, method="wilson")
        grid = np.linspace(0, 1, 200_001)
        kept = grid[np.abs(theta - grid) <= crit * np.sqrt(grid * (1 - grid) / n_eff)]
        assert kept.min() == pytest.approx(lo, abs=1e-5)
        assert kept.max() == pytest.approx(hi, abs=1e-5)
        if net:
            lo, hi = 2 * lo - 1, 2 * hi - 1
        assert r["ci_low"] == pytest.approx(lo, abs=1e-12)
        assert r["ci_high"] == pytest.approx(hi, abs=1e-12)
        assert r["ci_low"] < r["estimate"] < r["ci_high"]


def test_cluster_t_is_the_t_interval_on_the_cr1_bootstrap_se():
    from scipy import stats

    frame, labels, *_ = _simulate(12, n_lab=60)
    res = _long_ppi(frame, labels, judge="j", method="cluster_t", rng=0, n_resamples=400)
    c = res["n_tasks"].iloc[0]
    half = stats.t.ppf(0.975, c - 1) * res["se"] * np.sqrt(c / (c - 1))
    low = np.array([0, 0, 0, -1, 0])
    np.testing.assert_allclose(res["ci_low"], np.maximum(res["estimate"] - half, low), atol=1e-12)
    np.testing.assert_allclose(res["ci_high"], np.minimum(res["estimate"] + half, 1), atol=1e-12)
    assert (res["method"] == "cluster_t").all()
    # the same resamples: the estimate and SE do not depend on the interval's shape
    wil = _long_ppi(frame, labels, judge="j", rng=0, n_resamples=400)
    np.testing.assert_array_equal(wil["se"], res["se"])
    assert not np.allclose(wil["ci_low"], res["ci_low"])
