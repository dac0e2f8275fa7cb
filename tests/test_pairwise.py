"""The generic pairwise adapter, and AlpacaEval's verdict frame reproduced as its configuration."""

from __future__ import annotations

import gzip
import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import shared_path

from evalstats.adapters import alpaca_eval, pairwise
from evalstats.errors import DataError
from evalstats.records import EvalstatsWarning


def _alpaca_rule(value):
    """AlpacaEval's reading of ``preference`` (alpaca_eval.metrics.helpers), written out."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None, "missing preference"
    v = 1.5 if value == 0 else float(value)
    if not 1.0 <= v <= 2.0:
        return None, f"preference {value!r} outside [1, 2]"
    return ("win" if v > 1.5 else "tie" if v == 1.5 else "loss"), None


def _alpaca_table(path) -> pd.DataFrame:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [(i, json.loads(t)) for i, t in enumerate(fh, start=1) if t.strip()]
    table = pd.DataFrame([rec for _, rec in lines])
    table["jid"] = [f"{path}:{i}" for i, _ in lines]
    pref = table["preference"].astype(float)
    ok = pref.between(1, 2) | (pref == 0)
    table["label"] = [repr(float(p)) if o else None for p, o in zip(pref, ok, strict=True)]
    table["win_share"] = np.where(ok, np.where(pref == 0, 1.5, pref) - 1.0, np.nan)
    return table


def test_reproduces_the_alpaca_eval_frame() -> None:
    path = shared_path("data", "alpaca_eval", "claude-2.1.annotations.jsonl.gz")
    expected = alpaca_eval.load(path)
    table = _alpaca_table(path)
    columns = pairwise.PairwiseColumns(
        item="instruction_id",
        judge="annotator",
        verdict="preference",
        sides=("generator_2", "generator_1"),
        side_names=("model", "baseline"),
        fields={
            "judge_usd": "price_per_example",
            "raw": "raw_completion",
            "judgment_id": "jid",
            "label": "label",
        },
        extra={
            "dataset": ("dataset", "str"),
            "preference": ("preference", "float64"),
            "win_share": ("win_share", "float64"),
            "len_with": ("len_output_2", "Int64"),
            "len_without": ("len_output_1", "Int64"),
            "judge_time_s": ("time_per_example", "float64"),
        },
    )
    got = pairwise.from_table(
        table,
        columns,
        outcome=_alpaca_rule,
        rubric=alpaca_eval.RUBRIC,
        sort_by=["model", "baseline", "task_id", "replicate", "judge"],
        source=str(path),
    )
    assert len(got) == len(expected) == 2 * 805
    pd.testing.assert_frame_equal(got, expected)


def test_orders_gold_and_invalid_rows() -> None:
    table = pd.DataFrame(
        {
            "item": ["q1", "q1", "q2", "q2", "q3", "q3"],
            "judge": "j",
            "swap": [False, True] * 3,
            "winner": ["1", "1", "2", "1", None, "2"],
            "label": [1, 1, 2, 2, 1, 1],
        }
    )
    f = pairwise.from_table(
        table,
        pairwise.PairwiseColumns(item="item", judge="judge", verdict="winner", order="swap"),
        outcome={"1": "win", "2": "loss"},
        order_map={False: "with_first", True: "without_first"},
        source="t",
    )
    labels = pairwise.labels_table(
        table, item="item", gold="label", outcome={1: "win", 2: "loss"}, source="t"
    )
    assert f["replicate"].tolist() == [1] * 6  # both orders of an item are one pair
    assert f["order"].astype(str).tolist() == ["with_first", "without_first"] * 3
    assert f["status"].astype(str).tolist() == ["ok"] * 4 + ["invalid", "ok"]
    assert f.loc[4, "parse_error"] == "missing verdict"
    assert labels["outcome"].astype(str).tolist() == ["win", "loss", "win"]
    assert set(labels["labeler"]) == {"gold"}


def test_errors_name_the_column_and_row() -> None:
    def C(**kw):  # the columns of these small tables
        return pairwise.PairwiseColumns(**{"judge": "judge", "verdict": "v", **kw})

    table = pd.DataFrame({"item": ["a", ""], "judge": "j", "v": ["1", "2"]})
    with pytest.raises(DataError, match=r"src, field 'item': row 2: missing value"):
        pairwise.from_table(table, C(item="item"), outcome={"1": "win"}, source="src")
    with pytest.raises(DataError, match="lacks column"):
        pairwise.from_table(table, C(item="nope"), outcome={})
    table = pd.DataFrame({"item": ["a"], "judge": "j", "v": ["1"], "o": ["sideways"]})
    with pytest.raises(DataError, match="field 'o': row 1: order 'sideways'"):
        pairwise.from_table(table, C(item="item", order="o"), outcome={"1": "win"})
    with pytest.raises(DataError, match=r"field 'g': row 1: unmapped verdict 3"):
        pairwise.labels_table(
            pd.DataFrame({"item": ["a"], "g": [3]}), item="item", gold="g", outcome={1: "win"}
        )
    table = pd.DataFrame({"item": ["a", "a"], "judge": "j", "v": ["1", "1"]})
    with pytest.warns(EvalstatsWarning, match="replicates 2"):
        f = pairwise.from_table(table, C(item="item"), outcome={"1": "win"})
    assert f["replicate"].tolist() == [1, 2]
