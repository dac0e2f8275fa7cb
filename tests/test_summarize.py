"""The compact view of rate tables: every cell is the table's own number, rounded, nothing hidden."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalstats
from evalstats.frames import load_frame
from evalstats.stats.formatting import (
    format_interval,
    format_number,
    interval_columns,
    statistic_digits,
    summarize,
)

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
NUM = r"-?\d+(?:\.\d+)?"
IV = re.compile(rf"^({NUM}) \[({NUM}), ({NUM})\]$")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return load_frame(SAMPLE)


@pytest.fixture(scope="module")
def rates(frame) -> pd.DataFrame:
    return evalstats.win_rates(frame, by=["rubric", "judge"], rng=0, n_resamples=200)


def assert_cells(view, table, stat, *, scale, decimals, header=None):
    header = header or stat
    table = table if stat == "estimate" else table.wide()  # the view's rows are the groups
    est, lo, hi = (
        ("estimate", "ci_low", "ci_high")
        if stat == "estimate"
        else (stat, f"{stat}_ci_low", f"{stat}_ci_high")
    )
    for cell, e, low, high in zip(view[header], table[est], table[lo], table[hi], strict=True):
        m = IV.match(cell)
        assert m, cell
        for text, value in zip(m.groups(), (e, low, high), strict=True):
            assert abs(float(text) - value * scale) <= 0.5 * 10**-decimals + 1e-9, (cell, value)
            assert len(text.partition(".")[2]) == decimals


def test_win_rates_view(rates):
    view = summarize(rates)
    assert list(view.columns) == [
        "rubric",
        "judge",
        "n",
        "n_pairs",
        "n_tasks",
        "win_rate (%)",
        "tie_rate (%)",
        "loss_rate (%)",
        "net_win (%)",
        "score (%)",
        "method",
        "confidence",
    ]
    for stat in ("win_rate", "tie_rate", "loss_rate", "net_win", "score"):
        assert_cells(view, rates, stat, scale=100, decimals=0, header=f"{stat} (%)")
    groups = rates.diagnostics
    assert (view["n"].to_numpy() == groups["n"].to_numpy()).all()
    assert (view["n_tasks"] == 15).all()
    assert view["rubric"].tolist() == groups["rubric"].astype(str).tolist()
    assert (view["method"] == evalstats.stats.DEFAULT_METHOD).all()


def test_nothing_hidden_in_a_notebook(rates):
    view = summarize(rates)
    # Jupyter's pandas shows at most 20 columns and elides the rest with "..." (35 did).
    with pd.option_context("display.max_columns", 20):
        # the long result itself shows every column (the wide one of 41 did not)
        assert "..." not in rates._repr_html_()
        assert "..." not in repr(view) and "..." not in view._repr_html_()
        assert view.loc[0, "net_win (%)"] in view._repr_html_()


@pytest.mark.parametrize(
    ("digits", "percent"), [(None, True), (1, True), (None, False), (3, False)]
)
def test_precision_options(rates, digits, percent):
    view = summarize(rates, digits=digits, percent=percent, statistics=["net_win", "win_rate"])
    d = statistic_digits("net_win", digits=digits, percent=percent)
    assert d == ((digits or 0) if percent else (2 if digits is None else digits))
    header = "net_win (%)" if percent else "net_win"
    assert list(view.columns)[5:7] == [header, header.replace("net_win", "win_rate")]
    assert_cells(view, rates, "net_win", scale=100 if percent else 1, decimals=d, header=header)


def test_cost_view(frame):
    cost = evalstats.cost_ratios(frame)
    view = summarize(cost)
    assert list(view.columns) == [
        "arm_a",  # the one pair of arms (K = 2) names itself
        "arm_b",
        "statistic",
        "estimand",
        "token_source",  # the summary names where the token counts come from (issue 22)
        "n",
        "n_tasks",
        "estimate",
        "method",
        "confidence",
    ]
    assert view["token_source"].tolist()[:3] == ["billed"] * 3
    # A ratio is a decimal at the rates' absolute resolution: two decimals beside 0-decimal %.
    assert_cells(view, cost, "estimate", scale=1, decimals=2)
    assert view["statistic"].tolist() == list(evalstats.stats.COST_METRICS)


def test_agreement_view(frame):
    long = evalstats.judge_agreement(frame, rubric="with-without", rng=0, n_resamples=200)
    agr = long.wide()
    view = summarize(agr)
    cols = list(view.columns)
    # the pair of arms is a key of every agreement (K = 2: with, without)
    assert cols[:8] == ["rubric", "arm_a", "arm_b", "judge_a", "judge_b", "n", "n_pairs", "n_tasks"]
    assert {"observed_agreement (%)", "kappa", "kappa_linear", "ac1", "pabak"} <= set(cols)
    assert "confusion" not in cols and "trigger" not in cols
    assert_cells(view, long, "kappa", scale=1, decimals=2)
    assert_cells(view, long, "ac1", scale=1, decimals=2)
    assert (
        view.loc[0, "observed_agreement (%)"]
        == format_number([agr.loc[0, "observed_agreement"] * 100], 0)[0]
    )


def test_position_bias_view(frame):
    blind = frame.loc[frame["order"].notna()]
    pb = evalstats.position_bias(blind, by=["rubric", "judge"])
    view = summarize(pb)
    assert {"first_shown_win_rate (%)", "order_consistency (%)"} <= set(view.columns)
    assert_cells(
        view, pb, "first_shown_win_rate", scale=100, decimals=0, header="first_shown_win_rate (%)"
    )


def test_interval_columns_recognition():
    t = pd.DataFrame(
        columns=[
            "x",
            "x_ci_low",
            "x_ci_high",
            "y_ci_low",
            "z",
            "z_ci_low",
            "z_ci_high",
            "w_ci_low",
            "w_ci_high",
        ]
    )
    assert [c.name for c in interval_columns(t)] == ["x", "z"]  # y has no high, w no estimate


def test_formatting_edges():
    assert format_number([-0.004, 0.005, 2.5, np.nan], 2).tolist() == ["0.00", "0.01", "2.50", "–"]
    assert format_number([-0.4], 0).tolist() == ["0"]  # never "-0"
    got = format_interval([0.5, np.nan, 0.25], [0.4, 0.1, np.nan], [0.6, 0.2, 0.3], 1, scale=100)
    assert got.tolist() == ["50.0 [40.0, 60.0]", "–", "25.0"]
    assert format_interval([0.5], [0.4], [0.6], 0, scale=100, unit=" %")[0] == "50 % [40, 60]"


def test_bad_arguments(rates):
    with pytest.raises(ValueError, match="statistics not in the table: nope"):
        summarize(rates, statistics=["nope"])
    with pytest.raises(ValueError, match="digits"):
        summarize(rates, digits=-1)
    with pytest.raises(TypeError, match="DataFrame"):
        summarize(rates.to_dict())
