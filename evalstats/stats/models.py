"""Models beside the design-based rates: the latent outcome model the simulations draw from,
logistic regression (length bias), and a cumulative-logit GEE across judges.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from evalstats._display import ResultDisplay
from evalstats._schema import OUTCOMES
from evalstats._validate import check_choice, check_columns, check_confidence, check_positive_int
from evalstats.errors import DataError
from evalstats.frames import select_rubric
from evalstats.stats.rates import ARM_COLUMNS, proportion_ci

__all__ = [
    "LENGTH_MEASURES", "LogisticFit", "OrdinalCheckResult", "check_outcome_probs",
    "draw_outcomes", "latent_thresholds", "length_bias", "logistic_fit", "ordinal_check",
]  # fmt: skip


_SQRT2 = np.sqrt(2.0)


def _probit(p: np.ndarray | float) -> np.ndarray:
    return _SQRT2 * special.erfinv(2.0 * np.asarray(p, dtype=float) - 1.0)


def check_outcome_probs(p_win: float, p_tie: float, p_loss: float) -> None:
    """``ValueError`` unless the three outcome probabilities are non-negative and sum to 1."""
    probs = np.array([p_win, p_tie, p_loss], dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0, atol=1e-9):
        raise ValueError(
            f"p_win, p_tie, p_loss must be non-negative and sum to 1, got {p_win}, {p_tie}, {p_loss}"
        )


def latent_thresholds(p_tie: float, p_loss: float, scale: float) -> tuple[float, float]:
    """Thresholds on a latent ``N(0, scale^2)`` giving P(loss)=p_loss, P(tie)=p_tie."""
    lo = float(_probit(p_loss)) * scale if p_loss > 0 else -np.inf
    hi_p = p_loss + p_tie
    hi = float(_probit(hi_p)) * scale if hi_p < 1 else np.inf
    return lo, hi


def draw_outcomes(
    n_tasks: int,
    n_replicates: int,
    *,
    p_win: float,
    p_tie: float,
    p_loss: float,
    icc: float,
    n_judges: int = 1,
    judge_noise: float = 0.0,
    n_evals: int = 1,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Judge outcomes of many simulated evaluations from the latent probit model."""
    check_outcome_probs(p_win, p_tie, p_loss)
    if not 0.0 <= icc < 1.0:
        raise ValueError(f"icc must be in [0, 1), got {icc}")
    if judge_noise < 0:
        raise ValueError(f"judge_noise must be >= 0, got {judge_noise}")
    n_tasks = check_positive_int(n_tasks, "n_tasks")
    n_replicates = check_positive_int(n_replicates, "n_replicates")
    n_judges = check_positive_int(n_judges, "n_judges")
    n_evals = check_positive_int(n_evals, "n_evals")
    rng = np.random.default_rng(rng)
    sigma = np.sqrt(icc / (1.0 - icc))
    u = rng.standard_normal((n_evals, n_tasks, 1, 1)) * sigma
    e = rng.standard_normal((n_evals, n_tasks, n_replicates, 1))
    latent = u + e
    if judge_noise > 0:
        latent = latent + judge_noise * rng.standard_normal(
            (n_evals, n_tasks, n_replicates, n_judges)
        )
    else:
        latent = np.broadcast_to(latent, (n_evals, n_tasks, n_replicates, n_judges))
    scale = np.sqrt(1.0 + sigma**2 + judge_noise**2)
    lo, hi = latent_thresholds(p_tie, p_loss, scale)
    return (latent >= lo).astype(np.int8) + (latent >= hi).astype(np.int8)


@dataclass(frozen=True)
class LogisticFit(ResultDisplay):
    """Result of :func:`logistic_fit`, ``logit P(y = 1) = intercept + slope * x`` (NaN when the
    fit did not converge); ``z``, ``p_value``, ``ci_low``, ``ci_high`` are the slope's."""

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    n_events: int
    converged: bool
    n_iter: int
    confidence: float

    _display_estimate = "slope"  # ci_low / ci_high are the slope's interval

    def to_frame(self) -> pd.DataFrame:
        """One row with every field."""
        return pd.DataFrame([self.__dict__])


def logistic_fit(
    x: Any, y: Any, *, confidence: float = 0.95, max_iter: int = 100, tol: float = 1e-10
) -> LogisticFit:
    """Logistic regression of a 0/1 outcome on one covariate: statsmodels' ``Logit``."""
    from statsmodels.discrete.discrete_model import Logit

    xa = np.asarray(x, dtype=np.float64).ravel()
    ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length: {xa.size} vs {ya.size}")
    if not np.isfinite(xa).all():
        raise ValueError("x must be finite")
    if not np.isin(ya, (0.0, 1.0)).all():
        raise ValueError("y must be 0 or 1")
    confidence = check_confidence(confidence)
    n, events = int(xa.size), int(ya.sum())
    center = float(xa.mean()) if n else 0.0
    scale = float(xa.std()) if n else 1.0

    def no_fit(n_iter: int) -> LogisticFit:
        return LogisticFit(
            *([math.nan] * 8), n, events, converged=False, n_iter=n_iter, confidence=confidence
        )

    if n < 3 or scale == 0.0 or events in (0, n):
        return no_fit(0)  # no slope to estimate, or the MLE is at infinity
    design = np.column_stack([np.ones(n), (xa - center) / scale])
    start = np.array([special.logit(events / n), 0.0])  # the intercept-only MLE
    with warnings.catch_warnings():
        # Separation and singular information are reported below as "no estimate".
        warnings.simplefilter("ignore")
        try:
            res = Logit(ya, design).fit(
                start_params=start, method="newton", maxiter=max_iter, tol=tol, disp=0
            )
        except np.linalg.LinAlgError:
            res = None
    converged = res is not None and bool(res.mle_retvals["converged"])
    n_iter = int(res.mle_retvals["iterations"]) if res is not None else 0
    # A separating covariate drives the slope to infinity: no estimate.
    if not converged or not np.isfinite(res.params).all() or abs(res.params[1]) > 30.0:
        return no_fit(n_iter)
    # Back to the original x: intercept = b0 - b1 c / s, slope = b1 / s (z and p unchanged).
    t = np.array([[1.0, -center / scale], [0.0, 1.0 / scale]])
    params = t @ res.params
    se = np.sqrt(np.diag(t @ res.cov_params() @ t.T))
    low, high = res.conf_int(alpha=1.0 - confidence)[1] / scale
    return LogisticFit(intercept=float(params[0]), slope=float(params[1]),
                       intercept_se=float(se[0]), slope_se=float(se[1]), z=float(res.tvalues[1]),
                       p_value=float(res.pvalues[1]), ci_low=float(low), ci_high=float(high), n=n,
                       n_events=events, converged=True, n_iter=n_iter,
                       confidence=float(confidence))  # fmt: skip


LENGTH_MEASURES = ("log_ratio", "diff")


def length_bias(
    frame: pd.DataFrame,
    *,
    bins: int | Sequence[float] = 5,
    x: str = "log_ratio",
    by: Sequence[str] = ("model", "baseline", "judge"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """P(model wins) against the length difference of the two outputs, per group."""
    by_cols = list(by)
    check_columns(frame, [*by_cols, "len_with", "len_without", "status", "outcome"])
    check_choice(x, "x", LENGTH_MEASURES)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"bins must be >= 1, got {bins}")
        edges_fixed = None
    else:
        edges_fixed = np.asarray(bins, dtype=np.float64)
        if edges_fixed.ndim != 1 or edges_fixed.size < 2 or np.any(np.diff(edges_fixed) <= 0):
            raise ValueError("bins must be an int or a strictly increasing sequence of edges")
    lw = frame["len_with"].to_numpy(np.float64, na_value=np.nan)
    lo = frame["len_without"].to_numpy(np.float64, na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        meas = np.log(lw / lo) if x == "log_ratio" else lw - lo
    keep = (frame["status"] == "ok").to_numpy(dtype=bool) & np.isfinite(meas)
    sub = frame.loc[keep, by_cols].copy()
    for c in by_cols:
        if isinstance(sub[c].dtype, pd.CategoricalDtype):
            sub[c] = sub[c].astype(str)
    sub["_x"] = meas[keep]
    sub["_outcome"] = frame.loc[keep, "outcome"].astype(str).to_numpy()
    counted = {"wins": "win", "ties": "tie", "losses": "loss"}
    parts = []
    for key, g in sub.groupby(by_cols, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        xv = g["_x"].to_numpy()
        if edges_fixed is None:
            edges = np.unique(np.quantile(xv, np.linspace(0.0, 1.0, int(bins) + 1)))
            if edges.size < 2:
                edges = np.array([xv.min(), xv.max()])
        else:
            edges = edges_fixed
        # Right-closed bins, the lowest edge included (pandas.cut(include_lowest=True)).
        idx = np.searchsorted(edges, xv, side="left")
        idx = np.where(xv == edges[0], 1, idx)
        inside = (idx >= 1) & (idx < edges.size)
        nb = edges.size - 1
        b = idx[inside] - 1
        n = np.bincount(b, minlength=nb)
        outcome = g["_outcome"].to_numpy()
        counts = {
            name: np.bincount(b, weights=(outcome == o)[inside].astype(np.int64), minlength=nb)
            for name, o in counted.items()
        }
        xsum = np.bincount(b, weights=xv[inside], minlength=nb)
        ci = proportion_ci(counts["wins"], n, confidence=confidence)
        fit = logistic_fit(xv, (outcome == "win").astype(np.int64), confidence=confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            x_mean = np.where(n > 0, xsum / np.maximum(n, 1), np.nan)
        part = pd.DataFrame(
            {
                **{c: [k] * nb for c, k in zip(by_cols, key, strict=True)},
                "x": x,
                "bin": np.arange(1, nb + 1),
                "x_low": edges[:-1],
                "x_high": edges[1:],
                "x_mean": x_mean,
                "n": n.astype(np.int64),
                **{name: c.astype(np.int64) for name, c in counts.items()},
                "p_win": ci.estimate,
                "ci_low": ci.ci_low,
                "ci_high": ci.ci_high,
                "n_group": len(xv),
                "intercept": fit.intercept,
                "slope": fit.slope,
                "slope_se": fit.slope_se,
                "slope_ci_low": fit.ci_low,
                "slope_ci_high": fit.ci_high,
                "slope_p": fit.p_value,
            }
        )
        parts.append(part)
    if not parts:
        raise ValueError("no ok verdicts with both output lengths")
    return pd.concat(parts, ignore_index=True)


CovStruct = Literal["exchangeable", "global_odds_ratio", "independence"]
CovType = Literal["bias_reduced", "robust"]
QUANTITIES = ("p_win", "p_tie", "p_loss", "net_win")
AVERAGE = "average of judges"


@dataclass(frozen=True)
class OrdinalCheckResult(ResultDisplay):
    """An ordinal GEE fit across judges: ``coefficients`` (cut points and one ``judge[...]``
    log cumulative odds ratio per non-reference judge), ``probabilities`` (per judge and
    their average), the sandwich ``covariance``, ``df`` (C - 1) and the fit's counts."""

    coefficients: pd.DataFrame
    probabilities: pd.DataFrame
    covariance: pd.DataFrame
    reference_judge: str
    n: int
    n_tasks: int
    n_excluded: int
    df: float
    converged: bool
    method: str

    def to_frame(self) -> pd.DataFrame:
        """The coefficient table."""
        return self.coefficients.copy()


def ordinal_check(
    frame: pd.DataFrame,
    *,
    rubric: str | None = None,
    judges: Sequence[str] | None = None,
    arms: tuple[str, str] | None = None,
    cluster: str = "task_id",
    cov_struct: CovStruct = "exchangeable",
    cov_type: CovType = "bias_reduced",
    confidence: float = 0.95,
) -> OrdinalCheckResult:
    """A cumulative-logit GEE of the verdicts with judge as a covariate, clustered by task.

    See docs/methods.md, section Ordinal check across judges.

    Parameters
    ----------
    frame : DataFrame
        ``rubric``, ``judge``, ``status``, ``outcome`` and the ``cluster`` column.
    rubric, arms : optional
        The rubric and pair of arms ``(arm_a, arm_b)``; required when the frame holds several.
    judges : sequence of str, optional
        Default all; the first by name is the reference.
    cluster, cov_struct, cov_type, confidence
        ``cov_struct``: exchangeable, global_odds_ratio, independence; ``cov_type``:
        bias_reduced, robust.

    Returns
    -------
    OrdinalCheckResult

    Examples
    --------
    >>> from evalstats.frames import load_frame
    >>> res = ordinal_check(load_frame("data/sample"), rubric="blind-pair")
    >>> res.coefficients["term"].tolist()
    ['logit P(outcome > loss)', 'logit P(outcome > tie)', 'judge[openai:gpt-5.4]']
    >>> p = res.probabilities.set_index(["judge", "quantity"])["estimate"]
    >>> round(float(p["average of judges", "net_win"]), 3)
    0.381
    """
    from statsmodels.genmod import cov_struct as sm_cov
    from statsmodels.genmod.generalized_estimating_equations import OrdinalGEE

    confidence = check_confidence(confidence)
    structures = {
        "exchangeable": sm_cov.Exchangeable,
        "global_odds_ratio": lambda: sm_cov.GlobalOddsRatio("ordinal"),
        "independence": sm_cov.Independence,
    }
    check_choice(cov_struct, "cov_struct", tuple(structures))
    check_choice(cov_type, "cov_type", ("bias_reduced", "robust"))
    check_columns(frame, ["rubric", "judge", "status", "outcome", cluster])
    rows, rubric = select_rubric(frame, rubric)
    if set(ARM_COLUMNS) <= set(rows.columns):  # one pair of arms per fit
        pairs = rows[list(ARM_COLUMNS)].astype(str).drop_duplicates()
        if arms is None and len(pairs) > 1:
            raise DataError(
                f"rubric {rubric!r} holds {len(pairs)} pairs of arms: choose one with "
                "arms=(arm_a, arm_b)",
                field="arm_a",
            )
        if arms is not None:
            rows = rows.loc[
                (rows["arm_a"].astype(str) == arms[0]) & (rows["arm_b"].astype(str) == arms[1])
            ]
            if rows.empty:
                raise ValueError(f"no rows for arms {tuple(arms)} in rubric {rubric!r}")
    if judges is not None:
        wanted = [str(j) for j in judges]
        absent = sorted(set(wanted) - set(rows["judge"].astype(str)))
        if absent:
            raise ValueError(f"no rows for judge(s) {absent} in rubric {rubric!r}")
        rows = rows.loc[rows["judge"].astype(str).isin(wanted)]
    ok = (rows["status"].astype(str) == "ok").to_numpy() & rows["outcome"].notna().to_numpy()
    used = rows.loc[ok]
    if used[cluster].isna().any():
        raise DataError("missing cluster id", field=cluster)
    code = {name: i for i, name in enumerate(OUTCOMES)}  # loss < tie < win
    y = used["outcome"].astype(str).map(code).to_numpy(dtype=float)
    present = np.unique(y).astype(int)
    if present.size < 2:
        raise DataError(
            f"rubric {rubric!r}: every ok verdict is {OUTCOMES[present[0]] if present.size else 'absent'};"
            " an ordinal model needs at least two outcomes",
            field="outcome",
        )
    judge_names = sorted(used["judge"].astype(str).unique())
    ref, others = judge_names[0], judge_names[1:]
    jcode = pd.Categorical(used["judge"].astype(str), categories=judge_names).codes
    x = (jcode[:, None] == np.arange(1, len(judge_names))[None, :]).astype(float)
    groups = pd.factorize(used[cluster], sort=True)[0]
    n_clusters = int(groups.max()) + 1
    if n_clusters < 2:
        raise DataError(
            f"rubric {rubric!r}: one {cluster}; a clustered model needs two", field=cluster
        )

    # OrdinalGEE needs a non-empty exog: one judge gets an all-zero column, dropped below.
    exog = x if others else np.zeros((y.size, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reported through ``converged``
        model = OrdinalGEE(y, exog, groups, cov_struct=structures[cov_struct]())
        fit = model.fit(cov_type=cov_type)
    params = np.asarray(fit.params, dtype=float)
    cov = np.asarray(fit.cov_params(), dtype=float)
    converged = bool(getattr(fit, "converged", True))
    k = present.size - 1
    df = float(n_clusters - 1)
    q = float(stats.t.ppf(0.5 + confidence / 2.0, df))
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    label = (
        f"OrdinalGEE cumulative logit, {cov_struct.replace('_', ' ')} within {cluster}, "
        f"{'Mancl-DeRouen bias-reduced' if cov_type == 'bias_reduced' else 'robust'} sandwich, "
        "t(C-1)"
    )
    terms = [f"logit P(outcome > {OUTCOMES[c]})" for c in present[:-1]]
    terms += [f"judge[{name}]" for name in others]
    n_terms = len(terms)
    est, se_t = params[:n_terms], se[:n_terms]
    with np.errstate(divide="ignore", invalid="ignore"):
        tstat = est / se_t
    coefficients = pd.DataFrame(
        {
            "term": terms,
            "estimate": est,
            "se": se_t,
            "ci_low": est - q * se_t,
            "ci_high": est + q * se_t,
            "p": 2.0 * stats.t.sf(np.abs(tstat), df),
            "method": label,
        }
    )
    probabilities = _implied_probabilities(
        params[:n_terms], cov[:n_terms, :n_terms], k, present, judge_names, q, label
    )
    return OrdinalCheckResult(
        coefficients=coefficients,
        probabilities=probabilities,
        covariance=pd.DataFrame(cov[:n_terms, :n_terms], index=terms, columns=terms),
        reference_judge=ref,
        n=int(y.size),
        n_tasks=n_clusters,
        n_excluded=int((~ok).sum()),
        df=df,
        converged=converged,
        method=label,
    )


def _implied_probabilities(theta, cov, k, present, judge_names, q, label) -> pd.DataFrame:
    """P(loss), P(tie), P(win), net win per judge and averaged, with delta-method SEs."""
    n_j = len(judge_names)
    design = np.zeros((n_j, n_j - 1))
    design[np.arange(1, n_j), np.arange(n_j - 1)] = 1.0
    alpha, beta = theta[:k], theta[k:]
    s = special.expit(alpha[None, :] + (design @ beta)[:, None])  # (J, k)
    ds = s * (1.0 - s)  # (J, k)
    p = theta.size
    # dS_m / dtheta: alpha_m on the diagonal, beta through the judge's design row
    jac_s = np.zeros((n_j, k, p))
    jac_s[:, np.arange(k), np.arange(k)] = ds
    if beta.size:
        jac_s[:, :, k:] = ds[:, :, None] * design[:, None, :]
    upper = np.concatenate([np.ones((n_j, 1)), s, np.zeros((n_j, 1))], axis=1)  # (J, k + 2)
    jac_u = np.concatenate([np.zeros((n_j, 1, p)), jac_s, np.zeros((n_j, 1, p))], axis=1)
    probs_present = upper[:, :-1] - upper[:, 1:]  # (J, k + 1)
    jac_present = jac_u[:, :-1] - jac_u[:, 1:]
    # Scatter the present categories into (loss, tie, win); absent ones are exactly 0.
    probs = np.zeros((n_j, len(OUTCOMES)))
    jac = np.zeros((n_j, len(OUTCOMES), p))
    probs[:, present] = probs_present
    jac[:, present] = jac_present
    # rows: p_win, p_tie, p_loss, net_win
    pick = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0], [-1, 0, 1]], dtype=float)
    est = probs @ pick.T  # (J, 4)
    jac_q = np.einsum("qo,jop->jqp", pick, jac)
    est = np.vstack([est, est.mean(axis=0, keepdims=True)])
    jac_q = np.concatenate([jac_q, jac_q.mean(axis=0, keepdims=True)], axis=0)
    var = np.einsum("jqp,pr,jqr->jq", jac_q, cov, jac_q)
    se = np.sqrt(np.clip(var, 0.0, None))
    names = [*judge_names, AVERAGE]
    return pd.DataFrame(
        {
            "judge": np.repeat(names, len(QUANTITIES)),
            "quantity": np.tile(QUANTITIES, len(names)),
            "estimate": est.ravel(),
            "se": se.ravel(),
            "ci_low": (est - q * se).ravel(),
            "ci_high": (est + q * se).ravel(),
            "method": f"{label}; delta method",
        }
    )
