"""The headline figure: win / tie / loss shares and net win per judge or group."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import rcParams as plt_rc
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter

from evalstats._display import count_text, judge_label, judge_model
from evalstats._tidy import wide

from .._validate import check_columns
from ._base import (
    EDGE,
    OUTCOME_COLORS,
    arm_labels,
    asym_err,
    axes_title,
    conf_text,
    figure_legend,
    figure_title,
    fit_ticks,
    font_pt,
    format_pp,
    new_canvas,
    num,
    panels,
    size_pt,
    styled,
    text_width_in,
    wrap,
)

_NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win")
_LEGEND = {"win": "{with} better (win)", "tie": "equivalent (tie)", "loss": "{with} worse (loss)"}
_ORDERED_RUBRICS = {"blind-pair"}
_HATCH = "////"


class _ShareLocator(MaxNLocator):
    """MaxNLocator's ticks up to 100 % only (the axis runs higher, for the value labels)."""

    def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
        ticks = super().tick_values(vmin, vmax)
        return ticks[(ticks >= -1e-9) & (ticks <= 1.0 + 1e-9)]


@styled
def plot_headline(
    rates: pd.DataFrame,
    *,
    group: str | Sequence[str] | None = None,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Win / tie / loss shares and net win, with confidence intervals, per judge or group.

    Parameters
    ----------
    rates : DataFrame
        :func:`evalstats.stats.rates.win_rates` output (long, or one row per group).
    group : str or list of str, optional
        Column(s) naming the groups (default: the first of group, judge, rubric).
    arm_names, title, width, figsize
        As every figure (:mod:`evalstats.plots`).
    ax : pair of Axes, optional
        (shares, net win).

    Returns
    -------
    Figure
        Win / tie / loss bars per group and the net win, with CIs and counts.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats import win_rates
    >>> frame = pd.DataFrame({"task_id": list("aabbccdd"), "judge": "j", "status": "ok",
    ...                       "outcome": ["win", "tie", "win", "loss"] * 2})
    >>> fig = plot_headline(win_rates(frame), width="column")
    >>> len(fig.axes[0].patches), fig.get_size_inches()[0]
    (3, np.float64(3.5))
    """
    arms = arm_labels(arm_names)
    rates = wide(rates)  # dodged bars: the one place the long result is pivoted
    cols = [c for n in _NAMES for c in (n, f"{n}_ci_low", f"{n}_ci_high")]
    check_columns(rates, [*cols, "n", "n_tasks"], what="rates")
    if len(rates) == 0:
        raise ValueError("rates has no rows")
    if group is None:
        group = next((c for c in ("group", "judge", "rubric") if c in rates.columns), None)
    group_cols = [group] if isinstance(group, str) else list(group or [])
    check_columns(rates, group_cols, what="rates")
    if not group_cols and len(rates) != 1:
        raise ValueError("several rows but no group column: pass group=")
    g = len(rates)
    n = rates["n"].to_numpy()
    n_clusters = rates["n_tasks"].to_numpy()
    n_pairs = num(rates["n_pairs"]) if "n_pairs" in rates.columns else np.full(g, np.nan)
    ordered = (
        rates["rubric"].astype(str).isin(_ORDERED_RUBRICS).to_numpy()
        if "rubric" in rates.columns
        else np.zeros(g, dtype=bool)
    )
    orders = np.where(np.isfinite(n_pairs), n > np.nan_to_num(n_pairs, nan=np.inf), ordered)
    confidence = float(rates["confidence"].iloc[0]) if "confidence" in rates.columns else None
    method = str(rates["method"].iloc[0]) if "method" in rates.columns else None

    sub = conf_text(confidence) + (f", {method}" if method else "") + ", clustered by task"
    pairs = {"arm_a", "arm_b"} <= set(group_cols)
    said = "each pair of arms" if pairs else f"{arms['with']} vs {arms['without']}"
    default_title = f"Headline: {said} ({sub})"

    def wide_enough(w: float) -> bool:
        # Side by side while each panel keeps room for its labels; more groups stack.
        return w >= 5.0 and g <= 4

    def height(w: float) -> float:
        # Two-line counts and a wrapped title take from the panels' height: give it back.
        if not wide_enough(w):
            return 5.0 if orders.any() else 4.6
        extra = 0.3 if orders.any() else 0.0
        if title is None:
            lines = wrap(default_title, w - 0.15, size_pt("figure.titlesize")).count("\n")
            extra += 0.25 * lines
        return 3.3 + extra

    # Stacked: one x axis, labelled once, under the net-win panel.
    stack = {"height_ratios": [1.25, 1.0], "sharex": True}
    make = panels(2, wide_enough, {"width_ratios": [2.0, 1.3]}, stack)
    canvas = new_canvas("plot_headline", ax, width, figsize, height, n_axes=2, make=make)
    ax_bar, ax_net = canvas.axes
    side_by_side = wide_enough(canvas.width) or not canvas.owned
    reserve = 0.5 * max(1.0, float(plt_rc["font.size"]) / 10.0)
    bar_in = (canvas.width - 2 * reserve) * (2.0 / 3.3 if side_by_side else 1.0)
    net_in = (canvas.width - 2 * reserve) * (1.3 / 3.3 if side_by_side else 1.0)
    tick_pt = size_pt("xtick.labelsize")

    # Shorter labels: a group column the same in every row goes to the axis label, a pair of
    # arms reads "v1 vs none", judge names shorten while they stay unique.
    same = [c for c in group_cols if g > 1 and rates[c].astype(str).nunique() == 1]
    group_label = " · ".join(f"{c} {rates[c].iloc[0]}" for c in same)
    if pairs:
        rates = rates.assign(arm_a=rates["arm_a"].astype(str) + " vs " + rates["arm_b"].astype(str))
    group_cols = [c for c in group_cols if c not in same and not (pairs and c == "arm_b")]
    values = [rates[c].astype(str).tolist() for c in group_cols] if group_cols else [["all"] * g]
    for k, col in enumerate(group_cols):
        if col != "judge":
            continue
        for shorten in (judge_model, judge_label):
            short = [shorten(v) for v in values[k]]
            if len(set(short)) == len(set(values[k])):
                values[k] = short
    slot_in = bar_in / g * 0.85
    net_slot = net_in / g * 0.85
    names = ["\n".join(vals[i] for vals in values) for i in range(g)]
    counts = [
        count_text(int(n[i]), n_pairs[i], bool(ordered[i])).replace(" (", "\n(") for i in range(g)
    ]
    # A row the audit fails is never shown plain: hatched, hollow, the check under its name.
    audit = rates["audit"] if "audit" in rates.columns else pd.Series("", index=rates.index)
    flags = audit.fillna("").astype(str).str.strip().tolist()
    flagged = np.array([bool(f) for f in flags])
    marks = [f"\naudit {f.replace('_', ' ')}" if f else "" for f in flags]
    ticks = [f"{names[i]}\n{counts[i]}\n{int(n_clusters[i])} tasks{marks[i]}" for i in range(g)]

    x = np.arange(g, dtype=float)
    width_bar = 0.26
    label_pt = font_pt(0.75)
    rotate = text_width_in("100 %", label_pt) > 0.9 * width_bar * slot_in / 0.85
    for k, (name, outcome) in enumerate(zip(_NAMES[:3], ("win", "tie", "loss"), strict=True)):
        v = num(rates[name])
        lo, hi = num(rates[f"{name}_ci_low"]), num(rates[f"{name}_ci_high"])
        xs = x + (k - 1) * width_bar
        bars = ax_bar.bar(xs, np.nan_to_num(v), width_bar, color=OUTCOME_COLORS[outcome],
                          edgecolor=EDGE, linewidth=0.6,
                          label=_LEGEND[outcome].replace("{with}", "arm_a" if pairs else arms["with"]))  # fmt: skip
        for patch, bad in zip(bars.patches, flagged, strict=True):
            if bad:
                patch.set_hatch(_HATCH)
        ax_bar.errorbar(
            xs, v, yerr=asym_err(v, lo, hi), fmt="none", ecolor="black", elinewidth=0.9, capsize=2.5
        )
        for xi, vi, hi_i in zip(xs, v, hi, strict=True):
            if np.isfinite(vi):
                top = hi_i if np.isfinite(hi_i) else vi
                ax_bar.annotate(f"{100 * vi:.0f} %", (xi, top), xytext=(0, 1.5),
                                textcoords="offset points", ha="center", va="bottom",
                                fontsize=label_pt, rotation=90 if rotate else 0)  # fmt: skip
    if side_by_side:
        fit_ticks(ax_bar, x, ticks, slot_in, tick_pt)
    else:
        ax_bar.tick_params(axis="x", labelbottom=False)
    ax_bar.set_xlim(-0.6, g - 0.4)
    ax_bar.set_ylim(0, 1.3 if rotate else 1.15)
    ax_bar.yaxis.set_major_locator(_ShareLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10]))
    ax_bar.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    unit = "pair-orders" if orders.all() else "verdicts" if orders.any() else "pairs"
    label_pt = size_pt("axes.labelsize")
    ax_bar.set_ylabel(wrap(f"share of readable {unit} (%)", 1.7 if side_by_side else 1.2, label_pt))
    shown = " · ".join("arms" if c == "arm_a" and pairs else c for c in group_cols)
    group_label = "; ".join(x for x in (shown or "group", group_label) if x)
    if side_by_side:
        ax_bar.set_xlabel(group_label)
    ax_bar.grid(axis="y")
    ax_bar.set_axisbelow(True)
    axes_title(ax_bar, None, "Outcome shares", bar_in)
    handles, labels = ax_bar.get_legend_handles_labels()
    if flagged.any():
        handles.append(Patch(facecolor="white", edgecolor=EDGE, hatch=_HATCH))
        labels.append("hatched, hollow: the audit fails this row")
    figure_legend(canvas, handles, labels, ax_bar)

    v = num(rates["net_win"])
    lo, hi = num(rates["net_win_ci_low"]), num(rates["net_win_ci_high"])
    ax_net.axhline(0.0, color="black", linewidth=0.8, linestyle="--")
    ax_net.errorbar(x, v, yerr=asym_err(v, lo, hi), fmt="o", color=OUTCOME_COLORS["win"],
                    ecolor="black", elinewidth=1.0, capsize=3, markersize=5)  # fmt: skip
    if flagged.any():  # hollow, over the errorbar's filled marker
        ax_net.plot(x[flagged], v[flagged], "o", markersize=5, markerfacecolor="white",
                    markeredgecolor=OUTCOME_COLORS["win"], zorder=3)  # fmt: skip
    for xi, vi in zip(x, v, strict=True):
        if np.isfinite(vi):
            ax_net.annotate(f"{100 * vi:+.0f}", (xi, vi), xytext=(5, 0),
                            textcoords="offset points", va="center", fontsize=label_pt)  # fmt: skip
    if side_by_side:
        net_names = [names[i] + marks[i] for i in range(g)]
        fit_ticks(ax_net, x, net_names, net_slot, tick_pt)
    else:
        fit_ticks(ax_net, x, ticks, slot_in, tick_pt)
    ax_net.set_xlabel(group_label)
    ax_net.set_xlim(-0.6, g - 0.4)
    bounds = np.concatenate([v, lo, hi, [0.0]])
    finite = bounds[np.isfinite(bounds)]
    span = float(np.max(np.abs(finite))) if finite.size else 1.0
    lim = min(1.0, span * 1.25 + 0.05)
    ax_net.set_ylim(-lim, lim)
    ax_net.yaxis.set_major_locator(MaxNLocator(nbins="auto", symmetric=True))
    ax_net.yaxis.set_major_formatter(FuncFormatter(format_pp))
    ax_net.set_ylabel(wrap("net win, P(win) − P(loss)", 1.5 if side_by_side else 0.95, label_pt))
    ax_net.grid(axis="y")
    ax_net.set_axisbelow(True)
    axes_title(ax_net, None, "Net win", net_in)
    figure_title(canvas, title, default_title)
    return canvas.root
