"""Every figure at width="column" and width="page": no overlapping text, nothing off the canvas.

The figures are drawn on the sample data (data/sample, through evalstats.frames.load_frame and
the stats functions) and on the AlpacaEval annotations in ../shared/data for the length-bias
figure; then every drawn text (tick labels, axis labels, titles, legend texts, value labels)
is measured with the renderer.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import warnings
from pathlib import Path

# Matplotlib reads MPLCONFIGDIR when first imported: a private directory, as in test_plots.py.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text

from evalstats import plots
from evalstats.frames import load_frame, select_rubric
from evalstats.stats import (
    Design,
    contingency_table,
    cost_ratios,
    dimension_means,
    power_curve,
    win_rates,
)

# Integration (slow: make test runs it, make check does not): draws every figure at two widths and measures its texts.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
SHARED = REPO.parent / "shared" / "data" / "alpaca_eval"
WIDTHS = ("column", "page")


@pytest.fixture(scope="module")
def frame():
    return load_frame(SAMPLE)


@pytest.fixture(scope="module")
def figures(frame):
    """name -> callable(width) drawing that figure from the sample."""
    rates = win_rates(frame, by=["rubric", "judge"])
    blind, _ = select_rubric(frame, "blind-pair")
    ww, _ = select_rubric(frame, "with-without")
    wide = (
        ww.loc[ww["status"] == "ok"]
        .pivot_table(
            index=["task_id", "replicate"],
            columns="judge",
            values="outcome",
            aggfunc="first",
            observed=True,
        )
        .dropna()
    )
    a, b = wide.columns[:2]
    table = contingency_table(wide[a], wide[b], categories=["loss", "tie", "win"])
    curve = power_curve([0.1, 0.2, 0.3], [5, 10, 20, 40, 80], Design(6, 0.3, 0.35))
    dims = dimension_means(blind)
    return {
        "headline": lambda w, **kw: plots.plot_headline(
            rates, group=["rubric", "judge"], width=w, **kw
        ),
        "heatmap_blind": lambda w, **kw: plots.plot_task_heatmap(
            frame, rubric="blind-pair", width=w, **kw
        ),
        "heatmap_ww": lambda w, **kw: plots.plot_task_heatmap(
            frame, rubric="with-without", width=w, **kw
        ),
        "confusion": lambda w: plots.plot_confusion(
            table, judges=(str(a), str(b)), kappa=0.41, width=w
        ),
        "cost": lambda w, **kw: plots.plot_cost_ratios(
            frame, cost=cost_ratios(frame), width=w, **kw
        ),
        "dimensions": lambda w, **kw: plots.plot_dimension_scores(dims, width=w, **kw),
        "power": lambda w: plots.plot_power_curve(curve, hue="net_win", mark_n_tasks=15, width=w),
    }


def drawn_texts(fig) -> list[Text]:
    """The texts the renderer draws: visible, non-empty, and tick labels only of drawn ticks."""
    FigureCanvasAgg(fig)
    with warnings.catch_warnings():
        # "constrained_layout not applied because axes sizes collapsed to zero" is a failure.
        warnings.simplefilter("error")
        fig.canvas.draw()
    all_tick_labels, drawn_tick_labels = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                all_tick_labels |= {id(tick.label1), id(tick.label2)}
            for tick in axis._update_ticks():
                drawn_tick_labels |= {id(tick.label1), id(tick.label2)}
    out = []
    for t in fig.findobj(Text):
        if not t.get_visible() or not t.get_text().strip():
            continue
        if id(t) in all_tick_labels and id(t) not in drawn_tick_labels:
            continue
        out.append(t)
    return out


def overlaps(fig) -> tuple[list[tuple[str, str]], list[str]]:
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in texts]
    canvas = fig.bbox
    tol = 0.5  # pixels: touching boxes of adjacent glyph rows are not an overlap
    pairs = []
    for (t1, b1), (t2, b2) in itertools.combinations(zip(texts, boxes, strict=True), 2):
        w = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        h = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        if w > tol and h > tol:
            pairs.append((t1.get_text(), t2.get_text()))
    outside = [
        t.get_text()
        for t, b in zip(texts, boxes, strict=True)
        if b.x0 < canvas.x0 - tol
        or b.y0 < canvas.y0 - tol
        or b.x1 > canvas.x1 + tol
        or b.y1 > canvas.y1 + tol
    ]
    return pairs, outside


def check_layout(fig, width: str) -> None:
    assert fig.get_size_inches()[0] == pytest.approx(plots.WIDTHS[width])
    pairs, outside = overlaps(fig)
    assert not pairs, f"overlapping texts: {pairs}"
    assert not outside, f"texts outside the figure: {outside}"
    sizes = [t.get_fontsize() for t in drawn_texts(fig)]
    assert min(sizes) >= min(6.0, matplotlib.rcParams["font.size"]) - 1e-9


NAMES = ("headline", "heatmap_blind", "heatmap_ww", "confusion", "cost", "dimensions", "power")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", NAMES)
def test_figure_lays_out_without_overlap(figures, name, width):
    check_layout(figures[name](width), width)


@pytest.mark.parametrize(
    ("width", "font_size"), [("column", 8.0), ("column", 11.0), ("page", 8.0), ("page", 12.0)]
)
def test_layout_follows_rcparams_font_size(figures, width, font_size):
    with matplotlib.rc_context({"font.size": font_size}):
        fig = figures["headline"](width)
    check_layout(fig, width)
    ticks = fig.axes[1].get_xticklabels()  # the net-win panel is labelled at both widths
    # xtick.labelsize is "small" (0.833 × font.size) under the package style.
    assert ticks[0].get_fontsize() == pytest.approx(font_size * 0.833, rel=0.01)


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data (AlpacaEval annotations) absent")
@pytest.mark.parametrize("width", WIDTHS)
def test_length_bias_lays_out_without_overlap(width):
    from evalstats.adapters import alpaca_eval
    from evalstats.stats import models

    paths = sorted(SHARED.glob("*.annotations.jsonl.gz"))
    frame = alpaca_eval.load(paths)
    table = models.length_bias(frame, bins=5)
    check_layout(plots.plot_length_bias(table, confidence=0.95, width=width), width)


def test_the_checker_sees_overlap_and_overflow():
    # A check that cannot fail is no check: two texts drawn on top of each other, one off
    # the canvas.
    fig = plots.PlotFigure(figsize=(3.5, 2.0), layout="constrained")
    ax = fig.subplots()
    ax.text(0.5, 0.5, "overlapping text")
    ax.text(0.52, 0.5, "overlapping text")
    ax.text(1.5, 0.5, "far outside", transform=ax.transAxes, in_layout=False)
    pairs, outside = overlaps(fig)
    assert pairs == [("overlapping text", "overlapping text")]
    assert outside == ["far outside"]


# The arms named, as a data directory's arms.toml names them: a long
# name must wrap (legends, axis labels, titles) rather than overlap or run off the figure.
LONG_ARMS = {"with": "Serena MCP code-intelligence server", "without": "plain Claude Code"}
NAMED = ("headline", "heatmap_blind", "heatmap_ww", "cost", "dimensions")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", NAMED)
def test_named_arms_lay_out_without_overlap(figures, name, width):
    fig = figures[name](width, arm_names=LONG_ARMS)
    check_layout(fig, width)
    # Wrapped, the names span lines: compare the drawn texts with their line breaks removed.
    drawn = " ".join(" ".join(t.get_text().split()) for t in drawn_texts(fig))
    assert "Serena MCP code-intelligence server" in drawn.replace("- ", "-")
    assert "WITH" not in drawn.replace("WITHOUT", "")  # every label names the arm
