"""Coverage of the win-rate intervals, by simulation with known truth.

Each simulated evaluation has ``tasks x replicates`` verdicts drawn from the
latent probit model of :func:`evalstats.stats.models.draw_outcomes` (known marginal
win/tie/loss probabilities, task ICC on the latent scale). Evaluations are
stacked into one frame as groups (``by="eval"``), so each interval method is a
single vectorised :func:`~evalstats.stats.rates.win_rates` call over all of
them. Beside the offered methods, naive IID intervals over verdicts (Wilson for
the three 0/1 rates, Wald for all five) show what ignoring the clustering costs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._schema import OUTCOME_DTYPE, STATUS_DTYPE
from .._tidy import wide
from .models import draw_outcomes
from .rates import (
    DEFAULT_METHOD,
    RATE_NAMES,
    WIN_RATE_METHODS,
    proportion_ci,
    rate_arrays,
    segment_sum,
    win_rates,
)
from .rates import LOSS as _LOSS
from .rates import TIE as _TIE
from .rates import WIN as _WIN
from .rates import cluster_counts as _cluster_counts
from .rates import row_categories as _row_categories
from .resample import BOOTSTRAP_METHODS, as_generator

__all__ = ["coverage_study", "coverage_table", "simulated_frame", "truth_of", "type_one_error"]

NAIVE_METHODS = ("naive IID Wilson", "naive IID Wald")


def simulated_frame(
    n_evals: int,
    n_tasks: int,
    n_replicates: int,
    probs: tuple[float, float, float],
    icc: float,
    rng: np.random.Generator | int | None,
) -> pd.DataFrame:
    """Long verdict frame of ``n_evals`` stacked evaluations (column ``eval``)."""
    p_win, p_tie, p_loss = probs
    codes = draw_outcomes(
        n_tasks,
        n_replicates,
        p_win=p_win,
        p_tie=p_tie,
        p_loss=p_loss,
        icc=icc,
        n_evals=n_evals,
        rng=rng,
    )[..., 0]
    ev, task, rep = np.indices(codes.shape)
    return pd.DataFrame(
        {
            "eval": ev.ravel(),
            "task_id": task.ravel(),
            "replicate": rep.ravel() + 1,
            "status": pd.Categorical.from_codes(np.zeros(codes.size, np.int8), dtype=STATUS_DTYPE),
            "outcome": pd.Categorical.from_codes(codes.ravel(), dtype=OUTCOME_DTYPE),
        }
    )


def truth_of(probs: tuple[float, float, float]) -> np.ndarray:
    """True values of the five rates (win, tie, loss, net win, score)."""
    p_win, p_tie, p_loss = probs
    return np.array([p_win, p_tie, p_loss, p_win - p_loss, p_win + p_tie / 2.0])


def coverage_table(
    frame: pd.DataFrame,
    truth: np.ndarray,
    *,
    methods: tuple[str, ...] = WIN_RATE_METHODS,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    """Coverage (rows: methods and naive IID intervals; columns: statistics).

    The evaluations' per-task counts are taken from ``frame`` once, and every method's
    intervals come from :func:`~evalstats.stats.rates.rate_arrays` on them (the core of
    :func:`~evalstats.stats.rates.win_rates`, the same intervals) without the net-win
    p-value, which coverage does not use; the bootstrap methods share one set of resamples.
    """
    if not methods:
        raise ValueError("methods must name at least one interval method")
    for method in methods:
        if method not in WIN_RATE_METHODS:
            raise ValueError(f"method must be one of {WIN_RATE_METHODS}, got {method!r}")
    gen = as_generator(rng)
    category = _row_categories(frame, ["eval"], "task_id")
    groups, gid, counts, _ = _cluster_counts(frame, ["eval"], "task_id", category)
    cells = (counts[:, _WIN], counts[:, _TIE], counts[:, _LOSS], gid, len(groups))
    boot = [m for m in methods if m in BOOTSTRAP_METHODS]
    ends: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    res: dict = {}
    for method in methods:
        if method in ends:
            continue
        also = tuple(boot[1:]) if method in boot else ()
        res = rate_arrays(
            *cells,
            method=method,
            also=also,
            n_resamples=n_resamples,
            confidence=confidence,
            rng=gen,
            net_win_test=False,
        )
        ends[method] = (res["low"], res["high"])
        ends.update(res.get("also", {}))
    rows = {
        method: [
            float(((ends[method][0][:, j] <= t) & (t <= ends[method][1][:, j])).mean())
            for j, t in enumerate(truth)
        ]
        for method in methods
    }
    n = res["n"].astype(np.float64)
    totals = segment_sum(counts[:, [_WIN, _TIE, _LOSS]].astype(np.float64), gid, len(groups))
    w, ti, lo = totals[:, 0], totals[:, 1], totals[:, 2]
    wilson = []
    for name, t in zip(RATE_NAMES, truth, strict=True):
        if name in ("win_rate", "tie_rate", "loss_rate"):
            k = {"win_rate": w, "tie_rate": ti, "loss_rate": lo}[name]
            ci = proportion_ci(k, n, confidence=confidence)
            wilson.append(float(((ci.ci_low <= t) & (t <= ci.ci_high)).mean()))
        else:
            wilson.append(np.nan)
    rows["naive IID Wilson"] = wilson
    # Naive Wald over verdicts: SE from the row-level variance, ignoring tasks.
    second_moment = np.stack([w, ti, lo, w + lo, w + ti / 4.0], axis=1) / n[:, None]
    est = res["est"]
    se = np.sqrt(np.maximum(second_moment - est**2, 0.0) / n[:, None])
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    rows["naive IID Wald"] = list((np.abs(est - truth) <= z * se).mean(axis=0).astype(float))
    return pd.DataFrame(rows, index=list(RATE_NAMES)).T


def type_one_error(frame: pd.DataFrame, level: float = 0.05) -> pd.Series:
    """Rejection rates at ``level`` of the sign test and the default net-win test.

    The default ``net_win_p`` inverts the default interval (CR2 score construction with
    the Bell-McCaffrey df), so it rejects exactly when that interval excludes 0.
    """
    res = wide(win_rates(frame, by="eval"))
    return pd.Series(
        {
            "sign_test_p (exact binomial, IID)": float((res["sign_test_p"] < level).mean()),
            f"net_win_p ({DEFAULT_METHOD}, BM df)": float((res["net_win_p"] < level).mean()),
        }
    )


def coverage_study(
    *,
    n_tasks: int,
    n_replicates: int,
    p_win: float,
    p_tie: float,
    p_loss: float,
    icc: float,
    confidence: float = 0.95,
    n_evals: int = 1000,
    n_resamples: int = 1000,
    methods: tuple[str, ...] = WIN_RATE_METHODS,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Coverage of each interval method for one design, as a tidy frame.

    Simulates ``n_evals`` evaluations of ``n_tasks x n_replicates`` pairs whose
    true rates are ``p_win``, ``p_tie``, ``p_loss`` and computes how often each
    method's interval holds the truth.

    Returns
    -------
    DataFrame
        ``method, statistic, coverage, nominal, mc_se, n_evals, n_tasks, n_replicates,
        icc, n_resamples`` (``mc_se`` is the Monte Carlo SE at the nominal level).

    Examples
    --------
    >>> from evalstats.stats.coverage import coverage_study
    >>> cov = coverage_study(n_tasks=15, n_replicates=6, p_win=.45, p_tie=.35, p_loss=.2,
    ...                      icc=.3, n_evals=40, n_resamples=50, rng=0)
    >>> sorted(cov["method"].unique())[:3]
    ['basic', 'bca', 'cluster_t']
    """
    gen = as_generator(rng)
    probs = (p_win, p_tie, p_loss)
    frame = simulated_frame(n_evals, n_tasks, n_replicates, probs, icc, gen)
    table = coverage_table(
        frame,
        truth_of(probs),
        methods=methods,
        n_resamples=n_resamples,
        confidence=confidence,
        rng=gen,
    )
    tidy = (
        table.rename_axis("method")
        .reset_index()
        .melt(id_vars="method", var_name="statistic", value_name="coverage")
    )
    tidy = tidy.dropna(subset=["coverage"]).reset_index(drop=True)
    tidy["nominal"] = confidence
    tidy["mc_se"] = float(np.sqrt(confidence * (1 - confidence) / n_evals))
    tidy["n_evals"] = n_evals
    tidy["n_tasks"] = n_tasks
    tidy["n_replicates"] = n_replicates
    tidy["icc"] = icc
    tidy["n_resamples"] = n_resamples
    return tidy
