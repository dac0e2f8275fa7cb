"""PandaLM: the published kappas, counts and judge scores reproduced to their printed precision
(the ``pandalm`` report kind's tables, computed without rendering)."""

from __future__ import annotations

import collections
import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_path
from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_recall_fscore_support

from evalstats.adapters import pandalm
from evalstats.report import compute


@pytest.fixture(scope="module")
def data_dir() -> Path:
    return shared_path("data", "pandalm")


@pytest.fixture(scope="module")
def tables(data_dir: Path):
    return compute("pandalm", data_dir, n_resamples=300).tables


def _accuracy(tables, rule: str):
    t = tables["judge_accuracy"]
    return t.loc[t["unparsable"] == rule].set_index("judge")


def _raw(data_dir: Path, name: str) -> list[dict]:
    with gzip.open(data_dir / name, "rt", encoding="utf-8") as fh:
        return json.load(fh)


def _majority(data_dir: Path) -> list[int]:
    test = _raw(data_dir, "testset-v1.json.gz")
    votes = [[r[f"annotator{i}"] for i in (1, 2, 3)] for r in test]
    return [collections.Counter(v).most_common(1)[0][0] for v in votes]


def test_load(data_dir: Path) -> None:
    data = pandalm.load(data_dir)
    assert len(data.frame) == 2 * 999 and set(data.labels["labeler"]) == {
        "annotator1",
        "annotator2",
        "annotator3",
    }
    assert (data.frame["status"] == "invalid").sum() == 25


def test_annotator_kappas(tables, data_dir: Path) -> None:
    t = tables["annotator_kappas"]
    assert t["kappa"].round(2).tolist() == [0.85, 0.88, 0.86]
    test = _raw(data_dir, "testset-v1.json.gz")
    for r in t.itertuples():
        a = [x[r.a] for x in test]
        b = [x[r.b] for x in test]
        assert r.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert r.ci_low < r.kappa < r.ci_high


def test_label_counts(tables) -> None:
    c = tables["label_counts"]
    assert dict(zip(c["label"], c["n"], strict=True)) == {"tie": 105, "1": 422, "2": 472}
    assert (c["no_majority"] == 0).all() and c["match"].all()


def test_judge_accuracy_published_with_unparsable_as_tie(tables) -> None:
    t = _accuracy(tables, "tie")
    published = {
        "gpt-3.5-turbo": [71.07, 58.79, 57.36, 57.55],
        "pandalm-7b": [66.77, 57.38, 57.50, 57.43],
    }
    for judge, expected in published.items():
        got = t.loc[judge, ["acc", "precision", "recall", "f1"]].round(2).tolist()
        assert got == expected
    assert t["match"].all()
    assert t.loc["gpt-3.5-turbo", "n_unparsable"] == 25


@pytest.mark.parametrize("rule", ["tie", "invalid", "exclude"])
def test_judge_accuracy_matches_sklearn(tables, data_dir: Path, rule: str) -> None:
    y = np.array(_majority(data_dir))
    gpt = [r["gpt_result"] for r in _raw(data_dir, "gpt-3.5-turbo-testset-v1.json.gz")]
    code = {"1": 1, "2": 2, "Tie": 0}
    if rule == "tie":
        p = np.array([code.get(v, 0) for v in gpt])
        yy = y
    elif rule == "invalid":
        p = np.array([code.get(v, -1) for v in gpt])
        yy = y
    else:
        keep = np.array([v in code for v in gpt])
        p = np.array([code[v] for v in np.array(gpt)[keep]])
        yy = y[keep]
    prec, rec, f1, _ = precision_recall_fscore_support(
        yy, p, labels=[0, 1, 2], average="macro", zero_division=0
    )
    row = _accuracy(tables, rule).loc["gpt-3.5-turbo"]
    assert row["acc"] == pytest.approx(100 * accuracy_score(yy, p))
    assert (row["precision"], row["recall"], row["f1"]) == pytest.approx(
        (100 * prec, 100 * rec, 100 * f1)
    )
    assert row["n"] == len(yy)


def test_numbers_with_unparsable_kept_invalid(tables) -> None:
    # Stated in the report: gpt-3.5-turbo with its 25 unparsable verdicts kept as wrong answers.
    t = _accuracy(tables, "invalid")
    got = t.loc["gpt-3.5-turbo", ["acc", "precision", "recall", "f1"]].round(2).tolist()
    assert got == [69.77, 53.65, 53.24, 52.74]
    t = _accuracy(tables, "exclude")
    got = t.loc["gpt-3.5-turbo", ["acc", "precision", "recall", "f1"]].round(2).tolist()
    assert got == [71.56, 53.65, 54.17, 53.31]


def test_win_lose_tie(tables, data_dir: Path) -> None:
    t = tables["win_lose_tie"]
    t = t.loc[t["unparsable"] == "tie"]
    assert len(t) == 30 and set(t["source"]) == {"human", "gpt-3.5-turbo", "pandalm-7b"}
    assert (t.groupby("source")[["win", "lose", "tie"]].sum().sum(axis=1) == 999).all()
    # Independent count for one cell: human majority, llama-7b (row) vs bloom-7b.
    test = _raw(data_dir, "testset-v1.json.gz")
    maj = _majority(data_dir)
    win = lose = tie = 0
    for r, m in zip(test, maj, strict=True):
        m1, m2 = r["cmp_key"].split("_")
        if {m1, m2} != {"llama-7b", "bloom-7b"}:
            continue
        if m == 0:
            tie += 1
        elif (m == 1) == (m1 == "llama-7b"):
            win += 1
        else:
            lose += 1
    row = t.loc[(t["source"] == "human") & (t["row_model"] == "llama-7b")].iloc[0]
    assert row["col_model"] == "bloom-7b"
    assert (row["win"], row["lose"], row["tie"]) == (win, lose, tie)


def test_ppi_demo(tables) -> None:
    demo = tables["ppi_demo"]
    assert demo["estimate"].tolist() == ["all human", "judge only", "labels only", "PPI++"]
    ppi = demo.set_index("estimate").loc["PPI++"]
    assert 90 <= ppi["n_labelled"] <= 100
    truth = demo.loc[0, "win_rate"]
    assert truth == pytest.approx(422 / 999)
    assert ppi["win_rate_ci_low"] <= truth <= ppi["win_rate_ci_high"]
