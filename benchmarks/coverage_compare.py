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

``--candidates`` prints instead the candidate simultaneous constructions of docs/methods.md
("Why this construction"): the share of evaluations whose net-win intervals, each the
`win_rates` interval at a per-pair level ``1 - alpha*``, cover every pair's net win at once,
for ``alpha*`` from max |Z| with Z ~ N(0, R) (``max_z``), from max |T| with T ~ t(df_min, R)
(``max_t``) and Bonferroni's ``alpha / P`` (``bonferroni``). ``R`` is the pairs' correlation
from the CR2 task-clustered joint covariance of the net wins, the critical value the 0.95
quantile of the max over 2^15 fixed-seed Sobol draws, ``df_min`` the smallest Bell-McCaffrey
df. The table there is the first 200 data sets of every design::

    PYTHONPATH=. python benchmarks/coverage_compare.py --candidates --sims 200
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from evalstats.stats import compare
from evalstats.stats.ranking import encode, pair_counts

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


def _cr2_correlation(frame: pd.DataFrame, arms: list[str]) -> np.ndarray:
    """Correlation (P, P) of the pairs' net wins from their CR2 task-clustered covariance."""
    enc = encode(frame, arms=arms)
    i, j = np.triu_indices(len(arms), 1)
    c, _ = pair_counts(enc, list(zip(i.tolist(), j.tolist(), strict=True)))  # (T, P, 3)
    n_tp = c.sum(-1)
    n_p = n_tp.sum(0)
    est = (c[..., 0] - c[..., 2]).sum(0) / n_p
    resid = (c[..., 0] - c[..., 2] - est * n_tp) / n_p
    resid /= np.sqrt(np.clip(1.0 - n_tp / n_p, 1e-12, None))  # CR2: (1 - h_t)^(-1/2)
    cov = resid.T @ resid
    sd = np.sqrt(np.diag(cov))
    r = np.nan_to_num(cov / np.outer(sd, sd))
    np.fill_diagonal(r, 1.0)
    return r


def _candidate_alphas(r: np.ndarray, df_min: float, alpha: float = 0.05) -> dict[str, float]:
    """Per-pair ``alpha*`` of the max |Z|, max |T| and Bonferroni constructions."""
    p = len(r)
    u = stats.qmc.Sobol(p + 1, seed=20231).random_base2(15)
    vals, vecs = np.linalg.eigh(r)
    z = stats.norm.ppf(u[:, :p]) @ (vecs * np.sqrt(np.clip(vals, 0.0, None))).T
    t = z / np.sqrt(stats.chi2.ppf(u[:, p], df_min) / df_min)[:, None]
    c_z = np.quantile(np.abs(z).max(1), 1 - alpha)
    c_t = np.quantile(np.abs(t).max(1), 1 - alpha)
    return {
        "max_z": 2 * stats.norm.sf(c_z),
        "max_t": 2 * stats.t.sf(c_t, df_min),
        "bonferroni": alpha / p,
    }


def run_candidates(n_sims: int, seed: int) -> pd.DataFrame:
    """Coverage of every pair's net win at once by each candidate construction."""
    rows = []
    for k, n_tasks in DESIGNS:
        i, j = np.triu_indices(k, 1)
        for label, mu in (("null", np.zeros(k)), ("spread", np.linspace(0.0, 1.0, k))):
            truth = _truth(mu, i, j)[:, 3]
            rng = np.random.default_rng([seed, k, n_tasks, label == "null"])
            arms = [f"a{m}" for m in range(k)]
            hits: dict[str, list[bool]] = {"max_z": [], "max_t": [], "bonferroni": []}
            for _ in range(n_sims):
                frame = _draw(rng, mu, n_tasks)
                base = compare(frame, arms=arms)
                df_min = float(base.loc[base.statistic == "net_win", "df"].min())
                for name, a in _candidate_alphas(_cr2_correlation(frame, arms), df_min).items():
                    g = compare(frame, arms=arms, confidence=1 - a)
                    g = g[g.statistic == "net_win"]
                    hits[name].append(bool(((g.ci_low <= truth) & (truth <= g.ci_high)).all()))
            row = {"arms": k, "tasks": n_tasks, "truth": label}
            for name, v in hits.items():
                v = np.asarray(v, dtype=float)
                row[name] = f"{v.mean():.3f} ({v.std(ddof=1) / np.sqrt(len(v)):.3f})"
            rows.append(row)
            print(pd.DataFrame([row]).to_string(index=False, header=len(rows) == 1), flush=True)
    return pd.DataFrame(rows)


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
    ap.add_argument("--candidates", action="store_true", help="the rejected constructions")
    a = ap.parse_args()
    print(f"{a.sims} evaluations per design; MC SE in brackets")
    (run_candidates if a.candidates else run)(a.sims, a.seed)


if __name__ == "__main__":
    main()
