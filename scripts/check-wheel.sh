#!/usr/bin/env bash
# Build the wheel, install it NON-editable into a fresh virtual environment with the pinned
# versions, and render the sample report from a directory outside the clone: what a user who
# installs the wheel gets (the notebooks must come from the installed package).
# Usage: scripts/check-wheel.sh [PYTHON]   (run by .ci/run and `make wheel-check`); PYTHON's
# directory holds the uv that `make` installs (the project's venv has no pip).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${1:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/evalstats-wheel-XXXXXX")
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1

uv="$(dirname "$python")/uv"
"$uv" build -q --wheel --out-dir "$work/dist" "$repo"
wheel=$(ls "$work"/dist/evalstats_withwithout-*.whl)
"$uv" venv -q --python "$python" "$work/venv"
"$uv" pip install -q --python "$work/venv/bin/python" -c "$repo/constraints.txt" "$wheel"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
export MPLCONFIGDIR="$work/cache/matplotlib" IPYTHONDIR="$work/cache/ipython" \
  JUPYTER_RUNTIME_DIR="$work/cache/jupyter-runtime"
"$work/venv/bin/python" - "$repo" <<'PY'
import sys
from pathlib import Path

import evalstats
from evalstats.report import notebook_path

repo = Path(sys.argv[1]).resolve()
pkg = Path(evalstats.__file__).resolve()
assert repo not in pkg.parents, f"evalstats imported from the clone: {pkg}"
nb = notebook_path("report.ipynb").resolve()
assert pkg.parent in nb.parents, f"notebook not from the installed package: {nb}"
print(f"installed: {pkg.parent}; notebooks: {nb.parent}")
PY
"$work/venv/bin/evalstats" report "$repo/data/sample" -o reports/sample -p n_resamples=500
for f in reports/sample/index.html reports/sample/methodology.html reports/sample/results.json \
  reports/sample/figures/headline.svg; do
  test -s "$f" || { echo "missing $f" >&2; exit 1; }
done
"$work/venv/bin/python" -c "
import json; d = json.load(open('reports/sample/results.json'))
assert d['format'] == 'evalstats-results/1' and d['tables']['headline'], 'empty results.json'
print('wheel check: OK,', sum(len(t) for t in d['tables'].values() if t), 'table rows')
"
