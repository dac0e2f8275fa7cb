"""Replicates on real data (issue 33): LLMBar's judges saw every pair in both orders. With the
order as the replicate, each judge (and prompting strategy) as an arm and "the verdict names
the gold winner" as the outcome, ``replicates`` must give back the paper's own numbers:
pass@1 = Acc (``correct_average``), pass^2 = ``correct_both``, flip rate = 1 - Agr (``equal``,
positional agreement; exact where every verdict names an output)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import shared_path

from evalstats.adapters import llmbar
from evalstats.stats import replicates

SUBSETS = ("LLMBar/Natural", "LLMBar/Adversarial/Neighbor", "Processed/MT-Bench")


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = shared_path("data", "llmbar", "LLMBar_subset.tar.xz")
    out = tmp_path_factory.mktemp("llmbar")
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(out, filter="data")
    return out / "Dataset"


def _share(text: str) -> float:
    """'97 / 100 = 97.0%' or '93.5%' -> 0.97 / 0.935 (statistics.json, read independently)."""
    return float(text.split("=")[-1].strip().rstrip("%")) / 100.0


@pytest.mark.parametrize("subset", SUBSETS)
def test_flip_rate_is_one_minus_positional_agreement(dataset_dir: Path, subset: str):
    data = llmbar.load(dataset_dir / subset)
    f = data.frame
    gold = data.labels.set_index("task_id")["outcome"].astype(str)
    runs = pd.DataFrame(
        {
            "task_id": f["task_id"],
            "arm": f["judge"].astype(str),
            # A verdict naming neither output is wrong, as LLMBar scores it.
            "passed": (f["outcome"].astype(object) == f["task_id"].map(gold)).to_numpy(),
        }
    )
    res = replicates(runs).set_index(["arm", "statistic"])["estimate"]
    unnamed = f["outcome"].isna().groupby(f["judge"].astype(str)).sum()
    n_items = f["task_id"].nunique()
    exact = 0
    for p in sorted((dataset_dir / subset / "evaluators").glob("*/*/statistics.json")):
        s, arm = json.loads(p.read_text()), f"{p.parent.parent.name}/{p.parent.name}"
        assert res[(arm, "pass@1")] == pytest.approx(_share(s["correct_average"]), abs=1e-12)
        assert res[(arm, "pass^2")] == pytest.approx(_share(s["correct_both"]), abs=1e-12)
        gap = (1.0 - _share(s["equal"])) - res[(arm, "flip_rate")]
        # Two different winners, one of them naming neither output, are both wrong: not a flip.
        assert -1e-12 <= gap <= unnamed.get(arm, 0) / n_items + 1e-12, arm
        if unnamed.get(arm, 0) == 0:
            assert abs(gap) < 1e-12, arm
            exact += 1
    assert exact >= 5
