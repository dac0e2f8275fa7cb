"""Task-clustered intervals for every agreement coefficient, in [-1, 1] and honest at kappa = 1.

The units two judges rate come in tasks (several replicates of one task), and agreement on
the units of one task is correlated; the IID Wald intervals of
:mod:`evalstats.stats.agreement` ignore that. :func:`clustered_agreement` resamples
*tasks*: each task's sufficient statistics (its k x k contingency table; for many raters
its sums of pairwise agreements and category shares; for Krippendorff's alpha its
coincidence matrix) are summed without a Python loop over resamples or units
(:mod:`evalstats.stats._agreement_cluster`).

The default interval, ``"atanh_jackknife_midp_blaker"``, is a delete-one-task jackknife
t(C - 1) interval on Fisher's z of the coefficient (``atanh``, back-transformed by ``tanh``,
so it lies in [-1, 1] by construction), the coefficient shrunk by one pseudo-unit of chance
agreement (``n / (n + 1)``) so that perfect agreement has a finite z. Where the data hold
fewer than ten effective disagreeing units the jackknife cannot see how disagreements
spread over tasks (at perfect agreement it has nothing to resample), so the interval is
joined with a binomial one on the observed agreement with the effective number of units
``n / deff`` (``deff`` the jackknife's design effect, at least 1 -- for weighted agreement
at least the IID variance of the per-unit agreement over the binomial one, below -- and 1
at perfect agreement), mapped through the coefficient with the chance agreement at its
estimate: the mid-p bounds that invert Blaker's combined-tails test
(:mod:`evalstats.stats._agreement_bounds`).

Why that bound: at high agreement on few tasks no sample puts the lower end above the
truth (a sample in which every unit agrees is too likely), so an equal-tailed bound wastes
that side's 2.5 % and covers at least 0.975: Clopper-Pearson (the former default,
``"atanh_jackknife_exact"``) covered 0.989 and 0.9925 at kappa 0.92 on 10 and 6 tasks of
``benchmarks/coverage.py`` (2,000 evaluations), the equal-tailed mid-p about 0.98; the
combined tails spend the 5 % on the side that can reject: 0.959 and 0.954 (Cohen's kappa;
AC1 0.9705 and 0.960, PABAK 0.9705 and 0.948). ``benchmarks/coverage_agreement.py`` (kappa
0-0.95, 6-40 tasks, equal and unequal sizes, 1,000 evaluations each) chose it among the raw
jackknife t (which leaves [-1, 1] and is [1, 1] at perfect agreement), the atanh jackknife
alone, the binomial bound alone (too wide: the chance agreement co-moves with the observed
one), the cluster bootstrap percentile (it is [1, 1] at perfect agreement and narrow at few
tasks), other thresholds (3 and 5 fall to 0.82 and 0.87 at kappa 0.95 on 40 tasks; always
joining over-covers) and other bounds (Wilson falls to 0.91 where one disagreement is
likely). Over its 320 designs x coefficients (600 evaluations each, Monte-Carlo SE
0.009) the default covers 0.915-0.990 (mean 0.958; 58 outside 0.93-0.97, against 157 for
the Clopper-Pearson join; the minimum is quadratic-weighted kappa at kappa 0.85 on 40
unequal tasks, where the bound is not joined and the atanh jackknife alone covers 0.915).

Why the weighted floor: a weighted unit's agreement (0, 1/2 or 1 with linear weights on
three categories) varies less than a binomial one, so with the design effect at least 1
the bound took a near miss for a whole disagreement and weighted coefficients over-covered
at high agreement: linear-weighted kappa 0.988 and 0.990 in the two designs above,
quadratic- and linear-weighted kappa 27 and 22 of 48 designs of
``benchmarks/coverage_agreement.py`` outside 0.93-0.97 (up to 1.000). The floor is now the
IID ratio ``(mean a^2 - p_o^2) / (p_o (1 - p_o))`` of the per-unit agreements ``a`` (the
information the observed units show; exactly 1 unweighted, so Cohen's kappa, AC1, PABAK,
Scott's pi, Fleiss' kappa and nominal alpha do not move): linear weights 0.954 and 0.954
in those two designs, quadratic and linear weights 6 and 6 of 48 designs outside the band;
the join is decided as before.
Deciding the join on the bound's new effective units joins too rarely (0.79 for quadratic
weights at kappa 0.95 on 20 tasks, with this floor or a fixed one at the unit
disagreement); decided as before, the fixed floor covers within 0.001 of the IID one in the
study (three categories, few far misses), and the IID ratio is kept because it also sees
the far misses observed, which a fixed floor takes for independent near misses.

What is left: an evaluation with perfect observed agreement is covered by any interval
that is not [1, 1] (up to 62 % of them at kappa 0.95 on 6 tasks), so there coverage stays
above 0.97; where a coefficient is a function of the number of disagreements alone (PABAK
on equal tasks) no interval that depends on that number alone is in 0.93-0.97 at some
designs (kappa 0.92 on 10 x 3 units: accepting up to 3 or up to 4 disagreements covers
0.913 or 0.976; the default, which also sees their spread over tasks, 0.9705);
quadratic-weighted kappa on 6 x 3 units at kappa 0.4 covers 0.925 (0.960 with the floor of
1); and the weighted many-rater coefficients (Gwet's AC2 and Brennan-Prediger of three or
more raters with weights, Krippendorff's ordinal, interval and ratio alpha) keep the floor
of 1: their task sums hold no per-unit squares, and neither study has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from evalstats._tidy import ResultFrame, tidy_frame
from evalstats._validate import check_confidence, check_n_resamples
from evalstats.errors import ParameterError
from evalstats.stats import _agreement_cluster as _ac
from evalstats.stats import _agreement_input as _inp
from evalstats.stats._agreement_estimators import Weights, check_level, weights_name
from evalstats.stats._agreement_estimators import _numeric_matrix as numeric_matrix
from evalstats.stats._agreement_table import COEFFICIENTS
from evalstats.stats._kappa import weight_matrix

__all__ = ["CLUSTERED_COEFFICIENTS", "CLUSTERED_METHODS", "clustered_agreement"]

#: Coefficient name -> (two-rater table kind, many-rater kind); None where there is none.
CLUSTERED_COEFFICIENTS: dict[str, tuple[str | None, str | None]] = {
    "percent_agreement": ("pa", "pa"),
    "cohen_kappa": ("cohen", None),
    "scott_pi": ("scott", "fleiss"),
    "gwet_ac1": ("gwet", "gwet"),
    "pabak": ("bp", "bp"),
    "fleiss_kappa": (None, "fleiss"),
    "krippendorff_alpha": (None, "krippendorff"),
}
#: The interval constructions (see :func:`evalstats.stats._agreement_cluster.cluster_intervals`).
CLUSTERED_METHODS = tuple(m for m in _ac.METHODS if m != "jackknife_t")
DEFAULT_METHOD = "atanh_jackknife_midp_blaker"


def clustered_agreement(
    ratings: Any,
    b: Any = None,
    *,
    clusters: Any,
    coefficient: str | Sequence[str] = "cohen_kappa",
    weights: Weights = None,
    level: str = "nominal",
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: str = DEFAULT_METHOD,
    n_resamples: int = 2000,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Agreement coefficients with task-clustered intervals that stay in [-1, 1].

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), or a units x raters matrix (NaN / None =
        missing).
    b : array-like, optional
        Rater 2's labels of the same units.
    clusters : array-like
        The task (cluster) of each unit, one per row of ``ratings``.
    coefficient : str or sequence of str
        Among :data:`CLUSTERED_COEFFICIENTS`: ``cohen_kappa`` (two raters), ``scott_pi``,
        ``gwet_ac1`` (AC2 with weights), ``pabak`` (Brennan-Prediger), ``percent_agreement``,
        ``fleiss_kappa``, ``krippendorff_alpha``. One row each.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights (as in :func:`evalstats.stats.agreement.cohen_kappa`); not used by
        Fleiss' kappa and Krippendorff's alpha (which uses ``level``).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Krippendorff's level of measurement.
    categories : sequence, optional
        Category set and order (as in :func:`evalstats.stats.agreement.cohen_kappa`).
    confidence : float
    method : str
        Among :data:`CLUSTERED_METHODS`; default ``"atanh_jackknife_midp_blaker"`` (module
        docstring; ``"atanh_jackknife_exact"`` is the former default, with the
        Clopper-Pearson bound). Every one lies in [-1, 1].
    n_resamples : int
        Cluster bootstrap resamples (``"bootstrap_percentile"`` only).
    rng : Generator or int, optional
        Seed of the bootstrap.

    Returns
    -------
    ResultFrame
        One row per coefficient: ``statistic`` (the name the IID functions give it, e.g.
        ``brennan_prediger`` for PABAK), ``estimate`` (equal to the IID function's),
        ``se`` (delete-one-task jackknife SE), ``ci_low``, ``ci_high``, ``p_value`` (t test
        of 0 on the atanh scale), ``df`` (C - 1), ``n`` (units used), ``n_tasks``,
        ``method``, ``confidence`` and ``ci_note`` (perfect or near-perfect agreement, an
        undefined coefficient). ``.diagnostics``: observed and chance agreement, effective
        units, whether the exact bound was joined, weights / level, raters.

    Examples
    --------
    >>> a = ["win", "win", "tie", "loss", "win", "tie", "win", "loss", "win", "win", "tie", "win"]
    >>> b = ["win", "tie", "tie", "loss", "win", "tie", "win", "loss", "win", "win", "loss", "win"]
    >>> tasks = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    >>> res = clustered_agreement(a, b, clusters=tasks, coefficient=["cohen_kappa", "gwet_ac1"])
    >>> res[["statistic", "estimate", "ci_low", "ci_high", "n_tasks"]].round(3)
         statistic  estimate  ci_low  ci_high  n_tasks
    0  cohen_kappa     0.724  -0.059    0.932        4
    1     gwet_ac1     0.762   0.138    0.940        4
    >>> same = clustered_agreement(a, a, clusters=tasks)  # perfect agreement: not [1, 1]
    >>> float(same["estimate"][0]), round(float(same["ci_low"][0]), 3), float(same["ci_high"][0])
    (1.0, 0.612, 1.0)
    """
    names = [coefficient] if isinstance(coefficient, str) else list(coefficient)
    unknown = [c for c in names if c not in CLUSTERED_COEFFICIENTS]
    if unknown or not names:
        raise ParameterError(
            f"coefficient must be among {list(CLUSTERED_COEFFICIENTS)}; got {unknown or names}"
        )
    if method not in CLUSTERED_METHODS:
        raise ParameterError(f"method must be one of {list(CLUSTERED_METHODS)}; got {method!r}")
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    level = check_level(level)
    r = _inp.as_ratings(ratings, b)
    if len(r.columns) < 2:
        raise ParameterError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    cl = clusters.to_numpy() if isinstance(clusters, pd.Series) else np.asarray(clusters)
    if cl.ndim != 1 or len(cl) != len(r.columns[0]):
        raise ParameterError(
            f"clusters needs one task id per unit ({len(r.columns[0])}); got shape {cl.shape}"
        )
    missing = pd.isna(cl)
    if missing.any():
        pos = int(np.flatnonzero(missing)[0])
        raise ParameterError(f"clusters has a missing task id at unit {pos}")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    rows, diags = [], []
    codes: list = []  # the label codes, encoded once for every coefficient that needs them
    for name in names:  # a few coefficients, each one vectorised
        cs, parts, squared, unit, info = _statistics(
            name, r.columns, cl, weights, level, categories, codes
        )
        res = _ac.cluster_intervals(
            cs,
            parts,
            confidence=confidence,
            methods=(method,),
            n_resamples=n_resamples,
            rng=gen,
            unit_disagreement=unit,
            squared=squared,
        )
        lo, hi = res.intervals[method]
        few = bool(res.few) and method in _ac.JOINED
        rows.append(
            {
                "statistic": info["statistic"],
                "estimate": float(res.estimate),
                "se": float(res.se),
                "ci_low": float(lo),
                "ci_high": float(hi),
                "p_value": float(res.p_value),
                "df": float(res.df),
                "n": int(round(float(res.n))),
                "n_tasks": int(cs.shape[0]),
                "method": method,
                "confidence": confidence,
                "ci_note": _note(res, few, method),
            }
        )
        diags.append(
            {
                "statistic": info["statistic"],
                "observed_agreement": float(res.observed),
                "expected_agreement": float(res.expected),
                "n_effective": float(res.n_eff),
                "exact_joined": few,
                "weights": info["weights"],
                "n_raters": len(r.columns),
                "k": info["k"],
            }
        )
    return tidy_frame(pd.DataFrame(rows), diagnostics=pd.DataFrame(diags), extra=["ci_note"])


_BOUND_NAMES = {"clopper_pearson": "Clopper-Pearson", "mid_p_blaker": "mid-p, Blaker's tails"}


def _note(res: _ac.ClusterIntervals, few: bool, method: str) -> str:
    if np.isnan(res.estimate):
        return "undefined: chance agreement is 1 (one category)"
    if res.observed >= 1.0 and (method in _ac.JOINED or method == "exact_agreement"):
        name = _BOUND_NAMES[_ac.JOINED.get(method, "clopper_pearson")]
        return (
            f"perfect observed agreement: the lower bound is a binomial one ({name} on "
            f"{float(res.n_eff):.0f} effective units), not a resampling one"
        )
    if res.observed >= 1.0:
        return "perfect observed agreement"
    if few:
        return "few disagreements: joined with a binomial bound on the observed agreement"
    return ""


def _cluster_codes(cl: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(cl[keep], sort=True)
    if len(uniques) < 2:
        raise ParameterError(
            f"a task-clustered interval needs at least two tasks with rated units; got "
            f"{len(uniques)}"
        )
    return codes.astype(np.int64), len(uniques)


def _statistics(name, columns, cl, weights, level, categories, cache):
    """Per-task statistics, their (p_o, p_e, n) function, the mean squared per-unit agreement
    (``cluster_intervals``' ``squared``, or None) and the unit disagreement."""
    table_kind, multi_kind = CLUSTERED_COEFFICIENTS[name]
    statistic = COEFFICIENTS[name].statistic
    if multi_kind == "krippendorff":
        return _krippendorff(columns, cl, level, statistic)
    if not cache:
        cache.append(_inp.encode(columns, _inp.check_categories(categories)))
    codes, cats = cache[0]
    k = len(cats)
    w = np.eye(k) if name == "fleiss_kappa" else weight_matrix(weights, k)
    # The smallest disagreement that counts as one: weighted near-misses are counted whole.
    gaps = (1.0 - w)[(1.0 - w) > 1e-12]
    unit = float(gaps.min()) if gaps.size else 1.0
    info = {"statistic": statistic, "weights": weights_name(weights), "k": k}
    if len(columns) == 2 and table_kind is not None:
        a, b = codes
        keep = (a >= 0) & (b >= 0)
        if not keep.any():
            raise ParameterError("no unit has labels from both raters")
        g, c = _cluster_codes(cl, keep)
        cs = _ac.table_cluster_stats(g, a[keep], b[keep], k, c)
        parts = partial(_ac.table_parts, w=w, kind=table_kind)
        return cs, parts, _ac.table_squared(w), unit, info
    if multi_kind is None:
        raise ParameterError(f"{name} compares two raters; got {len(columns)}")
    counts = _inp.counts_from_codes(codes, k).astype(float)
    keep = counts.sum(axis=1) > 0
    g, c = _cluster_codes(cl, keep)
    cs = _ac.multi_cluster_stats(g, counts[keep], w, c)
    # No per-unit squares in the many-rater sums: the design effect's floor stays 1.
    return cs, partial(_ac.multi_parts, w=w, kind=multi_kind), None, unit, info


def _krippendorff(columns, cl, level, statistic):
    x = numeric_matrix(columns, level)
    if np.isinf(x).any():
        raise ParameterError("ratings must be finite (use NaN for missing)")
    ok = ~np.isnan(x)
    values, inv = np.unique(x[ok], return_inverse=True)
    q = len(values)
    unit_of = np.broadcast_to(np.arange(x.shape[0])[:, None], x.shape)[ok]
    counts = np.bincount(unit_of * q + inv, minlength=x.shape[0] * q).reshape(-1, q)
    counts = counts.astype(float)
    keep = counts.sum(axis=1) >= 2
    if not keep.any():
        raise ParameterError("no unit has two or more values: alpha is undefined")
    g, c = _cluster_codes(cl, keep)
    cs = _ac.kripp_cluster_stats(g, counts[keep], c)
    parts = partial(_ac.kripp_parts, values=values, level=level)
    n_c = cs[:, : q * q].sum(axis=0).reshape(q, q).sum(axis=1)
    delta = _ac.delta_matrix(values.astype(float), level, n_c)
    off = delta[delta > 0]
    unit = float(off.min() / off.max()) if off.size else 1.0
    info = {"statistic": statistic, "weights": level, "k": q}
    return cs, parts, None, unit, info
