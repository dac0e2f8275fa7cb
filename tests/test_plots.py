"""Figures: labelled axes, one artist per input row, NaN CIs, single judge, PNG/SVG output."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# Matplotlib reads MPLCONFIGDIR when first imported: point it at a private temporary directory
# so that the tests never depend on (or write to) the user's matplotlib configuration.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from scipy import stats as sps

import evalstats
import evalstats.rubrics
from evalstats import plots
from evalstats.stats.rates import dimension_means

#: The heatmap's cell categories, in the order of its colour index (pinned).
CELL_CATEGORIES = ("loss", "tie", "win", "no_answer", "invalid", "error", "conflict", "missing")

BLIND_DIMENSIONS = evalstats.rubrics.get("blind-pair").dimensions

RATE_NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win")


def rates_frame(judges=("anthropic:claude-sonnet-4", "openai:gpt-5.4"), nan_ci=False):
    rng = np.random.default_rng(0)
    rows = []
    for j in judges:
        w, t = rng.uniform(0.3, 0.5), rng.uniform(0.2, 0.35)
        vals = {"win_rate": w, "tie_rate": t, "loss_rate": 1 - w - t, "net_win": 2 * w + t - 1}
        row = {"judge": j, "n": 84, "n_tasks": 15, "confidence": 0.95, "method": "cluster_t"}
        for k, v in vals.items():
            row[k] = v
            row[f"{k}_ci_low"] = np.nan if nan_ci else v - 0.1
            row[f"{k}_ci_high"] = np.nan if nan_ci else v + 0.08
        rows.append(row)
    return pd.DataFrame(rows)


def labelled(ax) -> bool:
    return bool(ax.get_xlabel().strip()) and bool(ax.get_ylabel().strip())


@pytest.fixture(scope="module")
def sample_frame(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    evalstats.simulate(out, n_tasks=6, n_replicates=3, seed=4, orders="both", over_budget_rate=0.25)
    ds = evalstats.load_dir(out)
    return evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)


# --------------------------------------------------------------------------- headline


def test_headline_bars_and_error_bars_match_input():
    rates = rates_frame()
    fig = plots.plot_headline(rates)
    assert isinstance(fig, Figure)
    ax, ax_net = fig.axes[:2]
    assert len(ax.patches) == 3 * len(rates)
    assert labelled(ax) and labelled(ax_net)
    assert "share of readable pairs" in ax.get_ylabel().replace("\n", " ")
    assert "net win" in ax_net.get_ylabel()
    assert "95 % CI" in fig.get_suptitle() and "cluster_t" in fig.get_suptitle()
    # Bars in input order: win, tie, loss for each judge (dodged).
    heights = np.array([p.get_height() for p in ax.patches]).reshape(3, len(rates))
    np.testing.assert_allclose(heights[0], rates["win_rate"])
    np.testing.assert_allclose(heights[2], rates["loss_rate"])
    colors = {matplotlib.colors.to_hex(p.get_facecolor()) for p in ax.patches[: len(rates)]}
    assert colors == {plots.OUTCOME_COLORS["win"].lower()}
    # Error bars span exactly the CI.
    segs = [c for c in ax.collections if isinstance(c, LineCollection)][0].get_segments()
    np.testing.assert_allclose([s[0][1] for s in segs], rates["win_rate_ci_low"])
    np.testing.assert_allclose([s[1][1] for s in segs], rates["win_rate_ci_high"])
    net_segs = [c for c in ax_net.collections if isinstance(c, LineCollection)][0].get_segments()
    np.testing.assert_allclose([s[1][1] for s in net_segs], rates["net_win_ci_high"])
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert all("84 pairs\n15 tasks" in t for t in ticks)
    # The reader's name (provider and date dropped, words spaced): unique without them.
    assert ticks[0].startswith("Claude Sonnet 4") and "anthropic:" not in ticks[0]


def test_headline_marks_the_rows_the_audit_fails():
    # The report's headline table carries an ``audit`` column: a failing row is never plain.
    rates = rates_frame().assign(audit=["", "fail: judge_disagreement"])
    fig = plots.plot_headline(rates)
    ax, ax_net = fig.axes[:2]
    hatched = [bool(p.get_hatch()) for p in ax.patches]
    assert hatched == [False, True] * 3  # win, tie, loss bars of the second judge only
    ticks = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
    assert "audit" not in ticks[0]
    assert "audit fail: judge disagreement" in ticks[1]
    assert "audit fail" in ax_net.get_xticklabels()[1].get_text().replace("\n", " ")
    hollow = [ln for ln in ax_net.lines if ln.get_markerfacecolor() == "white"]
    (marker,) = hollow
    np.testing.assert_allclose(marker.get_ydata(), rates["net_win"].iloc[[1]])
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "hatched, hollow: the audit fails this row" in legend
    # Without a failing row nothing is marked.
    plain = plots.plot_headline(rates.assign(audit=""))
    assert not any(p.get_hatch() for p in plain.axes[0].patches)
    assert len(plain.legends[0].get_texts()) == 3


def test_headline_of_pairs_of_arms_says_each_pair_and_a_shared_column_once():
    # K arms (issue 34): the title names no WITH / WITHOUT; "v1 vs none" under each group;
    # a column the same in every row (the rubric) is said once, in the axis label.
    rates = rates_frame().assign(arm_a=["v1", "v2"], arm_b="none", rubric="with-without")
    fig = plots.plot_headline(rates, group=["arm_a", "arm_b", "rubric", "judge"])
    texts = " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))
    assert "each pair of arms" in texts and "WITH vs WITHOUT" not in texts
    ticks = [t.get_text().replace("\n", " ") for t in fig.axes[0].get_xticklabels()]
    assert ticks[0].startswith("v1 vs none") and ticks[1].startswith("v2 vs none")
    assert not any("with-without" in t for t in ticks)
    assert "rubric with-without" in fig.axes[1].get_xlabel()


def test_headline_nan_ci_and_single_judge():
    fig = plots.plot_headline(rates_frame(judges=("openai:gpt-5.4",), nan_ci=True))
    ax = fig.axes[0]
    assert len(ax.patches) == 3
    segs = [c for c in ax.collections if isinstance(c, LineCollection)][0].get_segments()
    assert all(np.allclose(s[0], s[1]) for s in segs)  # zero-length: nothing drawn
    fig.draw_without_rendering()  # NaN bounds do not break drawing


def test_headline_group_columns_and_errors():
    rates = rates_frame().assign(rubric=["with-without", "blind-pair"])
    fig = plots.plot_headline(rates, group=["rubric", "judge"])
    assert fig.axes[0].get_xticklabels()[0].get_text().startswith("with-without\nClaude Sonnet 4")
    assert fig.axes[0].get_xlabel() == "rubric · judge"
    one = rates_frame(judges=("x",)).drop(columns="judge")
    assert "all" in plots.plot_headline(one).axes[0].get_xticklabels()[0].get_text()
    with pytest.raises(ValueError, match="no group column"):
        plots.plot_headline(rates_frame().drop(columns="judge"))
    with pytest.raises(ValueError, match="lacks column"):
        plots.plot_headline(rates_frame().drop(columns="net_win_ci_low"))


def test_headline_from_win_rates(sample_frame):
    winrates = pytest.importorskip("evalstats.stats.rates")
    ww = sample_frame.loc[sample_frame["rubric"].astype(str) == "with-without"]
    rates = winrates.win_rates(ww, by="judge")
    fig = plots.plot_headline(rates)
    assert len(fig.axes[0].patches) == 3 * len(rates.diagnostics)  # the long result as is


# --------------------------------------------------------------------------- heatmap


def heat_frame():
    return pd.DataFrame(
        {
            "task_id": ["T1", "T1", "T2", "T2", "T3", "T3"],
            "replicate": [1, 2, 1, 2, 1, 2],
            "judge": "openai:gpt-5.4",
            "rubric": "with-without",
            "order": pd.Series([None] * 6, dtype=object),
            "status": ["ok", "ok", "ok", "invalid", "error", "no_answer"],
            "outcome": ["loss", "tie", "win", None, None, None],
        }
    )


def test_heatmap_cells_and_sorting():
    fig = plots.plot_task_heatmap(heat_frame())
    ax = fig.axes[0]
    assert labelled(ax) and ax.get_title() == "openai:gpt-5.4"
    grid = np.asarray(ax.images[0].get_array())
    cats = list(CELL_CATEGORIES)
    # T2 (net +1) first, T1 (net -0.5) next, T3 (no ok verdict) last.
    assert [t.get_text().split()[0] for t in ax.get_yticklabels()] == ["T2", "T1", "T3"]
    assert [cats[c] for c in grid[0]] == ["win", "invalid"]
    assert [cats[c] for c in grid[1]] == ["loss", "tie"]
    assert [cats[c] for c in grid[2]] == ["error", "no_answer"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "judge call failed" in legend and "not judged" not in legend


def test_heatmap_distinct_colours():
    colors = [plots.OUTCOME_COLORS[c] for c in CELL_CATEGORIES]
    assert len(set(colors)) == len(colors)


def test_heatmap_blind_orders_and_judges(sample_frame):
    fig = plots.plot_task_heatmap(sample_frame, rubric="blind-pair")
    assert len(fig.axes) == 2
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [f"{r}{o}" for r in (1, 2, 3) for o in ("W", "O")]
    assert "W = WITH shown first" in fig.axes[0].get_xlabel()
    # no_answer rows carry no order: they fill both order columns, never a column of their own.
    bp = sample_frame.loc[sample_frame["rubric"].astype(str) == "blind-pair"]
    assert (bp["status"] == "no_answer").any()  # the fixture's seed gives over-budget pairs
    grid = np.asarray(fig.axes[0].images[0].get_array())
    no_ans = CELL_CATEGORIES.index("no_answer")
    assert (grid == no_ans).any()
    assert ((grid == no_ans).sum(axis=1) % 2 == 0).all()
    one = plots.plot_task_heatmap(sample_frame, rubric="blind-pair", judge="openai:gpt-5.4")
    assert len(one.axes) == 1
    with pytest.raises(ValueError, match="several rubrics"):
        plots.plot_task_heatmap(sample_frame)
    with pytest.raises(ValueError, match="no rows for judge"):
        plots.plot_task_heatmap(sample_frame, rubric="blind-pair", judge="nobody")


def test_heatmap_missing_cells_are_white():
    f = heat_frame()
    other = f.iloc[:1].assign(judge="anthropic:claude")
    fig = plots.plot_task_heatmap(pd.concat([f, other], ignore_index=True))
    grid = np.asarray(fig.axes[0].images[0].get_array())  # anthropic:claude (sorted first)
    assert (grid == CELL_CATEGORIES.index("missing")).sum() == 5
    assert "not judged" in [t.get_text() for t in fig.legends[0].get_texts()]


# --------------------------------------------------------------------------- confusion


def test_confusion_counts_and_row_percentages():
    table = np.array([[10, 3, 1], [4, 20, 5], [0, 0, 0]])
    fig = plots.plot_confusion(table, judges=("A:judge", "B:judge"), kappa=0.5512)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert texts[:3] == ["10\n71 %", "3\n21 %", "1\n7 %"]
    assert texts[6:] == ["0\n–", "0\n–", "0\n–"]
    assert ax.get_xlabel() == "B:judge (verdict)" and ax.get_ylabel() == "A:judge (verdict)"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["loss", "tie", "win"]
    title = ax.get_title().replace("\n", " ")
    assert "agreement 30/43 (70 %)" in title and "κ = 0.55" in title


def test_confusion_from_contingency_table_and_kappa_result():
    agreement = pytest.importorskip("evalstats.stats.agreement")
    a = ["win", "tie", "win", "loss", "tie", "win"]
    b = ["win", "win", "win", "loss", "tie", "tie"]
    table = agreement.contingency_table(a, b, categories=["loss", "tie", "win"])
    res = agreement.cohen_kappa(a, b, categories=["loss", "tie", "win"])
    fig = plots.plot_confusion(table, kappa=res)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["loss", "tie", "win"]
    title = fig.axes[0].get_title().replace("\n", " ")
    assert f"κ = {res.kappa:.2f} [{res.ci_low:.2f}, {res.ci_high:.2f}]" in title


def test_confusion_validation():
    with pytest.raises(ValueError, match="square"):
        plots.plot_confusion(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        plots.plot_confusion([[1, -1], [0, 1]])
    with pytest.raises(ValueError, match="labels"):
        plots.plot_confusion(np.ones((3, 3)), labels=["a", "b"])
    fig = plots.plot_confusion(pd.DataFrame([[1, 2], [3, 4]], index=["x", "y"], columns=["x", "y"]))
    assert "judge 1" in fig.axes[0].get_ylabel()


# --------------------------------------------------------------------------- cost ratios


def test_cost_ratios_dedupes_pairs_and_draws_geometric_mean(sample_frame):
    cost = pd.DataFrame(
        {
            "statistic": ["tokens_geomean_ratio"],
            "estimate": [0.7],
            "ci_low": [0.6],
            "ci_high": [0.8],
        }
    )
    fig = plots.plot_cost_ratios(sample_frame, cost=cost)
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and labelled(ax)
    assert "log scale" in ax.get_xlabel() and "WITH / WITHOUT" in ax.get_xlabel()
    assert "cost table" in " ".join(ax.get_title().split())
    assert "cost table" not in " ".join(fig.axes[1].get_title().split())
    pairs = sample_frame.drop_duplicates(["task_id", "replicate"])
    assert sum(p.get_height() for p in ax.containers[0]) == len(pairs)  # one count per pair
    xs = sorted(float(line.get_xdata()[0]) for line in ax.get_lines() if len(line.get_xdata()) == 2)
    assert any(np.isclose(x, 0.7) for x in xs) and any(np.isclose(x, 1.0) for x in xs)
    assert any("CI [0.60×, 0.80×]" in t.get_text() for t in ax.get_legend().get_texts())
    assert "wall-clock" in fig.axes[1].get_xlabel()
    # Without a table: the geometric mean of the pairs drawn, no band.
    ax = plots.plot_cost_ratios(sample_frame).axes[0]
    assert "Tokens (billed)" in ax.get_title()  # the simulation imports harness usage
    gm = float(sps.gmean((pairs["billed_with"] / pairs["billed_without"]).to_numpy(dtype=float)))
    assert any(f"geometric mean {gm:.2f}×" in t.get_text() for t in ax.get_legend().get_texts())
    assert not any("CI" in t.get_text() for t in ax.get_legend().get_texts())


def test_cost_ratios_tokens_only_and_bad_pairs():
    pairs = pd.DataFrame({"tokens_with": [100, 200, 0, 50], "tokens_without": [100, 100, 10, 0]})
    fig = plots.plot_cost_ratios(pairs)
    assert len(fig.axes) == 1
    assert "2 pairs without a ratio left out" in fig.axes[0].get_title()
    equal = pd.DataFrame({"tokens_with": [100, 100], "tokens_without": [100, 100]})
    assert plots.plot_cost_ratios(equal).axes[0].get_xscale() == "log"
    with pytest.raises(ValueError, match="no pair"):
        plots.plot_cost_ratios(pd.DataFrame({"tokens_with": [0], "tokens_without": [5]}))


# --------------------------------------------------------------------------- dimensions


def test_dimension_means_against_per_task_t_interval(sample_frame):
    res = dimension_means(sample_frame, confidence=0.9)
    ok = sample_frame.loc[
        (sample_frame["status"] == "ok") & sample_frame["with_correctness"].notna()
    ]
    for dim in BLIND_DIMENSIONS:
        for arm in ("with", "without", "difference"):
            if arm == "difference":
                v = ok[f"with_{dim}"].astype(float) - ok[f"without_{dim}"].astype(float)
            else:
                v = ok[f"{arm}_{dim}"].astype(float)
            m = v.groupby(ok["task_id"]).mean().to_numpy()
            lo, hi = sps.t.interval(0.9, len(m) - 1, loc=m.mean(), scale=sps.sem(m))
            got = res.loc[(res["dim"] == dim) & (res["arm"] == arm)].iloc[0]
            np.testing.assert_allclose(
                [got["mean"], got["ci_low"], got["ci_high"]], [m.mean(), lo, hi], rtol=1e-12
            )
            assert got["n_tasks"] == len(m) and got["n"] == len(v)


def test_dimension_means_single_task_has_nan_ci():
    f = pd.DataFrame(
        {
            "task_id": ["a", "a"],
            "status": "ok",
            **{f"with_{d}": [4, 5] for d in BLIND_DIMENSIONS},
            **{f"without_{d}": [3, 3] for d in BLIND_DIMENSIONS},
        }
    )
    res = dimension_means(f)
    assert res["ci_low"].isna().all() and (res["n_tasks"] == 1).all()
    fig = plots.plot_dimension_scores(f)
    assert len(fig.axes) == 2


def test_dimension_plot_from_frame_and_precomputed(sample_frame):
    fig = plots.plot_dimension_scores(sample_frame)
    ax, ax_d = fig.axes
    assert labelled(ax) and labelled(ax_d)
    # "hallucination", "completeness" are wider than a quarter of the difference panel: a dot
    # plot with the dimensions down the y axis.
    assert ax.get_xlabel() == "mean score (1–5)"
    assert [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()] == [
        d.replace("_", " ") for d in BLIND_DIMENSIONS
    ]
    assert "95 % CI" in ax.get_title()
    summary = pd.DataFrame(
        {
            "dim": ["correctness", "correctness", "specificity", "specificity"],
            "arm": ["with", "without"] * 2,
            "mean": [4.0, 3.5, 3.8, 3.9],
            "ci_low": [3.7, np.nan, 3.5, 3.6],
            "ci_high": [4.3, np.nan, 4.1, 4.2],
        }
    )
    fig = plots.plot_dimension_scores(summary)
    assert len(fig.axes) == 1 and len(fig.axes[0].get_xticklabels()) == 2
    assert fig.axes[0].get_ylabel() == "mean score (1–5)"  # short names: along x
    with pytest.raises(ValueError, match="arms"):
        plots.plot_dimension_scores(summary.loc[summary["arm"] == "with"])


# --------------------------------------------------------------------------- named arms

ARMS = {"with": "Serena MCP", "without": "plain Claude Code"}


def _texts(fig) -> list[str]:
    """Every text the figure holds, one line each (wrapped labels joined again)."""
    from matplotlib.text import Text

    return [" ".join(t.get_text().split()) for t in fig.findobj(Text) if t.get_text().strip()]


def _named_figures(sample_frame):
    dims = dimension_means(sample_frame.loc[sample_frame["rubric"] == "blind-pair"])
    return {
        "headline": lambda **kw: plots.plot_headline(rates_frame(), **kw),
        "heatmap": lambda **kw: plots.plot_task_heatmap(sample_frame, rubric="blind-pair", **kw),
        "cost": lambda **kw: plots.plot_cost_ratios(sample_frame, **kw),
        "dimensions": lambda **kw: plots.plot_dimension_scores(dims, **kw),
    }


def test_named_arms_replace_with_and_without_in_every_label(sample_frame):
    for name, draw in _named_figures(sample_frame).items():
        default, named = _texts(draw()), _texts(draw(arm_names=ARMS))
        assert any("WITH" in t for t in default), name
        assert not any("WITH" in t for t in named), (name, [t for t in named if "WITH" in t])
        assert any("Serena MCP" in t for t in named), name
        # The same texts otherwise: only the arms' names changed.
        swap = {"WITHOUT": ARMS["without"], "WITH": ARMS["with"]}
        renamed = [t.replace("WITHOUT", "\0").replace("WITH", swap["WITH"]) for t in default]
        renamed = [t.replace("\0", swap["WITHOUT"]) for t in renamed]
        assert sorted(renamed) == sorted(named), name


def test_named_arms_where_each_figure_says_them(sample_frame):
    fig = plots.plot_headline(rates_frame(), arm_names=ARMS)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Serena MCP better (win)", "equivalent (tie)", "Serena MCP worse (loss)"]
    assert fig.get_suptitle().startswith("Headline: Serena MCP vs plain Claude Code (")
    fig = plots.plot_cost_ratios(sample_frame, arm_names=ARMS)
    label = fig.axes[0].get_xlabel().replace("\n", " ")
    assert "token ratio Serena MCP / plain Claude Code" in label
    assert fig.get_suptitle() == "Cost of Serena MCP relative to plain Claude Code, per pair"
    fig = plots.plot_task_heatmap(sample_frame, rubric="blind-pair", arm_names=ARMS)
    assert "W = Serena MCP shown first, O = plain Claude Code first" in " ".join(
        fig.axes[0].get_xlabel().split()
    )
    assert "win (Serena MCP better)" in [t.get_text() for t in fig.legends[0].get_texts()]
    dims = dimension_means(sample_frame.loc[sample_frame["rubric"] == "blind-pair"])
    fig = plots.plot_dimension_scores(dims, arm_names={"without": "plain Claude Code"})
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "WITH",
        "plain Claude Code",
    ]
    assert " ".join(fig.axes[1].get_xlabel().split()) == "WITH − plain Claude Code (points)"


@pytest.mark.parametrize(
    ("arm_names", "error", "match"),
    [
        ({"control": "x"}, ValueError, "unknown key"),
        ({"with": ""}, ValueError, "non-empty string"),
        ({"with": 3}, ValueError, "non-empty string"),
        (["Serena MCP"], TypeError, "mapping"),
    ],
)
def test_arm_names_are_checked(sample_frame, arm_names, error, match):
    for name, draw in _named_figures(sample_frame).items():
        with pytest.raises(error, match=match):
            draw(arm_names=arm_names)
            pytest.fail(name)


def test_arm_name_whitespace_collapses_to_one_line():
    fig = plots.plot_headline(rates_frame(), arm_names={"with": "  Serena\n MCP "})
    assert [t.get_text() for t in fig.legends[0].get_texts()][0] == "Serena MCP better (win)"


# --------------------------------------------------------------------------- power


def test_power_curve_lines_and_reference():
    power = pytest.importorskip("evalstats.stats.power")
    curve = power.power_curve([0.1, 0.2, 0.3], [10, 20, 40, 80], power.Design(3, 0.3, 0.3))
    fig = plots.plot_power_curve(curve, mark_n_tasks=15)
    ax = fig.axes[0]
    assert labelled(ax) and "number of tasks" in ax.get_xlabel() and "power" in ax.get_ylabel()
    lines = ax.get_lines()
    assert len(lines) == 3 + 2  # one per net win, the 80 % line, the design line
    np.testing.assert_allclose(
        lines[0].get_ydata(), curve.loc[curve["net_win"] == 0.1, "power"].to_numpy()
    )
    assert np.allclose(lines[3].get_ydata(), 0.8)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:3] == ["+10 pp", "+20 pp", "+30 pp"]
    assert ax.get_ylim() == (0.0, 1.02)


def test_power_curve_two_hue_columns_and_single_line():
    curve = pd.DataFrame(
        {
            "n_tasks": [10, 20] * 4,
            "net_win": [0.1] * 4 + [0.2] * 4,
            "n_replicates": [1, 1, 3, 3] * 2,
            "power": np.linspace(0.1, 0.9, 8),
        }
    )
    fig = plots.plot_power_curve(curve, target=0.9)
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "net win +10 pp, 3 replicates" in legend and "target 90 % power" in legend
    single = plots.plot_power_curve(curve.iloc[:2].drop(columns=["net_win", "n_replicates"]))
    assert len(single.axes[0].get_lines()) == 2
    with pytest.raises(ValueError, match="target"):
        plots.plot_power_curve(curve, target=1.2)


# --------------------------------------------------------------------------- saving, hygiene


@pytest.mark.slow  # draws every figure twice
def test_layout_without_a_draw_gives_the_files_a_full_layout_draw_gives():
    """layout_figure runs the constrained-layout engine without drawing: the laid-out
    positions, the tight box and every file's bytes equal those of matplotlib's own
    ``draw_without_rendering`` layout (the oracle), for figures with legends, colour
    bars, rotated tick labels and titles."""
    import pickle

    from evalstats.plots._base import STYLE  # private: the shared figure style, pinned

    def by_drawing(fig):
        with matplotlib.rc_context(STYLE):
            fig.draw_without_rendering()
            bbox = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
            fig.set_layout_engine("none")
        return bbox

    figures = [
        plots.plot_headline(rates_frame(), width="column"),
        plots.plot_headline(rates_frame(), title="Net win (WITH − WITHOUT)"),
        plots.plot_task_heatmap(heat_frame()),
        plots.plot_confusion(np.array([[5, 1, 0], [2, 7, 1], [0, 1, 4]]), kappa=0.5512),
    ]
    for fig in figures:
        oracle = pickle.loads(pickle.dumps(fig))
        bbox, expected_bbox = plots.layout_figure(fig), by_drawing(oracle)
        assert bbox.bounds == expected_bbox.bounds
        for ax, ax_oracle in zip(fig.axes, oracle.axes, strict=True):
            assert ax.get_position().bounds == ax_oracle.get_position().bounds
        ours = plots.render_figure(fig, formats=("svg", "pdf", "png"), bbox=bbox)
        theirs = plots.render_figure(oracle, formats=("svg", "pdf", "png"), bbox=expected_bbox)
        assert ours == theirs


def test_save_figure_writes_png_and_svg(tmp_path):
    fig = plots.plot_headline(rates_frame())
    paths = plots.save_figure(fig, tmp_path / "out" / "headline", dpi=250, formats=("png", "svg"))
    assert [p.name for p in paths] == ["headline.png", "headline.svg"]
    png = paths[0].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    i = png.find(b"pHYs")
    ppm_x, ppm_y, unit = struct.unpack(">IIB", png[i + 4 : i + 13])
    assert unit == 1 and round(ppm_x * 0.0254) == 250
    root = ET.parse(paths[1]).getroot()
    assert root.tag.endswith("svg")
    svg = paths[1].read_text()
    assert "share of readable pairs" in svg  # text kept as text
    assert oct(paths[0].stat().st_mode & 0o777) == "0o644"
    # Deterministic bytes: the same figure, built again, gives the same files.
    again = plots.save_figure(plots.plot_headline(rates_frame()), tmp_path / "again" / "headline",
                              dpi=250, formats=("png", "svg"))  # fmt: skip
    assert again[1].read_bytes() == paths[1].read_bytes()
    assert again[0].read_bytes() == png


def test_save_figure_validation(tmp_path):
    fig = Figure()
    with pytest.raises(ValueError, match="dpi"):
        plots.save_figure(fig, tmp_path / "x", dpi=100)
    with pytest.raises(ValueError, match="name a file"):
        plots.save_figure(fig, tmp_path / "..")
    with pytest.raises(ValueError, match="formats"):
        plots.save_figure(fig, tmp_path / "x", formats=("gif",))
    with pytest.raises(TypeError):
        plots.save_figure(object(), tmp_path / "x")
    assert [p.suffix for p in plots.save_figure(fig, tmp_path / "x", formats=("pdf",))] == [".pdf"]
    # A stem with a dot keeps it: "fig.v2" -> "fig.v2.pdf".
    assert plots.save_figure(fig, tmp_path / "fig.v2", formats=("pdf",))[0].name == "fig.v2.pdf"


def test_plots_leave_rcparams_alone():
    before = dict(matplotlib.rcParams)
    plots.plot_headline(rates_frame())
    after = dict(matplotlib.rcParams)
    assert before == after


@pytest.mark.slow  # starts a Python subprocess
def test_no_pyplot_needed(tmp_path):
    code = (
        "import sys, pandas as pd\n"
        "from evalstats import plots\n"
        "c = pd.DataFrame({'n_tasks': [10, 20], 'power': [0.2, 0.5]})\n"
        f"plots.save_figure(plots.plot_power_curve(c), {str(tmp_path / 'p')!r})\n"
        "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot was imported'\n"
    )
    env = {**os.environ, "MPLBACKEND": ""}
    env.pop("MPLBACKEND")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
    assert (tmp_path / "p.png").exists()
