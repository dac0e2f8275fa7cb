"""The methodology page's sections of the evaluation kind: the design read from the data,
analytic and simulated power, the ordinal model beside the design-based rates, and the
coverage of every interval method on this design."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._tidy import wide
from ._eval_common import (
    _COVERAGE_EVALS,
    _COVERAGE_MAX_RESAMPLES,
    _CURVE_ICC,
    _ICC_GRID,
    _N_TASKS_GRID,
    _NET_WIN_TARGETS,
    _POWER,
    _POWER_SIMS,
    _attempt,
    _child_rng,
    _front,
    _need_verdicts,
    _rubrics_in,
)
from ._kinds import Context, Unavailable


def _design(ctx: Context) -> dict[str, Any]:
    """Tasks, pairs and whole pairs per task of each rubric, with the pooled tie rate."""
    from ..stats.rates import win_rates

    f = ctx.frame
    _need_verdicts(f)
    rates = win_rates(f, by=["rubric"], confidence=ctx.confidence)
    # One row per rubric, a column per rate (the estimates the power and coverage use).
    pooled = (
        pd.DataFrame(rates)
        .astype({"rubric": str})
        .pivot(index="rubric", columns="statistic", values="estimate")
        .reset_index()
    )
    pairs = f.loc[f["status"] != "no_answer"].drop_duplicates(["rubric", "task_id", "replicate"])
    per_task = pairs.groupby(pairs["rubric"].astype(str))["task_id"].agg(["nunique", "size"])
    design = (
        pooled[["rubric", "net_win", "tie_rate"]]
        .astype({"rubric": str})
        .merge(
            per_task.rename(columns={"nunique": "n_tasks", "size": "n_pairs"}),
            left_on="rubric",
            right_index=True,
        )
    )
    # Power formulas take a whole number of pairs per task: round the average down.
    design["n_replicates"] = np.maximum(design["n_pairs"] // design["n_tasks"], 1).astype(int)
    design = design.rename(columns={"net_win": "observed_net_win", "tie_rate": "p_tie"})
    ctx.scratch["pooled"] = pooled  # the coverage study simulates at these rates
    return {
        "design": design[
            ["rubric", "n_tasks", "n_pairs", "n_replicates", "p_tie", "observed_net_win"]
        ]
    }


def _power(ctx: Context) -> dict[str, Any]:
    from ..stats.power import mde_curve, power_curve, simulated_power, tasks_needed_curve

    if "design" not in ctx.tables:
        why = Unavailable("needs the design section, which is not available here")
        return {"power_mde": why, "power_curve": why, "tasks_needed": why}
    alpha = 1.0 - ctx.confidence
    mde, curves, needed = [], [], []
    sim_rng = np.random.default_rng(ctx.seed)
    for row in ctx.tables["design"].itertuples(index=False):
        n_t, n_r, p_tie = int(row.n_tasks), int(row.n_replicates), float(row.p_tie)
        if n_t < 2:
            continue
        curve = mde_curve(
            [n_t], n_replicates=[n_r], icc=list(_ICC_GRID), p_tie=[p_tie], alpha=alpha, power=_POWER
        ).assign(rubric=row.rubric)
        # The analytic MDE treats task means as normal; simulate the test at each MDE to
        # show how far that approximation is off for this few tasks.
        curve["power_simulated"] = [
            simulated_power(
                m,
                n_t,
                n_replicates=n_r,
                icc=i,
                p_tie=p_tie,
                alpha=alpha,
                n_resamples=_POWER_SIMS,
                rng=sim_rng,
            )["power"].item()
            if np.isfinite(m)
            else np.nan
            for m, i in zip(curve["net_win"], curve["icc"], strict=True)
        ]
        mde.append(curve)
        effects = [e for e in _NET_WIN_TARGETS if e <= 1.0 - p_tie]
        curves.append(
            power_curve(
                effects,
                list(_N_TASKS_GRID),
                n_replicates=n_r,
                icc=_CURVE_ICC,
                p_tie=p_tie,
                alpha=alpha,
            ).assign(rubric=row.rubric)
        )
        if effects:  # every target x ICC in one vectorised search (targets outer)
            grid = tasks_needed_curve(
                effects,
                n_replicates=n_r,
                icc=list(_ICC_GRID),
                p_tie=p_tie,
                alpha=alpha,
                power=_POWER,
            )
            needed.append(_front(grid.assign(rubric=row.rubric), "rubric"))
    if not mde:
        raise Unavailable("fewer than two tasks: no clustered design to size")
    return {
        "power_mde": _front(pd.concat(mde, ignore_index=True), "rubric"),
        "power_curve": _front(pd.concat(curves, ignore_index=True), "rubric"),
        "tasks_needed": pd.concat(needed, ignore_index=True) if needed else pd.DataFrame(),
    }


# The simulated MDE and tasks needed: a bisection over one seeded draw of this many
# evaluations each (common random numbers). Power's Monte-Carlo SE at 80 % is
# sqrt(0.8 * 0.2 / 400) = 0.020; the page prints it beside each figure.
_MDE_SIMS = 400
# Targets whose analytic design needs more tasks than this are not simulated: with that many
# clusters the normal approximation is close (and the simulation would cost most of the page).
_SIMULATE_MAX_TASKS = 100


def _power_simulated(ctx: Context) -> dict[str, Any]:
    """The minimum detectable net win and the tasks needed, by simulating the reported test
    (:func:`evalstats.stats.simulated_mde`, :func:`evalstats.stats.simulated_tasks_needed`),
    with the analytic values beside them as the fast approximation; at the ICC the power
    curve uses."""
    from ..stats.power import simulated_mde, simulated_tasks_needed, tasks_needed

    if "design" not in ctx.tables:
        raise Unavailable("needs the design section, which is not available here")
    alpha = 1.0 - ctx.confidence
    gen = _child_rng(ctx.seed, 2)
    mdes, needed = [], []
    for row in ctx.tables["design"].itertuples(index=False):
        n_t, n_r, p_tie = int(row.n_tasks), int(row.n_replicates), float(row.p_tie)
        if n_t < 2:
            continue
        common = {"n_replicates": n_r, "icc": _CURVE_ICC, "p_tie": p_tie, "alpha": alpha}
        common |= {"power": _POWER, "n_resamples": _MDE_SIMS, "rng": gen}
        mdes.append(simulated_mde(n_t, **common).assign(rubric=row.rubric))
        analytic = {"n_replicates": n_r, "icc": _CURVE_ICC, "p_tie": p_tie, "alpha": alpha}
        needed += [
            simulated_tasks_needed(target, **common).assign(rubric=row.rubric)
            for target in _NET_WIN_TARGETS
            if target <= 1.0 - p_tie
            and tasks_needed(target, power=_POWER, **analytic).n_tasks <= _SIMULATE_MAX_TASKS
        ]
    if not mdes:
        raise Unavailable("fewer than two tasks: no clustered design to size")
    tasks = pd.concat(needed, ignore_index=True) if needed else pd.DataFrame()
    if not tasks.empty:
        tasks["n_tasks"] = tasks["n_tasks"].astype("Int64")  # NaN when max_tasks is not enough
    return {
        "mde_simulated": _front(pd.concat(mdes, ignore_index=True), "rubric"),
        "tasks_needed_simulated": _front(tasks, "rubric")
        if not tasks.empty
        else Unavailable(
            f"every target net win needs more than {_SIMULATE_MAX_TASKS} tasks analytically, "
            "where the normal approximation is close: see tasks_needed"
        ),
    }


def _ordinal(ctx: Context) -> dict[str, Any]:
    """The ordinal model across judges (:func:`evalstats.stats.ordinal_check`) beside the
    design-based rates of each judge: one rubric at a time, judge as a covariate."""
    from ..stats.models import ordinal_check
    from ..stats.rates import win_rates

    f = ctx.frame
    _need_verdicts(f)
    # The design-based rates beside the model's, one row per judge (a side-by-side view).
    design = wide(win_rates(f, by=["rubric", "judge"], confidence=ctx.confidence))
    design = design.astype({"rubric": str, "judge": str})
    quantities = {"p_win": "win_rate", "p_tie": "tie_rate", "p_loss": "loss_rate"}
    quantities["net_win"] = "net_win"
    probs, terms = [], []
    for rubric in _rubrics_in(f):
        fit = _attempt(lambda r=rubric: ordinal_check(f, rubric=r, confidence=ctx.confidence))
        if isinstance(fit, Unavailable):
            continue
        mine = design.loc[design["rubric"] == rubric].set_index("judge")
        p = fit.probabilities.rename(
            columns={"estimate": "model", "ci_low": "model_ci_low", "ci_high": "model_ci_high"}
        )
        judged = p["judge"].isin(mine.index)
        for part in ("", "_ci_low", "_ci_high"):
            values = np.full(len(p), np.nan)
            for q, col in quantities.items():
                hit = judged & (p["quantity"] == q)
                values[hit.to_numpy()] = mine.loc[p.loc[hit, "judge"], col + part].to_numpy()
            p["design" + part] = values
        # The average of the judges: the design-based rates averaged (no interval).
        avg = ~judged
        for q, col in quantities.items():
            hit = (avg & (p["quantity"] == q)).to_numpy()
            p.loc[hit, "design"] = float(mine[col].mean())
        p["difference"] = p["model"] - p["design"]
        probs.append(
            p.assign(
                rubric=rubric, n_fitted=fit.n, n_clusters=fit.n_clusters, converged=fit.converged
            )
        )
        terms.append(
            fit.coefficients.assign(
                rubric=rubric, reference_judge=fit.reference_judge, converged=fit.converged
            )
        )
    if not probs:
        raise Unavailable("no rubric with at least two outcomes on two tasks to fit")
    table = pd.concat(probs, ignore_index=True)
    cols = ["rubric", "judge", "quantity", "model", "model_ci_low", "model_ci_high", "se"]
    cols += ["design", "design_ci_low", "design_ci_high", "difference", "n_fitted", "n_clusters"]
    table = table[[*cols, "converged", "method"]]
    return {
        "ordinal_check": table,
        "ordinal_terms": _front(pd.concat(terms, ignore_index=True), "rubric"),
    }


def _coverage(ctx: Context) -> dict[str, Any]:
    from ..stats.design import coverage_study

    if "power_mde" not in ctx.tables:
        raise Unavailable("needs a design that power can be computed for: not this one")
    pooled = ctx.scratch["pooled"]
    first = ctx.tables["design"].iloc[0]
    pooled_first = pooled.loc[pooled["rubric"].astype(str) == first["rubric"]].iloc[0]
    table = coverage_study(
        n_tasks=int(first["n_tasks"]),
        n_replicates=int(first["n_replicates"]),
        p_win=float(pooled_first["win_rate"]),
        p_tie=float(pooled_first["tie_rate"]),
        p_loss=float(pooled_first["loss_rate"]),
        icc=_CURVE_ICC,
        confidence=ctx.confidence,
        # 1 000 evaluations x 1 000 resamples, as the page says; benchmarks/coverage.py runs
        # the full study (2 000 x 2 000).
        n_evals=_COVERAGE_EVALS,
        n_resamples=min(ctx.n_resamples, _COVERAGE_MAX_RESAMPLES),
        methods=_COVERAGE_METHODS,
        rng=np.random.default_rng(ctx.seed),
    )
    return {"coverage": table}


# Every closed-form and bootstrap interval on offer; the wild cluster bootstrap inverts its
# test by bisection (about 16 s for this study alone), so the page leaves it to
# benchmarks/coverage.py, which runs it in every design.
_COVERAGE_METHODS = (
    "cr2_wilson",
    "cr2_t",
    "cluster_wilson",
    "cluster_t",
    "bca",
    "percentile",
    "basic",
)
