"""Per-pair cost ratios WITH / WITHOUT on a log axis, with the cost table's geometric mean."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from .._validate import check_columns
from ..stats.cost import choose_token_source
from ._base import (
    EDGE,
    OKABE_ITO,
    arm_labels,
    axes_title,
    figure_title,
    format_times,
    legend_below,
    legend_columns,
    new_canvas,
    num,
    panels,
    size_pt,
    styled,
    wrap,
)


@styled
def plot_cost_ratios(
    frame: pd.DataFrame,
    *,
    cost: pd.DataFrame | None = None,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Distribution of per-pair cost ratios WITH / WITHOUT on a log axis.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame or pair table with ``tokens_with`` / ``tokens_without`` (and wall
        clock, drawn in a second panel).
    cost : DataFrame, optional
        The :func:`evalstats.stats.cost_ratios` table of the frame's pair of arms: its
        ``<measure>_geomean_ratio`` row gives the line and the band, so the figure shows the
        table's numbers. Without it, the line is the geometric mean of the pairs drawn.
    arm_names, title, width, figsize
        As every figure (:mod:`evalstats.plots`).
    ax : Axes or sequence of Axes, optional
        One per panel (tokens, then wall-clock).

    Returns
    -------
    Figure
        Per measure: a log-binned histogram, a rug, the geometric mean (and its interval) and
        1×. Tokens are of the source :func:`~evalstats.stats.cost_ratios` leads with (billed,
        else transcript), named in the panel title.

    Examples
    --------
    >>> pairs = pd.DataFrame({"task_id": ["a", "a", "b"], "replicate": [1, 2, 1],
    ...                       "tokens_with": [600, 900, 450], "tokens_without": [900, 1000, 900]})
    >>> fig = plot_cost_ratios(pairs, width="column")
    >>> fig.axes[0].get_xscale()
    'log'
    """
    arms = arm_labels(arm_names)
    check_columns(frame, ["tokens_with", "tokens_without"], what="frame")
    choice = choose_token_source(frame)  # the counts the cost table uses
    f, rows = choice.frame, pd.DataFrame({"statistic": []}) if cost is None else cost
    if {"task_id", "replicate"} <= set(f.columns):
        f = f.drop_duplicates(["task_id", "replicate"])
    measures = [("tokens", f"Tokens ({choice.source})", "token", "tokens_with", "tokens_without")]
    if {"wall_with_s", "wall_without_s"} <= set(f.columns):
        measures.append(("wall", "Wall-clock time", "wall-clock", "wall_with_s", "wall_without_s"))
    m = len(measures)
    ratios = []
    for key, _what, unit, a, b in measures:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num(f[a]) / num(f[b])
        ok = np.isfinite(r) & (r > 0)
        if not ok.any():
            raise ValueError(f"no pair has a positive finite {unit} ratio")
        row = rows.loc[rows["statistic"] == f"{key}_geomean_ratio"]
        if len(row) > 1:
            raise ValueError(f"cost= has {len(row)} {key}_geomean_ratio rows: select one pair")
        line, band = float(np.exp(np.mean(np.log(r[ok])))), None
        if len(row):
            line, *band = (float(row[c].iloc[0]) for c in ("estimate", "ci_low", "ci_high"))
        ratios.append((r[ok], int((~ok).sum()), line, band, bool(len(row))))

    def height(w: float) -> float:
        return 3.2 if w >= 5.0 or m == 1 else 5.6

    make = panels(m, lambda w: w >= 5.0 or m == 1)
    canvas = new_canvas("plot_cost_ratios", ax, width, figsize, height, n_axes=m, make=make)
    side = not canvas.owned or canvas.width >= 5.0 or m == 1
    panel_in = (canvas.width - 0.7 * (m if side else 1)) / (m if side else 1)
    colors = (OKABE_ITO["sky_blue"], OKABE_ITO["bluish_green"])
    for a, (_, what, unit_label, _, _), (r, dropped, gm, band, tabled), color in zip(
        canvas.axes, measures, ratios, colors, strict=False
    ):
        what += "; line and band: the cost table's geometric mean" if tabled else ""
        what += f" ({dropped} pairs without a ratio left out)" if dropped else ""
        lo_r, hi_r = float(r.min()), float(r.max())
        lo_b, hi_b = min(lo_r, 1.0) / 1.15, max(hi_r, 1.0) * 1.15
        bins = np.geomspace(lo_b, hi_b, int(np.clip(np.sqrt(len(r)) * 2, 8, 40)) + 1)
        a.hist(r, bins=bins, color=color, edgecolor=EDGE, linewidth=0.5, alpha=0.85,
               label=f"pairs (n = {len(r)})")  # fmt: skip
        a.plot(r, np.zeros_like(r), "|", color="black", markersize=8, alpha=0.6, clip_on=False)
        a.axvline(1.0, color="black", linestyle="--", linewidth=1.0, label="1× (equal cost)")
        a.axvline(
            gm, color=OKABE_ITO["vermillion"], linewidth=1.8, label=f"geometric mean {gm:.2f}×"
        )
        if band is not None and np.isfinite(band).all():
            a.axvspan(*band, color=OKABE_ITO["vermillion"], alpha=0.15, linewidth=0,
                      label=f"CI [{band[0]:.2f}×, {band[1]:.2f}×]")  # fmt: skip
        a.set_xscale("log")
        a.set_xlim(lo_b, hi_b)
        # Fewer ticks per decade on a narrow panel: "0.5×" needs about 0.4 in.
        decades = max(np.log10(hi_b / lo_b), 1e-9)
        subs = (1.0, 2.0, 5.0) if panel_in / decades >= 1.3 else (1.0, 3.0)
        if panel_in / decades < 0.7:
            subs = (1.0,)
        a.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
        a.xaxis.set_minor_formatter(NullFormatter())
        a.xaxis.set_major_formatter(FuncFormatter(format_times))
        label_pt = size_pt("axes.labelsize")
        ratio = f"{arms['with']} / {arms['without']}"
        xlabel = wrap(f"{unit_label} ratio {ratio} (log scale)", panel_in, label_pt)
        a.set_xlabel(xlabel)
        a.set_ylabel("pairs (count)")
        axes_title(a, None, what, panel_in)
        _, labels = a.get_legend_handles_labels()
        ncol = legend_columns(labels, panel_in + 0.3, size_pt("legend.fontsize"))
        legend_below(a, ncol=ncol)
    figure_title(canvas, title, f"Cost of {arms['with']} relative to {arms['without']}, per pair")
    return canvas.root
