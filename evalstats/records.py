"""Load and validate tasks, runs and judgments; write files atomically.

Every loader reads JSON Lines (``.jsonl``/``.ndjson``), Parquet (``.parquet``)
or CSV (``.csv``) by extension and returns a DataFrame with the dtypes of the
data contract. Bad input raises :class:`~evalstats.errors.DataError` naming the
file, the line (JSON Lines, CSV counting the header as line 1) or row (Parquet,
1-based) and the field.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import tempfile
import tomllib
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from ._atomic import atomic_write
from ._display import html_table, text_table
from ._schema import (
    ARM_DTYPE,
    ARMS,
    JUDGMENT_FIELDS,
    ORDER_DTYPE,
    ORDERS,
    RUN_FIELDS,
    TASK_FIELDS,
)
from .errors import DataError
from .plan import Plan, find_plan, load_plan

__all__ = [
    "DEFAULT_ARM_NAMES",
    "Dataset",
    "EvalstatsWarning",
    "FRAME_SUFFIXES",
    "atomic_write",
    "check_output_path",
    "find_file",
    "incomplete_pairs",
    "is_missing",
    "load_arm_names",
    "load_dir",
    "load_judgments",
    "load_runs",
    "load_tasks",
    "pair_runs",
    "write_frame_atomic",
    "write_jsonl_atomic",
]

_JSONL = (".jsonl", ".ndjson")
_SUFFIXES = (*_JSONL, ".parquet", ".csv")


class EvalstatsWarning(UserWarning):
    """Something in the data deserves attention but does not stop the analysis."""


# --------------------------------------------------------------------------- reading raw records


def _suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in _SUFFIXES:
        raise DataError(
            f"unsupported file type {suffix!r}; use one of {', '.join(_SUFFIXES)}", path=path
        )
    return suffix


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a key given twice in one object is an error, not "last wins"."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return out


class _DuplicateKey(Exception):
    pass


def _json_line(raw: bytes, lineno: int, p: Path) -> Any:
    """One JSON Lines record; every way a line can be unreadable becomes a DataError."""
    try:
        # A byte-order mark is legal only in front of the file.
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"invalid UTF-8 (byte {exc.start + 1} of the line); save the file as UTF-8",
            path=p,
            line=lineno,
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise DataError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
        ) from None
    except RecursionError:
        raise DataError("malformed JSON (nested too deeply)", path=p, line=lineno) from None
    except _DuplicateKey as exc:
        raise DataError(
            "key given twice in one object", path=p, line=lineno, field=str(exc)
        ) from None


def _read_jsonl(p: Path, skip_unreadable: bool) -> tuple[list[dict[str, Any]], list[int]]:
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        with p.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    obj = _json_line(raw, lineno, p)
                except DataError as exc:
                    # Each journal line is one write that ends in a newline, so only a last
                    # line without one can be a write cut short by a kill: that call was
                    # never finished (the runner sets the bytes aside and makes it again).
                    # A corrupt line anywhere else is damage, and an error.
                    torn = not raw.endswith(b"\n")
                    if not skip_unreadable or exc.field is not None or not torn:
                        raise
                    warnings.warn(
                        f"{p}:{lineno}: torn last journal line skipped ({exc.reason})",
                        EvalstatsWarning,
                        stacklevel=4,
                    )
                    continue
                if not isinstance(obj, dict):
                    raise DataError(
                        f"expected a JSON object, got {type(obj).__name__}", path=p, line=lineno
                    )
                records.append(obj)
                lines.append(lineno)
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None
    return records, lines


def _first_bad_utf8_line(p: Path) -> int | None:
    with p.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return lineno
    return None


def _read_csv(p: Path) -> pd.DataFrame:
    try:
        # pandas renames a repeated column to "name.1" silently; read the header first.
        with p.open("r", encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader(fh), None)
        if header is None:
            raise DataError("empty CSV file (no header line)", path=p)
        seen: set[str] = set()
        for name in header:
            if name in seen:
                raise DataError("column appears twice in the header", path=p, line=1, field=name)
            seen.add(name)
        return pd.read_csv(
            p, dtype=object, keep_default_na=False, na_values=[""], encoding="utf-8-sig"
        )
    except UnicodeDecodeError:
        raise DataError(
            "invalid UTF-8; save the file as UTF-8", path=p, line=_first_bad_utf8_line(p)
        ) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, csv.Error) as exc:
        raise DataError(f"unreadable CSV: {exc}", path=p) from None
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None


def read_table_raw(
    path: str | os.PathLike[str], *, skip_unreadable: bool = False
) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Read a file into an object-valued frame plus the line/row number of each record.

    Returns the frame, the numbers and the word for them ("line" or "row"). With
    ``skip_unreadable``, a JSON Lines line that is not JSON is skipped with a warning.
    """
    p = Path(path)
    suffix = _suffix(p)
    try:
        if not p.exists():
            raise DataError("file not found", path=p)
        if p.is_dir():
            raise DataError("is a directory, not a file", path=p)
        if not p.is_file():  # a FIFO or a device (/dev/zero) would be read forever
            raise DataError("not a regular file", path=p)
    except OSError as exc:
        raise DataError(f"cannot read the file ({_reason(exc)})", path=p) from None
    if suffix in _JSONL:
        records, lines = _read_jsonl(p, skip_unreadable)
        frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        return frame.astype(object), np.asarray(lines, dtype=np.int64), "line"
    if suffix == ".csv":
        frame = _read_csv(p)
        frame = frame.astype(object).where(frame.notna(), None)
        # Line numbers assume one physical line per record (header = line 1).
        return frame, np.arange(2, len(frame) + 2, dtype=np.int64), "line"
    try:
        frame = pd.read_parquet(p)
    except Exception as exc:  # pyarrow raises several unrelated types
        raise DataError(f"unreadable Parquet file: {exc}", path=p) from None
    frame = frame.astype(object).where(frame.notna(), None)
    return frame, np.arange(1, len(frame) + 1, dtype=np.int64), "row"


# --------------------------------------------------------------------------- value coercion

# Text (CSV) numbers: plain decimal only. Python's int() and float() also take "12_000",
# "nan", "inf" and full-width digits, which are not numbers a person typed into a table.
_INT_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)
_FLOAT_TEXT = re.compile(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*", re.ASCII)
_INT64_MAX = int(np.iinfo(np.int64).max)
# Text fields that name something: an empty (or blank) value is a missing name.
_NAMES = frozenset({"judge", "rubric", "agent_model", "prompt_sha256"})


def is_missing(v: Any) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def _coerce(kind: str, value: Any, text_source: bool) -> Any:
    """Coerce one value to ``kind``; raise ValueError with the reason if impossible."""
    if kind == "str":
        if isinstance(value, str):
            return value
        raise ValueError(f"expected a string, got {type(value).__name__} {value!r}")
    if kind == "int":
        if isinstance(value, bool):
            raise ValueError(f"expected an integer, got boolean {value!r}")
        if isinstance(value, (int, np.integer)):
            out_int = int(value)
        elif isinstance(value, (float, np.floating)) and float(value).is_integer():
            out_int = int(value)
        elif text_source and isinstance(value, str) and _INT_TEXT.fullmatch(value):
            out_int = int(value)
        else:
            raise ValueError(f"expected an integer, got {value!r}")
        # Every integer of the contract is a count, a budget, a replicate or a revision.
        if out_int < 0:
            raise ValueError(f"expected a non-negative integer, got {value!r}")
        if out_int > _INT64_MAX:
            raise ValueError(f"integer {value!r} is out of range (at most {_INT64_MAX})")
        return out_int
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got boolean {value!r}")
        if isinstance(value, (int, float, np.integer, np.floating)):
            try:
                out = float(value)
            except OverflowError:  # an int beyond the float range
                raise ValueError(f"number {value!r} is out of range") from None
        elif text_source and isinstance(value, str) and _FLOAT_TEXT.fullmatch(value):
            out = float(value)
        elif text_source and isinstance(value, str):
            raise ValueError(f"expected a number, got {value!r}")
        else:
            raise ValueError(f"expected a number, got {type(value).__name__} {value!r}")
        if not math.isfinite(out) or out < 0:
            raise ValueError(f"expected a finite non-negative number, got {value!r}")
        return out
    if kind == "datetime":
        if isinstance(value, pd.Timestamp):
            ts = value
        elif isinstance(value, str):
            try:
                ts = pd.Timestamp(value)
            except (ValueError, TypeError):
                raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}") from None
        else:
            raise ValueError(f"expected an ISO-8601 timestamp string, got {value!r}")
        if ts is pd.NaT:
            raise ValueError(f"expected an ISO-8601 timestamp, got {value!r}")
        # Naive timestamps are taken as UTC: the contract asks for UTC everywhere.
        return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    if kind == "list":
        if text_source and isinstance(value, str):
            try:
                value = json.loads(value)
            except (json.JSONDecodeError, RecursionError):
                shown = value if len(value) <= 60 else f"{value[:60]}... ({len(value)} chars)"
                raise ValueError(f"expected a JSON array of strings, got {shown!r}") from None
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value):
            return list(value)
        raise ValueError(f"expected a list of strings, got {value!r}")
    if kind == "arm":
        if value in ARMS:
            return value
        raise ValueError(f"unknown arm {value!r}; expected one of {', '.join(ARMS)}")
    if kind == "order":
        if value in ORDERS:
            return value
        raise ValueError(f"unknown order {value!r}; expected one of {', '.join(ORDERS)} or null")
    raise AssertionError(f"unknown field kind {kind}")


_DTYPES = {
    "str": "str",
    "float": "float64",
    "list": object,
    "arm": ARM_DTYPE,
    "order": ORDER_DTYPE,
}


def validate_table(
    raw: pd.DataFrame,
    lines: np.ndarray,
    unit: str,
    fields: Mapping[str, tuple[str, bool]],
    path: Path,
    text_source: bool,
) -> pd.DataFrame:
    """Check every field of every record and return a typed frame (known fields only)."""
    n = len(raw)
    out: dict[str, Any] = {}

    def fail(i: int, field: str, reason: str) -> DataError:
        line = int(lines[i])
        msg = reason if unit == "line" else f"row {line}: {reason}"
        return DataError(msg, path=path, line=line if unit == "line" else None, field=field)

    for name, (kind, required) in fields.items():
        col = raw[name].tolist() if name in raw.columns else [None] * n
        values: list[Any] = []
        for i, v in enumerate(col):
            if is_missing(v) or (text_source and kind not in ("str",) and v == ""):
                if required:
                    raise fail(i, name, "missing required field")
                values.append(None)
                continue
            try:
                values.append(_coerce(kind, v, text_source))
            except ValueError as exc:
                raise fail(i, name, str(exc)) from None
        if kind == "int":
            out[name] = pd.array(values, dtype="Int64" if not required else "int64")
        elif kind == "datetime":
            out[name] = pd.to_datetime(pd.Series(values, dtype=object), utc=True)
        else:
            series = pd.Series(values, dtype=object)
            out[name] = series if kind == "list" else series.astype(_DTYPES[kind])
    frame = pd.DataFrame(out, index=pd.RangeIndex(n))
    for name, (kind, required) in fields.items():
        if kind == "str" and required and n and (name.endswith("_id") or name in _NAMES):
            blank = frame[name].str.strip().eq("").fillna(False).to_numpy(dtype=bool)
            if blank.any():
                raise fail(int(np.flatnonzero(blank)[0]), name, "must not be empty")
    frame.attrs["source"] = str(path)
    frame.attrs["lines"] = LineNumbers(lines.tolist())
    return frame


class LineNumbers(tuple):
    """The file line of each row of a loaded frame (``frame.attrs["lines"]``).

    Immutable, so pandas' deep copy of ``attrs`` on every operation that returns a frame
    (thousands while a report is computed) shares it instead of copying each number.

    >>> import copy
    >>> lines = LineNumbers([2, 3, 5])
    >>> copy.deepcopy(lines) is lines, lines[1], list(lines)
    (True, 3, [2, 3, 5])
    """

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> LineNumbers:
        return self


def first_duplicate(frame: pd.DataFrame, keys: list[str]) -> int | None:
    dup = frame.duplicated(keys, keep="first").to_numpy()
    hits = np.flatnonzero(dup)
    return int(hits[0]) if hits.size else None


def duplicate_error(
    frame: pd.DataFrame, i: int, keys: list[str], path: Path, unit: str
) -> DataError:
    lines = frame.attrs["lines"]
    first = np.flatnonzero((frame[keys] == frame.loc[i, keys]).all(axis=1).to_numpy())[0]
    what = ", ".join(f"{k}={frame.at[i, k]!r}" for k in keys)
    reason = f"duplicate ({what}); first seen at {unit} {lines[first]}"
    if unit == "line":
        return DataError(reason, path=path, line=lines[i], field=keys[-1])
    return DataError(f"row {lines[i]}: {reason}", path=path, field=keys[-1])


# --------------------------------------------------------------------------- public loaders


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

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, unknown arm, duplicate
        (task_id, replicate, arm), unknown task, a pair with only one arm.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p)
    frame = validate_table(raw, lines, unit, RUN_FIELDS, p, text_source=p.suffix.lower() == ".csv")
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
        from .tokens import annotate_runs

        attrs = dict(frame.attrs)
        frame = annotate_runs(frame, tasks)
        frame.attrs.update(attrs)
    return frame


def incomplete_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs whose pair lacks the other arm: ``task_id``, ``replicate``, ``arm``, ``index``."""
    counts = runs.groupby(["task_id", "replicate"], observed=True)["arm"].transform("size")
    lonely = runs.loc[counts.to_numpy() < 2, ["task_id", "replicate", "arm"]]
    return lonely.assign(arm=lonely["arm"].astype(str)).reset_index()


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
        Malformed record, missing or mistyped field, unknown order.
    """
    p = Path(path)
    raw, lines, unit = read_table_raw(p, skip_unreadable=True)
    if "kind" in raw.columns:
        keep = raw["kind"].map(lambda k: is_missing(k) or k == "judgment").to_numpy(dtype=bool)
        raw, lines = raw.loc[keep].reset_index(drop=True), lines[keep]
    return validate_table(
        raw, lines, unit, JUDGMENT_FIELDS, p, text_source=p.suffix.lower() == ".csv"
    )


def pair_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per pair (task_id, replicate) with ``with_*`` and ``without_*`` columns.

    Columns: ``task_id``, ``replicate``, then for each arm ``answer``, ``tokens``,
    ``wall_s``, ``files_inspected``, ``over_budget`` (when the runs were loaded
    with tasks) and ``agent_model``; plus ``over_budget`` (either arm). Pairs
    lacking an arm are left out with an :class:`EvalstatsWarning` naming them.
    """
    cols = [
        c
        for c in (
            "answer",
            "tokens",
            "wall_s",
            "files_inspected",
            "over_budget",
            "agent_model",
            "transcript",
        )
        if c in runs.columns
    ]
    lonely = incomplete_pairs(runs)
    if len(lonely):
        names = ", ".join(f"({r.task_id}, {r.replicate})" for r in lonely.head(5).itertuples())
        warnings.warn(
            f"{len(lonely)} incomplete pairs left out: {names}", EvalstatsWarning, stacklevel=2
        )
    parts = []
    for arm in ARMS:
        part = runs.loc[runs["arm"] == arm, ["task_id", "replicate", *cols]]
        parts.append(part.rename(columns={c: f"{arm}_{c}" for c in cols}))
    pairs = parts[0].merge(parts[1], on=["task_id", "replicate"], how="inner")
    if "with_over_budget" in pairs.columns:
        pairs["over_budget"] = pairs["with_over_budget"] | pairs["without_over_budget"]
    return pairs.sort_values(["task_id", "replicate"], kind="stable").reset_index(drop=True)


#: What the two arms are called when nothing names them.
DEFAULT_ARM_NAMES = {"with": "WITH", "without": "WITHOUT"}


class Dataset(NamedTuple):
    """What :func:`load_dir` returns: tasks, runs (with tokens), judgments, plan, arm names.

    ``judgments`` is None when the directory has none yet; ``plan`` (an
    :class:`evalstats.plan.Plan`) is None when it declares no analysis plan;
    :attr:`arm_names` is ``{"with": ..., "without": ...}``, what the report calls the two
    arms (:func:`load_arm_names`).
    """

    tasks: pd.DataFrame
    runs: pd.DataFrame
    judgments: pd.DataFrame | None
    plan: Plan | None = None

    @property
    def arm_names(self) -> dict[str, str]:
        """``{"with": ..., "without": ...}``: the arms' names (:func:`load_arm_names`).

        Kept in ``runs.attrs["arm_names"]`` by :func:`load_dir` -- they name the runs' arms --
        so a Dataset still unpacks into its four parts; ``WITH`` / ``WITHOUT`` otherwise.
        """
        names = self.runs.attrs.get("arm_names") if self.runs is not None else None
        return dict(names) if names else dict(DEFAULT_ARM_NAMES)

    def _summary(self, *, html: bool) -> list[tuple[str, Any]]:
        return _dataset_summary(self, html=html)

    def __repr__(self) -> str:
        # The default NamedTuple repr prints every frame (13,000 characters for the sample).
        return text_table("Dataset", self._summary(html=False))

    def _repr_html_(self) -> str:
        return html_table("Dataset", self._summary(html=True))


def _count_text(counts: pd.Series) -> str:
    """``"a 3, b 2"`` from a Series of counts indexed by label."""
    return ", ".join(f"{k} {int(v)}" for k, v in counts.items())


def _dataset_summary(ds: Dataset, *, html: bool) -> list[tuple[str, Any]]:
    """Counts, names and files of a Dataset, as (name, value) rows for :mod:`._display`.

    With ``html`` the judgments per judge and rubric are one DataFrame (a nested table);
    without, one text row per judge.
    """
    rows: list[tuple[str, Any]] = []
    tasks, runs, judgments = ds.tasks, ds.runs, ds.judgments
    names = ds.arm_names
    rows.append(("tasks", len(tasks) if tasks is not None else 0))
    files = [f.attrs.get("source") for f in (tasks, runs, judgments) if f is not None]
    if runs is not None and len(runs):
        arm = runs["arm"].astype(str)
        per_arm = arm.value_counts().reindex(ARMS, fill_value=0)
        shown = ", ".join(
            f"{names.get(a, a)} {int(per_arm[a])}"
            if names.get(a, a) in (DEFAULT_ARM_NAMES[a], a)
            else f"{names[a]} ({a}) {int(per_arm[a])}"
            for a in ARMS
        )
        rows.append(("runs", f"{len(runs)}: {shown}"))
        keys = runs[["task_id", "replicate"]]
        n_pairs = len(keys.drop_duplicates())
        pairs = f"{n_pairs} (task, replicate) pairs"
        n_arms = runs.groupby(["task_id", "replicate"], observed=True)["arm"].nunique()
        lonely = int((n_arms < len(ARMS)).sum())
        if lonely:
            pairs += f", {lonely} lacking an arm"
        if "over_budget" in runs.columns:
            over = runs.loc[runs["over_budget"].to_numpy(dtype=bool), ["task_id", "replicate"]]
            pairs += f", {len(over.drop_duplicates())} over budget (no_answer)"
        rows.append(("pairs", pairs))
        per_task = keys.drop_duplicates().groupby("task_id").size()
        lo, hi = int(per_task.min()), int(per_task.max())
        rows.append(("replicates", f"{lo} per task" if lo == hi else f"{lo} to {hi} per task"))
        rows.append(("agents", ", ".join(sorted(runs["agent_model"].astype(str).unique()))))
    if judgments is None:
        rows.append(("judgments", "none yet"))
    else:
        failed = judgments["error"].notna().to_numpy(dtype=bool)
        text = f"{len(judgments)} calls: {len(judgments) - int(failed.sum())} answered"
        if failed.any():
            kind = (
                judgments.loc[failed, "call_status"].fillna("failed").astype(str)
                if "call_status" in judgments.columns
                else pd.Series("failed", index=judgments.index[failed])
            )
            counts = kind.value_counts().sort_index()
            text += ", " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()) + " (error set)"
        rows.append(("judgments", text))
        if len(judgments):
            table = pd.crosstab(judgments["judge"].astype(str), judgments["rubric"].astype(str))
            table.columns.name = table.index.name = None
            rows.append(("judges", ", ".join(table.index)))
            revs = (
                judgments.assign(_r=judgments["rubric"].astype(str))
                .groupby("_r")["prompt_revision"]
                .agg(lambda r: "/".join(f"r{int(x)}" for x in sorted(r.dropna().unique())))
            )
            rows.append(("rubrics", ", ".join(f"{k} ({v})" for k, v in revs.items())))
            if html:
                rows.append(("judgments by judge × rubric", table.reset_index(names="judge")))
            else:
                for i, (judge, counts) in enumerate(table.iterrows()):
                    text = f"{judge}: {_count_text(counts[counts > 0])}"
                    rows.append(("by judge" if i == 0 else "", text))
    plan = ds.plan
    if plan is None:
        rows.append(("plan", "none"))
    else:
        rows.append(
            ("plan", f"{plan.primary_rubric} / {plan.primary_judge_name} / {plan.statistic}")
        )
        if plan.path:
            files.append(plan.path)
    rows.append(("files", ", ".join(str(f) for f in files if f) or "none recorded"))
    return rows


def find_file(data_dir: str | os.PathLike[str], stem: str, *, required: bool = True) -> Path | None:
    """``DATA_DIR/<stem>.jsonl`` (or .ndjson, .parquet, .csv): the one file holding that table.

    Raises ``DataError`` when the directory cannot be listed, when two files hold the same
    table (``tasks.jsonl`` and ``tasks.csv``: which one is meant cannot be guessed), and,
    if ``required``, when there is none.
    """
    d = Path(data_dir)
    try:
        present = set(os.listdir(d))
    except FileNotFoundError:
        raise DataError("data directory not found", path=d) from None
    except NotADirectoryError:
        raise DataError("not a directory", path=d) from None
    except OSError as exc:
        raise DataError(f"cannot read the directory ({_reason(exc)})", path=d) from None
    found = [d / f"{stem}{suffix}" for suffix in _SUFFIXES if f"{stem}{suffix}" in present]
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise DataError(f"{names} both hold the {stem} table; keep one of them", path=d)
    if found:
        return found[0]
    if required:
        raise DataError(f"no {stem}.jsonl, {stem}.parquet or {stem}.csv in this directory", path=d)
    return None


def load_dir(data_dir: str | os.PathLike[str], *, allow_incomplete: bool = False) -> Dataset:
    """Load ``tasks``, ``runs`` and (if present) ``judgments`` and ``plan`` from one directory.

    The plan is ``plan.toml`` or ``plan.json`` (:func:`evalstats.load_plan`); both at once
    is a ``DataError``. The arm names come from ``arms.toml`` or the rubric files of
    ``rubrics/`` (:func:`load_arm_names`).
    """
    tasks = load_tasks(find_file(data_dir, "tasks"))
    runs = load_runs(find_file(data_dir, "runs"), tasks, allow_incomplete=allow_incomplete)
    jpath = find_file(data_dir, "judgments", required=False)
    ppath = find_plan(data_dir)
    judgments = load_judgments(jpath) if jpath is not None else None
    used = None if judgments is None else set(judgments["rubric"].astype(str))
    runs.attrs["arm_names"] = load_arm_names(data_dir, rubrics=used)
    return Dataset(
        tasks,
        runs,
        judgments,
        load_plan(ppath) if ppath is not None else None,
    )


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+)", str(e))
        raise DataError(
            f"not valid TOML: {e}", path=path, line=int(m.group(1)) if m else None
        ) from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"cannot read: {e}", path=path) from None


def _line_of(path: Path, key: str) -> int | None:
    pat = re.compile(r"^\s*\"?" + re.escape(key) + r"\"?\s*=")
    for i, text in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if pat.match(text):
            return i
    return None


def load_arm_names(
    data_dir: str | os.PathLike[str], *, rubrics: Iterable[str] | None = None
) -> dict[str, str]:
    """What the data directory calls its two arms: ``{"with": ..., "without": ...}``.

    The first that names an arm wins:

    1. ``DATA_DIR/arms.toml``, two keys: ``with = "Serena MCP"`` and
       ``without = "plain Claude Code"`` (either may be left out);
    2. the ``[arms]`` table of the rubric files in ``DATA_DIR/rubrics/`` (where
       ``evalstats judge --rubric FILE`` keeps a copy), of the rubrics named in ``rubrics``
       when given, the newest revision of each -- when they disagree, a warning and the
       default;
    3. ``"WITH"`` / ``"WITHOUT"``.

    Raises
    ------
    DataError
        ``arms.toml`` is not TOML, has another key, or a value that is not a non-empty
        string (the message names the file, line and field).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> load_arm_names(d)
    {'with': 'WITH', 'without': 'WITHOUT'}
    >>> _ = (d / "arms.toml").write_text('with = "Serena MCP"\\n', encoding="utf-8")
    >>> load_arm_names(d)
    {'with': 'Serena MCP', 'without': 'WITHOUT'}
    """
    d = Path(data_dir)
    names: dict[str, str] = {}
    path = d / "arms.toml"
    if path.is_file():
        doc = _toml(path)
        for key, value in doc.items():
            if key not in ARMS:
                raise DataError(
                    "unknown key; arms.toml names the arms 'with' and 'without'",
                    path=path,
                    line=_line_of(path, key),
                    field=key,
                )
            if not isinstance(value, str) or not value.strip():
                raise DataError(
                    f"must be a non-empty string, got {value!r:.60}",
                    path=path,
                    line=_line_of(path, key),
                    field=key,
                )
            names[key] = value.strip()
    folder = d / "rubrics"
    wanted = None if rubrics is None else set(rubrics)
    seen: dict[str, dict[str, list[Path]]] = {arm: {} for arm in ARMS}
    newest: dict[str, tuple[Any, Path, dict[str, Any]]] = {}
    for p in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        # Only the [arms] table: reading the whole rubric is evalstats.rubrics' job, and a
        # rubric file it rejects still fails there, when its judgments are read.
        doc = _toml(p)
        name, rev = str(doc.get("name")), doc.get("revision")
        if wanted is not None and name not in wanted:
            continue
        rev = rev if isinstance(rev, int) else 0
        if name not in newest or rev > newest[name][0]:
            # Of one rubric's revisions, the newest names the arms.
            newest[name] = (rev, p, doc)
    for _, p, doc in newest.values():
        arms = doc.get("arms")
        for arm in ARMS if isinstance(arms, dict) else ():
            value = arms.get(arm)
            if isinstance(value, str) and value.strip() and value != DEFAULT_ARM_NAMES[arm]:
                seen[arm].setdefault(value.strip(), []).append(p)
    for arm in ARMS:
        if arm in names or not seen[arm]:
            continue
        if len(seen[arm]) == 1:
            names[arm] = next(iter(seen[arm]))
        else:
            listed = "; ".join(
                f"{v!r} ({', '.join(q.name for q in ps)})" for v, ps in seen[arm].items()
            )
            warnings.warn(
                f"{folder}: the rubric files call the {arm.upper()} arm differently: {listed}; "
                f"using {DEFAULT_ARM_NAMES[arm]!r} (name it in {path})",
                EvalstatsWarning,
                stacklevel=2,
            )
    return {arm: names.get(arm, DEFAULT_ARM_NAMES[arm]) for arm in ARMS}


# --------------------------------------------------------------------------- atomic writers


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, pd.Timestamp):
        return o.isoformat()
    if o is pd.NA or o is pd.NaT:
        return None
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


#: Output types :func:`write_frame_atomic` writes.
FRAME_SUFFIXES = (".parquet", ".csv", *_JSONL)


def check_output_path(
    path: str | os.PathLike[str], *, suffixes: Iterable[str] = FRAME_SUFFIXES
) -> Path:
    """Check, before any work is done, that a table can be written to ``path``.

    The name must end in one of ``suffixes`` and must not be a directory, and the nearest
    existing parent directory must accept a new file (tried with a temporary file that is
    removed at once: permission bits alone do not tell, e.g. under ``/proc`` or as root).

    Raises
    ------
    DataError
        Naming the path and what is wrong with it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_output_path(d / "verdicts.parquet").name
    'verdicts.parquet'
    >>> check_output_path(d / "verdicts.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: ...verdicts.txt: unsupported output type '.txt'; use .parquet, .csv, .jsonl or .ndjson
    """
    p = Path(path)
    allowed = tuple(suffixes)
    if str(path).endswith(("/", os.sep)) or p.is_dir():
        raise DataError(f"is a directory; give a file name ending in {allowed[0]}", path=p)
    suffix = p.suffix.lower()
    if suffix not in allowed:
        shown = ", ".join(allowed[:-1]) + f" or {allowed[-1]}" if len(allowed) > 1 else allowed[0]
        raise DataError(f"unsupported output type {suffix or p.name!r}; use {shown}", path=p)
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise DataError(f"{parent} is not a directory", path=p)
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise DataError(f"cannot write in {parent} ({_reason(exc)})", path=p) from None
    os.close(fd)
    os.unlink(probe)
    return p


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> Path:
    """Write records as JSON Lines via a temporary file and an atomic rename."""
    p = Path(path)

    def write(fh: Any) -> None:
        for rec in records:
            fh.write(json.dumps(dict(rec), ensure_ascii=False, default=_json_default).encode())
            fh.write(b"\n")

    atomic_write(p, write)
    return p


def _lists_as_json(frame: pd.DataFrame) -> pd.DataFrame:
    """CSV has no list type: list cells become JSON arrays, which the loaders read back."""
    out = frame.copy()
    for col in out.columns:
        if out[col].dtype == object and out[col].map(lambda v: isinstance(v, list)).any():
            out[col] = out[col].map(lambda v: json.dumps(v) if isinstance(v, list) else v)
    return out


def write_frame_atomic(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write a DataFrame as Parquet, CSV or JSON Lines (by extension), atomically.

    Raises ``DataError`` (a ``ValueError``) for a path :func:`check_output_path` refuses.
    """
    p = check_output_path(path)
    suffix = p.suffix.lower()
    if suffix in _JSONL:
        clean = frame.astype(object).where(frame.notna(), None)
        return write_jsonl_atomic(p, clean.to_dict(orient="records"))
    if suffix == ".parquet":
        atomic_write(p, lambda fh: frame.to_parquet(fh, index=False))
    elif suffix == ".csv":
        atomic_write(p, lambda fh: fh.write(_lists_as_json(frame).to_csv(index=False).encode()))
    return p
