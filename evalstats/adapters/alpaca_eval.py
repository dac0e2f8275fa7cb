"""AlpacaEval judge annotations as a verdict frame, and its leaderboard recomputed.

AlpacaEval (tatsu-lab/alpaca_eval) has an LLM judge (the *annotator*) compare a
model's output (``generator_2``) with a baseline's (``generator_1``) on each
instruction and writes one record per comparison to ``annotations.json``.
:func:`load` reads such records into the package's own verdict frame, from the
model's point of view (model = the WITH side, baseline = the WITHOUT side,
instruction = task, annotator = judge), so every statistic of
:mod:`evalstats.stats` applies; :func:`leaderboard_row` recomputes the
leaderboard columns AlpacaEval publishes with those statistics.

Mapping (``rubric`` is ``"alpaca_eval"``, ``order`` is NA, token and wall-clock
columns are NA):

=========================  ================================================
verdict frame              AlpacaEval record
=========================  ================================================
``task_id``                ``instruction_id`` (if absent: the first 12 hex
                           digits of the sha1 of ``instruction``)
``replicate``              1; the k-th record of the same (model, baseline,
                           annotator, instruction) gets k, with a warning
``judge``                  ``annotator``
``status`` / ``outcome``   from ``preference``, see below
``label``                  the preference as text (``"2.0"``, ``"1.5"``...)
``judge_usd``              ``price_per_example``
``raw``                    ``raw_completion`` (a non-string one as JSON)
``judgment_id``            ``<path as given>:<line>``
``model``, ``baseline``    ``generator_2``, ``generator_1``
``preference``             ``preference`` as given (float, NaN if missing)
``win_share``              ``preference - 1`` in [0, 1] for ok rows, else NaN
``len_with``/``len_without``  ``len_output_2``/``len_output_1`` (characters;
                           if absent, the length of ``output_2``/``output_1``)
``judge_time_s``           ``time_per_example``
``dataset``                ``dataset``
=========================  ================================================

Preference to verdict. ``preference`` is 1 when the judge prefers the baseline,
2 when it prefers the model and 1.5 for a draw; the weighted annotators give a
continuous value in [1, 2] (the judge's probability of preferring the model,
plus 1). AlpacaEval's own counts (``alpaca_eval.metrics.helpers``) are
``n_wins = #(preference > 1.5)``, ``n_draws = #(preference == 1.5)`` and
``n_wins_base = #(preference < 1.5)``, and its discrete win rate rounds a
continuous preference to the nearer side. The verdict follows the same rule,
so a continuous preference becomes a win when the judge leans towards the
model at all (> 1.5), a loss when it leans towards the baseline (< 1.5) and a
tie only when it is exactly 1.5; the continuous value stays in
``preference`` / ``win_share`` for the continuous win rate. A preference that
is missing, not a number, NaN or outside [1, 2] gives ``status == "invalid"``
(the row is kept, ``parse_error`` says why) and is left out of the leaderboard
counts, as AlpacaEval drops it. A preference of exactly 0 is AlpacaEval's
legacy encoding of a draw and is read as 1.5, as AlpacaEval does.

Duplicates. AlpacaEval evaluates each instruction once per (model, annotator).
If the same instruction appears again for the same (model, baseline,
annotator), the k-th occurrence (in file order) gets ``replicate == k`` and an
:class:`evalstats.EvalstatsWarning` names it: the rows are kept (AlpacaEval
would average over them too), and since the task is the cluster, the standard
errors of :func:`leaderboard_row` then treat the repeats as correlated — which
makes them differ from AlpacaEval's, which treats every record as
independent.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats as sps

from .._schema import (
    BLIND_DIMENSIONS,
    ORDER_DTYPE,
    OUTCOME_DTYPE,
    OVER_BUDGET_DTYPE,
    STATUS_DTYPE,
    VERDICT_COLUMNS,
)
from ..errors import DataError
from ..records import EvalstatsWarning, is_missing
from ..stats import judge_agreement, proportion_ci, win_rates
from ..stats.means import cluster_mean

__all__ = [
    "EXTRA_COLUMNS",
    "GROUP_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "RUBRIC",
    "LogisticFit",
    "annotation_files",
    "compute_case_study",
    "judge_agreement_by_model",
    "leaderboard_row",
    "length_bias",
    "load",
    "logistic_fit",
]

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
# The columns AlpacaEval publishes in its leaderboard CSVs, in their order.
LEADERBOARD_COLUMNS = (
    "win_rate",
    "standard_error",
    "n_wins",
    "n_wins_base",
    "n_draws",
    "n_total",
    "discrete_win_rate",
    "avg_length",
)
_SUFFIXES = (".json", ".jsonl", ".ndjson")
_WS = re.compile(r"\s*")


# --------------------------------------------------------------------------- reading


def _open_text(p: Path) -> str:
    name = p.name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    if not base.endswith(_SUFFIXES):
        raise DataError(
            "unsupported file type; use .json (a JSON array), .jsonl or .ndjson, "
            "optionally gzipped (.gz)",
            path=p,
        )
    if not p.exists():
        raise DataError("file not found", path=p)
    try:
        if name.endswith(".gz"):
            with gzip.open(p, "rt", encoding="utf-8") as fh:
                return fh.read()
        return p.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise DataError(f"unreadable file: {exc}", path=p) from None


def _parse_array(text: str, p: Path) -> tuple[list[Any], list[int]]:
    """Records of a JSON array with the line each one starts on.

    ``json.loads`` forgets positions; decoding element by element keeps them, so
    an error can name the line of the bad record in a pretty-printed file.
    """
    decoder = json.JSONDecoder()
    records: list[Any] = []
    lines: list[int] = []
    pos = _WS.match(text, text.index("[") + 1).end()
    line, counted = 1, 0
    if text.startswith("]", pos):
        pos += 1
    else:
        while True:
            try:
                obj, end = decoder.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                raise DataError(
                    f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=exc.lineno
                ) from None
            line += text.count("\n", counted, pos)
            counted = pos
            records.append(obj)
            lines.append(line)
            pos = _WS.match(text, end).end()
            sep = text[pos : pos + 1]
            if sep == "]":
                pos += 1
                break
            if sep != ",":
                at = line + text.count("\n", counted, pos)
                raise DataError("malformed JSON array (expected ',' or ']')", path=p, line=at)
            pos = _WS.match(text, pos + 1).end()
    if text[pos:].strip():
        at = line + text.count("\n", counted, pos)
        raise DataError("unexpected text after the JSON array", path=p, line=at)
    return records, lines


def _parse_lines(text: str, p: Path) -> tuple[list[Any], list[int]]:
    records: list[Any] = []
    lines: list[int] = []
    for lineno, row in enumerate(text.splitlines(), start=1):
        if not row.strip():
            continue
        try:
            records.append(json.loads(row))
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
            ) from None
        lines.append(lineno)
    return records, lines


def _read_records(p: Path) -> tuple[list[Any], list[int]]:
    """Records of a JSON array file or a JSON Lines file (sniffed, not by name)."""
    text = _open_text(p)
    if text.lstrip().startswith("["):
        return _parse_array(text, p)
    return _parse_lines(text, p)


# --------------------------------------------------------------------------- validation


def _number(value: Any) -> float | None:
    """A JSON number as float; None if it is not one (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    return float(value)


def _preference(value: Any) -> tuple[float, float, str | None, str | None]:
    """(raw preference, win share, outcome, parse error) of one record."""
    if is_missing(value):
        return math.nan, math.nan, None, "missing preference"
    pref = _number(value)
    if pref is None:
        return math.nan, math.nan, None, f"preference is not a number: {value!r}"
    if math.isnan(pref):
        return pref, math.nan, None, "preference is NaN"
    # 0 is AlpacaEval's legacy draw; its metrics read it as 1.5 too.
    value_ = 1.5 if pref == 0.0 else pref
    if not 1.0 <= value_ <= 2.0:
        return pref, math.nan, None, f"preference {pref!r} outside [1, 2]"
    outcome = "win" if value_ > 1.5 else ("tie" if value_ == 1.5 else "loss")
    return pref, value_ - 1.0, outcome, None


def _record_row(rec: Any, p: Path, line: int) -> dict[str, Any]:
    """Validate one annotation record; raise DataError naming file:line and field."""

    def fail(field: str, reason: str) -> DataError:
        return DataError(reason, path=p, line=line, field=field)

    if not isinstance(rec, dict):
        raise DataError(f"expected a JSON object, got {type(rec).__name__}", path=p, line=line)
    iid = rec.get("instruction_id")
    if is_missing(iid):
        instruction = rec.get("instruction")
        if not isinstance(instruction, str):
            raise fail("instruction_id", "missing required field (and no 'instruction' text)")
        iid = hashlib.sha1(instruction.encode("utf-8")).hexdigest()[:12]
    row: dict[str, Any] = {"instruction_id": iid}
    for field in ("instruction_id", "generator_1", "generator_2", "annotator"):
        v = row[field] if field == "instruction_id" else rec.get(field)
        if is_missing(v):
            raise fail(field, "missing required field")
        if not isinstance(v, str):
            raise fail(field, f"expected a string, got {type(v).__name__} {v!r}")
        if not v:
            raise fail(field, "must not be empty")
        row[field] = v
    dataset = rec.get("dataset")
    if not is_missing(dataset) and not isinstance(dataset, str):
        raise fail("dataset", f"expected a string, got {type(dataset).__name__} {dataset!r}")
    row["dataset"] = None if is_missing(dataset) else dataset
    for field in ("price_per_example", "time_per_example"):
        v = rec.get(field)
        if is_missing(v):
            row[field] = math.nan
            continue
        x = _number(v)
        if x is None or not math.isfinite(x) or x < 0:
            raise fail(field, f"expected a finite non-negative number, got {v!r}")
        row[field] = x
    for field, text_field in (("len_output_1", "output_1"), ("len_output_2", "output_2")):
        v = rec.get(field)
        if is_missing(v):
            text = rec.get(text_field)
            row[field] = len(text) if isinstance(text, str) else None
            continue
        x = _number(v)
        if x is None or not math.isfinite(x) or x < 0 or not x.is_integer():
            raise fail(field, f"expected a non-negative integer, got {v!r}")
        row[field] = int(x)
    raw = rec.get("raw_completion")
    if is_missing(raw):
        row["raw"] = None
    else:
        row["raw"] = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    pref, share, outcome, error = _preference(rec.get("preference"))
    row.update(preference=pref, win_share=share, outcome=outcome, parse_error=error)
    # The path as given, not just the name: AlpacaEval names every file annotations.json.
    row["judgment_id"] = f"{p}:{line}"
    return row


# --------------------------------------------------------------------------- public: load


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
    >>> from evalstats.adapters import alpaca_eval
    >>> frame = alpaca_eval.load([  # doctest: +SKIP
    ...     "../shared/data/alpaca_eval/claude-2.1.annotations.jsonl.gz",
    ...     "../shared/data/alpaca_eval/alpaca-7b.annotations.jsonl.gz",
    ... ])
    >>> alpaca_eval.leaderboard_row(frame)  # doctest: +SKIP
    """
    if isinstance(path, (str, os.PathLike)):
        paths = [Path(path)]
    else:
        paths = [Path(p) for p in path]
        if not paths:
            raise ValueError("no annotation files given")
    rows: list[dict[str, Any]] = []
    for p in paths:
        records, lines = _read_records(p)
        rows.extend(_record_row(rec, p, line) for rec, line in zip(records, lines, strict=True))
    return _build_frame(rows)


def _build_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    n = len(rows)

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
    outcome = col("outcome")
    status = ["ok" if o is not None else "invalid" for o in outcome]
    preference = np.asarray(col("preference"), dtype=np.float64)
    label = [repr(float(p)) if s == "ok" else None for p, s in zip(preference, status, strict=True)]
    na_int = pd.array([pd.NA] * n, dtype="Int64")
    na_float = np.full(n, np.nan)
    na_str = pd.Series([None] * n, dtype="str")
    out = pd.DataFrame(
        {
            "task_id": task,
            "replicate": replicate.astype(np.int64),
            "judge": judge.astype("category"),
            "rubric": pd.Categorical([RUBRIC] * n),
            "order": pd.Categorical([None] * n, dtype=ORDER_DTYPE),
            "status": pd.Categorical(status, dtype=STATUS_DTYPE),
            "over_budget_arm": pd.Categorical([None] * n, dtype=OVER_BUDGET_DTYPE),
            "outcome": pd.Categorical(outcome, dtype=OUTCOME_DTYPE),
            "label": pd.Series(label, dtype="str"),
            "uncertainty": pd.Categorical(
                [None] * n, categories=["low", "medium", "high"], ordered=True
            ),
            **{f"{arm}_{dim}": na_int for arm in ("with", "without") for dim in BLIND_DIMENSIONS},
            "judge_cost_ratio": na_float,
            "cost_ratio": na_float,
            "tokens_with": na_int,
            "tokens_without": na_int,
            "wall_with_s": na_float,
            "wall_without_s": na_float,
            "judge_input_tokens": na_int,
            "judge_output_tokens": na_int,
            "judge_usd": np.asarray(col("price_per_example"), dtype=np.float64),
            "judgment_id": pd.Series(col("judgment_id"), dtype="str"),
            "prompt_revision": na_int,
            "prompt_sha256": na_str,
            "reasoning": na_str,
            "raw": pd.Series(col("raw"), dtype="str"),
            "parse_error": pd.Series(col("parse_error"), dtype="str"),
            "model": model,
            "baseline": baseline,
            "dataset": pd.Series(col("dataset"), dtype="str"),
            "preference": preference,
            "win_share": np.asarray(col("win_share"), dtype=np.float64),
            "len_with": pd.array(col("len_output_2"), dtype="Int64"),
            "len_without": pd.array(col("len_output_1"), dtype="Int64"),
            "judge_time_s": np.asarray(col("time_per_example"), dtype=np.float64),
        },
        index=pd.RangeIndex(n),
    )
    out = out[[*VERDICT_COLUMNS, *EXTRA_COLUMNS]]
    out = out.sort_values(
        ["model", "baseline", "task_id", "replicate", "judge"], kind="stable"
    ).reset_index(drop=True)
    return out


# --------------------------------------------------------------------------- leaderboard


def _require(frame: pd.DataFrame, cols: Sequence[str]) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise DataError(
            f"frame lacks column(s) {missing}: expected a frame from alpaca_eval.load",
            field=missing[0],
        )


def leaderboard_row(
    frame: pd.DataFrame,
    *,
    method: str = "cluster_t",
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """AlpacaEval's leaderboard columns per (model, baseline, annotator), recomputed.

    * ``win_rate`` = mean of ``preference - 1`` over the valid records, x 100,
      and ``standard_error`` its standard error x 100:
      :func:`evalstats.stats.means.cluster_mean` of ``win_share`` clustered by
      task. With one record per instruction (AlpacaEval's design) the CR1
      cluster SE equals the ``ddof=1`` standard error of the mean that
      AlpacaEval computes with ``pandas.Series.sem``.
    * ``n_wins``, ``n_wins_base``, ``n_draws``, ``n_total`` = wins, losses,
      ties and ok verdicts of :func:`evalstats.win_rates`;
      ``discrete_win_rate`` = its ``score`` (win + tie / 2) x 100.
    * ``avg_length`` = mean character length of the model's outputs, truncated
      to an integer as AlpacaEval does (over all records of the group).

    Parameters
    ----------
    frame : DataFrame
        From :func:`load` (needs ``model``, ``baseline``, ``judge``,
        ``task_id``, ``status``, ``outcome``, ``win_share``, ``len_with``).
    method : {"cluster_t", "bca", "percentile", "basic"}
        Interval for ``win_rate_ci_low`` / ``win_rate_ci_high``.
    confidence : float, default 0.95
    n_resamples : int, default 10 000
        Bootstrap resamples (bootstrap methods only).
    rng : Generator, int or None
        Bootstrap seed.

    Returns
    -------
    DataFrame
        One row per (model, baseline, annotator): ``model``, ``baseline``,
        ``annotator``, the :data:`LEADERBOARD_COLUMNS` (rates x 100 as
        AlpacaEval publishes them), then ``win_rate_ci_low``,
        ``win_rate_ci_high`` (x 100, clipped to [0, 100]), ``discrete_standard_error`` (CR1 SE of
        the discrete win rate, x 100), ``n_clusters``, ``n_invalid``,
        ``method``, ``confidence``.

    Examples
    --------
    >>> board = leaderboard_row(frame)  # doctest: +SKIP
    >>> board[["model", "annotator", "win_rate", "standard_error"]]  # doctest: +SKIP
    """
    _require(frame, ["model", "baseline", "judge", "task_id", "status", "outcome", "win_share"])
    if frame.empty:
        raise ValueError("the frame has no annotations")
    keys = list(GROUP_COLUMNS)
    ok = (frame["status"] == "ok").to_numpy(dtype=bool)
    f = frame.assign(
        judge=frame["judge"].astype(str),
        model=frame["model"].astype(str),
        baseline=frame["baseline"].astype(str),
        _share=np.where(ok, frame["win_share"].to_numpy(np.float64, na_value=np.nan), np.nan),
    )
    cont = cluster_mean(
        f,
        "_share",
        cluster="task_id",
        by=keys,
        method=method,
        confidence=confidence,
        n_resamples=n_resamples,
        rng=rng,
    )
    disc = win_rates(f, by=keys, cluster="task_id", method="cluster_t", confidence=confidence)
    board = cont.merge(disc, on=keys, how="outer", suffixes=("", "_disc"), validate="1:1")
    if "len_with" in f.columns:
        lengths = (
            f.assign(_len=f["len_with"].astype("Float64"))
            .groupby(keys, sort=False)["_len"]
            .mean()
            .rename("_avg_len")
            .reset_index()
        )
        board = board.merge(lengths, on=keys, how="left")
        avg = board["_avg_len"].to_numpy(np.float64, na_value=np.nan)
    else:
        avg = np.full(len(board), np.nan)
    out = pd.DataFrame(
        {
            "model": board["model"],
            "baseline": board["baseline"],
            "annotator": board["judge"],
            "win_rate": board["mean"] * 100.0,
            "standard_error": board["se"] * 100.0,
            "n_wins": board["wins"].astype(np.int64),
            "n_wins_base": board["losses"].astype(np.int64),
            "n_draws": board["ties"].astype(np.int64),
            "n_total": board["n_disc"].astype(np.int64),
            "discrete_win_rate": board["score"] * 100.0,
            # AlpacaEval writes int(mean length): truncation, not rounding.
            "avg_length": pd.array([pd.NA if np.isnan(a) else int(a) for a in avg], dtype="Int64"),
            # The win rate lives on [0, 100]; a t interval on few tasks can overshoot.
            "win_rate_ci_low": np.clip(board["ci_low"] * 100.0, 0.0, 100.0),
            "win_rate_ci_high": np.clip(board["ci_high"] * 100.0, 0.0, 100.0),
            "discrete_standard_error": board["score_se"] * 100.0,
            "n_clusters": board["n_clusters"].astype(np.int64),
            "n_invalid": board["invalid"].astype(np.int64),
            "method": method,
            "confidence": float(confidence),
        }
    )
    return out.sort_values(["model", "baseline", "annotator"], kind="stable").reset_index(drop=True)


def judge_agreement_by_model(frame: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """:func:`evalstats.judge_agreement` within each (model, baseline), stacked.

    A verdict frame's pair is (task, replicate); in an AlpacaEval frame the same
    instruction is judged once per model, so agreement is measured per model.
    Groups with fewer than two annotators are left out (nothing to compare).

    Parameters
    ----------
    frame : DataFrame
        From :func:`load`.
    **kwargs
        Passed to :func:`evalstats.judge_agreement` (``judges``,
        ``confidence``, ``n_resamples``, ``method``, ``rng``, ...);
        ``rubric`` is ``"alpaca_eval"``.

    Returns
    -------
    DataFrame
        ``model``, ``baseline`` and the columns of
        :func:`evalstats.judge_agreement`.
    """
    _require(frame, ["model", "baseline", "judge"])
    kwargs.setdefault("rubric", RUBRIC)
    parts = []
    for (model, baseline), sub in frame.groupby(["model", "baseline"], sort=True, observed=True):
        if sub["judge"].astype(str).nunique() < 2:
            continue
        res = judge_agreement(sub, **kwargs)
        res.insert(0, "baseline", baseline)
        res.insert(0, "model", model)
        parts.append(res)
    if not parts:
        raise ValueError("no (model, baseline) has two or more annotators to compare")
    return pd.concat(parts, ignore_index=True)


# --------------------------------------------------------------------------- length bias


@dataclass(frozen=True)
class LogisticFit:
    """Result of :func:`logistic_fit`: ``logit P(y = 1) = intercept + slope * x``.

    Attributes
    ----------
    intercept, slope : float
        Maximum-likelihood estimates (NaN when the fit did not converge, e.g.
        under perfect separation).
    intercept_se, slope_se : float
        Standard errors from the inverse Fisher information.
    z, p_value : float
        Wald test of ``slope == 0``.
    ci_low, ci_high : float
        Wald interval of the slope.
    n, n_events : int
        Observations and observations with ``y == 1``.
    converged : bool
    n_iter : int
    confidence : float
    """

    intercept: float
    slope: float
    intercept_se: float
    slope_se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    n: int
    n_events: int
    converged: bool
    n_iter: int
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        """One row with every field."""
        return pd.DataFrame([self.__dict__])


def logistic_fit(
    x: Any,
    y: Any,
    *,
    confidence: float = 0.95,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> LogisticFit:
    """Logistic regression of a 0/1 outcome on one covariate, by Newton-Raphson (IRLS).

    The same model and Wald statistics as ``statsmodels`` ``Logit(y,
    add_constant(x)).fit()`` (``params``, ``bse``, ``pvalues``, ``conf_int``),
    without the dependency. ``x`` is centred and scaled before fitting and the
    estimates are mapped back, so the covariate's units do not matter for
    convergence.

    Parameters
    ----------
    x : array_like, shape (n,)
        Finite covariate values.
    y : array_like, shape (n,)
        Outcomes, 0 or 1 (booleans accepted).
    confidence : float, default 0.95
    max_iter : int, default 100
    tol : float, default 1e-10
        Convergence when the largest Newton step (on the scaled covariate) is
        below ``tol``.

    Returns
    -------
    LogisticFit

    Examples
    --------
    >>> fit = logistic_fit([-2, -1, -1, 0, 0, 1, 1, 2], [0, 0, 1, 0, 1, 0, 1, 1])
    >>> round(fit.slope, 4), fit.converged
    (0.7563, True)
    """
    xa = np.asarray(x, dtype=np.float64).ravel()
    ya = np.asarray(y, dtype=np.float64).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length: {xa.size} vs {ya.size}")
    if not np.isfinite(xa).all():
        raise ValueError("x must be finite")
    if not np.isin(ya, (0.0, 1.0)).all():
        raise ValueError("y must be 0 or 1")
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n, events = int(xa.size), int(ya.sum())
    center = float(xa.mean()) if n else 0.0
    scale = float(xa.std()) if n else 1.0
    nan = LogisticFit(
        *([math.nan] * 8), n=n, n_events=events, converged=False, n_iter=0, confidence=confidence
    )
    if n < 3 or scale == 0.0 or events in (0, n):
        return nan  # no slope to estimate, or the MLE is at infinity
    design = np.column_stack([np.ones(n), (xa - center) / scale])
    beta = np.array([special.logit(events / n), 0.0])  # start at the intercept-only MLE
    converged = False
    info = np.eye(2)
    n_iter = 0
    while n_iter < max_iter:  # a few Newton steps, each vectorised over rows
        n_iter += 1
        mu = special.expit(design @ beta)
        w = mu * (1.0 - mu)
        info = design.T @ (design * w[:, None])
        try:
            step = np.linalg.solve(info, design.T @ (ya - mu))
        except np.linalg.LinAlgError:
            break
        beta = beta + step
        if not np.isfinite(beta).all():
            break
        if np.max(np.abs(step)) < tol:
            converged = True
            mu = special.expit(design @ beta)
            info = design.T @ (design * (mu * (1.0 - mu))[:, None])
            break
    # A separating covariate drives the slope to infinity; report no estimate.
    if not converged or abs(beta[1]) > 30.0:
        return LogisticFit(
            *([math.nan] * 8),
            n=n,
            n_events=events,
            converged=False,
            n_iter=n_iter,
            confidence=confidence,
        )
    cov_scaled = np.linalg.inv(info)
    # Back to the original x: intercept = b0 - b1 c / s, slope = b1 / s.
    t = np.array([[1.0, -center / scale], [0.0, 1.0 / scale]])
    params = t @ beta
    cov = t @ cov_scaled @ t.T
    se = np.sqrt(np.diag(cov))
    z = params[1] / se[1]
    zq = special.ndtri(0.5 + confidence / 2.0)
    return LogisticFit(
        intercept=float(params[0]),
        slope=float(params[1]),
        intercept_se=float(se[0]),
        slope_se=float(se[1]),
        z=float(z),
        p_value=float(2.0 * sps.norm.sf(abs(z))),
        ci_low=float(params[1] - zq * se[1]),
        ci_high=float(params[1] + zq * se[1]),
        n=n,
        n_events=events,
        converged=True,
        n_iter=n_iter,
        confidence=float(confidence),
    )


LENGTH_MEASURES = ("log_ratio", "diff")


def length_bias(
    frame: pd.DataFrame,
    *,
    bins: int | Sequence[float] = 5,
    x: str = "log_ratio",
    by: Sequence[str] = GROUP_COLUMNS,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """P(model wins) against the length difference of the two outputs.

    Judges are known to favour longer answers. For each group, the ``ok``
    verdicts are binned by the length measure; each bin gets the share of
    wins with a Wilson interval (:func:`evalstats.stats.proportion_ci`), and
    the group gets the slope of a logistic regression of win (1) against
    not-win (0: a loss or a tie) on the measure (:func:`logistic_fit`).
    Verdicts are one per instruction here, so they are treated as
    independent.

    Parameters
    ----------
    frame : DataFrame
        From :func:`load` (needs ``len_with``, ``len_without``, ``status``,
        ``outcome`` and the ``by`` columns).
    bins : int or sequence of float, default 5
        An int gives that many quantile bins per group (fewer when quantiles
        coincide); a sequence gives the same bin edges for every group
        (verdicts outside them are left out of the bins, not of the slope).
    x : {"log_ratio", "diff"}
        ``log(len_with / len_without)`` (natural log; rows with a zero length
        are left out), or ``len_with - len_without`` in characters.
    by : sequence of str
        Grouping columns.
    confidence : float, default 0.95

    Returns
    -------
    DataFrame
        One row per (group, bin): the ``by`` columns, ``x`` (the measure's
        name), ``bin`` (1-based), ``x_low``, ``x_high`` (bin edges), ``x_mean``,
        ``n``, ``wins``, ``ties``, ``losses``, ``p_win``, ``ci_low``,
        ``ci_high``; and, repeated on each row of the group, the logistic fit
        on all the group's verdicts: ``n_group``, ``intercept``, ``slope``,
        ``slope_se``, ``slope_ci_low``, ``slope_ci_high``, ``slope_p``.

    Examples
    --------
    >>> lb = length_bias(frame, bins=5)  # doctest: +SKIP
    >>> lb[["judge", "bin", "x_mean", "p_win", "ci_low", "ci_high", "slope"]]  # doctest: +SKIP
    """
    by_cols = list(by)
    _require(frame, [*by_cols, "len_with", "len_without", "status", "outcome"])
    if x not in LENGTH_MEASURES:
        raise ValueError(f"x must be one of {LENGTH_MEASURES}, got {x!r}")
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if bins < 1:
            raise ValueError(f"bins must be >= 1, got {bins}")
        edges_fixed = None
    else:
        edges_fixed = np.asarray(bins, dtype=np.float64)
        if edges_fixed.ndim != 1 or edges_fixed.size < 2 or np.any(np.diff(edges_fixed) <= 0):
            raise ValueError("bins must be an int or a strictly increasing sequence of edges")
    lw = frame["len_with"].to_numpy(np.float64, na_value=np.nan)
    lo = frame["len_without"].to_numpy(np.float64, na_value=np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        meas = np.log(lw / lo) if x == "log_ratio" else lw - lo
    keep = (frame["status"] == "ok").to_numpy(dtype=bool) & np.isfinite(meas)
    sub = frame.loc[keep, by_cols].copy()
    for c in by_cols:
        if isinstance(sub[c].dtype, pd.CategoricalDtype):
            sub[c] = sub[c].astype(str)
    sub["_x"] = meas[keep]
    outcome = frame.loc[keep, "outcome"].astype(str).to_numpy()
    sub["_win"] = (outcome == "win").astype(np.int64)
    sub["_tie"] = (outcome == "tie").astype(np.int64)
    sub["_loss"] = (outcome == "loss").astype(np.int64)

    parts = []
    for key, g in sub.groupby(by_cols, sort=True):  # a handful of groups
        key = key if isinstance(key, tuple) else (key,)
        xv = g["_x"].to_numpy()
        if edges_fixed is None:
            edges = np.unique(np.quantile(xv, np.linspace(0.0, 1.0, int(bins) + 1)))
            if edges.size < 2:
                edges = np.array([xv.min(), xv.max()])
        else:
            edges = edges_fixed
        # Right-closed bins with the lowest edge included, as pandas.cut(include_lowest=True).
        idx = np.searchsorted(edges, xv, side="left")
        idx = np.where(xv == edges[0], 1, idx)
        inside = (idx >= 1) & (idx < edges.size)
        nb = edges.size - 1
        b = idx[inside] - 1
        n = np.bincount(b, minlength=nb)
        wins = np.bincount(b, weights=g["_win"].to_numpy()[inside], minlength=nb)
        ties = np.bincount(b, weights=g["_tie"].to_numpy()[inside], minlength=nb)
        losses = np.bincount(b, weights=g["_loss"].to_numpy()[inside], minlength=nb)
        xsum = np.bincount(b, weights=xv[inside], minlength=nb)
        ci = proportion_ci(wins, n, confidence=confidence)
        fit = logistic_fit(xv, g["_win"].to_numpy(), confidence=confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            x_mean = np.where(n > 0, xsum / np.maximum(n, 1), np.nan)
        part = pd.DataFrame(
            {
                **{c: [k] * nb for c, k in zip(by_cols, key, strict=True)},
                "x": x,
                "bin": np.arange(1, nb + 1),
                "x_low": edges[:-1],
                "x_high": edges[1:],
                "x_mean": x_mean,
                "n": n.astype(np.int64),
                "wins": wins.astype(np.int64),
                "ties": ties.astype(np.int64),
                "losses": losses.astype(np.int64),
                "p_win": ci.estimate,
                "ci_low": ci.ci_low,
                "ci_high": ci.ci_high,
                "n_group": len(xv),
                "intercept": fit.intercept,
                "slope": fit.slope,
                "slope_se": fit.slope_se,
                "slope_ci_low": fit.ci_low,
                "slope_ci_high": fit.ci_high,
                "slope_p": fit.p_value,
            }
        )
        parts.append(part)
    if not parts:
        raise ValueError("no ok verdicts with both output lengths")
    return pd.concat(parts, ignore_index=True)


# The case study builds on everything above; imported last so that it can import this module.
from ._case_study import compute_case_study  # noqa: E402
