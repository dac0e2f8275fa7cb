"""The loaders of tasks, runs and judgments."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._schema import (
    ARM_DTYPE,
    ARMS,
    JUDGMENT_FIELDS,
    RUN_FIELDS,
    TASK_FIELDS,
)
from ..errors import DataError
from ._contract import duplicate_error, first_duplicate, is_missing, validate_table
from ._pairs import check_judgment_arms, incomplete_pairs
from ._read import EvalstatsWarning, read_table_raw

__all__ = ["load_judgments", "load_runs", "load_tasks"]


def load_tasks(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Load and validate a tasks file.

    Parameters
    ----------
    path : path-like
        ``tasks.jsonl``, ``.parquet`` or ``.csv``.

    Returns
    -------
    DataFrame
        Columns ``task_id``, ``prompt``, ``canonical_answer``,
        ``canonical_written_at`` (UTC), ``budget_tokens``, ``budget_wall_s``, ``tags``.

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, duplicate ``task_id``.

    Examples
    --------
    >>> import tempfile, evalstats
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=3, n_replicates=1, seed=0)
    >>> tasks = evalstats.load_tasks(sim.tasks)
    >>> tasks.columns[:3].tolist(), len(tasks)
    (['task_id', 'prompt', 'canonical_answer'], 3)
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p)
    frame = validate_table(raw, lines, unit, TASK_FIELDS, p, text_source=p.suffix.lower() == ".csv")
    i = first_duplicate(frame, ["task_id"])
    if i is not None:
        raise duplicate_error(frame, i, ["task_id"], p, unit)
    return frame


def load_runs(
    path: str | os.PathLike[str],
    tasks: pd.DataFrame | None = None,
    *,
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Load and validate a runs file; with ``tasks``, also count tokens and apply budgets.

    Parameters
    ----------
    path : path-like
        ``runs.jsonl``, ``.parquet`` or ``.csv``.
    tasks : DataFrame, optional
        Tasks from :func:`load_tasks`. When given, every run's task must exist and
        the result gains ``tokens`` (cl100k_base, counted on ``transcript`` else
        ``answer``), ``over_budget`` and ``tokens_mismatch`` (see
        :func:`evalstats.tokens.annotate_runs`).
    allow_incomplete : bool, default False
        A pair (task_id, replicate) with only one arm is an error unless this is
        True, in which case it is kept and an :class:`EvalstatsWarning` names it.
    arms : sequence of str, optional
        The arms ``arms.toml`` lists (:attr:`Arms.ids`): every run's ``arm`` must be one of
        them, and the ``arm`` column's categories are in this order. Without it an arm is any
        name, but runs may not mix the seeds' ``with`` / ``without`` with other names (a
        typo such as ``witout`` would otherwise be a third arm).

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, unknown arm, duplicate
        (task_id, replicate, arm), unknown task, a pair with only one arm.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p)
    frame = validate_table(raw, lines, unit, RUN_FIELDS, p, text_source=p.suffix.lower() == ".csv")
    frame["arm"] = _check_arms(frame, arms, p, lines)
    keys = ["task_id", "replicate", "arm"]
    i = first_duplicate(frame, keys)
    if i is not None:
        raise duplicate_error(frame, i, keys, p, unit)
    bad_rep = np.flatnonzero(frame["replicate"].to_numpy() < 1)
    if bad_rep.size:
        j = int(bad_rep[0])
        raise DataError(
            f"replicate must be >= 1, got {frame.at[j, 'replicate']}",
            path=p,
            line=int(lines[j]),
            field="replicate",
        )
    if tasks is not None:
        known = set(tasks["task_id"].tolist())
        unknown = np.flatnonzero(~frame["task_id"].isin(known).to_numpy())
        if unknown.size:
            j = int(unknown[0])
            raise DataError(
                f"unknown task {frame.at[j, 'task_id']!r} (not in the tasks file)",
                path=p,
                line=int(lines[j]),
                field="task_id",
            )
    lonely = incomplete_pairs(frame)
    if len(lonely):
        first = lonely.iloc[0]
        j = int(first["index"])
        msg = (
            f"pair (task_id={first['task_id']!r}, replicate={first['replicate']}) has only "
            f"the {first['arm']!r} run"
            + (f" ({len(lonely) - 1} more incomplete pairs)" if len(lonely) > 1 else "")
        )
        if not allow_incomplete:
            raise DataError(msg, path=p, line=int(lines[j]), field="arm")
        warnings.warn(
            f"{p}:{lines[j]}: {msg}; kept because allow_incomplete=True",
            EvalstatsWarning,
            stacklevel=2,
        )
    if tasks is not None:
        from ..tokens import annotate_runs

        attrs = dict(frame.attrs)
        frame = annotate_runs(frame, tasks)
        frame.attrs.update(attrs)
    return frame


def _check_arms(
    frame: pd.DataFrame, arms: Sequence[str] | None, p: Path, lines: np.ndarray
) -> pd.Series:
    """The ``arm`` column, checked against ``arms`` (or the seeds' names) and typed."""
    arm = frame["arm"].astype(object)
    if arms is not None:
        arms = tuple(arms)
        bad = np.flatnonzero(~arm.isin(arms).to_numpy())
        if bad.size:
            j = int(bad[0])
            raise DataError(
                f"unknown arm {arm.iat[j]!r}; arms.toml lists {', '.join(arms)}",
                path=p,
                line=int(lines[j]),
                field="arm",
            )
        return arm.astype(ARM_DTYPE if set(arms) == set(ARMS) else pd.CategoricalDtype(arms))
    seeds = arm.isin(ARMS).to_numpy()
    if seeds.any() and not seeds.all():
        j = int(np.flatnonzero(~seeds)[0])
        raise DataError(
            f"unknown arm {arm.iat[j]!r}; the other runs are 'with' / 'without' "
            "(to compare more arms, list them all in arms.toml)",
            path=p,
            line=int(lines[j]),
            field="arm",
        )
    return frame["arm"]


def load_judgments(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Load and validate judgment lines (the judge runner's journal).

    Lines carrying a ``kind`` other than ``"judgment"`` (batch bookkeeping written
    by the runner) are skipped; every judgment line is kept, failed calls included.
    A last line that is not JSON and has no newline (a write cut short by a kill) is
    skipped with an :class:`EvalstatsWarning` naming it: that call never finished, and the
    judge runner sets the bytes aside and makes it again. A corrupt line anywhere else is a
    :class:`DataError` naming the file and line.

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, unknown order; ``arm_a`` / ``arm_b``
        (K arms: the pair judged) on some lines only, equal, or with a with_first order.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p, skip_unreadable=True)
    if "kind" in raw.columns:
        keep = raw["kind"].map(lambda k: is_missing(k) or k == "judgment").to_numpy(dtype=bool)
        raw, lines = raw.loc[keep].reset_index(drop=True), lines[keep]
    frame = validate_table(
        raw, lines, unit, JUDGMENT_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )
    return check_judgment_arms(frame, p)
