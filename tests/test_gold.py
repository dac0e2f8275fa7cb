"""judge_vs_gold checked against scikit-learn on simulated judges and labelers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_recall_fscore_support

from evalstats.stats import clustered_agreement, gold_labels, judge_vs_gold, labeler_agreement

OUT = np.array(["loss", "tie", "win"])


def _simulate(seed: int = 0, n_tasks: int = 25, reps: int = 3, task_effect: float = 1.5):
    rng = np.random.default_rng(seed)
    task = np.repeat([f"t{i:02d}" for i in range(n_tasks)], reps)
    rep = np.tile(np.arange(1, reps + 1), n_tasks)
    # A latent quality per task makes pairs of one task alike (clustered).
    latent = rng.normal(0, task_effect, n_tasks)[np.repeat(np.arange(n_tasks), reps)]
    truth = np.digitize(latent + rng.normal(0, 1, len(task)), [-0.6, 0.6])
    label_rows = []
    for who, noise in (("ann", 0.1), ("bob", 0.2), ("cy", 0.3)):
        flip = rng.random(len(task)) < noise
        val = np.where(flip, rng.integers(0, 3, len(task)), truth)
        label_rows.append(
            pd.DataFrame({"task_id": task, "replicate": rep, "labeler": who, "outcome": OUT[val]})
        )
    labels = pd.concat(label_rows, ignore_index=True)
    frame_rows = []
    for judge, noise in (("good", 0.15), ("poor", 0.5)):
        for order in ("with_first", "without_first"):
            flip = rng.random(len(task)) < noise
            val = np.where(flip, rng.integers(0, 3, len(task)), truth)
            status = np.where(rng.random(len(task)) < 0.05, "invalid", "ok")
            frame_rows.append(
                pd.DataFrame(
                    {
                        "task_id": task,
                        "replicate": rep,
                        "judge": judge,
                        "rubric": "blind-pair",
                        "order": order,
                        "status": status,
                        "outcome": np.where(status == "ok", OUT[val], None),
                    }
                )
            )
    return pd.concat(frame_rows, ignore_index=True), labels


def _majority(labels: pd.DataFrame) -> pd.DataFrame:
    """Independent majority: the outcome named by at least 2 of the 3 labelers."""
    rows = []
    for (t, r), g in labels.groupby(["task_id", "replicate"]):
        counts = g["outcome"].value_counts()
        if counts.iloc[0] * 2 > len(g):
            rows.append((t, r, counts.index[0]))
    return pd.DataFrame(rows, columns=["task_id", "replicate", "gold"])


def test_matches_sklearn_per_judge() -> None:
    frame, labels = _simulate()
    res = judge_vs_gold(frame, labels, n_resamples=500, rng=1)
    gold = _majority(labels)
    assert res.n_gold_pairs == len(gold)
    assert res.n_no_majority == labels[["task_id", "replicate"]].drop_duplicates().shape[0] - len(
        gold
    )
    for judge in ("good", "poor"):
        m = frame.loc[(frame["judge"] == judge) & (frame["status"] == "ok")].merge(gold)
        y, p = m["gold"].astype(str), m["outcome"].astype(str)
        row = res.judges.wide().set_index("judge").loc[judge]
        assert row["n"] == len(m)
        assert row["accuracy"] == pytest.approx(accuracy_score(y, p), abs=1e-12)
        prec, rec, f1, _ = precision_recall_fscore_support(y, p, average="macro", zero_division=0)
        assert (row["precision"], row["recall"], row["f1"]) == pytest.approx((prec, rec, f1))
        assert row["kappa"] == pytest.approx(cohen_kappa_score(y, p), abs=1e-12)
        assert row["kappa_ci_low"] < row["kappa"] < row["kappa_ci_high"]
        for order in ("with_first", "without_first"):
            sel = m["order"] == order
            assert row[f"accuracy_{order}"] == pytest.approx(accuracy_score(y[sel], p[sel]))
        both = m.pivot(index=["task_id", "replicate"], columns="order", values="outcome").dropna()
        assert row["n_pairs_both_orders"] == len(both)
        agree = (both["with_first"] == both["without_first"]).mean()
        assert row["positional_agreement"] == pytest.approx(agree)
        cm = res.confusion.loc[res.confusion["judge"] == judge]
        assert cm["n"].sum() == len(m)
        cell = cm.loc[(cm["gold"] == "win") & (cm["predicted"] == "loss"), "n"].item()
        assert cell == ((y == "win") & (p == "loss")).sum()
        n_not_ok = frame.loc[(frame["judge"] == judge) & (frame["status"] != "ok")].merge(gold)
        assert row["n_not_ok"] == len(n_not_ok)
    assert res.judges.wide().set_index("judge").loc["good", "kappa"] > 0.5


def test_labeler_kappas_match_sklearn() -> None:
    _, labels = _simulate(seed=3)
    table = labeler_agreement(labels, n_resamples=400, rng=0)
    assert len(table) == 3
    for r in table.itertuples():
        a = labels.loc[labels["labeler"] == r.a].sort_values(["task_id", "replicate"])
        b = labels.loc[labels["labeler"] == r.b].sort_values(["task_id", "replicate"])
        assert r.kappa == pytest.approx(cohen_kappa_score(a["outcome"], b["outcome"]), abs=1e-12)
        assert r.ci_low < r.kappa < r.ci_high


def test_clustered_interval_wider_when_tasks_are_alike() -> None:
    # Strong task effect, every replicate of a task alike: the IID interval is too narrow.
    frame, labels = _simulate(seed=5, n_tasks=20, reps=8, task_effect=3.0)
    frame = frame.loc[frame["judge"] == "poor"]
    row = judge_vs_gold(frame, labels, n_resamples=1000, rng=2).judges.wide().iloc[0]
    # kappa_iid has the analytic IID SE and no interval (as between judges): its Wald width.
    z = 2 * stats.norm.ppf(0.975)
    clustered = row["kappa_ci_high"] - row["kappa_ci_low"]
    iid = z * row["kappa_iid_se"]
    assert clustered > 1.2 * iid
    # One pair per task and one order: the clustered and the IID widths are alike.
    f1, l1 = _simulate(seed=6, n_tasks=300, reps=1)
    f1 = f1.loc[(f1["judge"] == "poor") & (f1["order"] == "with_first")]
    row = judge_vs_gold(f1, l1, n_resamples=2000, rng=3).judges.wide().iloc[0]
    ratio = (row["kappa_ci_high"] - row["kappa_ci_low"]) / (z * row["kappa_iid_se"])
    assert 0.85 < ratio < 1.15


def test_gold_rules() -> None:
    labels = pd.DataFrame(
        {
            "task_id": ["a", "a", "b", "b", "c"],
            "replicate": 1,
            "labeler": ["x", "y", "x", "y", "x"],
            "outcome": ["win", "win", "win", "loss", "tie"],
        }
    )
    g = gold_labels(labels)
    assert g["gold"].astype(object).tolist()[0] == "win"
    assert g["gold"].isna().tolist() == [False, True, False]
    g = gold_labels(labels, "y")
    assert g["gold"].astype(str).tolist() == ["win", "loss"]
    with pytest.raises(ValueError, match="labelers"):
        gold_labels(labels, "nobody")
    frame = pd.DataFrame(
        {
            "task_id": ["a", "b", "c"],
            "replicate": 1,
            "judge": "j",
            "rubric": "r",
            "order": None,
            "status": "ok",
            "outcome": ["win", "win", "loss"],
        }
    )
    res = judge_vs_gold(frame, labels, rng=0)
    assert res.n_no_majority == 1 and res.n_gold_pairs == 2
    assert res.judges.wide()["n"].item() == 2 and res.judges.wide()["accuracy"].item() == 0.5
    assert "positional_agreement" not in set(res.judges["statistic"])
    res = judge_vs_gold(frame, labels, gold="x", rng=0)
    assert res.judges.wide()["n"].item() == 3
    assert res.judges.wide()["accuracy"].item() == pytest.approx(2 / 3)


def test_people_use_the_judges_clustered_kappa_on_a_small_design() -> None:
    """28 labels, 7 tasks x 4 replicates, one disagreement: kappa's interval is the task-clustered
    one judges get against each other (not a bootstrap reaching exactly 1.0 nor an IID interval
    clipped at 1.0), and its estimate is sklearn's."""
    rng = np.random.default_rng(7)
    task = np.repeat([f"t{i}" for i in range(7)], 4)
    truth = OUT[rng.integers(0, 3, 28)]
    verdict = truth.copy()
    verdict[5] = "tie" if truth[5] != "tie" else "win"
    base = {"task_id": task, "replicate": np.tile(np.arange(1, 5), 7)}
    labels = pd.DataFrame({**base, "labeler": "ann", "outcome": truth})
    frame = pd.DataFrame({**base, "judge": "j", "rubric": "r", "order": None, "status": "ok"})
    frame["outcome"] = verdict
    res = judge_vs_gold(frame, labels)
    kappa = res.judges.set_index("statistic").loc["kappa"]
    assert kappa["estimate"] == pytest.approx(cohen_kappa_score(truth, verdict), abs=1e-12)
    assert -1 < kappa["ci_low"] < kappa["estimate"] < kappa["ci_high"] < 1.0
    assert kappa["n"] == 28 and kappa["n_tasks"] == 7
    ref = clustered_agreement(truth, verdict, cluster=task, categories=["loss", "tie", "win"])
    assert (kappa["ci_low"], kappa["ci_high"]) == pytest.approx(
        (ref["ci_low"].item(), ref["ci_high"].item()), abs=1e-12
    )
    assert kappa["method"] == ref["method"].item() == "atanh_jackknife_midp_blaker"
    iid = res.judges.set_index("statistic").loc["kappa_iid"]
    assert np.isnan(iid["ci_low"]) and np.isnan(iid["ci_high"]) and iid["se"] > 0
    # Between two labelers the same construction.
    two = pd.concat([labels, labels.assign(labeler="bob", outcome=verdict)], ignore_index=True)
    lab = labeler_agreement(two).iloc[0]
    assert (lab["ci_low"], lab["ci_high"]) == pytest.approx((kappa["ci_low"], kappa["ci_high"]))


def test_people_per_pair_of_arms() -> None:
    """Labels and a verdict frame that both name a pair of arms: one score per (pair, judge),
    each equal to judge_vs_gold on that pair's rows alone."""
    frame, labels = _simulate(seed=8, n_tasks=12, reps=2)
    frames, labs = [], []
    for arm in ("v1", "v2"):
        frames.append(frame.assign(arm_a=arm, arm_b="none"))
        labs.append(labels.assign(arm_a=arm, arm_b="none"))
    f, lab = pd.concat(frames, ignore_index=True), pd.concat(labs, ignore_index=True)
    f.loc[f["arm_a"] == "v2", "outcome"] = "tie"  # a different judge record for v2
    res = judge_vs_gold(f, lab)
    assert list(res.judges.columns[:3]) == ["arm_a", "arm_b", "judge"]
    for arm in ("v1", "v2"):
        one = judge_vs_gold(f.loc[f["arm_a"] == arm].drop(columns=["arm_a", "arm_b"]), labels)
        got = res.judges.loc[res.judges["arm_a"] == arm].reset_index(drop=True)
        cols = ["judge", "statistic", "estimate", "ci_low", "ci_high", "n", "n_tasks"]
        pd.testing.assert_frame_equal(got[cols], one.judges[cols])
    assert set(res.gold.columns) >= {"arm_a", "arm_b"} and len(res.gold) == 2 * len(
        gold_labels(labels)
    )
