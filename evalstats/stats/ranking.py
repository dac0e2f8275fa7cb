"""Rank K arms: Bradley-Terry-Davidson strengths, P(i beats j) and rank confidence sets.

The model (:mod:`evalstats.stats._btd`) gives each arm a log-strength ``beta`` (centred to
mean 0), ties a Davidson parameter ``nu`` and, when both presentation orders occur, the
first-shown arm a log-odds bonus ``gamma`` (``position``), so a judge that prefers the first
answer does not move the strengths. ``p_beats`` is ``P(arm wins against opponent)`` under a
neutral order (ties are the rest). ``model="bradley-terry"`` instead counts a tie as half a
win and half a loss.

Uncertainty is the task-cluster bootstrap of :mod:`evalstats.stats.comparison` (replicates and
pairs of a task move together); the fit runs Newton on every resample at once. Intervals of
strengths and ``p_beats`` are bootstrap percentiles. The rank sets are the construction of
:func:`evalstats.stats.rank_sets` as a **bootstrap-t**: every resample's strength differences
are standardised by that resample's own CR1 cluster-robust sandwich SE (``H^-1 M H^-1`` from
the tasks' scores), the estimate's by its own, and the max-t critical value is taken over
those. Standardising every resample by the draws' spread instead (the percentile-style max-t)
covered 0.907 +- 0.009 in the least favourable case of ``benchmarks/coverage_ranking.py``
(five equal arms, 40 tasks; nominal 0.95, 1,000 simulations) and the bootstrap-t 0.957 in
300. Above :data:`STUDENTIZE_MAX_CELLS` per-task numbers (Arena's 26,919 one-battle tasks),
and for the prediction-powered fit, the spread-standardised version is used, its deviations
scaled by the CR1 factor ``sqrt(C / (C - 1))`` (with thousands of clusters the plug-in
bootstrap is expected to be accurate; that case's coverage is not measured here).

**Prediction-powered ranking** (``labels`` + ``judge``; Chatzi, Straitouri, Thejaswi &
Gomez-Rodriguez, NeurIPS 2024, with the PPI++ power-tuning of Angelopoulos, Duchi & Zrnic
2023). ``frame`` holds the judge's verdicts on every judgment, ``labels`` people's verdicts
on a random subset of them (matched on task, replicate and pair). The strengths maximise the
prediction-powered log-likelihood::

    l_PP(theta) = l_H,L(theta) + lambda * (n / N * l_J,all(theta) - l_J,L(theta))

(``H`` human, ``J`` judge, ``L`` the ``n`` labelled judgments, ``all`` the ``N`` judged ones),
whose expectation is the human log-likelihood for any ``lambda``; it stays a count-weighted
BTD likelihood (with fractional counts), so the same batched Newton fits it. ``lambda`` is
the PPI++ choice minimising the trace of the strengths' variance, from the bootstrap draws
of the three separate fits (``theta_PP ~ theta_H + lambda (theta_J,all - theta_J,L)``),
clipped to [0, 1] (0: people only, 1: plain PPI).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.sparse

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_confidence, check_positive_int
from ..errors import DataError, ParameterError
from . import _btd
from .pairs import Encoded, encode, task_resamples
from .rank_confidence import point_ranks, rank_bounds
from .resample import as_generator

__all__ = ["RANK_MODELS", "rank"]

#: Models of `rank`: `davidson` (ties a parameter), `bradley-terry` (a tie is half a win).
RANK_MODELS = ("davidson", "bradley-terry")
#: Above this many (task x cell x outcome) numbers the rank sets standardise by the draws'
#: spread instead of a per-resample sandwich SE (Arena's 26,919 battles: many clusters).
STUDENTIZE_MAX_CELLS = 3_000_000


def _cell_counts(
    enc: Encoded, keys_index: dict[tuple[int, int, int], int], rows: np.ndarray, n_tasks: int
) -> scipy.sparse.csr_matrix:
    """Per-task (cell, outcome) counts of the chosen rows, a sparse (tasks, cells * 3)."""
    keys, cell, col = _btd.cells(
        enc.a[rows], enc.b[rows], enc.pos[rows], enc.y[rows], len(enc.arms)
    )
    gidx = np.array([keys_index[tuple(k)] for k in keys.tolist()], dtype=np.int64)[cell]
    n_cells = len(keys_index)
    return scipy.sparse.csr_matrix(
        (np.ones(len(gidx)), (enc.task[rows], gidx * 3 + col)), shape=(n_tasks, n_cells * 3)
    )


def _fit_all(
    per_task: list[scipy.sparse.csr_matrix],
    combine,
    x: np.ndarray,
    ties: bool,
    n_tasks: int,
    n_resamples: int,
    gen: np.random.Generator,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The point fit and the bootstrap fits of ``combine(*weighted per-task totals)``."""
    n_cells = x.shape[0]
    totals = [np.asarray(m.sum(axis=0)).reshape(1, -1) for m in per_task]
    point, _ = _btd.fit(combine(*totals).reshape(1, n_cells, 3), x, ties=ties)
    draws = []
    for weights in task_resamples(n_tasks, n_resamples, gen):
        tot = [np.asarray((m.T @ weights.T).T) for m in per_task]
        theta, _ = _btd.fit(combine(*tot).reshape(len(weights), n_cells, 3), x, ties=ties)
        draws.append(theta)
    return point[0], draws


def _difference_se(cov: np.ndarray, k: int) -> np.ndarray:
    """SEs of ``beta_j - beta_k`` (B, K, K) from covariances of ``theta`` (B, d, d)."""
    vb = np.zeros((len(cov), k, k))
    vb[:, 1:, 1:] = cov[:, : k - 1, : k - 1]
    diag = np.diagonal(vb, axis1=1, axis2=2)
    return np.sqrt(np.maximum(diag[:, :, None] + diag[:, None, :] - 2 * vb, 0.0))


def _fit_studentized(
    per_task: np.ndarray, x: np.ndarray, ties: bool, n_resamples: int, gen, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Point fit and bootstrap fits with the CR1 sandwich SE of every strength difference
    (for the estimate and for each resample: the bootstrap-t of the rank sets)."""
    n_t, n_cells = per_task.shape[0], x.shape[0]
    total = per_task.sum(0).reshape(1, n_cells, 3)
    point, _ = _btd.fit(total, x, ties=ties)
    ones = np.ones((1, n_t))
    cov = _btd.sandwich(total, _btd.task_scores(per_task, point, x, ties), ones, point, x, ties)
    draws, se_draws = [], []
    for weights in task_resamples(n_t, n_resamples, gen, max_cells=2_000_000):
        tot = (weights @ per_task).reshape(len(weights), n_cells, 3)
        theta, _ = _btd.fit(tot, x, ties=ties)
        scores = _btd.task_scores(per_task, theta, x, ties)
        draws.append(theta)
        se_draws.append(_difference_se(_btd.sandwich(tot, scores, weights, theta, x, ties), k))
    return point[0], np.concatenate(draws), _difference_se(cov, k)[0], np.concatenate(se_draws)


def _strengths(theta: np.ndarray, k: int) -> np.ndarray:
    """Centred log-strengths ``(..., K)`` from ``theta``'s first K - 1 entries."""
    beta = np.concatenate([np.zeros((*theta.shape[:-1], 1)), theta[..., : k - 1]], axis=-1)
    return beta - beta.mean(axis=-1, keepdims=True)


def _label_rows(enc: Encoded, labels: Encoded) -> np.ndarray:
    """Which judge rows have a human label (matched on task, replicate-free pair key)."""

    def keys(e: Encoded) -> pd.Series:
        lo, hi = np.minimum(e.a, e.b), np.maximum(e.a, e.b)
        return pd.Series(e.tasks[e.task]).str.cat(
            [pd.Series(lo).astype(str), pd.Series(hi).astype(str)], sep="|"
        )

    return keys(enc).isin(set(keys(labels))).to_numpy()


def rank(
    frame: pd.DataFrame,
    *,
    labels: pd.DataFrame | None = None,
    judge: str | None = None,
    model: str = "davidson",
    confidence: float = 0.95,
    simultaneous: bool = True,
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    tau: int | None = 1,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Bradley-Terry(-Davidson) strengths, P(i beats j) and rank sets of every arm.

    Parameters
    ----------
    frame : pandas.DataFrame
        A pairwise verdict frame (:mod:`evalstats.stats.pairs`).
    labels : pandas.DataFrame, optional
        People's verdicts (a pairwise frame, one judge) on a random subset of ``frame``'s
        judgments: the prediction-powered ranking (see the module docstring).
    judge : str, optional
        The judge whose verdicts are used (needed when ``frame`` has several).
    model : {"davidson", "bradley-terry"}
        Davidson ties, or ties split half-half.
    confidence : float
        Level of the intervals and of the rank sets.
    simultaneous : bool
        Rank sets covering all ranks at once (default) or each on its own.
    n_resamples : int
        Task-cluster bootstrap resamples.
    rng : numpy.random.Generator or int, optional
        Seed.
    tau : int, optional
        Mark the confidence set for the ``tau`` best (``in_tau_best``; default 1: which arms
        may be the best).
    arms : sequence of str, optional
        The arms' order in the result.

    Returns
    -------
    ResultFrame
        ``arm``, ``opponent`` then the tidy columns and ``in_tau_best``. Rows: ``strength``
        (per arm), ``rank`` (estimate the point rank, ``ci_low`` / ``ci_high`` the rank set),
        ``p_beats`` (per ordered pair), ``tie_nu`` and ``position`` (no arm).
        ``diagnostics`` has the judge, ``lambda`` (PPI) and the convergence count.

    Examples
    --------
    >>> f = pd.DataFrame({"task_id": [f"t{i}" for i in range(60)], "judge": "j",
    ...                   "arm_a": ["x", "y", "x"] * 20, "arm_b": ["y", "z", "z"] * 20,
    ...                   "status": "ok", "outcome": ["win", "win", "tie", "win", "loss"] * 12})
    >>> res = rank(f, n_resamples=200, rng=0)
    >>> res.loc[res.statistic == "rank", ["arm", "estimate", "ci_low", "ci_high"]].to_string(index=False)
    'arm  estimate  ci_low  ci_high\\n  x       1.0     1.0      2.0\\n  y       2.0     1.0      3.0\\n  z       3.0     2.0      3.0'
    """
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=50)
    if model not in RANK_MODELS:
        raise ParameterError(f"model must be one of {RANK_MODELS}, got {model!r}")
    ties = model == "davidson"
    gen = as_generator(rng)
    enc = encode(frame, judge=judge, arms=arms)
    k = len(enc.arms)
    rows_all = np.arange(len(enc.a))
    lab = None
    if labels is not None:
        lab = encode(labels, arms=enc.arms)
        labelled = _label_rows(enc, lab)
        if labelled.sum() < 2:
            raise DataError("labels match fewer than two of the judge's judgments", field="task_id")
        # Label tasks must index the same task list as the judge's.
        where = {t: i for i, t in enumerate(enc.tasks)}
        missing = [t for t in lab.tasks if t not in where]
        if missing:
            raise DataError(f"labelled task {missing[0]!r} has no judge verdict", field="task_id")
        lab = Encoded(
            arms=lab.arms, tasks=enc.tasks, task=np.array([where[t] for t in lab.tasks])[lab.task],
            a=lab.a, b=lab.b, y=lab.y, pos=lab.pos, judge=lab.judge,
        )  # fmt: skip
    keys_all = [_btd.cells(enc.a, enc.b, enc.pos, enc.y, k)[0]]
    if lab is not None:
        keys_all.append(_btd.cells(lab.a, lab.b, lab.pos, lab.y, k)[0])
    keys = np.unique(np.concatenate(keys_all), axis=0)
    position = bool((keys[:, 2] == 1).any() and (keys[:, 2] == -1).any())
    if not position:  # one order (or none): the position bonus is not identified
        keys = np.unique(np.column_stack([keys[:, :2], np.zeros(len(keys), int)]), axis=0)
        enc = Encoded(**{**enc.__dict__, "pos": np.zeros_like(enc.pos)})
        if lab is not None:
            lab = Encoded(**{**lab.__dict__, "pos": np.zeros_like(lab.pos)})
    index = {tuple(kk): i for i, kk in enumerate(keys.tolist())}
    x = _btd.design(keys, k, position)
    n_t = enc.n_tasks
    lam = np.nan
    se_hat = se_draws = None
    if lab is None:
        per_task = [_cell_counts(enc, index, rows_all, n_t)]
        if n_t * x.shape[0] * 3 <= STUDENTIZE_MAX_CELLS:
            point, draws, se_hat, se_draws = _fit_studentized(
                per_task[0].toarray(), x, ties, n_resamples, gen, k
            )
        else:
            point, draws = _fit_all(per_task, lambda m: m, x, ties, n_t, n_resamples, gen)
            draws = np.concatenate(draws)
        method = "task_bootstrap_percentile"
    else:
        human = _cell_counts(lab, index, np.arange(len(lab.a)), n_t)
        j_all = _cell_counts(enc, index, rows_all, n_t)
        j_lab = _cell_counts(enc, index, np.flatnonzero(labelled), n_t)
        state = gen.bit_generator.state
        sep = []
        for m in (human, j_all, j_lab):  # the three fits and the PP fit share the resamples
            gen.bit_generator.state = state
            sep.append(_fit_all([m], lambda c: c, x, ties, n_t, n_resamples, gen))
        gen.bit_generator.state = state
        bh, ba, bl = (_strengths(np.concatenate(s[1]), k) for s in sep)
        delta = ba - bl
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            cross = np.nanmean(((bh - bh.mean(0)) * (delta - delta.mean(0))).sum(1))
            var = np.nanmean(((delta - delta.mean(0)) ** 2).sum(1))
        lam = float(np.clip(-cross / var if var > 0 else 0.0, 0.0, 1.0))

        def combine(h, a, lo):
            n_l, n_a = lo.sum(axis=1, keepdims=True), a.sum(axis=1, keepdims=True)
            return h + lam * (n_l / n_a * a - lo)

        point, draws = _fit_all([human, j_all, j_lab], combine, x, ties, n_t, n_resamples, gen)
        draws = np.concatenate(draws)
        method = "ppi_task_bootstrap_percentile"
    beta, beta_b = _strengths(point, k), _strengths(draws, k)
    ok = np.isfinite(beta_b).all(axis=1)
    beta_b = beta_b[ok]
    if se_draws is not None:
        se_draws = se_draws[ok]
    alpha = 1 - confidence
    qs = [alpha / 2, 1 - alpha / 2]
    lo_hi = np.quantile(beta_b, qs, axis=0)
    if se_draws is None:
        # The bootstrap's plug-in variance lacks the CR1 factor C / (C - 1).
        dev = (beta_b - beta) * np.sqrt(n_t / (n_t - 1)) if n_t > 1 else beta_b - beta
    else:
        dev = beta_b - beta
    studentized = {"se_hat": se_hat, "se_draws": se_draws}
    r_lo, r_hi = rank_bounds(
        beta, dev, confidence=confidence, simultaneous=simultaneous, **studentized
    )
    best = rank_bounds(
        beta, dev, confidence=confidence, simultaneous=True, two_sided=False, **studentized
    )[0]
    delta_hat = point[-1] if ties else None
    delta_b = draws[ok, -1] if ties else None
    diff, diff_b = beta[:, None] - beta[None, :], beta_b[:, :, None] - beta_b[:, None, :]
    p_win = _btd.outcome_probabilities(diff, delta_hat)[..., 0]
    p_win_b = _btd.outcome_probabilities(
        diff_b, None if delta_b is None else delta_b[:, None, None]
    )[..., 0]
    p_lo_hi = np.quantile(p_win_b, qs, axis=0)
    n_verdicts = len(enc.a)
    common = {"n": n_verdicts, "n_tasks": n_t, "method": method, "confidence": confidence}
    out: list[dict] = []
    ranks = point_ranks(beta)
    for i, arm in enumerate(enc.arms):
        out.append({"arm": arm, "opponent": None, "statistic": "strength", "estimate": beta[i],
                    "se": beta_b[:, i].std(ddof=1), "ci_low": lo_hi[0, i], "ci_high": lo_hi[1, i],
                    **common})  # fmt: skip
        out.append({"arm": arm, "opponent": None, "statistic": "rank", "estimate": ranks[i],
                    "ci_low": r_lo[i], "ci_high": r_hi[i], **common,
                    "method": ("simultaneous" if simultaneous else "marginal") + "_stepdown",
                    "in_tau_best": None if tau is None else bool(best[i] <= tau)})  # fmt: skip
    for i, arm in enumerate(enc.arms):
        for j, opp in enumerate(enc.arms):
            if i != j:
                out.append({"arm": arm, "opponent": opp, "statistic": "p_beats",
                            "estimate": p_win[i, j], "se": p_win_b[:, i, j].std(ddof=1),
                            "ci_low": p_lo_hi[0, i, j], "ci_high": p_lo_hi[1, i, j], **common})  # fmt: skip
    extras = []
    if ties:
        extras.append(("tie_nu", point[-1], draws[ok, -1]))
    if position:
        extras.append(("position", point[k - 1], draws[ok, k - 1]))
    for name, est, b in extras:
        vals = np.exp(b) if name == "tie_nu" else b
        q = np.quantile(vals, qs)
        out.append({"arm": None, "opponent": None, "statistic": name,
                    "estimate": float(np.exp(est)) if name == "tie_nu" else float(est),
                    "se": vals.std(ddof=1), "ci_low": q[0], "ci_high": q[1], **common})  # fmt: skip
    diagnostics = pd.DataFrame(
        {
            "judge": [enc.judge],
            "model": [model],
            "position_effect": [position],
            "n_resamples": [n_resamples],
            "n_finite_resamples": [int(ok.sum())],
            "lambda": [lam],
            "n_labelled": [np.nan if lab is None else len(lab.a)],
            "tau": [tau],
        }
    )
    return tidy_frame(
        pd.DataFrame(out), by=["arm", "opponent"], diagnostics=diagnostics, extra=["in_tau_best"]
    )
