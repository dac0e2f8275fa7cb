"""The seed's disagreement rule, defined once for every layer that needs it.

Seed 000: when two judges disagree on more than 20 % of pairs, a human reads the disagreements
(re-curate the tasks or add a third judge) before anything is published. The runner (deciding
what to adjudicate), the statistics, the audit and the report all count disagreement here.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

__all__ = ["DISAGREEMENT_TRIGGER", "disagreeing", "disagreement_counts"]

#: Largest tolerated share of jointly judged units on which two judges differ (seed 000).
DISAGREEMENT_TRIGGER = 0.20


def disagreeing(wide: pd.DataFrame, judges: Sequence[str] | None = None) -> pd.Series:
    """Boolean per row: at least two of ``judges`` answered and their answers differ.

    ``wide`` has one row per judged unit (pair, or pair-order) and one column per judge
    holding that judge's outcome (missing = no usable answer).

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
    """Per pair of judges: units both answered (``n``), how many differ, and the rate.

    Columns ``judge_a, judge_b, n, disagreements, disagreement_rate, trigger`` (rate above
    ``threshold``, by default the seed's :data:`DISAGREEMENT_TRIGGER`); the rate is NaN
    where the two share no unit. Pairs are in sorted order (``judge_a < judge_b``).

    >>> import pandas as pd
    >>> w = pd.DataFrame({"a": ["win", "tie", "win"], "b": ["win", "loss", "win"]})
    >>> disagreement_counts(w)[["n", "disagreements"]].to_numpy().tolist()
    [[3, 1]]
    """
    cols = sorted(wide.columns if judges is None else judges)
    rows = []
    for a, b in combinations(cols, 2):
        both = wide[[a, b]].astype("string").dropna()
        n = len(both)
        k = int((both[a] != both[b]).sum())
        rate = k / n if n else np.nan
        rows.append(
            {
                "judge_a": a,
                "judge_b": b,
                "n": n,
                "disagreements": k,
                "disagreement_rate": rate,
                "trigger": bool(n and rate > threshold),
            }
        )
    return pd.DataFrame(
        rows, columns=["judge_a", "judge_b", "n", "disagreements", "disagreement_rate", "trigger"]
    )
