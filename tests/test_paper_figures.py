"""Figures at a paper's column width: labels never broken inside a word, value labels clear
of the error bars (window extents after ``canvas.draw()``).

Drawing a figure and measuring every label takes 2-6 s on a shared machine: marked slow.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection

from evalstats import plots
from evalstats.frames import load_frame
from evalstats.stats import win_rates

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


@pytest.fixture(scope="module")
def rates():
    return win_rates(load_frame(SAMPLE), by=["rubric", "judge"]).wide()


def _bar_segments(ax) -> list[np.ndarray]:
    """Each error bar's vertical segment, in display pixels ((x0, y0), (x1, y1))."""
    out = []
    for coll in ax.collections:
        if isinstance(coll, LineCollection):
            for seg in coll.get_segments():
                if len(seg) == 2 and np.all(np.isfinite(seg)):
                    out.append(ax.transData.transform(seg))
    return out


def _caps(ax) -> list[tuple[float, float, float]]:
    """Each error bar cap as (x, y, half width) in pixels."""
    out = []
    dpi = ax.figure.dpi
    for line in ax.lines:
        if line.get_marker() in ("_", 2, 3) or line.get_marker() == "_":
            half = line.get_markersize() * dpi / 72 / 2
            xy = np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float)
            for x, y in ax.transData.transform(xy[np.isfinite(xy).all(axis=1)]):
                out.append((x, y, half))
    return out


def assert_labels_clear_of_error_bars(fig) -> int:
    """No annotation's window extent is crossed by an error bar or its cap; returns the
    number of (label, bar) pairs checked."""
    canvas = FigureCanvasAgg(fig)  # the package's figures come without a pyplot canvas
    canvas.draw()
    renderer = canvas.get_renderer()
    checked = 0
    for ax in fig.axes:
        segs, caps = _bar_segments(ax), _caps(ax)
        for text in ax.texts:
            if not text.get_text().strip() or not text.get_visible():
                continue
            bb = text.get_window_extent(renderer).shrunk(0.98, 0.98)
            for (x0, y0), (x1, y1) in segs:
                checked += 1
                xs_in = min(x0, x1) <= bb.x1 and max(x0, x1) >= bb.x0
                ys_in = min(y0, y1) <= bb.y1 and max(y0, y1) >= bb.y0
                assert not (xs_in and ys_in), (text.get_text(), (x0, y0, x1, y1), bb)
            for x, y, half in caps:
                hit = bb.x0 <= x + half and x - half <= bb.x1 and bb.y0 <= y <= bb.y1
                assert not hit, (text.get_text(), (x, y), bb)
    return checked


def assert_no_word_broken(fig) -> None:
    for ax in fig.axes:
        for t in ax.get_xticklabels():
            for line in t.get_text().split("\n"):
                # A break after a hyphen ("claude-sonnet-" / "4") or inside a name.
                assert not line.rstrip().endswith("-"), t.get_text()


@pytest.mark.slow
def test_the_check_can_fail(rates):
    fig = plots.plot_headline(rates, group=["rubric", "judge"], width="column")
    ax = fig.axes[0]
    seg = _bar_segments(ax)[0]
    x, y = ax.transData.inverted().transform(seg.mean(axis=0))
    ax.annotate("over the bar", (x, y), ha="center", va="center")
    with pytest.raises(AssertionError, match="over the bar"):
        assert_labels_clear_of_error_bars(fig)


@pytest.mark.slow
@pytest.mark.parametrize("width", ["column", "page"])
def test_headline_labels_whole_and_clear_of_error_bars(rates, width):
    fig = plots.plot_headline(rates, group=["rubric", "judge"], width=width)
    assert assert_labels_clear_of_error_bars(fig) > 0
    assert_no_word_broken(fig)
    ticks = " ".join(t.get_text() for ax in fig.axes for t in ax.get_xticklabels())
    # Judges as a reader names them, on whole lines: never "claude-sonnet-" / "4".
    assert "Claude Sonnet 4" in ticks.replace("\n", " ") and "claude-sonnet" not in ticks


@pytest.mark.slow
def test_headline_long_names_at_column_width(rates):
    long = rates.copy()
    long["judge"] = (
        long["judge"]
        .astype(str)
        .str.replace("openai:gpt-5.4", "openai:gpt-4o-mini-long-fine-tuned-judge-2024-07-18")
    )
    long["rubric"] = long["rubric"].astype(str) + "-with-a-longer-user-name"
    fig = plots.plot_headline(long, group=["rubric", "judge"], width="column")
    assert_labels_clear_of_error_bars(fig)
    assert_no_word_broken(fig)


@pytest.mark.slow
def test_length_bias_takes_width_and_is_clear_of_error_bars():
    rng = np.random.default_rng(0)
    rows = []
    for model in ("m1", "m2"):
        for judge in ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4"):
            x = np.sort(rng.normal(0, 0.5, 5))
            p = 1 / (1 + np.exp(-x))
            rows += [
                {
                    "model": model,
                    "judge": judge,
                    "x": "log_ratio",
                    "x_mean": xi,
                    "p_win": pi,
                    "ci_low": max(0.0, pi - 0.1),
                    "ci_high": min(1.0, pi + 0.1),
                    "n": 40,
                    "slope": 1.0,
                    "slope_ci_low": 0.5,
                    "slope_ci_high": 1.5,
                }
                for xi, pi in zip(x, p, strict=True)
            ]
    table = pd.DataFrame(rows)
    col = plots.plot_length_bias(table, width="column")
    page = plots.plot_length_bias(table, width="page")
    assert col.get_size_inches()[0] < page.get_size_inches()[0]
    for fig in (col, page):
        assert_labels_clear_of_error_bars(fig)
        assert_no_word_broken(fig)
