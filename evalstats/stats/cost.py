"""Agent cost (tokens and wall-clock, WITH over WITHOUT) and judge spend, reported apart.

Agent cost belongs to a **pair** (``task_id``, ``replicate``), not to a judgment: the verdict
frame repeats a pair once per judge and order, so every agent statistic first reduces the frame
to one row per pair (and checks that the repeated values agree). Pairs whose status is
``no_answer`` are real runs that blew a budget, which is exactly where cost matters, so they are
included by default (``include_no_answer=False`` drops them).

Statistics, each as a ratio WITH / WITHOUT (below 1: the tool saves):

* ``*_total_ratio`` - ratio of totals ``sum(with) / sum(without)``: what the whole evaluation
  cost, dominated by the expensive pairs.
* ``*_geomean_ratio`` - geometric mean of per-pair ratios ``exp(mean(log(with / without)))``:
  the typical multiplicative saving, every pair weighing the same.
* ``*_median_ratio`` - ``exp(median(log ratio))``; for an even count this is the geometric
  mean of the two middle ratios, so swapping the arms gives exactly the reciprocal.

Pairs with a missing value on either side are left out of that metric; pairs with a zero on
either side are left out of the per-pair (log) ratios but kept in the totals; ``n_excluded``
counts them.

Each row names its estimand (column ``estimand``): the total ratio estimates the **ratio of
means** ``E[with] / E[without]`` over tasks; the geometric mean estimates ``exp(E[log ratio])``
(a **mean of log ratios**). In skewed data they differ, and the plain ratio of totals is biased
(upward when the big tasks save the most) at few tasks; the point estimate is always the plain
ratio. Intervals are task-clustered and computed on the log scale, then exponentiated:

* ``interval="default"``: for the **ratio of means**, a generalized pivotal interval on the
  task totals (:func:`lognormal_ratio_gpq`, :func:`gpq_interval`; Weerahandi 1993,
  Krishnamoorthy & Mathew 2003, Bebu & Mathew 2008). The log task totals are taken as
  bivariate normal, so ``log(E[x] / E[y]) = E[d] + cov(d, s) / 2`` with ``d, s`` the
  difference and sum of the log task totals; the pivot carries the skewed uncertainty of
  that covariance, so the interval is asymmetric on the log scale with balanced tails. Its
  base draws come from a fixed seed: the interval is a deterministic function of the data,
  exactly reciprocal when the arms are swapped, and ``df`` is NaN (no t quantile; ``se_log``
  is the spread of the pivot's draws). A check fixed in advance guards the lognormal model:
  where the plain log ratio lies outside the pivot's 95 % interval, the model and the data
  disagree and the interval becomes the hull of it and the CR2 interval below (``method``
  says so), so it never excludes the estimate it is reported with. Fewer than 3 tasks, or a
  task total of 0 on either arm (no log), fall back to CR2 and say so in ``method``. For the
  **geometric mean**, CR2 as below.
* ``interval="cr2"``: CR2 cluster-robust delta-method SE of the log (Bell & McCaffrey 2002)
  with a t quantile on the Bell-McCaffrey degrees of freedom (Pustejovsky & Tipton 2018), in
  column ``df``. Both statistics are one-parameter fits - the ratio of totals the WLS
  ``with ~ 0 + without`` with weights ``1 / without`` (cluster leverage ``h_c = Y_c / Y``), the
  geometric mean an intercept-only OLS of the log ratio (``h_c = n_c / n``) - so CR2 divides
  each squared cluster residual total by ``1 - h_c`` and the df has the closed form of
  :func:`bm_df_from_leverage`: ``C - 1`` when balanced, fewer when a few tasks carry the cost.
  The total ratio's CR2 leverage belongs to the WITHOUT arm, so swapping the arms gives the
  reciprocal estimate but not exactly the reciprocal interval (the default's intervals are
  exactly reciprocal).

Why this default: the coverage study ``benchmarks/coverage_cost.py`` (8 tasks x 3 replicates,
log-sd of task size 1.0 and 1.5 with lognormal and gamma task sizes, log saving with slope
-0.3 to +0.3 on log task size; 4,000 evaluations per design, Monte-Carlo SE at most 0.0047;
nominal 95 %) measured, over its 20 designs:

=======================================  ==================  ===============
candidate                                total (ratio of     geometric mean
                                         means)
=======================================  ==================  ===============
cluster BCa (the old default)            0.418-0.841         0.873-0.893
CR1 delta, t(C - 1)                      0.476-0.906         0.943-0.957
CR2 delta, t(Bell-McCaffrey df)          0.702-0.950         0.943-0.957
studentized cluster bootstrap            0.742-0.929         0.942-0.955
cluster jackknife, t(C - 1)              0.642-0.926         = CR1 (balanced)
Fieller (t(BM df))                       unbounded in 6-91 % of evaluations
lognormal (Cox), t(C - 1)                0.900-0.986         -
lognormal (Cox), t(BM df, mean share)    0.935-0.997         -
generalized pivotal (lognormal)          0.895-0.958         -
pivotal, widened to CR2 (the default)    0.938-0.959         -
=======================================  ==================  ===============

The geometric mean's CR2 interval meets [0.93, 0.97] in every design. For the ratio of means
the model-free intervals around the plain ratio under-cover (CR2 0.70 once savings grow with
task size: with eight skewed tasks the ratio of totals is driven by tasks the sample rarely
holds, and it is biased). The symmetric lognormal (Cox) t interval under-covers where the
covariance term is large (0.90 at log-sd 1.5, slope +0.3, every miss on one side) and
over-covers where it is near 0 (0.99 at slope 0): half or more of its variance is that of a
sample covariance, whose distribution is skewed, so no single df fits (the former default,
the Bell-McCaffrey df of the mean cost share, covered 0.935-0.997). The generalized pivot
follows that skew, with balanced tails, and covered 0.950-0.958 in every lognormal design
(its Cholesky order ``(d, s)`` was chosen over ``(s, d)`` on a separate run, seed 11:
0.947-0.959 against 0.956-0.967 in the lognormal designs). Off its model, with gamma task sizes of log-sd 1.5 (left-skewed log sizes, so
the lognormal variance term overstates the ratio of means when savings grow with size), it
fell to 0.895 at slope +0.3 (0.922 at -0.3, 0.928 at +0.15); there the plain ratio fell
outside the pivot's 95 % interval in 6.4 % of evaluations (2.5 %, 2.1 %), and widening those
intervals to the CR2 one gave 0.938 (0.942, 0.944), while in the lognormal designs the check
fires in at most 0.7 % of evaluations and moves coverage by at most 0.002. The total ratio's
interval is wide at few tasks (median log-scale width 1.4-3.4 at 8 tasks: factors of 4-30);
prefer the geometric mean for inference about the typical saving.
* ``interval="analytic"``: CR1 cluster-robust delta-method SE of the log with a t(C - 1)
  quantile. With per-task totals ``X_c, Y_c`` and ``X = sum X_c``, ``Y = sum Y_c``::

      se_log(total ratio)^2 = C / (C - 1) * sum_c (X_c / X - Y_c / Y)^2
      se_log(geomean)^2     = C / (C - 1) * sum_c (S_c - n_c * mean)^2 / n^2

  where ``S_c`` is a task's sum of log ratios and ``n_c`` its pair count. These are exactly
  statsmodels' cluster-robust SEs (``cov_type="cluster"``, default correction
  ``C / (C - 1) * (n - 1) / (n - k)`` with ``k = 1``, so ``C / (C - 1)``) of, respectively, the
  WLS ratio estimator (``with ~ 0 + without``, weights ``1 / without``), divided by the ratio,
  and the intercept of an OLS of the log ratio on a constant; the tests check both.
* ``interval="bootstrap"``: cluster bootstrap over tasks with
  :func:`evalstats.stats.resample.cluster_bootstrap` (``method``, BCa by default). Ratio of
  totals: per-task sums ``(sum with, sum without)``, statistic ``log(s0 / s1)``. Geometric
  mean: ``(sum log ratio, count)``, statistic ``s0 / s1``. ``se_log`` is the bootstrap SE of
  the log. Too narrow at few tasks (see above).
* The median always uses a percentile cluster bootstrap (per-task counts of each distinct log
  ratio are the sufficient statistics; resampled through a sparse table, same draws as the
  engine). A cluster bootstrap of a median is a rough interval:
  the bootstrap distribution of a median is lumpy and its coverage is not guaranteed to be
  nominal, so read it as a range, not a test.

Judge spend (:func:`judge_spend`) is what grading cost; it never enters the agent ratios.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse, stats

from evalstats._schema import ARMS
from evalstats._validate import check_columns, check_confidence, check_positive_int
from evalstats.errors import DataError
from evalstats.stats.resample import (
    BOOTSTRAP_METHODS,
    as_generator,
    cluster_bootstrap,
    interval_from_distribution,
)

__all__ = [
    "COST_METRICS",
    "GPQ_HULL_METHOD",
    "GPQ_METHOD",
    "INTERVALS",
    "agent_spend",
    "bm_df_from_leverage",
    "cost_ratios",
    "gpq_interval",
    "judge_spend",
    "lognormal_ratio_gpq",
    "lognormal_ratio_interval",
    "pair_costs",
    "total_ratio_draws",
]

COST_METRICS = (
    "tokens_total_ratio",
    "tokens_geomean_ratio",
    "tokens_median_ratio",
    "wall_total_ratio",
    "wall_geomean_ratio",
    "wall_median_ratio",
)
_PAIR = ("task_id", "replicate")
# measure -> (WITH column, WITHOUT column)
_MEASURES = {
    "tokens": ("tokens_with", "tokens_without"),
    "wall": ("wall_with_s", "wall_without_s"),
}
# Keep one chunk of the median's (resamples x distinct values) count matrix near this size.
_MEDIAN_CHUNK_BYTES = 32 * 2**20

Interval = Literal["default", "cr2", "analytic", "bootstrap"]
INTERVALS = ("default", "cr2", "analytic", "bootstrap")
GPQ_METHOD = "generalized pivotal (bivariate lognormal task totals), log scale"
GPQ_HULL_METHOD = (
    GPQ_METHOD + ", widened to the CR2 interval (the plain ratio is outside the lognormal 95 %)"
)
# The level of the model check that switches the total ratio's default to the hull: fixed, so
# the construction does not depend on the confidence asked for.
MODEL_CHECK_CONFIDENCE = 0.95
_ESTIMANDS = {
    "total": "ratio of means",
    "geomean": "geometric mean ratio (mean of log ratios)",
    "median": "median ratio (median of log ratios)",
}


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


def cost_ratios(
    frame: pd.DataFrame,
    *,
    cluster: str = "task_id",
    include_no_answer: bool = True,
    interval: Interval = "default",
    method: str = "bca",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Token and wall-clock ratios WITH / WITHOUT, with task-clustered CIs on the log scale.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame (one row per judgment) with ``task_id``, ``replicate``, ``status``, the
        ``cluster`` column and ``tokens_with``, ``tokens_without``, ``wall_with_s``,
        ``wall_without_s``. Reduced to one row per pair first.
    cluster : str
        Column identifying the unit of independence (constant within a pair).
    include_no_answer : bool
        Keep pairs whose status is ``no_answer`` (over budget). Default True: they are real,
        and usually expensive, runs.
    interval : {"default", "cr2", "analytic", "bootstrap"}
        Interval for the total and geometric-mean ratios. ``"default"``: the generalized
        pivotal (bivariate lognormal) interval on the task totals for the total ratio,
        widened to CR2 where it excludes the plain ratio; CR2 with the Bell-McCaffrey df for
        the geometric mean (chosen by the coverage study above). ``"cr2"``: CR2 for both. ``"analytic"``:
        CR1 delta-method SE with t(C - 1). ``"bootstrap"``: cluster bootstrap. The median
        always uses a percentile cluster bootstrap.
    method : {"bca", "percentile", "basic"}
        Bootstrap interval method for the total and geometric-mean ratios
        (``interval="bootstrap"`` only).
    n_resamples : int
        Bootstrap resamples.
    confidence : float
        Confidence level.
    rng : Generator or int, optional
        Random source or seed.

    Returns
    -------
    DataFrame
        One row per metric (``COST_METRICS``), columns ``metric, estimate, ci_low, ci_high,
        se_log, n_pairs, n_clusters, n_excluded, n_no_answer, df, estimand, method,
        confidence``. ``df`` is the t interval's degrees of freedom (NaN for a bootstrap and
        for the total ratio's generalized pivotal interval).
        ``n_excluded`` counts pairs left out of that metric (missing value; or a zero on a side,
        for per-pair ratios); ``n_no_answer`` the no_answer pairs it includes.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.cost import cost_ratios
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c", "c"], "replicate": [1, 2, 1, 2, 1, 2],
    ...     "status": "ok",
    ...     "tokens_with": [800, 900, 1500, 1200, 300, 500],
    ...     "tokens_without": [1000, 1000, 2000, 1000, 600, 400],
    ...     "wall_with_s": [10.0, 12.0, 30.0, 20.0, 5.0, 6.0],
    ...     "wall_without_s": [12.0, 11.0, 40.0, 25.0, 9.0, 5.0]})
    >>> out = cost_ratios(frame, interval="analytic", rng=0).set_index("metric")
    >>> round(float(out.loc["tokens_total_ratio", "estimate"]), 4)
    0.8667
    >>> int(out.loc["tokens_total_ratio", "n_clusters"])
    3
    """
    _check_choice("interval", interval, INTERVALS)
    _check_choice("method", method, BOOTSTRAP_METHODS)
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    gen = as_generator(rng)
    pairs = pair_costs(frame, cluster=cluster, include_no_answer=include_no_answer)

    rows = []
    for measure, (col_with, col_without) in _MEASURES.items():
        x = pairs[col_with].to_numpy(dtype=float)
        y = pairs[col_without].to_numpy(dtype=float)
        gid = pairs["_cluster_code"].to_numpy()
        no_answer = pairs["_no_answer"].to_numpy()
        rows.extend(
            _measure_rows(
                measure, x, y, gid, no_answer, interval, method, n_resamples, confidence, gen
            )
        )
    out = pd.DataFrame(rows)
    out["confidence"] = float(confidence)
    return out


def agent_spend(frame: pd.DataFrame, *, include_no_answer: bool = True) -> pd.DataFrame:
    """Agent spend per arm: total and mean tokens and wall-clock over pairs.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame; reduced to one row per pair (``task_id``, ``replicate``).
    include_no_answer : bool
        Keep ``no_answer`` pairs (default True).

    Returns
    -------
    DataFrame
        One row per arm (``with``, ``without``): ``arm, n_pairs, tokens, tokens_per_pair,
        wall_s, wall_s_per_pair, n_missing_tokens, n_missing_wall``. Totals skip missing
        values; the means are over pairs with a value.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.cost import agent_spend
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b"], "replicate": [1, 1, 1], "status": "ok",
    ...     "judge": ["j1", "j2", "j1"],
    ...     "tokens_with": [800, 800, 1500], "tokens_without": [1000, 1000, 2000],
    ...     "wall_with_s": [10.0, 10.0, 30.0], "wall_without_s": [12.0, 12.0, 40.0]})
    >>> agent_spend(frame)[["arm", "n_pairs", "tokens"]]
           arm  n_pairs  tokens
    0     with        2  2300.0
    1  without        2  3000.0
    """
    pairs = pair_costs(frame, cluster="task_id", include_no_answer=include_no_answer)
    rows = []
    for i, arm in enumerate(ARMS):
        tok = pairs[_MEASURES["tokens"][i]].to_numpy(dtype=float)
        wall = pairs[_MEASURES["wall"][i]].to_numpy(dtype=float)
        rows.append(
            {
                "arm": arm,
                "n_pairs": len(pairs),
                "tokens": np.nansum(tok),
                "tokens_per_pair": _nanmean(tok),
                "wall_s": np.nansum(wall),
                "wall_s_per_pair": _nanmean(wall),
                "n_missing_tokens": int(np.isnan(tok).sum()),
                "n_missing_wall": int(np.isnan(wall).sum()),
            }
        )
    return pd.DataFrame(rows)


def judge_spend(frame: pd.DataFrame, *, by: str | Sequence[str] = "judge") -> pd.DataFrame:
    """What the judges cost: calls, tokens and USD per judge, apart from agent spend.

    Every row of the verdict frame is one judge call, except ``no_answer`` rows with no usage
    recorded (an over-budget pair is normally never sent to a judge; the frame still lists it
    once per judge). A ``no_answer`` row that does carry tokens or USD (the judge was asked
    before the budget was applied) was paid for and is counted. Sums skip unknown values; the
    ``n_unpriced`` and ``n_unknown_tokens`` columns say how many calls they skipped, so a total
    is a lower bound whenever those are non-zero.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``judge_input_tokens``, ``judge_output_tokens``,
        ``judge_usd`` and the ``by`` columns.
    by : str or list of str
        Grouping columns (default ``"judge"``; e.g. ``["judge", "rubric"]``).

    Returns
    -------
    DataFrame
        One row per group: the ``by`` columns, ``calls, n_errors, input_tokens, output_tokens,
        usd, n_unpriced, n_unknown_tokens``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.cost import judge_spend
    >>> frame = pd.DataFrame({
    ...     "judge": ["a:x", "a:x", "b:y"], "status": ["ok", "error", "ok"],
    ...     "judge_input_tokens": [1000, 900, 1200], "judge_output_tokens": [200, None, 150],
    ...     "judge_usd": [0.01, None, 0.02]})
    >>> judge_spend(frame)[["judge", "calls", "input_tokens", "usd", "n_unpriced"]]
      judge  calls  input_tokens   usd  n_unpriced
    0   a:x      2        1900.0  0.01           1
    1   b:y      1        1200.0  0.02           0
    """
    by_cols = [by] if isinstance(by, str) else list(by)
    cols = ["status", "judge_input_tokens", "judge_output_tokens", "judge_usd"]
    check_columns(frame, [*by_cols, *cols])
    status = frame["status"].astype(object).to_numpy()
    inp = _numeric(frame["judge_input_tokens"], "judge_input_tokens")
    out = _numeric(frame["judge_output_tokens"], "judge_output_tokens")
    usd = _numeric(frame["judge_usd"], "judge_usd")
    no_usage = np.isnan(inp) & np.isnan(out) & np.isnan(usd)
    is_call = ~((status == "no_answer") & no_usage)
    calls = frame.loc[is_call]
    inp, out, usd = inp[is_call], out[is_call], usd[is_call]
    work = pd.DataFrame(
        {
            **{c: calls[c].to_numpy() for c in by_cols},
            "calls": 1,
            "n_errors": (calls["status"].astype(object) == "error").to_numpy().astype(int),
            "input_tokens": inp,
            "output_tokens": out,
            "usd": usd,
            "n_unpriced": np.isnan(usd).astype(int),
            "n_unknown_tokens": (np.isnan(inp) | np.isnan(out)).astype(int),
        }
    )
    # sum() skips NaN; min_count=0 keeps an all-unknown group at 0 with its count reported.
    res = work.groupby(by_cols, sort=True, observed=True, dropna=False).sum(min_count=0)
    return res.reset_index()


def pair_costs(
    frame: pd.DataFrame, *, cluster: str = "task_id", include_no_answer: bool = True
) -> pd.DataFrame:
    """One row per pair with its agent cost, its cluster and whether it is ``no_answer``.

    Raises :class:`~evalstats.errors.DataError` when rows of the same pair disagree on a cost
    or on the cluster, or a cost is negative.
    """
    value_cols = [c for pair in _MEASURES.values() for c in pair]
    keys = list(_PAIR)
    extra = [] if cluster in keys else [cluster]
    check_columns(frame, [*keys, *extra, "status", *value_cols])
    if frame.empty:
        raise DataError("verdict frame has no rows")
    for k in [*keys, cluster]:
        miss = frame[k].isna().to_numpy()
        if miss.any():
            raise DataError("missing pair or cluster id", line=int(np.argmax(miss)), field=k)
    work = pd.DataFrame({k: frame[k].to_numpy() for k in dict.fromkeys([*keys, cluster])})
    for c in value_cols:
        v = _numeric(frame[c], c)
        if np.any(v < 0):
            raise DataError("negative cost", line=int(np.argmax(v < 0)), field=c)
        work[c] = v
    work["_no_answer"] = (frame["status"].astype(object) == "no_answer").to_numpy()
    work["_row"] = np.arange(len(frame))

    grouped = work.groupby(keys, sort=True, observed=True)
    first = grouped.first()  # first non-null per column
    # Judgments of one pair must carry the same run costs; NaN-aware (max == min, counts agree).
    for c in [*value_cols, *extra]:
        g = grouped[c]
        if c in extra:
            bad = g.nunique(dropna=True) > 1
        else:
            bad = (g.max() != g.min()) & g.max().notna()
            bad |= (g.count() > 0) & (g.count() < g.size())
        if bad.any():
            key = bad.index[bad.to_numpy()][0]
            row = int(work.set_index(keys).loc[[key], "_row"].iloc[0])
            raise DataError(f"rows of pair {key} disagree on {c}", line=row, field=c)
    pairs = first.reset_index()
    pairs["_no_answer"] = grouped["_no_answer"].any().to_numpy()
    if not include_no_answer:
        pairs = pairs.loc[~pairs["_no_answer"]].reset_index(drop=True)
    pairs["_cluster_code"] = pd.factorize(pairs[cluster], sort=True)[0]
    return pairs


# --------------------------------------------------------------------------------------------
# numpy core
# --------------------------------------------------------------------------------------------


def _measure_rows(measure, x, y, gid, no_answer, interval, method, n_resamples, conf, gen):
    both = ~(np.isnan(x) | np.isnan(y))
    positive = both & (x > 0) & (y > 0)
    rows = []

    # Ratio of totals: zeros are real (cheap) runs and stay in the sums.
    xs, ys, g = x[both], y[both], _recode(gid[both])
    sums = np.column_stack(
        [np.bincount(g, xs, g.max(initial=-1) + 1), np.bincount(g, ys, g.max(initial=-1) + 1)]
    )
    rows.append(
        _ratio_row(
            f"{measure}_total_ratio",
            sums,
            _log_ratio_of_sums,
            "total",
            both,
            no_answer,
            interval,
            method,
            n_resamples,
            conf,
            gen,
        )
    )

    # Per-pair log ratios: a zero on either side has no finite log ratio.
    lr = np.log(x[positive]) - np.log(y[positive])
    g = _recode(gid[positive])
    n_c = g.max(initial=-1) + 1
    sums = np.column_stack([np.bincount(g, lr, n_c), np.bincount(g, minlength=n_c)])
    rows.append(
        _ratio_row(
            f"{measure}_geomean_ratio",
            sums,
            _mean_of_sums,
            "geomean",
            positive,
            no_answer,
            interval,
            method,
            n_resamples,
            conf,
            gen,
        )
    )
    rows.append(
        _median_row(f"{measure}_median_ratio", lr, g, positive, no_answer, n_resamples, conf, gen)
    )
    return rows


def bm_df_from_leverage(h: np.ndarray) -> np.ndarray:
    """Bell-McCaffrey degrees of freedom of a one-parameter CR2 variance, from cluster leverages.

    For a single coefficient (an intercept-only OLS, or the through-origin WLS ratio estimator)
    the cluster hat blocks are rank one with eigenvalue ``h_c`` (the cluster's leverage:
    ``n_c / n`` for a mean, ``Y_c / Y`` for a ratio of totals). The CR2 estimator is then
    ``sum_c E_c^2 / (1 - h_c)`` and, under the working model, the Bell & McCaffrey (2002) df
    ``tr(M)^2 / tr(M^2)`` has ``M = diag(h / (1 - h)) - q q'`` with ``q = h / sqrt(1 - h)``
    (Pustejovsky & Tipton 2018, eq. 11, specialised to one parameter). Balanced clusters give
    ``C - 1``; unequal leverages give fewer.

    Parameters
    ----------
    h : ndarray, shape (..., C)
        Cluster leverages, each in [0, 1), summing to 1 along the last axis.

    Returns
    -------
    ndarray, shape (...)
        The df; NaN where some ``h_c >= 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import bm_df_from_leverage
    >>> float(bm_df_from_leverage(np.full(8, 1 / 8)))  # balanced: C - 1
    7.0
    >>> round(float(bm_df_from_leverage(np.array([0.6, 0.2, 0.1, 0.05, 0.05]))), 3)
    1.865
    """
    h = np.asarray(h, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = h / (1.0 - h)
        q2 = h * d  # q_c^2 = h_c^2 / (1 - h_c)
        tr = d.sum(-1) - q2.sum(-1)
        tr2 = (d**2).sum(-1) - 2.0 * (d * q2).sum(-1) + q2.sum(-1) ** 2
        df = tr**2 / tr2
    return np.where(np.all(h < 1.0, axis=-1), df, np.nan)


def _log_ratio_of_sums(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(s[..., 0]) - np.log(s[..., 1])
    # A resample with an all-zero side has no ratio; the engine drops NaN.
    return np.where(np.isfinite(out), out, np.nan)


def _mean_of_sums(s: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return s[..., 0] / s[..., 1]


def _cr1_total(sums: np.ndarray) -> float:
    """CR1 delta-method SE of log(sum x / sum y) from per-cluster sums (C, 2)."""
    c = sums.shape[0]
    tot = sums.sum(axis=0)
    z = sums[:, 0] / tot[0] - sums[:, 1] / tot[1]
    return float(np.sqrt(c / (c - 1) * np.sum(z**2)))


def _cr1_mean(sums: np.ndarray) -> float:
    """CR1 SE of a pooled mean from per-cluster (sum, count) (C, 2)."""
    c = sums.shape[0]
    n = sums[:, 1].sum()
    mean = sums[:, 0].sum() / n
    return float(np.sqrt(c / (c - 1) * np.sum((sums[:, 0] - sums[:, 1] * mean) ** 2)) / n)


def lognormal_ratio_interval(
    x: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Centre, SE and df of a lognormal (Cox-type) interval for ``log(E[x] / E[y])``.

    The cluster totals ``(log x_c, log y_c)`` are taken as bivariate normal, so with
    ``d = log x - log y`` and ``s = log x + log y``::

        log(E[x] / E[y]) = E[d] + (var(log x) - var(log y)) / 2 = E[d] + cov(d, s) / 2

    estimated by ``dbar + s_ds / 2`` with
    ``SE^2 = s_d^2 / C + (s_d^2 s_s^2 + s_ds^2) / (4 (C - 1))`` (the normal-theory variances of
    a mean and of a sample covariance, which are uncorrelated) and t(C - 1) quantiles. With
    ``y`` constant it is the modified Cox interval for a lognormal mean (Zhou & Gao 1997).
    Vectorised over leading axes. A candidate of ``benchmarks/coverage_cost.py``, no longer
    the default: symmetric on the log scale, it misses on one side where the covariance term
    is large (see the module docstring); :func:`lognormal_ratio_gpq` replaced it.

    Parameters
    ----------
    x, y : ndarray, shape (..., C)
        Positive per-cluster totals, C >= 2.

    Returns
    -------
    centre, se, df : ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import lognormal_ratio_interval
    >>> x = np.array([900.0, 15000.0, 2500.0, 400.0, 7000.0])
    >>> y = np.array([1000.0, 21000.0, 3000.0, 500.0, 8000.0])
    >>> centre, se, df = lognormal_ratio_interval(x, y)
    >>> round(float(centre), 4), round(float(se), 4), float(df)
    (-0.2578, 0.0846, 4.0)
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dm = d - d.mean(-1, keepdims=True)
    sm = s - s.mean(-1, keepdims=True)
    s_dd = (dm * dm).sum(-1) / (c - 1)
    s_ss = (sm * sm).sum(-1) / (c - 1)
    s_ds = (dm * sm).sum(-1) / (c - 1)
    centre = d.mean(-1) + s_ds / 2.0
    se = np.sqrt(s_dd / c + (s_dd * s_ss + s_ds**2) / (4.0 * (c - 1)))
    return centre, se, np.full(np.shape(centre), float(c - 1))


# Base draws of the generalized pivotal quantity from a fixed seed, so the interval is a
# deterministic function of the data (and the equivalence test can invert exactly the interval
# reported); 8,192 draws put the Monte-Carlo error of a 95 % limit near 1 % of the half-width.
_GPQ_DRAWS = 8192
_GPQ_SEED = 20261201


@functools.lru_cache(maxsize=64)
def _gpq_base(c: int, n_draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bartlett factors of a Wishart(C - 1, I_2) and a standard normal, for C clusters."""
    gen = np.random.default_rng([_GPQ_SEED, c])
    half = n_draws // 2
    nu = c - 1
    t11 = np.tile(np.sqrt(gen.chisquare(nu, half)), 2)
    t22 = np.tile(np.sqrt(gen.chisquare(nu - 1, half)), 2)
    # Antithetic pairs (t21, z) and (-t21, -z): swapping the arms then negates the set of
    # draws exactly, so the interval of WITHOUT / WITH is the reciprocal one.
    t21 = gen.standard_normal(half)
    z = gen.standard_normal(half)
    t21, z = np.concatenate([t21, -t21]), np.concatenate([z, -z])
    for a in (t11, t22, t21, z):
        a.setflags(write=False)
    return t11, t22, t21, z


def lognormal_ratio_gpq(x: np.ndarray, y: np.ndarray, *, n_draws: int = _GPQ_DRAWS) -> np.ndarray:
    """Generalized pivotal quantity of ``log(E[x] / E[y])`` for bivariate lognormal totals.

    The per-cluster totals ``(log x_c, log y_c)`` are taken as bivariate normal; with
    ``d = log x - log y`` and ``s = log x + log y`` the estimand is
    ``theta = log(E[x] / E[y]) = mu_d + sigma_ds / 2``. With ``A = L L'`` the centred sums
    of squares and products of ``(d, s)`` (Cholesky factor ``L``) and ``T`` the lower
    Bartlett factor of a Wishart(C - 1, I) matrix (``T_11^2 ~ chi2(C - 1)``,
    ``T_22^2 ~ chi2(C - 2)``, ``T_21 ~ N(0, 1)``), ``Sigma* = (L T^-1)(L T^-1)'`` is a
    generalized pivotal quantity for the covariance (it is ``Sigma`` when the random ``A``
    equals the observed one) and::

        theta* = dbar - Z sqrt(Sigma*_dd / C) + Sigma*_ds / 2

    one for ``theta`` (Weerahandi 1993; Krishnamoorthy & Mathew 2003 for one lognormal mean,
    to which it reduces when ``y`` is constant; Bebu & Mathew 2008 for the ratio of the means
    of a bivariate lognormal). In the order ``(d, s)``, ``Sigma*_dd = a_dd / chi2(C - 1)``:
    the pivot of ``mu_d`` is the paired t pivot on the log totals. Antithetic draws
    ``(T_21, Z)``, ``(-T_21, -Z)`` make the draws for ``y / x`` exactly the negated draws for
    ``x / y`` (reciprocal intervals). Its quantiles
    give the interval (:func:`gpq_interval`): equal-tailed and asymmetric on the log scale;
    its coverage is approximate (a generalized interval is not exact in general) and was
    0.950-0.958 at 8 lognormal tasks in ``benchmarks/coverage_cost.py``. The base draws come
    from a fixed seed, so the result is a deterministic function of the data. Vectorised
    over leading axes.

    Parameters
    ----------
    x, y : ndarray, shape (..., C)
        Positive per-cluster totals, C >= 3.
    n_draws : int
        Draws of the pivot.

    Returns
    -------
    ndarray, shape (..., n_draws)
        Draws of ``theta*``; NaN for C < 3.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import gpq_interval, lognormal_ratio_gpq
    >>> x = np.array([900.0, 15000.0, 2500.0, 400.0, 7000.0])
    >>> y = np.array([1000.0, 21000.0, 3000.0, 500.0, 8000.0])
    >>> draws = lognormal_ratio_gpq(x, y)  # five tasks: a wide, asymmetric interval
    >>> lo, hi = gpq_interval(draws, 0.95)
    >>> print(f"{np.exp(lo):.3f} {np.exp(hi):.3f}")
    0.334 1.108
    >>> lo_swap, hi_swap = gpq_interval(lognormal_ratio_gpq(y, x), 0.95)  # y / x: reciprocal
    >>> bool(np.isclose(lo_swap, -hi) and np.isclose(hi_swap, -lo))
    True
    """
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dbar = d.mean(-1)
    dm = d - dbar[..., None]
    sm = s - s.mean(-1, keepdims=True)
    a_ss, a_dd, a_sd = (sm * sm).sum(-1), (dm * dm).sum(-1), (sm * dm).sum(-1)
    if c < 3:
        return np.full((*dbar.shape, n_draws), np.nan)
    # Cholesky of A in the order (d, s): Sigma*_dd = a_dd / chi2(C - 1), so the pivot of
    # mu_d is the paired t pivot on the log task totals.
    with np.errstate(divide="ignore", invalid="ignore"):
        l11 = np.sqrt(a_dd)
        l21 = a_sd / l11
        l22 = np.sqrt(np.maximum(a_ss - l21**2, 0.0))
    t11, t22, t21, z = _gpq_base(c, n_draws)
    # B = L T^{-1} (lower triangular), Sigma* = B B': Sigma*_dd = b11^2, Sigma*_ds = b11 b21.
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    b11 = l11[..., None] * i11
    b21 = l21[..., None] * i11 + l22[..., None] * i21
    return dbar[..., None] - z * b11 / np.sqrt(c) + b11 * b21 / 2.0


def gpq_interval(draws: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed interval from pivot draws, by order statistics.

    With ``K`` draws and ``j = ceil(K (1 - confidence) / 2)``, the limits are the ``j``-th
    smallest and the ``j``-th largest draw, so a bound ``m`` lies beyond the upper limit
    exactly when the generalized p-value ``mean(draws >= m)`` is below ``(1 - confidence) / 2``
    (and likewise below): the test and the interval agree.

    Parameters
    ----------
    draws : ndarray, shape (..., K)
        Draws of a pivot, e.g. from :func:`lognormal_ratio_gpq`.
    confidence : float
        Confidence level.

    Returns
    -------
    lo, hi : ndarray, shape (...)

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.cost import gpq_interval
    >>> lo, hi = gpq_interval(np.arange(1.0, 101.0), 0.90)
    >>> float(lo), float(hi)
    (5.0, 96.0)
    """
    srt = np.sort(np.asarray(draws, dtype=float), axis=-1)
    k = srt.shape[-1]
    j = max(1, int(np.ceil(k * (1.0 - confidence) / 2.0 - 1e-9)))
    return srt[..., j - 1], srt[..., k - j]


def _model_rejected(draws: np.ndarray, log_est: float) -> bool:
    """The plain log ratio outside the pivot's 95 % interval: the lognormal model is doubtful."""
    lo, hi = gpq_interval(draws, MODEL_CHECK_CONFIDENCE)
    return not (lo <= log_est <= hi)


def total_ratio_draws(
    frame: pd.DataFrame,
    *,
    measure: Literal["tokens", "wall"] = "tokens",
    cluster: str = "task_id",
    include_no_answer: bool = True,
) -> np.ndarray | None:
    """The default total-ratio interval's pivot draws (log scale), as ``cost_ratios`` uses them.

    For tests on the same construction (:func:`evalstats.stats.equivalence.cost_equivalence`):
    None where ``cost_ratios`` falls back to CR2 (a task total of 0, fewer than 3 tasks).

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.frames import load_frame
    >>> from evalstats.stats.cost import cost_ratios, gpq_interval, total_ratio_draws
    >>> frame = load_frame("data/sample")
    >>> draws = total_ratio_draws(frame)
    >>> lo, hi = np.exp(gpq_interval(draws, 0.95))
    >>> row = cost_ratios(frame).set_index("metric").loc["tokens_total_ratio"]
    >>> bool(lo == row["ci_low"] and hi == row["ci_high"])
    True
    """
    _check_choice("measure", measure, tuple(_MEASURES))
    pairs = pair_costs(frame, cluster=cluster, include_no_answer=include_no_answer)
    col_with, col_without = _MEASURES[measure]
    x = pairs[col_with].to_numpy(dtype=float)
    y = pairs[col_without].to_numpy(dtype=float)
    both = ~(np.isnan(x) | np.isnan(y))
    g = _recode(pairs["_cluster_code"].to_numpy()[both])
    n_c = g.max(initial=-1) + 1
    xs, ys = np.bincount(g, x[both], n_c), np.bincount(g, y[both], n_c)
    if n_c < 2 or not (np.all(xs > 0) and np.all(ys > 0)):
        return None
    draws = lognormal_ratio_gpq(xs, ys)
    return draws if np.all(np.isfinite(draws)) else None


def _cr2_total(sums: np.ndarray) -> tuple[float, float]:
    """CR2 SE of log(sum x / sum y) and its Bell-McCaffrey df, from per-cluster sums (C, 2).

    The ratio of totals is the WLS fit of ``x ~ 0 + y`` with weights ``1 / y``; its cluster
    leverages are ``h_c = Y_c / Y`` and the CR2 adjustment divides each squared cluster residual
    total by ``1 - h_c`` (see :func:`bm_df_from_leverage`).
    """
    tot = sums.sum(axis=0)
    z = sums[:, 0] / tot[0] - sums[:, 1] / tot[1]
    h = sums[:, 1] / tot[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        se = float(np.sqrt(np.sum(z**2 / (1.0 - h))))
    return se, float(bm_df_from_leverage(h))


def _cr2_mean(sums: np.ndarray) -> tuple[float, float]:
    """CR2 SE of a pooled mean (intercept-only OLS) and its Bell-McCaffrey df, (C, 2) sums."""
    n = sums[:, 1].sum()
    mean = sums[:, 0].sum() / n
    h = sums[:, 1] / n
    with np.errstate(divide="ignore", invalid="ignore"):
        se = float(np.sqrt(np.sum((sums[:, 0] - sums[:, 1] * mean) ** 2 / (1.0 - h))) / n)
    return se, float(bm_df_from_leverage(h))


def _ratio_row(
    metric, sums, stat, kind, used, no_answer, interval, method, n_resamples, conf, gen
) -> dict:
    n_clusters = sums.shape[0]
    row = _base_row(metric, used, no_answer, n_clusters)
    row["estimand"] = _ESTIMANDS[kind]
    if n_clusters == 0:
        return row | {"method": "no usable pairs"}
    log_est = float(stat(sums.sum(axis=0)))
    row["estimate"] = float(np.exp(log_est))
    if n_clusters < 2 or not np.isfinite(log_est):
        return row | {"method": "needs at least 2 clusters"}
    df = np.nan
    fallback = ""
    if interval == "default" and kind == "total":
        draws = lognormal_ratio_gpq(sums[:, 0], sums[:, 1]) if np.all(sums > 0) else None
        if draws is not None and np.all(np.isfinite(draws)):
            lo, hi = gpq_interval(draws, conf)
            label = GPQ_METHOD
            if _model_rejected(draws, log_est):
                # The lognormal model and the data disagree: widen to the model-free CR2
                # interval too, so the interval never excludes the plain ratio it reports.
                se2, df2 = _cr2_total(sums)
                q = stats.t.ppf(0.5 + conf / 2.0, df2)
                if np.isfinite(q):
                    lo, hi = min(lo, log_est - q * se2), max(hi, log_est + q * se2)
                    label = GPQ_HULL_METHOD
            return row | {
                "ci_low": float(np.exp(lo)),
                "ci_high": float(np.exp(hi)),
                "se_log": float(np.std(draws)),
                "method": label,
            }
        fallback = (
            " (a task total of 0: no lognormal interval)"
            if draws is None
            else " (fewer than 3 tasks or no spread: no lognormal interval)"
        )
    if interval in ("cr2", "default"):
        se, df = _cr2_total(sums) if kind == "total" else _cr2_mean(sums)
        if not np.isfinite(df):
            return row | {"se_log": se, "method": "no interval: one cluster holds every cost"}
        q = stats.t.ppf(0.5 + conf / 2.0, df)
        lo, hi = log_est - q * se, log_est + q * se
        label = "CR2 delta method, log scale, t(Bell-McCaffrey df)" + fallback
    elif interval == "analytic":
        se = _cr1_total(sums) if kind == "total" else _cr1_mean(sums)
        df = float(n_clusters - 1)
        q = stats.t.ppf(0.5 + conf / 2.0, df)
        lo, hi = log_est - q * se, log_est + q * se
        label = "CR1 delta method, log scale, t(C-1)"
    else:
        res = cluster_bootstrap(
            sums, stat, method=method, n_resamples=n_resamples, confidence=conf, rng=gen
        )
        se, lo, hi = float(res.se[0]), float(res.ci_low[0]), float(res.ci_high[0])
        label = f"cluster bootstrap {method}, log scale"
    return row | {
        "ci_low": float(np.exp(lo)),
        "ci_high": float(np.exp(hi)),
        "se_log": se,
        "df": df,
        "method": label,
    }


def _median_row(metric, lr, g, used, no_answer, n_resamples, conf, gen) -> dict:
    n_clusters = g.max(initial=-1) + 1
    row = _base_row(metric, used, no_answer, n_clusters)
    row["estimand"] = _ESTIMANDS["median"]
    if lr.size == 0:
        return row | {"method": "no usable pairs"}
    values, inverse = np.unique(lr, return_inverse=True)
    log_est = float(np.median(lr))
    row["estimate"] = float(np.exp(log_est))
    if n_clusters < 2:
        return row | {"method": "needs at least 2 clusters"}
    theta_b = _median_distribution(values, inverse, g, n_clusters, n_resamples, gen)
    lo, hi = interval_from_distribution(theta_b[:, None], np.array([log_est]), conf, "percentile")
    return row | {
        "ci_low": float(np.exp(lo[0])),
        "ci_high": float(np.exp(hi[0])),
        "method": "cluster bootstrap percentile, log scale (rough for a median)",
    }


def _median_distribution(values, inverse, g, n_clusters, n_resamples, gen) -> np.ndarray:
    """Bootstrap distribution of the pooled median over cluster resamples.

    The sufficient statistics of a pooled median are the counts of each distinct value, a
    (clusters x values) table with one entry per pair. Per chunk, cluster multiplicities
    (b, C) times that sparse table give the resampled counts in O(b * pairs), where the dense
    engine would take O(b * C * values). Draws are ``gen.integers(0, C, (b, C))`` per chunk,
    the engine's (and scipy's) stream.
    """
    m = values.size
    table = sparse.csr_matrix(
        (np.ones(inverse.size), (inverse, g)), shape=(m, n_clusters)
    )  # values x clusters
    chunk = max(1, _MEDIAN_CHUNK_BYTES // (8 * (m + 2 * n_clusters)))
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        idx = gen.integers(0, n_clusters, (b, n_clusters))
        keys = idx + (n_clusters * np.arange(b))[:, None]
        mult = np.bincount(keys.ravel(), minlength=b * n_clusters).reshape(b, n_clusters)
        # (b, m), row-major: the cumulative sums run along each resample's row.
        counts = np.ascontiguousarray(np.asarray(table @ mult.T.astype(np.float64)).T)
        out[start : start + b] = _weighted_median(values, counts)
    return out


def _weighted_median(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Median of a sample given as counts (..., k) of sorted distinct ``values`` (k,).

    Equals ``np.median`` of the expanded sample: the mean of order statistics
    ``floor((N + 1) / 2)`` and ``floor(N / 2) + 1`` (1-based); NaN for an empty sample.
    """
    cum = np.cumsum(counts, axis=-1)
    n = cum[..., -1]
    lo_k = np.floor((n + 1) / 2)
    hi_k = np.floor(n / 2) + 1
    last = values.size - 1
    i_lo = np.minimum((cum < lo_k[..., None]).sum(axis=-1), last)
    i_hi = np.minimum((cum < hi_k[..., None]).sum(axis=-1), last)
    return np.where(n > 0, 0.5 * (values[i_lo] + values[i_hi]), np.nan)


def _base_row(metric, used, no_answer, n_clusters) -> dict:
    return {
        "metric": metric,
        "estimate": np.nan,
        "ci_low": np.nan,
        "ci_high": np.nan,
        "se_log": np.nan,
        "n_pairs": int(used.sum()),
        "n_clusters": int(n_clusters),
        "n_excluded": int((~used).sum()),
        "n_no_answer": int((used & no_answer).sum()),
        "df": np.nan,
        "estimand": "",
        "method": "",
    }


def _recode(g: np.ndarray) -> np.ndarray:
    """Dense 0..k-1 codes so clusters with no usable pair drop out of C."""
    return np.unique(g, return_inverse=True)[1].astype(np.intp)


def _nanmean(v: np.ndarray) -> float:
    ok = ~np.isnan(v)
    return float(v[ok].mean()) if ok.any() else np.nan


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")


def _numeric(series: pd.Series, field: str) -> np.ndarray:
    """Float array with NaN for missing values (nullable Int64, None, NA all accepted)."""
    try:
        return pd.to_numeric(series, errors="raise").astype("float64").to_numpy(na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"non-numeric value: {exc}", field=field) from None
