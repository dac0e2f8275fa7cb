"""AlpacaEval judge annotations (``annotations.json``) as a verdict frame.

``generator_2`` (the model) is WITH, ``generator_1`` (the baseline) WITHOUT, each instruction
a task; the mapping: ``docs/methods.md`` ("Case studies").
"""

from __future__ import annotations

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

from ..errors import DataError, ParameterError
from ..records import EvalstatsWarning, coerce_field, is_missing
from . import pairwise

__all__ = ["EXTRA_COLUMNS", "GROUP_COLUMNS", "RUBRIC", "annotation_files", "load"]

_SUFFIXES = (".json", ".jsonl", ".ndjson")
_WS = re.compile(r"\s*")


def _is_annotations(name: str) -> bool:
    return name.lower().removesuffix(".gz").endswith(_SUFFIXES)


def _parse(text: str, p: Path) -> tuple[list[Any], list[int]]:
    """Records of a JSON array or of JSON Lines, with the line each one starts on."""
    array = text.lstrip().startswith("[")
    decoder = json.JSONDecoder()
    records: list[Any] = []
    lines: list[int] = []
    pos = _WS.match(text, text.index("[") + 1 if array else 0).end()
    line, counted = 1, 0

    def fail(message: str, at: int) -> DataError:
        return DataError(message, path=p, line=line + text.count("\n", counted, at))

    while pos < len(text) and not (array and not records and text.startswith("]", pos)):
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=exc.lineno
            ) from None
        line, counted = line + text.count("\n", counted, pos), pos
        records.append(obj)
        lines.append(line)
        pos = _WS.match(text, end).end()
        if not array and pos < len(text) and "\n" not in text[end:pos]:
            raise fail("malformed JSON Lines (one record per line)", pos)
        if array and text.startswith(",", pos):
            pos = _WS.match(text, pos + 1).end()
        elif array:
            break
    if array and not text.startswith("]", pos):
        raise fail("malformed JSON array (expected ',' or ']')", pos)
    if array and text[pos + 1 :].strip():
        raise fail("unexpected text after the JSON array", pos + 1)
    return records, lines


def _preference(value: Any) -> tuple[float, float, str | None, str | None]:
    """(raw preference, win share, outcome, parse error) of one record."""
    if is_missing(value):
        return math.nan, math.nan, None, "missing preference"
    if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > 1e300:
        return math.nan, math.nan, None, f"preference is not a number: {value!r:.40}"
    pref = float(value)
    # 0 is AlpacaEval's legacy draw; its metrics read it as 1.5 too.
    value_ = 1.5 if pref == 0.0 else pref
    if not 1.0 <= value_ <= 2.0:
        return pref, math.nan, None, f"preference {pref!r} outside [1, 2]"
    outcome = "win" if value_ > 1.5 else ("tie" if value_ == 1.5 else "loss")
    return pref, value_ - 1.0, outcome, None


def _record_row(rec: Any, p: Path, line: int) -> dict[str, Any]:
    if not isinstance(rec, dict):
        raise DataError(f"expected a JSON object, got {type(rec).__name__}", path=p, line=line)

    def get(field: str, kind: str, *, required: bool = False) -> Any:
        v = rec.get(field)
        if is_missing(v) and required:
            raise DataError("missing required field", path=p, line=line, field=field)
        try:  # the data contract's checks: a string, a finite number >= 0, a count
            out = None if is_missing(v) else coerce_field(kind, v, text_source=False)
        except ValueError as exc:
            raise DataError(str(exc), path=p, line=line, field=field) from None
        if required and not out:
            raise DataError("must not be empty", path=p, line=line, field=field)
        return out

    if is_missing(rec.get("instruction_id")):
        instruction = rec.get("instruction")
        if not isinstance(instruction, str):
            msg = "missing required field (and no 'instruction' text)"
            raise DataError(msg, path=p, line=line, field="instruction_id")
        digest = hashlib.sha1(instruction.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        rec = {**rec, "instruction_id": digest}
    row: dict[str, Any] = {
        f: get(f, "str", required=True)
        for f in ("instruction_id", "generator_1", "generator_2", "annotator")
    }
    row["dataset"] = get("dataset", "str")
    for field in ("price_per_example", "time_per_example"):
        row[field] = get(field, "float") if not is_missing(rec.get(field)) else math.nan
    for field, text in (("len_output_1", "output_1"), ("len_output_2", "output_2")):
        row[field] = get(field, "int")
        if row[field] is None and isinstance(rec.get(text), str):
            row[field] = len(rec[text])
    raw = rec.get("raw_completion")
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)
    row["raw"] = None if is_missing(raw) else text
    pref, share, outcome, error = _preference(rec.get("preference"))
    row.update(preference=pref, win_share=share, outcome=outcome, parse_error=error)
    # The path as given, not just the name: AlpacaEval names every file annotations.json.
    row["judgment_id"] = f"{p}:{line}"
    return row


RUBRIC = "alpaca_eval"
# A leaderboard row is per (model, baseline, judge); AlpacaEval fixes the baseline.
GROUP_COLUMNS = ("model", "baseline", "judge")


def annotation_files(data_dir: str | os.PathLike[str], *, required: bool = False) -> list[Path]:
    """``*annotations*.json|.jsonl|.ndjson[.gz]`` in ``data_dir`` or below (not hidden), sorted."""
    d = Path(data_dir)
    found = [
        p
        for p in (d.rglob("*annotations*") if d.is_dir() else ())
        if p.is_file()
        and _is_annotations(p.name)
        and not any(part.startswith(".") for part in p.relative_to(d).parts)
    ]
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
        ``annotations.json`` (a JSON array), ``.jsonl`` / ``.ndjson``, optionally gzipped;
        several are concatenated. Fields: docs/methods.md ("Case studies").

    Returns
    -------
    DataFrame
        The verdict-frame columns then :data:`EXTRA_COLUMNS`, one row per record (invalid
        preferences: ``status == "invalid"``; repeats: replicates, with a warning).

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
    >>> frame[["model", "baseline", "judge"]].drop_duplicates().to_numpy().tolist()
    [['mine', 'base', 'judge']]
    """
    if isinstance(path, (str, os.PathLike)):
        paths = [Path(path)]
    else:
        paths = [Path(p) for p in path]
        if not paths:
            raise ParameterError("no annotation files given")
    rows: list[dict[str, Any]] = []
    for p in paths:
        if not _is_annotations(p.name):
            raise DataError(
                "unsupported file type; use .json (a JSON array), .jsonl or .ndjson, "
                "optionally gzipped (.gz)",
                path=p,
            )
        records, lines = _parse(pairwise.read_text(p), p)  # an array or lines, sniffed
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
    # _record_row read the preference: the generic mapping takes its (outcome, reason).
    table["verdict"] = pd.Series(list(zip(outcome, error, strict=True)), dtype=object)
    keys = ["model", "baseline", "task_id", "replicate", "judge"]
    return pairwise.from_table(table, _COLUMNS, outcome=lambda v: v, rubric=RUBRIC, sort_by=keys)


_COLUMNS = pairwise.PairwiseColumns(
    item="instruction_id",
    judge="annotator",
    verdict="verdict",
    sides=("generator_2", "generator_1"),
    side_names=("model", "baseline"),
    replicate="replicate",
    fields={"judge_usd": "price_per_example", **{k: k for k in ("raw", "judgment_id", "label")}},
    extra={
        "dataset": ("dataset", "str"),
        "preference": ("preference", "float64"),
        "win_share": ("win_share", "float64"),
        "len_with": ("len_output_2", "Int64"),
        "len_without": ("len_output_1", "Int64"),
        "judge_time_s": ("time_per_example", "float64"),
    },
)
EXTRA_COLUMNS = ("model", "baseline", *_COLUMNS.extra)
_ROW_FIELDS = (
    "instruction_id generator_1 generator_2 annotator dataset price_per_example "
    "time_per_example len_output_1 len_output_2 raw preference win_share outcome parse_error "
    "judgment_id"
).split()
