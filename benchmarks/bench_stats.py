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
        [--compare old-tables.json]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from evalstats.report._kinds import prepare
from evalstats.report._results import dump_json

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


if __name__ == "__main__":
    raise SystemExit(main())
