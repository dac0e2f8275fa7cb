"""Blind-rubric dimension scores, WITH vs WITHOUT, and their paired difference."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._schema import BLIND_DIMENSIONS
from ._base import (
    ARM_COLORS,
    OKABE_ITO,
    arm_labels,
    asym_err,
    axes_title,
    conf_text,
    figure_title,
    legend_below,
    legend_columns,
    new_canvas,
    num,
    panels,
    size_pt,
    styled,
    text_width_in,
    wrap,
)


@styled
def plot_dimension_scores(
    frame: pd.DataFrame,
    *,
    confidence: float = 0.95,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Blind-rubric scores per dimension, WITH vs WITHOUT, and their paired difference.

    Parameters
    ----------
    frame : DataFrame
        :func:`~evalstats.stats.rates.dimension_means` output, or a verdict frame.
    confidence : float, default 0.95
        Confidence level when the summary is computed here.
    arm_names, title, width, figsize
        As every figure (:mod:`evalstats.plots`).
    ax : Axes or pair of Axes, optional
        (scores, difference), or one Axes without a difference.

    Returns
    -------
    Figure
        Mean score per dimension and arm, and the paired difference, with CIs.

    Examples
    --------
    >>> summary = pd.DataFrame({"dim": ["correctness"] * 2, "arm": ["with", "without"],
    ...                         "mean": [4.1, 3.6], "ci_low": [3.8, 3.3],
    ...                         "ci_high": [4.4, 3.9]})
    >>> fig = plot_dimension_scores(summary, width="column")
    >>> fig.axes[0].get_ylabel()
    'mean score (1–5)'
    """
    names_of = arm_labels(arm_names)
    tidy_cols = ["dim", "arm", "mean", "ci_low", "ci_high"]
    if set(tidy_cols) <= set(frame.columns):
        summary = frame
    else:  # imported here: the report's kernel draws without loading scipy
        from ..stats.rates import dimension_means

        summary = dimension_means(frame, confidence=confidence)
    arms = set(summary["arm"].astype(str))
    if not {"with", "without"} <= arms:
        raise ValueError(f"the summary needs arms 'with' and 'without', got {sorted(arms)}")
    known = [d for d in BLIND_DIMENSIONS if d in set(summary["dim"].astype(str))]
    dims = known + sorted(set(summary["dim"].astype(str)) - set(known))
    conf = (
        float(summary["confidence"].iloc[0])
        if "confidence" in summary.columns
        else (confidence if summary is not frame else None)
    )
    has_diff = "difference" in arms
    m = 2 if has_diff else 1

    def values(arm: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = (
            summary.assign(_dim=summary["dim"].astype(str))
            .loc[summary["arm"].astype(str) == arm]
            .drop_duplicates("_dim", keep="last")
        )
        s = s.set_index("_dim").reindex(dims)
        return num(s["mean"]), num(s["ci_low"]), num(s["ci_high"])

    def side(w: float) -> bool:
        return w >= 5.0 or m == 1

    legend_pt, label_pt = size_pt("legend.fontsize"), size_pt("axes.labelsize")
    tick_pt = size_pt("xtick.labelsize")
    names = [d.replace("_", " ") for d in dims]
    diff_label = f"{names_of['with']} − {names_of['without']} (points)"

    def texts(w: float, by_side: bool) -> tuple[float, list[str], int, float]:
        """At width ``w``: the scores panel's width, legend labels and columns, x label width."""
        panel = (w - 0.8 * (2 if by_side else 1)) * (1.3 / 2.3 if by_side else 1.0)
        labels = [wrap(names_of[arm], panel - 0.5, legend_pt) for arm in ("with", "without")]
        left = max(text_width_in(wrap(n, 1.0, tick_pt), tick_pt) for n in names) + 0.45
        x_label_in = max((panel / 1.3 if by_side else panel) + 0.8 - left, 1.0)
        return panel, labels, legend_columns(labels, panel, legend_pt), x_label_in

    def height(w: float) -> float:
        _, labels, ncol, x_label_in = texts(w, m == 2 and side(w))
        lines = [lab.count("\n") + 1 for lab in labels]
        rows = max(lines) if ncol > 1 else sum(lines)
        diff_lines = wrap(diff_label, x_label_in, label_pt).count("\n") if m == 2 else 0
        return (3.0 if side(w) else 4.2) + (rows - 1 + diff_lines) * 1.3 * legend_pt / 72.0

    make = panels(m, side, {"width_ratios": [1.3, 1.0][:m]})
    canvas = new_canvas("plot_dimension_scores", ax, width, figsize, height, n_axes=m, make=make)
    ax_s = canvas.axes[0]
    ax_d = canvas.axes[1] if has_diff else None
    by_side = m == 2 and (not canvas.owned or side(canvas.width))
    panel_in, legend_labels, legend_ncol, x_label_in = texts(canvas.width, by_side)
    pos = np.arange(len(dims), dtype=float)
    words = [w for d in dims for w in d.split("_")]
    # Dimensions along x while every word fits its slot; else down the y axis.
    narrowest = panel_in / 1.3 if by_side else panel_in
    flat = max(text_width_in(w, tick_pt) for w in words) <= narrowest / max(len(dims), 1)

    def draw(a: Any, shift: float, mean: np.ndarray, err: np.ndarray, **kw: Any) -> None:
        if flat:
            a.errorbar(pos + shift, mean, yerr=err, **kw)
        else:
            a.errorbar(mean, pos + shift, xerr=err, **kw)

    def layout(a: Any, slot_in: float, value_label: str, lim: Any = None) -> None:
        value_axis = a.yaxis if flat else a.xaxis
        if flat:
            a.set_xticks(pos, [wrap(n, slot_in, tick_pt) for n in names])
            a.set_xlim(-0.6, len(dims) - 0.4)
            a.set_xlabel("blind-rubric dimension")
            a.set_ylabel(wrap(value_label, 1.6, size_pt("axes.labelsize")))
        else:
            a.set_yticks(pos, [wrap(n, 1.0, tick_pt) for n in names])
            a.set_ylim(len(dims) - 0.4, -0.6)
            a.set_xlabel(wrap(value_label, x_label_in, label_pt))
            a.set_ylabel("blind-rubric dimension")
        if lim is not None:
            (a.set_ylim if flat else a.set_xlim)(*lim)
            value_axis.set_ticks([1, 2, 3, 4, 5])
        a.grid(axis="y" if flat else "x")
        a.set_axisbelow(True)

    for k, (arm, marker) in enumerate((("with", "o"), ("without", "s"))):
        mean, lo, hi = values(arm)
        draw(ax_s, (k - 0.5) * 0.28, mean, asym_err(mean, lo, hi), fmt=marker,
             color=ARM_COLORS[arm], ecolor=ARM_COLORS[arm], capsize=3, markersize=5,
             elinewidth=1.2, label=names_of[arm])  # fmt: skip
    layout(ax_s, panel_in / max(len(dims), 1), "mean score (1–5)", (0.8, 5.2))
    axes_title(ax_s, None, f"Scores by arm (mean, {conf_text(conf)})", panel_in)
    handles = ax_s.get_legend_handles_labels()[0]
    if flat:
        ax_s.legend(handles, legend_labels, loc="lower right", frameon=False, ncols=legend_ncol)
    else:
        legend_below(ax_s, ncol=legend_ncol, labels=legend_labels)
    if ax_d is not None:
        mean, lo, hi = values("difference")
        (ax_d.axhline if flat else ax_d.axvline)(0.0, color="black", linestyle="--", lw=0.8)
        draw(ax_d, 0.0, mean, asym_err(mean, lo, hi), fmt="D", color=OKABE_ITO["bluish_green"],
             ecolor="black", capsize=3, markersize=4.5, elinewidth=1.0)  # fmt: skip
        d_in = panel_in / 1.3 if by_side else panel_in
        layout(ax_d, d_in / max(len(dims), 1), diff_label)
        axes_title(ax_d, None, "Paired difference", d_in)
    figure_title(canvas, title, "Blind-rubric dimension scores (clustered by task)")
    return canvas.root
