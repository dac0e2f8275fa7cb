"""Comparing and ranking K arms: pairwise rates with simultaneous intervals, Holm,
Bradley-Terry-Davidson strengths with rank confidence sets. See docs/methods.md, section
"Comparisons and rankings".
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse
import scipy.special
import scipy.stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import (
    check_choice,
    check_columns,
    check_confidence,
    check_n_resamples,
    check_positive_int,
)
from ..errors import DataError, ParameterError
from ..plan import Plan
from .rates import rate_arrays
from .resample import as_generator

__all__ = [
    "COMPARE_METHODS",
    "COMPARE_STATISTICS",
    "RANK_MODELS",
    "SUBSAMPLE_ESTIMATORS",
    "Encoded",
    "compare",
    "encode",
    "holm",
    "holm_table",
    "outcome_probabilities",
    "pair_counts",
    "rank",
    "rank_sets",
    "rank_subsamples",
    "subsample_coverage",
    "task_resamples",
]


_REQUIRED = ("task_id", "judge", "arm_a", "arm_b", "status", "outcome")
_OUTCOME_CODE = {"loss": 0, "tie": 1, "win": 2}
_NO_VERDICTS = "no verdicts: no estimate"
_POSITION = {"a_first": 1, "b_first": -1, "with_first": 1, "without_first": -1}


@dataclass(frozen=True)
class Encoded:
    """A frame's ok rows: ``a`` / ``b`` index ``arms``, ``y`` 0 loss / 1 tie / 2 win for ``a``,
    ``pos`` +1 (``a`` shown first) / -1 / 0 (unknown), ``task`` indexes ``tasks``."""

    arms: tuple[str, ...]
    tasks: np.ndarray
    task: np.ndarray
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    pos: np.ndarray
    judge: str

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)


def _pick(frame: pd.DataFrame, col: str, value: str | None) -> tuple[pd.DataFrame, str]:
    """The rows whose ``col`` is ``value`` (default: the frame's only one) and the value."""
    have = pd.unique(frame[col].astype(str))
    if value is None:
        if len(have) > 1:
            raise ParameterError(
                f"the frame has {len(have)} {col}s ({', '.join(have)}): pass {col}= to pick one"
            )
        value = str(have[0]) if len(have) else ""
    elif value not in set(have):
        raise ParameterError(f"{col} {value!r} is not in the frame ({list(have)})")
    return frame.loc[(frame[col].astype(str) == value).to_numpy()], value


def encode(
    frame: pd.DataFrame,
    *,
    judge: str | None = None,
    rubric: str | None = None,
    arms: Sequence[str] | None = None,
) -> Encoded:
    """The ok rows of one judge (and rubric) as :class:`Encoded` arrays; ``arms`` fixes the
    order (default: first appearance); no ``arm_a`` / ``arm_b``: ``with`` against ``without``."""
    if "arm_a" not in frame.columns and "arm_b" not in frame.columns:
        frame = frame.assign(arm_a="with", arm_b="without")
    check_columns(frame, _REQUIRED, what="pairwise verdict frame")
    if "rubric" in frame.columns:
        frame, _ = _pick(frame, "rubric", rubric)
    frame, judge = _pick(frame, "judge", judge)
    rows = frame.loc[(frame["status"].astype(str) == "ok").to_numpy()]
    seen = rows if len(rows) else frame
    seen = pd.unique(pd.concat([seen["arm_a"], seen["arm_b"]]).astype(str))
    arm_names = tuple(seen) if arms is None else tuple(str(a) for a in arms)
    if missing := sorted(set(seen) - set(arm_names)):
        raise ParameterError(f"arms {missing} are in the frame but not in arms={list(arm_names)}")
    if len(arm_names) < 2:
        raise DataError(f"a ranking needs at least two arms, got {list(arm_names)}", field="arm_a")
    index = {a: i for i, a in enumerate(arm_names)}
    a = rows["arm_a"].astype(str).map(index).to_numpy()
    b = rows["arm_b"].astype(str).map(index).to_numpy()
    same = np.flatnonzero(a == b)
    if len(same):
        raise DataError(
            f"arm_a equals arm_b ({arm_names[a[same[0]]]!r})", line=int(same[0]) + 1, field="arm_b"
        )
    outcome = rows["outcome"].astype(object).map(_OUTCOME_CODE)
    bad = np.flatnonzero(outcome.isna().to_numpy())
    if len(bad):
        raise DataError(
            f"outcome must be win, tie or loss on an ok row, got {rows['outcome'].iloc[bad[0]]!r}",
            line=int(bad[0]) + 1,
            field="outcome",
        )
    if "order" in rows.columns:
        order = rows["order"].astype(object)
        pos = order.map(_POSITION).fillna(0).to_numpy(dtype=np.int8)
        unknown = order.notna().to_numpy() & (pos == 0)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise DataError(
                f"order must be one of {list(_POSITION)} or missing, got {order.iloc[i]!r}",
                line=i + 1,
                field="order",
            )
    else:
        pos = np.zeros(len(rows), dtype=np.int8)
    tasks, task = np.unique(rows["task_id"].astype(str).to_numpy(), return_inverse=True)
    a, b, task = (v.astype(np.int64) for v in (a, b, task))
    return Encoded(arm_names, tasks, task, a, b, outcome.to_numpy(dtype=np.int64), pos, judge)


def task_resamples(
    n_tasks: int, n_resamples: int, rng: np.random.Generator, *, max_cells: int = 4_000_000
):
    """Blocks (block, n_tasks) of task-bootstrap weights, about ``max_cells`` numbers each."""
    block = max(1, min(n_resamples, max_cells // max(n_tasks, 1)))
    done = 0
    while done < n_resamples:
        m = min(block, n_resamples - done)
        draws = rng.integers(0, n_tasks, size=(m, n_tasks))
        flat = (draws + (np.arange(m) * n_tasks)[:, None]).ravel()
        yield np.bincount(flat, minlength=m * n_tasks).reshape(m, n_tasks).astype(np.float64)
        done += m


#: Interval methods of `compare`: `cr2_wilson` (as `win_rates`: CR2, Bell-McCaffrey df, score).
COMPARE_METHODS = ("cr2_wilson",)
#: The statistics `compare` reports per pair: win, tie, loss rate and net win.
COMPARE_STATISTICS = ("win_rate", "tie_rate", "loss_rate", "net_win")


def _pairs(arms: Sequence[str], reference: str | None) -> list[tuple[int, int]]:
    k = len(arms)
    if reference is None:
        return [(i, j) for i in range(k) for j in range(i + 1, k)]
    if reference not in arms:
        raise ParameterError(f"reference {reference!r} is not an arm of the frame ({list(arms)})")
    r = arms.index(reference)
    return [(i, r) for i in range(k) if i != r]


def pair_counts(enc: Encoded, pairs: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-task (win, tie, loss) counts of each pair's first arm (tasks, pairs, 3) and each
    row's pair index (-1: not listed)."""
    k = len(enc.arms)
    lookup = np.full((k, k), -1, dtype=np.int64)
    flip = np.zeros((k, k), dtype=bool)
    for p, (i, j) in enumerate(pairs):
        lookup[i, j], lookup[j, i] = p, p
        flip[j, i] = True
    pid = lookup[enc.a, enc.b]
    keep = pid >= 0
    y = np.where(flip[enc.a, enc.b], enc.y, 2 - enc.y)
    n_p = len(pairs)
    flat = (enc.task[keep] * n_p + pid[keep]) * 3 + y[keep]
    counts = np.bincount(flat, minlength=enc.n_tasks * n_p * 3).reshape(enc.n_tasks, n_p, 3)
    return counts.astype(np.float64), pid


def compare(
    frame: pd.DataFrame,
    *,
    reference: str | None = None,
    confidence: float = 0.95,
    method: str = "cr2_wilson",
    judge: str | None = None,
    rubric: str | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Win, tie, loss and net win of every pair of arms, with simultaneous intervals.

    See docs/methods.md, section "compare: every pair of arms".

    Parameters
    ----------
    frame : pandas.DataFrame
        A verdict frame with ``arm_a``, ``arm_b``; only ``status == "ok"`` rows count.
    reference : str, optional
        Compare every other arm with this one (``arm_b``); default all pairs.
    confidence : float
        Level of the marginal and the simultaneous (Bonferroni) intervals.
    method : {"cr2_wilson"}
        :func:`evalstats.stats.win_rates`' interval key.
    judge, rubric : str, optional
        Whose verdicts, needed when the frame has several.
    arms : sequence of str, optional
        The arms' order (pairs are ``(arms[i], arms[j])`` with ``i < j``).

    Returns
    -------
    ResultFrame
        One row per pair and statistic (:data:`COMPARE_STATISTICS`) with ``p_holm`` (net win),
        ``sim_low``, ``sim_high`` (a pair without verdicts: NaN and ``ci_note``);
        ``diagnostics`` the judge and ``sim_level``.

    Examples
    --------
    >>> f = pd.DataFrame({"task_id": [f"t{i % 6}" for i in range(36)], "judge": "j",
    ...                   "arm_a": ["x", "y", "x"] * 12, "arm_b": ["y", "z", "z"] * 12,
    ...                   "status": "ok", "outcome": ["win", "tie", "loss", "win"] * 9})
    >>> res = compare(f)
    >>> res.loc[res.statistic == "net_win", ["arm_a", "arm_b", "estimate"]].to_string(index=False)
    'arm_a arm_b  estimate\\n    x     y      0.25\\n    x     z      0.25\\n    y     z      0.25'
    """
    confidence = check_confidence(confidence)
    check_choice(method, "method", COMPARE_METHODS)
    enc = encode(frame, judge=judge, rubric=rubric, arms=arms)
    pairs = _pairs(enc.arms, reference)
    n_p, alpha = len(pairs), 1.0 - confidence
    counts, _ = pair_counts(enc, pairs)
    tp = np.nonzero(counts.sum(-1) > 0)  # the (task, pair) cells judged
    c = counts[tp]
    args = (c[:, 0], c[:, 1], c[:, 2], tp[1], n_p)  # win_rates' numbers, pairs as groups
    ra = rate_arrays(*args, method=method, confidence=confidence)
    est, se = ra["est"][:, :4], ra["se"][:, :4]
    df = np.column_stack([np.repeat(ra["df"][:, None], 3, axis=1), ra["net_win_df"]])
    level = 1.0 - alpha / n_p
    at = rate_arrays(*args, method=method, confidence=level, net_win_test=False)
    sim_lo = np.fmin(at["low"][:, :4], ra["low"][:, :4])
    sim_hi = np.fmax(at["high"][:, :4], ra["high"][:, :4])
    p = ra["net_win_p"]
    i, j = np.array(pairs).T
    pi = np.repeat(np.arange(n_p), 4)
    net = np.tile(np.array(COMPARE_STATISTICS) == "net_win", n_p)
    rows = {
        "arm_a": [enc.arms[v] for v in i[pi]], "arm_b": [enc.arms[v] for v in j[pi]],
        "statistic": list(COMPARE_STATISTICS) * n_p, "estimate": est.ravel(), "se": se.ravel(),
        "ci_low": ra["low"][:, :4].ravel(), "ci_high": ra["high"][:, :4].ravel(),
        "p_value": np.where(net, p[pi], np.nan), "df": df.ravel(), "n": ra["n"][pi].astype(int),
        "n_tasks": ra["n_tasks"][pi].astype(int), "method": method, "confidence": confidence,
        "p_holm": np.where(net, holm(p)[pi], np.nan), "sim_low": sim_lo.ravel(),
        "sim_high": sim_hi.ravel(),
    }  # fmt: skip
    diagnostics = pd.DataFrame(
        {"judge": [enc.judge], "n_arms": [len(enc.arms)], "n_pairs": [n_p], "n_tasks": [enc.n_tasks],
         "sim_level": [level]}
    )  # fmt: skip
    if (ra["n"] == 0).any():
        rows["ci_note"] = np.where(ra["n"][pi] == 0, _NO_VERDICTS, None)
    extra = ["p_holm", "sim_low", "sim_high", "ci_note"]
    return tidy_frame(
        pd.DataFrame(rows), by=["arm_a", "arm_b"], diagnostics=diagnostics, extra=extra
    )


def holm(pvalues: Any) -> np.ndarray:
    """Holm-adjusted p-values, in the order given.

    Parameters
    ----------
    pvalues : array-like of float
        One-dimensional, in [0, 1]; NaN (a test not run) stays NaN and is not in the family.

    Returns
    -------
    ndarray
        Reject test ``i`` at family-wise level ``alpha`` when ``adjusted[i] <= alpha``.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.20]).round(4).tolist()
    [0.04, 0.09, 0.09, 0.2]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be one-dimensional, got shape {p.shape}")
    bad = ~np.isnan(p) & ((p < 0.0) | (p > 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"p-values must be in [0, 1]; pvalues[{i}] = {p[i]}")
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(~np.isnan(p))  # a NaN is not in the family
    # Step-down by hand: statsmodels' multipletests runs gc.collect() on every Holm call,
    # whose cost grows with everything alive (a K-arm report calls it once per pair).
    at = finite[np.argsort(p[finite], kind="stable")]
    steps = np.maximum.accumulate(p[at] * np.arange(at.size, 0, -1))
    out[at] = np.minimum(steps, 1.0)
    return out


def _primary_mask(table: pd.DataFrame, primary: Any) -> np.ndarray:
    if primary is None:
        return np.zeros(len(table), dtype=bool)
    if isinstance(primary, Plan):
        primary = primary.primary_key
    if isinstance(primary, Mapping):
        check_columns(table, list(primary), what="table of tests")
        mask = np.ones(len(table), dtype=bool)
        for col, value in primary.items():
            mask &= table[col].astype(object).to_numpy() == value
        what = ", ".join(f"{k}={v!r}" for k, v in primary.items())
    else:
        mask = np.asarray(primary, dtype=bool)
        if mask.shape != (len(table),):
            raise ValueError(
                f"primary mask has shape {mask.shape}, the table has {len(table)} rows"
            )
        what = "the primary mask"
    n = int(mask.sum())
    if n != 1:
        raise ValueError(f"{what} selects {n} rows of the table; the primary test is one row")
    return mask


#: What ``holm_table``'s ``p_holm`` is with a primary, and without one.
FIXED_SEQUENCE = "fixed-sequence: primary at alpha, Holm over the secondaries"
WHOLE_FAMILY = "Holm over the whole family"


def holm_table(
    table: pd.DataFrame,
    *,
    p: str = "net_win_p",
    primary: Mapping[str, Any] | Plan | Any | None = None,
) -> pd.DataFrame:
    """Add ``primary``, the Holm-adjusted p-values and the procedure's name to a table of tests.

    Parameters
    ----------
    table : DataFrame
        One row per test, e.g. :func:`evalstats.stats.win_rates` by judge and rubric.
    p : str, default "net_win_p"
        Column of p-values.
    primary : mapping, Plan, boolean mask or None
        The primary row: column -> value, a :class:`~evalstats.plan.Plan` (its
        ``primary_key``) or a boolean mask with one True; None: every row is adjusted.

    Returns
    -------
    DataFrame
        A copy of ``table`` with ``primary``, ``p_holm`` (the primary's own p-value, Holm
        among the others), ``p_fixed_sequence`` = ``max(p_primary, p_holm)``, ``p_holm_family``
        (Holm over every row) and ``procedure``; see docs/methods.md, section "Holm and the
        fixed sequence".

    Examples
    --------
    >>> tests = pd.DataFrame({"judge": ["a", "b", "c"], "net_win_p": [0.03, 0.01, 0.30]})
    >>> holm_table(tests, primary={"judge": "a"})["p_fixed_sequence"].tolist()
    [0.03, 0.03, 0.3]
    """
    check_columns(table, [p], what="table of tests")
    pv = table[p].to_numpy(dtype=np.float64, na_value=np.nan)
    family = holm(pv)
    mask = _primary_mask(table, primary)
    adjusted = pv.copy()
    adjusted[~mask] = holm(pv[~mask])
    gated = np.where(mask, pv, np.maximum(adjusted, pv[mask].max() if mask.any() else -np.inf))
    out = table.copy()
    out["primary"] = mask
    out["p_holm"] = adjusted
    out["p_fixed_sequence"] = gated
    out["p_holm_family"] = family
    out["procedure"] = FIXED_SEQUENCE if mask.any() else WHOLE_FAMILY
    return out


def _btd_cells(
    a: np.ndarray, b: np.ndarray, pos: np.ndarray, y: np.ndarray, n_arms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct cells ``(i, j, s)`` with ``i < j`` (C, 3), each row's cell and column (0 win)."""
    swap = a > b
    i = np.where(swap, b, a)
    j = np.where(swap, a, b)
    s = np.where(swap, -pos, pos).astype(np.int64)
    col = np.where(swap, y, 2 - y)  # y: 0 loss / 1 tie / 2 win from a's view
    key = (i * n_arms + j) * 3 + (s + 1)
    uniq, cell = np.unique(key, return_inverse=True)
    keys = np.stack([uniq // 3 // n_arms, uniq // 3 % n_arms, uniq % 3 - 1], axis=1)
    return keys, cell.astype(np.int64), col.astype(np.int64)


def _cells(k: int, *encs: Encoded) -> tuple[np.ndarray, bool, list[Encoded]]:
    """The cells of ``encs``' rows, whether both orders occur (else ``pos`` is zeroed), ``encs``."""
    keys = np.unique(np.concatenate([_btd_cells(e.a, e.b, e.pos, e.y, k)[0] for e in encs]), axis=0)
    position = bool((keys[:, 2] == 1).any() and (keys[:, 2] == -1).any())
    if not position:  # one order (or none): the position bonus is not identified
        keys = np.unique(np.column_stack([keys[:, :2], np.zeros(len(keys), int)]), axis=0)
        encs = tuple(replace(e, pos=np.zeros_like(e.pos)) for e in encs)
    return keys, position, list(encs)


def _btd_design(keys: np.ndarray, n_arms: int, position: bool) -> np.ndarray:
    """Design of ``u`` per cell: +1 at ``beta_i``, -1 at ``beta_j``, ``s`` at ``gamma``."""
    x = np.zeros((len(keys), n_arms + int(position)))
    r = np.arange(len(keys))
    x[r, keys[:, 0]] += 1.0
    x[r, keys[:, 1]] -= 1.0
    if position:
        x[:, n_arms] = keys[:, 2]
    return x[:, 1:]


def outcome_probabilities(u: np.ndarray, delta: np.ndarray | float | None) -> np.ndarray:
    """Davidson's ``(P(win), P(tie), P(loss))`` on a last axis (``delta`` None: no ties)."""
    half = np.asarray(u, dtype=np.float64) / 2
    logs = [half, np.full_like(half, -np.inf) if delta is None else np.zeros_like(half), -half]
    if delta is not None:
        logs[1] = logs[1] + np.asarray(delta, dtype=np.float64)
    stacked = np.stack(logs, axis=-1)
    top = stacked.max(axis=-1, keepdims=True)
    e = np.exp(stacked - top)
    return e / e.sum(axis=-1, keepdims=True)


def _btd_fit(
    counts: np.ndarray, x: np.ndarray, *, ties: bool = True, init: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """ML ``(beta_1.., gamma, delta)`` (B, d) and convergence of count sets (B, C, 3) at once."""
    counts = _split_ties(np.asarray(counts, dtype=np.float64), ties)
    n_sets = counts.shape[0]
    d = x.shape[1] + int(ties)
    theta = np.zeros((n_sets, d))
    if init is not None:
        theta[:] = init
    elif ties:  # start delta at the pooled tie share (the MLE when every strength is equal)
        n = counts.sum(-1)
        share = np.clip(counts[..., 1].sum(1) / np.maximum(n.sum(1), 1e-300), 1e-6, 1 - 1e-6)
        theta[:, -1] = np.log(2 * share / (1 - share))
    converged = np.zeros(n_sets, dtype=bool)
    eye = 1e-8 * np.eye(d)
    for _ in range(100):
        # A separated resample creeps to the bound for many steps: refit only the moving sets.
        act = np.flatnonzero(~converged)
        if not len(act):
            break
        grad, info = _grad_info(counts[act], theta[act], x, ties)
        step = np.linalg.solve(info + eye, grad[..., None])[..., 0]
        # Bounded steps: Newton on a concave likelihood, but a separated resample would jump.
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 5.0, step * (5.0 / np.maximum(big, 1e-300)), step)
        theta[act] = np.clip(theta[act] + step, -30.0, 30.0)
        converged[act] = np.abs(step).max(axis=1) < 1e-10
    return theta, converged


def _split_ties(counts: np.ndarray, ties: bool) -> np.ndarray:
    if ties:
        return counts
    half = counts[..., 1] / 2
    return np.stack([counts[..., 0] + half, np.zeros_like(half), counts[..., 2] + half], -1)


def _grad_info(
    counts: np.ndarray, theta: np.ndarray, x: np.ndarray, ties: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Score (B, d) and information (B, d, d) of the log-likelihood."""
    n_sets, d_u = len(theta), x.shape[1]
    d = d_u + int(ties)
    w, t, lo = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + t + lo
    p = outcome_probabilities(theta[:, :d_u] @ x.T, theta[:, -1:] if ties else None)
    pw, pt, pl = p[..., 0], p[..., 1], p[..., 2]
    mu = (pw - pl) / 2
    grad = np.empty((n_sets, d))
    grad[:, :d_u] = ((w - lo) / 2 - n * mu) @ x
    info = np.empty((n_sets, d, d))
    var_u = (pw + pl) / 4 - mu**2
    # One BLAS product with the cells' outer products (einsum's path is a slow loop here).
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), d_u * d_u)
    info[:, :d_u, :d_u] = ((n * var_u) @ outer).reshape(n_sets, d_u, d_u)
    if ties:
        grad[:, -1] = (t - n * pt).sum(1)
        info[:, :d_u, -1] = (n * (-mu * pt)) @ x
        info[:, -1, :d_u] = info[:, :d_u, -1]
        info[:, -1, -1] = (n * pt * (1 - pt)).sum(1)
    return grad, info


def _task_scores(per_task, theta: np.ndarray, x: np.ndarray, ties: bool) -> np.ndarray:
    """Each task's score (B, T, d) at each ``theta`` from per-task cell counts (T, C * 3)."""
    m = per_task.toarray() if hasattr(per_task, "toarray") else np.asarray(per_task)
    n_t = m.shape[0]
    c = _split_ties(m.reshape(n_t, -1, 3), ties)
    w, t, lo = c[..., 0], c[..., 1], c[..., 2]
    n = w + t + lo
    d_u = x.shape[1]
    p = outcome_probabilities(theta[:, :d_u] @ x.T, theta[:, -1:] if ties else None)
    mu = (p[..., 0] - p[..., 2]) / 2  # (B, C)
    g_u = (((w - lo) / 2) @ x)[None] - np.einsum("tc,bc,ci->bti", n, mu, x, optimize=True)
    if not ties:
        return g_u
    g_d = t.sum(1)[None] - np.einsum("tc,bc->bt", n, p[..., 1], optimize=True)
    return np.concatenate([g_u, g_d[..., None]], axis=-1)


def _sandwich(total, scores, weights, theta, x, ties: bool) -> np.ndarray:
    """CR1 covariance (B, d, d) from counts (B, C, 3), task scores (B, T, d), weights (B, T)."""
    _, info = _grad_info(_split_ties(total, ties), theta, x, ties)
    n_clusters = weights.sum(1)[:, None, None]
    meat = np.einsum("bt,bti,btj->bij", weights, scores, scores, optimize=True)
    meat *= n_clusters / np.maximum(n_clusters - 1, 1)
    bread = np.linalg.pinv(info)
    return bread @ meat @ bread


def _point_ranks(estimates: np.ndarray) -> np.ndarray:
    """``1 + #{k : x_k > x_j}`` (ties share the better rank), as csranks' ``irank``."""
    x = np.asarray(estimates, dtype=np.float64)
    return 1 + (x[None, :] > x[:, None]).sum(axis=1)


def _rank_bounds(
    x: np.ndarray,
    deviations: np.ndarray,
    *,
    confidence: float = 0.95,
    simultaneous: bool = True,
    two_sided: bool = True,
    stepdown: bool = True,
    se_hat: np.ndarray | None = None,
    se_draws: np.ndarray | None = None,
    se: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank bounds from estimates and centred error draws (B, K), standardised by ``se_hat`` /
    ``se_draws`` (bootstrap-t), else ``se``, else the draws' spread (csranks' ``csdiffmeans``)."""
    x = np.asarray(x, dtype=np.float64)
    dev = np.asarray(deviations, dtype=np.float64)
    k = len(x)
    diff_dev = dev[:, :, None] - dev[:, None, :]  # (B, j, k): error of d_jk = x_j - x_k
    with np.errstate(invalid="ignore", divide="ignore"):
        if se_hat is not None and se_draws is not None:
            se = np.where(np.asarray(se_hat) > 0, se_hat, np.nan)
            z = diff_dev / np.where(se_draws > 0, se_draws, np.nan)
        else:
            if se is None:
                se = np.sqrt(np.mean(diff_dev**2, axis=0))  # centred draws: no mean removed
            se = np.where(se > 0, se, np.nan)
            z = diff_dev / se
        t = (x[:, None] - x[None, :]) / se  # t_jk > c: j surely ahead of k
    off = ~np.eye(k, dtype=bool) & np.isfinite(se)
    lower = np.ones(k, dtype=np.int64)
    upper = np.full(k, k, dtype=np.int64)
    for members in [np.ones(k, bool)] if simultaneous else np.eye(k, dtype=bool):
        fam = np.zeros((k, k), dtype=bool)  # j's claims "k is ahead of j"; two-sided: (k, j)
        fam[members, :] = True
        if two_sided:
            fam |= fam.T
        fam &= off
        ahead = np.zeros((k, k), dtype=bool)
        while True:
            # The confidence quantile of max Z_jk over the claims still open, over the draws.
            open_ = fam & ~ahead
            m = np.where(open_[None], z, -np.inf).reshape(len(z), -1).max(axis=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                c = float(np.nanquantile(m, confidence)) if open_.any() else 0.0
            new = fam & (t > c) & ~ahead
            ahead |= new
            if not new.any() or not stepdown:
                break
        rows = np.flatnonzero(members)
        lower[rows] = 1 + ahead[:, rows].sum(axis=0)
        if two_sided:
            upper[rows] = k - ahead[rows, :].sum(axis=1)
    return lower, upper


def rank_sets(
    estimates: Any,
    *,
    cov: Any = None,
    draws: Any = None,
    confidence: float = 0.95,
    simultaneous: bool = True,
    tau: int | None = None,
    stepdown: bool = True,
    n_resamples: int = 2**15,
    labels: Sequence[str] | None = None,
) -> ResultFrame:
    """Rank confidence sets (and the tau-best set) from estimates and their uncertainty.

    Parameters
    ----------
    estimates : array-like or pandas.Series, shape (K,)
        Larger is better (rank 1); a Series' index names the populations.
    cov, draws : array-like, optional
        Exactly one: the estimates' covariance (K, K), or bootstrap replicates (B, K).
    confidence : float
        Coverage of the sets.
    simultaneous : bool
        All ranks at once (default) or each on its own (marginal).
    tau : int, optional
        Also mark the confidence set for the ``tau`` best (``in_tau_best``).
    stepdown : bool
        The step-down refinement (as csranks).
    n_resamples : int
        Draws of ``N(0, cov)`` (a fixed-seed Sobol sequence: the same sets on every call).
    labels : sequence of str, optional
        Names of the populations (default: the Series index, else ``0 .. K-1``).

    Returns
    -------
    ResultFrame
        Per population: ``arm``, ``statistic = "rank"``, ``estimate`` the point rank,
        ``ci_low`` / ``ci_high`` the rank set, ``in_tau_best`` when ``tau`` is given.

    Examples
    --------
    >>> res = rank_sets([3.0, 2.0, 1.0, 0.9], cov=np.diag([0.01] * 4), tau=3)
    >>> res[["arm", "estimate", "ci_low", "ci_high", "in_tau_best"]].to_string(index=False)
    'arm  estimate  ci_low  ci_high  in_tau_best\\n  0         1       1        1         True\\n  1         2       2        2         True\\n  2         3       3        4         True\\n  3         4       3        4         True'
    """
    confidence = check_confidence(confidence)
    x = np.asarray(estimates, dtype=np.float64).ravel()
    k = len(x)
    if k < 2 or not np.isfinite(x).all():
        raise ParameterError(f"estimates must be at least two finite numbers, got {x.tolist()}")
    if labels is None:
        labels = estimates.index if isinstance(estimates, pd.Series) else range(k)
    labels = [str(v) for v in labels]
    if (cov is None) == (draws is None):
        raise ParameterError("give exactly one of cov= and draws=")
    if cov is not None:
        sigma = np.asarray(cov, dtype=np.float64)
        if sigma.shape != (k, k):
            raise ParameterError(f"cov must be {k} x {k}, got shape {sigma.shape}")
        n_resamples = check_n_resamples(n_resamples, minimum=50, pairs=k * (k - 1) // 2)
        # At least n_resamples draws of N(0, sigma) from a fixed-seed scrambled Sobol sequence.
        vals, vecs = np.linalg.eigh(sigma)
        u = scipy.stats.qmc.Sobol(k, seed=20231).random_base2(int(np.ceil(np.log2(n_resamples))))
        dev = scipy.stats.norm.ppf(u) @ (vecs * np.sqrt(np.clip(vals, 0.0, None))).T
        source = "parametric"
        var = np.diag(sigma)  # standardise by the differences' known SEs
        known_se = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * sigma, 0.0))
    else:
        d = np.asarray(draws, dtype=np.float64)
        if d.ndim != 2 or d.shape[1] != k:
            raise ParameterError(f"draws must be (B, {k}), got shape {d.shape}")
        dev = d[np.isfinite(d).all(axis=1)] - x
        source = "bootstrap"
        known_se = None
    common = {"confidence": confidence, "stepdown": stepdown, "se": known_se}
    lo, hi = _rank_bounds(x, dev, simultaneous=simultaneous, **common)
    method = ("simultaneous" if simultaneous else "marginal") + ("_stepdown" if stepdown else "")
    rows = pd.DataFrame(
        {"arm": labels, "statistic": "rank", "estimate": _point_ranks(x), "ci_low": lo,
         "ci_high": hi, "n": len(dev), "method": method, "confidence": confidence}
    )  # fmt: skip
    if tau is not None:
        tau = check_positive_int(tau, "tau")
        rows["in_tau_best"] = _rank_bounds(x, dev, two_sided=False, **common)[0] <= tau
    diag = pd.DataFrame({"source": [source], "n_resamples": [len(dev)], "tau": [tau]})
    return tidy_frame(rows, by=["arm"], diagnostics=diag, extra=["in_tau_best"])


#: Models of `rank`: `davidson` (ties a parameter), `bradley-terry` (a tie is half a win).
RANK_MODELS = ("davidson", "bradley-terry")
#: Above this many (task x cell x outcome) numbers the rank sets standardise by the draws'
#: spread, not a per-resample sandwich SE (memory).
STUDENTIZE_MAX_CELLS = 3_000_000


def _cell_counts(
    enc: Encoded, keys_index: dict[tuple[int, int, int], int], rows: np.ndarray, n_tasks: int
) -> scipy.sparse.csr_matrix:
    """Per-task (cell, outcome) counts of the chosen rows, a sparse (tasks, cells * 3)."""
    keys, cell, col = _btd_cells(*(v[rows] for v in (enc.a, enc.b, enc.pos, enc.y)), len(enc.arms))
    gidx = np.array([keys_index[tuple(k)] for k in keys.tolist()], dtype=np.int64)[cell]
    n_cells = len(keys_index)
    return scipy.sparse.csr_matrix(
        (np.ones(len(gidx)), (enc.task[rows], gidx * 3 + col)), shape=(n_tasks, n_cells * 3)
    )


def _difference_se(cov: np.ndarray, k: int) -> np.ndarray:
    """SEs of ``beta_j - beta_k`` (B, K, K) from covariances of ``theta`` (B, d, d)."""
    vb = np.zeros((len(cov), k, k))
    vb[:, 1:, 1:] = cov[:, : k - 1, : k - 1]
    diag = np.diagonal(vb, axis1=1, axis2=2)
    return np.sqrt(np.maximum(diag[:, :, None] + diag[:, None, :] - 2 * vb, 0.0))


def _fit_all(per_task, combine, x, ties, n_resamples, rng, k=None):
    """Point and task-bootstrap fits of ``combine(*per-task totals)``; with ``k`` (one source)
    also the CR1 SEs of the strength differences, point and per resample (bootstrap-t)."""
    n_t, n_cells = per_task[0].shape[0], x.shape[0]
    total = combine(*(np.asarray(m.sum(axis=0)).reshape(1, -1) for m in per_task))
    total = total.reshape(1, n_cells, 3)
    point, _ = _btd_fit(total, x, ties=ties)
    draws, se_draws = [], []
    for weights in task_resamples(n_t, n_resamples, rng, max_cells=2_000_000 if k else 4_000_000):
        tot = combine(*(np.asarray((m.T @ weights.T).T) for m in per_task))
        tot = tot.reshape(len(weights), n_cells, 3)
        theta, _ = _btd_fit(tot, x, ties=ties)
        draws.append(theta)
        if k:
            scores = _task_scores(per_task[0], theta, x, ties)
            se_draws.append(_difference_se(_sandwich(tot, scores, weights, theta, x, ties), k))
    if not k:
        return point[0], np.concatenate(draws), None, None
    scores = _task_scores(per_task[0], point, x, ties)
    cov = _sandwich(total, scores, np.ones((1, n_t)), point, x, ties)
    return point[0], np.concatenate(draws), _difference_se(cov, k)[0], np.concatenate(se_draws)


def _strengths(theta: np.ndarray, k: int) -> np.ndarray:
    """Centred log-strengths ``(..., K)`` from ``theta``'s first K - 1 entries."""
    beta = np.concatenate([np.zeros((*theta.shape[:-1], 1)), theta[..., : k - 1]], axis=-1)
    return beta - beta.mean(axis=-1, keepdims=True)


def _pair_keys(e: Encoded) -> pd.Series:
    """Each row's task and unordered pair of arms, as one string (matches labels to verdicts)."""
    lo, hi = pd.Series(np.minimum(e.a, e.b)).astype(str), pd.Series(np.maximum(e.a, e.b))
    return pd.Series(e.tasks[e.task]).str.cat([lo, hi.astype(str)], sep="|")


def rank(
    frame: pd.DataFrame,
    *,
    labels: pd.DataFrame | None = None,
    judge: str | None = None,
    rubric: str | None = None,
    model: str = "davidson",
    confidence: float = 0.95,
    sets: Sequence[str] = ("simultaneous",),
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    tau: int | None = 1,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Bradley-Terry(-Davidson) strengths, P(i beats j) and rank sets of every arm.

    Parameters
    ----------
    frame : pandas.DataFrame
        A verdict frame (``arm_a``, ``arm_b`` on every row).
    labels : pandas.DataFrame, optional
        People's verdicts (one judge) on a random subset of ``frame``'s judgments: the
        prediction-powered ranking.
    judge, rubric : str, optional
        Whose verdicts, needed when ``frame`` has several.
    model : {"davidson", "bradley-terry"}
        Davidson ties, or ties split half-half.
    confidence : float
        Level of the intervals and of the rank sets.
    sets : sequence of {"simultaneous", "marginal"}
        Rank sets covering all ranks at once (default) and/or each on its own: a ``rank`` row
        per arm and set (``method`` names it), all from the same resamples.
    n_resamples, rng : int, numpy.random.Generator or int
        Task-cluster bootstrap resamples and their seed.
    tau : int, optional
        Mark the confidence set for the ``tau`` best (``in_tau_best``; 1: which may be best).
    arms : sequence of str, optional
        The arms' order.

    Returns
    -------
    ResultFrame
        ``arm``, ``opponent``, the tidy columns and ``in_tau_best``; rows ``strength``,
        ``rank`` (``ci_low`` / ``ci_high`` the rank set), ``p_beats`` (per ordered pair),
        ``tie_nu`` and ``position``; an arm without verdicts: NaN and ``ci_note`` saying so.
        ``diagnostics``: judge, ``lambda`` (PPI), convergence.

    Examples
    --------
    >>> f = pd.DataFrame({"task_id": [f"t{i}" for i in range(60)], "judge": "j",
    ...                   "arm_a": ["x", "y", "x"] * 20, "arm_b": ["y", "z", "z"] * 20,
    ...                   "status": "ok", "outcome": ["win", "win", "tie", "win", "loss"] * 12})
    >>> res = rank(f, n_resamples=200, rng=0)
    >>> res.loc[res.statistic == "rank", ["arm", "estimate", "ci_low", "ci_high"]].to_string(index=False)
    'arm  estimate  ci_low  ci_high\\n  x       1.0     1.0      2.0\\n  y       2.0     1.0      3.0\\n  z       3.0     2.0      3.0'
    """
    kinds = tuple(sets)
    if not kinds or set(kinds) - {"simultaneous", "marginal"}:
        raise ParameterError(f"sets must name 'simultaneous' and/or 'marginal', got {sets}")
    confidence = check_confidence(confidence)
    check_choice(model, "model", RANK_MODELS)
    tau = None if tau is None else check_positive_int(tau, "tau")
    ties = model == "davidson"
    rng = as_generator(rng)
    enc = encode(frame, judge=judge, rubric=rubric, arms=arms)
    k = len(enc.arms)
    n_resamples = check_n_resamples(n_resamples, minimum=50, pairs=k * (k - 1) // 2)
    judged = np.isin(np.arange(k), np.concatenate([enc.a, enc.b]))
    if not judged.all():  # an arm without verdicts gets a reason, never the reference's copy
        kw = {"labels": labels, "judge": enc.judge, "rubric": rubric, "model": model,
              "sets": kinds, "n_resamples": n_resamples, "tau": tau}  # fmt: skip
        res = rank(frame, confidence=confidence, rng=rng, arms=np.array(enc.arms)[judged], **kw)
        none = pd.DataFrame({"arm": np.repeat(np.array(enc.arms)[~judged], 2), "n": 0, "n_tasks": 0,
                             "statistic": ["strength", "rank"] * int((~judged).sum()),
                             "confidence": confidence, "ci_note": _NO_VERDICTS})  # fmt: skip
        none["method"] = none["statistic"].map(
            res.drop_duplicates("statistic").set_index("statistic")["method"]
        )
        out = pd.concat([pd.DataFrame(res), none], ignore_index=True)
        extra = ["in_tau_best", "ci_note"]
        return tidy_frame(out, by=["arm", "opponent"], diagnostics=res.diagnostics, extra=extra)
    rows_all = np.arange(len(enc.a))
    lab = None
    if labels is not None:
        lab = encode(labels, arms=enc.arms)
        labelled = _pair_keys(enc).isin(set(_pair_keys(lab))).to_numpy()
        if labelled.sum() < 2:
            raise DataError("labels match fewer than two of the judge's judgments", field="task_id")
        where = pd.Index(enc.tasks).get_indexer(lab.tasks)  # index the judge's task list
        if (where < 0).any():
            missing = lab.tasks[where < 0][0]
            raise DataError(f"labelled task {missing!r} has no judge verdict", field="task_id")
        lab = replace(lab, tasks=enc.tasks, task=where[lab.task])
    keys, position, encs = _cells(k, enc, *([] if lab is None else [lab]))
    enc, lab = encs[0], (None if lab is None else encs[1])
    index = {tuple(kk): i for i, kk in enumerate(keys.tolist())}
    x = _btd_design(keys, k, position)
    n_t = enc.n_tasks
    lam = np.nan
    if lab is None:
        per_task = _cell_counts(enc, index, rows_all, n_t)
        student = n_t * x.shape[0] * 3 <= STUDENTIZE_MAX_CELLS
        per_task = [per_task.toarray() if student else per_task]
        point, draws, se_hat, se_draws = _fit_all(
            per_task, lambda m: m, x, ties, n_resamples, rng, k if student else None
        )
        method = "task_bootstrap_percentile"
    else:
        human = _cell_counts(lab, index, np.arange(len(lab.a)), n_t)
        j_all = _cell_counts(enc, index, rows_all, n_t)
        j_lab = _cell_counts(enc, index, np.flatnonzero(labelled), n_t)
        state = rng.bit_generator.state
        sep = []
        for m in (human, j_all, j_lab):  # the three fits and the PP fit share the resamples
            rng.bit_generator.state = state
            sep.append(_strengths(_fit_all([m], lambda c: c, x, ties, n_resamples, rng)[1], k))
        rng.bit_generator.state = state
        lam = float(_ppi_lambda(*(s[None] for s in sep))[0])
        point, draws, se_hat, se_draws = _fit_all(
            [human, j_all, j_lab], lambda *c: _pp_counts(*c, lam), x, ties, n_resamples, rng
        )
        method = "ppi_task_bootstrap_percentile"
    beta, beta_b = _strengths(point, k), _strengths(draws, k)
    ok = np.isfinite(beta_b).all(axis=1)
    se = (None, None) if se_draws is None else (se_hat[None], se_draws[None])
    sets = _bounds(beta[None], beta_b[None], n_t, confidence, (*kinds, "best"), *se)
    best = sets["best"][0][0]
    beta_b = beta_b[ok]
    qs = [(1 - confidence) / 2, (1 + confidence) / 2]
    lo_hi = np.quantile(beta_b, qs, axis=0)
    diff, diff_b = beta[:, None] - beta[None, :], beta_b[:, :, None] - beta_b[:, None, :]
    p_win = outcome_probabilities(diff, point[-1] if ties else None)[..., 0]
    p_win_b = outcome_probabilities(diff_b, draws[ok, -1, None, None] if ties else None)[..., 0]
    p_lo_hi = np.quantile(p_win_b, qs, axis=0)
    common = {"n": len(enc.a), "n_tasks": n_t, "method": method, "confidence": confidence}
    out: list[dict] = []
    ranks = _point_ranks(beta)
    for i, arm in enumerate(enc.arms):
        out.append({"arm": arm, "opponent": None, "statistic": "strength", "estimate": beta[i],
                    "se": beta_b[:, i].std(ddof=1), "ci_low": lo_hi[0, i], "ci_high": lo_hi[1, i],
                    **common})  # fmt: skip
        for kind in kinds:
            (r_lo, r_hi) = (v[0] for v in sets[kind])
            out.append({"arm": arm, "opponent": None, "statistic": "rank", "estimate": ranks[i],
                        "ci_low": r_lo[i], "ci_high": r_hi[i], **common,
                        "method": f"{kind}_stepdown",
                        "in_tau_best": None if tau is None else bool(best[i] <= tau)})  # fmt: skip
    for i, arm in enumerate(enc.arms):
        for j, opp in enumerate(enc.arms):
            if i != j:
                out.append({"arm": arm, "opponent": opp, "statistic": "p_beats",
                            "estimate": p_win[i, j], "se": p_win_b[:, i, j].std(ddof=1),
                            "ci_low": p_lo_hi[0, i, j], "ci_high": p_lo_hi[1, i, j], **common})  # fmt: skip
    extras = [("tie_nu", -1, np.exp)] if ties else []
    extras += [("position", k - 1, np.asarray)] if position else []
    for name, col, f in extras:
        vals = f(draws[ok, col])
        q = np.quantile(vals, qs)
        out.append({"arm": None, "opponent": None, "statistic": name,
                    "estimate": float(f(point[col])), "se": vals.std(ddof=1), "ci_low": q[0],
                    "ci_high": q[1], **common})  # fmt: skip
    diagnostics = pd.DataFrame(
        {"judge": [enc.judge], "model": [model], "position_effect": [position],
         "n_resamples": [n_resamples], "n_finite_resamples": [int(ok.sum())], "lambda": [lam],
         "n_labelled": [np.nan if lab is None else len(lab.a)], "tau": [tau]}
    )  # fmt: skip
    return tidy_frame(
        pd.DataFrame(out), by=["arm", "opponent"], diagnostics=diagnostics, extra=["in_tau_best"]
    )


#: The estimators of the study, in their order in the results.
SUBSAMPLE_ESTIMATORS = ("full_human", "judge_only", "human_only", "human_only_percentile", "ppr")
_MAX_SETS = 4_000  # fitted sets (subsamples x resamples) per batch: bounds the memory


class _Design:
    """Battles as cells and outcome columns; every judge's column per battle."""

    def __init__(self, frame: pd.DataFrame, human: str, judges: Sequence[str], arms) -> None:
        eh = encode(frame, judge=human, arms=arms)
        if len(np.unique(eh.task)) != len(eh.task):
            raise DataError(
                f"{human}: a task holds several judgments; the subsample study needs one "
                "battle per task (Chatbot Arena's design)",
                field="task_id",
            )
        self.arms, self.k, self.n = eh.arms, len(eh.arms), len(eh.task)
        cols = {}
        for j in judges:
            ej = encode(frame, judge=j, arms=self.arms)
            where = pd.Index(eh.tasks[eh.task]).get_indexer(ej.tasks[ej.task])
            if len(ej.task) != self.n or (where < 0).any() or len(np.unique(where)) != self.n:
                raise DataError(
                    f"judge {j!r} must judge exactly the {self.n} battles of {human!r}, once each",
                    field="task_id",
                )
            order = np.empty(self.n, dtype=np.int64)
            order[where] = np.arange(self.n)
            if (ej.a[order] != eh.a).any() or (ej.b[order] != eh.b).any():
                raise DataError(
                    f"judge {j!r}: a battle's arms differ from {human!r}'s", field="arm_a"
                )
            cols[j] = ej.y[order]
        keys, self.position, (eh,) = _cells(self.k, eh)
        _, self.cell, col = _btd_cells(eh.a, eh.b, eh.pos, eh.y, self.k)
        self.x = _btd_design(keys, self.k, self.position)
        self.n_cells = len(keys)
        swap = eh.a > eh.b  # cells() orients every battle to a < b; so must the judges
        self.col = {human: col, **{j: np.where(swap, y, 2 - y) for j, y in cols.items()}}

    def types(self, judge: str) -> np.ndarray:
        """Each battle's (cell, outcome) type, in [0, 3 * n_cells)."""
        return self.cell * 3 + self.col[judge]


def _type_fit(counts: np.ndarray, x: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
    """Davidson fits of count sets (M, 3C), started at ``init`` (M, d) when given."""
    return _btd_fit(counts.reshape(len(counts), -1, 3), x, ties=True, init=init)[0]


def _multinomial(rng, n: int, counts: np.ndarray, n_resamples: int) -> np.ndarray:
    """Bootstrap type counts (S * B, T): ``n`` battles with replacement from each row's types."""
    s, t = counts.shape
    nz = np.flatnonzero(counts.sum(0) > 0)
    draw = rng.multinomial(n, counts[:, nz] / n, size=(n_resamples, s)).transpose(1, 0, 2)
    out = np.zeros((s * n_resamples, t))
    out[:, nz] = draw.reshape(s * n_resamples, len(nz))
    return out


def _type_se(d: _Design, counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """CR1 sandwich SEs of the strength differences (M, K, K) from type counts (M, 3C)."""
    out = np.empty((len(counts), d.k, d.k))
    sgn = np.array([0.5, 0.0, -0.5])  # d u-score / d count: win +1/2, tie 0, loss -1/2
    tie = np.array([0.0, 1.0, 0.0])
    du = d.x.shape[1]
    for lo in range(0, len(counts), 400):  # blocks of sets: scores are (sets, C, 3, d)
        th, c = theta[lo : lo + 400], counts[lo : lo + 400]
        p = outcome_probabilities(th[:, :du] @ d.x.T, th[:, -1:])
        mu = (p[..., 0] - p[..., 2]) / 2
        g_u = (sgn - mu[..., None])[..., None] * d.x[None, :, None, :]
        g_d = tie - p[..., 1:2]
        scores = np.concatenate([g_u, g_d[..., None]], axis=-1).reshape(len(th), c.shape[1], -1)
        cov = _sandwich(c.reshape(len(c), -1, 3), scores, c, th, d.x, True)
        out[lo : lo + 400] = _difference_se(cov, d.k)
    return out


def _bounds(beta, beta_b, n_tasks, confidence, sets, se_hat=None, se_draws=None):
    """Rank sets of every fit (a row of ``beta``): {"simultaneous"/"marginal"/"best": (lo, hi)}."""
    out = {m: (np.empty(beta.shape, np.int64), np.empty(beta.shape, np.int64)) for m in sets}
    for i in range(len(beta)):  # per subsample: the step-down is sequential
        ok = np.isfinite(beta_b[i]).all(axis=1)
        if se_draws is None:  # the bootstrap's plug-in variance lacks the CR1 C / (C - 1)
            dev, kw = (beta_b[i][ok] - beta[i]) * np.sqrt(n_tasks / max(n_tasks - 1, 1)), {}
        else:
            dev, kw = beta_b[i][ok] - beta[i], {"se_hat": se_hat[i], "se_draws": se_draws[i][ok]}
        for m in sets:
            one = {"simultaneous": m != "marginal", "two_sided": m != "best"}
            lo, hi = _rank_bounds(beta[i], dev, confidence=confidence, **one, **kw)
            out[m][0][i], out[m][1][i] = lo, hi
    return out


def _human_like(d, types, mask, n_resamples, rng, confidence, sets, percentile=False):
    """``rank`` of one judge on each row's battles of ``mask`` (S, N); ``percentile``: also the
    spread-standardised sets (None if not studentized)."""
    n_tasks = int(mask[0].sum())
    counts = np.stack([np.bincount(types[m], minlength=3 * d.n_cells) for m in mask]).astype(float)
    student = n_tasks * d.n_cells * 3 <= STUDENTIZE_MAX_CELLS
    point = _type_fit(counts, d.x)
    boot = _multinomial(rng, n_tasks, counts, n_resamples)
    theta = _type_fit(boot, d.x, np.repeat(point, n_resamples, axis=0))
    se_hat = se_draws = None
    if student:
        se_hat = _type_se(d, counts, point)
        se_draws = _type_se(d, boot, theta).reshape(len(counts), n_resamples, d.k, d.k)
    beta = _strengths(point, d.k)
    beta_b = _strengths(theta.reshape(len(counts), n_resamples, -1), d.k)
    bounds = _bounds(beta, beta_b, n_tasks, confidence, sets, se_hat, se_draws)
    if not percentile:
        return beta, bounds
    alt = _bounds(beta, beta_b, n_tasks, confidence, sets) if student else None
    return beta, bounds, alt


def _ppi_lambda(bh: np.ndarray, ba: np.ndarray, bl: np.ndarray) -> np.ndarray:
    """PPI++ ``lambda`` per set (S, B, K): argmin trace ``Var(b_H + lambda (b_J - b_JL))``."""
    delta = ba - bl
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dh, dd = bh - bh.mean(1, keepdims=True), delta - delta.mean(1, keepdims=True)
        cross = np.nanmean((dh * dd).sum(2), axis=1)
        var = np.nanmean((dd**2).sum(2), axis=1)
    lam = np.where(var > 0, -cross / np.where(var > 0, var, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def _pp_counts(human, judge_all, judge_labelled, lam):
    """The prediction-powered objective's counts: ``H + lam (n / N J_all - J_L)`` per set."""
    n_l, n_a = judge_labelled.sum(1, keepdims=True), judge_all.sum(1, keepdims=True)
    return human + lam * (n_l / n_a * judge_all - judge_labelled)


def _ppr(d, judge, human, labelled, n_resamples, rng, confidence, sets, lam=None):
    """Prediction-powered ``rank`` per subsample (``labelled`` (S, N) marks its human votes)."""
    c3, n = 3 * d.n_cells, d.n
    jt, ht = d.types(judge), d.col[human]
    types = np.where(labelled, c3 + jt[None] * 3 + ht[None], jt[None])
    counts = np.stack([np.bincount(t, minlength=c3 * 4) for t in types]).astype(float)
    s = len(counts)

    def split(tc: np.ndarray):
        lab = tc[:, c3:].reshape(len(tc), d.n_cells, 3, 3)  # (cell, judge col, human col)
        j_lab = lab.sum(3).reshape(len(tc), c3)
        return lab.sum(2).reshape(len(tc), c3), tc[:, :c3] + j_lab, j_lab

    boot = _multinomial(rng, n, counts, n_resamples)
    parts, parts_b = split(counts), split(boot)
    starts = [np.repeat(_type_fit(p, d.x), n_resamples, axis=0) for p in parts]
    bh, ba, bl = (
        _strengths(_type_fit(p, d.x, st), d.k).reshape(s, n_resamples, d.k)
        for p, st in zip(parts_b, starts, strict=True)
    )
    lam = _ppi_lambda(bh, ba, bl) if lam is None else np.asarray(lam, dtype=np.float64)
    point = _type_fit(_pp_counts(*parts, lam[:, None]), d.x)
    lam_b = np.repeat(lam, n_resamples)[:, None]
    draws = _type_fit(_pp_counts(*parts_b, lam_b), d.x, np.repeat(point, n_resamples, 0))
    beta, beta_b = _strengths(point, d.k), _strengths(draws, d.k).reshape(s, n_resamples, d.k)
    return beta, _bounds(beta, beta_b, n, confidence, sets), lam


def rank_subsamples(
    frame: pd.DataFrame,
    *,
    human: str = "human",
    judges: Sequence[str] | None = None,
    n_labels: int = 1000,
    n_subsamples: int = 20,
    confidence: float = 0.95,
    n_resamples: int = 500,
    sets: Sequence[str] = ("simultaneous",),
    rng: np.random.Generator | int | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Rank sets of the all-human, human-only, judge-only and prediction-powered rankings on
    repeated random subsamples of the human votes (Chatzi et al., NeurIPS 2024).

    Parameters
    ----------
    frame : pandas.DataFrame
        A stacked verdict frame in which every judge judges the same battles, one per task
        (:func:`evalstats.adapters.arena.load` with ``judge="all"``).
    human : str
        The judge whose verdicts are the truth (people).
    judges : sequence of str, optional
        The LLM judges (default: every other judge).
    n_labels, n_subsamples : int
        Human votes per subsample (without replacement); how many subsamples.
    sets : sequence of {"simultaneous", "marginal"}
        Which rank sets to compute.
    confidence, n_resamples, rng, arms
        As :func:`rank` (``n_resamples`` per fit; ``rng`` draws the subsamples first).

    Returns
    -------
    ResultFrame
        ``estimator`` (:data:`SUBSAMPLE_ESTIMATORS`), ``judge``, ``subsample`` (missing for
        the estimators on every battle), ``arm``; ``statistic`` ``"rank"`` (``ci_low`` /
        ``ci_high`` the rank set, ``method`` which set) and ``"lambda"`` (``ppr``).

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> pair = rng.integers(0, 3, 300)
    >>> f = pd.concat([pd.DataFrame({"task_id": np.arange(300).astype(str), "judge": j,
    ...     "arm_a": np.array(list("xyz"))[pair], "arm_b": np.array(list("yzx"))[pair],
    ...     "status": "ok", "outcome": rng.choice(["win", "tie", "loss"], 300, p=p)})
    ...     for j, p in (("human", [0.4, 0.2, 0.4]), ("llm", [0.5, 0.2, 0.3]))])
    >>> r = rank_subsamples(f, n_labels=100, n_subsamples=3, n_resamples=100, rng=0)
    >>> sorted(set(r["estimator"])), int(r["subsample"].max())
    (['full_human', 'human_only', 'human_only_percentile', 'judge_only', 'ppr'], 2)
    """
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples, minimum=50)
    n_subsamples = check_positive_int(n_subsamples, "n_subsamples")
    sets = tuple(sets)
    if not sets or set(sets) - {"simultaneous", "marginal"}:
        raise ParameterError(f"sets must name 'simultaneous' and/or 'marginal', got {sets}")
    rng = as_generator(rng)
    if judges is None:
        judges = [j for j in pd.unique(frame["judge"].astype(str)) if j != human]
    judges = [str(j) for j in judges]
    if not judges:
        raise ParameterError("no LLM judge in the frame besides the human one")
    d = _Design(frame, human, judges, arms)
    n_labels = check_positive_int(n_labels, "n_labels", minimum=2)
    if n_labels >= d.n:
        raise ParameterError(f"n_labels must be below the {d.n} battles, got {n_labels}")
    # S random n-subsets of the battles (argpartition of uniform keys).
    keys = rng.random((n_subsamples, d.n))
    labelled = np.zeros((n_subsamples, d.n), dtype=bool)
    np.put_along_axis(labelled, np.argpartition(keys, n_labels - 1, axis=1)[:, :n_labels], True, 1)
    rows: list[pd.DataFrame] = []

    def emit(estimator, judge, subsample, beta, bounds, n_verdicts, n_tasks):
        ranks = np.concatenate([_point_ranks(b) for b in beta])
        arm = np.tile(np.array(d.arms, dtype=object), len(beta))
        for m, (lo, hi) in bounds.items():
            rows.append(pd.DataFrame(
                {"estimator": estimator, "judge": judge, "subsample": np.repeat(subsample, d.k),
                 "arm": arm, "statistic": "rank", "estimate": ranks, "ci_low": lo.ravel(),
                 "ci_high": hi.ravel(), "n": n_verdicts, "n_tasks": n_tasks,
                 "method": f"{m}_stepdown", "confidence": confidence}
            ))  # fmt: skip

    every = np.ones((1, d.n), dtype=bool)
    for est, judge in (("full_human", human), *(("judge_only", j) for j in judges)):
        beta, bounds = _human_like(d, d.types(judge), every, n_resamples, rng, confidence, sets)
        emit(est, judge, np.array([pd.NA], dtype=object), beta, bounds, d.n, d.n)
    chunk = max(1, _MAX_SETS // n_resamples)
    for start in range(0, n_subsamples, chunk):  # batches of subsamples (memory)
        part = labelled[start : start + chunk]
        idx = np.arange(start, start + len(part), dtype=object)
        beta, bounds, alt = _human_like(
            d, d.types(human), part, n_resamples, rng, confidence, sets, percentile=True
        )
        emit("human_only", human, idx, beta, bounds, n_labels, n_labels)
        if alt is not None:  # the PPR fit's construction, on the human-only draws
            emit("human_only_percentile", human, idx, beta, alt, n_labels, n_labels)
        for j in judges:
            beta, bounds, lam = _ppr(d, j, human, part, n_resamples, rng, confidence, sets)
            emit("ppr", j, idx, beta, bounds, d.n + n_labels, d.n)
            rows.append(
                pd.DataFrame({"estimator": "ppr", "judge": j, "subsample": idx, "arm": None,
                              "statistic": "lambda", "estimate": lam, "n": n_labels,
                              "n_tasks": d.n, "method": "ppi++", "confidence": confidence})
            )  # fmt: skip
    out = pd.concat(rows, ignore_index=True)
    order = {e: i for i, e in enumerate(SUBSAMPLE_ESTIMATORS)}
    out = out.iloc[
        np.lexsort((out["subsample"].fillna(-1).astype(int), out["estimator"].map(order)))
    ]
    diagnostics = pd.DataFrame(
        {"n_battles": [d.n], "n_labels": [n_labels], "n_subsamples": [n_subsamples],
         "n_resamples": [n_resamples], "position_effect": [d.position]}
    )  # fmt: skip
    return tidy_frame(out, by=["estimator", "judge", "subsample", "arm"], diagnostics=diagnostics)


def subsample_coverage(
    ranks: pd.DataFrame, *, method: str = "simultaneous_stepdown"
) -> ResultFrame:
    """Coverage of the all-human ranking and mean rank-set size, per estimator and judge.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`rank_subsamples`' result.
    method : str
        Which rank sets to score.

    Returns
    -------
    ResultFrame
        Per ``estimator`` and ``judge``: ``coverage``, ``intersects``, ``set_size`` and, for
        ``ppr``, ``size_vs_human_only*`` (paired) and ``lambda``; ``se`` the Monte Carlo SE.

    Examples
    --------
    >>> r = pd.DataFrame({"estimator": ["full_human"] * 2 + ["human_only"] * 4,
    ...                   "judge": "h", "subsample": [pd.NA, pd.NA, 0, 0, 1, 1],
    ...                   "arm": ["x", "y"] * 3, "statistic": "rank",
    ...                   "estimate": [1, 2, 1, 2, 2, 1], "ci_low": [1, 2, 1, 1, 1, 1],
    ...                   "ci_high": [1, 2, 2, 2, 2, 1], "method": "simultaneous_stepdown",
    ...                   "n": 50, "n_tasks": 50, "confidence": 0.95})
    >>> subsample_coverage(r)[["statistic", "estimate", "n"]].to_string(index=False)
    ' statistic  estimate  n\\n  coverage      0.50  2\\nintersects      0.50  2\\n  set_size      1.75  2'
    """
    r = ranks[(ranks["statistic"] == "rank") & (ranks["method"] == method)]
    truth = r[r["estimator"] == "full_human"]
    if truth.empty:
        raise DataError(
            "no full_human rank rows: pass rank_subsamples()' result", field="estimator"
        )
    true_rank = truth.set_index("arm")["estimate"]
    t_lo, t_hi = truth.set_index("arm")["ci_low"], truth.set_index("arm")["ci_high"]
    r = r[r["estimator"] != "full_human"].assign(
        _cov=lambda f: (
            (f["ci_low"] <= f["arm"].map(true_rank)) & (f["arm"].map(true_rank) <= f["ci_high"])
        ),
        _meet=lambda f: (f["ci_low"] <= f["arm"].map(t_hi)) & (f["arm"].map(t_lo) <= f["ci_high"]),
        _size=lambda f: f["ci_high"] - f["ci_low"] + 1,
        _sub=lambda f: f["subsample"].fillna(-1).astype(int),
    )
    per = r.groupby(["estimator", "judge", "_sub"], sort=False).agg(
        cov=("_cov", "all"), meet=("_meet", "all"), size=("_size", "mean"),
        n=("n", "first"), n_tasks=("n_tasks", "first"), confidence=("confidence", "first"),
    ).reset_index()  # fmt: skip
    lam = ranks[ranks["statistic"] == "lambda"].groupby(["judge"])["estimate"]
    lam_mean, lam_sd = lam.mean(), lam.std(ddof=1)
    humans = {
        ref: per.loc[per["estimator"] == ref, ["_sub", "size"]]
        for ref in ("human_only", "human_only_percentile")
        if (per["estimator"] == ref).any()
    }
    out = []
    for (est, judge), g in per.groupby(["estimator", "judge"], sort=False):
        s = len(g)
        base = {"estimator": est, "judge": judge, "n": s, "n_tasks": int(g["n_tasks"].iloc[0]),
                "confidence": g["confidence"].iloc[0]}  # fmt: skip
        for name, col, kind in (("coverage", "cov", "share"), ("intersects", "meet", "share"),
                                ("set_size", "size", "mean")):  # fmt: skip
            v = g[col].to_numpy(dtype=float)
            est_v = float(v.mean())
            sd = np.sqrt(est_v * (1 - est_v)) if kind == "share" else v.std(ddof=1)
            se = float(sd / np.sqrt(s)) if s > 1 else np.nan
            out.append({**base, "statistic": name, "estimate": est_v, "se": se,
                        "method": f"monte_carlo_{method}"})  # fmt: skip
        for ref, other in humans.items() if est == "ppr" else ():
            # Paired: the same human votes enter both estimators.
            both = g.merge(other, on="_sub", suffixes=("", "_h"))
            dv = (both["size"] - both["size_h"]).to_numpy(dtype=float)
            if not len(dv):
                continue
            se = float(dv.std(ddof=1) / np.sqrt(len(dv))) if len(dv) > 1 else np.nan
            z = float(scipy.stats.norm.ppf(0.5 + float(base["confidence"]) / 2))
            out.append({**base, "n": len(dv), "statistic": f"size_vs_{ref}",
                        "estimate": float(dv.mean()), "se": se,
                        "ci_low": float(dv.mean()) - z * se, "ci_high": float(dv.mean()) + z * se,
                        "method": f"paired_normal_{method}"})  # fmt: skip
        if est == "ppr":
            out.append({**base, "statistic": "lambda", "estimate": float(lam_mean[judge]),
                        "se": float(lam_sd[judge] / np.sqrt(s)) if s > 1 else np.nan,
                        "method": "ppi++"})  # fmt: skip
    return tidy_frame(pd.DataFrame(out), by=["estimator", "judge"])
