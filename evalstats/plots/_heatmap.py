"""The per-task heatmap: the outcome of every judged pair, one panel per judge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .._schema import OUTCOMES, STATUSES
from .._validate import check_columns, check_positive_int
from ._base import (
    EDGE,
    OUTCOME_COLORS,
    arm_labels,
    axes_title,
    figure_legend,
    figure_title,
    new_canvas,
    panels,
    size_pt,
    styled,
    text_width_in,
    wrap,
)

_CELL_CATEGORIES = (*OUTCOMES, *[s for s in STATUSES if s != "ok"], "missing")
_CELL_LABELS = {"loss": "loss ({with} worse)", "tie": "tie", "win": "win ({with} better)",
                "no_answer": "no answer (over budget)", "invalid": "invalid judge output",
                "error": "judge call failed", "conflict": "two different answers",
                "missing": "not judged"}  # fmt: skip
_ORDER_SHORT = {"with_first": "W", "without_first": "O"}

#: Rows a heatmap shows by default (the best and worst tasks); 10,000 rows took 11 GB to draw.
MAX_TASKS = 40


@styled
def plot_task_heatmap(
    frame: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    rubric: str | None = None,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
    max_tasks: int | None = MAX_TASKS,
) -> Figure:
    """Outcome of every judged pair: tasks × replicates (× orders), one panel per judge.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame (:func:`evalstats.verdict_frame`).
    judge : str or list of str, optional
        Judge(s) to show; all by default (one panel each).
    rubric : str, optional
        Required when the frame holds several rubrics.
    arm_names, title, width, figsize
        As every figure (:mod:`evalstats.plots`).
    ax : sequence of Axes, optional
        One Axes per judge.
    max_tasks : int or None, default 40
        With more tasks, only the best and worst by net win are drawn; None: every task.

    Returns
    -------
    Figure
        One image per judge, cells coloured by outcome or status, best task at the top.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": ["T1", "T1", "T2", "T2"], "replicate": [1, 2, 1, 2],
    ...     "judge": "openai:gpt-5.4", "rubric": "with-without", "order": None,
    ...     "status": ["ok", "ok", "ok", "no_answer"], "outcome": ["win", "tie", "loss", None]})
    >>> fig = plot_task_heatmap(frame, width="column")
    >>> fig.axes[0].images[0].get_array().shape
    (2, 2)
    """
    arms = arm_labels(arm_names)
    cols = ["task_id", "replicate", "judge", "rubric", "order", "status", "outcome"]
    check_columns(frame, cols, what="frame")
    f = frame
    present = sorted(set(f["rubric"].astype(str)))
    if rubric is not None:
        f = f.loc[f["rubric"].astype(str) == rubric]
        if f.empty:
            raise ValueError(f"no rows for rubric {rubric!r}; present: {present}")
    elif len(present) > 1:
        raise ValueError(f"the frame holds several rubrics {present}: pass rubric=")
    judges = sorted(set(f["judge"].astype(str)))
    if judge is not None:
        wanted = [judge] if isinstance(judge, str) else list(judge)
        if unknown := sorted(set(wanted) - set(judges)):
            raise ValueError(f"no rows for judge(s) {unknown}; present: {judges}")
        f, judges = f.loc[f["judge"].astype(str).isin(wanted)], wanted
    if f.empty:
        raise ValueError("the frame has no rows to show")

    order = f["order"].astype(object).where(f["order"].notna(), "")
    status = f["status"].astype(str).to_numpy()
    outcome = f["outcome"].astype(object).where(f["outcome"].notna(), "").astype(str).to_numpy()
    codes = pd.Index(_CELL_CATEGORIES).get_indexer(np.where(status == "ok", outcome, status))
    f = f.assign(_judge=f["judge"].astype(str), _task=f["task_id"].astype(str),
                 _order=order.map(lambda o: _ORDER_SHORT.get(o, "")),
                 _code=np.where(codes < 0, _CELL_CATEGORIES.index("missing"), codes))  # fmt: skip
    has_order = bool((f["_order"] != "").any())
    if has_order:
        # Unordered rows (no_answer pairs) fill every order column of their replicate.
        blank = f["_order"] == ""
        letters = sorted(set(f.loc[~blank, "_order"]), key="WO".index)
        f = pd.concat([f.loc[~blank], *(f.loc[blank].assign(_order=o) for o in letters)])
    cols = (
        f[["replicate", "_order"]]
        .drop_duplicates()
        .assign(_o=lambda d: d["_order"].map({"": 0, "W": 0, "O": 1}))
        .sort_values(["replicate", "_o"], kind="stable")
    )
    col_keys = list(zip(cols["replicate"], cols["_order"], strict=True))
    col_labels = [f"{r}{o}" for r, o in col_keys]

    score = {_CELL_CATEGORIES.index(o): v for o, v in (("win", 1.0), ("loss", -1.0), ("tie", 0.0))}
    net = f["_code"].map(score).astype(float).groupby(f["_task"]).mean()
    tasks = sorted(set(f["_task"]))
    net = net.reindex(tasks)
    task_order = sorted(tasks, key=lambda t: (np.isnan(net[t]), -np.nan_to_num(net[t]), t))
    n_all, cut = len(task_order), None
    if max_tasks is not None:
        max_tasks = check_positive_int(max_tasks, "max_tasks", minimum=2)
        if n_all > max_tasks:
            cut = max_tasks // 2
            task_order = task_order[:cut] + task_order[n_all - (max_tasks - cut) :]
            f = f.loc[f["_task"].isin(task_order)]
    row_labels = [f"{t} ({net[t]:+.2f})" if np.isfinite(net[t]) else f"{t} (–)" for t in task_order]
    y_label = "task (net win)"
    if cut is not None:
        y_label = wrap(
            f"task (net win): {len(task_order)} of {n_all:,} shown, "
            f"the {cut} best and {len(task_order) - cut} worst",
            max(0.17 * len(task_order), 1.5),
            size_pt("axes.labelsize"),
        )

    n_cat = len(_CELL_CATEGORIES)
    missing = _CELL_CATEGORIES.index("missing")
    cmap = ListedColormap([OUTCOME_COLORS[c] for c in _CELL_CATEGORIES])
    norm = BoundaryNorm(np.arange(n_cat + 1) - 0.5, n_cat)
    t_index = pd.Index(task_order)
    c_index = pd.MultiIndex.from_tuples(col_keys)
    n_rows, n_cols, n_j = len(task_order), len(col_keys), len(judges)
    tick_pt = size_pt("ytick.labelsize")
    row_in = max(0.17, 1.45 * tick_pt / 72.0)  # one tick label per row, never overlapping

    def stacked(w: float) -> bool:
        return n_j > 1 and w < 5.0

    def height(w: float) -> float:
        panel = 0.75 + row_in * n_rows
        return 1.3 + panel * (n_j if stacked(w) else 1)

    make = panels(n_j, lambda w: not stacked(w), {"sharey": True}, {"sharex": True})
    canvas = new_canvas("plot_task_heatmap", ax, width, figsize, height, n_axes=n_j, make=make)
    axes = canvas.axes
    vertical = canvas.owned and stacked(canvas.width)
    # Room for the task labels and y label: once when the panels share the y axis.
    label_in = max(text_width_in(lab, tick_pt) for lab in row_labels) + 0.45
    labelled = 1 if vertical or canvas.owned else n_j
    panel_in = (canvas.width - label_in * labelled - 0.1) / (1 if vertical else n_j)
    cell_in = panel_in / max(n_cols, 1)
    x_pt = size_pt("xtick.labelsize")
    widest = max(text_width_in(lab, x_pt) for lab in col_labels)
    if widest <= 0.9 * cell_in:
        xticks, xlabels, rotation = np.arange(n_cols), col_labels, 0
    elif 1.3 * x_pt / 72.0 <= cell_in:
        xticks, xlabels, rotation = np.arange(n_cols), col_labels, 90
    else:
        # Too narrow for a label per column: one per replicate, centred on its columns.
        reps = pd.Series(np.arange(n_cols), index=[r for r, _ in col_keys])
        centre = reps.groupby(level=0).mean()
        step = max(1, int(np.ceil(text_width_in("00", x_pt) / (cell_in * n_cols / len(centre)))))
        centre = centre.iloc[::step]
        xticks, xlabels, rotation = centre.to_numpy(), [str(r) for r in centre.index], 0
    any_missing = False
    for k, (a, jname) in enumerate(zip(axes, judges, strict=True)):
        part = f.loc[f["_judge"] == jname].drop_duplicates(
            ["_task", "replicate", "_order"], keep="last"
        )
        grid = np.full((n_rows, n_cols), missing, dtype=np.int64)
        ri = t_index.get_indexer(part["_task"])
        ci = c_index.get_indexer(pd.MultiIndex.from_arrays([part["replicate"], part["_order"]]))
        grid[ri, ci] = part["_code"].to_numpy()
        any_missing = any_missing or bool((grid == missing).any())
        a.imshow(grid, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        a.set_xticks(xticks, xlabels, rotation=rotation)
        # Cell borders as two line collections: grid lines cost a Tick per border.
        a.hlines(np.arange(n_rows + 1) - 0.5, -0.5, n_cols - 0.5, colors="white", linewidth=1.0)
        a.vlines(np.arange(n_cols + 1) - 0.5, -0.5, n_rows - 0.5, colors="white", linewidth=1.0)
        a.set_xlim(-0.5, n_cols - 0.5)
        a.set_ylim(n_rows - 0.5, -0.5)
        for side in ("top", "right", "bottom", "left"):
            a.spines[side].set_visible(False)
        axes_title(a, None, jname, panel_in)
        last_row = k == n_j - 1 or not vertical
        if last_row:
            text = (
                f"replicate · order (W = {arms['with']} shown first, O = {arms['without']} first)"
                if has_order
                else "replicate"
            )
            a.set_xlabel(wrap(text, panel_in, size_pt("axes.labelsize")))
        if k == 0 or vertical or not canvas.owned:
            a.set_yticks(np.arange(n_rows), row_labels)
            a.set_ylabel(y_label)
        else:
            a.tick_params(axis="y", labelleft=False)
        if cut is not None:
            a.axhline(cut - 0.5, color=EDGE, linewidth=1.2, linestyle="--")
    legend_order = ("win", "tie", "loss", "no_answer", "invalid", "error", "missing")
    shown = [c for c in legend_order if c != "missing" or any_missing]
    labels = [_CELL_LABELS[c].replace("{with}", arms["with"]) for c in shown]
    handles = [Patch(facecolor=OUTCOME_COLORS[c], edgecolor=EDGE, linewidth=0.5) for c in shown]
    figure_legend(canvas, handles, labels)
    rubric_name = present[0] if rubric is None else rubric
    figure_title(canvas, title, f"Per-task outcomes, rubric {rubric_name}")
    return canvas.root
