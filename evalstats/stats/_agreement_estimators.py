"""From checked agreement input to a result: the Wald interval and test every coefficient
shares, and one builder per result class.

The builders take what :mod:`evalstats.stats._agreement_input` produced (a k x k table, a
units x categories count matrix, or the raters' label columns), call the numeric cores that
a row of :data:`evalstats.stats._agreement_table.COEFFICIENTS` names, and fill the result
class it names.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from evalstats.stats import _agreement_input as _inp
from evalstats.stats import _multirater
from evalstats.stats._agreement_results import (
    INTERVAL_METHODS,
    AgreementResult,
    CohenKappaResult,
    FleissKappaResult,
    KrippendorffAlphaResult,
)
from evalstats.stats._agreement_table import Coefficient
from evalstats.stats._kappa import weight_matrix

Weights = Literal["linear", "quadratic"] | np.ndarray | None

UNDEFINED = "undefined: chance agreement is 1 (a single category was used)"
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def check_method(method: str) -> str:
    """An interval method of :data:`INTERVAL_METHODS`, else a ValueError naming them."""
    if method not in INTERVAL_METHODS:
        raise ValueError(
            f"method must be 'wald_z' (normal quantile) or 'wald_t' (t with n-1 df); got {method!r}"
        )
    return method


def check_level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}; got {level!r}")
    return level


def weights_name(weights: Weights) -> str | None:
    if weights is None or isinstance(weights, str):
        return weights
    return "custom"


def wald(est: float, se: float, n: int, confidence: float, method: str) -> tuple[float, float]:
    """Wald interval; the upper end is truncated at 1 (no coefficient here exceeds it)."""
    if method == "wald_t":
        q = stats.t.ppf(0.5 + confidence / 2.0, n - 1) if n > 1 else np.nan
    else:
        q = stats.norm.ppf(0.5 + confidence / 2.0)
    hi = float(est + q * se)
    return float(est - q * se), hi if math.isnan(hi) else min(1.0, hi)


def wald_test(est: float, se: float, n: int, method: str) -> tuple[float, float]:
    """Two-sided Wald test of coefficient = 0 (t(n-1) with ``"wald_t"``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = float(np.divide(est, se))
    if math.isnan(z):
        return z, float("nan")
    if method == "wald_t" and n > 1:
        return z, float(2.0 * stats.t.sf(abs(z), n - 1))
    return z, float(2.0 * stats.norm.sf(abs(z)))


# --------------------------------------------------------------------------- two raters


def table_result(
    spec: Coefficient,
    table: np.ndarray,
    weights: Weights,
    categories: Sequence[Any],
    confidence: float,
    method: str,
    n_dropped: int = 0,
) -> AgreementResult | CohenKappaResult:
    """``spec`` on a checked k x k table: a CohenKappaResult or an AgreementResult."""
    if spec.table is None:  # pragma: no cover - internal misuse
        raise ValueError(f"{spec.statistic} has no table form")
    k = table.shape[0]
    s = spec.table(table, weight_matrix(weights, k))
    est, se = float(s.estimate), float(s.se)
    n = int(round(float(s.n)))
    lo, hi = wald(est, se, n, confidence, method)
    name = "kappa" if spec.result is CohenKappaResult else spec.statistic
    common = dict(
        estimate=est,
        se=se,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=float(s.observed),
        expected_agreement=float(s.expected),
        n=n,
        k=k,
        weights=weights_name(weights),
        categories=tuple(categories),
        confidence=confidence,
        method=method,
        n_dropped=int(n_dropped),
        note=None if not math.isnan(est) else f"{name} {UNDEFINED}",
    )
    if spec.test == "h0":
        se0 = float(s.se0)
        z, p = wald_test(est, se0, n, "wald_z")  # the H0 test is a normal test, as in SAS
        return CohenKappaResult(se0=se0, z=z, p_value=p, **common)
    z, p = wald_test(est, se, n, method)
    return AgreementResult(coefficient=spec.statistic, z=z, p_value=p, n_raters=2, **common)


# --------------------------------------------------------------------------- many raters


def counts_result(
    spec: Coefficient,
    columns: list[Any],
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    method: str,
) -> AgreementResult:
    """A Gwet-family coefficient of three or more raters' label columns."""
    codes, cats = _inp.encode(columns, _inp.check_categories(categories))
    counts = _inp.counts_from_codes(codes, len(cats))
    if not np.any(counts.sum(axis=1) >= 2):
        raise ValueError("no unit has ratings from two or more raters")
    est = spec.counts(counts, weight_matrix(weights, len(cats)))  # type: ignore[misc]
    lo, hi = wald(est.estimate, est.se, est.n, confidence, method)
    z, p = wald_test(est.estimate, est.se, est.n, method)
    return AgreementResult(
        coefficient=spec.statistic,
        estimate=est.estimate,
        se=est.se,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=est.observed,
        expected_agreement=est.expected,
        n=est.n,
        k=len(cats),
        n_raters=len(columns),
        weights=weights_name(weights),
        categories=tuple(cats),
        confidence=confidence,
        method=method,
        n_dropped=0,
        note=None if not math.isnan(est.estimate) else f"{spec.statistic} {UNDEFINED}",
    )


def fleiss_result(
    spec: Coefficient, counts: np.ndarray, names: Sequence[Any], confidence: float, method: str
) -> FleissKappaResult:
    """Fleiss' kappa of a checked subjects x categories count matrix."""
    rated = counts.sum(axis=1)
    if not np.any(rated >= 2):
        raise ValueError("Fleiss' kappa needs at least one subject with two or more ratings")
    c = counts[rated > 0]
    q = c.shape[1]
    est = spec.counts(c, np.eye(q))  # type: ignore[misc]
    lo, hi = wald(est.estimate, est.se, est.n, confidence, method)
    m = c.sum(axis=1)
    notes = []
    if np.all(m == m[0]):
        h0 = _multirater.fleiss_h0(c)
        se0 = h0.se0
        cat_kappa, cat_se0 = h0.category_kappa, h0.category_se0
        n_raters: int | None = int(m[0])
    else:
        se0 = float("nan")
        cat_kappa = cat_se0 = np.full(q, np.nan)
        n_raters = None
        notes.append("subjects have different numbers of raters: H0 SE and category kappas nan")
    z, p = wald_test(est.estimate, se0, est.n, "wald_z")
    with np.errstate(divide="ignore", invalid="ignore"):
        cat_z = cat_kappa / cat_se0
    cat_p = 2.0 * stats.norm.sf(np.abs(cat_z))
    if math.isnan(est.estimate):
        notes.append(f"kappa {UNDEFINED}")
    return FleissKappaResult(
        estimate=est.estimate,
        se0=se0,
        z=z,
        p_value=p,
        se=est.se,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=est.observed,
        expected_agreement=est.expected,
        n=est.n,
        n_raters=n_raters,
        categories=tuple(names),
        category_kappa=tuple(float(x) for x in cat_kappa),
        category_se0=tuple(float(x) for x in cat_se0),
        category_z=tuple(float(x) for x in cat_z),
        category_p_value=tuple(float(x) for x in cat_p),
        confidence=confidence,
        method=method,
        note="; ".join(notes) or None,
    )


def krippendorff_result(
    spec: Coefficient, columns: list[Any], level: str, confidence: float, method: str
) -> KrippendorffAlphaResult:
    """Krippendorff's alpha of the raters' value columns (coincidence matrix, Gwet's SE)."""
    x = _numeric_matrix(columns, level)
    if x.size == 0:
        raise ValueError("ratings is empty")
    if np.isinf(x).any():
        raise ValueError("ratings must be finite (use NaN for missing)")
    if level == "ratio" and np.nanmin(x) < 0:
        raise ValueError("ratio-level alpha needs non-negative values")
    ok = ~np.isnan(x)
    values, inv = np.unique(x[ok], return_inverse=True)
    q = len(values)
    n_units = x.shape[0]
    unit_of = np.broadcast_to(np.arange(n_units)[:, None], x.shape)[ok]
    counts = np.bincount(unit_of * q + inv, minlength=n_units * q).reshape(n_units, q)
    counts = counts.astype(float)
    if not np.any(counts.sum(axis=1) >= 2):
        raise ValueError("no unit has two or more values: alpha is undefined")
    alpha, d_o, d_e, total, units, delta = spec.counts(counts, values, level)  # type: ignore[misc]
    notes = []
    if level == "ordinal":
        se = float("nan")
        notes.append("no SE for the ordinal level (its metric depends on the data)")
    elif q < 2 or delta.max() == 0:
        se = float("nan")
    else:
        se = _multirater.krippendorff_gwet_se(counts, 1.0 - delta / delta.max())
    if math.isnan(alpha):
        notes.append("alpha undefined: no variation among the pairable values")
    lo, hi = wald(alpha, se, units, confidence, method)
    z, p = wald_test(alpha, se, units, method)
    return KrippendorffAlphaResult(
        estimate=alpha,
        se=se,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        level=level,
        observed_disagreement=d_o,
        expected_disagreement=d_e,
        n_pairable_values=int(round(total)),
        n=units,
        n_raters=x.shape[1],
        values=tuple(values.tolist()),
        confidence=confidence,
        method=method,
        note="; ".join(notes) or None,
    )


def _numeric_matrix(cols: list[Any], level: str) -> np.ndarray:
    """Units x raters float matrix (NaN = missing); nominal labels may be any values."""
    try:
        return np.column_stack(
            [
                pd.to_numeric(pd.Series(c), errors="raise").to_numpy(float, na_value=np.nan)
                for c in cols
            ]
        )
    except (TypeError, ValueError) as exc:
        if level != "nominal":
            raise ValueError(
                f"{level}-level alpha needs numeric codes (NaN or None for missing)"
            ) from exc
    # Nominal alpha only compares labels for equality: any labels become category codes.
    codes, _ = _inp.encode(cols, None)
    x = np.column_stack(codes).astype(float)
    x[x < 0] = np.nan
    return x
