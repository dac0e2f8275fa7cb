"""Coverage of `arm_costs`' total-ratio intervals for K arms: bootstrap-t on the log ratio (the
default) against the percentile task bootstrap, on the same simulated data.

Three arms (reference, 0.7x, 1.4x); each task has a size ``exp(N(7, sd^2))`` shared by its
runs, each run a lognormal noise of sd 0.3, so the true ratio of means is the multiplier.
Task counts 8, 20, 40 with 2 replicates; task-size sd 0.5 and 1.0; 400 evaluations per
design (MC SE 0.011 at 0.95), 999 resamples each.

    python benchmarks/coverage_arm_cost.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalstats.stats import arm_costs

N_EVALS, N_BOOT, CONF, REPS = 400, 999, 0.95, 2
MULT = {"r": 1.0, "a": 0.7, "b": 1.4}


def _runs(rng: np.random.Generator, n_tasks: int, sd: float) -> pd.DataFrame:
    arms = np.array(list(MULT))
    t = np.repeat(np.arange(n_tasks), REPS * len(arms))
    arm = np.tile(arms, n_tasks * REPS)
    size = np.exp(rng.normal(7, sd, n_tasks))[t]
    tok = size * np.vectorize(MULT.get)(arm) * rng.lognormal(0, 0.3, t.size)
    return pd.DataFrame({"task_id": t.astype(str), "replicate": np.tile(np.repeat(np.arange(REPS), 3), n_tasks),
                         "arm": arm, "reported_tokens": tok, "wall_s": tok / 100})  # fmt: skip


def main() -> None:
    rng = np.random.default_rng(11)
    print(f"{'tasks':>5} {'size sd':>7} {'bootstrap-t':>11} {'percentile':>10}")
    for n_tasks in (8, 20, 40):
        for sd in (0.5, 1.0):
            hits = {"studentized": 0, "percentile": 0}
            for _ in range(N_EVALS):
                runs = _runs(rng, n_tasks, sd)
                seed = int(rng.integers(2**32))
                for method in hits:
                    res = arm_costs(
                        runs, reference="r", method=method, n_resamples=N_BOOT, rng=seed
                    )
                    tok = res.loc[res.statistic == "tokens_total_ratio"].set_index("arm")
                    for a in ("a", "b"):
                        hits[method] += tok.at[a, "ci_low"] <= MULT[a] <= tok.at[a, "ci_high"]
            n = 2 * N_EVALS
            print(
                f"{n_tasks:>5} {sd:>7} {hits['studentized'] / n:>11.3f} {hits['percentile'] / n:>10.3f}"
            )


if __name__ == "__main__":
    main()
