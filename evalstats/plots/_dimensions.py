"""Blind-rubric dimension scores, WITH vs WITHOUT, and their paired difference."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .._schema import BLIND_DIMENSIONS
from ..stats.dimensions import dimension_means
from ._base import (
    ARM_COLORS,
    OKABE_ITO,
    asym_err,
    axes_title,
    conf_text,
    figure_title,
    new_canvas,
    num,
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
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Blind-rubric scores per dimension, WITH vs WITHOUT, and their paired difference.

    Parameters
    ----------
    frame : DataFrame
        Either a precomputed tidy frame with columns ``dim``, ``arm`` (``with``,
        ``without`` and optionally ``difference``), ``mean``, ``ci_low``, ``ci_high``
        (e.g. from a cluster bootstrap), or a verdict frame, summarised with
        :func:`~evalstats.stats.dimensions.dimension_means` (per-task means, t interval
        over tasks).
    confidence : float, default 0.95
        Confidence level when the summary is computed here.
    title : str, False or None, default None
        Figure title: None draws the default, False or "" none (with ``ax=``, only a str).
    width : "page", "column" or float, default "page"
        7 in (panels side by side) or 3.5 in (panels stacked), or inches.
    figsize : (float, float), optional
        Width and height in inches (overrides ``width``).
    ax : Axes or pair of Axes, optional
        Axes to draw into: (scores, difference) when the summary has a ``difference`` arm,
        else one.

    Returns
    -------
    Figure
        Scores panel: mean score (1–5) per dimension for each arm with CIs; difference
        panel (when a ``difference`` arm is present): WITH − WITHOUT with CIs and a zero line.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_dimension_scores
    >>> summary = pd.DataFrame({"dim": ["correctness"] * 2, "arm": ["with", "without"],
    ...                         "mean": [4.1, 3.6], "ci_low": [3.8, 3.3],
    ...                         "ci_high": [4.4, 3.9]})
    >>> fig = plot_dimension_scores(summary, width="column")
    >>> fig.axes[0].get_ylabel()
    'mean score (1–5)'
    """
    tidy_cols = ["dim", "arm", "mean", "ci_low", "ci_high"]
    if set(tidy_cols) <= set(frame.columns):
        summary = frame
    else:
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

    def make(fig: Figure) -> Any:
        if m == 1:
            return fig.subplots()
        if side(fig.get_figwidth()):
            return fig.subplots(1, 2, width_ratios=[1.2, 1.0])
        return fig.subplots(2, 1)

    canvas = new_canvas(
        ax=ax,
        n_axes=m,
        width=width,
        figsize=figsize,
        height=lambda w: 3.0 if side(w) else 5.0,
        make=make,
        what="plot_dimension_scores",
    )
    ax_s = canvas.axes[0]
    ax_d = canvas.axes[1] if has_diff else None
    by_side = m == 2 and (not canvas.owned or side(canvas.width))
    panel_in = (canvas.width - 0.55 * (2 if by_side else 1)) * (1.2 / 2.2 if by_side else 1.0)
    tick_pt = size_pt("xtick.labelsize")
    slot = panel_in / max(len(dims), 1)
    x = np.arange(len(dims), dtype=float)

    def dim_ticks(a: Any, slot_in: float) -> None:
        words = [w for d in dims for w in d.split("_")]
        if max(text_width_in(w, tick_pt) for w in words) <= slot_in:
            a.set_xticks(x, [wrap(d.replace("_", " "), slot_in, tick_pt) for d in dims])
        else:  # a word wider than its slot: upright labels would collide, so vertical
            a.set_xticks(x, [d.replace("_", " ") for d in dims], rotation=90)

    for k, (arm, marker) in enumerate((("with", "o"), ("without", "s"))):
        mean, lo, hi = values(arm)
        ax_s.errorbar(
            x + (k - 0.5) * 0.28,
            mean,
            yerr=asym_err(mean, lo, hi),
            fmt=marker,
            color=ARM_COLORS[arm],
            ecolor=ARM_COLORS[arm],
            capsize=3,
            markersize=5,
            elinewidth=1.2,
            label=arm.upper(),
        )
    dim_ticks(ax_s, slot)
    ax_s.set_xlim(-0.6, len(dims) - 0.4)
    ax_s.set_ylim(0.8, 5.2)
    ax_s.set_yticks([1, 2, 3, 4, 5])
    ax_s.set_ylabel("mean score (1–5)")
    ax_s.set_xlabel("blind-rubric dimension")
    axes_title(ax_s, None, f"Scores by arm (mean, {conf_text(conf)})", panel_in)
    ax_s.grid(axis="y")
    ax_s.set_axisbelow(True)
    ax_s.legend(loc="lower right", frameon=False, ncols=2)
    if ax_d is not None:
        mean, lo, hi = values("difference")
        ax_d.axhline(0.0, color="black", linestyle="--", linewidth=0.8)
        ax_d.errorbar(
            x,
            mean,
            yerr=asym_err(mean, lo, hi),
            fmt="D",
            color=OKABE_ITO["bluish_green"],
            ecolor="black",
            capsize=3,
            markersize=4.5,
            elinewidth=1.0,
        )
        d_in = panel_in / 1.2 if by_side else panel_in
        d_slot = d_in / max(len(dims), 1)
        dim_ticks(ax_d, d_slot)
        ax_d.set_xlim(-0.6, len(dims) - 0.4)
        ax_d.set_ylabel(wrap("WITH − WITHOUT (points)", 1.6, size_pt("axes.labelsize")))
        ax_d.set_xlabel("blind-rubric dimension")
        axes_title(ax_d, None, "Paired difference", d_in)
        ax_d.grid(axis="y")
        ax_d.set_axisbelow(True)
    figure_title(canvas, title, "Blind-rubric dimension scores (clustered by task)")
    return canvas.root
