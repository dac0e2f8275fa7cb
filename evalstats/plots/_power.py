"""Power of the task-clustered test against the number of tasks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from .._validate import check_columns
from ._base import (
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    axes_title,
    legend_below,
    legend_columns,
    new_canvas,
    num,
    size_pt,
    styled,
    wrap,
)

_HUE_NAMES = {"net_win": "net win", "n_replicates": "replicates", "icc": "ICC", "p_tie": "P(tie)"}


def _hue_label(col: str, v: Any, *, named: bool) -> str:
    if col == "net_win":
        text = f"{100 * float(v):+.0f} pp"
    elif col == "n_replicates":
        return f"{int(v)} replicates"
    elif isinstance(v, float | np.floating):
        text = f"{float(v):g}"
    else:
        text = str(v)
    return f"{_HUE_NAMES.get(col, col)} {text}" if named else text


@styled
def plot_power_curve(
    curve: pd.DataFrame,
    *,
    hue: str | Sequence[str] | None = None,
    target: float = 0.8,
    mark_n_tasks: int | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Power against the number of tasks, one line per design.

    Parameters
    ----------
    curve : DataFrame
        :func:`evalstats.stats.power.power_curve` output.
    hue : str or list of str, optional
        Column(s) distinguishing the lines (default: the design columns that vary).
    target : float, default 0.8
        Reference power, drawn as a dashed line.
    mark_n_tasks : int, optional
        Draw a vertical line at this number of tasks.
    title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        Power against the number of tasks.

    Examples
    --------
    >>> curve = pd.DataFrame({"n_tasks": [10, 20, 40] * 2, "net_win": [0.1] * 3 + [0.2] * 3,
    ...                       "power": [0.1, 0.2, 0.4, 0.3, 0.6, 0.9]})
    >>> fig = plot_power_curve(curve, width="column")
    >>> len(fig.axes[0].get_lines())  # two designs + the reference line
    3
    """
    check_columns(curve, ["n_tasks", "power"], what="curve")
    if len(curve) == 0:
        raise ValueError("curve has no rows")
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be in (0, 1), got {target}")
    if hue is None:
        hue_cols = [c for c in _HUE_NAMES if c in curve.columns and curve[c].nunique() > 1]
    else:
        hue_cols = [hue] if isinstance(hue, str) else list(hue)
        check_columns(curve, hue_cols, what="curve")
    canvas = new_canvas("plot_power_curve", ax, width, figsize, lambda w: 3.2 if w >= 5 else 3.6)
    a = canvas.axes[0]
    groups = curve.groupby(hue_cols, sort=True) if hue_cols else [((), curve)]
    for i, (key, part) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(
            _hue_label(c, v, named=len(hue_cols) > 1) for c, v in zip(hue_cols, key, strict=True)
        )
        part = part.sort_values("n_tasks")
        a.plot(num(part["n_tasks"]), num(part["power"]),
               color=OKABE_ITO[LINE_COLORS[i % len(LINE_COLORS)]],
               linestyle=LINE_STYLES[(i // len(LINE_COLORS) + i) % len(LINE_STYLES)],
               marker="o" if len(part) <= 12 else None, markersize=3.5, linewidth=1.6,
               label=label or "power")  # fmt: skip
    a.axhline(target, color="#666666", linestyle=(0, (4, 2)), linewidth=1.0,
              label=f"target {100 * target:.0f} % power")  # fmt: skip
    if mark_n_tasks is not None:
        a.axvline(float(mark_n_tasks), color="black", linestyle=":", linewidth=1.0,
                  label=f"this design: {int(mark_n_tasks)} tasks")  # fmt: skip
    a.set_ylim(0.0, 1.02)
    a.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    a.xaxis.set_major_locator(MaxNLocator(8 if canvas.width >= 5.0 else 5, integer=True))
    label_pt = size_pt("axes.labelsize")
    a.set_xlabel("number of tasks (clusters)")
    a.set_ylabel(wrap("power (P(reject net win = 0))", 2.2, label_pt))
    a.grid(True)
    a.set_axisbelow(True)
    legend_title = _HUE_NAMES.get(hue_cols[0], hue_cols[0]) if len(hue_cols) == 1 else None
    if canvas.width >= 5.0:
        a.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False, title=legend_title)
    else:
        _, labels = a.get_legend_handles_labels()
        ncol = legend_columns(labels, canvas.width - 0.3, size_pt("legend.fontsize"))
        legend_below(a, ncol=ncol, title=legend_title)
    axes_title(a, title, "Power of the task-clustered test of net win", canvas.width - 0.8)
    return canvas.root
