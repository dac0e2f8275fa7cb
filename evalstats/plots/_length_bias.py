"""Length bias: P(model wins) against the length of its output relative to the baseline's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter, PercentFormatter

from .._validate import check_columns
from ._base import (
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    asym_err,
    axes_title,
    conf_text,
    figure_title,
    font_pt,
    legend_columns,
    new_canvas,
    num,
    panels,
    size_pt,
    styled,
    wrap,
)

# Offset between judges sharing a bin, as a fraction of the plotted x range.
_DODGE = 0.012
_MARKERS = ("o", "s", "D", "^", "v", "P")
_MARKER_GLYPHS = ("●", "■", "◆", "▲", "▼", "✚")


def _ratio_tick(v: float, _: Any) -> str:
    if v <= 0:
        return ""
    if v >= 1:
        return f"×{v:g}"
    return f"×1/{1 / v:g}"


@styled
def plot_length_bias(
    table: pd.DataFrame,
    *,
    hue: str | None = None,
    facet: str | None = "model",
    confidence: float | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """P(model wins) against the length of its output relative to the baseline's.

    Parameters
    ----------
    table : DataFrame
        :func:`evalstats.adapters.alpaca_eval.length_bias` output.
    hue : str, optional
        Column naming the lines (default: ``annotator`` or ``judge``).
    facet : str or None, default "model"
        Column naming the panels; None (or absent): one panel.
    confidence : float, optional
        Level of the intervals, quoted in the title.
    title, width, figsize
        As every figure (:mod:`evalstats.plots`).
    ax : Axes or sequence of Axes, optional
        One per facet value (sorted).

    Returns
    -------
    Figure
        One panel per facet value, one line per judge with the bins' Wilson intervals.

    Examples
    --------
    >>> table = pd.DataFrame({
    ...     "model": "m", "annotator": ["j1", "j1", "j2", "j2"], "x": "log_ratio",
    ...     "x_mean": [-0.7, 0.4] * 2, "p_win": [0.1, 0.4, 0.15, 0.5], "n": [50] * 4,
    ...     "ci_low": [0.04, 0.28, 0.07, 0.37], "ci_high": [0.21, 0.53, 0.28, 0.63]})
    >>> fig = plot_length_bias(table, width="column")
    >>> fig.axes[0].get_xscale()
    'log'
    """
    check_columns(table, ["x_mean", "p_win", "ci_low", "ci_high", "n"], what="table")
    if len(table) == 0:
        raise ValueError("table has no rows")
    if hue is None:
        hue = next((c for c in ("annotator", "judge") if c in table.columns), None)
    elif hue not in table.columns:
        raise ValueError(f"table lacks the hue column {hue!r}")
    measures = set(table["x"].astype(str)) if "x" in table.columns else {"log_ratio"}
    if len(measures) != 1 or not measures <= {"log_ratio", "diff"}:
        raise ValueError(f"x must be one measure, 'log_ratio' or 'diff'; got {sorted(measures)}")
    ratio = measures == {"log_ratio"}
    t = table.assign(
        _facet=table[facet].astype(str) if facet in table.columns else "all",
        _hue=table[hue].astype(str) if hue is not None else "P(win)",
    )
    facets = sorted(t["_facet"].unique())
    hues = sorted(t["_hue"].unique())
    xs = num(t["x_mean"])
    finite = xs[np.isfinite(xs)]
    span = float(finite.max() - finite.min()) if finite.size else 1.0
    step = _DODGE * (span if span > 0 else 1.0)
    n_f = len(facets)

    def side(w: float) -> bool:
        return n_f == 1 or w >= 5.0

    def height(w: float) -> float:
        return 3.4 if side(w) else 1.4 + 2.5 * n_f

    make = panels(n_f, side, {"sharey": True}, {"sharex": True})
    canvas = new_canvas("plot_length_bias", ax, width, figsize, height, n_axes=n_f, make=make)
    axes = canvas.axes
    by_side = not canvas.owned or side(canvas.width)
    panel_in = (canvas.width - 0.6 - 0.15 * n_f) / (n_f if by_side else 1)
    note_pt = font_pt(0.75)
    label_pt = size_pt("axes.labelsize")
    for k, (a, name) in enumerate(zip(axes, facets, strict=True)):
        part = t.loc[t["_facet"] == name]
        slopes = []
        for i, h in enumerate(hues):
            g = part.loc[part["_hue"] == h].sort_values("x_mean")
            if g.empty:
                continue
            color = OKABE_ITO[LINE_COLORS[i % len(LINE_COLORS)]]
            x = num(g["x_mean"]) + (i - (len(hues) - 1) / 2) * step
            x = np.exp(x) if ratio else x
            p = num(g["p_win"])
            a.errorbar(x, p, yerr=asym_err(p, num(g["ci_low"]), num(g["ci_high"])), color=color,
                       linestyle=LINE_STYLES[i % len(LINE_STYLES)],
                       marker=_MARKERS[i % len(_MARKERS)], markersize=4, linewidth=1.4,
                       elinewidth=0.9, capsize=2.5, label=h)  # fmt: skip
            if {"slope", "slope_ci_low", "slope_ci_high"} <= set(g.columns):
                est, lo, hi = (num(g[c])[0] for c in ("slope", "slope_ci_low", "slope_ci_high"))
                if np.isfinite(est):
                    slopes.append((i, color, f"{est:.2f} [{lo:.2f}, {hi:.2f}]"))
        if slopes:
            # In the panel (each facet has its own fits), stacked in points: never overlapping.
            unit = "per unit log-ratio" if ratio else "per character"
            lines = [(f"logistic slope {unit}:", "black")] + [
                (f"{_MARKER_GLYPHS[i % len(_MARKERS)]} {text}", color) for i, color, text in slopes
            ]
            for j, (text, color) in enumerate(lines):
                a.annotate(text, (0.02, 0.98), xycoords="axes fraction",
                           xytext=(0, -1.3 * note_pt * j), textcoords="offset points", va="top",
                           fontsize=note_pt, color=color)  # fmt: skip
        a.axhline(0.5, color="#666666", linestyle=(0, (4, 2)), linewidth=1.0, label="50 %")
        a.axvline(1.0 if ratio else 0.0, color="#999999", linestyle=":", linewidth=1.0,
                  label="equal lengths")  # fmt: skip
        last = k == n_f - 1 or by_side
        if ratio:
            a.set_xscale("log", base=2)
            a.xaxis.set_major_formatter(FuncFormatter(_ratio_tick))
            a.xaxis.set_minor_formatter(NullFormatter())
            xlabel = "length ratio, model ÷ baseline (characters, log scale)"
        else:
            xlabel = "length difference, model − baseline (characters)"
        if last:
            a.set_xlabel(wrap(xlabel, panel_in, label_pt))
        a.set_ylim(0.0, 1.0)
        a.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        a.grid(True)
        a.set_axisbelow(True)
        n = int(part.groupby("_hue")["n"].sum().max())
        axes_title(
            a, None, f"{name} (n = {n} instructions)" if facet in table.columns else name, panel_in
        )
        if k == 0 or not by_side:
            a.set_ylabel(wrap("P(model wins) (% of bin)", 2.0, label_pt))
    handles, labels = axes[0].get_legend_handles_labels()
    ncol = legend_columns(labels, canvas.width - 0.4, size_pt("legend.fontsize"))
    canvas.fig.legend(
        handles, labels, loc="outside lower center", ncol=ncol, frameon=False, title=hue
    )
    sub = conf_text(confidence).replace("CI", "Wilson CI")
    figure_title(
        canvas, title, f"Length bias: P(model preferred to the baseline) by length ({sub})"
    )
    return canvas.root
