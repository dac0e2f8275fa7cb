"""Confidence sets for ranks and for the tau-best (Mogstad, Romano, Shaikh & Wilhelm 2023).

The rank of population ``j`` is ``1 + #{k : theta_k > theta_j}`` (1 = best = largest). A
confidence set for it follows from simultaneous confidence intervals for the differences
``theta_k - theta_j``: every ``k`` whose difference with ``j`` is surely positive is surely
ahead of ``j``, every one surely negative surely behind, so::

    L_j = 1 + #{k : d_kj - c se_kj > 0},        U_j = K - #{k : d_jk - c se_jk > 0}

with ``c`` the ``confidence`` quantile of ``max |Z_jk|`` over the family of pairs, ``Z`` the
standardised estimation errors of the differences. The family is all pairs for the
**simultaneous** sets (all ranks covered at once) and the pairs of ``j`` alone for ``j``'s
**marginal** set. The **step-down** refinement (the paper's Algorithm 3.2, csranks'
default ``stepdown=TRUE``) recomputes ``c`` over the claims not yet rejected until no new
claim is rejected; it is valid and never wider. A claim is one ordered pair ("j ahead of
k", one-sided), so the two-sided family starts at ``max |Z|`` and a rejected claim leaves
its reverse in the family, as csranks' ``csdiffmeans`` does. With ``cov`` the differences'
standard errors are the known ones, as in csranks; csranks' published PISA example is
checked in ``tests/test_rank_csranks.py``. The **tau-best** set is the arms whose
one-sided simultaneous lower rank bound is at most ``tau``: it contains all of the tau best
with probability ``confidence``.

The distribution of ``Z`` comes from ``draws`` (bootstrap replicates of the estimates, e.g. a
task-cluster bootstrap of Bradley-Terry strengths), or from ``cov`` by a parametric bootstrap
(``N(0, cov)``, as csranks does). This mirrors the R package csranks (``csranks``,
``cstaubest``; ``danielwilhelm/R-CS-ranks``, ``R/ranks.R``) and is checked in
``tests/test_rank.py``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_confidence, check_positive_int
from ..errors import ParameterError

__all__ = ["point_ranks", "rank_bounds", "rank_sets"]


def point_ranks(estimates: np.ndarray) -> np.ndarray:
    """``1 + #{k : x_k > x_j}`` (ties share the better rank), like csranks' ``irank``.

    >>> point_ranks(np.array([2.0, 5.0, 2.0, 1.0])).tolist()
    [2, 1, 2, 4]
    """
    x = np.asarray(estimates, dtype=np.float64)
    return 1 + (x[None, :] > x[:, None]).sum(axis=1)


def _normal_draws(sigma: np.ndarray, n: int) -> np.ndarray:
    """At least ``n`` draws of ``N(0, sigma)`` (PSD ``sigma``, singular allowed) from a
    scrambled Sobol sequence with a fixed seed: deterministic, and closer to the normal's
    quantiles than as many pseudo-random draws."""
    vals, vecs = np.linalg.eigh(sigma)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    u = scipy.stats.qmc.Sobol(len(sigma), seed=20231).random_base2(int(np.ceil(np.log2(n))))
    return scipy.stats.norm.ppf(u) @ root.T


def _critical(z: np.ndarray, family: np.ndarray, confidence: float) -> float:
    """The ``confidence`` quantile of ``max_{(j,k) in family} Z_jk`` over the draws."""
    if not family.any():
        return 0.0
    m = np.where(family[None], z, -np.inf).reshape(len(z), -1).max(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(np.nanquantile(m, confidence))


def rank_bounds(
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
    """Lower and upper rank bounds from estimates and centred draws of their errors.

    ``deviations`` (shape (B, K)) are draws of ``theta_hat - theta``. ``two_sided=False``
    gives the one-sided lower bounds only (``U = K``), as used for the tau-best. With
    ``se_hat`` (K, K) and ``se_draws`` (B, K, K), the standard errors of the differences of
    the estimate and of each draw, the max-t is studentized draw by draw (bootstrap-t);
    With ``se`` (K, K), the known standard errors of the differences (from ``cov``, as csranks
    uses them), every draw is standardised by those; otherwise by the draws' own spread.

    Each claim "j is ahead of k" is one one-sided hypothesis on the ordered pair (j, k); a
    two-sided family holds both orders of its pairs, so its first critical value is the
    quantile of ``max |Z|``, and the step-down drops only the ordered pairs rejected (csranks'
    ``csdiffmeans``: two-sided with step-down is its "lower" type on both orders).
    """
    x = np.asarray(x, dtype=np.float64)
    dev = np.asarray(deviations, dtype=np.float64)
    k = len(x)
    diff_dev = dev[:, :, None] - dev[:, None, :]  # (B, j, k): error of d_jk = x_j - x_k
    with np.errstate(invalid="ignore", divide="ignore"):
        known = None if se is None else np.asarray(se, dtype=np.float64)
        se = np.sqrt(np.mean(diff_dev**2, axis=0))  # draws are centred: no mean removed
        se = np.where(se > 0, se, np.nan)
        # Z_jk large positive: d_jk over-estimated, the claim "j ahead of k" at risk.
        if se_hat is not None and se_draws is not None:
            se = np.where(np.asarray(se_hat) > 0, se_hat, np.nan)
            z = diff_dev / np.where(se_draws > 0, se_draws, np.nan)
        else:
            if known is not None:
                se = np.where(known > 0, known, np.nan)
            z = diff_dev / se
        t = (x[:, None] - x[None, :]) / se  # t_jk > c: j surely ahead of k
    off = ~np.eye(k, dtype=bool) & np.isfinite(se)
    ahead = np.zeros((k, k), dtype=bool)  # ahead[j, k]: j surely ahead of k
    groups = (
        [np.ones(k, dtype=bool)] if simultaneous else [np.eye(k, dtype=bool)[j] for j in range(k)]
    )
    lower = np.ones(k, dtype=np.int64)
    upper = np.full(k, k, dtype=np.int64)
    for members in groups:  # one family (simultaneous) or one per arm (marginal)
        # Family of j's comparisons: (j, k) "is k ahead of j" claims; two-sided adds (k, j).
        fam = np.zeros((k, k), dtype=bool)
        fam[members, :] = True
        if two_sided:
            fam |= fam.T
        fam &= off
        rejected = np.zeros((k, k), dtype=bool)
        while True:
            c = _critical(z, fam & ~rejected if stepdown else fam, confidence)
            new = fam & (t > c) & ~rejected
            if not new.any():
                break
            rejected |= new
            if not stepdown:
                break
        ahead_here = rejected
        rows = np.flatnonzero(members)
        lower[rows] = 1 + ahead_here[:, rows].sum(axis=0)
        if two_sided:
            upper[rows] = k - ahead_here[rows, :].sum(axis=1)
        ahead |= ahead_here
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
        Larger is better (rank 1). A Series' index names the populations.
    cov : array-like, shape (K, K), optional
        Covariance of the estimates; errors are drawn from ``N(0, cov)``.
    draws : array-like, shape (B, K), optional
        Bootstrap replicates of the estimates (centred at ``estimates`` here). Give exactly
        one of ``cov`` and ``draws``.
    confidence : float
        Coverage of the sets.
    simultaneous : bool
        All ranks at once (default) or each rank on its own (marginal).
    tau : int, optional
        Also mark the arms in the confidence set for the ``tau`` best (``in_tau_best``).
    stepdown : bool
        The step-down refinement (default, as csranks).
    n_resamples : int
        Parametric draws when ``cov`` is given: ``N(0, cov)`` from a scrambled Sobol
        sequence with a fixed seed (rounded up to a power of two), so the sets are the same
        on every call, not a function of a seed.
    labels : sequence of str, optional
        Names of the populations (default: the Series index, else ``0 .. K-1``).

    Returns
    -------
    ResultFrame
        One row per population: ``arm``, ``statistic = "rank"``, ``estimate`` the point
        rank, ``ci_low`` / ``ci_high`` the rank set, ``in_tau_best`` when ``tau`` is given.

    Examples
    --------
    >>> res = rank_sets([3.0, 2.0, 1.0, 0.9], cov=np.diag([0.01] * 4), tau=3)
    >>> res[["arm", "estimate", "ci_low", "ci_high", "in_tau_best"]].to_string(index=False)
    'arm  estimate  ci_low  ci_high  in_tau_best\\n  0         1       1        1         True\\n  1         2       2        2         True\\n  2         3       3        4         True\\n  3         4       3        4         True'
    """
    confidence = check_confidence(confidence)
    if labels is None:
        labels = [str(i) for i in estimates.index] if isinstance(estimates, pd.Series) else None
    x = np.asarray(estimates, dtype=np.float64).ravel()
    k = len(x)
    if k < 2 or not np.isfinite(x).all():
        raise ParameterError(f"estimates must be at least two finite numbers, got {x.tolist()}")
    labels = [str(i) for i in range(k)] if labels is None else [str(v) for v in labels]
    if (cov is None) == (draws is None):
        raise ParameterError("give exactly one of cov= and draws=")
    if cov is not None:
        sigma = np.asarray(cov, dtype=np.float64)
        if sigma.shape != (k, k):
            raise ParameterError(f"cov must be {k} x {k}, got shape {sigma.shape}")
        n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=50)
        dev = _normal_draws(sigma, n_resamples)
        source = "parametric"
        # The differences' SEs are known from cov: standardise by them, not the draws' spread.
        var = np.diag(sigma)
        known_se = np.sqrt(np.maximum(var[:, None] + var[None, :] - 2 * sigma, 0.0))
    else:
        d = np.asarray(draws, dtype=np.float64)
        if d.ndim != 2 or d.shape[1] != k:
            raise ParameterError(f"draws must be (B, {k}), got shape {d.shape}")
        dev = d[np.isfinite(d).all(axis=1)] - x
        source = "bootstrap"
        known_se = None
    lo, hi = rank_bounds(
        x, dev, confidence=confidence, simultaneous=simultaneous, stepdown=stepdown, se=known_se
    )
    rows = pd.DataFrame(
        {
            "arm": labels,
            "statistic": "rank",
            "estimate": point_ranks(x),
            "ci_low": lo,
            "ci_high": hi,
            "n": len(dev),
            "method": ("simultaneous" if simultaneous else "marginal")
            + ("_stepdown" if stepdown else ""),
            "confidence": confidence,
        }
    )
    if tau is not None:
        tau = check_positive_int(tau, "tau")
        lower, _ = rank_bounds(
            x,
            dev,
            confidence=confidence,
            simultaneous=True,
            two_sided=False,
            stepdown=stepdown,
            se=known_se,
        )
        rows["in_tau_best"] = lower <= tau
    diag = pd.DataFrame({"source": [source], "n_resamples": [len(dev)], "tau": [tau]})
    return tidy_frame(rows, by=["arm"], diagnostics=diag, extra=["in_tau_best"])
