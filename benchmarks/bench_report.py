"""Time `evalstats report data/sample` against a one-cell notebook executed by nbclient.

The one-cell notebook (``import pandas, scipy.stats, matplotlib.pyplot``) is the floor any
notebook-rendered report pays: a Python process, nbclient, a kernel and the scientific
imports. Both are run in fresh processes, interleaved (so that the machine's load weighs on
both alike), best of ``--repeat`` (3). Prints both times and their ratio; the target is a
ratio of at most 4 (issue 20), reached by computing less and vectorising, never by running
the render beside itself.

    python benchmarks/bench_report.py [--repeat 3] [--data data/sample]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_CELL = "import pandas, scipy.stats, matplotlib.pyplot"
ONE_CELL = """
import os, sys
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

nb = nbformat.v4.new_notebook(
    cells=[nbformat.v4.new_code_cell(sys.argv[1])]
)
km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
NotebookClient(nb, km=km, kernel_name="python3", timeout=600).execute()
assert nb.cells[0].outputs == [], nb.cells[0].outputs
"""


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var, sub in (
        ("MPLCONFIGDIR", "matplotlib"),
        ("IPYTHONDIR", "ipython"),
        ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
    ):
        env.setdefault(var, str(cache / sub))
        Path(env[var]).mkdir(parents=True, exist_ok=True)
    env["MPLBACKEND"] = "Agg"
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env


def _time(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _evalstats() -> list[str]:
    exe = Path(sys.executable).with_name("evalstats")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "evalstats.cli"]


def measure(repeat: int = 3, data: str | os.PathLike[str] = ROOT / "data" / "sample"):
    """(best one-cell notebook time, best report time), fresh processes, interleaved.

    Importable, so that ``bench_startup.py`` can print the report ratio beside its own.
    """
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        env = _env(tmp / "cache")
        notebook, report = [], []
        for i in range(repeat):
            notebook.append(_time([sys.executable, "-c", ONE_CELL, NOTEBOOK_CELL], env, tmp))
            out = tmp / f"report-{i}"
            cmd = [*_evalstats(), "report", os.fspath(data), "-o", str(out)]
            report.append(_time(cmd, env, ROOT))
            print(f"run {i + 1}: one-cell notebook {notebook[-1]:.2f} s, report {report[-1]:.2f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return min(notebook), min(report)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default=str(ROOT / "data" / "sample"))
    args = ap.parse_args()
    nb_best, rep_best = measure(args.repeat, args.data)
    print(f"one-cell nbclient notebook (best of {args.repeat}): {nb_best:.2f} s")
    print(f"evalstats report {args.data} (best of {args.repeat}): {rep_best:.2f} s")
    print(f"report ratio: {rep_best / nb_best:.2f}x (target <= 4x)")
    # The ratio is meant quiet: on a loaded machine say so beside it.
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
