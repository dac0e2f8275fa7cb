"""K-arm figures: pairwise net wins, rank sets, P(i beats j) and the Pareto plot."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullFormatter, StrMethodFormatter

from .._validate import check_columns
from ._base import (
    EDGE,
    LINE_COLORS,
    LINE_STYLES,
    OKABE_ITO,
    axes_title,
    figure_legend,
    figure_title,
    legend_columns,
    new_canvas,
    num,
    size_pt,
    styled,
    text_width_in,
    wrap,
)

_MARGINAL = OKABE_ITO["blue"]
_RANK_ROWS = ("rank", "marginal_rank_set", "simultaneous_rank_set")
_SIMULTANEOUS = OKABE_ITO["vermillion"]


def _namer(arm_names: Mapping[str, str] | None) -> Callable[[Any], str]:
    """An arm id's display name (the id by default), on one line."""
    if arm_names is not None and not isinstance(arm_names, Mapping):
        raise TypeError(f"arm_names must be a mapping of arm id to name, got {arm_names!r}")
    names = {str(k): " ".join(str(v).split()) for k, v in (arm_names or {}).items()}
    return lambda arm: names.get(str(arm), str(arm))


def _height_rows(n_rows: int) -> float:
    return 1.3 + max(0.24, 1.6 * size_pt("ytick.labelsize") / 72.0) * n_rows


@styled
def plot_compare(
    result: pd.DataFrame,
    *,
    statistic: str = "net_win",
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Forest plot of every pair's net win: marginal and simultaneous intervals.

    Parameters
    ----------
    result : DataFrame
        :func:`evalstats.stats.compare` output.
    statistic : str
        Which of its statistics (default ``net_win``).
    arm_names, title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        One row per pair: point, marginal interval (thick), simultaneous interval (thin).

    Examples
    --------
    >>> r = pd.DataFrame({"arm_a": ["x", "x"], "arm_b": ["y", "z"], "statistic": "net_win",
    ...     "estimate": [0.2, -0.1], "ci_low": [0.05, -0.3], "ci_high": [0.35, 0.1],
    ...     "sim_low": [0.0, -0.35], "sim_high": [0.4, 0.15]})
    >>> len(plot_compare(r, width="column").axes[0].lines) >= 4
    True
    """
    cols = ["arm_a", "arm_b", "statistic", "estimate", "ci_low", "ci_high"]
    check_columns(result, cols, what="result")
    name = _namer(arm_names)
    r = result.loc[result["statistic"].astype(str) == statistic].reset_index(drop=True)
    if r.empty:
        raise ValueError(f"no {statistic!r} rows in the result")
    labels = [f"{name(a)} vs {name(b)}" for a, b in zip(r.arm_a, r.arm_b, strict=True)]
    n = len(r)
    canvas = new_canvas("plot_compare", ax, width, figsize, lambda w: _height_rows(n))
    a = canvas.axes[0]
    y = np.arange(n)[::-1]
    has_sim = {"sim_low", "sim_high"} <= set(r.columns)
    if has_sim:
        a.errorbar(r["estimate"], y, xerr=[r["estimate"] - r["sim_low"], r["sim_high"] - r["estimate"]],
                   fmt="none", ecolor=_SIMULTANEOUS, elinewidth=1.0, capsize=4)  # fmt: skip
    a.hlines(y, r["ci_low"], r["ci_high"], colors=_MARGINAL, linewidth=3.5)
    a.plot(r["estimate"], y, "o", color=EDGE, markersize=5, zorder=3)
    a.axvline(0.0, color=EDGE, linewidth=0.8, linestyle="--")
    tick_pt = size_pt("ytick.labelsize")
    room = max(1.0, canvas.width * 0.45)
    a.set_yticks(y, [wrap(lab, room, tick_pt) for lab in labels])
    a.set_ylim(-0.7, n - 0.3)
    a.set_xlabel(statistic.replace("_", " ") + " (first arm's view)")
    conf = r["confidence"].iloc[0] if "confidence" in r else None
    level = f"{float(conf):.0%} " if conf is not None and pd.notna(conf) else ""
    handles = [Line2D([], [], color=_MARGINAL, linewidth=3.5)]
    texts = [f"{level}marginal interval"]
    if has_sim:
        handles.append(Line2D([], [], color=_SIMULTANEOUS, linewidth=1.0, marker="|"))
        texts.append(f"{level}simultaneous over the {n} pairs")
    figure_legend(canvas, handles, texts)
    figure_title(canvas, title, f"Pairwise {statistic.replace('_', ' ')}")
    return canvas.root


@styled
def plot_rank_sets(
    ranks: pd.DataFrame,
    *,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Each arm's rank confidence set (marginal and simultaneous) around its point rank.

    Parameters
    ----------
    ranks : DataFrame
        :func:`evalstats.stats.rank` output (its ``rank`` rows are drawn).
    arm_names, title, width, figsize, ax
        As :func:`plot_compare`.

    Returns
    -------
    Figure
        One row per arm, best first: each set a bar, the point rank a dot.

    Examples
    --------
    >>> r = pd.DataFrame({"arm": ["x", "y", "x", "y"], "statistic": "rank",
    ...     "estimate": [1, 2, 1, 2], "ci_low": [1, 1, 1, 1], "ci_high": [1, 2, 2, 2],
    ...     "method": ["marginal_stepdown"] * 2 + ["simultaneous_stepdown"] * 2})
    >>> len(plot_rank_sets(r, width="column").axes[0].collections) >= 2
    True
    """
    check_columns(ranks, ["arm", "estimate", "ci_low", "ci_high", "method"], what="ranks")
    name = _namer(arm_names)
    r = ranks
    if "statistic" in r.columns:
        r = r.loc[r["statistic"].astype(str).isin(_RANK_ROWS)]
    if r.empty:
        raise ValueError("no rank rows to draw")
    arms = r.drop_duplicates("arm").sort_values(["estimate", "arm"], kind="stable")["arm"].tolist()
    k = len(arms)
    kinds = [m for m in ("marginal_stepdown", "simultaneous_stepdown") if (r.method == m).any()]
    kinds += [m for m in pd.unique(r["method"].astype(str)) if m not in kinds]
    canvas = new_canvas("plot_rank_sets", ax, width, figsize, lambda w: _height_rows(k))
    a = canvas.axes[0]
    colors = {"marginal_stepdown": _MARGINAL, "simultaneous_stepdown": _SIMULTANEOUS}
    step = 0.3 if len(kinds) > 1 else 0.0
    handles, texts = [], []
    for m_i, m in enumerate(kinds):
        part = r.loc[r["method"].astype(str) == m].set_index("arm").reindex(arms)
        y = np.arange(k)[::-1] + (step / 2 - m_i * step if len(kinds) > 1 else 0.0)
        color = colors.get(m, OKABE_ITO[LINE_COLORS[(m_i + 2) % len(LINE_COLORS)]])
        a.hlines(y, part["ci_low"] - 0.35, part["ci_high"] + 0.35, colors=color, linewidth=5)
        a.scatter(part["estimate"], y, color=EDGE, s=16, zorder=3)
        handles.append(Line2D([], [], color=color, linewidth=5))
        texts.append(m.replace("_stepdown", "").replace("_", " ") + " rank set")
    a.set_yticks(np.arange(k)[::-1], [wrap(name(x), canvas.width * 0.4,
                                           size_pt("ytick.labelsize")) for x in arms])  # fmt: skip
    a.set_xticks(np.arange(1, k + 1))
    a.set_xlim(0.4, k + 0.6)
    a.set_ylim(-0.7, k - 0.3)
    a.set_xlabel("rank (1 = best)")
    conf = r["confidence"].iloc[0] if "confidence" in r else None
    if conf is not None and pd.notna(conf):
        texts = [f"{float(conf):.0%} {t}" for t in texts]
    figure_legend(canvas, handles, texts)
    figure_title(canvas, title, "Rank confidence sets")
    return canvas.root


@styled
def plot_beats(
    result: pd.DataFrame,
    *,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Heatmap of P(row arm beats column arm) under the fitted model, each cell annotated.

    Parameters
    ----------
    result : DataFrame
        :func:`evalstats.stats.rank` output (its ``p_beats`` rows are drawn).
    arm_names, title, width, figsize, ax
        As :func:`plot_compare`.

    Returns
    -------
    Figure
        Arms ordered by strength (best first); the diagonal blank.

    Examples
    --------
    >>> r = pd.DataFrame({"arm": ["x", "y"], "opponent": ["y", "x"], "statistic": "p_beats",
    ...     "estimate": [0.6, 0.3], "ci_low": [0.5, 0.2], "ci_high": [0.7, 0.4]})
    >>> plot_beats(r, width="column").axes[0].images[0].get_array().shape
    (2, 2)
    """
    check_columns(result, ["arm", "opponent", "statistic", "estimate"], what="result")
    name = _namer(arm_names)
    p = result.loc[result["statistic"].astype(str) == "p_beats"]
    if p.empty:
        raise ValueError("no p_beats rows to draw")
    strength = result.loc[result["statistic"].astype(str) == "strength"]
    if len(strength):
        arms = strength.sort_values("estimate", ascending=False)["arm"].astype(str).tolist()
    else:
        arms = list(pd.unique(pd.concat([p["arm"], p["opponent"]]).astype(str)))
    k = len(arms)
    idx = {a: i for i, a in enumerate(arms)}
    grid = np.full((k, k), np.nan)
    lo, hi = np.full((k, k), np.nan), np.full((k, k), np.nan)
    for row in p.itertuples():
        i, j = idx[str(row.arm)], idx[str(row.opponent)]
        grid[i, j] = row.estimate
        lo[i, j] = getattr(row, "ci_low", np.nan)
        hi[i, j] = getattr(row, "ci_high", np.nan)
    canvas = new_canvas("plot_beats", ax, width, figsize, lambda w: min(w, 1.5 + 0.55 * k))
    a = canvas.axes[0]
    img = a.imshow(grid, cmap="cividis", vmin=0.0, vmax=1.0, aspect="auto")
    pt = size_pt("xtick.labelsize")
    cell_in = (canvas.width * 0.6) / k
    for i in range(k):
        for j in range(k):
            if np.isfinite(grid[i, j]):
                text = f"{grid[i, j]:.2f}"
                if np.isfinite(lo[i, j]) and text_width_in("[0.00, 0.00]", pt) < 0.95 * cell_in:
                    text += f"\n[{lo[i, j]:.2f}, {hi[i, j]:.2f}]"
                a.text(j, i, text, ha="center", va="center", fontsize=pt,
                       color="white" if grid[i, j] < 0.5 else "black")  # fmt: skip
    labels = [wrap(name(x), max(cell_in, 0.6), pt) for x in arms]
    a.set_xticks(np.arange(k), labels)
    a.set_yticks(np.arange(k), labels)
    a.set_xlabel("opponent")
    a.set_ylabel("arm")
    canvas.fig.colorbar(img, ax=a, label="P(arm beats opponent)", shrink=0.9)
    figure_title(canvas, title, "P(arm beats opponent), ties aside")
    return canvas.root


_NICE_RATIOS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0)


@styled
def plot_pareto(
    result: pd.DataFrame,
    *,
    metric: str | None = None,
    arm_names: Mapping[str, str] | None = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Cost against quality: each arm with its intervals, the frontier, P(on frontier).

    Parameters
    ----------
    result : DataFrame
        :func:`evalstats.stats.pareto` output.
    metric : str, optional
        The cost statistic (default: the only one in ``result``).
    arm_names, title, width, figsize, ax
        As :func:`plot_compare`.

    Returns
    -------
    Figure
        Cost ratio (log axis) against net win, the frontier a step line, P(on frontier).

    Examples
    --------
    >>> r = pd.DataFrame({"arm": ["r"] * 3 + ["a"] * 3, "statistic": ["net_win",
    ...     "tokens_total_ratio", "p_frontier"] * 2, "estimate": [0, 1, 0.4, 0.2, 0.8, 0.9],
    ...     "ci_low": [0, 1, None, 0.1, 0.7, None], "ci_high": [0, 1, None, 0.3, 0.9, None],
    ...     "on_frontier": [False] * 3 + [True] * 3})
    >>> len(plot_pareto(r, width="column").axes[0].texts)
    2
    """
    cols = ["arm", "statistic", "estimate", "ci_low", "ci_high", "on_frontier"]
    check_columns(result, cols, what="result")
    name = _namer(arm_names)
    stats = set(result["statistic"].astype(str))
    if metric is None:
        rest = sorted(stats - {"net_win", "p_frontier"})
        if len(rest) != 1:
            raise ValueError(f"pass metric= (cost statistics present: {rest})")
        metric = rest[0]
    w = result.pivot_table(index="arm", columns="statistic",
                           values=["estimate", "ci_low", "ci_high"], aggfunc="first",
                           dropna=False)  # fmt: skip
    front = result.drop_duplicates("arm").set_index("arm")["on_frontier"].astype(bool)
    arms = list(pd.unique(result["arm"]))
    q, c = w["estimate"]["net_win"].reindex(arms), w["estimate"][metric].reindex(arms)
    canvas = new_canvas("plot_pareto", ax, width, figsize, lambda wd: 0.7 * wd + 0.6)
    a = canvas.axes[0]
    qlo, qhi = w["ci_low"]["net_win"].reindex(arms), w["ci_high"]["net_win"].reindex(arms)
    clo, chi = w["ci_low"][metric].reindex(arms), w["ci_high"][metric].reindex(arms)
    a.errorbar(c, q, yerr=[(q - qlo).fillna(0), (qhi - q).fillna(0)],
               xerr=[(c - clo).fillna(0), (chi - c).fillna(0)], fmt="none",
               ecolor=OKABE_ITO["sky_blue"], elinewidth=1.0, capsize=3)  # fmt: skip
    on = front.reindex(arms).to_numpy()
    a.scatter(c[on], q[on], s=40, color=OKABE_ITO["blue"], edgecolor=EDGE, zorder=3)
    a.scatter(c[~on], q[~on], s=40, color="white", edgecolor=EDGE, zorder=3)
    fc = c[on].sort_values()
    if len(fc) > 1:
        a.step(fc.to_numpy(), q[fc.index].to_numpy(), where="post", color=OKABE_ITO["blue"],
               linewidth=1.2, linestyle="--")  # fmt: skip
    p = w["estimate"]["p_frontier"].reindex(arms) if "p_frontier" in stats else None
    pt = size_pt("xtick.labelsize")
    for arm in arms:
        label = name(arm)
        if p is not None and np.isfinite(p[arm]):
            label += f" (P = {p[arm]:.2f})"
        a.annotate(label, (c[arm], q[arm]), xytext=(5, 5), textcoords="offset points",
                   fontsize=pt)  # fmt: skip
    a.set_xscale("log")
    # Plain-number ticks: the log locator's 10^x labels overlap within a decade.
    lo, hi = a.get_xlim()
    ticks = [t for t in _NICE_RATIOS if lo <= t <= hi]
    step = max(1, int(np.ceil(len(ticks) / 6)))
    a.xaxis.set_major_locator(FixedLocator(ticks[::step] or [1.0]))
    a.xaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    a.xaxis.set_minor_formatter(NullFormatter())
    a.axhline(0.0, color=EDGE, linewidth=0.6, linestyle=":")
    a.axvline(1.0, color=EDGE, linewidth=0.6, linestyle=":")
    unit = "tokens" if metric.startswith("tokens") else "wall-clock time"
    a.set_xlabel(f"total {unit}, ratio to the reference (log scale)")
    a.set_ylabel("net win against the reference")
    handles = [
        Line2D([], [], marker="o", linestyle="--", color=OKABE_ITO["blue"], markeredgecolor=EDGE),
        Line2D([], [], marker="o", linestyle="", color="white", markeredgecolor=EDGE),
    ]
    figure_legend(canvas, handles, ["on the frontier (estimates)", "dominated"])
    figure_title(canvas, title, "Cost and quality: the Pareto frontier")
    return canvas.root


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
        ``rank`` rows of :func:`evalstats.stats.rank_subsamples` (or ``rank``), one per
        (ranking, arm).
    hue : str, default "label"
        Column naming the rankings (else ``estimator``).
    truth : Series, optional
        A reference rank per arm, drawn as a cross; arms are ordered by it.
    confidence : float, optional
        Level of the rank sets, quoted in the title.
    title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        Arms down the y axis (best at the top), one dodged bar per ranking.

    Examples
    --------
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
        table = table.rename(columns={"rank": "estimate"})
    check_columns(table, ["arm", hue, "estimate", "ci_low", "ci_high"], what="table")
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
    canvas = new_canvas("plot_arena_rank_sets", ax, width, figsize, lambda w: 1.2 + 0.28 * k)
    a = canvas.axes[0]
    n_r = len(rankings)
    step = 0.7 / max(n_r, 1)
    handles = []
    for r, name in enumerate(rankings):
        rows = t[t["_hue"] == name]
        y = np.array([y_of[v] for v in rows["_arm"]]) + (r - (n_r - 1) / 2) * step
        lo, hi, est = num(rows["ci_low"]), num(rows["ci_high"]), num(rows["estimate"])
        color = OKABE_ITO[LINE_COLORS[r % len(LINE_COLORS)]]
        style = LINE_STYLES[r % 4]
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
