"""Simulated coverage of the default win-rate intervals on the design at hand.

The coverage battery (``benchmarks/coverage.py``) shows that the default interval
(:data:`~evalstats.stats.rates.DEFAULT_METHOD`) covers within [0.93, 0.97] on most
designs but not on all: with 8 tasks of 3 verdicts and a rate near 0 or 1 (net win
+/-0.8) every valid equal-tailed interval over-covers (0.97-0.99), because 24 verdicts
cannot put 2.5 % of evaluations beyond the near end of the range (even the IID Wilson
interval on IID data covers 0.970 at n = 24, p = 0.05). :func:`design_coverage` says so
for the data at hand: it re-simulates THIS design — the same cluster sizes per group,
the estimated win / tie / loss probabilities and the estimated intra-task correlation —
and reports the simulated coverage of the default interval of each rate, with a
``ci_note`` where it falls outside the band.

The simulation model is Dirichlet-multinomial: each task draws its outcome
probabilities from ``Dirichlet(p (1 - rho) / rho)`` (mean ``p``, intra-task correlation
``rho`` of every 0/1 outcome), and its verdicts are multinomial given them. ``rho`` is
the one-way ANOVA estimator, pooled over the three outcomes (under this model they share
one correlation), clipped to [0, 0.99]. Every simulated evaluation of every group is one
group of one :func:`~evalstats.stats.rates.rate_arrays` call: no Python loop over
simulations or rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalstats._schema import OUTCOME_DTYPE, STATUS_DTYPE
from evalstats._validate import check_columns, check_confidence, check_positive_int
from evalstats.errors import ParameterError
from evalstats.stats._design_sums import interval_ends, pooled_icc, simulated_sums
from evalstats.stats.rates import (
    DEFAULT_METHOD,
    RATE_NAMES,
    by_columns,
    category_codes,
    rate_arrays,
)
from evalstats.stats.resample import as_generator

__all__ = ["COVERAGE_BAND", "PER_TASK_LIMIT", "STATISTICS", "design_coverage"]

#: The band a default interval's coverage should fall in at a nominal 95 %.
COVERAGE_BAND = (0.93, 0.97)
_OUTCOMES = ("win", "tie", "loss")
#: What :func:`design_coverage` can simulate the coverage of (``statistic``).
STATISTICS = ("win_rates", "kappa", "cost")
# The options of the kappa and cost simulations beyond the shared ones.
_OPTIONS = {"win_rates": (), "kappa": (), "cost": ("include_no_answer", "world")}
#: Above this many simulated (simulation, task) cells the sums are simulated per size
#: class (:mod:`._design_sums`) instead of task by task (~1 us and ~300 bytes a cell).
PER_TASK_LIMIT = 500_000


def design_coverage(
    frame: pd.DataFrame,
    *,
    statistic: str = "win_rates",
    by: str | Sequence[str] | None = "judge",
    cluster: str = "task_id",
    n_sims: int = 2000,
    confidence: float = 0.95,
    band: tuple[float, float] | None = None,
    rng: np.random.Generator | int | None = 0,
    **options,
) -> pd.DataFrame:
    """Simulated coverage of the default win-rate (or kappa, or cost) intervals on this frame's design.

    Re-simulates each group's design (its tasks and verdicts per task, its estimated
    outcome probabilities and intra-task correlation; see the module docstring) and
    computes how often the default interval of :func:`~evalstats.stats.rates.win_rates`
    holds the true rate. Counted verdicts are the ``ok`` rows (the default
    ``no_answer_as="exclude"`` view).

    ``statistic="kappa"`` and ``statistic="cost"`` do the same for the other two headline
    intervals: they return :func:`~evalstats.stats.design_coverage_kappa` (Cohen's kappa of
    each judge pair) and :func:`~evalstats.stats.design_coverage_cost` (the total cost
    ratios), whose rows and columns are theirs.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``outcome``, the ``cluster`` and ``by`` columns (for
        kappa and cost, the columns those functions read).
    statistic : {"win_rates", "kappa", "cost"}
        Whose default interval is simulated (:data:`STATISTICS`).
    by : str, list of str or None
        Grouping columns, as in :func:`~evalstats.stats.rates.win_rates` (win rates
        only: the kappa rows are per rubric and judge pair, the cost rows per measure).
    cluster : str
        Unit of independence (the task).
    n_sims : int
        Simulated evaluations per group (Monte-Carlo SE of a coverage of 0.95 at 2,000:
        0.005).
    confidence : float
        Nominal level of the intervals.
    band : (float, float), optional
        Coverage band outside which a row gets a ``ci_note``; by default the nominal level
        +/- 0.02 (at 95 %: [0.93, 0.97], :data:`COVERAGE_BAND`): a
        simulated coverage more than 1.96 Monte-Carlo SEs beyond it, so that the noise of
        the check alone rarely flags a design.
    rng : Generator, int or None
        Random source or seed (seeded by default: the same frame gives the same answer).
    **options
        With ``statistic="cost"``: ``world`` and ``include_no_answer`` of
        :func:`~evalstats.stats.design_coverage_cost`; none otherwise.

    Returns
    -------
    DataFrame
        Win rates: one row per group: the ``by`` columns, ``n``, ``n_clusters``, ``icc`` (the
        estimated intra-task correlation), ``<rate>_coverage`` for the five rates,
        ``min_coverage``, ``max_coverage``, ``mc_se`` (Monte-Carlo SE at the nominal
        level), ``in_band`` and ``ci_note`` ("conservative: ..." or "liberal: ...",
        naming the rates outside the band; empty when none is), ``method``,
        ``n_sims``.

    Notes
    -----
    Designs with more than :data:`PER_TASK_LIMIT` simulated (simulation, task) cells
    simulate, per size class, only the sums the interval needs (:mod:`._design_sums`;
    exact in distribution, another random stream): 10^6 verdicts take seconds, not a
    minute and 13 GB. The kappa simulation draws its two sums from 1,000 tasks
    (:mod:`._design_kappa_sums`, asymptotically exact), the cost simulation its task
    totals with the interval computed from their logs (:mod:`._design_cost_ends`).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats import design_coverage
    >>> frame = pd.DataFrame({
    ...     "task_id": [t for t in range(8) for _ in range(3)], "judge": "j",
    ...     "status": "ok", "outcome": ["win"] * 20 + ["tie", "loss", "win", "win"],
    ... })
    >>> cov = design_coverage(frame, n_sims=400)
    >>> int(cov["n_clusters"].iloc[0]), bool(cov["in_band"].iloc[0])
    (8, False)
    >>> cov["ci_note"].iloc[0].startswith("conservative: simulated coverage")
    True
    >>> tokens = frame.assign(replicate=[1, 2, 3] * 8, tokens_with=[900, 1100, 700] * 8,
    ...                       tokens_without=[1000, 1200, 900] * 8, wall_with_s=9.0,
    ...                       wall_without_s=10.0)
    >>> design_coverage(tokens, statistic="cost", n_sims=100)["statistic"].tolist()
    ['tokens_total_ratio', 'wall_total_ratio']
    """
    if statistic not in STATISTICS:
        raise ParameterError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    unknown = sorted(set(options) - set(_OPTIONS[statistic]))
    if unknown:
        raise ParameterError(f"design_coverage(statistic={statistic!r}) takes no {unknown}")
    if statistic != "win_rates":
        from evalstats.stats import _design_coverage_more as more

        fn = more.design_coverage_kappa if statistic == "kappa" else more.design_coverage_cost
        shared = {"n_sims": n_sims, "confidence": confidence, "band": band, "rng": rng}
        return fn(frame, cluster=cluster, **shared, **options)
    by_cols = by_columns(by)
    check_columns(frame, [*by_cols, cluster, "status", "outcome"])
    n_sims = check_positive_int(n_sims, "n_sims")
    confidence = check_confidence(confidence)
    gen = as_generator(rng)
    # Codes, not strings compared row by row: a million-verdict frame is read once.
    ok = category_codes(frame["status"], STATUS_DTYPE) == STATUS_DTYPE.categories.get_loc("ok")
    sub = frame.loc[ok, [*by_cols, cluster]].copy()
    outcome = category_codes(frame["outcome"], OUTCOME_DTYPE)[ok]
    for name in _OUTCOMES:
        sub[name] = (outcome == OUTCOME_DTYPE.categories.get_loc(name)).astype(np.int64)
    keys = [*by_cols, cluster]
    cells = sub.groupby(keys, observed=True, sort=True, dropna=False)[list(_OUTCOMES)].sum()
    cells = cells.reset_index()
    if by_cols:
        groups = cells[by_cols].drop_duplicates().reset_index(drop=True)
        gid = cells[by_cols].merge(groups.assign(_g=np.arange(len(groups))), on=by_cols)["_g"]
        gid = gid.to_numpy(np.int64)
    else:
        groups = pd.DataFrame(index=pd.RangeIndex(1))
        gid = np.zeros(len(cells), dtype=np.int64)
    n_groups = len(groups)
    counts = cells[list(_OUTCOMES)].to_numpy(np.int64)
    m = counts.sum(axis=1)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    probs = (
        np.stack([np.bincount(gid, weights=counts[:, k], minlength=n_groups) for k in range(3)], 1)
        / n[:, None]
    )
    rho = pooled_icc(counts, gid, n_groups)

    if n_sims * len(m) > PER_TASK_LIMIT:
        # A large design: its sums simulated per size class (exact in distribution).
        sums = simulated_sums(counts, gid, n_groups, probs, rho, n_sims, gen)
        low, high = interval_ends(sums, probs, n_groups, confidence)
    else:
        low, high = _per_task_ends(counts, m, gid, n_groups, probs, rho, n_sims, confidence, gen)
    pw, pt, pl = probs.T
    truth = np.stack([pw, pt, pl, pw - pl, pw + pt / 2.0], axis=1)  # (groups, 5)
    cover = ((low <= truth + 1e-12) & (truth - 1e-12 <= high)).mean(axis=0)  # (groups, 5)
    cover = np.where(np.isfinite(truth), cover, np.nan)

    out = groups.copy()
    out["n"] = n.astype(np.int64)
    out["n_clusters"] = np.bincount(gid, minlength=n_groups).astype(np.int64)
    out["icc"] = rho
    for j, name in enumerate(RATE_NAMES):
        out[f"{name}_coverage"] = cover[:, j]
    with np.errstate(invalid="ignore"):
        out["min_coverage"] = np.nanmin(np.where(np.isnan(cover), np.inf, cover), axis=1)
        out["max_coverage"] = np.nanmax(np.where(np.isnan(cover), -np.inf, cover), axis=1)
    out["mc_se"] = float(np.sqrt(confidence * (1.0 - confidence) / n_sims))
    # Outside the band beyond the simulation's own error (1.96 Monte-Carlo SEs), so that a
    # design at the nominal level is not flagged for the noise of its check.
    tol = 1.96 * np.sqrt(np.clip(cover * (1.0 - cover), 1e-4, None) / n_sims)
    # The band is the battery's [0.93, 0.97] at 95 %, i.e. the nominal level +/- 0.02.
    lo_band, hi_band = band if band is not None else (confidence - 0.02, confidence + 0.02)
    above = cover - tol > hi_band
    below = cover + tol < lo_band
    out["in_band"] = ~(above | below).any(axis=1)
    out["ci_note"] = [
        _note(cover[g], above[g], below[g], int(out["n_clusters"].iloc[g])) for g in range(n_groups)
    ]
    out["method"] = DEFAULT_METHOD
    out["n_sims"] = n_sims
    return out


def _per_task_ends(counts, m, gid, n_groups, probs, rho, n_sims, confidence, gen):
    """(n_sims, groups, 5) interval ends from every simulated (simulation, task) cell."""
    # Task probabilities ~ Dirichlet(p (1 - rho) / rho), as normalised gammas; rho = 0
    # gives every task the group's probabilities.
    with np.errstate(divide="ignore", invalid="ignore"):
        conc = np.where(rho > 0, (1.0 - rho) / rho, np.inf)
    shape = probs[gid] * np.where(np.isfinite(conc), conc, 1.0)[gid, None]
    draws = gen.gamma(np.broadcast_to(shape, (n_sims, *shape.shape)))
    with np.errstate(invalid="ignore", divide="ignore"):
        task_p = draws / draws.sum(axis=2, keepdims=True)
    task_p = np.where(np.isfinite(conc)[gid, None], task_p, probs[gid])
    task_p = np.where(np.isfinite(task_p), task_p, probs[gid])  # all-zero gamma draws
    sim = gen.multinomial(np.broadcast_to(m, (n_sims, len(m))), task_p)  # (sims, cells, 3)

    sim_gid = (np.arange(n_sims)[:, None] * n_groups + gid[None, :]).ravel()
    res = rate_arrays(
        sim[..., 0].ravel(),
        sim[..., 1].ravel(),
        sim[..., 2].ravel(),
        sim_gid,
        n_sims * n_groups,
        confidence=confidence,
        net_win_test=False,  # coverage needs the intervals only
    )
    low = res["low"].reshape(n_sims, n_groups, len(RATE_NAMES))
    high = res["high"].reshape(n_sims, n_groups, len(RATE_NAMES))
    return low, high


def _note(cover: np.ndarray, above: np.ndarray, below: np.ndarray, n_clusters: int) -> str:
    """``ci_note`` text for one group (a handful of groups: a loop over them is cheap)."""
    parts = []
    for label, mask in (("conservative", above), ("liberal", below)):
        if not mask.any():
            continue
        names = [f"{RATE_NAMES[j]} {cover[j]:.2f}" for j in np.flatnonzero(mask)]
        worst = cover[mask].max() if label == "conservative" else cover[mask].min()
        parts.append(
            f"{label}: simulated coverage {worst:.2f} for {n_clusters} tasks ({', '.join(names)})"
        )
    return "; ".join(parts)
