"""Cost of K arms against a reference, and the cost-quality Pareto frontier.

For each arm ``a`` other than the reference ``r``, a *pair* is a (task, replicate) with a run
of both; the **total ratio** is ``sum_pairs x_a / sum_pairs x_r`` (tokens, or wall-clock
seconds): the ratio of means over tasks, what the whole evaluation of that arm cost relative
to the reference. Per task ``c`` the sums ``X_c``, ``Y_c`` over its replicates are what the
bootstrap moves: a resample draws tasks with replacement and keeps every replicate of a drawn
task (replicates nested in tasks), and all ``B`` resamples are one product of multinomial
task weights with the per-task sums (:func:`evalstats.stats.ranking.task_resamples`), as in
:func:`evalstats.stats.compare`.

Intervals are on the log scale and exponentiated:

* ``method="studentized"`` (default): the bootstrap-t. The CR1 delta-method SE of the log
  ratio, ``se_log^2 = C / (C - 1) sum_c (X_c / X - Y_c / Y)^2`` (statsmodels' cluster-robust
  SE of the WLS ratio estimator ``x ~ 0 + y``, weights ``1 / y``, divided by the ratio), is
  recomputed in every resample from the same weighted sums (a task drawn twice is two
  clusters), and the interval inverts the quantiles of ``(log R* - log R) / se_log*``.
* ``method="percentile"``: quantiles of ``R*``.

``p_value`` is the CR1 Wald test of ``log R = 0`` with ``t(C - 1)``. Why the bootstrap-t:
``benchmarks/coverage_arm_cost.py`` (three arms, ratios 0.7 and 1.4, 2 replicates, lognormal
task sizes; 400 evaluations x 2 arms per design, 999 resamples, one run) measured the total
token ratio's 95 % coverage::

    tasks  task-size sd   bootstrap-t   percentile
      8        0.5           0.938        0.880
      8        1.0           0.922        0.882
     20        0.5           0.953        0.932
     20        1.0           0.934        0.901
     40        0.5           0.939        0.930
     40        1.0           0.938        0.929

(MC SE about 0.01; the two arms of one evaluation share their reference, so the 800
intervals are not independent). The two-arm report's default (a generalized pivotal interval,
:mod:`evalstats.stats.cost`) is not a bootstrap and so cannot share draws with the Pareto
frontier below. With few and skewed tasks every ratio-of-totals interval under-covers
somewhat; the table says how many tasks.

**Tokens** are the billed counts (``reported_tokens``) when every run has one, else the
cl100k_base count on the transcript (``tokens`` with ``tokens_source == "transcript"``),
never a count of the answer alone (:mod:`evalstats.stats._token_source`: an answer is not
what a run consumed); a frame without ``tokens_source`` is taken as given. The source is the
``token_source`` column.

**Pareto frontier** (:func:`pareto`): quality is each arm's net win against the reference
(the ratio estimator of :func:`evalstats.stats.compare`: wins minus losses over the pair's ok
verdicts; the reference's own is 0), cost its total token ratio (the reference's is 1). An
arm is on the frontier when no other arm is at least as good on both and better on one
(:func:`pareto_frontier`). ``P(on frontier)`` is the share of task-bootstrap resamples in
which it is, with quality and cost recomputed from the **same** task weights in each resample
(tasks judged but without runs, or run but not judged, carry weight in only one of them). It
is a bootstrap frequency, a measure of how stable the arm's place is under resampling of the
tasks, not a calibrated posterior probability; an arm far from every other has it near 0 or 1.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_columns, check_confidence, check_positive_int
from ..errors import DataError, ParameterError
from .ranking import encode, pair_counts, task_resamples
from .resample import as_generator

__all__ = ["ARM_COST_METHODS", "ARM_COST_METRICS", "arm_costs", "pareto", "pareto_frontier"]

#: The statistics of `arm_costs`, per arm: the total token and wall-clock ratios.
ARM_COST_METRICS = ("tokens_total_ratio", "wall_total_ratio")
#: Interval methods of `arm_costs`: `studentized` (bootstrap-t on the log), `percentile`.
ARM_COST_METHODS = ("studentized", "percentile")
_RUN_COLUMNS = ("task_id", "replicate", "arm")


def _token_column(runs: pd.DataFrame, used: np.ndarray) -> tuple[str | None, str, str | None]:
    """(column, source, reason): which token count the ratios use (see the module text)."""
    part = runs.loc[used]
    if "reported_tokens" in part.columns and part["reported_tokens"].notna().all() and len(part):
        return "reported_tokens", "billed", None
    if "tokens" not in part.columns:
        return None, "unavailable", "the runs have no token counts"
    if "tokens_source" not in part.columns:
        return "tokens", "as given", None
    src = part["tokens_source"].astype(str)
    if (src == "transcript").all():
        return "tokens", "transcript", None
    n = int((src != "transcript").sum())
    return (
        None,
        "unavailable",
        (
            f"{n} run(s) have no billed count and no transcript: a count of the answer alone "
            "is not what a run consumed"
        ),
    )


def _task_sums(
    runs: pd.DataFrame, arms: Sequence[str], reference: str, column: str, tasks: pd.Index
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per task and arm (reference left out): sums of the arm's and the reference's values
    over the replicates where both have one, and that pair count; each (T, A)."""
    values = pd.to_numeric(runs[column], errors="coerce").astype("float64")
    wide = (
        runs.assign(_v=values.to_numpy())
        .set_index(["task_id", "replicate", "arm"])["_v"]
        .unstack("arm")
        .reindex(columns=list(arms))
    )
    others = [a for a in arms if a != reference]
    ref = wide[reference].to_numpy()
    x = wide[others].to_numpy()
    both = np.isfinite(x) & np.isfinite(ref)[:, None]
    task = tasks.get_indexer(wide.index.get_level_values("task_id").astype(str))
    n_t, n_a = len(tasks), len(others)
    out = []
    for v in (np.where(both, x, 0.0), np.where(both, ref[:, None], 0.0), both.astype(float)):
        flat = (task[:, None] * n_a + np.arange(n_a)[None]).ravel()
        out.append(np.bincount(flat, weights=v.ravel(), minlength=n_t * n_a).reshape(n_t, n_a))
    return out[0], out[1], out[2]


def _log_ratio_se(
    x: np.ndarray, y: np.ndarray, sxx: np.ndarray, sxy: np.ndarray, syy: np.ndarray,
    n_cl: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``log(X / Y)`` and its CR1 SE from (weighted) totals: ``sum_c (X_c/X - Y_c/Y)^2``
    expands into ``Sxx / X^2 - 2 Sxy / (X Y) + Syy / Y^2``, so resamples need no task pass."""
    with np.errstate(invalid="ignore", divide="ignore"):
        log_r = np.log(x) - np.log(y)
        ss = sxx / x**2 - 2 * sxy / (x * y) + syy / y**2
        factor = np.where(n_cl > 1, n_cl / (n_cl - 1), np.nan)
        se = np.sqrt(factor * np.maximum(ss, 0.0))
    ok = np.isfinite(log_r)
    return np.where(ok, log_r, np.nan), np.where(ok, se, np.nan)


def _check_runs(runs: pd.DataFrame, reference: str, arms: Sequence[str] | None) -> list[str]:
    check_columns(runs, _RUN_COLUMNS, what="runs")
    present = list(pd.unique(runs["arm"].astype(str)))
    order = list(arms) if arms is not None else present
    if arms is not None and set(present) - set(order):
        raise ParameterError(f"arms {sorted(set(present) - set(order))} are not in arms=")
    if reference not in order:
        raise ParameterError(f"reference {reference!r} is not an arm of the runs ({order})")
    if len(order) < 2:
        raise DataError(f"a cost comparison needs two arms, got {order}", field="arm")
    return order


def arm_costs(
    runs: pd.DataFrame,
    *,
    reference: str,
    confidence: float = 0.95,
    method: str = "studentized",
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Each arm's total token and wall-clock ratio to the reference, task-cluster bootstrap.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run: ``task_id``, ``replicate``, ``arm``, ``wall_s`` and the token
        counts (``reported_tokens`` and / or ``tokens`` with ``tokens_source``), as
        :func:`evalstats.load_dir` gives them.
    reference : str
        The arm every other arm is divided by.
    confidence : float
        Interval level.
    method : {"studentized", "percentile"}
        Bootstrap-t on the log ratio (default) or percentile (module docstring).
    n_resamples : int
        Task-cluster bootstrap resamples.
    rng : numpy.random.Generator or int, optional
        Seed.
    arms : sequence of str, optional
        The arms' order in the result (default: order of appearance).

    Returns
    -------
    ResultFrame
        ``arm``, ``reference``, the tidy columns, ``se_log`` (the CR1 SE of the log ratio;
        ``se`` is it times the ratio) and ``token_source``; one row per arm and
        :data:`ARM_COST_METRICS` (a token row is left out when no usable count exists: the
        reason is in ``diagnostics``). ``n`` counts pairs, ``n_tasks`` tasks with a pair.

    Examples
    --------
    >>> runs = pd.DataFrame({"task_id": np.repeat(["t1", "t2", "t3", "t4"], 3),
    ...     "replicate": 1, "arm": ["r", "a", "b"] * 4,
    ...     "reported_tokens": [100, 50, 200, 80, 40, 160, 120, 66, 230, 90, 45, 190],
    ...     "wall_s": [10.0, 6.0, 20.0, 8.0, 4.0, 15.0, 12.0, 6.0, 25.0, 9.0, 5.0, 18.0]})
    >>> res = arm_costs(runs, reference="r", n_resamples=200, rng=0)
    >>> res.loc[res.statistic == "tokens_total_ratio", ["arm", "estimate"]].round(3).to_string(index=False)
    'arm  estimate\\n  a     0.515\\n  b     2.000'
    """
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=20)
    if method not in ARM_COST_METHODS:
        raise ParameterError(f"method must be one of {ARM_COST_METHODS}, got {method!r}")
    order = _check_runs(runs, reference, arms)
    gen = as_generator(rng)
    runs = runs.assign(arm=runs["arm"].astype(str), task_id=runs["task_id"].astype(str))
    tasks = pd.Index(np.unique(runs["task_id"].to_numpy()))
    others = [a for a in order if a != reference]
    used = runs["arm"].isin(order).to_numpy()
    tcol, source, reason = _token_column(runs, used)
    metrics = []
    if tcol is not None:
        metrics.append(("tokens_total_ratio", tcol, source))
    if "wall_s" in runs.columns:
        metrics.append(("wall_total_ratio", "wall_s", None))
    if not metrics:
        raise DataError("the runs have neither token counts nor wall_s", field="wall_s")
    sums = [_task_sums(runs, order, reference, col, tasks) for _, col, _ in metrics]
    # (T, M, A) per-task x, y, pair counts, and the products the CR1 SE needs
    x = np.stack([s[0] for s in sums], axis=1)
    y = np.stack([s[1] for s in sums], axis=1)
    cnt = np.stack([s[2] for s in sums], axis=1)
    present = (cnt > 0).astype(np.float64)
    parts = [x, y, x * x, x * y, y * y, present]
    log_r, se_log = _log_ratio_se(*(p.sum(0) for p in parts[:5]), present.sum(0))
    flat = np.concatenate([p.reshape(len(tasks), -1) for p in parts], axis=1)
    shape = x.shape[1:]
    lr_b, se_b = [], []
    for weights in task_resamples(len(tasks), n_resamples, gen):
        tot = (weights @ flat).reshape(len(weights), len(parts), *shape)
        lb, sb = _log_ratio_se(*(tot[:, i] for i in range(6)))
        lr_b.append(lb)
        se_b.append(sb)
    lr_b, se_b = np.concatenate(lr_b), np.concatenate(se_b)  # (B, M, A)
    alpha = 1 - confidence
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if method == "studentized":
            t_b = (lr_b - log_r) / se_b
            q_lo = np.nanquantile(t_b, alpha / 2, axis=0)
            q_hi = np.nanquantile(t_b, 1 - alpha / 2, axis=0)
            lo, hi = log_r - q_hi * se_log, log_r - q_lo * se_log
            # No spread at all (every pair the same ratio): the interval is the point.
            flat = se_log == 0
            lo, hi = np.where(flat, log_r, lo), np.where(flat, log_r, hi)
        else:
            lo = np.nanquantile(lr_b, alpha / 2, axis=0)
            hi = np.nanquantile(lr_b, 1 - alpha / 2, axis=0)
        n_cl = present.sum(0)
        p = 2 * scipy.stats.t.sf(np.abs(log_r / se_log), np.maximum(n_cl - 1, 1))
    rows = []
    for m, (name, _, src) in enumerate(metrics):
        for a, arm in enumerate(others):
            r = float(np.exp(log_r[m, a]))
            rows.append({
                "arm": arm, "reference": reference, "statistic": name, "estimate": r,
                "se": r * se_log[m, a], "ci_low": float(np.exp(lo[m, a])),
                "ci_high": float(np.exp(hi[m, a])),
                "p_value": p[m, a] if se_log[m, a] > 0 else np.nan,
                "df": n_cl[m, a] - 1, "n": int(cnt[:, m, a].sum()), "n_tasks": int(n_cl[m, a]),
                "method": f"task_bootstrap_{method}_log", "confidence": confidence,
                "se_log": se_log[m, a], "token_source": src,
            })  # fmt: skip
    diagnostics = pd.DataFrame(
        {
            "reference": [reference],
            "n_arms": [len(order)],
            "n_tasks": [len(tasks)],
            "n_resamples": [n_resamples],
            "token_source": [source],
            "token_reason": [reason],
        }
    )
    return tidy_frame(
        pd.DataFrame(rows),
        by=["arm", "reference"],
        diagnostics=diagnostics,
        extra=["se_log", "token_source"],
    )


def pareto_frontier(quality: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Which points are on the cost-quality Pareto frontier (higher quality, lower cost).

    A point is dominated when another is at least as good on both and strictly better on
    one; NaN points are never on the frontier and dominate nothing. Works on the last axis
    of ``(..., K)`` arrays (every bootstrap resample at once).

    >>> pareto_frontier(np.array([0.0, 0.2, 0.1, 0.3]), np.array([1.0, 0.8, 1.2, 2.0])).tolist()
    [False, True, False, True]
    """
    q = np.asarray(quality, dtype=np.float64)
    c = np.asarray(cost, dtype=np.float64)
    if q.shape != c.shape:
        raise ParameterError(f"quality and cost differ in shape: {q.shape} vs {c.shape}")
    ok = np.isfinite(q) & np.isfinite(c)
    qj, qi = q[..., :, None], q[..., None, :]  # [..., j, i]: does j dominate i
    cj, ci = c[..., :, None], c[..., None, :]
    dom = (qj >= qi) & (cj <= ci) & ((qj > qi) | (cj < ci)) & ok[..., :, None]
    return ok & ~dom.any(axis=-2)


def pareto(
    quality: pd.DataFrame,
    cost: pd.DataFrame,
    *,
    reference: str,
    judge: str | None = None,
    metric: str = "tokens_total_ratio",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """The cost-quality Pareto frontier of K arms and each arm's P(on the frontier).

    Parameters
    ----------
    quality : pandas.DataFrame
        A pairwise verdict frame (:mod:`evalstats.stats.pairs`) with every arm judged
        against ``reference``: quality is the net win against it.
    cost : pandas.DataFrame
        The runs (as for :func:`arm_costs`).
    reference : str
        The reference arm (quality 0, cost ratio 1).
    judge : str, optional
        Which judge's verdicts (needed when the frame has several).
    metric : {"tokens_total_ratio", "wall_total_ratio"}
        The cost axis.
    confidence : float
        Level of the percentile intervals of quality and cost.
    n_resamples : int
        Task-cluster bootstrap resamples (shared by quality and cost).
    rng : numpy.random.Generator or int, optional
        Seed.
    arms : sequence of str, optional
        The arms' order in the result.

    Returns
    -------
    ResultFrame
        ``arm``, the tidy columns, ``on_frontier`` (at the estimates). Rows per arm:
        ``net_win`` and the cost ``metric`` (estimate and percentile interval from the shared
        resamples; the reference's are exactly 0 and 1), ``p_frontier`` (estimate: share of
        the resamples, ``se`` its Monte-Carlo SE). ``diagnostics`` has the judge, the token
        source and the number of resamples where every arm had a finite point.

    Examples
    --------
    >>> f = pd.DataFrame({"task_id": [f"t{i % 6}" for i in range(36)], "judge": "j",
    ...     "arm_a": ["a", "b"] * 18, "arm_b": "r", "status": "ok",
    ...     "outcome": ["win", "loss", "tie", "loss", "win", "win"] * 6})
    >>> runs = pd.DataFrame({"task_id": np.repeat([f"t{i}" for i in range(6)], 3),
    ...     "replicate": 1, "arm": ["r", "a", "b"] * 6, "wall_s": 1.0,
    ...     "reported_tokens": [100, 60, 150, 90, 50, 140, 110, 70, 170] * 2})
    >>> res = pareto(f, runs, reference="r", n_resamples=200, rng=0)
    >>> res.loc[res.statistic == "p_frontier", ["arm", "on_frontier"]].to_string(index=False)
    'arm  on_frontier\\n  a         True\\n  b        False\\n  r        False'
    """
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=20)
    if metric not in ARM_COST_METRICS:
        raise ParameterError(f"metric must be one of {ARM_COST_METRICS}, got {metric!r}")
    gen = as_generator(rng)
    enc = encode(quality, judge=judge, arms=arms)
    check_columns(cost, _RUN_COLUMNS, what="runs")
    ran = sorted(set(cost["arm"].astype(str)))
    if set(enc.arms) != set(ran):
        raise DataError(
            f"the verdicts' arms {sorted(enc.arms)} and the runs' {ran} differ", field="arm"
        )
    order = list(enc.arms)
    if reference not in enc.arms:
        raise ParameterError(f"reference {reference!r} is not an arm of the verdicts")
    r_idx = enc.arms.index(reference)
    pairs = [(i, r_idx) for i in range(len(enc.arms)) if i != r_idx]
    others = [enc.arms[i] for i, _ in pairs]
    counts, _ = pair_counts(enc, pairs)  # (Tq, P, 3)
    runs = cost.assign(arm=cost["arm"].astype(str), task_id=cost["task_id"].astype(str))
    used = runs["arm"].isin(order).to_numpy()
    if metric == "tokens_total_ratio":
        column, source, reason = _token_column(runs, used)
        if column is None:
            raise DataError(f"no token ratio for the Pareto frontier: {reason}", field="tokens")
    else:
        column, source = "wall_s", None
    tasks = pd.Index(np.union1d(enc.tasks, runs["task_id"].to_numpy()))
    x, y, cnt = _task_sums(runs, list(enc.arms), reference, column, tasks)
    q_rows = tasks.get_indexer(enc.tasks)
    per_task = np.zeros((len(tasks), len(pairs), 4))
    per_task[q_rows, :, 0] = counts[..., 0] - counts[..., 2]  # net wins
    per_task[q_rows, :, 1] = counts.sum(-1)  # verdicts
    per_task[:, :, 2], per_task[:, :, 3] = x, y
    flat = per_task.reshape(len(tasks), -1)

    def points(tot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(quality, cost) of every arm, the reference inserted at its place: (..., K)."""
        tot = tot.reshape(*tot.shape[:-1], len(pairs), 4)
        with np.errstate(invalid="ignore", divide="ignore"):
            q, c = tot[..., 0] / tot[..., 1], tot[..., 2] / tot[..., 3]
        q = np.where(np.isfinite(q), q, np.nan)
        c = np.where(np.isfinite(c) & (tot[..., 3] > 0), c, np.nan)
        return np.insert(q, r_idx, 0.0, axis=-1), np.insert(c, r_idx, 1.0, axis=-1)

    q_hat, c_hat = points(flat.sum(0))
    q_b, c_b = [], []
    for weights in task_resamples(len(tasks), n_resamples, gen):
        qb, cb = points(weights @ flat)
        q_b.append(qb)
        c_b.append(cb)
    q_b, c_b = np.concatenate(q_b), np.concatenate(c_b)  # (B, K)
    finite = (np.isfinite(q_b) & np.isfinite(c_b)).all(axis=1)
    on_b = pareto_frontier(q_b[finite], c_b[finite])
    on_hat = pareto_frontier(q_hat, c_hat)
    p_front = on_b.mean(axis=0) if finite.any() else np.full(len(enc.arms), np.nan)
    alpha = 1 - confidence
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        q_iv = np.nanquantile(q_b, [alpha / 2, 1 - alpha / 2], axis=0)
        c_iv = np.nanquantile(c_b, [alpha / 2, 1 - alpha / 2], axis=0)
    n_q = counts.sum(axis=(0, 2))
    tasks_q = (counts.sum(-1) > 0).sum(0)
    n_c, tasks_c = cnt.sum(0), (cnt > 0).sum(0)
    rows = []
    boot = "task_bootstrap_percentile"
    for k, arm in enumerate(enc.arms):
        ref = k == r_idx
        j = None if ref else others.index(arm)
        common = {"arm": arm, "confidence": confidence, "on_frontier": bool(on_hat[k])}
        rows.append({**common, "statistic": "net_win", "estimate": q_hat[k],
                     "ci_low": q_iv[0, k], "ci_high": q_iv[1, k],
                     "se": np.nan if ref else np.nanstd(q_b[:, k], ddof=1),
                     "n": 0 if ref else int(n_q[j]), "n_tasks": 0 if ref else int(tasks_q[j]),
                     "method": "reference" if ref else boot})  # fmt: skip
        rows.append({**common, "statistic": metric, "estimate": c_hat[k],
                     "ci_low": c_iv[0, k], "ci_high": c_iv[1, k],
                     "se": np.nan if ref else np.nanstd(c_b[:, k], ddof=1),
                     "n": 0 if ref else int(n_c[j]), "n_tasks": 0 if ref else int(tasks_c[j]),
                     "method": "reference" if ref else boot})  # fmt: skip
        p = p_front[k]
        rows.append({**common, "statistic": "p_frontier", "estimate": p,
                     "se": np.sqrt(p * (1 - p) / max(int(finite.sum()), 1)),
                     "n": int(finite.sum()), "n_tasks": len(tasks),
                     "method": "task_bootstrap_share"})  # fmt: skip
    diagnostics = pd.DataFrame(
        {
            "judge": [enc.judge],
            "reference": [reference],
            "metric": [metric],
            "token_source": [source],
            "n_resamples": [n_resamples],
            "n_finite_resamples": [int(finite.sum())],
        }
    )
    return tidy_frame(
        pd.DataFrame(rows), by=["arm"], diagnostics=diagnostics, extra=["on_frontier"]
    )
