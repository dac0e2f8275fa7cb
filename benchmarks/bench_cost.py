"""Timing of the cost ratios (default intervals), TOST helpers and the ordinal check.

Run: ``.venv/bin/python benchmarks/bench_cost.py``. Prints seconds per call.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalstats.stats.cost import cost_ratios
from evalstats.stats.equivalence import cost_equivalence
from evalstats.stats.models import ordinal_check

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _big_pairs(n_tasks: int, n_reps: int, rng: np.random.Generator) -> pd.DataFrame:
    size = np.repeat(rng.normal(7.5, 1.2, n_tasks), n_reps)
    n = size.size
    without = np.exp(size + rng.normal(0, 0.4, n))
    with_ = np.exp(size - 0.3 + rng.normal(0, 0.4, n))
    return pd.DataFrame(
        {
            "task_id": np.repeat(np.arange(n_tasks), n_reps),
            "replicate": np.tile(np.arange(1, n_reps + 1), n_tasks),
            "status": "ok",
            "tokens_with": np.round(with_),
            "tokens_without": np.round(without),
            "wall_with_s": with_ / 100,
            "wall_without_s": without / 100,
        }
    )


def _time(label: str, func, repeat: int = 3) -> None:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - t0)
    print(f"{label:<60} {best:8.3f} s")


def main() -> None:
    rng = np.random.default_rng(0)
    big = _big_pairs(1_000, 100, rng)
    # Every interval is closed-form (the median's Woodruff): O(pairs).
    _time("cost_ratios, 100,000 pairs in 1,000 tasks", lambda: cost_ratios(big))
    if SAMPLE.exists():
        from evalstats.frames import load_frame

        frame = load_frame(SAMPLE)
        _time("cost_ratios, sample", lambda: cost_ratios(frame))
        _time("cost_equivalence, sample", lambda: cost_equivalence(frame))
        _time(
            "ordinal_check, sample, blind-pair", lambda: ordinal_check(frame, rubric="blind-pair")
        )


if __name__ == "__main__":
    main()
