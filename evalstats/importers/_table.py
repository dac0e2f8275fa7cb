"""Any table (JSON Lines, CSV, Parquet) of runs -> tasks and runs; docs/data.md (Importers)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalstats._schema import RUN_FIELDS, TASK_FIELDS
from evalstats.errors import DataError
from evalstats.records import is_missing, read_table_raw

from ._common import (
    Imported,
    Problem,
    Source,
    arm_mapper,
    finish,
    keep_first_task,
    number_replicates,
    read_cap_check,
)

_PASSED = ("passed", "pass", "success", "resolved")
_TOKENS = ("reported_tokens", "tokens", "total_tokens")  # a harness's usage, in this order
_FIELDS = {**RUN_FIELDS, **{k: v for k, v in TASK_FIELDS.items() if k != "task_id"}}


def parse_assignments(items: Iterable[str] | None, what: str = "--map") -> dict[str, str]:
    """``["task_id=qid", "arm=condition"]`` -> ``{"task_id": "qid", "arm": "condition"}``."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} expects FIELD=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _absent(
    fields: Mapping[str, tuple[str, bool]],
    columns: Sequence[str],
    mapping: Mapping[str, str],
    defaults: Mapping[str, Any],
) -> list[str]:
    """Required fields no column and no constant supplies (replicates are numbered)."""
    optional = {"replicate"} if fields is RUN_FIELDS else {"task_id"}
    return [
        f
        for f, (_, required) in fields.items()
        if required and f not in optional and mapping.get(f, f) not in columns and f not in defaults
    ]


def _fixes(fields: Sequence[str]) -> str:
    return ", ".join(f"{f} (--map {f}=COLUMN or --set {f}=VALUE)" for f in fields)


def _read(path: Path) -> tuple[list[dict[str, Any]], list[Source], list[str], bool]:
    """Records, their sources, the column names and whether values are text (CSV)."""
    read_cap_check(path)  # a regular file within the import cap, or a DataError
    frame, lines, unit = read_table_raw(path)
    columns = [str(c) for c in frame.columns]
    records = [
        {
            k: v.tolist() if isinstance(v, np.ndarray) else v
            for k, v in r.items()
            if not is_missing(v)
        }
        for r in frame.to_dict("records")
    ]
    at = "line" if unit == "line" else "record"
    sources = [Source(str(path), **{at: int(n) if at == "line" else f"row {n}"}) for n in lines]
    return records, sources, columns, path.suffix.lower() == ".csv"


def _from_text(kind: str, value: Any) -> Any:
    """A CSV cell as the number or JSON list the loaders accept (else left as text)."""
    if not isinstance(value, str):
        return value
    try:
        if kind == "int":
            return int(value.strip())
        if kind == "float":
            return float(value.strip())
        if kind == "list":
            return json.loads(value)
        if kind == "bool":
            return {"true": True, "false": False, "1": True, "0": False}[value.strip().lower()]
    except (ValueError, KeyError):
        pass
    return value


def from_table(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    mapping: Mapping[str, str] | None = None,
    arm_values: Mapping[str, str | Sequence[str]] | str | None = None,
    defaults: Mapping[str, Any] | None = None,
    tasks_file: str | os.PathLike[str] | None = None,
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> Imported:
    """Import runs (and tasks, when the rows carry them) from JSONL, CSV or Parquet tables.

    Parameters
    ----------
    paths : path-like or iterable of them
        ``.jsonl`` / ``.ndjson``, ``.csv`` or ``.parquet`` files, read in order.
    mapping, defaults : mapping, optional
        Field -> source column (``{"arm": "condition"}``); field -> constant value.
    arm_values : mapping or str, optional
        Source value(s) of each arm, e.g. ``"with=tool,without=baseline"`` (default:
        with/without, booleans and the ids of ``arms``).
    tasks_file : path-like, optional
        Tasks to check the runs against instead of tasks built from the rows.
    allow_incomplete : bool, default False
        Keep a (task, replicate) that only one arm ran.
    arms : sequence of str, optional
        The arms ``arms.toml`` lists (the names ``arm_values`` may use, in order).

    Returns
    -------
    Imported
        ``tasks`` (None when the rows lack task fields), ``runs`` and the ``problems`` met;
        a DataError names the source file and line (or row).

    Examples
    --------
    >>> from evalstats.importers import from_table
    >>> tasks, runs = from_table(
    ...     "data/sample/runs.jsonl", mapping={"task_id": "task_id"},
    ...     tasks_file="data/sample/tasks.jsonl")
    >>> len(runs), runs["arm"].value_counts().to_dict()
    (180, {'with': 90, 'without': 90})
    """
    mapping = dict(mapping or {})
    defaults = dict(defaults or {})
    for name in (*mapping, *defaults):
        if name not in _FIELDS and name != "task_id":
            raise ValueError(f"unknown field {name!r}; fields: {', '.join(_FIELDS)}")
    to_arm = arm_mapper(arm_values, arms)
    single = isinstance(paths, (str, os.PathLike))
    runs: list[dict[str, Any]] = []
    run_sources: list[Source] = []
    tasks: dict[str, dict[str, Any]] = {}
    task_sources: dict[str, Source] = {}
    problems: list[Problem] = []
    lacking: set[str] = set()
    have_tasks = True
    for path in map(Path, [paths] if single else paths):
        records, sources, columns, text = _read(path)
        file_map = dict(mapping)
        if "reported_tokens" not in (*mapping, *defaults):
            used = next((c for c in _TOKENS if c in columns), None)
            file_map["reported_tokens"] = used or "reported_tokens"
            taken = {used, *_FIELDS, *mapping.values()}  # budget_tokens is a task's budget
            like = [repr(c) for c in columns if "token" in str(c).lower() and c not in taken]
            note = f"; column(s) {', '.join(like)} left unused" if like else ""
            note = (
                f"tokens from column {used!r} (billed: the harness's usage){note}"
                if used
                else f"no billed token column found (looked for {', '.join(_TOKENS)}){note}: "
                "cost counts the transcript's tokens, else none; to use one, "
                "--map reported_tokens=COLUMN"
            )
            problems.append(Problem(Source(str(path)), note))
        if "passed" not in (*mapping, *defaults):  # the run's own pass/fail, by its usual names
            file_map["passed"] = next((c for c in _PASSED if c in columns), "passed")
        for field, column in mapping.items():
            if column not in columns:
                raise DataError(
                    f"mapping {field}={column} names a missing column {column!r} "
                    f"(columns: {', '.join(columns)})",
                    path=path,
                    line=1 if path.suffix.lower() == ".csv" else None,
                    field=column,
                )
        absent = _absent(RUN_FIELDS, columns, mapping, defaults)
        if absent:
            raise DataError(
                f"no column for {len(absent)} required run field(s): {_fixes(absent)} "
                f"(columns: {', '.join(map(str, columns))})",
                path=path,
            )
        lacking.update(_absent(TASK_FIELDS, columns, mapping, defaults))
        have_tasks = not lacking
        for rec, src in zip(records, sources, strict=True):
            row: dict[str, Any] = {}
            for field, (kind, _) in {"task_id": ("str", True), **_FIELDS}.items():
                value = rec.get(file_map.get(field, field))
                if is_missing(value):
                    value = defaults.get(field)
                if is_missing(value):
                    continue
                row[field] = _from_text(kind, value) if text or field in defaults else value
            if "task_id" in row and not isinstance(row["task_id"], str):
                row["task_id"] = str(row["task_id"])  # numeric ids in a table are still ids
            row["arm"] = to_arm(row.get("arm"), src, field=mapping.get("arm", "arm"))
            runs.append({k: row[k] for k in RUN_FIELDS if k in row})
            run_sources.append(src)
            tid = row.get("task_id")
            if have_tasks and tid is not None:
                task = {k: row[k] for k in TASK_FIELDS if k in row}
                first = keep_first_task(tasks, task_sources, task, src)
                if first is not None:
                    differ = ", ".join(k for k in task if task[k] != tasks[tid].get(k))
                    where = f"{first.path} {first.line or first.record}"
                    problems.append(
                        Problem(src, f"task {tid!r}: {differ} differ from {where}; kept the first")
                    )
    number_replicates(runs)
    use_tasks = have_tasks and tasks_file is None
    if not have_tasks and tasks_file is None:
        missing = [f for f in TASK_FIELDS if f in lacking]
        where = Source(run_sources[0].path if run_sources else str(paths))
        msg = f"tasks not built: no column for {_fixes(missing)}; or pass --tasks FILE"
        problems.append(Problem(where, msg))
    return finish(
        runs,
        run_sources,
        tasks=list(tasks.values()) if use_tasks else None,
        task_sources=list(task_sources.values()) if use_tasks else None,
        tasks_file=tasks_file,
        problems=problems,
        allow_incomplete=allow_incomplete,
        arms=arms,
    )
