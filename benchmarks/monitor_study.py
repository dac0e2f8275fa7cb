"""Monitoring study (issue 33): type-I error when the net win is looked at after every task,
and the tasks a stop saves under real effects.

Each task has a net win ``delta + h * U(-1, 1)`` (h: task heterogeneity) with a fixed tie
share, and ``reps`` verdicts; its value is their mean. Under the null (delta 0; ties 0-40 %;
h 0 with one verdict a task, or 0.3 with three) each simulated evaluation is looked at after
every task up to 200: the betting confidence sequence (:func:`evalstats.stats.betting_cs`,
what ``monitor`` and ``judge --stop-when-decided`` use) errs when it first excludes 0; the
fixed-n t-test peeked at every task (from 3 tasks) errs when ``|t|`` first passes its 5 %
critical value. A sequence is its own prefix, so one run of 200 tasks gives every horizon.
Under effects (delta 0.1-0.5, ties 20 %, h 0.3, three verdicts) the fixed design's n is the
t-test's for 80 % power; the sequence runs to 3x that n and stops when it excludes 0.
Tasks saved are against that n (known effect) and against the n planned for net win 0.1.

    .venv/bin/python benchmarks/monitor_study.py [--sims 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import stats as st

from evalstats.stats import betting_cs

HORIZONS = (15, 50, 100, 200)
NULLS = [(tie, h, reps) for tie in (0.0, 0.2, 0.4) for h, reps in ((0.0, 1), (0.3, 3))]
EFFECTS = (0.1, 0.2, 0.3, 0.5)


def task_values(sims, n, delta, tie, h, reps, rng):
    """(sims, n) per-task mean verdicts (win 1, tie 0, loss -1)."""
    d = delta + h * rng.uniform(-1.0, 1.0, size=(sims, n, 1))
    u = rng.random((sims, n, reps))
    p_win = (1.0 - tie + d) / 2.0
    return np.where(u < p_win, 1.0, np.where(u < p_win + tie, 0.0, -1.0)).mean(axis=2)


def first_stop(y):
    """Per simulation, the first look (1-based) at which the sequence excludes 0 (else inf),
    and whether it then said better."""
    out, better = np.full(len(y), np.inf), np.zeros(len(y), dtype=bool)
    for i, row in enumerate(y):
        low, high = betting_cs((row + 1.0) / 2.0)
        hit = np.flatnonzero((low > 0.5) | (high < 0.5))
        if hit.size:
            out[i], better[i] = hit[0] + 1, low[hit[0]] > 0.5
    return out, better


def peeked_t(y):
    """Per simulation, the first look (from 3 tasks) at which the two-sided t-test rejects."""
    n = np.arange(1, y.shape[1] + 1)
    mean = np.cumsum(y, axis=1) / n
    var = (np.cumsum(y**2, axis=1) - n * mean**2) / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    crit = st.t.ppf(0.975, np.maximum(n - 1, 1))
    reject = (np.abs(t) > crit) & (n >= 3) & (var > 1e-12)
    return np.where(reject.any(axis=1), reject.argmax(axis=1) + 1.0, np.inf)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    rows = []
    for tie, h, reps in NULLS:
        y = task_values(args.sims, max(HORIZONS), 0.0, tie, h, reps, rng)
        cs, tt = first_stop(y)[0], peeked_t(y)
        for n in HORIZONS:
            rows.append({"ties": tie, "h": h, "reps": reps, "tasks": n,
                         "betting_cs": np.mean(cs <= n), "peeked_t": np.mean(tt <= n)})  # fmt: skip
    null = pd.DataFrame(rows)
    se = np.sqrt(0.05 * 0.95 / args.sims)
    print(f"type-I error, looked at after every task ({args.sims} null evaluations a design, "
          f"MC SE at 0.05: {se:.3f}; bound 0.05 + 2 SE = {0.05 + 2 * se:.3f}):")  # fmt: skip
    print(null.round(3).to_string(index=False))
    rows, planned = [], None
    for delta in EFFECTS:
        sd = task_values(20_000, 1, delta, 0.2, 0.3, 3, rng).std()
        n_fixed = int(np.ceil(((st.norm.ppf(0.975) + st.norm.ppf(0.8)) * sd / delta) ** 2))
        cap, planned = 3 * n_fixed, planned or n_fixed
        y = task_values(args.sims, cap, delta, 0.2, 0.3, 3, rng)
        stop, better = first_stop(y)
        used = np.minimum(stop, cap)
        rows.append({"net_win": delta, "fixed_n": n_fixed, "mean_tasks": used.mean(),
                     "median_tasks": np.median(used), "saved": 1.0 - used.mean() / n_fixed,
                     f"saved_vs_n_{EFFECTS[0]}": 1.0 - used.mean() / planned,
                     "decided_by_fixed_n": np.mean(stop <= n_fixed),
                     "decided_by_3x": np.mean(stop <= cap), "said_worse": np.mean((stop <= cap) & ~better)})  # fmt: skip
    print("\nunder effects (ties 20 %, h 0.3, 3 verdicts a task): tasks the sequence used "
          "(stopped at 3x fixed_n), versus the fixed design's n for 80 % power at the true "
          f"effect (saved) and at {EFFECTS[0]}, the effect one plans for without knowing it:")  # fmt: skip
    print(pd.DataFrame(rows).round(3).to_string(index=False))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
