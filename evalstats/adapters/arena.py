"""Chatbot Arena battles (Chatzi et al., NeurIPS 2024), judged by people and three LLMs.

A pairwise verdict frame for K arms (``arm_a``, ``arm_b`` on every row): model A is ``arm_a``
and is shown first; each battle is its own task. The mapping: ``docs/methods.md``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError

__all__ = ["ARENA_JUDGES", "load"]

ARENA_JUDGES = ("human", "gpt-4-0125-preview", "claude-3-opus-20240229", "gpt-3.5-turbo")
_VERDICTS = {"model_a": "win", "model_b": "loss", "tie": "tie", "tie (bothbad)": "tie"}


def load(path: str | os.PathLike[str], judge: str | Sequence[str] = "human") -> pd.DataFrame:
    """The battles of one judge (or several, stacked) as a pairwise verdict frame.

    Parameters
    ----------
    path : str or path-like
        ``battles.csv.gz`` (or a directory holding it).
    judge : str or sequence of str
        Judge column(s) of :data:`ARENA_JUDGES`, or ``"all"``.

    Returns
    -------
    pandas.DataFrame
        ``task_id, replicate, judge, arm_a, arm_b, order, status, outcome, question_id``.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "battles.csv.gz")
    judges = (
        list(ARENA_JUDGES) if judge == "all" else [judge] if isinstance(judge, str) else list(judge)
    )
    unknown = [j for j in judges if j not in ARENA_JUDGES]
    if unknown:
        raise ParameterError(f"judge must be one of {ARENA_JUDGES} or 'all', got {unknown[0]!r}")
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    need = ["num", "question_id", "model_a", "model_b", *judges]
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}", path=path, line=1, field=missing[0])
    frames = []
    for j in judges:
        outcome = raw[j].map(_VERDICTS)
        bad = np.flatnonzero(outcome.isna().to_numpy())
        if len(bad):
            raise DataError(
                f"verdict must be model_a, model_b, tie or tie (bothbad), got {raw[j].iloc[bad[0]]!r}",
                path=path,
                line=int(bad[0]) + 2,  # the header is line 1
                field=j,
            )
        one = {"task_id": raw["num"].to_numpy(), "replicate": 1, "judge": j}
        one |= {"arm_a": raw["model_a"].to_numpy(), "arm_b": raw["model_b"].to_numpy()}
        one |= {"order": "a_first", "status": "ok", "outcome": outcome.to_numpy()}
        frames.append(pd.DataFrame({**one, "question_id": raw["question_id"].to_numpy()}))
    return pd.concat(frames, ignore_index=True)
