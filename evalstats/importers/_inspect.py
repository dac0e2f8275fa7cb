"""inspect_ai logs (``.eval`` / ``.json``) -> tasks and runs; docs/data.md (Importers)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalstats.errors import DataError, EvalstatsError

from ._common import (
    Imported,
    Problem,
    Source,
    arm_mapper,
    check_zip,
    file_tool_keys,
    finish,
    keep_first_task,
    list_files,
    paths_from_input,
    read_cap_check,
)

DEFAULT_INSPECT_FILE_TOOLS: dict[str, tuple[str, ...]] = {
    "read_file": ("path", "file_path", "file"),
    "view_file": ("path", "file_path", "file"),
    "text_editor": ("path",),
}

_NOT_LOGS = frozenset({"logs.json", "eval-set.json"})

_ARM_KINDS = ("task_arg", "metadata", "model_role", "model")
_NO_START = (
    "no started_at in the sample; used eval.created (the eval's start, no later than the sample's)"
)


def parse_arm_from(spec: str) -> tuple[str, str | None]:
    """``"task_arg:NAME"`` -> ``("task_arg", "NAME")``; ``"model"`` -> ``("model", None)``."""
    kind, sep, name = spec.partition(":")
    kind = kind.strip()
    if kind not in _ARM_KINDS or (kind != "model" and not name.strip()):
        raise ValueError(
            f"arm_from must be task_arg:NAME, metadata:KEY, model_role:ROLE or model, got {spec!r}"
        )
    return kind, (name.strip() or None) if sep else None


def _read_log(path: Path):
    # inspect_ai parses a log whole: bound it first (and before the slow import).
    if path.suffix == ".eval":
        check_zip(path)
    else:
        read_cap_check(path)
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise EvalstatsError(
            "reading inspect_ai logs needs inspect_ai: pip install 'evalstats[inspect]'"
        ) from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # zip, JSON and pydantic errors alike mean an unreadable log
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise DataError(
            f"unreadable inspect_ai log ({type(exc).__name__}: {reason})", path=path
        ) from None


def _arm_value(log: Any, sample: Any, kind: str, name: str | None) -> tuple[bool, Any]:
    spec = log.eval
    if kind == "task_arg":
        args = spec.task_args or {}
        return name in args, args.get(name)
    if kind == "metadata":
        for meta in (sample.metadata or {}, spec.metadata or {}):
            if name in meta:
                return True, meta[name]
        return False, None
    if kind == "model_role":
        roles = spec.model_roles or {}
        if name not in roles:
            return False, None
        role = roles[name]
        role = role[0] if isinstance(role, list) and role else role
        return True, getattr(role, "model", role)
    return True, spec.model


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (getattr(c, "text", None) for c in content) if t)
    return ""


def _transcript(messages: Sequence[Any]) -> str:
    parts = []
    for m in messages:
        text = m.text if hasattr(m, "text") else _text(getattr(m, "content", ""))
        if text:
            parts.append(f"[{m.role}] {text}")
        for call in getattr(m, "tool_calls", None) or []:
            args = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
            parts.append(f"[tool call {call.function}] {args}")
        error = getattr(m, "error", None)
        if error is not None:
            parts.append(f"[tool error] {getattr(error, 'message', error)}")
    return "\n".join(parts)


def _files(messages: Sequence[Any], tools: Mapping[str, tuple[str, ...]]) -> list[str]:
    found: list[str] = []
    for m in messages:
        for call in getattr(m, "tool_calls", None) or []:
            keys = tools.get(call.function)
            if keys is None:
                continue
            args = call.arguments or {}
            if call.function == "text_editor" and args.get("command") not in (None, "view"):
                continue
            found.extend(paths_from_input(args, keys))
    return list(dict.fromkeys(found))  # a file read twice is one file inspected


def _reported_tokens(sample: Any) -> int | None:
    usage = sample.model_usage or {}
    if usage:
        return int(sum(u.total_tokens or 0 for u in usage.values()))
    out_usage = getattr(sample.output, "usage", None)
    return None if out_usage is None else int(out_usage.total_tokens)


def _passed(sample: Any) -> bool | None:
    """The first score that is a pass/fail (C/I, true/false, 1/0), else None."""
    for score in (sample.scores or {}).values():
        v = score.value
        if v in ("C", "I") or isinstance(v, (bool, int, float)) and v in (0, 1):
            return v in ("C", True, 1)
    return None


def from_inspect(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    arm_from: str,
    arm_values: Mapping[str, str | Sequence[str]] | str | None = None,
    file_tools: Mapping[str, Sequence[str]] | Iterable[str] | None = None,
    tasks_file: str | os.PathLike[str] | None = None,
    budget_tokens: int | None = None,
    budget_wall_s: float | None = None,
    canonical_written_at: str | None = None,
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> Imported:
    """Import inspect_ai eval logs as tasks and runs of the data contract.

    Parameters
    ----------
    paths : path-like or iterable of them
        ``.eval`` or ``.json`` logs, or directories holding them.
    arm_from : str
        ``"task_arg:NAME"``, ``"metadata:KEY"``, ``"model_role:ROLE"`` or ``"model"``.
    file_tools : mapping or iterable of ``NAME[:KEY,...]``, optional
        Tools whose calls read files, added to :data:`DEFAULT_INSPECT_FILE_TOOLS`.
    budget_tokens, budget_wall_s, canonical_written_at : optional
        Task budgets when the logs set no limit; when the targets were written (no tasks
        without it or ``tasks_file``).
    arm_values, tasks_file, allow_incomplete, arms
        As in :func:`~evalstats.importers.from_table`.

    Returns
    -------
    Imported
        ``tasks`` (None when they cannot be built), ``runs`` and the ``problems`` met.

    Examples
    --------
    >>> from evalstats.importers import from_inspect
    >>> from_inspect("no/such.eval", arm_from="task_arg:tools")
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: no/such.eval: file not found
    """
    kind, name = parse_arm_from(arm_from)
    to_arm = arm_mapper(arm_values, arms)
    tools = file_tool_keys(file_tools, DEFAULT_INSPECT_FILE_TOOLS)
    problems: list[Problem] = []
    runs: list[dict[str, Any]] = []
    run_sources: list[Source] = []
    tasks: dict[str, dict[str, Any]] = {}
    task_sources: dict[str, Source] = {}
    limits: dict[str, set[Any]] = {"budget_tokens": set(), "budget_wall_s": set()}

    logs = list_files(
        paths,
        lambda q: q.suffix == ".eval" or (q.suffix == ".json" and q.name not in _NOT_LOGS),
        "no .eval or .json inspect_ai logs in this directory",
    )
    for path in logs:
        log = _read_log(path)
        where = Source(str(path))
        if not log.samples:
            raise where.error(
                "log holds no samples (written with log_samples=False, or the eval "
                f"{log.status} before any sample finished)"
            )
        if log.status != "success":
            msg = f"eval status is {log.status!r}; samples kept as logged"
            problems.append(Problem(where, msg))
        spec, cfg = log.eval, log.eval.config
        limits["budget_tokens"].add(cfg.token_limit)
        limits["budget_wall_s"].add(cfg.time_limit or cfg.working_limit)
        for sample in log.samples:
            src = Source(str(path), f"sample {sample.id!r} epoch {sample.epoch}")
            found, value = _arm_value(log, sample, kind, name)
            if not found:
                raise src.error(f"no {arm_from} here to take the arm from", field="arm")
            arm = to_arm(value, src, arm_from)
            task_id = str(sample.id)
            if sample.error is not None:
                msg = " ".join(str(sample.error.message).split())[:160]
                problems.append(Problem(src, f"sample ended with an error: {msg}"))
            if getattr(sample, "limit", None) is not None:
                problems.append(Problem(src, f"sample hit its {sample.limit.type} limit"))
            wall = sample.total_time if sample.total_time is not None else sample.working_time
            if wall is None:
                raise src.error("no total_time or working_time in the sample", field="wall_s")
            started = getattr(sample, "started_at", None)
            if started is None:
                # A recorded time no later than the sample's: the audit only gets stricter.
                started = spec.created
                problems.append(Problem(src, _NO_START))
            reported = _reported_tokens(sample)
            if reported is None:
                msg = "no model usage in the sample; reported_tokens left out"
                problems.append(Problem(src, msg))
            runs.append(
                {
                    "task_id": task_id,
                    "replicate": int(sample.epoch),
                    "arm": arm,
                    "agent_model": sample.output.model or spec.model,
                    "answer": sample.output.completion or "",
                    "transcript": _transcript(sample.messages),
                    "files_inspected": _files(sample.messages, tools),
                    "wall_s": float(wall),
                    "started_at": started if isinstance(started, str) else started.isoformat(),
                    "reported_tokens": reported,
                    "passed": _passed(sample),
                }
            )
            run_sources.append(src)
            target = sample.target
            task = {
                "task_id": task_id,
                "prompt": _text(sample.input),
                "canonical_answer": "\n".join(target) if isinstance(target, list) else target,
            }
            new = task_id not in tasks
            first = keep_first_task(tasks, task_sources, task, src, ("prompt",))
            if new and not task["canonical_answer"]:
                problems.append(Problem(src, "sample has no target; canonical_answer is empty"))
            if first is not None:
                problems.append(Problem(src, f"input differs from {first.path}; kept the first"))

    task_records = None
    if tasks_file is None:
        task_records = _finish_tasks(
            tasks, limits, budget_tokens, budget_wall_s, canonical_written_at
        )
        if isinstance(task_records, str):
            problems.append(Problem(Source(run_sources[0].path), task_records))
            task_records = None
    return finish(
        runs,
        run_sources,
        tasks=task_records,
        task_sources=[task_sources[t] for t in tasks] if task_records is not None else None,
        tasks_file=tasks_file,
        problems=problems,
        allow_incomplete=allow_incomplete,
        arms=arms,
    )


def _finish_tasks(
    tasks: dict[str, dict[str, Any]],
    limits: dict[str, set[Any]],
    budget_tokens: int | None,
    budget_wall_s: float | None,
    written_at: str | None,
) -> list[dict[str, Any]] | str:
    """Task records with budgets, or the reason they cannot be written."""
    if written_at is None:  # the run's time would pass canonical_before_runs with no lead
        return (
            "tasks not written: the logs do not say when the targets were written; "
            "pass --canonical-written-at TIME or --tasks"
        )
    budgets: dict[str, Any] = {"budget_tokens": budget_tokens, "budget_wall_s": budget_wall_s}
    for field in [f for f, given in budgets.items() if given is None]:
        seen = limits[field] - {None}
        if len(seen) != 1 or None in limits[field]:
            detail = "differ between logs" if len(seen) > 1 else "are not set in every log"
            flag = "--" + field.replace("_", "-")
            return (
                f"tasks not written: the eval limits for {field} {detail}; pass {flag} or --tasks"
            )
        budgets[field] = seen.pop()
    budgets["budget_wall_s"] = float(budgets["budget_wall_s"])
    return [{**t, "canonical_written_at": written_at, **budgets} for t in tasks.values()]
