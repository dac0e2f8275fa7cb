"""Coverage of the median cost ratio's interval: task-clustered Woodruff (the default)
against a percentile task bootstrap (1,000 resamples; the old default took 10,000).

Log ratios are a task effect (sd 0.3 or 1.0) plus pair noise (sd 0.5), equal pairs per
task; the true median is 0. 400 evaluations per design (MC SE 0.011 at 0.95).

    python benchmarks/coverage_median.py
"""

from __future__ import annotations

import numpy as np

from evalstats.stats.cost import _woodruff_median_interval

N_EVALS, N_BOOT, CONF = 400, 1000, 0.95


def main() -> None:
    rng = np.random.default_rng(7)
    se = np.sqrt(CONF * (1 - CONF) / N_EVALS)
    for n_tasks, reps in ((6, 5), (8, 5), (20, 5), (40, 3)):
        for sd_task in (0.3, 1.0):
            hit_w = hit_b = 0
            g = np.repeat(np.arange(n_tasks), reps)
            for _ in range(N_EVALS):
                lr = rng.normal(0, sd_task, n_tasks)[g] + rng.normal(0, 0.5, g.size)
                lo, hi, _ = _woodruff_median_interval(lr, g, CONF)
                hit_w += lo <= 0 <= hi
                # Whole tasks resampled at once: (resamples, tasks, pairs) -> medians.
                idx = rng.integers(0, n_tasks, (N_BOOT, n_tasks))
                meds = np.median(lr.reshape(n_tasks, reps)[idx].reshape(N_BOOT, -1), axis=1)
                b_lo, b_hi = np.quantile(meds, [(1 - CONF) / 2, (1 + CONF) / 2])
                hit_b += b_lo <= 0 <= b_hi
            print(
                f"tasks={n_tasks:2d} pairs/task={reps} task_sd={sd_task}: "
                f"woodruff {hit_w / N_EVALS:.3f}  bootstrap {hit_b / N_EVALS:.3f}  (MC SE {se:.3f})"
            )


if __name__ == "__main__":
    main()
