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

Outlier runs (issue 23): with 5-20 % of runs x10 or x30 (a run that loops, a run stopped at a
budget) at 6-8 tasks the pivot covered 0.904-0.958, median log-scale widths 3.9-9.2 (factors
of 50-10,000), and the check above never fired. So a second check, fixed in advance, tests
the model on the runs: Shapiro-Wilk on the within-task residuals of the log run costs of both
arms (``_lognormal_check``; the task log ratios when no task has two runs). Where it rejects
at 5 %, the default is the model-free CR2 interval (``method`` says so) with the test and its
p-value in ``ci_note``. In ``benchmarks/coverage_cost.py --outliers`` (4,000 evaluations per
design, MC SE <= 0.004) that covered 0.936-0.952 on six outlier designs and 0.955-0.960 on
three without (the pivot widened as before: 0.904-0.962; on a rejection the Cox interval
instead gave 0.957-0.983, the hull with CR2 0.957-0.970, the studentized bootstrap
0.881-0.959); in the battery (``benchmarks/coverage.py``, ``cost_ratios`` as it is)
0.938-0.955 with outliers. The check rejected in 0.60-0.99 of evaluations with 5-10 % of runs
x10 or x30 (0.38 with 20 % x10, where the pivot held) and in 0.026-0.036 without outliers; on
the 20 designs above the default's coverage moved from 0.938-0.959 to 0.936-0.958 (same
draws). The CR2 interval is narrower (median log width 3.0-7.6) but its misses fall mostly
above (4-6 % of evaluations against 1-3 % below: the plain ratio's upward bias), and it is
not exactly reciprocal when the arms are swapped.
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
* The median always uses a Woodruff interval with a task-clustered SE of the share below
  the median (``_woodruff_median_interval``): covered 0.94-0.98 at 6-40 tasks where the
  10,000-resample percentile cluster bootstrap it replaced covered 0.87-0.95 and took 134 s at
  a million pairs. ``se_log`` stays NaN (the interval is not symmetric on any scale).

Judge spend (:func:`judge_spend`) is what grading cost; it never enters the agent ratios.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._tidy import ResultFrame, tidy_frame
from evalstats._validate import check_confidence, check_n_resamples
from evalstats.stats._cost_intervals import (
    _REJECTED_METHOD,
    GPQ_HULL_METHOD,
    GPQ_METHOD,
    _cr1_mean,
    _cr1_total,
    _cr2_mean,
    _cr2_total,
    _log_ratio_of_sums,
    _lognormal_check,
    _mean_of_sums,
    bm_df_from_leverage,
    gpq_interval,
    lognormal_ratio_gpq,
    lognormal_ratio_interval,
    pivot_hull_ends,
)
from evalstats.stats._token_source import choose_token_source
from evalstats.stats.resample import (
    BOOTSTRAP_METHODS,
    as_generator,
    cluster_bootstrap,
)
from evalstats.stats.spend import MEASURES, agent_spend, judge_spend, pair_costs

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

Interval = Literal["default", "cr2", "analytic", "bootstrap"]
INTERVALS = ("default", "cr2", "analytic", "bootstrap")
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
) -> ResultFrame:
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
        always uses a task-clustered Woodruff interval.
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
    ResultFrame
        One row per ratio (``statistic``: one of ``COST_METRICS``): ``estimate``, ``se``
        (on the log scale, where every interval is made), ``ci_low``, ``ci_high``,
        ``p_value`` (NaN: no test here; see :func:`~evalstats.stats.cost_equivalence`),
        ``df`` (the t interval's degrees of freedom; NaN for a bootstrap and for the total
        ratio's generalized pivotal interval), ``n`` (pairs used), ``n_tasks``,
        ``method``, ``confidence``, then ``estimand``, ``n_excluded`` (pairs left out of
        that ratio: a missing value; or a zero on a side, for per-pair ratios) and
        ``n_no_answer`` (the no_answer pairs it includes), ``ci_note`` (the default total
        ratio's lognormal check rejected: the test, its p-value and the CR2 interval used;
        else empty) and ``token_source`` (token rows:
        ``billed`` where every pair has ``billed_with`` / ``billed_without``, else
        ``transcript`` where ``tokens_counted_from`` is ``transcript`` for every pair, else
        ``unavailable``: answer-only counts are no cost, so those rows have no estimate,
        ``method="unavailable"`` and the reason in ``estimand``; ``as given`` for a frame
        without ``tokens_counted_from``). ``attrs["token_source"]`` and
        ``attrs["token_source_reason"]`` repeat it; with both billed and transcript counts,
        ``attrs["transcript_ratios"]`` holds the transcript token rows.

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
    >>> out = cost_ratios(frame, interval="analytic", rng=0).set_index("statistic")
    >>> round(float(out.loc["tokens_total_ratio", "estimate"]), 4)
    0.8667
    >>> int(out.loc["tokens_total_ratio", "n_tasks"])
    3
    """
    _check_choice("interval", interval, INTERVALS)
    _check_choice("method", method, BOOTSTRAP_METHODS)
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    gen = as_generator(rng)
    choice = choose_token_source(frame)
    args = (cluster, include_no_answer, interval, method, n_resamples, confidence)
    out = _cost_rows(choice.frame, *args, gen)
    is_tok = out["statistic"].str.startswith("tokens_").to_numpy()
    if choice.source == "unavailable":
        out.loc[is_tok, ["estimate", "se", "ci_low", "ci_high", "df"]] = np.nan
        out.loc[is_tok, "method"] = "unavailable"
        out.loc[is_tok, "estimand"] = f"unavailable: {choice.reason}"
        out.loc[is_tok, "ci_note"] = ""
    out["token_source"] = np.where(is_tok, choice.source, None)
    out = tidy_frame(out, extra=COST_EXTRAS)
    out.attrs["token_source"] = choice.source
    out.attrs["token_source_reason"] = choice.reason
    if choice.other is not None:
        # Both counts exist: the transcript ratios ride along so a report can show both.
        alt = _cost_rows(choice.other, *args, gen)
        alt = alt.loc[alt["statistic"].str.startswith("tokens_")].assign(token_source="transcript")
        out.attrs["transcript_ratios"] = tidy_frame(alt, extra=COST_EXTRAS)
    return out


def _cost_rows(
    frame, cluster, include_no_answer, interval, method, n_resamples, confidence, gen
) -> pd.DataFrame:
    pairs = pair_costs(frame, cluster=cluster, include_no_answer=include_no_answer)
    rows = []
    for measure, (col_with, col_without) in MEASURES.items():
        x = pairs[col_with].to_numpy(dtype=float)
        y = pairs[col_without].to_numpy(dtype=float)
        gid = pairs["_cluster_code"].to_numpy()
        no_answer = pairs["_no_answer"].to_numpy()
        rows.extend(
            _measure_rows(
                measure, x, y, gid, no_answer, interval, method, n_resamples, confidence, gen
            )
        )
    out = pd.DataFrame(rows).rename(columns=_TIDY_NAMES)
    out["confidence"] = float(confidence)
    return out


# The rows are built under the names of their parts; the result uses the one shape's.
_TIDY_NAMES = {"metric": "statistic", "se_log": "se", "n_pairs": "n", "n_clusters": "n_tasks"}
#: The columns a cost row has beyond the tidy shape.
COST_EXTRAS = ("estimand", "n_excluded", "n_no_answer", "token_source", "ci_note")
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
    # The default's pivot assumes lognormal costs: checked on the runs themselves.
    check = _lognormal_check(xs, ys, g) if interval == "default" and xs.size else None
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
            check,
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


def total_ratio_draws(
    frame: pd.DataFrame,
    *,
    measure: Literal["tokens", "wall"] = "tokens",
    cluster: str = "task_id",
    include_no_answer: bool = True,
) -> np.ndarray | None:
    """The default total-ratio interval's pivot draws (log scale), as ``cost_ratios`` uses them.

    For tests on the same construction (:func:`evalstats.stats.equivalence.cost_equivalence`):
    None where ``cost_ratios`` falls back to CR2 (a task total of 0, fewer than 3 tasks, the
    lognormal model check rejected).

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.frames import load_frame
    >>> from evalstats.stats.cost import cost_ratios, gpq_interval, total_ratio_draws
    >>> frame = load_frame("data/sample")
    >>> draws = total_ratio_draws(frame)
    >>> lo, hi = np.exp(gpq_interval(draws, 0.95))
    >>> row = cost_ratios(frame).set_index("statistic").loc["tokens_total_ratio"]
    >>> bool(lo == row["ci_low"] and hi == row["ci_high"])
    True
    """
    _check_choice("measure", measure, tuple(MEASURES))
    if measure == "tokens":  # the same counts cost_ratios uses (billed before transcript)
        frame = choose_token_source(frame).frame
    pairs = pair_costs(frame, cluster=cluster, include_no_answer=include_no_answer)
    col_with, col_without = MEASURES[measure]
    x = pairs[col_with].to_numpy(dtype=float)
    y = pairs[col_without].to_numpy(dtype=float)
    both = ~(np.isnan(x) | np.isnan(y))
    g = _recode(pairs["_cluster_code"].to_numpy()[both])
    n_c = g.max(initial=-1) + 1
    xs, ys = np.bincount(g, x[both], n_c), np.bincount(g, y[both], n_c)
    if n_c < 2 or not (np.all(xs > 0) and np.all(ys > 0)):
        return None
    if _lognormal_check(x[both], y[both], g).rejected:  # cost_ratios uses CR2 there
        return None
    draws = lognormal_ratio_gpq(xs, ys)
    return draws if np.all(np.isfinite(draws)) else None


def _ratio_row(
    metric, sums, stat, kind, used, no_answer, interval, method, n_resamples, conf, gen, check=None
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
    # Only where the pivot applies: a task total of 0 or too few tasks say their own reason.
    rejected = check is not None and check.rejected and n_clusters >= 3 and np.all(sums > 0)
    if rejected:
        # Outlying runs: the pivot's normal-theory covariance under-covers, CR2 holds.
        row["ci_note"] = check.note()
    if interval == "default" and kind == "total" and not rejected:
        positive = bool(np.all(sums > 0))
        # The pivot and its hull with CR2 where the model is doubtful (one function for this
        # and for design_coverage_cost's simulated evaluations).
        ends = pivot_hull_ends(sums[None, :, 0], sums[None, :, 1], conf) if positive else None
        if ends is not None and ends.pivot_ok[0]:
            return row | {
                "ci_low": float(np.exp(ends.low[0])),
                "ci_high": float(np.exp(ends.high[0])),
                "se_log": float(ends.sd_draws[0]),
                "method": GPQ_HULL_METHOD if ends.widened[0] else GPQ_METHOD,
            }
        fallback = (
            " (a task total of 0: no lognormal interval)"
            if ends is None
            else " (fewer than 3 tasks or no spread: no lognormal interval)"
        )
    if interval in ("cr2", "default"):
        se, df = _cr2_total(sums) if kind == "total" else _cr2_mean(sums)
        if not np.isfinite(df):
            return row | {"se_log": se, "method": "no interval: one cluster holds every cost"}
        q = stats.t.ppf(0.5 + conf / 2.0, df)
        lo, hi = log_est - q * se, log_est + q * se
        label = (
            _REJECTED_METHOD
            if rejected
            else "CR2 delta method, log scale, t(Bell-McCaffrey df)" + fallback
        )
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
    log_est = float(np.median(lr))
    row["estimate"] = float(np.exp(log_est))
    if n_clusters < 2:
        return row | {"method": "needs at least 2 clusters"}
    lo, hi, _ = _woodruff_median_interval(lr, g, conf)
    return row | {
        "ci_low": float(np.exp(lo)),
        "ci_high": float(np.exp(hi)),
        "df": float(n_clusters - 1),
        "method": "Woodruff, task-clustered share SE, t(C - 1), log scale",
    }


def _woodruff_median_interval(
    lr: np.ndarray, g: np.ndarray, confidence: float
) -> tuple[float, float, float]:
    """Woodruff (1952) interval of a pooled median with a task-clustered share SE.

    The share of pairs at or below the median, ``p``, is a ratio of task sums; its CR1 SE
    (``C / (C - 1)`` times the sum of squared task residuals ``z_c - p n_c``, over ``n^2``)
    maps back through the empirical quantile function: the limits are the sample quantiles
    at ``p -/+ t(C - 1) * se``. O(n log n) where a task bootstrap of a median is
    O(resamples x pairs) (134 s at a million pairs); in the coverage study
    (``benchmarks/coverage.py``, median designs) it covered 0.94-0.98 at 6-40 tasks where
    the percentile bootstrap covered 0.87-0.95.

    Returns ``(low, high, se)`` on the scale of ``lr``; ``g`` holds codes 0..C-1.

    >>> lr = np.array([-0.4, -0.1, 0.0, 0.2, 0.3, 0.5, -0.2, 0.1])
    >>> lo, hi, se = _woodruff_median_interval(lr, np.repeat(np.arange(4), 2), 0.95)
    >>> bool(lo <= np.median(lr) <= hi), round(se, 3)
    (True, 0.204)
    """
    n_clusters = int(g.max()) + 1
    m = np.median(lr)
    z = (lr <= m).astype(np.float64)
    p = z.mean()
    resid = np.bincount(g, z, n_clusters) - p * np.bincount(g, minlength=n_clusters)
    se = float(np.sqrt(n_clusters / (n_clusters - 1) * np.sum(resid**2)) / lr.size)
    t = stats.t.ppf(0.5 + confidence / 2, n_clusters - 1)
    probs = np.clip([0.5 - t * se, 0.5 + t * se], 0.0, 1.0)
    lo, hi = np.quantile(lr, probs, method="inverted_cdf")
    return float(lo), float(hi), se


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
        "ci_note": "",
    }


def _recode(g: np.ndarray) -> np.ndarray:
    """Dense 0..k-1 codes so clusters with no usable pair drop out of C."""
    return np.unique(g, return_inverse=True)[1].astype(np.intp)


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
