"""Replicates and monitoring: pass^k curves per arm, and the confidence sequence over tasks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from .._validate import check_columns
from ._base import (
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    axes_title,
    conf_text,
    legend_below,
    new_canvas,
    num,
    styled,
)


def _lines(a: Any, groups: Sequence[tuple[str, pd.DataFrame]], x: str) -> None:
    for i, (label, part) in enumerate(groups):
        color = OKABE_ITO[LINE_COLORS[i % len(LINE_COLORS)]]
        xs = num(part[x])
        a.fill_between(xs, num(part["ci_low"]), num(part["ci_high"]), color=color, alpha=0.18,
                       linewidth=0, step="post" if x == "n_tasks" else None)  # fmt: skip
        a.plot(xs, num(part["estimate"]), color=color, label=label, linewidth=1.6,
               linestyle=LINE_STYLES[i % len(LINE_STYLES)], marker="o" if len(part) <= 12 else None,
               markersize=3.5, drawstyle="steps-post" if x == "n_tasks" else "default")  # fmt: skip
    a.grid(True)
    a.set_axisbelow(True)
    legend_below(a, ncol=min(len(groups), 4))


@styled
def plot_pass_k(
    table: pd.DataFrame,
    *,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """pass^k (every one of k replicates succeeds) against k, one line and band per arm.

    Parameters
    ----------
    table : DataFrame
        :func:`evalstats.stats.replicates` output (K arms: stacked per pair with ``arm_a`` /
        ``arm_b``, as the report's ``replicates`` table).
    arm_names : mapping, optional
        What to call each arm (default its id).
    title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        pass^k with its interval band per arm, k = 1 to the largest number of replicates.

    Examples
    --------
    >>> from evalstats.stats import replicates
    >>> runs = pd.DataFrame({"task_id": list("aabbcc") * 2, "arm": ["with"] * 6 + ["without"] * 6,
    ...                      "passed": [1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1]})
    >>> len(plot_pass_k(replicates(runs)).axes[0].get_lines())
    2
    """
    check_columns(table, ["arm", "reference", "statistic", "k", "estimate", "ci_low", "ci_high"])
    t = table.loc[table["reference"].isna()].drop_duplicates(["arm", "statistic"])
    t = t.loc[t["statistic"].astype(str).str.startswith("pass^")].sort_values("k", kind="stable")
    if t.empty:
        raise ValueError("no pass^k rows")
    names = dict(arm_names or {})
    arms = list(dict.fromkeys(t["arm"].astype(str)))
    groups = [(names.get(arm, arm), t.loc[t["arm"].astype(str) == arm]) for arm in arms]
    canvas = new_canvas("plot_pass_k", ax, width, figsize, lambda w: 3.2 if w >= 5 else 3.0)
    a = canvas.axes[0]
    _lines(a, groups, "k")
    a.set_ylim(-0.02, 1.02)
    a.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    a.xaxis.set_major_locator(MaxNLocator(integer=True))
    a.set_xlabel("k (replicates that must all succeed)")
    a.set_ylabel("pass^k")
    conf = float(t["confidence"].iloc[0]) if "confidence" in t.columns else None
    default = f"pass^k per arm ({conf_text(conf)}): {', '.join(g for g, _ in groups)}"
    axes_title(a, title, default, canvas.width - 0.9)
    return canvas.root


@styled
def plot_monitor(
    table: pd.DataFrame,
    *,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """The net win so far and its anytime-valid confidence sequence against tasks completed.

    Parameters
    ----------
    table : DataFrame
        :func:`evalstats.stats.monitor` output, every look (K arms: one line per ``arm_a`` /
        ``arm_b`` pair).
    arm_names : mapping, optional
        What to call each arm (default its id).
    title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        Estimate and band per pair against the number of tasks completed.

    Examples
    --------
    >>> from evalstats.stats import monitor
    >>> verdicts = pd.DataFrame({"task_id": range(40), "outcome": ["win", "loss", "win", "tie"] * 10})
    >>> len(plot_monitor(monitor(verdicts)).axes[0].get_lines())
    2
    """
    check_columns(table, ["n_tasks", "estimate", "ci_low", "ci_high"])
    if table.empty:
        raise ValueError("no looks to draw")
    names = {"with": "WITH", "without": "WITHOUT", **(arm_names or {})}
    pair = ["arm_a", "arm_b"] if {"arm_a", "arm_b"} <= set(table.columns) else []
    parts = table.groupby(pair, sort=False) if pair else [(("with", "without"), table)]
    groups = [(" vs ".join(names.get(str(x), str(x)) for x in key), part) for key, part in parts]
    canvas = new_canvas("plot_monitor", ax, width, figsize, lambda w: 3.2 if w >= 5 else 3.0)
    a = canvas.axes[0]
    _lines(a, groups, "n_tasks")
    a.axhline(0.0, color="#666666", linewidth=1.0, linestyle=(0, (4, 2)))
    a.set_ylim(-1.02, 1.02)
    a.xaxis.set_major_locator(MaxNLocator(integer=True))
    a.set_xlabel("tasks completed")
    a.set_ylabel("net win")
    conf = float(table["confidence"].iloc[0]) if "confidence" in table.columns else None
    what = f"{round(100 * conf)} % " if conf is not None else ""
    default = (
        f"Net win as tasks complete, {what}anytime-valid band: {', '.join(g for g, _ in groups)}"
    )
    axes_title(a, title, default, canvas.width - 0.9)
    return canvas.root
