"""Publication figures: one function per figure, each returning a matplotlib ``Figure``.

Every function takes a tidy DataFrame (documented in its docstring; most come straight from
:mod:`evalstats.stats` or the verdict frame) and returns a :class:`matplotlib.figure.Figure`
built with the object API: no pyplot, no global figure registry, no backend selection, so the
functions are safe in scripts, notebooks and threads. :func:`save_figure` writes PNG and SVG.

Colours come from the Okabe–Ito palette (safe for the common colour-vision deficiencies);
outcomes always use :data:`OUTCOME_COLORS` (WITH win blue, tie yellow, loss vermillion, and
grey shades for no_answer / invalid / error), and lines also differ by style so that the
figures survive greyscale printing.
"""

from __future__ import annotations

import functools
import io
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, PercentFormatter

from ._schema import BLIND_DIMENSIONS, OUTCOMES, STATUSES
from .records import atomic_write
from .stats.dimensions import dimension_means

__all__ = [
    "ARM_COLORS",
    "OKABE_ITO",
    "OUTCOME_COLORS",
    "plot_confusion",
    "plot_cost_ratios",
    "plot_dimension_scores",
    "plot_headline",
    "plot_length_bias",
    "plot_power_curve",
    "layout_figure",
    "plot_task_heatmap",
    "render_figure",
    "save_figure",
]

# Okabe & Ito (2008), "Color Universal Design".
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
OUTCOME_COLORS: dict[str, str] = {
    "win": OKABE_ITO["blue"],
    "tie": OKABE_ITO["yellow"],
    "loss": OKABE_ITO["vermillion"],
    "no_answer": "#C8C8C8",
    "invalid": "#8C8C8C",
    "error": "#4D4D4D",
    "conflict": OKABE_ITO["reddish_purple"],
    "missing": "#FFFFFF",
}
ARM_COLORS: dict[str, str] = {"with": OKABE_ITO["blue"], "without": OKABE_ITO["orange"]}
# Line colours in order; yellow is left out (too light for a line on white).
_LINE_COLORS = (
    "blue",
    "vermillion",
    "bluish_green",
    "reddish_purple",
    "orange",
    "sky_blue",
    "black",
)
_LINE_STYLES = ("-", "--", "-.", ":")
_EDGE = "#333333"

_STYLE: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "svg.fonttype": "none",  # text stays text in SVG: searchable and editable
    "svg.hashsalt": "evalstats",  # stable element ids: SVGs diff cleanly between runs
}

_F = TypeVar("_F", bound=Callable[..., Any])


# Tick formatters are module functions, not lambdas, so that a figure can be pickled (the
# report renders its raster copy in another process).
def _format_pp(v: float, _pos: Any = None) -> str:
    return f"{100 * v:+.0f} pp" if abs(v) > 1e-12 else "0"


def _format_times(v: float, _pos: Any = None) -> str:
    return f"{v:g}×"


def _styled(func: _F) -> _F:
    """Build the figure under the package style without touching the caller's rcParams."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context(_STYLE):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _require(frame: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; has {list(frame.columns)}")


def _num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def _asym_err(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error-bar lengths; NaN bounds become 0-length bars (nothing drawn)."""
    lo = np.where(np.isfinite(low), value - low, 0.0)
    hi = np.where(np.isfinite(high), high - value, 0.0)
    return np.vstack([np.maximum(lo, 0.0), np.maximum(hi, 0.0)])


def _conf_text(confidence: float | None) -> str:
    return f"{round(100 * confidence)} % CI" if confidence is not None else "CI"


# --------------------------------------------------------------------------- headline


@_styled
def plot_headline(
    rates: pd.DataFrame,
    *,
    group: str | Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Win / tie / loss shares and net win, with confidence intervals, per judge or group.

    Parameters
    ----------
    rates : DataFrame
        One row per group, as :func:`evalstats.stats.winrates.win_rates` returns: the group
        column(s); ``win_rate``, ``tie_rate``, ``loss_rate``, ``net_win``, each with
        ``<name>_ci_low`` and ``<name>_ci_high`` (NaN bounds are drawn without a bar);
        ``n`` (judged pairs in the denominator) and ``n_clusters`` (tasks). Optional
        ``confidence`` and ``method`` columns are quoted in the title.
    group : str or list of str, optional
        Column(s) naming the groups; by default the first of ``group``, ``judge``, ``rubric``
        present (a frame with none of them must have one row, labelled "all").
    title : str, optional
        Figure title; a default names the interval.

    Returns
    -------
    Figure
        Left axes: dodged win / tie / loss bars (3 per group) with CI error bars; right axes:
        net win = P(win) − P(loss) with its CI and a zero line. Tick labels carry
        "n pairs · n tasks".

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_headline
    >>> rates = pd.DataFrame({
    ...     "judge": ["anthropic:claude-sonnet-4", "openai:gpt-5.4"], "n": [84, 82],
    ...     "n_clusters": [15, 15],
    ...     "win_rate": [0.45, 0.40], "win_rate_ci_low": [0.35, 0.30],
    ...     "win_rate_ci_high": [0.55, 0.50],
    ...     "tie_rate": [0.35, 0.38], "tie_rate_ci_low": [0.26, 0.28],
    ...     "tie_rate_ci_high": [0.44, 0.48],
    ...     "loss_rate": [0.20, 0.22], "loss_rate_ci_low": [0.12, 0.14],
    ...     "loss_rate_ci_high": [0.28, 0.30],
    ...     "net_win": [0.25, 0.18], "net_win_ci_low": [0.08, 0.01],
    ...     "net_win_ci_high": [0.42, 0.35]})
    >>> fig = plot_headline(rates)
    >>> len(fig.axes[0].patches)
    6
    """
    names = ("win_rate", "tie_rate", "loss_rate", "net_win")
    cols = [c for n in names for c in (n, f"{n}_ci_low", f"{n}_ci_high")]
    _require(rates, [*cols, "n", "n_clusters"], "rates")
    if len(rates) == 0:
        raise ValueError("rates has no rows")
    if group is None:
        group = next((c for c in ("group", "judge", "rubric") if c in rates.columns), None)
    group_cols = [group] if isinstance(group, str) else list(group or [])
    _require(rates, group_cols, "rates")
    if group_cols:
        labels = [
            " · ".join(str(v) for v in row)
            for row in rates[group_cols].astype(str).itertuples(index=False)
        ]
    elif len(rates) == 1:
        labels = ["all"]
    else:
        raise ValueError("several rows but no group column: pass group=")
    n = rates["n"].to_numpy()
    n_clusters = rates["n_clusters"].to_numpy()
    wrap = any(len(lab) > 18 for lab in labels)
    labels = [lab.replace(":", ":\n", 1) if wrap else lab for lab in labels]
    ticks = [
        f"{lab}\nn = {int(a)} pairs · {int(b)} tasks"
        for lab, a, b in zip(labels, n, n_clusters, strict=True)
    ]
    confidence = float(rates["confidence"].iloc[0]) if "confidence" in rates.columns else None
    method = str(rates["method"].iloc[0]) if "method" in rates.columns else None

    g = len(rates)
    fig = Figure(figsize=(4.4 + 1.9 * g, 3.9), layout="constrained")
    ax, ax_net = fig.subplots(1, 2, width_ratios=[2.2, 1.1])
    x = np.arange(g, dtype=float)
    width = 0.26
    for k, (name, outcome) in enumerate(zip(names[:3], ("win", "tie", "loss"), strict=True)):
        v = _num(rates[name])
        lo, hi = _num(rates[f"{name}_ci_low"]), _num(rates[f"{name}_ci_high"])
        xs = x + (k - 1) * width
        ax.bar(
            xs,
            np.nan_to_num(v),
            width,
            color=OUTCOME_COLORS[outcome],
            edgecolor=_EDGE,
            linewidth=0.6,
            label={
                "win": "WITH better (win)",
                "tie": "equivalent (tie)",
                "loss": "WITH worse (loss)",
            }[outcome],
        )
        ax.errorbar(
            xs,
            v,
            yerr=_asym_err(v, lo, hi),
            fmt="none",
            ecolor="black",
            elinewidth=0.9,
            capsize=2.5,
        )
        for xi, vi, hi_i in zip(xs, v, hi, strict=True):
            if np.isfinite(vi):
                top = hi_i if np.isfinite(hi_i) else vi
                ax.text(xi, top + 0.015, f"{100 * vi:.0f} %", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, ticks)
    # Headroom above 100 % keeps the value labels clear of the legend.
    ax.set_ylim(0, 1.18)
    ax.set_yticks(np.linspace(0, 1, 6))
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_ylabel("share of judged pairs (%)")
    ax.set_xlabel(" · ".join(group_cols) if group_cols else "group")
    ax.set_title("Outcome shares (WITH vs WITHOUT)")
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.legend(loc="upper center", ncols=3, frameon=False, fontsize=8)

    v = _num(rates["net_win"])
    lo, hi = _num(rates["net_win_ci_low"]), _num(rates["net_win_ci_high"])
    ax_net.axhline(0.0, color="black", linewidth=0.8, linestyle="--")
    ax_net.errorbar(
        x,
        v,
        yerr=_asym_err(v, lo, hi),
        fmt="o",
        color=OUTCOME_COLORS["win"],
        ecolor="black",
        elinewidth=1.0,
        capsize=3,
        markersize=6,
    )
    for xi, vi in zip(x, v, strict=True):
        if np.isfinite(vi):
            ax_net.annotate(
                f"{100 * vi:+.0f}",
                (xi, vi),
                xytext=(6, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
    # The net-win panel is narrow: model names without the provider, when still unique.
    short = [lab.split(":\n", 1)[-1] for lab in labels]
    ax_net.set_xticks(
        x,
        short if len(set(short)) == len(short) else labels,
        rotation=30 if g > 2 else 0,
        ha="right" if g > 2 else "center",
    )
    ax_net.set_xlim(-0.6, g - 0.4)
    bounds = np.concatenate([v, lo, hi, [0.0]])
    span = np.nanmax(np.abs(bounds[np.isfinite(bounds)])) if np.isfinite(bounds).any() else 1
    ax_net.set_ylim(-min(1.0, span * 1.25 + 0.05), min(1.0, span * 1.25 + 0.05))
    ax_net.yaxis.set_major_formatter(FuncFormatter(_format_pp))
    ax_net.set_ylabel("net win, P(win) − P(loss) (pp)")
    ax_net.set_xlabel(" · ".join(group_cols) if group_cols else "group")
    ax_net.set_title("Net win")
    ax_net.grid(axis="y")
    ax_net.set_axisbelow(True)
    sub = _conf_text(confidence) + (f", {method}" if method else "") + ", clustered by task"
    fig.suptitle(title or f"Headline: WITH vs WITHOUT ({sub})")
    return fig


# --------------------------------------------------------------------------- task heatmap

_CELL_CATEGORIES = (*OUTCOMES, *[s for s in STATUSES if s != "ok"], "missing")
_CELL_LABELS = {
    "loss": "loss (WITH worse)",
    "tie": "tie",
    "win": "win (WITH better)",
    "no_answer": "no answer (over budget)",
    "invalid": "invalid judge output",
    "error": "judge call failed",
    "conflict": "two different answers",
    "missing": "not judged",
}
_ORDER_SHORT = {"with_first": "W", "without_first": "O"}


def _cell_codes(f: pd.DataFrame) -> np.ndarray:
    """Category code per row: the outcome when ok, else the status."""
    status = f["status"].astype(str).to_numpy()
    outcome = f["outcome"].astype(object).where(f["outcome"].notna(), "").astype(str).to_numpy()
    cat = np.where(status == "ok", outcome, status)
    index = pd.Index(_CELL_CATEGORIES)
    codes = index.get_indexer(cat)
    return np.where(codes < 0, index.get_loc("missing"), codes)


@_styled
def plot_task_heatmap(
    frame: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    rubric: str | None = None,
    title: str | None = None,
) -> Figure:
    """Outcome of every judged pair: tasks × replicates (× orders), one panel per judge.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame (:func:`evalstats.verdict_frame`): ``task_id``, ``replicate``,
        ``judge``, ``rubric``, ``order``, ``status``, ``outcome``.
    judge : str or list of str, optional
        Judge(s) to show; all by default (one panel each).
    rubric : str, optional
        Required when the frame holds several rubrics.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        One image per judge; cells coloured win / tie / loss, grey shades for no_answer,
        invalid and error, white for a pair that judge has no row for. Tasks are sorted by
        net win (mean of win = +1, tie = 0, loss = −1 over the shown judges' ok verdicts),
        best at the top, and labelled with it. Blind-rubric columns are ``<replicate>W``
        (WITH shown first) and ``<replicate>O`` (WITHOUT first).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_task_heatmap
    >>> frame = pd.DataFrame({
    ...     "task_id": ["T1", "T1", "T2", "T2"], "replicate": [1, 2, 1, 2],
    ...     "judge": "openai:gpt-5.4", "rubric": "with-without", "order": None,
    ...     "status": ["ok", "ok", "ok", "no_answer"], "outcome": ["win", "tie", "loss", None]})
    >>> fig = plot_task_heatmap(frame)
    >>> fig.axes[0].images[0].get_array().shape
    (2, 2)
    """
    _require(
        frame, ["task_id", "replicate", "judge", "rubric", "order", "status", "outcome"], "frame"
    )
    f = frame
    present = sorted(set(f["rubric"].astype(str)))
    if rubric is not None:
        f = f.loc[f["rubric"].astype(str) == rubric]
        if f.empty:
            raise ValueError(f"no rows for rubric {rubric!r}; present: {present}")
    elif len(present) > 1:
        raise ValueError(f"the frame holds several rubrics {present}: pass rubric=")
    judges_all = sorted(set(f["judge"].astype(str)))
    if judge is not None:
        wanted = [judge] if isinstance(judge, str) else list(judge)
        unknown = sorted(set(wanted) - set(judges_all))
        if unknown:
            raise ValueError(f"no rows for judge(s) {unknown}; present: {judges_all}")
        f = f.loc[f["judge"].astype(str).isin(wanted)]
        judges = wanted
    else:
        judges = judges_all
    if f.empty:
        raise ValueError("the frame has no rows to show")

    order = f["order"].astype(object).where(f["order"].notna(), "")
    f = f.assign(
        _judge=f["judge"].astype(str),
        _task=f["task_id"].astype(str),
        _order=order.map(lambda o: _ORDER_SHORT.get(o, "")),
        _code=_cell_codes(f),
    )
    has_order = bool((f["_order"] != "").any())
    if has_order:
        # Rows without an order (no_answer pairs, never shown to a judge) fill every order
        # column of their replicate instead of getting a column of their own.
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

    score = np.select(
        [
            f["_code"] == _CELL_CATEGORIES.index("win"),
            f["_code"] == _CELL_CATEGORIES.index("loss"),
            f["_code"] == _CELL_CATEGORIES.index("tie"),
        ],
        [1.0, -1.0, 0.0],
        np.nan,
    )
    net = pd.Series(score, index=f.index).groupby(f["_task"]).mean()
    tasks = sorted(set(f["_task"]))
    net = net.reindex(tasks)
    # Best tasks first; tasks without an ok verdict go last, ties broken by id.
    task_order = sorted(tasks, key=lambda t: (np.isnan(net[t]), -np.nan_to_num(net[t]), t))
    row_labels = [
        f"{t}  ({net[t]:+.2f})" if np.isfinite(net[t]) else f"{t}  (–)" for t in task_order
    ]

    n_cat = len(_CELL_CATEGORIES)
    missing = _CELL_CATEGORIES.index("missing")
    cmap = ListedColormap([OUTCOME_COLORS[c] for c in _CELL_CATEGORIES])
    norm = BoundaryNorm(np.arange(n_cat + 1) - 0.5, n_cat)
    t_index = pd.Index(task_order)
    c_index = pd.MultiIndex.from_tuples(col_keys)

    width = 1.8 + len(judges) * max(2.2, 0.28 * len(col_keys) + 0.8)
    height = 1.9 + 0.24 * len(task_order)
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(judges), sharey=True, squeeze=False)[0])
    any_missing = False
    for k, (ax, jname) in enumerate(zip(axes, judges, strict=True)):
        part = f.loc[f["_judge"] == jname].drop_duplicates(
            ["_task", "replicate", "_order"], keep="last"
        )
        grid = np.full((len(task_order), len(col_keys)), missing, dtype=np.int64)
        ri = t_index.get_indexer(part["_task"])
        ci = c_index.get_indexer(pd.MultiIndex.from_arrays([part["replicate"], part["_order"]]))
        grid[ri, ci] = part["_code"].to_numpy()
        any_missing = any_missing or bool((grid == missing).any())
        ax.imshow(grid, cmap=cmap, norm=norm, aspect="auto", interpolation="nearest")
        ax.set_xticks(
            np.arange(len(col_keys)), col_labels, rotation=90 if len(col_keys) > 12 else 0
        )
        # White cell borders as two line collections: minor ticks with grid lines look the
        # same but cost a Tick (two lines, two labels) per border, which dominated the draw.
        n_rows, n_cols = len(task_order), len(col_keys)
        ax.hlines(np.arange(n_rows + 1) - 0.5, -0.5, n_cols - 0.5, colors="white", linewidth=1.0)
        ax.vlines(np.arange(n_cols + 1) - 0.5, -0.5, n_rows - 0.5, colors="white", linewidth=1.0)
        ax.set_xlim(-0.5, n_cols - 0.5)
        ax.set_ylim(n_rows - 0.5, -0.5)
        for side in ("top", "right", "bottom", "left"):
            ax.spines[side].set_visible(False)
        ax.set_title(jname)
        ax.set_xlabel(
            "replicate · order (W = WITH shown first, O = WITHOUT first)"
            if has_order
            else "replicate"
        )
        if k == 0:
            ax.set_yticks(np.arange(len(task_order)), row_labels)
            ax.set_ylabel("task (net win), sorted by net win")
    legend_order = ("win", "tie", "loss", "no_answer", "invalid", "error", "missing")
    shown = [c for c in legend_order if c != "missing" or any_missing]
    handles = [
        Patch(facecolor=OUTCOME_COLORS[c], edgecolor=_EDGE, linewidth=0.5, label=_CELL_LABELS[c])
        for c in shown
    ]
    fig.legend(
        handles=handles, loc="outside lower center", ncol=min(4, len(handles)), frameon=False
    )
    rubric_name = present[0] if rubric is None else rubric
    fig.suptitle(title or f"Per-task outcomes, rubric {rubric_name}")
    return fig


# --------------------------------------------------------------------------- confusion


@_styled
def plot_confusion(
    table: pd.DataFrame | np.ndarray,
    *,
    labels: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    kappa: Any = None,
    title: str | None = None,
) -> Figure:
    """Judge-vs-judge confusion matrix with counts and row percentages.

    Parameters
    ----------
    table : DataFrame or array, shape (k, k)
        Counts, rows = first judge, columns = second judge, as
        :func:`evalstats.stats.agreement.contingency_table` returns (its index and column
        names are used as the judges' names unless ``judges`` is given).
    labels : sequence of str, optional
        Category labels (default: the DataFrame's index, else loss / tie / win for k = 3).
    judges : pair of str, optional
        Names of the row and column judges.
    kappa : float or result with ``kappa`` (and ``ci_low``, ``ci_high``), optional
        Cohen's kappa to quote in the title, e.g. a
        :class:`~evalstats.stats.agreement.CohenKappaResult`.
    title : str, optional
        Figure title (replaces the default).

    Returns
    -------
    Figure
        Cells shaded by row share (0–100 %), annotated "count" and "row %"; the title gives
        the observed agreement and kappa.

    Examples
    --------
    >>> from evalstats.plots import plot_confusion
    >>> fig = plot_confusion([[10, 3, 1], [4, 20, 5], [0, 6, 30]],
    ...                      judges=("anthropic:claude", "openai:gpt-5.4"), kappa=0.55)
    >>> "0.55" in fig.get_suptitle()
    True
    """
    t = np.asarray(table, dtype="float64")
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] < 2:
        raise ValueError(f"table must be a square k x k matrix with k >= 2, got {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("table must hold finite non-negative counts")
    k = t.shape[0]
    if labels is None:
        if isinstance(table, pd.DataFrame):
            labels = [str(v) for v in table.index]
        elif k == len(OUTCOMES):
            labels = list(OUTCOMES)
        else:
            labels = [str(i) for i in range(k)]
    if len(labels) != k:
        raise ValueError(f"{len(labels)} labels for a {k} x {k} table")
    if judges is None:
        if isinstance(table, pd.DataFrame) and table.index.name and table.columns.name:
            judges = (str(table.index.name), str(table.columns.name))
        else:
            judges = ("judge 1", "judge 2")
    if len(judges) != 2:
        raise ValueError("judges must name the row and the column judge")

    row_sum = t.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(row_sum > 0, t / row_sum, np.nan)
    total = t.sum()
    agree = np.trace(t) / total if total > 0 else np.nan

    fig = Figure(figsize=(1.6 + 1.05 * k, 1.4 + 0.95 * k), layout="constrained")
    ax = fig.subplots()
    im = ax.imshow(np.nan_to_num(share), cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(k):
        for j in range(k):
            pct = "–" if np.isnan(share[i, j]) else f"{100 * share[i, j]:.0f} %"
            dark = np.isfinite(share[i, j]) and share[i, j] > 0.55
            ax.text(
                j,
                i,
                f"{int(t[i, j])}\n{pct}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else "black",
                fontweight="bold" if i == j else "normal",
            )
    ax.set_xticks(np.arange(k), labels)
    ax.set_yticks(np.arange(k), labels)
    ax.set_xlabel(f"{judges[1]} (verdict)")
    ax.set_ylabel(f"{judges[0]} (verdict)")
    for side in ("top", "right"):
        ax.spines[side].set_visible(True)
    cbar = fig.colorbar(im, ax=ax, shrink=0.85)
    cbar.set_label("row share (% of the row judge's verdicts)")
    cbar.ax.yaxis.set_major_formatter(PercentFormatter(1.0))

    parts = [
        f"agreement {int(np.trace(t))}/{int(total)}"
        + (f" ({100 * agree:.0f} %)" if np.isfinite(agree) else "")
    ]
    if kappa is not None:
        kv = float(getattr(kappa, "kappa", getattr(kappa, "estimate", kappa)))
        lo, hi = getattr(kappa, "ci_low", None), getattr(kappa, "ci_high", None)
        ci = (
            f" [{lo:.2f}, {hi:.2f}]"
            if lo is not None and hi is not None and np.isfinite(lo) and np.isfinite(hi)
            else ""
        )
        parts.append(f"Cohen's κ = {kv:.2f}{ci}")
    fig.suptitle(title or "Judge vs judge\n" + ", ".join(parts))
    return fig


# --------------------------------------------------------------------------- cost ratios


def _ratio_axis(ax, r: np.ndarray, what: str, unit_label: str, ci, color: str) -> None:
    lo_r, hi_r = float(r.min()), float(r.max())
    lo_b, hi_b = min(lo_r, 1.0) / 1.15, max(hi_r, 1.0) * 1.15
    bins = np.geomspace(lo_b, hi_b, int(np.clip(np.sqrt(len(r)) * 2, 8, 40)) + 1)
    ax.hist(
        r,
        bins=bins,
        color=color,
        edgecolor=_EDGE,
        linewidth=0.5,
        alpha=0.85,
        label=f"pairs (n = {len(r)})",
    )
    ax.plot(r, np.zeros_like(r), "|", color="black", markersize=8, alpha=0.6, clip_on=False)
    gm = float(np.exp(np.mean(np.log(r))))
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1.0, label="1× (equal cost)")
    ax.axvline(gm, color=OKABE_ITO["vermillion"], linewidth=1.8, label=f"geometric mean {gm:.2f}×")
    if ci is not None:
        c_lo, c_hi = (float(v) for v in ci)
        if np.isfinite(c_lo) and np.isfinite(c_hi):
            ax.axvspan(
                c_lo,
                c_hi,
                color=OKABE_ITO["vermillion"],
                alpha=0.15,
                linewidth=0,
                label=f"CI [{c_lo:.2f}×, {c_hi:.2f}×]",
            )
    ax.set_xscale("log")
    ax.set_xlim(lo_b, hi_b)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(_format_times))
    ax.set_xlabel(f"{unit_label} ratio WITH / WITHOUT (log scale)")
    ax.set_ylabel("pairs (count)")
    ax.set_title(what)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)


@_styled
def plot_cost_ratios(
    frame: pd.DataFrame,
    *,
    wall: bool = True,
    ci: Mapping[str, tuple[float, float]] | None = None,
    title: str | None = None,
) -> Figure:
    """Distribution of per-pair cost ratios WITH / WITHOUT on a log axis.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame or a pair table with ``tokens_with`` and ``tokens_without`` (and, for
        the wall-clock panel, ``wall_with_s`` and ``wall_without_s``). Rows are deduplicated
        on (``task_id``, ``replicate``) when those columns exist, so a verdict frame with
        several judges counts each pair once. Pairs with a missing or zero count are left
        out (the panel title says how many).
    wall : bool, default True
        Add the wall-clock panel when the columns are present.
    ci : mapping, optional
        ``{"tokens": (low, high), "wall": (low, high)}``: a precomputed interval for the
        geometric mean (e.g. the cluster bootstrap of :mod:`evalstats.stats`), drawn as a band.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        One panel per measure: histogram on log-spaced bins, a rug of the pairs, the
        geometric mean of the ratios and the 1× line.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_cost_ratios
    >>> pairs = pd.DataFrame({"task_id": ["a", "a", "b"], "replicate": [1, 2, 1],
    ...                       "tokens_with": [600, 900, 450], "tokens_without": [900, 1000, 900]})
    >>> fig = plot_cost_ratios(pairs)
    >>> fig.axes[0].get_xscale()
    'log'
    """
    _require(frame, ["tokens_with", "tokens_without"], "frame")
    f = frame
    if {"task_id", "replicate"} <= set(f.columns):
        f = f.drop_duplicates(["task_id", "replicate"])
    measures = [("tokens", "Tokens (cl100k_base)", "token", "tokens_with", "tokens_without")]
    if wall and {"wall_with_s", "wall_without_s"} <= set(f.columns):
        measures.append(("wall", "Wall-clock time", "wall-clock", "wall_with_s", "wall_without_s"))
    fig = Figure(figsize=(4.6 * len(measures), 4.0), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(measures), squeeze=False)[0])
    colors = (OKABE_ITO["sky_blue"], OKABE_ITO["bluish_green"])
    for ax, (key, what, unit, a, b), color in zip(axes, measures, colors, strict=False):
        num, den = _num(f[a]), _num(f[b])
        with np.errstate(divide="ignore", invalid="ignore"):
            r = num / den
        ok = np.isfinite(r) & (r > 0)
        if not ok.any():
            raise ValueError(f"no pair has a positive finite {unit} ratio")
        dropped = int((~ok).sum())
        _ratio_axis(
            ax,
            r[ok],
            what + (f" ({dropped} pairs without a ratio left out)" if dropped else ""),
            unit,
            (ci or {}).get(key),
            color,
        )
    fig.suptitle(title or "Cost of WITH relative to WITHOUT, per pair")
    return fig


# --------------------------------------------------------------------------- blind dimensions


@_styled
def plot_dimension_scores(
    frame: pd.DataFrame,
    *,
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Blind-rubric scores per dimension, WITH vs WITHOUT, and their paired difference.

    Parameters
    ----------
    frame : DataFrame
        Either a precomputed tidy frame with columns ``dim``, ``arm`` (``with``,
        ``without`` and optionally ``difference``), ``mean``, ``ci_low``, ``ci_high``
        (e.g. from a cluster bootstrap), or a verdict frame, summarised with
        :func:`dimension_means` (per-task means, t interval over tasks).
    confidence : float, default 0.95
        Confidence level when the summary is computed here.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        Left: mean score (1–5) per dimension for each arm with CIs; right (when a
        ``difference`` arm is present): WITH − WITHOUT with CIs and a zero line.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_dimension_scores
    >>> summary = pd.DataFrame({"dim": ["correctness"] * 2, "arm": ["with", "without"],
    ...                         "mean": [4.1, 3.6], "ci_low": [3.8, 3.3],
    ...                         "ci_high": [4.4, 3.9]})
    >>> fig = plot_dimension_scores(summary)
    >>> fig.axes[0].get_ylabel()
    'mean score (1–5 scale)'
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

    def values(arm: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = (
            summary.assign(_dim=summary["dim"].astype(str))
            .loc[summary["arm"].astype(str) == arm]
            .drop_duplicates("_dim", keep="last")
        )
        s = s.set_index("_dim").reindex(dims)
        return _num(s["mean"]), _num(s["ci_low"]), _num(s["ci_high"])

    panel = 1.3 + 0.9 * len(dims)
    fig = Figure(figsize=(panel * (2 if has_diff else 1) + 0.6, 3.8), layout="constrained")
    if has_diff:
        ax, ax_d = fig.subplots(1, 2, width_ratios=[1.2, 1.0])
    else:
        ax, ax_d = fig.subplots(), None
    x = np.arange(len(dims), dtype=float)
    tick_labels = [d.replace("_", "\n") for d in dims]
    for k, (arm, marker) in enumerate((("with", "o"), ("without", "s"))):
        m, lo, hi = values(arm)
        ax.errorbar(
            x + (k - 0.5) * 0.28,
            m,
            yerr=_asym_err(m, lo, hi),
            fmt=marker,
            color=ARM_COLORS[arm],
            ecolor=ARM_COLORS[arm],
            capsize=3,
            markersize=6,
            elinewidth=1.2,
            label=arm.upper(),
        )
    ax.set_xticks(x, tick_labels)
    ax.set_xlim(-0.6, len(dims) - 0.4)
    ax.set_ylim(0.8, 5.2)
    ax.set_ylabel("mean score (1–5 scale)")
    ax.set_xlabel("blind-rubric dimension")
    ax.set_title(f"Scores by arm (mean, {_conf_text(conf)})")
    ax.grid(axis="y")
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", frameon=False)
    if ax_d is not None:
        m, lo, hi = values("difference")
        ax_d.axhline(0.0, color="black", linestyle="--", linewidth=0.8)
        ax_d.errorbar(
            x,
            m,
            yerr=_asym_err(m, lo, hi),
            fmt="D",
            color=OKABE_ITO["bluish_green"],
            ecolor="black",
            capsize=3,
            markersize=5,
            elinewidth=1.0,
        )
        ax_d.set_xticks(x, tick_labels)
        ax_d.set_xlim(-0.6, len(dims) - 0.4)
        ax_d.set_ylabel("WITH − WITHOUT (score points)")
        ax_d.set_xlabel("blind-rubric dimension")
        ax_d.set_title("Paired difference")
        ax_d.grid(axis="y")
        ax_d.set_axisbelow(True)
    fig.suptitle(title or "Blind-rubric dimension scores (clustered by task)")
    return fig


# --------------------------------------------------------------------------- power


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


@_styled
def plot_power_curve(
    curve: pd.DataFrame,
    *,
    hue: str | Sequence[str] | None = None,
    target: float = 0.8,
    mark_n_tasks: int | None = None,
    title: str | None = None,
) -> Figure:
    """Power against the number of tasks, one line per design.

    Parameters
    ----------
    curve : DataFrame
        Columns ``n_tasks`` and ``power`` plus the design columns, as
        :func:`evalstats.stats.power.power_curve` returns (``net_win``, ``n_replicates``,
        ``icc``, ``p_tie``...).
    hue : str or list of str, optional
        Column(s) distinguishing the lines; by default every one of ``net_win``,
        ``n_replicates``, ``icc``, ``p_tie`` that takes several values.
    target : float, default 0.8
        Reference power, drawn as a dashed line.
    mark_n_tasks : int, optional
        Draw a vertical line at this number of tasks (e.g. the current design).
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        x: number of tasks; y: power (0–100 %). Lines differ by colour and style.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_power_curve
    >>> curve = pd.DataFrame({"n_tasks": [10, 20, 40] * 2, "net_win": [0.1] * 3 + [0.2] * 3,
    ...                       "power": [0.1, 0.2, 0.4, 0.3, 0.6, 0.9]})
    >>> fig = plot_power_curve(curve)
    >>> len(fig.axes[0].get_lines())  # two designs + the reference line
    3
    """
    _require(curve, ["n_tasks", "power"], "curve")
    if len(curve) == 0:
        raise ValueError("curve has no rows")
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be in (0, 1), got {target}")
    if hue is None:
        hue_cols = [c for c in _HUE_NAMES if c in curve.columns and curve[c].nunique() > 1]
    else:
        hue_cols = [hue] if isinstance(hue, str) else list(hue)
        _require(curve, hue_cols, "curve")
    fig = Figure(figsize=(5.6, 3.8), layout="constrained")
    ax = fig.subplots()
    groups = curve.groupby(hue_cols, sort=True) if hue_cols else [((), curve)]
    for i, (key, part) in enumerate(groups):
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(
            _hue_label(c, v, named=len(hue_cols) > 1) for c, v in zip(hue_cols, key, strict=True)
        )
        part = part.sort_values("n_tasks")
        ax.plot(
            _num(part["n_tasks"]),
            _num(part["power"]),
            color=OKABE_ITO[_LINE_COLORS[i % len(_LINE_COLORS)]],
            linestyle=_LINE_STYLES[(i // len(_LINE_COLORS) + i) % len(_LINE_STYLES)],
            marker="o" if len(part) <= 12 else None,
            markersize=3.5,
            linewidth=1.6,
            label=label or "power",
        )
    ax.axhline(
        target,
        color="#666666",
        linestyle=(0, (4, 2)),
        linewidth=1.0,
        label=f"target {100 * target:.0f} % power",
    )
    if mark_n_tasks is not None:
        ax.axvline(
            float(mark_n_tasks),
            color="black",
            linestyle=":",
            linewidth=1.0,
            label=f"this design: {int(mark_n_tasks)} tasks",
        )
    ax.set_ylim(0.0, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("number of tasks (clusters)")
    ax.set_ylabel("power (probability of rejecting net win = 0)")
    ax.grid(True)
    ax.set_axisbelow(True)
    ax.legend(
        loc="lower right",
        frameon=False,
        title=_HUE_NAMES.get(hue_cols[0], hue_cols[0]) if len(hue_cols) == 1 else None,
    )
    ax.set_title(title or "Power of the task-clustered test of net win")
    return fig


# --------------------------------------------------------------------------- length bias

# Horizontal offset between judges sharing a bin, so that their error bars do not overlap:
# this fraction of the plotted x range (a log-ratio range on the ratio axis).
_DODGE = 0.012
_MARKERS = ("o", "s", "D", "^", "v", "P")
_MARKER_GLYPHS = ("●", "■", "◆", "▲", "▼", "✚")


def _ratio_tick(v: float, _: Any) -> str:
    if v <= 0:
        return ""
    if v >= 1:
        return f"×{v:g}"
    return f"×1/{1 / v:g}"


@_styled
def plot_length_bias(
    table: pd.DataFrame,
    *,
    hue: str | None = None,
    facet: str | None = "model",
    confidence: float | None = None,
    title: str | None = None,
) -> Figure:
    """P(model wins) against the length of its output relative to the baseline's.

    Parameters
    ----------
    table : DataFrame
        One row per (facet, hue, bin), as
        :func:`evalstats.adapters.alpaca_eval.length_bias` returns: ``x`` (the measure,
        ``"log_ratio"`` or ``"diff"``), ``x_mean`` (the bin's mean of it), ``p_win``,
        ``ci_low``, ``ci_high`` (Wilson interval) and ``n``; optionally ``slope``,
        ``slope_ci_low``, ``slope_ci_high`` (the logistic slope, quoted in the legend).
    hue : str, optional
        Column naming the lines (judges); by default the first of ``annotator``, ``judge``
        present.
    facet : str or None, default "model"
        Column naming the panels (one per value); None, or a column that is absent, draws
        one panel.
    confidence : float, optional
        Level of the intervals, quoted in the title.
    title : str, optional
        Figure title.

    Returns
    -------
    Figure
        One panel per facet value, one line per judge (colour, line style and marker
        differ) with the bins' Wilson intervals; judges sharing a bin are offset
        horizontally by a small fixed amount so that the bars stay apart. For the log-ratio
        the x axis shows the ratio (model length / baseline length, log scale); for the
        difference it shows characters. A dashed line marks 50 % and a dotted one equal
        lengths.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.plots import plot_length_bias
    >>> table = pd.DataFrame({
    ...     "model": "m", "annotator": ["j1", "j1", "j2", "j2"], "x": "log_ratio",
    ...     "x_mean": [-0.7, 0.4] * 2, "p_win": [0.1, 0.4, 0.15, 0.5], "n": [50] * 4,
    ...     "ci_low": [0.04, 0.28, 0.07, 0.37], "ci_high": [0.21, 0.53, 0.28, 0.63]})
    >>> fig = plot_length_bias(table)
    >>> fig.axes[0].get_xscale()
    'log'
    """
    _require(table, ["x_mean", "p_win", "ci_low", "ci_high", "n"], "table")
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
    xs = _num(t["x_mean"])
    finite = xs[np.isfinite(xs)]
    span = float(finite.max() - finite.min()) if finite.size else 1.0
    step = _DODGE * (span if span > 0 else 1.0)

    fig = Figure(figsize=(0.6 + 3.9 * len(facets), 4.1), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(facets), sharey=True, squeeze=False)[0])
    for ax, name in zip(axes, facets, strict=True):
        part = t.loc[t["_facet"] == name]
        slopes = []
        for i, h in enumerate(hues):
            g = part.loc[part["_hue"] == h].sort_values("x_mean")
            if g.empty:
                continue
            color = OKABE_ITO[_LINE_COLORS[i % len(_LINE_COLORS)]]
            x = _num(g["x_mean"]) + (i - (len(hues) - 1) / 2) * step
            x = np.exp(x) if ratio else x
            p = _num(g["p_win"])
            ax.errorbar(
                x,
                p,
                yerr=_asym_err(p, _num(g["ci_low"]), _num(g["ci_high"])),
                color=color,
                linestyle=_LINE_STYLES[i % len(_LINE_STYLES)],
                marker=_MARKERS[i % len(_MARKERS)],
                markersize=4.5,
                linewidth=1.4,
                elinewidth=0.9,
                capsize=2.5,
                label=h,
            )
            if {"slope", "slope_ci_low", "slope_ci_high"} <= set(g.columns):
                est, lo, hi = (_num(g[c])[0] for c in ("slope", "slope_ci_low", "slope_ci_high"))
                if np.isfinite(est):
                    slopes.append((i, color, f"{est:.2f} [{lo:.2f}, {hi:.2f}]"))
        if slopes:
            # Per panel: each facet has its own fits, so the legend cannot carry them.
            unit = "per unit log-ratio" if ratio else "per character"
            ax.text(
                0.02,
                0.98,
                f"logistic slope {unit}:",
                transform=ax.transAxes,
                va="top",
                fontsize=7.5,
            )
            for k, (i, color, text) in enumerate(slopes, start=1):
                ax.text(
                    0.02,
                    0.98 - 0.065 * k,
                    f"{_MARKER_GLYPHS[i % len(_MARKERS)]} {text}",
                    transform=ax.transAxes,
                    va="top",
                    fontsize=7.5,
                    color=color,
                )
        ax.axhline(0.5, color="#666666", linestyle=(0, (4, 2)), linewidth=1.0, label="50 %")
        ax.axvline(
            1.0 if ratio else 0.0,
            color="#999999",
            linestyle=":",
            linewidth=1.0,
            label="equal lengths",
        )
        if ratio:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(_ratio_tick))
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_xlabel("length ratio, model ÷ baseline (characters, log scale)")
        else:
            ax.set_xlabel("length difference, model − baseline (characters)")
        ax.set_ylim(0.0, 1.0)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(True)
        ax.set_axisbelow(True)
        n = int(part.groupby("_hue")["n"].sum().max())
        ax.set_title(f"{name} (n = {n} instructions)" if facet in table.columns else name)
    axes[0].set_ylabel("P(model wins) (% of the bin's instructions)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 3),
        frameon=False,
        title=hue,
    )
    sub = _conf_text(confidence).replace("CI", "Wilson CI")
    fig.suptitle(title or f"Length bias: P(model preferred to the baseline) by length ({sub})")
    return fig


# --------------------------------------------------------------------------- saving

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def save_figure(
    fig: Figure,
    out_dir: str | os.PathLike[str],
    name: str,
    *,
    dpi: int = 300,
    formats: Sequence[str] = ("png", "svg"),
) -> list[Path]:
    """Write ``fig`` as ``out_dir/name.png`` and ``out_dir/name.svg`` (atomically).

    Parameters
    ----------
    fig : Figure
        A figure from this module (or any matplotlib Figure).
    out_dir : path-like
        Directory, created if needed.
    name : str
        File stem: letters, digits, ``.``, ``_``, ``-``.
    dpi : int, default 300
        Raster resolution (at least 200).
    formats : sequence of str, default ("png", "svg")
        Any of ``png``, ``svg``, ``pdf``.

    Returns
    -------
    list of Path
        The files written, in ``formats`` order.

    Examples
    --------
    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> from evalstats.plots import save_figure
    >>> fig = Figure(); _ = fig.subplots().plot([1, 2])
    >>> [p.suffix for p in save_figure(fig, tempfile.mkdtemp(), "demo")]
    ['.png', '.svg']
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(f"name must be a plain file stem, got {name!r}")
    if int(dpi) < 200:
        raise ValueError(f"dpi must be at least 200 for publication, got {dpi}")
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise ValueError(f"formats must be among png, svg, pdf, got {list(formats)}")
    out = Path(out_dir)
    paths = []
    for fmt, data in render_figure(fig, dpi=dpi, formats=formats).items():
        path = out / f"{name}.{fmt}"
        atomic_write(path, lambda fh, data=data: fh.write(data))
        # The atomic writer's temporary file is private (0600); figures are for sharing.
        path.chmod(0o644)
        paths.append(path)
    return paths


def layout_figure(fig: Figure) -> Any:
    """Settle ``fig``'s layout, freeze it, and return its tight bounding box (inches).

    After this, every rendering of ``fig`` (any format, any dpi, in this process or after
    pickling it to another) is one draw at the same positions: what :func:`render_figure`
    does first.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(3, 2), layout="constrained"); _ = fig.subplots().plot([1, 2])
    >>> bbox = layout_figure(fig)
    >>> bool(0 < bbox.width <= 3.3), fig.get_layout_engine().__class__.__name__
    (True, 'PlaceHolderLayoutEngine')
    """
    with matplotlib.rc_context(_STYLE):
        # One layout pass, then frozen: every later rendering draws at these positions, so
        # the same figure gives the same bytes whenever and wherever it is saved.
        fig.draw_without_rendering()
        bbox = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
        fig.set_layout_engine("none")  # keeps the settled positions
    return bbox


def render_figure(
    fig: Figure,
    *,
    dpi: int = 300,
    formats: Sequence[str] = ("png", "svg"),
    bbox: Any = None,
) -> dict[str, bytes]:
    """The bytes of ``fig`` in each format, laid out once (what :func:`save_figure` writes).

    The layout (constrained, then the tight bounding box) is computed once and frozen
    (:func:`layout_figure`; pass its ``bbox`` when already done), so each format costs one
    draw instead of a layout pass and two draws; the bytes are the same whenever the same
    figure is rendered (no dates or versions in the metadata).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); _ = fig.subplots().plot([1, 2])
    >>> out = render_figure(fig)
    >>> sorted(out), out["png"][:4]
    (['png', 'svg'], b'\x89PNG')
    """
    # Metadata without dates or versions: the same figure gives the same bytes.
    metadata = {
        "png": {"Software": None},
        "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
    }
    engine = None
    if bbox is None:
        engine = fig.get_layout_engine()
        bbox = layout_figure(fig)
    out: dict[str, bytes] = {}
    try:
        with matplotlib.rc_context(_STYLE):
            for fmt in formats:
                buf = io.BytesIO()
                fig.savefig(
                    buf,
                    format=fmt,
                    dpi=int(dpi),
                    bbox_inches=bbox,
                    facecolor="white",
                    metadata=metadata[fmt],
                )
                out[fmt] = buf.getvalue()
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    return out
