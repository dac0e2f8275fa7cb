"""Under a provider's rate limit the judge run slows down instead of failing.

A loopback server (``tests/fakellm.py`` in its own process) enforces R requests/min and a
tokens-per-minute limit with continuously refilled buckets (as the providers meter them; a
burst of 10 calls), sends both providers' rate-limit headers on every response and
a 429 with ``retry-after`` when a bucket is empty. The runner (real async SDK client, the
journal, concurrency 16) makes every call. Printed: throughput as a share of the request
limit (target >= 90 %), calls failed (target 0), extra paid calls (target 0), 429s seen.

The full run (120 requests/min, 400 calls) takes about 3.3 minutes by design; ``--quick``
keeps the ratio and scales the rate up (1200 requests/min, 400 calls, ~20 s).

    .venv/bin/python benchmarks/bench_ratelimit.py [--quick] [--provider anthropic|openai]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakellm import make_data  # noqa: E402

from evalstats.judging import JudgeOptions, plan_calls, read_journal, run_judges  # noqa: E402

# The server's buckets hold 5 s of a 120/min limit: a burst of 10 calls, kept at 10 calls
# when --quick scales the rate, so the share of the limit means the same in both.
BURST_CALLS = 10


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--rpm", type=float, default=120.0)
    parser.add_argument("--quick", action="store_true", help="1200 requests/min instead")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    args = parser.parse_args()
    rpm = 1200.0 if args.quick else args.rpm
    judge = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}[
        args.provider
    ]
    tasks, pairs = make_data(args.calls)
    plan = plan_calls(tasks, pairs, rubric="with-without", judges=[judge])
    # The server's token estimate per call (prompt characters / 4 + 300 of output), so the
    # tokens limit is set to bind at 1.05x the request limit: both are in play.
    per_call = float(((plan["system"].str.len() + plan["user"].str.len()) // 4 + 300).mean())
    tpm = rpm * per_call * 1.05
    with tempfile.TemporaryDirectory() as tmp:
        port_file, counts_file = Path(tmp) / "port", Path(tmp) / "counts.json"
        server = subprocess.Popen(
            [
                sys.executable,
                str(HERE.parent / "tests" / "fakellm.py"),
                "--port-file",
                str(port_file),
                "--counts-file",
                str(counts_file),
                "--latency",
                "0.05",
                "--rate-limit",
                f"{rpm},{tpm}",
                "--burst-s",
                str(BURST_CALLS * 60 / rpm),
            ]
        )
        try:
            while not port_file.exists() or not port_file.read_text():
                time.sleep(0.05)
            url = f"http://127.0.0.1:{port_file.read_text()}"
            os.environ.update(
                ANTHROPIC_API_KEY="sk-bench",
                OPENAI_API_KEY="sk-bench",
                ANTHROPIC_BASE_URL=url,
                OPENAI_BASE_URL=url + "/v1",
            )
            out = Path(tmp) / "judgments.jsonl"
            # Measure the calls, not the one-off SDK import (plan_calls warmed the tokenizer).
            import anthropic  # noqa: F401
            import openai  # noqa: F401

            t0 = time.perf_counter()
            res = run_judges(
                tasks,
                pairs,
                rubric="with-without",
                judges=[judge],
                out=out,
                options=JudgeOptions(
                    concurrency=args.concurrency, progress=False, max_retries=2, timeout=30.0
                ),
            )
            wall = time.perf_counter() - t0
            lines = read_journal(out, all_attempts=True)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
        counts = json.loads(counts_file.read_text())
    n = args.calls
    burst = BURST_CALLS
    achieved = n / wall * 60
    ideal_wall = (n - burst) / (rpm / 60)
    paid = sum(counts["paid"].values())
    print(
        f"provider {args.provider}: {n} calls, limit {rpm:.0f} requests/min, {tpm:.0f} tokens/min"
    )
    print(f"wall time {wall:.1f} s (ideal with a {burst:.0f}-call burst: {ideal_wall:.1f} s)")
    print(
        f"throughput {achieved:.1f} calls/min = {100 * achieved / rpm:.1f} % of the limit "
        f"({100 * ideal_wall / wall:.1f} % of the ideal)"
    )
    print(f"calls failed {res.failed}; journal lines {len(lines)}")
    print(f"extra paid calls {paid - n}; 429s sent by the server {counts['rate_limited']}")


if __name__ == "__main__":
    main()
