"""judge_agreement and consensus on verdict frames, against sklearn/statsmodels/krippendorff."""

from __future__ import annotations

import itertools
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from contract import TIDY_COLUMNS
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater

import evalstats
from evalstats.frames import load_frame
from evalstats.stats.agreement import consensus
from evalstats.stats.agreement import judge_agreement as _long_agreement


def judge_agreement(*args, **kwargs) -> pd.DataFrame:
    """The long result pivoted to one row per pair of judges (``kappa``, ``kappa_ci_low``,
    ``ac1_ci_low``..., the counts joined): the view the checks below read."""
    return _long_agreement(*args, **kwargs).wide()


def test_agreement_is_long_and_tidy(frame3):
    agr = _long_agreement(frame3, rubric="with-without", n_resamples=100, rng=0)
    assert list(agr.columns) == ["rubric", "arm_a", "arm_b", "judge_a", "judge_b", *TIDY_COLUMNS]
    first = agr.loc[agr["judge_b"] == agr["judge_b"].iloc[0]]
    assert first["statistic"].tolist() == [
        "observed_agreement", "disagreement_rate", "kappa", "kappa_iid", "kappa_linear", "ac1",
        "pabak",
    ]  # fmt: skip
    kappa = agr.loc[agr["statistic"].isin(["kappa", "kappa_iid"])]
    # one kappa, each row naming how its interval (or test) is made
    assert kappa.groupby(["judge_a", "judge_b"])["estimate"].nunique().eq(1).all()
    assert set(kappa["method"]) == {"atanh_jackknife_midp_blaker", "iid z test (no interval)"}
    coefs = agr.loc[
        ~agr["statistic"].isin(["observed_agreement", "disagreement_rate", "kappa_iid"])
    ]
    # every coefficient task-clustered, its interval inside [-1, 1]
    assert set(coefs["method"]) == {"atanh_jackknife_midp_blaker"}
    assert ((coefs["ci_low"] >= -1) & (coefs["ci_high"] <= 1)).all()
    assert (coefs["ci_low"] < coefs["ci_high"]).all()
    assert list(agr.diagnostics.columns[:4]) == ["rubric", "arm_a", "arm_b", "judge_a"]


SAMPLE_DIR = Path(__file__).resolve().parents[1] / "data" / "sample"

OUT = ["loss", "tie", "win"]


@pytest.fixture(scope="module")
def frame3(tmp_path_factory):
    d = tmp_path_factory.mktemp("sim3")
    sim = evalstats.simulate(
        d,
        n_tasks=12,
        n_replicates=4,
        judge_noise=0.8,
        judges=("anthropic:claude-x", "openai:gpt-y", "google:gemini-z"),
        malformed_rate=0.05,
        seed=3,
    )
    ds = evalstats.load_dir(sim.out_dir)
    return evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)


def _merged(frame, rubric, ja, jb):
    f = frame.loc[(frame.rubric == rubric) & (frame.status == "ok")]
    keys = ["task_id", "replicate", "order"]
    fa = f.loc[f.judge == ja, [*keys, "outcome"]].astype({"order": object})
    fb = f.loc[f.judge == jb, [*keys, "outcome"]].astype({"order": object})
    return fa.merge(fb, on=keys, suffixes=("_a", "_b"))


@pytest.mark.parametrize("rubric", ["with-without", "blind-pair"])
def test_pairwise_against_sklearn_and_crosstab(frame3, rubric):
    agr = judge_agreement(frame3, rubric=rubric, n_resamples=300, rng=1)
    pairs = agr.loc[agr.judge_a != "all judges"]
    assert len(pairs) == 3
    for row in pairs.itertuples():
        m = _merged(frame3, rubric, row.judge_a, row.judge_b)
        a, b = m["outcome_a"].astype(str), m["outcome_b"].astype(str)
        assert row.n == len(m)
        assert row.kappa == pytest.approx(cohen_kappa_score(a, b, labels=OUT), abs=1e-12)
        assert row.kappa_linear == pytest.approx(
            cohen_kappa_score(a, b, labels=OUT, weights="linear"), abs=1e-12
        )
        ct = pd.crosstab(a, b).reindex(index=OUT, columns=OUT, fill_value=0).to_numpy()
        assert np.array_equal(np.asarray(row.confusion), ct)
        sm = inter_rater.cohens_kappa(ct)
        assert row.kappa_iid_se == pytest.approx(sm.std_kappa, rel=1e-10)
        assert row.kappa_se0 == pytest.approx(sm.std_kappa0, rel=1e-10)
        assert row.disagreement_rate == pytest.approx((a != b).mean())
        assert row.trigger == ((a != b).mean() > 0.20)
        assert row.kappa_ci_low < row.kappa < row.kappa_ci_high


def test_every_coefficient_is_the_clustered_one_on_the_merged_units(frame3):
    """Each pair's kappa, linear kappa, AC1 and PABAK rows are clustered_agreement's on the
    units both judges rated (merged here from the frame, not through wide_by_judge)."""
    from evalstats.stats.agreement import clustered_agreement

    agr = judge_agreement(frame3, rubric="with-without")
    for row in agr.loc[agr.judge_a != "all judges"].itertuples():
        m = _merged(frame3, "with-without", row.judge_a, row.judge_b)
        a, b = m["outcome_a"].astype(str), m["outcome_b"].astype(str)
        ref = clustered_agreement(
            a, b, cluster=m["task_id"], coefficient=["cohen_kappa", "gwet_ac1", "pabak"],
            categories=OUT,
        ).set_index("statistic")  # fmt: skip
        lin = clustered_agreement(
            a, b, cluster=m["task_id"], weights="linear", categories=OUT
        ).iloc[0]
        for name, r in (
            ("kappa", ref.loc["cohen_kappa"]),
            ("ac1", ref.loc["gwet_ac1"]),
            ("pabak", ref.loc["brennan_prediger"]),
            ("kappa_linear", lin),
        ):
            for col, ref_col in zip(
                ("", "_se", "_ci_low", "_ci_high", "_p", "_df"),
                ("estimate", "se", "ci_low", "ci_high", "p_value", "df"),
                strict=True,
            ):
                want = r[ref_col]
                assert getattr(row, name + col) == pytest.approx(want, rel=1e-12, abs=1e-15)
            assert -1 <= getattr(row, name + "_ci_low") <= getattr(row, name + "_ci_high") <= 1


def test_perfect_agreement_is_not_a_zero_width_interval(frame3):
    """Two judges who never disagree: kappa 1, an interval below 1 (the exact bound), a note."""
    f = frame3.loc[frame3["rubric"] == "with-without"].copy()
    ja, jb = "anthropic:claude-x", "openai:gpt-y"
    f = f.loc[f["judge"].astype(str).isin([ja, jb])]
    src = f.loc[f["judge"] == ja].set_index(["task_id", "replicate"])
    mask = f["judge"] == jb
    keys = pd.MultiIndex.from_frame(f.loc[mask, ["task_id", "replicate"]])
    f.loc[mask, "status"] = src["status"].reindex(keys).to_numpy()
    f.loc[mask, "outcome"] = src["outcome"].reindex(keys).to_numpy()
    long = _long_agreement(f, rubric="with-without")
    for name in ("kappa", "kappa_linear", "ac1", "pabak"):
        r = long.loc[long["statistic"] == name].iloc[0]
        assert r["estimate"] == pytest.approx(1.0)
        assert -1.0 <= r["ci_low"] < 0.95 and r["ci_high"] == pytest.approx(1.0)
    assert "perfect observed agreement" in long.diagnostics["ci_note"].iloc[0]


def test_a_frame_without_order_is_a_data_error_naming_it(frame3):
    from evalstats.errors import DataError

    with pytest.raises(DataError, match="order"):
        _long_agreement(frame3.drop(columns="order"), rubric="with-without")
    with pytest.raises(DataError, match="task_group"):
        _long_agreement(frame3, rubric="with-without", cluster="task_group")


def test_three_judges_fleiss_and_krippendorff(frame3):
    agr = judge_agreement(frame3, rubric="with-without", n_resamples=200, rng=0)
    allrow = agr.loc[agr.judge_a == "all judges"].iloc[0]
    w = evalstats.wide_by_judge(
        frame3.assign(outcome=frame3["outcome"].where(frame3["status"] == "ok")),
        rubric="with-without",
    )
    judges = sorted(frame3.judge.astype(str).unique())
    codes = np.column_stack([pd.Categorical(w[j], categories=OUT).codes for j in judges]).astype(
        float
    )
    codes[codes < 0] = np.nan
    complete = codes[~np.isnan(codes).any(axis=1)].astype(int)
    table, _ = inter_rater.aggregate_raters(complete, n_cat=3)
    assert allrow["fleiss_kappa"] == pytest.approx(inter_rater.fleiss_kappa(table), abs=1e-12)
    assert allrow["krippendorff_alpha"] == pytest.approx(
        krippendorff.alpha(codes.T, level_of_measurement="nominal"), abs=1e-10
    )
    # Both task-clustered: the jackknife over tasks, in [-1, 1].
    for name in ("fleiss_kappa", "krippendorff_alpha"):
        assert allrow[f"{name}_method"] == "atanh_jackknife_midp_blaker"
        assert allrow[f"{name}_df"] == w.loc[~np.isnan(codes).all(axis=1), "task_id"].nunique() - 1
        assert -1 <= allrow[f"{name}_ci_low"] < allrow[name] < allrow[f"{name}_ci_high"] <= 1


def test_consensus_rules():
    base = {
        "rubric": "with-without",
        "order": pd.NA,
        "tokens_with": 1,
        "tokens_without": 2,
        "wall_with_s": 1.0,
        "wall_without_s": 2.0,
    }
    rows = []
    spec = {  # pair -> (judge1, judge2, judge3) as (status, outcome)
        1: [("ok", "win"), ("ok", "win"), ("ok", "win")],
        2: [("ok", "win"), ("ok", "win"), ("ok", "loss")],
        3: [("ok", "win"), ("ok", "tie"), ("ok", "loss")],
        4: [("ok", "win"), ("invalid", None), ("ok", "win")],
        5: [("no_answer", None), ("no_answer", None), ("no_answer", None)],
    }
    for rep, verdicts in spec.items():
        for j, (status, outcome) in enumerate(verdicts):
            rows.append(
                {
                    **base,
                    "task_id": "T1",
                    "replicate": rep,
                    "judge": f"j{j}",
                    "status": status,
                    "outcome": outcome,
                }
            )
    f = pd.DataFrame(rows)
    f["status"] = f["status"].astype(evalstats.frames.STATUS_DTYPE)
    f["outcome"] = f["outcome"].astype(evalstats.frames.OUTCOME_DTYPE)
    f["order"] = f["order"].astype(evalstats._schema.ORDER_DTYPE)
    u = consensus(f, "unanimous").set_index("replicate")
    assert u.loc[1, "outcome"] == "win" and u.loc[2, "outcome"] == "tie"
    assert u.loc[3, "outcome"] == "tie" and u.loc[4, "status"] == "invalid"
    assert u.loc[5, "status"] == "no_answer" and pd.isna(u.loc[5, "outcome"])
    mj = consensus(f, "majority").set_index("replicate")
    assert mj.loc[2, "outcome"] == "win" and mj.loc[3, "outcome"] == "tie"
    assert mj.loc[4, "outcome"] == "win" and mj.loc[4, "n_judges_ok"] == 2
    with pytest.raises(ValueError, match="rule"):
        consensus(f, "dictator")


def test_needs_two_judges_and_a_rubric(frame3):
    with pytest.raises(ValueError, match="rubric"):
        judge_agreement(frame3)
    with pytest.raises(ValueError, match="at least two"):
        judge_agreement(frame3, rubric="with-without", judges=["openai:gpt-y"])


def test_disagreement_is_the_shared_rule(frame3):
    """The trigger and the counts are the ones evalstats._disagreement defines for every layer."""
    from evalstats.frames import wide_by_judge
    from evalstats.stats.agreement import SEED_DISAGREEMENT_TRIGGER

    assert SEED_DISAGREEMENT_TRIGGER == 0.20
    f = frame3.loc[frame3.rubric == "with-without"]
    wide = wide_by_judge(f.assign(outcome=f["outcome"].where(f["status"] == "ok")))
    judges = sorted(f["judge"].astype(str).unique())
    ref = {}  # the counts by hand: units both judged, and on how many their verdicts differ
    for a, b in itertools.combinations(judges, 2):
        both = wide[[a, b]].astype("string").dropna()
        k = int((both[a] != both[b]).sum())
        ref[a, b] = {"n": len(both), "disagreements": k, "disagreement_rate": k / len(both)}
    agr = judge_agreement(frame3, rubric="with-without", n_resamples=200, rng=0)
    pairs = agr.loc[agr.judge_a != "all judges"]
    for row in pairs.itertuples():
        key = tuple(sorted((row.judge_a, row.judge_b)))
        assert row.n == ref[key]["n"]
        assert row.disagreements == ref[key]["disagreements"]
        assert row.disagreement_rate == pytest.approx(ref[key]["disagreement_rate"])
        assert row.trigger == (row.disagreement_rate > 0.20)
    # A custom threshold moves the trigger, not the counts.
    strict = judge_agreement(frame3, rubric="with-without", threshold=0.0, n_resamples=200, rng=0)
    strict = strict.loc[strict.judge_a != "all judges"]
    assert strict["trigger"].tolist() == (strict["disagreements"] > 0).tolist()
    assert strict["n"].tolist() == pairs["n"].tolist()
    with pytest.raises(ValueError, match="threshold"):
        judge_agreement(frame3, rubric="with-without", threshold=1.5)
    with pytest.raises(ValueError, match="confidence"):
        judge_agreement(frame3, rubric="with-without", confidence=95)


def test_missing_columns_are_a_data_error(frame3):
    from evalstats.errors import DataError

    with pytest.raises(DataError, match="judge"):
        judge_agreement(frame3.drop(columns="judge"), rubric="with-without")
    with pytest.raises(DataError, match="rubric"):
        consensus(frame3.drop(columns="rubric"))


def test_clustered_kappa_is_a_task_jackknife_with_t_reference(frame3):
    from scipy import stats

    ja, jb = "anthropic:claude-x", "openai:gpt-y"
    agr = judge_agreement(frame3, judges=[ja, jb], rubric="with-without", n_resamples=200, rng=0)
    row = agr.iloc[0]
    m = _merged(frame3, "with-without", ja, jb)
    loo = []
    tasks = np.unique(m["task_id"])
    for t in tasks:  # deliberately naive: sklearn on the rows without task t
        rest = m.loc[m["task_id"] != t]
        loo.append(cohen_kappa_score(rest["outcome_a"].astype(str), rest["outcome_b"].astype(str)))
    loo = np.array(loo)
    c = len(tasks)
    se = np.sqrt((c - 1) / c * ((loo - loo.mean()) ** 2).sum())
    q = stats.t.ppf(0.975, c - 1)
    assert row["kappa_df"] == c - 1 and row["kappa_method"] == "atanh_jackknife_midp_blaker"
    assert row["kappa_se"] == pytest.approx(se, rel=1e-10)
    # The interval: the same jackknife on atanh of kappa shrunk by n / (n + 1), back by tanh
    # (no exact bound joined here: many disagreements).
    assert row["ci_note"] == ""
    n_rest = np.array([(m["task_id"] != t).sum() for t in tasks])
    z_loo = np.arctanh(loo * n_rest / (n_rest + 1))
    se_z = np.sqrt((c - 1) / c * ((z_loo - z_loo.mean()) ** 2).sum())
    z = np.arctanh(row["kappa"] * len(m) / (len(m) + 1))
    assert row["kappa_ci_low"] == pytest.approx(np.tanh(z - q * se_z), rel=1e-10)
    assert row["kappa_ci_high"] == pytest.approx(np.tanh(z + q * se_z), rel=1e-10)
    assert row["kappa_p"] == pytest.approx(2 * stats.t.sf(abs(z / se_z), c - 1))
    assert (row["kappa_p"] < 0.05) == (row["kappa_ci_low"] > 0)
    # The IID analytic SE and test stay beside it (Fleiss-Cohen-Everitt, as statsmodels).
    ct = np.asarray(row["confusion"])
    sm = inter_rater.cohens_kappa(ct)
    assert row["kappa_iid_se"] == pytest.approx(sm.std_kappa, rel=1e-10)
    assert row["kappa_iid_p"] == pytest.approx(sm.pvalue_two_sided, rel=1e-8)


def test_consensus_carries_over_budget_arm_for_the_arm_aware_rule():
    from pathlib import Path

    from evalstats.errors import DataError
    from evalstats.frames import load_frame

    f = load_frame(Path(__file__).resolve().parents[1] / "data" / "sample")
    f = f.loc[f["rubric"] == "with-without"]
    cons = consensus(f, "unanimous", rubric="with-without")
    over = cons.loc[cons["status"] == "no_answer", "over_budget_arm"].astype(str)
    # The sample has pairs where only WITH, and pairs where only WITHOUT, went over budget.
    assert {"with", "without"} <= set(over)
    pairs = f.drop_duplicates(["task_id", "replicate"]).set_index(["task_id", "replicate"])
    got = cons.set_index(["task_id", "replicate"])["over_budget_arm"].astype(object)
    want = pairs.loc[got.index, "over_budget_arm"].astype(object)
    assert got.fillna("-").equals(want.fillna("-"))

    res = evalstats.win_rates(cons, no_answer_as="arm_aware").wide().iloc[0]
    ok = cons.loc[cons["status"] == "ok", "outcome"].astype(str)
    n_with, n_without = int((over == "with").sum()), int((over == "without").sum())
    n_both = int((over == "both").sum())
    assert res["wins"] == (ok == "win").sum() + n_without
    assert res["losses"] == (ok == "loss").sum() + n_with
    assert res["ties"] == (ok == "tie").sum() + n_both
    assert res["no_answer"] == n_with + n_without + n_both
    # Without the column the rule cannot tell the arms apart (what consensus gave before).
    with pytest.raises(DataError, match="over_budget_arm"):
        evalstats.win_rates(cons.drop(columns="over_budget_arm"), no_answer_as="arm_aware")


def test_agreement_counts_pairs_and_pair_orders_apart():
    # The blind rubric is judged in both orders: n counts judged pair-orders, n_pairs the
    # distinct (task, replicate) pairs, counted here straight from the frame.
    if not SAMPLE_DIR.exists():
        pytest.skip("data/sample is absent")
    frame = load_frame(SAMPLE_DIR)
    for rubric in ("blind-pair", "with-without"):
        row = judge_agreement(frame, rubric=rubric, n_resamples=50, rng=0).iloc[0]
        ok = frame.loc[(frame["rubric"] == rubric) & (frame["status"] == "ok")]
        keys = ["task_id", "replicate"] + (["order"] if rubric == "blind-pair" else [])
        judged = ok.groupby(keys)["judge"].nunique()
        both = judged[judged == 2].reset_index()
        assert row["n"] == len(both)
        assert row["n_pairs"] == len(both[["task_id", "replicate"]].drop_duplicates())
        if rubric == "blind-pair":
            assert row["n_pairs"] < row["n"]
        else:
            assert row["n_pairs"] == row["n"]


def test_three_arms_give_one_agreement_per_pair_of_arms(tmp_path):
    """A K-arm frame (arm_a, arm_b) gives one agreement per (rubric, pair of arms), each equal
    to judge_agreement on that pair's rows alone; consensus likewise."""
    evalstats.simulate(
        tmp_path, arms=("none", "v1", "v2"), reference="none", n_tasks=8, n_replicates=2
    )
    f = evalstats.load_frame(tmp_path)
    agr = _long_agreement(f)
    assert list(agr.columns[:5]) == ["rubric", "arm_a", "arm_b", "judge_a", "judge_b"]
    pairs = agr[["arm_a", "arm_b"]].drop_duplicates()
    assert len(pairs) == 3
    for a, b in pairs.itertuples(index=False):
        sub = f.loc[(f["arm_a"] == a) & (f["arm_b"] == b)].drop(columns=["arm_a", "arm_b"])
        one = _long_agreement(sub)
        got = agr.loc[(agr["arm_a"] == a) & (agr["arm_b"] == b)]
        cols = ["statistic", "estimate", "ci_low", "ci_high", "n", "n_tasks"]
        pd.testing.assert_frame_equal(
            got[cols].reset_index(drop=True), one[cols].reset_index(drop=True)
        )
        m = sub.pivot(index=["task_id", "replicate", "order"], columns="judge", values="outcome")
        m = m.dropna()
        kappa = got.set_index("statistic").loc["kappa", "estimate"]
        assert kappa == pytest.approx(cohen_kappa_score(m.iloc[:, 0], m.iloc[:, 1]), abs=1e-12)
    cons = consensus(f)
    assert cons.groupby(["arm_a", "arm_b"]).size().tolist() == [16, 16, 16]
