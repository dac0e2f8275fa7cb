"""Cohen's kappa with both SEs vs sklearn.metrics.cohen_kappa_score (kappa only).

Same inputs, best of 3 runs each; prints the speed-up. Target: >= 20x on 10 M label pairs.

    .venv/bin/python benchmarks/bench_kappa.py [n_pairs]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd
from sklearn.metrics import cohen_kappa_score

from evalstats.stats.agreement import cohen_kappa


def best_of(fn, repeats: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(n: int = 10_000_000) -> None:
    rng = np.random.default_rng(0)
    k = 3
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, k, n))
    print(f"n = {n:,} label pairs, k = {k} categories (int64 codes)")

    t_sk, sk = best_of(lambda: cohen_kappa_score(a, b))
    t_us, us = best_of(lambda: cohen_kappa(a, b))
    assert abs(us.estimate - sk) < 1e-10, (us.estimate, sk)
    print(f"sklearn cohen_kappa_score : {t_sk:8.4f} s  kappa={sk:.6f}")
    print(
        f"evalstats cohen_kappa     : {t_us:8.4f} s  kappa={us.estimate:.6f} se={us.se:.3g} se0={us.se0:.3g}"
    )
    print(f"speed-up (int codes)      : {t_sk / t_us:6.1f}x")

    # Informational: the same labels as a shared pandas Categorical and as strings.
    dtype = pd.CategoricalDtype(["loss", "tie", "win"], ordered=True)
    ca = pd.Series(pd.Categorical.from_codes(a, dtype=dtype))
    cb = pd.Series(pd.Categorical.from_codes(b, dtype=dtype))
    t_cat, res = best_of(lambda: cohen_kappa(ca, cb))
    assert abs(res.estimate - sk) < 1e-10
    print(
        f"evalstats, Categorical    : {t_cat:8.4f} s  ({t_sk / t_cat:.1f}x vs sklearn on int codes)"
    )
    m = min(n, 1_000_000)
    sa, sb = np.array(["loss", "tie", "win"])[a[:m]], np.array(["loss", "tie", "win"])[b[:m]]
    t_sk_s, sks = best_of(lambda: cohen_kappa_score(sa, sb))
    t_us_s, uss = best_of(lambda: cohen_kappa(sa, sb))
    assert abs(uss.estimate - sks) < 1e-10
    print(
        f"strings, n = {m:,}       : sklearn {t_sk_s:.4f} s, evalstats {t_us_s:.4f} s "
        f"({t_sk_s / t_us_s:.1f}x)"
    )

    # Informational: the long form (one row per rating), pivoted by the shared input module.
    long = pd.DataFrame(
        {
            "unit": np.concatenate([np.arange(m), np.arange(m)]),
            "rater": np.repeat(["x", "y"], m),
            "rating": np.concatenate([a[:m], b[:m]]),
        }
    )
    t_long, resl = best_of(lambda: cohen_kappa(long, unit="unit", rater="rater", rating="rating"))
    assert abs(resl.estimate - cohen_kappa(a[:m], b[:m]).estimate) < 1e-12
    print(f"long frame, n = {m:,}     : evalstats {t_long:.4f} s (unit=, rater=, rating=)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000)
