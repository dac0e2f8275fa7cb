"""Prediction-powered win rates: a judge's verdicts on every pair, corrected by people's labels.

PPI++ (tuned weight of the judge) for the people's rates in the tasks' population, with a
cluster bootstrap over tasks; the estimator and its studies: ``docs/methods.md``, "PPI".
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.stats
from statsmodels.stats.proportion import proportion_confint

from .._schema import OUTCOME_DTYPE, OUTCOMES
from .._tidy import ResultFrame, stack_statistics
from .._validate import check_columns, check_confidence, check_n_resamples
from ..frames import select_rubric
from ..records import EvalstatsWarning
from .agreement import gold_labels, proportion_bounds
from .rates import RATE_NAMES, category_codes, segment_sum
from .resample import BOOTSTRAP_METHODS, cluster_bootstrap

__all__ = [
    "LABELS_ONLY_BOUND",
    "MIN_LABELLED",
    "MIN_PER_OUTCOME",
    "PPI_EXTRAS",
    "PPI_METHODS",
    "ppi_win_rates",
]

PPI_METHODS = ("cluster_wilson", "cluster_t", *BOOTSTRAP_METHODS)
#: The columns a PPI row has beyond the tidy shape.
PPI_EXTRAS = ("lambda", "labels_only", "judge_only", "ess_gain")
_LOW = np.array([0.0, 0.0, 0.0, -1.0, 0.0])  # each statistic's range
_HIGH = np.ones(5)
_NET = np.array([False, False, False, True, False])  # Wilson on the scale (1 + net) / 2

#: Below this many labelled pairs the bootstrap interval is not trusted (a warning says so).
MIN_LABELLED = 15
#: Fewest labelled pairs of an outcome (and of its complement) below which a rate's interval
#: is joined with the labels-only one (docs/methods.md, "PPI").
MIN_PER_OUTCOME = 1
#: The labels-only bound joined where an outcome is rare or the bootstrap saw no spread.
LABELS_ONLY_BOUND = "mid_p"
#: Labelled pairs of an outcome a normal-approximation interval wants (the note's advice).
SHARP_PER_OUTCOME = 5
#: ``method`` of a row whose interval was joined with the labels-only bound.
JOINED = "{method} + labels-only {bound} ({why})"
_Q = len(RATE_NAMES)
_OUTCOMES = ("win", "tie", "loss")
# Per-pair values of (win, tie, loss, net, score) from (loss, tie, win) shares.
_STAT_MATRIX = np.array([[0, 0, 1, -1, 0], [0, 1, 0, 0, 0.5], [1, 0, 0, 1, 1]], dtype=float)
assert OUTCOMES == ("loss", "tie", "win")

# Column layout of the per-task sufficient statistics.
_N_U, _N_L = 0, 1
_F_U = slice(2, 2 + _Q)
_F2_U = slice(2 + _Q, 2 + 2 * _Q)
_Y_L = slice(2 + 2 * _Q, 2 + 3 * _Q)
_F_L = slice(2 + 3 * _Q, 2 + 4 * _Q)
_YF_L = slice(2 + 4 * _Q, 2 + 5 * _Q)


def _lambda(s: np.ndarray) -> np.ndarray:
    n_u, n_l = s[..., _N_U, None], s[..., _N_L, None]
    mean_fu = s[..., _F_U] / n_u
    var_fu = s[..., _F2_U] / n_u - mean_fu**2
    mean_y, mean_fl = s[..., _Y_L] / n_l, s[..., _F_L] / n_l
    cov = s[..., _YF_L] / n_l - mean_y * mean_fl
    lam = np.where(var_fu > 1e-12, cov / np.where(var_fu > 1e-12, var_fu, 1.0), 0.0)
    return np.clip(np.nan_to_num(lam, nan=0.0), 0.0, 1.0)


def _pair_values(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per pair: the five statistics from the share of each outcome in ``column``."""
    codes = category_codes(rows[column], OUTCOME_DTYPE)  # no per-row Python strings
    onehot = np.eye(len(OUTCOMES))[codes]
    keys = rows[["task_id", "replicate"]].reset_index(drop=True)
    shares = pd.DataFrame(onehot, columns=list(OUTCOMES)).groupby(
        [keys["task_id"], keys["replicate"]], sort=True
    )
    mean = shares.mean()
    values = mean.to_numpy() @ _STAT_MATRIX
    out = mean.index.to_frame(index=False)
    return pd.concat([out, pd.DataFrame(values, columns=list(RATE_NAMES))], axis=1)


def ppi_win_rates(
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    judge: str,
    gold: str = "majority",
    rubric: str | None = None,
    lam: float | None = None,
    method: str = "cluster_wilson",
    confidence: float = 0.95,
    n_resamples: int = 4_000,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Win, tie and loss rates, net win and score for the people's verdicts, via PPI++.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame; the ``ok`` rows of ``judge`` are the predictions on every pair.
    labels : DataFrame
        A labels table: the people's verdicts on a random subset of the judged pairs.
    judge : str
        The judge whose verdicts are corrected.
    gold : str, default "majority"
        Gold rule for pairs with several labels (:func:`evalstats.stats.agreement.gold_labels`).
    rubric : str, optional
        Required when the frame holds several rubrics.
    lam : float, optional
        Fixed weight of the judge in [0, 1]; default: tuned (PPI++) in every resample.
    method : {"cluster_wilson", "cluster_t", "percentile", "bca", "basic"}
        Interval from the bootstrap SE and t(C - 1), or a bootstrap interval.
    confidence, n_resamples, rng
        Interval level, cluster-bootstrap resamples, random source or seed.

    Returns
    -------
    ResultFrame
        One row per statistic: ``judge``, the tidy columns, :data:`PPI_EXTRAS` and (when it
        warned) ``ci_note`` saying what; ``.diagnostics`` holds the label counts, ``ci_note`` and ``random_sample``.
        Warns (EvalstatsWarning) on few labels, labels of no sheet, or a rare outcome.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tasks = np.repeat([f"t{i}" for i in range(30)], 4)
    >>> human = rng.choice(["win", "tie", "loss"], size=120, p=[0.4, 0.2, 0.4])
    >>> judged = np.where(rng.random(120) < 0.8, human, "win")  # leans toward WITH
    >>> frame = pd.DataFrame({"task_id": tasks, "replicate": np.tile([1, 2, 3, 4], 30),
    ...     "judge": "j", "rubric": "r", "status": "ok", "outcome": judged})
    >>> pick = rng.choice(120, size=40, replace=False)
    >>> labels = pd.DataFrame({"task_id": tasks[pick], "replicate": np.tile([1, 2, 3, 4], 30)[pick],
    ...     "labeler": "ann", "outcome": human[pick], "sample_seed": 0, "frame_sha256": "x"})
    >>> res = ppi_win_rates(frame, labels, judge="j", rng=1, n_resamples=1000)
    >>> win = res.set_index("statistic").loc["win_rate"]  # the judge alone says 0.483
    >>> win[["estimate", "ci_low", "ci_high"]].astype(float).round(3).to_dict()  # of p = 0.4
    {'estimate': 0.338, 'ci_low': 0.225, 'ci_high': 0.474}
    """
    check_columns(frame, ["task_id", "replicate", "judge", "rubric", "status", "outcome"])
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    if method not in PPI_METHODS:
        raise ValueError(f"method must be one of {PPI_METHODS}, got {method!r}")
    if lam is not None:
        lam = float(lam)
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1] or None, got {lam!r}")
    f, _ = select_rubric(frame, rubric)
    present = sorted(f["judge"].astype(str).unique())
    if judge not in present:
        raise ValueError(f"judge {judge!r} has no rows; present: {present}")
    ok = f.loc[(f["judge"].astype(str) == judge) & (f["status"].astype(str) == "ok")]
    if ok.empty:
        raise ValueError(f"judge {judge!r} has no ok verdicts")
    fu = _pair_values(ok, "outcome")
    g = gold_labels(labels, gold)
    g = g.loc[g["gold"].notna()]
    yl = _pair_values(g.assign(outcome=g["gold"]), "outcome")
    lab = yl.merge(fu, on=["task_id", "replicate"], suffixes=("_y", "_f"), how="inner")
    n_unused = len(yl) - len(lab)
    if len(lab) == 0:
        raise ValueError(f"no labelled pair has an ok verdict of judge {judge!r}")

    # np.unique's order and codes, by hashing: only the distinct ids are sorted.
    cu, tasks = pd.factorize(fu["task_id"].astype(str).to_numpy(), sort=True)
    tasks = np.asarray(tasks)
    cl = np.searchsorted(tasks, lab["task_id"].astype(str).to_numpy())
    n_c = len(tasks)
    stats = np.zeros((n_c, 2 + 5 * _Q))
    stats[:, _N_U] = np.bincount(cu, minlength=n_c)
    stats[:, _N_L] = np.bincount(cl, minlength=n_c)
    fu_v = fu[list(RATE_NAMES)].to_numpy()
    y_v = lab[[f"{c}_y" for c in RATE_NAMES]].to_numpy()
    fl_v = lab[[f"{c}_f" for c in RATE_NAMES]].to_numpy()
    for cols, codes, values in ((_F_U, cu, fu_v), (_F2_U, cu, fu_v**2), (_Y_L, cl, y_v),
                                (_F_L, cl, fl_v), (_YF_L, cl, y_v * fl_v)):  # fmt: skip
        stats[:, cols] = segment_sum(values, codes, n_c)

    n_labelled = len(lab)
    random_sample = bool(
        {"sample_seed", "frame_sha256"} <= set(labels.columns)
        and labels["sample_seed"].notna().all()
        and labels["frame_sha256"].notna().all()
    )
    notes = [message for warn, message in (
        (n_labelled < MIN_LABELLED, f"only {n_labelled} labelled pairs (< {MIN_LABELLED}): "
         "the PPI interval may not cover the human rate"),
        (not random_sample, "the labels carry no sheet provenance (sample_seed, frame_sha256): "
         "they are not shown to be a random sample of the judged pairs, which PPI assumes"),
    ) if warn]  # fmt: skip

    def stat(s: np.ndarray) -> np.ndarray:
        n_u, n_l = s[..., _N_U, None], s[..., _N_L, None]
        mean_fu = s[..., _F_U] / n_u
        mean_y, mean_fl = s[..., _Y_L] / n_l, s[..., _F_L] / n_l
        weight = _lambda(s) if lam is None else np.full_like(mean_y, lam)
        ppi = weight * mean_fu + mean_y - weight * mean_fl
        return np.concatenate([ppi, mean_y, weight, mean_fu], axis=-1)

    if n_c >= 2:
        boot = cluster_bootstrap(
            stats,
            stat,
            method=method if method in BOOTSTRAP_METHODS else "percentile",
            n_resamples=n_resamples,
            confidence=confidence,
            rng=rng,
        )
        est, lo, hi, se = boot.estimate, boot.ci_low, boot.ci_high, boot.se
        if method in ("cluster_t", "cluster_wilson"):
            lo, hi = lo.copy(), hi.copy()
            lo[:_Q], hi[:_Q] = _cluster_interval(est[:_Q], se[:_Q], n_c, confidence, method)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            est = stat(stats.sum(axis=0))
        lo = hi = se = np.full_like(est, np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        gain = se[_Q : 2 * _Q] ** 2 / se[:_Q] ** 2
    per_outcome = y_v[:, :3].sum(axis=0)  # labelled pairs whose gold is win, tie, loss
    joined, lo, hi, rare_note = _rare_outcomes(per_outcome, n_labelled, est, se, lo, hi,
                                               confidence, n_c, fu_v.mean(axis=0))  # fmt: skip
    notes += [f"PPI: {rare_note}"] if rare_note else []
    for message in notes:  # warned, and on every row (ci_note): the report keeps the rows
        warnings.warn(message, EvalstatsWarning, stacklevel=2)

    labelled = {
        f"n_labelled_{k}": int(round(v)) for k, v in zip(_OUTCOMES, per_outcome, strict=True)
    }
    diagnostics = pd.DataFrame([{
        "judge": judge, "n": len(fu), "n_labelled": n_labelled, "n_tasks": n_c,
        "n_labelled_clusters": int((stats[:, _N_L] > 0).sum()), "n_labels_unused": int(n_unused),
        **labelled, "min_labels_per_outcome": MIN_PER_OUTCOME,
        "labels_only_bound": LABELS_ONLY_BOUND, "ci_note": rare_note,
        "random_sample": random_sample, "estimand": "human", "gold": gold,
        "n_resamples": n_resamples,
    }])  # fmt: skip
    per_stat = {"estimate": est, "se": se, "ci_low": lo, "ci_high": hi, "ess_gain": gain,
                "lambda": est[2 * _Q :], "labels_only": est[_Q:], "judge_only": est[3 * _Q :]}  # fmt: skip
    common = {"n": len(fu), "n_tasks": n_c, "confidence": confidence}
    common |= {"ci_note": "; ".join(notes)} if notes else {}
    methods = [JOINED.format(method=method, bound=LABELS_ONLY_BOUND, why=w) if w else method
               for w in joined]  # fmt: skip
    statistics = [
        (name, {**{k: v[j] for k, v in per_stat.items()}, **common, "method": methods[j]})
        for j, name in enumerate(RATE_NAMES)
    ]
    return stack_statistics(
        diagnostics[["judge"]], statistics, diagnostics=diagnostics, extra=[*PPI_EXTRAS, "ci_note"]
    )


def _cluster_interval(
    est: np.ndarray, se: np.ndarray, n_c: int, confidence: float, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """``cluster_wilson`` (clipped t where undefined) or ``cluster_t`` ends from the SE."""
    crit = scipy.stats.t.ppf(0.5 + confidence / 2.0, n_c - 1)
    s = se * np.sqrt(n_c / (n_c - 1.0))
    t_lo = np.maximum(est - crit * s, _LOW)
    t_hi = np.minimum(est + crit * s, _HIGH)
    if method == "cluster_t":
        return t_lo, t_hi
    theta = np.where(_NET, (1.0 + est) / 2.0, est)
    s = np.where(_NET, s / 2.0, s)
    ok = (s > 1e-12) & (theta > 0.0) & (theta < 1.0)
    th = np.where(ok, theta, 0.5)  # placeholders where undefined, replaced below
    n_eff = th * (1.0 - th) / np.where(ok, s, 1.0) ** 2
    # statsmodels' Wilson (quantile z) at n_eff (z / c)^2 is the score interval with t's c.
    z = scipy.stats.norm.ppf(0.5 + confidence / 2.0)
    n_z = n_eff * (z / crit) ** 2
    lo, hi = proportion_confint(th * n_z, n_z, alpha=1.0 - confidence, method="wilson")
    lo, hi = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    lo, hi = np.where(_NET, 2.0 * lo - 1.0, lo), np.where(_NET, 2.0 * hi - 1.0, hi)
    return np.where(ok, lo, t_lo), np.where(ok, hi, t_hi)


def _rare_outcomes(per_outcome, n_labelled, est, se, lo, hi, confidence, n_c, judge_rate):
    """(why, lo, hi, note): intervals joined with the labels-only one for rare outcomes."""
    why = np.full(_Q, "", dtype=object)
    if n_c < 2:
        return why, lo, hi, ""
    rare = np.minimum(per_outcome, n_labelled - per_outcome) < MIN_PER_OUTCOME  # win tie loss
    edge = (est[:_Q] <= _LOW) | (est[:_Q] >= _HIGH)
    flat = ~(se[:_Q] > 1e-12) | edge
    counted = [
        f"{name}: {int(round(per_outcome[k]))} of {n_labelled} labelled, minimum {MIN_PER_OUTCOME}"
        for k, name in enumerate(_OUTCOMES)
    ]
    for j in range(_Q):
        deps = [j] if j < 3 else [0, 2]  # net win and score: the win and the loss rates
        reasons = [counted[k] for k in deps if rare[k]]
        if not reasons and flat[j]:
            reasons = ["no bootstrap spread"]
        why[j] = "; ".join(reasons)
    joined = why != ""
    if not joined.any():
        return why, lo, hi, ""
    alpha = 1.0 - confidence
    b_lo, b_hi = proportion_bounds(per_outcome, n_labelled, alpha, LABELS_ONLY_BOUND)
    w_lo, w_hi = proportion_bounds(per_outcome[[0, 2]], n_labelled, alpha / 2, LABELS_ONLY_BOUND)
    net_lo, net_hi = w_lo[0] - w_hi[1], w_hi[0] - w_lo[1]
    ex_lo = np.array([*b_lo, net_lo, (1.0 + net_lo) / 2.0])
    ex_hi = np.array([*b_hi, net_hi, (1.0 + net_hi) / 2.0])
    lo, hi = lo.copy(), hi.copy()
    lo[:_Q] = np.where(joined, np.fmin(lo[:_Q], ex_lo), lo[:_Q])
    hi[:_Q] = np.where(joined, np.fmax(hi[:_Q], ex_hi), hi[:_Q])
    parts = []
    for k, name in enumerate(_OUTCOMES):
        if not rare[k]:
            continue
        # Labels expected to hold SHARP_PER_OUTCOME of it, at the judge's own rate.
        p = float(np.clip(judge_rate[k], 1e-3, 1 - 1e-3))
        need = int(np.ceil(SHARP_PER_OUTCOME / min(p, 1.0 - p)))
        which = name if per_outcome[k] < MIN_PER_OUTCOME else f"non-{name}"
        parts.append(
            f"{int(round(per_outcome[k]))} labelled {name} of {n_labelled} (fewer than "
            f"{MIN_PER_OUTCOME} {which} per outcome; about {need} labels would hold "
            f"{SHARP_PER_OUTCOME} at the judge's rate {p:.2f})"
        )
    parts = parts or ["the bootstrap saw no spread"]
    note = f"rare outcome among the labels: {'; '.join(parts)} - the interval is joined with "
    return why, lo, hi, note + f"the labels-only {LABELS_ONLY_BOUND} one"
