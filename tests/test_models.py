"""The ordinal GEE check across judges: simulated data with a known effect, statsmodels, sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special
from scipy import stats as sps

import evalstats
from evalstats.errors import DataError
from evalstats.stats.models import AVERAGE, OrdinalCheckResult, ordinal_check

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
CUTS = (-1.0, 0.3)  # latent thresholds loss|tie and tie|win
BETA = 0.5  # judge "b" shifts the latent toward WITH


def _simulate(rng, n_tasks=300, n_reps=4, rho=0.6, beta=BETA):
    """Marginally exact cumulative logit with within-task correlation.

    Each verdict's logistic error is, with probability ``rho``, its task's shared draw and
    otherwise its own, so every margin is exactly logistic: logit P(outcome > k) = x beta - c_k.
    """
    judges = np.array(["a", "b"])
    shape = (n_tasks, n_reps, 2)
    shared = rng.logistic(size=(n_tasks, 1, 1))
    own = rng.logistic(size=shape)
    eps = np.where(rng.random(shape) < rho, shared, own)
    eta = beta * (np.arange(2) == 1)[None, None, :] + eps
    code = (eta >= CUTS[0]).astype(int) + (eta >= CUTS[1]).astype(int)
    t, r, j = np.indices(shape)
    return pd.DataFrame(
        {
            "task_id": [f"t{i:03d}" for i in t.ravel()],
            "replicate": r.ravel() + 1,
            "judge": judges[j.ravel()],
            "rubric": "with-without",
            "status": "ok",
            "outcome": np.array(["loss", "tie", "win"])[code.ravel()],
        }
    )


def _true_probs(shift):
    s1, s2 = special.expit(shift - CUTS[0]), special.expit(shift - CUTS[1])
    return {"p_loss": 1 - s1, "p_tie": s1 - s2, "p_win": s2, "net_win": s2 - (1 - s1)}


def test_recovers_a_known_judge_effect_and_cut_points():
    res = ordinal_check(_simulate(np.random.default_rng(0)))
    assert isinstance(res, OrdinalCheckResult) and res.converged
    coef = res.coefficients.set_index("term")
    truth = {
        "logit P(outcome > loss)": -CUTS[0],
        "logit P(outcome > tie)": -CUTS[1],
        "judge[b]": BETA,
    }
    for term, value in truth.items():
        row = coef.loc[term]
        assert abs(row["estimate"] - value) < 3 * row["se"], term
    assert coef.loc["judge[b]", "p"] < 1e-3  # a real effect, 2,400 verdicts in 300 tasks
    assert res.reference_judge == "a" and res.n == 2400 and res.n_tasks == 300
    probs = res.probabilities.set_index(["judge", "quantity"])
    for judge, shift in (("a", 0.0), ("b", BETA)):
        for quantity, value in _true_probs(shift).items():
            row = probs.loc[(judge, quantity)]
            assert abs(row["estimate"] - value) < 3 * row["se"], (judge, quantity)


@pytest.mark.slow  # simulation study
def test_no_judge_effect_is_not_found_where_there_is_none():
    rng = np.random.default_rng(1)
    pvals = [
        ordinal_check(_simulate(rng, n_tasks=40, n_reps=3, beta=0.0))
        .coefficients.set_index("term")
        .loc["judge[b]", "p"]
        for _ in range(40)
    ]
    # 40 null fits: a valid test rejects about 2 at 5 %; the binomial 99.9 % bound is 7
    assert sum(p < 0.05 for p in pvals) <= 7


def test_clustering_widens_the_judge_effect_and_probability_ses():
    frame = _simulate(np.random.default_rng(2), n_tasks=80, rho=0.8)
    clustered = ordinal_check(frame)
    naive = ordinal_check(frame.assign(row_id=np.arange(len(frame))), cluster="row_id")
    c = clustered.coefficients.set_index("term")["se"]
    n = naive.coefficients.set_index("term")["se"]
    assert c["logit P(outcome > tie)"] > 1.5 * n["logit P(outcome > tie)"]
    pc = clustered.probabilities.set_index(["judge", "quantity"])["se"]
    pn = naive.probabilities.set_index(["judge", "quantity"])["se"]
    assert pc[("a", "net_win")] > 1.5 * pn[("a", "net_win")]


def test_coefficients_are_statsmodels_ordinal_gee_with_t_quantiles():
    from statsmodels.genmod import cov_struct
    from statsmodels.genmod.generalized_estimating_equations import OrdinalGEE

    frame = _simulate(np.random.default_rng(3), n_tasks=30, n_reps=3)
    res = ordinal_check(frame, confidence=0.9)
    y = frame["outcome"].map({"loss": 0, "tie": 1, "win": 2}).to_numpy(float)
    x = (frame["judge"] == "b").to_numpy(float)[:, None]
    groups = pd.factorize(frame["task_id"], sort=True)[0]
    fit = OrdinalGEE(y, x, groups, cov_struct=cov_struct.Exchangeable()).fit(
        cov_type="bias_reduced"
    )
    coef = res.coefficients
    np.testing.assert_allclose(coef["estimate"], fit.params, rtol=1e-10)
    np.testing.assert_allclose(coef["se"], fit.bse, rtol=1e-10)
    q = sps.t.ppf(0.95, 29)
    np.testing.assert_allclose(coef["ci_high"], fit.params + q * fit.bse, rtol=1e-10)
    np.testing.assert_allclose(
        coef["p"], 2 * sps.t.sf(np.abs(fit.params / fit.bse), 29), rtol=1e-10
    )
    assert res.df == 29 and "Mancl-DeRouen" in coef["method"].iloc[0]


def test_delta_method_ses_match_a_numerical_jacobian():
    res = ordinal_check(_simulate(np.random.default_rng(4), n_tasks=50))
    theta = res.coefficients["estimate"].to_numpy()
    cov = res.covariance.to_numpy()

    def implied(th):
        a1, a2, b = th
        out = []
        for shift in (0.0, b):
            s1, s2 = special.expit(a1 + shift), special.expit(a2 + shift)
            out += [s2, s1 - s2, 1 - s1, s2 - (1 - s1)]
        per = np.array(out).reshape(2, 4)
        return np.concatenate([per.ravel(), per.mean(axis=0)])

    eps = 1e-6
    jac = np.column_stack(
        [(implied(theta + eps * e) - implied(theta - eps * e)) / (2 * eps) for e in np.eye(3)]
    )
    se = np.sqrt(np.diag(jac @ cov @ jac.T))
    probs = res.probabilities
    assert probs["judge"].tolist() == np.repeat(["a", "b", AVERAGE], 4).tolist()
    np.testing.assert_allclose(probs["estimate"], implied(theta), rtol=1e-12)
    np.testing.assert_allclose(probs["se"], se, rtol=1e-6)


def test_other_working_correlations_and_the_plain_sandwich():
    frame = _simulate(np.random.default_rng(5), n_tasks=40)
    ex = ordinal_check(frame)
    for cs in ("global_odds_ratio", "independence"):
        other = ordinal_check(frame, cov_struct=cs)
        assert cs.replace("_", " ") in other.method
        # same estimand: the judge effect agrees to well within its SE
        d = abs(other.coefficients["estimate"] - ex.coefficients["estimate"]).max()
        assert d < 0.5 * ex.coefficients["se"].min()
    plain = ordinal_check(frame, cov_type="robust")
    assert (plain.coefficients["se"] < ex.coefficients["se"]).all()  # bias reduction inflates


def test_one_judge_fits_the_cut_points_only_and_absent_outcomes_are_zero():
    frame = _simulate(np.random.default_rng(6), n_tasks=40)
    one = ordinal_check(frame, judges=["b"])
    assert one.coefficients["term"].tolist() == [
        "logit P(outcome > loss)",
        "logit P(outcome > tie)",
    ]
    assert one.probabilities["judge"].unique().tolist() == ["b", AVERAGE]
    no_ties = frame.loc[frame["outcome"] != "tie"]
    res = ordinal_check(no_ties)
    assert res.coefficients["term"].tolist()[0] == "logit P(outcome > loss)"
    assert len(res.coefficients) == 2
    tie = res.probabilities.query("quantity == 'p_tie'")
    assert (tie["estimate"] == 0).all() and (tie["se"] == 0).all()


def test_non_ok_rows_are_counted_not_fitted_and_bad_input_raises():
    frame = _simulate(np.random.default_rng(7), n_tasks=20)
    frame.loc[:4, "status"] = "invalid"
    frame.loc[:4, "outcome"] = None
    res = ordinal_check(frame)
    assert res.n_excluded == 5 and res.n == len(frame) - 5
    with pytest.raises(DataError, match="at least two outcomes"):
        ordinal_check(frame.assign(outcome="win"))
    with pytest.raises(ValueError, match="no rows for judge"):
        ordinal_check(frame, judges=["zzz"])
    with pytest.raises(ValueError, match="cov_struct"):
        ordinal_check(frame, cov_struct="ar1")
    with pytest.raises(DataError, match="lacks column"):
        ordinal_check(frame.drop(columns="outcome"))
    with pytest.raises(DataError, match="two"):
        ordinal_check(frame.loc[frame["task_id"] == "t000"])


@pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is not in this checkout")
@pytest.mark.parametrize("rubric", ["blind-pair", "with-without"])
def test_on_the_sample_beside_the_design_based_win_rates(rubric):
    from evalstats.frames import load_frame
    from evalstats.stats.rates import win_rates

    frame = load_frame(SAMPLE)
    res = ordinal_check(frame, rubric=rubric)
    assert res.converged and res.n_tasks == 15
    design = win_rates(frame.loc[frame["rubric"] == rubric]).wide().set_index("judge")
    wide = res.probabilities.pivot(index="judge", columns="quantity", values="estimate")
    assert res.probabilities["judge"].iloc[-1] == AVERAGE
    for judge in design.index.astype(str):
        # a proportional-odds model of two judges is close to, not equal to, the raw rates
        for q, col in (("p_win", "win_rate"), ("p_loss", "loss_rate"), ("net_win", "net_win")):
            assert wide.loc[judge, q] == pytest.approx(design.loc[judge, col], abs=0.03)
    probs = res.probabilities
    assert (probs["ci_low"] <= probs["estimate"]).all()
    assert (probs["estimate"] <= probs["ci_high"]).all()


def test_ordinal_check_fits_one_pair_of_arms(tmp_path):
    evalstats.simulate(
        tmp_path, arms=("none", "v1", "v2"), reference="none", n_tasks=8, n_replicates=2
    )
    frame = evalstats.load_frame(tmp_path)
    with pytest.raises(evalstats.DataError, match="pairs of arms"):
        ordinal_check(frame)
    pair = frame.loc[(frame["arm_a"] == "v2") & (frame["arm_b"] == "none")]
    res = ordinal_check(frame, arms=("v2", "none"))
    alone = ordinal_check(pair.drop(columns=["arm_a", "arm_b"]))
    pd.testing.assert_frame_equal(res.coefficients, alone.coefficients)
