"""Adapters: other tools' judge annotations as evalstats verdict frames.

Each adapter reads another evaluation tool's files from a path (nothing is
copied into the project) and returns a verdict frame in the package's own
schema (:data:`evalstats._schema.VERDICT_COLUMNS` plus the tool's extra
columns), so every statistic of :mod:`evalstats.stats` applies to it.

* :mod:`evalstats.adapters.alpaca_eval` — AlpacaEval judge annotations
  (``annotations.json``), with the leaderboard columns recomputed by the
  package's own statistics.
* :mod:`evalstats.adapters.pairwise` — any table of pairwise verdicts (item, sides, judge,
  verdict, optional order and gold) as a verdict frame and a labels table.
* :mod:`evalstats.adapters.llmbar` — LLMBar's ``Dataset/<subset>`` layout (gold labels, both
  orders, six judges) and its published accuracy / positional agreement.
* :mod:`evalstats.adapters.pandalm` — PandaLM's test set (three annotators, two judges).
* :mod:`evalstats.adapters.arena` — Chatbot Arena battles (20 models, people and three LLM
  judges) as a pairwise verdict frame for K arms (:mod:`evalstats.stats.pairs`).
"""

from __future__ import annotations

from . import alpaca_eval, arena, llmbar, pairwise, pandalm

__all__ = ["alpaca_eval", "arena", "llmbar", "pairwise", "pandalm"]
