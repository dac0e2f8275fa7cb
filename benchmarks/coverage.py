"""Coverage of the win-rate intervals and type-I error of the sign test, by simulation.

Each simulated evaluation has ``tasks x replicates`` verdicts drawn from the
latent probit model of :func:`evalstats.simulate.draw_outcomes` (known marginal
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
from scipy import stats

from evalstats._schema import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats.simulate import draw_outcomes
from evalstats.stats._proportion import proportion_ci
from evalstats.stats.winrates import DEFAULT_METHOD, RATE_NAMES, WIN_RATE_METHODS, win_rates

# (p_win, p_tie, p_loss): a close race, a clear WITH lead, rare wins, rare wins and ties.
SCENARIOS = ((0.45, 0.25, 0.30), (0.70, 0.20, 0.10), (0.10, 0.60, 0.30), (0.05, 0.15, 0.80))
NULL_SCENARIO = (0.35, 0.30, 0.35)


def simulated_frame(
    n_evals: int,
    n_tasks: int,
    n_replicates: int,
    probs: tuple[float, float, float],
    icc: float,
    rng: np.random.Generator | int | None,
) -> pd.DataFrame:
    """Long verdict frame of ``n_evals`` stacked evaluations (column ``eval``)."""
    p_win, p_tie, p_loss = probs
    codes = draw_outcomes(
        n_tasks,
        n_replicates,
        p_win=p_win,
        p_tie=p_tie,
        p_loss=p_loss,
        icc=icc,
        n_evals=n_evals,
        rng=rng,
    )[..., 0]
    ev, task, rep = np.indices(codes.shape)
    return pd.DataFrame(
        {
            "eval": ev.ravel(),
            "task_id": task.ravel(),
            "replicate": rep.ravel() + 1,
            "status": pd.Categorical.from_codes(np.zeros(codes.size, np.int8), dtype=STATUS_DTYPE),
            "outcome": pd.Categorical.from_codes(codes.ravel(), dtype=OUTCOME_DTYPE),
        }
    )


def truth_of(probs: tuple[float, float, float]) -> np.ndarray:
    p_win, p_tie, p_loss = probs
    return np.array([p_win, p_tie, p_loss, p_win - p_loss, p_win + p_tie / 2.0])


def coverage_table(
    frame: pd.DataFrame,
    truth: np.ndarray,
    *,
    methods: tuple[str, ...] = WIN_RATE_METHODS,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rng: int = 0,
) -> pd.DataFrame:
    """Coverage (rows: methods and naive IID intervals; columns: statistics)."""
    rows = {}
    res = None
    for method in methods:
        res = win_rates(
            frame, by="eval", method=method, n_resamples=n_resamples, confidence=confidence, rng=rng
        )
        rows[method] = [
            float(((res[f"{n}_ci_low"] <= t) & (t <= res[f"{n}_ci_high"])).mean())
            for n, t in zip(RATE_NAMES, truth, strict=True)
        ]
    assert res is not None
    n = res["n"].to_numpy(np.float64)
    counts = {"win_rate": res["wins"], "tie_rate": res["ties"], "loss_rate": res["losses"]}
    wilson = []
    for name, t in zip(RATE_NAMES, truth, strict=True):
        if name in counts:
            ci = proportion_ci(counts[name].to_numpy(), n, confidence=confidence)
            wilson.append(float(((ci.ci_low <= t) & (t <= ci.ci_high)).mean()))
        else:
            wilson.append(np.nan)
    rows["naive IID Wilson"] = wilson
    # Naive Wald over verdicts: SE from the row-level variance, ignoring tasks.
    w, ti, lo = (res[c].to_numpy(np.float64) for c in ("wins", "ties", "losses"))
    second_moment = np.stack([w, ti, lo, w + lo, w + ti / 4.0], axis=1) / n[:, None]
    est = res[list(RATE_NAMES)].to_numpy(np.float64)
    se = np.sqrt(np.maximum(second_moment - est**2, 0.0) / n[:, None])
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    rows["naive IID Wald"] = list((np.abs(est - truth) <= z * se).mean(axis=0).astype(float))
    return pd.DataFrame(rows, index=list(RATE_NAMES)).T


def type_one_error(frame: pd.DataFrame, level: float = 0.05) -> pd.Series:
    """Rejection rates at ``level`` of the sign test and the cluster t test of net win."""
    res = win_rates(frame, by="eval")
    return pd.Series(
        {
            "sign_test_p (exact binomial, IID)": float((res["sign_test_p"] < level).mean()),
            "net_win_p (cluster-robust t, C-1 df)": float((res["net_win_p"] < level).mean()),
        }
    )


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
