"""Issue 23 item 6: each statistic at 10^6 verdicts (10,000 tasks x 50 pairs x 2 judges).

Each function runs with its default settings in a child process of its own, so its peak
resident memory (``resource.getrusage``, minus the frame's) is its own; a bare numpy gather
of the same size (``x[idx]`` over 10^6 rows) is printed beside it as the floor.

    python benchmarks/bench_scale.py [cost missing ppi agree dcov gather]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

NAMES = ("gather", "cost", "missing", "ppi", "agree", "dcov")
OUTCOMES = np.array(["win", "tie", "loss"])


def frame(n_tasks: int = 10_000, reps: int = 50, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Two judges' verdicts on ``n_tasks * reps`` pairs, with lognormal token costs."""
    rng = np.random.default_rng(seed)
    n = n_tasks * reps
    task = np.repeat(np.arange(n_tasks), reps).astype(str)
    size = np.repeat(rng.normal(7.5, 1.2, n_tasks), reps)
    tw = np.round(np.exp(size - 0.3 + rng.normal(0, 0.4, n)))
    to = np.round(np.exp(size + rng.normal(0, 0.4, n)))
    truth = rng.choice(OUTCOMES, n, p=[0.45, 0.2, 0.35])
    parts = []
    for j in range(2):
        out = np.where(rng.random(n) < 0.8, truth, rng.choice(OUTCOMES, n))
        status = np.where(rng.random(n) < 0.02, "no_answer", "ok")
        parts.append(
            pd.DataFrame(
                {
                    "task_id": task,
                    "replicate": np.tile(np.arange(1, reps + 1), n_tasks),
                    "order": "ab",
                    "judge": f"j{j}",
                    "rubric": "with-without",
                    "status": status,
                    "outcome": np.where(status == "ok", out, None),
                    "tokens_with": tw,
                    "tokens_without": to,
                    "wall_with_s": tw / 100,
                    "wall_without_s": to / 100,
                }
            )
        )
    return pd.concat(parts, ignore_index=True), truth


def run_one(name: str) -> None:
    """Time one function on the frame and print seconds and peak MB above the frame's."""
    from evalstats.stats import (
        cost_ratios,
        design_coverage,
        judge_agreement,
        missing_bounds,
        ppi_win_rates,
    )

    warnings.simplefilter("ignore")
    f, truth = frame()
    one = f[f["judge"] == "j0"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    if name == "gather":
        x = f["tokens_with"].to_numpy()
        _ = x[np.random.default_rng(0).integers(0, x.size, x.size)]
    elif name == "cost":
        cost_ratios(one, rng=0)
    elif name == "missing":
        missing_bounds(f, rng=0)
    elif name == "ppi":
        pick = np.random.default_rng(1).choice(len(one), 2000, replace=False)
        labels = pd.DataFrame(
            {
                "task_id": one["task_id"].to_numpy()[pick],
                "replicate": one["replicate"].to_numpy()[pick],
                "labeler": "ann",
                "outcome": truth[pick],
                "sample_seed": 0,
                "frame_sha256": "x",
            }
        )
        ppi_win_rates(f, labels, judge="j0", rng=0)
    elif name == "agree":
        judge_agreement(f, rng=0)
    elif name == "dcov":
        design_coverage(f)
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{name:8s} {len(f):9d} rows {wall:8.2f} s  peak +{(peak - before) / 1024:7.0f} MB")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        run_one(argv[1])
        return 0
    for name in argv or NAMES:
        # A child per function: its peak memory is its own, not the previous one's.
        subprocess.run([sys.executable, __file__, "--child", name], check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
