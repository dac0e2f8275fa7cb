# Two commands work on a fresh clone: `make report` and `make test`.
# Each creates .venv when missing and installs the pinned versions into it with uv (from the
# registry, installed into the venv by the system pip): a fresh install takes ~15 s, pip's ~60 s.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
UV     := $(BIN)/uv pip install -q --python $(BIN)/python -c constraints.txt
RUN_STAMP := $(VENV)/.installed-run
STAMP  := $(VENV)/.installed
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Python may cache compiled modules in the venv and the checkout (__pycache__ is ignored by git):
# without it every kernel, CLI and test subprocess compiles pandas, scipy and statsmodels again.
unexport PYTHONDONTWRITEBYTECODE
# Keep tool caches inside the build, never in $HOME or the shared temp dir.
export UV_CACHE_DIR := $(CURDIR)/.cache/uv
export MPLCONFIGDIR := $(CURDIR)/.cache/matplotlib
export IPYTHONDIR := $(CURDIR)/.cache/ipython
export JUPYTER_RUNTIME_DIR := $(CURDIR)/.cache/jupyter-runtime

.PHONY: test check report case-study lint bench sample lock clean system-packages wheel-check

$(BIN)/uv:
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install -q -c constraints.txt uv

# What the report needs (the package and its dependencies, pinned).
$(RUN_STAMP): pyproject.toml constraints.txt | $(BIN)/uv
	$(UV) -e .
	touch $(RUN_STAMP)

# ... and the test tools and oracles.
$(STAMP): $(RUN_STAMP)
	$(UV) -e '.[dev]'
	# irrCAC pins scipy==1.12 and pandas<3 but runs on current versions: install it alone.
	$(UV) --no-deps irrCAC==0.4.4
	touch $(STAMP)

# Debian packages the whole suite needs, each installed only when missing and named as it is:
# chromium for the report's browser test (never `playwright install`), TeX Live (pdflatex,
# booktabs) for the paper-export compile test.
system-packages:
	@command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || echo "make test: installing Debian's chromium (browser test)"
	@scripts/install-chromium.sh || echo "chromium not installed: the browser test skips locally (and fails under CI)"
	@command -v pdflatex >/dev/null || echo "make test: installing Debian's texlive-latex-base and texlive-latex-recommended (LaTeX compile test)"
	@scripts/install-texlive.sh || echo "TeX Live not installed: the LaTeX compile test skips locally (and fails under CI)"

# The tests run on both cores (pytest-xdist), a file's tests together in one worker so that a
# module's fixtures (a rendered report, a computed sample) are made once; JOBS=0 runs them in this process.
JOBS ?= 2
PYTEST := $(BIN)/python -m pytest -n $(JOBS) --dist loadfile

test: $(STAMP) system-packages
	$(BIN)/ruff check .
	$(PYTEST)

# The fast loop for every edit: ruff, then the unit tests (not `slow`: see the README).
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) -m "not slow"

report: $(RUN_STAMP)
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
	$(BIN)/evalstats report ../shared/data/arena -o reports/arena

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

# Regenerate the committed simulated sample (deterministic for a given seed).
sample: $(STAMP)
	$(BIN)/evalstats simulate data/sample --seed 20260518 --orders both --position-bias 0.2 --judge-noise 0.25
	$(BIN)/evalstats simulate data/karm --arms none,v1,v2 --reference none --strengths 0,0.3,0.8 --seed 20261203

# Refresh the pinned versions after changing dependencies.
lock: $(STAMP)
	$(BIN)/uv pip freeze --python $(BIN)/python --exclude-editable | grep -v -i '^irrcac==' > constraints.txt

clean:
	rm -rf $(VENV) .cache .pytest_cache .ruff_cache
