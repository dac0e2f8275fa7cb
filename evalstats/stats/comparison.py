"""Every pair of K arms compared: win, tie, loss and net win with simultaneous intervals.

Input is a pairwise verdict frame (:mod:`evalstats.stats.pairs`). For a pair ``(a, b)`` the
rates are ratio estimators over all ok verdicts of that pair (``win_rate`` = wins of ``a`` /
verdicts), and ``net_win = win_rate - loss_rate``.

Uncertainty is a **task-cluster bootstrap**: a resample draws tasks with replacement and keeps
every replicate and every pair of a drawn task, so the dependence between replicates of a task
and between the pairs judged on one task (one hard task makes every arm lose) is kept. All
``B`` resamples are one matrix product of multinomial weights with per-task counts.

* ``method="studentized"`` (default): the bootstrap-t on the logit scale for the three rates
  and the atanh scale for the net win, so that every end lies in [0, 1] (or [-1, 1]) by
  construction. Each resample's CR1 standard error is computed from the same weighted sums
  and carried to that scale (``g'(r*) se*``); the marginal interval inverts the quantiles of
  ``(g(r*) - g(r)) / (g'(r*) se*)`` and maps back, and the **simultaneous** interval over all
  pairs is ``g^-1(g(r) +- c g'(r) se)`` with ``c`` the ``confidence`` quantile of the max over
  pairs of ``|t*|`` (max-t). A resample at the edge of the range (no win drawn) counts as
  the most extreme draw, quantiles are taken without interpolation (an infinite draw maps
  to the edge of the range, not to NaN), and a statistic observed at its edge gets the
  exact Clopper-Pearson bound with the tasks as trials. On the raw scale (before) a design of
  8 tasks x 2 gave a loss-rate bound of -0.04 and infinite ends.
* ``method="percentile"``: percentile intervals; the simultaneous ``c`` standardises by the
  bootstrap SD instead.
* ``method="wald"``: ``r +- t(C - 1) se`` with the CR1 SE; the simultaneous ``c`` is still the
  bootstrap max-t.

``p_value`` is the CR1 Wald test of ``net_win = 0`` (t with ``C - 1`` degrees of freedom,
``C`` the tasks where the pair was judged); ``p_holm`` adjusts them over the pairs by Holm
(``statsmodels.stats.multitest.multipletests``).

Why max-t over a studentized bootstrap: ``benchmarks/coverage_ranking.py`` (5 arms, 40 tasks x
3 replicates, task effects SD 1 on the logit scale, 29 % ties, B = 500, 1,000 simulations,
MC SE ~0.007) printed the simultaneous coverage of all ten pairwise net wins (2026-12-03,
one run each, the bootstrap-t on the atanh scale; mean half-width in brackets)::

                          equal arms       strengths 0 .. 0.6
    task bootstrap-t      0.952 (0.243)    0.953 (0.242)
    battle-level          0.881 (0.210)    0.875 (0.209)

On the raw scale (2026-12-02) the task bootstrap-t gave 0.953 and 0.950 with half-widths
0.258 and 0.257: the same coverage, wider, and ends outside the range on small designs.

and, in 300 simulations of the second design, 0.913 for the percentile-style max-t
(``method="percentile"``: each resample standardised by the bootstrap SD). A resample's CR1
factor counts a task drawn twice as two clusters; counting distinct tasks gave 0.915 (200
simulations).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.special
import scipy.stats
from statsmodels.stats.multitest import multipletests

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_confidence, check_positive_int
from ..errors import ParameterError
from .pairs import Encoded, encode, task_resamples
from .resample import as_generator

__all__ = ["COMPARE_METHODS", "COMPARE_STATISTICS", "compare", "pair_counts"]

#: Interval methods of `compare`: `studentized` (bootstrap-t), `percentile`, `wald`.
COMPARE_METHODS = ("studentized", "percentile", "wald")
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
    """Per-task counts of (win, tie, loss) of each pair's first arm, shape (tasks, pairs, 3).

    Rows judged in the other orientation are flipped; rows of pairs not listed are dropped.
    Returns the counts and the pair index of each row (-1 when dropped).
    """
    k = len(enc.arms)
    lookup = np.full((k, k), -1, dtype=np.int64)
    flip = np.zeros((k, k), dtype=bool)
    for p, (i, j) in enumerate(pairs):
        lookup[i, j], lookup[j, i] = p, p
        flip[j, i] = True
    pid = lookup[enc.a, enc.b]
    keep = pid >= 0
    # column 0 = win of the pair's first arm: outcome code 2 (win) maps to 0 unless flipped
    y = np.where(flip[enc.a, enc.b], enc.y, 2 - enc.y)
    n_p = len(pairs)
    flat = (enc.task[keep] * n_p + pid[keep]) * 3 + y[keep]
    counts = np.bincount(flat, minlength=enc.n_tasks * n_p * 3).reshape(enc.n_tasks, n_p, 3)
    return counts.astype(np.float64), pid


def _rates_and_se(
    sums: np.ndarray, sq: np.ndarray, cross: np.ndarray, msq: np.ndarray, n_clusters: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ratio estimates and CR1 SEs from (weighted) sums over tasks.

    ``sums[..., s]`` are totals of statistic ``s`` (last = verdict count ``m``), ``sq`` totals
    of ``y^2``, ``cross`` of ``y m``, ``msq`` of ``m^2`` per task; the residual sum of squares
    ``sum (y - r m)^2`` expands into them, so resamples need no per-task pass.
    """
    m = sums[..., -1:]
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sums[..., :-1] / m
        ss = sq - 2 * r * cross + r**2 * msq[..., None]
        c = n_clusters[..., None]
        se = np.sqrt(np.where(c > 1, c / (c - 1), np.nan) * np.maximum(ss, 0)) / m
    return r, se


def _moments(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-task statistics (win, tie, loss, net, m), their squares, cross products, m^2."""
    w, t, lo = counts[..., 0], counts[..., 1], counts[..., 2]
    m = w + t + lo
    y = np.stack([w, t, lo, w - lo], axis=-1)
    return np.concatenate([y, m[..., None]], axis=-1), y**2, y * m[..., None], m**2


def compare(
    frame: pd.DataFrame,
    *,
    reference: str | None = None,
    confidence: float = 0.95,
    method: str = "studentized",
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    judge: str | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Win, tie, loss and net win of every pair of arms, with simultaneous intervals.

    Parameters
    ----------
    frame : pandas.DataFrame
        A pairwise verdict frame (:mod:`evalstats.stats.pairs`); only ``status == "ok"``
        rows count.
    reference : str, optional
        Compare every other arm with this one (K - 1 pairs, ``arm_b`` = reference); default
        all K (K - 1) / 2 pairs.
    confidence : float
        Level of the marginal and the simultaneous intervals.
    method : {"studentized", "percentile", "wald"}
        How the marginal interval is made (see the module docstring).
    n_resamples : int
        Task-cluster bootstrap resamples.
    rng : numpy.random.Generator or int, optional
        Seed of the bootstrap.
    judge : str, optional
        Which judge's verdicts (needed when the frame has several).
    arms : sequence of str, optional
        The arms' order (pairs are ``(arms[i], arms[j])`` with ``i < j``).

    Returns
    -------
    ResultFrame
        One row per pair and statistic (:data:`COMPARE_STATISTICS`): ``arm_a``, ``arm_b``,
        the tidy columns, then ``p_holm`` (net win only), ``sim_low``, ``sim_high`` (the
        simultaneous interval over all pairs, per statistic). ``diagnostics`` holds the
        judge, the critical value of each statistic and the number of resamples.

    Examples
    --------
    >>> f = pd.DataFrame({"task_id": [f"t{i % 6}" for i in range(36)], "judge": "j",
    ...                   "arm_a": ["x", "y", "x"] * 12, "arm_b": ["y", "z", "z"] * 12,
    ...                   "status": "ok", "outcome": ["win", "tie", "loss", "win"] * 9})
    >>> res = compare(f, rng=1, n_resamples=200)
    >>> res.loc[res.statistic == "net_win", ["arm_a", "arm_b", "estimate"]].to_string(index=False)
    'arm_a arm_b  estimate\\n    x     y      0.25\\n    x     z      0.25\\n    y     z      0.25'
    """
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=20)
    if method not in COMPARE_METHODS:
        raise ParameterError(f"method must be one of {COMPARE_METHODS}, got {method!r}")
    gen = as_generator(rng)
    enc = encode(frame, judge=judge, arms=arms)
    pairs = _pairs(enc.arms, reference)
    counts, _ = pair_counts(enc, pairs)
    sums_t, sq_t, cross_t, msq_t = _moments(counts)  # (T, P, 5), (T, P, 4), (T, P, 4), (T, P)
    n_p = len(pairs)
    present = (msq_t > 0).astype(np.float64)  # (T, P): the pair was judged on the task
    r, se = _rates_and_se(
        sums_t.sum(0), sq_t.sum(0), cross_t.sum(0), msq_t.sum(0), present.sum(0)
    )  # (P, 4)
    flat = np.concatenate(
        [sums_t.reshape(len(sums_t), -1), sq_t.reshape(len(sq_t), -1),
         cross_t.reshape(len(cross_t), -1), msq_t, present],
        axis=1,
    )  # fmt: skip
    cuts = np.cumsum([n_p * 5, n_p * 4, n_p * 4, n_p])
    r_b, se_b = [], []
    for weights in task_resamples(enc.n_tasks, n_resamples, gen):
        tot = weights @ flat
        s, q, c, mq, pr = np.split(tot, cuts, axis=1)
        # A task drawn w times is w clusters of the resample (its copies are independent
        # draws), so the CR1 factor counts them all, as the original counts its C tasks.
        n_cl = weights @ present
        rb, sb = _rates_and_se(
            s.reshape(-1, n_p, 5), q.reshape(-1, n_p, 4), c.reshape(-1, n_p, 4),
            mq.reshape(-1, n_p), n_cl,
        )  # fmt: skip
        r_b.append(rb)
        se_b.append(sb)
    r_b, se_b = np.concatenate(r_b), np.concatenate(se_b)  # (B, P, 4)
    alpha = 1 - confidence
    # A pair with no spread in some statistic (no tie anywhere) has se 0 and NaN t's.
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if method == "percentile":
            sd = np.nanstd(r_b, axis=0, ddof=1)
            t_b = (r_b - r) / sd
            lo = np.nanquantile(r_b, alpha / 2, axis=0)
            hi = np.nanquantile(r_b, 1 - alpha / 2, axis=0)
            scale = sd
        elif method == "wald":
            t_b = (r_b - r) / se_b
            scale = se
            n_cl = present.sum(0)[:, None]
            tq = scipy.stats.t.ppf(1 - alpha / 2, np.maximum(n_cl - 1, 1))
            lo, hi = r - tq * se, r + tq * se
        if method == "studentized":
            lo, hi, sim_lo, sim_hi, crit = _studentized(r, se, r_b, se_b, present, confidence)
        else:
            crit = np.nanquantile(np.nanmax(np.abs(t_b), axis=1), confidence, axis=0)  # (4,)
            sim_lo, sim_hi = r - crit * scale, r + crit * scale
        n_cl = present.sum(0)
        t_net = r[:, 3] / se[:, 3]
        p = 2 * scipy.stats.t.sf(np.abs(t_net), np.maximum(n_cl - 1, 1))
    p = np.where(np.isfinite(t_net), p, np.nan)
    p_holm = np.full(n_p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        p_holm[ok] = multipletests(p[ok], method="holm")[1]
    n_verdicts = sums_t.sum(0)[:, -1]
    rows = []
    for pi, (i, j) in enumerate(pairs):
        for s, name in enumerate(COMPARE_STATISTICS):
            net = name == "net_win"
            rows.append(
                {
                    "arm_a": enc.arms[i],
                    "arm_b": enc.arms[j],
                    "statistic": name,
                    "estimate": r[pi, s],
                    "se": se[pi, s],
                    "ci_low": lo[pi, s],
                    "ci_high": hi[pi, s],
                    "p_value": p[pi] if net else np.nan,
                    "df": n_cl[pi] - 1,
                    "n": int(n_verdicts[pi]),
                    "n_tasks": int(n_cl[pi]),
                    "method": f"task_bootstrap_{method}",
                    "confidence": confidence,
                    "p_holm": p_holm[pi] if net else np.nan,
                    "sim_low": sim_lo[pi, s],
                    "sim_high": sim_hi[pi, s],
                }
            )
    diagnostics = pd.DataFrame(
        {
            "judge": [enc.judge],
            "n_arms": [len(enc.arms)],
            "n_pairs": [n_p],
            "n_tasks": [enc.n_tasks],
            "n_resamples": [n_resamples],
            **{f"crit_{name}": [crit[s]] for s, name in enumerate(COMPARE_STATISTICS)},
        }
    )
    return tidy_frame(
        pd.DataFrame(rows),
        by=["arm_a", "arm_b"],
        diagnostics=diagnostics,
        extra=["p_holm", "sim_low", "sim_high"],
    )


# The statistics' scales for the bootstrap-t: logit for the three rates, atanh for the net
# win. An interval made there and mapped back lies in [0, 1] (or [-1, 1]) by construction.
_RATE_COLS = np.array([True, True, True, False])


def _to_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``g(x)`` and ``g'(x)`` per statistic (last axis): logit for rates, atanh for net win."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(_RATE_COLS, np.log(x) - np.log1p(-x), np.arctanh(x))
        d = np.where(_RATE_COLS, 1.0 / (x * (1.0 - x)), 1.0 / (1.0 - x**2))
    return g, d


def _from_scale(g: np.ndarray) -> np.ndarray:
    return np.where(_RATE_COLS, scipy.special.expit(g), np.tanh(g))


def _boundary_bounds(r: np.ndarray, n_tasks: np.ndarray, alpha: float):
    """Bounds for a statistic observed at the edge of its range (no win anywhere, say): the
    exact Clopper-Pearson bound with the tasks as the trials, ``1 - (alpha/2)^(1/C)`` from
    the observed edge (twice that for the net win's wider range)."""
    step = 1.0 - (alpha / 2.0) ** (1.0 / np.maximum(n_tasks, 1.0))[:, None]
    width = np.where(_RATE_COLS, 1.0, 2.0) * step
    top, bottom = 1.0, np.where(_RATE_COLS, 0.0, -1.0)
    lo = np.where(r >= top, top - width, bottom)
    hi = np.where(r <= bottom, bottom + width, top)
    return lo, hi


def _studentized(r, se, r_b, se_b, present, confidence):
    """The bootstrap-t on the logit / atanh scale: marginal and max-t simultaneous intervals.

    ``t* = (g(r*) - g(r)) / (g'(r*) se*)``; a resample at the edge of the range (``g(r*)``
    infinite) counts as the most extreme draw, and the quantiles are taken without
    interpolation so that an infinite draw maps back to the edge, not to NaN. A statistic
    observed at its edge has no spread to studentize: its interval is
    :func:`_boundary_bounds` (Bonferroni over the pairs for the simultaneous one).
    """
    alpha = 1.0 - confidence
    g, d = _to_scale(r)
    g_b, d_b = _to_scale(r_b)
    se_g, se_gb = se * d, se_b * d_b
    num = g_b - g
    t_b = np.where(np.isinf(num), num, num / se_gb)
    q_lo = np.nanquantile(t_b, alpha / 2, axis=0, method="inverted_cdf")
    q_hi = np.nanquantile(t_b, 1 - alpha / 2, axis=0, method="inverted_cdf")
    lo, hi = _from_scale(g - q_hi * se_g), _from_scale(g - q_lo * se_g)
    crit = np.nanquantile(np.nanmax(np.abs(t_b), axis=1), confidence, axis=0, method="inverted_cdf")
    sim_lo, sim_hi = _from_scale(g - crit * se_g), _from_scale(g + crit * se_g)
    edge = ~np.isfinite(g)
    if edge.any():
        n_tasks = present.sum(0)
        e_lo, e_hi = _boundary_bounds(r, n_tasks, alpha)
        s_lo, s_hi = _boundary_bounds(r, n_tasks, alpha / max(len(r), 1))
        lo, hi = np.where(edge, e_lo, lo), np.where(edge, e_hi, hi)
        sim_lo, sim_hi = np.where(edge, s_lo, sim_lo), np.where(edge, s_hi, sim_hi)
    return lo, hi, sim_lo, sim_hi, crit
