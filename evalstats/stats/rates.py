"""Win, tie and loss rates between two arms with task-clustered uncertainty.

:func:`win_rates` and its missing-answer rules, order effects, blind-rubric dimension means,
:func:`cluster_mean`, and the small-sample cluster-robust machinery under them (CR1 / CR2
ratio SEs, Bell-McCaffrey df, the design-effect Wilson interval, the sign test). Methods
and coverage studies: ``docs/methods.md`` (Rates).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evalstats._display import ResultDisplay
from evalstats._schema import BLIND_DIMENSIONS, ORDERS, OUTCOME_DTYPE, STATUS_DTYPE, STATUSES
from evalstats._tidy import (
    ResultFrame,
    refuse_pooled_rubrics,
    stack_statistics,
    tidy_frame,
    with_detail,
)
from evalstats._validate import check_choice, check_columns, check_confidence, check_n_resamples
from evalstats.errors import DataError
from evalstats.records import EvalstatsWarning
from evalstats.stats.resample import (
    BOOTSTRAP_METHODS,
    as_generator,
    cluster_bootstrap,
    group_bootstrap,
    wild_cluster_interval,
    wild_cluster_p,
    wild_weights,
)

__all__ = [
    "ARM_COLUMNS", "CLUSTER_MEAN_METHODS", "DEFAULT_METHOD", "FILLINGS", "INVALID_RULES",
    "NO_ANSWER_RULES", "RATE_NAMES", "WIN_RATE_METHODS", "ProportionCI", "anova_icc",
    "apply_missing_rule", "bm_df", "bm_df_exchangeable", "bounds_view", "by_columns",
    "category_codes", "cluster_counts", "cluster_mean", "cluster_ratio", "dimension_means",
    "missing_bounds", "position_bias", "proportion_ci", "rate_arrays", "row_categories",
    "se_comparison", "segment_sum", "sign_test_p", "t_interval", "t_test_p", "wilson_interval",
    "wilson_test_p", "win_rates",
]  # fmt: skip


def segment_sum(values: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Column sums of ``values`` (rows x columns) per group id, as float64."""
    values = np.asarray(values, dtype=np.float64)
    out = np.empty((n_groups, values.shape[1]))
    for j in range(values.shape[1]):
        out[:, j] = np.bincount(gid, weights=values[:, j], minlength=n_groups)
    return out


#: The default grouping; :func:`default_by` drops ``rubric`` for a frame without it and
#: adds the pair of arms (:data:`ARM_COLUMNS`) where the frame has them.
DEFAULT_BY = ("rubric", "judge")
ARM_COLUMNS = ("arm_a", "arm_b")


def default_by(frame: pd.DataFrame, by: str | Sequence[str] | None) -> list[str]:
    """The grouping columns of ``by`` on ``frame`` (see :data:`DEFAULT_BY`)."""
    cols = by_columns(by)
    if by is DEFAULT_BY:
        cols = [c for c in cols if c != "rubric" or c in frame.columns]
        cols += [c for c in ARM_COLUMNS if c in frame.columns and c not in cols]
    return cols


def refuse_pooled_arms(frame: pd.DataFrame, by: Sequence[str], what: str) -> None:
    """DataError when ``by`` would pool several pairs of arms (no one's estimand)."""
    if not set(ARM_COLUMNS) <= set(frame.columns) or set(ARM_COLUMNS) <= set(by):
        return
    n_pairs = len(frame[list(ARM_COLUMNS)].drop_duplicates())
    if n_pairs > 1:
        raise DataError(
            f"{what}: the frame holds {n_pairs} pairs of arms; group by them "
            '(by=[..., "arm_a", "arm_b"]) or select one',
            field="arm_a",
        )


def by_columns(by: str | Sequence[str] | None) -> list[str]:
    """The ``by=`` argument as a list of column names (``None`` -> no grouping)."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    cols = list(by)
    if not all(isinstance(c, str) for c in cols):
        raise TypeError(f"by must be a column name, a list of names or None, got {by!r}")
    return cols


def cluster_ratio(
    y: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int, *, cr2: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Ratio estimators ``sum(y) / sum(m)`` per group (``y``: rows x columns) with CR2
    (``cr2=False``: CR1) standard errors: ``(est, se, n_clusters, sum(m))``."""
    y = np.asarray(y, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    n_clusters = np.bincount(gid, minlength=n_groups).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = segment_sum(y, gid, n_groups) / n[:, None]
        resid2 = (y - est[gid] * m[:, None]) ** 2
        if cr2:
            h = m / n[gid]
            adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
            se = np.sqrt(segment_sum(resid2 * adj[:, None], gid, n_groups)) / n[:, None]
            se = np.where((n_clusters > 1)[:, None], se, np.nan)
        else:
            factor = np.where(n_clusters > 1, n_clusters / (n_clusters - 1), np.nan)
            se = np.sqrt(factor[:, None] * segment_sum(resid2, gid, n_groups)) / n[:, None]
    return est, se, n_clusters, n


# Row categories (loss, tie, win, no_answer, invalid, error): the per-cluster count columns.
LOSS, TIE, WIN, NO_ANSWER, INVALID, ERROR = range(6)


def _codes(series: pd.Series, dtype: pd.CategoricalDtype, field: str) -> np.ndarray:
    """Integer codes in ``dtype`` (-1 for missing); unknown values raise DataError."""
    codes = category_codes(series, dtype).astype(np.int64)
    unknown = (codes < 0) & series.notna().to_numpy()
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise DataError(
            f"unknown {field} value {series.iloc[pos]!r} (expected one of "
            f"{list(dtype.categories)})",
            line=pos,
            field=field,
        )
    return codes


def row_categories(frame: pd.DataFrame, by_cols: list[str], cluster: str) -> np.ndarray:
    """Category code of each row: loss, tie, win (ok rows), no_answer, invalid, error."""
    check_columns(frame, [*by_cols, cluster, "status", "outcome"])
    if frame[cluster].isna().any():
        pos = int(np.flatnonzero(frame[cluster].isna().to_numpy())[0])
        raise DataError("missing cluster id", line=pos, field=cluster)
    status = _codes(frame["status"], STATUS_DTYPE, "status")
    if (status < 0).any():
        pos = int(np.flatnonzero(status < 0)[0])
        raise DataError("missing status", line=pos, field="status")
    outcome = _codes(frame["outcome"], OUTCOME_DTYPE, "outcome")
    ok = status == STATUSES.index("ok")
    if (ok & (outcome < 0)).any():
        pos = int(np.flatnonzero(ok & (outcome < 0))[0])
        raise DataError("status is ok but outcome is missing", line=pos, field="outcome")
    status_cat = np.array([-1, NO_ANSWER, INVALID, ERROR])[status]
    return np.where(ok, outcome, status_cat)


def cluster_counts(
    frame: pd.DataFrame, by_cols: list[str], cluster: str, category: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Per (group, cluster) counts of the six row categories."""
    groups, group_of_row = row_groups(frame, by_cols)
    cells, cell_of_row, width = cluster_cells(frame, cluster, group_of_row)
    counts = np.bincount(cell_of_row * 6 + category, minlength=len(cells) * 6).reshape(-1, 6)
    return groups, cells // width, counts, cell_of_row


def cluster_cells(frame, cluster, group_of_row, rows=slice(None), sort=True):
    """Keys (group * width + cluster code) of the (group, cluster) cells of ``rows``, each of
    those rows' cell, and the width."""
    k, u = pd.factorize(frame[cluster], sort=sort, use_na_sentinel=False)
    width = max(len(u), 1)
    key = (group_of_row * width + np.asarray(k, dtype=np.int64))[rows]
    cells, cell_of_row = np.unique(key, return_inverse=True)
    return cells.astype(np.int64), cell_of_row.reshape(-1).astype(np.int64), width


def row_groups(frame: pd.DataFrame, by_cols: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The group table (sorted by the ``by`` columns, missing last) and each row's group id."""
    if not by_cols:
        return pd.DataFrame(index=pd.RangeIndex(1)), np.zeros(len(frame), dtype=np.int64)
    codes, uniques = [], []
    for col in by_cols:
        k, u = pd.factorize(frame[col], sort=True, use_na_sentinel=False)
        codes.append(np.asarray(k, dtype=np.int64))
        uniques.append(u)
    sizes = [max(len(u), 1) for u in uniques]
    key = np.ravel_multi_index(codes, sizes) if len(frame) else np.zeros(0, dtype=np.int64)
    group_keys, group_of_row = np.unique(key, return_inverse=True)
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
    """Distinct pairs, (cluster, ``replicate``), among the counted verdicts of each group."""
    counted = category <= WIN
    if "replicate" not in frame.columns:
        return np.bincount(gid[cell_of_row[counted]], minlength=n_groups).astype(np.int64)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    rep = np.asarray(rep, dtype=np.int64)
    width = int(rep.max(initial=0)) + 1
    cells = np.unique(cell_of_row[counted] * width + rep[counted]) // width
    return np.bincount(gid[cells], minlength=n_groups).astype(np.int64)


PROPORTION_METHODS = ("wilson", "wilson_cc", "clopper_pearson")


@dataclass(frozen=True)
class ProportionCI(ResultDisplay):
    """Result of :func:`proportion_ci`: ``estimate`` (``k / n``), ``ci_low``, ``ci_high`` (arrays
    broadcast from ``k`` and ``n``, NaN where ``n == 0``), ``method``, ``confidence``.
    """

    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    method: str
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        """One row per proportion."""
        cols = {c: np.ravel(getattr(self, c)) for c in ("estimate", "ci_low", "ci_high")}
        return pd.DataFrame({**cols, "method": self.method, "confidence": self.confidence})


def proportion_ci(
    k: ArrayLike, n: ArrayLike, *, method: str = "wilson", confidence: float = 0.95
) -> ProportionCI:
    """Two-sided confidence interval for a binomial proportion ``k / n``, vectorised.

    ``method``: ``"wilson"``, ``"wilson_cc"`` (continuity-corrected) or ``"clopper_pearson"``
    (Newcombe 1998, methods 3-5). ``k`` and ``n`` broadcast; ``n == 0`` gives NaN.

    >>> ci = proportion_ci(81, 263)
    >>> round(float(ci.ci_low), 4), round(float(ci.ci_high), 4)
    (0.2553, 0.3662)
    """
    check_choice(method, "method", PROPORTION_METHODS)
    confidence = check_confidence(confidence)
    k_arr, n_arr = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    )
    if np.any(np.isnan(k_arr)) or np.any(np.isnan(n_arr)):
        raise ValueError("k and n must not be NaN")
    if np.any(n_arr < 0) or np.any(k_arr < 0) or np.any(k_arr > n_arr):
        raise ValueError("need 0 <= k <= n")
    alpha = 1.0 - confidence
    empty = n_arr <= 0
    n_safe = np.where(empty, 1.0, n_arr)
    k = np.where(empty, 0.0, k_arr)
    if method == "wilson_cc":
        low, high = _wilson_cc(k, n_safe, alpha)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            low, high = proportion_confint(
                k, n_safe, alpha=alpha, method="wilson" if method == "wilson" else "beta"
            )
    # Exact at the boundaries (Wilson's centre - half is 0 only up to rounding).
    low = np.where(k <= 0, 0.0, low)
    high = np.where(k >= n_safe, 1.0, high)
    low = np.where(empty, np.nan, low)
    high = np.where(empty, np.nan, high)
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(n_arr > 0, k_arr / np.where(n_arr > 0, n_arr, 1.0), np.nan)
    return ProportionCI(est, low, high, method, confidence)


def _wilson_cc(k: np.ndarray, n: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's interval with continuity correction, Newcombe (1998) method 4."""
    p = k / n
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    z2 = z * z
    denom = 2.0 * (n + z2)
    q = 1.0 - p
    rad_lo = np.sqrt(np.maximum(z2 - 2.0 - 1.0 / n + 4.0 * p * (n * q + 1.0), 0.0))
    rad_hi = np.sqrt(np.maximum(z2 + 2.0 - 1.0 / n + 4.0 * p * (n * q - 1.0), 0.0))
    low = np.clip((2.0 * n * p + z2 - 1.0 - z * rad_lo) / denom, 0.0, 1.0)
    high = np.clip((2.0 * n * p + z2 + 1.0 + z * rad_hi) / denom, 0.0, 1.0)
    return low, high


def sign_test_p(wins: ArrayLike, losses: ArrayLike) -> np.ndarray:
    """Exact two-sided binomial (sign) test of wins against losses at 1/2, vectorised."""
    w = np.asarray(wins, dtype=np.float64)
    lo = np.asarray(losses, dtype=np.float64)
    n = w + lo
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(np.minimum(w, lo), n, 0.5))
    return np.where(n > 0, p, np.nan)


def bm_df(m: np.ndarray, gid: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Bell-McCaffrey df and Kish effective clusters of a ratio estimator, per group."""
    m = np.asarray(m, dtype=np.float64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = m / n[gid]
        q = np.where(h < 1, m * m / (1.0 - h), np.nan)
        sq = np.bincount(gid, weights=q, minlength=n_groups)
        sq2 = np.bincount(gid, weights=q * q, minlength=n_groups)
        df = n**2 / (m2 + (sq**2 - sq2) / n**2)
        kish = n**2 / m2
    n_clusters = np.bincount(gid, minlength=n_groups)
    df = np.where((n_clusters > 1) & np.isfinite(df), df, np.nan)
    return df, kish


def anova_icc(
    y: np.ndarray, y2: np.ndarray, m: np.ndarray, gid: np.ndarray, n_groups: int
) -> np.ndarray:
    """One-way ANOVA intra-cluster correlation of the rows per group, clipped to [0, 1]."""
    y, y2, m = (np.asarray(v, dtype=np.float64) for v in (y, y2, m))
    n = np.bincount(gid, weights=m, minlength=n_groups)
    c = np.bincount(gid, minlength=n_groups).astype(np.float64)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        between = y * y / m
        ssw = np.bincount(gid, weights=y2 - between, minlength=n_groups)
        ssb = np.bincount(gid, weights=between, minlength=n_groups)
        ssb = ssb - np.bincount(gid, weights=y, minlength=n_groups) ** 2 / n
        msw = np.maximum(ssw, 0.0) / (n - c)
        msb = np.maximum(ssb, 0.0) / (c - 1.0)
        m0 = (n - m2 / n) / (c - 1.0)
        rho = (msb - msw) / (msb + (m0 - 1.0) * msw)
    return np.clip(np.where(np.isfinite(rho), rho, 0.0), 0.0, 1.0)


def bm_df_exchangeable(m: np.ndarray, rho: ArrayLike, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Satterthwaite df of the CR2 ratio variance under an exchangeable working model."""
    m = np.asarray(m, dtype=np.float64)
    rho_c = np.broadcast_to(np.asarray(rho, dtype=np.float64), (n_groups,))[gid]
    n = np.bincount(gid, weights=m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        h = m / n[gid]
        a2 = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
        lam = 1.0 - rho_c + rho_c * m
        big_s = np.bincount(gid, weights=m * lam, minlength=n_groups)
        g = big_s[gid] / (2.0 * n[gid] ** 2) - lam / n[gid]
        d = a2 * m * lam
        b2 = a2 * m * m
        b0, b1, bb2 = (np.bincount(gid, weights=b2 * g**k, minlength=n_groups) for k in (0, 1, 2))
        tr = np.bincount(gid, weights=d + 2.0 * b2 * g, minlength=n_groups)
        fro = np.bincount(gid, weights=d * d + 4.0 * d * b2 * g, minlength=n_groups)
        df = tr**2 / (fro + 2.0 * (b0 * bb2 + b1**2))
    n_clusters = np.bincount(gid, minlength=n_groups)
    # Equal sizes (C sum m^2 = n^2): C - 1 exactly, not to rounding.
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    equal = np.isclose(n_clusters * m2, n**2, rtol=1e-12, atol=0.0)
    df = np.where(equal, n_clusters - 1.0, df)
    return np.where((n_clusters > 1) & np.isfinite(df), df, np.nan)


def t_interval(
    est: ArrayLike, se: ArrayLike, df: ArrayLike, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """``est +/- t_df SE``: the nulls that :func:`t_test_p` does not reject at ``1 - confidence``."""
    est, se, df = (np.asarray(v, dtype=np.float64) for v in (est, se, df))
    q = stats.t.ppf(1.0 - (1.0 - check_confidence(confidence)) / 2.0, df)
    return est - q * se, est + q * se


def t_test_p(est: ArrayLike, se: ArrayLike, df: ArrayLike, null: ArrayLike = 0.0) -> np.ndarray:
    """Two-sided p-value of the t test of ``null`` (``t = (est - null) / SE`` on ``df``)."""
    est, se, df, null = (np.asarray(v, dtype=np.float64) for v in (est, se, df, null))
    d = est - null
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(se > 0, d / se, np.where(d == 0, 0.0, np.copysign(np.inf, d)))
    return np.minimum(2.0 * stats.t.sf(np.abs(t), df), 1.0)


def _effective_n(p, se, n, kish, row_var):
    """Unshrunk effective size ``A = p (1 - p) / SE^2`` and its IID cap."""
    v = p * (1.0 - p)
    with np.errstate(invalid="ignore", divide="ignore"):
        # The IID size caps only the boundary case (capping a CR2 variance over-covered).
        cap = np.where(se > 0, np.inf, np.where(row_var > 0, n * v / row_var, n))
        # SE 0: no design effect is observable; take the largest the design allows.
        a = np.where(se > 0, v / se**2, kish)
    return a, cap


def _kg_df(n, df):
    """Korn & Graubard's two df: the design's (at most the IID ``n - 1``) and the IID one."""
    with np.errstate(invalid="ignore"):
        n_df = np.where(n > 1, n - 1.0, np.nan)
    return np.minimum(df, n_df), n_df


def _kg_critical(alpha, df, n_df):
    """``z t_df / t_(n-1)`` at two-sided level ``alpha``: the score statistic's critical value."""
    half = alpha / 2.0
    return -stats.norm.ppf(half) * _t_isf(half, df) / _t_isf(half, n_df)


def _t_isf(q, df):
    """``scipy.stats.t.isf(q, df)``, once per distinct df when ``q`` is one level."""
    df = np.asarray(df, dtype=np.float64)
    if np.ndim(q) or df.size < 64:
        return stats.t.isf(q, df)
    distinct, where = np.unique(df, return_inverse=True)  # NaNs collapse into one
    return stats.t.isf(q, distinct)[where].reshape(df.shape)


def wilson_interval(
    p: ArrayLike,
    se: ArrayLike,
    n: ArrayLike,
    df: ArrayLike,
    kish: ArrayLike,
    confidence: float = 0.95,
    *,
    row_var: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Score (Wilson) interval at the design-effect effective size, with the BM df
    (``confidence`` may be an array: one level per entry, to invert the interval)."""
    p, se, n, df, kish = (np.asarray(v, dtype=np.float64) for v in (p, se, n, df, kish))
    rv = p * (1.0 - p) if row_var is None else np.asarray(row_var, dtype=np.float64)
    alpha = 1.0 - (np.asarray(confidence) if np.ndim(confidence) else check_confidence(confidence))
    z = stats.norm.ppf(1.0 - alpha / 2.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_df, n_df = _kg_df(n, df)
        a, cap = _effective_n(p, se, n, kish, rv)
        # The boundary size (SE 0) is not an estimated variance: no t correction.
        shrink = np.where(se > 0, (z / _kg_critical(alpha, d_df, n_df)) ** 2, 1.0)
        n_eff = np.minimum(a * shrink, np.maximum(cap, 0.0))
        n_eff = np.where(np.isnan(df), np.nan, n_eff)
        low, high = proportion_confint(p * n_eff, n_eff, alpha=alpha, method="wilson")
    low = np.where(p <= 0, 0.0, low)
    high = np.where(p >= 1, 1.0, high)
    bad = ~(np.isfinite(n_eff) & (n_eff > 0) & np.isfinite(p))
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def _kg_p(stat, df, n_df):
    """Two-sided p-value of the score statistic: the ``alpha`` where it meets its critical value."""
    stat, df, n_df = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (stat, df, n_df))
    )
    live = np.isfinite(stat) & (stat > 0) & ~np.isnan(df) & ~np.isnan(n_df)
    out = np.where(stat <= 0, 1.0, np.nan)
    out = np.where(np.isposinf(stat) & ~np.isnan(df) & ~np.isnan(n_df), 0.0, out)
    if not live.any():
        return out
    s_, d_, n_ = stat[live], df[live], n_df[live]
    log_s = np.log(s_)

    def f(u):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            return log_s - np.log(_kg_critical(np.exp(u), d_, n_))

    with np.errstate(divide="ignore"):
        b = np.minimum(np.log(2.0 * stats.t.sf(s_, d_)), 0.0)
    b = np.maximum(b, np.log(1e-300))
    fb = f(b)
    a = b - 1.0
    fa = f(a)
    for _ in range(12):  # widen until F(a) < 0 (or alpha reaches 1e-300)
        grow = ~(fa < 0) & (a > np.log(1e-300))
        if not grow.any():
            break
        a = np.where(grow, np.maximum(2.0 * a - b, np.log(1e-300)), a)
        fa = np.where(grow, f(a), fa)
    for _ in range(60):
        if not (np.abs(b - a) > 1e-15 * np.maximum(np.abs(b), 1.0)).any():
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            c = b - fb * (b - a) / (fb - fa)
        c = np.where(
            np.isfinite(c) & (c > np.minimum(a, b)) & (c < np.maximum(a, b)), c, 0.5 * (a + b)
        )
        fc = f(c)
        flip = np.sign(fc) != np.sign(fb)
        a, fa = np.where(flip, b, a), np.where(flip, fb, 0.5 * fa)
        step = np.abs(c - b)
        b, fb = c, fc
        if not (step > 1e-14 * np.maximum(np.abs(b), 1.0)).any():
            break
    # The root's rejecting side: the end with F >= 0.
    root = np.where(fb >= 0, b, a)
    out[live] = np.minimum(np.exp(root), 1.0)
    return out


def wilson_test_p(
    p: ArrayLike,
    se: ArrayLike,
    n: ArrayLike,
    df: ArrayLike,
    kish: ArrayLike,
    null: ArrayLike = 0.5,
    *,
    row_var: ArrayLike | None = None,
) -> np.ndarray:
    """Two-sided p-value of ``p = null`` that inverts :func:`wilson_interval` exactly."""
    p, se, n, df, kish, null = (np.asarray(v, dtype=np.float64) for v in (p, se, n, df, kish, null))
    rv = p * (1.0 - p) if row_var is None else np.asarray(row_var, dtype=np.float64)
    a, cap = _effective_n(p, se, n, kish, rv)
    with np.errstate(invalid="ignore", divide="ignore"):
        d_df, n_df = _kg_df(n, df)
        s0 = np.sqrt(null * (1.0 - null))
        d = np.abs(p - null) / s0
        p_t = np.where(
            se > 0, _kg_p(d * np.sqrt(a), d_df, n_df), 2.0 * stats.norm.sf(d * np.sqrt(a))
        )
        p_z = 2.0 * stats.norm.sf(d * np.sqrt(np.maximum(cap, 0.0)))
    out = np.minimum(np.maximum(p_t, p_z), 1.0)
    out = np.where(np.abs(p - null) == 0, 1.0, out)
    return np.where(~np.isnan(df) & np.isfinite(p), out, np.nan)


RATE_NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
WIN_RATE_METHODS = (
    "cr2_wilson", "cr2_t", "cluster_wilson", "cluster_t", *BOOTSTRAP_METHODS, "wild_webb",
    "iid_wilson",
)  # fmt: skip
DEFAULT_METHOD = "cr2_wilson"
#: Designs with fewer effective clusters (Kish) than this are flagged and warned about.
FEW_CLUSTERS = 8.0
# Parameter range of each rate (net win lives on [-1, 1]).
_RANGE_LOW = np.array([0.0, 0.0, 0.0, -1.0, 0.0])
_RANGE_HIGH = np.array([1.0, 1.0, 1.0, 1.0, 1.0])


def rate_arrays(
    wins: np.ndarray,
    ties: np.ndarray,
    losses: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    method: str = DEFAULT_METHOD,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    net_win_test: bool = True,
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """The five rates with SEs, intervals, df and the net-win test from per-cluster counts."""
    check_choice(method, "method", WIN_RATE_METHODS)
    also = tuple(also)
    if also and not set((method, *also)) <= set(BOOTSTRAP_METHODS):
        raise ValueError(f"also: bootstrap methods ({BOOTSTRAP_METHODS}) beside one, got {also}")
    extra: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wins, ties, losses = (np.asarray(v, dtype=np.float64) for v in (wins, ties, losses))
    gid = np.asarray(gid, dtype=np.int64)
    denom = wins + ties + losses
    numerators = np.stack([wins, ties, losses, wins - losses, wins + 0.5 * ties], axis=1)
    used = denom > 0  # clusters with no counted verdict carry no information on a rate
    y, m, g = numerators[used], denom[used], gid[used]
    cr2 = method in ("cr2_wilson", "cr2_t")
    est, se, n_clusters, n = cluster_ratio(y, m, g, n_groups, cr2=cr2)
    df, kish = bm_df(m, g, n_groups)
    # Row-level variance of each statistic (0/1 rates: p(1-p); score: 0, 1/2, 1 values).
    row_var = est * (1.0 - est)
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = segment_sum((wins + 0.25 * ties)[used, None], g, n_groups)[:, 0]
        row_var[:, 4] = np.maximum(sq / n - est[:, 4] ** 2, 0.0)
        row_var[:, 3] = 4.0 * row_var[:, 4]
    if method == "iid_wilson":
        se = np.sqrt(row_var / n[:, None])
        df = np.where(n > 1, np.inf, np.nan)
    elif not cr2:
        df = np.where(n_clusters > 1, n_clusters - 1.0, np.nan)
    if cr2:
        # Net win (and score) gets the df under an exchangeable working model at its rows'
        # ICC: the working-independence df over-rejected with unequal task sizes.
        icc = anova_icc(y[:, 4], (wins + 0.25 * ties)[used], m, g, n_groups)
        net_df = bm_df_exchangeable(m, icc, g, n_groups)
    else:
        icc, net_df = np.full(n_groups, np.nan), df
    dfs = np.repeat(df[:, None], len(RATE_NAMES), axis=1)
    dfs[:, 3:] = net_df[:, None]
    # Boundary size where no spread is observed: Kish's effective clusters; the verdicts
    # themselves for the IID interval.
    boundary_n = n if method == "iid_wilson" else kish
    if method in ("cr2_wilson", "cluster_wilson", "iid_wilson"):
        low, high, p_net = _score_construction(
            est, se, n, dfs, boundary_n, row_var, confidence, net_win_test
        )
    elif method in ("cr2_t", "cluster_t", "wild_webb"):
        if method == "wild_webb":
            width = int(np.bincount(g, minlength=n_groups).max(initial=1))
            v = wild_weights(width, n_resamples, as_generator(rng), method="webb")
            low, high = np.full_like(est, np.nan), np.full_like(est, np.nan)
            for j in range(len(RATE_NAMES)):
                low[:, j], high[:, j] = wild_cluster_interval(
                    y[:, j], m, g, n_groups, confidence=confidence, weights=v,
                    bounds=(_RANGE_LOW[j], _RANGE_HIGH[j]),
                )  # fmt: skip
            p_net = wild_cluster_p(y[:, 3], m, g, n_groups, 0.0, v)
        else:
            low, high = t_interval(est, se, dfs, confidence)
            low = np.clip(low, _RANGE_LOW, _RANGE_HIGH)
            high = np.clip(high, _RANGE_LOW, _RANGE_HIGH)
            p_net = np.full(n_groups, np.nan)
            if net_win_test:
                p_net = t_test_p(est[:, 3], se[:, 3], net_df)
        # No spread observed (a rate at 0 or 1, or every task alike): the interval has zero
        # width, so take the boundary score construction, which keeps the df.
        flat = ~(se > 0)
        if flat.any():
            b_low, b_high, b_p = _score_construction(
                est, se, n, dfs, kish, row_var, confidence, net_win_test or method == "wild_webb"
            )
            low, high = np.where(flat, b_low, low), np.where(flat, b_high, high)
            p_net = np.where(flat[:, 3], b_p, p_net)
    else:
        _, _, ends = group_bootstrap(np.stack([wins[used], ties[used], m], axis=1), g, n_groups,
                                     _rates_from_sums, methods=(method, *also),
                                     n_resamples=n_resamples, confidence=confidence,
                                     rng=as_generator(rng))  # fmt: skip
        b_low, b_high, _ = _score_construction(est, se, n, dfs, kish, row_var, confidence, False)
        for name, (lo, hi) in ends.items():
            lo, hi = np.clip(lo, _RANGE_LOW, _RANGE_HIGH), np.clip(hi, _RANGE_LOW, _RANGE_HIGH)
            flat = ~(hi - lo > 0)
            ends[name] = (np.where(flat, b_low, lo), np.where(flat, b_high, hi))
        low, high = ends.pop(method)
        extra = ends
        p_net = np.full(n_groups, np.nan)  # a bootstrap interval is not a test here
    note = np.full(n_groups, "", dtype=object)
    if method in BOOTSTRAP_METHODS:
        note[:] = "net_win_p not computed for bootstrap intervals"
    note[n_clusters == 1] = (
        "one cluster: no between-task variation can be estimated "
        "(method='iid_wilson' gives an IID interval over verdicts)"
    )
    if method == "iid_wilson":
        note[:] = "IID interval over verdicts: ignores clustering by task"
    note[n == 0] = "no counted verdicts"
    one = (n_clusters <= 1) & (method != "iid_wilson")
    low[one], high[one], p_net[one] = np.nan, np.nan, np.nan
    for lo, hi in extra.values():
        lo[one], hi[one] = np.nan, np.nan
    out: dict[str, Any] = {
        "est": est,
        "se": np.where(one[:, None], np.nan, se),
        "low": low,
        "high": high,
        "net_win_p": p_net,
        "df": df,
        "net_win_df": np.where(one, np.nan, net_df),
        "net_win_icc": icc,
        "n_eff_clusters": kish,
        "few_clusters": ~(kish >= FEW_CLUSTERS),
        "ci_note": note,
        "n": n,
        "n_tasks": n_clusters,
    }
    if also:
        out["also"] = extra
    return out


def _score_construction(est, se, n, dfs, kish, row_var, confidence, net_win_test=True):
    """Score interval of each rate (net win from the score's) and the net-win test (NaN
    unless ``net_win_test``); ``dfs`` is (groups x rates), net win's and score's the same."""
    p = est.copy()
    s = se.copy()
    rv = row_var.copy()
    # Net win is 2 * score - 1: work on the score scale for it.
    p[:, 3], s[:, 3], rv[:, 3] = p[:, 4], s[:, 4], rv[:, 4]
    low, high = wilson_interval(p, s, n[:, None], dfs, kish[:, None], confidence, row_var=rv)
    low[:, 3], high[:, 3] = 2.0 * low[:, 3] - 1.0, 2.0 * high[:, 3] - 1.0
    if not net_win_test:
        return low, high, np.full(len(n), np.nan)
    p_net = wilson_test_p(p[:, 4], s[:, 4], n, dfs[:, 4], kish, 0.5, row_var=rv[:, 4])
    return low, high, p_net


def _rates_from_sums(s: np.ndarray) -> np.ndarray:
    w, t, n = s[..., 0], s[..., 1], s[..., 2]
    loss = n - w - t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([w / n, t / n, loss / n, (w - loss) / n, (w + 0.5 * t) / n], axis=-1)


NO_ANSWER_RULES = ("exclude", "arm_aware", "loss", "win", "tie")
INVALID_RULES = ("exclude", "loss", "win", "tie")
_ARM_AWARE = {"with": "loss", "without": "win", "both": "tie"}
_PAIR_CALL = ["task_id", "replicate", "judge", "rubric"]
_OK, _NO_ANSWER, _INVALID = (
    STATUS_DTYPE.categories.get_loc(s) for s in ("ok", "no_answer", "invalid")
)
_OUTCOME_CODE = {o: OUTCOME_DTYPE.categories.get_loc(o) for o in ("loss", "tie", "win")}


def category_codes(s: pd.Series, dtype: pd.CategoricalDtype) -> np.ndarray:
    """Writable int8 codes of ``s`` in ``dtype`` (-1: missing, or a value outside it)."""
    if isinstance(s.dtype, pd.CategoricalDtype) and s.dtype == dtype:
        return np.array(s.cat.codes.to_numpy(), dtype=np.int8)
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    known = pd.Index(list(dtype.categories)).get_indexer(pd.Index(uniques).astype(object))
    lookup = np.append(known, -1).astype(np.int8)  # code -1 (NA) reads the appended -1
    return lookup[codes]


def _over_budget_roles(frame: pd.DataFrame) -> pd.Series:
    """``over_budget_arm`` as roles ``with`` (arm_a), ``without`` (arm_b) or ``both``."""
    arm = frame["over_budget_arm"].astype(object)
    if set(ARM_COLUMNS) <= set(frame.columns):
        arm = arm.where(arm != frame["arm_a"].astype(object), "with")
        arm = arm.where(arm != frame["arm_b"].astype(object), "without")
    return arm


def _both_orders(frame: pd.DataFrame, na_rows: np.ndarray) -> pd.DataFrame:
    """Give an unshown no_answer pair one row per order where its judge showed both."""
    if not {"order", *_PAIR_CALL} <= set(frame.columns):
        return frame
    call = [*_PAIR_CALL, *(c for c in ARM_COLUMNS if c in frame.columns)]
    order = frame["order"]
    lone = na_rows & order.isna().to_numpy()
    if not lone.any():
        return frame
    shown = frame.loc[~na_rows & order.notna().to_numpy(), [*call, "order"]]
    if shown.empty:
        return frame
    per_pair = (
        shown.assign(judge=shown["judge"].astype(str), rubric=shown["rubric"].astype(str))
        .groupby(call, observed=True)["order"]
        .nunique()
    )
    share = (per_pair >= 2).groupby(level=["judge", "rubric"]).mean()
    both = set(share.index[share.to_numpy() >= 0.5])
    if not both:
        return frame
    key = zip(frame["judge"].astype(str), frame["rubric"].astype(str), strict=True)
    grow = lone & pd.Series(list(key), index=frame.index).isin(both).to_numpy()
    if not grow.any():
        return frame
    extra = frame.loc[grow]
    out = pd.concat([frame.loc[~grow], *(extra.assign(order=o) for o in ORDERS)])
    out["order"] = out["order"].astype(frame["order"].dtype)
    return out.sort_index(kind="stable").reset_index(drop=True)


def apply_missing_rule(
    frame: pd.DataFrame, *, no_answer_as: str = "exclude", invalid_as: str = "exclude"
) -> pd.DataFrame:
    """A copy of a verdict frame whose ``no_answer`` / ``invalid`` rows follow a rule.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame (``status``, ``outcome``; ``over_budget_arm`` for ``"arm_aware"``).
    no_answer_as : {"exclude", "arm_aware", "loss", "win", "tie"}
        ``"arm_aware"``: a loss for the arm alone over budget, a tie where both went over.
    invalid_as : {"exclude", "loss", "win", "tie"}

    Returns
    -------
    DataFrame
        Rewritten rows: ``status="ok"``, the rule's ``outcome``, ``imputed_from``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task_id": ["a", "b", "c", "d"],
    ...                       "status": ["ok", "no_answer", "no_answer", "invalid"],
    ...                       "over_budget_arm": [None, "with", "without", None],
    ...                       "outcome": ["win", None, None, None]})
    >>> out = apply_missing_rule(frame, no_answer_as="arm_aware")
    >>> out[["task_id", "status", "outcome", "imputed_from"]]
      task_id   status outcome imputed_from
    0       a       ok     win          NaN
    1       b       ok    loss    no_answer
    2       c       ok     win    no_answer
    3       d  invalid     NaN          NaN
    """
    check_choice(no_answer_as, "no_answer_as", NO_ANSWER_RULES)
    check_choice(invalid_as, "invalid_as", INVALID_RULES)
    check_columns(frame, ["status", "outcome"])
    status = category_codes(frame["status"], STATUS_DTYPE)
    na_rows = status == _NO_ANSWER
    if no_answer_as == "arm_aware" and na_rows.any():
        if "over_budget_arm" not in frame.columns:
            raise DataError(
                "no_answer_as='arm_aware' needs the over_budget_arm column: rebuild the "
                "frame with evalstats.verdict_frame",
                field="over_budget_arm",
            )
        arm = _over_budget_roles(frame)
        lacking = na_rows & arm.isna().to_numpy()
        if lacking.any():
            raise DataError(
                "no_answer row without over_budget_arm: cannot tell which arm went over",
                line=int(np.flatnonzero(lacking)[0]),
                field="over_budget_arm",
            )
        bad = na_rows & ~arm.isin(list(_ARM_AWARE)).to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"unknown over_budget_arm {arm.iloc[pos]!r}; expected one of {list(_ARM_AWARE)}",
                line=pos,
                field="over_budget_arm",
            )
    # Only whole columns are replaced below: a shallow copy leaves the caller's intact.
    out = frame.copy(deep=False)
    if no_answer_as != "exclude" and na_rows.any():
        grown = _both_orders(out, na_rows)
        if grown is not out:
            out = grown
            status = category_codes(out["status"], STATUS_DTYPE)
            na_rows = status == _NO_ANSWER
    outcome = category_codes(out["outcome"], OUTCOME_DTYPE)
    imputed = np.full(len(out), -1, dtype=np.int8)
    if no_answer_as != "exclude":
        if no_answer_as == "arm_aware":
            arm = _over_budget_roles(out)[na_rows] if na_rows.any() else pd.Series([])
            fill = category_codes(arm.astype(object).map(_ARM_AWARE), OUTCOME_DTYPE)
        else:
            fill = _OUTCOME_CODE[no_answer_as]
        outcome[na_rows] = fill
        imputed[na_rows] = _NO_ANSWER
    if invalid_as != "exclude":
        inv = status == _INVALID
        outcome[inv] = _OUTCOME_CODE[invalid_as]
        imputed[inv] = _INVALID
    new_status = status.copy()
    new_status[imputed >= 0] = _OK
    out["status"] = pd.Categorical.from_codes(new_status, dtype=STATUS_DTYPE)
    out["outcome"] = pd.Categorical.from_codes(outcome, dtype=OUTCOME_DTYPE)
    out["imputed_from"] = pd.Categorical.from_codes(imputed, dtype=STATUS_DTYPE)
    return out


def win_rates(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    method: str = DEFAULT_METHOD,
    no_answer_as: str = "exclude",
    invalid_as: str | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    detail: bool = False,
) -> ResultFrame:
    """Win/tie/loss rates, net win and score per group, with task-clustered SEs and CIs.

    See docs/methods.md, section Rates.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame: ``status``, ``outcome`` (NA unless ok), ``cluster`` and ``by`` columns.
    by : str, list of str or None
        Grouping columns (default: rubric, judge and the pair of arms); None: one group.
    cluster : str
        The unit of independence (the task).
    method : str, one of :data:`WIN_RATE_METHODS`
    no_answer_as : {"exclude", "arm_aware", "loss", "win", "tie"}
        Over-budget pairs (see :func:`apply_missing_rule`); ``error`` rows never count.
    invalid_as : {"exclude", "loss", "win", "tie"}, optional
        Unreadable verdicts; default ``"exclude"`` (``"loss"`` when ``no_answer_as="loss"``).
    n_resamples, confidence, rng
        Resamples (bootstrap methods), the level, the random source.
    detail : bool
        Also join the diagnostics onto every row.

    Returns
    -------
    ResultFrame
        One row per group and statistic (:data:`RATE_NAMES`); ``p_value`` tests net win = 0;
        ``.diagnostics``: counts, ``sign_test_p``, ``n_eff_clusters``, no-answers by arm.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task_id": ["a", "a", "b", "b", "c", "c"], "judge": "j1",
    ...                       "status": ["ok", "ok", "ok", "ok", "ok", "no_answer"],
    ...                       "outcome": ["win", "tie", "win", "loss", "win", None]})
    >>> win_rates(frame)[["judge", "statistic", "estimate", "n", "n_tasks"]]
      judge  statistic  estimate  n  n_tasks
    0    j1   win_rate       0.6  5        3
    1    j1   tie_rate       0.2  5        3
    2    j1  loss_rate       0.2  5        3
    3    j1    net_win       0.4  5        3
    4    j1      score       0.7  5        3
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a DataFrame, got {type(frame).__name__}")
    by_cols = default_by(frame, by)
    refuse_pooled_rubrics(frame, by_cols, "win_rates")
    refuse_pooled_arms(frame, by_cols, "win_rates")
    check_choice(method, "method", WIN_RATE_METHODS)
    check_choice(no_answer_as, "no_answer_as", NO_ANSWER_RULES)
    if invalid_as is None:
        invalid_as = "loss" if no_answer_as == "loss" else "exclude"
    check_choice(invalid_as, "invalid_as", INVALID_RULES)
    imputed = no_answer_as != "exclude" or invalid_as != "exclude"
    if imputed:
        frame = apply_missing_rule(frame, no_answer_as=no_answer_as, invalid_as=invalid_as)
    confidence = check_confidence(confidence)
    category = row_categories(frame, by_cols, cluster)
    groups, gid, counts, cell_of_row = cluster_counts(frame, by_cols, cluster, category)
    if method in BOOTSTRAP_METHODS:
        n_resamples = check_n_resamples(n_resamples, pairs=len(groups))

    n_groups = len(groups)
    res = rate_arrays(counts[:, WIN], counts[:, TIE], counts[:, LOSS], gid, n_groups,
                      method=method, confidence=confidence, n_resamples=n_resamples,
                      rng=rng)  # fmt: skip
    total = segment_sum(counts, gid, n_groups)

    diag: dict[str, object] = {c: groups[c] for c in by_cols}
    diag["n"] = res["n"].astype(np.int64)
    diag["n_pairs"] = pair_counts(frame, category, cell_of_row, gid, n_groups)
    diag["n_tasks"] = res["n_tasks"].astype(np.int64)
    names = ("wins", "ties", "losses", "no_answer", "invalid", "error")
    for name, col in zip(names, (WIN, TIE, LOSS, NO_ANSWER, INVALID, ERROR), strict=True):
        diag[name] = total[:, col].astype(np.int64)
    if imputed:  # the missing answers the rule counted are still reported as missing
        for name, col in (("no_answer", NO_ANSWER), ("invalid", INVALID)):
            hit = (frame["imputed_from"] == name).fillna(False).to_numpy(dtype=bool)
            rewritten = np.bincount(gid[cell_of_row[hit]], minlength=n_groups)
            diag[name] = rewritten + total[:, col].astype(np.int64)
    diag["sign_test_p"] = sign_test_p(total[:, WIN], total[:, LOSS])
    diag["n_eff_clusters"] = res["n_eff_clusters"]
    diag["few_clusters"] = res["few_clusters"]
    diag["no_answer_as"] = np.full(n_groups, no_answer_as, dtype=object)
    diag["invalid_as"] = np.full(n_groups, invalid_as, dtype=object)
    ci_note = res["ci_note"]
    if no_answer_as == "exclude" and "over_budget_arm" in frame.columns:
        arm_diag, ci_note = _unbalanced_no_answers(frame, gid[cell_of_row], n_groups, ci_note,
                                                   (res["low"][:, 3], res["high"][:, 3]), by=by,
                                                   cluster=cluster, method=method,
                                                   invalid_as=invalid_as, n_resamples=n_resamples,
                                                   confidence=confidence, rng=rng)  # fmt: skip
        diag.update(arm_diag)
    diagnostics = pd.DataFrame(diag, index=pd.RangeIndex(n_groups))
    shared = {
        "n": diag["n"],
        "n_tasks": diag["n_tasks"],
        "method": method,
        "confidence": confidence,
        "ci_note": ci_note,
    }
    no_test = np.full(n_groups, np.nan)
    statistics = [
        (
            name,
            {
                "estimate": res["est"][:, j],
                "se": res["se"][:, j],
                "ci_low": res["low"][:, j],
                "ci_high": res["high"][:, j],
                # net win and score are one statistic (net = 2 score - 1): one test, one df
                "p_value": res["net_win_p"] if j >= 3 else no_test,
                "df": res["net_win_df"] if j >= 3 else res["df"],
                **shared,
            },
        )
        for j, name in enumerate(RATE_NAMES)
    ]
    out = stack_statistics(groups[by_cols], statistics, diagnostics=diagnostics, extra=("ci_note",))
    _warn_few_clusters(diagnostics, by_cols)
    return with_detail(out) if detail else out


#: Exact binomial p-value (arm_a-only vs arm_b-only no-answers, even split) below which
#: the no-answers count as unbalanced between the arms.
UNBALANCED_P = 0.05


def _unbalanced_no_answers(frame, row_gid, n_groups, ci_note, net_ci, **kwargs):
    """Per group: no-answers by arm, whether unbalanced, the arm-aware net win; a note on
    ``ci_note`` where they are unbalanced or placing them by arm changes the conclusion."""
    arm = _over_budget_roles(frame).to_numpy()
    na = (frame["status"].astype(object) == "no_answer").to_numpy()
    counts = {}
    for side in ("with", "without", "both"):
        hit = na & (arm == side)
        counts[side] = np.bincount(row_gid[hit], minlength=n_groups).astype(np.int64)
    one_sided = counts["with"] + counts["without"]
    p = sign_test_p(counts["with"], counts["without"])
    p = np.where(one_sided > 0, p, 1.0)
    unbalanced = p < UNBALANCED_P
    out = {
        "no_answer_with": counts["with"],
        "no_answer_without": counts["without"],
        "no_answer_both": counts["both"],
        "no_answer_balance_p": p,
        "no_answer_unbalanced": unbalanced,
        "arm_aware_net_win": np.full(n_groups, np.nan),
        "arm_aware_ci_low": np.full(n_groups, np.nan),
        "arm_aware_ci_high": np.full(n_groups, np.nan),
    }
    if not (one_sided > 0).any():
        return out, ci_note
    # Placing the no-answers changes no group's key: the groups come in the same order.
    aware = win_rates(frame, no_answer_as="arm_aware", **kwargs)
    aware = aware.loc[aware["statistic"] == "net_win"]
    est, lo, hi = (aware[c].to_numpy(dtype=float) for c in ("estimate", "ci_low", "ci_high"))
    out.update(arm_aware_net_win=est, arm_aware_ci_low=lo, arm_aware_ci_high=hi)
    d_lo, d_hi = net_ci
    with np.errstate(invalid="ignore"):
        verdict = np.sign(np.where(d_lo > 0, 1, np.where(d_hi < 0, -1, 0)))
        aware_verdict = np.where(lo > 0, 1, np.where(hi < 0, -1, 0))
        changes = (one_sided > 0) & (
            (verdict != aware_verdict) | (np.sign(est) * np.sign(0.5 * (d_lo + d_hi)) < 0)
        )
    out["no_answer_changes_conclusion"] = changes
    flagged = (unbalanced | changes) & (one_sided > 0)
    note = np.asarray(ci_note, dtype=object).copy()
    for i in np.flatnonzero(flagged):  # the few flagged groups, to word their notes
        why = (
            f"unbalanced between arms (exact p = {p[i]:.2g})"
            if unbalanced[i]
            else "placed by arm, they change the conclusion"
        )
        text = (
            f"no-answers {why}: WITH alone over budget {counts['with'][i]}, WITHOUT alone "
            f"{counts['without'][i]}; excluding them favours the arm that failed more; "
            f"arm-aware net win {est[i]:+.3f} [{lo[i]:+.3f}, {hi[i]:+.3f}] "
            "(no_answer_as='arm_aware'; bounds: missing_bounds)"
        )
        note[i] = f"{note[i]}; {text}" if note[i] else text
    return out, note


def _warn_few_clusters(out: pd.DataFrame, by_cols: list[str]) -> None:
    # One-cluster groups carry their reason in ci_note instead.
    few = out["few_clusters"].to_numpy(bool) & (out["n_tasks"].to_numpy() > 1)
    if not few.any():
        return
    if by_cols:
        names = [
            ", ".join(f"{c}={out[c].iloc[i]}" for c in by_cols) for i in np.flatnonzero(few)[:5]
        ]
        more = f" and {int(few.sum()) - 5} more" if few.sum() > 5 else ""
        where = "; ".join(names) + more
    else:
        where = "the whole frame"
    warnings.warn(
        f"fewer than {FEW_CLUSTERS:g} effective clusters (Kish) in {where}: "
        "cluster-robust intervals rest on few tasks (see the df and n_eff_clusters columns)",
        EvalstatsWarning,
        stacklevel=3,
    )


#: How the missing answers are counted in the rows of :func:`missing_bounds`.
FILLINGS = ("exclude", "loss", "tie", "win")


def missing_bounds(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    invalid_as: str = "exclude",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Each rate with the ``no_answer`` rows excluded, and counted as a loss, a tie and a win.

    Parameters
    ----------
    frame, by, cluster, method, n_resamples, confidence, rng
        As in :func:`win_rates`.
    invalid_as : {"exclude", "loss", "win", "tie", "bounds"}
        ``"bounds"`` fills ``invalid`` rows as missing answers too.

    Returns
    -------
    ResultFrame
        :func:`win_rates`' rows per group and ``filling`` (:data:`FILLINGS`).

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task_id": ["a", "a", "b", "b", "c"], "judge": "j",
    ...                       "status": ["ok", "ok", "ok", "no_answer", "ok"],
    ...                       "outcome": ["win", "loss", "win", None, "tie"]})
    >>> b = missing_bounds(frame)
    >>> b[b["statistic"] == "net_win"].set_index("filling")["estimate"].round(2).to_dict()
    {'exclude': 0.25, 'loss': 0.0, 'tie': 0.2, 'win': 0.4}
    """
    check_choice(invalid_as, "invalid_as", (*INVALID_RULES, "bounds"))
    rng = as_generator(rng)
    kw = {
        "by": by,
        "cluster": cluster,
        "method": method,
        "n_resamples": n_resamples,
        "confidence": confidence,
    }
    base_invalid = "exclude" if invalid_as == "bounds" else invalid_as
    scenarios = {
        "exclude": win_rates(apply_missing_rule(frame, invalid_as=base_invalid), rng=rng, **kw)
    }
    for fill in FILLINGS[1:]:
        filled = apply_missing_rule(
            frame, no_answer_as=fill, invalid_as=fill if invalid_as == "bounds" else invalid_as
        )
        scenarios[fill] = win_rates(filled, rng=rng, **kw)
    est = scenarios["exclude"]
    by_cols = list(est.by)
    n_rates = len(RATE_NAMES)
    parts = []
    for k, (fill, res) in enumerate(scenarios.items()):
        part = pd.DataFrame(res)
        part.insert(len(by_cols), "filling", fill)
        part["_order"] = (
            np.arange(len(part)) // n_rates * 100 + k * 10 + np.arange(len(part)) % n_rates
        )
        parts.append(part)
    rows = pd.concat(parts, ignore_index=True).sort_values("_order", kind="stable")
    diagnostics = est.diagnostics[[*by_cols, "n"]].copy()
    diagnostics["n_missing"] = (
        scenarios["loss"].diagnostics["n"].to_numpy() - est.diagnostics["n"].to_numpy()
    )
    return tidy_frame(rows.drop(columns="_order"), by=[*by_cols, "filling"],
                      diagnostics=diagnostics, extra=("ci_note",))  # fmt: skip


def bounds_view(bounds: pd.DataFrame, statistic: str = "net_win") -> pd.DataFrame:
    """One row per group of :func:`missing_bounds` for one statistic: ``estimate``,
    ``worst_case``, ``best_case``, ``low`` / ``high`` (range over the fillings), ``ci_low`` /
    ``ci_high`` (widest limits), with the diagnostics."""
    by = [c for c in bounds.by if c != "filling"]
    rows = pd.DataFrame(bounds[bounds["statistic"] == statistic])
    key = rows[by].astype(object).fillna("<NA>").apply(tuple, axis=1) if by else 0
    rows = rows.assign(_g=pd.factorize(key)[0] if by else 0)
    fill = rows[rows["filling"] != "exclude"].groupby("_g")
    point = rows[rows["filling"] == "exclude"].set_index("_g")
    out = bounds.diagnostics.reset_index(drop=True).copy()
    at = {f: rows[rows["filling"] == f].set_index("_g")["estimate"] for f in ("loss", "win")}
    out["estimate"] = point["estimate"].to_numpy()
    out["worst_case"] = at["loss"].to_numpy()
    out["best_case"] = at["win"].to_numpy()
    out["low"] = fill["estimate"].min().to_numpy()
    out["high"] = fill["estimate"].max().to_numpy()
    out["ci_low"] = fill["ci_low"].min().to_numpy()
    out["ci_high"] = fill["ci_high"].max().to_numpy()
    return out


def position_bias(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    confidence: float = 0.95,
) -> ResultFrame:
    """Order effects of the blind rubric: P(first-shown wins) and order consistency.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``outcome``, ``order``, ``replicate``, ``cluster``, ``by``.
    by, cluster, confidence
        As in :func:`win_rates`.

    Returns
    -------
    ResultFrame
        ``first_shown_win_rate`` (``p_value`` tests 0.5) and ``order_consistency`` per group.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task_id": ["a", "a", "b", "b"], "replicate": 1, "judge": "j",
    ...                       "order": ["with_first", "without_first"] * 2, "status": "ok",
    ...                       "outcome": ["win", "loss", "win", "win"]})
    >>> position_bias(frame)[["statistic", "estimate", "n", "df", "method"]]
                  statistic  estimate  n   df      method
    0  first_shown_win_rate      0.75  4  1.0  cr2_wilson
    1     order_consistency      0.50  2  1.0  cr2_wilson
    """
    by_cols = default_by(frame, by)
    refuse_pooled_rubrics(frame, by_cols, "position_bias")
    # Pooled pairs of arms are allowed: the first-shown rate is the judge's, whatever the pair.
    confidence = check_confidence(confidence)
    check_columns(frame, [*by_cols, cluster, "order", "replicate"])
    category = row_categories(frame, by_cols, cluster)
    order = frame["order"].astype("object")
    keep = (category <= WIN) & order.notna().to_numpy()
    kept_order = order[keep]
    bad = ~kept_order.isin(["with_first", "without_first"]).to_numpy()
    if bad.any():
        raise DataError(f"unknown order value {kept_order[bad].iloc[0]!r}", field="order")
    groups, group_of_row = row_groups(frame, by_cols)
    n_groups = len(groups)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    n_rep = max(int(rep.max(initial=0)) + 1, 1)
    idx = np.flatnonzero(keep)
    cat = category[idx]
    with_first = (kept_order == "with_first").to_numpy()
    cells, cell_id, n_cl = cluster_cells(frame, cluster, group_of_row, idx, sort=False)

    decisive = cat != TIE
    first_won = np.where(with_first, cat == WIN, cat == LOSS) & decisive
    won = np.bincount(cell_id, weights=first_won.astype(np.float64), minlength=len(cells))
    dec = np.bincount(cell_id, weights=decisive.astype(np.float64), minlength=len(cells))
    first = rate_arrays(
        won, np.zeros_like(won), dec - won, cells // n_cl, n_groups, net_win_test=False
    )

    # Pairs judged in both orders: the first ok row of each order (rows in frame order).
    pair = cells[cell_id] * n_rep + np.asarray(rep, dtype=np.int64)[idx]
    pairs, pair_id = np.unique(pair, return_inverse=True)
    _, first_row = np.unique(pair_id * 2 + with_first, return_index=True)
    shown = np.full((len(pairs), 2), -1, dtype=np.int64)
    shown[pair_id[first_row], with_first[first_row].astype(np.int64)] = cat[first_row]
    both = (shown >= 0).all(axis=1)
    same = both & (shown[:, 0] == shown[:, 1])
    pair_cells, pair_cell = np.unique(pairs[both] // n_rep, return_inverse=True)
    n_both = np.bincount(pair_cell, minlength=len(pair_cells)).astype(np.float64)
    n_same = np.bincount(
        pair_cell, weights=same[both].astype(np.float64), minlength=len(pair_cells)
    )
    cons = rate_arrays(n_same, np.zeros_like(n_same), n_both - n_same, pair_cells // n_cl,
                       n_groups, net_win_test=False)  # fmt: skip

    first_gid, cons_gid = cells // n_cl, pair_cells // n_cl
    wins = np.bincount(first_gid, weights=won, minlength=n_groups).astype(np.int64)
    consistent = np.bincount(cons_gid, weights=n_same, minlength=n_groups).astype(np.int64)
    diagnostics = groups.copy()
    diagnostics["n_decisive"] = first["n"].astype(np.int64)
    diagnostics["first_shown_wins"] = wins
    diagnostics["first_shown_sign_test_p"] = sign_test_p(wins, first["n"] - wins)
    diagnostics["n_pairs_both_orders"] = cons["n"].astype(np.int64)
    diagnostics["order_consistent"] = consistent
    first_p = wilson_test_p(
        first["est"][:, 0], first["se"][:, 0], first["n"], first["df"], first["n_eff_clusters"], 0.5
    )
    first_note = _order_note("first_shown_win_rate", first, "no decisive verdict")
    cons_note = _order_note("order_consistency", cons, "no pair judged in both orders")
    statistics = [
        ("first_shown_win_rate", _rate_columns(first, first_note, confidence, p_value=first_p)),
        ("order_consistency", _rate_columns(cons, cons_note, confidence)),
    ]
    return stack_statistics(groups, statistics, diagnostics=diagnostics, extra=("ci_note",))


def _order_note(name: str, res: dict[str, np.ndarray], empty: str) -> np.ndarray:
    note = np.full(len(res["n"]), "", dtype=object)
    note[res["n_tasks"] == 1] = f"{name}: one task, no between-task variation to estimate"
    note[res["n"] == 0] = f"{name}: {empty}"
    return note


def _rate_columns(res: dict[str, np.ndarray], note, confidence, **extra) -> dict[str, object]:
    """The win-rate column of :func:`rate_arrays` as one statistic's tidy columns."""
    return {
        "estimate": res["est"][:, 0],
        "se": res["se"][:, 0],
        "ci_low": res["low"][:, 0],
        "ci_high": res["high"][:, 0],
        "df": res["df"],
        "n": res["n"].astype(np.int64),
        "n_tasks": res["n_tasks"].astype(np.int64),
        "method": DEFAULT_METHOD,
        **extra,
        "ci_note": note,
        "confidence": confidence,
    }


CLUSTER_MEAN_METHODS = ("cluster_t", "cr2_t", *BOOTSTRAP_METHODS)


def cluster_mean(
    frame: pd.DataFrame,
    value: str,
    *,
    cluster: str = "task_id",
    by: str | Sequence[str] | None = None,
    method: str = "cluster_t",
    confidence: float = 0.95,
    null: float = 0.0,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Mean of a numeric column per group, with a cluster-robust SE, interval and t test.

    Parameters
    ----------
    frame : DataFrame
        One row per observation: ``value``, ``cluster`` and the ``by`` columns.
    value : str
        The numeric column (missing values are left out and counted).
    method : {"cluster_t", "cr2_t", "bca", "percentile", "basic"}
    cluster, by, confidence, n_resamples, rng
        As in :func:`win_rates`; ``by=None`` gives one row.
    null : float
        The mean under the null hypothesis of ``p_value``.

    Returns
    -------
    ResultFrame
        One ``"mean"`` row per group (``t`` beside); ``.diagnostics``: ``n``, ``n_missing``.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task_id": ["a", "b", "c", "d"], "y": [0.1, 0.4, 0.35, 0.8]})
    >>> res = cluster_mean(frame, "y")
    >>> round(float(res["estimate"].iloc[0]), 4), round(float(res["se"].iloc[0]), 4)
    (0.4125, 0.1449)
    """
    by_cols = by_columns(by)
    check_columns(frame, [value, cluster, *by_cols], what="frame")
    refuse_pooled_rubrics(frame, by_cols, "cluster_mean")
    check_choice(method, "method", CLUSTER_MEAN_METHODS)
    confidence = check_confidence(confidence)
    try:
        y = pd.to_numeric(frame[value], errors="raise").to_numpy(np.float64, na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"column {value!r} is not numeric: {exc}", field=value) from None
    if np.isinf(y).any():
        pos = int(np.flatnonzero(np.isinf(y))[0])
        raise DataError(f"infinite value {y[pos]}", line=pos, field=value)
    if frame[cluster].isna().any():
        pos = int(np.flatnonzero(frame[cluster].isna().to_numpy())[0])
        raise DataError("missing cluster id", line=pos, field=cluster)

    groups, group_of_row = row_groups(frame, by_cols)
    n_groups = len(groups)
    present = ~np.isnan(y)
    n_missing = np.bincount(group_of_row[~present], minlength=n_groups)
    cells, cell_of_row, width = cluster_cells(frame, cluster, group_of_row, present)
    gid = cells // width
    y_c = np.bincount(cell_of_row, weights=y[present], minlength=len(cells))
    m_c = np.bincount(cell_of_row, minlength=len(cells)).astype(np.float64)

    est, se, n_clusters, n = cluster_ratio(y_c[:, None], m_c, gid, n_groups, cr2=method == "cr2_t")
    if method == "cr2_t":
        df = bm_df(m_c, gid, n_groups)[0]
    else:
        df = np.where(n_clusters > 1, n_clusters - 1.0, np.nan)
    est, se = est[:, 0], se[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (est - float(null)) / se
        p = 2.0 * stats.t.sf(np.abs(t), df)
        if method in ("cluster_t", "cr2_t"):
            tq = stats.t.ppf(0.5 + confidence / 2.0, df)
            low, high = est - tq * se, est + tq * se
        else:
            _, _, ends = group_bootstrap(
                np.stack([y_c, m_c], axis=1), gid, n_groups, _ratio, methods=(method,),
                n_resamples=n_resamples, confidence=confidence, rng=as_generator(rng),
            )  # fmt: skip
            low, high = ends[method][0][:, 0], ends[method][1][:, 0]

    diagnostics = groups.copy()
    diagnostics["n"] = n.astype(np.int64)
    diagnostics["n_tasks"] = n_clusters.astype(np.int64)
    diagnostics["n_missing"] = n_missing.astype(np.int64)
    row = {
        "estimate": est,
        "se": se,
        "ci_low": low,
        "ci_high": high,
        "p_value": p,
        "df": df,
        "n": n.astype(np.int64),
        "n_tasks": n_clusters.astype(np.int64),
        "method": method,
        "confidence": confidence,
        "t": t,
    }
    return stack_statistics(groups, [("mean", row)], diagnostics=diagnostics, extra=("t",))


def _ratio(s: np.ndarray) -> np.ndarray:
    return (s[..., 0] / s[..., 1])[..., None]


def se_comparison(
    frame: pd.DataFrame,
    value: str,
    *,
    by: Sequence[str],
    clusterings: Sequence[tuple[str, str]],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.SeedSequence | int | None = None,
    estimate: str = "win_rate",
    iid_note: str = "records independent",
) -> pd.DataFrame:
    """IID, cluster-robust and cluster-bootstrap standard errors of a mean, per group."""
    keys = list(by)
    labels = [label for label, _ in clusterings]
    check_columns(frame, [value, *keys, *(col for _, col in clusterings)], what="frame")
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    for label, col in clusterings:
        if frame[col].isna().any():
            raise ValueError(f"clustering {label!r}: column {col!r} has missing cluster ids")
    seq = rng if isinstance(rng, np.random.SeedSequence) else np.random.SeedSequence(rng)
    groups = frame.groupby(keys, sort=True)
    iid = groups[value].agg(n="size", mean="mean", se="sem").reset_index()
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    iid_se = {tuple(r[k] for k in keys): r["se"] for r in iid.to_dict("records")}
    rows: list[dict[str, Any]] = [
        {
            **{k: r[k] for k in keys},
            "clustering": "iid",
            "n": int(r["n"]),
            "n_tasks": int(r["n"]),
            estimate: r["mean"],
            "se": r["se"],
            "se_ratio": 1.0,
            "df": math.nan,
            f"{estimate}_ci_low": r["mean"] - z * r["se"],
            f"{estimate}_ci_high": r["mean"] + z * r["se"],
            "interval": f"normal: {estimate} ± z·SE ({iid_note})",
        }
        for r in iid.to_dict("records")
    ]
    seeds = iter(seq.spawn(len(iid) * len(clusterings)))
    ends = [f"boot_{m}_ci_{e}" for m in ("percentile", "bca") for e in ("low", "high")]
    boot_columns = ["boot_se", "boot_se_ratio", *ends]
    parts = {key: sub for key, sub in groups}
    for label, col in clusterings:
        cr1 = cluster_mean(frame, value, cluster=col, by=keys, confidence=confidence)
        cr1 = with_detail(cr1).rename(columns={"estimate": "mean"})
        for r in cr1.to_dict("records"):
            key = tuple(r[k] for k in keys)
            sub = parts[key]
            child = next(seeds)
            # Per-cluster sums in cluster_mean's order (sorted ids); one seed: one set of draws.
            sums = sub.groupby(col, sort=True)[value].agg(["sum", "size"]).to_numpy(np.float64)
            boot = dict.fromkeys(boot_columns, math.nan)
            if len(sums) >= 2:
                for method in ("percentile", "bca"):
                    res = cluster_bootstrap(
                        sums, _ratio, method=method, n_resamples=n_resamples,
                        confidence=confidence, rng=np.random.default_rng(child),
                    )  # fmt: skip
                    boot[f"boot_{method}_ci_low"] = float(res.ci_low[0])
                    boot[f"boot_{method}_ci_high"] = float(res.ci_high[0])
                boot["boot_se"] = float(res.se[0])
                boot["boot_se_ratio"] = boot["boot_se"] / iid_se[key]
            c = int(r["n_tasks"])
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "clustering": label,
                    "n": int(r["n"]),
                    "n_tasks": c,
                    estimate: r["mean"],
                    "se": r["se"],
                    "se_ratio": r["se"] / iid_se[key],
                    "df": r["df"],
                    f"{estimate}_ci_low": r["ci_low"],
                    f"{estimate}_ci_high": r["ci_high"],
                    "interval": f"cluster_t: {estimate} ± t({c - 1})·CR1 SE",
                    **boot,
                }
            )
    out = pd.DataFrame(rows)
    order = {label: i for i, label in enumerate(["iid", *labels])}
    out = out.sort_values(
        [*keys, "clustering"], key=lambda s: s.map(order) if s.name == "clustering" else s
    ).reset_index(drop=True)
    out["n_resamples"] = int(n_resamples)
    out["confidence"] = float(confidence)
    return out


def dimension_means(frame: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """Per-dimension blind-rubric means of each arm and their difference (mean of per-task
    means, t interval on C - 1 df).

    Parameters
    ----------
    frame : DataFrame
        ``task_id``, ``status`` and the ``with_<dim>`` / ``without_<dim>`` columns.
    confidence : float

    Returns
    -------
    DataFrame
        ``dim``, ``arm`` (with, without, difference), ``mean``, ``ci_low``, ``ci_high``, counts.

    Examples
    --------
    >>> import pandas as pd
    >>> dims = ("correctness", "specificity", "completeness", "hallucination_safety")
    >>> frame = pd.DataFrame({"task_id": ["a", "a", "b", "c"], "status": "ok",
    ...                       **{f"with_{d}": [4, 5, 3, 4] for d in dims},
    ...                       **{f"without_{d}": [3, 3, 3, 4] for d in dims}})
    >>> res = dimension_means(frame)
    >>> res.loc[(res["dim"] == "correctness") & (res["arm"] == "with"), "mean"].item()
    3.8333333333333335
    """
    confidence = check_confidence(confidence)
    arms = [c for c in ARM_COLUMNS if c in frame.columns]
    if arms and len(frame):  # one block per pair of arms, as the rates
        parts = []
        for key, rows in frame.groupby(arms, sort=True, observed=True):
            part = dimension_means(rows.drop(columns=arms), confidence=confidence)
            parts.append(pd.concat([pd.DataFrame([key] * len(part), columns=arms), part], axis=1))
        return pd.concat(parts, ignore_index=True)
    cols = [f"{arm}_{d}" for arm in ("with", "without") for d in BLIND_DIMENSIONS]
    check_columns(frame, ("task_id", "status", *cols))
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    scores = pd.DataFrame(
        {c: pd.to_numeric(ok[c], errors="coerce").astype("float64") for c in cols}, index=ok.index
    )
    keep = scores.notna().any(axis=1).to_numpy()
    scores, tasks = scores.loc[keep], ok["task_id"].astype(str).to_numpy()[keep]
    for d in BLIND_DIMENSIONS:
        scores[f"difference_{d}"] = scores[f"with_{d}"] - scores[f"without_{d}"]
    rows = []
    per_task = scores.groupby(tasks).mean()
    counts = scores.groupby(tasks).count()
    for d in BLIND_DIMENSIONS:
        for arm in ("with", "without", "difference"):
            col = f"{arm}_{d}"
            m = per_task[col].dropna().to_numpy()
            c = len(m)
            mean = float(m.mean()) if c else np.nan
            if c >= 2:
                half = float(stats.t.ppf(0.5 + confidence / 2, c - 1) * m.std(ddof=1) / np.sqrt(c))
                lo, hi = mean - half, mean + half
            else:
                lo = hi = np.nan
            rows.append(
                {
                    "dim": d,
                    "arm": arm,
                    "mean": mean,
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_tasks": c,
                    "n": int(counts[col].sum()),
                    "confidence": confidence,
                }
            )
    return pd.DataFrame(rows)
