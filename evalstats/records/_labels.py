"""The ``labels`` table (people's verdicts on pairs): its fields and its loader.

Here, beside the other tables of a data directory, so that :func:`load_dir` reads it;
:mod:`evalstats.labels` is its public home (and writes it).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .._schema import ARMS, OUTCOME_DTYPE, OUTCOMES
from ..errors import DataError
from ._contract import duplicate_error, first_duplicate, is_missing, validate_table
from ._read import find_file, read_table_raw

__all__ = ["LABEL_FIELDS", "LABEL_KEYS", "load_labels"]

# name -> (kind, required), the kinds of evalstats.records.
LABEL_FIELDS: dict[str, tuple[str, bool]] = {
    "task_id": ("str", True),
    "replicate": ("int", True),
    "labeler": ("str", True),
    "outcome": ("str", True),
    "created_at": ("datetime", True),
    "order": ("order", False),
    "note": ("str", False),
    "sample_seed": ("int", False),
    "frame_sha256": ("str", False),
    # The pair of arms labelled (outcome from arm_a's view); absent: the seeds' with/without.
    "arm_a": ("str", False),
    "arm_b": ("str", False),
}
# One person labels one pair of arms (in one shown order) once.
LABEL_KEYS = ["task_id", "replicate", "arm_a", "arm_b", "labeler", "order"]


# The rubrics' own labels, read from WITH's point of view: seed 000's (a) better / (b)
# equivalent / (c) worse, and seed 001's verdicts, which need the order the pair was shown in.
_WITH_WITHOUT_LABELS = {
    "(a)": "win",
    "a": "win",
    "(b)": "tie",
    "b": "tie",
    "(c)": "loss",
    "c": "loss",
}
_BLIND_LABELS = {"a_wins", "b_wins"}


def _from_label(value: str, order: str | None) -> str | None:
    if value in OUTCOMES:
        return value
    if value in _WITH_WITHOUT_LABELS:
        return _WITH_WITHOUT_LABELS[value]
    if value in _BLIND_LABELS and order in ("with_first", "without_first"):
        a_is_with = order == "with_first"
        return "win" if (value == "a_wins") == a_is_with else "loss"
    return None


def _typed(frame: pd.DataFrame, path: Path | None, lines: np.ndarray, unit: str) -> pd.DataFrame:
    given = frame["outcome"].astype(object).map(lambda v: v.strip().lower())
    order = frame["order"].astype(object).map(lambda v: None if is_missing(v) else str(v))
    outcome = pd.Series(
        [_from_label(v, o) for v, o in zip(given, order, strict=True)], index=frame.index
    )
    bad = np.flatnonzero(~outcome.isin(OUTCOMES).to_numpy())
    if bad.size:
        i = int(bad[0])
        blind = given.iloc[i] in _BLIND_LABELS
        reason = (
            f"the blind-pair label {frame.at[i, 'outcome']!r} needs the shown order "
            "(field 'order': with_first or without_first)"
            if blind
            else f"unknown outcome {frame.at[i, 'outcome']!r}; expected one of "
            f"{', '.join(OUTCOMES)} (WITH's point of view), a with-without label "
            "(a)/(b)/(c), or a blind-pair a_wins/b_wins/tie with its order"
        )
        line = int(lines[i])
        if unit == "line":
            raise DataError(reason, path=path, line=line, field="outcome")
        raise DataError(f"row {line}: {reason}", path=path, field="outcome")
    frame["label"] = pd.Series(frame["outcome"].astype(object).tolist(), dtype="str")
    bad_rep = np.flatnonzero(frame["replicate"].to_numpy() < 1)
    if bad_rep.size:
        i = int(bad_rep[0])
        raise DataError(
            f"replicate must be >= 1, got {frame.at[i, 'replicate']}",
            path=path,
            line=int(lines[i]),
            field="replicate",
        )
    frame["outcome"] = pd.Categorical(outcome.to_numpy(), dtype=OUTCOME_DTYPE)
    half = np.flatnonzero(frame["arm_a"].isna().to_numpy() != frame["arm_b"].isna().to_numpy())
    if half.size:
        i = int(half[0])
        reason = "a label names its pair of arms with both arm_a and arm_b, or neither"
        field = "arm_b" if frame["arm_b"].isna().iat[i] else "arm_a"
        if unit == "line":
            raise DataError(reason, path=path, line=int(lines[i]), field=field)
        raise DataError(f"row {int(lines[i])}: {reason}", path=path, field=field)
    for col, seed in zip(("arm_a", "arm_b"), ARMS, strict=True):
        frame[col] = frame[col].fillna(seed)
    key = frame.assign(order=frame["order"].astype(object).fillna(""))
    i = first_duplicate(key, LABEL_KEYS)
    if i is not None:
        raise duplicate_error(
            key, i, LABEL_KEYS, path if path is not None else Path("<labels>"), unit
        )
    return frame


def load_labels(path: str | os.PathLike[str], runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Load and validate a labels file (``DATA_DIR/labels.jsonl``, ``.parquet`` or ``.csv``).

    A directory is accepted too: its ``labels`` file is read.

    Parameters
    ----------
    path : path-like
        The labels file, or a data directory holding one.
    runs : DataFrame, optional
        Runs from :func:`evalstats.load_runs`; when given, every label must name a pair
        (task_id, replicate, arm_a, arm_b) that has runs of both arms.

    Returns
    -------
    DataFrame
        Columns of :data:`LABEL_FIELDS`; ``outcome`` has the ordered loss < tie < win dtype,
        ``order`` the order dtype (with_first: arm_a shown first), ``created_at`` is UTC,
        ``arm_a`` / ``arm_b`` the pair of arms (``"with"`` / ``"without"`` when absent).

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, unknown outcome or order, a replicate
        below 1, only one of arm_a / arm_b, a duplicate (task_id, replicate, arm_a, arm_b,
        labeler, order), a pair without runs.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "labels.jsonl").write_text(
    ...     '{"task_id": "t1", "replicate": 1, "labeler": "ann", "outcome": "win", '
    ...     '"created_at": "2026-01-02T03:04:05Z"}\\n'
    ...     '{"task_id": "t1", "replicate": 1, "labeler": "bob", "outcome": "Tie", '
    ...     '"created_at": "2026-01-02T03:04:05Z"}\\n'
    ... )
    >>> labels = load_labels(d)
    >>> labels["outcome"].astype(str).tolist()
    ['win', 'tie']
    """
    p = Path(path)
    if p.is_dir():
        found = find_file(p, "labels")
        assert found is not None
        p = found
    raw, lines, unit = read_table_raw(p)
    frame = validate_table(
        raw, lines, unit, LABEL_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )
    frame = _typed(frame, p, lines, unit)
    if runs is not None:
        arm = runs["arm"].astype(str) if "arm" in runs.columns else pd.Series("", runs.index)
        known = set(zip(runs["task_id"], runs["replicate"], arm, strict=True))
        has = [
            {(t, r, a), (t, r, b)} <= known if "arm" in runs.columns else (t, r, "") in known
            for t, r, a, b in zip(
                frame["task_id"], frame["replicate"], frame["arm_a"], frame["arm_b"], strict=True
            )
        ]
        unknown = np.flatnonzero(~np.asarray(has, dtype=bool))
        if unknown.size:
            i = int(unknown[0])
            arms = f"{frame.at[i, 'arm_a']} vs {frame.at[i, 'arm_b']}"
            raise DataError(
                f"label for pair (task_id={frame.at[i, 'task_id']!r}, "
                f"replicate={frame.at[i, 'replicate']}, {arms}) that has no runs",
                path=p,
                line=int(lines[i]) if unit == "line" else None,
                field="task_id",
            )
    return frame
