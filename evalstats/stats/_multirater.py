"""Pure numpy cores for agreement among many raters.

Inputs are a units x categories ``counts`` matrix (how many raters put unit i in category
k; units may have different numbers of raters) and a ``(q, q)`` agreement-weight matrix.
Non-null variances follow Gwet (2014) (irrCAC's ``raw.CAC``, finite-population factor 1);
Fleiss' H0 variance follows Fleiss, Nee & Landis (1979).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from evalstats.stats._kappa import _div, _sqrt_var


class MultiCoefficient(NamedTuple):
    estimate: float
    se: float
    observed: float
    expected: float
    n: int  # units entering the variance


class FleissH0(NamedTuple):
    se0: float
    category_kappa: np.ndarray
    category_se0: np.ndarray


def _unit_agreement(counts: np.ndarray, w: np.ndarray):
    """Per-unit weighted pairwise agreement terms shared by Gwet's multi-rater formulas."""
    r = counts.sum(axis=1)
    sum_q = np.sum(counts * (counts @ w.T - 1.0), axis=1)
    two = r >= 2
    n2 = int(np.count_nonzero(two))
    den = np.where(two, r * (r - 1.0), 1.0)
    pa_i = np.where(two, sum_q / den, 0.0)
    pa = pa_i[two].sum() / n2 if n2 else np.nan
    return r, two, n2, pa_i, pa


def _gwet_family(counts: np.ndarray, w: np.ndarray, kind: str) -> MultiCoefficient:
    """Fleiss' kappa ("fleiss"), Gwet's AC1/AC2 ("gwet"), Brennan-Prediger ("bp") or the
    (weighted) percent agreement ("pa", chance agreement 0)."""
    counts = counts[counts.sum(axis=1) > 0]
    n, q = counts.shape
    r, two, n2, pa_i, pa = _unit_agreement(counts, w)
    pi = np.mean(counts / r[:, None], axis=0)
    tw = w.sum()
    if kind == "fleiss":
        pe = float(pi @ w @ pi)
        pe_i = counts @ ((w @ pi + w.T @ pi) / 2.0) / r
    elif kind == "gwet":
        scale = tw / (q * (q - 1)) if q > 1 else np.nan
        pe = float(scale * np.sum(pi * (1.0 - pi)))
        pe_i = scale * (counts @ (1.0 - pi)) / r
    elif kind == "bp":
        pe = tw / q**2
        pe_i = None
    elif kind == "pa":
        pe = 0.0
        pe_i = None
    else:  # pragma: no cover - internal misuse
        raise ValueError(kind)
    coef = _div(pa - pe, 1.0 - pe)
    coef_i = (n / n2) * (pa_i - pe * two) / (1.0 - pe) if n2 else np.full(n, np.nan)
    if pe_i is not None:
        coef_i = coef_i - 2.0 * (1.0 - coef) * (pe_i - pe) / (1.0 - pe)
    var = _div(np.sum((coef_i - coef) ** 2), n * (n - 1.0))
    return MultiCoefficient(float(coef), float(_sqrt_var(var)), float(pa), float(pe), n)


def fleiss_h0(counts: np.ndarray) -> FleissH0:
    """H0 standard errors of Fleiss' kappa and the category kappas (constant m raters)."""
    n, _ = counts.shape
    m = counts[0].sum()
    p = counts.sum(axis=0) / (n * m)
    pq = p * (1.0 - p)
    spq = pq.sum()
    var0 = 2.0 / (n * m * (m - 1.0)) * _div(spq**2 - np.sum(pq * (1.0 - 2.0 * p)), spq**2)
    cat_kappa = 1.0 - _div(np.sum(counts * (m - counts), axis=0), n * m * (m - 1.0) * pq)
    cat_se0 = np.full(p.shape, np.sqrt(2.0 / (n * m * (m - 1.0))))
    return FleissH0(float(_sqrt_var(var0)), cat_kappa, cat_se0)


def coincidence(counts: np.ndarray) -> np.ndarray:
    """Krippendorff's coincidence matrix from units x values counts (pairable units only)."""
    m = counts.sum(axis=1)
    keep = m >= 2
    c = counts[keep]
    scaled = c / (m[keep] - 1.0)[:, None]
    return scaled.T @ c - np.diag(scaled.sum(axis=0))


def krippendorff_delta(values: np.ndarray, level: str, n_c: np.ndarray) -> np.ndarray:
    """Squared distance metric delta^2 between the sorted distinct values."""
    q = len(values)
    if level == "nominal":
        return 1.0 - np.eye(q)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if level == "ratio":
        s = values[:, None] + values[None, :]
        d = values[:, None] - values[None, :]
        return np.where(s == 0, 0.0, _div(d, np.where(s == 0, 1.0, s))) ** 2
    if level == "ordinal":
        # Ranks only matter through the order; the metric is the count of pairable values
        # lying between c and k, with half of each end (Krippendorff 2011, sec. E).
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        i = np.arange(q)
        lo = np.minimum(i[:, None], i[None, :])
        hi = np.maximum(i[:, None], i[None, :])
        between = cum[hi + 1] - cum[lo]
        return (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    raise ValueError(level)  # pragma: no cover - validated upstream


def krippendorff_from_counts(
    counts: np.ndarray, values: np.ndarray, level: str
) -> tuple[float, float, float, float, int, np.ndarray]:
    """Alpha from the coincidence matrix; returns (alpha, do, de, n_pairable, units, delta)."""
    o = coincidence(counts)
    n_c = o.sum(axis=1)
    total = n_c.sum()
    delta = krippendorff_delta(values.astype(float), level, n_c)
    d_o = float(np.sum(o * delta))
    d_e = float(n_c @ delta @ n_c) / (total - 1.0) if total > 1 else np.nan
    alpha = 1.0 - _div(d_o, d_e)
    units = int(np.count_nonzero(counts.sum(axis=1) >= 2))
    return (
        float(alpha),
        d_o / total if total else np.nan,
        d_e / total if total else np.nan,
        float(total),
        units,
        delta,
    )


def krippendorff_gwet_se(counts: np.ndarray, w: np.ndarray) -> float:
    """Gwet's linearised SE of Krippendorff's alpha (irrCAC ``raw.CAC.krippendorff``)."""
    r_all = counts.sum(axis=1)
    c = counts[r_all >= 2]
    n = c.shape[0]
    if n < 2:
        return float("nan")
    r = c.sum(axis=1)
    rbar = r.mean()
    eps = 1.0 / r.sum()
    sum_q = np.sum(c * (c @ w.T - 1.0), axis=1)
    pa_prime = np.sum(sum_q / (rbar * (r - 1.0))) / n
    pa = (1.0 - eps) * pa_prime + eps
    pi = np.mean(c / rbar, axis=0)
    pe = float(pi @ w @ pi)
    alpha_prime = (pa_prime - pe) / (1.0 - pe)
    pa_i = sum_q / (rbar * (r - 1.0)) - pa * (r - rbar) / rbar
    k_i = (pa_i - pe) / (1.0 - pe)
    pe_i = c @ ((w @ pi + w.T @ pi) / 2.0) / rbar - pe * (r - rbar) / rbar
    k_ix = k_i - 2.0 * (1.0 - alpha_prime) * (pe_i - pe) / (1.0 - pe)
    var = np.sum((k_ix - alpha_prime) ** 2) / (n * (n - 1.0))
    return float(_sqrt_var(var))
