"""LLMBar: every published Acc / Agr of the shared subsets reproduced from result.json (the
``llmbar`` report kind's tables, computed without rendering)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_path
from sklearn.metrics import cohen_kappa_score

from evalstats.adapters import llmbar
from evalstats.report import compute

SUBSETS = ("LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "Processed/MT-Bench")


@pytest.fixture(scope="session")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = shared_path("data", "llmbar", "LLMBar_subset.tar.xz")
    out = tmp_path_factory.mktemp("llmbar")
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(out, filter="data")
    return out / "Dataset"


@pytest.fixture(scope="session")
def tables(dataset_dir: Path):
    return compute("llmbar", dataset_dir, n_resamples=300).tables


def _accuracy(tables, subset: str) -> pd.DataFrame:
    t = tables["accuracy"]
    return t.loc[t["subset"] == Path(subset).name].rename(columns={"evaluator": "judge"})


def _published(subset_dir: Path) -> pd.DataFrame:
    """statistics.json parsed here, independently of the adapter."""
    rows = []
    for p in sorted((subset_dir / "evaluators").glob("*/*/statistics.json")):
        s = json.loads(p.read_text())
        rows.append(
            {
                "judge": p.parent.parent.name,
                "strategy": p.parent.name,
                "pub_acc": s["correct_average"],
                "pub_agr": s["equal"].split("= ")[-1],
                "pub_n": int(s["equal"].split("/")[1].split("=")[0]),
            }
        )
    return pd.DataFrame(rows)


@pytest.mark.parametrize("subset", SUBSETS)
def test_every_published_acc_and_agr_reproduces_exactly(
    dataset_dir: Path, tables, subset: str
) -> None:
    table = _accuracy(tables, subset)
    pub = _published(dataset_dir / subset)
    merged = table.merge(pub, on=["judge", "strategy"], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all()
    assert len(merged) == {"LLMBar/Natural": 65, "LLMBar/Adversarial/Neighbor": 65}.get(subset, 8)
    # LLMBar prints Python's repr of the float percentage: equal strings = equal floats.
    assert (merged["acc"].map(lambda v: f"{v}%") == merged["pub_acc"]).all()
    assert (merged["agr"].map(lambda v: f"{v}%") == merged["pub_agr"]).all()
    assert (merged["n"] == merged["pub_n"]).all()


@pytest.mark.slow  # runs the data README's examples on the whole LLMBar set
def test_readme_examples(tables) -> None:
    rows = {
        ("LLMBar/Natural", "GPT-4"): (93.5, 97.0),
        ("LLMBar/Adversarial/Neighbor", "GPT-4"): (64.17910447761194, 89.55223880597015),
        ("LLMBar/Natural", "ChatGPT"): (79.0, 68.0),
        ("Processed/MT-Bench", "GPT-4"): (81.0, 87.0),
    }
    for (subset, judge), (acc, agr) in rows.items():
        t = _accuracy(tables, subset).set_index(["judge", "strategy"])
        got = t.loc[(judge, "Vanilla_NoRules")]
        assert (round(got["acc"], 1), round(got["agr"], 1)) == (round(acc, 1), round(agr, 1))


def test_load_maps_orders_sides_and_gold(dataset_dir: Path) -> None:
    d = dataset_dir / "LLMBar" / "Natural"
    data = llmbar.load(d)
    f = data.frame
    raw = json.loads((d / "dataset.json").read_text())
    assert len(data.labels) == len(raw) == 100
    assert data.labels["outcome"].astype(str).tolist() == [
        "win" if r["label"] == 1 else "loss" for r in raw
    ]
    res = json.loads((d / "evaluators" / "GPT-4" / "Vanilla_NoRules" / "result.json").read_text())
    g = f.loc[f["judge"] == "GPT-4/Vanilla_NoRules"]
    assert len(g) == 200 and set(g["replicate"]) == {1}
    first = g.loc[g["order"] == "with_first"].sort_values("task_id")
    swapped = g.loc[g["order"] == "without_first"].sort_values("task_id")
    expect_first = [r["results"][-1]["swap = False"]["winner"] for r in res]
    expect_swap = [r["results"][-1]["swap = True"]["winner"] for r in res]
    to_outcome = {"1": "win", "2": "loss"}
    assert first["outcome"].astype(object).tolist() == [to_outcome.get(w) for w in expect_first]
    assert swapped["outcome"].astype(object).tolist() == [to_outcome.get(w) for w in expect_swap]
    assert first["len_with"].tolist() == [len(r["output_1"]) for r in raw]
    # An unparsed winner is kept as invalid, with its raw entry.
    inv = f.loc[f["status"] == "invalid"]
    assert len(inv) > 0 and inv["raw"].str.contains('"winner"').all()


@pytest.mark.slow  # the whole LLMBar case study on the published data
def test_case_study_tables(dataset_dir: Path, tables) -> None:
    dirs = [dataset_dir / s for s in SUBSETS]
    cs = tables
    assert cs["accuracy"]["match"].all() and len(cs["accuracy"]) == 138
    k = cs["kappa_vs_gold"].wide().set_index(["subset", "evaluator", "strategy"])
    gpt4 = k.loc[("Natural", "GPT-4", "Vanilla_NoRules")]
    # Kappa vs gold, checked against sklearn on the same ok verdicts.
    data = llmbar.load(dirs[0])
    f = data.frame.loc[
        (data.frame["judge"] == "GPT-4/Vanilla_NoRules") & (data.frame["status"] == "ok")
    ]
    m = f.merge(data.labels[["task_id", "outcome"]], on="task_id", suffixes=("", "_gold"))
    assert gpt4["kappa"] == pytest.approx(
        cohen_kappa_score(m["outcome_gold"].astype(str), m["outcome"].astype(str))
    )
    assert gpt4["kappa_ci_low"] < gpt4["kappa"] < gpt4["kappa_ci_high"]
    assert gpt4["accuracy"] == pytest.approx(0.935)
    assert gpt4["positional_agreement"] == pytest.approx(0.97)
    pb = cs["position_bias"]
    assert {"first_shown_win_rate", "order_consistency"} == set(pb["statistic"])
    cross = cs["cross_judge"]
    assert set(cross["subset"]) == {"Natural", "Neighbor", "MT-Bench"}
    lb = cs["length_bias"]
    assert "gold" in set(lb["evaluator"])
    # On Neighbor the gold output is the shorter one most of the time (adversarial design).
    assert lb.set_index(["subset", "evaluator"]).loc[("Neighbor", "gold"), "longer_wins"] < 0.3
