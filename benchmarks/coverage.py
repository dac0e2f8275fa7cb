"""The coverage battery: every default interval and the net-win test on the designs users have.

Each design draws all its evaluations at once as arrays from the latent probit model of
:func:`evalstats.stats.models.draw_outcomes` (known marginal win / tie / loss
probabilities, task ICC on the latent scale; unequal task sizes are a mask over the
largest size) and computes the intervals batched, one evaluation per group of
:func:`evalstats.stats.rates.rate_arrays` — no pandas per evaluation. Per design it
prints the coverage of nominal 95 % intervals of win, tie, loss, net win and score for
each candidate method, the type-I error at 5 % of that method's net-win test in the same
design at a true net win of 0 (the p-value from the same construction as the interval),
the coverage of the kappa intervals (two judges, kappa about 0.5) and of both token
ratios (computed by :func:`evalstats.stats.cost.cost_ratios` as it is, per evaluation),
the Monte-Carlo SE of a coverage of 0.95, and (``flagged``) the share of evaluations of the
design that :func:`evalstats.stats.design_coverage` marks as outside [0.93, 0.97]. Cost
designs also print ``tok_evals`` (evaluations of the token ratios: at least 1,000 for the
outlier-run designs), ``tok_mcse`` (the Monte-Carlo SE of ``tok_total``) and ``tok_check``
(the share of evaluations where the total ratio's lognormal model check rejects). Last, the
default's cells beside their exact equal-tailed floors and, at 6-10 equal tasks, coverage
without Monte-Carlo error: ``benchmarks/coverage_exact_rates.py`` (``floor_table``).

Run: ``.venv/bin/python benchmarks/coverage.py [--evals 2000] [--cost-evals 600]
[--designs unequal,15x6] [--methods cr2_wilson,cr2_t] [--no-wild]``; a ``--designs`` subset
draws each design from the seed it has in the full battery, so its rows are the full run's.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from evalstats.records import EvalstatsWarning
from evalstats.stats import agreement as ac
from evalstats.stats import design_coverage
from evalstats.stats.agreement import table_stats, weight_matrix
from evalstats.stats.models import draw_outcomes
from evalstats.stats.rates import DEFAULT_METHOD, RATE_NAMES, rate_arrays, t_interval
from evalstats.stats.resample import (
    cluster_bootstrap,
    wild_cluster_interval,
    wild_cluster_p,
    wild_weights,
)


def cluster_jackknife(
    cluster_stats: np.ndarray, statistic, *, valid: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Delete-one-cluster jackknife estimate, SE and df (C - 1) of a statistic of summed
    cluster statistics ``(..., C, d)``; leading axes vectorised, ``valid`` marks real
    clusters (padding).

    >>> x = np.array([[1.0, 1], [2.0, 1], [4.0, 1], [7.0, 1]])  # (value, count) per cluster
    >>> est, se, df = cluster_jackknife(x, lambda s: s[..., 0] / s[..., 1])  # a mean: sem
    >>> float(est), round(float(se), 4), float(df)
    (3.5, 1.3229, 3.0)
    """
    cs = np.asarray(cluster_stats, dtype=np.float64)
    if valid is None:
        valid = np.ones(cs.shape[:-1], dtype=bool)
    cs = np.where(valid[..., None], cs, 0.0)
    total = cs.sum(axis=-2)
    est = statistic(total)
    loo = statistic(total[..., None, :] - cs)
    c = valid.sum(axis=-1).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(valid, loo, 0.0).sum(axis=-1) / c
        dev = np.where(valid, loo - mean[..., None], 0.0)
        se = np.sqrt((c - 1.0) / c * (dev**2).sum(axis=-1))
    df = np.where(c > 1, c - 1.0, np.nan)
    return est, np.where(c > 1, se, np.nan), df


RATE_METHODS = ("cr2_wilson", "cr2_t", "cluster_wilson", "cluster_t", "bca")
KAPPA_METHODS = ("atanh_jackknife_midp_blaker", "jackknife_t", "wald_iid", "boot_bca")
#: judge_agreement's interval for every coefficient since issue 23 (clustered_agreement).
DEFAULT_KAPPA = "atanh_jackknife_midp_blaker"
#: The default before it (Clopper-Pearson bound, design effect >= 1): the kappa_former column.
FORMER_KAPPA = "atanh_jackknife_exact"
#: Coefficients judge_agreement reports, as (column, table kind, weights) of table_parts.
AGREEMENT_COEFS = (
    ("kappa", "cohen", None),
    ("kappa_linear", "cohen", "linear"),
    ("ac1", "gwet", None),
    ("pabak", "bp", None),
)
WILD = True  # the wild bootstrap rows (slow: test inversion); the test slice turns them off
FLAGS = True  # how often design_coverage flags an evaluation of the design (the user's check)


@dataclass(frozen=True)
class Design:
    name: str
    sizes: tuple[int, ...]  # verdict rows per task (replicates x orders)
    probs: tuple[float, float, float] = (0.45, 0.25, 0.30)
    icc: float = 0.3
    n_judges: int = 1
    judge_noise: float = 0.0
    orders: int = 1  # the blind rubric judges each pair in both orders
    costs: dict = field(default_factory=dict)
    # Labelled pairs of a PPI design (issue 23: rare outcomes, few labels); 0: none.
    ppi_labels: int = 0
    # Share of pairs where WITH alone went over budget, drawn among the pairs WITH did not
    # win (no-answers unbalanced between arms and correlated with the outcome); 0: none.
    with_no_answer: float = 0.0


_OUTLIERS = {"log_sd": 1.5, "slope": -0.15, "min_evals": 1000}

DESIGNS = (
    Design("15x6 ICC .3", (6,) * 15),
    Design("8x3 ICC .3", (3,) * 8),
    Design("12 unequal 1-30", (1, 1, 1, 2, 2, 3, 3, 5, 8, 12, 20, 30)),
    Design("10x4 ICC .8", (4,) * 10, icc=0.8),
    Design("8x3 ICC .05", (3,) * 8, icc=0.05),
    Design("8x3 net +.8", (3,) * 8, probs=(0.85, 0.10, 0.05)),
    Design("8x3 net -.8", (3,) * 8, probs=(0.05, 0.10, 0.85)),
    Design("40x2 ICC .3", (2,) * 40),
    Design("blind 15x3x2 orders", (3,) * 15, n_judges=2, judge_noise=0.6, orders=2),
    Design("costs 8x3 logsd 1.5", (3,) * 8, costs={"log_sd": 1.5, "slope": -0.15}),
    Design("kappa 10x3 two judges", (3,) * 10, n_judges=2, judge_noise=0.5),
    # Issue 23's edges, appended so that the designs above keep their seeds.
    Design("kappa .92 10x3", (3,) * 10, n_judges=2, judge_noise=0.08),
    Design("kappa .92 6x3", (3,) * 6, n_judges=2, judge_noise=0.08),
    Design("rare win PPI 40x5, 20 labels", (5,) * 40, probs=(0.08, 0.30, 0.62), ppi_labels=20),
    Design("rare win PPI 40x5, 60 labels", (5,) * 40, probs=(0.08, 0.30, 0.62), ppi_labels=60),
    Design("WITH-only no-answers 15x4", (4,) * 15, with_no_answer=0.15),
    # Outlier runs (issue 23 item 4): a run of either arm is, with probability ``share``,
    # ``factor`` times its cost; at least 1,000 evaluations of the token ratios each.
    Design("costs 8x3 outliers 10% x10", (3,) * 8, costs=_OUTLIERS | {"outliers": (0.1, 10.0)}),
    Design("costs 6x3 outliers 10% x10", (3,) * 6, costs=_OUTLIERS | {"outliers": (0.1, 10.0)}),
    Design("costs 8x3 outliers 10% x30", (3,) * 8, costs=_OUTLIERS | {"outliers": (0.1, 30.0)}),
    Design("costs 6x3 outliers 5% x30", (3,) * 6, costs=_OUTLIERS | {"outliers": (0.05, 30.0)}),
    # No outliers at 6 tasks: the lognormal check's level (8 tasks: "costs 8x3 logsd 1.5").
    Design("costs 6x3 logsd 1.5", (3,) * 6, costs=_OUTLIERS),
)


def _outcomes(d: Design, probs, n_evals: int, rng: np.random.Generator) -> tuple:
    """Outcome codes (evals, tasks, rows, judges) and the row mask of unequal sizes."""
    reps = max(d.sizes)
    codes = draw_outcomes(
        len(d.sizes),
        reps,
        p_win=probs[0],
        p_tie=probs[1],
        p_loss=probs[2],
        icc=d.icc,
        n_judges=d.n_judges,
        judge_noise=d.judge_noise,
        n_evals=n_evals,
        rng=rng,
    )
    mask = np.arange(reps)[None, :] < np.asarray(d.sizes)[:, None]  # (tasks, rows)
    if d.orders == 2:
        # The two "judges" are the two orders of one judge: rows of the same pair.
        codes = np.concatenate([codes[..., :1], codes[..., 1:2]], axis=2)
        mask = np.concatenate([mask, mask], axis=1)
        codes = codes[..., :1]
    return codes, mask


def _cluster_counts(codes: np.ndarray, mask: np.ndarray):
    """wins, ties, losses per (eval, task), flattened to cells, and each cell's eval id."""
    c = codes[..., 0]
    m = mask[None]
    wins = ((c == 2) & m).sum(axis=2).ravel()
    ties = ((c == 1) & m).sum(axis=2).ravel()
    losses = ((c == 0) & m).sum(axis=2).ravel()
    gid = np.repeat(np.arange(c.shape[0]), c.shape[1])
    return wins, ties, losses, gid


def rate_coverage(
    d: Design, n_evals: int, rng: np.random.Generator, methods=RATE_METHODS
) -> pd.DataFrame:
    codes, mask = _outcomes(d, d.probs, n_evals, rng)
    wins, ties, losses, gid = _cluster_counts(codes, mask)
    pw, pt, pl = d.probs
    truth = np.array([pw, pt, pl, pw - pl, pw + pt / 2])
    p0 = (1.0 - pt) / 2.0
    null_codes, _ = _outcomes(d, (p0, pt, p0), n_evals, rng)
    nw, nt, nl, _ = _cluster_counts(null_codes, mask)
    rows = {}
    for method in methods:
        r = rate_arrays(wins, ties, losses, gid, n_evals, method=method, n_resamples=999, rng=1)
        cover = (r["low"] <= truth) & (truth <= r["high"])
        rn = rate_arrays(nw, nt, nl, gid, n_evals, method=method, n_resamples=999, rng=2)
        excl = (rn["low"][:, 3] > 0) | (rn["high"][:, 3] < 0)
        rej = rn["net_win_p"] < 0.05
        row = dict(zip(RATE_NAMES, cover.mean(axis=0), strict=True))
        has_p = np.isfinite(rn["net_win_p"])
        row["type1"] = float(rej.mean()) if has_p.all() else np.nan
        row["p_vs_ci_disagree"] = int((excl != rej)[has_p].sum()) if has_p.all() else np.nan
        row["df"] = float(np.nanmean(r["df"]))
        row["net_win_df"] = float(np.nanmean(r["net_win_df"]))
        row["n_eff"] = float(np.nanmean(r["n_eff_clusters"]))
        rows[method] = row
    if WILD:
        rows["wild_webb (net win)"] = _wild_net(
            wins, ties, losses, gid, (nw, nt, nl), truth, n_evals
        )
    return pd.DataFrame(rows).T


def flagged_share(d: Design, rng: np.random.Generator, n_evals: int = 40) -> float:
    """Share of simulated evaluations whose :func:`design_coverage` puts a ``ci_note`` on them.

    The user's check of a design: each evaluation's frame is re-simulated from its own
    estimates (400 simulations each, all evaluations in one call), so this says how often a
    user of the design would be told that its default intervals fall outside the band.
    """
    codes, mask = _outcomes(d, d.probs, n_evals, rng)
    ev, task, row = np.nonzero(np.broadcast_to(mask, codes.shape[:3]))
    frame = pd.DataFrame(
        {
            "eval": ev,
            "task_id": task,
            "status": "ok",
            "outcome": np.array(["loss", "tie", "win"])[codes[ev, task, row, 0]],
        }
    )
    res = design_coverage(frame, by="eval", n_resamples=400, rng=rng)
    return float((res["ci_note"] != "").mean())


def _wild_net(wins, ties, losses, gid, null_counts, truth, n_evals) -> dict:
    """The restricted wild cluster bootstrap (Webb weights, B = 399) for net win only.

    Its interval inverts the bootstrap test by bisection, which costs ~20 bootstrap
    passes per end, so the battery runs it for the net win (the tested statistic) only.
    """
    width = int(np.bincount(gid).max())
    v = wild_weights(width, 399, 5, method="webb")

    def net(w, t, lo):
        return (w - lo).astype(float), (w + t + lo).astype(float)

    y, m = net(wins, ties, losses)
    low, high = wild_cluster_interval(y, m, gid, n_evals, weights=v, bounds=(-1.0, 1.0))
    yn, mn = net(*null_counts)
    p0 = wild_cluster_p(yn, mn, gid, n_evals, 0.0, v)
    nl, nh = wild_cluster_interval(yn, mn, gid, n_evals, weights=v, bounds=(-1.0, 1.0))
    ok = np.isfinite(p0) & np.isfinite(nl)
    excl = (nl > 0) | (nh < 0)
    return {
        "net_win": float(((low <= truth[3]) & (truth[3] <= high)).mean()),
        "type1": float((p0[ok] < 0.05).mean()),
        "p_vs_ci_disagree": int((excl != (p0 < 0.05))[ok].sum()),
        "undefined": int((~np.isfinite(low)).sum()),
    }


def _kappa_truth(d: Design, rng: np.random.Generator, every: bool = False):
    big = draw_outcomes(
        4000,
        50,
        p_win=d.probs[0],
        p_tie=d.probs[1],
        p_loss=d.probs[2],
        icc=d.icc,
        n_judges=2,
        judge_noise=d.judge_noise,
        rng=rng,
    )
    table = np.bincount(big[..., 0].ravel() * 3 + big[..., 1].ravel(), minlength=9)
    if every:  # every coefficient's population value
        return {
            name: float(ac.coefficient(_agreement_parts(kind, w), table.astype(float)))
            for name, kind, w in AGREEMENT_COEFS
        }
    return float(ac.coefficient(_agreement_parts("cohen", None), table.astype(float)))


def _agreement_parts(kind: str, weights):
    return partial(ac.table_parts, w=weight_matrix(weights, 3), kind=kind)


def agreement_coverage(
    per_task: np.ndarray, truth: dict, method: str = DEFAULT_KAPPA, **options
) -> dict[str, float]:
    """judge_agreement's default interval (clustered_agreement's ``method``) of every
    coefficient, all evaluations at once; ``<name>_degenerate``: zero-width or out of
    [-1, 1] intervals (must be 0)."""
    out = {}
    for name, kind, w in AGREEMENT_COEFS:
        gaps = (1.0 - weight_matrix(w, 3))[(1.0 - weight_matrix(w, 3)) > 1e-12]
        res = ac.cluster_intervals(
            per_task,
            _agreement_parts(kind, w),
            methods=(method,),
            unit_disagreement=float(gaps.min()),
            squared=ac.table_squared(weight_matrix(w, 3)),
            **options,
        )
        lo, hi = res.intervals[method]
        t = truth[name]
        out[name] = float(((lo <= t) & (t <= hi)).mean())
        out[f"{name}_degenerate"] = int(((hi - lo) <= 1e-12).sum() + ((lo < -1) | (hi > 1)).sum())
    return out


def kappa_coverage(d: Design, n_evals: int, rng: np.random.Generator) -> dict[str, float]:
    codes, mask = _outcomes(d, d.probs, n_evals, rng)
    truth = _kappa_truth(d, rng)
    flat = codes[..., 0].astype(np.int64) * 3 + codes[..., 1]
    tables = (flat[..., None] == np.arange(9)) & mask[None, :, :, None]
    per_task = tables.sum(axis=2).astype(np.float64)  # (evals, tasks, 9)

    def kappa(s: np.ndarray) -> np.ndarray:
        return ac.coefficient(_agreement_parts("cohen", None), s)

    est, se, df = cluster_jackknife(per_task, kappa)
    low, high = t_interval(est, se, df)
    out = {"jackknife_t": float(((low <= truth) & (truth <= high)).mean())}
    every = _kappa_truth(d, rng, every=True)
    for name, v in agreement_coverage(per_task, every).items():
        out[f"agr_{name}"] = v
    out[DEFAULT_KAPPA] = out["agr_kappa"]
    out["former"] = agreement_coverage(per_task, every, FORMER_KAPPA)["kappa"]
    # The floor: an evaluation with perfect observed agreement is covered by any interval
    # that is not [1, 1] on these few units.
    tab = per_task.sum(axis=1)
    out["perfect"] = float(np.mean(tab[:, [0, 4, 8]].sum(axis=-1) == tab.sum(axis=-1)))
    st = table_stats(per_task.sum(axis=1).reshape(-1, 3, 3), np.eye(3), "cohen")
    wl, wh = st.estimate - 1.959964 * st.se, st.estimate + 1.959964 * st.se
    out["wald_iid"] = float(((wl <= truth) & (truth <= wh)).mean())
    # The cluster BCa bootstrap of judge_agreement's kappa_boot_* columns, one
    # evaluation at a time (the engine vectorises over resamples, not evaluations).
    hits = 0
    for e in range(n_evals):
        boot = cluster_bootstrap(per_task[e], kappa, n_resamples=999, rng=e)
        hits += bool(boot.ci_low[0] <= truth <= boot.ci_high[0])
    out["boot_bca"] = hits / n_evals
    out["truth"] = truth
    return out


def _cost_draw(d: Design, n_evals: int, rng: np.random.Generator):
    """Tokens per (eval, task, replicate): task sizes log-normal, savings grow with size."""
    n_tasks, reps = len(d.sizes), max(d.sizes)
    log_sd, slope = d.costs["log_sd"], d.costs["slope"]
    size = rng.standard_normal((n_evals, n_tasks, 1)) * log_sd
    noise = 0.3 * rng.standard_normal((n_evals, n_tasks, reps, 2))
    without = 1000.0 * np.exp(size + noise[..., 0])
    log_ratio = -0.2 + slope * size + 0.2 * rng.standard_normal((n_evals, n_tasks, 1))
    with_ = without * np.exp(log_ratio + noise[..., 1] - noise[..., 0] * 0.5)
    share, factor = d.costs.get("outliers", (0.0, 1.0))
    if share:  # drawn after the rest, so a design without outliers keeps its draws
        with_ = with_ * np.where(rng.random(with_.shape) < share, factor, 1.0)
        without = without * np.where(rng.random(without.shape) < share, factor, 1.0)
    return np.maximum(np.round(with_), 1.0), np.maximum(np.round(without), 1.0)


def _cost_truth(d: Design, rng: np.random.Generator) -> dict[str, float]:
    w, wo = _cost_draw(d, 200_000 // len(d.sizes), rng)
    return {
        "tokens_total_ratio": float(w.sum() / wo.sum()),
        "tokens_geomean_ratio": float(np.exp(np.log(w / wo).mean())),
    }


def cost_coverage(d: Design, n_evals: int, rng: np.random.Generator) -> dict[str, float]:
    from evalstats.stats.cost import cost_ratios

    truth = _cost_truth(d, rng)
    w, wo = _cost_draw(d, n_evals, rng)
    n_tasks, reps = w.shape[1], w.shape[2]
    task = np.repeat(np.arange(n_tasks), reps)
    rep = np.tile(np.arange(reps) + 1, n_tasks)
    hits = {k: 0 for k in truth}
    rejected = 0
    for e in range(n_evals):  # cost_ratios is the other module's API, called as it is
        frame = pd.DataFrame(
            {
                "task_id": task,
                "replicate": rep,
                "status": "ok",
                "tokens_with": w[e].ravel(),
                "tokens_without": wo[e].ravel(),
                "wall_with_s": 1.0,
                "wall_without_s": 1.0,
            }
        )
        res = cost_ratios(frame).set_index("statistic")
        for k, t in truth.items():
            hits[k] += bool(res.loc[k, "ci_low"] <= t <= res.loc[k, "ci_high"])
        rejected += "lognormal model rejected" in res.loc["tokens_total_ratio", "ci_note"]
    out = {k: v / n_evals for k, v in hits.items()}
    out["lognormal_check"] = rejected / n_evals  # the share the model check rejects
    return out


def ppi_coverage(d: Design, n_evals: int, rng: np.random.Generator) -> dict[str, float]:
    """ppi_win_rates as it is (one call per evaluation, 400 resamples): coverage of the
    people's (population) win rate and net win, by a judge with noise 0.5 on
    ``d.ppi_labels`` labels drawn at random; ``ppi_zero_width``: intervals of no width."""
    from evalstats.stats.ppi import ppi_win_rates

    n_tasks, reps = len(d.sizes), max(d.sizes)
    codes = draw_outcomes(
        n_tasks, reps, p_win=d.probs[0], p_tie=d.probs[1], p_loss=d.probs[2], icc=d.icc,
        n_judges=2, judge_noise=0.5, n_evals=n_evals, rng=rng,
    )  # fmt: skip
    names = np.array(["loss", "tie", "win"])
    task = np.repeat(np.arange(n_tasks), reps)
    rep = np.tile(np.arange(reps) + 1, n_tasks)
    # The people's population rates (the superpopulation, as benchmarks/coverage_ppi.py).
    big = draw_outcomes(
        4000, 50, p_win=d.probs[0], p_tie=d.probs[1], p_loss=d.probs[2], icc=d.icc,
        n_judges=2, judge_noise=0.5, rng=rng,
    )[..., 0]  # fmt: skip
    truth = {"win_rate": (big == 2).mean(), "net_win": (big == 2).mean() - (big == 0).mean()}
    hits = dict.fromkeys(("ppi_win", "ppi_net", "ppi_win_pairs", "ppi_net_pairs"), 0)
    hits |= {"ppi_zero_width": 0, "ppi_no_labelled_win": 0}
    for e in range(n_evals):  # ppi_win_rates is the API, called as a user calls it
        human, judged = codes[e, ..., 0].ravel(), codes[e, ..., 1].ravel()
        frame = pd.DataFrame(
            {"task_id": task, "replicate": rep, "judge": "j", "rubric": "r", "status": "ok",
             "outcome": names[judged]}
        )  # fmt: skip
        pick = rng.choice(len(task), size=d.ppi_labels, replace=False)
        labels = pd.DataFrame(
            {"task_id": task[pick], "replicate": rep[pick], "labeler": "ann",
             "outcome": names[human[pick]], "sample_seed": 0, "frame_sha256": "x"}
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalstatsWarning)
            res = ppi_win_rates(frame, labels, judge="j", n_resamples=400, rng=e)
        res = res.set_index("statistic")
        # The people's rates over this evaluation's pairs (the finite population): a task
        # bootstrap also counts the tasks' sampling, so it over-covers these.
        pairs = {
            "win_rate": (human == 2).mean(),
            "net_win": (human == 2).mean() - (human == 0).mean(),
        }
        for key, stat in (("ppi_win", "win_rate"), ("ppi_net", "net_win")):
            r = res.loc[stat]
            hits[key] += bool(r["ci_low"] <= truth[stat] <= r["ci_high"])
            hits[f"{key}_pairs"] += bool(r["ci_low"] <= pairs[stat] <= r["ci_high"])
        hits["ppi_zero_width"] += int((res["ci_high"] - res["ci_low"] <= 1e-12).sum())
        hits["ppi_no_labelled_win"] += int(not (human[pick] == 2).any())
    out = {k: v / n_evals for k, v in hits.items()}
    out["ppi_zero_width"] = hits["ppi_zero_width"]
    return out


def no_answer_coverage(
    d: Design, n_evals: int, flag_evals: int, rng: np.random.Generator
) -> dict[str, float]:
    """No-answers in the WITH arm alone, among the pairs WITH did not win (share
    ``d.with_no_answer`` of all pairs). The intention-to-treat net win (a no-answer is a
    loss for the arm that produced none) is ``p_win - p_loss - s p_tie / (p_tie + p_loss)``.
    Coverage of it by the default (``exclude``) interval (``na_exclude_itt``: a different
    estimand, which is why win_rates flags the design) and by the ``arm_aware`` one
    (``na_arm_aware_net``), and of the net win among the answered pairs, the estimand of
    ``exclude``, by the default (``na_exclude_net``: ``(p_win - p_loss (1 - q)) / (1 - s)``,
    ``q`` the no-answer share among non-wins) (rate_arrays, all evaluations at once);
    ``na_exclude_better``: the default calls WITH
    significantly better; ``na_flagged``: win_rates (the API, ``flag_evals`` evaluations)
    puts the no-answer note in ``ci_note``."""
    from evalstats.stats.rates import win_rates

    codes, mask = _outcomes(d, d.probs, n_evals, rng)
    pw, pt, pl = d.probs
    q = d.with_no_answer / (pt + pl)
    c = codes[..., 0]
    na = (c != 2) & (rng.random(c.shape) < q) & mask[None]
    truth = pw - pl - d.with_no_answer * pt / (pt + pl)
    answered = (pw - pl * (1.0 - q)) / (1.0 - d.with_no_answer)
    ok = mask[None] & ~na
    wins = ((c == 2) & ok).sum(axis=2).ravel()
    ties = ((c == 1) & ok).sum(axis=2).ravel()
    losses = ((c == 0) & ok).sum(axis=2).ravel()
    gid = np.repeat(np.arange(c.shape[0]), c.shape[1])
    out = {}
    for name, extra_losses in (("exclude", 0), ("arm_aware", na.sum(axis=2).ravel())):
        r = rate_arrays(wins, ties, losses + extra_losses, gid, n_evals, method=DEFAULT_METHOD)
        lo, hi = r["low"][:, 3], r["high"][:, 3]
        out[f"na_{name}_{'itt' if name == 'exclude' else 'net'}"] = float(
            ((lo <= truth) & (truth <= hi)).mean()
        )
        out[f"na_{name}_better"] = float((lo > 0).mean())
        if name == "exclude":
            out["na_exclude_net"] = float(((lo <= answered) & (answered <= hi)).mean())
    flagged = 0
    names = np.array(["loss", "tie", "win"])
    for e in range(flag_evals):
        t, row = np.nonzero(mask)
        miss = na[e, t, row]
        frame = pd.DataFrame(
            {
                "task_id": t,
                "replicate": row + 1,
                "judge": "j",
                "status": np.where(miss, "no_answer", "ok"),
                "outcome": np.where(miss, None, names[c[e, t, row]]),
                "over_budget_arm": np.where(miss, "with", None),
            }
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalstatsWarning)
            res = win_rates(frame, by="judge")
        flagged += bool(res["ci_note"].str.contains("no-answers").any())
    out["na_flagged"] = flagged / max(flag_evals, 1)
    out["na_truth"] = truth
    return out


def select_designs(names: str) -> tuple[Design, ...]:
    """The designs whose names contain one of the comma-separated ``names`` (all if empty).

    Each design keeps the seed it has in the full battery (``run`` spawns one per design
    in :data:`DESIGNS` order), so a filtered run reproduces the full run's rows.
    """
    wanted = [w.strip().lower() for w in names.split(",") if w.strip()]
    if not wanted:
        return DESIGNS
    chosen = tuple(d for d in DESIGNS if any(w in d.name.lower() for w in wanted))
    if not chosen:
        raise SystemExit(f"no design matches {names!r}; designs: {[d.name for d in DESIGNS]}")
    return chosen


def run(
    n_evals: int, cost_evals: int, seed: int, designs=DESIGNS, methods=RATE_METHODS
) -> pd.DataFrame:
    # One seed per design of the full battery, so that a subset reproduces its rows.
    spawned = np.random.SeedSequence(seed).spawn(len(DESIGNS))
    by_name = {d.name: s for d, s in zip(DESIGNS, spawned, strict=True)}
    others = iter(np.random.SeedSequence([seed, 1]).spawn(len(designs)))
    rows = []
    for d in designs:
        s = by_name[d.name] if d in DESIGNS else next(others)
        rng = np.random.default_rng(s)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalstatsWarning)
            rates = rate_coverage(d, n_evals, rng, methods)
        extra: dict[str, float] = {"flagged": flagged_share(d, rng)} if FLAGS else {}
        if d.n_judges == 2 and d.orders == 1:
            kap = kappa_coverage(d, n_evals, rng)
            extra["kappa"] = kap[DEFAULT_KAPPA]
            extra["kappa_former"] = kap["former"]
            extra["kappa_perfect"] = kap["perfect"]
            extra["kappa_jackknife_t"] = kap["jackknife_t"]
            for name, *_ in AGREEMENT_COEFS[1:]:
                extra[name] = kap[f"agr_{name}"]
            extra["agr_degenerate"] = sum(kap[f"agr_{n}_degenerate"] for n, *_ in AGREEMENT_COEFS)
            extra["kappa_wald_iid"] = kap["wald_iid"]
            extra["kappa_boot_bca"] = kap["boot_bca"]
            extra["kappa_true"] = kap["truth"]
        if d.ppi_labels and cost_evals:
            extra.update(ppi_coverage(d, cost_evals, rng))
        if d.with_no_answer and cost_evals:
            extra.update(no_answer_coverage(d, n_evals, cost_evals, rng))
        if d.costs and cost_evals:
            n_cost = max(cost_evals, d.costs.get("min_evals", 0))
            cov = cost_coverage(d, n_cost, rng)
            extra["tok_total"] = cov["tokens_total_ratio"]
            extra["tok_geo"] = cov["tokens_geomean_ratio"]
            extra["tok_check"] = cov["lognormal_check"]
            extra["tok_evals"] = n_cost
            # The Monte-Carlo SE of the total ratio's coverage (the one near the band's edge).
            p = cov["tokens_total_ratio"]
            extra["tok_mcse"] = float(np.sqrt(p * (1.0 - p) / n_cost))
        for method, r in rates.iterrows():
            row = {"design": d.name, "method": method, **r.to_dict()}
            if method == DEFAULT_METHOD:
                row.update(extra)
            rows.append(row)
        rows[-1]["seconds"] = time.perf_counter() - start
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=2000)
    parser.add_argument("--cost-evals", type=int, default=600)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--no-wild", action="store_true", help="skip the wild bootstrap rows")
    parser.add_argument("--designs", default="", help="design names (substrings, a,b); all")
    parser.add_argument("--methods", default=",".join(RATE_METHODS), help="rate methods (a,b)")
    args = parser.parse_args()
    global WILD
    WILD = not args.no_wild
    designs = select_designs(args.designs)
    methods = tuple(m for m in args.methods.split(",") if m)
    start = time.perf_counter()
    table = run(args.evals, args.cost_evals, args.seed, designs=designs, methods=methods)
    pd.set_option("display.width", 250)
    pd.set_option("display.max_columns", 40)
    mcse = np.sqrt(0.95 * 0.05 / args.evals)
    print(
        f"{args.evals} evaluations per design ({args.cost_evals} for the token ratios), "
        f"nominal 95 %; Monte-Carlo SE of a coverage of 0.95: {mcse:.4f} "
        f"({np.sqrt(0.95 * 0.05 / max(args.cost_evals, 1)):.4f} for the token ratios); "
        f"type1 = rejection rate of the method's net-win test at 5 % at a true net win of 0; "
        f"default rates: {DEFAULT_METHOD}, kappa: {DEFAULT_KAPPA}"
    )
    print(table.round(3).to_string(index=False, na_rep=""))
    cols = [*RATE_NAMES, "type1", "p_vs_ci_disagree", "flagged", "kappa", "tok_total", "tok_geo"]
    cols += ["tok_mcse", "tok_evals", "tok_check", "kappa_linear", "ac1", "pabak"]
    cols += ["agr_degenerate", "kappa_former", "kappa_perfect", "ppi_win", "ppi_net"]
    cols += ["ppi_zero_width", "na_exclude_net", "na_arm_aware_net", "na_flagged", "na_exclude_itt"]
    default = table[table["method"] == DEFAULT_METHOD].set_index("design")
    default = default.reindex(columns=[c for c in cols if c in default.columns])
    print(f"\nthe defaults ({DEFAULT_METHOD}; kappa {DEFAULT_KAPPA}), band [0.93, 0.97]:")
    print(default.round(3).to_string(na_rep=""))
    sys.path.insert(0, str(Path(__file__).parent))  # the exact study beside this file
    from coverage_exact_rates import print_floors

    print_floors(default, designs)
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
