"""AlpacaEval annotations as the package's verdict frame: the files found, the rows mapped."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...errors import DataError, ParameterError
from ...records import EvalstatsWarning
from .. import pairwise
from ._records import _SUFFIXES, _read_records, _record_row

__all__ = ["EXTRA_COLUMNS", "GROUP_COLUMNS", "RUBRIC", "annotation_files", "load"]


RUBRIC = "alpaca_eval"


# A leaderboard row is per (model, baseline, judge); AlpacaEval fixes the baseline.
GROUP_COLUMNS = ("model", "baseline", "judge")


EXTRA_COLUMNS = (
    "model",
    "baseline",
    "dataset",
    "preference",
    "win_share",
    "len_with",
    "len_without",
    "judge_time_s",
)


def annotation_files(data_dir: str | os.PathLike[str], *, required: bool = False) -> list[Path]:
    """The AlpacaEval annotation files in ``data_dir`` or below it, sorted by relative path.

    A file counts when its name contains ``annotations`` and ends with ``.json``,
    ``.jsonl`` or ``.ndjson`` (optionally ``.gz``): ``claude-2.1.annotations.jsonl.gz``
    as in ``shared/data/alpaca_eval``, or AlpacaEval's own layout
    ``results/<model>/<annotator>/annotations.json``. Hidden directories are skipped.

    Parameters
    ----------
    data_dir : path-like
    required : bool, default False
        Raise :class:`~evalstats.errors.DataError` when there is none (else return ``[]``).

    Returns
    -------
    list of Path
    """
    d = Path(data_dir)
    found = []
    if d.is_dir():
        for p in d.rglob("*annotations*"):
            rel = p.relative_to(d)
            name = p.name.lower()
            base = name[:-3] if name.endswith(".gz") else name
            if (
                p.is_file()
                and base.endswith(_SUFFIXES)
                and not any(part.startswith(".") for part in rel.parts)
            ):
                found.append(p)
    if required and not found:
        raise DataError(
            "no AlpacaEval annotation file (*annotations*.json, .jsonl or .ndjson, optionally "
            ".gz) in this directory or below it",
            path=d,
        )
    return sorted(found, key=lambda p: p.relative_to(d).as_posix())


def load(path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """Read AlpacaEval annotations into a verdict frame (model = WITH, baseline = WITHOUT).

    Parameters
    ----------
    path : path-like or sequence of path-likes
        ``annotations.json`` (a JSON array, as AlpacaEval writes it), ``.jsonl``
        / ``.ndjson``, or either gzipped (``.json.gz``, ``.jsonl.gz``); array or
        lines is recognised from the content. A sequence of paths is read in
        order and concatenated (e.g. several models' files). Fields:
        ``instruction_id`` (or ``instruction``), ``generator_1`` (baseline),
        ``generator_2`` (model), ``annotator``, ``preference``, and optionally
        ``dataset``, ``price_per_example``, ``time_per_example``,
        ``len_output_1``, ``len_output_2`` (or ``output_1``, ``output_2``),
        ``raw_completion``; other fields are ignored.

    Returns
    -------
    DataFrame
        The columns of :data:`evalstats._schema.VERDICT_COLUMNS` followed by
        :data:`EXTRA_COLUMNS`, one row per record, sorted by model, baseline,
        task, replicate and judge. See the module docstring for the mapping and
        the preference-to-outcome rule; invalid preferences are kept with
        ``status == "invalid"``. Several models, baselines and annotators may
        share one frame: ``model``, ``baseline`` and ``judge`` are the grouping
        columns (:data:`GROUP_COLUMNS`).

    Raises
    ------
    DataError
        Unsupported or unreadable file, malformed JSON, a record that is not an
        object, a missing or mistyped required field, a negative or non-numeric
        price, time or length; the message names file, line and field.

    Warns
    -----
    EvalstatsWarning
        The same instruction appears more than once for one (model, baseline,
        annotator): the repeats are kept as replicates 2, 3, ...

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from evalstats.adapters import alpaca_eval
    >>> recs = [{"instruction": f"q{i}", "generator_1": "base", "generator_2": "mine",
    ...          "annotator": "judge", "preference": p, "output_1": "a", "output_2": "bb"}
    ...         for i, p in enumerate([2.0, 1.0, 1.5, 2.0])]
    >>> path = Path(tempfile.mkdtemp()) / "annotations.json"
    >>> _ = path.write_text(json.dumps(recs))
    >>> frame = alpaca_eval.load(path)
    >>> sorted(frame["outcome"].astype(str))
    ['loss', 'tie', 'win', 'win']
    >>> board = alpaca_eval.leaderboard_row(frame)
    >>> float(board["win_rate"].iloc[0]), int(board["n_wins"].iloc[0])
    (62.5, 2)
    """
    if isinstance(path, (str, os.PathLike)):
        paths = [Path(path)]
    else:
        paths = [Path(p) for p in path]
        if not paths:
            raise ParameterError("no annotation files given")
    rows: list[dict[str, Any]] = []
    for p in paths:
        records, lines = _read_records(p)
        rows.extend(_record_row(rec, p, line) for rec, line in zip(records, lines, strict=True))
    return _build_frame(rows)


def _build_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    def col(name: str) -> list[Any]:
        return [r[name] for r in rows]

    task = pd.Series(col("instruction_id"), dtype="str")
    model = pd.Series(col("generator_2"), dtype="str")
    baseline = pd.Series(col("generator_1"), dtype="str")
    judge = pd.Series(col("annotator"), dtype="str")
    key = pd.DataFrame({"m": model, "b": baseline, "j": judge, "t": task})
    replicate = key.groupby(["m", "b", "j", "t"], sort=False).cumcount().to_numpy() + 1
    if (replicate > 1).any():
        sources = col("judgment_id")
        first_dup = int(np.flatnonzero(replicate > 1)[0])
        first_seen = int(np.flatnonzero((key == key.iloc[first_dup]).all(axis=1).to_numpy())[0])
        warnings.warn(
            f"{sources[first_dup]}: instruction {task[first_dup]!r} already annotated by "
            f"{judge[first_dup]!r} for model {model[first_dup]!r} at {sources[first_seen]}; "
            f"{int((replicate > 1).sum())} repeated record(s) kept as replicates 2, 3, ...",
            EvalstatsWarning,
            stacklevel=3,
        )
    table = pd.DataFrame(rows, columns=_ROW_FIELDS)
    outcome, error = col("outcome"), col("parse_error")
    table["replicate"] = replicate.astype(np.int64)
    table["label"] = [
        repr(float(p)) if o is not None else None
        for p, o in zip(col("preference"), outcome, strict=True)
    ]
    # The record was read (and its preference checked) by _record_row; the generic mapping
    # takes the (outcome, reason) it found.
    table["verdict"] = pd.Series(list(zip(outcome, error, strict=True)), dtype=object)
    return pairwise.verdict_frame(
        table,
        item="instruction_id",
        judge="annotator",
        verdict="verdict",
        outcome=_as_read,
        sides=("generator_2", "generator_1"),
        side_names=("model", "baseline"),
        replicate="replicate",
        rubric=RUBRIC,
        columns={
            "judge_usd": "price_per_example",
            "raw": "raw",
            "judgment_id": "judgment_id",
            "label": "label",
        },
        extra={
            "dataset": ("dataset", "str"),
            "preference": ("preference", "float64"),
            "win_share": ("win_share", "float64"),
            "len_with": ("len_output_2", "Int64"),
            "len_without": ("len_output_1", "Int64"),
            "judge_time_s": ("time_per_example", "float64"),
        },
        sort_by=["model", "baseline", "task_id", "replicate", "judge"],
    )


_ROW_FIELDS = [
    "instruction_id",
    "generator_1",
    "generator_2",
    "annotator",
    "dataset",
    "price_per_example",
    "time_per_example",
    "len_output_1",
    "len_output_2",
    "raw",
    "preference",
    "win_share",
    "outcome",
    "parse_error",
    "judgment_id",
]


def _as_read(value: tuple[str | None, str | None]) -> tuple[str | None, str | None]:
    return value
