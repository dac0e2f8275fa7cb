"""Agent cost: token and wall-clock ratios per pair of arms, each arm's cost against a
reference, the cost-quality Pareto frontier, and judge spend (reported apart).

Agent cost belongs to a pair of runs, not to a judgment: the verdict frame is first reduced to
one row per pair. Estimators and the studies that chose them: ``docs/methods.md``, "Cost".
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_choice, check_columns, check_confidence, check_n_resamples
from ..errors import DataError, ParameterError
from .ranking import encode, pair_counts, task_resamples
from .resample import as_generator

__all__ = [
    "ARM_COST_METHODS",
    "ARM_COST_METRICS",
    "COST_METRICS",
    "GPQ_HULL_METHOD",
    "GPQ_METHOD",
    "INTERVALS",
    "MEASURES",
    "arm_costs",
    "bm_df_from_leverage",
    "choose_token_source",
    "cost_ratios",
    "gpq_interval",
    "judge_spend",
    "lognormal_ratio_gpq",
    "pair_costs",
    "pareto",
    "pareto_frontier",
    "pivot_hull_ends",
    "total_ratio_draws",
]

#: The ratios of :func:`cost_ratios`, per pair of arms (``arm_a`` over ``arm_b``).
COST_METRICS = tuple(
    f"{m}_{k}_ratio" for m in ("tokens", "wall") for k in ("total", "geomean", "median")
)
#: Interval choices of :func:`cost_ratios` for the total and geometric-mean ratios.
INTERVALS = ("default", "cr2", "analytic")
#: The statistics of :func:`arm_costs`, per arm: the total token and wall-clock ratios.
ARM_COST_METRICS = ("tokens_total_ratio", "wall_total_ratio")
#: Interval methods of :func:`arm_costs`: bootstrap-t on the log ratio, or percentile.
ARM_COST_METHODS = ("studentized", "percentile")
#: measure -> (arm_a column, arm_b column) of the verdict frame (WITH / WITHOUT roles).
MEASURES = {"tokens": ("tokens_with", "tokens_without"), "wall": ("wall_with_s", "wall_without_s")}
GPQ_METHOD = "generalized pivotal (bivariate lognormal task totals), log scale"
GPQ_HULL_METHOD = (
    GPQ_METHOD + ", widened to the CR2 interval (the plain ratio is outside the lognormal 95 %)"
)
_CR2_LABEL = "CR2 delta method, log scale, t(Bell-McCaffrey df)"
_REJECTED_METHOD = f"{_CR2_LABEL} (lognormal model rejected: outlying runs)"
# Fixed levels: the pivot's own model check, and the normality test of the runs' log costs.
MODEL_CHECK_CONFIDENCE = 0.95
LOGNORMAL_CHECK_ALPHA = 0.05
_SHAPIRO_MAX = 5000  # scipy's Shapiro-Wilk p is accurate to 5,000 values; D'Agostino beyond
_GPQ_DRAWS = 8192  # from a fixed seed: the interval is a deterministic function of the data
_GPQ_SEED = 20261201
_PAIR = ("task_id", "replicate")
_ARM_KEYS = ("arm_a", "arm_b")
_RUN_COLUMNS = ("task_id", "replicate", "arm")
_BILLED = ("billed_with", "billed_without")
_COUNTED = ("tokens_with", "tokens_without")
_ESTIMANDS = {
    "total": "ratio of means",
    "geomean": "geometric mean ratio (mean of log ratios)",
    "median": "median ratio (median of log ratios)",
}
#: The columns a cost row has beyond the tidy shape.
COST_EXTRAS = ("estimand", "n_excluded", "n_no_answer", "token_source", "ci_note")


@dataclass(frozen=True)
class _CostOptions:
    """The options of :func:`cost_ratios` that travel to every ratio, validated once."""

    cluster: str = "task_id"
    include_no_answer: bool = True
    interval: str = "default"
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_choice(self.interval, "interval", INTERVALS)
        object.__setattr__(self, "confidence", check_confidence(self.confidence))


@dataclass(frozen=True)
class TokenChoice:
    """The chosen token source, the frame whose ``tokens_*`` columns hold it, and the other."""

    source: str
    frame: pd.DataFrame
    reason: str | None = None
    other: pd.DataFrame | None = None


def choose_token_source(frame: pd.DataFrame) -> TokenChoice:
    """Billed where every pair has it, else transcript where every pair has it, else none."""
    counted = frame.get("tokens_counted_from")
    all_transcript = counted is not None and bool((counted == "transcript").all())
    has_billed = all(c in frame.columns for c in _BILLED)
    if has_billed and bool(frame[list(_BILLED)].notna().all(axis=None)):
        other = frame if all_transcript else None
        billed = frame.assign(**{c: frame[b] for c, b in zip(_COUNTED, _BILLED, strict=True)})
        return TokenChoice("billed", billed, other=other)
    if counted is None:
        return TokenChoice("as given", frame)
    if all_transcript:
        return TokenChoice("transcript", frame)
    # Counted per pair: a verdict frame has one row per judgment.
    pairs = frame.drop_duplicates([c for c in (*_PAIR, *_ARM_KEYS) if c in frame.columns])
    n_answer = int((pairs["tokens_counted_from"] != "transcript").sum())
    n_billed = int(pairs[list(_BILLED)].notna().all(axis=1).sum()) if has_billed else 0
    billed_note = (
        f"harness usage (billed) covers only {n_billed} of the {len(pairs)} pairs"
        if n_billed
        else "no harness usage (billed) was imported"
    )
    reason = (
        f"only answer-only token counts: {n_answer} of {len(pairs)} pairs lack a transcript "
        f"and {billed_note}; an answer is not what a run consumed"
    )
    return TokenChoice("unavailable", frame, reason=reason)


def judge_spend(frame: pd.DataFrame, *, by: str | Sequence[str] = "judge") -> pd.DataFrame:
    """What the judges cost: calls, tokens and USD per judge, apart from agent spend.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``judge_input_tokens``, ``judge_output_tokens``,
        ``judge_usd`` and the ``by`` columns (``no_answer`` rows without usage are no call).
    by : str or list of str
        Grouping columns.

    Returns
    -------
    DataFrame
        Per group: ``calls, n_errors, input_tokens, output_tokens, usd, n_unpriced,
        n_unknown_tokens`` (sums skip unknown values, which the last two count).

    Examples
    --------
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
    inp, out, usd = (_numeric(frame[c], c) for c in cols[1:])
    is_call = ~((status == "no_answer") & np.isnan(inp) & np.isnan(out) & np.isnan(usd))
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
    """One row per pair (and pair of arms) with its agent cost, cluster and ``no_answer``."""
    value_cols = [c for pair in MEASURES.values() for c in pair]
    keys = [*_PAIR, *(c for c in _ARM_KEYS if c in frame.columns)]
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
    # The judgments of one pair must carry the same run costs (NaN-aware).
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


def _per_arm_pair(fn, frame: pd.DataFrame) -> tuple[list[str], list]:
    """The arm columns present and ``fn`` of each pair of arms (of the frame if none)."""
    keys = [c for c in _ARM_KEYS if c in frame.columns]
    if not keys:
        return keys, [fn(frame)]
    groups = frame.groupby(keys, sort=True, observed=True)
    return keys, [fn(sub).assign(**dict(zip(keys, k, strict=True))) for k, sub in groups]


def _numeric(series: pd.Series, field: str) -> np.ndarray:
    """Float array with NaN for missing values."""
    try:
        return pd.to_numeric(series, errors="raise").astype("float64").to_numpy(na_value=np.nan)
    except (TypeError, ValueError) as exc:
        raise DataError(f"non-numeric value: {exc}", field=field) from None


def cost_ratios(
    frame: pd.DataFrame,
    *,
    cluster: str = "task_id",
    include_no_answer: bool = True,
    interval: Literal["default", "cr2", "analytic"] = "default",
    confidence: float = 0.95,
) -> ResultFrame:
    """Token and wall-clock ratios of each pair of arms (``arm_a`` over ``arm_b``), with
    task-clustered CIs. See docs/methods.md, section "Cost".

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``task_id``, ``replicate``, ``status``, the ``cluster`` column,
        ``tokens_with``, ``tokens_without``, ``wall_with_s``, ``wall_without_s``.
    cluster : str
        Column identifying the unit of independence (constant within a pair).
    include_no_answer : bool
        Keep pairs whose status is ``no_answer`` (over budget).
    interval : {"default", "cr2", "analytic"}
        Interval of the total and geometric-mean ratios (the median's is always Woodruff).
    confidence : float
        Confidence level.

    Returns
    -------
    ResultFrame
        Per pair of arms, one row per :data:`COST_METRICS`: the tidy columns (``se`` on the
        log scale) and :data:`COST_EXTRAS`; ``attrs``: ``token_source``,
        ``token_source_reason`` and (billed and transcript counts) ``transcript_ratios``.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c", "c"], "replicate": [1, 2, 1, 2, 1, 2],
    ...     "status": "ok",
    ...     "tokens_with": [800, 900, 1500, 1200, 300, 500],
    ...     "tokens_without": [1000, 1000, 2000, 1000, 600, 400],
    ...     "wall_with_s": [10.0, 12.0, 30.0, 20.0, 5.0, 6.0],
    ...     "wall_without_s": [12.0, 11.0, 40.0, 25.0, 9.0, 5.0]})
    >>> out = cost_ratios(frame, interval="analytic").set_index("statistic")
    >>> round(float(out.loc["tokens_total_ratio", "estimate"]), 4)
    0.8667
    """
    opts = _CostOptions(cluster=cluster, include_no_answer=include_no_answer, interval=interval,
                        confidence=confidence)  # fmt: skip
    keys, parts = _per_arm_pair(lambda sub: _cost_table(sub, opts), frame)
    if not keys:
        return parts[0]
    if not parts:
        raise DataError("verdict frame has no rows")
    out = tidy_frame(pd.concat(parts, ignore_index=True), by=keys, extra=COST_EXTRAS)
    out.attrs["token_source"] = ", ".join(dict.fromkeys(p.attrs["token_source"] for p in parts))
    out.attrs["token_source_reason"] = next(
        (p.attrs["token_source_reason"] for p in parts if p.attrs["token_source_reason"]), None
    )
    alt = [p.attrs["transcript_ratios"] for p in parts if "transcript_ratios" in p.attrs]
    if len(alt) == len(parts):
        alt = pd.concat(
            [a.assign(**{k: p[k].iloc[0] for k in keys}) for a, p in zip(alt, parts, strict=True)]
        )
        out.attrs["transcript_ratios"] = tidy_frame(alt, by=keys, extra=COST_EXTRAS)
    return out


def _cost_table(frame: pd.DataFrame, opts: _CostOptions) -> ResultFrame:
    """:func:`cost_ratios` of one pair of arms."""
    choice = choose_token_source(frame)
    out = _cost_rows(choice.frame, opts)
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
        # Both counts exist: the transcript ratios ride along.
        alt = _cost_rows(choice.other, opts)
        alt = alt.loc[alt["statistic"].str.startswith("tokens_")].assign(token_source="transcript")
        out.attrs["transcript_ratios"] = tidy_frame(alt, extra=COST_EXTRAS)
    return out


def _cost_rows(frame: pd.DataFrame, opts: _CostOptions) -> pd.DataFrame:
    pairs = pair_costs(frame, cluster=opts.cluster, include_no_answer=opts.include_no_answer)
    no_answer, rows = pairs["_no_answer"].to_numpy(), []
    for measure in MEASURES:
        # Ratio of totals: zeros are real (cheap) runs and stay in the sums.
        x, y, both, g, tx, ty = _totals(pairs, measure)
        # The default's pivot assumes lognormal costs: checked on the runs themselves.
        default = opts.interval == "default" and both.any()
        check = _lognormal_check(x[both], y[both], g) if default else None
        total = _base_row(f"{measure}_total_ratio", both, no_answer, len(tx), "total")
        sums = np.column_stack([tx, ty])
        rows.append(_ratio_row(total, sums, "total", opts, check))
        # Per-pair log ratios: a zero on either side has no finite log ratio.
        positive = both & (x > 0) & (y > 0)
        lr = np.log(x[positive]) - np.log(y[positive])
        g = _recode(pairs["_cluster_code"].to_numpy()[positive])
        n_c = g.max(initial=-1) + 1
        sums = np.column_stack([np.bincount(g, lr, n_c), np.bincount(g, minlength=n_c)])
        geo = _base_row(f"{measure}_geomean_ratio", positive, no_answer, n_c, "geomean")
        rows.append(_ratio_row(geo, sums, "geomean", opts))
        median = _base_row(f"{measure}_median_ratio", positive, no_answer, n_c, "median")
        rows.append(_median_row(median, lr, g, opts.confidence))
    return pd.DataFrame(rows).assign(confidence=opts.confidence)


def _totals(pairs: pd.DataFrame, measure: str) -> tuple:
    """``(x, y, both, g, tx, ty)``: per-pair values, both present, task codes, task totals."""
    col_a, col_b = MEASURES[measure]
    x, y = pairs[col_a].to_numpy(dtype=float), pairs[col_b].to_numpy(dtype=float)
    both = ~(np.isnan(x) | np.isnan(y))
    g = _recode(pairs["_cluster_code"].to_numpy()[both])
    n_c = g.max(initial=-1) + 1
    return x, y, both, g, np.bincount(g, x[both], n_c), np.bincount(g, y[both], n_c)


def total_ratio_draws(
    frame: pd.DataFrame,
    *,
    measure: Literal["tokens", "wall"] = "tokens",
    cluster: str = "task_id",
    include_no_answer: bool = True,
) -> np.ndarray | None:
    """The default total-ratio interval's pivot draws (log scale), None where ``cost_ratios``
    takes another interval."""
    check_choice(measure, "measure", tuple(MEASURES))
    keys = [c for c in _ARM_KEYS if c in frame.columns]
    if keys and len(frame[keys].drop_duplicates()) > 1:
        raise ParameterError("several pairs of arms: select one (arm_a, arm_b) first")
    if measure == "tokens":  # the same counts cost_ratios uses (billed before transcript)
        frame = choose_token_source(frame).frame
    pairs = pair_costs(frame, cluster=cluster, include_no_answer=include_no_answer)
    x, y, both, g, xs, ys = _totals(pairs, measure)
    if len(xs) < 2 or not (np.all(xs > 0) and np.all(ys > 0)):
        return None
    if _lognormal_check(x[both], y[both], g).rejected:  # cost_ratios uses CR2 there
        return None
    draws = lognormal_ratio_gpq(xs, ys)
    return draws if np.all(np.isfinite(draws)) else None


def _ratio_row(row: dict, sums, kind, opts: _CostOptions, check=None) -> dict:
    """A total or geometric-mean row: the estimate from the task sums, then its interval."""
    n_clusters, conf = sums.shape[0], opts.confidence
    if n_clusters == 0:
        return row | {"method": "no usable pairs"}
    top, bottom = sums.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_est = float(np.log(top) - np.log(bottom) if kind == "total" else top / bottom)
    log_est = log_est if np.isfinite(log_est) else np.nan
    row["estimate"] = float(np.exp(log_est))
    if n_clusters < 2 or not np.isfinite(log_est):
        return row | {"method": "needs at least 2 clusters"}
    df, fallback = np.nan, ""
    # Only where the pivot applies: a task total of 0 or too few tasks say their own reason.
    rejected = check is not None and check.rejected and n_clusters >= 3 and np.all(sums > 0)
    if rejected:  # outlying runs: the pivot's normal-theory covariance under-covers
        row["ci_note"] = check.note()
    if opts.interval == "default" and kind == "total" and not rejected:
        ends = (
            pivot_hull_ends(sums[None, :, 0], sums[None, :, 1], conf) if np.all(sums > 0) else None
        )
        if ends is not None and ends.pivot_ok[0]:
            return row | {
                "ci_low": float(np.exp(ends.low[0])),
                "ci_high": float(np.exp(ends.high[0])),
                "se": float(ends.sd_draws[0]),
                "method": GPQ_HULL_METHOD if ends.widened[0] else GPQ_METHOD,
            }
        fallback = (
            " (a task total of 0: no lognormal interval)"
            if ends is None
            else " (fewer than 3 tasks or no spread: no lognormal interval)"
        )
    if opts.interval in ("cr2", "default"):
        se, df = _delta_se(sums, kind, cr2=True)
        if not np.isfinite(df):
            return row | {"se": se, "method": "no interval: one cluster holds every cost"}
        label = _REJECTED_METHOD if rejected else _CR2_LABEL + fallback
    else:
        se, df = _delta_se(sums, kind, cr2=False)
        label = "CR1 delta method, log scale, t(C-1)"
    q = stats.t.ppf(0.5 + conf / 2.0, df)
    lo, hi = log_est - q * se, log_est + q * se
    return row | {
        "ci_low": float(np.exp(lo)),
        "ci_high": float(np.exp(hi)),
        "se": se,
        "df": df,
        "method": label,
    }


def _median_row(row: dict, lr: np.ndarray, g: np.ndarray, confidence: float) -> dict:
    """The median ratio's row, with the task-clustered Woodruff interval."""
    if lr.size == 0:
        return row | {"method": "no usable pairs"}
    log_est = float(np.median(lr))
    row["estimate"] = float(np.exp(log_est))
    if row["n_tasks"] < 2:
        return row | {"method": "needs at least 2 clusters"}
    lo, hi, _ = _woodruff_median_interval(lr, g, confidence)
    return row | {
        "ci_low": float(np.exp(lo)),
        "ci_high": float(np.exp(hi)),
        "df": float(row["n_tasks"] - 1),
        "method": "Woodruff, task-clustered share SE, t(C - 1), log scale",
    }


def _woodruff_median_interval(
    lr: np.ndarray, g: np.ndarray, confidence: float
) -> tuple[float, float, float]:
    """Woodruff (1952) interval of a pooled median with a task-clustered share SE."""
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


def _base_row(statistic, used, no_answer, n_clusters, kind) -> dict:
    return {"statistic": statistic, **dict.fromkeys(("estimate", "ci_low", "ci_high", "se"), np.nan),
            "n": int(used.sum()), "n_tasks": int(n_clusters), "n_excluded": int((~used).sum()),
            "n_no_answer": int((used & no_answer).sum()), "df": np.nan,
            "estimand": _ESTIMANDS[kind], "method": "", "ci_note": ""}  # fmt: skip


def _recode(g: np.ndarray) -> np.ndarray:
    """Dense 0..k-1 codes so clusters with no usable pair drop out of C."""
    return np.unique(g, return_inverse=True)[1].astype(np.intp)


class LognormalCheck(NamedTuple):
    """The lognormal model check of the total ratio's default interval."""

    p_value: float
    n: int
    test: str

    @property
    def rejected(self) -> bool:
        return bool(self.p_value < LOGNORMAL_CHECK_ALPHA)

    def note(self) -> str:
        return (
            f"lognormal model rejected ({self.test}, {self.n} values: p = {self.p_value:.2g} "
            f"< {LOGNORMAL_CHECK_ALPHA}): outlying runs, so the model-free CR2 interval (the "
            "pivotal one under-covers with outliers); the ratio of totals rests on a few "
            "expensive runs, the geometric mean ratio is the steadier summary"
        )


def _lognormal_check(x: np.ndarray, y: np.ndarray, g: np.ndarray) -> LognormalCheck:
    """Normality of the within-task log run costs, else of the task log ratios."""
    parts = []
    n_c = int(g.max(initial=-1)) + 1
    for v in (x, y):
        keep = v > 0
        lv, gv = np.log(v[keep]), g[keep]
        r = np.bincount(gv, minlength=n_c)
        rep = r[gv] >= 2  # a task with one run has no residual
        mean = np.bincount(gv, lv, n_c) / np.maximum(r, 1)
        scale = np.sqrt(r / np.maximum(r - 1.0, 1.0))
        parts.append(((lv - mean[gv]) * scale[gv])[rep])
    resid = np.concatenate(parts)
    xs, ys = np.bincount(g, x, n_c), np.bincount(g, y, n_c)
    ok = (xs > 0) & (ys > 0)
    d = np.log(xs[ok]) - np.log(ys[ok])
    for v, what in ((resid, "within-task log run costs"), (d, "task log ratios")):
        if v.size >= 3 and np.ptp(v) > 1e-12 * max(1.0, float(np.abs(v).max())):
            big = v.size > _SHAPIRO_MAX
            test = stats.normaltest if big else stats.shapiro
            name = "D'Agostino-Pearson" if big else "Shapiro-Wilk"
            return LognormalCheck(float(test(v).pvalue), v.size, f"{name} on {what}")
    return LognormalCheck(np.nan, int(resid.size), "not checked: too few values")


def bm_df_from_leverage(h: np.ndarray) -> np.ndarray:
    """Bell-McCaffrey degrees of freedom of a one-parameter CR2 variance, from cluster leverages."""
    h = np.asarray(h, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = h / (1.0 - h)
        q2 = h * d  # q_c^2 = h_c^2 / (1 - h_c)
        tr = d.sum(-1) - q2.sum(-1)
        tr2 = (d**2).sum(-1) - 2.0 * (d * q2).sum(-1) + q2.sum(-1) ** 2
        df = tr**2 / tr2
    return np.where(np.all(h < 1.0, axis=-1), df, np.nan)


def _delta_se(sums: np.ndarray, kind: str, cr2: bool) -> tuple[float, float]:
    """Cluster-robust SE of the log ratio and its df from per-cluster sums (C, 2)."""
    if kind == "total":
        tot = sums.sum(axis=0)
        z, h, scale = sums[:, 0] / tot[0] - sums[:, 1] / tot[1], sums[:, 1] / tot[1], 1.0
    else:
        n = sums[:, 1].sum()
        z, h, scale = sums[:, 0] - sums[:, 1] * (sums[:, 0].sum() / n), sums[:, 1] / n, n
    c = len(sums)
    if not cr2:
        return float(np.sqrt(c / (c - 1) * np.sum(z**2)) / scale), float(c - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = float(np.sqrt(np.sum(z**2 / (1.0 - h))) / scale)
    return se, float(bm_df_from_leverage(h))


@functools.lru_cache(maxsize=64)
def _gpq_base(c: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bartlett factors of a Wishart(C - 1, I_2) and a standard normal, for C clusters."""
    rng = np.random.default_rng([_GPQ_SEED, c])
    half = n // 2
    t11 = np.tile(np.sqrt(rng.chisquare(c - 1, half)), 2)
    t22 = np.tile(np.sqrt(rng.chisquare(c - 2, half)), 2)
    # Antithetic pairs: swapping the arms negates the draws, so the interval is reciprocal.
    t21 = rng.standard_normal(half)
    z = rng.standard_normal(half)
    t21, z = np.concatenate([t21, -t21]), np.concatenate([z, -z])
    for a in (t11, t22, t21, z):
        a.setflags(write=False)
    return t11, t22, t21, z


def lognormal_ratio_gpq(
    x: np.ndarray, y: np.ndarray, *, n_resamples: int = _GPQ_DRAWS
) -> np.ndarray:
    """Generalized pivotal quantity of ``log(E[x] / E[y])`` for bivariate lognormal totals."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    c = lx.shape[-1]
    d, s = lx - ly, lx + ly
    dbar = d.mean(-1)
    dm = d - dbar[..., None]
    sm = s - s.mean(-1, keepdims=True)
    a_ss, a_dd, a_sd = (sm * sm).sum(-1), (dm * dm).sum(-1), (sm * dm).sum(-1)
    if c < 3:
        return np.full((*dbar.shape, n_resamples), np.nan)
    # Cholesky of A in the order (d, s): mu_d's pivot is the paired t on the log task totals.
    with np.errstate(divide="ignore", invalid="ignore"):
        l11 = np.sqrt(a_dd)
        l21 = a_sd / l11
        l22 = np.sqrt(np.maximum(a_ss - l21**2, 0.0))
    t11, t22, t21, z = _gpq_base(c, n_resamples)
    # B = L T^{-1} (lower triangular), Sigma* = B B': Sigma*_dd = b11^2, Sigma*_ds = b11 b21.
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    b11 = l11[..., None] * i11
    b21 = l21[..., None] * i11 + l22[..., None] * i21
    return dbar[..., None] - z * b11 / np.sqrt(c) + b11 * b21 / 2.0


def gpq_interval(draws: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed interval from pivot draws ``(..., K)``, by order statistics."""
    srt = np.sort(np.asarray(draws, dtype=float), axis=-1)
    k = srt.shape[-1]
    j = max(1, int(np.ceil(k * (1.0 - confidence) / 2.0 - 1e-9)))
    return srt[..., j - 1], srt[..., k - j]


class PivotEnds(NamedTuple):
    """:func:`pivot_hull_ends`: the interval's ends (log scale) and how they were made."""

    low: np.ndarray
    high: np.ndarray
    log_estimate: np.ndarray
    widened: np.ndarray  # the hull with CR2 was taken (the pivot's own check fired)
    pivot_ok: np.ndarray  # the pivot had finite draws (else CR2 alone)
    sd_draws: np.ndarray
    cr2_se: np.ndarray
    cr2_q: np.ndarray  # the CR2 interval's t(Bell-McCaffrey df) quantile


def pivot_hull_ends(x: np.ndarray, y: np.ndarray, confidence: float) -> PivotEnds:
    """The total ratio's pivotal interval (log scale) of one or many data sets at once."""
    tx, ty = x.sum(axis=-1), y.sum(axis=-1)
    log_est = np.log(tx / ty)
    draws = lognormal_ratio_gpq(x, y)
    finite = np.isfinite(draws).all(axis=-1)
    safe = np.where(finite[..., None], draws, 0.0)
    lo, hi = gpq_interval(safe, confidence)
    c_lo, c_hi = gpq_interval(safe, MODEL_CHECK_CONFIDENCE)
    doubtful = finite & ~((c_lo <= log_est) & (log_est <= c_hi))
    h = y / ty[..., None]
    z = x / tx[..., None] - h
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.sum(z**2 / (1.0 - h), axis=-1))
    q = stats.t.ppf(0.5 + confidence / 2.0, bm_df_from_leverage(h))
    widen = doubtful & np.isfinite(q)
    lo = np.where(widen, np.minimum(lo, log_est - q * se), lo)
    hi = np.where(widen, np.maximum(hi, log_est + q * se), hi)
    lo = np.where(finite, lo, log_est - q * se)
    hi = np.where(finite, hi, log_est + q * se)
    return PivotEnds(lo, hi, log_est, widen, finite, np.std(safe, axis=-1), se, q)


def _token_column(runs: pd.DataFrame, arms: Sequence[str]) -> tuple[str | None, str, str | None]:
    """(column, source, reason) of the arms' runs: billed, else transcript, never an answer's."""
    part = runs.loc[runs["arm"].isin(arms).to_numpy()]
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
    """(T, A) sums of each arm's and the reference's values where both ran, and that count."""
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


def _resampled(flat: np.ndarray, fn, n_resamples: int, rng) -> tuple[np.ndarray, ...]:
    """``fn`` of every task-bootstrap resample's totals of ``flat`` (T, ...), stacked."""
    rng = as_generator(rng)
    out = [fn(weights @ flat) for weights in task_resamples(len(flat), n_resamples, rng)]
    return tuple(np.concatenate(parts) for parts in zip(*out, strict=True))


def _log_ratio_se(
    x: np.ndarray, y: np.ndarray, sxx: np.ndarray, sxy: np.ndarray, syy: np.ndarray,
    n_cl: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``log(X / Y)`` and its CR1 SE from (weighted) totals and cross-products."""
    with np.errstate(invalid="ignore", divide="ignore"):
        log_r = np.log(x) - np.log(y)
        ss = sxx / x**2 - 2 * sxy / (x * y) + syy / y**2
        factor = np.where(n_cl > 1, n_cl / (n_cl - 1), np.nan)
        se = np.sqrt(factor * np.maximum(ss, 0.0))
    ok = np.isfinite(log_r)
    return np.where(ok, log_r, np.nan), np.where(ok, se, np.nan)


def _runs_of(data: Any, reference: str | None, arms: Sequence[str] | None, n_resamples) -> tuple:
    """Checked (runs with str ids, reference, arms, n_resamples) of runs or a Dataset."""
    described = getattr(data, "arms", None)
    runs = data.runs if hasattr(data, "runs") else data
    if described is not None:
        reference = reference or described.reference
        if arms is None and set(described.ids) >= set(runs["arm"].astype(str)):
            arms = list(described.ids)
    if reference is None:
        raise ParameterError("reference= is needed: the data name no reference arm")
    check_columns(runs, _RUN_COLUMNS, what="runs")
    runs = runs.assign(arm=runs["arm"].astype(str), task_id=runs["task_id"].astype(str))
    pairs = max(len(runs["arm"].unique() if arms is None else arms) - 1, 1)
    return runs, reference, arms, check_n_resamples(n_resamples, minimum=20, pairs=pairs)


def arm_costs(
    data: Any,
    *,
    reference: str | None = None,
    confidence: float = 0.95,
    method: str = "studentized",
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Each arm's total token and wall-clock ratio to the reference, task-cluster bootstrap.

    Parameters
    ----------
    data : Dataset or pandas.DataFrame
        A data directory (:func:`evalstats.load_dir`) or its runs: ``task_id``,
        ``replicate``, ``arm``, ``wall_s``, ``reported_tokens`` and / or ``tokens``.
    reference : str, optional
        The arm every other arm is divided by (default: the Dataset's reference).
    method : {"studentized", "percentile"}
        Bootstrap-t on the log ratio, or percentile.
    confidence, n_resamples, rng
        Interval level, task-cluster bootstrap resamples, random source or seed.
    arms : sequence of str, optional
        The arms' order (default: the Dataset's, else order of appearance).

    Returns
    -------
    ResultFrame
        Per arm and :data:`ARM_COST_METRICS`: ``arm``, ``reference``, the tidy columns,
        ``se_log`` (CR1) and ``token_source``; ``diagnostics`` says why a row is missing.

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
    runs, reference, arms, n_resamples = _runs_of(data, reference, arms, n_resamples)
    confidence = check_confidence(confidence)
    check_choice(method, "method", ARM_COST_METHODS)
    present = list(pd.unique(runs["arm"]))
    order = list(arms) if arms is not None else present
    if set(present) - set(order):
        raise ParameterError(f"arms {sorted(set(present) - set(order))} are not in arms=")
    if reference not in order:
        raise ParameterError(f"reference {reference!r} is not an arm of the runs ({order})")
    if len(order) < 2:
        raise DataError(f"a cost comparison needs two arms, got {order}", field="arm")
    tasks = pd.Index(np.unique(runs["task_id"].to_numpy()))
    others = [a for a in order if a != reference]
    tcol, source, reason = _token_column(runs, order)
    metrics = []
    if tcol is not None:
        metrics.append(("tokens_total_ratio", tcol, source))
    if "wall_s" in runs.columns:
        metrics.append(("wall_total_ratio", "wall_s", None))
    if not metrics:
        raise DataError("the runs have neither token counts nor wall_s", field="wall_s")
    sums = [_task_sums(runs, order, reference, col, tasks) for _, col, _ in metrics]
    # (T, M, A) per-task x, y, pair counts, and the products the CR1 SE needs
    x, y, cnt = (np.stack(parts, axis=1) for parts in zip(*sums, strict=True))
    present = (cnt > 0).astype(np.float64)
    parts = [x, y, x * x, x * y, y * y, present]
    log_r, se_log = _log_ratio_se(*(p.sum(0) for p in parts[:5]), present.sum(0))
    flat = np.concatenate([p.reshape(len(tasks), -1) for p in parts], axis=1)
    shape = (len(parts), *x.shape[1:])
    lr_b, se_b = _resampled(  # (B, M, A)
        flat, lambda t: _log_ratio_se(*t.reshape(len(t), *shape).swapaxes(0, 1)), n_resamples, rng
    )
    alpha = 1 - confidence
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if method == "studentized":
            t_b = (lr_b - log_r) / se_b
            q_lo, q_hi = np.nanquantile(t_b, [alpha / 2, 1 - alpha / 2], axis=0)
            lo, hi = log_r - q_hi * se_log, log_r - q_lo * se_log
            # No spread at all (every pair the same ratio): the interval is the point.
            flat = se_log == 0
            lo, hi = np.where(flat, log_r, lo), np.where(flat, log_r, hi)
        else:
            lo, hi = np.nanquantile(lr_b, [alpha / 2, 1 - alpha / 2], axis=0)
        n_cl = present.sum(0)
        p = 2 * stats.t.sf(np.abs(log_r / se_log), np.maximum(n_cl - 1, 1))
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
    diagnostics = pd.DataFrame([{"reference": reference, "n_arms": len(order), "n_tasks": len(tasks),
                                 "n_resamples": n_resamples, "token_source": source,
                                 "token_reason": reason}])  # fmt: skip
    return tidy_frame(pd.DataFrame(rows), by=["arm", "reference"], diagnostics=diagnostics,
                      extra=["se_log", "token_source"])  # fmt: skip


def pareto_frontier(quality: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """Which points are on the cost-quality Pareto frontier (higher quality, lower cost).
    Along the last axis; NaN points are never on it and dominate nothing.

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
    cost: Any,
    *,
    reference: str | None = None,
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
        A verdict frame with every arm judged against ``reference`` (quality: the net win).
    cost : Dataset or pandas.DataFrame
        The runs, or the data directory holding them (as for :func:`arm_costs`).
    reference : str, optional
        The reference arm (default: the Dataset's reference).
    judge : str, optional
        Which judge's verdicts (needed when the frame has several).
    metric : {"tokens_total_ratio", "wall_total_ratio"}
        The cost axis.
    confidence, n_resamples, rng
        Percentile interval level, task-cluster bootstrap resamples, random source or seed.
    arms : sequence of str, optional
        The arms' order in the result.

    Returns
    -------
    ResultFrame
        Per arm: ``net_win``, ``metric`` and ``p_frontier`` rows (the tidy columns), and
        ``on_frontier`` at the estimates.

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
    check_choice(metric, "metric", ARM_COST_METRICS)
    runs, reference, _, n_resamples = _runs_of(cost, reference, None, n_resamples)
    enc = encode(quality, judge=judge, arms=arms)
    ran = sorted(set(runs["arm"]))
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
    if metric == "tokens_total_ratio":
        column, source, reason = _token_column(runs, order)
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
    q_b, c_b = _resampled(flat, points, n_resamples, rng)  # (B, K)
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
        for stat, est, iv, draws, n, n_t in (
            ("net_win", q_hat, q_iv, q_b, n_q, tasks_q),
            (metric, c_hat, c_iv, c_b, n_c, tasks_c),
        ):
            rows.append({**common, "statistic": stat, "estimate": est[k], "ci_low": iv[0, k],
                         "ci_high": iv[1, k], "se": np.nan if ref else np.nanstd(draws[:, k], ddof=1),
                         "n": 0 if ref else int(n[j]), "n_tasks": 0 if ref else int(n_t[j]),
                         "method": "reference" if ref else boot})  # fmt: skip
        p = p_front[k]
        rows.append({**common, "statistic": "p_frontier", "estimate": p,
                     "se": np.sqrt(p * (1 - p) / max(int(finite.sum()), 1)),
                     "n": int(finite.sum()), "n_tasks": len(tasks),
                     "method": "task_bootstrap_share"})  # fmt: skip
    diagnostics = pd.DataFrame([{"judge": enc.judge, "reference": reference, "metric": metric,
                                 "token_source": source, "n_resamples": n_resamples,
                                 "n_finite_resamples": int(finite.sum())}])  # fmt: skip
    return tidy_frame(
        pd.DataFrame(rows), by=["arm"], diagnostics=diagnostics, extra=["on_frontier"]
    )
