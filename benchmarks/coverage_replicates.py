"""Coverage of :func:`evalstats.stats.replicates`' intervals (issue 33), over its own generator.

Task success probabilities are Beta with mean ``mu`` and intra-task correlation ``rho`` (so a
task's replicate outcomes are beta-binomial) in both arms: the second arm's is Beta with mean
``expit(logit(mu) + 0.5)`` and the same rho, at the same quantile as the first's on the same
task, so differences are paired (``--generator shift`` instead adds 0.1 to the first arm's
probability and clips at 1: the second arm is then not beta, a check of robustness). Designs:
8-80 tasks, 2, 5 or 10 replicates per task, or unequal (2-6 per task, drawn per task and arm),
success near 0 (mu 0.1), 0.5 and near 1 (0.9). Truths by 2,000,000 draws of p. Prints per design
the share of intervals that hold the truth, per statistic, then the smallest and largest.

    .venv/bin/python benchmarks/coverage_replicates.py [--sims 300] [--seed 1] [--mu 0.1 0.5 0.9]
        [--generator beta|shift] [--tasks 8 15 40 80]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy import special, stats

from evalstats.stats import replicates

RHO = 0.3
SHOWN = ["pass@1", "pass@2", "pass^1", "pass^2", "pass^k", "flip_rate", "agreement", "icc"]


def pools(mu: float, generator: str, rng: np.random.Generator, size: int = 2_000_000):
    """(2, size) task success probabilities of the two arms, paired by column."""
    s = 1.0 / RHO - 1.0
    p0 = rng.beta(mu * s, (1.0 - mu) * s, size=size)
    if generator == "shift":
        return np.stack([p0, np.clip(p0 + 0.1, 0.0, 1.0)])
    m1 = special.expit(special.logit(mu) + 0.5)
    u = stats.beta.cdf(p0, mu * s, (1.0 - mu) * s)
    return np.stack([p0, stats.beta.ppf(u, m1 * s, (1.0 - m1) * s)])


def truths(pool: np.ndarray, kmax: int, reps) -> dict[tuple[int, str], float]:
    """(arm, statistic) -> truth for both arms (arm 2: arm 1 minus arm 0)."""
    out = {}
    n = np.arange(2, 7) if reps == "2-6" else np.array([reps])
    for arm in (0, 1):
        p = pool[arm]
        for k in range(1, kmax + 1):
            out[(arm, f"pass^{k}")] = float(np.mean(p**k))
            out[(arm, f"pass@{k}")] = float(1.0 - np.mean((1.0 - p) ** k))
        out[(arm, "agreement")] = float(1.0 - 2.0 * np.mean(p * (1.0 - p)))
        m = p.mean()
        out[(arm, "icc")] = float(p.var() / (m * (1.0 - m)))
        # a task with n replicates flips unless all pass or all fail; n uniform over the design's
        out[(arm, "flip_rate")] = float(np.mean([np.mean(1 - p**j - (1 - p) ** j) for j in n]))
    for key in [k for a, k in out if a == 0]:
        out[(2, key)] = out[(1, key)] - out[(0, key)]
    return out


def simulate(n_tasks: int, reps, pool: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
    idx = rng.integers(0, pool.shape[1], size=n_tasks)
    rows = []
    for arm in (0, 1):
        n = np.full(n_tasks, reps) if reps != "2-6" else rng.integers(2, 7, size=n_tasks)
        y = rng.random((n_tasks, n.max())) < pool[arm, idx][:, None]
        t, r = np.nonzero(np.arange(n.max())[None, :] < n[:, None])
        rows.append(pd.DataFrame({"task_id": t, "arm": f"a{arm}", "passed": y[t, r]}))
    return pd.concat(rows, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mu", type=float, nargs="+", default=[0.1, 0.5, 0.9], help="mean success")
    ap.add_argument("--tasks", type=int, nargs="+", default=[8, 15, 40, 80])
    ap.add_argument("--generator", choices=["beta", "shift"], default="beta")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    table = []
    for mu in args.mu:
        pool = pools(mu, args.generator, rng)
        for n_tasks in args.tasks:
            for reps in (2, 5, 10, "2-6"):
                truth = truths(pool, 10, reps)
                hits: dict[str, list[bool]] = {}
                for _ in range(args.sims):
                    runs = simulate(n_tasks, reps, pool, rng)
                    res = replicates(runs, reference="a0")
                    kmax = 2 if reps == "2-6" else reps
                    for row in res.itertuples():
                        arm = 2 if row.reference == "a0" else int(row.arm[1])
                        stat = row.statistic
                        if stat.startswith("pass") and int(stat[5:]) > kmax:
                            continue
                        t = truth[(arm, stat)]
                        if stat == f"pass^{kmax}" and kmax > 2:
                            stat = "pass^k"
                        if stat in SHOWN or stat == "pass^k":
                            key = ("diff " if arm == 2 else "") + stat
                            ok = row.ci_low - 1e-12 <= t <= row.ci_high + 1e-12
                            hits.setdefault(key, []).append(bool(ok))
                table.append(
                    {"mu": mu, "tasks": n_tasks, "reps": str(reps),
                     **{k: np.mean(v) for k, v in hits.items()}}
                )  # fmt: skip
                print(pd.DataFrame(table[-1:]).round(3).to_string(index=False, header=False),
                      flush=True)  # fmt: skip
    out = pd.DataFrame(table)
    pd.set_option("display.width", 250)
    print(f"\ncoverage ({args.sims} simulated evaluations a design, MC SE "
          f"{np.sqrt(0.95 * 0.05 / args.sims):.3f}; pass^k = the largest k of the design):")  # fmt: skip
    print(out.round(3).to_string(index=False))
    cols = [c for c in out.columns if c not in ("mu", "tasks", "reps")]
    print("\nper statistic, smallest / largest coverage over the designs:")
    print(out[cols].agg(["min", "max"]).T.round(3).to_string())
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
