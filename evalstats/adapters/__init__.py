"""Adapters: other tools' judge data as evalstats verdict frames (and labels tables).

Each adapter reads another tool's files from their path (nothing is copied) into the
package's verdict frame plus the tool's extra columns, so every statistic of
:mod:`evalstats.stats` applies: :mod:`~evalstats.adapters.pairwise` (any table of pairwise
verdicts) and its configurations :mod:`~evalstats.adapters.alpaca_eval`,
:mod:`~evalstats.adapters.llmbar`, :mod:`~evalstats.adapters.pandalm`, and
:mod:`~evalstats.adapters.arena` (K arms).
"""

from __future__ import annotations

from . import alpaca_eval, arena, llmbar, pairwise, pandalm

__all__ = ["alpaca_eval", "arena", "llmbar", "pairwise", "pandalm"]
