"""Reliability across replicates, per arm: pass@k, pass^k, flip rate, within-task agreement
and the outcome's ICC, each with a task-cluster interval, and each arm's difference from a
reference arm paired by task. The methods and their coverage: docs/methods.md, "Replicates".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special, stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_columns, check_confidence
from ..errors import DataError, ParameterError
from .rates import wilson_interval

__all__ = ["RELIABILITY_STATISTICS", "replicates"]

#: Per-task rates (a mean over tasks of a per-task value in [0, 1]) and the ICC.
RELIABILITY_STATISTICS = ("pass@k", "pass^k", "flip_rate", "agreement", "icc")


def replicates(
    frame: pd.DataFrame,
    outcome: str = "passed",
    *,
    arm: str = "arm",
    cluster: str = "task_id",
    reference: str | None = None,
    confidence: float = 0.95,
) -> ResultFrame:
    """pass@k, pass^k, flip rate, agreement and ICC of a binary outcome per arm, and each arm
    minus ``reference``, paired by task.

    Per task with ``n`` replicates and ``c`` successes: pass@k = 1 - C(n-c, k) / C(n, k) and
    pass^k = C(c, k) / C(n, k) (unbiased for n >= k); flip = 0 < c < n; agreement = the chance
    that two replicates agree. Rates are means over tasks (task-Wilson intervals); differences
    use MOVER on the tasks both arms have; the ICC is the beta-binomial rho by maximum
    likelihood with its profile-likelihood interval. Methods and coverage: docs/methods.md,
    "Replicates".

    Parameters
    ----------
    frame : DataFrame
        One row per run: ``cluster``, ``arm`` and ``outcome`` (bool or 0/1; missing rows are
        left out).
    outcome, arm, cluster : str
        Column names.
    reference : str, optional
        The arm the others are compared with; default ``"without"`` when the arms are
        with/without, else no differences.
    confidence : float
        Two-sided confidence level.

    Returns
    -------
    ResultFrame
        Rows by ``arm``, ``reference`` (empty for an arm's own rates) and ``statistic``
        (``pass@1``, ``pass^2``, ``flip_rate``, ``agreement``, ``icc``), extra column ``k``.

    Examples
    --------
    >>> import pandas as pd
    >>> runs = pd.DataFrame({"task_id": list("aabbcc") * 2, "arm": ["with"] * 6 + ["without"] * 6,
    ...                      "passed": [1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1]})
    >>> res = replicates(runs)
    >>> own = res[res["reference"].isna()].set_index(["arm", "statistic"])
    >>> round(float(own.loc[("with", "pass^2"), "estimate"]), 3)
    0.667
    """
    confidence = check_confidence(confidence)
    cells = _cells(frame, outcome, arm, cluster)
    arms = list(cells.index.get_level_values(0).unique())
    if reference is None and set(arms) == {"with", "without"}:
        reference = "without"
    if reference is not None and reference not in arms:
        raise ParameterError(f"reference arm {reference!r} is not among the arms {arms}")
    values = _task_values(cells)
    rows = []
    for name in arms:
        rows.append(_rates(name, None, values.loc[name], None, cells.loc[name], None, confidence))
    for name in (a for a in arms if reference is not None and a != reference):
        both = values.loc[name].index.intersection(values.loc[reference].index)
        rows.append(
            _rates(
                name, reference, values.loc[name].loc[both], values.loc[reference].loc[both],
                cells.loc[name].loc[both], cells.loc[reference].loc[both], confidence,
            )
        )  # fmt: skip
    out = pd.concat(rows, ignore_index=True)
    out["method"] = np.where(
        out["statistic"] == "icc",
        np.where(out["reference"].isna(), "profile_likelihood", "mover"),
        np.where(out["reference"].isna(), "task_wilson", "mover"),
    )
    out["confidence"] = confidence
    return tidy_frame(out, by=["arm", "reference"], extra=("k",))


def _cells(frame: pd.DataFrame, outcome: str, arm: str, cluster: str) -> pd.DataFrame:
    """Replicates ``n`` and successes ``c`` per (arm, task)."""
    check_columns(frame, [outcome, arm, cluster], what="runs")
    given = frame[outcome]
    try:  # pandas' boolean array takes true/false/0/1/missing and refuses text, in one pass
        y = given.astype("boolean").astype("Float64").to_numpy(np.float64, na_value=np.nan)
    except (TypeError, ValueError):  # only to name the first offender: a look at each value
        ok = given.map(lambda v: pd.isna(v) or (not isinstance(v, str) and v in (0, 1)))
        pos = int(np.flatnonzero(~ok.to_numpy(dtype=bool))[0])
        raise DataError(f"outcome {given.iloc[pos]!r} is not true/false or 0/1",
                        line=pos, field=outcome) from None  # fmt: skip
    keep = ~np.isnan(y)
    if not keep.any():
        raise DataError("no run has an outcome", field=outcome)
    grouped = pd.DataFrame(
        {"arm": frame[arm].to_numpy()[keep], "task": frame[cluster].to_numpy()[keep],
         "c": y[keep]}
    ).groupby(["arm", "task"], sort=True, observed=True)["c"]  # fmt: skip
    return pd.DataFrame({"n": grouped.size(), "c": grouped.sum()})


def _task_values(cells: pd.DataFrame) -> pd.DataFrame:
    """Per (arm, task): pass@k and pass^k for k = 1 ... max replicates, flip and agreement."""
    n, c = cells["n"].to_numpy(np.float64), cells["c"].to_numpy(np.float64)
    k = np.arange(1, int(n.max()) + 1, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = special.comb(n[:, None], k)
        fit = n[:, None] >= k
        at_k = np.where(fit, 1.0 - special.comb((n - c)[:, None], k) / total, np.nan)
        all_k = np.where(fit, special.comb(c[:, None], k) / total, np.nan)
        two = n >= 2
        flip = np.where(two, (c > 0) & (c < n), np.nan)
        agree = np.where(two, 1.0 - 2.0 * c * (n - c) / (n * (n - 1.0)), np.nan)
    columns = [f"pass@{int(j)}" for j in k] + [f"pass^{int(j)}" for j in k]
    data = np.column_stack([at_k, all_k, flip, agree])
    return pd.DataFrame(data, index=cells.index, columns=[*columns, "flip_rate", "agreement"])


def _wilson(v: np.ndarray, confidence: float | np.ndarray) -> tuple[np.ndarray, ...]:
    """Mean of task values per column, its SE and the task-Wilson interval."""
    n = np.sum(~np.isnan(v), axis=0).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.nansum(v, axis=0) / n
        row_var = np.nansum((v - p) ** 2, axis=0) / n
        se = np.sqrt(row_var * n / (n - 1.0) / n)
        df = np.where(n > 1, n - 1.0, np.nan)
    low, high = wilson_interval(p, se, n, df, n, confidence, row_var=row_var)
    return p, se, low, high, n


def _rates(name, ref, v_arm, v_ref, cells_arm, cells_ref, confidence) -> pd.DataFrame:
    """The rows of one arm (``ref`` None) or of one arm minus ``ref`` on shared tasks."""
    a = v_arm.to_numpy()
    icc = _icc(cells_arm, confidence)
    runs = cells_arm["n"].sum()
    if ref is None:
        est, se, low, high, n = _wilson(a, confidence)
        p_value = np.full(est.shape, np.nan)
    else:
        b = v_ref.to_numpy()
        a, b = (np.where(np.isnan(a) | np.isnan(b), np.nan, x) for x in (a, b))
        r = _paired_correlation(a, b)
        est, _, low, high, n = _wilson(a, confidence)
        est_b, _, low_b, high_b, _ = _wilson(b, confidence)
        low, high = _mover(est, low, high, est_b, low_b, high_b, r)
        est, se, p_value = est - est_b, _paired_se(a, b), _mover_p(a, b, r)
        icc_b = _icc(cells_ref, confidence)
        lo_i, hi_i = _mover(*icc[:3], *icc_b[:3], np.zeros(1))
        icc = (icc[0] - icc_b[0], lo_i, hi_i, icc[3])
        runs += cells_ref["n"].sum()
    columns = list(v_arm.columns)
    k = [float(c[5:]) if c.startswith("pass") else np.nan for c in columns]
    rows = pd.DataFrame(
        {"statistic": [*columns, "icc"], "k": [*k, np.nan],
         "estimate": [*est, icc[0][0]], "se": [*se, np.nan],
         "ci_low": [*low, icc[1][0]], "ci_high": [*high, icc[2][0]],
         "p_value": [*p_value, np.nan], "df": [*np.where(n > 1, n - 1.0, np.nan), np.nan],
         "n": runs, "n_tasks": [*n.astype(np.int64), icc[3]]}
    )  # fmt: skip
    rows.insert(0, "reference", ref)
    rows.insert(0, "arm", name)
    return rows[rows["n_tasks"] > 0]


def _mean(v: np.ndarray) -> np.ndarray:
    """Column means over the non-missing values (NaN for an empty column, without a warning)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.nansum(v, axis=0) / np.sum(~np.isnan(v), axis=0)


def _paired_correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of the task values of two arms, per column (0 when undefined)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        da, db = a - _mean(a), b - _mean(b)
        r = _mean(da * db) / np.sqrt(_mean(da**2) * _mean(db**2))
    return np.clip(np.where(np.isfinite(r), r, 0.0), -1.0, 1.0)


def _paired_se(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = a - b
    n = np.sum(~np.isnan(d), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(np.nansum((d - _mean(d)) ** 2, axis=0) / (n - 1.0) / n)


def _mover(e1, l1, u1, e2, l2, u2, r) -> tuple[np.ndarray, np.ndarray]:
    """MOVER limits of ``e1 - e2`` (Zou & Donner 2008) from the two intervals and correlation."""
    d = e1 - e2
    lo = (e1 - l1) ** 2 + (u2 - e2) ** 2 - 2.0 * r * (e1 - l1) * (u2 - e2)
    hi = (u1 - e1) ** 2 + (e2 - l2) ** 2 - 2.0 * r * (u1 - e1) * (e2 - l2)
    return d - np.sqrt(np.maximum(lo, 0.0)), d + np.sqrt(np.maximum(hi, 0.0))


def _mover_p(a: np.ndarray, b: np.ndarray, r: np.ndarray, steps: int = 24) -> np.ndarray:
    """The smallest level 1 - confidence at which the MOVER interval excludes 0 (bisection on
    the log level, all columns at once)."""
    lo, hi = np.full(a.shape[1], 1e-12), np.ones(a.shape[1])
    for _ in range(steps):
        mid = np.sqrt(lo * hi)
        e1, _, l1, u1, _ = _wilson(a, 1.0 - mid)
        e2, _, l2, u2, _ = _wilson(b, 1.0 - mid)
        low, high = _mover(e1, l1, u1, e2, l2, u2, r)
        excluded = (low > 0) | (high < 0)
        hi, lo = np.where(excluded, mid, hi), np.where(excluded, lo, mid)
    diff = _mean(a) - _mean(b)
    return np.where(np.isnan(diff), np.nan, np.where(diff == 0, 1.0, hi))


#: The profile grid of the beta-binomial likelihood: rho fine near 0, mu evenly in logit.
_RHO = np.r_[np.geomspace(1e-4, 0.05, 40)[:-1], np.linspace(0.05, 0.995, 191)]
_MU = special.expit(np.linspace(-7.0, 7.0, 141))


def _icc(cells: pd.DataFrame, confidence: float) -> tuple[np.ndarray, ...]:
    """ICC of a binary outcome over tasks: the beta-binomial rho by maximum likelihood, with
    its profile-likelihood interval (rho 0 is the binomial limit)."""
    n, c = cells["n"].to_numpy(np.float64), cells["c"].to_numpy(np.float64)
    nan = (np.full(1, np.nan),) * 3
    if len(n) < 2 or n.sum() <= len(n):
        return (*nan, 0)
    # log B(c + a, n - c + b) / B(a, b) as sums of logs over the few distinct (n, c)
    (nu, cu), weight = np.unique(np.stack([n, c]).astype(np.int64), axis=1, return_counts=True)
    scale = 1.0 / _RHO - 1.0
    a = _MU[None, :, None] * scale[:, None, None]
    b = (1.0 - _MU)[None, :, None] * scale[:, None, None]
    j = np.arange(nu.max(), dtype=np.float64)
    cum = [np.concatenate([np.zeros_like(x), np.cumsum(np.log(x + j), axis=-1)], axis=-1)
           for x in (a, b, a + b)]  # fmt: skip
    terms = cum[0][..., cu] + cum[1][..., nu - cu] - cum[2][..., nu]
    profile = (terms * weight).sum(axis=-1).max(axis=1)
    p = c.sum() / n.sum()
    binomial = np.sum(special.xlogy(c, p) + special.xlogy(n - c, 1.0 - p))
    rho = np.r_[0.0, _RHO]
    loglik = np.r_[binomial, profile]
    inside = 2.0 * (loglik.max() - loglik) <= stats.chi2.ppf(confidence, 1)
    high = rho[inside].max()
    return (
        np.array([rho[np.argmax(loglik)]]),
        np.array([rho[inside].min()]),
        np.array([1.0 if high >= _RHO[-1] else high]),
        len(n),
    )
