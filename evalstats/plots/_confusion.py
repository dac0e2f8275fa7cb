"""The judge-vs-judge confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from .._schema import OUTCOMES
from ._base import axes_title, font_pt, new_canvas, size_pt, styled, wrap


@styled
def plot_confusion(
    table: pd.DataFrame | np.ndarray,
    *,
    labels: Sequence[str] | None = None,
    judges: Sequence[str] | None = None,
    kappa: Any = None,
    title: str | bool | None = None,
    width: str | float = "page",
    figsize: Sequence[float] | None = None,
    ax: Any = None,
) -> Figure:
    """Judge-vs-judge confusion matrix with counts and row percentages.

    Parameters
    ----------
    table : DataFrame or array, shape (k, k)
        Counts, as :func:`evalstats.stats.agreement.contingency_table` returns.
    labels : sequence of str, optional
        Category labels (default: the index, else loss / tie / win for k = 3).
    judges : pair of str, optional
        Names of the row and column judges.
    kappa : float or CohenKappaResult, optional
        Cohen's kappa, quoted in the title.
    title, width, figsize, ax
        As every figure (:mod:`evalstats.plots`).

    Returns
    -------
    Figure
        Cells shaded by row share, annotated "count" and "row %".

    Examples
    --------
    >>> fig = plot_confusion([[10, 3, 1], [4, 20, 5], [0, 6, 30]],
    ...                      judges=("anthropic:claude", "openai:gpt-5.4"), kappa=0.55,
    ...                      width="column")
    >>> "0.55" in fig.axes[0].get_title()
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

    canvas = new_canvas("plot_confusion", ax, width, figsize, lambda w: min(w, 5.0) * 0.92)
    a = canvas.axes[0]
    matrix_in = min(canvas.width, 5.0) - 1.6
    cell_pt = font_pt(0.8 if matrix_in / k > 0.45 else 0.7)
    im = a.imshow(np.nan_to_num(share), cmap="Blues", vmin=0.0, vmax=1.0)
    for i in range(k):
        for j in range(k):
            pct = "–" if np.isnan(share[i, j]) else f"{100 * share[i, j]:.0f} %"
            dark = np.isfinite(share[i, j]) and share[i, j] > 0.55
            a.text(j, i, f"{int(t[i, j])}\n{pct}", ha="center", va="center", fontsize=cell_pt,
                   color="white" if dark else "black",
                   fontweight="bold" if i == j else "normal")  # fmt: skip
    a.set_xticks(np.arange(k), labels)
    a.set_yticks(np.arange(k), labels)
    label_pt = size_pt("axes.labelsize")
    a.set_xlabel(wrap(f"{judges[1]} (verdict)", matrix_in, label_pt))
    a.set_ylabel(wrap(f"{judges[0]} (verdict)", matrix_in, label_pt))
    for side in ("top", "right"):
        a.spines[side].set_visible(True)
    cbar = a.get_figure(root=False).colorbar(im, ax=a, shrink=0.85)
    cbar.set_label(wrap("row share (% of the row judge's verdicts)", matrix_in * 0.8, label_pt))
    cbar.ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))

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
    axes_title(a, title, "Judge vs judge: " + ", ".join(parts), matrix_in)
    return canvas.root
