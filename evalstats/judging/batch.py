"""Batch submission: Anthropic Message Batches and the OpenAI Batch API.

A batch is journaled (``{"kind": "batch", "batch_id", "call_keys", ...}``) right after the
provider accepts it, so a restarted run polls and collects it instead of paying again;
after collection a ``{"kind": "batch_done"}`` line closes it. Results land in the same
judgment lines as direct calls (``latency_s`` null, ``usd`` at the batch price).

The one window we cannot close: a process killed between the provider accepting a batch
and the journal line being written leaves a batch we do not know about (the providers
offer no idempotency key). That window is one local write long.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Mapping, Sequence
from typing import Any

from . import providers
from ._calls import Call, RunState, now_iso
from .journal import Journal

__all__ = ["run_batched"]

CHAT_ENDPOINT = "/v1/chat/completions"
_OPENAI_FINAL = ("completed", "failed", "expired", "cancelled")
_MISSING = "\0missing"  # never a call key (those are hex)


async def run_batched(
    todo: Sequence[Call],
    journal: Journal,
    clients: Mapping[str, Any],
    state: RunState,
    *,
    poll_interval: float,
    max_batch_size: int,
) -> None:
    """Collect pending batches, submit the rest, then collect those."""
    by_key = {c.key: c for c in todo}
    pending = [b for b in journal.pending_batches() if b.get("call_keys")]
    in_flight = {k for b in pending for k in b["call_keys"]}
    fresh = [c for c in todo if c.key not in in_flight]
    by_judge: dict[str, list[Call]] = {}
    for c in fresh:
        by_judge.setdefault(c.judge.name, []).append(c)
    for group in by_judge.values():
        for start in range(0, len(group), max_batch_size):
            chunk = group[start : start + max_batch_size]
            fits = _fitting_prefix(chunk, state)
            if fits:
                pending.append(await _submit(fits, journal, clients, state))
            if len(fits) < len(chunk):
                break
    await asyncio.gather(
        *(_collect(b, by_key, journal, clients, state, poll_interval) for b in pending)
    )


def _fitting_prefix(chunk: Sequence[Call], state: RunState) -> list[Call]:
    out: list[Call] = []
    for c in chunk:
        if not state.reserve([c]):
            break
        out.append(c)
    return out


async def _submit(
    chunk: Sequence[Call], journal: Journal, clients: Mapping[str, Any], state: RunState
) -> dict[str, Any]:
    judge = chunk[0].judge
    client = clients[judge.provider]
    if judge.provider == "anthropic":
        batch = await client.messages.batches.create(
            requests=[{"custom_id": c.key, "params": c.params} for c in chunk]
        )
    else:
        lines = "".join(
            json.dumps(
                {"custom_id": c.key, "method": "POST", "url": CHAT_ENDPOINT, "body": c.params}
            )
            + "\n"
            for c in chunk
        )
        uploaded = await client.files.create(
            file=("evalstats-batch.jsonl", io.BytesIO(lines.encode("utf-8"))), purpose="batch"
        )
        batch = await client.batches.create(
            input_file_id=uploaded.id, endpoint=CHAT_ENDPOINT, completion_window="24h"
        )
    line = {
        "kind": "batch",
        "batch_id": batch.id,
        "provider": judge.provider,
        "judge": judge.name,
        "call_keys": [c.key for c in chunk],
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
) -> None:
    client = clients.get(batch["provider"])
    if client is None:  # a batch of a judge not in this run: leave it for its own run
        return
    batch_id = batch["batch_id"]
    if batch["provider"] == "anthropic":
        results = await _anthropic_results(client, batch_id, poll_interval)
    else:
        results = await _openai_results(client, batch_id, poll_interval)
    finished = journal.finished_keys()
    calls = [by_key[k] for k in batch["call_keys"] if k in by_key]
    for c in calls:
        if c.key in finished:
            continue
        default = results.get(_MISSING, (None, "BatchError: missing from the batch results"))
        result, error = results.get(c.key, default)
        journal.append(state.record(c, result, error, None, now_iso()))
    state.release(calls)
    journal.write({"kind": "batch_done", "batch_id": batch_id, "created_at": now_iso()})


async def _anthropic_results(
    client: Any, batch_id: str, poll_interval: float
) -> dict[str, tuple[providers.CallResult | None, str | None]]:
    while True:
        info = await client.messages.batches.retrieve(batch_id)
        if info.processing_status == "ended":
            break
        await asyncio.sleep(poll_interval)
    out: dict[str, tuple[providers.CallResult | None, str | None]] = {}
    async for item in await client.messages.batches.results(batch_id):
        result = item.result
        if result.type == "succeeded":
            parsed = providers.parse_body(
                "anthropic",
                json.dumps(result.message.model_dump(mode="json")).encode(),
                "application/json",
                batch_id,
            )
            out[item.custom_id] = (parsed.result, parsed.error)
        elif result.type == "errored":
            inner = getattr(result.error, "error", None)
            kind = getattr(inner, "type", "error")
            message = getattr(inner, "message", "")
            out[item.custom_id] = (None, providers.scrub(f"BatchErrored: {kind}: {message}"))
        else:
            out[item.custom_id] = (None, f"Batch{result.type.capitalize()}: request not run")
    return out


async def _openai_results(
    client: Any, batch_id: str, poll_interval: float
) -> dict[str, tuple[providers.CallResult | None, str | None]]:
    while True:
        info = await client.batches.retrieve(batch_id)
        if info.status in _OPENAI_FINAL:
            break
        await asyncio.sleep(poll_interval)
    out: dict[str, tuple[providers.CallResult | None, str | None]] = {}
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
                parsed = providers.parse_body(
                    "openai",
                    json.dumps(body).encode(),
                    "application/json",
                    response.get("request_id"),
                )
                out[item["custom_id"]] = (parsed.result, parsed.error)
            else:
                err = item.get("error") or body.get("error") or {}
                text = f"BatchErrored: {response.get('status_code')}: {err.get('message', err)}"
                out[item["custom_id"]] = (None, providers.scrub(text))
    if info.status != "completed":
        out[_MISSING] = (None, f"BatchError: the batch ended as {info.status!r}")
    return out
