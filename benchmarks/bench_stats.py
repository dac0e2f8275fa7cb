"""Warm time of computing the sample report's published statistics, against the 1.5 s target.

What is timed is what ``evalstats report data/sample`` computes for its index page, in a
process whose imports are already warm (best of ``--repeat``, 5):

* **load**: :func:`evalstats.report._kinds.prepare` -- tasks, runs and judgments read and
  validated, judge output parsed, the verdict frame built (once per report);
* **index page**: ``Prepared.compute(["report"])`` -- every table of ``results.json`` that
  ``index.html`` shows (headline, consensus, agreement, disagreements, cost, per-task,
  dimensions, position bias, accounting, sensitivity, audit), with the report's defaults
  (10 000 resamples, seed 0) and its provenance.

The methodology page's power and coverage simulations are not part of this figure (they are
sized by the page and timed by ``bench_report.py``). Prints each part, the total and its
ratio to the 1.5 s target (issue 11, "speed kept"); ``--dump FILE`` also writes the index
page's tables (``results.json``'s ``tables``) so two versions can be compared number for
number.

``--scale`` (issue 23 item 6) instead times each statistic with its default settings at
10^6 verdicts (10,000 tasks x 50 pairs x 2 judges, :func:`scale_frame`; design_coverage of
the win rates, the kappa and the cost as ``dcov``, ``dcov_kappa``, ``dcov_cost``), once, each in a
child process of its own: wall and CPU seconds of one call, then the peak of the memory
numpy and Python allocate during a second call (``tracemalloc``; traced apart from the
timed call, whose speed it would slow), beside a bare numpy gather of the same size
(``x[idx]`` over 10^6 rows) and the ratio to it. Targets: <= 3 s and <= 1.5 GB each.

    python benchmarks/bench_stats.py [--repeat 5] [--data data/sample] [--dump tables.json]
        [--compare old-tables.json]
    python benchmarks/bench_stats.py --scale [gather cost missing ppi agree dcov dcov_kappa
        dcov_cost]   (all of them by default)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.5


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Best wall and best CPU time of ``repeat`` calls after one warm-up call, and the
    last result. The CPU time (this process's) is what the machine's other load does not
    inflate; on a shared machine read it beside the wall time."""
    out = fn()
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return min(wall), min(cpu), out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--scale-child"]:
        scale_child(argv[1])
        return 0
    if argv[:1] == ["--scale"]:
        return scale(argv[1:])
    from evalstats.report._kinds import prepare
    from evalstats.report._results import dump_json

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=str(ROOT / "data" / "sample"))
    ap.add_argument("--dump", type=Path, help="write the index page's tables as JSON")
    ap.add_argument("--compare", type=Path, help="compare with tables written by --dump")
    args = ap.parse_args(argv)

    warnings.simplefilter("ignore")  # the sample's few-cluster warnings are expected
    load = best_of(lambda: prepare("evaluation", args.data), args.repeat)
    prepared = load[2]
    page = best_of(lambda: prepared.compute(["report"]), args.repeat)
    results = page[2]
    total = best_of(lambda: prepare("evaluation", args.data).compute(["report"]), args.repeat)
    print(f"best of {args.repeat}, warm imports          wall      cpu")
    for name, (wall, cpu, _) in (
        ("load (files -> verdict frame)", load),
        ("index page statistics", page),
        ("load + index page", total),
    ):
        print(f"{name:32s} {wall:7.3f} s {cpu:7.3f} s")
    print(
        f"ratio to the {TARGET_S} s target         {total[0] / TARGET_S:7.2f}   {total[1] / TARGET_S:7.2f}"
    )
    if args.dump is not None:
        tables = results.to_json()["tables"]
        args.dump.write_text(dump_json(tables), encoding="utf-8")
        print(f"index page tables written to {args.dump}")
    if args.compare is not None:
        old = json.loads(args.compare.read_text(encoding="utf-8"))
        compare(old, json.loads(dump_json(results.to_json()["tables"])))
    return 0


def compare(old: dict, new: dict) -> None:
    """Per table: rows, columns added or removed, and the shared columns whose values differ
    (exact equality; null equals null)."""
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None or len(a) != len(b):
            print(f"{name:16s} only in one, unavailable in one, or rows differ")
            continue
        ca, cb = (set(t[0]) if t else set() for t in (a, b))
        differ = sorted(
            c for c in ca & cb if any(ra[c] != rb[c] for ra, rb in zip(a, b, strict=True))
        )
        print(
            f"{name:16s} rows={len(a):4d} shared={len(ca & cb):3d} added={sorted(cb - ca)} "
            f"removed={sorted(ca - cb)} differing={differ}"
        )


# ------------------------------------------------------------------------ 10^6 verdicts

#: ``dcov``, ``dcov_kappa``, ``dcov_cost``: design_coverage of the win rates, the kappa and
#: the total cost ratios (``statistic=``).
SCALE_NAMES = ("gather", "cost", "missing", "ppi", "agree", "dcov", "dcov_kappa", "dcov_cost")
_OUTCOMES = np.array(["win", "tie", "loss"])


def scale_frame(n_tasks: int = 10_000, reps: int = 50, seed: int = 0):
    """Two judges' verdicts on ``n_tasks * reps`` pairs, with lognormal token costs, and
    the true outcome of each pair (the labels of the PPI call)."""
    rng = np.random.default_rng(seed)
    n = n_tasks * reps
    task = np.repeat(np.arange(n_tasks), reps).astype(str)
    size = np.repeat(rng.normal(7.5, 1.2, n_tasks), reps)
    tw = np.round(np.exp(size - 0.3 + rng.normal(0, 0.4, n)))
    to = np.round(np.exp(size + rng.normal(0, 0.4, n)))
    truth = rng.choice(_OUTCOMES, n, p=[0.45, 0.2, 0.35])
    parts = []
    for j in range(2):
        out = np.where(rng.random(n) < 0.8, truth, rng.choice(_OUTCOMES, n))
        status = np.where(rng.random(n) < 0.02, "no_answer", "ok")
        parts.append(
            pd.DataFrame(
                {
                    "task_id": task,
                    "replicate": np.tile(np.arange(1, reps + 1), n_tasks),
                    "order": "with_first",
                    "judge": f"j{j}",
                    "rubric": "with-without",
                    "status": status,
                    "outcome": np.where(status == "ok", out, None),
                    "tokens_with": tw,
                    "tokens_without": to,
                    "wall_with_s": tw / 100,
                    "wall_without_s": to / 100,
                }
            )
        )
    return pd.concat(parts, ignore_index=True), truth


def _scale_call(name: str, f: pd.DataFrame, truth: np.ndarray) -> Callable[[], object]:
    from evalstats.stats import (
        cost_ratios,
        design_coverage,
        judge_agreement,
        missing_bounds,
        ppi_win_rates,
    )

    one = f[f["judge"] == "j0"]
    if name == "gather":
        x = f["tokens_with"].to_numpy()
        idx = np.random.default_rng(0).integers(0, x.size, x.size)
        return lambda: x[idx]
    if name == "ppi":
        pick = np.random.default_rng(1).choice(len(one), 2000, replace=False)
        labels = pd.DataFrame(
            {
                "task_id": one["task_id"].to_numpy()[pick],
                "replicate": one["replicate"].to_numpy()[pick],
                "labeler": "ann",
                "outcome": truth[pick],
                "sample_seed": 0,
                "frame_sha256": "x",
            }
        )
        return lambda: ppi_win_rates(f, labels, judge="j0", rng=0)
    return {
        "cost": lambda: cost_ratios(one),
        "missing": lambda: missing_bounds(f, rng=0),
        "agree": lambda: judge_agreement(f, rng=0),
        "dcov": lambda: design_coverage(f),
        "dcov_kappa": lambda: design_coverage(f, statistic="kappa"),
        "dcov_cost": lambda: design_coverage(one, statistic="cost"),
    }[name]


def scale_child(name: str) -> None:
    """One function: its wall and CPU time of one call, then its traced peak of another."""
    warnings.simplefilter("ignore")
    f, truth = scale_frame()
    call = _scale_call(name, f, truth)
    w, c = time.perf_counter(), time.process_time()
    call()
    cpu, wall = time.process_time() - c, time.perf_counter() - w
    tracemalloc.start()
    call()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps({"name": name, "rows": len(f), "wall": wall, "cpu": cpu, "peak": peak}))


def scale(names: list[str]) -> int:
    """The table: every function in a child process, the gather first (the ratio's base)."""
    todo = ["gather", *[n for n in names or SCALE_NAMES if n != "gather"]]
    unknown = sorted(set(todo) - set(SCALE_NAMES))
    if unknown:
        raise SystemExit(f"unknown: {unknown}; known: {SCALE_NAMES}")
    print("10^6 verdicts (10,000 tasks), defaults; targets <= 3 s, <= 1.5 GB")
    print(
        f"{'function':12s} {'rows':>9s} {'wall s':>8s} {'cpu s':>8s} {'peak MB':>9s} {'x gather':>9s}"
    )
    base = None
    for name in todo:
        # A child per function: its imports, caches and memory are its own.
        out = subprocess.run(
            [sys.executable, __file__, "--scale-child", name], capture_output=True, text=True
        )
        if out.returncode:
            print(f"{name:12s} failed: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        base = r["wall"] if name == "gather" else base
        ratio = r["wall"] / base if base else float("nan")
        print(
            f"{name:12s} {r['rows']:9d} {r['wall']:8.2f} {r['cpu']:8.2f} "
            f"{r['peak'] / 2**20:9.0f} {ratio:9.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
