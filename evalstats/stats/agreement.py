"""Agreement: between judges, between judges and people, among many raters.

Percent agreement, Cohen's (weighted) kappa, Scott's pi, Gwet's AC1/AC2, PABAK
(Brennan-Prediger), Fleiss' kappa and Krippendorff's alpha with their analytic (IID) SEs;
the same coefficients with task-clustered intervals (:func:`clustered_agreement`); the
frame-level views on a verdict frame (:func:`judge_agreement`, :func:`consensus`) and judges
against people's labels (:func:`judge_vs_gold`, :func:`labeler_agreement`). Conventions
(agreement weights, SEs, input forms) and the coverage studies: ``docs/methods.md``,
section "Agreement".
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from .._disagreement import DISAGREEMENT_TRIGGER, disagreement_counts
from .._display import ResultDisplay
from .._schema import OUTCOME_DTYPE, OUTCOMES, STATUS_DTYPE, STATUSES
from .._tidy import TIDY_COLUMNS, ResultFrame, tidy_frame
from .._validate import (
    check_columns,
    check_confidence,
    check_n_resamples,
    check_probability,
)
from ..errors import DataError, ParameterError
from ..frames import select_rubric, wide_by_judge

__all__ = [
    "CLUSTERED_COEFFICIENTS",
    "CLUSTERED_METHODS",
    "COEFFICIENTS",
    "SEED_DISAGREEMENT_TRIGGER",
    "AgreementResult",
    "CohenKappaResult",
    "FleissKappaResult",
    "GoldResult",
    "KrippendorffAlphaResult",
    "clustered_agreement",
    "cohen_kappa",
    "cohen_kappa_table",
    "consensus",
    "contingency_table",
    "fleiss_kappa",
    "gold_labels",
    "gwet_ac1",
    "judge_agreement",
    "judge_vs_gold",
    "krippendorff_alpha",
    "labeler_agreement",
    "macro_scores",
    "pabak",
    "percent_agreement",
    "ratings_to_counts",
    "scott_pi",
    "two_rater_agreement",
]


# -- input: three forms of ratings, label codes, contingency tables ---------------------------------

# Integer labels spanning at most this many values are tabulated directly with bincount.
_MAX_DIRECT_RANGE = 4096


def _as_1d(x: Any, name: str) -> np.ndarray | pd.Series:
    if isinstance(x, pd.Series | pd.Categorical | pd.Index):
        return x if isinstance(x, pd.Series) else pd.Series(x)
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    return arr


def check_pair(a: Any, b: Any) -> tuple[np.ndarray | pd.Series, np.ndarray | pd.Series]:
    """Validate two label vectors: one-dimensional, same length, not empty."""
    a = _as_1d(a, "a")
    b = _as_1d(b, "b")
    if len(a) != len(b):
        raise ValueError(f"a and b must have the same length; got {len(a)} and {len(b)}")
    if len(a) == 0:
        raise ValueError("a and b are empty: agreement needs at least one rated unit")
    return a, b


def check_categories(categories: Sequence[Any] | None) -> list[Any] | None:
    if categories is None:
        return None
    cats = list(categories)
    if len(cats) == 0:
        raise ValueError("categories must not be empty")
    if len(pd.unique(pd.Series(cats, dtype=object))) != len(cats):
        raise ValueError(f"categories must be unique; got {cats!r}")
    if any(pd.isna(c) for c in cats):
        raise ValueError("categories must not contain missing values")
    return cats


def _int_view(x: np.ndarray | pd.Series) -> np.ndarray | None:
    """Integer codes of an all-integer numeric input (no missing values), else None."""
    if isinstance(x, pd.Series):
        if not (pd.api.types.is_integer_dtype(x.dtype) and not x.hasnans):
            return None
        x = x.to_numpy()
    if x.dtype.kind in "iu" or x.dtype.kind == "b":
        return x.astype(np.int64, copy=False)
    return None


def _categorical_codes(columns: Sequence[Any]) -> tuple[list[np.ndarray], list[Any]] | None:
    """Codes of Categoricals sharing one category list (its full, ordered set)."""
    if not all(
        isinstance(c, pd.Series) and isinstance(c.dtype, pd.CategoricalDtype) for c in columns
    ):
        return None
    first = columns[0].cat.categories
    if not all(c.cat.categories.equals(first) for c in columns[1:]):
        return None
    return [c.cat.codes.to_numpy(np.int64) for c in columns], first.tolist()


def _values(x) -> np.ndarray:
    if isinstance(x, pd.Series):
        if isinstance(x.dtype, pd.CategoricalDtype):
            return x.astype(object).to_numpy()
        return x.to_numpy()
    return x


def encode(
    columns: Sequence[Any], categories: list[Any] | None
) -> tuple[list[np.ndarray], list[Any]]:
    """Integer codes (-1 = missing) for each column over a common category list."""
    if categories is None and columns:
        cat = _categorical_codes(columns)
        if cat is not None:
            return cat
    fast = _encode_ints(columns, categories)
    if fast is not None:
        return fast
    vals = [_values(c) for c in columns]
    lengths = np.cumsum([0, *(len(v) for v in vals)])
    flat = pd.Series(np.concatenate([np.asarray(v, dtype=object) for v in vals]), dtype=object)
    if flat.dtype == object:
        # Homogeneous numeric input factorises and sorts much faster as a numeric dtype.
        flat = flat.infer_objects()
    missing = flat.isna().to_numpy()
    if categories is None:
        try:
            codes, uniques = pd.factorize(flat, sort=True)
        except TypeError as exc:
            raise ValueError(
                "labels of mixed types cannot be ordered; pass categories= explicitly"
            ) from exc
        cats = uniques.tolist()
    else:
        cats = categories
        codes = pd.Index(pd.Series(cats, dtype=object).infer_objects()).get_indexer(flat)
        unknown = (codes < 0) & ~missing
        if unknown.any():
            bad = pd.unique(flat[unknown])[:5].tolist()
            raise ValueError(f"labels {bad!r} are not among categories={cats!r}")
    codes = np.asarray(codes, dtype=np.int64)
    return [codes[lengths[i] : lengths[i + 1]] for i in range(len(vals))], list(cats)


def _encode_ints(
    columns: Sequence[Any], categories: list[Any] | None
) -> tuple[list[np.ndarray], list[Any]] | None:
    """:func:`encode` of all-integer columns (and integer categories) without object arrays:
    the same codes, at numpy speed (a million verdicts' codes take milliseconds)."""
    arrays = [c if isinstance(c, pd.Series) else np.asarray(c) for c in columns]
    if any(a.dtype.kind == "b" for a in arrays):
        return None  # booleans keep their False / True categories
    if categories is None and columns and all(a.dtype.kind == "f" for a in arrays):
        return _encode_floats(arrays)
    ints = [_int_view(a) for a in arrays]
    if not columns or any(v is None for v in ints):
        return None
    if categories is not None and not all(
        isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in categories
    ):
        return None
    flat = np.concatenate(ints)  # type: ignore[arg-type]
    if categories is None:
        uniques = np.unique(flat)
        codes = np.searchsorted(uniques, flat)
        cats = uniques.tolist()
    else:
        cats = list(categories)
        codes = pd.Index(np.asarray(cats, dtype=np.int64)).get_indexer(flat)
        if (codes < 0).any():
            bad = pd.unique(flat[codes < 0])[:5].tolist()
            raise ValueError(f"labels {bad!r} are not among categories={cats!r}")
    lengths = np.cumsum([0, *(len(v) for v in ints)])  # type: ignore[arg-type]
    codes = codes.astype(np.int64)
    return [codes[lengths[i] : lengths[i + 1]] for i in range(len(ints))], cats


def _encode_floats(arrays: list[Any]) -> tuple[list[np.ndarray], list[Any]]:
    """Float columns (NaN = missing) coded over their sorted distinct values."""
    flat = np.concatenate([np.asarray(a, dtype=np.float64) for a in arrays])
    missing = np.isnan(flat)
    uniques = np.unique(flat[~missing])
    codes = np.where(missing, -1, np.searchsorted(uniques, np.where(missing, 0.0, flat)))
    lengths = np.cumsum([0, *(len(a) for a in arrays)])
    codes = codes.astype(np.int64)
    return [codes[lengths[i] : lengths[i + 1]] for i in range(len(arrays))], uniques.tolist()


_CHUNK = 1 << 18


def _bincount_pairs(ia: np.ndarray, ib: np.ndarray, lo: int, span: int) -> np.ndarray:
    """Counts of (ia - lo) * span + (ib - lo), built chunk-wise in one reused buffer."""
    n = ia.shape[0]
    out = np.zeros(span * span, dtype=np.int64)
    buf = np.empty(min(n, _CHUNK), dtype=np.int64)
    shift = lo * (span + 1)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        x = buf[: stop - start]
        np.multiply(ia[start:stop], span, out=x)
        x += ib[start:stop]
        if shift:
            x -= shift
        out += np.bincount(x, minlength=span * span)
    return out


def _table_from_codes(ca: np.ndarray, cb: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    if ca.size and min(ca.min(), cb.min()) >= 0:
        return _bincount_pairs(ca, cb, 0, k).reshape(k, k).astype(float), 0
    keep = (ca >= 0) & (cb >= 0)
    n_dropped = int(keep.size - np.count_nonzero(keep))
    ca, cb = ca[keep], cb[keep]
    table = np.bincount(ca * k + cb, minlength=k * k).reshape(k, k).astype(float)
    return table, n_dropped


def pair_table(a: Any, b: Any, categories: Sequence[Any] | None = None):
    """Contingency table of two label vectors."""
    a, b = check_pair(a, b)
    cats = check_categories(categories)
    ia, ib = _int_view(a), _int_view(b)
    if cats is None and ia is not None and ib is not None:
        # Fast path for integer codes: tabulate over the observed range in one bincount,
        # then drop values neither rater used.
        lo = int(min(ia.min(), ib.min()))
        hi = int(max(ia.max(), ib.max()))
        span = hi - lo + 1
        if span <= _MAX_DIRECT_RANGE:
            full = _bincount_pairs(ia, ib, lo, span).reshape(span, span)
            used = (full.sum(axis=0) + full.sum(axis=1)) > 0
            table = full[np.ix_(used, used)].astype(float)
            labels = (np.flatnonzero(used) + lo).tolist()
            return table, labels, 0
    (ca, cb), cats = encode([a, b], cats)
    table, n_dropped = _table_from_codes(ca, cb, len(cats))
    return table, cats, n_dropped


def check_table(table: Any) -> np.ndarray:
    """Validate a square contingency table of non-negative finite counts."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise ValueError(f"table must be a square k x k matrix; got shape {t.shape}")
    if t.shape[0] == 0:
        raise ValueError("table is empty")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("table must hold non-negative finite counts")
    if t.sum() <= 0:
        raise ValueError("table has no observations (all counts are zero)")
    return t


def ratings_matrix(ratings: Any, name: str = "ratings") -> tuple[list[Any], list[Any]]:
    """Columns of a 2-D ratings array/DataFrame, plus their names."""
    if isinstance(ratings, pd.DataFrame):
        return [ratings[c] for c in ratings.columns], list(ratings.columns)
    arr = np.asarray(ratings, dtype=object) if not isinstance(ratings, np.ndarray) else ratings
    if arr.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional; got shape {arr.shape}")
    return [arr[:, j] for j in range(arr.shape[1])], list(range(arr.shape[1]))


def counts_from_codes(codes: list[np.ndarray], k: int) -> np.ndarray:
    """Units x categories counts of how many raters chose each category (-1 = missing)."""
    n = len(codes[0])
    c = np.stack(codes, axis=1)
    unit = np.broadcast_to(np.arange(n)[:, None], c.shape)
    ok = c >= 0
    return np.bincount(unit[ok] * k + c[ok], minlength=n * k).reshape(n, k).astype(float)


def check_counts(counts: Any) -> tuple[np.ndarray, list[Any]]:
    """Validate a subjects x categories counts matrix; return it and the category names."""
    names = list(counts.columns) if isinstance(counts, pd.DataFrame) else None
    c = np.asarray(counts, dtype=float)
    if c.ndim != 2:
        raise ValueError(f"counts must be a subjects x categories matrix; got shape {c.shape}")
    if c.shape[0] == 0:
        raise ValueError("counts has no subjects")
    if c.shape[1] == 0:
        raise ValueError("counts has no categories")
    if not np.all(np.isfinite(c)) or np.any(c < 0) or np.any(c != np.round(c)):
        raise ValueError("counts must hold non-negative integers")
    return c, names if names is not None else list(range(c.shape[1]))


class Ratings(NamedTuple):
    """Ratings normalised to one label vector per rater (aligned on ``units``)."""

    columns: list[Any]
    raters: list[Any]
    units: list[Any] | None


_FORMS = (
    "two label vectors (a, b), a units x raters matrix, or a long DataFrame with "
    "unit=, rater=, rating= column names"
)


def as_ratings(
    data: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
) -> Ratings:
    """Normalise any of the three input forms (two label vectors, a units x raters
    matrix, a long frame) into :class:`Ratings`.
    """
    names = (unit, rater, rating)
    if any(n is not None for n in names):
        if b is not None:
            raise ValueError("pass either b= or unit=/rater=/rating=, not both")
        if any(n is None for n in names):
            raise ValueError("a long ratings frame needs all three of unit=, rater= and rating=")
        return _from_long(data, unit, rater, rating)  # type: ignore[arg-type]
    if b is not None:
        a, b = check_pair(data, b)
        return Ratings([a, b], [0, 1], None)
    if not isinstance(data, pd.DataFrame) and np.ndim(data) != 2:
        raise ValueError(f"ratings has {np.ndim(data)} dimension(s): pass {_FORMS}")
    cols, raters = ratings_matrix(data)
    if len(cols) == 0 or len(cols[0]) == 0:
        raise ValueError("ratings is empty")
    units = list(data.index) if isinstance(data, pd.DataFrame) else None
    return Ratings(cols, raters, units)


def _from_long(data: Any, unit: str, rater: str, rating: str) -> Ratings:
    """Pivot a long ratings frame to one column per rater without a Python loop over rows."""
    check_columns(data, [unit, rater, rating], what="ratings frame")
    if len(data) == 0:
        raise ValueError("ratings frame is empty")
    for col in (unit, rater):
        if data[col].isna().any():
            pos = int(np.flatnonzero(data[col].isna().to_numpy())[0])
            raise DataError(f"missing {col} id", line=pos, field=col)
    dup = data.duplicated([unit, rater]).to_numpy()
    if dup.any():
        pos = int(np.flatnonzero(dup)[0])
        raise DataError(
            f"{int(dup.sum())} duplicate ({unit}, {rater}) row(s): {unit}="
            f"{data[unit].iloc[pos]!r} is rated twice by {rater}={data[rater].iloc[pos]!r}",
            line=pos,
            field=rater,
        )
    ui, units = pd.factorize(data[unit], sort=True)
    ri, raters = pd.factorize(data[rater], sort=True)
    where = np.full((len(units), len(raters)), -1, dtype=np.int64)
    where[ui, ri] = np.arange(len(data))
    values = data[rating].reset_index(drop=True)
    cols = []
    for j in range(len(raters)):  # one column per rater; raters are few
        present = where[:, j] >= 0
        col = values.take(np.maximum(where[:, j], 0)).reset_index(drop=True)
        cols.append(col if present.all() else col.where(pd.Series(present)))
    return Ratings(cols, list(raters), list(units))


# -- numeric cores: two raters' k x k tables --------------------------------------------------------

WEIGHT_NAMES = ("linear", "quadratic")


def weight_matrix(weights: str | np.ndarray | None, k: int) -> np.ndarray:
    """Resolve ``weights`` into a ``(k, k)`` float agreement-weight matrix."""
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
    """Arrays over the leading axes of the input tables; ``se0`` (Cohen's kappa only, else
    None) is the SE under no agreement beyond chance."""

    estimate: np.ndarray
    se: np.ndarray
    observed: np.ndarray
    expected: np.ndarray
    n: np.ndarray
    se0: np.ndarray | None = None


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


def _gwet_scale(w: np.ndarray) -> float:
    q = w.shape[0]
    return float(w.sum() / (q * (q - 1))) if q > 1 else float("nan")


def _chance(r: np.ndarray, c: np.ndarray, w: np.ndarray, kind: str, po: np.ndarray):
    """Chance agreement of the two-rater coefficient ``kind`` (:data:`TABLE_KINDS`, or
    ``"kripp"``) from the row and column shares ``r``, ``c``."""
    pi = (r + c) / 2.0
    if kind == "cohen":
        return np.einsum("...i,ij,...j->...", r, w, c)
    if kind in ("scott", "kripp"):
        return np.einsum("...i,ij,...j->...", pi, w, pi)
    if kind == "gwet":
        return _gwet_scale(w) * np.sum(pi * (1.0 - pi), axis=-1)
    if kind == "bp":
        return np.full_like(po, w.sum() / w.shape[0] ** 2)
    if kind == "pa":
        return np.zeros_like(po)
    raise ValueError(kind)  # pragma: no cover - internal misuse


def table_stats(tables: np.ndarray, w: np.ndarray, kind: str) -> TableCoefficient:
    """The two-rater coefficient ``kind`` of ``(..., k, k)`` tables and its SE."""
    p, r, c, n = _margins(tables)
    po = np.einsum("...ij,ij->...", p, w)
    pe = _chance(r, c, w, kind, po)
    coef = _div(po - pe, 1.0 - pe)
    km = (1.0 - coef)[..., None, None]
    den = n * (1.0 - pe) ** 2
    if kind == "cohen":
        wr = np.einsum("ij,...j->...i", w, c)  # weighted column margin seen from row i
        wc = np.einsum("...i,ij->...j", r, w)  # weighted row margin seen from column j
        s = wr[..., :, None] + wc[..., None, :]
        a = np.sum(p * (w - s * km) ** 2, axis=(-2, -1))
        var = _div(a - (coef - pe * (1.0 - coef)) ** 2, den)
        a0 = np.sum(r[..., :, None] * c[..., None, :] * (w - s) ** 2, axis=(-2, -1))
        se0 = _sqrt_var(_div(a0 - pe**2, den))
        return TableCoefficient(coef, _sqrt_var(var), po, pe, n, se0)
    if kind in ("bp", "pa"):
        var = _div(np.einsum("...ij,ij->...", p, w**2) - po**2, den)
        return TableCoefficient(coef, _sqrt_var(var), po, pe, n)
    pi = (r + c) / 2.0
    if kind == "gwet":
        term = w - 2.0 * km * _gwet_scale(w) * (1.0 - (pi[..., :, None] + pi[..., None, :]) / 2.0)
    else:  # Scott's pi's chance term pi' W pi
        pbk = np.einsum("ij,...j->...i", w, pi)
        term = w - km * (pbk[..., :, None] + pbk[..., None, :])
    s1 = np.sum(p * term**2, axis=(-2, -1))
    se = _sqrt_var(_div(s1 - (po - 2.0 * (1.0 - coef) * pe) ** 2, den))
    if kind == "kripp":
        eps = _div(1.0, 2.0 * n)
        pa = (1.0 - eps) * po + eps
        return TableCoefficient(_div(pa - pe, 1.0 - pe), se, pa, pe, n)
    return TableCoefficient(coef, se, po, pe, n)


# -- numeric cores: many raters' units x categories counts ------------------------------------------


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


def krippendorff_from_counts(
    counts: np.ndarray, values: np.ndarray, level: str
) -> tuple[float, float, float, float, int, np.ndarray]:
    """Alpha from the coincidence matrix; returns (alpha, do, de, n_pairable, units, delta)."""
    o = coincidence(counts)
    n_c = o.sum(axis=1)
    total = n_c.sum()
    delta = delta_matrix(values.astype(float), level, n_c)
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


# -- binomial bounds of the observed agreement (fractional counts) ----------------------------------

BOUNDS = ("clopper_pearson", "mid_p", "mid_p_blaker", "wilson")
_ITERS = 50  # bisection steps: 2^-50 is below any use of a bound


def mid_upper_tail(p, x, n):
    """Mid-p upper tail ``P(X > x) + P(X = x) / 2`` of a binomial(n, p), increasing in ``p``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        at_least = np.where(x > 0, special.betainc(np.maximum(x, 1e-300), n - x + 1, p), 1.0)
        above = np.where(x < n, special.betainc(x + 1, np.maximum(n - x, 1e-300), p), 0.0)
    return 0.5 * (at_least + above)


def _bisect(fn, lo, hi):
    """Elementwise root of an increasing ``fn`` in ``[lo, hi]``."""
    for _ in range(_ITERS):
        mid = (lo + hi) / 2.0
        neg = fn(mid) < 0.0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    return (lo + hi) / 2.0


def _mid_p(x, n, alpha):
    zero, one = np.zeros(x.shape), np.ones(x.shape)
    lo = _bisect(lambda p: mid_upper_tail(p, x, n) - alpha / 2.0, zero, one)
    hi = _bisect(lambda p: mid_upper_tail(p, x, n) - (1.0 - alpha / 2.0), zero, one)
    return lo, hi


def _blaker_p(p, x, n):
    """Two-sided mid-p value at ``p`` with combined tails."""
    g = mid_upper_tail(p, x, n)
    f = 1.0 - g
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        edge_hi, edge_lo = 0.5 * p**n, 0.5 * (1.0 - p) ** n
    in_lower = f <= g
    tail = np.where(in_lower, f, g)
    reach = np.where(in_lower, edge_hi, edge_lo) <= tail
    return np.minimum(1.0, tail * np.where(reach, 2.0, 1.0))


def _blaker(x, n, alpha):
    """Invert :func:`_blaker_p`: each end is the one-sided mid-p bound (``alpha`` in its tail)
    where the other side cannot reject there, else the equal-tailed one (``alpha / 2``), or
    the point between them where the other side stops being able to reject."""
    zero, one = np.zeros(x.shape), np.ones(x.shape)

    def g(p):
        return mid_upper_tail(p, x, n)

    with np.errstate(invalid="ignore", over="ignore"):

        def h(p):  # increasing in p; > 0: the upper side cannot reject
            return 0.5 * p**n - (1.0 - g(p))

        u1 = _bisect(lambda p: g(p) - (1.0 - alpha), zero, one)
        u2 = _bisect(lambda p: g(p) - (1.0 - alpha / 2.0), zero, one)
        hi = np.where(h(u1) > 0, u1, np.where(h(u2) <= 0, u2, _bisect(h, u1, u2)))

        def k(p):  # decreasing in p; > 0: the lower side cannot reject
            return 0.5 * (1.0 - p) ** n - g(p)

        l1 = _bisect(lambda p: g(p) - alpha, zero, one)
        l2 = _bisect(lambda p: g(p) - alpha / 2.0, zero, one)
        lo = np.where(k(l1) > 0, l1, np.where(k(l2) <= 0, l2, _bisect(lambda p: -k(p), l2, l1)))
    return lo, hi


def _statsmodels(method: str):
    """statsmodels' ``proportion_confint`` (it takes fractional counts, vectorised)."""

    def bounds(x, n, alpha):
        with np.errstate(invalid="ignore", divide="ignore"):
            return proportion_confint(x, n, alpha=alpha, method=method)

    return bounds


_BOUND_FNS = {
    "clopper_pearson": _statsmodels("beta"),
    "mid_p": _mid_p,
    "mid_p_blaker": _blaker,
    "wilson": _statsmodels("wilson"),
}


def proportion_bounds(x, n, alpha: float, bound: str = "clopper_pearson"):
    """``(low, high)`` bounds of a binomial proportion from ``x`` of ``n`` (fractional
    allowed), one of :data:`BOUNDS`; 0 at ``x = 0`` and 1 at ``x = n`` (except Wilson's)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    lo, hi = _BOUND_FNS[bound](x, n, alpha)
    if bound == "wilson":
        return lo, hi
    return np.where(x <= 0, 0.0, lo), np.where(x >= n, 1.0, hi)


def proportion_p(p0, x, n, bound: str = "clopper_pearson"):
    """Two-sided p-value of ``p = p0`` given ``x`` of ``n``, the test each bound inverts
    (Clopper-Pearson and mid-p: twice the smaller tail; Blaker: combined tails; Wilson: the
    score test)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    if bound == "mid_p_blaker":
        return _blaker_p(p0, x, n)
    if bound == "mid_p":
        up = mid_upper_tail(p0, x, n)
        return np.minimum(1.0, 2.0 * np.minimum(up, 1.0 - up))
    if bound == "wilson":
        with np.errstate(invalid="ignore", divide="ignore"):
            z = _div(x / n - p0, np.sqrt(p0 * (1.0 - p0) / n))
        return 2.0 * stats.norm.sf(np.abs(z))
    with np.errstate(invalid="ignore"):
        upper = np.where(x > 0, stats.beta.cdf(p0, np.maximum(x, 1e-300), n - x + 1), 1.0)
        lower = np.where(x < n, stats.beta.sf(p0, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    return np.minimum(1.0, 2.0 * np.minimum(upper, lower))


# -- result classes ---------------------------------------------------------------------------------

#: How an agreement interval is made: ``estimate +/- q * se`` with the normal quantile (as
#: SAS) or the t quantile with n - 1 df (as Gwet's irrCAC), the upper end truncated at 1.
INTERVAL_METHODS = ("wald_z", "wald_t")

# A field whose name means something else in the tidy shape is renamed in the diagnostics:
# Krippendorff's ``level`` is the level of measurement, not the interval's.
_DIAGNOSTIC_NAMES = {"level": "level_of_measurement"}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return repr(v)


class _Result(ResultDisplay):
    """Readable one-line repr and the tidy row shared by the agreement results."""

    _headline: tuple[str, ...] = ()
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    n: int

    @property
    def statistic(self) -> str:
        """The coefficient's name in a tidy frame's ``statistic`` column."""
        return getattr(self, "coefficient", None) or _STATISTIC[type(self).__name__]

    @property
    def df(self) -> float:
        """Degrees of freedom of the t quantile (NaN for a normal-quantile interval)."""
        return float(self.n - 1) if self.method == "wald_t" and self.n > 1 else float("nan")

    def to_frame(self) -> ResultFrame:
        """The result as one tidy row; the other fields on ``.diagnostics`` (tuples joined).

        Examples
        --------
        >>> from evalstats.stats import pabak
        >>> frame = pabak([1, 1, 2, 2], [1, 2, 2, 2]).to_frame()
        >>> frame[["statistic", "estimate", "n", "method", "confidence"]].to_dict("records")
        [{'statistic': 'brennan_prediger', 'estimate': 0.5, 'n': 4, 'method': 'wald_z', 'confidence': 0.95}]
        >>> frame.diagnostics[["observed_agreement", "n_raters"]].to_dict("records")
        [{'observed_agreement': 0.75, 'n_raters': 2}]
        """
        row: dict[str, Any] = {"statistic": self.statistic, "df": self.df, "n_tasks": np.nan}
        extra: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in TIDY_COLUMNS:
                row[f.name] = v
            elif f.name != "coefficient":
                extra[_DIAGNOSTIC_NAMES.get(f.name, f.name)] = (
                    ", ".join(map(str, v)) if isinstance(v, tuple) else v
                )
        return tidy_frame(pd.DataFrame([row]), diagnostics=pd.DataFrame([extra]))

    def __repr__(self) -> str:
        names = self._headline or tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
        body = ", ".join(f"{k}={_fmt(getattr(self, k))}" for k in names)
        ci = f"{round(100 * self.confidence)}% CI [{_fmt(self.ci_low)}, {_fmt(self.ci_high)}]"
        note = f", note={self.note!r}" if getattr(self, "note", None) else ""
        return f"{type(self).__name__}({body}, {ci}{note})"


@dataclass(frozen=True, repr=False)
class CohenKappaResult(_Result):
    """Cohen's (weighted) kappa for two raters.

    ``se`` is the Fleiss-Cohen-Everitt non-null ASE (SAS "ASE") behind the interval;
    ``se0`` the ASE under H0 behind ``z = kappa / se0`` and the two-sided ``p_value``.
    """

    estimate: float
    se: float
    se0: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    k: int
    weights: str | None
    categories: tuple[Any, ...]
    confidence: float
    method: str
    n_dropped: int
    note: str | None

    _headline = ("estimate", "se", "se0", "z", "p_value", "n", "k", "weights")

    @property
    def kappa(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate


@dataclass(frozen=True, repr=False)
class AgreementResult(_Result):
    """A chance-corrected agreement coefficient (or percent agreement) with Gwet's SE."""

    coefficient: str
    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    k: int
    n_raters: int
    weights: str | None
    categories: tuple[Any, ...]
    confidence: float
    method: str
    n_dropped: int
    note: str | None

    _headline = ("coefficient", "estimate", "se", "n", "k", "n_raters", "weights")


@dataclass(frozen=True, repr=False)
class FleissKappaResult(_Result):
    """Fleiss' kappa for many raters.

    ``se0``/``z``/``p_value`` are the H0 test of Fleiss, Nee & Landis (1979) (as R's
    ``irr::kappam.fleiss``); ``se``/``ci_low``/``ci_high`` use Gwet's non-null SE (as
    irrCAC). Per-category kappas (category vs the rest) come with their H0 SE and z.
    H0 quantities need the same number of raters per subject; otherwise they are nan.
    """

    estimate: float
    se0: float
    z: float
    p_value: float
    se: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    n_raters: int | None
    categories: tuple[Any, ...]
    category_kappa: tuple[float, ...]
    category_se0: tuple[float, ...]
    category_z: tuple[float, ...]
    category_p_value: tuple[float, ...]
    confidence: float
    method: str
    note: str | None

    _headline = ("estimate", "se0", "z", "p_value", "se", "n", "n_raters")

    @property
    def kappa(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate

    @property
    def n_subjects(self) -> int:
        """Alias of ``n``: subjects with at least one rating."""
        return self.n

    def category_frame(self) -> pd.DataFrame:
        """Tidy per-category kappas: category, kappa, se0, z, p_value."""
        return pd.DataFrame(
            {
                "category": list(self.categories),
                "kappa": self.category_kappa,
                "se0": self.category_se0,
                "z": self.category_z,
                "p_value": self.category_p_value,
            }
        )


@dataclass(frozen=True, repr=False)
class KrippendorffAlphaResult(_Result):
    """Krippendorff's alpha with Gwet's linearised SE (nan for the ordinal level, whose
    metric depends on the data's own value frequencies).

    ``z`` / ``p_value`` are the two-sided Wald test of alpha = 0 on ``se`` (t with
    pairable units - 1 df when ``method="wald_t"``, as irrCAC); ``n`` counts the pairable
    units; ``level`` is the level of measurement (``level_of_measurement`` in the tidy
    frame's diagnostics).
    """

    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    level: str
    observed_disagreement: float
    expected_disagreement: float
    n_pairable_values: int
    n: int
    n_raters: int
    values: tuple[Any, ...]
    confidence: float
    method: str
    note: str | None

    _headline = ("estimate", "se", "level", "n", "n_raters", "n_pairable_values")

    @property
    def alpha(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate

    @property
    def n_units(self) -> int:
        """Alias of ``n``: units with two or more values."""
        return self.n


# The ``statistic`` of the results that carry no ``coefficient`` field.
_STATISTIC = {
    "CohenKappaResult": "cohen_kappa",
    "FleissKappaResult": "fleiss_kappa",
    "KrippendorffAlphaResult": "krippendorff_alpha",
}


# -- the table of coefficients ----------------------------------------------------------------------


class Coefficient(NamedTuple):
    """One row of :data:`COEFFICIENTS`: the coefficient's ``statistic`` name, its numeric
    cores (``table``: two raters' ``(..., k, k)`` tables; ``counts``: a units x categories
    matrix, None for two raters only), whether two raters go through ``table``, which ``se``
    it reports, its ``test`` (``"wald"``: ``estimate / se``; ``"h0"``: the normal test on
    ``se0``), its result class, the ``oracle`` the tests match and its interval methods."""

    statistic: str
    table: Callable[..., Any] | None
    counts: Callable[..., Any] | None
    pairs_by_table: bool
    se: str
    test: Literal["wald", "h0"]
    result: type
    oracle: str
    methods: tuple[str, ...] = INTERVAL_METHODS


_GWET_SE = "Gwet (2014) linearisation, finite-population factor 1"

#: The coefficients: public function name -> its row (see :class:`Coefficient`).
COEFFICIENTS: dict[str, Coefficient] = {
    "percent_agreement": Coefficient(
        statistic="percent_agreement",
        table=partial(table_stats, kind="pa"),
        counts=partial(_gwet_family, kind="pa"),
        pairs_by_table=True,
        se=f"sqrt((sum p w^2 - pa^2) / n); many raters: {_GWET_SE}",
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC pa2 / raw.CAC bp's pa; SEM of per-unit agreement",
    ),
    "cohen_kappa": Coefficient(
        statistic="cohen_kappa",
        table=partial(table_stats, kind="cohen"),
        counts=None,
        pairs_by_table=True,
        se="Fleiss-Cohen-Everitt (1969) non-null ASE; se0 the ASE under H0 (SAS PROC FREQ)",
        test="h0",
        result=CohenKappaResult,
        oracle="SAS PROC FREQ printouts, sklearn cohen_kappa_score, irrCAC table.CAC",
    ),
    "scott_pi": Coefficient(
        statistic="scott_pi",
        table=partial(table_stats, kind="scott"),
        counts=partial(_gwet_family, kind="fleiss"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC scott / raw.CAC fleiss",
    ),
    "gwet_ac1": Coefficient(
        statistic="gwet_ac1",
        table=partial(table_stats, kind="gwet"),
        counts=partial(_gwet_family, kind="gwet"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC gwet / raw.CAC gwet, Gwet's published examples",
    ),
    "pabak": Coefficient(
        statistic="brennan_prediger",
        table=partial(table_stats, kind="bp"),
        counts=partial(_gwet_family, kind="bp"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC bp / raw.CAC bp",
    ),
    "fleiss_kappa": Coefficient(
        statistic="fleiss_kappa",
        table=None,
        counts=partial(_gwet_family, kind="fleiss"),
        pairs_by_table=False,
        se=f"{_GWET_SE}; se0 of Fleiss, Nee & Landis (1979)",
        test="h0",
        result=FleissKappaResult,
        oracle="statsmodels fleiss_kappa, irrCAC raw.CAC fleiss, R irr::kappam.fleiss",
    ),
    "krippendorff_alpha": Coefficient(
        statistic="krippendorff_alpha",
        table=partial(table_stats, kind="kripp"),
        counts=krippendorff_from_counts,
        pairs_by_table=False,
        se="Gwet's linearisation with weights 1 - delta / max(delta); none for ordinal",
        test="wald",
        result=KrippendorffAlphaResult,
        oracle="krippendorff.alpha (estimate), irrCAC raw.CAC krippendorff (SE, p-value)",
    ),
}


# -- from checked input to a result -----------------------------------------------------------------

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


# -- two raters -------------------------------------------------------------------------------------


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


# -- many raters ------------------------------------------------------------------------------------


def counts_result(
    spec: Coefficient,
    columns: list[Any],
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    method: str,
) -> AgreementResult:
    """A Gwet-family coefficient of three or more raters' label columns."""
    codes, cats = encode(columns, check_categories(categories))
    counts = counts_from_codes(codes, len(cats))
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
        h0 = fleiss_h0(c)
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
    values, counts = _value_counts(columns, level)
    q, n_raters = len(values), len(columns)
    alpha, d_o, d_e, total, units, delta = spec.counts(counts, values, level)  # type: ignore[misc]
    notes = []
    if level == "ordinal":
        se = float("nan")
        notes.append("no SE for the ordinal level (its metric depends on the data)")
    elif q < 2 or delta.max() == 0:
        se = float("nan")
    else:
        se = krippendorff_gwet_se(counts, 1.0 - delta / delta.max())
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
        n_raters=n_raters,
        values=tuple(values.tolist()),
        confidence=confidence,
        method=method,
        note="; ".join(notes) or None,
    )


def _value_counts(columns: list[Any], level: str) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of the raters' columns and the units x values counts."""
    x = _numeric_matrix(columns, level)
    if x.size == 0:
        raise ParameterError("ratings is empty")
    if np.isinf(x).any():
        raise ParameterError("ratings must be finite (use NaN for missing)")
    if level == "ratio" and np.nanmin(x) < 0:
        raise ParameterError("ratio-level alpha needs non-negative values")
    ok = ~np.isnan(x)
    values, inv = np.unique(x[ok], return_inverse=True)
    q = len(values)
    unit_of = np.broadcast_to(np.arange(x.shape[0])[:, None], x.shape)[ok]
    counts = np.bincount(unit_of * q + inv, minlength=x.shape[0] * q).reshape(-1, q)
    if not np.any(counts.sum(axis=1) >= 2):
        raise ParameterError("no unit has two or more values: alpha is undefined")
    return values, counts.astype(float)


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
    codes, _ = encode(cols, None)
    x = np.column_stack(codes).astype(float)
    x[x < 0] = np.nan
    return x


# -- the IID coefficients (public) ------------------------------------------------------------------

IntervalMethod = Literal["wald_z", "wald_t"]


def _ratings(ratings: Any, b: Any, unit: Any, rater: Any, rating: Any) -> Ratings:
    return as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)


def _agreement(
    name: str,
    r: Ratings,
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    method: str,
) -> Any:
    """The coefficient ``name`` of ratings in any input form: its table formulas for two
    raters, its count-matrix formulas for more."""
    spec = COEFFICIENTS[name]
    if len(r.columns) < 2:
        raise ValueError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    confidence = check_confidence(confidence)
    method = check_method(method)
    if len(r.columns) == 2 and spec.pairs_by_table:
        table, cats, n_dropped = pair_table(*r.columns, categories)
        if table.sum() == 0:
            raise ValueError("no unit has labels from both raters (every pair has a missing label)")
        return table_result(spec, table, weights, cats, confidence, method, n_dropped)
    if spec.counts is None:
        raise ValueError(
            f"{name} compares two raters; got {len(r.columns)} (use fleiss_kappa, gwet_ac1, "
            "pabak or krippendorff_alpha for more)"
        )
    return counts_result(spec, r.columns, weights, categories, confidence, method)


# -- two raters -------------------------------------------------------------------------------------


def contingency_table(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    categories: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Cross-tabulate two raters' labels (rows = rater 1), dropping pairs with a missing label.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        Two raters' labels in any of the three input forms (see :func:`cohen_kappa`).
    categories : sequence, optional
        Category set and order; categories nobody used keep their row and column.
        Default: the sorted distinct labels (a shared Categorical's own categories).

    Examples
    --------
    >>> contingency_table(["x", "y", "y"], ["x", "y", "x"]).to_numpy().tolist()
    [[1, 0], [1, 1]]
    """
    r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    if len(r.columns) != 2:
        raise ValueError(f"a contingency table needs two raters; got {len(r.columns)}")
    table, cats, _ = pair_table(*r.columns, categories)
    idx = pd.Index(cats, name="rater 1")
    return pd.DataFrame(table.astype(np.int64), index=idx, columns=pd.Index(cats, name="rater 2"))


def cohen_kappa_table(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
    categories: Sequence[Any] | None = None,
    n_dropped: int = 0,
) -> CohenKappaResult:
    """Cohen's (weighted) kappa from a k x k contingency table (rows = rater 1).

    Parameters
    ----------
    table : array-like or DataFrame, shape (k, k)
        Counts; rows and columns in the same category order.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights (``docs/methods.md``, "Agreement"). None = unweighted kappa.
    confidence : float
        Confidence level of the interval.
    method : {"wald_z", "wald_t"}
        Quantile of the Wald interval: normal (SAS) or t(n-1) (Gwet's irrCAC).
    categories : sequence, optional
        Labels of the rows/columns (default: the DataFrame index, else 0..k-1).
    n_dropped : int
        Recorded in the result (pairs dropped upstream for missing labels).

    Returns
    -------
    CohenKappaResult

    Examples
    --------
    >>> res = cohen_kappa_table([[10, 4, 1, 0], [5, 10, 12, 2], [2, 4, 12, 5], [0, 2, 6, 13]])
    >>> round(res.kappa, 4), round(res.se, 4), round(res.ci_low, 3), round(res.ci_high, 4)
    (0.3449, 0.0724, 0.203, 0.4868)
    """
    if categories is None and isinstance(table, pd.DataFrame):
        categories = list(table.index)
    t = check_table(table)
    confidence = check_confidence(confidence)
    method = check_method(method)
    k = t.shape[0]
    cats = tuple(range(k)) if categories is None else tuple(categories)
    if len(cats) != k:
        raise ValueError(f"{len(cats)} categories given for a {k} x {k} table")
    spec = COEFFICIENTS["cohen_kappa"]
    return table_result(spec, t, weights, cats, confidence, method, n_dropped)  # type: ignore[return-value]


def cohen_kappa(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> CohenKappaResult:
    """Cohen's (weighted) kappa of two raters' labels, with non-null and H0 SEs.

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
        Pairs where either label is missing are dropped (``n`` is the number used,
        ``n_dropped`` the number dropped). Exactly two raters.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights over the category order: ``1 - |i-j|/(k-1)`` (linear),
        ``1 - (i-j)^2/(k-1)^2`` (quadratic), or a symmetric matrix with ones on the diagonal.
    categories : sequence, optional
        Category set and order. Needed for weighted kappa when the label order is not
        the sort order, and to keep a category one rater never used (changes weighted
        kappa, AC1 and PABAK).
    confidence : float
        Confidence level of the Wald interval.
    method : {"wald_z", "wald_t"}
        Normal (default, SAS) or t(n-1) (Gwet) quantile for the interval.

    Returns
    -------
    CohenKappaResult
        ``estimate`` (alias ``kappa``) is nan (with a ``note``) when chance agreement is 1.

    Examples
    --------
    >>> res = cohen_kappa(["win", "tie", "tie", "loss", "win"], ["win", "tie", "loss", "loss", "win"])
    >>> round(res.estimate, 4), res.n
    (0.7059, 5)
    >>> import pandas as pd
    >>> long = pd.DataFrame({"task": [1, 1, 2, 2, 3, 3], "judge": ["x", "y"] * 3,
    ...                      "label": ["win", "win", "tie", "loss", "tie", "tie"]})
    >>> round(cohen_kappa(long, unit="task", rater="judge", rating="label").kappa, 4)
    0.5
    """
    return _agreement(
        "cohen_kappa",
        _ratings(ratings, b, unit, rater, rating),
        weights,
        categories,
        confidence,
        method,
    )


def scott_pi(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """Scott's pi (chance from the pooled margins), with Gwet's SE.

    Two raters use the two-rater formulas on the contingency table. With three or more
    raters this is Fleiss' generalisation of Scott's pi, i.e. Fleiss' kappa (Gwet's SE),
    equal to :func:`fleiss_kappa`'s ``estimate``.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> round(scott_pi([1, 1, 2, 2], [1, 2, 2, 2]).estimate, 4)
    0.4667
    """
    return _agreement(
        "scott_pi",
        _ratings(ratings, b, unit, rater, rating),
        weights,
        categories,
        confidence,
        method,
    )


def percent_agreement(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """(Weighted) percent agreement, with Gwet's SE.

    Two raters: the share of units on which they agree, SE ``sqrt((sum p w^2 - pa^2)/n)``.
    Three or more: the mean over units of the share of agreeing rater pairs, with Gwet's
    multi-rater SE (the standard error of the per-unit agreements).

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> percent_agreement([1, 1, 2, 2], [1, 2, 2, 2]).estimate
    0.75
    >>> round(percent_agreement([[1, 1, 1], [1, 2, 2], [2, 2, 2]]).estimate, 4)
    0.7778
    """
    return _agreement(
        "percent_agreement",
        _ratings(ratings, b, unit, rater, rating),
        weights,
        categories,
        confidence,
        method,
    )


def pabak(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """PABAK / Brennan-Prediger: ``(k * p_o - 1) / (k - 1)`` for k categories.

    With weights, Brennan-Prediger's weighted form ``(p_o - T/k^2) / (1 - T/k^2)``,
    ``T`` the sum of the weight matrix. ``k`` counts every category in ``categories``
    (default: those observed), used or not. Three or more raters use Gwet's multi-rater
    Brennan-Prediger coefficient (irrCAC ``bp``), ``p_o`` the multi-rater agreement. The
    result's ``coefficient`` (and tidy ``statistic``) is ``"brennan_prediger"``.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> pabak([1, 1, 2, 2], [1, 2, 2, 2]).estimate
    0.5
    """
    return _agreement(
        "pabak", _ratings(ratings, b, unit, rater, rating), weights, categories, confidence, method
    )


def gwet_ac1(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """Gwet's AC1 (unweighted) / AC2 (weighted) with Gwet's SE.

    Two raters (``a``, ``b`` or two columns) use the two-rater formulas on the contingency
    table, dropping incomplete pairs; more raters use Gwet's multi-rater formulas, where a
    unit's missing ratings are simply absent.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> round(gwet_ac1([1, 1, 2, 2, 1], [1, 2, 2, 2, 1]).estimate, 4)
    0.6
    >>> round(gwet_ac1([[1, 1, 1], [2, 2, 1], [2, 2, 2], [1, 1, 2]]).estimate, 4)
    0.3333
    >>> import pandas as pd
    >>> long = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "judge": ["x", "y", "z"] * 2,
    ...                      "label": ["win", "win", "win", "tie", "tie", "win"]})
    >>> round(gwet_ac1(long, unit="task", rater="judge", rating="label").estimate, 4)
    0.4
    """
    return _agreement(
        "gwet_ac1",
        _ratings(ratings, b, unit, rater, rating),
        weights,
        categories,
        confidence,
        method,
    )


def two_rater_agreement(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> ResultFrame:
    """Every two-rater coefficient of a k x k table in one tidy frame.

    Rows (``statistic``): percent_agreement, cohen_kappa, scott_pi, gwet_ac1,
    brennan_prediger, krippendorff_alpha, in the tidy columns (``estimate``, ``se``,
    ``ci_low``, ``ci_high``, ``p_value``, ``df``, ``n``, ``n_tasks``, ``method``,
    ``confidence``). ``.diagnostics`` holds per row ``z``, ``se0`` (Cohen's),
    ``observed_agreement``, ``expected_agreement``, ``k``, ``weights`` and the rest. For
    Cohen's kappa ``z``/``p_value`` use the H0 SE; for the others they are Wald tests on
    ``se``.

    Examples
    --------
    >>> df = two_rater_agreement([[13, 0, 0], [0, 20, 7], [0, 4, 56]], method="wald_t")
    >>> df.set_index("statistic").loc["gwet_ac1", "estimate"].round(4)
    np.float64(0.8493)
    """
    t = check_table(table)
    confidence = check_confidence(confidence)
    method = check_method(method)
    cats = list(table.index) if isinstance(table, pd.DataFrame) else list(range(t.shape[0]))
    frames = [
        table_result(spec, t, weights, cats, confidence, method).to_frame()
        for spec in COEFFICIENTS.values()
        if spec.table is not None
    ]
    diagnostics = pd.concat([f.diagnostics for f in frames], ignore_index=True)
    return tidy_frame(pd.concat(frames, ignore_index=True), diagnostics=diagnostics)


# -- many raters ------------------------------------------------------------------------------------


def ratings_to_counts(
    ratings: Any,
    categories: Sequence[Any] | None = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
) -> pd.DataFrame:
    """Ratings (units x raters, missing allowed, or a long frame) -> units x categories counts.

    Examples
    --------
    >>> ratings_to_counts([[1, 1, 2], [2, 2, None]]).to_numpy().tolist()
    [[2, 1], [0, 2]]
    """
    r = as_ratings(ratings, unit=unit, rater=rater, rating=rating)
    codes, cats = encode(r.columns, check_categories(categories))
    counts = counts_from_codes(codes, len(cats))
    if isinstance(ratings, pd.DataFrame) and unit is None:
        index = ratings.index
    else:
        index = None if r.units is None else pd.Index(r.units, name=unit)
    return pd.DataFrame(counts.astype(np.int64), index=index, columns=pd.Index(cats))


def fleiss_kappa(
    ratings: Any = None,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    counts: Any = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> FleissKappaResult:
    """Fleiss' kappa of many raters (Gwet's non-null SE, Fleiss-Nee-Landis H0 test).

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    counts : array-like or DataFrame, shape (subjects, categories), optional
        Instead of ``ratings``: how many raters put each subject in each category (see
        :func:`ratings_to_counts`). Subjects may have different numbers of raters (Gwet's
        generalisation; the H0 quantities are then nan); subjects with no rating are
        ignored.
    categories : sequence, optional
        Category set and order of ``ratings`` (as in :func:`cohen_kappa`).
    confidence, method
        Level and quantile ("wald_z" or "wald_t" with n-1 df) of the interval on Gwet's SE.

    Returns
    -------
    FleissKappaResult
        ``estimate`` (alias ``kappa``); ``n`` (alias ``n_subjects``) subjects rated.

    Examples
    --------
    >>> res = fleiss_kappa(counts=[[3, 0], [0, 3], [2, 1], [3, 0]])
    >>> round(res.estimate, 4), round(res.category_kappa[0], 4)
    (0.625, 0.625)
    >>> ratings = [["a", "a", "a"], ["b", "b", "b"], ["a", "a", "b"], ["a", "a", "a"]]
    >>> round(fleiss_kappa(ratings).kappa, 4)
    0.625
    """
    if (ratings is None) == (counts is None):
        raise ValueError("pass either ratings (labels) or counts= (subjects x categories)")
    if counts is None:
        r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
        codes, names = encode(r.columns, check_categories(categories))
        c = counts_from_codes(codes, len(names))
    else:
        if b is not None or unit is not None or rater is not None or rating is not None:
            raise ValueError("counts= takes no b=, unit=, rater= or rating=")
        c, names = check_counts(counts)
    confidence = check_confidence(confidence)
    method = check_method(method)
    return fleiss_result(COEFFICIENTS["fleiss_kappa"], c, names, confidence, method)


def krippendorff_alpha(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> KrippendorffAlphaResult:
    """Krippendorff's alpha of a units x raters matrix (NaN = missing), two label vectors
    or a long frame.

    Units x raters, as every function here (the ``krippendorff`` package's layout is raters x
    units: transpose with ``.T``).

    Computed from the coincidence matrix (Krippendorff 2011). "nominal" only compares
    values for equality (any labels: strings are fine); the other levels need numeric
    codes: "ordinal" uses their order and the frequencies of the values in between,
    "interval" squared differences and "ratio" ((c - k) / (c + k))^2 (values must be
    >= 0). Units with fewer than two values are not pairable and are ignored.

    ``se`` is Gwet's linearised SE with agreement weights ``1 - delta / max(delta)``
    (irrCAC); the t interval uses (pairable units - 1) df. It is nan for "ordinal".

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement (the distance metric).
    confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5]]
    >>> round(krippendorff_alpha(np.transpose(data), level="interval").estimate, 4)
    0.9428
    >>> round(krippendorff_alpha(*data, level="interval").alpha, 4)
    0.9428
    """
    level = check_level(level)  # type: ignore[assignment]
    confidence = check_confidence(confidence)
    method = check_method(method)  # type: ignore[assignment]
    r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    return krippendorff_result(
        COEFFICIENTS["krippendorff_alpha"], r.columns, level, confidence, method
    )


# -- task-clustered intervals: vectorised cores -----------------------------------------------------

#: Interval constructions, in the order the coverage study prints them.
METHODS = (
    "jackknife_t",
    "atanh_jackknife",
    "exact_agreement",
    "atanh_jackknife_exact",
    "atanh_jackknife_midp_blaker",
    "bootstrap_percentile",
)
#: The atanh jackknife joined with a bound of the observed agreement: method -> bound (of
#: :data:`BOUNDS`).
JOINED = {"atanh_jackknife_exact": "clopper_pearson", "atanh_jackknife_midp_blaker": "mid_p_blaker"}
#: Below this many effective disagreeing units the joined methods (:data:`JOINED`) also take
#: in the bound of the observed agreement (chosen among 3, 5, 10 and always:
#: ``docs/methods.md``, "Agreement").
EXACT_BELOW = 10.0
TABLE_KINDS = ("cohen", "scott", "gwet", "bp", "pa")

Parts = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


# -- statistics -------------------------------------------------------------------------------------


def table_cluster_stats(cluster: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n_clusters: int):
    """(C, k*k) contingency counts per cluster from integer codes (one bincount)."""
    flat = (cluster * k + a) * k + b
    return np.bincount(flat, minlength=n_clusters * k * k).reshape(n_clusters, k * k).astype(float)


def table_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed flattened tables ``(..., k*k)``."""
    k = w.shape[0]
    p, r, c, n = _margins(np.asarray(s, dtype=float).reshape(*np.shape(s)[:-1], k, k))
    po = np.einsum("...ij,ij->...", p, w)
    return po, _chance(r, c, w, kind, po), n


def multi_cluster_stats(cluster: np.ndarray, counts: np.ndarray, w: np.ndarray, n_clusters: int):
    """(C, q + 3) per-cluster sums: pairwise agreement, units with >= 2 ratings, rated units,
    category shares (units x categories ``counts``, one cluster code per unit)."""
    r = counts.sum(axis=1)
    rated = r > 0
    two = r >= 2
    sum_q = np.sum(counts * (counts @ w.T - 1.0), axis=1)
    pa_i = np.where(two, sum_q / np.where(two, r * (r - 1.0), 1.0), 0.0)
    share = np.where(rated[:, None], counts / np.where(rated, r, 1.0)[:, None], 0.0)
    per_unit = np.column_stack([pa_i, two, rated, share]).astype(float)
    return _sum_by_cluster(cluster, per_unit, n_clusters)


def _sum_by_cluster(cluster: np.ndarray, per_unit: np.ndarray, n_clusters: int) -> np.ndarray:
    """(C, d) sums of the units' rows by cluster: a stable sort and one ``reduceat``."""
    out = np.zeros((n_clusters, per_unit.shape[1]))
    if len(cluster) == 0:
        return out
    order = np.argsort(cluster, kind="stable")
    sorted_cl = cluster[order]
    starts = np.flatnonzero(np.r_[True, sorted_cl[1:] != sorted_cl[:-1]])
    out[sorted_cl[starts]] = np.add.reduceat(per_unit[order], starts, axis=0)
    return out


def multi_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed multi-rater statistics ``(..., q + 3)``."""
    s = np.asarray(s, dtype=float)
    q = w.shape[0]
    n2, n_units = s[..., 1], s[..., 2]
    po = _div(s[..., 0], n2)
    pi = _div(s[..., 3:], n_units[..., None])
    if kind == "fleiss":
        pe = np.einsum("...i,ij,...j->...", pi, w, pi)
    elif kind == "gwet":
        pe = _gwet_scale(w) * np.sum(pi * (1.0 - pi), axis=-1)
    elif kind == "bp":
        pe = np.full_like(po, w.sum() / q**2)
    elif kind == "pa":
        pe = np.zeros_like(po)
    else:  # pragma: no cover - internal misuse
        raise ValueError(kind)
    return po, pe, n2


def kripp_cluster_stats(cluster: np.ndarray, counts: np.ndarray, n_clusters: int) -> np.ndarray:
    """(C, q*q + 1) per-cluster coincidence matrices and pairable-unit counts."""
    m = counts.sum(axis=1)
    keep = m >= 2
    c = counts[keep]
    scaled = c / (m[keep] - 1.0)[:, None]
    q = counts.shape[1]
    per_unit = np.empty((len(c), q * q + 1))
    outer = per_unit[:, : q * q].reshape(len(c), q, q)
    np.einsum("ui,uj->uij", scaled, c, out=outer)
    outer[:, np.arange(q), np.arange(q)] -= scaled  # a unit's value is not paired with itself
    per_unit[:, -1] = 1.0
    return _sum_by_cluster(cluster[keep], per_unit, n_clusters)


def delta_matrix(values: np.ndarray, level: str, n_c: np.ndarray) -> np.ndarray:
    """delta^2 over the leading axes of the value counts ``n_c`` (..., q)."""
    q = len(values)
    shape = (*n_c.shape[:-1], q, q)
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(q), shape)
    if level == "interval":
        return np.broadcast_to((values[:, None] - values[None, :]) ** 2, shape)
    if level == "ratio":
        s = values[:, None] + values[None, :]
        d = values[:, None] - values[None, :]
        return np.broadcast_to(np.where(s == 0, 0.0, _div(d, np.where(s == 0, 1.0, s))) ** 2, shape)
    if level == "ordinal":
        zero = np.zeros((*n_c.shape[:-1], 1))
        cum = np.concatenate([zero, np.cumsum(n_c, axis=-1)], axis=-1)
        i = np.arange(q)
        lo = np.minimum(i[:, None], i[None, :])
        hi = np.maximum(i[:, None], i[None, :])
        between = cum[..., hi + 1] - cum[..., lo]
        return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2
    raise ValueError(level)  # pragma: no cover - validated upstream


def kripp_parts(s: np.ndarray, values: np.ndarray, level: str):
    """``(p_o, p_e, n)`` of summed coincidence statistics: ``p_o = 1 - D_o / max delta``,
    ``p_e = 1 - D_e / max delta`` (so ``alpha = 1 - D_o / D_e``), ``n`` pairable units."""
    s = np.asarray(s, dtype=float)
    q = len(values)
    o = s[..., : q * q].reshape(*s.shape[:-1], q, q)
    n_c = o.sum(axis=-1)
    total = n_c.sum(axis=-1)
    delta = delta_matrix(np.asarray(values, dtype=float), level, n_c)
    dmax = delta.max(axis=(-2, -1))
    d_o = _div(np.sum(o * delta, axis=(-2, -1)), total * dmax)
    d_e = _div(np.einsum("...i,...ij,...j->...", n_c, delta, n_c), (total - 1.0) * total * dmax)
    return 1.0 - d_o, 1.0 - d_e, s[..., -1]


def coefficient(parts: Parts, s: np.ndarray) -> np.ndarray:
    """``(p_o - p_e) / (1 - p_e)`` of summed statistics."""
    po, pe, _ = parts(s)
    return _div(po - pe, 1.0 - pe)


# -- intervals --------------------------------------------------------------------------------------


class ClusterIntervals(NamedTuple):
    """Arrays over the leading axes; ``intervals[method] = (low, high)``."""

    estimate: np.ndarray
    se: np.ndarray  # delete-one-task jackknife SE on the coefficient's own scale
    df: np.ndarray
    p_value: np.ndarray  # t(C - 1) test of 0 on the atanh scale (joined: with the bound's test)
    observed: np.ndarray
    expected: np.ndarray
    n: np.ndarray
    n_eff: np.ndarray  # effective units of the bound of the observed agreement
    few: np.ndarray  # where the joined methods take in that bound
    intervals: dict[str, tuple[np.ndarray, np.ndarray]]


def _jackknife(total: np.ndarray, loo: np.ndarray, fn, c: int):
    est = fn(total)
    vals = fn(loo)
    with np.errstate(invalid="ignore"):
        dev = vals - vals.mean(axis=-1, keepdims=True)
        se = np.sqrt((c - 1.0) / c * np.sum(dev**2, axis=-1))
    return est, se


def _resample_counts(rng: np.random.Generator, lead: tuple[int, ...], b: int, c: int):
    """Multinomial task counts (..., B, C) of a cluster bootstrap, by one bincount."""
    m = int(np.prod(lead, dtype=np.int64)) * b
    idx = rng.integers(0, c, size=(m, c))
    flat = (np.arange(m)[:, None] * c + idx).ravel()
    return np.bincount(flat, minlength=m * c).reshape(*lead, b, c).astype(float)


def _exact(po, pe, n_eff, alpha, bound):
    """Bounds of the observed agreement on ``n_eff`` effective units (``bound`` of
    :data:`BOUNDS`), mapped through the coefficient with
    ``p_e`` held at its estimate and clipped to [-1, 1]."""
    lo, hi = proportion_bounds(np.clip(po, 0.0, 1.0) * n_eff, n_eff, alpha, bound)
    return np.clip(_div(lo - pe, 1.0 - pe), -1.0, 1.0), np.clip(_div(hi - pe, 1.0 - pe), -1.0, 1.0)


def table_squared(w: np.ndarray) -> Parts | None:
    """:func:`cluster_intervals`' ``squared`` of two-rater tables with weights ``w``: the
    weighted percent agreement with weights ``w ** 2``; None for 0 / 1 weights (a unit's
    agreement is then its own square, and the IID ratio is 1)."""
    w = np.asarray(w, dtype=float)
    if np.array_equal(w * w, w):
        return None
    return partial(table_parts, w=w * w, kind="pa")


def iid_ratio(po: np.ndarray, m2: np.ndarray) -> np.ndarray:
    """IID variance of the per-unit agreement over the binomial one, ``(E a^2 - p_o^2) /
    (p_o (1 - p_o))``, in (0, 1] (1 unweighted, and where ``p_o`` is 0 or 1)."""
    binom = po * (1.0 - po)
    ok = binom > 1e-15
    r = np.where(ok, _div(m2 - po**2, np.where(ok, binom, 1.0)), 1.0)
    return np.clip(np.nan_to_num(r, nan=1.0), 1e-12, 1.0)


def cluster_intervals(
    cs: np.ndarray,
    parts: Parts,
    *,
    confidence: float = 0.95,
    methods: tuple[str, ...] = METHODS,
    n_resamples: int = 0,
    rng: np.random.Generator | None = None,
    pseudo: float = 1.0,
    exact_below: float = EXACT_BELOW,
    unit_disagreement: float = 1.0,
    bound: str | None = None,
    deff_floor: float = 1.0,
    squared: Parts | None = None,
) -> ClusterIntervals:
    """Every requested interval of the coefficient of per-cluster statistics ``cs``."""
    cs = np.asarray(cs, dtype=float)
    c = cs.shape[-2]
    alpha = 1.0 - confidence
    total = cs.sum(axis=-2)
    loo = total[..., None, :] - cs
    po, pe, n = parts(total)

    def coef(s):
        return coefficient(parts, s)

    est, se = _jackknife(total, loo, coef, c)
    df = np.full(est.shape, c - 1.0)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)

    def z_of(s):
        p_o, p_e, m = parts(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrunk = _div(p_o - p_e, 1.0 - p_e) * m / (m + pseudo)
            return np.arctanh(np.clip(shrunk, -1.0, 1.0))

    z, se_z = _jackknife(total, loo, z_of, c)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_value = 2.0 * stats.t.sf(np.abs(_div(z, se_z)), c - 1.0)
    # Design effect of the observed agreement: jackknife variance over the binomial one.
    _, se_po = _jackknife(total, loo, lambda s: parts(s)[0], c)
    binom = _div(po * (1.0 - po), n)
    raw = np.nan_to_num(
        np.where(binom > 0, _div(se_po**2, np.where(binom > 0, binom, 1.0)), 1.0), nan=1.0
    )
    cap = np.maximum(n / c, 1.0)
    # A weighted unit's agreement varies less than a binomial one (a near miss is a part of a
    # disagreement): the floor is that IID ratio, so that the bound sees the information the
    # units carry; unweighted it is 1 and nothing changes. Not below the unit disagreement
    # (what rare near misses carry): where every unit agrees in part the ratio is 0 and the
    # bound would have no width.
    ratio = 1.0
    if squared is not None:
        ratio = np.maximum(iid_ratio(po, squared(total)[0]), min(unit_disagreement, 1.0))
    deff = np.clip(raw, deff_floor * ratio, cap)
    n_eff = n / deff
    # The effective disagreeing units that decide the join: on the design effect floored at
    # 1 (decided on the bound's units, with the weighted floor, it joined too rarely).
    count = n / np.clip(raw, 1.0, cap) * (1.0 - po) / unit_disagreement
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if "jackknife_t" in methods:
        out["jackknife_t"] = (est - tq * se, est + tq * se)
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    if "atanh_jackknife" in methods:
        out["atanh_jackknife"] = at
    if "exact_agreement" in methods:
        out["exact_agreement"] = _exact(po, pe, n_eff, alpha, bound or "clopper_pearson")
    # Few disagreements, or no spread at all over tasks (every task alike: a zero-width
    # interval is no interval): the joined methods take in the bound.
    few = (count < exact_below) | ~(se_z > 1e-12)
    joined_p = p_value
    for name in (m for m in methods if m in JOINED):
        b = bound or JOINED[name]
        lo, hi = _union(at, _exact(po, pe, n_eff, alpha, b))
        out[name] = (np.where(few, lo, at[0]), np.where(few, hi, at[1]))
        # The joined interval's test: the larger of the two p-values (it inverts neither alone).
        x = np.clip(po, 0.0, 1.0) * n_eff
        joined_p = np.where(few, np.fmax(p_value, proportion_p(pe, x, n_eff, b)), p_value)
    if any(m.startswith("bootstrap") for m in methods):
        if rng is None or n_resamples < 1:
            raise ValueError("the bootstrap methods need n_resamples >= 1 and an rng")
        w = _resample_counts(rng, est.shape, n_resamples, c)
        boot = coef(np.einsum("...bc,...cd->...bd", w, cs))
        with np.errstate(invalid="ignore"):
            bq = np.nanquantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0], axis=-1)
        bq = np.where(np.isnan(est), np.nan, bq)
        out["bootstrap_percentile"] = (bq[0], bq[1])
    return ClusterIntervals(est, se, df, joined_p, po, pe, n, n_eff, few, out)


def _union(a, b):
    # fmin/fmax: where one construction is undefined (nan) the other decides.
    return np.fmin(a[0], b[0]), np.fmax(a[1], b[1])


# -- task-clustered intervals (public) --------------------------------------------------------------

#: Coefficient name -> (two-rater table kind, many-rater kind); None where there is none.
CLUSTERED_COEFFICIENTS: dict[str, tuple[str | None, str | None]] = {
    "percent_agreement": ("pa", "pa"),
    "cohen_kappa": ("cohen", None),
    "scott_pi": ("scott", "fleiss"),
    "gwet_ac1": ("gwet", "gwet"),
    "pabak": ("bp", "bp"),
    "fleiss_kappa": (None, "fleiss"),
    "krippendorff_alpha": (None, "krippendorff"),
}
#: The interval constructions of :func:`clustered_agreement` (see :func:`cluster_intervals`).
CLUSTERED_METHODS = tuple(m for m in METHODS if m != "jackknife_t")
DEFAULT_METHOD = "atanh_jackknife_midp_blaker"


def clustered_agreement(
    ratings: Any,
    b: Any = None,
    *,
    cluster: Any,
    coefficient: str | Sequence[str] = "cohen_kappa",
    weights: Weights = None,
    level: str = "nominal",
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Agreement coefficients with task-clustered intervals that stay in [-1, 1].

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), or a units x raters matrix (NaN / None =
        missing).
    b : array-like, optional
        Rater 2's labels of the same units.
    cluster : array-like
        The task (cluster) of each unit, one per row of ``ratings``.
    coefficient : str or sequence of str
        Among :data:`CLUSTERED_COEFFICIENTS`: ``cohen_kappa`` (two raters), ``scott_pi``,
        ``gwet_ac1`` (AC2 with weights), ``pabak`` (Brennan-Prediger), ``percent_agreement``,
        ``fleiss_kappa``, ``krippendorff_alpha``. One row each.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights (as in :func:`cohen_kappa`); not used by
        Fleiss' kappa and Krippendorff's alpha (which uses ``level``).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Krippendorff's level of measurement.
    categories : sequence, optional
        Category set and order (as in :func:`cohen_kappa`).
    confidence : float
    method : str
        Among :data:`CLUSTERED_METHODS`; default ``"atanh_jackknife_midp_blaker"`` (chosen
        by a coverage study: ``docs/methods.md``, "Agreement"). Every one lies in [-1, 1].
    n_resamples : int
        Cluster bootstrap resamples (``"bootstrap_percentile"`` only).
    rng : Generator or int, optional
        Seed of the bootstrap.

    Returns
    -------
    ResultFrame
        One row per coefficient: ``statistic`` (the name the IID functions give it, e.g.
        ``brennan_prediger`` for PABAK), ``estimate`` (equal to the IID function's),
        ``se`` (delete-one-task jackknife SE), ``ci_low``, ``ci_high``, ``p_value`` (t test
        of 0 on the atanh scale), ``df`` (C - 1), ``n`` (units used), ``n_tasks``,
        ``method``, ``confidence`` and ``ci_note`` (perfect or near-perfect agreement, an
        undefined coefficient). ``.diagnostics``: observed and chance agreement, effective
        units, whether the exact bound was joined, weights / level, raters.

    Examples
    --------
    >>> a = ["win", "win", "tie", "loss", "win", "tie", "win", "loss", "win", "win", "tie", "win"]
    >>> b = ["win", "tie", "tie", "loss", "win", "tie", "win", "loss", "win", "win", "loss", "win"]
    >>> tasks = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    >>> res = clustered_agreement(a, b, cluster=tasks, coefficient=["cohen_kappa", "gwet_ac1"])
    >>> res[["statistic", "estimate", "ci_low", "ci_high", "n_tasks"]].round(3)
         statistic  estimate  ci_low  ci_high  n_tasks
    0  cohen_kappa     0.724  -0.059    0.932        4
    1     gwet_ac1     0.762   0.138    0.940        4
    >>> same = clustered_agreement(a, a, cluster=tasks)  # perfect agreement: not [1, 1]
    >>> float(same["estimate"][0]), round(float(same["ci_low"][0]), 3), float(same["ci_high"][0])
    (1.0, 0.612, 1.0)
    """
    names = [coefficient] if isinstance(coefficient, str) else list(coefficient)
    unknown = [c for c in names if c not in CLUSTERED_COEFFICIENTS]
    if unknown or not names:
        raise ParameterError(
            f"coefficient must be among {list(CLUSTERED_COEFFICIENTS)}; got {unknown or names}"
        )
    if method not in CLUSTERED_METHODS:
        raise ParameterError(f"method must be one of {list(CLUSTERED_METHODS)}; got {method!r}")
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    level = check_level(level)
    r = as_ratings(ratings, b)
    if len(r.columns) < 2:
        raise ParameterError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    cl = cluster.to_numpy() if isinstance(cluster, pd.Series) else np.asarray(cluster)
    if cl.ndim != 1 or len(cl) != len(r.columns[0]):
        raise ParameterError(
            f"cluster needs one task id per unit ({len(r.columns[0])}); got shape {cl.shape}"
        )
    missing = pd.isna(cl)
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ParameterError(f"cluster has a missing task id at unit {pos}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rows, diags = [], []
    codes: list = []  # the label codes, encoded once for every coefficient that needs them
    for name in names:  # a few coefficients, each one vectorised
        cs, parts, squared, unit, info = _statistics(
            name, r.columns, cl, weights, level, categories, codes
        )
        res = cluster_intervals(
            cs,
            parts,
            confidence=confidence,
            methods=(method,),
            n_resamples=n_resamples,
            rng=gen,
            unit_disagreement=unit,
            squared=squared,
        )
        lo, hi = res.intervals[method]
        few = bool(res.few) and method in JOINED
        rows.append(
            {
                "statistic": info["statistic"],
                "estimate": float(res.estimate),
                "se": float(res.se),
                "ci_low": float(lo),
                "ci_high": float(hi),
                "p_value": float(res.p_value),
                "df": float(res.df),
                "n": int(round(float(res.n))),
                "n_tasks": int(cs.shape[0]),
                "method": method,
                "confidence": confidence,
                "ci_note": _note(res, few, method),
            }
        )
        diags.append(
            {
                "statistic": info["statistic"],
                "observed_agreement": float(res.observed),
                "expected_agreement": float(res.expected),
                "n_effective": float(res.n_eff),
                "exact_joined": few,
                "weights": info["weights"],
                "n_raters": len(r.columns),
                "k": info["k"],
            }
        )
    return tidy_frame(pd.DataFrame(rows), diagnostics=pd.DataFrame(diags), extra=["ci_note"])


_BOUND_NAMES = {"clopper_pearson": "Clopper-Pearson", "mid_p_blaker": "mid-p, Blaker's tails"}


def _note(res: ClusterIntervals, few: bool, method: str) -> str:
    if np.isnan(res.estimate):
        return "undefined: chance agreement is 1 (one category)"
    if res.observed >= 1.0 and (method in JOINED or method == "exact_agreement"):
        name = _BOUND_NAMES[JOINED.get(method, "clopper_pearson")]
        return (
            f"perfect observed agreement: the lower bound is a binomial one ({name} on "
            f"{float(res.n_eff):.0f} effective units), not a resampling one"
        )
    if res.observed >= 1.0:
        return "perfect observed agreement"
    if few:
        return "few disagreements: joined with a binomial bound on the observed agreement"
    return ""


def _cluster_codes(cl: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(cl[keep], sort=True)
    if len(uniques) < 2:
        raise ParameterError(
            f"a task-clustered interval needs at least two tasks with rated units; got "
            f"{len(uniques)}"
        )
    return codes.astype(np.int64), len(uniques)


def _statistics(name, columns, cl, weights, level, categories, cache):
    """Per-task statistics, their (p_o, p_e, n) function, the mean squared per-unit agreement
    (``cluster_intervals``' ``squared``, or None) and the unit disagreement."""
    table_kind, multi_kind = CLUSTERED_COEFFICIENTS[name]
    statistic = COEFFICIENTS[name].statistic
    if multi_kind == "krippendorff":
        return _krippendorff(columns, cl, level, statistic)
    if not cache:
        cache.append(encode(columns, check_categories(categories)))
    codes, cats = cache[0]
    k = len(cats)
    w = np.eye(k) if name == "fleiss_kappa" else weight_matrix(weights, k)
    # The smallest disagreement that counts as one: weighted near-misses are counted whole.
    gaps = (1.0 - w)[(1.0 - w) > 1e-12]
    unit = float(gaps.min()) if gaps.size else 1.0
    info = {"statistic": statistic, "weights": weights_name(weights), "k": k}
    if len(columns) == 2 and table_kind is not None:
        a, b = codes
        keep = (a >= 0) & (b >= 0)
        if not keep.any():
            raise ParameterError("no unit has labels from both raters")
        g, c = _cluster_codes(cl, keep)
        cs = table_cluster_stats(g, a[keep], b[keep], k, c)
        parts = partial(table_parts, w=w, kind=table_kind)
        return cs, parts, table_squared(w), unit, info
    if multi_kind is None:
        raise ParameterError(f"{name} compares two raters; got {len(columns)}")
    counts = counts_from_codes(codes, k).astype(float)
    keep = counts.sum(axis=1) > 0
    g, c = _cluster_codes(cl, keep)
    cs = multi_cluster_stats(g, counts[keep], w, c)
    # No per-unit squares in the many-rater sums: the design effect's floor stays 1.
    return cs, partial(multi_parts, w=w, kind=multi_kind), None, unit, info


def _krippendorff(columns, cl, level, statistic):
    values, counts = _value_counts(columns, level)
    q = len(values)
    keep = counts.sum(axis=1) >= 2
    g, c = _cluster_codes(cl, keep)
    cs = kripp_cluster_stats(g, counts[keep], c)
    parts = partial(kripp_parts, values=values, level=level)
    n_c = cs[:, : q * q].sum(axis=0).reshape(q, q).sum(axis=1)
    delta = delta_matrix(values.astype(float), level, n_c)
    off = delta[delta > 0]
    unit = float(off.min() / off.max()) if off.size else 1.0
    info = {"statistic": statistic, "weights": level, "k": q}
    return cs, parts, None, unit, info


# -- judges -----------------------------------------------------------------------------------------

#: Seed 000's trigger (disagreement above 20 %) under its public name; the one definition,
#: shared with the runner and the audit below this layer, is
#: :data:`evalstats._disagreement.DISAGREEMENT_TRIGGER`.
SEED_DISAGREEMENT_TRIGGER = DISAGREEMENT_TRIGGER
_K = len(OUTCOMES)
_PAIR = ["task_id", "replicate"]
_ARMS = ("arm_a", "arm_b")
#: ``judge_a`` of the row that compares every judge at once.
MANY_JUDGES = "all judges"
#: ``method`` of the IID kappa row: its analytic SE and z test, no interval.
IID_METHOD = "iid z test (no interval)"
#: Frame-level name -> (coefficient of :func:`clustered_agreement`, weights).
_PAIR_COEFFICIENTS = {
    "kappa": ("cohen_kappa", None),
    "kappa_linear": ("cohen_kappa", "linear"),
    "ac1": ("gwet_ac1", None),
    "pabak": ("pabak", None),
}
_CLUSTERED_FIELDS = ("estimate", "se", "ci_low", "ci_high", "p_value", "df", "method", "ci_note")


def _codes(values: pd.Series) -> np.ndarray:
    """Outcome codes 0=loss, 1=tie, 2=win; -1 where missing."""
    return pd.Categorical(values, dtype=OUTCOME_DTYPE).codes.astype(np.int64)


def _select(
    frame: pd.DataFrame, rubric: str | None, judges: Sequence[str] | None, cluster: str = "task_id"
):
    # ``order`` too: the units of a rubric judged in both orders are pair-orders.
    cols = ("task_id", "replicate", "order", "rubric", "judge", "status", "outcome", cluster)
    check_columns(frame, tuple(dict.fromkeys(cols)))
    f, rubric = select_rubric(frame, rubric)
    present = sorted(f["judge"].astype(str).unique().tolist())
    if judges is None:
        judges = present
    missing = [j for j in judges if j not in present]
    if missing:
        raise ValueError(f"judges {missing} have no rows for rubric {rubric!r}; present: {present}")
    if len(judges) < 2:
        raise ValueError(f"agreement needs at least two judges, got {list(judges)}")
    return f, rubric, list(judges)


def _by_arms(f: pd.DataFrame) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The frame's pairs of arms (``arm_a``, ``arm_b`` when present) and their rows."""
    arms = [c for c in _ARMS if c in f.columns]
    if not arms:
        return [({}, f)]
    groups = f.groupby([f[c].astype(str) for c in arms], sort=True, observed=True)
    return [(dict(zip(arms, key, strict=True)), g) for key, g in groups]


def _n_distinct(values: np.ndarray) -> int:
    """Distinct task ids, by hashing (``np.unique`` sorts a million strings: ~0.2 s)."""
    return int(len(pd.unique(pd.Series(values, copy=False))))


def _n_pairs(wide: pd.DataFrame, used: np.ndarray, cluster: str) -> int:
    """Distinct (task, replicate) pairs among the ``used`` rows; each row is a pair when
    the frame has no replicate column."""
    if "replicate" not in wide.columns:
        return int(np.count_nonzero(used))
    return int(wide.loc[used, [cluster, "replicate"]].drop_duplicates().shape[0])


@dataclass(frozen=True)
class _Intervals:
    """The options every task-clustered interval of one call shares."""

    confidence: float
    method: str
    n_resamples: int
    rng: np.random.Generator

    @classmethod
    def checked(cls, confidence, method, n_resamples, rng) -> _Intervals:
        if method not in CLUSTERED_METHODS:
            raise ParameterError(f"method must be one of {list(CLUSTERED_METHODS)}; got {method!r}")
        gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return cls(check_confidence(confidence), method, check_n_resamples(n_resamples), gen)

    def kwargs(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _clustered(
    a: np.ndarray,
    b: np.ndarray | None,
    task: np.ndarray,
    coefficients: list[str],
    opts: _Intervals,
    *,
    weights: str | None = None,
    categories: Any = range(_K),
) -> list[dict[str, Any]]:
    """:func:`clustered_agreement`'s rows, or NaN rows (with the reason) on one task."""
    if _n_distinct(task) < 2:
        nan = dict.fromkeys(_CLUSTERED_FIELDS, np.nan)
        nan.update(method=opts.method, ci_note="one task: no task-clustered interval")
        return [nan for _ in coefficients]
    res = clustered_agreement(
        a,
        b,
        cluster=task,
        coefficient=coefficients,
        weights=weights,
        categories=categories,
        **opts.kwargs(),
    )
    return [{c: r[c] for c in _CLUSTERED_FIELDS} for r in res.to_dict("records")]


def _kappa_rows(
    a: np.ndarray, b: np.ndarray, task: np.ndarray, opts: _Intervals, names=("kappa",)
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The rows ``names`` (of :data:`_PAIR_COEFFICIENTS`) and ``kappa_iid`` of outcome codes
    ``a`` against ``b`` (units of ``task``), and their diagnostics: the one construction of
    judges against each other and against people. Every clustered row is
    :func:`clustered_agreement`'s (cluster: tasks); ``kappa_iid`` is the same kappa with its
    analytic IID SE and z test (Fleiss-Cohen-Everitt), without an interval."""
    table = np.bincount(a * _K + b, minlength=_K * _K).reshape(_K, _K)
    if not table.sum():
        return {}, {}
    rows: dict[str, dict[str, Any]] = {}
    unweighted = [n for n in names if _PAIR_COEFFICIENTS[n][1] is None]
    res = _clustered(a, b, task, [_PAIR_COEFFICIENTS[n][0] for n in unweighted], opts)
    rows.update(zip(unweighted, res, strict=True))
    for name in (n for n in names if _PAIR_COEFFICIENTS[n][1] is not None):
        coef, weights = _PAIR_COEFFICIENTS[name]
        rows[name] = _clustered(a, b, task, [coef], opts, weights=weights)[0]
    k = cohen_kappa_table(table, confidence=opts.confidence)
    rows["kappa_iid"] = {"estimate": k.estimate, "se": k.se, "p_value": k.p_value}
    rows["kappa_iid"]["method"] = IID_METHOD
    diag = {"kappa_se0": k.se0, "kappa_z": k.z, "ci_note": rows["kappa"]["ci_note"]}
    return rows, diag


def _long_rows(lead, order, rows, n, n_tasks, confidence) -> list[dict[str, Any]]:
    """Tidy rows of the statistics ``order`` (NaN where ``rows`` lacks one); a row without an
    interval has no confidence."""
    out = []
    for name in order:
        r = {k: v for k, v in rows.get(name, {}).items() if k != "ci_note"}
        has_ci = pd.notna(r.get("ci_low")) or pd.notna(r.get("ci_high"))
        out.append(
            {**lead, "statistic": name, **r, "n": n, "n_tasks": n_tasks}
            | {"confidence": confidence if has_ci else np.nan}
        )
    return out


def judge_agreement(
    frame: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    rubric: str | None = None,
    cluster: str = "task_id",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    method: str = DEFAULT_METHOD,
    threshold: float = DISAGREEMENT_TRIGGER,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Agreement between every pair of judges: each coefficient with its interval.

    Units are the pairs (task, replicate[, order]) that both judges judged ``ok``;
    outcomes are ordered loss < tie < win. A frame with ``arm_a`` and ``arm_b`` (several
    pairs of arms) gives one agreement per pair of arms.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame: ``task_id, replicate, rubric, judge, status, outcome`` (and
        ``order`` for a rubric judged in both orders; ``arm_a``, ``arm_b`` as grouping
        keys); a missing one is a DataError naming it.
    judges : sequence of str, optional
        Judges to compare (default: all in the rubric).
    rubric : str, optional
        Required when the frame holds several rubrics.
    cluster : str, default "task_id"
        Cluster column of every interval.
    confidence : float, default 0.95
    n_resamples : int, default 2000
        Cluster bootstrap resamples, used only by ``method="bootstrap_percentile"``.
    method : str, default "atanh_jackknife_midp_blaker"
        Interval construction, among :data:`CLUSTERED_METHODS` (see
        :func:`clustered_agreement`).
    threshold : float, default 0.20
        Disagreement rate above which ``trigger`` is True (the seed's rule).
    rng : Generator or int, optional
        Seed of the bootstrap (``bootstrap_percentile`` only).

    Returns
    -------
    ResultFrame
        Long: per ``rubric[, arm_a, arm_b], judge_a, judge_b`` the rows
        ``observed_agreement``, ``disagreement_rate``, ``kappa`` (task-clustered, as
        :func:`clustered_agreement`; NaN with fewer than two tasks), ``kappa_iid`` (its
        analytic IID SE and z test, no interval), ``kappa_linear`` (linear weights),
        ``ac1``, ``pabak``. ``n`` counts the judged units (pair-orders for a rubric judged
        in both orders), ``n_tasks`` the tasks. With three or more judges a last group
        (``judge_a == "all judges"``) has ``fleiss_kappa`` (units every judge rated ``ok``)
        and ``krippendorff_alpha`` (units with missing judges too). ``.diagnostics`` per
        group: ``n``, ``n_pairs``, ``n_tasks``, ``agreements``, ``disagreements``,
        ``trigger``, ``kappa_se0``, ``kappa_z``, ``fleiss_se0``, ``ci_note`` and
        ``confusion`` (k x k counts, rows = judge_a, order loss/tie/win).

    Examples
    --------
    >>> import evalstats, tempfile
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=8, n_replicates=3, seed=1)
    >>> ds = evalstats.load_dir(sim.out_dir)
    >>> f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    >>> agr = judge_agreement(f, rubric="with-without")
    >>> agr["statistic"].tolist()[:4]
    ['observed_agreement', 'disagreement_rate', 'kappa', 'kappa_iid']
    >>> iv = agr.dropna(subset=["ci_low", "ci_high"])  # the coefficients with an interval
    >>> bool(((iv["ci_low"] >= -1) & (iv["ci_high"] <= 1)).all()), len(iv)
    (True, 4)
    """
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    threshold = check_probability(threshold, "threshold")
    f, rubric, judges = _select(frame, rubric, judges, cluster)
    long: list[dict[str, Any]] = []
    diags: list[dict[str, Any]] = []
    for arms, g in _by_arms(f):
        ok = g.assign(outcome=g["outcome"].where(g["status"] == "ok"))
        wide = wide_by_judge(ok, rubric=rubric)
        wide = wide.reindex(columns=[*wide.columns.difference(judges, sort=False), *judges])
        lead = {"rubric": rubric, **arms}
        # Counted once, by the rule the runner, audit and report use too.
        dis = disagreement_counts(wide, judges, threshold=threshold)
        dis = {frozenset((r["judge_a"], r["judge_b"])): r for r in dis.to_dict("records")}
        for ja, jb in itertools.combinations(judges, 2):
            a, b = _codes(wide[ja]), _codes(wide[jb])
            both = (a >= 0) & (b >= 0)
            task = wide.loc[both, cluster].to_numpy()
            d = dis[frozenset((ja, jb))]
            n, disagreements = int(d["n"]), int(d["disagreements"])
            rows, diag = _kappa_rows(a[both], b[both], task, opts, tuple(_PAIR_COEFFICIENTS))
            rows["observed_agreement"] = {"estimate": (n - disagreements) / n if n else np.nan}
            rows["disagreement_rate"] = {"estimate": d["disagreement_rate"]}
            head = {**lead, "judge_a": ja, "judge_b": jb}
            order = ("observed_agreement", "disagreement_rate", "kappa", "kappa_iid")
            order += ("kappa_linear", "ac1", "pabak")
            n_tasks = _n_distinct(task)
            long += _long_rows(head, order, rows, n, n_tasks, opts.confidence)
            table = np.bincount(a[both] * _K + b[both], minlength=_K * _K).reshape(_K, _K)
            diags.append(
                {**head, "n": n, "n_pairs": _n_pairs(wide, both, cluster), "n_tasks": n_tasks}
                | {"agreements": n - disagreements, "disagreements": disagreements}
                | {"trigger": d["trigger"], **diag, "confusion": table.tolist()}
            )
        if len(judges) >= 3:
            long_many, diag = _many_judges(wide, judges, cluster, opts)
            head = {**lead, "judge_a": MANY_JUDGES, "judge_b": f"{len(judges)} judges"}
            long += [{**head, **r} for r in long_many]
            diags.append({**head, **diag})
    by = ["rubric", *(c for c in _ARMS if c in f.columns), "judge_a", "judge_b"]
    diagnostics = pd.DataFrame(diags)
    order = ("n", "n_pairs", "n_tasks", "agreements", "disagreements", "trigger")
    order += ("kappa_se0", "kappa_z", "fleiss_se0", "ci_note", "confusion")
    diagnostics = diagnostics[[*by, *(c for c in order if c in diagnostics.columns)]]
    return tidy_frame(pd.DataFrame(long), by=by, diagnostics=diagnostics)


def _many_judges(wide: pd.DataFrame, judges: list[str], cluster: str, opts: _Intervals):
    """Fleiss' kappa (units every judge rated) and Krippendorff's alpha (units two or more
    rated), task-clustered; their tidy rows and diagnostics."""
    codes = np.column_stack([_codes(wide[j]) for j in judges]).astype(float)
    codes[codes < 0] = np.nan
    complete = ~np.isnan(codes).any(axis=1)
    task = wide[cluster].to_numpy()
    n, n_tasks = int(complete.sum()), int(wide.loc[complete, cluster].nunique())
    diag: dict[str, Any] = {"n": n, "n_pairs": _n_pairs(wide, complete, cluster)}
    diag["n_tasks"] = n_tasks
    rows: dict[str, dict[str, Any]] = {}
    if complete.any():
        diag["fleiss_se0"] = fleiss_kappa(codes[complete], categories=[0.0, 1.0, 2.0]).se0
        (rows["fleiss_kappa"],) = _clustered(
            codes[complete], None, task[complete], ["fleiss_kappa"], opts
        )
    if ((~np.isnan(codes)).sum(axis=1) >= 2).any():
        (rows["krippendorff_alpha"],) = _clustered(
            codes, None, task, ["krippendorff_alpha"], opts, categories=None
        )
    order = ("fleiss_kappa", "krippendorff_alpha")
    return _long_rows({}, order, rows, n, n_tasks, opts.confidence), diag


_SEVERITY = {"no_answer": 3, "error": 2, "invalid": 1, "ok": 0}


def consensus(
    frame: pd.DataFrame,
    rule: str = "unanimous",
    *,
    judges: Sequence[str] | None = None,
    rubric: str | None = None,
) -> pd.DataFrame:
    """One verdict per pair (and order) from several judges.

    ``"unanimous"``: the shared outcome when every judge is ``ok`` and agrees; when
    they disagree the consensus is ``tie`` — seed 000's rule that doubt defaults to
    "(b) roughly equivalent" ("uncertainty is not a marketing argument").
    ``"majority"``: the outcome of a strict majority of all judges, else ``tie``.
    A pair that is not ``ok`` for every judge (unanimous) or for a majority
    (majority) takes the most serious status among the judges (no_answer > error >
    invalid) and no outcome.

    Returns
    -------
    DataFrame
        ``task_id, replicate, order, rubric, judge`` (``"consensus:<rule>"``),
        ``status``, ``outcome``, ``n_judges_ok``, ``agreed`` (bool), plus the pair's
        ``tokens_with, tokens_without, wall_with_s, wall_without_s`` and
        ``over_budget_arm`` where the frame has them — so :func:`evalstats.win_rates`
        accepts it, with the arm-aware missing-answer rule too — and ``arm_a``, ``arm_b``
        where the frame has them (one consensus per pair of arms).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "task_id": ["t1", "t1", "t2", "t2"], "replicate": 1, "order": None,
    ...     "rubric": "with-without", "judge": ["a:x", "b:y", "a:x", "b:y"],
    ...     "status": "ok", "outcome": ["win", "win", "win", "loss"],
    ...     "tokens_with": 100, "tokens_without": 120, "wall_with_s": 1.0, "wall_without_s": 2.0})
    >>> c = consensus(frame, "unanimous")
    >>> c[["task_id", "outcome", "agreed"]].to_numpy().tolist()
    [['t1', 'win', True], ['t2', 'tie', False]]
    """
    if rule not in ("unanimous", "majority"):
        raise ValueError(f"rule must be 'unanimous' or 'majority', got {rule!r}")
    f, rubric, judges = _select(frame, rubric, judges)
    f = f.loc[f["judge"].astype(str).isin(judges)]
    parts = [_consensus(g, rule, judges, rubric).assign(**arms) for arms, g in _by_arms(f)]
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


def _consensus(f: pd.DataFrame, rule: str, judges: list[str], rubric: str) -> pd.DataFrame:
    """:func:`consensus` of the rows of one pair of arms."""
    # One spread of a single code per verdict: the outcome (0-2) where ok, else -1 - the
    # status's severity; a judge with no row for a unit is NaN (an error, no outcome).
    ok = (f["status"].astype(object) == "ok").to_numpy()
    severity = f["status"].astype(object).map(_SEVERITY).fillna(_SEVERITY["error"])
    value = np.where(ok, _codes(f["outcome"]), -1 - severity.to_numpy(dtype=np.int64))
    wide = wide_by_judge(f.assign(_verdict=value), value="_verdict", rubric=rubric)
    wide = wide.reindex(columns=[*wide.columns.difference(judges, sort=False), *judges])
    keys = [c for c in ("task_id", "replicate", "order") if c in wide.columns]
    cells = np.column_stack([wide[j].to_numpy(dtype=np.float64, na_value=np.nan) for j in judges])
    missing = np.isnan(cells)
    cells = np.where(missing, -1 - _SEVERITY["error"], cells).astype(np.int64)
    codes = np.where(cells >= 0, cells, -1)  # -1 = not ok
    sev = np.where(cells >= 0, _SEVERITY["ok"], -1 - cells)
    n_ok = (codes >= 0).sum(axis=1)
    m = len(judges)
    votes = np.stack([(codes == k).sum(axis=1) for k in range(_K)], axis=1)  # (units, K)
    top = votes.argmax(axis=1)
    agreed = votes.max(axis=1) == m
    if rule == "unanimous":
        decided = n_ok == m
        result = np.where(agreed, top, 1)
    else:
        decided = n_ok * 2 > m
        result = np.where(votes.max(axis=1) * 2 > m, top, 1)
    worst = sev.max(axis=1)
    status_names = np.array(["ok", "invalid", "error", "no_answer"], dtype=object)
    out_status = np.where(decided, "ok", status_names[np.maximum(worst, 1)])
    out_outcome = np.where(decided, np.asarray(OUTCOMES, dtype=object)[result], None)
    out = wide[keys].copy()
    out["rubric"] = rubric
    out["judge"] = f"consensus:{rule}"
    out["status"] = pd.Categorical(out_status, dtype=STATUS_DTYPE)
    out["outcome"] = pd.Categorical(out_outcome, dtype=OUTCOME_DTYPE)
    out["n_judges_ok"] = n_ok
    out["agreed"] = agreed & decided
    # Which arm went over budget is a property of the pair, whoever judged it: carried so
    # that win_rates(..., no_answer_as="arm_aware") applies to consensus verdicts too.
    pair_cols = ["tokens_with", "tokens_without", "wall_with_s", "wall_without_s"]
    pair_cols = [c for c in (*pair_cols, "over_budget_arm") if c in f.columns]
    pair_info = f.drop_duplicates(["task_id", "replicate"])[["task_id", "replicate", *pair_cols]]
    out = out.merge(pair_info, on=["task_id", "replicate"], how="left")
    assert set(STATUSES) >= set(out["status"].astype(str))
    return out


# -- judges against people --------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldResult(ResultDisplay):
    """What :func:`judge_vs_gold` returns.

    Attributes
    ----------
    judges : ResultFrame
        Long, per judge: ``accuracy``, ``precision``, ``recall``, ``f1`` (macro),
        ``kappa`` (task-clustered, as between judges) and ``kappa_iid`` (the same kappa,
        its analytic IID SE and z test); where both orders exist also
        ``accuracy_with_first``, ``accuracy_without_first`` and ``positional_agreement``
        (same verdict in both orders; ``n``: the pairs judged in both). ``.diagnostics``:
        ``judge``, ``n`` (ok judgments of gold pairs), ``n_pairs``, ``n_tasks``,
        ``n_not_ok`` (invalid / error / no_answer judgments of gold pairs, left out),
        ``n_pairs_both_orders``.
    confusion : DataFrame
        ``judge``, ``gold``, ``predicted``, ``n`` (every cell, zeros included).
    labelers : DataFrame
        Inter-labeler kappa (:func:`labeler_agreement`).
    gold : DataFrame
        The gold label per pair: ``task_id``, ``replicate`` (``arm_a``, ``arm_b`` where the
        labels have them), ``gold`` (NA without a majority), ``votes``, ``agreeing``.
    gold_rule : str
        ``"majority"`` or the labeler's name.
    n_gold_pairs, n_no_majority : int
        Pairs with a gold label, pairs with labels but no majority.
    confidence : float
    method : str
        Kappa's interval construction (:data:`CLUSTERED_METHODS`).
    """

    judges: pd.DataFrame
    confusion: pd.DataFrame
    labelers: pd.DataFrame
    gold: pd.DataFrame
    gold_rule: str
    n_gold_pairs: int
    n_no_majority: int
    confidence: float
    method: str

    def to_frame(self) -> pd.DataFrame:
        """The per-judge table."""
        return self.judges


def gold_labels(labels: pd.DataFrame, gold: str = "majority") -> pd.DataFrame:
    """The gold outcome of each labelled pair: one labeler's, or the strict majority.

    Parameters
    ----------
    labels : DataFrame
        ``task_id``, ``replicate``, ``labeler``, ``outcome`` (``arm_a``, ``arm_b``: part of
        the pair's key where present).
    gold : str
        ``"majority"`` or a labeler's name (their own majority if they labelled a pair more
        than once, e.g. in both orders).

    Returns
    -------
    DataFrame
        ``task_id``, ``replicate``, ``gold`` (outcome dtype; NA without a strict majority),
        ``votes`` and ``agreeing`` (votes for the gold outcome).

    Examples
    --------
    >>> labels = pd.DataFrame({"task_id": ["a", "a", "a", "b", "b"], "replicate": 1,
    ...                        "labeler": ["x", "y", "z", "x", "y"],
    ...                        "outcome": ["win", "win", "tie", "win", "loss"]})
    >>> gold_labels(labels)[["task_id", "gold", "votes"]]
      task_id gold  votes
    0       a  win      3
    1       b  NaN      2
    """
    check_columns(labels, [*_PAIR, "labeler", "outcome"], what="labels")
    lab = labels
    if gold != "majority":
        present = sorted(labels["labeler"].astype(str).unique())
        if gold not in present:
            raise ValueError(f"gold must be 'majority' or a labeler; labelers: {present}")
        lab = labels.loc[labels["labeler"].astype(str) == gold]
    codes = _codes(lab["outcome"])
    if (codes < 0).any():
        raise DataError("labels hold an outcome other than win / tie / loss", field="outcome")
    key = [*_PAIR, *(c for c in _ARMS if c in labels.columns)]
    pid, uniq = pd.MultiIndex.from_frame(lab[key].reset_index(drop=True)).factorize()
    counts = np.bincount(pid * _K + codes, minlength=len(uniq) * _K).reshape(len(uniq), _K)
    votes = counts.sum(axis=1)
    top = counts.argmax(axis=1)
    agreeing = counts.max(axis=1)
    has = 2 * agreeing > votes
    out = pd.DataFrame(list(uniq), columns=key)
    out["gold"] = pd.Categorical.from_codes(np.where(has, top, -1), dtype=OUTCOME_DTYPE)
    out["votes"] = votes
    out["agreeing"] = agreeing
    return out.sort_values(key, kind="stable").reset_index(drop=True)


def macro_scores(table: np.ndarray) -> tuple[float, float, float, float]:
    """Accuracy and macro precision, recall, F1 of a confusion table (rows = gold)."""
    t = np.asarray(table, dtype=np.float64)
    n = t.sum()
    rows, cols, diag = t.sum(axis=1), t.sum(axis=0), np.diag(t)
    present = (rows > 0) | (cols > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(cols > 0, diag / cols, 0.0)
        r = np.where(rows > 0, diag / rows, 0.0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    acc = float(diag.sum() / n) if n else float("nan")
    if not present.any():
        return acc, float("nan"), float("nan"), float("nan")
    return acc, float(p[present].mean()), float(r[present].mean()), float(f[present].mean())


#: The statistics of a judge against gold, in the rows' order (then, where both orders
#: exist, ``accuracy_with_first``, ``accuracy_without_first``, ``positional_agreement``).
GOLD_STATISTICS = ("accuracy", "precision", "recall", "f1", "kappa", "kappa_iid")


def labeler_agreement(
    labels: pd.DataFrame,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    method: str = DEFAULT_METHOD,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Cohen's kappa between every two labelers on the pairs both labelled.

    A labeler's first label of a pair is used (labels in both orders: the first row). The
    interval is task-clustered, as between judges (:func:`judge_agreement`'s ``kappa``).

    Returns
    -------
    DataFrame
        ``a``, ``b``, ``n``, ``n_tasks``, ``kappa``, ``se``, ``ci_low``, ``ci_high``,
        ``p_value``, ``method`` (of :data:`CLUSTERED_METHODS`), ``kappa_iid_se`` (analytic
        IID SE), ``observed_agreement``, ``ci_note``.

    Examples
    --------
    >>> labels = pd.DataFrame({"task_id": list("aabbcc") * 2, "replicate": [1, 2] * 6,
    ...     "labeler": ["x"] * 6 + ["y"] * 6,
    ...     "outcome": ["win", "tie", "loss", "win", "win", "tie",
    ...                 "win", "tie", "loss", "loss", "win", "tie"]})
    >>> labeler_agreement(labels)[["a", "b", "n", "kappa"]].round(3)
       a  b  n  kappa
    0  x  y  6   0.75
    """
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    key = [*_PAIR, *(c for c in _ARMS if c in labels.columns)]
    first = labels.drop_duplicates([*key, "labeler"], keep="first")
    names = sorted(first["labeler"].astype(str).unique())
    rows = []
    for a, b in itertools.combinations(names, 2):
        la = first.loc[first["labeler"].astype(str) == a, [*key, "outcome"]]
        lb = first.loc[first["labeler"].astype(str) == b, [*key, "outcome"]]
        both = la.merge(lb, on=key, suffixes=("_a", "_b"))
        ca, cb = _codes(both["outcome_a"]), _codes(both["outcome_b"])
        task = both["task_id"].to_numpy(dtype=object).astype(str)
        k, diag = _kappa_rows(ca, cb, task, opts)
        kappa = k.get("kappa", {})
        rows.append(
            {"a": a, "b": b, "n": len(both), "n_tasks": both["task_id"].nunique()}
            | {"kappa": kappa.get("estimate", np.nan)}
            | {c: kappa.get(c, np.nan) for c in ("se", "ci_low", "ci_high", "p_value")}
            | {"method": method, "kappa_iid_se": k.get("kappa_iid", {}).get("se", np.nan)}
            | {"observed_agreement": float(np.mean(ca == cb)) if len(both) else np.nan}
            | {"ci_note": diag.get("ci_note", "")}
        )
    cols = ["a", "b", "n", "n_tasks", "kappa", "se", "ci_low", "ci_high", "p_value", "method"]
    return pd.DataFrame(rows, columns=[*cols, "kappa_iid_se", "observed_agreement", "ci_note"])


def judge_vs_gold(
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    gold: str = "majority",
    rubric: str | None = None,
    judges: Sequence[str] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    method: str = DEFAULT_METHOD,
    rng: np.random.Generator | int | None = None,
) -> GoldResult:
    """Every judge against the people: accuracy, macro P/R/F1, kappa (clustered CI), orders.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame (``task_id``, ``replicate``, ``judge``, ``rubric``, ``order``,
        ``status``, ``outcome``). Where it and ``labels`` both have ``arm_a``, ``arm_b``,
        they are part of a pair's key and every judge is scored per pair of arms.
    labels : DataFrame
        A labels table (:func:`evalstats.records.load_labels` or an adapter's labels).
    gold : str, default "majority"
        ``"majority"`` (strict majority of the labelers; pairs without one are counted in
        ``n_no_majority`` and left out) or one labeler's name.
    rubric : str, optional
        Required when the frame holds several rubrics.
    judges : sequence of str, optional
        Judges to score (default: all).
    confidence : float, default 0.95
    n_resamples : int, default 2 000
        Cluster bootstrap resamples (``method="bootstrap_percentile"`` only).
    method : str, default "atanh_jackknife_midp_blaker"
        Kappa's task-clustered interval, among :data:`CLUSTERED_METHODS`: the construction
        :func:`judge_agreement` uses between judges.
    rng : Generator, int or None

    Returns
    -------
    GoldResult

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": list("aabbccdd"), "replicate": 1, "judge": "j", "rubric": "r",
    ...     "order": ["with_first", "without_first"] * 4, "status": "ok",
    ...     "outcome": ["win", "win", "loss", "win", "tie", "tie", "loss", "loss"]})
    >>> labels = pd.DataFrame({"task_id": list("abcd"), "replicate": 1, "labeler": "ann",
    ...                        "outcome": ["win", "loss", "tie", "loss"]})
    >>> res = judge_vs_gold(frame, labels)
    >>> res.judges.set_index("statistic").loc[["accuracy", "positional_agreement"], "estimate"]
    statistic
    accuracy                0.875
    positional_agreement    0.750
    Name: estimate, dtype: float64
    """
    check_columns(frame, [*_PAIR, "judge", "rubric", "status", "outcome"])
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    f, _ = select_rubric(frame, rubric)
    g = gold_labels(labels, gold)
    with_gold = g.loc[g["gold"].notna()]
    present = sorted(f["judge"].astype(str).unique())
    judges = present if judges is None else list(judges)
    unknown = [j for j in judges if j not in present]
    if unknown:
        raise ValueError(f"judges {unknown} have no rows; present: {present}")
    has_order = "order" in f.columns and f["order"].notna().any()
    # A pair of arms is part of a labelled pair's key where frame and labels both name it.
    key = [*_PAIR, *(c for c in _ARMS if c in f.columns and c in g.columns)]
    keep_cols = [*key, "judge", "status", "outcome", *(["order"] if has_order else [])]
    m = f[keep_cols].assign(judge=f["judge"].astype(str))
    m = m.merge(with_gold[[*key, "gold"]], on=key, how="inner")
    long, diags, conf_parts = [], [], []
    gi, pi = np.divmod(np.arange(_K * _K), _K)
    for (arms, ma), judge in itertools.product(_by_arms(m), judges):
        mj = ma.loc[ma["judge"] == judge]
        ok = mj.loc[mj["status"].astype(str) == "ok"]
        gc, pc = _codes(ok["gold"]), _codes(ok["outcome"])
        table = np.bincount(gc * _K + pc, minlength=_K * _K).reshape(_K, _K)
        task = ok["task_id"].to_numpy(dtype=object).astype(str)
        rows, _ = _kappa_rows(gc, pc, task, opts)
        rows |= dict(
            zip(("accuracy", "precision", "recall", "f1"), macro_scores(table), strict=True)
        )
        rows = {k: v if isinstance(v, dict) else {"estimate": v} for k, v in rows.items()}
        head = {**arms, "judge": judge}
        diag = {**head, "n": len(ok), "n_pairs": int(ok[key].drop_duplicates().shape[0])}
        diag |= {"n_tasks": _n_distinct(task), "n_not_ok": int(len(mj) - len(ok))}
        long += _long_rows(head, GOLD_STATISTICS, rows, len(ok), diag["n_tasks"], opts.confidence)
        if has_order:
            long += _order_rows(head, ok, gc == pc, diag)
        diags.append(diag)
        conf_parts.append(
            pd.DataFrame({**head, "n": table.ravel()})
            .assign(gold=pd.Categorical.from_codes(gi, dtype=OUTCOME_DTYPE))
            .assign(predicted=pd.Categorical.from_codes(pi, dtype=OUTCOME_DTYPE))
        )
    by = [*key[2:], "judge"]
    return GoldResult(
        judges=tidy_frame(pd.DataFrame(long), by=by, diagnostics=pd.DataFrame(diags)),
        confusion=pd.concat(conf_parts, ignore_index=True)[[*by, "gold", "predicted", "n"]],
        labelers=labeler_agreement(labels, **opts.kwargs()),
        gold=g,
        gold_rule=gold,
        n_gold_pairs=len(with_gold),
        n_no_majority=int(g["gold"].isna().sum()),
        confidence=opts.confidence,
        method=method,
    )


def _order_rows(head: dict[str, Any], ok: pd.DataFrame, correct: np.ndarray, diag: dict) -> list:
    """Accuracy in each order and the positional agreement (same verdict in both orders) of
    one judge's ok judgments; ``diag`` gains ``n_pairs_both_orders``."""
    order = ok["order"].astype(object)
    rows = {}
    for o in ("with_first", "without_first"):
        sel = (order == o).to_numpy()
        rows[f"accuracy_{o}"] = float(correct[sel].mean()) if sel.any() else np.nan
    first = ok.loc[order.notna().to_numpy()].drop_duplicates([*_PAIR, "order"])
    wide = first.pivot(index=_PAIR, columns="order", values="outcome")
    both = wide.dropna() if wide.shape[1] == 2 else wide.iloc[:0]
    diag["n_pairs_both_orders"] = len(both)
    same = (both.iloc[:, 0].astype(str) == both.iloc[:, 1].astype(str)) if len(both) else None
    rows["positional_agreement"] = float(same.mean()) if same is not None else np.nan
    n_tasks = diag["n_tasks"]
    out = [
        {**head, "statistic": k, "estimate": v, "n": len(ok), "n_tasks": n_tasks}
        for k, v in rows.items()
    ]
    out[-1]["n"] = len(both)
    return out
