"""The report's fast paths give the numbers of the slow ones they replace.

* simulated rejections decided by the net win's interval (``rate_arrays(net_win_test=False)``)
  are those of ``net_win_p < level``, which the closed-form tests invert exactly;
* ``tasks_needed_curve`` is ``tasks_needed`` called once per design;
* ``rate_arrays(net_win_test=False)`` changes nothing but ``net_win_p``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from evalstats.stats.models import latent_thresholds
from evalstats.stats.power import (  # private: the simulation's pieces, against rate_arrays
    Design,
    _latent_draw,
    _simulated_rejections,
    simulated_power,
    tasks_needed,
    tasks_needed_curve,
)
from evalstats.stats.rates import WIN_RATE_METHODS, rate_arrays

CLOSED_FORM = ("cr2_wilson", "cr2_t", "cluster_wilson", "cluster_t", "iid_wilson")


def _rejections_by_p(latent, scale, net_win, p_tie, alpha, alternative, method, n_tasks):
    """The previous implementation: the p-value of every simulated evaluation."""
    p_loss = max((1.0 - p_tie - net_win) / 2.0, 0.0)
    lo, hi = latent_thresholds(p_tie, p_loss, scale)
    lat = latent[:, :n_tasks]
    wins = (lat >= hi).sum(axis=2)
    losses = (lat < lo).sum(axis=2)
    ties = lat.shape[2] - wins - losses
    n_sims = lat.shape[0]
    level = alpha if alternative == "two-sided" else 2.0 * alpha
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = rate_arrays(wins.ravel(), ties.ravel(), losses.ravel(),
                        np.repeat(np.arange(n_sims), n_tasks), n_sims, method=method,
                        confidence=1.0 - level)  # fmt: skip
    reject = r["net_win_p"] < level
    if alternative == "larger":
        reject &= r["est"][:, 3] > 0
    return reject


@pytest.mark.parametrize("method", CLOSED_FORM)
@pytest.mark.parametrize(
    ("n_tasks", "n_replicates", "icc"), [(3, 1, 0.0), (8, 3, 0.5), (15, 6, 0.3)]
)
@pytest.mark.slow  # simulation study
def test_interval_rejections_are_the_p_value_rejections(method, n_tasks, n_replicates, icc):
    gen = np.random.default_rng(7)
    latent, scale = _latent_draw(1500, n_tasks, n_replicates, icc, gen)
    decided = 0
    for net_win in (0.0, 0.15, 0.35):
        for p_tie in (0.0, 0.3):
            for alternative in ("two-sided", "larger"):
                args = (latent, scale, net_win, p_tie, 0.05, alternative, method, n_tasks)
                fast = _simulated_rejections(*args)
                slow = _rejections_by_p(*args)
                np.testing.assert_array_equal(fast, slow)
                decided += int(slow.sum())
    assert decided > 0  # some rejections, so the comparison could have failed


def test_simulated_power_rejects_at_the_nominal_level_under_the_null():
    r = simulated_power(0.0, 15, Design(6, 0.3, 0.3), n_resamples=4000, rng=1)
    assert abs(r["power"].item() - 0.05) < 4 * r["mc_se"].item() + 0.01


def test_tasks_needed_curve_is_tasks_needed_per_design():
    effects, iccs = [0.1, 0.2, 0.3], [0.0, 0.1, 0.3, 0.5]
    for alternative in ("two-sided", "larger"):
        for scale in ("latent", "outcome"):
            design = Design([1, 3], iccs, 0.3, alternative=alternative, icc_scale=scale)
            grid = tasks_needed_curve(effects, design, power=0.8)
            expected = [
                tasks_needed(
                    d, Design(m, i, 0.3, alternative=alternative, icc_scale=scale), power=0.8
                ).n_tasks
                for d in effects
                for m in (1, 3)
                for i in iccs
            ]
            assert grid["n_tasks"].tolist() == expected
            assert grid["n_tasks"].dtype.kind == "i"


def test_tasks_needed_curve_refuses_what_tasks_needed_refuses():
    with pytest.raises(ValueError, match="non-zero"):
        tasks_needed_curve([0.0, 0.1])
    with pytest.raises(ValueError, match="1 - p_tie"):
        tasks_needed_curve([0.8], Design(p_tie=0.3))
    with pytest.raises(ValueError, match="power"):
        tasks_needed_curve([0.1], power=0.01)


@pytest.mark.parametrize("method", [m for m in WIN_RATE_METHODS if m != "wild_webb"])
def test_rate_arrays_without_the_test_changes_only_net_win_p(method):
    gen = np.random.default_rng(3)
    n_groups, size = 40, 6
    gid = np.repeat(np.arange(n_groups), size)
    counts = gen.multinomial(4, [0.45, 0.3, 0.25], size=gid.size)
    kw = {"method": method, "n_resamples": 200}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = rate_arrays(*counts.T, gid, n_groups, rng=5, **kw)
        lean = rate_arrays(*counts.T, gid, n_groups, rng=5, net_win_test=False, **kw)
    for key in full:
        if key != "net_win_p":
            np.testing.assert_array_equal(np.asarray(full[key]), np.asarray(lean[key]))
    assert np.isnan(lean["net_win_p"]).all()
