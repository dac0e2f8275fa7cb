"""Start-up and report time against the libraries evalstats stands on (issue 9), in one run.

Every figure is the wall time of a fresh process, the best of N (best of 5; the report, best
of 3), measured interleaved so that a load spike on a shared machine hits both sides alike:

- import ratio: ``python -c "import evalstats"`` / ``python -c "import pandas, scipy.stats,
  numpy"`` (goal <= 1.3);
- ``--version`` ratio: ``evalstats --version`` / the same reference (goal <= 0.4);
  ``--help`` and the first touch of the statistics are printed beside, for context;
- report ratio: ``evalstats report data/sample -o TMP`` / nbclient executing a one-cell notebook
  ``import pandas, scipy.stats, matplotlib.pyplot`` (goal <= 3).

Run: .venv/bin/python benchmarks/bench_startup.py [--repeats 5] [--report-repeats 3]
     [--data data/sample] [--no-report]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
# The console script as a user runs it; ``python -m`` where it is not installed beside python.
_SCRIPT = Path(PY).with_name("evalstats")
CLI = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "evalstats.cli"]


def _env() -> dict[str, str]:
    # As `make` runs things: tool caches inside the build, not in $HOME.
    env = dict(os.environ)
    for var, sub in (
        ("MPLCONFIGDIR", "matplotlib"),
        ("IPYTHONDIR", "ipython"),
        ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
    ):
        env.setdefault(var, str(ROOT / ".cache" / sub))
        Path(env[var]).mkdir(parents=True, exist_ok=True)
    return env


def _time(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    elapsed = time.perf_counter() - start
    if proc.returncode:  # kernels chat on stderr; show it only when something failed
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}")
    return elapsed


def _best(cmds: dict[str, list[str]], repeats: int) -> dict[str, float]:
    """Best wall time per command, runs interleaved (a, b, a, b, ...)."""
    best = dict.fromkeys(cmds, float("inf"))
    for _ in range(repeats):
        for name, cmd in cmds.items():
            best[name] = min(best[name], _time(cmd))
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--report-repeats", type=int, default=3)
    ap.add_argument("--data", default="data/sample")
    ap.add_argument("--no-report", action="store_true", help="skip the report ratio")
    args = ap.parse_args(argv)

    t = _best(
        {
            "reference": [PY, "-c", "import pandas, scipy.stats, numpy"],
            "import": [PY, "-c", "import evalstats"],
            "version": [*CLI, "--version"],
            "help": [*CLI, "--help"],
            # For context, not a goal: what the first statistic costs once it is touched.
            "stats": [PY, "-c", "import evalstats; evalstats.win_rates; evalstats.verdict_frame"],
        },
        args.repeats,
    )
    print(f"import pandas, scipy.stats, numpy : {t['reference']:.3f} s (best of {args.repeats})")
    print(f"import evalstats                  : {t['import']:.3f} s")
    print(f"evalstats --version               : {t['version']:.3f} s")
    print(f"evalstats --help                  : {t['help']:.3f} s")
    print(f"evalstats.win_rates, verdict_frame: {t['stats']:.3f} s (first use of the statistics)")
    print(f"import ratio    {t['import'] / t['reference']:.2f}  (goal <= 1.3)")
    print(f"--version ratio {t['version'] / t['reference']:.2f}  (goal <= 0.4)")
    if args.no_report:
        return 0
    # The same measurement as benchmarks/bench_report.py (one definition of the report ratio):
    # the one-cell notebook and the report interleaved, fresh processes, best of N.
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_report import NOTEBOOK_CELL as cell
    from bench_report import measure

    n = args.report_repeats
    nb_best, rep_best = measure(n, args.data)
    print(f"one-cell notebook ({cell}) : {nb_best:.2f} s (best of {n})")
    print(f"evalstats report {args.data}      : {rep_best:.2f} s (best of {n})")
    print(f"report ratio    {rep_best / nb_best:.2f}  (goal <= 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
