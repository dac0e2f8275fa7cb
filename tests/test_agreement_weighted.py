"""Weighted agreement's design effect (issue 23 item 1): the floor at the IID ratio.

The default interval of a weighted coefficient against a plain loop over units and tasks
that builds it from its definition (the per-unit agreements, the delete-one-task
jackknife, the design effect floored at their IID variance over the binomial one, the
mid-p Blaker bound of test_agreement_bounds.py mapped with the chance agreement fixed,
joined with the atanh jackknife); and a seeded coverage check at high agreement that the
former floor of 1 fails (it over-covers) and the new one passes.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from scipy import stats
from test_agreement_cluster import high_agreement_sample

from evalstats.stats import agreement as ac
from evalstats.stats import agreement as ag
from evalstats.stats import agreement as bounds
from evalstats.stats.agreement import clustered_agreement, weight_matrix

CATS = [0, 1, 2]
IID = {"cohen_kappa": ag.cohen_kappa, "gwet_ac1": ag.gwet_ac1}


def _near_misses(seed: int, n_tasks: int = 8, far: int = 1, near: int = 3):
    """High agreement: ``near`` units off by one category, ``far`` units off by two."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 7, n_tasks)
    tasks = np.repeat(np.arange(n_tasks), sizes)
    a = rng.choice(3, len(tasks), p=[0.3, 0.3, 0.4])
    b = a.copy()
    picked = rng.choice(len(a), near + far, replace=False)
    for i in picked[:near]:
        b[i] = a[i] + 1 if a[i] < 2 else a[i] - 1
    for i in picked[near:]:
        b[i] = 2 - a[i] if a[i] != 1 else 0
    return a, b, tasks


def _loop_interval(a, b, tasks, weights, name):
    """The default interval written out unit by unit and task by task."""
    w = weight_matrix(weights, 3)
    unit = min(1.0 - w[i, j] for i in range(3) for j in range(3) if w[i, j] < 1.0)
    agree = np.array([w[x, y] for x, y in zip(a, b, strict=True)])
    n = len(agree)
    po = agree.mean()
    est = IID[name](a, b, weights=weights, categories=CATS)
    # chance agreement from the coefficient's own value: kappa = (p_o - p_e) / (1 - p_e)
    pe = (po - est.estimate) / (1.0 - est.estimate)
    ids = np.unique(tasks)
    c = len(ids)
    loo_po = np.array([agree[tasks != t].mean() for t in ids])
    var_po = (c - 1) / c * np.sum((loo_po - loo_po.mean()) ** 2)
    binom = po * (1 - po) / n
    # the IID variance of a unit's agreement over the binomial one, at least the unit's
    ratio = max(np.var(agree) / (po * (1 - po)), unit)
    raw = var_po / binom
    n_eff = n / min(max(raw, ratio), n / c)
    count = n / min(max(raw, 1.0), n / c) * (1 - po) / unit
    loo = []
    for t in ids:
        keep = tasks != t
        r = IID[name](a[keep], b[keep], weights=weights, categories=CATS)
        loo.append(np.arctanh(r.estimate * keep.sum() / (keep.sum() + 1.0)))
    loo = np.array(loo)
    z = np.arctanh(est.estimate * n / (n + 1.0))
    se_z = np.sqrt((c - 1) / c * np.sum((loo - loo.mean()) ** 2))
    q = stats.t.ppf(0.975, c - 1)
    lo, hi = np.tanh(z - q * se_z), np.tanh(z + q * se_z)
    if count < ac.EXACT_BELOW:
        blo, bhi = bounds.proportion_bounds(po * n_eff, n_eff, 0.05, "mid_p_blaker")
        lo = min(lo, max(-1.0, (float(blo) - pe) / (1 - pe)))
        hi = max(hi, min(1.0, (float(bhi) - pe) / (1 - pe)))
    return lo, hi, n_eff, count < ac.EXACT_BELOW


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
@pytest.mark.parametrize("name", ["cohen_kappa", "gwet_ac1"])
@pytest.mark.parametrize("case", [(5, 6, 0, 3), (4, 6, 1, 2), (7, 8, 1, 3)])
def test_weighted_default_equals_a_loop(weights, name, case):
    seed, n_tasks, far, near = case
    a, b, tasks = _near_misses(seed, n_tasks, far, near)
    got = clustered_agreement(a, b, cluster=tasks, coefficient=name, weights=weights)
    lo, hi, n_eff, joined = _loop_interval(a, b, tasks, weights, name)
    assert joined and bool(got.diagnostics["exact_joined"][0])
    assert got.diagnostics["n_effective"][0] == pytest.approx(n_eff, rel=1e-10)
    assert got["ci_low"][0] == pytest.approx(lo, abs=1e-9)
    assert got["ci_high"][0] == pytest.approx(hi, abs=1e-9)
    # The floor binds (more effective units than units) and moves the interval: the test
    # would fail on the former floor of 1.
    assert n_eff > len(a)
    cs = ac.table_cluster_stats(tasks, a, b, 3, len(np.unique(tasks)))
    kind = {"cohen_kappa": "cohen", "gwet_ac1": "gwet"}[name]
    w = weight_matrix(weights, 3)
    former = ac.cluster_intervals(cs, partial(ac.table_parts, w=w, kind=kind),
                                  methods=("atanh_jackknife_midp_blaker",),
                                  unit_disagreement=1.0 - np.max(w - np.eye(3)))  # fmt: skip
    assert former.intervals["atanh_jackknife_midp_blaker"][0] < lo - 1e-3


def test_iid_ratio_is_the_variance_of_the_unit_agreements():
    a, b, tasks = _near_misses(4, far=2, near=5)
    for weights in ("linear", "quadratic"):
        w = weight_matrix(weights, 3)
        agree = np.array([w[x, y] for x, y in zip(a, b, strict=True)])
        table = ac.table_cluster_stats(np.zeros(len(a), dtype=int), a, b, 3, 1)[0]
        po = ac.table_parts(table, w, "pa")[0]
        got = ac.iid_ratio(po, ac.table_squared(w)(table)[0])
        assert got == pytest.approx(np.var(agree) / (agree.mean() * (1 - agree.mean())))
        assert 0 < got < 1
    assert ac.table_squared(np.eye(3)) is None  # unweighted: the floor stays exactly 1
    assert ac.iid_ratio(np.array(1.0), np.array(1.0)) == 1.0  # perfect agreement


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_coverage_at_high_agreement_on_ten_tasks(weights):
    """Judges at (unweighted) kappa ~0.92 on 10 tasks x 3 (the battery's design): the floor of
    1 covered 0.99-1.00 there (a near miss counted as a whole binomial disagreement), the IID
    floor near nominal."""
    table, cs = high_agreement_sample(23)
    w = weight_matrix(weights, 3)
    parts = partial(ac.table_parts, w=w, kind="cohen")
    truth = float(ac.coefficient(parts, table))
    cover = {}
    for label, squared in (("iid", ac.table_squared(w)), ("floor1", None)):
        res = ac.cluster_intervals(cs, parts, methods=("atanh_jackknife_midp_blaker",),
                                   unit_disagreement=1.0 - np.max(w - np.eye(3)),
                                   squared=squared)  # fmt: skip
        lo, hi = res.intervals["atanh_jackknife_midp_blaker"]
        cover[label] = float(np.mean((lo <= truth) & (truth <= hi)))
    assert 0.92 <= cover["iid"] <= 0.975, cover  # MC SE ~0.011
    assert cover["floor1"] > 0.98 and cover["floor1"] > cover["iid"] + 0.02, cover


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_units_that_all_agree_in_part_do_not_give_a_zero_width_interval(weights):
    """Every unit a near miss and every task alike: the per-unit agreement has no variance,
    the jackknife no spread; the floor stops at the unit disagreement (n / unit units)."""
    a = np.tile([0, 1, 1, 2], 5)
    b = np.tile([1, 0, 2, 1], 5)
    tasks = np.repeat(np.arange(5), 4)
    names = ["cohen_kappa", "gwet_ac1", "pabak", "percent_agreement"]
    res = clustered_agreement(a, b, cluster=tasks, coefficient=names, weights=weights)
    unit = 0.5 if weights == "linear" else 0.25
    assert np.allclose(res["se"], 0.0, atol=1e-12)
    assert res.diagnostics["exact_joined"].all()
    assert np.allclose(res.diagnostics["n_effective"], len(a) / unit)
    assert (res["ci_high"] - res["ci_low"] > 0.1).all(), res
