"""A model-based check across judges: a cumulative-logit GEE with judge as a covariate.

The design-based win rates (:mod:`evalstats.stats.winrates`) are computed judge by judge. This
module fits all judges' verdicts of one rubric at once, as an ordinal outcome
``loss < tie < win`` with the judge as a covariate, clustered by task:

    logit P(outcome > k | judge) = alpha_k + beta_judge,   k in {loss, tie}

(statsmodels ``OrdinalGEE``: the verdicts are expanded into the cumulative indicators
``1(outcome > k)``, one marginal logit each, with a common judge shift). ``beta_judge`` is the
log cumulative odds ratio of a judge against the reference judge (the first by name):
positive means that judge rates WITH more favourably. The working correlation is exchangeable
within a task (or the global odds ratio structure, or independence); whatever it is, the
estimates are population-averaged and the sandwich covariance is robust to it (Liang & Zeger
1986). With few tasks the plain sandwich is too small, so the default is the bias-reduced
sandwich of Mancl & DeRouen (2001) with t(C - 1) quantiles and p-values.

The implied ``P(win)``, ``P(tie)``, ``P(loss)`` and net win per judge (and averaged over the
judges) come with delta-method SEs from the same covariance, to set beside the design-based
estimates: a large gap flags a judge whose verdicts the proportional-odds model does not fit
(e.g. one that never says "tie"). Only ``ok`` verdicts enter; the result counts the rest.

statsmodels is imported inside :func:`ordinal_check`, so ``import evalstats`` stays fast.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from evalstats._display import ResultDisplay
from evalstats._schema import OUTCOMES
from evalstats._validate import check_columns, check_confidence
from evalstats.errors import DataError
from evalstats.frames import select_rubric

__all__ = ["OrdinalCheckResult", "ordinal_check"]

CovStruct = Literal["exchangeable", "global_odds_ratio", "independence"]
CovType = Literal["bias_reduced", "robust"]
QUANTITIES = ("p_win", "p_tie", "p_loss", "net_win")
AVERAGE = "average of judges"


@dataclass(frozen=True)
class OrdinalCheckResult(ResultDisplay):
    """An ordinal GEE fit across judges.

    Attributes
    ----------
    coefficients : DataFrame
        ``term, estimate, se, ci_low, ci_high, p, method``: the two cut-point intercepts
        (``logit P(outcome > loss)`` and ``logit P(outcome > tie)`` for the reference judge)
        and one ``judge[...]`` log cumulative odds ratio per other judge.
    probabilities : DataFrame
        ``judge, quantity, estimate, se, ci_low, ci_high, method``, ``quantity`` in
        ``p_win, p_tie, p_loss, net_win``; one block per judge and one for the average of the
        judges.
    covariance : DataFrame
        The sandwich covariance of the coefficients (rows and columns named by ``term``).
    reference_judge : str
    n : int
        ``ok`` verdicts fitted.
    n_clusters : int
    n_excluded : int
        Rows left out (status other than ``ok``, or no outcome).
    df : float
        Degrees of freedom of the t quantiles (C - 1).
    converged : bool
    method : str
    """

    coefficients: pd.DataFrame
    probabilities: pd.DataFrame
    covariance: pd.DataFrame
    reference_judge: str
    n: int
    n_clusters: int
    n_excluded: int
    df: float
    converged: bool
    method: str

    def to_frame(self) -> pd.DataFrame:
        """The coefficient table."""
        return self.coefficients.copy()

    def wide_probabilities(self) -> pd.DataFrame:
        """One row per judge, one column per quantity (estimates only)."""
        out = self.probabilities.pivot(index="judge", columns="quantity", values="estimate")
        order = self.probabilities["judge"].drop_duplicates().tolist()
        out = out.reindex(index=order, columns=list(QUANTITIES))
        out.columns.name = None
        return out.reset_index()


def ordinal_check(
    frame: pd.DataFrame,
    *,
    rubric: str | None = None,
    judges: Sequence[str] | None = None,
    cluster: str = "task_id",
    cov_struct: CovStruct = "exchangeable",
    cov_type: CovType = "bias_reduced",
    confidence: float = 0.95,
) -> OrdinalCheckResult:
    """Fit a cumulative-logit GEE of the verdicts with judge as a covariate, clustered by task.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``rubric``, ``judge``, ``status``, ``outcome`` and the ``cluster``
        column.
    rubric : str, optional
        The rubric to fit (required when the frame holds several).
    judges : sequence of str, optional
        Judges to include (default: all of the rubric's). The first by name is the reference.
    cluster : str
        The unit of independence.
    cov_struct : {"exchangeable", "global_odds_ratio", "independence"}
        GEE working correlation within a cluster.
    cov_type : {"bias_reduced", "robust"}
        Sandwich covariance: Mancl-DeRouen bias-reduced (default) or the plain robust one.
    confidence : float
        Confidence level of every interval.

    Returns
    -------
    OrdinalCheckResult

    Examples
    --------
    >>> from evalstats.frames import load_frame
    >>> from evalstats.stats.models import ordinal_check
    >>> res = ordinal_check(load_frame("data/sample"), rubric="blind-pair")
    >>> res.coefficients["term"].tolist()
    ['logit P(outcome > loss)', 'logit P(outcome > tie)', 'judge[openai:gpt-5.4]']
    >>> wide = res.wide_probabilities().set_index("judge")
    >>> round(float(wide.loc["average of judges", "net_win"]), 3)
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
    if cov_struct not in structures:
        raise ValueError(f"cov_struct must be one of {tuple(structures)}, got {cov_struct!r}")
    if cov_type not in ("bias_reduced", "robust"):
        raise ValueError(f"cov_type must be 'bias_reduced' or 'robust', got {cov_type!r}")
    check_columns(frame, ["rubric", "judge", "status", "outcome", cluster])
    rows, rubric = select_rubric(frame, rubric)
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

    # OrdinalGEE needs a non-empty exog: with a single judge an all-zero column stands in; its
    # coefficient is not identified and is dropped (only the cut points are reported).
    exog = x if others else np.zeros((y.size, 1))
    with warnings.catch_warnings():
        # Convergence and domain warnings are reported through ``converged``, not printed.
        warnings.simplefilter("ignore")
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
        n_clusters=n_clusters,
        n_excluded=int((~ok).sum()),
        df=df,
        converged=converged,
        method=label,
    )


def _implied_probabilities(theta, cov, k, present, judge_names, q, label) -> pd.DataFrame:
    """P(loss), P(tie), P(win), net win per judge and averaged, with delta-method SEs.

    ``theta`` = (cut-point intercepts alpha_1..alpha_k, judge shifts beta_2..beta_J). For judge
    j, ``S_m = expit(alpha_m + beta_j)`` is P(outcome above the m-th present category); the
    category probabilities are the differences of ``(1, S_1, ..., S_k, 0)``.
    """
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
