"""Speed of compare() + rank() (issue 24, item 7), beside a plain per-resample loop.

10 arms, 200 tasks x 5 replicates, every pair judged (45,000 verdicts of one judge), 2,000
task-cluster resamples each. The loop baseline does what a straightforward implementation
does: per resample, draw tasks, gather their rows (precomputed row indices per task), count the cells and fit the model
alone (scipy.optimize, L-BFGS on the Davidson likelihood) and the pairwise rates; it is
timed on ``--loop`` resamples and scaled to 2,000.

    PYTHONPATH=. python benchmarks/bench_rank.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.optimize

from evalstats.stats import compare, rank
from evalstats.stats import ranking as _btd  # the private fitter, timed against scipy
from evalstats.stats.ranking import encode

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pair_simulation import simulate_pairwise  # tests/pair_simulation.py


def _loop_once(frame: pd.DataFrame, rows: list[np.ndarray], rng, arms: list[str]) -> None:
    drawn = rng.integers(0, len(rows), size=len(rows))
    boot = frame.iloc[np.concatenate([rows[t] for t in drawn])]
    # pairwise rates
    boot.groupby(["arm_a", "arm_b"]).outcome.value_counts(normalize=True)
    e = encode(boot, arms=arms)
    keys, cell, col = _btd._btd_cells(e.a, e.b, e.pos, e.y, len(arms))
    counts = np.zeros((len(keys), 3))
    np.add.at(counts, (cell, col), 1)
    x = _btd._btd_design(keys, len(arms), True)

    def nll(t):
        p = _btd.outcome_probabilities(x @ t[:-1], t[-1])
        return -(counts * np.log(p)).sum()

    scipy.optimize.minimize(nll, np.zeros(x.shape[1] + 1), method="L-BFGS-B")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--resamples", type=int, default=2000)
    ap.add_argument("--loop", type=int, default=20, help="resamples the loop baseline runs")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    beta = np.linspace(0.0, 1.0, 10)
    frame = simulate_pairwise(rng, beta, n_tasks=200, n_reps=5)
    arms = [f"arm{m}" for m in range(10)]
    print(
        f"{len(frame):,} verdicts, {frame.task_id.nunique()} tasks, 10 arms, B = {args.resamples}"
    )
    best = np.inf
    for r in range(args.repeat):
        t0 = time.perf_counter()
        compare(frame, arms=arms)
        t1 = time.perf_counter()
        rank(frame, arms=arms, n_resamples=args.resamples, rng=r)
        t2 = time.perf_counter()
        best = min(best, t2 - t0)
        print(f"  run {r + 1}: compare {t1 - t0:.2f} s + rank {t2 - t1:.2f} s = {t2 - t0:.2f} s")
    rows = list(frame.groupby("task_id").indices.values())
    t0 = time.perf_counter()
    for _ in range(args.loop):
        _loop_once(frame, rows, rng, arms)
    per = (time.perf_counter() - t0) / args.loop
    print(f"vectorised compare + rank, best of {args.repeat}: {best:.2f} s (target <= 5 s)")
    print(
        f"plain per-resample loop: {per * 1000:.0f} ms per resample, "
        f"{per * args.resamples:.0f} s for {args.resamples} (timed on {args.loop})"
    )


if __name__ == "__main__":
    main()
