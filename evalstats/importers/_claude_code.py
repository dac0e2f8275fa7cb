"""Claude Code headless output (``claude -p``, json or stream-json) -> runs; docs/data.md."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalstats.errors import DataError
from evalstats.records import coerce_field, is_missing

from ._common import (
    Imported,
    Problem,
    Source,
    arm_mapper,
    file_tool_keys,
    finish,
    jsonl_records,
    list_files,
    loads,
    number_replicates,
    paths_from_input,
    read_bytes,
)
from ._table import _read

DEFAULT_CLAUDE_FILE_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("file_path",),
    "Grep": ("path",),
    "Glob": ("path",),
    "NotebookRead": ("notebook_path",),
}

_ONLY_RESULT = (
    "json output holds only the result: transcript and files_inspected unknown "
    "(use --output-format stream-json, or json with --verbose)"
)
_USAGE_KEYS = (
    "input_tokens output_tokens cache_creation_input_tokens cache_read_input_tokens".split()
)


def _events(path: Path) -> tuple[list[dict[str, Any]], list[int | None], str]:
    data = read_bytes(path)  # a regular file within the cap, or a DataError
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"unreadable Claude Code output: {exc}", path=path) from None
    if not text.strip():
        raise DataError("empty Claude Code output", path=path)
    try:
        whole = loads(text.strip(), path)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return [whole], [None], "json"
    if isinstance(whole, list):
        events = [e for e in whole if isinstance(e, dict)]
        return events, [None] * len(events), "json-verbose"
    records = jsonl_records(text, path, "stream-json event")
    return [e for e, _ in records], [n for _, n in records], "stream-json"


def _text_field(record: dict[str, Any], name: str, path: Path, line: int | None) -> str | None:
    value = record.get(name)
    if value is not None and not isinstance(value, str):
        raise DataError(
            f"expected text, got {type(value).__name__}", path=path, line=line, field=name
        )
    return value


def _block_text(content: Any) -> str:
    if isinstance(content, list):
        content = "\n".join(
            b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return content if isinstance(content, str) else ""


def _transcript(
    p: Path, events: list[dict[str, Any]], lines: list[int | None], tools: Mapping[str, Any]
) -> tuple[list[str], list[str], str | None]:
    model = None
    texts: list[str] = []
    files: list[str] = []
    for e, at in zip(events, lines, strict=True):
        kind = e.get("type")
        if kind == "system" and e.get("subtype") == "init" and model is None:
            model = _text_field(e, "model", p, at)
        if kind not in ("assistant", "user"):
            continue
        message = e.get("message") or {}
        if not isinstance(message, dict):
            raise DataError(
                "an event's message must be an object", path=p, line=at, field="message"
            )
        if kind == "assistant":
            named = _text_field(message, "model", p, at)  # checked even when known
            model = named if model is None else model
        content = message.get("content")
        if content is not None and not isinstance(content, str | list):
            msg = "a message's content must be text or a list of blocks"
            raise DataError(msg, path=p, line=at, field="content")
        if isinstance(content, str):
            texts.append(f"[{kind}] {content}")
            continue
        for block in content or []:
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text":
                texts.append(f"[{kind}] {block.get('text', '')}")
            elif btype == "thinking":
                texts.append(f"[thinking] {block.get('thinking', '')}")
            elif btype == "tool_use":
                name, args = block.get("name", ""), block.get("input") or {}
                texts.append(f"[tool call {name}] {json.dumps(args, ensure_ascii=False)}")
                files.extend(paths_from_input(args, tools.get(name, ())))
            elif btype == "tool_result":
                texts.append(f"[tool result] {_block_text(block.get('content'))}")
    return texts, files, model


def parse_output(
    path: str | os.PathLike[str], file_tools: Mapping[str, Sequence[str]] | None = None
) -> dict[str, Any]:
    """Read one ``claude -p`` output file (json or stream-json) into run fields.

    Returns the run fields (``transcript`` and ``files_inspected`` None for plain json) plus
    ``format``, ``subtype``, ``is_error``, ``num_turns``, ``total_cost_usd``, ``session_id``;
    a DataError names the file and line.
    """
    p = Path(path)
    tools = dict(file_tools) if file_tools is not None else dict(DEFAULT_CLAUDE_FILE_TOOLS)
    events, lines, fmt = _events(p)
    results = [i for i, e in enumerate(events) if e.get("type") == "result"]
    if not results:
        msg = "no result event (the run was cut off before it finished?)"
        raise DataError(msg, path=p, line=lines[-1] if lines else None)
    sessions = list(
        dict.fromkeys(e["session_id"] for e in events if isinstance(e.get("session_id"), str))
    )
    if len(sessions) > 1:
        other = next(i for i, e in enumerate(events) if e.get("session_id") == sessions[1])
        raise DataError(
            f"the file holds {len(sessions)} sessions ({', '.join(sessions[:3])}): one "
            "output file per run (split it; merged, they would read as one run)",
            path=p,
            line=lines[other],
            field="session_id",
        )
    if len(results) > 1:
        msg = f"the file holds {len(results)} result events: one output file per run"
        raise DataError(msg, path=p, line=lines[results[1]], field="type")
    result, line = events[results[0]], lines[results[0]]
    texts, files, model = _transcript(p, events, lines, tools)

    def number(kind: str, field: str, value: Any) -> Any:
        try:  # the data contract's own checks: finite, >= 0, integers whole
            return coerce_field(kind, value, text_source=False)
        except ValueError as exc:
            raise DataError(str(exc), path=p, line=line, field=field) from None

    by_model = result.get("modelUsage")
    if model is None and isinstance(by_model, dict) and by_model:
        # Several models (e.g. a small one for titles): the one that wrote most is the agent.
        out = {
            m: e.get("outputTokens", 0) if isinstance(e, dict) else e for m, e in by_model.items()
        }
        model = max(out, key=lambda m: number("float", f"modelUsage.{m}.outputTokens", out[m] or 0))
    if result.get("duration_ms") is None:
        raise DataError("result has no duration_ms", path=p, line=line, field="duration_ms")
    wall_s = number("float", "duration_ms", result["duration_ms"]) / 1000.0
    usage = result.get("usage")
    reported = None
    if isinstance(usage, dict):
        counts = [(k, usage.get(k)) for k in _USAGE_KEYS]
        reported = sum(number("int", f"usage.{k}", n) for k, n in counts if n is not None)
    answer = result.get("result")
    if answer is not None and not isinstance(answer, str):
        msg = f"the result must be the answer's text, got {type(answer).__name__}"
        raise DataError(msg, path=p, line=line, field="result")
    detailed = fmt != "json"
    return {
        "answer": answer or "",
        "transcript": "\n".join(texts) if detailed else None,
        "files_inspected": list(dict.fromkeys(files)) if detailed else None,
        "wall_s": wall_s,
        "reported_tokens": reported,
        "agent_model": model,
        "format": fmt,
        **{k: result.get(k) for k in ("subtype", "num_turns", "total_cost_usd", "session_id")},
        "is_error": bool(result.get("is_error", False)),
        "result_line": line,
    }


_FIELDS_IN_NAMES = ("task_id", "arm", "replicate")


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A file-name pattern ({task_id}, {arm}, {replicate}, other {x}, *) as a regex."""
    out, pos = [], 0
    for m in re.finditer(r"\{(\w+)\}|\*", pattern):
        out.append(re.escape(pattern[pos : m.start()]))
        name = m.group(1)
        if name is None:
            out.append(".*")
        elif name == "replicate":
            out.append(r"(?P<replicate>\d+)")
        elif name in _FIELDS_IN_NAMES:
            out.append(f"(?P<{name}>.+?)")
        else:
            out.append(".+?")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    regex = re.compile("".join(out))
    missing = {"task_id", "arm"} - set(regex.groupindex)
    if missing:
        raise ValueError(f"pattern {pattern!r} must contain {{task_id}} and {{arm}}")
    return regex


def _from_manifest(manifest: Path) -> list[tuple[Path, dict[str, Any], Source]]:
    rows, sources, header, _ = _read(manifest)
    for col in ("file", "task_id", "arm"):
        if col not in header:
            msg = f"manifest has no {col!r} column (columns: {', '.join(header)})"
            raise DataError(msg, path=manifest, line=1, field=col)
    out = []
    for row, src in zip(rows, sources, strict=True):
        if is_missing(row.get("file")):
            raise src.error("empty file name", field="file")
        keys = {k: v for k, v in row.items() if k != "file"}
        if "replicate" in keys:
            try:
                keys["replicate"] = coerce_field("int", keys["replicate"], text_source=True)
            except ValueError as exc:
                raise src.error(str(exc), field="replicate") from None
        out.append((manifest.parent / row["file"], keys, src))
    return out


def _from_pattern(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]], pattern: str
) -> tuple[list[tuple[Path, dict[str, Any], Source]], list[Problem]]:
    regex = compile_pattern(pattern)
    out, skipped = [], []
    for f in list_files(paths, lambda q: q.is_file() and not q.name.startswith(".")):
        m = regex.fullmatch(f.name)
        if m is None:
            skipped.append(
                Problem(Source(str(f)), f"file name does not match {pattern!r}; skipped")
            )
            continue
        keys = {k: v for k, v in m.groupdict().items() if v is not None}
        if "replicate" in keys:
            keys["replicate"] = int(keys["replicate"])
        out.append((f, keys, Source(str(f))))
    return out, skipped


def from_claude_code(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]] = (),
    *,
    pattern: str | None = "{task_id}__{arm}__{replicate}.json*",
    manifest: str | os.PathLike[str] | None = None,
    arm_values: Mapping[str, str | Sequence[str]] | str | None = None,
    file_tools: Mapping[str, Sequence[str]] | Iterable[str] | None = None,
    agent_model: str | None = None,
    tasks_file: str | os.PathLike[str] | None = None,
    allow_incomplete: bool = False,
    arms: Sequence[str] | None = None,
) -> Imported:
    """Import a folder of ``claude -p`` outputs (json or stream-json), one file per run.

    Parameters
    ----------
    paths : path-like or iterable of them
        Output files or folders of them (ignored when ``manifest`` is given).
    pattern, manifest : optional
        File-name pattern with ``{task_id}``, ``{arm}`` [, ``{replicate}``]; or a CSV with
        ``file`` (relative to it), ``task_id``, ``arm`` [, ``replicate``, ``agent_model``,
        ``started_at``].
    file_tools : mapping or iterable of ``NAME[:KEY,...]``, optional
        Tools whose inputs name files read, added to :data:`DEFAULT_CLAUDE_FILE_TOOLS`.
    agent_model : str, optional
        Model name for outputs that name none (the plain json format).
    arm_values, tasks_file, allow_incomplete, arms
        As in :func:`~evalstats.importers.from_table`.

    Returns
    -------
    Imported
        ``tasks`` (from ``tasks_file``, else None), ``runs`` and the ``problems`` met.

    Examples
    --------
    >>> from evalstats.importers import from_claude_code
    >>> from_claude_code("no/such/dir")
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: no/such/dir: file not found
    """
    to_arm = arm_mapper(arm_values, arms)
    tools = file_tool_keys(file_tools, DEFAULT_CLAUDE_FILE_TOOLS)
    problems: list[Problem] = []
    if manifest is not None:
        entries = _from_manifest(Path(manifest))
    else:
        if pattern is None:
            raise ValueError("give a file-name pattern or a manifest")
        entries, problems = _from_pattern(paths, pattern)
    runs: list[dict[str, Any]] = []
    sources: list[Source] = []
    for path, keys, src in entries:
        out = parse_output(path, tools)
        where = Source(str(path), line=out["result_line"])
        arm = to_arm(keys["arm"], src)
        model = keys.get("agent_model") or out["agent_model"] or agent_model
        if model is None:
            raise where.error("the output names no model; pass agent_model", field="agent_model")
        if out["format"] == "json":
            problems.append(Problem(where, _ONLY_RESULT))
        if out["is_error"] or out["subtype"] not in (None, "success"):
            problems.append(Problem(where, f"run ended with subtype {out['subtype']!r}"))
        started = keys.get("started_at")
        if started is None:
            try:
                started = datetime.fromtimestamp(path.stat().st_mtime - out["wall_s"], tz=UTC)
            except (OverflowError, ValueError, OSError):
                msg = "duration_ms is longer than any run"
                raise where.error(msg, field="duration_ms") from None
            started = started.isoformat()
            msg = "no start time in the output; started_at = file mtime - duration"
            problems.append(Problem(where, msg))
        reported = out["reported_tokens"]
        if reported is None:
            problems.append(Problem(where, "result has no usage; reported_tokens left out"))
        run = {k: out[k] for k in ("answer", "transcript", "files_inspected", "wall_s")}
        run |= {"task_id": str(keys["task_id"]), "replicate": keys.get("replicate"), "arm": arm}
        run |= {"agent_model": model, "started_at": started, "reported_tokens": reported}
        runs.append(run)
        sources.append(src if manifest is not None else where)
    number_replicates(runs)
    return finish(
        runs,
        sources,
        tasks_file=tasks_file,
        problems=problems,
        allow_incomplete=allow_incomplete,
        arms=arms,
    )
