"""Exact coverage of the rate intervals at small equal-sized designs, by enumeration.

The battery (:mod:`coverage`) estimates coverage from simulated evaluations; at a design of
``C`` tasks of ``m`` verdicts the sample space is small enough to list. A task's verdicts
are one of the ``(m + 1)(m + 2) / 2`` (win, tie, loss) compositions, with probabilities
from the battery's latent probit model (:mod:`evalstats.stats.models`) integrated
over the task effect by Gauss-Hermite quadrature; tasks are exchangeable, so an evaluation
is a multiset of ``C`` compositions (5,005 at 6 x 3, 24,310 at 8 x 3, 1,961,256 at 10 x 4:
222 CPU s and 2.8 GB with ``--candidates``) with a multinomial probability. Every
multiset is one group of :func:`~evalstats.stats.rates.rate_arrays`, so the coverage of
a method is a probability-weighted sum with no Monte-Carlo error.

Per rate it prints the coverage, the two tails (``below``: the interval lies below the
truth; ``above``: above it), the probability under the truth of the smallest and largest
attainable estimates (an atom above 0.025 at one end means no interval whose error on that
side is at most 0.025 can miss on that side, so its coverage is at least 0.975), and the
coverage of the oracle exact test that knows the true distribution and orders outcomes by
the estimate (each tail the largest set of extreme estimates of probability <= 0.025), and
its mid-p version (an outcome counts half its own probability; not a valid test); ``P(two
smallest)``: the next set an end could exclude. :func:`extreme_atoms` gives the atoms for
any task sizes without enumeration, and :func:`floor_table` the floors the battery prints.
Null designs (net win 0) print the rejection rate of the net-win test (interval excludes 0).

``--candidates`` adds the score constructions issue 23 compared at the +/-0.8 designs (the
default's pieces with one change each; see :func:`candidate_interval`).

The battery's cells outside [0.93, 0.97] (2,000 simulated evaluations, MC SE 0.0049), exact,
``cr2_wilson`` (win, tie, loss, net win = score; ``below`` / ``above`` the two tails; atoms
P(smallest) / P(largest) estimate)::

    design (battery rows)     coverage               below / above                atoms
    8x3 net +.8 (MC .971 .965 .984 .978)
                   .9766 .9682 .9819 .9762  .0234 0 0 .0238 / 0 .0318 .0181 0
                                            P(all wins) .0354, P(no tie) .0934, P(no loss) .3273
    8x3 net -.8    the mirror: .9819 .9682 .9766 .9762
    6x3 ICC .3 (kappa .92 6x3; costs 6x3 x 3: MC win .937-.948, tie .970-.976, loss .974-.980)
                   .9413 .9676 .9772 .9489  .0310 0 0 .0238 / .0276 .0324 .0228 .0273
                                            P(no loss) .0053 (.0313 at ICC .8), P(<= 1) .0306
    10x4 ICC .8 (MC .970 .952 .942 .962)
                   .9678 .9540 .9442 .9596  .0154 .0226 .0379 .0184 / .0169 .0233 .0179 .0220

Verdicts. 8x3 +/-.8, win, loss, net win: floor (the atom beyond 0.025 leaves one tail no
miss, so an interval with <= 0.025 error a side covers >= 0.975; the default is at .9762-
.9819, its reachable tail at .018-.024); the tie rate is in band (.9682: it misses .0318 on
its reachable side, more than 0.025). 6x3 loss: floor once the interval must hold 0.025 a
side up to ICC 0.8 (no losses has probability .0313 > .025 at loss .30 and ICC .8, the same
evidence as at ICC .3, so no valid upper end at no losses is below .30; the default's is .390),
without that, ``P(no loss)`` .0053 is the most the lower tail could take (coverage >= .9697).
6x3 tie and 10x4 win: in band, the battery's values are Monte-Carlo error (40,000
simulated evaluations of costs 6x3 logsd 1.5: .9392 .9658 .9776 .9484; kappa .92 6x3, judge
noise 0.08: .9399 .9670 .9776 .9478). Type-I error of the net-win test, exact: 6x3 .0501,
10x4 ICC .8 .0396.

Non-equal-tailed (:func:`one_sided_where_empty`: where the design cannot reach one side of
``p0`` its test spends ``spend`` on the other; ``--grid``: 228 truths, GRID_*, per size; the
"drop" is how far a variant takes a truth below min(default, 0.95)). ``spend`` 0.05 is not
valid (8x3: tie .9062 at .5 / .05 / .45, ICC .05, a drop of .0438; 108 of 228 ties below
.94; 6x3: loss .9111, a drop of .0389). With the
reach over the whole sample space (the largest lower and smallest upper end of all the
design's evaluations) ``spend`` 0.035 puts 8x3 +.8 at .9671 .9584 .9641 .9664 (-.8 the
mirror) and drops no grid truth at 6x3 (at 8x3 loss by .0027: .05 / .02 / .93, ICC .05),
but leaves 6x3 loss at .9701; 0.0365-0.039 take that to .9701-.9663 and drop loss to .9111
at 6x3, .95 / .02 / .03, ICC .05 (a drop of .0389). The reach of the most extreme outcome
alone (the score ends at Kish's size, known without the sample space) drops truths by up
to .0143 at 0.035 (6x3 net win at .5 / .4 / .1, ICC .05; 8x3 .0116, net win at .7 / .02 /
.28, ICC .3). So no variant is
kept: the one that holds needs every evaluation of the design (1,961,256 at 10x4, beyond
listing at 15x6 or unequal sizes) and was tuned on the designs it fixes, and none brings
6x3 loss into the band. The default itself, on the grid: 8x3 tie .9236 (p_tie .02, ICC
.05; 55 of 228 truths below .94, all at p_tie .02), win .9245 (p_win .02), net win .9241
(ICC .8, net -.45); 6x3 net win .9318 (ICC .8, net -.60); the enumerated battery designs
are all at .9413 or more.

Run: ``.venv/bin/python benchmarks/coverage_exact_rates.py [--candidates] [--designs 6x3]
[--grid]`` (the two 10x4 designs take most of a full run; ``--grid`` about 6 minutes).
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np
import pandas as pd
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

from evalstats.stats.models import latent_thresholds
from evalstats.stats.rates import RATE_NAMES, rate_arrays, segment_sum

#: (name, tasks, verdicts per task, (p_win, p_tie, p_loss), latent ICC). The battery's
#: 8 x 3 designs, its net-win-0 null at 8 x 3, and stress designs of the same size.
DESIGNS = (
    ("8x3 net +.8", 8, 3, (0.85, 0.10, 0.05), 0.3),
    ("8x3 net -.8", 8, 3, (0.05, 0.10, 0.85), 0.3),
    ("8x3 ICC .3", 8, 3, (0.45, 0.25, 0.30), 0.3),
    ("8x3 ICC .05", 8, 3, (0.45, 0.25, 0.30), 0.05),
    ("stress 8x3 net +.8 ICC .8", 8, 3, (0.85, 0.10, 0.05), 0.8),
    ("stress 8x3 net +.8 ICC .05", 8, 3, (0.85, 0.10, 0.05), 0.05),
    ("stress 8x3 win .93", 8, 3, (0.93, 0.05, 0.02), 0.3),
    ("null 8x3 ICC .3", 8, 3, (0.375, 0.25, 0.375), 0.3),
    ("null 8x3 ICC .05", 8, 3, (0.375, 0.25, 0.375), 0.05),
    ("null 8x3 tie .10 (of net +/-.8)", 8, 3, (0.45, 0.10, 0.45), 0.3),
    # The battery's 6-task rate design (kappa .92 6x3 and the 6x3 cost designs) and its null.
    ("6x3 ICC .3", 6, 3, (0.45, 0.25, 0.30), 0.3),
    ("null 6x3 ICC .3", 6, 3, (0.375, 0.25, 0.375), 0.3),
    # 10 x 4 (1,961,256 evaluations each; about a minute): the battery's ICC .8 design.
    ("10x4 ICC .8", 10, 4, (0.45, 0.25, 0.30), 0.8),
    ("null 10x4 ICC .8", 10, 4, (0.375, 0.25, 0.375), 0.8),
)
MAX_CONFIGS = 2_000_000
#: Evaluations per call of rate_arrays (its temporaries grow with the cells of a call).
CHUNK = 100_000


def compositions(m: int) -> np.ndarray:
    """The (win, tie, loss) counts of ``m`` verdicts, one row each."""
    w, t = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    keep = w + t <= m
    return np.stack([w[keep], t[keep], m - w[keep] - t[keep]], axis=1)


def composition_probs(m: int, probs, icc: float, nodes: int = 200) -> tuple:
    """Compositions of one task of ``m`` verdicts and their probabilities under the model.

    Given the task effect ``u`` the verdicts are IID multinomial; the effect is integrated
    out with the probabilists' Gauss-Hermite rule (``nodes`` points, exact far past double
    precision for these smooth integrands).
    """
    _, p_tie, p_loss = probs
    sigma = np.sqrt(icc / (1.0 - icc))
    lo, hi = latent_thresholds(p_tie, p_loss, np.sqrt(1.0 + sigma**2))
    x, wt = special.roots_hermitenorm(nodes)
    u = sigma * x
    pl = stats.norm.cdf(lo - u)
    pt = stats.norm.cdf(hi - u) - pl
    pw = 1.0 - pl - pt
    comp = compositions(m)
    log_coef = special.gammaln(m + 1) - special.gammaln(comp + 1).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_u = np.exp(
            log_coef[:, None]
            + special.xlogy(comp[:, :1], pw)
            + special.xlogy(comp[:, 1:2], pt)
            + special.xlogy(comp[:, 2:], pl)
        )
    return comp, per_u @ (wt / wt.sum())


def extreme_atoms(sizes, probs, icc: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact probabilities of each rate's smallest and largest attainable estimate.

    Any task sizes (no enumeration: the extreme estimate is the extreme count in every
    task, so its probability is a product over tasks). Returns ``(p_min, p_max)`` over
    win, tie, loss, net win, score: no win / all wins, ..., all losses / all wins.
    """
    p_min, p_max = np.ones(len(RATE_NAMES)), np.ones(len(RATE_NAMES))
    for m, count in zip(*np.unique(np.asarray(sizes), return_counts=True), strict=True):
        comp, q = composition_probs(int(m), probs, icc)
        # Per rate, the compositions at its lowest and highest value: net win and score end
        # at all losses and all wins.
        lows = comp[:, [0, 1, 2, 2, 2]] == np.array([0, 0, 0, m, m])
        highs = comp[:, [0, 1, 2, 0, 0]] == m
        p_min *= (q @ lows) ** count
        p_max *= (q @ highs) ** count
    return p_min, p_max


def largest_atom(sizes, probs, icc: float, icc_top: float | None = None) -> np.ndarray:
    """Per rate, the larger of its two end atoms (:func:`extreme_atoms`); with ``icc_top``,
    the largest over ``[icc, icc_top]`` (8 points) at the same rates."""
    iccs = [icc] if icc_top is None or icc_top <= icc else np.linspace(icc, icc_top, 8)
    return np.array([np.maximum(*extreme_atoms(sizes, probs, i)) for i in iccs]).max(axis=0)


def equal_tailed_floor(
    sizes, probs, icc: float, level: float = 0.025, icc_top: float | None = None
) -> np.ndarray:
    """Least coverage of an equal-tailed interval whose error on each side is at most ``level``.

    Where an end's atom (:func:`extreme_atoms`) exceeds ``level``, such an interval cannot
    exclude the truth at that most extreme outcome, nor (its ends monotone in the evidence)
    at any other: that side cannot miss, and the coverage is at least ``1 - level``. NaN
    where both atoms are at most ``level`` (no floor above ``1 - 2 level``). ``icc_top``:
    the interval must also hold ``level`` at the same rates with any ICC up to
    ``icc_top`` (the extreme outcome is the same evidence whatever the ICC), so the
    largest atom over ``[icc, icc_top]`` decides (:func:`largest_atom`).
    """
    return np.where(largest_atom(sizes, probs, icc, icc_top) > level, 1.0 - level, np.nan)


def rate_floors(sizes, probs, icc, judge_noise=0.0, orders=1, icc_top=0.8) -> pd.DataFrame:
    """Per rate of a battery design: ``atom`` and ``atom_icc_top`` (:func:`largest_atom`
    without and with ``icc_top``), ``floor`` and ``floor_icc_top``
    (:func:`equal_tailed_floor`). A judge's noise lowers the ICC its verdicts show; the two
    orders of a blind design are not independent given the task effect, so they get NaN.
    """
    nan = np.full(len(RATE_NAMES), np.nan)
    cols = dict.fromkeys(("atom", "atom_icc_top", "floor", "floor_icc_top"), nan)
    if orders == 1:
        s2 = icc / (1.0 - icc)
        icc = s2 / (1.0 + s2 + judge_noise**2)
        cols = {
            "atom": largest_atom(sizes, probs, icc),
            "atom_icc_top": largest_atom(sizes, probs, icc, icc_top),
            "floor": equal_tailed_floor(sizes, probs, icc),
            "floor_icc_top": equal_tailed_floor(sizes, probs, icc, icc_top=icc_top),
        }
    return pd.DataFrame(cols, index=list(RATE_NAMES))


def floor_table(coverage: pd.DataFrame, designs, icc_top: float = 0.8) -> pd.DataFrame:
    """The battery's coverage beside the floors: one row per (design, rate) with a floor.

    ``coverage``: the default's rows of ``benchmarks/coverage.py``, indexed by design name;
    ``designs``: its :class:`Design` objects. ``floor``: an interval with at most 0.025 error
    on each side covers at least this (the ``atom``, the probability of the most extreme
    estimate, exceeds 0.025); ``floor_icc_top``: the same if it must also hold at any ICC up
    to ``icc_top`` (:func:`rate_floors`).
    """
    rows = []
    for d in designs:
        fl = rate_floors(d.sizes, d.probs, d.icc, d.judge_noise, d.orders, icc_top)
        for rate in RATE_NAMES:
            if np.isfinite(fl.loc[rate, "floor_icc_top"]):
                cov = {"design": d.name, "rate": rate, "coverage": coverage.loc[d.name, rate]}
                rows.append(cov | fl.loc[rate].to_dict())
    return pd.DataFrame(rows)


def print_floors(coverage: pd.DataFrame, designs) -> None:
    """The battery's last table: :func:`floor_table` of its default's rows, if any row."""
    floors = floor_table(coverage, designs)
    if len(floors):
        print(
            "\nequal-tailed floors (exact; floor_icc_top: also valid at any ICC up to 0.8): an"
            " interval erring at most 0.025 on each side covers at least the floor; a cell below"
            " its floor errs more on its reachable side (8x3 tie: exact 0.968)"
        )
        print(floors.round(4).to_string(index=False, na_rep=""))


def enumerate_design(n_tasks: int, m: int, probs, icc: float) -> dict:
    """Every evaluation of ``n_tasks`` exchangeable tasks as cells for :func:`rate_arrays`.

    Returns ``wins``, ``ties``, ``losses``, ``gid`` (cells), ``n_groups`` and ``prob`` (the
    probability of each group: multinomial over the multiset of task compositions).
    """
    comp, q = composition_probs(m, probs, icc)
    k = len(comp)
    n_configs = special.comb(n_tasks + k - 1, n_tasks, exact=True)
    if n_configs > MAX_CONFIGS:
        raise ValueError(f"{n_configs} evaluations to list; at most {MAX_CONFIGS}")
    # Sorted type tuples (a C iterator) are the multisets; their counts give the weights.
    types = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations_with_replacement(range(k), n_tasks)),
        dtype=np.int64,
        count=n_configs * n_tasks,
    ).reshape(n_configs, n_tasks)
    counts = np.zeros((n_configs, k), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n_configs), n_tasks), types.ravel()), 1)
    log_p = special.gammaln(n_tasks + 1) - special.gammaln(counts + 1).sum(axis=1)
    prob = np.exp(log_p + special.xlogy(counts, q).sum(axis=1))
    cells = comp[types.ravel()]
    gid = np.repeat(np.arange(n_configs), n_tasks)
    return {
        "wins": cells[:, 0],
        "ties": cells[:, 1],
        "losses": cells[:, 2],
        "gid": gid,
        "n_groups": n_configs,
        "prob": prob,
    }


def in_chunks(d: dict, fn, size: int = CHUNK):
    """``fn`` of the design's evaluations ``size`` at a time, its arrays joined along groups.

    The cells are group after group (``n_tasks`` each), so a chunk is a slice; ``fn`` takes
    a design dict and returns an array, a tuple of arrays or a dict of arrays (groups first).
    """
    per = len(d["gid"]) // d["n_groups"]
    parts = []
    for a in range(0, d["n_groups"], size):
        b = min(a + size, d["n_groups"])
        sub = {k: d[k][a * per : b * per] for k in ("wins", "ties", "losses")}
        sub |= {"gid": d["gid"][a * per : b * per] - a, "n_groups": b - a, "prob": d["prob"][a:b]}
        parts.append(fn(sub))
    first = parts[0]
    if isinstance(first, dict):
        return {k: np.concatenate([p[k] for p in parts]) for k in first}
    if isinstance(first, tuple):
        return tuple(np.concatenate(col) for col in zip(*parts, strict=True))
    return np.concatenate(parts)


def rates_of(d: dict, method: str = "cr2_wilson") -> dict:
    """rate_arrays' ``est``, ``low`` and ``high`` of every evaluation of ``d`` (in chunks)."""

    def one(sub):
        r = rate_arrays(
            sub["wins"], sub["ties"], sub["losses"], sub["gid"], sub["n_groups"],
            method=method, net_win_test=False,
        )  # fmt: skip
        return {k: r[k] for k in ("est", "low", "high")}

    return in_chunks(d, one)


def truth(probs) -> np.ndarray:
    pw, pt, pl = probs
    return np.array([pw, pt, pl, pw - pl, pw + pt / 2.0])


def exact_coverage(low, high, theta, prob) -> dict[str, np.ndarray]:
    """Coverage and the two tails of each rate: probability-weighted over the groups."""
    return {
        "coverage": prob @ ((low <= theta) & (theta <= high)),
        "below": prob @ (high < theta),
        "above": prob @ (low > theta),
    }


def oracle_tails(est: np.ndarray, prob: np.ndarray, level: float = 0.025) -> dict:
    """Atoms at the extreme estimates and the estimate-ordered exact test's coverage, per rate."""
    out = {"p_min": [], "p_max": [], "oracle": [], "oracle_midp": [], "p_min2": [], "p_max2": []}
    for j in range(est.shape[1]):
        # Every rate here is a multiple of 1 / (2 n): round onto that grid to group ties.
        vals, inv = np.unique(np.round(est[:, j] * 1e9), return_inverse=True)
        pm = np.bincount(inv, weights=prob, minlength=len(vals))
        cdf, sf = np.cumsum(pm), np.cumsum(pm[::-1])
        tails = cdf[cdf <= level].max(initial=0.0) + sf[sf <= level].max(initial=0.0)
        # Mid-p: an outcome is rejected when the mass beyond it plus half its own is <= level.
        low_mid, high_mid = cdf - pm / 2.0 <= level, sf - pm[::-1] / 2.0 <= level
        mid = cdf[low_mid].max(initial=0.0) + sf[high_mid].max(initial=0.0)
        out["p_min"].append(pm[0])
        out["p_max"].append(pm[-1])
        # The two smallest (largest) values together: the next set an end could exclude.
        out["p_min2"].append(pm[:2].sum())
        out["p_max2"].append(pm[-2:].sum())
        out["oracle"].append(1.0 - tails)
        out["oracle_midp"].append(1.0 - mid)
    return {k: np.array(v) for k, v in out.items()}


def _score_pieces(d: dict) -> tuple:
    """The default's pieces on the score scale for net win: est, CR2 SE, n, df, Kish, row var."""
    r = rate_arrays(d["wins"], d["ties"], d["losses"], d["gid"], d["n_groups"], net_win_test=False)
    est, se = r["est"].copy(), r["se"].copy()
    dfs = np.repeat(r["df"][:, None], len(RATE_NAMES), axis=1)
    dfs[:, 3:] = r["net_win_df"][:, None]
    quarter = segment_sum((d["wins"] + 0.25 * d["ties"])[:, None], d["gid"], d["n_groups"])
    rv = est * (1.0 - est)
    rv[:, 4] = np.maximum(quarter[:, 0] / r["n"] - est[:, 4] ** 2, 0.0)
    est[:, 3], se[:, 3], rv[:, 3] = est[:, 4], se[:, 4], rv[:, 4]
    return est, se, r["n"][:, None], dfs, r["n_eff_clusters"][:, None], rv


def candidate_interval(pieces, *, shrink="kg", boundary="kish", kind="wilson", confidence=0.95):
    """A variant of ``cr2_wilson``'s construction (net win's ends on the net-win scale).

    ``shrink``: the factor on ``A = p (1 - p) / SE^2`` — ``"kg"`` (the default,
    ``(t_(n-1) / t_df)^2``), ``"none"``, ``"zt"`` (the former ``(z / t_df)^2``), or
    ``"kg_neff"`` (``(t_(A-1) / t_df)^2``: the IID df at the effective size, not ``n - 1``);
    ``boundary``: the size where ``SE == 0`` — ``"kish"`` (the default) or ``"n"`` (IID);
    ``kind``: ``"wilson"`` (the default), ``"jeffreys"`` or ``"agresti_coull"`` at ``n_eff``.
    With ``shrink="kg"``, ``boundary="kish"``, ``kind="wilson"`` it is the default's interval.
    """
    p, se, n, dfs, kish, rv = pieces
    alpha = 1.0 - confidence
    q = alpha / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.where(se > 0, p * (1 - p) / se**2, kish if boundary == "kish" else n)
        cap = np.where(se > 0, np.inf, np.where(rv > 0, n * p * (1 - p) / rv, n))
        t_df = stats.t.isf(q, np.minimum(dfs, n - 1.0))
        factor = {
            "kg": lambda: (stats.t.isf(q, n - 1.0) / t_df) ** 2,
            "none": lambda: np.ones_like(t_df),
            "zt": lambda: (stats.norm.isf(q) / t_df) ** 2,
            "kg_neff": lambda: np.minimum((stats.t.isf(q, np.maximum(a - 1, 1)) / t_df) ** 2, 1),
        }[shrink]()
        ne = np.minimum(a * np.where(se > 0, factor, 1.0), np.maximum(cap, 0.0))
        if kind == "jeffreys":
            x = p * ne
            low = stats.beta.ppf(q, x + 0.5, ne - x + 0.5)
            high = stats.beta.isf(q, x + 0.5, ne - x + 0.5)
        else:
            low, high = proportion_confint(p * ne, ne, alpha=alpha, method=kind)
    low = np.clip(np.where(p <= 0, 0.0, low), 0.0, 1.0)
    high = np.clip(np.where(p >= 1, 1.0, high), 0.0, 1.0)
    low[:, 3], high[:, 3] = 2.0 * low[:, 3] - 1.0, 2.0 * high[:, 3] - 1.0
    return low, high


CANDIDATES = {
    "no KG factor": {"shrink": "none"},
    "(z/t_df)^2 (former)": {"shrink": "zt"},
    "KG, IID df A-1": {"shrink": "kg_neff"},
    "boundary n (IID)": {"boundary": "n"},
    "Jeffreys at n_eff": {"kind": "jeffreys"},
    "Agresti-Coull at n_eff": {"kind": "agresti_coull"},
}


def one_sided_where_empty(
    pieces, spend: float = 0.05, reach: str = "space"
) -> tuple[np.ndarray, np.ndarray]:
    """The default's ends, one-sided at level ``spend`` (``alpha``) beyond the design's reach.

    Where no evaluation of the design has a lower end above ``p0`` (the largest lower end
    over the enumerated sample space), the test of ``p0`` cannot reject upwards, so it
    spends all of ``alpha`` downwards: the upper end is ``min(U_2.5%, max(p*, U_5%))``, and
    the mirror at the lower end (a Feldman-Cousins-like switch to one-sided near an edge).
    ``spend`` between 0.025 and 0.05 spends only part of the other side's 0.025.
    ``reach="boundary"``: the reach is the ends at the most extreme outcome (no spread: the
    score interval at Kish's size, ``kish / (kish + z^2)``), known without the sample space.
    """
    low2, high2 = candidate_interval(pieces)
    low1, high1 = candidate_interval(pieces, confidence=1.0 - 2.0 * spend)
    for arr in (low2, high2, low1, high1):  # the switch lives on the score scale
        arr[:, 3] = (arr[:, 3] + 1.0) / 2.0
    if reach == "space":
        top, bottom = np.nanmax(low2, axis=0), np.nanmin(high2, axis=0)
    else:
        z2 = stats.norm.isf(0.025) ** 2
        top, bottom = pieces[4] / (pieces[4] + z2), z2 / (pieces[4] + z2)
    high = np.minimum(high2, np.maximum(top, high1))
    low = np.maximum(low2, np.minimum(bottom, low1))
    low[:, 3], high[:, 3] = 2.0 * low[:, 3] - 1.0, 2.0 * high[:, 3] - 1.0
    return low, high


#: The truths of the ``--grid`` study: every (ICC, p_win, p_tie) with p_loss >= 0.015.
GRID_ICC = (0.05, 0.3, 0.6, 0.8)
GRID_WIN = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
GRID_TIE = (0.02, 0.05, 0.1, 0.2, 0.4)


def grid_study(n_tasks: int, variants) -> dict[str, np.ndarray]:
    """Exact coverage (truths x 4 rates) of the default and of each ``(reach, spend)`` of
    :func:`one_sided_where_empty` at every truth of the grid, ``n_tasks`` x 3."""
    grid = [
        (icc, (pw, pt, 1.0 - pw - pt))
        for icc in GRID_ICC
        for pw in GRID_WIN
        for pt in GRID_TIE
        if 1.0 - pw - pt >= 0.015
    ]
    out: dict[str, list] = {"default": [], **{f"{r} {s}": [] for r, s in variants}}
    for icc, probs in grid:
        d = enumerate_design(n_tasks, 3, probs, icc)
        theta, r = truth(probs), rates_of(d)
        out["default"].append(exact_coverage(r["low"], r["high"], theta, d["prob"])["coverage"])
        pieces = in_chunks(d, _score_pieces)
        for reach, spend in variants:
            low, high = one_sided_where_empty(pieces, spend, reach)
            cov = exact_coverage(low, high, theta, d["prob"])["coverage"]
            out[f"{reach} {spend}"].append(cov)
    res = {k: np.array(v)[:, :4] for k, v in out.items()}
    res["truths"] = np.array([(icc, *p) for icc, p in grid])
    return res


def print_grid(n_tasks: int, variants) -> None:
    res = grid_study(n_tasks, variants)
    base, truths = res.pop("default"), res.pop("truths")
    print(f"== grid {n_tasks}x3: {len(truths)} truths (ICC, p_win, p_tie of GRID_*)")
    for label, cov in [("default", base), *res.items()]:
        # How far below min(default, 0.95) a variant takes a truth: 0 if nowhere.
        drop = np.minimum(cov - np.minimum(base, 0.95), 0.0)
        i, j = np.unravel_index(np.argmin(drop), drop.shape)
        print(
            f"  {label:16s} min {np.round(cov.min(axis=0), 4)}  n < .94 {(cov < 0.94).sum(axis=0)}"
            f"  n > .97 {(cov > 0.97).sum(axis=0)}  worst drop {drop.min(axis=0).round(4)}"
            f" (rate {j} at ICC, probs {np.round(truths[i], 3).tolist()})"
        )
        worst = np.unravel_index(np.argmin(cov), cov.shape)
        print(f"    lowest: rate {worst[1]} at {np.round(truths[worst[0]], 3).tolist()}")


def _line(label: str, res: dict, null: bool, theta, low, high, prob) -> str:
    if null:
        rej = prob @ ((low[:, 3] > 0) | (high[:, 3] < 0))
        return f"  {label:24s} type1 {rej:.4f}  coverage {np.round(res['coverage'], 4)}"
    parts = (f"{k} {np.round(res[k][:4], 4)}" for k in ("coverage", "below", "above"))
    return f"  {label:24s} " + "  ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", action="store_true", help="also the rejected variants")
    parser.add_argument("--methods", default="cr2_wilson,cr2_t", help="rate_arrays methods")
    parser.add_argument("--designs", default="", help="substrings of design names")
    parser.add_argument("--grid", action="store_true", help="the truth-grid study (6x3, 8x3)")
    args = parser.parse_args()
    if args.grid:
        for n_tasks in (6, 8):
            variants = [("space", 0.05), ("space", 0.035), ("space", 0.0365), ("boundary", 0.035)]
            print_grid(n_tasks, variants)
        return
    wanted = [w.strip().lower() for w in args.designs.split(",") if w.strip()]
    start = time.process_time()
    print("exact coverage of nominal 95 % intervals (win, tie, loss, net win [, score])")
    for name, n_tasks, m, probs, icc in DESIGNS:
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        d = enumerate_design(n_tasks, m, probs, icc)
        theta, prob, null = truth(probs), d["prob"], name.startswith("null")
        rows = []
        est = None
        for method in args.methods.split(","):
            r = rates_of(d, method)
            est = r["est"]
            res = exact_coverage(r["low"], r["high"], theta, prob)
            rows.append(_line(method, res, null, theta, r["low"], r["high"], prob))
        if args.candidates:
            pieces = in_chunks(d, _score_pieces)
            for label, kw in CANDIDATES.items():
                low, high = candidate_interval(pieces, **kw)
                res = exact_coverage(low, high, theta, prob)
                rows.append(_line(label, res, null, theta, low, high, prob))
            low, high = one_sided_where_empty(pieces)
            res = exact_coverage(low, high, theta, prob)
            rows.append(_line("one-sided beyond reach", res, null, theta, low, high, prob))
        o = oracle_tails(est[:, :4], prob)
        print(f"== {name} ({d['n_groups']} evaluations, total probability {prob.sum():.12f})")
        print(
            f"  P(smallest estimate) {np.round(o['p_min'], 4)}  P(largest) {np.round(o['p_max'], 4)}"
        )
        print(
            f"  P(two smallest) {np.round(o['p_min2'], 4)}  P(two largest) {np.round(o['p_max2'], 4)}"
        )
        print(f"  oracle estimate-ordered exact test: coverage {np.round(o['oracle'], 4)}")
        print(f"  the same, mid-p (not valid): coverage {np.round(o['oracle_midp'], 4)}")
        print("\n".join(rows))
    print(f"CPU {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
