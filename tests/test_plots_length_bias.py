"""plot_length_bias: one panel per model, one line per judge, Wilson bars, labelled axes."""

from __future__ import annotations

import os
import tempfile

# Matplotlib reads MPLCONFIGDIR when first imported: a private directory, as in test_plots.py.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

from evalstats import plots
from evalstats.adapters import alpaca_eval
from evalstats.stats import models, proportion_ci

JUDGES = ("alpaca_eval_cot_gpt4_turbo_fn", "weighted_alpaca_eval_gpt4_turbo")


def synthetic_frame(seed: int = 0, n: int = 200) -> pd.DataFrame:
    """A verdict frame from AlpacaEval-like records whose wins rise with relative length."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("alpaca-7b", "claude-2.1"):
        len_base = rng.integers(200, 3000, n)
        len_model = np.maximum(1, (len_base * np.exp(rng.normal(-0.5, 0.8, n))).astype(int))
        logit = -1.5 + 1.3 * np.log(len_model / len_base)
        for judge in JUDGES:
            win = rng.random(n) < 1 / (1 + np.exp(-logit))
            for i in range(n):
                rows.append(
                    {
                        "instruction_id": f"i{i:04d}",
                        "generator_1": "gpt4_1106_preview",
                        "generator_2": model,
                        "annotator": judge,
                        "preference": 2.0 if win[i] else 1.0,
                        "len_output_1": int(len_base[i]),
                        "len_output_2": int(len_model[i]),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    path = tmp_path_factory.mktemp("lb") / "a.annotations.jsonl"
    synthetic_frame().to_json(path, orient="records", lines=True)
    frame = alpaca_eval.load(path)
    return models.length_bias(frame, bins=5).rename(columns={"judge": "annotator"})


def _error_segments(ax) -> list[np.ndarray]:
    return [s for c in ax.collections if isinstance(c, LineCollection) for s in c.get_segments()]


def _data_lines(ax) -> list:
    """The data line of each errorbar series, in drawing order (caps are separate lines)."""
    return [c.lines[0] for c in ax.containers if isinstance(c, ErrorbarContainer)]


def test_one_panel_per_model_one_line_per_judge(table):
    fig = plots.plot_length_bias(table, confidence=0.95)
    assert isinstance(fig, Figure)
    axes = fig.axes
    assert len(axes) == 2
    assert [ax.get_title().split(" (")[0] for ax in axes] == ["alpaca-7b", "claude-2.1"]
    for ax in axes:
        assert ax.get_xscale() == "log"
        assert "÷" in ax.get_xlabel() and "characters" in ax.get_xlabel()
        data_lines = _data_lines(ax)
        assert len(data_lines) == len(JUDGES)
        assert all(len(ln.get_xdata()) == 5 for ln in data_lines)
        # Lines differ by colour and style (greyscale printing).
        assert len({ln.get_color() for ln in data_lines}) == 2
        assert len({ln.get_linestyle() for ln in data_lines}) == 2
        colours = {matplotlib.colors.to_hex(ln.get_color()) for ln in data_lines}
        assert colours <= {c.lower() for c in plots.OKABE_ITO.values()}
    assert "P(model wins)" in axes[0].get_ylabel()
    assert "95 % Wilson CI" in fig.get_suptitle()


def test_points_and_error_bars_are_the_table(table):
    fig = plots.plot_length_bias(table)
    for ax, model in zip(fig.axes, ["alpaca-7b", "claude-2.1"], strict=True):
        data_lines = _data_lines(ax)
        segs = _error_segments(ax)
        assert len(segs) == 2 * 5
        for k, (line, judge) in enumerate(zip(data_lines, JUDGES, strict=True)):
            part = table.loc[(table["model"] == model) & (table["annotator"] == judge)]
            part = part.sort_values("x_mean")
            np.testing.assert_allclose(line.get_ydata(), part["p_win"])
            # x is the bin's mean ratio, offset by a small fixed dodge per judge.
            shift = np.log(np.asarray(line.get_xdata(), dtype=float)) - part["x_mean"]
            assert np.allclose(shift, shift.iloc[0]) and abs(shift.iloc[0]) < 0.1
            bars = segs[5 * k : 5 * (k + 1)]
            np.testing.assert_allclose([s[0][1] for s in bars], part["ci_low"])
            np.testing.assert_allclose([s[1][1] for s in bars], part["ci_high"])
            ci = proportion_ci(part["wins"], part["n"])  # Wilson, the independent oracle
            np.testing.assert_allclose(part["ci_low"], ci.ci_low, rtol=1e-12)


def test_reference_lines_and_slope_annotations(table):
    fig = plots.plot_length_bias(table)
    for ax in fig.axes:
        hlines = [ln for ln in ax.get_lines() if list(ln.get_ydata()) == [0.5, 0.5]]
        assert len(hlines) == 1  # 50 %
        vlines = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [1.0, 1.0]]
        assert len(vlines) == 1  # equal lengths
        texts = [t.get_text() for t in ax.texts]
        assert any("logistic slope" in t for t in texts)
    model = "claude-2.1"
    s = table.loc[(table["model"] == model) & (table["annotator"] == JUDGES[0]), "slope"].iloc[0]
    assert any(f"{s:.2f}" in t.get_text() for t in fig.axes[1].texts)
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()][-2:] == list(JUDGES)


def test_difference_measure_single_panel_and_missing_slope(tmp_path):
    path = tmp_path / "a.annotations.jsonl"
    synthetic_frame(seed=3, n=120).to_json(path, orient="records", lines=True)
    frame = alpaca_eval.load(path)
    diff = models.length_bias(frame, bins=4, x="diff")
    one = diff.loc[diff["model"] == "claude-2.1"].drop(columns=["slope"])
    fig = plots.plot_length_bias(one, hue="judge", facet=None)
    (ax,) = fig.axes
    assert ax.get_xscale() == "linear" and "−" in ax.get_xlabel()
    assert [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [0.0, 0.0]]
    assert not any("slope" in t.get_text() for t in ax.texts)
    assert "CI" in fig.get_suptitle()


def test_nan_interval_draws_no_bar():
    t = pd.DataFrame(
        {
            "model": "m",
            "annotator": "j",
            "x": "log_ratio",
            "x_mean": [-0.5, 0.5],
            "p_win": [0.2, 0.6],
            "ci_low": [np.nan, 0.4],
            "ci_high": [np.nan, 0.8],
            "n": [10, 10],
        }
    )
    fig = plots.plot_length_bias(t)
    segs = _error_segments(fig.axes[0])
    lengths = sorted(abs(s[1][1] - s[0][1]) for s in segs)
    assert lengths[0] == 0.0 and lengths[1] == pytest.approx(0.4)


def test_validation():
    with pytest.raises(ValueError, match="lacks column"):
        plots.plot_length_bias(pd.DataFrame({"x_mean": [0.1]}))
    base = pd.DataFrame(
        {"x_mean": [0.1], "p_win": [0.5], "ci_low": [0.2], "ci_high": [0.8], "n": [4]}
    )
    with pytest.raises(ValueError, match="no rows"):
        plots.plot_length_bias(base.iloc[:0])
    with pytest.raises(ValueError, match="one measure"):
        plots.plot_length_bias(base.assign(x=["chars"]))
    with pytest.raises(ValueError, match="hue column"):
        plots.plot_length_bias(base, hue="judge")
    fig = plots.plot_length_bias(base)  # no hue, no facet, no measure: one ratio panel
    assert len(fig.axes) == 1 and fig.axes[0].get_xscale() == "log"


def test_saves_png_and_svg(table, tmp_path):
    paths = plots.save_figure(
        plots.plot_length_bias(table), tmp_path / "length_bias", formats=("png", "svg")
    )
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "P(model wins)" in paths[1].read_text(encoding="utf-8")
