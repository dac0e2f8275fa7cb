"""AlpacaEval judge annotations as a verdict frame, and its leaderboard recomputed.

AlpacaEval (tatsu-lab/alpaca_eval) has an LLM judge (the *annotator*) compare a
model's output (``generator_2``) with a baseline's (``generator_1``) on each
instruction and writes one record per comparison to ``annotations.json``.
:func:`load` validates such records and maps them through the generic
:mod:`evalstats.adapters.pairwise` adapter (this module is one configuration of it) into the
package's own verdict frame, from the
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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import tidy_frame, wide, with_detail
from .._validate import check_columns
from ..errors import DataError
from ..records import EvalstatsWarning, is_missing
from ..stats import judge_agreement, win_rates
from ..stats.means import cluster_mean

# Statistics that used to live here, re-exported under their old names.
from ..stats.regression import LENGTH_MEASURES, LogisticFit, length_bias, logistic_fit
from . import pairwise

__all__ = [
    "EXTRA_COLUMNS",
    "GROUP_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "RUBRIC",
    "LENGTH_MEASURES",
    "LEADERBOARD_FILE",
    "LogisticFit",
    "REL_TOLERANCE",
    "annotation_files",
    "compare_leaderboard",
    "judge_agreement_by_model",
    "leaderboard_row",
    "length_bias",
    "load",
    "logistic_fit",
    "published_rows",
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
            raise ValueError("no annotation files given")
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


# --------------------------------------------------------------------------- leaderboard


def _require(frame: pd.DataFrame, cols: Sequence[str]) -> None:
    check_columns(frame, cols, what="frame (expected from alpaca_eval.load)")


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
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> recs = [{"instruction": f"q{i}", "generator_1": "base", "generator_2": "mine",
    ...          "annotator": "judge", "preference": p}
    ...         for i, p in enumerate([2.0, 1.0, 2.0, 1.5])]
    >>> path = Path(tempfile.mkdtemp()) / "annotations.json"
    >>> _ = path.write_text(json.dumps(recs))
    >>> board = leaderboard_row(load(path))
    >>> board[["model", "annotator", "win_rate", "n_total"]].to_numpy().tolist()
    [['mine', 'judge', 62.5, 4]]
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
    # AlpacaEval's leaderboard row puts both estimates and the counts side by side.
    cont = with_detail(cont).rename(columns={"estimate": "mean"})
    disc = wide(win_rates(f, by=keys, cluster="task_id", method="cluster_t", confidence=confidence))
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
    ResultFrame
        ``model``, ``baseline`` and the rows of :func:`evalstats.judge_agreement` (its
        diagnostics alike).
    """
    _require(frame, ["model", "baseline", "judge"])
    kwargs.setdefault("rubric", RUBRIC)
    parts = []
    for (model, baseline), sub in frame.groupby(["model", "baseline"], sort=True, observed=True):
        if sub["judge"].astype(str).nunique() < 2:
            continue
        res = judge_agreement(sub, **kwargs)
        parts.append((model, baseline, res))
    if not parts:
        raise ValueError("no (model, baseline) has two or more annotators to compare")
    keys = {"model": [m for m, _, _ in parts], "baseline": [b for _, b, _ in parts]}

    def stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
        out = pd.concat(
            [f.assign(model=m, baseline=b) for f, m, b in zip(frames, *keys.values(), strict=True)],
            ignore_index=True,
        )
        return out[[*keys, *(c for c in out.columns if c not in keys)]]

    rows = stacked([pd.DataFrame(r) for _, _, r in parts])
    diagnostics = stacked([r.diagnostics for _, _, r in parts])
    return tidy_frame(rows, by=[*keys, *parts[0][2].by], diagnostics=diagnostics)


# --------------------------------------------------------------------- published leaderboard

# AlpacaEval's published leaderboard rows for the annotated models (optional input).
LEADERBOARD_FILE = "leaderboard_rows.json"
# Published rates carry every digit of a float64 (16-17 significant digits); a recomputation
# that sums in another order differs in the last one or two, ~1e-15 relative. Agreement to
# 1e-12 relative is agreement to every digit a paper could print; counts must be equal.
REL_TOLERANCE = 1e-12
COUNT_COLUMNS = ("n_wins", "n_wins_base", "n_draws", "n_total", "avg_length")


def published_rows(data_dir: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], str] | None:
    """The rows of ``DATA_DIR/leaderboard_rows.json`` and their ``source``; None if absent.

    The file is ``{"source": str, "rows": [{"model": ..., "annotator": ..., <column>: str}]}``
    with AlpacaEval's leaderboard CSV cells as strings.
    """
    path = Path(data_dir) / LEADERBOARD_FILE
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"unreadable leaderboard file: {exc}", path=path) from None
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError("expected an object with a 'rows' list of objects", path=path)
    for i, r in enumerate(rows):
        for field in ("model", "annotator"):
            if not isinstance(r.get(field), str) or not r[field]:
                raise DataError(f"row {i} lacks a {field!r} string", path=path, field=field)
    return rows, str(doc.get("source", ""))


def _published_number(value: Any, *, integer: bool) -> Any:
    """A published CSV cell (a string such as "103.0" or "12.9") as a number; None if empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise DataError(f"published value {value!r} is not a number") from None
    if integer:
        if not x.is_integer():
            raise DataError(f"published count {value!r} is not a whole number")
        return int(x)
    return x


def compare_leaderboard(
    board: pd.DataFrame, published: list[dict[str, Any]] | None
) -> pd.DataFrame:
    """Reproduced and published leaderboard columns side by side, one row per (model, annotator).

    ``board`` is :func:`leaderboard_row`'s table, ``published`` the rows of
    :func:`published_rows` (None when there are none). For each of
    :data:`LEADERBOARD_COLUMNS`: ``<col>_published``, ``<col>_reproduced``,
    ``<col>_abs_diff``; then ``max_rel_diff`` over the rates, ``rel_tolerance``, ``match``
    (every count equal and every rate within :data:`REL_TOLERANCE` relative; null when one
    side is missing), ``length_controlled_winrate_published`` (not recomputed) and ``note``.
    Published rows without annotations are kept with reproduced values null and a note;
    reproduced rows that were not published are kept with published values null.
    """
    mine = {(r["model"], r["annotator"]): r for r in board.to_dict("records")}
    theirs = {(r["model"], r["annotator"]): r for r in (published or [])}
    keys = list(theirs) + sorted(set(mine) - set(theirs))
    rows = []
    for key in keys:
        rep, pub = mine.get(key), theirs.get(key)
        row: dict[str, Any] = {
            "model": key[0],
            "annotator": key[1],
            "baseline": rep["baseline"] if rep is not None else None,
            "mode": pub.get("mode") if pub is not None else None,
        }
        rel = []
        counts_equal = True
        for col in LEADERBOARD_COLUMNS:
            integer = col in COUNT_COLUMNS
            p = _published_number(pub.get(col), integer=integer) if pub is not None else None
            r = rep[col] if rep is not None else None
            r = None if r is None or r is pd.NA else (int(r) if integer else float(r))
            row[f"{col}_published"] = p
            row[f"{col}_reproduced"] = r
            row[f"{col}_abs_diff"] = abs(r - p) if p is not None and r is not None else None
            if p is None or r is None:
                continue
            if integer:
                counts_equal &= r == p
            else:
                rel.append(abs(r - p) / abs(p) if p != 0 else (0.0 if r == 0 else math.inf))
        both = pub is not None and rep is not None
        row["max_rel_diff"] = max(rel) if both and rel else None
        row["rel_tolerance"] = REL_TOLERANCE
        row["match"] = bool(counts_equal and all(x <= REL_TOLERANCE for x in rel)) if both else None
        lc = pub.get("length_controlled_winrate") if pub is not None else None
        row["length_controlled_winrate_published"] = _published_number(lc, integer=False)
        if rep is None:
            row["note"] = "published, but the data hold no annotations for this row"
        elif published is None:
            row["note"] = f"no {LEADERBOARD_FILE}: reproduced values only"
        elif pub is None:
            row["note"] = f"not in {LEADERBOARD_FILE}"
        else:
            row["note"] = None
        rows.append(row)
    out = pd.DataFrame(rows)
    for col in LEADERBOARD_COLUMNS:
        dtype = "Int64" if col in COUNT_COLUMNS else "Float64"
        for suffix in ("published", "reproduced", "abs_diff"):
            out[f"{col}_{suffix}"] = pd.array(out[f"{col}_{suffix}"].tolist(), dtype=dtype)
    for col in ("max_rel_diff", "length_controlled_winrate_published"):
        out[col] = pd.array(out[col].tolist(), dtype="Float64")
    out["match"] = pd.array(out["match"].tolist(), dtype="boolean")
    for col in ("baseline", "mode", "note"):
        out[col] = out[col].astype("string")
    return out
