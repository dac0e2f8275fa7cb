"""Coverage of the win-rate intervals and type-I error of the sign test, by simulation.

Each simulated evaluation has ``tasks x replicates`` verdicts drawn from the
latent probit model of :func:`evalstats.stats.outcome_model.draw_outcomes` (known marginal
win/tie/loss probabilities, task ICC on the latent scale). Evaluations are
stacked into one frame as groups (``by="eval"``), so each method is one
:func:`~evalstats.stats.winrates.win_rates` call over all of them.

Printed: for each scenario, the share of evaluations whose 95 % interval holds
the truth, per method and statistic, next to naive IID intervals over
verdicts (Wilson for the 0/1 rates, Wald for all five) that ignore the
clustering; then the rejection rate at 5 % of the exact sign test (which
ignores clustering) and of the cluster-robust t test of net win = 0, when the
true net win is 0.

Run: ``.venv/bin/python benchmarks/coverage.py [--evals 2000] [--resamples 2000]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from evalstats.stats.coverage import coverage_table, simulated_frame, truth_of, type_one_error
from evalstats.stats.winrates import DEFAULT_METHOD

# (p_win, p_tie, p_loss): a close race, a clear WITH lead, rare wins, rare wins and ties.
SCENARIOS = ((0.45, 0.25, 0.30), (0.70, 0.20, 0.10), (0.10, 0.60, 0.30), (0.05, 0.15, 0.80))
NULL_SCENARIO = (0.35, 0.30, 0.35)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=2000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--tasks", type=int, default=15)
    parser.add_argument("--replicates", type=int, default=6)
    parser.add_argument("--icc", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=20240501)
    args = parser.parse_args()
    pd.set_option("display.width", 140)
    seeds = np.random.SeedSequence(args.seed).spawn(len(SCENARIOS) + 1)
    print(
        f"{args.evals} evaluations x {args.tasks} tasks x {args.replicates} replicates, "
        f"ICC {args.icc}, 95 % intervals, bootstrap B = {args.resamples}; "
        f"default method: {DEFAULT_METHOD}"
    )
    mcse = np.sqrt(0.95 * 0.05 / args.evals)
    print(f"Monte Carlo SE of a coverage near 0.95: {mcse:.4f}\n")
    for probs, seed in zip(SCENARIOS, seeds, strict=False):
        start = time.perf_counter()
        frame = simulated_frame(
            args.evals, args.tasks, args.replicates, probs, args.icc, np.random.default_rng(seed)
        )
        table = coverage_table(frame, truth_of(probs), n_resamples=args.resamples, rng=1)
        took = time.perf_counter() - start
        print(f"p_win={probs[0]}, p_tie={probs[1]}, p_loss={probs[2]}  ({took:.1f} s)")
        print(table.round(3).to_string())
        print()
    frame = simulated_frame(
        args.evals,
        args.tasks,
        args.replicates,
        NULL_SCENARIO,
        args.icc,
        np.random.default_rng(seeds[-1]),
    )
    print(f"Type-I error at 5 %, true net win 0 (p_win = p_loss = {NULL_SCENARIO[0]}):")
    print(type_one_error(frame).round(3).to_string())


if __name__ == "__main__":
    main()
