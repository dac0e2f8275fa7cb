"""Logistic regression of a 0/1 outcome on one covariate, and the length bias of a judge.

Moved here from :mod:`evalstats.adapters.alpaca_eval` (which still re-exports both names):
they are statistics on any verdict frame with output lengths, not AlpacaEval file reading.
``logistic_fit`` is statsmodels' ``Logit`` on a centred and scaled covariate.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from statsmodels.discrete.discrete_model import Logit

from .._display import ResultDisplay
from .._validate import check_columns, check_confidence
from ._proportion import proportion_ci

__all__ = ["LENGTH_MEASURES", "LogisticFit", "length_bias", "logistic_fit"]


@dataclass(frozen=True)
class LogisticFit(ResultDisplay):
    """Result of :func:`logistic_fit`: ``logit P(y = 1) = intercept + slope * x``.

    Attributes
    ----------
    intercept, slope : float
        Maximum-likelihood estimates (NaN when the fit did not converge, e.g.
        under perfect separation).
    intercept_se, slope_se : float
        Standard errors from the inverse Fisher information.
    z, p_value : float
        Wald test of ``slope == 0``.
    ci_low, ci_high : float
        Wald interval of the slope.
    n, n_events : int
        Observations and observations with ``y == 1``.
    converged : bool
    n_iter : int
    confidence : float
    """

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    n_events: int
    converged: bool
    n_iter: int
    confidence: float

    _display_estimate = "slope"  # ci_low / ci_high are the slope's interval

    def to_frame(self) -> pd.DataFrame:
        """One row with every field."""
        return pd.DataFrame([self.__dict__])


def logistic_fit(
    x: Any,
    y: Any,
    *,
    confidence: float = 0.95,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> LogisticFit:
    """Logistic regression of a 0/1 outcome on one covariate: statsmodels' ``Logit``.

    ``Logit(y, add_constant(x)).fit()`` by Newton-Raphson, with its Wald statistics
    (``params``, ``bse``, ``pvalues``, ``conf_int``). ``x`` is centred and scaled before
    fitting and the estimates are mapped back, so the covariate's units do not matter for
    convergence; a fit that does not converge (separation) gives NaN estimates.

    Parameters
    ----------
    x : array_like, shape (n,)
        Finite covariate values.
    y : array_like, shape (n,)
        Outcomes, 0 or 1 (booleans accepted).
    confidence : float, default 0.95
    max_iter : int, default 100
    tol : float, default 1e-10
        Convergence when the largest Newton step (on the scaled covariate) is
        below ``tol``.

    Returns
    -------
    LogisticFit

    Examples
    --------
    >>> fit = logistic_fit([-2, -1, -1, 0, 0, 1, 1, 2], [0, 0, 1, 0, 1, 0, 1, 1])
    >>> round(fit.slope, 4), fit.converged
    (0.7563, True)
    """
    xa = np.asarray(x, dtype=np.float64).ravel()
    ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length: {xa.size} vs {ya.size}")
    if not np.isfinite(xa).all():
        raise ValueError("x must be finite")
    if not np.isin(ya, (0.0, 1.0)).all():
        raise ValueError("y must be 0 or 1")
    confidence = check_confidence(confidence)
    n, events = int(xa.size), int(ya.sum())
    center = float(xa.mean()) if n else 0.0
    scale = float(xa.std()) if n else 1.0
    nan = LogisticFit(
        *([math.nan] * 8), n=n, n_events=events, converged=False, n_iter=0, confidence=confidence
    )
    if n < 3 or scale == 0.0 or events in (0, n):
        return nan  # no slope to estimate, or the MLE is at infinity
    design = np.column_stack([np.ones(n), (xa - center) / scale])
    start = np.array([special.logit(events / n), 0.0])  # the intercept-only MLE
    with warnings.catch_warnings():
        # Separation and singular information are reported below as "no estimate".
        warnings.simplefilter("ignore")
        try:
            res = Logit(ya, design).fit(
                start_params=start, method="newton", maxiter=max_iter, tol=tol, disp=0
            )
        except np.linalg.LinAlgError:
            res = None
    converged = res is not None and bool(res.mle_retvals["converged"])
    n_iter = int(res.mle_retvals["iterations"]) if res is not None else 0
    # A separating covariate drives the slope to infinity; report no estimate.
    if not converged or not np.isfinite(res.params).all() or abs(res.params[1]) > 30.0:
        return LogisticFit(
            *([math.nan] * 8),
            n=n,
            n_events=events,
            converged=False,
            n_iter=n_iter,
            confidence=confidence,
        )
    # Back to the original x: intercept = b0 - b1 c / s, slope = b1 / s (z and p unchanged).
    t = np.array([[1.0, -center / scale], [0.0, 1.0 / scale]])
    params = t @ res.params
    se = np.sqrt(np.diag(t @ res.cov_params() @ t.T))
    low, high = res.conf_int(alpha=1.0 - confidence)[1] / scale
    return LogisticFit(
        intercept=float(params[0]),
        slope=float(params[1]),
        intercept_se=float(se[0]),
        slope_se=float(se[1]),
        z=float(res.tvalues[1]),
        p_value=float(res.pvalues[1]),
        ci_low=float(low),
        ci_high=float(high),
        n=n,
        n_events=events,
        converged=True,
        n_iter=n_iter,
        confidence=float(confidence),
    )


LENGTH_MEASURES = ("log_ratio", "diff")


def length_bias(
    frame: pd.DataFrame,
    *,
    bins: int | Sequence[float] = 5,
    x: str = "log_ratio",
    by: Sequence[str] = ("model", "baseline", "judge"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """P(model wins) against the length difference of the two outputs.

    Judges are known to favour longer answers. For each group, the ``ok``
    verdicts are binned by the length measure; each bin gets the share of
    wins with a Wilson interval (:func:`evalstats.stats.proportion_ci`), and
    the group gets the slope of a logistic regression of win (1) against
    not-win (0: a loss or a tie) on the measure (:func:`logistic_fit`).
    Verdicts are one per instruction here, so they are treated as
    independent.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame with output lengths, e.g. from
        :func:`evalstats.adapters.alpaca_eval.load` (needs ``len_with``,
        ``len_without``, ``status``, ``outcome`` and the ``by`` columns).
    bins : int or sequence of float, default 5
        An int gives that many quantile bins per group (fewer when quantiles
        coincide); a sequence gives the same bin edges for every group
        (verdicts outside them are left out of the bins, not of the slope).
    x : {"log_ratio", "diff"}
        ``log(len_with / len_without)`` (natural log; rows with a zero length
        are left out), or ``len_with - len_without`` in characters.
    by : sequence of str, default ("model", "baseline", "judge")
        Grouping columns (AlpacaEval's leaderboard row).
    confidence : float, default 0.95

    Returns
    -------
    DataFrame
        One row per (group, bin): the ``by`` columns, ``x`` (the measure's
        name), ``bin`` (1-based), ``x_low``, ``x_high`` (bin edges), ``x_mean``,
        ``n``, ``wins``, ``ties``, ``losses``, ``p_win``, ``ci_low``,
        ``ci_high``; and, repeated on each row of the group, the logistic fit
        on all the group's verdicts: ``n_group``, ``intercept``, ``slope``,
        ``slope_se``, ``slope_ci_low``, ``slope_ci_high``, ``slope_p``.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"judge": ["j"] * 6, "status": ["ok"] * 6,
    ...                   "outcome": ["loss", "loss", "win", "tie", "win", "win"],
    ...                   "len_with": [50, 80, 100, 120, 200, 300], "len_without": [100] * 6})
    >>> lb = length_bias(f, bins=2, by=["judge"])
    >>> lb[["bin", "n", "wins"]].to_numpy().tolist()
    [[1, 3, 1], [2, 3, 2]]
    >>> bool(lb["slope"].iloc[0] > 0)  # longer answers win more often here
    True
    """
    by_cols = list(by)
    check_columns(frame, [*by_cols, "len_with", "len_without", "status", "outcome"])
    if x not in LENGTH_MEASURES:
        raise ValueError(f"x must be one of {LENGTH_MEASURES}, got {x!r}")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"bins must be >= 1, got {bins}")
        edges_fixed = None
    else:
        edges_fixed = np.asarray(bins, dtype=np.float64)
        if edges_fixed.ndim != 1 or edges_fixed.size < 2 or np.any(np.diff(edges_fixed) <= 0):
            raise ValueError("bins must be an int or a strictly increasing sequence of edges")
    lw = frame["len_with"].to_numpy(np.float64, na_value=np.nan)
    lo = frame["len_without"].to_numpy(np.float64, na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        meas = np.log(lw / lo) if x == "log_ratio" else lw - lo
    keep = (frame["status"] == "ok").to_numpy(dtype=bool) & np.isfinite(meas)
    sub = frame.loc[keep, by_cols].copy()
    for c in by_cols:
        if isinstance(sub[c].dtype, pd.CategoricalDtype):
            sub[c] = sub[c].astype(str)
    sub["_x"] = meas[keep]
    outcome = frame.loc[keep, "outcome"].astype(str).to_numpy()
    sub["_win"] = (outcome == "win").astype(np.int64)
    sub["_tie"] = (outcome == "tie").astype(np.int64)
    sub["_loss"] = (outcome == "loss").astype(np.int64)

    parts = []
    for key, g in sub.groupby(by_cols, sort=True):  # a handful of groups
        key = key if isinstance(key, tuple) else (key,)
        xv = g["_x"].to_numpy()
        if edges_fixed is None:
            edges = np.unique(np.quantile(xv, np.linspace(0.0, 1.0, int(bins) + 1)))
            if edges.size < 2:
                edges = np.array([xv.min(), xv.max()])
        else:
            edges = edges_fixed
        # Right-closed bins with the lowest edge included, as pandas.cut(include_lowest=True).
        idx = np.searchsorted(edges, xv, side="left")
        idx = np.where(xv == edges[0], 1, idx)
        inside = (idx >= 1) & (idx < edges.size)
        nb = edges.size - 1
        b = idx[inside] - 1
        n = np.bincount(b, minlength=nb)
        wins = np.bincount(b, weights=g["_win"].to_numpy()[inside], minlength=nb)
        ties = np.bincount(b, weights=g["_tie"].to_numpy()[inside], minlength=nb)
        losses = np.bincount(b, weights=g["_loss"].to_numpy()[inside], minlength=nb)
        xsum = np.bincount(b, weights=xv[inside], minlength=nb)
        ci = proportion_ci(wins, n, confidence=confidence)
        fit = logistic_fit(xv, g["_win"].to_numpy(), confidence=confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            x_mean = np.where(n > 0, xsum / np.maximum(n, 1), np.nan)
        part = pd.DataFrame(
            {
                **{c: [k] * nb for c, k in zip(by_cols, key, strict=True)},
                "x": x,
                "bin": np.arange(1, nb + 1),
                "x_low": edges[:-1],
                "x_high": edges[1:],
                "x_mean": x_mean,
                "n": n.astype(np.int64),
                "wins": wins.astype(np.int64),
                "ties": ties.astype(np.int64),
                "losses": losses.astype(np.int64),
                "p_win": ci.estimate,
                "ci_low": ci.ci_low,
                "ci_high": ci.ci_high,
                "n_group": len(xv),
                "intercept": fit.intercept,
                "slope": fit.slope,
                "slope_se": fit.slope_se,
                "slope_ci_low": fit.ci_low,
                "slope_ci_high": fit.ci_high,
                "slope_p": fit.p_value,
            }
        )
        parts.append(part)
    if not parts:
        raise ValueError("no ok verdicts with both output lengths")
    return pd.concat(parts, ignore_index=True)
