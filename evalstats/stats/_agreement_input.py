"""Input validation and label encoding for the agreement statistics.

Every agreement function takes its ratings in one of three forms, normalised here by
:func:`as_ratings` into one label vector per rater, aligned on the units:

* two label vectors ``(a, b)`` (rater 1's and rater 2's labels of the same units);
* a units x raters matrix (array or wide DataFrame; NaN / None = missing);
* a long DataFrame with one row per rating and ``unit=``, ``rater=``, ``rating=`` naming
  its columns (pingouin style).

The vectors are then turned into integer category codes and contingency tables, dropping
missing values. Kept apart from the numeric cores so those stay pure numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from evalstats._validate import check_columns
from evalstats.errors import DataError

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
    """Integer codes (-1 = missing) for each column over a common category list.

    With ``categories=None`` the categories are the sorted distinct non-missing labels of
    all columns (a Categorical's own category list when every column shares it).
    Labels outside an explicit ``categories`` raise ValueError.
    """
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
    """Counts of (ia - lo) * span + (ib - lo), built chunk-wise in one reused buffer.

    Chunking keeps the index buffer in cache and avoids page-faulting a fresh n-sized
    array (~30 % faster on 10 M pairs). Integer wrap-around in ``ia * span`` for huge
    labels cancels out because the final index is small and non-negative.
    """
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
    """Contingency table of two label vectors.

    Returns ``(table, categories, n_dropped)``: a ``(k, k)`` float table (rows = ``a``),
    the category labels in table order and the number of pairs dropped because either
    label was missing.
    """
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
    """Normalise any of the three input forms (see the module docstring) into :class:`Ratings`.

    >>> import pandas as pd
    >>> long = pd.DataFrame({"task": [1, 1, 2, 2], "judge": ["x", "y", "x", "y"],
    ...                      "label": ["win", "tie", "win", "win"]})
    >>> r = as_ratings(long, unit="task", rater="judge", rating="label")
    >>> r.raters, [c.tolist() for c in r.columns]
    (['x', 'y'], [['win', 'win'], ['tie', 'win']])
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
