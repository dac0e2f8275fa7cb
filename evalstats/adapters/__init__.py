"""Adapters: other tools' judge annotations as evalstats verdict frames.

Each adapter reads another evaluation tool's files from a path (nothing is
copied into the project) and returns a verdict frame in the package's own
schema (:data:`evalstats._schema.VERDICT_COLUMNS` plus the tool's extra
columns), so every statistic of :mod:`evalstats.stats` applies to it.

* :mod:`evalstats.adapters.alpaca_eval` — AlpacaEval judge annotations
  (``annotations.json``), with the leaderboard columns recomputed by the
  package's own statistics.
"""

from __future__ import annotations

from . import alpaca_eval

__all__ = ["alpaca_eval"]
