"""Coverage of `compare` and Holm's family-wise error on an independent generator.

The generator is not the package's (``evalstats.simulate`` or the BTD one): a threshold
model. Arm ``a`` on task ``t`` has quality ``mu_a + u_ta`` with ``u_ta ~ N(0, sd^2)`` (the
task random effects), a verdict of ``a`` against ``b`` compares the qualities plus logistic
noise, and a difference within ``+-tau`` is a tie. Every task has 1-3 replicates (drawn per
task, so unequal), each judging every pair of arms once. The truth of each pair's rates
comes from Gauss-Hermite quadrature over the task effects.

Per design it prints the share of evaluations in which Holm's p-values reject some pair at
0.05 under the global null (``fwer``), the share whose simultaneous intervals cover every
pair's net win (``sim_net``) and every pair's win rate (``sim_win``; each statistic is
its own family), and the mean share of pairs whose marginal net-win / win-rate interval
covers (``pair_net``, ``pair_win``), each with its Monte Carlo SE::

    PYTHONPATH=. python benchmarks/coverage_compare.py --sims 400
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.special import expit

from evalstats.stats import compare

TAU, SD = 0.6, 0.8
#: (arms, tasks) of each design; every design runs equal arms (the null) and spread ones.
DESIGNS = ((4, 15), (6, 15), (5, 30), (6, 80))


def _truth(mu: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """(pairs, 4): win, tie, loss, net win of ``mu_i + u_i`` against ``mu_j + u_j``."""
    x, w = np.polynomial.hermite_e.hermegauss(60)
    e = x * SD * np.sqrt(2.0)  # u_ti - u_tj ~ N(0, 2 sd^2)
    w = w / w.sum()
    d = (mu[i] - mu[j])[:, None] + e[None]
    win = (expit(d - TAU) * w).sum(1)
    loss = (expit(-d - TAU) * w).sum(1)
    return np.stack([win, 1 - win - loss, loss, win - loss], axis=1)


def _draw(rng: np.random.Generator, mu: np.ndarray, n_tasks: int) -> pd.DataFrame:
    k = len(mu)
    i, j = np.triu_indices(k, 1)
    reps = rng.integers(1, 4, size=n_tasks)
    u = rng.normal(0.0, SD, size=(n_tasks, k))
    task = np.repeat(np.arange(n_tasks), reps)
    task = np.repeat(task, len(i))
    pi = np.tile(np.arange(len(i)), reps.sum())
    d = mu[i[pi]] - mu[j[pi]] + u[task, i[pi]] - u[task, j[pi]] + rng.logistic(size=len(pi))
    out = np.where(d > TAU, "win", np.where(d < -TAU, "loss", "tie"))
    swap = rng.random(len(pi)) < 0.5  # half the rows stored the other way round
    names = np.array([f"a{m}" for m in range(k)], dtype=object)
    a, b = np.where(swap, j[pi], i[pi]), np.where(swap, i[pi], j[pi])
    flip = {"win": "loss", "loss": "win", "tie": "tie"}
    return pd.DataFrame(
        {
            "task_id": task.astype(str),
            "judge": "sim",
            "arm_a": names[a],
            "arm_b": names[b],
            "status": "ok",
            "outcome": np.where(swap, pd.Series(out).map(flip).to_numpy(), out),
        }
    )


def run(n_sims: int, seed: int) -> pd.DataFrame:
    rows = []
    for k, n_tasks in DESIGNS:
        i, j = np.triu_indices(k, 1)
        for label, mu in (("null", np.zeros(k)), ("spread", np.linspace(0.0, 1.0, k))):
            truth = _truth(mu, i, j)
            rng = np.random.default_rng([seed, k, n_tasks, label == "null"])
            fw, sim_net, sim_win, pair_net, pair_win = [], [], [], [], []
            arms = [f"a{m}" for m in range(k)]
            for _ in range(n_sims):
                res = compare(_draw(rng, mu, n_tasks), arms=arms)
                est = {st: g for st, g in res.groupby("statistic", sort=False)}
                cover = []
                for c, st in enumerate(("win_rate", "tie_rate", "loss_rate", "net_win")):
                    g = est[st]
                    t = truth[:, c]
                    cover.append(
                        (
                            ((g.ci_low <= t) & (t <= g.ci_high)).to_numpy(),
                            ((g.sim_low <= t) & (t <= g.sim_high)).to_numpy(),
                        )
                    )
                fw.append(bool((est["net_win"].p_holm < 0.05).any()))
                sim_net.append(cover[3][1].all())
                sim_win.append(cover[0][1].all())
                pair_net.append(cover[3][0].mean())
                pair_win.append(cover[0][0].mean())
            row = {"arms": k, "tasks": n_tasks, "truth": label}
            for name, v in (("fwer", fw), ("sim_net", sim_net), ("sim_win", sim_win),
                            ("pair_net", pair_net), ("pair_win", pair_win)):  # fmt: skip
                v = np.asarray(v, dtype=float)
                row[name] = f"{v.mean():.3f} ({v.std(ddof=1) / np.sqrt(len(v)):.3f})"
            if label != "null":
                row["fwer"] = "-"
            rows.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    print(f"{a.sims} evaluations per design; MC SE in brackets")
    run(a.sims, a.seed)


if __name__ == "__main__":
    main()
