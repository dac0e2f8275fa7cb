"""Load and validate tasks, runs and judgments; write files atomically.

Every loader reads JSON Lines (``.jsonl``/``.ndjson``), Parquet (``.parquet``)
or CSV (``.csv``) by extension and returns a DataFrame with the dtypes of the
data contract. Bad input raises :class:`~evalstats.errors.DataError` naming the
file, the line (JSON Lines, CSV counting the header as line 1) or row (Parquet,
1-based) and the field.

Layout: ``_read`` (a file into raw records), ``_contract`` (the data contract's types and
validation), ``_tables`` (tasks, runs, judgments, pairs), ``_arms`` (``arms.toml``), ``_dataset`` (a data directory,
:class:`Dataset`, arm names) and ``_write`` (atomic writers).
"""

from __future__ import annotations

from .._atomic import atomic_write
from ._arms import Arms, load_arms
from ._contract import duplicate_error, first_duplicate, is_missing, validate_table
from ._dataset import DEFAULT_ARM_NAMES, Dataset, load_arm_names, load_dir
from ._labels import LABEL_FIELDS, LABEL_KEYS, load_labels
from ._pairs import PAIR_MODES, arm_pairs, incomplete_pairs, pair_runs, pair_token_sources
from ._read import EvalstatsWarning, find_file, read_table_raw
from ._tables import load_judgments, load_runs, load_tasks
from ._write import FRAME_SUFFIXES, check_output_path, write_frame_atomic, write_jsonl_atomic

__all__ = [
    "validate_table",
    "read_table_raw",
    "first_duplicate",
    "duplicate_error",
    "DEFAULT_ARM_NAMES",
    "LABEL_FIELDS",
    "LABEL_KEYS",
    "load_labels",
    "Arms",
    "Dataset",
    "EvalstatsWarning",
    "FRAME_SUFFIXES",
    "atomic_write",
    "check_output_path",
    "find_file",
    "incomplete_pairs",
    "is_missing",
    "load_arm_names",
    "load_arms",
    "load_dir",
    "load_judgments",
    "load_runs",
    "load_tasks",
    "pair_runs",
    "PAIR_MODES",
    "arm_pairs",
    "pair_token_sources",
    "write_frame_atomic",
    "write_jsonl_atomic",
]
