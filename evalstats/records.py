"""Load and validate tasks, runs and judgments; write files atomically.

Every loader reads JSON Lines (``.jsonl``/``.ndjson``), Parquet (``.parquet``)
or CSV (``.csv``) by extension and returns a DataFrame with the dtypes of the
data contract. Bad input raises :class:`~evalstats.errors.DataError` naming the
file, the line (JSON Lines, CSV counting the header as line 1) or row (Parquet,
1-based) and the field.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

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

__all__ = [
    "Dataset",
    "atomic_write",
    "is_missing",
    "EvalstatsWarning",
    "find_file",
    "incomplete_pairs",
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


def _read_raw(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, np.ndarray, str]:
    """Read a file into an object-valued frame plus the line/row number of each record.

    Returns the frame, the numbers and the word for them ("line" or "row").
    """
    p = Path(path)
    suffix = _suffix(p)
    if not p.exists():
        raise DataError("file not found", path=p)
    if suffix in _JSONL:
        records: list[dict[str, Any]] = []
        lines: list[int] = []
        with p.open("r", encoding="utf-8") as fh:
            for lineno, text in enumerate(fh, start=1):
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DataError(
                        f"malformed JSON ({exc.msg} at column {exc.colno})", path=p, line=lineno
                    ) from None
                if not isinstance(obj, dict):
                    raise DataError(
                        f"expected a JSON object, got {type(obj).__name__}", path=p, line=lineno
                    )
                records.append(obj)
                lines.append(lineno)
        frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
        return frame.astype(object), np.asarray(lines, dtype=np.int64), "line"
    if suffix == ".csv":
        try:
            frame = pd.read_csv(p, dtype=object, keep_default_na=False, na_values=[""])
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DataError(f"unreadable CSV: {exc}", path=p) from None
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
            return int(value)
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        if text_source and isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise ValueError(f"expected an integer, got {value!r}")
    if kind == "float":
        if isinstance(value, bool):
            raise ValueError(f"expected a number, got boolean {value!r}")
        if isinstance(value, (int, float, np.integer, np.floating)):
            out = float(value)
        elif text_source and isinstance(value, str):
            try:
                out = float(value.strip())
            except ValueError:
                raise ValueError(f"expected a number, got {value!r}") from None
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
            except json.JSONDecodeError:
                raise ValueError(f"expected a JSON array of strings, got {value!r}") from None
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


def _validate(
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
        if kind == "str" and required and n:
            empty = np.flatnonzero(frame[name].to_numpy(dtype=object) == "")
            if name.endswith("_id") and empty.size:
                raise fail(int(empty[0]), name, "must not be empty")
    frame.attrs["source"] = str(path)
    frame.attrs["lines"] = lines.tolist()
    return frame


def _first_duplicate(frame: pd.DataFrame, keys: list[str]) -> int | None:
    dup = frame.duplicated(keys, keep="first").to_numpy()
    hits = np.flatnonzero(dup)
    return int(hits[0]) if hits.size else None


def _dup_error(frame: pd.DataFrame, i: int, keys: list[str], path: Path, unit: str) -> DataError:
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
    >>> import evalstats
    >>> tasks = evalstats.load_tasks("data/sample/tasks.jsonl")  # doctest: +SKIP
    >>> tasks.columns[:3].tolist()  # doctest: +SKIP
    ['task_id', 'prompt', 'canonical_answer']
    """
    p = Path(path)
    raw, lines, unit = _read_raw(p)
    frame = _validate(raw, lines, unit, TASK_FIELDS, p, text_source=p.suffix.lower() == ".csv")
    i = _first_duplicate(frame, ["task_id"])
    if i is not None:
        raise _dup_error(frame, i, ["task_id"], p, unit)
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
    raw, lines, unit = _read_raw(p)
    frame = _validate(raw, lines, unit, RUN_FIELDS, p, text_source=p.suffix.lower() == ".csv")
    keys = ["task_id", "replicate", "arm"]
    i = _first_duplicate(frame, keys)
    if i is not None:
        raise _dup_error(frame, i, keys, p, unit)
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

    Raises
    ------
    DataError
        Malformed record, missing or mistyped field, unknown order.
    """
    p = Path(path)
    raw, lines, unit = _read_raw(p)
    if "kind" in raw.columns:
        keep = raw["kind"].map(lambda k: is_missing(k) or k == "judgment").to_numpy(dtype=bool)
        raw, lines = raw.loc[keep].reset_index(drop=True), lines[keep]
    return _validate(raw, lines, unit, JUDGMENT_FIELDS, p, text_source=p.suffix.lower() == ".csv")


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


class Dataset(NamedTuple):
    """What :func:`load_dir` returns: tasks, runs (with tokens) and judgments (or None)."""

    tasks: pd.DataFrame
    runs: pd.DataFrame
    judgments: pd.DataFrame | None


def find_file(data_dir: str | os.PathLike[str], stem: str, *, required: bool = True) -> Path | None:
    """``DATA_DIR/<stem>.jsonl`` (or .ndjson, .parquet, .csv), whichever exists first."""
    d = Path(data_dir)
    for suffix in _SUFFIXES:
        candidate = d / f"{stem}{suffix}"
        if candidate.exists():
            return candidate
    if required:
        raise DataError(f"no {stem}.jsonl, {stem}.parquet or {stem}.csv in this directory", path=d)
    return None


def load_dir(data_dir: str | os.PathLike[str], *, allow_incomplete: bool = False) -> Dataset:
    """Load ``tasks``, ``runs`` and (if present) ``judgments`` from one directory."""
    tasks = load_tasks(find_file(data_dir, "tasks"))
    runs = load_runs(find_file(data_dir, "runs"), tasks, allow_incomplete=allow_incomplete)
    jpath = find_file(data_dir, "judgments", required=False)
    return Dataset(tasks, runs, load_judgments(jpath) if jpath is not None else None)


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


def atomic_write(path: Path, write: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
    """Write a DataFrame as Parquet, CSV or JSON Lines (by extension), atomically."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in _JSONL:
        clean = frame.astype(object).where(frame.notna(), None)
        return write_jsonl_atomic(p, clean.to_dict(orient="records"))
    if suffix == ".parquet":
        atomic_write(p, lambda fh: frame.to_parquet(fh, index=False))
    elif suffix == ".csv":
        atomic_write(p, lambda fh: fh.write(_lists_as_json(frame).to_csv(index=False).encode()))
    else:
        raise ValueError(f"unsupported output type {suffix!r}; use .parquet, .csv or .jsonl")
    return p
