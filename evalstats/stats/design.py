"""Design studies: how well an interval covers on a design, by simulation with known truth
(:func:`coverage_study` on a chosen design, :func:`design_coverage` on the data's own).
See docs/methods.md, section "Design studies".
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from functools import partial

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import gammaln

from .._schema import OUTCOME_DTYPE, STATUS_DTYPE
from .._validate import check_choice, check_columns, check_confidence, check_n_resamples
from ..errors import ParameterError
from . import agreement as _ac
from .agreement import DEFAULT_METHOD as KAPPA_METHOD
from .cost import (
    _ARM_KEYS,
    _GPQ_DRAWS,
    _SHAPIRO_MAX,
    GPQ_HULL_METHOD,
    GPQ_METHOD,
    LOGNORMAL_CHECK_ALPHA,
    MEASURES,
    MODEL_CHECK_CONFIDENCE,
    _gpq_base,
    _per_arm_pair,
    _recode,
    _totals,
    bm_df_from_leverage,
    choose_token_source,
    pair_costs,
)
from .models import draw_outcomes
from .rates import (
    DEFAULT_METHOD,
    RATE_NAMES,
    WIN_RATE_METHODS,
    _score_construction,
    bm_df,
    by_columns,
    category_codes,
    proportion_ci,
    rate_arrays,
    segment_sum,
)
from .rates import LOSS as _LOSS
from .rates import TIE as _TIE
from .rates import WIN as _WIN
from .rates import cluster_counts as _cluster_counts
from .rates import row_categories as _row_categories
from .resample import BOOTSTRAP_METHODS, as_generator

__all__ = ["STATISTICS", "coverage_study", "design_coverage", "kappa_ends", "pooled_icc"]


def coverage_study(
    *,
    n_tasks: int,
    n_replicates: int,
    p_win: float,
    p_tie: float,
    p_loss: float,
    icc: float,
    confidence: float = 0.95,
    n_evals: int = 1000,
    n_resamples: int = 1000,
    methods: tuple[str, ...] = WIN_RATE_METHODS,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Coverage of each interval method (and two naive IID ones) for one design.
    ``n_evals`` simulated evaluations of ``n_tasks x n_replicates`` pairs with known rates.

    Returns
    -------
    DataFrame
        ``method, statistic, coverage, nominal, mc_se, n_evals, n_tasks, n_replicates,
        icc, n_resamples``.

    Examples
    --------
    >>> cov = coverage_study(n_tasks=15, n_replicates=6, p_win=.45, p_tie=.35, p_loss=.2,
    ...                      icc=.3, n_evals=40, n_resamples=50, rng=0)
    >>> sorted(cov["method"].unique())[:3]
    ['basic', 'bca', 'cluster_t']
    """
    if not methods:
        raise ValueError("methods must name at least one interval method")
    for method in methods:
        check_choice(method, "method", WIN_RATE_METHODS)
    rng = as_generator(rng)
    codes = draw_outcomes(n_tasks, n_replicates, p_win=p_win, p_tie=p_tie, p_loss=p_loss,
                          icc=icc, n_evals=n_evals, rng=rng)[..., 0]  # fmt: skip
    ev, task, rep = np.indices(codes.shape)
    frame = pd.DataFrame({
        "eval": ev.ravel(), "task_id": task.ravel(), "replicate": rep.ravel() + 1,
        "status": pd.Categorical.from_codes(np.zeros(codes.size, np.int8), dtype=STATUS_DTYPE),
        "outcome": pd.Categorical.from_codes(codes.ravel(), dtype=OUTCOME_DTYPE),
    })  # fmt: skip
    truth = np.array([p_win, p_tie, p_loss, p_win - p_loss, p_win + p_tie / 2.0])
    category = _row_categories(frame, ["eval"], "task_id")
    groups, gid, counts, _ = _cluster_counts(frame, ["eval"], "task_id", category)
    cells = (counts[:, _WIN], counts[:, _TIE], counts[:, _LOSS], gid, len(groups))
    boot = [m for m in methods if m in BOOTSTRAP_METHODS]
    ends: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for method in methods:
        if method in ends:
            continue
        also = tuple(boot[1:]) if method in boot else ()
        res = rate_arrays(*cells, method=method, also=also, n_resamples=n_resamples,
                          confidence=confidence, rng=rng, net_win_test=False)  # fmt: skip
        ends[method] = (res["low"], res["high"])
        ends.update(res.get("also", {}))
    rows = {m: list(((ends[m][0] <= truth) & (truth <= ends[m][1])).mean(axis=0)) for m in methods}
    n = res["n"].astype(np.float64)
    totals = segment_sum(counts[:, [_WIN, _TIE, _LOSS]].astype(np.float64), gid, len(groups))
    ci = proportion_ci(totals.T, n, confidence=confidence)
    wilson = ((ci.ci_low <= np.c_[truth[:3]]) & (np.c_[truth[:3]] <= ci.ci_high)).mean(axis=1)
    rows["naive IID Wilson"] = [*wilson, np.nan, np.nan]
    # Naive Wald over verdicts: SE from the row-level variance, ignoring tasks.
    w, ti, lo = totals.T
    second_moment = np.stack([w, ti, lo, w + lo, w + ti / 4.0], axis=1) / n[:, None]
    se = np.sqrt(np.maximum(second_moment - res["est"] ** 2, 0.0) / n[:, None])
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    rows["naive IID Wald"] = list((np.abs(res["est"] - truth) <= z * se).mean(axis=0))
    tidy = (
        pd.DataFrame(rows, index=list(RATE_NAMES))
        .T.astype(float)
        .rename_axis("method")
        .reset_index()
        .melt(id_vars="method", var_name="statistic", value_name="coverage")
    )
    tidy = tidy.dropna(subset=["coverage"]).reset_index(drop=True)
    mc_se = float(np.sqrt(confidence * (1 - confidence) / n_evals))
    return tidy.assign(nominal=confidence, mc_se=mc_se, n_evals=n_evals, n_tasks=n_tasks,
                       n_replicates=n_replicates, icc=icc, n_resamples=n_resamples)  # fmt: skip


_OUTCOMES = ("win", "tie", "loss")
#: What :func:`design_coverage` can simulate the coverage of (``statistic``).
STATISTICS = ("win_rates", "kappa", "cost")
_OPTIONS = {"win_rates": (), "kappa": (), "cost": ("include_no_answer",)}
#: Above this many simulated (simulation, task) cells the sums are simulated per size
#: class (:func:`simulated_sums`) instead of task by task (~1 us and ~300 bytes a cell).
PER_TASK_LIMIT = 500_000


def design_coverage(
    frame: pd.DataFrame,
    *,
    statistic: str = "win_rates",
    by: str | Sequence[str] | None = "judge",
    cluster: str = "task_id",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = 0,
    **options,
) -> pd.DataFrame:
    """Simulated coverage of the default win-rate, kappa or cost interval on this frame's
    design (per pair of arms). See docs/methods.md, section "Design studies".

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``outcome``, the ``cluster`` and ``by`` columns.
    statistic : {"win_rates", "kappa", "cost"}
        Whose default interval is simulated.
    by : str, list of str or None
        Grouping columns (win rates only).
    cluster, n_resamples, confidence
        Unit of independence; simulated evaluations per group; nominal level.
    rng : Generator, int or None
        Random source or seed (seeded by default).
    **options
        With ``statistic="cost"``: ``include_no_answer``.

    Returns
    -------
    DataFrame
        One row per group (win rates: ``<rate>_coverage``, ``min_coverage``,
        ``max_coverage``), judge pair (kappa) or total ratio (cost: ``model_rejected``),
        with ``n_tasks``, ``mc_se``, ``in_band``, ``ci_note``, ``method``, ``n_resamples``.

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": [t for t in range(8) for _ in range(3)], "judge": "j",
    ...     "status": "ok", "outcome": ["win"] * 20 + ["tie", "loss", "win", "win"],
    ... })
    >>> cov = design_coverage(frame, n_resamples=400)
    >>> int(cov["n_tasks"].iloc[0]), cov["ci_note"].iloc[0].startswith("conservative: simulated")
    (8, True)
    >>> tokens = frame.assign(replicate=[1, 2, 3] * 8, tokens_with=[900, 1100, 700] * 8,
    ...                       tokens_without=[1000, 1200, 900] * 8, wall_with_s=9.0,
    ...                       wall_without_s=10.0)
    >>> design_coverage(tokens, statistic="cost", n_resamples=100)["statistic"].tolist()
    ['tokens_total_ratio', 'wall_total_ratio']
    """
    check_choice(statistic, "statistic", STATISTICS)
    unknown = sorted(set(options) - set(_OPTIONS[statistic]))
    if unknown:
        raise ParameterError(f"design_coverage(statistic={statistic!r}) takes no {unknown}")
    if statistic == "cost":
        options = {"include_no_answer": True} | options
    if statistic != "win_rates":
        fn = _kappa_coverage if statistic == "kappa" else _cost_coverage
        kw = options | {"n_resamples": check_n_resamples(n_resamples),
                        "confidence": check_confidence(confidence), "rng": as_generator(rng)}  # fmt: skip
        keys, parts = _per_arm_pair(lambda sub: fn(sub, cluster=cluster, **kw), frame)
        if not keys:
            return parts[0]
        out = pd.concat(parts, ignore_index=True)
        return out[[*keys, *(c for c in out.columns if c not in keys)]]
    by_cols = by_columns(by)
    by_cols += [c for c in _ARM_KEYS if c in frame.columns and c not in by_cols]
    check_columns(frame, [*by_cols, cluster, "status", "outcome"])
    n_resamples = check_n_resamples(n_resamples)
    confidence = check_confidence(confidence)
    rng = as_generator(rng)
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
        gid = cells[by_cols].merge(groups.assign(_g=np.arange(len(groups))), on=by_cols)
        gid = gid["_g"].to_numpy(np.int64)
    else:
        groups = pd.DataFrame(index=pd.RangeIndex(1))
        gid = np.zeros(len(cells), dtype=np.int64)
    n_groups = len(groups)
    counts = cells[list(_OUTCOMES)].to_numpy(np.int64)
    m = counts.sum(axis=1)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    probs = segment_sum(counts.astype(np.float64), gid, n_groups) / n[:, None]
    rho = pooled_icc(counts, gid, n_groups)
    if n_resamples * len(m) > PER_TASK_LIMIT:  # a large design: sums drawn per size class
        sums = simulated_sums(counts, gid, n_groups, probs, rho, n_resamples, rng)
        low, high = interval_ends(sums, probs, n_groups, confidence)
    else:
        low, high = _per_task_ends(
            counts, m, gid, n_groups, probs, rho, n_resamples, confidence, rng
        )
    pw, pt, pl = probs.T
    truth = np.stack([pw, pt, pl, pw - pl, pw + pt / 2.0], axis=1)  # (groups, 5)
    cover = ((low <= truth + 1e-12) & (truth - 1e-12 <= high)).mean(axis=0)  # (groups, 5)
    cover = np.where(np.isfinite(truth), cover, np.nan)

    rates = {f"{r}_coverage": cover[:, j] for j, r in enumerate(RATE_NAMES)}
    n_tasks = np.bincount(gid, minlength=n_groups)
    out = groups.assign(n=n.astype(np.int64), n_tasks=n_tasks, icc=rho, **rates)
    out["min_coverage"] = np.nanmin(np.where(np.isnan(cover), np.inf, cover), axis=1)
    out["max_coverage"] = np.nanmax(np.where(np.isnan(cover), -np.inf, cover), axis=1)
    out["mc_se"] = float(np.sqrt(confidence * (1.0 - confidence) / n_resamples))
    above, below = _band(cover, n_resamples, confidence)
    out["in_band"] = ~(above | below).any(axis=1)
    notes = []
    for g, n_c in enumerate(out["n_tasks"]):
        parts = []
        for high, mask, worst in ((True, above[g], np.max), (False, below[g], np.min)):
            if mask.any():
                names = ", ".join(
                    f"{RATE_NAMES[j]} {cover[g, j]:.2f}" for j in np.flatnonzero(mask)
                )
                parts.append(_note(worst(cover[g, mask]), high, not high, n_c, names))
        notes.append("; ".join(parts))
    return out.assign(ci_note=notes, method=DEFAULT_METHOD, n_resamples=n_resamples)


def _per_task_ends(counts, m, gid, n_groups, probs, rho, n_resamples, confidence, rng):
    """(n_resamples, groups, 5) interval ends from every simulated (simulation, task) cell."""
    # Task probabilities ~ Dirichlet(p (1 - rho) / rho); rho = 0: the group's probabilities.
    with np.errstate(divide="ignore", invalid="ignore"):
        conc = np.where(rho > 0, (1.0 - rho) / rho, np.inf)
    shape = probs[gid] * np.where(np.isfinite(conc), conc, 1.0)[gid, None]
    draws = rng.gamma(np.broadcast_to(shape, (n_resamples, *shape.shape)))
    with np.errstate(invalid="ignore", divide="ignore"):
        task_p = draws / draws.sum(axis=2, keepdims=True)
    task_p = np.where(np.isfinite(conc)[gid, None], task_p, probs[gid])
    task_p = np.where(np.isfinite(task_p), task_p, probs[gid])  # all-zero gamma draws
    sim = rng.multinomial(np.broadcast_to(m, (n_resamples, len(m))), task_p)  # (sims, cells, 3)
    sim_gid = (np.arange(n_resamples)[:, None] * n_groups + gid[None, :]).ravel()
    res = rate_arrays(*(sim[..., k].ravel() for k in range(3)), sim_gid, n_resamples * n_groups,
                      confidence=confidence, net_win_test=False)  # fmt: skip
    shape = (n_resamples, n_groups, len(RATE_NAMES))
    return res["low"].reshape(shape), res["high"].reshape(shape)


#: Size classes with more (win, tie, loss) configurations than this are drawn task by task.
MAX_CONFIGS = 20_000
# Array elements held at once by a chunk of simulations (~32 MB of float64).
_CHUNK = 2**22
# Counts (w, t, l) -> numerators of the five rates (win, tie, loss, net win, score).
_B = np.array([[1.0, 0.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0, 0.5], [0.0, 0.0, 1.0, -1.0, 0.0]])
_LOW = np.array([0.0, 0.0, 0.0, -1.0, 0.0])
_HIGH = np.ones(5)
_IU = np.triu_indices(3)  # the six distinct products z_i z_j


def pooled_icc(counts: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """One-way ANOVA intra-cluster correlation per group, pooled over the outcome columns."""
    m = counts.sum(axis=1).astype(np.float64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    c = np.bincount(gid, minlength=n_groups).astype(np.float64)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = segment_sum(counts, gid, n_groups) / n[:, None]
        pc = counts / m[:, None]
        ssb = np.bincount(
            gid, weights=(m[:, None] * (pc - p[gid]) ** 2).sum(axis=1), minlength=n_groups
        )
        ssw = np.bincount(
            gid, weights=(m[:, None] * pc * (1.0 - pc)).sum(axis=1), minlength=n_groups
        )
        msb = ssb / (c - 1.0)
        msw = ssw / (n - c)
        m0 = (n - m2 / n) / (c - 1.0)
        rho = (msb - msw) / (msb + (m0 - 1.0) * msw)
    # One verdict per task (n == c) leaves the correlation unidentified, and irrelevant.
    return np.clip(np.where(np.isfinite(rho), rho, 0.0), 0.0, 0.99)


def configurations(m: int) -> np.ndarray:
    """Every (win, tie, loss) count of a task with ``m`` verdicts, (K, 3)."""
    w, t = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    keep = (w + t <= m).ravel()
    w, t = w.ravel()[keep], t.ravel()[keep]
    return np.stack([w, t, m - w - t], axis=1).astype(np.int64)


def config_pmf(x: np.ndarray, p: np.ndarray, conc: float) -> np.ndarray:
    """Dirichlet-multinomial probability of each row of ``x`` (``conc=inf``: multinomial)."""
    x = np.asarray(x, dtype=np.float64)
    m = x[0].sum() if len(x) else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        base = gammaln(m + 1.0) - gammaln(x + 1.0).sum(axis=1)
        if np.isfinite(conc):
            a = p * conc
            term = np.where(x > 0, gammaln(x + a) - gammaln(a), 0.0)
            lp = base + gammaln(a.sum()) - gammaln(m + a.sum()) + term.sum(axis=1)
        else:
            lp = base + np.where(x > 0, x * np.log(p), 0.0).sum(axis=1)
    pm = np.exp(lp - lp.max())
    return pm / pm.sum()


def _features(x: np.ndarray, m: float, p: np.ndarray) -> np.ndarray:
    """(..., 12): the counts, the counts centred at the truth, their six products."""
    z = x - m * p
    return np.concatenate([x, z, z[..., _IU[0]] * z[..., _IU[1]]], axis=-1)


def _class_sums(m, n_tasks, p, conc, n_resamples, rng) -> np.ndarray:
    """(n_resamples, 12): the class's :func:`_features` summed over its tasks, per simulation."""
    x = configurations(m)
    if len(x) <= MAX_CONFIGS:
        pm = config_pmf(x, p, conc)
        # Most probable first: numpy's multinomial stops once every task is placed.
        order = np.argsort(-pm, kind="stable")
        feats = _features(x[order].astype(np.float64), m, p)
        step = max(1, _CHUNK // len(x))
        parts = [
            rng.multinomial(n_tasks, pm[order], size=min(step, n_resamples - s)) @ feats
            for s in range(0, n_resamples, step)
        ]
        return np.concatenate(parts)
    # Task by task, as design_coverage's per-cell path draws them.
    step = max(1, _CHUNK // (6 * n_tasks))
    parts = []
    for s in range(0, n_resamples, step):
        draws = _task_draws(rng, np.full(n_tasks, m), p, conc, min(step, n_resamples - s))
        parts.append(_features(draws.astype(np.float64), m, p).sum(axis=1))
    return np.concatenate(parts)


def simulated_sums(counts, gid, n_groups, probs, rho, n_resamples, rng) -> dict:
    """Per (simulation, group): the sums the default interval needs, and the design's."""
    m = counts.sum(axis=1)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    keys, n_tasks = np.unique(np.stack([gid, m], axis=1), axis=0, return_counts=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        conc = np.where(rho > 0, (1.0 - rho) / rho, np.inf)
        h = keys[:, 1] / n[keys[:, 0]]
        adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)  # CR2's 1 / (1 - h_c)
    total, z1, a1 = (np.zeros((n_resamples, n_groups, 3)) for _ in range(3))
    a2, q2 = np.zeros((n_resamples, n_groups, 6)), np.zeros((n_resamples, n_groups, 6))
    for k, (g, size) in enumerate(keys):  # one pass per size class: a handful per group
        s = _class_sums(int(size), int(n_tasks[k]), probs[g], conc[g], n_resamples, rng)
        total[:, g] += s[:, :3]
        z1[:, g] += s[:, 3:6]
        a1[:, g] += adj[k] * size * s[:, 3:6]
        a2[:, g] += adj[k] * s[:, 6:]
        q2[:, g] += s[:, 6:] / size
    am2 = np.bincount(keys[:, 0], weights=n_tasks * adj * keys[:, 1] ** 2.0, minlength=n_groups)
    return dict(total=total, z1=z1, a1=a1, a2=a2, q2=q2, am2=am2, keys=keys, n_tasks=n_tasks,
                adj=adj, m=m, gid=gid)  # fmt: skip


def _quad(sym6: np.ndarray) -> np.ndarray:
    """``b_j' S b_j`` for each rate's coefficients ``b_j`` from the six distinct entries."""
    i, j = _IU
    coef = np.where(i == j, 1.0, 2.0)[:, None] * _B[i] * _B[j]  # (6, 5)
    return sym6 @ coef


def _net_df(sums: dict, icc: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`~evalstats.stats.rates.bm_df_exchangeable` per (simulation, group), by size class."""
    keys, cnt, a2c = sums["keys"], sums["n_tasks"].astype(np.float64), sums["adj"]
    out = np.full(icc.shape, np.nan)
    for g in range(n_groups):
        sel = keys[:, 0] == g
        mk, ck, ak = keys[sel, 1].astype(np.float64), cnt[sel], a2c[sel]
        n, m2, c = (ck * mk).sum(), (ck * mk * mk).sum(), ck.sum()
        if c <= 1:
            continue
        if np.isclose(c * m2, n**2, rtol=1e-12, atol=0.0):
            out[:, g] = c - 1.0  # equal sizes: C - 1 exactly, as bm_df_exchangeable
            continue
        rho = icc[:, g, None]
        lam = 1.0 - rho + rho * mk
        big_s = (ck * mk * lam).sum(axis=1, keepdims=True)
        gg = big_s / (2.0 * n**2) - lam / n
        d = ak * mk * lam
        b2 = ak * mk * mk
        b0, b1, bb2 = ((ck * b2 * gg**e).sum(axis=1) for e in (0, 1, 2))
        tr = (ck * (d + 2.0 * b2 * gg)).sum(axis=1)
        fro = (ck * (d * d + 4.0 * d * b2 * gg)).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            df = tr**2 / (fro + 2.0 * (b0 * bb2 + b1**2))
        out[:, g] = np.where(np.isfinite(df), df, np.nan)
    return out


def interval_ends(
    sums: dict, probs: np.ndarray, n_groups: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """(n_resamples, groups, 5) low and high ends of the default (``cr2_wilson``) intervals."""
    m, gid = sums["m"], sums["gid"]
    n = np.bincount(gid, weights=m, minlength=n_groups)
    n_clusters = np.bincount(gid, minlength=n_groups).astype(np.float64)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    df, kish = bm_df(m, gid, n_groups)
    total = sums["total"]
    with np.errstate(invalid="ignore", divide="ignore"):
        est = total @ _B / n[:, None]
        delta = est - (probs @ _B)[None]
        quad = _quad(sums["a2"])
        ss = quad - 2.0 * delta * (sums["a1"] @ _B) + delta**2 * sums["am2"][None, :, None]
        # No spread: a rate at an end of its range, or rounding-level sums.
        flat = (
            (est <= _LOW)
            | (est >= _HIGH)
            | (ss <= 1e-12 * (quad + delta**2 * sums["am2"][None, :, None]))
        )
        se = np.where(flat, 0.0, np.sqrt(np.maximum(ss, 0.0))) / n[None, :, None]
        se = np.where((n_clusters > 1)[None, :, None], se, np.nan)
        row_var = est * (1.0 - est)
        y2 = total[..., 0] + 0.25 * total[..., 1]  # sum of squared score values
        row_var[..., 4] = np.maximum(y2 / n - est[..., 4] ** 2, 0.0)
        row_var[..., 3] = 4.0 * row_var[..., 4]
        # ANOVA ICC of the score rows (rate_arrays' anova_icc), centred sums.
        p4 = probs @ _B[:, 4]
        v = sums["z1"] @ _B[:, 4]
        qv = _quad(sums["q2"])[..., 4]
        ssb = qv - v**2 / n
        ssw = y2 - (qv + 2.0 * p4 * v + p4**2 * n)
        msw = np.maximum(ssw, 0.0) / (n - n_clusters)
        msb = np.maximum(ssb, 0.0) / (n_clusters - 1.0)
        m0 = (n - m2 / n) / (n_clusters - 1.0)
        icc = (msb - msw) / (msb + (m0 - 1.0) * msw)
    icc = np.clip(np.where(np.isfinite(icc), icc, 0.0), 0.0, 1.0)
    net_df = _net_df(sums, icc, n_groups)
    n_resamples = total.shape[0]
    dfs = np.repeat(np.broadcast_to(df, (n_resamples, n_groups))[..., None], 5, axis=2).copy()
    dfs[..., 3:] = net_df[..., None]
    flat_shape = (n_resamples * n_groups, 5)
    low, high, _ = _score_construction(
        est.reshape(flat_shape), se.reshape(flat_shape), np.tile(n, n_resamples),
        dfs.reshape(flat_shape), np.tile(kish, n_resamples), row_var.reshape(flat_shape),
        confidence, False,
    )  # fmt: skip
    one = np.tile(n_clusters <= 1, n_resamples)
    low[one], high[one] = np.nan, np.nan
    return low.reshape(n_resamples, n_groups, 5), high.reshape(n_resamples, n_groups, 5)


_K = 3
_COST_CHUNK = 2**21
_COHEN = partial(_ac.table_parts, w=np.eye(_K), kind="cohen")


def _band(cover, n_resamples, confidence):
    """(above, below): outside nominal +/- 0.02 by more than 1.96 Monte-Carlo SEs."""
    tol = 1.96 * np.sqrt(np.clip(cover * (1.0 - cover), 1e-4, None) / n_resamples)
    return cover - tol > confidence + 0.02, cover + tol < confidence - 0.02


def _note(cover: float, above: bool, below: bool, n_clusters: int, what: str) -> str:
    label = "conservative" if above else "liberal" if below else ""
    return label and f"{label}: simulated coverage {cover:.2f} for {n_clusters} tasks ({what})"


def _finish(rows: list[dict], n_resamples, confidence, labels, method) -> pd.DataFrame:
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    cover = out["coverage"].to_numpy(dtype=float)
    above, below = _band(cover, n_resamples, confidence)
    out["mc_se"] = float(np.sqrt(confidence * (1.0 - confidence) / n_resamples))
    out["in_band"] = ~(above | below)
    out["ci_note"] = [
        _note(c, a, b, n, f"{s} {c:.2f}") if np.isfinite(c) else why
        for c, a, b, n, s, why in zip(
            cover, above, below, out["n_tasks"], labels, out.pop("_why"), strict=True
        )
    ]
    return out.assign(method=method, n_resamples=n_resamples)


def kappa_ends(tables: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa's default interval (judge_agreement's) of (..., C, 9) per-task tables."""
    res = _ac.cluster_intervals(
        tables, _COHEN, confidence=confidence, methods=(KAPPA_METHOD,), unit_disagreement=1.0
    )
    return res.intervals[KAPPA_METHOD]


def _task_draws(rng, m: np.ndarray, p: np.ndarray, conc: float, k: int) -> np.ndarray:
    """``k`` simulations' per-task counts (k, C, cells): Dirichlet-multinomial, ``m`` each."""
    if np.isfinite(conc):
        draws = rng.gamma(np.broadcast_to(p * conc, (k, len(m), len(p))))
        with np.errstate(invalid="ignore", divide="ignore"):
            task_p = draws / draws.sum(axis=2, keepdims=True)
        task_p = np.where(np.isfinite(task_p), task_p, p)
    else:
        task_p = np.broadcast_to(p, (k, len(m), len(p)))
    return rng.multinomial(np.broadcast_to(m, (k, len(m))), task_p)


def _kappa_coverage_of_tables(tables, n_resamples, confidence, rng) -> tuple:
    """(truth, estimate, icc, coverage) of the kappa interval for per-task tables (C, 9)."""
    m = np.rint(tables.sum(axis=1)).astype(np.int64)
    probs = tables.sum(axis=0) / m.sum()
    rho = float(pooled_icc(tables, np.zeros(len(m), dtype=np.int64), 1)[0])
    truth = float(_ac.coefficient(_COHEN, probs))
    estimate = float(_ac.coefficient(_COHEN, tables.sum(axis=0)))
    if not np.isfinite(truth) or len(m) < 2:
        return truth, estimate, rho, np.nan
    if use_sums(m, probs, rho):  # a large design: its two sums drawn (asymptotically exact)
        step = max(1, _CHUNK // (4 * 81 * max(len(np.unique(m)), 9)))

        def ends(k):
            return ends_from_sums(*simulated_table_sums(m, probs, rho, k, rng), len(m), confidence)
    else:
        conc = (1.0 - rho) / rho if rho > 0 else np.inf
        step = max(1, _CHUNK // (4 * _K * _K * len(m)))

        def ends(k):
            return kappa_ends(_task_draws(rng, m, probs, conc, k), confidence)

    hits = 0
    for s in range(0, n_resamples, step):  # chunks bound the memory
        lo, hi = ends(min(step, n_resamples - s))
        hits += int(np.sum((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
    return truth, estimate, rho, hits / n_resamples


def _kappa_coverage(frame, *, cluster, n_resamples, confidence, rng) -> pd.DataFrame:
    from evalstats.frames import wide_by_judge

    check_columns(frame, ["rubric", "judge", cluster, "replicate", "status", "outcome"])
    ok_code = category_codes(frame["status"], pd.CategoricalDtype(["ok"]))
    ok = frame.assign(outcome=frame["outcome"].where(ok_code == 0))
    if "order" not in ok.columns:  # a frame of one order: the units are (task, replicate)
        ok = ok.assign(order=pd.NA)
    rows = []
    for rubric in sorted(frame["rubric"].astype(str).unique()):
        wide = wide_by_judge(ok, rubric=rubric)
        keys = {"task_id", "replicate", "order", "arm_a", "arm_b"}
        judges = sorted(c for c in wide.columns if c not in keys)
        task_codes = pd.factorize(wide[cluster], sort=True)[0].astype(np.int64)
        for ja, jb in itertools.combinations(judges, 2):
            a, b = (category_codes(wide[j], OUTCOME_DTYPE).astype(np.int64) for j in (ja, jb))
            both = (a >= 0) & (b >= 0)
            g = _recode(task_codes[both])
            n_c = int(g.max(initial=-1)) + 1
            row = {"rubric": rubric, "judge_a": ja, "judge_b": jb, "n": int(both.sum()),
                   "n_tasks": n_c}  # fmt: skip
            if n_c < 2:
                row |= dict.fromkeys(("icc", "estimate", "truth", "coverage"), np.nan)
                rows.append(row | {"_why": "fewer than two tasks: no interval"})
                continue
            tables = _ac.table_cluster_stats(g, a[both], b[both], _K, n_c)
            truth, est, icc, cover = _kappa_coverage_of_tables(tables, n_resamples, confidence, rng)
            why = "" if np.isfinite(cover) else "kappa undefined (one category)"
            rows.append(row | {"icc": icc, "estimate": est, "truth": truth, "coverage": cover,
                               "_why": why})  # fmt: skip
    return _finish(rows, n_resamples, confidence, ["kappa"] * len(rows), KAPPA_METHOD)


def _cost_coverage(frame, *, cluster, include_no_answer, n_resamples, confidence, rng):
    pairs = pair_costs(
        choose_token_source(frame).frame, cluster=cluster, include_no_answer=include_no_answer
    )
    rows, worlds = [], []
    for measure in MEASURES:
        tx, ty = _totals(pairs, measure)[4:]
        n_c = len(tx)
        row = {"statistic": f"{measure}_total_ratio", "n_tasks": n_c}
        if n_c < 3 or not (np.all(tx > 0) and np.all(ty > 0)):
            why = "fewer than 3 tasks or a task total of 0: the interval is CR2, not simulated here"
            nan = dict.fromkeys(("estimate", "truth", "coverage", "model_rejected"), np.nan)
            rows.append(row | nan | {"_why": why})
            continue
        estimate = float(tx.sum() / ty.sum())
        logs = np.log(np.column_stack([tx, ty]))
        mu, cov = logs.mean(axis=0), np.cov(logs, rowvar=False)
        # log E[x] - log E[y] of the fitted bivariate lognormal
        truth = float(mu[0] + cov[0, 0] / 2.0 - mu[1] - cov[1, 1] / 2.0)
        rows.append(row | {"estimate": estimate, "truth": float(np.exp(truth)), "_why": ""})
        worlds.append((len(rows) - 1, n_c, mu, _root(cov), truth))
    for i, hits, rejected in _simulate_cost(worlds, n_resamples, confidence, rng):
        rows[i] |= {"coverage": hits / n_resamples, "model_rejected": rejected / n_resamples}
    method = (
        f"{GPQ_METHOD}; CR2 where the lognormal check rejects, {GPQ_HULL_METHOD} where "
        "the pivot's own check fires"
    )
    return _finish(rows, n_resamples, confidence, [r["statistic"] for r in rows], method)


def _simulate_cost(worlds, n_resamples, confidence, rng):
    """(row, hits, rejected) of each measure's world, simulated in chunks of simulations."""
    if not worlds:
        return []
    n_max = max(w[1] for w in worlds)
    counts = np.zeros((len(worlds), 2), dtype=np.int64)
    step = max(1, _COST_CHUNK // (8 * n_max + 8192))  # small chunks: they stay in the cache
    work: list[dict] = [{} for _ in worlds]  # each measure's scratch, reused by every chunk
    for s in range(0, n_resamples, step):  # chunks bound the memory; each chunk is one array
        k = min(step, n_resamples - s)
        z = _buf(work[0], "z", (2, k, n_max))
        rng.standard_normal(out=z)
        for j, (_, n_c, mu, root, truth) in enumerate(worlds):
            lx, ly = _buf(work[j], "lx", (k, n_c)), _buf(work[j], "ly", (k, n_c))
            z0, z1, tmp = z[0, :, :n_c], z[1, :, :n_c], _buf(work[j], "tmp", (k, n_c))
            for i, out in enumerate((lx, ly)):  # mu + root z, into the scratch arrays
                np.multiply(z0, root[i, 0], out=out)
                out += mu[i]
                out += np.multiply(z1, root[i, 1], out=tmp)
            lo, hi, _, rej = ends_from_logs(lx, ly, confidence, work[j])
            counts[j, 0] += int(np.sum((lo <= truth + 1e-12) & (truth - 1e-12 <= hi)))
            counts[j, 1] += int(rej.sum())
    return [(w[0], int(c[0]), int(c[1])) for w, c in zip(worlds, counts, strict=True)]


#: From this many tasks (and :data:`CLT_CELL_COUNT`) the sums are drawn, not the tasks.
CLT_TASKS = 1000
#: The smallest effective expected count of an occurring cell for the drawn sums.
CLT_CELL_COUNT = 100.0
# The atanh construction's pseudo-units (cluster_intervals' default).
_PSEUDO = 1.0


def use_sums(m: np.ndarray, probs: np.ndarray, rho: float) -> bool:
    """Whether a design of task sizes ``m`` is simulated by its sums (docs/methods.md)."""
    c = len(m)
    if c < CLT_TASKS:
        return False
    n = float(m.sum())
    m0 = (n - float((m * m).sum()) / n) / (c - 1.0)
    eff = n * probs / (1.0 + max(m0 - 1.0, 0.0) * rho)
    return bool(np.all(eff[probs > 0] >= CLT_CELL_COUNT))


def _root(sym: np.ndarray) -> np.ndarray:
    """A square root ``R`` with ``R R' = sym`` (eigen: a singular matrix is allowed)."""
    val, vec = np.linalg.eigh(sym)
    return vec * np.sqrt(np.clip(val, 0.0, None))[..., None, :]


def _bartlett(rng: np.random.Generator, df: np.ndarray, k: int, r: int) -> np.ndarray:
    """(k, classes, r, r) Wishart(df, I_r) draws, one per simulation and class."""
    n_cls = len(df)
    out = np.zeros((k, n_cls, r, r))
    big = df >= r
    if big.any():
        a = np.tril(rng.standard_normal((k, int(big.sum()), r, r)), -1)
        diag = np.sqrt(rng.chisquare(df[big][None, :, None] - np.arange(r), (k, int(big.sum()), r)))
        a[..., np.arange(r), np.arange(r)] = diag
        out[:, big] = a @ np.swapaxes(a, -1, -2)
    for j in np.flatnonzero(~big):  # a few tiny classes (fewer tasks than cells)
        if df[j] > 0:
            z = rng.standard_normal((k, int(df[j]), r))
            out[:, j] = np.swapaxes(z, -1, -2) @ z
    return out


def simulated_table_sums(
    m: np.ndarray, probs: np.ndarray, rho: float, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``k`` simulated evaluations' table sums and scatter, (k, 9) and (k, 9, 9)."""
    sizes, n_k = np.unique(np.asarray(m, dtype=np.int64), return_counts=True)
    sizes, n_k = sizes.astype(np.float64), n_k.astype(np.float64)
    c = n_k.sum()
    lam = sizes * (1.0 + (sizes - 1.0) * rho)  # a task's covariance over diag p - p p'
    base = np.diag(probs) - np.outer(probs, probs)
    val, vec = np.linalg.eigh(base)
    keep = val > 1e-14 * max(float(val.max()), 1e-300)
    root = vec[:, keep] * np.sqrt(val[keep])  # (9, r): the covariance's rank-r root
    r = root.shape[1]
    # Class sums: n_k m_k p + sqrt(n_k lam_k) R z_k.
    z = rng.standard_normal((k, len(sizes), r))
    dev = (np.sqrt(n_k * lam)[None, :, None] * z) @ root.T  # (k, classes, 9)
    class_tot = (n_k * sizes)[None, :, None] * probs + dev
    total = class_tot.sum(axis=1)
    wish = _bartlett(rng, n_k - 1.0, k, r)  # (k, classes, r, r)
    within = root @ np.einsum("c,kcrs->krs", lam, wish) @ root.T
    between = class_tot / n_k[None, :, None] - total[:, None, :] / c
    scatter = within + np.einsum("c,kci,kcj->kij", n_k, between, between)
    return total, scatter


def _z(s: np.ndarray) -> np.ndarray:
    """cluster_intervals' atanh of the shrunk kappa of summed tables."""
    po, pe, n = _COHEN(s)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrunk = _ac._div(po - pe, 1.0 - pe) * n / (n + _PSEUDO)
        return np.arctanh(np.clip(shrunk, -1.0, 1.0))


def _jack_var(fn, total: np.ndarray, steps: np.ndarray, c: int) -> np.ndarray:
    """``(C - 1) / C g' S g`` by central differences along ``steps`` (a root of ``S / C``)."""
    plus = fn(total[..., None, :] + np.swapaxes(steps, -1, -2))
    minus = fn(total[..., None, :] - np.swapaxes(steps, -1, -2))
    with np.errstate(invalid="ignore"):
        return (c - 1.0) * np.sum(((plus - minus) / 2.0) ** 2, axis=-1)


def ends_from_sums(
    total: np.ndarray, scatter: np.ndarray, c: int, confidence: float
) -> tuple[np.ndarray, np.ndarray]:
    """The default kappa interval (:data:`KAPPA_METHOD`) from ``(T, S)`` of ``c`` tasks."""
    alpha = 1.0 - confidence
    steps = _root(scatter / c)  # (..., 9, 9): columns of a task's size
    po, pe, n = _COHEN(total)
    z = _z(total)
    se_z = np.sqrt(_jack_var(_z, total, steps, c))
    var_po = _jack_var(lambda s: _COHEN(s)[0], total, steps, c)
    tq = stats.t.ppf(1.0 - alpha / 2.0, c - 1.0)
    binom = _ac._div(po * (1.0 - po), n)
    deff = np.where(binom > 0, _ac._div(var_po, np.where(binom > 0, binom, 1.0)), 1.0)
    deff = np.clip(np.nan_to_num(deff, nan=1.0), 1.0, np.maximum(n / c, 1.0))
    n_eff = n / deff
    lo, hi = _ac._exact(po, pe, n_eff, alpha, _ac.JOINED[KAPPA_METHOD])
    ex = (np.clip(lo, -1.0, 1.0), np.clip(hi, -1.0, 1.0))
    at = (np.tanh(z - tq * se_z), np.tanh(z + tq * se_z))
    # Never true where use_sums holds; kept so that the construction is cluster_intervals'.
    few = (n_eff * (1.0 - po) < _ac.EXACT_BELOW) | ~(se_z > 1e-12)
    joined = (np.fmin(at[0], ex[0]), np.fmax(at[1], ex[1]))
    return np.where(few, joined[0], at[0]), np.where(few, joined[1], at[1])


def _buf(work: dict, name: str, shape: tuple, dtype: type = np.float64) -> np.ndarray:
    """A float array of ``shape`` kept in ``work``: a chunk reuses its predecessor's memory."""
    arr = work.get(name)
    if arr is None or arr.shape != shape or arr.dtype != dtype:
        arr = work[name] = np.empty(shape, dtype=dtype)
    return arr


def lognormal_check_p(d: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """p-value of the lognormal check of task log ratios ``d`` (..., C); 1 without spread."""
    test = stats.normaltest if d.shape[-1] > _SHAPIRO_MAX else stats.shapiro
    p = np.ones(d.shape[:-1])
    if spread.any():  # (a sample without spread has no test, and scipy warns on it)
        p[spread] = test(d[spread], axis=-1).pvalue
    return p


@functools.lru_cache(maxsize=8)
def _base_uvw(c: int) -> tuple:
    """``u, v, w, vbar`` of the pivot's draws ``dbar + l11 (l21 vbar + u + l21 v + l22 w)``
    (``v`` centred) and their largest absolute values."""
    t11, t22, t21, z = _gpq_base(c, _GPQ_DRAWS)
    i11, i21 = 1.0 / t11, -t21 / (t11 * t22)
    u, v, w = -z * i11 / np.sqrt(c), i11 * i11 / 2.0, i11 * i21 / 2.0
    vbar = float(v.mean())
    v = v - vbar
    return u, v, w, vbar, *(float(np.abs(e).max()) for e in (u, v, w))


def _pivot_order_stats(
    a: np.ndarray, b: np.ndarray, c: int, levels: tuple[float, ...], work: dict
) -> list[tuple]:
    """``gpq_interval``'s exact ends of the draws ``a vbar + u + a v + b w``, per level."""
    u, v, w, vbar, u_max, v_max, w_max = _base_uvw(c)
    k, n = len(u), len(a)
    # The distinct ranks of gpq_interval's ends among the k draws, and each level's.
    js = [max(1, int(np.ceil(k * (1.0 - lev) / 2.0 - 1e-9))) for lev in levels]
    ranks = sorted({i for j in js for i in (j - 1, k - j)})
    pos = [(ranks.index(j - 1), ranks.index(k - j)) for j in js]
    a0, b0 = (float(np.median(e)) if n else 0.0 for e in (a, b))
    delta = np.abs(a - a0) * v_max + np.abs(b - b0) * w_max
    scale = u_max + np.abs(a).max(initial=abs(a0)) * v_max + np.abs(b).max(initial=abs(b0)) * w_max
    order = np.argsort(a0 * v + u + b0 * w)
    h0 = (a0 * v + u + b0 * w)[order]
    q0 = h0[ranks]
    cuts = np.unique(np.quantile(delta, [0.5, 0.9, 0.99, 1.0])) if n else np.zeros(1)
    widths = 2.0 * cuts[:, None] + 8e-12 * scale
    lo_i = np.searchsorted(h0, q0 - widths, side="left")
    hi_i = np.searchsorted(h0, q0 + widths, side="right")
    inside = (delta[None, :] <= cuts[:, None]).sum(axis=1)
    # A band row costs its draws in the bands, a full row ~3 passes over K (the partition).
    best = int(np.argmin((hi_i - lo_i).sum(axis=1) * inside + 3 * k * (n - inside)))
    ends = np.empty((len(ranks), n))
    band = delta <= cuts[best]
    work["band_rows"] = int(band.sum())  # (for the tests: which way the rows went)
    if band.any():
        ab, bb = a[band, None], b[band, None]
        for r, (i0, i1) in enumerate(zip(lo_i[best], hi_i[best], strict=True)):
            idx = order[i0:i1]
            h = ab * v[idx]
            h += u[idx]
            h += bb * w[idx]
            t = ranks[r] - i0  # the band's draws below: i0 of them, all below the end
            h.partition(t, axis=-1)
            ends[r, band] = h[:, t]
    if not band.all():
        af, bf = a[~band, None], b[~band, None]
        g = np.multiply(af, v, out=_buf(work, "g", (len(af), k)))
        g += u
        g += np.multiply(bf, w, out=_buf(work, "gw", g.shape))
        g.partition(ranks, axis=-1)
        ends[:, ~band] = g[:, ranks].T
    ends += a * vbar
    return [(ends[i], ends[j]) for i, j in pos]


def ends_from_logs(
    lx: np.ndarray, ly: np.ndarray, confidence: float, work: dict | None = None
) -> tuple:
    """(low, high, log_estimate, model_rejected) of the cost interval from log task totals
    (k, C), C >= 3; ``work`` holds scratch arrays across chunks."""
    work = {} if work is None else work
    shape = lx.shape
    c = shape[-1]
    x, y = np.exp(lx, out=_buf(work, "x", shape)), np.exp(ly, out=_buf(work, "y", shape))
    tx, ty = x.sum(axis=-1), y.sum(axis=-1)
    log_est = np.log(tx / ty)
    # lognormal_ratio_gpq's pivot draws, from the same centred sums of (d, s).
    d = np.subtract(lx, ly, out=_buf(work, "d", shape))
    sm = np.add(lx, ly, out=_buf(work, "s", shape))
    dbar = d.mean(-1)
    dm = np.subtract(d, dbar[..., None], out=_buf(work, "dm", shape))
    sm -= sm.mean(-1, keepdims=True)
    a_ss, a_dd, a_sd = (
        np.einsum("...i,...i->...", u, v) for u, v in ((sm, sm), (dm, dm), (sm, dm))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        l11 = np.sqrt(a_dd)
        l21 = a_sd / l11
        l22 = np.sqrt(np.maximum(a_ss - l21**2, 0.0))
    # The draws are dbar + l11 (u + l21 v + l22 w): order statistics of u + l21 v + l22 w.
    finite = np.isfinite(dbar) & np.isfinite(l11) & np.isfinite(l21) & np.isfinite(l22)
    # Rows without a finite pivot take CR2 below: any draws do, the median keeps the band narrow.
    a0, b0 = (float(np.median(e[finite])) if finite.any() else 0.0 for e in (l21, l22))
    a, b = np.where(finite, l21, a0), np.where(finite, l22, b0)
    ends = _pivot_order_stats(a, b, c, (confidence, MODEL_CHECK_CONFIDENCE), work)
    (lo, hi), (c_lo, c_hi) = ((dbar + l11 * e0, dbar + l11 * e1) for e0, e1 in ends)
    doubtful = finite & ~((c_lo <= log_est) & (log_est <= c_hi))
    d_hi, d_lo = d.max(axis=-1), d.min(axis=-1)  # np.ptp and max |d| from two passes
    spread = d_hi - d_lo > 1e-12 * np.maximum(1.0, np.maximum(d_hi, -d_lo))
    # The lognormal check; above 5,000 tasks in float32 (half the time; p moves < 2e-5).
    resid = d
    if c > _SHAPIRO_MAX:
        resid = _buf(work, "dm32", shape, np.float32)
        np.copyto(resid, dm, casting="same_kind")
    p = lognormal_check_p(resid, spread)
    # The CR2 interval only where a check may take it: a few of the evaluations.
    se, q = np.full(log_est.shape, np.nan), np.full(log_est.shape, np.nan)
    rows = np.flatnonzero(doubtful | ~finite | (spread & (p < LOGNORMAL_CHECK_ALPHA)))
    if rows.size:
        h = y[rows] / ty[rows, None]
        zz = x[rows] / tx[rows, None] - h
        with np.errstate(divide="ignore", invalid="ignore"):
            se[rows] = np.sqrt(np.einsum("...i,...i->...", zz, zz / (1.0 - h)))
        q[rows] = stats.t.ppf(0.5 + confidence / 2.0, bm_df_from_leverage(h))
    widen = doubtful & np.isfinite(q)
    lo = np.where(widen, np.minimum(lo, log_est - q * se), lo)
    hi = np.where(widen, np.maximum(hi, log_est + q * se), hi)
    lo = np.where(finite, lo, log_est - q * se)
    hi = np.where(finite, hi, log_est + q * se)
    switched = spread & (p < LOGNORMAL_CHECK_ALPHA) & np.isfinite(q)
    lo = np.where(switched, log_est - q * se, lo)
    hi = np.where(switched, log_est + q * se, hi)
    return lo, hi, log_est, widen | switched
