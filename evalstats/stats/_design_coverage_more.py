"""Simulated coverage of the kappa and cost intervals on the design at hand.

The companions of :func:`~evalstats.stats.design_coverage` (the win rates) for the other
two headline intervals, each re-simulating THIS design and asking how often its default
interval holds the truth of the simulated world:

* :func:`design_coverage_kappa`: Cohen's kappa of each pair of judges with
  :func:`~evalstats.stats.judge_agreement`'s task-clustered interval
  (``atanh_jackknife_midp_blaker``). Each task keeps its number of units (pairs both judges
  judged ``ok``); its 3 x 3 table of (judge A, judge B) verdicts is
  Dirichlet-multinomial with the pooled table's cell probabilities and the pooled ANOVA
  intra-task correlation of the nine cells, as the win rates' model. The truth is the
  kappa of the pooled cell probabilities (what the pooled estimator estimates).
* :func:`design_coverage_cost`: the WITH / WITHOUT total ratio (tokens and wall-clock)
  with :func:`~evalstats.stats.cost_ratios`' default interval (the generalized pivotal
  interval on the task totals, widened to CR2 where the model check fires), in one of
  two worlds (``world``):

  - ``"lognormal"`` (default): as many tasks as the data hold, with (log WITH, log
    WITHOUT) task totals bivariate normal at the observed mean and covariance; the truth
    is that model's ``log(E[x] / E[y]) = mu_d + sigma_ds / 2``. The parametric world, as
    the win rates' Dirichlet-multinomial is: it measures the interval at this number of
    tasks and this spread, when the pivot's model holds.
  - ``"tasks"``: the observed tasks themselves, drawn with replacement; the truth is the
    observed ratio of totals. No model is assumed, so skew and outlier tasks are in the
    world as they are in the data. It is biased against the pivot even on lognormal
    data: the pivot centres on the lognormal functional of the resampled tasks, which
    misses the resampling world's plain ratio of means by the data's own model misfit
    (at 40 lognormal tasks it gave 0.89-0.91 where the lognormal world gives ~0.95).
    Read it as a stress test, not as the coverage.

Simulations are arrays over (simulation, task) in chunks of simulations: no Python loop
over simulations, tasks or units. At 10^6 verdicts (10,000 tasks) each takes about a
second or two, not a minute: from 1,000 tasks (and 100 effective units in every occurring
cell) the kappa simulation draws each evaluation's summed table and task scatter matrix
instead of its tasks (:mod:`._design_kappa_sums`: asymptotically exact, checked against
the task-by-task draw), and the cost simulation computes ``cost_ratios``' interval from
the drawn log totals with less work (:mod:`._design_cost_ends`: the same interval, held
to :func:`total_ratio_ends` at 1e-12), its measures sharing their normal draws.
"""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._validate import check_columns, check_confidence, check_positive_int
from evalstats.errors import ParameterError
from evalstats.stats import _design_kappa_sums as _ks
from evalstats.stats import agreement as _ac
from evalstats.stats._cost_intervals import (
    _SHAPIRO_MAX,
    GPQ_HULL_METHOD,
    GPQ_METHOD,
    LOGNORMAL_CHECK_ALPHA,
    pivot_hull_ends,
)
from evalstats.stats._design_cost_ends import _buf, ends_from_logs
from evalstats.stats._design_sums import pooled_icc
from evalstats.stats._missing_rule import category_codes
from evalstats.stats._token_source import choose_token_source
from evalstats.stats.agreement import DEFAULT_METHOD as KAPPA_METHOD
from evalstats.stats.resample import as_generator
from evalstats.stats.spend import MEASURES, pair_costs

__all__ = ["design_coverage_cost", "design_coverage_kappa"]

_K = 3
_CHUNK = 2**22  # array elements a chunk of simulations holds at once (~32 MB of float64)
_COST_CHUNK = 2**21
#: The simulated worlds of :func:`design_coverage_cost`.
WORLDS = ("lognormal", "tasks")
_COHEN = partial(_ac.table_parts, w=np.eye(_K), kind="cohen")


def _band(cover, n_sims, confidence, band):
    """Outside the band beyond 1.96 Monte-Carlo SEs (as design_coverage): above, below."""
    tol = 1.96 * np.sqrt(np.clip(cover * (1.0 - cover), 1e-4, None) / n_sims)
    lo_band, hi_band = band if band is not None else (confidence - 0.02, confidence + 0.02)
    return cover - tol > hi_band, cover + tol < lo_band


def _note(cover: float, above: bool, below: bool, n_clusters: int, what: str) -> str:
    if not (above or below):
        return ""
    label = "conservative" if above else "liberal"
    return f"{label}: simulated coverage {cover:.2f} for {n_clusters} tasks ({what})"


def _finish(rows: list[dict], n_sims: int, confidence: float, band, labels) -> pd.DataFrame:
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    cover = out["coverage"].to_numpy(dtype=float)
    above, below = _band(cover, n_sims, confidence, band)
    out["mc_se"] = float(np.sqrt(confidence * (1.0 - confidence) / n_sims))
    out["in_band"] = ~(above | below)
    out["ci_note"] = [
        _note(c, a, b, n, f"{s} {c:.2f}") if np.isfinite(c) else why
        for c, a, b, n, s, why in zip(
            cover, above, below, out["n_clusters"], labels, out.pop("_why"), strict=True
        )
    ]
    out["n_sims"] = n_sims
    return out


# --------------------------------------------------------------------------------- kappa


def kappa_ends(tables: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa's default task-clustered interval of many data sets, (..., C, 9)
    per-task tables: what :func:`~evalstats.stats.judge_agreement` reports."""
    res = _ac.cluster_intervals(
        tables, _COHEN, confidence=confidence, methods=(KAPPA_METHOD,), unit_disagreement=1.0
    )
    return res.intervals[KAPPA_METHOD]


def kappa_coverage_of_tables(
    tables: np.ndarray, n_sims: int, confidence: float, gen: np.random.Generator
) -> tuple[float, float, float, float]:
    """(truth, estimate, icc, coverage) of the kappa interval for per-task tables (C, 9)."""
    m = np.rint(tables.sum(axis=1)).astype(np.int64)
    n = m.sum()
    probs = tables.sum(axis=0) / n
    rho = float(pooled_icc(tables, np.zeros(len(m), dtype=np.int64), 1)[0])
    truth = float(_ac.coefficient(_COHEN, probs))
    estimate = float(_ac.coefficient(_COHEN, tables.sum(axis=0)))
    if not np.isfinite(truth) or len(m) < 2:
        return truth, estimate, rho, np.nan
    if _ks.use_sums(m, probs, rho):  # a large design: its two sums drawn (_design_kappa_sums)
        return (
            truth,
            estimate,
            rho,
            _ks.sums_coverage(m, probs, rho, truth, n_sims, confidence, gen),
        )
    conc = (1.0 - rho) / rho if rho > 0 else np.inf
    step = max(1, _CHUNK // (4 * _K * _K * len(m)))
    hits = 0
    for s in range(0, n_sims, step):  # chunks bound the memory; each chunk is one array
        k = min(step, n_sims - s)
        if np.isfinite(conc):
            draws = gen.gamma(np.broadcast_to(probs * conc, (k, len(m), _K * _K)))
            with np.errstate(invalid="ignore", divide="ignore"):
                task_p = draws / draws.sum(axis=2, keepdims=True)
            task_p = np.where(np.isfinite(task_p), task_p, probs)
        else:
            task_p = np.broadcast_to(probs, (k, len(m), _K * _K))
        lo, hi = kappa_ends(gen.multinomial(np.broadcast_to(m, (k, len(m))), task_p), confidence)
        hits += int(np.sum((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
    return truth, estimate, rho, hits / n_sims


def design_coverage_kappa(
    frame: pd.DataFrame,
    *,
    cluster: str = "task_id",
    n_sims: int = 2000,
    confidence: float = 0.95,
    band: tuple[float, float] | None = None,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    """Simulated coverage of the task-clustered kappa interval on this frame's design.

    For every rubric and pair of judges, the units both judged ``ok`` (as
    :func:`~evalstats.stats.judge_agreement` pairs them) are re-simulated task by task
    (module docstring) and Cohen's kappa's default interval is computed on each simulated
    evaluation. Also ``design_coverage(frame, statistic="kappa")``.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``rubric``, ``judge``, ``task_id``, ``replicate``, ``status``,
        ``outcome`` (and ``order`` on the blind rubric).
    cluster, n_sims, confidence, band, rng
        As in :func:`~evalstats.stats.design_coverage`.

    Returns
    -------
    DataFrame
        One row per (rubric, judge pair): ``rubric``, ``judge_a``, ``judge_b``, ``n``
        (units), ``n_clusters``, ``icc`` (of the nine cells), ``estimate`` (the data's
        kappa), ``truth`` (the simulated world's), ``coverage``, ``mc_se``, ``in_band``,
        ``ci_note``, ``method``, ``n_sims``.

    Notes
    -----
    A pair with at least :data:`~._design_kappa_sums.CLT_TASKS` (1,000) tasks and at
    least :data:`~._design_kappa_sums.CLT_CELL_COUNT` (100) effective units expected in
    every cell that occurs draws each simulated evaluation's summed table (normal) and
    task scatter (Wishart per task size) instead of its tasks, and takes the jackknife
    from them: the coverage is off by ``O(1 / C)``, below 0.001 there, and the draw is
    another random stream (:mod:`._design_kappa_sums`).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats import design_coverage_kappa
    >>> a = ["win", "win", "tie", "loss", "win", "loss"] * 4
    >>> b = ["win", "tie", "tie", "loss", "win", "loss"] * 4
    >>> rows = [{"rubric": "r", "judge": j, "task_id": i // 3, "replicate": i % 3,
    ...          "status": "ok", "outcome": o} for j, out in (("A", a), ("B", b))
    ...         for i, o in enumerate(out)]
    >>> cov = design_coverage_kappa(pd.DataFrame(rows), n_sims=200)
    >>> r = cov.iloc[0]
    >>> r["judge_a"], r["judge_b"], int(r["n"]), int(r["n_clusters"]), round(float(r["estimate"]), 4)
    ('A', 'B', 24, 8, 0.75)
    """
    from evalstats.frames import wide_by_judge

    check_columns(frame, ["rubric", "judge", cluster, "replicate", "status", "outcome"])
    n_sims = check_positive_int(n_sims, "n_sims")
    confidence = check_confidence(confidence)
    gen = as_generator(rng)
    ok_code = category_codes(frame["status"], pd.CategoricalDtype(["ok"]))
    ok = frame.assign(outcome=frame["outcome"].where(ok_code == 0))
    if "order" not in ok.columns:  # a frame of one order: the units are (task, replicate)
        ok = ok.assign(order=pd.NA)
    rows = []
    for rubric in sorted(frame["rubric"].astype(str).unique()):  # a few rubrics
        wide = wide_by_judge(ok, rubric=rubric)
        keys = {"task_id", "replicate", "order"}
        judges = sorted(c for c in wide.columns if c not in keys)
        task_codes = pd.factorize(wide[cluster], sort=True)[0].astype(np.int64)
        for ja, jb in itertools.combinations(judges, 2):  # judge pairs, each vectorised
            a, b = (_outcome_codes(wide[j]) for j in (ja, jb))
            both = (a >= 0) & (b >= 0)
            g, n_c = _recode(task_codes[both])
            tables = _ac.table_cluster_stats(g, a[both], b[both], _K, n_c)
            row = {"rubric": rubric, "judge_a": ja, "judge_b": jb, "n": int(both.sum())}
            row["n_clusters"] = n_c
            if n_c < 2:
                row |= {"icc": np.nan, "estimate": np.nan, "truth": np.nan, "coverage": np.nan}
                rows.append(row | {"_why": "fewer than two tasks: no interval"})
                continue
            truth, est, icc, cover = kappa_coverage_of_tables(tables, n_sims, confidence, gen)
            why = "" if np.isfinite(cover) else "kappa undefined (one category)"
            rows.append(
                row | {"icc": icc, "estimate": est, "truth": truth, "coverage": cover, "_why": why}
            )
    out = _finish(rows, n_sims, confidence, band, ["kappa"] * len(rows))
    if not out.empty:
        out.insert(out.columns.get_loc("n_sims"), "method", KAPPA_METHOD)
    return out


def _outcome_codes(col: pd.Series) -> np.ndarray:
    from evalstats._schema import OUTCOME_DTYPE

    return category_codes(col, OUTCOME_DTYPE).astype(np.int64)


def _recode(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Consecutive codes of the tasks present, and how many there are."""
    present, inv = np.unique(codes, return_inverse=True)
    return inv.reshape(-1).astype(np.int64), len(present)


# ---------------------------------------------------------------------------------- cost


def total_ratio_ends(x: np.ndarray, y: np.ndarray, confidence: float) -> tuple:
    """``cost_ratios``' default total-ratio interval (log scale) of many data sets at once.

    ``x``, ``y``: (..., C) positive task totals, one value per task. First the lognormal
    model check ``cost_ratios`` runs on data without replicate runs (Shapiro-Wilk on the task
    log ratios, at least 3 tasks; D'Agostino-Pearson above 5,000 tasks, as ``cost_ratios``
    tests above 5,000 values): where it rejects, the CR2 t(Bell-McCaffrey df) interval.
    Elsewhere the generalized pivotal interval; where the plain log ratio falls outside the
    pivot's 95 % interval, its hull with the CR2 interval; where the pivot has no spread, CR2
    alone. (On data with replicate runs ``cost_ratios`` tests the runs' within-task residuals,
    which task totals do not hold: the simulation then applies the task-level check.)
    Returns ``(low, high, log_estimate, model_rejected)``, the last where either check fired.
    """
    ends = pivot_hull_ends(x, y, confidence)
    lo, hi, log_est, se, q = ends.low, ends.high, ends.log_estimate, ends.cr2_se, ends.cr2_q
    switched = np.zeros(log_est.shape, dtype=bool)
    if x.shape[-1] >= 3:
        d = np.log(x) - np.log(y)
        spread = np.ptp(d, axis=-1) > 1e-12 * np.maximum(1.0, np.abs(d).max(axis=-1))
        with np.errstate(invalid="ignore"):
            test = stats.normaltest if d.shape[-1] > _SHAPIRO_MAX else stats.shapiro
            p = test(np.where(spread[..., None], d, 0.0), axis=-1).pvalue
        switched = spread & (p < LOGNORMAL_CHECK_ALPHA) & np.isfinite(q)
    lo = np.where(switched, log_est - q * se, lo)
    hi = np.where(switched, log_est + q * se, hi)
    return lo, hi, log_est, ends.widened | switched


def design_coverage_cost(
    frame: pd.DataFrame,
    *,
    cluster: str = "task_id",
    include_no_answer: bool = True,
    world: str = "lognormal",
    n_sims: int = 2000,
    confidence: float = 0.95,
    band: tuple[float, float] | None = None,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    """Simulated coverage of the default total-ratio cost intervals on this frame's tasks.

    Each simulated evaluation draws as many task totals (WITH, WITHOUT) as the data
    hold, from a bivariate lognormal fitted to them or from the tasks themselves
    (``world``, module docstring), and computes :func:`~evalstats.stats.cost_ratios`'
    default interval of the total ratio. Token totals are those ``cost_ratios`` uses
    (billed before transcript). Also ``design_coverage(frame, statistic="cost")``.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``task_id``, ``replicate``, ``status`` and the token and
        wall-clock columns.
    include_no_answer : bool
        As in :func:`~evalstats.stats.cost_ratios`.
    world : {"lognormal", "tasks"}
        The simulated world: the fitted bivariate lognormal, or the observed tasks
        resampled (a stress test biased against the pivot; module docstring).
    cluster, n_sims, confidence, band, rng
        As in :func:`~evalstats.stats.design_coverage`.

    Returns
    -------
    DataFrame
        One row per total ratio (``statistic``: ``tokens_total_ratio``,
        ``wall_total_ratio``): ``n_clusters``, ``estimate`` (the observed ratio),
        ``truth`` (the simulated world's ratio), ``coverage``, ``model_rejected`` (share of simulated
        evaluations whose model check widened the interval), ``mc_se``, ``in_band``,
        ``ci_note``, ``method``, ``n_sims``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats import design_coverage_cost
    >>> frame = pd.DataFrame({
    ...     "task_id": list("abcdefgh"), "replicate": 1, "status": "ok",
    ...     "tokens_with": [800, 900, 1500, 1200, 300, 500, 700, 2000],
    ...     "tokens_without": [1000, 1000, 2000, 1000, 600, 400, 900, 2500],
    ...     "wall_with_s": 10.0, "wall_without_s": 12.0})
    >>> cov = design_coverage_cost(frame, n_sims=200)
    >>> r = cov.iloc[0]
    >>> r["statistic"], int(r["n_clusters"]), round(float(r["estimate"]), 4)
    ('tokens_total_ratio', 8, 0.8404)
    """
    if world not in WORLDS:
        raise ParameterError(f"world must be one of {WORLDS}, got {world!r}")
    n_sims = check_positive_int(n_sims, "n_sims")
    confidence = check_confidence(confidence)
    gen = as_generator(rng)
    pairs = pair_costs(
        choose_token_source(frame).frame, cluster=cluster, include_no_answer=include_no_answer
    )
    rows, worlds = [], []
    for measure, (col_with, col_without) in MEASURES.items():  # tokens, wall-clock
        x = pairs[col_with].to_numpy(dtype=float)
        y = pairs[col_without].to_numpy(dtype=float)
        both = ~(np.isnan(x) | np.isnan(y))
        g, n_c = _recode(pairs["_cluster_code"].to_numpy()[both])
        tx, ty = np.bincount(g, x[both], n_c), np.bincount(g, y[both], n_c)
        row = {"statistic": f"{measure}_total_ratio", "n_clusters": n_c}
        if n_c < 3 or not (np.all(tx > 0) and np.all(ty > 0)):
            why = "fewer than 3 tasks or a task total of 0: the interval is CR2, not simulated here"
            nan = dict.fromkeys(("estimate", "truth", "coverage", "model_rejected"), np.nan)
            rows.append(row | nan | {"_why": why})
            continue
        estimate = float(tx.sum() / ty.sum())
        logs = np.log(np.column_stack([tx, ty]))
        mu, cov = logs.mean(axis=0), np.cov(logs, rowvar=False)
        if world == "tasks":
            truth = float(np.log(estimate))
        else:  # log E[x] - log E[y] of the fitted bivariate lognormal
            truth = float(mu[0] + cov[0, 0] / 2.0 - mu[1] - cov[1, 1] / 2.0)
        # The covariance's square root (eigen, not Cholesky: a singular one is allowed).
        val, vec = np.linalg.eigh(cov)
        root = vec * np.sqrt(np.clip(val, 0.0, None))
        rows.append(row | {"estimate": estimate, "truth": float(np.exp(truth)), "_why": ""})
        worlds.append((len(rows) - 1, n_c, logs, mu, root, truth))
    for i, hits, rejected in _simulate_cost(worlds, world, n_sims, confidence, gen):
        rows[i] |= {"coverage": hits / n_sims, "model_rejected": rejected / n_sims}
    out = _finish(rows, n_sims, confidence, band, [r["statistic"] for r in rows])
    if not out.empty:
        method = (
            f"{GPQ_METHOD}; CR2 where the lognormal check rejects, {GPQ_HULL_METHOD} where "
            "the pivot's own check fires"
        )
        out.insert(out.columns.get_loc("n_sims"), "method", method)
    return out


def _simulate_cost(worlds, world, n_sims, confidence, gen):
    """(row, hits, rejected) of each measure's world, simulated in chunks of simulations.

    In the lognormal world the measures share their standard normal draws (the first
    ``n_c`` tasks' of one array): each measure's simulated evaluations are as they would
    be alone, and the draws, the dearest step, are made once.
    """
    if not worlds:
        return []
    n_max = max(w[1] for w in worlds)
    counts = np.zeros((len(worlds), 2), dtype=np.int64)
    # Small chunks: the dozen arrays of one stay in the cache.
    step = max(1, _COST_CHUNK // (8 * n_max + 8192))
    work: list[dict] = [{} for _ in worlds]  # each measure's scratch, reused by every chunk
    for s in range(0, n_sims, step):  # chunks bound the memory; each chunk is one array
        k = min(step, n_sims - s)
        if world == "lognormal":
            z = _buf(work[0], "z", (2, k, n_max))
            gen.standard_normal(out=z)
        for j, (_, n_c, logs, mu, root, truth) in enumerate(worlds):
            lx, ly = _buf(work[j], "lx", (k, n_c)), _buf(work[j], "ly", (k, n_c))
            if world == "tasks":
                pick = gen.integers(0, n_c, size=(k, n_c))
                np.take(logs[:, 0], pick, out=lx)
                np.take(logs[:, 1], pick, out=ly)
            else:  # mu + root z, into the scratch arrays
                z0, z1, tmp = z[0, :, :n_c], z[1, :, :n_c], _buf(work[j], "tmp", (k, n_c))
                for i, out in enumerate((lx, ly)):
                    np.multiply(z0, root[i, 0], out=out)
                    out += mu[i]
                    out += np.multiply(z1, root[i, 1], out=tmp)
            lo, hi, _, rej = ends_from_logs(lx, ly, confidence, work[j])
            counts[j, 0] += int(np.sum((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
            counts[j, 1] += int(rej.sum())
    return [(w[0], int(c[0]), int(c[1])) for w, c in zip(worlds, counts, strict=True)]
