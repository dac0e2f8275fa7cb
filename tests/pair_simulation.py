"""Simulated pairwise verdicts of K arms on clustered tasks (tests and benchmarks; no part of
the package).

Every task judges every pair of arms in every replicate, in a random order. The log-odds of
``a`` over ``b`` on task ``t`` is ``beta_a - beta_b + b_ta - b_tb + gamma s`` with task-arm
effects ``b_ta ~ N(0, task_sd^2 / 2)`` (so a pair's task effect has SD ``task_sd`` on the logit
scale), ``s`` = +1 when ``a`` is shown first, and Davidson ties with parameter ``nu``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalstats.stats.ranking import outcome_probabilities

__all__ = ["simulate_pairwise", "true_net_wins"]


def _draw(rng, beta, n_tasks, n_reps, task_sd, nu, gamma):
    k = len(beta)
    i, j = np.triu_indices(k, 1)
    eff = rng.normal(0.0, task_sd / np.sqrt(2), size=(n_tasks, k))
    shape = (n_tasks, n_reps, len(i))
    s = rng.choice(np.array([-1, 1]), size=shape)
    u = (beta[i] - beta[j])[None, None] + (eff[:, i] - eff[:, j])[:, None] + gamma * s
    p = outcome_probabilities(u, np.log(nu))
    c = p.cumsum(-1)
    r = rng.random(shape)[..., None]
    col = (r > c[..., :2]).sum(-1)  # 0 win of a, 1 tie, 2 loss
    return i, j, s, col


def simulate_pairwise(
    rng: np.random.Generator,
    beta: np.ndarray,
    *,
    n_tasks: int = 40,
    n_reps: int = 3,
    task_sd: float = 1.0,
    nu: float = 0.9,
    gamma: float = 0.3,
) -> pd.DataFrame:
    """A pairwise verdict frame (judge ``"sim"``) from the model above."""
    beta = np.asarray(beta, dtype=np.float64)
    i, j, s, col = _draw(rng, beta, n_tasks, n_reps, task_sd, nu, gamma)
    n_p = len(i)
    t_idx = np.repeat(np.arange(n_tasks), n_reps * n_p)
    arms = np.array([f"arm{m}" for m in range(len(beta))], dtype=object)
    return pd.DataFrame(
        {
            "task_id": np.char.add("t", t_idx.astype(str)),
            "replicate": np.tile(np.repeat(np.arange(n_reps), n_p), n_tasks),
            "judge": "sim",
            "arm_a": arms[np.tile(i, n_tasks * n_reps)],
            "arm_b": arms[np.tile(j, n_tasks * n_reps)],
            "order": np.where(s.ravel() > 0, "a_first", "b_first"),
            "status": "ok",
            "outcome": np.array(["win", "tie", "loss"], dtype=object)[col.ravel()],
        }
    )


def true_net_wins(
    beta: np.ndarray,
    *,
    task_sd: float = 1.0,
    nu: float = 0.9,
    gamma: float = 0.3,
    n_draws: int = 400_000,
    seed: int = 12345,
) -> np.ndarray:
    """The population net win of each pair ``i < j`` (tasks and orders averaged), by a large
    Monte Carlo over task effects (SE below 0.001)."""
    beta = np.asarray(beta, dtype=np.float64)
    k = len(beta)
    i, j = np.triu_indices(k, 1)
    z = np.random.default_rng(seed).normal(0.0, task_sd, size=(n_draws, 1))
    out = np.zeros(len(i))
    for s in (-1.0, 1.0):  # the two orders, equally likely
        p = outcome_probabilities((beta[i] - beta[j])[None] + z + gamma * s, np.log(nu))
        out += 0.5 * (p[..., 0] - p[..., 2]).mean(0)
    return out
