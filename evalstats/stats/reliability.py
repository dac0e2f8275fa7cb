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
    that two replicates agree. Rates are means over tasks; their intervals, and the ICC (the
    beta-binomial rho by maximum likelihood), are beta-binomial profile-likelihood intervals
    (the flip rate's: task-Wilson); differences use MOVER on the tasks both arms have. Methods
    and coverage: docs/methods.md, "Replicates".

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
    kmax, fits = int(cells["n"].max()), {}

    def fit(name: str, tasks: pd.Index) -> tuple[_Profile, int]:
        """The profile of ``name`` on ``tasks`` (once per set) and its number of runs."""
        key = (name, tuple(tasks))
        if key not in fits:
            fits[key] = _Profile(cells.loc[name].loc[tasks], kmax)
        return fits[key], int(cells.loc[name].loc[tasks, "n"].sum())

    rows = []
    for name in arms:
        own = values.loc[name]
        rows.append(_rates(name, None, own, None, fit(name, own.index), None, confidence))
    for name in (a for a in arms if reference is not None and a != reference):
        both = values.loc[name].index.intersection(values.loc[reference].index)
        v, v_ref = values.loc[name].loc[both], values.loc[reference].loc[both]
        pair = (fit(name, both), fit(reference, both))
        rows.append(_rates(name, reference, v, v_ref, *pair, confidence))
    out = pd.concat(rows, ignore_index=True)
    own = np.where(out["statistic"] == "flip_rate", "task_wilson", "profile_likelihood")
    out["method"] = np.where(out["reference"].isna(), own, "mover")
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


#: The beta-binomial grid: rho (0 is the binomial) fine near 0; mu evenly in logit, finer
#: within 2.5 of the pooled rate's logit, where the intervals' ends fall.
_RHO = np.r_[0.0, np.geomspace(1e-4, 0.05, 40)[:-1], np.linspace(0.05, 0.995, 191)]
_LOGIT, _NEAR = np.linspace(-8.0, 8.0, 241), np.linspace(-2.5, 2.5, 401)


class _Profile:
    """The beta-binomial likelihood of one arm's (n, c) per task on the (rho, mu) grid, and
    every statistic's value there: a statistic's profile-likelihood interval is its range over
    the grid points whose likelihood-ratio statistic is within the F(1, tasks - 1) quantile."""

    def __init__(self, cells: pd.DataFrame, kmax: int) -> None:
        n, c = cells["n"].to_numpy(np.int64), cells["c"].to_numpy(np.int64)
        self.n_tasks, self.replicated = len(n), bool((n > 1).any())
        pooled = special.logit((c.sum() + 0.5) / (n.sum() + 1.0))
        grid = special.expit(np.union1d(_LOGIT, np.clip(pooled + _NEAR, -8.0, 8.0)))
        rho, mu = _RHO[1:, None], grid[None, :]
        a, b = mu * (1.0 / rho - 1.0), (1.0 - mu) * (1.0 / rho - 1.0)
        # log B(c + a, n - c + b) / B(a, b), summed over tasks through the distinct counts
        loglik = -self.n_tasks * (special.gammaln(a) + special.gammaln(b) - special.gammaln(a + b))
        for x, shape, sign in ((c, a, 1.0), (n - c, b, 1.0), (n, a + b, -1.0)):
            values, count = np.unique(x, return_counts=True)
            for v, w in zip(values, count, strict=True):
                loglik = loglik + sign * w * special.gammaln(shape + v)
        binomial = np.sum(
            special.xlogy(c[:, None], grid) + special.xlogy((n - c)[:, None], 1 - grid), 0
        )
        lr = 2.0 * np.r_[binomial[None, :], loglik]
        lr = (lr.max() - lr).ravel()
        order = np.argsort(lr, kind="stable")
        self.lr = lr[order]
        # E p^k of Beta(mu, rho) is prod_(j < k) (mu + j t) / (1 + j t), t = rho / (1 - rho).
        t, mu = (_RHO / (1.0 - _RHO))[:, None], grid[None, :]
        up, down, columns = np.ones_like(t * mu), np.ones_like(t * mu), {}
        for j in range(max(kmax, 2)):
            up = up * (mu + j * t) / (1.0 + j * t)
            down = down * (1.0 - mu + j * t) / (1.0 + j * t)
            if j < kmax:
                columns[f"pass@{j + 1}"], columns[f"pass^{j + 1}"] = 1.0 - down, up
            if j == 1:
                columns["agreement"] = 1.0 - 2.0 * (mu - up)
        columns["icc"] = np.broadcast_to(_RHO[:, None], up.shape)
        self.columns = list(columns)
        values = np.stack([np.ravel(columns[k])[order] for k in self.columns])
        self.low = np.minimum.accumulate(values, axis=1)
        self.high = np.maximum.accumulate(values, axis=1)
        self.rho = float(values[-1, 0])

    def bounds(self, names: list[str], confidence: float | np.ndarray) -> tuple[np.ndarray, ...]:
        """Interval ends of the statistics ``names`` at ``confidence`` (one level or one each)."""
        col = [self.columns.index(k) for k in names]
        if self.n_tasks < 2:
            return np.full(len(col), np.nan), np.full(len(col), np.nan)
        conf = np.broadcast_to(confidence, len(col))
        # rho, and agreement through it, are learnt from the tasks alone (F, as a t test of
        # them); the pass rates from every run: chi-squared (the coverage study's choice)
        tasks = np.isin(names, ["icc", "agreement"])
        q = np.where(tasks, stats.f.ppf(conf, 1, self.n_tasks - 1), stats.chi2.ppf(conf, 1))
        at = np.searchsorted(self.lr, q, side="right") - 1
        return self.low[col, at], self.high[col, at]


def _ends(fit: _Profile, names: list[str], v: np.ndarray, confidence) -> tuple[np.ndarray, ...]:
    """Estimates and interval ends of the task-value columns ``names``: the flip rate
    task-Wilson, the rest the profile likelihood's (widened to hold the unbiased estimate)."""
    est, _, low, high, _ = _wilson(v, confidence)
    conf = np.broadcast_to(confidence, len(names))
    model = np.array([k != "flip_rate" for k in names])
    low[model], high[model] = fit.bounds([k for k in names if k != "flip_rate"], conf[model])
    return est, np.fmin(low, est), np.fmax(high, est)


def _icc(fit: _Profile, confidence: float) -> tuple[np.ndarray, ...]:
    """rho at the maximum and its interval (the grid's top rho stands for 1)."""
    low, high = fit.bounds(["icc"], confidence)
    return np.array([fit.rho]), low, np.where(high >= _RHO[-1], 1.0, high)


def _rates(name, ref, v_arm, v_ref, fit_arm, fit_ref, confidence) -> pd.DataFrame:
    """The rows of one arm (``ref`` None) or of one arm minus ``ref`` on shared tasks; each
    ``fit_*`` is a profile and its number of runs."""
    columns = list(v_arm.columns)
    (fit, runs), a = fit_arm, v_arm.to_numpy()
    icc = _icc(fit, confidence)
    if ref is None:
        est, low, high = _ends(fit, columns, a, confidence)
        se, p_value = _wilson(a, confidence)[1], np.full(est.shape, np.nan)
    else:
        (fit_b, runs_b), b = fit_ref, v_ref.to_numpy()
        a, b = (np.where(np.isnan(a) | np.isnan(b), np.nan, x) for x in (a, b))
        r = _paired_correlation(a, b)
        flip = columns.index("flip_rate")
        r[flip] = _newcombe_phi(a[:, flip], b[:, flip])

        def ends(conf):
            return (*_ends(fit, columns, a, conf), *_ends(fit_b, columns, b, conf))

        here = ends(confidence)
        est, se = here[0] - here[3], _paired_se(a, b)
        low, high = _mover(*here, r)
        p_value = _mover_p(ends, r, est)
        icc_b = _icc(fit_b, confidence)
        icc = (icc[0] - icc_b[0], *_mover(*icc, *icc_b, np.zeros(1)))
        runs += runs_b
    n = np.sum(~np.isnan(a), axis=0)
    k = [float(c[5:]) if c.startswith("pass") else np.nan for c in columns]
    # rho is not identified without replicates (every task run once)
    n_icc = fit.n_tasks if fit.n_tasks > 1 and fit.replicated else 0
    rows = pd.DataFrame(
        {"statistic": [*columns, "icc"], "k": [*k, np.nan],
         "estimate": [*est, icc[0][0]], "se": [*se, np.nan],
         "ci_low": [*low, icc[1][0]], "ci_high": [*high, icc[2][0]],
         "p_value": [*p_value, np.nan], "df": [*np.where(n > 1, n - 1.0, np.nan), np.nan],
         "n": runs, "n_tasks": [*n.astype(np.int64), n_icc]}
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


def _newcombe_phi(x: np.ndarray, y: np.ndarray) -> float:
    """phi of two paired 0/1 columns with a positive cross-product difference moved n/2 toward
    0 (Newcombe 1998, method 10): MOVER's correlation for a difference of paired proportions."""
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    both, only_x, only_y = np.sum(x * y), np.sum(x * (1 - y)), np.sum((1 - x) * y)
    neither = len(x) - both - only_x - only_y
    cross = both * neither - only_x * only_y
    cross = max(cross - len(x) / 2.0, 0.0) if cross > 0 else cross
    scale = np.sqrt((both + only_x) * (neither + only_y) * (both + only_y) * (neither + only_x))
    return float(cross / scale) if scale > 0 else 0.0


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


def _mover_p(ends, r: np.ndarray, diff: np.ndarray, steps: int = 24) -> np.ndarray:
    """The smallest level 1 - confidence at which the MOVER interval excludes 0 (bisection on
    the log level, all columns at once; ``ends(confidence)`` gives both arms' intervals)."""
    lo, hi = np.full(len(r), 1e-12), np.ones(len(r))
    for _ in range(steps):
        mid = np.sqrt(lo * hi)
        low, high = _mover(*ends(1.0 - mid), r)
        excluded = (low > 0) | (high < 0)
        hi, lo = np.where(excluded, mid, hi), np.where(excluded, lo, mid)
    return np.where(np.isnan(diff), np.nan, np.where(diff == 0, 1.0, hi))
