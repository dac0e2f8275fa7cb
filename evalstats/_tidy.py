"""The one result shape: a long tidy frame, one row per statistic (per group).

Every statistic that returns a table returns a :class:`ResultFrame`: the grouping columns
(``rubric``, ``judge``, ...), then :data:`TIDY_COLUMNS` in that order, then at most a few
extra columns (``ci_note`` and the like), 16 columns at most so that a notebook shows them
all. Diagnostics that do not fit (counts, design flags, the options a view was computed
with) live on :attr:`ResultFrame.diagnostics`, a plain frame with one row per group, and are
joined onto the rows by ``detail=True`` where a function offers it.

``method`` is the one name for how an interval is made and ``confidence`` the one name for
its level, everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["MAX_COLUMNS", "TIDY_COLUMNS", "ResultFrame", "tidy_frame"]

#: The columns every result frame has, in this order, after its grouping columns.
TIDY_COLUMNS = (
    "statistic",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "p_value",
    "df",
    "n",
    "n_tasks",
    "method",
    "confidence",
)
#: A notebook shows 20 columns before it truncates; the shape stays well inside that.
MAX_COLUMNS = 16


class ResultFrame(pd.DataFrame):
    """A long tidy result: a :class:`pandas.DataFrame` with a compact view and diagnostics.

    Attributes
    ----------
    diagnostics : pandas.DataFrame or None
        One row per group: what the rows were computed from (counts, flags, options).
    by : tuple of str
        The grouping columns (the columns before ``statistic``).

    Examples
    --------
    >>> rows = pd.DataFrame({"judge": ["a"], "statistic": ["win_rate"], "estimate": [0.52],
    ...                      "ci_low": [0.41], "ci_high": [0.63]})
    >>> print(tidy_frame(rows, by=["judge"]).summary().to_string())
    judge  statistic
    a      win_rate     0.52 [0.41, 0.63]
    """

    _metadata = ["diagnostics", "by"]

    @property
    def _constructor(self) -> type[ResultFrame]:
        return ResultFrame

    def summary(self, digits: int = 2) -> pd.Series:
        """One line per row, ``0.52 [0.41, 0.63]`` (and ``p = 0.031`` where there is a
        p-value), indexed by the grouping columns and ``statistic``."""
        by = [c for c in (getattr(self, "by", None) or ()) if c in self.columns]
        keys = [*by, "statistic"] if "statistic" in self.columns else by
        lines = [
            _line(est, lo, hi, p, digits)
            for est, lo, hi, p in zip(
                self["estimate"],
                self.get("ci_low", pd.Series(np.nan, index=self.index)),
                self.get("ci_high", pd.Series(np.nan, index=self.index)),
                self.get("p_value", pd.Series(np.nan, index=self.index)),
                strict=True,
            )
        ]
        index = pd.MultiIndex.from_frame(self[keys]) if keys else self.index
        if len(keys) == 1:
            index = pd.Index(self[keys[0]])
        return pd.Series(lines, index=index, name="summary", dtype=object)


def _number(v: Any, digits: int) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return str(v)
    return "NaN" if np.isnan(x) else f"{x:.{digits}f}"


def _line(est: Any, lo: Any, hi: Any, p: Any, digits: int) -> str:
    text = _number(est, digits)
    if not (pd.isna(lo) and pd.isna(hi)):
        text += f" [{_number(lo, digits)}, {_number(hi, digits)}]"
    if not pd.isna(p):
        text += f", p = {float(p):.3g}"
    return text


def tidy_frame(
    rows: pd.DataFrame,
    *,
    by: Sequence[str] = (),
    diagnostics: pd.DataFrame | None = None,
    extra: Sequence[str] = (),
) -> ResultFrame:
    """``rows`` in the one result shape: ``by``, then :data:`TIDY_COLUMNS` (missing ones
    filled with NaN), then ``extra`` columns present in ``rows``; anything else is refused.

    Raises ``ValueError`` (a programming error, not a user's) when a column would be lost
    or the frame would exceed :data:`MAX_COLUMNS`.
    """
    by = list(by)
    keep = [*by, *TIDY_COLUMNS, *[c for c in extra if c in rows.columns]]
    unknown = [c for c in rows.columns if c not in keep]
    if unknown:
        raise ValueError(f"result columns outside the tidy shape: {unknown}")
    if len(keep) > MAX_COLUMNS:
        raise ValueError(f"a result frame has at most {MAX_COLUMNS} columns, not {len(keep)}")
    out = ResultFrame(rows.reindex(columns=keep).reset_index(drop=True))
    out.diagnostics = None if diagnostics is None else diagnostics.reset_index(drop=True)
    out.by = tuple(by)
    return out
