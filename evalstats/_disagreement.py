"""The seed's disagreement rule (two judges differing on more than 20 % of pairs), defined once
for the runner, the statistics, the audit and the report."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = ["DISAGREEMENT_TRIGGER", "disagreeing", "disagreement_counts"]

#: Largest tolerated share of jointly judged units on which two judges differ (seed 000).
DISAGREEMENT_TRIGGER = 0.20


def disagreeing(wide: pd.DataFrame, judges: Sequence[str] | None = None) -> pd.Series:
    """Per row of ``wide`` (one column per judge): at least two answered and they differ.

    >>> import pandas as pd
    >>> w = pd.DataFrame({"a": ["win", "tie", None], "b": ["win", "loss", "win"]})
    >>> disagreeing(w).tolist()
    [False, True, False]
    """
    cols = list(wide.columns if judges is None else judges)
    values = wide[cols].astype("string")
    return values.notna().sum(axis=1).ge(2) & values.nunique(axis=1, dropna=True).gt(1)


def disagreement_counts(
    wide: pd.DataFrame,
    judges: Sequence[str] | None = None,
    *,
    threshold: float = DISAGREEMENT_TRIGGER,
) -> pd.DataFrame:
    """Per pair of judges (sorted): ``judge_a, judge_b, n, disagreements, disagreement_rate,
    trigger`` (rate above ``threshold``; NaN where they share no unit).

    >>> import pandas as pd
    >>> w = pd.DataFrame({"a": ["win", "tie", "win"], "b": ["win", "loss", "win"]})
    >>> disagreement_counts(w)[["n", "disagreements"]].to_numpy().tolist()
    [[3, 1]]
    """
    cols = sorted(wide.columns if judges is None else judges)
    rows = []
    for a, b in combinations(cols, 2):
        both = wide[[a, b]].astype("string").dropna()
        n, k = len(both), int((both[a] != both[b]).sum())
        rate = k / n if n else np.nan
        rows.append((a, b, n, k, rate, bool(n and rate > threshold)))
    return pd.DataFrame(
        rows, columns=["judge_a", "judge_b", "n", "disagreements", "disagreement_rate", "trigger"]
    )
