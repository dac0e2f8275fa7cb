"""evalstats.stats._dist against scipy.stats (the oracle): bit-for-bit, edge cases included.

The statistics call these instead of scipy.stats' distribution objects (import time and
per-call cost); the published numbers must not move by a single ulp because of it.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from evalstats.stats import _dist

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"

_RNG = np.random.default_rng(20261201)
_Q = np.concatenate(
    [
        [0.0, 1.0, 0.5, 1e-300, 5e-324, 1 - 1e-16, 0.975, 0.025, np.nan, -0.1, 1.1],
        _RNG.uniform(size=40),
    ]
)
_DF = np.concatenate(
    [
        [0.5, 1.0, 2.3, 30.0, 1e6, np.inf, 1e-300, 0.0, -1.0, -np.inf, np.nan],
        _RNG.uniform(0.1, 300, 15),
    ]
)
_X = np.concatenate(
    [[-np.inf, -40.0, -2.0, -0.0, 0.0, 1.96, 40.0, np.inf, 1e-300, np.nan], _RNG.normal(0, 4, 40)]
)


def _identical(ours, theirs) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    bad = np.flatnonzero(~same.ravel())
    assert not bad.size, [(ours.ravel()[i], theirs.ravel()[i]) for i in bad[:5]]
    # +0.0 and -0.0 compare equal; the sign is part of "bit for bit".
    assert np.array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize(
    ("ours", "theirs", "grid"),
    [
        (_dist.t_ppf, stats.t.ppf, "q"),
        (_dist.t_isf, stats.t.isf, "q"),
        (_dist.t_cdf, stats.t.cdf, "x"),
        (_dist.t_sf, stats.t.sf, "x"),
    ],
    ids=["t.ppf", "t.isf", "t.cdf", "t.sf"],
)
def test_student_t_equals_scipy_stats_bit_for_bit(ours, theirs, grid):
    first, df = np.meshgrid(_Q if grid == "q" else _X, _DF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _identical(ours(first, df), theirs(first, df))
        _identical(ours(first[3, 5], df[3, 5]), theirs(first[3, 5], df[3, 5]))  # scalars
        _identical(ours(0.975, [1.0, 7.5]), theirs(0.975, [1.0, 7.5]))  # broadcasting


@pytest.mark.parametrize(
    ("ours", "theirs", "grid"),
    [
        (_dist.norm_ppf, stats.norm.ppf, _Q),
        (_dist.norm_isf, stats.norm.isf, _Q),
        (_dist.norm_cdf, stats.norm.cdf, _X),
        (_dist.norm_sf, stats.norm.sf, _X),
    ],
    ids=["norm.ppf", "norm.isf", "norm.cdf", "norm.sf"],
)
def test_normal_equals_scipy_stats_bit_for_bit(ours, theirs, grid):
    _identical(ours(grid), theirs(grid))
    _identical(ours(grid[7]), theirs(grid[7]))
    assert type(ours(0.3)) is type(theirs(0.3))


def test_binomial_cdf_equals_scipy_stats_bit_for_bit():
    n = _RNG.integers(0, 600, 4000).astype(np.float64)
    k = np.floor(_RNG.uniform(-0.05, 1.05, n.size) * n)
    p = np.where(_RNG.uniform(size=n.size) < 0.7, 0.5, _RNG.uniform(-0.05, 1.05, n.size))
    k[:6] = [np.nan, 2.5, -0.5, -3.0, 0.0, 1e9]
    n[6:11] = [0.0, 2.5, -1.0, np.nan, np.inf]
    _identical(_dist.binom_cdf(k, n, p), stats.binom.cdf(k, n, p))
    assert _dist.binom_cdf(3, 10, 0.5) == stats.binom.cdf(3, 10, 0.5)
    # What the sign test calls: min(wins, losses) of n decisive verdicts at p = 1/2.
    w = np.arange(0, 301, dtype=np.float64)
    _identical(
        _dist.binom_cdf(np.minimum(w, 300 - w), 300.0, 0.5),
        stats.binom.cdf(np.minimum(w, 300 - w), 300, 0.5),
    )


def test_the_reports_data_and_first_numbers_import_no_scipy_stats():
    """Loading an evaluation and computing its page's first part (what the kernel waits
    for) imports scipy.special only: scipy.stats is ~0.4 s more (its first user is the
    audit section, later in the page)."""
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    code = (
        "import sys\n"
        "from evalstats.report._kinds import prepare\n"
        "from evalstats.report._render import _spec\n"
        f"_spec(__import__('pathlib').Path({str(SAMPLE)!r}), None, {{}})\n"
        f"p = prepare('evaluation', {str(SAMPLE)!r}, n_resamples=50)\n"
        "class Done(Exception): pass\n"
        "def stop(part): raise Done\n"
        "try: p.compute(['report'], on_first_part=stop)\n"
        "except Done: pass\n"
        "else: raise SystemExit('no first part')\n"
        "assert 'scipy.special' in sys.modules\n"
        "assert 'scipy.stats' not in sys.modules, 'scipy.stats imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300, cwd=REPO)
