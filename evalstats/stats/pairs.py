"""The pairwise verdict frame for K >= 2 arms, and its encoding as integer arrays.

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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._schema import ARM_DTYPE, ORDER_DTYPE
from .._validate import check_columns
from ..errors import DataError, ParameterError

__all__ = [
    "ORDER_CODES",
    "PAIRWISE_COLUMNS",
    "Encoded",
    "encode",
    "pairwise_frame",
    "pairwise_from_verdicts",
    "task_resamples",
]

#: The columns of a pairwise verdict frame for K arms (`order` optional).
PAIRWISE_COLUMNS = ("task_id", "replicate", "judge", "arm_a", "arm_b", "order", "status", "outcome")
#: ``order`` values: the arm shown first.
ORDER_CODES = ("a_first", "b_first")
_REQUIRED = ("task_id", "judge", "arm_a", "arm_b", "status", "outcome")
_OUTCOME_CODE = {"loss": 0, "tie": 1, "win": 2}
_POSITION = {"a_first": 1, "b_first": -1, "with_first": 1, "without_first": -1}


def pairwise_from_verdicts(frame: pd.DataFrame) -> pd.DataFrame:
    """Today's two-arm verdict frame as a pairwise verdict frame (``arm_a = "with"``).

    Parameters
    ----------
    frame : pandas.DataFrame
        A verdict frame (:func:`evalstats.verdict_frame`): ``outcome`` from WITH's point of
        view, ``order`` ``"with_first"`` / ``"without_first"`` or missing. A ``rubric``
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
            "arm_a": np.full(n, "with", dtype=object),
            "arm_b": np.full(n, "without", dtype=object),
            "order": order.to_numpy(dtype=object),
            "status": frame["status"].astype(str).to_numpy(),
            "outcome": frame["outcome"].astype(object).to_numpy(),
        }
    )
    if "rubric" in frame.columns:
        out["rubric"] = frame["rubric"].astype(str).to_numpy()
    return out


@dataclass(frozen=True)
class Encoded:
    """A pairwise frame's ok rows as integer arrays (see :func:`encode`).

    ``a`` / ``b`` index :attr:`arms`; ``y`` is 0 loss, 1 tie, 2 win from ``a``'s view; ``pos``
    is +1 when ``a`` was shown first, -1 when ``b`` was, 0 when unknown; ``task`` indexes
    :attr:`tasks`.
    """

    arms: tuple[str, ...]
    tasks: np.ndarray
    task: np.ndarray
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray
    pos: np.ndarray
    judge: str

    @property
    def n_tasks(self) -> int:
        return len(self.tasks)


def _arm_order(frame: pd.DataFrame, arms: Sequence[str] | None) -> tuple[str, ...]:
    seen = pd.unique(pd.concat([frame["arm_a"], frame["arm_b"]]).astype(str))
    if arms is None:
        return tuple(seen)
    arms = tuple(str(a) for a in arms)
    missing = sorted(set(seen) - set(arms))
    if missing:
        raise ParameterError(f"arms {missing} are in the frame but not in arms={list(arms)}")
    return arms


def encode(
    frame: pd.DataFrame,
    *,
    judge: str | None = None,
    rubric: str | None = None,
    arms: Sequence[str] | None = None,
) -> Encoded:
    """The ok rows of one judge (and rubric) as :class:`Encoded` arrays; bad values raise
    ``DataError``.

    ``judge`` / ``rubric`` pick one judge / rubric; they may be omitted when the frame has
    one. ``arms`` fixes the arms' order (default: order of first appearance in ``arm_a``
    then ``arm_b``). A frame without ``arm_a`` / ``arm_b`` is the two-arm verdict frame
    (``with`` against ``without``); ``order`` may be ``a_first`` / ``b_first`` or the
    verdict frame's ``with_first`` / ``without_first`` (the arm_a / arm_b side).

    >>> f = pd.DataFrame({"task_id": ["t1", "t2"], "judge": "j", "arm_a": ["x", "y"],
    ...                   "arm_b": ["y", "z"], "status": "ok", "outcome": ["win", "loss"]})
    >>> e = encode(f)
    >>> e.arms, e.a.tolist(), e.b.tolist(), e.y.tolist(), e.pos.tolist()
    (('x', 'y', 'z'), [0, 1], [1, 2], [2, 0], [0, 0])
    """
    if "arm_a" not in frame.columns and "arm_b" not in frame.columns:
        frame = frame.assign(arm_a="with", arm_b="without")
    check_columns(frame, _REQUIRED, what="pairwise verdict frame")
    if "rubric" in frame.columns:
        rubrics = pd.unique(frame["rubric"].astype(str))
        if rubric is None and len(rubrics) > 1:
            raise ParameterError(
                f"the frame has {len(rubrics)} rubrics ({', '.join(rubrics)}): pass rubric="
            )
        if rubric is not None:
            if rubric not in set(rubrics):
                raise ParameterError(f"rubric {rubric!r} is not in the frame ({list(rubrics)})")
            frame = frame.loc[(frame["rubric"].astype(str) == rubric).to_numpy()]
    judges = pd.unique(frame["judge"].astype(str))
    if judge is None:
        if len(judges) > 1:
            raise ParameterError(
                f"the frame has {len(judges)} judges ({', '.join(map(str, judges))}): "
                "pass judge= to pick one"
            )
        judge = str(judges[0]) if len(judges) else ""
    elif judge not in set(judges):
        raise ParameterError(f"judge {judge!r} is not in the frame (judges: {list(judges)})")
    rows = frame.loc[
        (frame["judge"].astype(str) == judge).to_numpy()
        & (frame["status"].astype(str) == "ok").to_numpy()
    ]
    arm_names = _arm_order(rows if len(rows) else frame, arms)
    if len(arm_names) < 2:
        raise DataError(f"a ranking needs at least two arms, got {list(arm_names)}", field="arm_a")
    index = {a: i for i, a in enumerate(arm_names)}
    a = rows["arm_a"].astype(str).map(index).to_numpy()
    b = rows["arm_b"].astype(str).map(index).to_numpy()
    same = np.flatnonzero(a == b)
    if len(same):
        raise DataError(
            f"arm_a equals arm_b ({arm_names[a[same[0]]]!r})", line=int(same[0]) + 1, field="arm_b"
        )
    outcome = rows["outcome"].astype(object).map(_OUTCOME_CODE)
    bad = np.flatnonzero(outcome.isna().to_numpy())
    if len(bad):
        raise DataError(
            f"outcome must be win, tie or loss on an ok row, got {rows['outcome'].iloc[bad[0]]!r}",
            line=int(bad[0]) + 1,
            field="outcome",
        )
    if "order" in rows.columns:
        order = rows["order"].astype(object)
        pos = order.map(_POSITION).fillna(0).to_numpy(dtype=np.int8)
        unknown = order.notna().to_numpy() & (pos == 0)
        if unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise DataError(
                f"order must be a_first, b_first, with_first, without_first or missing, "
                f"got {order.iloc[i]!r}",
                line=i + 1,
                field="order",
            )
    else:
        pos = np.zeros(len(rows), dtype=np.int8)
    tasks, task = np.unique(rows["task_id"].astype(str).to_numpy(), return_inverse=True)
    return Encoded(
        arms=arm_names,
        tasks=tasks,
        task=task.astype(np.int64),
        a=a.astype(np.int64),
        b=b.astype(np.int64),
        y=outcome.to_numpy(dtype=np.int64),
        pos=pos,
        judge=judge,
    )


def task_resamples(
    n_tasks: int, n_resamples: int, rng: np.random.Generator, *, max_cells: int = 4_000_000
):
    """Yield blocks of task-cluster bootstrap weights, shape (block, n_tasks), float64.

    Row ``r`` holds how often each task was drawn (a multinomial with ``n_tasks`` draws), so
    a resample's per-task sums are ``weights @ per_task``; replicates stay inside their task.
    Blocks keep a weight matrix near ``max_cells`` numbers however many tasks there are.
    """
    block = max(1, min(n_resamples, max_cells // max(n_tasks, 1)))
    done = 0
    while done < n_resamples:
        m = min(block, n_resamples - done)
        draws = rng.integers(0, n_tasks, size=(m, n_tasks))
        flat = (draws + (np.arange(m) * n_tasks)[:, None]).ravel()
        yield np.bincount(flat, minlength=m * n_tasks).reshape(m, n_tasks).astype(np.float64)
        done += m


def pairwise_frame(
    data: Any, *, rubrics: Any = None, on_conflict: str = "conflict"
) -> pd.DataFrame:
    """The pairwise verdict frame of a data directory (:func:`evalstats.load_dir`), K arms.

    Each pair of arms judged (``arm_a``, ``arm_b`` of the judgment lines) is read the way the
    two-arm verdict frame is read (:func:`evalstats.verdict_frame`: the latest answer per
    call, conflicts, over-budget pairs as ``no_answer``, each judgment parsed with its
    rubric), ``arm_a`` in the WITH role and ``order`` a_first / b_first in place of
    with_first / without_first; then as :func:`pairwise_from_verdicts`. For the seeds' two
    arms (no ``arm_a`` on any line) it is ``pairwise_from_verdicts(verdict_frame(...))``.

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

    tasks, runs, judgments = data.tasks, data.runs, data.judgments
    if judgments is None:
        raise DataError("the data directory has no judgments yet", field="judgments")
    named = "arm_a" in judgments.columns and judgments["arm_a"].notna().any()
    if not named:
        out = pairwise_from_verdicts(
            verdict_frame(judgments, runs, tasks, rubrics=rubrics, on_conflict=on_conflict)
        )
        return out
    arm = runs["arm"].astype(str)
    keys = judgments[["arm_a", "arm_b"]].astype(str).drop_duplicates()
    parts = []
    for a, b in keys.itertuples(index=False):
        pick = ((judgments["arm_a"] == a) & (judgments["arm_b"] == b)).to_numpy()
        j = judgments.loc[pick]
        j = j.assign(
            order=j["order"].astype(object).map(_TO_SEED_ORDER).astype(ORDER_DTYPE)
        ).reset_index(drop=True)
        # Line numbers and source stay the file's, for the messages of verdict_frame.
        j.attrs = dict(judgments.attrs)
        if "lines" in judgments.attrs:
            j.attrs["lines"] = [judgments.attrs["lines"][i] for i in np.flatnonzero(pick)]
        r = runs.loc[arm.isin((a, b)).to_numpy()]
        r = r.assign(arm=arm[arm.isin((a, b))].map({a: "with", b: "without"}).astype(ARM_DTYPE))
        v = verdict_frame(j, r, tasks, rubrics=rubrics, on_conflict=on_conflict)
        p = pairwise_from_verdicts(v)
        parts.append(p.assign(arm_a=a, arm_b=b))
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(
        ["task_id", "replicate", "judge", "rubric", "arm_a", "arm_b", "order"],
        kind="stable",
        na_position="first",
    ).reset_index(drop=True)


_TO_SEED_ORDER = {"a_first": "with_first", "b_first": "without_first"}
