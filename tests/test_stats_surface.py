"""The statistics surface resolves its names on first use (``evalstats/stats/__init__``)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import evalstats.stats as st


def test_every_public_name_resolves_from_the_module_the_table_names():
    assert set(st._LAZY) == set(st.__all__)
    for name, module in st._LAZY.items():
        source = importlib.import_module(module, "evalstats.stats")
        assert getattr(st, name) is getattr(source, name), name
    assert set(st.__all__) <= set(dir(st))


def test_a_public_name_that_is_also_a_submodule_stays_the_function():
    importlib.import_module("evalstats.stats.summarize")  # binds the submodule, then ...

    assert callable(st.summarize) and st.summarize.__module__ == "evalstats.stats.summarize"
    from evalstats.stats import summarize

    assert summarize is st.summarize


def test_the_report_kernels_formatting_import_loads_no_scipy():
    # What the report's notebooks display with (the headline card's words): the kernel
    # never imports scipy.stats or the estimators for it.
    code = (
        "import sys, evalstats.report._sentences, evalstats.report._display; "
        "print(sorted(m for m in ('scipy', 'scipy.stats', 'evalstats.stats.winrates') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
