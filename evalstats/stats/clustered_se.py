"""A mean's IID standard error beside cluster-robust and cluster-bootstrap ones.

Leaderboards (AlpacaEval's, among others) publish ``pandas.Series.sem`` of per-record scores:
every record an independent draw. :func:`se_comparison` sets beside it, per group, the CR1
cluster-robust SE with its t(C - 1) interval (:func:`~evalstats.stats.means.cluster_mean`)
and the cluster bootstrap (SE, percentile and BCa intervals from one set of resamples), for
each clustering asked for, with the ratio of each SE to the IID one. Moved here from the
AlpacaEval case study: it is a statistic, not file reading.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._tidy import with_detail
from .._validate import check_columns, check_confidence, check_n_resamples
from .means import cluster_mean
from .resample import cluster_bootstrap

__all__ = ["se_comparison"]


def se_comparison(
    frame: pd.DataFrame,
    value: str,
    *,
    by: Sequence[str],
    clusterings: Sequence[tuple[str, str]],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: np.random.SeedSequence | int | None = None,
    estimate: str = "win_rate",
    iid_note: str = "records independent",
) -> pd.DataFrame:
    """IID, cluster-robust and cluster-bootstrap standard errors of a mean, per group.

    Parameters
    ----------
    frame : DataFrame
        One row per record: ``value``, the ``by`` columns and each clustering's column.
    value : str
        The numeric column whose mean is estimated.
    by : sequence of str
        Grouping columns (one estimate per group).
    clusterings : sequence of (label, column)
        Each clustering's name in the output and the column holding its cluster ids
        (no missing ids).
    confidence : float, default 0.95
    n_resamples : int, default 10 000
        Cluster-bootstrap resamples.
    seed : SeedSequence, int or None
        Spawned once per (clustering, group), in that order; one child seeds the bootstrap
        SE and both bootstrap intervals of its cell (the same resamples for all three).
    estimate : str, default "win_rate"
        Name of the estimate column (and of its ``_ci_low`` / ``_ci_high`` interval).
    iid_note : str
        Said in the ``iid`` row's ``interval`` description.

    Returns
    -------
    DataFrame
        Per group, one ``clustering == "iid"`` row (``pandas`` ``sem``, normal interval) then
        one row per clustering: ``n``, ``n_clusters``, the estimate, ``se``, ``se_ratio`` (to
        the IID SE), ``df``, the interval, ``interval`` (how it was built), ``boot_se``,
        ``boot_se_ratio``, ``boot_percentile_ci_low/high``, ``boot_bca_ci_low/high``,
        ``n_resamples``, ``confidence``.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"g": ["a"] * 6, "site": [1, 1, 2, 2, 3, 3],
    ...                   "y": [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]})
    >>> t = se_comparison(f, "y", by=["g"], clusterings=[("site", "site")], n_resamples=200,
    ...                   seed=0)
    >>> t[["clustering", "n_clusters", "win_rate"]].to_numpy().tolist()
    [['iid', 6, 0.5], ['site', 3, 0.5]]
    >>> bool(t.loc[1, "se"] > t.loc[0, "se"])  # records of one site move together
    True
    """
    keys = list(by)
    labels = [label for label, _ in clusterings]
    check_columns(frame, [value, *keys, *(col for _, col in clusterings)], what="frame")
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    for label, col in clusterings:
        if frame[col].isna().any():
            raise ValueError(f"clustering {label!r}: column {col!r} has missing cluster ids")
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    groups = frame.groupby(keys, sort=True)
    iid = groups[value].agg(n="size", mean="mean", se="sem").reset_index()
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    iid_se = {tuple(r[k] for k in keys): r["se"] for r in iid.to_dict("records")}
    rows: list[dict[str, Any]] = [
        {
            **{k: r[k] for k in keys},
            "clustering": "iid",
            "n": int(r["n"]),
            "n_clusters": int(r["n"]),
            estimate: r["mean"],
            "se": r["se"],
            "se_ratio": 1.0,
            "df": math.nan,
            f"{estimate}_ci_low": r["mean"] - z * r["se"],
            f"{estimate}_ci_high": r["mean"] + z * r["se"],
            "interval": f"normal: {estimate} ± z·SE ({iid_note})",
        }
        for r in iid.to_dict("records")
    ]
    seeds = iter(seq.spawn(len(iid) * len(clusterings)))
    parts = {key: sub for key, sub in groups}
    for label, col in clusterings:
        cr1 = cluster_mean(frame, value, cluster=col, by=keys, confidence=confidence)
        cr1 = with_detail(cr1).rename(columns={"estimate": "mean"})
        for r in cr1.to_dict("records"):
            key = tuple(r[k] for k in keys)
            sub = parts[key]
            child = next(seeds)
            boot: dict[str, Any] = {}
            for method in ("percentile", "bca"):
                # The same seed for both methods and the SE: one set of resamples.
                res = cluster_mean(
                    sub,
                    value,
                    cluster=col,
                    method=method,
                    confidence=confidence,
                    n_resamples=n_resamples,
                    rng=np.random.default_rng(child),
                )
                boot[f"boot_{method}_ci_low"] = float(res["ci_low"].iloc[0])
                boot[f"boot_{method}_ci_high"] = float(res["ci_high"].iloc[0])
            # Per-cluster sums in cluster_mean's order (sorted ids): its resamples, its SE.
            sums = sub.groupby(col, sort=True)[value].agg(["sum", "size"]).to_numpy(np.float64)
            if len(sums) >= 2:
                se_boot = float(
                    cluster_bootstrap(
                        sums,
                        lambda s: s[..., 0] / s[..., 1],
                        method="percentile",
                        n_resamples=n_resamples,
                        confidence=confidence,
                        rng=np.random.default_rng(child),
                    ).se[0]
                )
            else:
                se_boot = math.nan
            c = int(r["n_clusters"])
            rows.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "clustering": label,
                    "n": int(r["n"]),
                    "n_clusters": c,
                    estimate: r["mean"],
                    "se": r["se"],
                    "se_ratio": r["se"] / iid_se[key],
                    "df": r["df"],
                    f"{estimate}_ci_low": r["ci_low"],
                    f"{estimate}_ci_high": r["ci_high"],
                    "interval": f"cluster_t: {estimate} ± t({c - 1})·CR1 SE",
                    "boot_se": se_boot,
                    "boot_se_ratio": se_boot / iid_se[key],
                    **boot,
                }
            )
    out = pd.DataFrame(rows)
    order = {label: i for i, label in enumerate(["iid", *labels])}
    out = out.sort_values(
        [*keys, "clustering"], key=lambda s: s.map(order) if s.name == "clustering" else s
    ).reset_index(drop=True)
    out["n_resamples"] = int(n_resamples)
    out["confidence"] = float(confidence)
    return out
