"""Executing planned calls: the direct workers (retries, rate-limited requeues), the batch path, the adjudication phase."""

from __future__ import annotations

import asyncio
import collections
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from evalstats._disagreement import disagreeing

from . import providers
from ._calls import EXPECTED_OUTPUT_TOKENS, Call, RunState, now_iso, rubric_order
from ._interrupt import drains
from ._ratelimit import Throttle, current_seq
from .journal import Journal
from .providers import JudgeSpec

# A call answered without usable text (non-JSON, empty, cut short) is asked again in the
# same run up to max_retries times; each answer is journaled. A call still rate limited
# after the SDK's retries goes back in the queue (nothing was paid) up to this many times.
MAX_REQUEUES_RATE_LIMITED = 50


async def _run_direct(
    calls: Sequence[Call],
    journal: Journal,
    clients: Mapping[str, providers.Client],
    throttles: Mapping[str, Throttle],
    state: RunState,
    concurrency: int,
    max_retries: int,
) -> None:
    """Make ``calls`` with ``concurrency`` workers; every answer ends in the journal.

    Nothing a server sends raises here (:func:`providers.call` turns it into an outcome),
    and the workers are gathered with ``return_exceptions``: even a bug of ours in one
    worker lets the others finish and journal what they received before it is re-raised.
    """
    loop = asyncio.get_running_loop()
    # (call, answers without usable text so far, 429 requeues so far)
    queue: collections.deque[tuple[Call, int, int]] = collections.deque((c, 0, 0) for c in calls)
    tokens_out = min(EXPECTED_OUTPUT_TOKENS, state.cfg.max_tokens)

    async def attempt(c: Call, retries: int, requeues: int) -> None:
        throttle = throttles[c.judge.provider]
        seq = await throttle.acquire(c.unit.input_tokens + tokens_out)
        token = current_seq.set(seq)
        created, t0 = now_iso(), time.perf_counter()
        outcome = None
        try:
            outcome = await providers.call(clients[c.judge.provider], c.judge, c.params)
        except Exception as exc:  # a bug of ours: still journal the call, with the reason
            outcome = providers.Outcome("failed", None, providers.describe_error(exc))
        finally:
            current_seq.reset(token)
            throttle.release(ok=outcome is not None and outcome.kind == "ok")
            state.release([c])
        latency = time.perf_counter() - t0
        kind = outcome.kind
        if kind == "not_sent" or (kind == "rate_limited" and requeues < MAX_REQUEUES_RATE_LIMITED):
            queue.append((c, retries, requeues + 1))  # nothing paid: try again later
            return
        again = kind == "retry" and retries < max_retries and not state.fatal
        status = {"retry": "failed", "rate_limited": "failed", "auth": "failed"}.get(kind, kind)
        if kind == "auth":
            state.fatal = f"{c.judge.name}: {outcome.error}"
        line = state.record(
            c,
            outcome.result,
            outcome.error,
            latency,
            created,
            call_status=status,
            raw=outcome.raw if outcome.error is not None else None,
            answered=outcome.answered,
            final=not again,
        )
        seq_line = journal.append(line)
        await loop.run_in_executor(None, journal.sync, seq_line)
        if again:
            queue.append((c, retries + 1, requeues))

    async def worker() -> None:
        while queue and not state.fatal and journal.failed is None:
            c, retries, requeues = queue.popleft()  # each call goes to exactly one worker
            if not state.reserve([c]):
                return
            await attempt(c, retries, requeues)

    results = await asyncio.gather(
        *(worker() for _ in range(min(concurrency, len(calls)))), return_exceptions=True
    )
    for result in results:
        if isinstance(result, BaseException):
            raise result


def _disagreements(journal: Journal, rubric: Any, judges: Sequence[JudgeSpec]) -> set[tuple]:
    """(task_id, replicate, order) units on which the two judges' parsed outcomes differ,
    by the one disagreement rule (:func:`evalstats._disagreement.disagreeing`)."""
    from evalstats.errors import ParseError

    names = [j.name for j in judges]
    outcome: dict[tuple, dict[str, str]] = {}
    for r in journal.judgments():
        if r.get("error") is not None or r.get("judge") not in names:
            continue
        if r.get("rubric") != rubric.name or r.get("prompt_revision") != rubric.revision:
            continue
        try:
            verdict = rubric.parse(r.get("raw") or "", order=rubric_order(r.get("order")))
        except (ParseError, ValueError):
            continue
        if verdict.outcome is None:
            continue
        unit = (str(r["task_id"]), int(r["replicate"]), r.get("order"))
        if r.get("arm_a") is not None:
            unit = (*unit, r.get("arm_a"), r.get("arm_b"))
        outcome.setdefault(unit, {})[r["judge"]] = verdict.outcome
    if not outcome:
        return set()
    units = list(outcome)
    wide = pd.DataFrame([[outcome[u].get(n) for n in names] for u in units], columns=names)
    flags = disagreeing(wide, names).to_numpy(dtype=bool)
    return {u for u, flag in zip(units, flags, strict=True) if flag}


@drains
async def _execute(
    todo: list[Call],
    journal: Journal,
    state: RunState,
    specs: Sequence[JudgeSpec],
    adjudicator: JudgeSpec | None,
    adj_calls: Sequence[Call],
    *,
    concurrency: int,
    max_retries: int,
    timeout: float,
    poll_interval: float,
    max_batch_size: int,
    progress: bool,
    client_options: Mapping[str, Any] | None,
    skip: set[str],
) -> None:
    from tqdm.auto import tqdm

    needed = {j.provider for j in [*specs, *([adjudicator] if adjudicator else [])]}
    throttles = {p: Throttle(concurrency) for p in needed}

    def observer(provider: str) -> Any:
        throttle = throttles[provider]
        return lambda status, headers: throttle.observe(status, headers, current_seq.get())

    clients = {
        p: providers.make_client(
            p,
            max_retries=max_retries,
            timeout=timeout,
            options=client_options,
            on_response=observer(p),
        )
        for p in sorted(needed)
    }
    state.bar = tqdm(
        total=len(todo),
        desc="judging",
        unit="call",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        phase = dict(
            journal=journal,
            clients=clients,
            throttles=throttles,
            state=state,
            concurrency=concurrency,
            max_retries=max_retries,
            poll_interval=poll_interval,
            max_batch_size=max_batch_size,
        )
        await _phase(todo, **phase)
        if adjudicator is not None and not state.stopped and not state.fatal:
            disputed = _disagreements(journal, state.cfg.rubric, specs)
            finished = journal.finished_keys() | skip
            adj_todo = [c for c in adj_calls if c.unit.ident in disputed and c.key not in finished]
            state.bar.total += len(adj_todo)
            state.bar.refresh()
            await _phase(adj_todo, **phase)
    finally:
        state.bar.close()
        for client in clients.values():
            await client.close()


async def _phase(
    todo: list[Call],
    *,
    journal: Journal,
    clients: Mapping[str, providers.Client],
    throttles: Mapping[str, Throttle],
    state: RunState,
    concurrency: int,
    max_retries: int,
    poll_interval: float,
    max_batch_size: int,
) -> None:
    if state.cfg.batch:
        from .batch import run_batched

        await run_batched(
            todo,
            journal,
            {p: c.sdk for p, c in clients.items()},
            state,
            poll_interval=poll_interval,
            max_batch_size=max_batch_size,
        )
    else:
        await _run_direct(todo, journal, clients, throttles, state, concurrency, max_retries)
