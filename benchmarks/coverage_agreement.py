"""Coverage of task-clustered agreement intervals from kappa = 0 to 0.95, 6-40 tasks.

Generator (independent of the package's simulator): an ordinal logit model with task
random effects. Unit (task t, replicate r) has a latent quality ``T_t + U_tr`` (both
N(0, 1)); judge j sees ``beta * (T_t + U_tr) + tau_jt + eps_jtr`` with a judge-by-task
leniency ``tau_jt ~ N(0, 0.5^2)`` and logistic noise, cut into loss / tie / win at the
25 % and 45 % quantiles of its marginal. ``beta`` is calibrated (on 2 x 10^6 units) to a
target population Cohen's kappa; every coefficient's truth is its value on the population
table (for three judges Fleiss' kappa and nominal alpha estimate the pairwise Scott's pi,
interval alpha the quadratic-weighted one); Cohen's kappa unweighted, quadratic- and
linear-weighted (the last one added for issue 23 item 1: it moved the seeds of every
later design). Designs: kappa 0-0.95, 6-40 tasks, 3 replicates per task or an unequal 1-6.

For every design, coefficient and interval construction of
:mod:`evalstats.stats.agreement` the script prints the coverage of the 95 %
interval with its Monte-Carlo SE, the mean width, and the share of intervals outside
[-1, 1] or of zero width. Everything is vectorised across the simulated evaluations.

Run: ``python benchmarks/coverage_agreement.py [N_EVALUATIONS] [N_RESAMPLES]``
(default 1000 and 400; ``600 200`` took 312 s of CPU on a loaded machine: the mid-p bounds
are found by bisection).
"""

from __future__ import annotations

import sys
import time
from functools import partial

import numpy as np
from agreement_study import joined_interval
from scipy import stats

from evalstats.stats import agreement as ac
from evalstats.stats.agreement import weight_matrix

K = 3
P_LOSS, P_TIE = 0.25, 0.20
TAU_SD = 0.5
TARGETS = (0.0, 0.4, 0.7, 0.85, 0.92, 0.95)
TASKS = (6, 10, 20, 40)
SIZES = ("3 each", "1-6")
W = {
    name: weight_matrix(None if name == "none" else name, K)
    for name in ("none", "linear", "quadratic")
}
TWO_RATER = (
    ("cohen_kappa", "cohen", "none"),
    ("cohen_kappa_quadratic", "cohen", "quadratic"),
    ("cohen_kappa_linear", "cohen", "linear"),
    ("gwet_ac1", "gwet", "none"),
    ("pabak", "bp", "none"),
    ("scott_pi", "scott", "none"),
)
#: The joined methods' rule with other thresholds of effective disagreeing units, other
#: bounds of the observed agreement and other floors of its design effect: name ->
#: (threshold, bound, floor, IID floor) (``floor`` None: the unit disagreement; ``IID
#: floor``: ``floor`` times the IID ratio of the weighted agreement, the default's
#: ``squared``). The rejected candidates stay here with their numbers.
VARIANTS = {
    "cp_below3": (3.0, "clopper_pearson", 1.0, True),
    "cp_below5": (5.0, "clopper_pearson", 1.0, True),
    "cp_always": (np.inf, "clopper_pearson", 1.0, True),
    "midp_below10": (10.0, "mid_p", 1.0, True),
    "wilson_below10": (10.0, "wilson", 1.0, True),
    "blaker_below5": (5.0, "mid_p_blaker", 1.0, True),
    "blaker_always": (np.inf, "mid_p_blaker", 1.0, True),
    # The weighted agreement's design effect (issue 23 item 1; 600 evaluations, 200
    # resamples: over 320 designs x coefficients the default, with the IID floor, covers
    # 0.915-0.990, 58 outside 0.93-0.97; quadratic / linear weights 6 / 6 of 48 outside).
    # The former default, floor 1: 0.925-1.000, 95 outside (quadratic 27, up to 1.000;
    # linear 22, up to 0.995).
    "blaker_floor1": (10.0, "mid_p_blaker", 1.0, False),
    # A floor at the unit disagreement: within 0.001 of the default (mean 0.958, 0.915-0.990,
    # 58): the default keeps the IID ratio, which also sees the far misses observed.
    # Rejected and no longer in cluster_intervals (issue 23's study measured them there): deciding the
    # join on the bound's own effective units, with the unit floor or the IID one, min 0.787
    # (quadratic, kappa 0.95 on 20 tasks), 74 outside (joins too rarely); counting binomial
    # disagreements with the IID floor, 0.915-0.990, 59 (and it moves the former joins).
    "blaker_unit_floor_design": (10.0, "mid_p_blaker", None, False),
}
COLUMNS = ("jackknife_t", *ac.METHODS, *VARIANTS)
MANY = (("fleiss_kappa", "fleiss"), ("krippendorff_nominal", "nominal"))


def _draw(rng, beta, lead, m, judges):
    """Latent scores (judges, *lead, m) of the model above."""
    t = rng.standard_normal((*lead, 1))
    u = rng.standard_normal((*lead, m))
    tau = TAU_SD * rng.standard_normal((judges, *lead, 1))
    eps = rng.logistic(size=(judges, *lead, m))
    return beta * (t + u) + tau + eps


def _population(beta, rng):
    """Cut points and the population 3 x 3 probability table at ``beta``."""
    y = _draw(rng, beta, (200_000,), 10, 2).reshape(2, -1)
    cuts = np.quantile(y[0], [P_LOSS, P_LOSS + P_TIE])
    codes = np.searchsorted(cuts, y)
    table = np.bincount(codes[0] * K + codes[1], minlength=K * K).reshape(K, K)
    return cuts, table / table.sum()


def _truth(table, kind, w):
    return float(ac.coefficient(partial(ac.table_parts, w=w, kind=kind), table.ravel()))


def calibrate(rng):
    """beta for each target Cohen's kappa (bisection on a coarse grid, then interpolation)."""
    grid = np.concatenate([[0.0], np.geomspace(0.05, 40, 24)])
    kap = np.array([_truth(_population(b, rng)[1], "cohen", W["none"]) for b in grid])
    kap[0] = 0.0
    return {t: float(np.interp(t, kap, grid)) for t in TARGETS}


def simulate(rng, beta, cuts, e, c, sizes, judges):
    """Codes (judges, e, c, 6) and the unit mask (e, c, 6)."""
    m = 6 if sizes == "1-6" else 3
    y = _draw(rng, beta, (e, c), m, judges)
    codes = np.searchsorted(cuts, y)
    if sizes == "1-6":
        n = rng.integers(1, 7, size=(e, c, 1))
        mask = np.arange(m) < n
    else:
        mask = np.ones((e, c, m), dtype=bool)
    return codes, mask


def per_cluster_tables(codes, mask):
    e, c, _ = mask.shape
    cl = np.broadcast_to(np.arange(e * c).reshape(e, c, 1), mask.shape)[mask]
    cs = ac.table_cluster_stats(cl, codes[0][mask], codes[1][mask], K, e * c)
    return cs.reshape(e, c, K * K)


def per_cluster_many(codes, mask, kind):
    e, c, _ = mask.shape
    cl = np.broadcast_to(np.arange(e * c).reshape(e, c, 1), mask.shape)[mask]
    counts = (codes[..., None] == np.arange(K)).sum(axis=0)[mask].astype(float)
    if kind == "fleiss":
        cs = ac.multi_cluster_stats(cl, counts, W["none"], e * c)
    else:
        cs = ac.kripp_cluster_stats(cl, counts, e * c)
    return cs.reshape(e, c, -1)


def run(cs, parts, rng, b, unit=1.0, squared=None):
    """Every construction of :data:`COLUMNS` on per-cluster statistics ``cs`` (e, C, d)."""
    res = ac.cluster_intervals(
        cs, parts, n_resamples=b, rng=rng, unit_disagreement=unit, squared=squared
    )
    tq = stats.t.ppf(0.975, cs.shape[-2] - 1.0)  # the raw jackknife t, for comparison
    res.intervals["jackknife_t"] = (res.estimate - tq * res.se, res.estimate + tq * res.se)
    for name, (below, bound, floor, iid) in VARIANTS.items():
        res.intervals[name] = joined_interval(
            cs,
            parts,
            exact_below=below,
            bound=bound,
            deff_floor=min(1.0, unit) if floor is None else floor,
            unit_disagreement=unit,
            squared=squared if iid else None,
        )
    return res


def summarise(res, truth):
    rows = {}
    for name, (lo, hi) in res.intervals.items():
        cover = (lo <= truth + 1e-12) & (truth - 1e-12 <= hi)
        rows[name] = (
            float(np.mean(cover)),
            float(np.nanmean(hi - lo)),
            float(np.mean((lo < -1 - 1e-12) | (hi > 1 + 1e-12))),
            float(np.mean(hi - lo <= 1e-12)),
        )
    return rows


def main(e: int = 1000, b: int = 400) -> None:
    t0 = time.process_time()
    rng = np.random.default_rng(20231)
    betas = calibrate(rng)
    print(f"calibrated beta per target kappa: { {k: round(v, 3) for k, v in betas.items()} }")
    print(
        f"{e} evaluations per design, {b} bootstrap resamples; MC SE of 0.95 ~ "
        f"{np.sqrt(0.95 * 0.05 / e):.4f}\n"
    )
    header = f"{'coefficient':24s} {'kappa':>5s} {'tasks':>5s} {'sizes':>6s} {'truth':>6s} "
    header += " ".join(f"{m[:18]:>18s}" for m in COLUMNS)
    print(header + "   (coverage/width; * = some out of [-1,1], ! = some zero width)")
    summary: dict[str, list[float]] = {m: [] for m in COLUMNS}
    by_design: dict[tuple[float, int, str], list[float]] = {}
    perfect = []
    for target, beta in betas.items():
        cuts, pop = _population(beta, rng)
        for c in TASKS:
            for sizes in SIZES:
                codes, mask = simulate(rng, beta, cuts, e, c, sizes, 2)
                cs = per_cluster_tables(codes, mask)
                tab = cs.sum(axis=1)
                perfect.append(
                    (
                        target,
                        c,
                        sizes,
                        float(
                            np.mean(np.trace(tab.reshape(e, K, K), axis1=1, axis2=2) == tab.sum(-1))
                        ),
                    )
                )
                for name, kind, wname in TWO_RATER:
                    w = W[wname]
                    parts = partial(ac.table_parts, w=w, kind=kind)
                    unit = 1.0 - np.max(w - np.eye(K))
                    res = run(cs, parts, rng, b, unit, ac.table_squared(w))
                    truth = _truth(pop, kind, w)
                    rows = summarise(res, truth)
                    _print(name, target, c, sizes, truth, rows, summary)
                    _collect(by_design, target, c, rows)
    # Three judges: Fleiss' kappa and Krippendorff's alpha (fewer designs).
    for target in (0.0, 0.4, 0.85, 0.95):
        beta = betas[target]
        cuts, pop = _population(beta, rng)
        truth = _truth(pop, "scott", W["none"])
        for c in TASKS:
            codes, mask = simulate(rng, beta, cuts, e, c, "1-6", 3)
            for name, kind in MANY:
                cs = per_cluster_many(codes, mask, kind)
                if kind == "fleiss":
                    parts = partial(ac.multi_parts, w=W["none"], kind="fleiss")
                else:
                    parts = partial(
                        ac.kripp_parts, values=np.arange(K, dtype=float), level="nominal"
                    )
                res = run(cs, parts, rng, b)
                rows = summarise(res, truth)
                _print(name, target, c, "1-6", truth, rows, summary)
                _collect(by_design, target, c, rows)
    print("\nshare of evaluations with perfect observed agreement (two judges):")
    for target, c, sizes, share in perfect:
        if share > 0:
            print(f"  kappa {target:.2f}, {c:2d} tasks, {sizes}: {share:.3f}")
    print("\ncoverage range (min-max over coefficients, task sizes) per kappa x tasks:")
    print(
        f"{'construction':28s} " + " ".join(f"k={t:<4} C={c:<3}" for t in TARGETS for c in (6, 40))
    )
    for m in COLUMNS:
        cells = []
        for t in TARGETS:
            for c in (6, 40):
                v = by_design.get((t, c, m), [])
                cells.append(f"{min(v):.2f}-{max(v):.2f}" if v else "")
        print(f"{m:28s} " + " ".join(f"{x:>11s}" for x in cells))
    print("\nover all designs: mean coverage, min, max, designs outside 0.93-0.97")
    for m, v in summary.items():
        v = np.asarray(v)
        bad = int(np.sum((v < 0.93) | (v > 0.97)))
        print(
            f"  {m:28s} mean {v.mean():.3f}  min {v.min():.3f}  max {v.max():.3f}  "
            f"outside {bad}/{len(v)}"
        )
    print(f"\nCPU {time.process_time() - t0:.0f} s")


def _collect(by_design, target, c, rows):
    for m, (cov, *_) in rows.items():
        by_design.setdefault((target, c, m), []).append(cov)


def _print(name, target, c, sizes, truth, rows, summary):
    cells = []
    for m in COLUMNS:
        cov, width, out, zero = rows[m]
        summary[m].append(cov)
        flag = ("*" if out > 0 else " ") + ("!" if zero > 0 else " ")
        cells.append(f"{cov:.3f}/{width:.2f}{flag}".rjust(18))
    print(
        f"{name:24s} {target:5.2f} {c:5d} {sizes:>6s} {truth:6.3f} " + " ".join(cells), flush=True
    )


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
