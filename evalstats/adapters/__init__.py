"""Adapters: other tools' judge data as verdict frames (and labels tables) for :mod:`evalstats.stats`.

:mod:`~evalstats.adapters.pairwise` reads any table of pairwise verdicts; the others are
configurations of it, except :mod:`~evalstats.adapters.arena` (K arms).
"""

from __future__ import annotations

from . import alpaca_eval, arena, llmbar, pairwise, pandalm

__all__ = ["alpaca_eval", "arena", "llmbar", "pairwise", "pandalm"]
