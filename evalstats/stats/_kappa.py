"""Pure numpy cores for two-rater agreement coefficients on k x k contingency tables.

Every core takes ``tables`` of shape ``(..., k, k)`` (counts, rows = rater 1, columns =
rater 2) and a resolved ``(k, k)`` agreement-weight matrix, and returns arrays over the
leading axes, so a cluster bootstrap can sum per-cluster tables and evaluate thousands of
resamples in one call.

Weights are *agreement* weights (ones on the diagonal, 0 <= w <= 1 off it), the SAS /
statsmodels / Gwet convention. Variance formulas:

* Cohen's kappa: Fleiss, Cohen & Everitt (1969) non-null ASE and the H0 ASE, as SAS PROC
  FREQ (AGREE) prints them.
* Scott's pi, Gwet's AC1/AC2, Brennan-Prediger, Krippendorff's alpha and percent agreement:
  Gwet (2014), Handbook of Inter-Rater Reliability, two-rater linearisation formulas with a
  finite-population factor of 1 (as irrCAC's ``table.CAC``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

WEIGHT_NAMES = ("linear", "quadratic")


def weight_matrix(weights: str | np.ndarray | None, k: int) -> np.ndarray:
    """Resolve ``weights`` into a ``(k, k)`` float agreement-weight matrix.

    ``None`` -> identity; ``"linear"`` -> 1 - |i-j|/(k-1); ``"quadratic"`` ->
    1 - (i-j)^2/(k-1)^2; an array is validated (square k x k, symmetric, ones on the
    diagonal, finite) and returned as float.
    """
    if weights is None:
        return np.eye(k)
    if isinstance(weights, str):
        if weights not in WEIGHT_NAMES:
            raise ValueError(
                f"weights must be None, 'linear', 'quadratic' or a k x k matrix; got {weights!r}"
            )
        if k < 2:
            # One category: no distances to scale; every pair agrees fully.
            return np.ones((k, k))
        i = np.arange(k)
        d = np.abs(i[:, None] - i[None, :]) / (k - 1)
        return 1.0 - d if weights == "linear" else 1.0 - d**2
    w = np.asarray(weights, dtype=float)
    if w.shape != (k, k):
        raise ValueError(
            f"weights matrix must have shape ({k}, {k}) to match the {k} categories; got {w.shape}"
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("weights matrix must be finite")
    if not np.allclose(w, w.T):
        raise ValueError("weights matrix must be symmetric (agreement weights)")
    if not np.allclose(np.diag(w), 1.0):
        raise ValueError(
            "weights matrix must hold agreement weights with ones on the diagonal "
            "(w_ij = 1 means full credit for rating i vs j)"
        )
    return w


class TableCoefficient(NamedTuple):
    """Arrays over the leading axes of the input tables."""

    estimate: np.ndarray
    se: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    n: np.ndarray


class CohenStats(NamedTuple):
    """Arrays over the leading axes; ``se0`` is the SE under no agreement beyond chance."""

    kappa: np.ndarray
    se: np.ndarray
    se0: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    n: np.ndarray

    @property
    def estimate(self) -> np.ndarray:
        """Alias of ``kappa``, the name every other core gives its estimate."""
        return self.kappa


def _margins(tables: np.ndarray):
    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t / n[..., None, None]
    return p, p.sum(axis=-1), p.sum(axis=-2), n


def _sqrt_var(var: np.ndarray) -> np.ndarray:
    # Rounding can push an exactly-zero variance (perfect agreement) slightly below 0.
    return np.sqrt(np.where(var < 0, np.where(var > -1e-12, 0.0, np.nan), var))


def _div(num, den):
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _kappa_from_tables(tables: np.ndarray, weights: str | np.ndarray | None = None) -> np.ndarray:
    """Cohen's (weighted) kappa of each ``(k, k)`` table over the leading axes.

    ``nan`` where chance agreement is 1 (a single category used by both raters) or a
    table is empty.
    """
    tables = np.asarray(tables, dtype=float)
    w = weight_matrix(weights, tables.shape[-1])
    p, r, c, _ = _margins(tables)
    po = np.einsum("...ij,ij->...", p, w)
    pe = np.einsum("...i,ij,...j->...", r, w, c)
    return _div(po - pe, 1.0 - pe)


def cohen_stats(tables: np.ndarray, w: np.ndarray) -> CohenStats:
    """Kappa with the Fleiss-Cohen-Everitt non-null SE and the SE under H0."""
    p, r, c, n = _margins(tables)
    po = np.einsum("...ij,ij->...", p, w)
    pe = np.einsum("...i,ij,...j->...", r, w, c)
    kappa = _div(po - pe, 1.0 - pe)
    wr = np.einsum("ij,...j->...i", w, c)  # weighted column margin seen from row i
    wc = np.einsum("...i,ij->...j", r, w)  # weighted row margin seen from column j
    s = wr[..., :, None] + wc[..., None, :]
    km = (1.0 - kappa)[..., None, None]
    a = np.sum(p * (w - s * km) ** 2, axis=(-2, -1))
    den = n * (1.0 - pe) ** 2
    var = _div(a - (kappa - pe * (1.0 - kappa)) ** 2, den)
    a0 = np.sum(r[..., :, None] * c[..., None, :] * (w - s) ** 2, axis=(-2, -1))
    var0 = _div(a0 - pe**2, den)
    return CohenStats(kappa, _sqrt_var(var), _sqrt_var(var0), po, pe, n)


def _gwet_linearised(p, w, po, pe, coef, pbk, n):
    """Gwet's two-rater variance for coefficients whose chance term is pi' W pi."""
    km = (1.0 - coef)[..., None, None]
    term = w - km * (pbk[..., :, None] + pbk[..., None, :])
    s1 = np.sum(p * term**2, axis=(-2, -1))
    return _sqrt_var(_div(s1 - (po - 2.0 * (1.0 - coef) * pe) ** 2, n * (1.0 - pe) ** 2))


def scott_stats(tables: np.ndarray, w: np.ndarray) -> TableCoefficient:
    """Scott's pi (two raters) with Gwet's SE."""
    p, r, c, n = _margins(tables)
    pi = (r + c) / 2.0
    po = np.einsum("...ij,ij->...", p, w)
    pe = np.einsum("...i,ij,...j->...", pi, w, pi)
    coef = _div(po - pe, 1.0 - pe)
    pbk = np.einsum("ij,...j->...i", w, pi)
    return TableCoefficient(coef, _gwet_linearised(p, w, po, pe, coef, pbk, n), po, pe, n)


def krippendorff_table_stats(tables: np.ndarray, w: np.ndarray) -> TableCoefficient:
    """Krippendorff's alpha for two raters without missing data, with Gwet's SE.

    Alpha corrects the observed agreement for the finite sample of 2n pairable values:
    pa' = (1 - 1/(2n)) pa + 1/(2n). Gwet linearises the uncorrected coefficient, whose SE
    equals Scott's pi's.
    """
    p, r, c, n = _margins(tables)
    pi = (r + c) / 2.0
    po = np.einsum("...ij,ij->...", p, w)
    pe = np.einsum("...i,ij,...j->...", pi, w, pi)
    eps = _div(1.0, 2.0 * n)
    pa = (1.0 - eps) * po + eps
    alpha = _div(pa - pe, 1.0 - pe)
    uncorrected = _div(po - pe, 1.0 - pe)
    pbk = np.einsum("ij,...j->...i", w, pi)
    se = _gwet_linearised(p, w, po, pe, uncorrected, pbk, n)
    return TableCoefficient(alpha, se, pa, pe, n)


def gwet_stats(tables: np.ndarray, w: np.ndarray) -> TableCoefficient:
    """Gwet's AC1 (identity weights) / AC2 (other weights) for two raters, Gwet's SE."""
    p, r, c, n = _margins(tables)
    q = w.shape[0]
    pi = (r + c) / 2.0
    tw = w.sum()
    scale = tw / (q * (q - 1)) if q > 1 else np.nan
    po = np.einsum("...ij,ij->...", p, w)
    pe = scale * np.sum(pi * (1.0 - pi), axis=-1)
    coef = _div(po - pe, 1.0 - pe)
    km = (1.0 - coef)[..., None, None]
    term = w - 2.0 * km * scale * (1.0 - (pi[..., :, None] + pi[..., None, :]) / 2.0)
    s1 = np.sum(p * term**2, axis=(-2, -1))
    var = _div(s1 - (po - 2.0 * (1.0 - coef) * pe) ** 2, n * (1.0 - pe) ** 2)
    return TableCoefficient(coef, _sqrt_var(var), po, pe, n)


def brennan_prediger_stats(tables: np.ndarray, w: np.ndarray) -> TableCoefficient:
    """Brennan-Prediger (= PABAK when unweighted): chance agreement sum(W)/q^2."""
    p, _, _, n = _margins(tables)
    q = w.shape[0]
    po = np.einsum("...ij,ij->...", p, w)
    pe = np.full_like(po, w.sum() / q**2)
    coef = _div(po - pe, 1.0 - pe)
    s1 = np.einsum("...ij,ij->...", p, w**2)
    var = _div(s1 - po**2, n * (1.0 - pe) ** 2)
    return TableCoefficient(coef, _sqrt_var(var), po, pe, n)


def percent_agreement_stats(tables: np.ndarray, w: np.ndarray) -> TableCoefficient:
    """(Weighted) percent agreement with Gwet's SE sqrt((sum p w^2 - pa^2) / n)."""
    p, _, _, n = _margins(tables)
    po = np.einsum("...ij,ij->...", p, w)
    s1 = np.einsum("...ij,ij->...", p, w**2)
    return TableCoefficient(po, _sqrt_var(_div(s1 - po**2, n)), po, np.zeros_like(po), n)
