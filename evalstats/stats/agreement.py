"""Agreement: between judges, between judges and people, among many raters.

The coefficients (percent agreement, Cohen's kappa, Scott's pi, Gwet's AC1/AC2, PABAK,
Fleiss' kappa, Krippendorff's alpha) with IID SEs or task-clustered intervals, and their
frame-level views on a verdict frame. Conventions and studies: ``docs/methods.md``, "Agreement".
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from .._disagreement import DISAGREEMENT_TRIGGER, disagreement_counts
from .._display import ResultDisplay
from .._schema import OUTCOME_DTYPE, OUTCOMES, STATUS_DTYPE
from .._tidy import TIDY_COLUMNS, ResultFrame, tidy_frame
from .._validate import (
    check_choice,
    check_columns,
    check_confidence,
    check_n_resamples,
    check_probability,
)
from ..errors import DataError, ParameterError
from ..frames import select_rubric, wide_by_judge


# -- input: three forms of ratings, label codes, contingency tables ---------------------------------
def _as_1d(x: Any, name: str) -> np.ndarray | pd.Series:
    if isinstance(x, pd.Series | pd.Categorical | pd.Index):
        return x if isinstance(x, pd.Series) else pd.Series(x)
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {arr.shape}")
    return arr


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


def _split(codes: np.ndarray, columns: Sequence[Any]) -> list[np.ndarray]:
    ends = np.cumsum([0, *(len(c) for c in columns)])
    codes = np.asarray(codes, dtype=np.int64)
    return [codes[ends[i] : ends[i + 1]] for i in range(len(columns))]


def encode(
    columns: Sequence[Any], categories: list[Any] | None
) -> tuple[list[np.ndarray], list[Any]]:
    """Integer codes (-1 = missing) for each column over a common category list."""
    # Categoricals sharing one category list keep it (its full, ordered set).
    cats = [getattr(getattr(c, "dtype", None), "categories", None) for c in columns]
    if categories is None and cats and all(c is not None and c.equals(cats[0]) for c in cats):
        return [c.cat.codes.to_numpy(np.int64) for c in columns], cats[0].tolist()
    fast = _encode_ints(columns, categories)
    if fast is not None:
        return fast
    flat = pd.Series(np.concatenate([np.asarray(c, dtype=object) for c in columns]), dtype=object)
    # Homogeneous numeric input factorises and sorts much faster as a numeric dtype.
    flat = flat.infer_objects()
    missing = flat.isna().to_numpy()
    if categories is None:
        try:
            codes, uniques = pd.factorize(flat, sort=True)
        except TypeError as exc:
            raise ValueError("labels of mixed types: pass categories=") from exc
        cats = uniques.tolist()
    else:
        cats = categories
        codes = pd.Index(pd.Series(cats, dtype=object).infer_objects()).get_indexer(flat)
        unknown = (codes < 0) & ~missing
        if unknown.any():
            bad = pd.unique(flat[unknown])[:5].tolist()
            raise ValueError(f"labels {bad!r} are not among categories={cats!r}")
    return _split(codes, columns), list(cats)


def _encode_ints(
    columns: Sequence[Any], categories: list[Any] | None
) -> tuple[list[np.ndarray], list[Any]] | None:
    """:func:`encode` of all-integer columns at numpy speed, else None."""
    arrays = [c if isinstance(c, pd.Series) else np.asarray(c) for c in columns]
    if not columns or any(a.dtype.kind == "b" for a in arrays):
        return None  # booleans keep their False / True categories
    ints = []
    for a in arrays:
        if isinstance(a, pd.Series):
            if not pd.api.types.is_integer_dtype(a.dtype) or a.hasnans:
                return None
            a = a.to_numpy()
        if a.dtype.kind not in "iub":
            return None
        ints.append(a.astype(np.int64, copy=False))
    if categories is not None and not all(
        isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in categories
    ):
        return None
    flat = np.concatenate(ints)  # type: ignore[arg-type]
    if categories is None:
        lo = flat.min() if flat.size else 0
        span = int(flat.max() - lo) + 1 if flat.size else 0
        if 0 < span <= 4096:  # the values present, by one bincount instead of a sort
            present = np.bincount(flat - lo, minlength=span) > 0
            codes = (np.cumsum(present) - 1)[flat - lo]
            return _split(codes, arrays), (np.flatnonzero(present) + lo).tolist()
        uniques = np.unique(flat)
        return _split(np.searchsorted(uniques, flat), arrays), uniques.tolist()
    codes = pd.Index(np.asarray(categories, dtype=np.int64)).get_indexer(flat)
    if (codes < 0).any():
        bad = pd.unique(flat[codes < 0])[:5].tolist()
        raise ValueError(f"labels {bad!r} are not among categories={list(categories)!r}")
    return _split(codes, arrays), list(categories)


def pair_table(a: Any, b: Any, categories: Sequence[Any] | None = None):
    """Contingency table of two label vectors, its categories and the pairs dropped."""
    (ca, cb), cats = encode([a, b], check_categories(categories))
    k = len(cats)
    keep = (ca >= 0) & (cb >= 0)
    table = np.bincount(ca[keep] * k + cb[keep], minlength=k * k).reshape(k, k).astype(float)
    return table, cats, int(keep.size - np.count_nonzero(keep))


def check_table(table: Any) -> np.ndarray:
    """A square contingency table of non-negative finite counts."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1] or t.shape[0] == 0:
        raise ValueError(f"table must be a square k x k matrix, k >= 1; got shape {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError("table must hold non-negative finite counts")
    if t.sum() <= 0:
        raise ValueError("table has no observations (all counts are zero)")
    return t


def counts_from_codes(codes: list[np.ndarray], k: int) -> np.ndarray:
    """Units x categories counts of how many raters chose each category (-1 = missing)."""
    n = len(codes[0])
    c = np.stack(codes, axis=1)
    unit = np.broadcast_to(np.arange(n)[:, None], c.shape)
    ok = c >= 0
    return np.bincount(unit[ok] * k + c[ok], minlength=n * k).reshape(n, k).astype(float)


class Ratings(NamedTuple):
    """One label vector per rater, aligned on ``units``."""

    columns: list[Any]
    units: list[Any] | None


def as_ratings(
    data: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
) -> Ratings:
    """Two label vectors, a units x raters matrix or a long frame as :class:`Ratings`."""
    names = (unit, rater, rating)
    if any(n is not None for n in names):
        if b is not None:
            raise ValueError("pass either b= or unit=/rater=/rating=, not both")
        if any(n is None for n in names):
            raise ValueError("a long ratings frame needs all three of unit=, rater= and rating=")
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
        wide = data.pivot(index=unit, columns=rater, values=rating)
        return Ratings([wide[c].reset_index(drop=True) for c in wide.columns], list(wide.index))
    if b is not None:
        a, b = _as_1d(data, "a"), _as_1d(b, "b")
        if len(a) != len(b):
            raise ValueError(f"a and b must have the same length; got {len(a)} and {len(b)}")
        if len(a) == 0:
            raise ValueError("a and b are empty: agreement needs at least one rated unit")
        return Ratings([a, b], None)
    if isinstance(data, pd.DataFrame):
        cols, units = [data[c] for c in data.columns], list(data.index)
    else:
        arr = data if isinstance(data, np.ndarray) else np.asarray(data, dtype=object)
        if arr.ndim != 2:
            raise ValueError(f"ratings has {arr.ndim} dimension(s); pass (a, b) or units x raters")
        cols, units = [arr[:, j] for j in range(arr.shape[1])], None
    if len(cols) == 0 or len(cols[0]) == 0:
        raise ValueError("ratings is empty")
    return Ratings(cols, units)


# -- numeric cores: two raters' k x k tables, many raters' counts ----------------------------------
def weight_matrix(weights: str | np.ndarray | None, k: int) -> np.ndarray:
    """``weights`` (None, "linear", "quadratic" or a matrix) as a (k, k) weight matrix."""
    if weights is None:
        return np.eye(k)
    if isinstance(weights, str):
        if weights not in ("linear", "quadratic"):
            raise ValueError(
                f"weights must be None, 'linear', 'quadratic' or a matrix: {weights!r}"
            )
        if k < 2:
            return np.ones((k, k))  # one category: every pair agrees fully
        i = np.arange(k)
        d = np.abs(i[:, None] - i[None, :]) / (k - 1)
        return 1.0 - d if weights == "linear" else 1.0 - d**2
    w = np.asarray(weights, dtype=float)
    if w.shape != (k, k):
        raise ValueError(f"weights matrix must have shape ({k}, {k}); got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights matrix must be finite")
    if not np.allclose(w, w.T):
        raise ValueError("weights matrix must be symmetric (agreement weights)")
    if not np.allclose(np.diag(w), 1.0):
        raise ValueError("weights matrix must hold agreement weights: ones on the diagonal")
    return w


class Estimate(NamedTuple):
    """A coefficient's arrays (or floats); ``se0``: Cohen's SE under no agreement beyond chance."""

    estimate: np.ndarray
    se: np.ndarray
    n: np.ndarray
    se0: np.ndarray | None = None


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
    """Chance agreement of ``kind`` from the row and column shares ``r``, ``c``."""
    pi = (r + c) / 2.0
    if kind == "cohen":
        return np.einsum("...i,ij,...j->...", r, w, c)
    if kind in ("scott", "kripp", "fleiss"):
        return np.einsum("...i,ij,...j->...", pi, w, pi)
    if kind == "gwet":
        return _gwet_scale(w) * np.sum(pi * (1.0 - pi), axis=-1)
    if kind == "bp":
        return np.full_like(po, w.sum() / w.shape[0] ** 2)
    return np.zeros_like(po)  # "pa"


def _table_shares(tables: np.ndarray, w: np.ndarray, kind: str):
    """Cell shares, row and column shares, n, p_o and p_e of ``(..., k, k)`` tables."""
    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = t / n[..., None, None]
    r, c = p.sum(axis=-1), p.sum(axis=-2)
    po = np.einsum("...ij,ij->...", p, w)
    return p, r, c, n, po, _chance(r, c, w, kind, po)


def table_stats(tables: np.ndarray, w: np.ndarray, kind: str) -> Estimate:
    """The two-rater coefficient ``kind`` of ``(..., k, k)`` tables and its SE."""
    p, r, c, n, po, pe = _table_shares(tables, w, kind)
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
        return Estimate(coef, _sqrt_var(var), n, se0)
    if kind in ("bp", "pa"):
        var = _div(np.einsum("...ij,ij->...", p, w**2) - po**2, den)
        return Estimate(coef, _sqrt_var(var), n)
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
        return Estimate(_div(pa - pe, 1.0 - pe), se, n)
    return Estimate(coef, se, n)


def _gwet_family(counts: np.ndarray, w: np.ndarray, kind: str) -> Estimate:
    """Fleiss' kappa, Gwet's AC1/AC2, Brennan-Prediger or percent agreement of many raters."""
    counts = counts[counts.sum(axis=1) > 0]
    n, q = counts.shape
    r = counts.sum(axis=1)
    sum_q = np.sum(counts * (counts @ w.T - 1.0), axis=1)
    two = r >= 2
    n2 = int(np.count_nonzero(two))
    pa_i = np.where(two, sum_q / np.where(two, r * (r - 1.0), 1.0), 0.0)
    pa = pa_i[two].sum() / n2 if n2 else np.nan
    pi = np.mean(counts / r[:, None], axis=0)
    pe_i = None
    if kind == "fleiss":
        pe = float(pi @ w @ pi)
        pe_i = counts @ ((w @ pi + w.T @ pi) / 2.0) / r
    elif kind == "gwet":
        scale = _gwet_scale(w)
        pe = float(scale * np.sum(pi * (1.0 - pi)))
        pe_i = scale * (counts @ (1.0 - pi)) / r
    else:
        pe = w.sum() / q**2 if kind == "bp" else 0.0
    coef = _div(pa - pe, 1.0 - pe)
    coef_i = (n / n2) * (pa_i - pe * two) / (1.0 - pe) if n2 else np.full(n, np.nan)
    if pe_i is not None:
        coef_i = coef_i - 2.0 * (1.0 - coef) * (pe_i - pe) / (1.0 - pe)
    var = _div(np.sum((coef_i - coef) ** 2), n * (n - 1.0))
    return Estimate(float(coef), float(_sqrt_var(var)), n)


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
BOUNDS = ("clopper_pearson", "mid_p", "mid_p_blaker")
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
    """Invert :func:`_blaker_p` (each end one-sided where the other side cannot reject)."""
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


def proportion_bounds(x, n, alpha: float, bound: str = "clopper_pearson"):
    """``(low, high)`` :data:`BOUNDS` of a proportion ``x`` of ``n`` (fractional allowed)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    if bound == "mid_p":
        zero, one = np.zeros(x.shape), np.ones(x.shape)
        lo = _bisect(lambda p: mid_upper_tail(p, x, n) - alpha / 2.0, zero, one)
        hi = _bisect(lambda p: mid_upper_tail(p, x, n) - (1.0 - alpha / 2.0), zero, one)
    elif bound == "mid_p_blaker":
        lo, hi = _blaker(x, n, alpha)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            lo, hi = proportion_confint(x, n, alpha=alpha, method="beta")
    return np.where(x <= 0, 0.0, lo), np.where(x >= n, 1.0, hi)


def proportion_p(p0, x, n, bound: str = "clopper_pearson"):
    """Two-sided p-value of ``p = p0`` given ``x`` of ``n`` (Clopper-Pearson's or Blaker's)."""
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    if bound == "mid_p_blaker":
        return _blaker_p(p0, x, n)
    with np.errstate(invalid="ignore"):
        upper = np.where(x > 0, stats.beta.cdf(p0, np.maximum(x, 1e-300), n - x + 1), 1.0)
        lower = np.where(x < n, stats.beta.sf(p0, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    return np.minimum(1.0, 2.0 * np.minimum(upper, lower))


# -- result classes ---------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return repr(v)


@dataclass(frozen=True, repr=False)
class _Result(ResultDisplay):
    """The fields, one-line repr and tidy row shared by the agreement results."""

    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    method: str
    note: str | None

    _headline: ClassVar[tuple[str, ...]] = ()
    _statistic: ClassVar[str] = ""

    @property
    def statistic(self) -> str:
        """The coefficient's name in a tidy frame's ``statistic`` column."""
        return getattr(self, "coefficient", None) or self._statistic

    @property
    def df(self) -> float:
        """Degrees of freedom of the t quantile (NaN for a normal-quantile interval)."""
        return float(self.n - 1) if self.method == "wald_t" and self.n > 1 else float("nan")

    def to_frame(self) -> ResultFrame:
        """The result as one tidy row; the other fields on ``.diagnostics`` (tuples joined)."""
        row: dict[str, Any] = {"statistic": self.statistic, "df": self.df, "n_tasks": np.nan}
        extra: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in TIDY_COLUMNS:
                row[f.name] = v
            elif f.name == "level":  # Krippendorff's level of measurement, not the interval's
                extra["level_of_measurement"] = v
            elif f.name != "coefficient":
                extra[f.name] = ", ".join(map(str, v)) if isinstance(v, tuple) else v
        return tidy_frame(pd.DataFrame([row]), diagnostics=pd.DataFrame([extra]))

    def __repr__(self) -> str:
        body = ", ".join(f"{k}={_fmt(getattr(self, k))}" for k in self._headline)
        ci = f"{round(100 * self.confidence)}% CI [{_fmt(self.ci_low)}, {_fmt(self.ci_high)}]"
        note = f", note={self.note!r}" if getattr(self, "note", None) else ""
        return f"{type(self).__name__}({body}, {ci}{note})"


@dataclass(frozen=True, repr=False)
class _TableResult(_Result):
    k: int
    weights: str | None
    categories: tuple[Any, ...]
    n_dropped: int


@dataclass(frozen=True, repr=False)
class CohenKappaResult(_TableResult):
    """Cohen's (weighted) kappa for two raters. ``se`` is the non-null ASE behind the interval,
    ``se0`` the ASE under H0 behind ``z`` and ``p_value`` (as SAS PROC FREQ)."""

    se0: float

    _headline = ("estimate", "se", "se0", "z", "p_value", "n", "k", "weights")
    _statistic = "cohen_kappa"

    kappa = property(lambda self: self.estimate)


@dataclass(frozen=True, repr=False)
class AgreementResult(_TableResult):
    """A chance-corrected agreement coefficient (or percent agreement) with Gwet's SE."""

    coefficient: str
    n_raters: int

    _headline = ("coefficient", "estimate", "se", "n", "k", "n_raters", "weights")


@dataclass(frozen=True, repr=False)
class FleissKappaResult(_Result):
    """Fleiss' kappa for many raters. ``se0``, ``z``, ``p_value``: Fleiss, Nee & Landis's H0
    test, and per-category kappas (nan unless raters per subject are constant)."""

    se0: float
    n_raters: int | None
    categories: tuple[Any, ...]
    category_kappa: tuple[float, ...]
    category_se0: tuple[float, ...]
    category_z: tuple[float, ...]
    category_p_value: tuple[float, ...]

    _headline = ("estimate", "se0", "z", "p_value", "se", "n", "n_raters")
    _statistic = "fleiss_kappa"

    kappa = property(lambda self: self.estimate)
    n_subjects = property(lambda self: self.n)


@dataclass(frozen=True, repr=False)
class KrippendorffAlphaResult(_Result):
    """Krippendorff's alpha with Gwet's linearised SE (nan for the ordinal level). ``n`` counts
    the pairable units, ``level`` is the level of measurement."""

    level: str
    n_raters: int
    values: tuple[Any, ...]

    _headline = ("estimate", "se", "level", "n", "n_raters")
    _statistic = "krippendorff_alpha"

    alpha = property(lambda self: self.estimate)
    n_units = property(lambda self: self.n)


class Coefficient(NamedTuple):
    """A coefficient's name, its two-rater and many-rater formulas' kinds, its result class."""

    statistic: str
    table: str | None
    counts: str | None
    result: type


#: Public function name -> its :class:`Coefficient`; SEs and oracles: ``docs/methods.md``.
COEFFICIENTS: dict[str, Coefficient] = {
    "percent_agreement": Coefficient("percent_agreement", "pa", "pa", AgreementResult),
    "cohen_kappa": Coefficient("cohen_kappa", "cohen", None, CohenKappaResult),
    "scott_pi": Coefficient("scott_pi", "scott", "fleiss", AgreementResult),
    "gwet_ac1": Coefficient("gwet_ac1", "gwet", "gwet", AgreementResult),
    "pabak": Coefficient("brennan_prediger", "bp", "bp", AgreementResult),
    "fleiss_kappa": Coefficient("fleiss_kappa", None, "fleiss", FleissKappaResult),
    "krippendorff_alpha": Coefficient(
        "krippendorff_alpha", "kripp", "krippendorff", KrippendorffAlphaResult
    ),
}


# -- from checked input to a result -----------------------------------------------------------------
Weights = Literal["linear", "quadratic"] | np.ndarray | None
IntervalMethod = Literal["wald_z", "wald_t"]
UNDEFINED = "undefined: chance agreement is 1 (a single category was used)"
LEVELS = ("nominal", "ordinal", "interval", "ratio")
_WALD = ("wald_z", "wald_t")


def weights_name(weights: Weights) -> str | None:
    return weights if weights is None or isinstance(weights, str) else "custom"


def _make(cls, est, se, n, confidence, method, notes, *, se_test=None, **fields):
    """A ``cls`` result: Wald interval on ``se`` (upper end at most 1) and test of 0 on ``se``
    (or a normal test on ``se_test``), t(n-1) quantiles with ``"wald_t"``."""
    if method == "wald_t":
        q = stats.t.ppf(0.5 + confidence / 2.0, n - 1) if n > 1 else np.nan
    else:
        q = stats.norm.ppf(0.5 + confidence / 2.0)
    lo, hi = float(est - q * se), float(est + q * se)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = float(np.divide(est, se if se_test is None else se_test))
    t_test = method == "wald_t" and n > 1 and se_test is None
    p = float(2.0 * (stats.t.sf(abs(z), n - 1) if t_test else stats.norm.sf(abs(z))))
    hi = hi if math.isnan(hi) else min(1.0, hi)
    return cls(est, se, z, p, lo, hi, n, confidence, method, "; ".join(notes) or None, **fields)


def _result(name, s, weights, categories, confidence, method, n_raters=2, n_dropped=0):
    """The result of coefficient ``name`` from its :class:`Estimate` or a k x k table ``s``."""
    spec = COEFFICIENTS[name]
    if not isinstance(s, Estimate):
        s = table_stats(s, weight_matrix(weights, len(categories)), spec.table)  # type: ignore[arg-type]
    est, se, n = float(s.estimate), float(s.se), int(round(float(s.n)))
    cohen = spec.result is CohenKappaResult
    notes = [f"{'kappa' if cohen else spec.statistic} {UNDEFINED}"] if math.isnan(est) else []
    fields = dict(k=len(categories), weights=weights_name(weights), categories=tuple(categories))
    fields["n_dropped"] = int(n_dropped)
    if cohen:  # the H0 test is a normal test on se0, as SAS's
        se0 = float(s.se0)
        return _make(
            CohenKappaResult, est, se, n, confidence, method, notes, se_test=se0, se0=se0, **fields
        )
    fields |= {"coefficient": spec.statistic, "n_raters": n_raters}
    return _make(AgreementResult, est, se, n, confidence, method, notes, **fields)


def _value_counts(columns: list[Any], level: str) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of the raters' columns and the units x values counts."""
    try:
        x = np.column_stack(
            [pd.to_numeric(pd.Series(c)).to_numpy(float, na_value=np.nan) for c in columns]
        )
    except (TypeError, ValueError) as exc:
        if level != "nominal":
            raise ValueError(f"{level}-level alpha needs numeric codes") from exc
        # Nominal alpha only compares labels for equality: any labels become category codes.
        x = np.column_stack(encode(columns, None)[0]).astype(float)
        x[x < 0] = np.nan
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


def _agreement(name: str, r: Ratings, weights, categories, confidence, method) -> Any:
    """Coefficient ``name``: its table formulas for two raters, its count formulas for more."""
    if len(r.columns) < 2:
        raise ValueError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    confidence = check_confidence(confidence)
    method = check_choice(method, "method", _WALD)
    if len(r.columns) == 2:
        table, cats, n_dropped = pair_table(*r.columns, categories)
        if table.sum() == 0:
            raise ValueError("no unit has labels from both raters (every pair has a missing label)")
        return _result(name, table, weights, cats, confidence, method, n_dropped=n_dropped)
    kind = COEFFICIENTS[name].counts
    if kind is None:
        raise ValueError(f"{name} compares two raters; got {len(r.columns)} (see fleiss_kappa)")
    codes, cats = encode(r.columns, check_categories(categories))
    counts = counts_from_codes(codes, len(cats))
    if not np.any(counts.sum(axis=1) >= 2):
        raise ValueError("no unit has ratings from two or more raters")
    s = _gwet_family(counts, weight_matrix(weights, len(cats)), kind)
    return _result(name, s, weights, cats, confidence, method, n_raters=len(r.columns))


# -- the IID coefficients (public) ------------------------------------------------------------------
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
        Category set and order; unused categories keep their row and column.

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
    weights, confidence, method
        As in :func:`cohen_kappa`.
    categories : sequence, optional
        Labels of the rows/columns (default: the DataFrame index, else 0..k-1).
    n_dropped : int
        Pairs dropped upstream for missing labels, recorded in the result.

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
    method = check_choice(method, "method", _WALD)
    k = t.shape[0]
    cats = tuple(range(k)) if categories is None else tuple(categories)
    if len(cats) != k:
        raise ValueError(f"{len(cats)} categories given for a {k} x {k} table")
    return _result("cohen_kappa", t, weights, cats, confidence, method, n_dropped=n_dropped)


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
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None = missing)
        or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    weights : None, "linear", "quadratic" or (k, k) array
        ``1 - |i-j|/(k-1)``, ``1 - (i-j)^2/(k-1)^2`` or a symmetric matrix, ones on the diagonal.
    categories : sequence, optional
        Category set and order (default: the sorted labels, or a shared Categorical's).
    confidence : float
        Confidence level of the Wald interval.
    method : {"wald_z", "wald_t"}
        Normal (SAS) or t(n-1) (Gwet's irrCAC) quantile of the interval.

    Returns
    -------
    CohenKappaResult
        Pairs with a missing label dropped (``n_dropped``); nan with a ``note`` if p_e = 1.

    Examples
    --------
    >>> res = cohen_kappa(["win", "tie", "tie", "loss", "win"], ["win", "tie", "loss", "loss", "win"])
    >>> round(res.estimate, 4), res.n
    (0.7059, 5)
    """
    r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    return _agreement("cohen_kappa", r, weights, categories, confidence, method)


def _label_coefficient(name: str, summary: str, call: str, result: str):
    """The public function of coefficient ``name``, with :func:`cohen_kappa`'s signature."""

    def fn(
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
        r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
        return _agreement(name, r, weights, categories, confidence, method)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"""{summary}

    Parameters
    ----------
    ratings, b, unit, rater, rating, weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> {call}
    {result}
    """
    return fn


scott_pi = _label_coefficient(
    "scott_pi",
    "Scott's pi (chance from the pooled margins), with Gwet's SE (many raters: Fleiss' kappa).",
    "round(scott_pi([1, 1, 2, 2], [1, 2, 2, 2]).estimate, 4)",
    "0.4667",
)
percent_agreement = _label_coefficient(
    "percent_agreement",
    "(Weighted) percent agreement, with Gwet's SE (many raters: mean share of agreeing pairs).",
    "percent_agreement([1, 1, 2, 2], [1, 2, 2, 2]).estimate",
    "0.75",
)
pabak = _label_coefficient(
    "pabak",
    "PABAK / Brennan-Prediger: ``(k * p_o - 1) / (k - 1)`` for k categories, with Gwet's SE.\n\n"
    "    Weighted: ``(p_o - T/k^2) / (1 - T/k^2)``, T the weights' sum.",
    "pabak([1, 1, 2, 2], [1, 2, 2, 2]).estimate",
    "0.5",
)
gwet_ac1 = _label_coefficient(
    "gwet_ac1",
    "Gwet's AC1 (unweighted) / AC2 (weighted) with Gwet's SE.",
    "round(gwet_ac1([1, 1, 2, 2, 1], [1, 2, 2, 2, 1]).estimate, 4)",
    "0.6",
)


def two_rater_agreement(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> ResultFrame:
    """Every two-rater coefficient of a k x k table in one tidy frame.

    Parameters
    ----------
    table : array-like or DataFrame, shape (k, k)
    weights, confidence, method
        As in :func:`cohen_kappa`.

    Returns
    -------
    ResultFrame
        One row per coefficient (Cohen's ``p_value`` is its H0 test).

    Examples
    --------
    >>> df = two_rater_agreement([[13, 0, 0], [0, 20, 7], [0, 4, 56]], method="wald_t")
    >>> df.set_index("statistic").loc["gwet_ac1", "estimate"].round(4)
    np.float64(0.8493)
    """
    t = check_table(table)
    confidence = check_confidence(confidence)
    method = check_choice(method, "method", _WALD)
    cats = list(table.index) if isinstance(table, pd.DataFrame) else list(range(t.shape[0]))
    frames = [
        _result(name, t, weights, cats, confidence, method).to_frame()
        for name, spec in COEFFICIENTS.items()
        if spec.table is not None
    ]
    diagnostics = pd.concat([f.diagnostics for f in frames], ignore_index=True)
    return tidy_frame(pd.concat(frames, ignore_index=True), diagnostics=diagnostics)


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
    ratings, b, unit, rater, rating, categories, confidence, method
        As in :func:`cohen_kappa`.
    counts : array-like or DataFrame, shape (subjects, categories), optional
        Instead of ``ratings``: :func:`ratings_to_counts` (unequal raters: H0 fields nan).

    Examples
    --------
    >>> res = fleiss_kappa(counts=[[3, 0], [0, 3], [2, 1], [3, 0]])
    >>> round(res.estimate, 4), round(res.category_kappa[0], 4)
    (0.625, 0.625)
    """
    if (ratings is None) == (counts is None):
        raise ValueError("pass either ratings (labels) or counts= (subjects x categories)")
    if counts is None:
        r = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
        codes, names = encode(r.columns, check_categories(categories))
        counts = counts_from_codes(codes, len(names))
    else:
        if b is not None or unit is not None or rater is not None or rating is not None:
            raise ValueError("counts= takes no b=, unit=, rater= or rating=")
        names = list(counts.columns) if isinstance(counts, pd.DataFrame) else None
        counts = np.asarray(counts, dtype=float)
        if counts.ndim != 2 or 0 in counts.shape:
            raise ValueError(f"counts must be a subjects x categories matrix; got {counts.shape}")
        if not np.all(np.isfinite(counts)) or np.any((counts < 0) | (counts != np.round(counts))):
            raise ValueError("counts must hold non-negative integers")
        names = list(range(counts.shape[1])) if names is None else names
    confidence = check_confidence(confidence)
    method = check_choice(method, "method", _WALD)
    rated = counts.sum(axis=1)
    if not np.any(rated >= 2):
        raise ValueError("Fleiss' kappa needs at least one subject with two or more ratings")
    c = counts[rated > 0]
    (n, q), m = c.shape, c.sum(axis=1)
    s = _gwet_family(c, np.eye(q), "fleiss")
    se0, cat_kappa, cat_se0, n_raters, notes = (
        np.nan,
        np.full(q, np.nan),
        np.full(q, np.nan),
        None,
        [],
    )
    if np.all(m == m[0]):  # Fleiss, Nee & Landis's H0 quantities (a constant m raters)
        m, n_raters = m[0], int(m[0])
        p = c.sum(axis=0) / (n * m)
        pq = p * (1.0 - p)
        spq = pq.sum()
        var0 = 2.0 / (n * m * (m - 1.0)) * _div(spq**2 - np.sum(pq * (1.0 - 2.0 * p)), spq**2)
        se0 = float(_sqrt_var(var0))
        cat_kappa = 1.0 - _div(np.sum(c * (m - c), axis=0), n * m * (m - 1.0) * pq)
        cat_se0 = np.full(q, np.sqrt(2.0 / (n * m * (m - 1.0))))
    else:
        notes.append("subjects have different numbers of raters: H0 SE and category kappas nan")
    if math.isnan(s.estimate):
        notes.append(f"kappa {UNDEFINED}")
    with np.errstate(divide="ignore", invalid="ignore"):
        cat_z = cat_kappa / cat_se0
    cat = zip(
        ("kappa", "se0", "z", "p_value"),
        (cat_kappa, cat_se0, cat_z, 2.0 * stats.norm.sf(np.abs(cat_z))),
        strict=True,
    )
    fields = {f"category_{k}": tuple(v.tolist()) for k, v in cat}
    fields |= {"se0": se0, "n_raters": n_raters, "categories": tuple(names)}
    return _make(
        FleissKappaResult, s.estimate, s.se, s.n, confidence, method, notes, se_test=se0, **fields
    )


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
    """Krippendorff's alpha of units x raters ratings (NaN = missing), with Gwet's SE.

    Units with fewer than two values are ignored; the SE is nan for the ordinal level.

    Parameters
    ----------
    ratings, b, unit, rater, rating, confidence, method
        As in :func:`cohen_kappa` (the ``krippendorff`` package's raters x units: ``.T``).
    level : {"nominal", "ordinal", "interval", "ratio"}
        "nominal" takes any labels, the others numeric codes ("ratio": values >= 0).

    Examples
    --------
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5]]
    >>> round(krippendorff_alpha(np.transpose(data), level="interval").estimate, 4)
    0.9428
    """
    level = check_choice(level, "level", LEVELS)
    confidence = check_confidence(confidence)
    method = check_choice(method, "method", _WALD)
    columns = as_ratings(ratings, b, unit=unit, rater=rater, rating=rating).columns
    values, counts = _value_counts(columns, level)
    q = len(values)
    s = kripp_cluster_stats(np.zeros(len(counts), np.int64), counts, 1)[0]
    alpha = float(coefficient(partial(kripp_parts, values=values, level=level), s))
    delta = delta_matrix(values.astype(float), level, s[: q * q].reshape(q, q).sum(axis=1))
    se, notes = float("nan"), []
    if level == "ordinal":
        notes.append("no SE for the ordinal level (its metric depends on the data)")
    elif q >= 2 and delta.max() != 0:
        se = krippendorff_gwet_se(counts, 1.0 - delta / delta.max())
    if math.isnan(alpha):
        notes.append("alpha undefined: no variation among the pairable values")
    fields = dict(level=level, n_raters=len(columns), values=tuple(values.tolist()))
    return _make(
        KrippendorffAlphaResult, alpha, se, int(s[-1]), confidence, method, notes, **fields
    )


# -- task-clustered intervals: per-task sums and their coefficients ---------------------------------
#: Interval constructions, in the order the coverage study prints them.
METHODS = (
    "atanh_jackknife",
    "exact_agreement",
    "atanh_jackknife_exact",
    "atanh_jackknife_midp_blaker",
    "bootstrap_percentile",
)
#: The atanh jackknife joined with a bound of the observed agreement: method -> bound.
JOINED = {"atanh_jackknife_exact": "clopper_pearson", "atanh_jackknife_midp_blaker": "mid_p_blaker"}
#: Below this many effective disagreeing units the joined methods take in the bound.
EXACT_BELOW = 10.0

Parts = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def table_cluster_stats(cluster: np.ndarray, a: np.ndarray, b: np.ndarray, k: int, n_clusters: int):
    """(C, k*k) contingency counts per cluster from integer codes."""
    flat = (cluster * k + a) * k + b
    return np.bincount(flat, minlength=n_clusters * k * k).reshape(n_clusters, k * k).astype(float)


def table_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed flattened tables ``(..., k*k)``."""
    k = w.shape[0]
    *_, n, po, pe = _table_shares(np.reshape(s, (*np.shape(s)[:-1], k, k)), w, kind)
    return po, pe, n


def _sum_by_cluster(cluster: np.ndarray, per_unit: np.ndarray, n_clusters: int) -> np.ndarray:
    """(C, d) sums of the units' rows by cluster (a stable sort and one ``reduceat``)."""
    out = np.zeros((n_clusters, per_unit.shape[1]))
    if len(cluster) == 0:
        return out
    order = np.argsort(cluster, kind="stable")
    sorted_cl = cluster[order]
    starts = np.flatnonzero(np.r_[True, sorted_cl[1:] != sorted_cl[:-1]])
    out[sorted_cl[starts]] = np.add.reduceat(per_unit[order], starts, axis=0)
    return out


def multi_cluster_stats(cluster: np.ndarray, counts: np.ndarray, w: np.ndarray, n_clusters: int):
    """(C, q + 3) per-cluster sums: pairwise agreement, units rated twice, rated, shares."""
    r = counts.sum(axis=1)
    rated = r > 0
    two = r >= 2
    sum_q = np.sum(counts * (counts @ w.T - 1.0), axis=1)
    pa_i = np.where(two, sum_q / np.where(two, r * (r - 1.0), 1.0), 0.0)
    share = np.where(rated[:, None], counts / np.where(rated, r, 1.0)[:, None], 0.0)
    per_unit = np.column_stack([pa_i, two, rated, share]).astype(float)
    return _sum_by_cluster(cluster, per_unit, n_clusters)


def multi_parts(s: np.ndarray, w: np.ndarray, kind: str):
    """``(p_o, p_e, n)`` of summed multi-rater statistics ``(..., q + 3)``."""
    s = np.asarray(s, dtype=float)
    po = _div(s[..., 0], s[..., 1])
    pi = _div(s[..., 3:], s[..., 2][..., None])
    return po, _chance(pi, pi, w, kind, po), s[..., 1]


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
    zero = np.zeros((*n_c.shape[:-1], 1))  # ordinal
    cum = np.concatenate([zero, np.cumsum(n_c, axis=-1)], axis=-1)
    i = np.arange(q)
    lo = np.minimum(i[:, None], i[None, :])
    hi = np.maximum(i[:, None], i[None, :])
    between = cum[..., hi + 1] - cum[..., lo]
    return (between - (n_c[..., :, None] + n_c[..., None, :]) / 2.0) ** 2


def kripp_parts(s: np.ndarray, values: np.ndarray, level: str):
    """``(1 - D_o / max delta, 1 - D_e / max delta, pairable units)`` of coincidence sums."""
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
    est, vals = fn(total), fn(loo)
    with np.errstate(invalid="ignore"):
        dev = vals - vals.mean(axis=-1, keepdims=True)
        se = np.sqrt((c - 1.0) / c * np.sum(dev**2, axis=-1))
    return est, se


def _exact(po, pe, n_eff, alpha, bound):
    """The ``bound`` of the observed agreement on ``n_eff`` units, as a coefficient."""
    lo, hi = proportion_bounds(np.clip(po, 0.0, 1.0) * n_eff, n_eff, alpha, bound)
    return np.clip(_div(lo - pe, 1.0 - pe), -1.0, 1.0), np.clip(_div(hi - pe, 1.0 - pe), -1.0, 1.0)


def table_squared(w: np.ndarray) -> Parts | None:
    """:func:`cluster_intervals`' ``squared`` for weights ``w`` (None for 0 / 1 weights)."""
    w = np.asarray(w, dtype=float)
    if np.array_equal(w * w, w):
        return None
    return partial(table_parts, w=w * w, kind="pa")


def iid_ratio(po: np.ndarray, m2: np.ndarray) -> np.ndarray:
    """IID variance of the per-unit agreement over the binomial one, in (0, 1]."""
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
    unit_disagreement: float = 1.0,
    squared: Parts | None = None,
) -> ClusterIntervals:
    """Every requested interval of the coefficient of per-cluster statistics ``cs``."""
    cs = np.asarray(cs, dtype=float)
    c = cs.shape[-2]
    alpha = 1.0 - confidence
    total = cs.sum(axis=-2)
    loo = total[..., None, :] - cs
    po, pe, n = parts(total)
    est, se = _jackknife(total, loo, partial(coefficient, parts), c)
    df = np.full(est.shape, c - 1.0)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)

    def z_of(s):
        p_o, p_e, m = parts(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            shrunk = _div(p_o - p_e, 1.0 - p_e) * m / (m + 1.0)
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
    # Weighted, the floor is the IID ratio, not below the unit disagreement (a width remains).
    ratio = 1.0
    if squared is not None:
        ratio = np.maximum(iid_ratio(po, squared(total)[0]), min(unit_disagreement, 1.0))
    deff = np.clip(raw, ratio, cap)
    n_eff = n / deff
    # The join is decided on the design effect floored at 1 (the weighted floor joined too rarely).
    count = n / np.clip(raw, 1.0, cap) * (1.0 - po) / unit_disagreement
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    if "atanh_jackknife" in methods:
        out["atanh_jackknife"] = at
    if "exact_agreement" in methods:
        out["exact_agreement"] = _exact(po, pe, n_eff, alpha, "clopper_pearson")
    # Few disagreements, or no spread over tasks (a zero-width interval is no interval).
    few = (count < EXACT_BELOW) | ~(se_z > 1e-12)
    joined_p = p_value
    for name in (m for m in methods if m in JOINED):
        b = JOINED[name]
        lo, hi = _exact(po, pe, n_eff, alpha, b)
        # fmin/fmax: where one construction is undefined (nan) the other decides.
        lo, hi = np.fmin(at[0], lo), np.fmax(at[1], hi)
        out[name] = (np.where(few, lo, at[0]), np.where(few, hi, at[1]))
        # The joined interval inverts neither test alone: the larger of the two p-values.
        x = np.clip(po, 0.0, 1.0) * n_eff
        joined_p = np.where(few, np.fmax(p_value, proportion_p(pe, x, n_eff, b)), p_value)
    if "bootstrap_percentile" in methods:
        if rng is None or n_resamples < 1:
            raise ValueError("the bootstrap methods need n_resamples >= 1 and an rng")
        # Multinomial task counts (..., B, C) of a cluster bootstrap, by one bincount.
        m = int(np.prod(est.shape, dtype=np.int64)) * n_resamples
        idx = rng.integers(0, c, size=(m, c))
        flat = (np.arange(m)[:, None] * c + idx).ravel()
        w = np.bincount(flat, minlength=m * c).reshape(*est.shape, n_resamples, c).astype(float)
        boot = coefficient(parts, np.einsum("...bc,...cd->...bd", w, cs))
        with np.errstate(invalid="ignore"):
            bq = np.nanquantile(boot, [alpha / 2.0, 1.0 - alpha / 2.0], axis=-1)
        bq = np.where(np.isnan(est), np.nan, bq)
        out["bootstrap_percentile"] = (bq[0], bq[1])
    return ClusterIntervals(est, se, df, joined_p, po, pe, n, n_eff, few, out)


# -- task-clustered intervals (public) --------------------------------------------------------------
#: The interval constructions of :func:`clustered_agreement` (see :func:`cluster_intervals`).
CLUSTERED_METHODS = METHODS
DEFAULT_METHOD = "atanh_jackknife_midp_blaker"


@dataclass(frozen=True)
class _Intervals:
    """The options every task-clustered interval of one call shares."""

    confidence: float
    method: str
    n_resamples: int
    rng: np.random.Generator

    @classmethod
    def checked(cls, confidence, method, n_resamples, rng) -> _Intervals:
        check_choice(method, "method", CLUSTERED_METHODS)
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        return cls(check_confidence(confidence), method, check_n_resamples(n_resamples), rng)


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
    ratings, b
        Two raters' labels (``a``, ``b``) or a units x raters matrix (NaN / None = missing).
    cluster : array-like
        The task of each unit.
    coefficient : str or sequence of str
        Among :data:`COEFFICIENTS` (``cohen_kappa`` for two raters only); one row each.
    weights, categories, level
        As in :func:`cohen_kappa` and :func:`krippendorff_alpha`.
    confidence, method, n_resamples, rng
        ``method`` among :data:`CLUSTERED_METHODS`; ``n_resamples``, ``rng``: bootstrap only.

    Returns
    -------
    ResultFrame
        One row per coefficient (``se``: delete-one-task jackknife, ``p_value``: t test on the
        atanh scale, ``df``: tasks - 1); ``.diagnostics``: agreement, effective units, joins.

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
    """
    names = [coefficient] if isinstance(coefficient, str) else list(coefficient)
    if not names or any(c not in COEFFICIENTS for c in names):
        raise ParameterError(f"coefficient must be among {list(COEFFICIENTS)}; got {names}")
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    level = check_choice(level, "level", LEVELS)
    r = as_ratings(ratings, b)
    if len(r.columns) < 2:
        raise ParameterError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    cl = cluster.to_numpy() if isinstance(cluster, pd.Series) else np.asarray(cluster)
    if cl.ndim != 1 or len(cl) != len(r.columns[0]):
        raise ParameterError(f"cluster needs one task id per unit; got shape {cl.shape}")
    if pd.isna(cl).any():
        pos = int(np.flatnonzero(pd.isna(cl))[0])
        raise ParameterError(f"cluster has a missing task id at unit {pos}")
    rows, diags = [], []
    codes: list = []  # the label codes, encoded once for every coefficient that needs them
    kw = dict(confidence=opts.confidence, n_resamples=opts.n_resamples, rng=opts.rng)
    for name in names:
        cs, parts, squared, unit, info = _statistics(
            name, r.columns, cl, weights, level, categories, codes
        )
        res = cluster_intervals(
            cs, parts, methods=(method,), unit_disagreement=unit, squared=squared, **kw
        )
        lo, hi = res.intervals[method]
        few = bool(res.few) and method in JOINED
        head = {"statistic": COEFFICIENTS[name].statistic}
        rows.append(
            head
            | {"estimate": float(res.estimate), "se": float(res.se)}
            | {"ci_low": float(lo), "ci_high": float(hi), "p_value": float(res.p_value)}
            | {"df": float(res.df), "n": int(round(float(res.n))), "n_tasks": int(cs.shape[0])}
            | {"method": method, "confidence": opts.confidence, "ci_note": _note(res, few, method)}
        )
        diags.append(
            head
            | {"observed_agreement": float(res.observed)}
            | {"expected_agreement": float(res.expected), "n_effective": float(res.n_eff)}
            | {"exact_joined": few, "weights": info["weights"], "n_raters": len(r.columns)}
            | {"k": info["k"]}
        )
    return tidy_frame(pd.DataFrame(rows), diagnostics=pd.DataFrame(diags), extra=["ci_note"])


def _note(res: ClusterIntervals, few: bool, method: str) -> str:
    if np.isnan(res.estimate):
        return "undefined: chance agreement is 1 (one category)"
    if res.observed >= 1.0 and (method in JOINED or method == "exact_agreement"):
        name = "mid-p, Blaker's tails" if "midp" in method else "Clopper-Pearson"
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
        raise ParameterError(f"a clustered interval needs at least two tasks; got {len(uniques)}")
    return codes.astype(np.int64), len(uniques)


def _statistics(name, columns, cl, weights, level, categories, cache):
    """Per-task sums, parts, ``squared``, the unit disagreement and diagnostics of ``name``."""
    spec = COEFFICIENTS[name]
    if name == "krippendorff_alpha":
        values, counts = _value_counts(columns, level)
        q = len(values)
        keep = counts.sum(axis=1) >= 2
        g, c = _cluster_codes(cl, keep)
        cs = kripp_cluster_stats(g, counts[keep], c)
        n_c = cs[:, : q * q].sum(axis=0).reshape(q, q).sum(axis=1)
        delta = delta_matrix(values.astype(float), level, n_c)
        off = delta[delta > 0]
        unit = float(off.min() / off.max()) if off.size else 1.0
        parts = partial(kripp_parts, values=values, level=level)
        return cs, parts, None, unit, {"weights": level, "k": q}
    if not cache:
        cache.append(encode(columns, check_categories(categories)))
    codes, cats = cache[0]
    k = len(cats)
    w = np.eye(k) if name == "fleiss_kappa" else weight_matrix(weights, k)
    # The smallest disagreement that counts as one: weighted near-misses are counted whole.
    gaps = (1.0 - w)[(1.0 - w) > 1e-12]
    unit = float(gaps.min()) if gaps.size else 1.0
    info = {"weights": weights_name(weights), "k": k}
    if len(columns) == 2 and spec.table is not None:
        a, b = codes
        keep = (a >= 0) & (b >= 0)
        if not keep.any():
            raise ParameterError("no unit has labels from both raters")
        g, c = _cluster_codes(cl, keep)
        cs = table_cluster_stats(g, a[keep], b[keep], k, c)
        return cs, partial(table_parts, w=w, kind=spec.table), table_squared(w), unit, info
    if spec.counts is None:
        raise ParameterError(f"{name} compares two raters; got {len(columns)}")
    counts = counts_from_codes(codes, k)
    keep = counts.sum(axis=1) > 0
    g, c = _cluster_codes(cl, keep)
    cs = multi_cluster_stats(g, counts[keep], w, c)
    # No per-unit squares in the many-rater sums: the design effect's floor stays 1.
    return cs, partial(multi_parts, w=w, kind=spec.counts), None, unit, info


# -- judges -----------------------------------------------------------------------------------------
#: Seed 000's trigger (disagreement above 20 %), defined once in :mod:`evalstats._disagreement`.
SEED_DISAGREEMENT_TRIGGER = DISAGREEMENT_TRIGGER
_K = len(OUTCOMES)
_PAIR = ["task_id", "replicate"]
_ARMS = ("arm_a", "arm_b")
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


def _select(frame: pd.DataFrame, rubric: str | None, judges, also=("order",), least=2):
    """The rubric's rows, the rubric and the judges (at least ``least``), checked."""
    cols = (*_PAIR, "rubric", "judge", "status", "outcome", *also)
    check_columns(frame, tuple(dict.fromkeys(cols)))
    f, rubric = select_rubric(frame, rubric)
    present = sorted(f["judge"].astype(str).unique().tolist())
    judges = present if judges is None else list(judges)
    missing = [j for j in judges if j not in present]
    if missing:
        raise ValueError(f"judges {missing} have no rows for rubric {rubric!r}; present: {present}")
    if len(judges) < least:
        raise ValueError(f"agreement needs at least two judges, got {judges}")
    return f, rubric, judges


def _by_arms(f: pd.DataFrame) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The frame's pairs of arms (``arm_a``, ``arm_b`` when present) and their rows."""
    arms = [c for c in _ARMS if c in f.columns]
    if not arms:
        return [({}, f)]
    groups = f.groupby([f[c].astype(str) for c in arms], sort=True, observed=True)
    return [(dict(zip(arms, key, strict=True)), g) for key, g in groups]


def _n_distinct(values: np.ndarray) -> int:
    # By hashing: np.unique sorts (a million strings: ~0.2 s).
    return int(len(pd.unique(pd.Series(values, copy=False))))


def _n_pairs(wide: pd.DataFrame, used: np.ndarray, cluster: str) -> int:
    """Distinct (task, replicate) pairs among the ``used`` rows."""
    if "replicate" not in wide.columns:
        return int(np.count_nonzero(used))
    return int(wide.loc[used, [cluster, "replicate"]].drop_duplicates().shape[0])


def _clustered(
    a, b, task, coefficient: str, opts: _Intervals, *, weights=None, categories: Any = range(_K)
) -> dict[str, Any]:
    """:func:`clustered_agreement`'s row, or a NaN row (with the reason) on one task."""
    if _n_distinct(task) < 2:
        nan = dict.fromkeys(_CLUSTERED_FIELDS, np.nan)
        return nan | {"method": opts.method, "ci_note": "one task: no task-clustered interval"}
    kw = {"coefficient": coefficient, "weights": weights, "categories": categories}
    res = clustered_agreement(a, b, cluster=task, **kw, **vars(opts))
    (row,) = res.to_dict("records")
    return {c: row[c] for c in _CLUSTERED_FIELDS}


def _kappa_rows(
    a: np.ndarray, b: np.ndarray, task: np.ndarray, opts: _Intervals, names=("kappa",)
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Clustered rows ``names`` and ``kappa_iid`` of codes ``a`` against ``b``, diagnostics."""
    table = np.bincount(a * _K + b, minlength=_K * _K).reshape(_K, _K)
    if not table.sum():
        return {}, {}
    rows: dict[str, dict[str, Any]] = {}
    for name in sorted(names, key=lambda n: _PAIR_COEFFICIENTS[n][1] is not None):
        coef, weights = _PAIR_COEFFICIENTS[name]
        rows[name] = _clustered(a, b, task, coef, opts, weights=weights)
    k = cohen_kappa_table(table, confidence=opts.confidence)
    rows["kappa_iid"] = {"estimate": k.estimate, "se": k.se, "p_value": k.p_value}
    rows["kappa_iid"]["method"] = "iid z test (no interval)"
    diag = {"kappa_se0": k.se0, "kappa_z": k.z, "ci_note": rows["kappa"]["ci_note"]}
    return rows, diag


def _long_rows(lead, order, rows, n, n_tasks, confidence) -> list[dict[str, Any]]:
    """Tidy rows of the statistics ``order``; a row without an interval has no confidence."""
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
    """Agreement between every pair of judges (per pair of arms), each with its interval.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame; units are the (task, replicate[, order]) both judges judged ``ok``.
    judges, rubric : optional
        Judges to compare (default: all); the rubric (needed if the frame holds several).
    cluster, confidence, n_resamples, method, rng
        As in :func:`clustered_agreement`.
    threshold : float, default 0.20
        Disagreement rate above which ``trigger`` is True (the seed's rule).

    Returns
    -------
    ResultFrame
        Per judge pair the rows below, ``kappa_linear``, ``ac1``, ``pabak``; three or more
        judges add ``fleiss_kappa``, ``krippendorff_alpha`` (``judge_a == "all judges"``).

    Examples
    --------
    >>> import evalstats, tempfile
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=8, n_replicates=3, seed=1)
    >>> ds = evalstats.load_dir(sim.out_dir)
    >>> f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    >>> judge_agreement(f, rubric="with-without")["statistic"].tolist()[:4]
    ['observed_agreement', 'disagreement_rate', 'kappa', 'kappa_iid']
    """
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    threshold = check_probability(threshold, "threshold")
    # ``order`` too: the units of a rubric judged in both orders are pair-orders.
    f, rubric, judges = _select(frame, rubric, judges, also=("order", cluster))
    long: list[dict[str, Any]] = []
    diags: list[dict[str, Any]] = []
    order = ("observed_agreement", "disagreement_rate", "kappa", "kappa_iid")
    order += ("kappa_linear", "ac1", "pabak")
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
            n_tasks = _n_distinct(task)
            long += _long_rows(head, order, rows, n, n_tasks, opts.confidence)
            table = np.bincount(a[both] * _K + b[both], minlength=_K * _K).reshape(_K, _K)
            diags.append(
                {**head, "n": n, "n_pairs": _n_pairs(wide, both, cluster), "n_tasks": n_tasks}
                | {"agreements": n - disagreements, "disagreements": disagreements}
                | {"trigger": d["trigger"], **diag, "confusion": table.tolist()}
            )
        if len(judges) >= 3:  # Fleiss' kappa (units all judges rated), Krippendorff's alpha
            codes = np.column_stack([_codes(wide[j]) for j in judges]).astype(float)
            codes[codes < 0] = np.nan
            complete = ~np.isnan(codes).any(axis=1)
            task = wide[cluster].to_numpy()
            n, n_tasks = int(complete.sum()), int(wide.loc[complete, cluster].nunique())
            head = {**lead, "judge_a": "all judges", "judge_b": f"{len(judges)} judges"}
            diag = {**head, "n": n, "n_pairs": _n_pairs(wide, complete, cluster)}
            diag["n_tasks"] = n_tasks
            rows = {}
            if complete.any():
                diag["fleiss_se0"] = fleiss_kappa(codes[complete], categories=[0.0, 1.0, 2.0]).se0
                rows["fleiss_kappa"] = _clustered(
                    codes[complete], None, task[complete], "fleiss_kappa", opts
                )
            if ((~np.isnan(codes)).sum(axis=1) >= 2).any():
                rows["krippendorff_alpha"] = _clustered(
                    codes, None, task, "krippendorff_alpha", opts, categories=None
                )
            many = ("fleiss_kappa", "krippendorff_alpha")
            long += _long_rows(head, many, rows, n, n_tasks, opts.confidence)
            diags.append(diag)
    by = ["rubric", *(c for c in _ARMS if c in f.columns), "judge_a", "judge_b"]
    diagnostics = pd.DataFrame(diags)
    cols = ("n", "n_pairs", "n_tasks", "agreements", "disagreements", "trigger")
    cols += ("kappa_se0", "kappa_z", "fleiss_se0", "ci_note", "confusion")
    diagnostics = diagnostics[[*by, *(c for c in cols if c in diagnostics.columns)]]
    return tidy_frame(pd.DataFrame(long), by=by, diagnostics=diagnostics)


_SEVERITY = {"no_answer": 3, "error": 2, "invalid": 1, "ok": 0}


def consensus(
    frame: pd.DataFrame,
    rule: str = "unanimous",
    *,
    judges: Sequence[str] | None = None,
    rubric: str | None = None,
) -> pd.DataFrame:
    """One verdict per pair (and order) from several judges.

    Parameters
    ----------
    rule : {"unanimous", "majority"}
        The shared outcome of all judges, or of a strict majority; else ``tie`` (seed 000's
        doubt); too few ``ok`` judges: the most serious status, no outcome.
    judges, rubric
        As in :func:`judge_agreement`.

    Returns
    -------
    DataFrame
        A verdict frame (judge ``"consensus:<rule>"``) with ``n_judges_ok`` and ``agreed``.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": ["t1", "t1", "t2", "t2"], "replicate": 1, "order": None,
    ...     "rubric": "with-without", "judge": ["a:x", "b:y", "a:x", "b:y"],
    ...     "status": "ok", "outcome": ["win", "win", "win", "loss"]})
    >>> c = consensus(frame, "unanimous")
    >>> c[["task_id", "outcome", "agreed"]].to_numpy().tolist()
    [['t1', 'win', True], ['t2', 'tie', False]]
    """
    check_choice(rule, "rule", ("unanimous", "majority"))
    sel, rubric, judges = _select(frame, rubric, judges)
    parts = []
    for arms, f in _by_arms(sel.loc[sel["judge"].astype(str).isin(judges)]):
        # One code per verdict: the outcome (0-2) if ok, else -1 - severity; no row: an error.
        ok = (f["status"].astype(object) == "ok").to_numpy()
        severity = f["status"].astype(object).map(_SEVERITY).fillna(_SEVERITY["error"])
        value = np.where(ok, _codes(f["outcome"]), -1 - severity.to_numpy(dtype=np.int64))
        wide = wide_by_judge(f.assign(_verdict=value), value="_verdict", rubric=rubric)
        wide = wide.reindex(columns=[*wide.columns.difference(judges, sort=False), *judges])
        keys = [c for c in ("task_id", "replicate", "order") if c in wide.columns]
        cells = np.column_stack(
            [wide[j].to_numpy(dtype=np.float64, na_value=np.nan) for j in judges]
        )
        cells = np.where(np.isnan(cells), -1 - _SEVERITY["error"], cells).astype(np.int64)
        codes = np.where(cells >= 0, cells, -1)  # -1 = not ok
        sev = np.where(cells >= 0, _SEVERITY["ok"], -1 - cells)
        n_ok = (codes >= 0).sum(axis=1)
        m = len(judges)
        votes = np.stack([(codes == k).sum(axis=1) for k in range(_K)], axis=1)  # (units, K)
        top = votes.argmax(axis=1)
        agreed = votes.max(axis=1) == m
        decided = n_ok == m if rule == "unanimous" else n_ok * 2 > m
        result = np.where(agreed if rule == "unanimous" else votes.max(axis=1) * 2 > m, top, 1)
        status_names = np.array(["ok", "invalid", "error", "no_answer"], dtype=object)
        out_status = np.where(decided, "ok", status_names[np.maximum(sev.max(axis=1), 1)])
        out_outcome = np.where(decided, np.asarray(OUTCOMES, dtype=object)[result], None)
        out = wide[keys].copy()
        out["rubric"] = rubric
        out["judge"] = f"consensus:{rule}"
        out["status"] = pd.Categorical(out_status, dtype=STATUS_DTYPE)
        out["outcome"] = pd.Categorical(out_outcome, dtype=OUTCOME_DTYPE)
        out["n_judges_ok"] = n_ok
        out["agreed"] = agreed & decided
        # The pair's own columns (over_budget_arm: win_rates' arm-aware rule applies too).
        pair_cols = ["tokens_with", "tokens_without", "wall_with_s", "wall_without_s"]
        pair_cols = [c for c in (*pair_cols, "over_budget_arm") if c in f.columns]
        pair_info = f.drop_duplicates(["task_id", "replicate"])[
            ["task_id", "replicate", *pair_cols]
        ]
        out = out.merge(pair_info, on=["task_id", "replicate"], how="left")
        parts.append(out.assign(**arms))
    return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


# -- judges against people --------------------------------------------------------------------------
@dataclass(frozen=True)
class GoldResult(ResultDisplay):
    """What :func:`judge_vs_gold` returns: per-judge tidy rows, ``confusion``, ``gold``."""

    judges: pd.DataFrame
    confusion: pd.DataFrame
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
        ``task_id``, ``replicate``, ``labeler``, ``outcome`` (and ``arm_a``, ``arm_b``).
    gold : str
        ``"majority"`` or a labeler's name (their own majority over repeated labels).

    Returns
    -------
    DataFrame
        The pair's key, ``gold`` (NA without a strict majority), ``votes``, ``agreeing``.

    Examples
    --------
    >>> labels = pd.DataFrame({"task_id": ["a", "a", "a", "b", "b"], "replicate": 1,
    ...                        "labeler": ["x", "y", "z", "x", "y"],
    ...                        "outcome": ["win", "win", "tie", "win", "loss"]})
    >>> gold_labels(labels)["gold"].tolist()
    ['win', nan]
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
    votes, agreeing = counts.sum(axis=1), counts.max(axis=1)
    majority = np.where(2 * agreeing > votes, counts.argmax(axis=1), -1)
    out = pd.DataFrame(list(uniq), columns=key).assign(
        gold=pd.Categorical.from_codes(majority, dtype=OUTCOME_DTYPE),
        votes=votes,
        agreeing=agreeing,
    )
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
    macro = [float(x[present].mean()) if present.any() else float("nan") for x in (p, r, f)]
    return float(diag.sum() / n) if n else float("nan"), *macro


def labeler_agreement(
    labels: pd.DataFrame,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    method: str = DEFAULT_METHOD,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Cohen's kappa (:func:`judge_agreement`'s interval) between every two labelers.

    Parameters
    ----------
    labels : DataFrame
        A labels table; a labeler's first label of a pair counts.
    confidence, n_resamples, method, rng
        As in :func:`clustered_agreement`.

    Returns
    -------
    DataFrame
        One row per two labelers: ``a``, ``b``, ``n``, ``kappa`` and its interval.

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
    frame, labels : DataFrame
        A verdict frame and a labels table (per pair of arms where both name them).
    gold : str, default "majority"
        As in :func:`gold_labels` (pairs without a gold label are left out).
    rubric, judges, confidence, n_resamples, method, rng
        As in :func:`judge_agreement`.

    Returns
    -------
    GoldResult
        ``judges``: per judge tidy rows; ``confusion``; ``gold``; counts of gold pairs.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": list("aabbccdd"), "replicate": 1, "judge": "j", "rubric": "r",
    ...     "order": ["with_first", "without_first"] * 4, "status": "ok",
    ...     "outcome": ["win", "win", "loss", "win", "tie", "tie", "loss", "loss"]})
    >>> labels = pd.DataFrame({"task_id": list("abcd"), "replicate": 1, "labeler": "ann",
    ...                        "outcome": ["win", "loss", "tie", "loss"]})
    >>> judge_vs_gold(frame, labels).judges.set_index("statistic")["estimate"]["accuracy"]
    np.float64(0.875)
    """
    opts = _Intervals.checked(confidence, method, n_resamples, rng)
    f, _, judges = _select(frame, rubric, judges, also=(), least=0)
    g = gold_labels(labels, gold)
    with_gold = g.loc[g["gold"].notna()]
    has_order = "order" in f.columns and f["order"].notna().any()
    # A pair of arms is part of a labelled pair's key where frame and labels both name it.
    key = [*_PAIR, *(c for c in _ARMS if c in f.columns and c in g.columns)]
    keep_cols = [*key, "judge", "status", "outcome", *(["order"] if has_order else [])]
    m = f[keep_cols].assign(judge=f["judge"].astype(str))
    m = m.merge(with_gold[[*key, "gold"]], on=key, how="inner")
    long, diags, conf_parts = [], [], []
    gi, pi = np.divmod(np.arange(_K * _K), _K)
    names = ("accuracy", "precision", "recall", "f1", "kappa", "kappa_iid")
    for (arms, ma), judge in itertools.product(_by_arms(m), judges):
        mj = ma.loc[ma["judge"] == judge]
        ok = mj.loc[mj["status"].astype(str) == "ok"]
        gc, pc = _codes(ok["gold"]), _codes(ok["outcome"])
        table = np.bincount(gc * _K + pc, minlength=_K * _K).reshape(_K, _K)
        task = ok["task_id"].to_numpy(dtype=object).astype(str)
        rows, _ = _kappa_rows(gc, pc, task, opts)
        for name, v in zip(names[:4], macro_scores(table), strict=True):
            rows[name] = {"estimate": v}
        head = {**arms, "judge": judge}
        diag = {**head, "n": len(ok), "n_pairs": int(ok[key].drop_duplicates().shape[0])}
        diag |= {"n_tasks": _n_distinct(task), "n_not_ok": int(len(mj) - len(ok))}
        long += _long_rows(head, names, rows, len(ok), diag["n_tasks"], opts.confidence)
        if has_order:  # the accuracy in each order and the positional agreement
            order, acc = ok["order"].astype(object), {}
            for o in ("with_first", "without_first"):
                sel = (order == o).to_numpy()
                acc[f"accuracy_{o}"] = float((gc == pc)[sel].mean()) if sel.any() else np.nan
            first = ok.loc[order.notna().to_numpy()].drop_duplicates([*_PAIR, "order"])
            wide = first.pivot(index=_PAIR, columns="order", values="outcome")
            both = wide.dropna() if wide.shape[1] == 2 else wide.iloc[:0]
            diag["n_pairs_both_orders"] = len(both)
            same = (
                (both.iloc[:, 0].astype(str) == both.iloc[:, 1].astype(str)) if len(both) else None
            )
            acc["positional_agreement"] = float(same.mean()) if same is not None else np.nan
            long += [
                {**head, "statistic": k, "estimate": v, "n": len(ok), "n_tasks": diag["n_tasks"]}
                for k, v in acc.items()
            ]
            long[-1]["n"] = len(both)
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
        gold=g,
        gold_rule=gold,
        n_gold_pairs=len(with_gold),
        n_no_majority=int(g["gold"].isna().sum()),
        confidence=opts.confidence,
        method=method,
    )
