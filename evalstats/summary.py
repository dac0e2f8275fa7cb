"""Plain count tables of a verdict frame (no inference; see evalstats.stats for that)."""

from __future__ import annotations

import pandas as pd

from ._schema import OUTCOMES, STATUSES

__all__ = ["status_table"]


def status_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts per (rubric, judge[, arm_a, arm_b]): rows by status and, among ``ok``, by outcome.

    >>> from evalstats.frames import load_frame
    >>> t = status_table(load_frame("data/sample"))
    >>> t.columns[:6].tolist(), int(t["n"].sum()) == int(t[["ok", "no_answer", "invalid", "error"]].sum().sum())
    (['rubric', 'judge', 'arm_a', 'arm_b', 'n', 'ok'], True)
    """
    keys = ["rubric", "judge", *(c for c in ("arm_a", "arm_b") if c in frame.columns)]
    # Only the (rubric, judge, pair) combinations present: not the product of the keys.
    status = pd.crosstab([frame[k].astype(str) for k in keys], frame["status"])
    status = status.reindex(columns=list(STATUSES), fill_value=0)
    ok = frame.loc[frame["status"] == "ok"]
    outcome = pd.crosstab([ok[k].astype(str) for k in keys], ok["outcome"], dropna=False)
    outcome = outcome.reindex(index=status.index, columns=list(OUTCOMES), fill_value=0)
    table = pd.concat([status, outcome], axis=1)
    table.columns = [*STATUSES, *(f"n_{o}" for o in OUTCOMES)]
    table.insert(0, "n", status.sum(axis=1))
    stale = frame.attrs.get("stale") or {}
    if any(stale.values()):  # judgments of answers changed since: left out, counted here
        table["stale"] = [stale.get(k if isinstance(k, tuple) else (k,), 0) for k in table.index]
    return table.reset_index()
