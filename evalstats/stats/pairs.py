"""The pairwise verdict frame for K >= 2 arms (encoded for the statistics by :func:`evalstats.stats.ranking.encode`).

A **pairwise verdict frame** has one row per judgment of two arms on one task:

============  ==========================================================================
column        meaning
============  ==========================================================================
task_id       the task (the cluster: every interval resamples tasks, replicates inside)
replicate     the run of the task (int); replicates are nested in tasks
judge         who judged (``"human"``, ``"openai:gpt-5.4"``, ...)
arm_a         the first arm of the pair (any name)
arm_b         the second arm of the pair (any name other than ``arm_a``)
order         which arm was shown first: ``"a_first"``, ``"b_first"``, or missing (optional)
status        ``"ok"`` rows are counted; any other status is left out
outcome       ``"win"``, ``"tie"`` or ``"loss"``, from ``arm_a``'s point of view
============  ==========================================================================

Nothing else is required; extra columns are kept and ignored. A pair may appear in either
orientation (``a`` vs ``b`` on one row, ``b`` vs ``a`` on another): the statistics orient every
row to one canonical pair first. Today's two-arm verdict frame (:func:`evalstats.verdict_frame`,
``outcome`` from WITH's view) is the case K = 2 through :func:`pairwise_from_verdicts`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validate import check_columns
from ..errors import DataError

__all__ = ["PAIRWISE_COLUMNS", "pairwise_frame", "pairwise_from_verdicts"]

#: The columns of a pairwise verdict frame for K arms (`order` optional).
PAIRWISE_COLUMNS = ("task_id", "replicate", "judge", "arm_a", "arm_b", "order", "status", "outcome")


def pairwise_from_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """A verdict frame as a pairwise verdict frame (order a_first / b_first).

    Parameters
    ----------
    frame : pandas.DataFrame
        A verdict frame (:func:`evalstats.verdict_frame`): ``outcome`` from arm_a's point
        of view, ``order`` ``"with_first"`` / ``"without_first"`` (arm_a / arm_b first) or
        missing; ``arm_a`` / ``arm_b`` (absent: ``"with"`` / ``"without"``). A ``rubric``
        column is kept (pick one rubric before comparing).

    Returns
    -------
    pandas.DataFrame
        :data:`PAIRWISE_COLUMNS` (plus ``rubric`` when present), one row per verdict.

    Examples
    --------
    >>> v = pd.DataFrame({"task_id": ["t1", "t1"], "replicate": [0, 0], "judge": ["j", "j"],
    ...                   "order": ["with_first", "without_first"], "status": ["ok", "ok"],
    ...                   "outcome": ["win", "tie"]})
    >>> pairwise_from_verdicts(v)[["arm_a", "arm_b", "order", "outcome"]].to_string(index=False)
    'arm_a   arm_b   order outcome\\n with without a_first     win\\n with without b_first     tie'
    """
    check_columns(frame, ("task_id", "judge", "status", "outcome"))
    n = len(frame)
    order = frame["order"] if "order" in frame.columns else pd.Series(pd.NA, index=frame.index)
    order = order.astype(object).map({"with_first": "a_first", "without_first": "b_first"})
    out = pd.DataFrame(
        {
            "task_id": frame["task_id"].astype(str).to_numpy(),
            "replicate": (
                frame["replicate"].to_numpy() if "replicate" in frame.columns else np.zeros(n, int)
            ),
            "judge": frame["judge"].astype(str).to_numpy(),
            "arm_a": _arm_column(frame, "arm_a", "with", n),
            "arm_b": _arm_column(frame, "arm_b", "without", n),
            "order": order.to_numpy(dtype=object),
            "status": frame["status"].astype(str).to_numpy(),
            "outcome": frame["outcome"].astype(object).to_numpy(),
        }
    )
    if "rubric" in frame.columns:
        out["rubric"] = frame["rubric"].astype(str).to_numpy()
    return out


def _arm_column(frame: pd.DataFrame, col: str, default: str, n: int) -> np.ndarray:
    if col in frame.columns:
        return frame[col].astype(object).fillna(default).to_numpy(dtype=object)
    return np.full(n, default, dtype=object)


def pairwise_frame(
    data: Any, *, rubrics: Any = None, on_conflict: str = "conflict"
) -> pd.DataFrame:
    """The pairwise verdict frame of a data directory (:func:`evalstats.load_dir`), K arms.

    ``pairwise_from_verdicts(verdict_frame(judgments, runs, tasks))``: one row per verdict
    on a pair of arms, ``order`` a_first / b_first.

    Parameters
    ----------
    data : Dataset
        ``tasks``, ``runs`` and ``judgments`` (a :class:`evalstats.records.Dataset`).
    rubrics, on_conflict
        As for :func:`evalstats.verdict_frame`.

    Returns
    -------
    pandas.DataFrame
        :data:`PAIRWISE_COLUMNS` and ``rubric``, one row per verdict, sorted by task,
        replicate, judge, rubric, pair and order.

    Examples
    --------
    >>> import tempfile, evalstats
    >>> d = tempfile.mkdtemp()
    >>> _ = evalstats.simulate(d, arms=("none", "v1", "v2"), reference="none", n_tasks=2,
    ...                        n_replicates=1, judges=("openai:gpt-4o",))
    >>> f = pairwise_frame(evalstats.load_dir(d))
    >>> sorted(set(zip(f["arm_a"], f["arm_b"])))
    [('v1', 'none'), ('v2', 'none'), ('v2', 'v1')]
    """
    from ..frames import verdict_frame

    if data.judgments is None:
        raise DataError("the data directory has no judgments yet", field="judgments")
    frame = verdict_frame(
        data.judgments, data.runs, data.tasks, rubrics=rubrics, on_conflict=on_conflict
    )
    return pairwise_from_verdicts(frame)
