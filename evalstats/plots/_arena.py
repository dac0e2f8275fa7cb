"""Rank sets of several rankings of the same arms, side by side (the Arena case study)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ._base import (
    LINE_COLORS,
    OKABE_ITO,
    axes_title,
    legend_columns,
    new_canvas,
    num,
    require,
    size_pt,
    styled,
)

_MARKERS = ("o", "s", "D", "^", "v", "P")


@styled
def plot_arena_rank_sets(
    table: pd.DataFrame,
    *,
    hue: str = "label",
    truth: pd.Series | None = None,
    confidence: float | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Each arm's rank set under several rankings, one dodged bar per ranking.

    Parameters
    ----------
    table : DataFrame
        One row per (ranking, arm): ``arm``, the ranking's name in ``hue``, ``estimate`` (its
        point rank; or ``rank``), ``ci_low`` and ``ci_high`` (the rank set), as the ``rank`` rows of
        :func:`evalstats.stats.rank_subsamples` (or :func:`evalstats.stats.rank`) give.
    hue : str, default "label"
        Column naming the rankings (falls back to ``estimator`` when absent).
    truth : Series, optional
        A reference rank per arm (index = arm), drawn as a cross: e.g. the ranking from all
        human votes. Arms are ordered by it (else by the first ranking's point rank).
    confidence : float, optional
        Level of the rank sets, quoted in the title.
    title : str, False or None, default None
        The axes' title (None: the default, False or "": none).
    width : "page", "column" or float, default "page"
        Figure width.
    figsize : (float, float), optional
        Width and height in inches (overrides ``width``).
    ax : Axes, optional
        Draw into this Axes.

    Returns
    -------
    Figure
        Arms down the y axis (best at the top), ranks along x (1 at the left); every ranking
        draws its rank sets as horizontal bars in its own colour, line style and marker (at
        the point rank), offset vertically so that the bars stay apart.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_arena_rank_sets
    >>> t = pd.DataFrame({"label": ["people"] * 3 + ["judge"] * 3, "arm": list("xyz") * 2,
    ...                   "estimate": [1, 2, 3, 1, 3, 2], "ci_low": [1, 1, 2, 1, 2, 2],
    ...                   "ci_high": [2, 3, 3, 1, 3, 3]})
    >>> fig = plot_arena_rank_sets(t, width="column")
    >>> [tk.get_text() for tk in fig.axes[0].get_yticklabels()]
    ['x', 'y', 'z']
    """
    if hue not in table.columns:
        hue = "estimator"
    if "estimate" not in table.columns and "rank" in table.columns:
        table = table.rename(columns={"rank": "estimate"})  # the case study's tables
    require(table, ["arm", hue, "estimate", "ci_low", "ci_high"], "table")
    if len(table) == 0:
        raise ValueError("table has no rows")
    t = table.assign(_hue=table[hue].astype(str), _arm=table["arm"].astype(str))
    rankings = list(pd.unique(t["_hue"]))
    if truth is not None:
        order = pd.Series(truth, dtype=float).sort_values(kind="stable")
        arms = [str(a) for a in order.index]
    else:
        first = t[t["_hue"] == rankings[0]].sort_values("estimate", kind="stable")
        arms = list(pd.unique(first["_arm"]))
    arms += [a for a in pd.unique(t["_arm"]) if a not in arms]
    k = len(arms)
    y_of = {a: i for i, a in enumerate(arms)}

    canvas = new_canvas(
        ax=ax,
        n_axes=1,
        width=width,
        figsize=figsize,
        height=lambda w: 1.2 + 0.28 * k,
        make=lambda fig: fig.subplots(),
        what="plot_arena_rank_sets",
    )
    a = canvas.axes[0]
    n_r = len(rankings)
    step = 0.7 / max(n_r, 1)
    handles = []
    for r, name in enumerate(rankings):
        rows = t[t["_hue"] == name]
        y = np.array([y_of[v] for v in rows["_arm"]]) + (r - (n_r - 1) / 2) * step
        lo, hi, est = num(rows["ci_low"]), num(rows["ci_high"]), num(rows["estimate"])
        color = OKABE_ITO[LINE_COLORS[r % len(LINE_COLORS)]]
        style = ("-", "--", "-.", ":")[r % 4]
        a.hlines(y, lo - 0.3, hi + 0.3, colors=color, linestyles=style, linewidth=2.2)
        marker = _MARKERS[r % len(_MARKERS)]
        a.plot(est, y, marker=marker, linestyle="none", color=color, markersize=4)
        handles.append(Line2D([], [], color=color, linestyle=style, marker=marker, label=name))
    if truth is not None:
        tr = pd.Series(truth, dtype=float)
        ys = [y_of[str(v)] for v in tr.index if str(v) in y_of]
        xs = [float(tr[v]) for v in tr.index if str(v) in y_of]
        a.plot(xs, ys, marker="x", color="black", linestyle="none", markersize=6)
        handles.append(Line2D([], [], color="black", marker="x", linestyle="none",
                              label="reference rank"))  # fmt: skip
    a.set_yticks(np.arange(k), arms)
    a.set_ylim(k - 0.5, -0.5)  # the best arm at the top
    n_ranks = int(np.nanmax(num(t["ci_high"]))) if len(t) else k
    a.set_xlim(0.4, max(n_ranks, k) + 0.6)
    a.set_xticks(np.arange(1, max(n_ranks, k) + 1))
    a.set_xlabel("rank (1 = best)")
    a.grid(axis="x", alpha=0.3)
    size = size_pt("legend.fontsize")
    labels = [h.get_label() for h in handles]
    a.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.08 - 0.3 / max(k, 1)),
             ncols=legend_columns(labels, canvas.width, size), frameon=False)  # fmt: skip
    level = "" if confidence is None else f" ({round(100 * confidence)} %)"
    axes_title(a, title, f"Rank sets{level}", canvas.width - 0.5)
    return canvas.root
