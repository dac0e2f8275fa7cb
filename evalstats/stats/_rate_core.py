"""The array core of the win rates: SEs, intervals, df and the net-win test per group.

:func:`rate_arrays` computes the five rates of many groups at once from per-(group, task)
counts; :func:`~evalstats.stats.win_rates` is its table, and the coverage battery and the
power simulations call it directly with one group per simulated evaluation. The methods
and why ``cr2_wilson`` is the default are described in :mod:`evalstats.stats.winrates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evalstats.stats._cluster import cr1_ratio, segment_sum
from evalstats.stats.resample import (
    BOOTSTRAP_METHODS,
    as_generator,
    bootstrap_distribution,
    interval_from_distribution,
)
from evalstats.stats.robust import (
    anova_icc,
    bm_df_exchangeable,
    cr2_ratio,
    t_interval,
    t_test_p,
    wild_cluster_interval,
    wild_cluster_p,
    wild_weights,
    wilson_interval,
    wilson_test_p,
)

__all__ = ["DEFAULT_METHOD", "FEW_CLUSTERS", "RATE_NAMES", "WIN_RATE_METHODS", "rate_arrays"]

RATE_NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
WIN_RATE_METHODS = (
    "cr2_wilson",
    "cr2_t",
    "cluster_wilson",
    "cluster_t",
    *BOOTSTRAP_METHODS,
    "wild_webb",
    "iid_wilson",
)
DEFAULT_METHOD = "cr2_wilson"
#: Designs with fewer effective clusters (Kish) than this are flagged and warned about.
FEW_CLUSTERS = 8.0
# Parameter range of each rate (net win lives on [-1, 1]).
_RANGE_LOW = np.array([0.0, 0.0, 0.0, -1.0, 0.0])
_RANGE_HIGH = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
# Bootstrap distributions of a batch of groups, held at once to compute their intervals.
_BATCH_BYTES = 64 * 2**20


def rate_arrays(
    wins: np.ndarray,
    ties: np.ndarray,
    losses: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    method: str = DEFAULT_METHOD,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    net_win_test: bool = True,
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """The five rates with SEs, intervals, df and the net-win test from per-cluster counts.

    The array core of :func:`win_rates`: ``wins``, ``ties``, ``losses`` are the counted
    verdicts of each (group, cluster) cell and ``gid`` its group; many evaluations are
    computed at once by giving each its own group (as the coverage battery does).
    ``net_win_test=False`` leaves ``net_win_p`` NaN: a simulation that needs only the
    intervals (or only whether the net win's interval excludes 0, which is exactly when
    the closed-form methods' ``net_win_p < 1 - confidence``) skips the p-value's root
    search, most of the cost of a large call. ``also`` names more bootstrap methods
    (``method`` being one) whose intervals come from the same resamples as ``method``'s:
    a comparison of bootstrap intervals (the coverage study) then pays for one
    distribution, and compares them on common random numbers.

    Returns
    -------
    dict of ndarray
        ``est``, ``se``, ``low``, ``high`` (groups x the five rates), ``net_win_p``,
        ``df`` (the rates'), ``net_win_df`` (net win's and the score's), ``net_win_icc``
        (the ANOVA ICC of the net-win rows it is computed at; NaN outside ``"cr2_*"``),
        ``n_eff_clusters``, ``few_clusters``, ``ci_note``, ``n``, ``n_clusters``; with
        ``also``, ``also``: ``{method: (low, high)}``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats._rate_core import rate_arrays
    >>> r = rate_arrays(np.array([2, 1, 3, 0]), np.array([1, 1, 0, 1]), np.array([0, 1, 0, 2]),
    ...                 np.zeros(4, dtype=int), 1)
    >>> r["est"][0].round(3).tolist()  # win, tie, loss, net win, score
    [0.5, 0.25, 0.25, 0.25, 0.625]
    >>> round(float(r["df"][0]), 3), bool(r["few_clusters"][0])
    (3.0, True)
    """
    if method not in WIN_RATE_METHODS:
        raise ValueError(f"method must be one of {WIN_RATE_METHODS}, got {method!r}")
    also = tuple(also)
    if also and not set((method, *also)) <= set(BOOTSTRAP_METHODS):
        raise ValueError(f"also: bootstrap methods ({BOOTSTRAP_METHODS}) beside one, got {also}")
    extra: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wins, ties, losses = (np.asarray(v, dtype=np.float64) for v in (wins, ties, losses))
    gid = np.asarray(gid, dtype=np.int64)
    denom = wins + ties + losses
    numerators = np.stack([wins, ties, losses, wins - losses, wins + 0.5 * ties], axis=1)
    used = denom > 0  # clusters with no counted verdict carry no information on a rate
    y, m, g = numerators[used], denom[used], gid[used]
    est, se2, df2, n_clusters, n, kish = cr2_ratio(y, m, g, n_groups)
    # Row-level variance of each statistic (0/1 rates: p(1-p); score: 0, 1/2, 1 values).
    row_var = est * (1.0 - est)
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = segment_sum((wins + 0.25 * ties)[used, None], g, n_groups)[:, 0]
        row_var[:, 4] = np.maximum(sq / n - est[:, 4] ** 2, 0.0)
        row_var[:, 3] = 4.0 * row_var[:, 4]
    if method in ("cluster_t", "cluster_wilson", "wild_webb", *BOOTSTRAP_METHODS):
        _, se, _, _ = cr1_ratio(y, m, g, n_groups)
        df = np.where(n_clusters > 1, n_clusters - 1.0, np.nan)
    elif method == "iid_wilson":
        se = np.sqrt(row_var / n[:, None])
        df = np.where(n > 1, np.inf, np.nan)
    else:
        se, df = se2, df2
    if method in ("cr2_wilson", "cr2_t"):
        # Net win (and score, the same statistic) gets the Satterthwaite df under an
        # exchangeable working model at the ICC of its own row values: with unequal task
        # sizes the working-independence df let the net-win test reject 6.4 % at 5 %
        # (benchmarks/coverage.py); equal sizes keep C - 1 whatever the ICC.
        icc = anova_icc(y[:, 4], (wins + 0.25 * ties)[used], m, g, n_groups)
        net_df = bm_df_exchangeable(m, icc, g, n_groups)
    else:
        icc, net_df = np.full(n_groups, np.nan), df
    dfs = np.repeat(df[:, None], len(RATE_NAMES), axis=1)
    dfs[:, 3:] = net_df[:, None]
    # Boundary size where no spread is observed: Kish's effective clusters (the largest
    # design effect the cluster sizes allow); the verdicts themselves for the IID interval.
    boundary_n = n if method == "iid_wilson" else kish
    if method in ("cr2_wilson", "cluster_wilson", "iid_wilson"):
        low, high, p_net = _score_construction(
            est, se, n, dfs, boundary_n, row_var, confidence, net_win_test
        )
    elif method in ("cr2_t", "cluster_t"):
        low, high = t_interval(est, se, dfs, confidence)
        low = np.clip(low, _RANGE_LOW, _RANGE_HIGH)
        high = np.clip(high, _RANGE_LOW, _RANGE_HIGH)
        p_net = t_test_p(est[:, 3], se[:, 3], net_df) if net_win_test else np.full(n_groups, np.nan)
        # No spread observed (a rate at 0 or 1, or every task alike): the t interval has
        # zero width, so take the boundary score construction, which keeps the df.
        flat = se <= 0
        if flat.any():
            b_low, b_high, b_p = _score_construction(
                est, se, n, dfs, kish, row_var, confidence, net_win_test
            )
            low, high = np.where(flat, b_low, low), np.where(flat, b_high, high)
            p_net = np.where(flat[:, 3], b_p, p_net)
    elif method == "wild_webb":
        gen = as_generator(rng)
        width = int(np.bincount(g, minlength=n_groups).max(initial=1))
        v = wild_weights(width, n_resamples, gen, kind="webb")
        low = np.full_like(est, np.nan)
        high = np.full_like(est, np.nan)
        for j in range(len(RATE_NAMES)):  # five statistics, each vectorised over groups
            low[:, j], high[:, j] = wild_cluster_interval(
                y[:, j],
                m,
                g,
                n_groups,
                confidence=confidence,
                weights=v,
                bounds=(_RANGE_LOW[j], _RANGE_HIGH[j]),
            )
        p_net = wild_cluster_p(y[:, 3], m, g, n_groups, 0.0, v)
        flat = ~(se > 0)
        if flat.any():
            b_low, b_high, b_p = _score_construction(est, se, n, dfs, kish, row_var, confidence)
            low, high = np.where(flat, b_low, low), np.where(flat, b_high, high)
            p_net = np.where(flat[:, 3], b_p, p_net)
    else:
        ends = _bootstrap_intervals(
            wins[used],
            ties[used],
            m,
            g,
            n_groups,
            methods=(method, *also),
            n_resamples=n_resamples,
            confidence=confidence,
            rng=as_generator(rng),
        )
        b_low, b_high, _ = _score_construction(est, se, n, dfs, kish, row_var, confidence, False)
        for name, (lo, hi) in ends.items():
            flat = ~(hi - lo > 0)
            ends[name] = (np.where(flat, b_low, lo), np.where(flat, b_high, hi))
        low, high = ends.pop(method)
        extra = ends
        p_net = np.full(n_groups, np.nan)  # a bootstrap interval is not a test here
    note = np.full(n_groups, "", dtype=object)
    if method in BOOTSTRAP_METHODS:
        note[:] = "net_win_p not computed for bootstrap intervals"
    note[n_clusters == 1] = (
        "one cluster: no between-task variation can be estimated "
        "(method='iid_wilson' gives an IID interval over verdicts)"
    )
    if method == "iid_wilson":
        note[:] = "IID interval over verdicts: ignores clustering by task"
    note[n == 0] = "no counted verdicts"
    one = (n_clusters <= 1) & (method != "iid_wilson")
    low[one], high[one], p_net[one] = np.nan, np.nan, np.nan
    for lo, hi in extra.values():
        lo[one], hi[one] = np.nan, np.nan
    out: dict[str, Any] = {
        "est": est,
        "se": np.where(one[:, None], np.nan, se),
        "low": low,
        "high": high,
        "net_win_p": p_net,
        "df": df,
        "net_win_df": np.where(one, np.nan, net_df),
        "net_win_icc": icc,
        "n_eff_clusters": kish,
        "few_clusters": ~(kish >= FEW_CLUSTERS),
        "ci_note": note,
        "n": n,
        "n_clusters": n_clusters,
    }
    if also:
        out["also"] = extra
    return out


def _score_construction(est, se, n, dfs, kish, row_var, confidence, net_win_test=True):
    """Score interval of each rate (net win from the score's) and the net-win test (NaN
    unless ``net_win_test``); ``dfs`` is (groups x rates), net win's and score's the same."""
    p = est.copy()
    s = se.copy()
    rv = row_var.copy()
    # Net win is 2 * score - 1: work on the score scale for it.
    p[:, 3], s[:, 3], rv[:, 3] = p[:, 4], s[:, 4], rv[:, 4]
    args = (s, n[:, None], dfs, kish[:, None])
    low, high = wilson_interval(p, *args, confidence, row_var=rv)
    low[:, 3], high[:, 3] = 2.0 * low[:, 3] - 1.0, 2.0 * high[:, 3] - 1.0
    if not net_win_test:
        return low, high, np.full(len(n), np.nan)
    p_net = wilson_test_p(p[:, 4], s[:, 4], n, dfs[:, 4], kish, 0.5, row_var=rv[:, 4])
    return low, high, p_net


def _rates_from_sums(s: np.ndarray) -> np.ndarray:
    w, t, n = s[..., 0], s[..., 1], s[..., 2]
    loss = n - w - t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([w / n, t / n, loss / n, (w - loss) / n, (w + 0.5 * t) / n], axis=-1)


def _bootstrap_intervals(
    wins: np.ndarray,
    ties: np.ndarray,
    denom: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    methods: Sequence[str],
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Interval ends (groups x rates) of each bootstrap method in ``methods``, all from
    one bootstrap distribution per group (the same resamples for every method)."""
    ends = {}
    for method in methods:
        low = np.full((n_groups, len(RATE_NAMES)), np.nan)
        ends[method] = (low, np.full_like(low, np.nan))
    stats = np.stack([wins, ties, denom], axis=1).astype(np.float64)
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(n_groups + 1))
    sizes = np.diff(bounds)
    todo = np.flatnonzero(sizes >= 2)
    if not todo.size:
        return ends
    # The draws are made group after group (the generator's stream, so the numbers, do not
    # depend on the batching); the intervals of a batch of groups are computed at once.
    width = int(sizes.max())
    per_group = 8 * len(RATE_NAMES) * (n_resamples + width)
    step = max(1, _BATCH_BYTES // per_group)
    for start in range(0, todo.size, step):
        batch = todo[start : start + step]
        theta_b = np.empty((batch.size, n_resamples, len(RATE_NAMES)))
        theta_hat = np.empty((batch.size, len(RATE_NAMES)))
        jack = np.full((batch.size, width, len(RATE_NAMES)), np.nan) if "bca" in methods else None
        for k, g in enumerate(batch):
            cs = stats[order[bounds[g] : bounds[g + 1]]]
            theta_hat[k] = _rates_from_sums(cs.sum(axis=0))
            theta_b[k] = bootstrap_distribution(cs, _rates_from_sums, n_resamples, rng)
            if jack is not None:
                jack[k, : len(cs)] = _rates_from_sums(cs.sum(axis=0) - cs)
        if len(ends) > 1:  # one sort serves every method's quantiles
            theta_b.sort(axis=1)
        for method, (low, high) in ends.items():
            lo, hi = interval_from_distribution(
                theta_b, theta_hat, confidence, method, jack, presorted=len(ends) > 1
            )
            low[batch] = np.clip(lo, _RANGE_LOW, _RANGE_HIGH)
            high[batch] = np.clip(hi, _RANGE_LOW, _RANGE_HIGH)
    return ends
