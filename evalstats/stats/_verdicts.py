"""Verdict rows as integer codes and per-(group, task) counts: the input side of the rates.

Shared by :func:`~evalstats.stats.win_rates` and :func:`~evalstats.stats.position_bias`;
keys are factorised once and combined into integers, which is several times faster than a
pandas groupby on the small frames a report makes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalstats._schema import OUTCOMES, STATUSES
from evalstats._validate import check_columns
from evalstats.errors import DataError

# Row categories, in the order of the per-cluster count columns.
CATEGORIES = ("loss", "tie", "win", "no_answer", "invalid", "error")
LOSS, TIE, WIN, NO_ANSWER, INVALID, ERROR = range(6)
STATUS_COL = {"no_answer": NO_ANSWER, "invalid": INVALID}


def _codes(series: pd.Series, values: tuple[str, ...], field: str) -> np.ndarray:
    """Integer codes of ``values`` (-1 for missing); unknown values raise DataError."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) and tuple(dtype.categories) == values:
        return series.cat.codes.to_numpy(np.int64)  # the schema's dtype: no re-encoding
    # Factorise first and look up only the distinct values: casting a million Arrow strings
    # to object costs ~0.5 s, the factorisation a tenth of that.
    k, uniq = pd.factorize(series, use_na_sentinel=True)
    lookup = np.append(pd.Index(list(values)).get_indexer(pd.Index(uniq, dtype=object)), -1)
    codes = lookup[np.asarray(k, dtype=np.int64)].astype(np.int64)
    codes[np.asarray(k) < 0] = -1
    unknown = (codes < 0) & series.notna().to_numpy()
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise DataError(
            f"unknown {field} value {series.iloc[pos]!r} (expected one of {list(values)})",
            line=pos,
            field=field,
        )
    return codes


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of an integer array, as ``np.unique(values)``.

    numpy 2.4's hash-based ``np.unique`` takes ~3.5 s on a million int64 keys; a sort and a
    neighbour comparison take ~0.09 s.

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    s = np.sort(values)
    return s[np.r_[True, s[1:] != s[:-1]]] if s.size else s


def row_categories(frame: pd.DataFrame, by_cols: list[str], cluster: str) -> np.ndarray:
    """Category code of each row: loss, tie, win (ok rows), no_answer, invalid, error."""
    check_columns(frame, [*by_cols, cluster, "status", "outcome"])
    if frame[cluster].isna().any():
        pos = int(np.flatnonzero(frame[cluster].isna().to_numpy())[0])
        raise DataError("missing cluster id", line=pos, field=cluster)
    status = _codes(frame["status"], STATUSES, "status")
    if (status < 0).any():
        pos = int(np.flatnonzero(status < 0)[0])
        raise DataError("missing status", line=pos, field="status")
    outcome = _codes(frame["outcome"], OUTCOMES, "outcome")
    ok = status == STATUSES.index("ok")
    if (ok & (outcome < 0)).any():
        pos = int(np.flatnonzero(ok & (outcome < 0))[0])
        raise DataError("status is ok but outcome is missing", line=pos, field="outcome")
    # OUTCOMES is (loss, tie, win) = codes 0, 1, 2; other statuses follow.
    status_cat = np.array([-1, NO_ANSWER, INVALID, ERROR])[status]
    return np.where(ok, outcome, status_cat)


def cluster_counts(
    frame: pd.DataFrame, by_cols: list[str], cluster: str, category: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Per (group, cluster) counts of the six row categories.

    Returns the group table (sorted by the ``by`` columns), the group id of
    each (group, cluster) cell, the count matrix (rows = cells, columns =
    CATEGORIES) and the cell of each row.
    """
    groups, group_of_row = row_groups(frame, by_cols)
    k, u = pd.factorize(frame[cluster], sort=True, use_na_sentinel=False)
    n_cluster_ids = max(len(u), 1)
    key = group_of_row * n_cluster_ids + np.asarray(k, dtype=np.int64)
    cells, cell_of_row = np.unique(key, return_inverse=True)
    cell_of_row = cell_of_row.reshape(-1).astype(np.int64)
    counts = np.bincount(cell_of_row * 6 + category, minlength=len(cells) * 6).reshape(-1, 6)
    return groups, (cells // n_cluster_ids).astype(np.int64), counts, cell_of_row


def row_groups(frame: pd.DataFrame, by_cols: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The group table (sorted by the ``by`` columns, missing values last) and each row's
    group id. Keys are factorised once and combined into integers, which is several times
    faster than a pandas groupby on small frames."""
    if not by_cols:
        return pd.DataFrame(index=pd.RangeIndex(1)), np.zeros(len(frame), dtype=np.int64)
    codes, uniques = [], []
    for col in by_cols:
        k, u = pd.factorize(frame[col], sort=True, use_na_sentinel=False)
        codes.append(np.asarray(k, dtype=np.int64))
        uniques.append(u)
    sizes = [max(len(u), 1) for u in uniques]
    group_keys, group_of_row = np.unique(np.ravel_multi_index(codes, sizes), return_inverse=True)
    parts = np.unravel_index(group_keys, sizes)
    groups = pd.DataFrame(
        {col: pd.Series(uniques[j].take(parts[j])) for j, col in enumerate(by_cols)}
    )
    return groups, group_of_row.reshape(-1).astype(np.int64)


def pair_counts(
    frame: pd.DataFrame,
    category: np.ndarray,
    cell_of_row: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """Distinct pairs, (cluster, ``replicate``), among the counted verdicts of each group.

    A pair judged in both orders of the blind rubric is two verdicts but one pair. Without a
    ``replicate`` column every counted verdict is taken as a pair of its own.
    """
    counted = category <= WIN
    if "replicate" not in frame.columns:
        return np.bincount(gid[cell_of_row[counted]], minlength=n_groups).astype(np.int64)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    rep = np.asarray(rep, dtype=np.int64)
    # A (group, cluster) cell and a replicate code name one pair of one group.
    key = cell_of_row[counted] * (int(rep.max(initial=0)) + 1) + rep[counted]
    cells = distinct(key) // (int(rep.max(initial=0)) + 1)
    return np.bincount(gid[cells], minlength=n_groups).astype(np.int64)
