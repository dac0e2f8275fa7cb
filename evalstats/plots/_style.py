"""The rc settings every figure is drawn and saved with (imported by drawing and saving alike)."""

from __future__ import annotations

from typing import Any

__all__ = ["STYLE"]

STYLE: dict[str, Any] = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "svg.fonttype": "none",  # text stays text in SVG: searchable and editable
    "svg.hashsalt": "evalstats",  # stable element ids: SVGs diff cleanly between runs
    # Journals ask for Type 1 or TrueType fonts; matplotlib's default (3) embeds Type 3.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}
