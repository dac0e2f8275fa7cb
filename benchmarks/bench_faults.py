"""Fault injection at scale: 1,000 judge calls, 25 % faults of every kind, three kill -9.

A loopback server (``tests/fakellm.py`` in its own process) answers 1,000 calls (250 tasks,
blind-pair, both orders, two judges) and injects faults into 25 % of the requests, drawn
from every kind it knows: 429, 500, 529, stalls past the client timeout, TCP resets,
invalid judge text, non-JSON / non-UTF-8 / text/plain 200s, empty and tool-only replies,
bodies cut short by a FIN or by a reset mid-body, 20 MB bodies, usage far above
max_tokens, the key echoed back, and 400/404/413/422. The runner (real async SDK clients,
strict validation, concurrency 16) runs in a child process that is killed with SIGKILL
three times at random moments and resumed, then rerun until nothing transient is left.

Printed: paid calls (200s the server sent), journaled calls (those 200s found in the
journal by request id), paid - journaled (calls in flight at a kill; acceptance: at most
the concurrency per kill), duplicate successes (0), calls lost (no line at all: 0), how
every call ended, and the wall time against a run of the same calls with no faults.

The second round (issue 21, ``benchmarks/faults_round2.py``): 36 cases through the
command line -- trickled bodies, wait hints of 10^9 s / inf / a reset in 2999, a 200 MB
error body, batch resumes with other options and batch errors echoing the key, SIGINT /
SIGTERM once and twice, journals with NaN / negative / string costs, ``--out /dev/null``, a
short write (RLIMIT_FSIZE), a torn tail, duplicate keys / columns / zip members, merged
sessions, mistyped fields, deep nesting, a zip bomb, a symlink to /dev/zero, formula cells in
a labelling sheet -- printed per class: cases, clean, paid lost, double-paid, data lost,
hangs (over a time or memory cap), tracebacks, leaks, injections.

The third round (issue 32, ``benchmarks/faults_round3.py``): one case per defect of the issue
and a few variants -- a spending cap across resumes, timeouts and calls in flight; outputs over
data files, users' files and filled sheets; re-runs that add verdicts or pay again; numbers
without data, unchecked parameters, renders interrupted or fed strings, 60 and 200 arms, link
syntax in exports, secrets in a base URL, Claude Code usage of Infinity -- printed per class
with two more columns: over cap, memory and silent wrong results.

    .venv/bin/python benchmarks/bench_faults.py [--tasks 250] [--seed 1] [--round 1|2|3|all]
        [--case SUBSTRING ...]  (third round: only the cases whose class or name has it)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(HERE))

from fakellm import make_data  # noqa: E402

from evalstats.judging import plan_calls, read_journal  # noqa: E402

KEY = "bench-faults-key-0123456789abcdef"
JUDGES = ["anthropic:claude-sonnet-4-20250514", "openai:gpt-4o"]
CONCURRENCY = 16


def _server(
    tmp: Path, name: str, fault_rate: float, seed: int
) -> tuple[subprocess.Popen, Path, str]:
    port_file, counts = tmp / f"{name}.port", tmp / f"{name}.counts.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "fakellm.py"),
            "--port-file",
            str(port_file),
            "--counts-file",
            str(counts),
            "--latency",
            "0.02",
            "--fault-rate",
            str(fault_rate),
            "--fault-kinds",
            "all",
            "--stall-s",
            "0.6",
            "--seed",
            str(seed),
            "--api-key",
            KEY,
        ]
    )
    while not port_file.exists() or not port_file.read_text():
        time.sleep(0.02)
    return proc, counts, f"http://127.0.0.1:{port_file.read_text()}"


def _child(out: Path, n_tasks: int, url: str, extra: str = "") -> subprocess.Popen:
    script = textwrap.dedent(f"""
        from fakellm import make_data
        from evalstats.judging import JudgeOptions, run_judges
        tasks, pairs = make_data({n_tasks})
        opts = JudgeOptions(progress=False, concurrency={CONCURRENCY}, timeout=0.4,
                            max_retries=2,
                            client_options={{"_strict_response_validation": True}}{extra})
        run_judges(tasks, pairs, rubric="blind-pair", judges={JUDGES!r}, orders="both",
                   out={str(out)!r}, options=opts)
    """)
    env = dict(
        os.environ,
        ANTHROPIC_API_KEY=KEY,
        OPENAI_API_KEY=KEY,
        ANTHROPIC_BASE_URL=url,
        OPENAI_BASE_URL=url + "/v1",
        PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
    )
    return subprocess.Popen(
        [sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _lines(out: Path) -> int:
    return out.read_bytes().count(b"\n") if out.exists() else 0


def _stop(proc: subprocess.Popen, counts: Path) -> dict:
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    return json.loads(counts.read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=250, help="x 2 orders x 2 judges calls")
    parser.add_argument("--fault-rate", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--round", choices=("1", "2", "3", "all"), default="all")
    parser.add_argument("--case", action="append", help="third round: cases naming this")
    args = parser.parse_args()
    if args.round in ("1", "all"):
        _round1(args)
    if args.round in ("2", "all"):
        import faults_round2

        print("\nsecond round (issue 21):")
        faults_round2.main()
    if args.round in ("3", "all"):
        import faults_round3

        print("\nthird round (issue 32):")
        faults_round3.main(args.case)


def _round1(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    tasks, pairs = make_data(args.tasks)
    plan = plan_calls(tasks, pairs, rubric="blind-pair", judges=JUDGES, orders="both")
    n_calls = len(plan)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        # -- the same calls with no fault, no kill: the baseline wall time ---------------
        server, counts_file, url = _server(tmp, "clean", 0.0, args.seed)
        t0 = time.perf_counter()
        child = _child(tmp / "clean.jsonl", args.tasks, url)
        if child.wait() != 0:
            raise SystemExit(child.stderr.read().decode())
        clean_wall = time.perf_counter() - t0
        _stop(server, counts_file)

        # -- faults, three kill -9, resumes --------------------------------------------
        out = tmp / "judgments.jsonl"
        server, counts_file, url = _server(tmp, "faults", args.fault_rate, args.seed)
        t0 = time.perf_counter()
        kills = []
        for _ in range(3):
            start = _lines(out)
            target = start + rng.randint(40, max(41, n_calls // 5))
            child = _child(out, args.tasks, url)
            while _lines(out) < target and child.poll() is None:
                time.sleep(0.002)
            if child.poll() is not None:
                raise SystemExit("the run ended before the kill:\n" + child.stderr.read().decode())
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            kills.append(_lines(out))
        runs = 0
        while True:  # resume until a run ends with nothing transient left to retry
            runs += 1
            child = _child(out, args.tasks, url)
            code = child.wait()
            err = child.stderr.read().decode()
            if "Traceback" in err:
                raise SystemExit(f"a run aborted:\n{err}")
            last = read_journal(out)
            transient = [x for x in last if x["error"] and x.get("call_status") == "failed"]
            if code == 0 or (not transient and len(last) == n_calls) or runs >= 8:
                break
        fault_wall = time.perf_counter() - t0
        time.sleep(0.3)  # calls in flight at the last kill finish on the server
        counts = _stop(server, counts_file)
        all_lines = read_journal(out, all_attempts=True)
        last = read_journal(out)
        import base64

        written = "".join(p.read_text(errors="replace") for p in tmp.glob("judgments.jsonl*"))
        forms = [KEY, base64.b64encode(KEY.encode()).decode().rstrip("="), KEY[:16], KEY[-16:]]
        leaks = sum(written.count(f) for f in forms)

    paid = counts["paid_ids"]
    journaled_ids = {x["request_id"] for x in all_lines if x.get("request_id")}
    journaled = [p for p in paid if p in journaled_ids]
    ok = Counter(x["call_key"] for x in all_lines if x["error"] is None)
    keys = set(plan["call_key"])
    ended = Counter(
        "judged" if x["error"] is None else f"failed ({x.get('call_status')})" for x in last
    )
    no_reason = [x for x in last if x["error"] is not None and not x["error"].strip()]
    print(f"calls planned {n_calls}; concurrency {CONCURRENCY}; fault rate {args.fault_rate:.0%}")
    print(
        f"faults injected {sum(counts['faults'].values())} of {counts['requests']} requests: "
        + ", ".join(f"{k} {v}" for k, v in sorted(counts["faults"].items()))
    )
    print(f"kill -9 at journal lines {kills}; resumed runs after the kills: {runs}")
    print(f"paid calls {len(paid)}; journaled calls {len(journaled)}")
    print(
        f"paid - journaled {len(paid) - len(journaled)} (calls in flight at 3 kills; "
        f"bound {3 * CONCURRENCY})"
    )
    print(f"duplicate successes {sum(v - 1 for v in ok.values() if v > 1)}")
    print(
        f"calls lost {len(keys - {x['call_key'] for x in last})}; failures without a reason "
        f"{len(no_reason)}"
    )
    print(f"key (or its base64 form) found in the journal files: {leaks} times")
    print("calls ended: " + ", ".join(f"{k} {v}" for k, v in sorted(ended.items())))
    print(
        f"wall time {fault_wall:.1f} s with faults and kills vs {clean_wall:.1f} s without "
        f"({fault_wall / clean_wall:.1f}x)"
    )


if __name__ == "__main__":
    main()
