"""Issue 32, the third fault round: a fast subset of ``benchmarks/faults_round3.py``.

Each case drives the real command line in a child process (the loopback fake meters what it
bills) and returns its fault counts: paid lost, double-paid, over cap, data lost, hangs,
memory, tracebacks, leaks, injections, silent wrong results. Every count must be zero. The
renders, the 60- and 200-arm cases and the exports run in the benchmark only
(``benchmarks/bench_faults.py --round 3``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCHMARKS = str(Path(__file__).resolve().parents[1] / "benchmarks")
sys.path.insert(0, BENCHMARKS)
try:
    import faults_round3
finally:  # benchmarks/coverage.py must not shadow coverage.py (numba imports it) in later tests
    sys.path[:] = [p for p in sys.path if p != BENCHMARKS]

# Integration (slow: make test runs it, make check does not): the CLI in child processes.
pytestmark = pytest.mark.slow

FAST = (
    "in-flight worst cases wait, not end",
    "label -o DATA/judgments.jsonl",
    "frame -o DATA/runs.jsonl",
    "judge --out DATA/runs.jsonl",
    "frame -o a user's existing file",
    "label re-drawn over a filled sheet",
    "two concurrent label --read",
    "judge again with --max-tokens 2048",
    "import table over a judged directory",
    "arms.toml reordered, blind-pair",
    "two arms judged, a third added",
    "rank(tau=0)",
    "plan.toml margin = 50 for a net win",
    'started_at: "now"',
    "audit reads the journaled model_id",
    "simulate --icc nan",
    "simulate --icc 1",
    "secret in OPENAI_BASE_URL's query, echoed",
    "OPENAI_API_KEY=ollama leaves a judge's words",
    "Claude Code usage Infinity",
    "Claude Code usage 300.9",
    "Claude Code duration_ms 1e400",
    "Claude Code duration_ms NaN",
    "a lone surrogate in an answer",
    'label key with "seed": null',
    "judge with every pair over budget",
)
CASES = {name: run for _, name, run in faults_round3.cases()}


def test_the_subset_names_existing_cases():
    assert set(FAST) <= set(CASES)


@pytest.mark.parametrize("name", FAST)
def test_no_fault(name, tmp_path):
    counts = CASES[name](tmp_path)
    assert not {k: v for k, v in counts.items() if v}, name
