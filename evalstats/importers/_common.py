"""What every importer shares: bounded reading, problems, arm mapping, validation, the writer.

:func:`finish` validates the records with the usual loaders and aims any error at the source
file and record ("logs/a.eval: sample 'q3' epoch 2: ...").
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from evalstats._schema import ARMS, RUN_FIELDS, TASK_FIELDS
from evalstats._validate import DuplicateKey, unique_keys
from evalstats.errors import DataError, ParameterError
from evalstats.records import (
    NOT_TEXT,
    atomic_write,
    is_missing,
    load_runs,
    load_tasks,
    surrogate_field,
    write_frame_atomic,
    write_jsonl_atomic,
)


@dataclass(frozen=True)
class Source:
    """Where one imported record came from: a file and a record inside it."""

    path: str
    record: str | None = None
    line: int | None = None

    def text(self, message: str) -> str:
        plain = self.record is None or self.line is not None
        return message if plain else f"{self.record}: {message}"

    def error(self, message: str, field: str | None = None) -> DataError:
        return DataError(self.text(message), path=self.path, line=self.line, field=field)


@dataclass(frozen=True)
class Problem:
    """Something in a source that could not be mapped; the import still went on."""

    source: Source
    message: str

    def __str__(self) -> str:
        s = self.source
        return f"{s.path if s.line is None else f'{s.path}:{s.line}'}: {s.text(self.message)}"


@dataclass(frozen=True, eq=False)  # DataFrames have no single truth value to compare
class Imported:
    """What an importer returns: ``tasks`` (or None), ``runs`` and the ``problems`` met."""

    tasks: pd.DataFrame | None
    runs: pd.DataFrame
    problems: tuple[Problem, ...] = field(default=())

    def __iter__(self) -> Iterator[pd.DataFrame | None]:
        yield self.tasks
        yield self.runs


# Input caps (bytes; EVALSTATS_MAX_INPUT_BYTES overrides): a file, an archive's inflated size.
MAX_INPUT_BYTES = 1024**3
MAX_MEMBER_BYTES = 256 * 1024**2


def _cap(default: int) -> int:
    text = os.environ.get("EVALSTATS_MAX_INPUT_BYTES")
    return int(text) if text and text.isdigit() and int(text) > 0 else default


def read_cap_check(path: str | os.PathLike[str], cap: float | None = None) -> None:
    """Refuse a file that is not regular or is over ``cap`` bytes, without reading it."""
    limit = _cap(MAX_INPUT_BYTES) if cap is None else cap
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise DataError("file not found", path=p) from None
    except OSError as exc:
        raise DataError(f"unreadable: {exc.strerror or exc}", path=p) from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(
            "not a regular file (a device, pipe or directory): nothing to import from it", path=p
        )
    if info.st_size > limit:
        raise DataError(
            f"the file is {info.st_size:,} bytes, over the import cap of {limit:,} "
            "(EVALSTATS_MAX_INPUT_BYTES): split it",
            path=path,
        )


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    limit = _cap(MAX_INPUT_BYTES)
    read_cap_check(path, limit)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)  # it may have grown since the stat
    if len(data) > limit:
        raise DataError(f"the file grew past the import cap of {limit:,} bytes", path=path)
    return data


def loads(text: str | bytes, path: Any, line: int | None = None) -> Any:
    """``json.loads`` that refuses duplicate keys and deep nesting with a ``DataError``."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError:
        raise DataError("the JSON nests too deeply to be a record", path=path, line=line) from None
    except DuplicateKey as exc:
        raise DataError(
            "key given twice in one object", path=path, line=line, field=str(exc)
        ) from None


def jsonl_records(text: str, path: Any, what: str = "JSON") -> list[tuple[dict, int]]:
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = loads(line, path, lineno)
        except json.JSONDecodeError as exc:
            raise DataError(
                f"malformed {what} ({exc.msg} at column {exc.colno})", path=path, line=lineno
            ) from None
        if not isinstance(obj, dict):
            raise DataError("expected a JSON object per line", path=path, line=lineno)
        out.append((obj, lineno))
    return out


def check_zip(path: str | os.PathLike[str]) -> None:
    limit = _cap(MAX_MEMBER_BYTES)
    read_cap_check(path, math.inf)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # the reader says so in its own words
    twice = sorted(n for n, k in Counter(i.filename for i in infos).items() if k > 1)
    if twice:
        msg = f"the archive holds member {twice[0]!r} twice: which one is meant is not knowable"
        raise DataError(msg, path=path, field=twice[0])
    big = max(infos, key=lambda i: i.file_size, default=None)
    total = sum(i.file_size for i in infos)
    if big is not None and total > limit:
        one = big.file_size > limit
        what = f"member {big.filename!r}" if one else "the archive"
        raise DataError(
            f"{what} inflates to {big.file_size if one else total:,} bytes, over the import "
            f"cap of {limit:,} (EVALSTATS_MAX_INPUT_BYTES)",
            path=path,
            field=big.filename if one else None,
        )


_DEFAULT_ARM_VALUES = {"with": "with", "without": "without", "true": "with", "false": "without"}


def arm_mapper(
    arm_values: Mapping[str, str | Sequence[str]] | str | None, arms: Sequence[str] | None = None
):
    """Source value -> arm id, case-insensitively (None, or given a Source, a DataError)."""
    if isinstance(arm_values, str):
        parsed: dict[str, list[str]] = {}
        for part in filter(None, (p.strip() for p in arm_values.split(","))):
            arm, sep, values = part.partition("=")
            if not sep or not arm.strip():
                raise ValueError(
                    f"arm values must look like with=VALUE,without=VALUE (any arm names), got {part!r}"
                )
            parsed[arm.strip()] = [v.strip() for v in values.split("|")]
        arm_values = parsed
    if not arm_values:
        table = _DEFAULT_ARM_VALUES | {str(a).lower(): str(a) for a in arms or ()}
    else:
        table = {}
        for arm, values in arm_values.items():
            if arms is not None and arm not in arms:
                raise ValueError(
                    f"unknown arm {arm!r} in arm values; arms.toml lists {', '.join(arms)}"
                )
            for v in [values] if isinstance(values, str) else values:
                table[str(v).lower()] = arm

    def to_arm(value: Any, src: Source | None = None, what="arm", field="arm") -> str | None:
        arm = None if is_missing(value) else table.get(str(value).lower())
        if arm is None and src is not None:
            raise src.error(
                f"{what} {value!r} names no arm; map it with arm values "
                "(e.g. with=VALUE,without=VALUE or none=VALUE,v1=VALUE,v2=VALUE)",
                field=field,
            )
        return arm

    return to_arm


def file_tool_keys(
    specs: Mapping[str, Sequence[str]] | Iterable[str] | None,
    default: Mapping[str, tuple[str, ...]],
) -> dict[str, tuple[str, ...]]:
    """Tool name -> argument keys holding a file path, from ``NAME[:KEY[,KEY]]`` specs."""
    out = dict(default)
    if isinstance(specs, Mapping):
        return out | {k: tuple(v) for k, v in specs.items()}
    for spec in specs or ():
        name, _, keys = spec.partition(":")
        found = tuple(k.strip() for k in keys.split(",") if k.strip())
        out[name.strip()] = found or ("path", "file_path", "file")
    return out


def paths_from_input(args: Any, keys: Sequence[str]) -> list[str]:
    if not isinstance(args, Mapping):
        return []
    found: list[str] = []
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            found.append(value)
        elif isinstance(value, list):
            found.extend(v for v in value if isinstance(v, str) and v)
    return found


def list_files(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    keep: Callable[[Path], bool],
    none_found: str | None = None,
) -> list[Path]:
    """The files named, and the files ``keep`` accepts in each folder named (sorted)."""
    files: list[Path] = []
    for p in map(Path, [paths] if isinstance(paths, (str, os.PathLike)) else paths):
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if keep(q))
            if not found and none_found:
                raise DataError(none_found, path=p)
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            raise DataError("file not found", path=p)
    return files


def keep_first_task(
    tasks: dict[str, dict[str, Any]],
    sources: dict[str, Source],
    task: dict[str, Any],
    src: Source,
    compared: Sequence[str] | None = None,
) -> Source | None:
    """Keep the first task of an id; for a later one differing in ``compared``, the first's source."""
    tid = task["task_id"]
    if tid not in tasks:
        tasks[tid], sources[tid] = task, src
        return None
    first = tasks[tid]
    same = task == first if compared is None else all(task[k] == first[k] for k in compared)
    return None if same else sources[tid]


def format_problems(problems: Sequence[Problem], *, max_alike: int = 5) -> list[str]:
    """One line per problem; past ``max_alike`` lines with the same message, one count line."""
    counts = Counter(p.message for p in problems)
    shown: Counter[str] = Counter()
    lines: list[str] = []
    for p in problems:
        shown[p.message] += 1
        if shown[p.message] <= max_alike:
            lines.append(str(p))
        elif shown[p.message] == max_alike + 1:
            lines.append(f"... and {counts[p.message] - max_alike} more: {p.message}")
    return lines


def _map_error(exc: DataError, sources: Sequence[Source], what: str) -> DataError:
    if exc.line is not None and 1 <= exc.line <= len(sources):
        return sources[exc.line - 1].error(f"{what}: {exc.reason}", field=exc.field)
    return DataError(f"{what}: {exc.reason}", path=sources[0].path if sources else None)


def _contract(records: list[dict[str, Any]], fields: Mapping[str, tuple[str, bool]]) -> list[dict]:
    return [{k: r[k] for k in fields if k in r and not is_missing(r[k])} for r in records]


def finish(
    runs: list[dict[str, Any]],
    run_sources: list[Source],
    *,
    tasks: list[dict[str, Any]] | None = None,
    task_sources: list[Source] | None = None,
    tasks_file: str | os.PathLike[str] | None = None,
    problems: Sequence[Problem] = (),
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> Imported:
    """Validate imported records with the usual loaders; errors name the source record."""
    problems = list(problems)
    if not runs:
        where = run_sources[0].path if run_sources else None
        raise DataError("no runs found to import", path=where)
    for what, records, sources in (("task", tasks, task_sources), ("run", runs, run_sources)):
        for record, src in zip(records or (), sources or run_sources, strict=False):
            bad = surrogate_field(record)
            if bad is not None:  # it could not be written as UTF-8, nor judged
                raise src.error(f"{what}: {NOT_TEXT}", field=bad)
    with tempfile.TemporaryDirectory(prefix="evalstats-import-") as tmp:
        task_frame = None
        if tasks_file is not None:
            task_frame = load_tasks(tasks_file)
        elif tasks is not None:
            tpath = write_jsonl_atomic(Path(tmp, "tasks.jsonl"), _contract(tasks, TASK_FIELDS))
            try:
                task_frame = load_tasks(tpath)
            except DataError as exc:
                raise _map_error(exc, task_sources or run_sources, "task") from None
            task_frame.attrs.clear()
        rpath = write_jsonl_atomic(Path(tmp, "runs.jsonl"), _contract(runs, RUN_FIELDS))
        try:
            run_frame = load_runs(rpath, task_frame, allow_incomplete=allow_incomplete, arms=arms)
        except DataError as exc:
            raise _map_error(exc, run_sources, "run") from None
    run_frame.attrs.clear()
    return Imported(task_frame, run_frame, tuple(problems))


def write_data_dir(
    imported: Imported, data_dir: str | os.PathLike[str], *, reference: str | None = None
) -> list[Path]:
    """Write ``tasks.jsonl``, ``runs.jsonl`` and, for new K arms, ``arms.toml``; the paths."""
    d = Path(data_dir)
    d.mkdir(parents=True, exist_ok=True)
    written = []
    if imported.tasks is not None:
        cols = [c for c in TASK_FIELDS if c in imported.tasks.columns]
        written.append(write_frame_atomic(imported.tasks[cols], d / "tasks.jsonl"))
    runs = imported.runs
    cols = [c for c in RUN_FIELDS if c in runs.columns]
    written.append(write_frame_atomic(runs[cols], d / "runs.jsonl"))
    present = [str(a) for a in runs["arm"].cat.categories if (runs["arm"] == a).any()]
    if reference is not None and reference not in present:
        raise ParameterError(
            f"reference {reference!r} is not one of the arms ({', '.join(present)})"
        )
    toml = d / "arms.toml"
    if not toml.exists() and (set(present) != set(ARMS) or reference is not None):
        lines = [f"reference = {json.dumps(reference)}", ""] if reference else []
        lines += ["[arms]", *(f"{json.dumps(a)} = {json.dumps(a)}" for a in present)]
        text = "\n".join(lines) + "\n"
        atomic_write(toml, lambda fh: fh.write(text.encode("utf-8")))
        written.append(toml)
    return written


def number_replicates(runs: list[dict[str, Any]]) -> None:
    """Runs without a replicate get 1, 2, ... per (task, arm), in the order they were listed."""
    seen: dict[tuple[str, str], int] = {}
    for run in runs:
        if is_missing(run.get("replicate")):
            key = (run["task_id"], run["arm"])
            seen[key] = seen.get(key, 0) + 1
            run["replicate"] = seen[key]
