"""Publication figures: one function per figure, each returning a matplotlib ``Figure``.

Every function takes a tidy DataFrame (most come from :mod:`evalstats.stats` or the verdict
frame) and builds its figure with matplotlib's object API (no pyplot, no global state); the
figures display themselves inline in Jupyter (:class:`PlotFigure`).

Shared keywords: ``width="column"`` (3.5 in) or ``"page"`` (7 in, the default) or inches;
``figsize=(w, h)``; ``ax=`` the caller's axes (a sequence for multi-panel figures);
``title=None`` the default title, ``False`` none; ``arm_names`` what to call the arms
(:attr:`evalstats.Dataset.arm_names`). Font sizes follow ``rcParams["font.size"]``.
:func:`save_figure` writes PDF (TrueType fonts), SVG and PNG. Colours are Okabe–Ito
(colour-blind safe; :data:`OUTCOME_COLORS` for outcomes) and lines also differ by style.
"""

from __future__ import annotations

from ._arms_compare import (
    plot_arena_rank_sets,
    plot_beats,
    plot_compare,
    plot_pareto,
    plot_rank_sets,
)
from ._base import (
    ARM_COLORS,
    OKABE_ITO,
    OUTCOME_COLORS,
    WIDTHS,
    PlotFigure,
    layout_figure,
    render_figure,
    save_figure,
)
from ._confusion import plot_confusion
from ._cost import plot_cost_ratios
from ._dimensions import plot_dimension_scores
from ._headline import plot_headline
from ._heatmap import plot_task_heatmap
from ._length_bias import plot_length_bias
from ._power import plot_power_curve
from ._replicates import plot_monitor, plot_pass_k

__all__ = [
    "ARM_COLORS",
    "OKABE_ITO",
    "OUTCOME_COLORS",
    "WIDTHS",
    "PlotFigure",
    "layout_figure",
    "plot_arena_rank_sets",
    "plot_beats",
    "plot_compare",
    "plot_confusion",
    "plot_cost_ratios",
    "plot_dimension_scores",
    "plot_headline",
    "plot_length_bias",
    "plot_monitor",
    "plot_pareto",
    "plot_pass_k",
    "plot_power_curve",
    "plot_rank_sets",
    "plot_task_heatmap",
    "render_figure",
    "save_figure",
]
