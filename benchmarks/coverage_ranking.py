"""Coverage of compare()'s simultaneous net-win intervals and rank()'s rank sets.

Design (issue 24, item 6): 5 arms, 40 tasks x 3 replicates, every pair judged in every
replicate in a random order (position effect 0.3), task-arm effects with SD 1 on a pair's
logit scale, Davidson ties (about 30 % of verdicts). Two strength configurations:

* ``null``: all five arms equally strong. Every true rank is 1 and a rank set covers it only
  if no pair is declared different, so joint rank-set coverage is exactly the family-wise
  level: the least favourable case, where the nominal level must be met, not exceeded.
* ``spread``: strengths (0, 0.1, 0.2, 0.3, 0.6); rank sets are conservative by construction
  (a set also covers when it is wider than needed), so coverage is above the level.

Each simulation runs ``compare`` (Bonferroni-level score intervals since issue 31; the
tables below are of its earlier task-bootstrap max-t) and ``rank`` (Davidson, simultaneous
step-down rank sets, bootstrap-t on sandwich SEs) with a task-cluster bootstrap, and both
again with a battle-level bootstrap (every verdict its own cluster). Printed:
coverage of all 10 pairwise net wins at once, joint coverage of the five rank sets, with the
Monte Carlo SE, and mean simultaneous-interval half-width and rank-set size.

    PYTHONPATH=. python benchmarks/coverage_ranking.py --sims 1000 --resamples 500

printed (2026-12-03, one run per config after compare's bootstrap-t moved to the logit /
atanh scale, ~18 CPU-minutes in all; ± is the Monte Carlo SE)::

    config   bootstrap  net-win cov  rank-set cov half-width set size  ties  seconds
    null     task       0.952±0.007   0.935±0.008      0.243     4.97  0.29  214
    null     battle     0.881±0.010   0.696±0.015      0.210     4.78  0.29  327
    spread   task       0.953±0.007   0.996±0.002      0.242     4.48  0.28  215
    spread   battle     0.875±0.010   0.974±0.005      0.209     3.80  0.28  324

and before it, on the raw scale (2026-12-02, one run, ~22 CPU-minutes in all)::

    config   bootstrap  net-win cov  rank-set cov half-width set size  ties  seconds
    null     task       0.953±0.007   0.935±0.008      0.258     4.97  0.29  255
    null     battle     0.883±0.010   0.696±0.015      0.221     4.79  0.29  404
    spread   task       0.950±0.007   0.998±0.001      0.257     4.49  0.28  254
    spread   battle     0.879±0.010   0.977±0.005      0.220     3.82  0.28  390

After the step-down moved to ordered one-sided claims (csranks' ``csdiffmeans``; see
``evalstats/stats/ranking.py``), ``--sims 200 --resamples 500 --configs spread``
(2026-12-02, one run, task bootstrap): rank-set cov 0.995±0.005, set size 4.53 (net-win cov
0.915±0.020 from compare, which did not change: 200 simulations). The ``null`` rows cannot
change: there a set covers only when the first step rejects nothing, and the first step is
the same ``max |Z|``.

and ``--arena 5 --resamples 200``: median PPI++ lambda 0.33; the prediction-powered (1,000
human votes + GPT-4 on all battles), human-only (the same 1,000) and GPT-4-only rank sets
covered the full human ranking 5/5, 5/5 and 0/5 times, mean set sizes 13.30, 13.34, 2.80.

``--arena N`` instead repeats the paper's Arena experiment (Chatzi et al. 2024) N times: a
random 1,000 human votes plus GPT-4's verdicts on all 26,919 battles (prediction-powered),
against the same 1,000 human votes alone and GPT-4 alone, each scored by whether its
simultaneous rank sets cover the ranking from all human votes and by their mean size.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from evalstats.adapters import arena
from evalstats.stats import compare, rank

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from pair_simulation import simulate_pairwise, true_net_wins  # tests/pair_simulation.py

CONFIGS = {"null": np.zeros(5), "spread": np.array([0.0, 0.1, 0.2, 0.3, 0.6])}


def _true_ranks(beta: np.ndarray) -> np.ndarray:
    return 1 + (beta[None, :] > beta[:, None]).sum(axis=1)


def _mc(p: float, n: int) -> float:
    return float(np.sqrt(p * (1 - p) / n))


def one(rng, beta, truth, resamples, battle_level):
    frame = simulate_pairwise(rng, beta)
    if battle_level:
        frame = frame.assign(task_id=[f"b{i}" for i in range(len(frame))])
    arms = [f"arm{m}" for m in range(len(beta))]
    seed = int(rng.integers(2**31))
    c = compare(frame, arms=arms)
    net = c[c.statistic == "net_win"]
    covered = bool(((net.sim_low <= truth) & (truth <= net.sim_high)).all())
    half = float(((net.sim_high - net.sim_low) / 2).mean())
    r = rank(frame, arms=arms, n_resamples=resamples, rng=seed + 1)
    rs = r[r.statistic == "rank"]
    true_r = _true_ranks(beta)
    in_set = (rs.ci_low.to_numpy() <= true_r) & (true_r <= rs.ci_high.to_numpy())
    size = float((rs.ci_high - rs.ci_low + 1).mean())
    ties = float((frame.outcome == "tie").mean())
    return covered, half, bool(in_set.all()), size, ties


def arena_subsamples(n_rep: int, resamples: int, seed: int, path: str) -> None:
    frame = arena.load(path, judge=["human", "gpt-4-0125-preview"])
    human, judge = frame[frame.judge == "human"], frame[frame.judge == "gpt-4-0125-preview"]
    full = rank(human, n_resamples=resamples, rng=seed)
    truth = full[full.statistic == "rank"].set_index("arm").estimate
    rng = np.random.default_rng(seed)
    rows = {"prediction-powered": [], "human only (1,000)": [], "GPT-4 only": []}
    lambdas = []
    only_judge = rank(judge, n_resamples=resamples, rng=seed)
    for _ in range(n_rep):
        labels = human.sample(1000, random_state=int(rng.integers(2**31)))
        s = int(rng.integers(2**31))
        ppr = rank(judge, labels=labels, n_resamples=resamples, rng=s)
        lambdas.append(float(ppr.diagnostics["lambda"].iloc[0]))
        for name, res in (
            ("prediction-powered", ppr),
            ("human only (1,000)", rank(labels, n_resamples=resamples, rng=s)),
            ("GPT-4 only", only_judge),
        ):
            r = res[res.statistic == "rank"].set_index("arm").reindex(truth.index)
            covered = bool(((r.ci_low <= truth) & (truth <= r.ci_high)).all())
            rows[name].append((covered, float((r.ci_high - r.ci_low + 1).mean())))
    print(f"Arena: {n_rep} random subsets of 1,000 human votes, B = {resamples}, 0.95")
    print(f"  median PPI++ lambda {np.median(lambdas):.2f}")
    for name, v in rows.items():
        v = np.array(v)
        print(f"  {name:20} covers the full human ranking {v[:, 0].mean():.2f}, "
              f"mean rank-set size {v[:, 1].mean():.2f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--configs", default="null,spread")
    ap.add_argument("--arena", type=int, default=0, help="Arena subsamples instead")
    ap.add_argument("--arena-path", default="../shared/data/arena/battles.csv.gz")
    args = ap.parse_args()
    if args.arena:
        arena_subsamples(args.arena, args.resamples, args.seed, args.arena_path)
        return
    print(f"{args.sims} simulations per row, B = {args.resamples}, nominal 0.95\n")
    print(
        f"{'config':8} {'bootstrap':9} {'net-win cov':>12} {'rank-set cov':>13} "
        f"{'half-width':>10} {'set size':>8} {'ties':>5}  seconds"
    )
    for name in args.configs.split(","):
        beta = CONFIGS[name]
        truth = true_net_wins(beta)
        for battle_level in (False, True):
            rng = np.random.default_rng(args.seed)
            t0 = time.process_time()
            res = np.array([one(rng, beta, truth, args.resamples, battle_level)
                            for _ in range(args.sims)])  # fmt: skip
            cpu = time.process_time() - t0
            cov_n, cov_r = res[:, 0].mean(), res[:, 2].mean()
            print(
                f"{name:8} {'battle' if battle_level else 'task':9} "
                f"{cov_n:6.3f}±{_mc(cov_n, args.sims):.3f} {cov_r:7.3f}±{_mc(cov_r, args.sims):.3f} "
                f"{res[:, 1].mean():10.3f} {res[:, 3].mean():8.2f} {res[:, 4].mean():5.2f}"
                f"  {cpu:.0f}"
            )


if __name__ == "__main__":
    main()
