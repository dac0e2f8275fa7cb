"""Anytime-valid monitoring: a confidence sequence for the net win (or a rate) over tasks as
they complete, valid at every look, and the stop rule read from it. The construction and its
type-I error under continuous monitoring: docs/methods.md, "Monitoring".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_choice, check_columns, check_confidence
from ..errors import DataError, ParameterError

__all__ = ["MONITOR_STATISTICS", "betting_cs", "monitor"]

#: statistic -> (value of win, tie, loss per verdict; the range of a task's mean).
MONITOR_STATISTICS = {
    "net_win": ((1.0, 0.0, -1.0), (-1.0, 1.0)),
    "win_rate": ((1.0, 0.0, 0.0), (0.0, 1.0)),
    "loss_rate": ((0.0, 0.0, 1.0), (0.0, 1.0)),
}
_GRID = 2000  # candidate means: the limits are exact to 1 / _GRID of the range


def betting_cs(x: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Running-intersection hedged betting confidence sequence for the mean of values in [0, 1].

    Waudby-Smith & Ramdas (2023, JRSS-B), Theorem 3 with the predictable plug-in bets and
    c = 1/2: valid at every ``t`` simultaneously for independent values with a common mean.

    Parameters
    ----------
    x : array of float in [0, 1]
        The observations in the order they arrived.
    confidence : float
        ``1 - alpha``: with probability at least this, the mean lies in every interval.

    Returns
    -------
    (low, high) : arrays
        The limits after each observation.

    Examples
    --------
    >>> low, high = betting_cs(np.r_[np.ones(30), np.zeros(10)])
    >>> bool(low[-1] > 0.5), bool(high[-1] < 1.0)
    (True, True)
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or np.any(~np.isfinite(x)) or np.any((x < 0) | (x > 1)):
        raise ParameterError("betting_cs needs a 1-d array of values in [0, 1]")
    alpha = 1.0 - check_confidence(confidence)
    t = np.arange(1, x.size + 1, dtype=np.float64)
    mu_hat = (0.5 + np.cumsum(x)) / (t + 1.0)
    var_hat = (0.25 + np.cumsum((x - mu_hat) ** 2)) / (t + 1.0)
    var_prev = np.r_[0.25, var_hat[:-1]]  # predictable: bet t uses what t - 1 had seen
    lam = np.sqrt(2.0 * np.log(2.0 / alpha) / (var_prev * t * np.log1p(t)))
    m = (np.arange(_GRID) + 0.5) / _GRID
    dev = x[:, None] - m[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.cumsum(np.log1p(np.minimum(lam[:, None], 0.5 / m) * dev), axis=0)
        down = np.cumsum(np.log1p(-np.minimum(lam[:, None], 0.5 / (1.0 - m)) * dev), axis=0)
    # Hedged capital max(K+/2, K-/2) < 1/alpha: m stays in the sequence.
    inside = np.maximum(up, down) < np.log(2.0 / alpha)
    inside = np.logical_and.accumulate(inside, axis=0)  # the running intersection
    any_in = inside.any(axis=1)
    first = np.argmax(inside, axis=1)
    last = _GRID - 1 - np.argmax(inside[:, ::-1], axis=1)
    step = 0.5 / _GRID
    low = np.where(any_in, np.maximum(m[first] - step, 0.0), np.nan)
    high = np.where(any_in, np.minimum(m[last] + step, 1.0), np.nan)
    return low, high


def monitor(
    frame: pd.DataFrame,
    *,
    statistic: str = "net_win",
    order: str | None = None,
    cluster: str = "task_id",
    by: str | Sequence[str] | None = None,
    margin: float | None = None,
    confidence: float = 0.95,
) -> ResultFrame:
    """A confidence sequence over tasks as they complete, with the stop rule at every look.

    Each task contributes the mean of its verdicts (net win: win 1, tie 0, loss -1); tasks enter
    in ``order``. The sequence (:func:`betting_cs`) holds at every look at once, so stopping when
    it decides keeps the error rate at ``1 - confidence``: ``better`` / ``worse`` (excludes 0),
    ``equivalent`` (inside ``(-margin, margin)``) or ``continue``, with ``more_tasks`` projected
    (a guide). See docs/methods.md, "Monitoring".

    Parameters
    ----------
    frame : DataFrame
        A verdict frame: ``cluster``, ``outcome`` (win / tie / loss from ``arm_a``'s view) and
        the ``by`` columns; rows without an outcome are left out.
    statistic : {"net_win", "win_rate", "loss_rate"}
    order : str, optional
        The column that orders tasks (per task, its largest value).
    cluster : str
        The task column.
    by : str or list of str, optional
        Separate sequences per group; default the frame's arm pair, judge and rubric columns.
    margin : float, optional
        Equivalence margin for the net win.
    confidence : float
        ``1 - alpha`` over the whole sequence.

    Returns
    -------
    ResultFrame
        One row per group and look: ``n_tasks`` seen, ``estimate`` (mean so far), ``ci_low``,
        ``ci_high``, extra ``decision`` and ``more_tasks`` (last look of each group);
        ``summary()`` shows every look, ``result.groupby(by).tail(1)`` the latest.

    Examples
    --------
    >>> import pandas as pd
    >>> verdicts = pd.DataFrame({"task_id": range(60), "outcome": ["win"] * 45 + ["loss"] * 15})
    >>> last = monitor(verdicts).iloc[-1]
    >>> int(last["n_tasks"]), last["decision"]
    (60, 'better')
    """
    check_choice(statistic, "statistic", list(MONITOR_STATISTICS))
    confidence = check_confidence(confidence)
    by_cols = (
        [c for c in ("arm_a", "arm_b", "judge", "rubric") if c in frame.columns]
        if by is None
        else [by]
        if isinstance(by, str)
        else list(by)
    )
    check_columns(frame, [cluster, "outcome", *by_cols, *([order] if order else [])])
    (lo, hi) = MONITOR_STATISTICS[statistic][1]
    if margin is not None and not (statistic == "net_win" and 0 < float(margin) < hi - lo):
        raise ParameterError(f"margin must be in (0, {hi - lo}) and is for the net win only")
    values = dict(zip(("win", "tie", "loss"), MONITOR_STATISTICS[statistic][0], strict=True))
    y = frame["outcome"].astype(object).map(values).astype(np.float64)
    rows = frame.assign(_y=y)[y.notna().to_numpy()]
    if rows.empty:
        raise DataError("no verdict has an outcome to monitor", field="outcome")
    keys = [*by_cols, cluster]
    tasks = rows.groupby(keys, sort=False, observed=True).agg(
        _y=("_y", "mean"), _at=(order or "_y", "max" if order else "size")
    )
    tasks["_first"] = np.arange(len(tasks))
    tasks = tasks.reset_index().sort_values([*by_cols, "_at" if order else "_first", "_first"])
    out = []
    for key, group in (
        tasks.groupby(by_cols, sort=False, observed=True) if by_cols else [((), tasks)]
    ):
        out.append(_looks(group, by_cols, key, lo, hi, margin, confidence))
    result = pd.concat(out, ignore_index=True)
    result["statistic"] = statistic
    result["method"] = "betting_cs"
    result["confidence"] = confidence
    return tidy_frame(result, by=by_cols, extra=("decision", "more_tasks"))


def _looks(group, by_cols, key, lo, hi, margin, confidence) -> pd.DataFrame:
    """The rows of one group's sequence, one per look."""
    d = group["_y"].to_numpy()
    x = (d - lo) / (hi - lo)
    low, high = betting_cs(x, confidence)
    n = np.arange(1, d.size + 1)
    est = np.cumsum(d) / n
    low, high = lo + (hi - lo) * low, lo + (hi - lo) * high
    decision = np.full(d.size, "continue", dtype=object)
    if lo < 0:  # the net win: 0 is no difference
        if margin is not None:
            decision[(low > -margin) & (high < margin)] = "equivalent"
        decision[low > 0] = "better"
        decision[high < 0] = "worse"
    else:
        decision[:] = None
    more = np.full(d.size, np.nan)
    if lo < 0 and decision[-1] == "continue":
        more[-1] = _more_tasks(d, low[-1], high[-1], margin)
    keys = dict(zip(by_cols, key if isinstance(key, tuple) else (key,), strict=True))
    return pd.DataFrame(
        {**keys, "estimate": est, "ci_low": low, "ci_high": high, "n": n, "n_tasks": n,
         "decision": decision, "more_tasks": more}
    )  # fmt: skip


def _more_tasks(d: np.ndarray, low: float, high: float, margin: float | None) -> float:
    """Extra tasks after which the interval, shrinking like sqrt(log t / t) about the estimate,
    would decide: its side towards 0 past 0, or both sides inside the margin."""
    t, est = d.size, float(np.mean(d))
    toward_zero = est - low if est > 0 else high - est
    needs = [(toward_zero, abs(est))]
    if margin is not None:
        needs.append((max(high - est, est - low), margin - abs(est)))
    ahead = t + np.unique(np.ceil(np.geomspace(1.0, 1000.0 * t, 400)))
    shrink = np.sqrt(np.log(ahead + 1.0) / np.log(t + 1.0) * t / ahead)
    fits = np.zeros(ahead.size, dtype=bool)
    for half, goal in needs:
        if goal > 0 and half > 0:
            fits |= half * shrink < goal
    return float(ahead[np.argmax(fits)] - t) if fits.any() else np.inf
