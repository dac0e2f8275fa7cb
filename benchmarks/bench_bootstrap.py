"""Speed and memory of the win-rate intervals and the cluster bootstrap engine.

1. Small evaluation, 15 tasks x 6 replicates x 2 orders = 180 verdicts,
   B = 10 000: the default win-rate CI (and the BCa cluster bootstrap) against
   ``scipy.stats.bootstrap`` (IID over verdicts, BCa, same B, same statistic:
   the win rate).
2. Large evaluation, 1 000 000 verdicts in 10 000 tasks, B = 10 000: all five
   rates with CIs, timed against the floor of any cluster bootstrap, one bare
   numpy gather pass over the B x K cluster indices (draw the indices, gather
   one per-cluster value, sum), measured in the same run; peak memory via
   tracemalloc (numpy reports its allocations to it) and the process's
   ru_maxrss.

Run: ``.venv/bin/python benchmarks/bench_bootstrap.py``.
"""

from __future__ import annotations

import resource
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._schema import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats.stats.models import draw_outcomes
from evalstats.stats.rates import DEFAULT_METHOD, win_rates
from evalstats.stats.resample import cluster_bootstrap

B = 10_000


def best_time(fn: Callable[[], object], repeat: int = 5) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def verdict_frame(task: np.ndarray, codes: np.ndarray, status: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task_id": pd.Series([f"t{i:05d}" for i in range(task.max() + 1)])
            .to_numpy()[task]
            .astype(str),
            "judge": "judge-a",
            "status": pd.Categorical.from_codes(status, dtype=STATUS_DTYPE),
            "outcome": pd.Categorical.from_codes(
                np.where(status == 0, codes, -1), dtype=OUTCOME_DTYPE
            ),
        }
    )


def small() -> None:
    codes = draw_outcomes(15, 12, p_win=0.45, p_tie=0.25, p_loss=0.30, icc=0.3, rng=1)[0, :, :, 0]
    task = np.repeat(np.arange(15), 12)
    frame = verdict_frame(task, codes.ravel(), np.zeros(task.size, np.int8))
    win = (codes.ravel() == 2).astype(np.float64)
    per_task = np.stack([np.bincount(task, weights=win), np.bincount(task)], axis=1)

    t_scipy = best_time(
        lambda: stats.bootstrap(
            (win,), np.mean, method="BCa", n_resamples=B, rng=np.random.default_rng(0)
        )
    )
    t_default = best_time(lambda: win_rates(frame, by=None, n_resamples=B, rng=0))
    t_bca = best_time(lambda: win_rates(frame, by=None, method="bca", n_resamples=B, rng=0))
    t_engine = best_time(
        lambda: cluster_bootstrap(per_task, lambda s: s[..., 0] / s[..., 1], n_resamples=B, rng=0)
    )
    print(f"1. 15 tasks x 6 replicates x 2 orders = {len(frame)} verdicts, B = {B}")
    print(f"   scipy.stats.bootstrap (IID, BCa, win rate)        {t_scipy * 1e3:8.2f} ms")
    rows = (
        (f"win_rates default ({DEFAULT_METHOD}), all five rates", t_default),
        ("win_rates method='bca' (cluster bootstrap), all five", t_bca),
        ("cluster_bootstrap engine, BCa, win rate only", t_engine),
    )
    for label, t in rows:
        print(f"   {label:<50} {t * 1e3:8.2f} ms   {t_scipy / t:7.1f}x faster than scipy")


def floor_pass(values: np.ndarray, n_resamples: int, chunk: int, seed: int) -> np.ndarray:
    """One bare gather pass: draw B x K cluster indices in chunks, gather, sum."""
    rng = np.random.default_rng(seed)
    k = values.shape[0]
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        idx = rng.integers(0, k, (b, k))
        out[start : start + b] = np.take(values, idx).sum(axis=1)
    return out


def large() -> None:
    n_rows, n_tasks = 1_000_000, 10_000
    rng = np.random.default_rng(7)
    task = rng.integers(0, n_tasks, n_rows)
    # Task-level heterogeneity (ICC) through a task-specific win probability.
    p_win = rng.beta(2.0, 2.0, n_tasks) * 0.8
    u = rng.random(n_rows)
    codes = np.where(u < p_win[task], 2, np.where(u < p_win[task] + 0.2, 1, 0)).astype(np.int8)
    status = np.where(rng.random(n_rows) < 0.02, 1, 0).astype(np.int8)  # 2 % no_answer
    frame = verdict_frame(task, codes, status)

    per_task_wins = np.bincount(task, weights=(codes == 2) & (status == 0))
    chunk = max(1, (96 * 2**20) // (16 * n_tasks))  # the engine's chunking
    t_floor = best_time(lambda: floor_pass(per_task_wins, B, chunk, 0), repeat=3)
    t_default = best_time(lambda: win_rates(frame, by=None, n_resamples=B, rng=0), repeat=3)
    t_bca = best_time(
        lambda: win_rates(frame, by=None, method="bca", n_resamples=B, rng=0), repeat=3
    )
    t_pct = best_time(
        lambda: win_rates(frame, by=None, method="percentile", n_resamples=B, rng=0), repeat=3
    )
    counts = np.stack(
        [
            np.bincount(task, weights=(codes == 2) & (status == 0)),
            np.bincount(task, weights=(codes == 1) & (status == 0)),
            np.bincount(task, weights=status == 0),
        ],
        axis=1,
    )

    def rates(s: np.ndarray) -> np.ndarray:
        w, t, n = s[..., 0], s[..., 1], s[..., 2]
        return np.stack([w / n, t / n, (n - w - t) / n, (2 * w + t - n) / n, (w + t / 2) / n], -1)

    t_engine = best_time(lambda: cluster_bootstrap(counts, rates, n_resamples=B, rng=0), repeat=3)

    tracemalloc.start()
    win_rates(frame, by=None, method="bca", n_resamples=B, rng=0)
    peak_bca = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    tracemalloc.start()
    win_rates(frame, by=None, n_resamples=B, rng=0)
    peak_default = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    print(f"\n2. {n_rows:,} verdicts in {n_tasks:,} tasks, B = {B}, all five rates with CIs")
    print(f"   floor: bare gather pass over B x K indices        {t_floor:7.3f} s")
    rows = (
        (f"win_rates default ({DEFAULT_METHOD})", t_default, peak_default),
        ("win_rates method='bca'", t_bca, peak_bca),
        ("win_rates method='percentile'", t_pct, None),
        ("cluster_bootstrap engine only, BCa, q = 5", t_engine, None),
    )
    for label, t, peak in rows:
        mem = f"   peak {peak / 2**20:7.1f} MB (tracemalloc)" if peak is not None else ""
        print(f"   {label:<50} {t:7.3f} s = {t / t_floor:5.2f}x floor{mem}")
    print(f"   process peak RSS (ru_maxrss, whole benchmark incl. data): {maxrss:7.1f} MB")


if __name__ == "__main__":
    small()
    large()
