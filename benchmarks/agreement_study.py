"""Rejected variants of the task-clustered agreement intervals, kept for the coverage studies.

The package keeps the default construction (:func:`evalstats.stats.agreement.cluster_intervals`);
``coverage_agreement.py`` and ``coverage_ppi_rare.py`` still print these candidates: other
thresholds of effective disagreeing units, other bounds of the observed agreement (Wilson's
too) and other floors of its design effect.
"""

from __future__ import annotations

import numpy as np
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalstats.stats import agreement as ac


def proportion_bounds(x, n, alpha: float, bound: str):
    """The package's binomial bounds, and Wilson's score interval (not clamped at 0 / 1)."""
    if bound != "wilson":
        return ac.proportion_bounds(x, n, alpha, bound)
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return proportion_confint(x, n, alpha=alpha, method="wilson")


def joined_interval(
    cs,
    parts,
    *,
    exact_below: float,
    bound: str,
    deff_floor: float,
    unit_disagreement: float = 1.0,
    squared=None,
    confidence: float = 0.95,
):
    """``cluster_intervals``' joined interval (atanh jackknife and a bound of the observed
    agreement where few units disagree) with the threshold ``exact_below``, the ``bound`` and
    the design effect's floor ``deff_floor`` (times the IID ratio with ``squared``) given."""
    cs = np.asarray(cs, dtype=float)
    c = cs.shape[-2]
    alpha = 1.0 - confidence
    total = cs.sum(axis=-2)
    loo = total[..., None, :] - cs
    po, pe, n = parts(total)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)

    def z_of(s):
        p_o, p_e, m = parts(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrunk = ac._div(p_o - p_e, 1.0 - p_e) * m / (m + 1.0)
            return np.arctanh(np.clip(shrunk, -1.0, 1.0))

    z, se_z = ac._jackknife(total, loo, z_of, c)
    _, se_po = ac._jackknife(total, loo, lambda s: parts(s)[0], c)
    binom = ac._div(po * (1.0 - po), n)
    raw = np.nan_to_num(
        np.where(binom > 0, ac._div(se_po**2, np.where(binom > 0, binom, 1.0)), 1.0), nan=1.0
    )
    cap = np.maximum(n / c, 1.0)
    ratio = 1.0
    if squared is not None:
        ratio = np.maximum(ac.iid_ratio(po, squared(total)[0]), min(unit_disagreement, 1.0))
    n_eff = n / np.clip(raw, deff_floor * ratio, cap)
    count = n / np.clip(raw, 1.0, cap) * (1.0 - po) / unit_disagreement
    few = (count < exact_below) | ~(se_z > 1e-12)
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    lo, hi = proportion_bounds(np.clip(po, 0.0, 1.0) * n_eff, n_eff, alpha, bound)
    lo = np.fmin(at[0], np.clip(ac._div(lo - pe, 1.0 - pe), -1.0, 1.0))
    hi = np.fmax(at[1], np.clip(ac._div(hi - pe, 1.0 - pe), -1.0, 1.0))
    return np.where(few, lo, at[0]), np.where(few, hi, at[1])
