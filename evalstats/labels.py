"""People's verdicts on pairs: load, validate and write the ``labels`` table.

A ``labels`` file sits in a data directory beside ``tasks`` and ``runs`` (``labels.jsonl``,
``.parquet`` or ``.csv``). One row is one person's verdict on one pair, from WITH's point of
view: ``task_id``, ``replicate``, ``labeler``, ``outcome`` (win / tie / loss, or the rubric's own
label: (a)/(b)/(c), or a_wins/b_wins/tie with the shown ``order``), ``created_at``,
optional ``order`` (the order the two answers were shown in, when it was recorded) and ``note``.
Labels drawn with :mod:`evalstats.labelsheet` also carry their sample's provenance:
``sample_seed`` (the seed of the random draw) and ``frame_sha256`` (the hash of the pairs it was
drawn from). Without them a label cannot be shown to come from a random sample, which
prediction-powered inference (:func:`evalstats.stats.ppi.ppi_win_rates`) needs.

Validation reuses the readers of :mod:`evalstats.records`, so a bad record raises
:class:`~evalstats.errors.DataError` naming the file, the line (or row) and the field.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from .records import LABEL_FIELDS, LABEL_KEYS, load_labels, write_frame_atomic

__all__ = ["LABEL_FIELDS", "LABEL_KEYS", "has_provenance", "load_labels", "write_labels"]


def write_labels(labels: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a labels table atomically (format from the extension), known columns only."""
    cols = [c for c in LABEL_FIELDS if c in labels.columns]
    out = labels[cols].copy()
    out["outcome"] = out["outcome"].astype(str)
    if "order" in out.columns:
        out["order"] = out["order"].astype(object)
    if "created_at" in out.columns:
        out["created_at"] = pd.to_datetime(out["created_at"], utc=True).map(
            lambda t: t.isoformat() if not pd.isna(t) else None
        )
    return write_frame_atomic(out, path)


def has_provenance(labels: pd.DataFrame) -> bool:
    """True when every label carries a sample seed and a frame hash (drawn at random).

    >>> import pandas as pd
    >>> has_provenance(pd.DataFrame({"sample_seed": [1, 1], "frame_sha256": ["ab", "ab"]}))
    True
    >>> has_provenance(pd.DataFrame({"outcome": ["win"]}))
    False
    """
    if len(labels) == 0 or not {"sample_seed", "frame_sha256"} <= set(labels.columns):
        return False
    return bool(labels["sample_seed"].notna().all() and labels["frame_sha256"].notna().all())
