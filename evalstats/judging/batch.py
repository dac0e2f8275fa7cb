"""Batch submission: Anthropic Message Batches and the OpenAI Batch API.

How it works: docs/judging.md, "Batches".
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from evalstats.errors import EvalstatsError

from . import _interrupt, providers
from ._calls import Call, RunState, Unit, now_iso
from ._redact import redact
from .journal import Journal


class BatchError(EvalstatsError):
    """A provider's batch API failed (submit, poll or download); the message is redacted."""


def _sdk_error(what: str, batch_id: str | None, exc: Exception) -> BatchError:
    where = f" (batch {batch_id}: rerun to resume polling it)" if batch_id else ""
    return BatchError(f"batch {what} failed{where}: {providers.describe_error(exc)}")


CHAT_ENDPOINT = "/v1/chat/completions"
_OPENAI_FINAL = ("completed", "failed", "expired", "cancelled")
_MISSING = "\0missing"  # never a call key (those are hex)


async def run_batched(
    todo: Sequence[Call],
    journal: Journal,
    clients: Mapping[str, Any],
    state: RunState,
    poll_interval: float,
    max_batch_size: int,
) -> None:
    """Collect pending batches, submit the rest, then collect those."""
    by_key = {c.key: c for c in todo}
    pending = [b for b in journal.pending_batches() if b.get("call_keys")]
    done = journal.finished_keys()
    for b in pending:  # submitted, not collected: their worst case still counts against max_usd
        state.hold(_open_calls(b, by_key, done))
    in_flight = {k for b in pending for k in b["call_keys"]}
    fresh = [c for c in todo if c.key not in in_flight]
    fits = list(itertools.takewhile(lambda c: state.reserve([c]), fresh))
    for name in dict.fromkeys(c.judge.name for c in fits):
        group = [c for c in fits if c.judge.name == name]
        for start in range(0, len(group), max_batch_size):
            chunk = group[start : start + max_batch_size]
            pending.append(await _submit(chunk, journal, clients, state))
    outcomes = await asyncio.gather(
        *(_collect(b, by_key, journal, clients, state, poll_interval) for b in pending),
        return_exceptions=True,
    )
    # Every batch got its chance to be journaled; then the first failure is reported.
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    left = sum(1 for outcome in outcomes if outcome is False)
    if left:
        print(
            f"evalstats judge: {left} batch(es) hold calls whose batch line predates the "
            "record of their units; those calls stay open for a run with the original "
            "options (every other result is journaled)",
            file=sys.stderr,
        )


async def _submit(
    chunk: Sequence[Call], journal: Journal, clients: Mapping[str, Any], state: RunState
) -> dict[str, Any]:
    judge = chunk[0].judge
    client = clients[judge.provider]
    try:
        if judge.provider == "anthropic":
            batch = await client.messages.batches.create(
                requests=[{"custom_id": c.key, "params": c.params} for c in chunk]
            )
        else:
            r = {"method": "POST", "url": CHAT_ENDPOINT}
            lines = "".join(
                json.dumps({"custom_id": c.key, **r, "body": c.params}) + "\n" for c in chunk
            )
            uploaded = await client.files.create(
                file=("evalstats-batch.jsonl", io.BytesIO(lines.encode("utf-8"))), purpose="batch"
            )
            batch = await client.batches.create(
                input_file_id=uploaded.id, endpoint=CHAT_ENDPOINT, completion_window="24h"
            )
    except Exception as exc:
        state.hold(chunk, -1)
        raise _sdk_error("submission", None, exc) from None
    rubric = state.cfg.rubric
    line = {
        "kind": "batch",
        "batch_id": batch.id,
        "provider": judge.provider,
        "judge": judge.name,
        "call_keys": [c.key for c in chunk],
        # What each call's judgment line needs, for a resume with other options.
        "units": {
            c.key: {k: v for k, v in vars(c.unit).items() if k != "messages" and v is not None}
            for c in chunk
        },
        "rubric": rubric.name,
        "prompt_revision": rubric.revision,
        "prompt_sha256": rubric.sha256,
        "temperature": state.cfg.temperature,
        "max_tokens": state.cfg.max_tokens,
        "created_at": now_iso(),
    }
    journal.write(line)
    return line


async def _collect(
    batch: Mapping[str, Any],
    by_key: Mapping[str, Call],
    journal: Journal,
    clients: Mapping[str, Any],
    state: RunState,
    poll_interval: float,
) -> bool | None:
    """Journal every result of ``batch``: True if closed, False if not all, None if not now."""
    client = clients.get(batch.get("provider"))
    if client is None:  # a batch of a judge not in this run: leave it for its own run
        return None
    batch_id = batch["batch_id"]
    try:
        if batch["provider"] == "anthropic":
            results = await _anthropic_results(client, batch_id, poll_interval)
        else:
            results = await _openai_results(client, batch_id, poll_interval)
    except Exception as exc:
        raise _sdk_error("polling or download", batch_id, exc) from None
    if results is None:  # interrupted while waiting: the batch stays pending
        return None
    done = journal.finished_keys()
    calls = _open_calls(batch, by_key, done)
    default = results.get(_MISSING, (None, "BatchError: missing from the batch results"))
    # A key without its call: a batch line without the units (an older version wrote it).
    complete = len(calls) == len(set(batch["call_keys"]) - done)
    for c in calls:
        result, error = results.get(c.key, default)
        line = state.record(c, result, error, None, now_iso())
        if c.key not in by_key:
            # Another run's call: its line says what that call was, not this run's options.
            for name in ("rubric", "prompt_revision", "prompt_sha256", "temperature", "max_tokens"):
                line[name] = batch.get(name)
        journal.append(line)
    state.hold(calls, -1)
    if not complete:
        journal.sync()
        return False
    journal.write({"kind": "batch_done", "batch_id": batch_id, "created_at": now_iso()})
    return True


def _open_calls(batch: Mapping[str, Any], by_key: Mapping[str, Call], done: set[str]) -> list:
    """The calls of ``batch`` without a success in the journal (``done``) that can be rebuilt."""
    keys = dict.fromkeys(k for k in batch["call_keys"] if k not in done)
    calls = [by_key.get(k) or _call_of_batch(batch, k) for k in keys]
    return [c for c in calls if c is not None]


def _call_of_batch(batch: Mapping[str, Any], key: str) -> Call | None:
    """The call ``key`` of a batch as its line describes it (no prompt: it was sent)."""
    units = batch.get("units")
    unit = units.get(key) if isinstance(units, Mapping) else None
    if not isinstance(unit, Mapping) or not isinstance(batch.get("judge"), str):
        return None
    try:
        judge = providers.parse_judge(batch["judge"])
        replicate = int(unit["replicate"])
        tokens = int(unit.get("input_tokens") or 0)
    except (KeyError, TypeError, ValueError):
        return None
    order = unit.get("order") if isinstance(unit.get("order"), str) else None
    pair = [unit.get(k) if isinstance(unit.get(k), str) else None for k in ("arm_a", "arm_b")]
    return Call(key, judge, Unit(str(unit.get("task_id")), replicate, order, [], tokens, *pair), {})


async def _ended(retrieve: Any, batch_id: str, poll_interval: float, ended: Any) -> Any:
    """The batch's status once ``ended(status)``; None if the run is interrupted first."""
    while not ended(info := await retrieve(batch_id)):
        if _interrupt.stopping():
            return None
        await _interrupt.pause(poll_interval)
    return info


_Results = dict[str, tuple[providers.CallResult | None, str | None]]
_JSON = "application/json"


async def _anthropic_results(client: Any, batch_id: str, poll_interval: float) -> _Results | None:
    ended = lambda i: i.processing_status == "ended"  # noqa: E731
    if not await _ended(client.messages.batches.retrieve, batch_id, poll_interval, ended):
        return None
    out: _Results = {}
    async for item in await client.messages.batches.results(batch_id):
        result = item.result
        if result.type == "succeeded":
            body = json.dumps(result.message.model_dump(mode="json")).encode()
            parsed = providers.parse_body("anthropic", body, _JSON, batch_id)
            out[item.custom_id] = (parsed.result, parsed.error)
        elif result.type == "errored":
            inner = getattr(result.error, "error", None)
            kind = getattr(inner, "type", "error")
            message = getattr(inner, "message", "")
            out[item.custom_id] = (None, redact(f"BatchErrored: {kind}: {message}"))
        else:
            out[item.custom_id] = (None, f"Batch{result.type.capitalize()}: request not run")
    return out


async def _openai_results(client: Any, batch_id: str, poll_interval: float) -> _Results | None:
    info = await _ended(
        client.batches.retrieve, batch_id, poll_interval, lambda i: i.status in _OPENAI_FINAL
    )
    if info is None:
        return None
    out: _Results = {}
    for file_id in (info.output_file_id, info.error_file_id):
        if not file_id:
            continue
        content = await client.files.content(file_id)
        for line in content.text.splitlines():
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError:
                continue  # its call is reported missing from the results below
            if not isinstance(item, dict) or not isinstance(item.get("custom_id"), str):
                continue
            response = item.get("response") if isinstance(item.get("response"), dict) else {}
            body = response.get("body") if isinstance(response.get("body"), dict) else {}
            if item.get("error") is None and response.get("status_code") == 200:
                rid = response.get("request_id")
                parsed = providers.parse_body("openai", json.dumps(body).encode(), _JSON, rid)
                out[item["custom_id"]] = (parsed.result, parsed.error)
            else:
                err = item.get("error") or body.get("error") or {}
                text = f"BatchErrored: {response.get('status_code')}: {err.get('message', err)}"
                out[item["custom_id"]] = (None, redact(text))
    if info.status != "completed":
        out[_MISSING] = (None, f"BatchError: the batch ended as {info.status!r}")
    return out
