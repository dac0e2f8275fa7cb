"""Publication figures: one function per figure, each returning a matplotlib ``Figure``.

Every function takes a tidy DataFrame (documented in its docstring; most come straight from
:mod:`evalstats.stats` or the verdict frame) and returns a :class:`matplotlib.figure.Figure`
built with the object API: no pyplot, no global figure registry, no backend selection, so the
functions are safe in scripts, notebooks and threads. The figures display themselves inline
in Jupyter (:class:`PlotFigure`) without ``%matplotlib inline``.

For a paper, every function takes ``width="column"`` (3.5 in) or ``width="page"`` (7 in,
the default), or ``figsize=``; ``ax=`` draws into the caller's axes (a sequence of them for
the multi-panel figures); ``title=None`` draws the default title, ``title=False`` none.
Font sizes follow ``rcParams["font.size"]``. :func:`save_figure` writes PDF (TrueType fonts),
SVG and PNG.

Colours come from the Okabe–Ito palette (safe for the common colour-vision deficiencies);
outcomes always use :data:`OUTCOME_COLORS` (WITH win blue, tie yellow, loss vermillion, and
grey shades for no_answer / invalid / error), and lines also differ by style so that the
figures survive greyscale printing.
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
    "plot_pareto",
    "plot_power_curve",
    "plot_rank_sets",
    "plot_task_heatmap",
    "render_figure",
    "save_figure",
]
