# Two commands work on a fresh clone: `make report` and `make test`.
# Each creates .venv when missing and installs the pinned versions into it.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Keep tool caches inside the build, never in $HOME or the shared temp dir.
export MPLCONFIGDIR := $(CURDIR)/.cache/matplotlib
export IPYTHONDIR := $(CURDIR)/.cache/ipython
export JUPYTER_RUNTIME_DIR := $(CURDIR)/.cache/jupyter-runtime

.PHONY: test report case-study lint bench sample lock clean chromium wheel-check

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# The distribution was called `evalstats` before it got a name of its own on the registry.
	$(BIN)/python -m pip uninstall -q -y evalstats 2>/dev/null || true
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[dev]'
	# irrCAC pins scipy==1.12 and pandas<3 but runs on current versions: install it alone.
	$(BIN)/python -m pip install -q --no-deps irrCAC==0.4.4
	touch $(STAMP)

# Debian's chromium for the report's browser test (never `playwright install`).
chromium:
	@scripts/install-chromium.sh || echo "chromium not installed: the browser test skips locally (and fails under CI)"

test: $(STAMP) chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

report: $(STAMP)
	$(BIN)/evalstats report data/sample -o reports/sample

# Build the wheel, install it (not editable) in a fresh venv, render the sample from elsewhere.
wheel-check: $(STAMP)
	scripts/check-wheel.sh $(BIN)/python

# The three case studies (AlpacaEval, LLMBar, PandaLM), read in place from ../shared (never
# copied into the project; LLMBar's tarball is extracted to a temporary folder, then removed).
case-study: $(STAMP)
	$(BIN)/evalstats report ../shared/data/alpaca_eval -o reports/alpaca_eval
	$(BIN)/evalstats report ../shared/data/llmbar -o reports/llmbar
	$(BIN)/evalstats report ../shared/data/pandalm -o reports/pandalm

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# Regenerate the committed simulated sample (deterministic for a given seed).
sample: $(STAMP)
	$(BIN)/evalstats simulate data/sample --seed 20260518 --orders both --position-bias 0.2 --judge-noise 0.25

# Refresh the pinned versions after changing dependencies.
lock: $(STAMP)
	$(BIN)/python -m pip freeze --exclude-editable | grep -v -i '^irrcac==' > constraints.txt

clean:
	rm -rf $(VENV) .cache .pytest_cache .ruff_cache
