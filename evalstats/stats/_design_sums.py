"""The design re-simulation of :func:`~evalstats.stats.design_coverage` on large designs.

Simulating every (simulation, task) cell costs about a microsecond and 300 bytes; at
10,000 tasks x 2,000 simulations that is over a minute and 13 GB. The default interval
(``cr2_wilson``) depends on a group's verdicts only through a few sums over its tasks,
so this path simulates those sums and nothing else, exactly in distribution:

* the tasks of one group with the same number of verdicts ``m`` (a *size class*) are
  i.i.d. Dirichlet-multinomial, a distribution over the ``(m + 1)(m + 2) / 2`` possible
  (win, tie, loss) counts of a task; how many of the class's tasks fall on each is one
  multinomial draw per simulation (:func:`_class_sums`), and every sum needed is that
  count vector times a fixed table of the configurations' values;
* a class with more configurations than :data:`MAX_CONFIGS` (over ~200 verdicts a task)
  is drawn task by task, as the small path does, in chunks of simulations;
* the CR2 SE, the ANOVA ICC, the exchangeable Bell-McCaffrey df and the score interval
  are then :func:`~evalstats.stats.rates.rate_arrays`' formulas on those sums
  (:func:`_intervals`), with counts centred at the true rates so that no sum of squares
  is a small difference of large ones.

The tests check the sums' intervals against ``rate_arrays`` on the same simulated tasks,
and the configuration probabilities against scipy's ``dirichlet_multinomial``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from evalstats.stats.rates import _score_construction, bm_df

__all__ = [
    "MAX_CONFIGS",
    "config_pmf",
    "configurations",
    "interval_ends",
    "pooled_icc",
    "simulated_sums",
    "sums_from_tasks",
]

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
    """One-way ANOVA intra-cluster correlation per group, pooled over the outcome columns.

    ``counts`` is (cells, outcomes): each cell one cluster's outcome counts. With unequal
    sizes the usual ``m0 = (n - sum m^2 / n) / (C - 1)`` is the typical cluster size.
    """
    m = counts.sum(axis=1).astype(np.float64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    c = np.bincount(gid, minlength=n_groups).astype(np.float64)
    m2 = np.bincount(gid, weights=m * m, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (
            np.stack(
                [
                    np.bincount(gid, weights=counts[:, k], minlength=n_groups)
                    for k in range(counts.shape[1])
                ],
                1,
            )
            / n[:, None]
        )
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
    """Every (win, tie, loss) count of a task with ``m`` verdicts, (K, 3).

    >>> configurations(2).tolist()
    [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    """
    w, t = np.meshgrid(np.arange(m + 1), np.arange(m + 1), indexing="ij")
    keep = (w + t <= m).ravel()
    w, t = w.ravel()[keep], t.ravel()[keep]
    return np.stack([w, t, m - w - t], axis=1).astype(np.int64)


def config_pmf(x: np.ndarray, p: np.ndarray, conc: float) -> np.ndarray:
    """Dirichlet-multinomial probability of each configuration (rows of ``x``, one size)
    with mean ``p`` and concentration ``conc`` (``inf``: multinomial); a zero ``p_k``
    puts no mass on a count of that outcome, as a zero gamma shape does in the draws.

    >>> pm = config_pmf(configurations(3), np.array([0.5, 0.2, 0.3]), 4.0)
    >>> round(float(pm.sum()), 12)
    1.0
    """
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


def _class_sums(m, n_tasks, p, conc, n_sims, gen) -> np.ndarray:
    """(n_sims, 12): the class's :func:`_features` summed over its tasks, per simulation."""
    x = configurations(m)
    if len(x) <= MAX_CONFIGS:
        pm = config_pmf(x, p, conc)
        # Most probable first: numpy's multinomial stops once every task is placed.
        order = np.argsort(-pm, kind="stable")
        feats = _features(x[order].astype(np.float64), m, p)
        step = max(1, _CHUNK // len(x))
        parts = [
            gen.multinomial(n_tasks, pm[order], size=min(step, n_sims - s)) @ feats
            for s in range(0, n_sims, step)
        ]
        return np.concatenate(parts)
    # Task by task, as design_coverage's per-cell path draws them.
    step = max(1, _CHUNK // (6 * n_tasks))
    parts = []
    for s in range(0, n_sims, step):
        k = min(step, n_sims - s)
        if np.isfinite(conc):
            draws = gen.gamma(np.broadcast_to(p * conc, (k, n_tasks, 3)))
            with np.errstate(invalid="ignore", divide="ignore"):
                task_p = draws / draws.sum(axis=2, keepdims=True)
            task_p = np.where(np.isfinite(task_p), task_p, p)
        else:
            task_p = np.broadcast_to(p, (k, n_tasks, 3))
        counts = gen.multinomial(np.full((k, n_tasks), m), task_p).astype(np.float64)
        parts.append(_features(counts, m, p).sum(axis=1))
    return np.concatenate(parts)


def simulated_sums(counts, gid, n_groups, probs, rho, n_sims, gen) -> dict:
    """Per (simulation, group): the sums the default interval needs, and the design's.

    ``counts`` (cells x 3, win / tie / loss) and ``gid`` are the observed design; each
    group's tasks are re-drawn with its ``probs`` and intra-task correlation ``rho``.
    """
    m = counts.sum(axis=1)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    keys, n_tasks = np.unique(np.stack([gid, m], axis=1), axis=0, return_counts=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        conc = np.where(rho > 0, (1.0 - rho) / rho, np.inf)
        h = keys[:, 1] / n[keys[:, 0]]
        adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)  # CR2's 1 / (1 - h_c)
    total = np.zeros((n_sims, n_groups, 3))
    z1 = np.zeros((n_sims, n_groups, 3))
    a1 = np.zeros((n_sims, n_groups, 3))
    a2 = np.zeros((n_sims, n_groups, 6))
    q2 = np.zeros((n_sims, n_groups, 6))
    for k, (g, size) in enumerate(keys):  # one pass per size class: a handful per group
        s = _class_sums(int(size), int(n_tasks[k]), probs[g], conc[g], n_sims, gen)
        total[:, g] += s[:, :3]
        z1[:, g] += s[:, 3:6]
        a1[:, g] += adj[k] * size * s[:, 3:6]
        a2[:, g] += adj[k] * s[:, 6:]
        q2[:, g] += s[:, 6:] / size
    am2 = np.bincount(keys[:, 0], weights=n_tasks * adj * keys[:, 1] ** 2.0, minlength=n_groups)
    return {
        "total": total,
        "z1": z1,
        "a1": a1,
        "a2": a2,
        "q2": q2,
        "am2": am2,
        "keys": keys,
        "n_tasks": n_tasks,
        "adj": adj,
        "m": m,
        "gid": gid,
    }


def sums_from_tasks(sim: np.ndarray, m, gid, n_groups, probs) -> dict:
    """The sums of :func:`simulated_sums` from simulated tasks themselves, ``sim``
    (n_sims, cells, 3): what the tests compare :func:`interval_ends` on with
    ``rate_arrays``."""
    m = np.asarray(m, dtype=np.int64)
    n = np.bincount(gid, weights=m, minlength=n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = m / n[gid]
        adj = np.where(h < 1, 1.0 / (1.0 - h), np.nan)
    f = _features(sim.astype(np.float64), m[None, :, None], probs[gid][None])
    onehot = np.eye(n_groups)[gid]  # (cells, groups)
    keys, n_tasks = np.unique(np.stack([gid, m], axis=1), axis=0, return_counts=True)
    kh = keys[:, 1] / n[keys[:, 0]]
    with np.errstate(divide="ignore"):
        k_adj = np.where(kh < 1, 1.0 / (1.0 - kh), np.nan)
    return {
        "total": np.einsum("scf,cg->sgf", f[..., :3], onehot),
        "z1": np.einsum("scf,cg->sgf", f[..., 3:6], onehot),
        "a1": np.einsum("scf,cg->sgf", (adj * m)[None, :, None] * f[..., 3:6], onehot),
        "a2": np.einsum("scf,cg->sgf", adj[None, :, None] * f[..., 6:], onehot),
        "q2": np.einsum("scf,cg->sgf", f[..., 6:] / m[None, :, None], onehot),
        "am2": np.bincount(gid, weights=adj * m * m, minlength=n_groups),
        "keys": keys,
        "n_tasks": n_tasks,
        "adj": k_adj,
        "m": m,
        "gid": gid,
    }


def _quad(sym6: np.ndarray) -> np.ndarray:
    """``b_j' S b_j`` for each rate's coefficients ``b_j`` from the six distinct entries."""
    i, j = _IU
    coef = np.where(i == j, 1.0, 2.0)[:, None] * _B[i] * _B[j]  # (6, 5)
    return sym6 @ coef


def _net_df(sums: dict, icc: np.ndarray, n_groups: int) -> np.ndarray:
    """:func:`~evalstats.stats.rates.bm_df_exchangeable` per (simulation, group), summed
    over size classes (each class's tasks are alike in every term)."""
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
    """(n_sims, groups, 5) low and high ends of the default (``cr2_wilson``) intervals.

    ``rate_arrays``' formulas on the sums of :func:`simulated_sums`: CR2 SE
    ``sqrt(sum_c (y_c - est m_c)^2 / (1 - h_c)) / n``, with ``y_c - est m_c = u_c - d m_c``,
    ``u_c`` the task's numerator centred at the true rate and ``d = est - truth``.
    """
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
        # No spread: exactly 0 where a rate sits at an end of its range (every task at
        # it); rounding-level sums otherwise.
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
    n_sims = total.shape[0]
    dfs = np.repeat(np.broadcast_to(df, (n_sims, n_groups))[..., None], 5, axis=2).copy()
    dfs[..., 3:] = net_df[..., None]
    flat_shape = (n_sims * n_groups, 5)
    low, high, _ = _score_construction(
        est.reshape(flat_shape),
        se.reshape(flat_shape),
        np.tile(n, n_sims),
        dfs.reshape(flat_shape),
        np.tile(kish, n_sims),
        row_var.reshape(flat_shape),
        confidence,
        False,
    )
    one = np.tile(n_clusters <= 1, n_sims)
    low[one], high[one] = np.nan, np.nan
    return low.reshape(n_sims, n_groups, 5), high.reshape(n_sims, n_groups, 5)
