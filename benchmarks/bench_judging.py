"""Judge-runner throughput: 1 000 calls against a fake server with 100 ms latency.

The fake server runs in its own process (so its threads do not share our GIL) and the
runner uses the real async SDK clients and the fsynced journal. Target: wall time within
1.3x the ideal 1000 / 32 x 0.1 s = 3.125 s at concurrency 32.

    .venv/bin/python benchmarks/bench_judging.py [--calls 1000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from fakellm import make_data  # noqa: E402

from evalstats.judging import JudgeOptions, read_journal, run_judges  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        server = subprocess.Popen(
            [
                sys.executable,
                str(HERE.parent / "tests" / "fakellm.py"),
                "--port-file",
                str(port_file),
                "--latency",
                str(args.latency),
            ]
        )
        try:
            while not port_file.exists() or not port_file.read_text():
                time.sleep(0.01)
            port = int(port_file.read_text())
            os.environ["ANTHROPIC_API_KEY"] = os.environ["OPENAI_API_KEY"] = "sk-bench-fake"
            os.environ["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{port}"
            os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
            tasks, pairs = make_data(args.calls)
            judge = {"anthropic": "anthropic:claude-sonnet-4-20250514", "openai": "openai:gpt-4o"}[
                args.provider
            ]
            out = Path(tmp) / "judgments.jsonl"
            t0 = time.perf_counter()
            res = run_judges(
                tasks,
                pairs,
                rubric="blind-pair",
                judges=[judge],
                out=out,
                options=JudgeOptions(
                    concurrency=args.concurrency,
                    progress=False,
                    client_options={"_strict_response_validation": True},
                ),
            )
            wall = time.perf_counter() - t0
            lines = read_journal(out)
        finally:
            server.terminate()
            server.wait()
    ideal = args.calls / args.concurrency * args.latency
    assert len(lines) == args.calls and res.failed == 0
    print(
        f"judging benchmark ({args.provider}): {args.calls} calls, concurrency "
        f"{args.concurrency}, latency {args.latency * 1000:.0f} ms"
    )
    print(
        f"wall {wall:.3f} s (planning + calls + fsynced journal), ideal {ideal:.3f} s, "
        f"ratio {wall / ideal:.3f} (target <= 1.3)"
    )


if __name__ == "__main__":
    main()
