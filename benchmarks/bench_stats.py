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

    python benchmarks/bench_stats.py [--repeat 5] [--data data/sample] [--dump tables.json]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from evalstats.report._kinds import prepare
from evalstats.report._results import dump_json

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.5


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Best wall time of ``repeat`` calls after one warm-up call, and the last result."""
    out = fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", default=str(ROOT / "data" / "sample"))
    ap.add_argument("--dump", type=Path, help="write the index page's tables as JSON")
    args = ap.parse_args(argv)

    warnings.simplefilter("ignore")  # the sample's few-cluster warnings are expected
    load_s, prepared = best_of(lambda: prepare("evaluation", args.data), args.repeat)
    page_s, results = best_of(lambda: prepared.compute(["report"]), args.repeat)
    total_s, _ = best_of(
        lambda: prepare("evaluation", args.data).compute(["report"]), args.repeat
    )
    print(f"load (files -> verdict frame)      {load_s:6.3f} s")
    print(f"index page statistics              {page_s:6.3f} s")
    print(f"load + index page (best of {args.repeat})      {total_s:6.3f} s")
    print(f"ratio to the {TARGET_S} s target            {total_s / TARGET_S:6.2f}")
    if args.dump is not None:
        tables = results.to_json()["tables"]
        args.dump.write_text(dump_json(tables), encoding="utf-8")
        print(f"index page tables written to {args.dump}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
