"""Blind-rubric dimension scores: per-arm means and the paired difference, clustered by task."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._schema import BLIND_DIMENSIONS
from .._validate import check_columns, check_confidence

__all__ = ["dimension_means"]


def dimension_means(frame: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """Per-dimension blind-rubric means for each arm and their paired difference, by task.

    Each task's ok verdicts are averaged first, then the task means are averaged with a
    t interval on ``C − 1`` degrees of freedom (C tasks). The task is the unit of
    independence, so this is a cluster-level interval; it weights tasks equally (not pairs).

    Parameters
    ----------
    frame : DataFrame
        A verdict frame with ``task_id``, ``status`` and the ``with_<dim>`` /
        ``without_<dim>`` columns (dims from ``evalstats._schema.BLIND_DIMENSIONS``); rows
        with every score missing (other rubrics, failed calls) are ignored.
    confidence : float, default 0.95
        Confidence level.

    Returns
    -------
    DataFrame
        Columns ``dim``, ``arm`` (``with``, ``without``, ``difference`` = with − without),
        ``mean``, ``ci_low``, ``ci_high``, ``n_tasks``, ``n`` (verdicts), ``confidence``.
        Intervals are NaN with fewer than two tasks.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.dimensions import dimension_means
    >>> dims = ("correctness", "specificity", "completeness", "hallucination_safety")
    >>> frame = pd.DataFrame({"task_id": ["a", "a", "b", "c"], "status": "ok",
    ...                       **{f"with_{d}": [4, 5, 3, 4] for d in dims},
    ...                       **{f"without_{d}": [3, 3, 3, 4] for d in dims}})
    >>> res = dimension_means(frame)
    >>> res.loc[(res["dim"] == "correctness") & (res["arm"] == "with"), "mean"].item()
    3.8333333333333335
    """
    confidence = check_confidence(confidence)
    cols = [f"{arm}_{d}" for arm in ("with", "without") for d in BLIND_DIMENSIONS]
    check_columns(frame, ("task_id", "status", *cols))
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    scores = pd.DataFrame(
        {c: pd.to_numeric(ok[c], errors="coerce").astype("float64") for c in cols}, index=ok.index
    )
    keep = scores.notna().any(axis=1).to_numpy()
    scores, tasks = scores.loc[keep], ok["task_id"].astype(str).to_numpy()[keep]
    for d in BLIND_DIMENSIONS:
        scores[f"difference_{d}"] = scores[f"with_{d}"] - scores[f"without_{d}"]
    rows = []
    per_task = scores.groupby(tasks).mean()
    counts = scores.groupby(tasks).count()
    for d in BLIND_DIMENSIONS:
        for arm in ("with", "without", "difference"):
            col = f"{arm}_{d}"
            m = per_task[col].dropna().to_numpy()
            c = len(m)
            mean = float(m.mean()) if c else np.nan
            if c >= 2:
                half = float(stats.t.ppf(0.5 + confidence / 2, c - 1) * m.std(ddof=1) / np.sqrt(c))
                lo, hi = mean - half, mean + half
            else:
                lo = hi = np.nan
            rows.append(
                {
                    "dim": d,
                    "arm": arm,
                    "mean": mean,
                    "ci_low": lo,
                    "ci_high": hi,
                    "n_tasks": c,
                    "n": int(counts[col].sum()),
                    "confidence": confidence,
                }
            )
    return pd.DataFrame(rows)
