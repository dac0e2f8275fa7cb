"""Every pair of K arms compared: win, tie, loss and net win with simultaneous intervals."""

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
from ._cr2 import anova_icc, bm_df, bm_df_exchangeable
from .pairs import Encoded, encode, task_resamples
from .resample import as_generator

__all__ = ["COMPARE_METHODS", "COMPARE_STATISTICS", "compare", "pair_counts"]

#: Interval methods of `compare`: `cr2_t` (CR2, Bell-McCaffrey df, logit / atanh scale).
COMPARE_METHODS = ("cr2_t",)
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


# The scales of the intervals: logit for the three rates, atanh for the net win. An interval
# made there and mapped back lies in [0, 1] (or [-1, 1]) by construction.
_RATE_COLS = np.array([True, True, True, False])


def _to_scale(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``g(x)`` and ``g'(x)`` per statistic (last axis): logit for rates, atanh for net win."""
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(_RATE_COLS, np.log(x) - np.log1p(-x), np.arctanh(x))
        d = np.where(_RATE_COLS, 1.0 / (x * (1.0 - x)), 1.0 / (1.0 - x**2))
    return g, d


def _from_scale(g: np.ndarray) -> np.ndarray:
    return np.where(_RATE_COLS, scipy.special.expit(g), np.tanh(g))


def _cr2(y: np.ndarray, m: np.ndarray, w: np.ndarray | None = None):
    """Ratio estimates and CR2 SEs per pair from per-task sums ``y`` (T, P, 4), ``m`` (T, P);
    ``w`` (B, T) counts each task's copies in a resample (a copy is a cluster)."""
    if w is None:
        w = np.ones((1, len(m)))
    n = w @ m  # (B, P)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.einsum("bt,tps->bps", w, y) / n[..., None]
        h = m[None] / n[:, None]  # (B, T, P): a task's leverage
        adj = np.where((m[None] > 0) & (h < 1), w[..., None] / (1.0 - h), 0.0)
        resid = y[None] - r[:, None] * m[None, ..., None]
        se = np.sqrt(np.einsum("btp,btps->bps", adj, resid**2)) / n[..., None]
    return r, se


def _boundary(r: np.ndarray, n_tasks: np.ndarray, alpha: float):
    """Bounds and the p-value of ``net_win = 0`` for a statistic observed at the edge of its
    range (no win anywhere, say): the exact Clopper-Pearson bound with the tasks as the
    trials, ``1 - (alpha/2)^(1/C)`` from the observed edge (twice that for the net win's
    wider range), and the sign test of C tasks all on one side, ``2^(1 - C)``."""
    step = 1.0 - (alpha / 2.0) ** (1.0 / np.maximum(n_tasks, 1.0))[:, None]
    width = np.where(_RATE_COLS, 1.0, 2.0) * step
    top, bottom = 1.0, np.where(_RATE_COLS, 0.0, -1.0)
    lo = np.where(r >= top, top - width, bottom)
    hi = np.where(r <= bottom, bottom + width, top)
    return lo, hi, np.minimum(1.0, 2.0 ** (1.0 - n_tasks))


def compare(
    frame: pd.DataFrame,
    *,
    reference: str | None = None,
    confidence: float = 0.95,
    method: str = "cr2_t",
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    judge: str | None = None,
    rubric: str | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Win, tie, loss and net win of every pair of arms, with simultaneous intervals.

    Per pair, the rates are ratio estimators over the pair's ok verdicts, the tasks the
    clusters. The marginal interval and the p-value of ``net_win = 0`` are one construction:
    the CR2 SE with Bell-McCaffrey df (the net win's under an exchangeable working model, as
    :func:`evalstats.stats.win_rates`), a t interval on the logit (rates) or atanh (net win)
    scale mapped back, so an end never leaves the range, and the t test on that scale
    (``p_value < 1 - confidence`` exactly when the interval excludes 0). ``p_holm`` is Holm
    over the pairs' p-values. The simultaneous interval is the max-t of a task-cluster
    bootstrap studentized by each resample's own CR2 SE, its critical value capped at the
    Bonferroni t value (a resample at the edge of the range counts as infinitely extreme,
    so a design where too many are degenerate gets Bonferroni, never an infinite value) and
    never below the marginal one, so the simultaneous interval holds the marginal one.
    A statistic observed at its edge gets the exact Clopper-Pearson bound with the tasks as
    trials (Bonferroni over the pairs for the simultaneous one). Coverage and Holm's
    family-wise error: ``docs/methods.md``, "Comparisons and rankings".

    Parameters
    ----------
    frame : pandas.DataFrame
        A verdict frame with ``arm_a``, ``arm_b`` (without them, the two-arm frame: ``with``
        against ``without``); only ``status == "ok"`` rows count.
    reference : str, optional
        Compare every other arm with this one (K - 1 pairs, ``arm_b`` = reference); default
        all K (K - 1) / 2 pairs.
    confidence : float
        Level of the marginal and the simultaneous intervals.
    method : {"cr2_t"}
        How the marginal interval is made (the key in ``method``).
    n_resamples : int
        Task-cluster bootstrap resamples of the simultaneous critical value.
    rng : numpy.random.Generator or int, optional
        Seed of the bootstrap.
    judge, rubric : str, optional
        Which judge's (rubric's) verdicts, needed when the frame has several.
    arms : sequence of str, optional
        The arms' order (pairs are ``(arms[i], arms[j])`` with ``i < j``).

    Returns
    -------
    ResultFrame
        One row per pair and statistic (:data:`COMPARE_STATISTICS`): ``arm_a``, ``arm_b``,
        the tidy columns, then ``p_holm`` (net win only), ``sim_low``, ``sim_high``.
        ``diagnostics`` holds the judge, the critical value of each statistic, the number
        of resamples and of degenerate ones.

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
    enc = encode(frame, judge=judge, rubric=rubric, arms=arms)
    pairs = _pairs(enc.arms, reference)
    n_p, alpha = len(pairs), 1.0 - confidence
    counts, _ = pair_counts(enc, pairs)
    w, t, lo_ = counts[..., 0], counts[..., 1], counts[..., 2]
    y, m = np.stack([w, t, lo_, w - lo_], axis=-1), counts.sum(-1)  # (T, P, 4), (T, P)
    r, se = (v[0] for v in _cr2(y, m))  # (P, 4)
    # Bell-McCaffrey df: the rates' under independence, the net win's exchangeable.
    tp = np.nonzero(m > 0)
    n_tasks = np.bincount(tp[1], minlength=n_p).astype(float)
    df = np.repeat(bm_df(m[tp], tp[1], n_p)[0][:, None], 4, axis=1)
    icc = anova_icc(y[..., 3][tp], (w + lo_)[tp], m[tp], tp[1], n_p)
    df[:, 3] = bm_df_exchangeable(m[tp], icc, tp[1], n_p)
    g, d = _to_scale(r)
    with np.errstate(invalid="ignore"):
        se_g = se * d
    edge = ~np.isfinite(g)
    with np.errstate(invalid="ignore", divide="ignore"):
        t_obs = np.where(se_g > 0, g / se_g, np.where(g == 0, 0.0, np.copysign(np.inf, g)))
        t_marg = scipy.stats.t.ppf(1 - alpha / 2, df)
        t_bonf = scipy.stats.t.ppf(1 - alpha / (2 * n_p), df)
    p = 2 * scipy.stats.t.sf(np.abs(t_obs[:, 3]), df[:, 3])
    # The max-t over the pairs of each statistic, every resample studentized by its own SE.
    m_b = []
    steps = max(1, 2_000_000 // (len(m) * n_p * 4))
    for weights in task_resamples(enc.n_tasks, n_resamples, gen, max_cells=steps * len(m)):
        rb, sb = _cr2(y, m, weights)
        gb, db = _to_scale(rb)
        with np.errstate(invalid="ignore", divide="ignore"):
            num = gb - g
            tb = np.where(np.isinf(num), num, num / (sb * db))
        tb = np.where(edge | ~(se_g > 0), np.nan, np.abs(tb))  # only statistics with spread
        m_b.append(np.nanmax(np.where(np.isnan(tb), -np.inf, tb), axis=1))  # (B, 4)
    m_b = np.concatenate(m_b)
    degenerate = int(np.isinf(m_b).any(axis=1).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        crit = np.quantile(np.maximum(m_b, 0.0), confidence, axis=0, method="inverted_cdf")
    c_eff = np.maximum(np.minimum(crit[None], t_bonf), t_marg)  # (P, 4)
    lo, hi = _from_scale(g - t_marg * se_g), _from_scale(g + t_marg * se_g)
    sim_lo, sim_hi = _from_scale(g - c_eff * se_g), _from_scale(g + c_eff * se_g)
    if edge.any():
        e_lo, e_hi, e_p = _boundary(r, n_tasks, alpha)
        s_lo, s_hi, _ = _boundary(r, n_tasks, alpha / n_p)
        lo, hi = np.where(edge, e_lo, lo), np.where(edge, e_hi, hi)
        sim_lo, sim_hi = np.where(edge, s_lo, sim_lo), np.where(edge, s_hi, sim_hi)
        p = np.where(edge[:, 3], e_p, p)
    p = np.where(n_tasks > 1, p, np.nan)
    p_holm = np.full(n_p, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        p_holm[ok] = multipletests(p[ok], method="holm")[1]
    n_verdicts = m.sum(0)
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
                    "df": df[pi, s],
                    "n": int(n_verdicts[pi]),
                    "n_tasks": int(n_tasks[pi]),
                    "method": method,
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
            "n_degenerate": [degenerate],
            **{f"crit_{name}": [min(crit[s], np.nanmax(t_bonf[:, s], initial=0.0))]
               for s, name in enumerate(COMPARE_STATISTICS)},
        }
    )  # fmt: skip
    return tidy_frame(
        pd.DataFrame(rows),
        by=["arm_a", "arm_b"],
        diagnostics=diagnostics,
        extra=["p_holm", "sim_low", "sim_high"],
    )
