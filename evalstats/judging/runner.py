"""Running judge calls: journaled, resumable, throttled, with retries and adjudication."""

from __future__ import annotations

import asyncio
import collections
import os
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from evalstats._disagreement import disagreeing
from evalstats.errors import ParameterError

from . import providers
from ._calls import (
    EXPECTED_OUTPUT_TOKENS,
    Call,
    Config,
    JudgeOptions,
    RunState,
    check_run_limits,
    now_iso,
    rubric_order,
)
from ._interrupt import drained
from ._planning import (
    _calls,
    _check_params,
    _rubric,
    _units,
    first_per_body,
    reuse_answers,
    same_family_judges,
)
from ._ratelimit import Throttle, current_seq
from .journal import Journal, finished_keys, is_judgment, not_retried_keys, read_journal
from .prices import PRICES_AS_OF, load_prices, price_for
from .providers import JudgeSpec, parse_judge


def run_judges(
    tasks: pd.DataFrame,
    runs: pd.DataFrame,
    *,
    rubric: Any,
    judges: Sequence[str | JudgeSpec] | str,
    out: str | os.PathLike[str],
    options: JudgeOptions | None = None,
    orders: Literal["random", "both"] = "random",
    seed: int = 0,
    pairs: Literal["all", "reference"] | None = None,
    arms: Any = None,
    dry_run: bool = False,
) -> JudgeRunResult:
    """Send every within-budget pair to every judge, journaling each finished call.

    A rerun skips calls already answered. See docs/judging.md, "Running judges".

    Parameters
    ----------
    tasks, runs : pandas.DataFrame
        As for :func:`plan_calls`.
    rubric, judges, orders, seed, pairs, arms
        As for :func:`plan_calls`.
    out : path-like
        The journal (usually ``DATA_DIR/judgments.jsonl``).
    options : JudgeOptions, optional
        How the calls are sent and paid for.
    dry_run : bool, default False
        Count calls, input tokens and estimated USD per judge; call nothing.

    Returns
    -------
    JudgeRunResult

    Examples
    --------
    >>> import pandas as pd
    >>> tasks = pd.DataFrame({"task_id": ["t1"], "prompt": ["Where is X?"],
    ...                       "canonical_answer": ["x.go"]})
    >>> pairs = pd.DataFrame({"task_id": ["t1"], "replicate": [1],
    ...     "with_answer": ["x.go:10"], "with_tokens": [1200], "with_wall_s": [41.0],
    ...     "without_answer": ["unsure"], "without_tokens": [3400], "without_wall_s": [90.0],
    ...     "over_budget": [False]})
    >>> import contextlib, io, os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "judgments.jsonl")
    >>> with contextlib.redirect_stdout(io.StringIO()) as printed:
    ...     res = run_judges(tasks, pairs, rubric="with-without", judges="openai:gpt-4o",
    ...                      out=out, dry_run=True, options=JudgeOptions(progress=False))
    >>> "est_usd" in printed.getvalue()
    True
    >>> int(res.per_judge["to_call"].iloc[0])
    1
    """
    o = JudgeOptions() if options is None else options
    if not isinstance(o, JudgeOptions):
        raise ParameterError(f"options must be a JudgeOptions, got {type(o).__name__}")
    specs = _check_params(judges, o.concurrency, o.max_tokens, o.temperature)
    check_run_limits(o)
    if o.stop_when_decided is not None:  # a bad margin fails now, not after paying
        if o.batch:
            raise ParameterError("stop_when_decided looks between calls: not with batch")
        o.stop_when_decided(pd.DataFrame({"task_id": ["t"], "outcome": ["tie"]}))
    adjudicator = parse_judge(o.adjudicate) if o.adjudicate is not None else None
    if adjudicator is not None:
        if len(specs) != 2:
            raise ParameterError(f"adjudication needs exactly two judges, got {len(specs)}")
        if adjudicator.name in {s.name for s in specs}:
            raise ParameterError("the adjudicator must differ from the two judges")
    rub = _rubric(rubric)
    table = load_prices(o.prices)
    everyone = [*specs, *([adjudicator] if adjudicator else [])]
    unpriced = [j.name for j in everyone if price_for(j.provider, j.model, table) is None]
    if o.max_usd is not None and unpriced:
        raise ParameterError(
            f"max_usd needs a price for every judge; none known for {unpriced}: "
            "add one with prices={'MODEL': {'input': USD_per_Mtok, 'output': USD_per_Mtok}} "
            "(--prices FILE.json)"
        )
    if not dry_run:
        providers.require_keys(everyone)
    same = same_family_judges(runs, everyone, allow=o.allow_same_family)
    cfg = Config(rub, o.temperature, o.max_tokens, table, o.batch, same_family=same)
    units, no_answer = _units(tasks, runs, rub, orders=orders, seed=seed, pairs=pairs, arms=arms)
    calls = _calls(units, specs, cfg)
    adj_calls = _calls(units, [adjudicator], cfg) if adjudicator else []
    if dry_run:
        # Read only: a dry run writes nothing, not even a lock or an empty journal.
        records = read_journal(out, all_attempts=True) if Path(out).is_file() else []
        done = finished_keys(records) | (set() if o.retry_failed else not_retried_keys(records))
        done |= reuse_answers(calls, records, done)[0]
        frame = _summary(calls, adj_calls, done, cfg, RunState(cfg, 0.0, None))
        # No spend yet: the estimates only.
        shown = frame.loc[:, :"est_usd_max"].to_string(index=False) if len(frame) else ""
        print(shown or "nothing to judge")
        batch_note = " with the 50 % batch discount" if cfg.batch else ""
        notes = [
            f"{no_answer} pair(s) over budget are not sent (no_answer).",
            f"input tokens counted with cl100k_base; est_usd assumes {EXPECTED_OUTPUT_TOKENS} "
            f"output tokens per call, est_usd_max assumes max_tokens={cfg.max_tokens}; prices "
            f"are estimates as of {PRICES_AS_OF}{batch_note}.",
        ]
        if adj_calls:
            notes.append("adjudicator rows are an upper bound: only disagreements are sent.")
        if len(frame) and frame["est_usd"].isna().any():
            notes.append("NaN: no price for that model; pass prices= / --prices FILE.json.")
        print("\n".join(notes))
        return JudgeRunResult(Path(out), frame, no_answer, True, None)

    with Journal(out) as journal:
        finished = journal.finished_keys()
        wanted = {c.key for c in [*calls, *adj_calls]}
        skipped = set() if o.retry_failed else not_retried_keys(journal.records) & wanted
        finished = finished | skipped
        reused, lines = reuse_answers(calls, journal.records, finished)
        for line in lines:  # a byte-identical request answered for another pair: not paid twice
            journal.write(line)
        finished |= reused
        state = RunState(cfg, journal.spent_usd(), o.max_usd)
        if o.stop_when_decided is not None and calls:
            state.watch = _Watch(o.stop_when_decided, calls, rub, journal.records, skipped)
            state.watch.stop(state, journal)
        todo, later = first_per_body(c for c in calls if c.key not in finished)
        run = _execute(todo, journal, state, specs, adjudicator, adj_calls, o, skip=finished)
        run = drained(run, state, o.timeout)  # the first signal drains for o.timeout
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(run)
        else:  # inside Jupyter, whose loop is already running
            with ThreadPoolExecutor(1, thread_name_prefix="evalstats-judging") as pool:
                pool.submit(asyncio.run, run).result()  # its exception re-raised here
        for line in reuse_answers(later, journal.records, set())[1]:
            journal.write(line)  # another pair's byte-identical request, answered in this run
    if skipped:
        print(
            f"evalstats judge: {len(skipped)} call(s) failed permanently before (see their "
            "error in the journal) and were not sent again; pass --retry-failed to re-send",
            file=sys.stderr,
        )
    if state.stopped:
        print(f"evalstats judge: {state.stopped}", file=sys.stderr)
    per_judge = _summary(calls, adj_calls, finished, cfg, state)
    if state.fatal:
        raise providers.JudgeAuthError(f"stopped after an authentication failure: {state.fatal}")
    return JudgeRunResult(Path(out), per_judge, no_answer, False, state.stopped, len(skipped))


# A call still rate limited after the SDK's retries is requeued (nothing paid) this often.
MAX_REQUEUES_RATE_LIMITED = 50


async def _run_direct(
    calls: Sequence[Call],
    journal: Journal,
    clients: Mapping[str, providers.Client],
    throttles: Mapping[str, Throttle],
    state: RunState,
    o: JudgeOptions,
) -> None:
    """Make ``calls`` with ``concurrency`` workers; every answer ends in the journal."""
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
            state.hold([c], -1)
        latency = time.perf_counter() - t0
        kind = outcome.kind
        limited = kind == "rate_limited" and requeues < MAX_REQUEUES_RATE_LIMITED
        if kind == "not_sent" or (limited and not outcome.maybe_billed):
            queue.append((c, retries, requeues + 1))  # nothing paid: try again later
            return
        again = kind == "retry" and retries < o.max_retries and not state.fatal
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
            maybe_billed=outcome.maybe_billed,
        )
        seq_line = journal.append(line)
        if state.watch is not None and state.watch.add(line, final=not again):
            state.watch.stop(state, journal)
        await loop.run_in_executor(None, journal.sync, seq_line)
        if again:
            queue.append((c, retries + 1, requeues))

    async def worker() -> None:
        while queue and not state.fatal and journal.failed is None:
            c, retries, requeues = queue.popleft()  # each call goes to exactly one worker
            while not state.reserve([c], wait=True):
                if state.stopped or state.fatal:
                    return
                state.freed.clear()  # over the cap by worst cases: wait for actual costs
                await state.freed.wait()
            await attempt(c, retries, requeues)

    results = await asyncio.gather(
        *(worker() for _ in range(min(o.concurrency, len(calls)))), return_exceptions=True
    )
    for result in results:
        if isinstance(result, BaseException):
            raise result


def _outcome(rubric: Any, r: Any) -> str | None:
    """Win / tie / loss of a journal line's answer, None when it gives none."""
    try:
        return rubric.parse(r.get("raw") or "", order=rubric_order(r.get("order"))).outcome
    except ValueError:  # ParseError too
        return None


def _disagreements(journal: Journal, rubric: Any, judges: Sequence[JudgeSpec]) -> set[tuple]:
    """The units (:attr:`Unit.ident`) on which the two judges disagree (``disagreeing``)."""
    names = [j.name for j in judges]
    outcome: dict[tuple, dict[str, str]] = {}
    for r in filter(is_judgment, journal.records):
        if r.get("error") is not None or r.get("judge") not in names:
            continue
        if r.get("rubric") != rubric.name or r.get("prompt_revision") != rubric.revision:
            continue
        if (verdict := _outcome(rubric, r)) is None:
            continue
        unit = (str(r["task_id"]), int(r["replicate"]), r.get("order"))
        if r.get("arm_a") is not None:
            unit = (*unit, r.get("arm_a"), r.get("arm_b"))
        outcome.setdefault(unit, {})[r["judge"]] = verdict
    if not outcome:
        return set()
    units = list(outcome)
    wide = pd.DataFrame([[outcome[u].get(n) for n in names] for u in units], columns=names)
    flags = disagreeing(wide, names).to_numpy(dtype=bool)
    return {u for u, flag in zip(units, flags, strict=True) if flag}


class _Watch:
    """stop_when_decided: the first pair's verdicts per finished task, and the rule on them."""

    def __init__(self, rule: Any, calls: Sequence[Call], rubric: Any, records, skipped) -> None:
        pair, self.arms = (calls[0].unit.arm_a, calls[0].unit.arm_b), calls[0].unit.arm_fields()
        mine = [c for c in calls if (c.unit.arm_a, c.unit.arm_b) == pair]
        self.rule, self.rubric, self.calls = rule, rubric, {c.key: c for c in mine}
        self.twins: dict[Any, list[str]] = {}  # byte-identical requests: one answer serves all
        for c in mine:
            self.twins.setdefault(c.request_sha256 or c.key, []).append(c.key)
        self.left = collections.Counter(c.unit.task_id for c in mine)
        self.outcomes: dict[str, list[str]] = {t: [] for t in self.left}
        self.done: list[str] = []  # tasks in the order their last verdict came
        for r in filter(is_judgment, records):  # a rerun starts from what the journal holds
            if r.get("error") is None or r.get("call_key") in skipped:
                self.add(r)

    def add(self, r: Any, final: bool = True) -> bool:
        """Count a journal line; True when it finished a task."""
        ok = r.get("error") is None
        keys = {r.get("call_key"), *(self.twins.get(r.get("request_sha256"), []) if ok else [])}
        before = len(self.done)
        for c in [self.calls.pop(k) for k in keys if k in self.calls] if ok or final else []:
            task = c.unit.task_id
            if ok and (verdict := _outcome(self.rubric, {**r, "order": c.unit.order})):
                self.outcomes[task].append(verdict)
            self.left[task] -= 1
            if not self.left[task]:
                self.done.append(task)
        return len(self.done) > before

    def stop(self, state: RunState, journal: Journal) -> None:
        """Stop starting calls, and journal why, once the rule decides."""
        rows = [(t, v) for t in self.done for v in self.outcomes[t]]
        if state.stopped or not rows:
            return
        last = self.rule(pd.DataFrame(rows, columns=["task_id", "outcome"])).iloc[-1]
        if last["decision"] in (None, "continue"):
            return
        state.stopped = (
            f"decided after {last['n_tasks']} task(s): {last['decision']} "
            f"({self.arms.get('arm_a', 'WITH')} vs {self.arms.get('arm_b', 'WITHOUT')}; net win "
            f"{last['confidence']:.0%} anytime-valid interval {last['ci_low']:.3f} to "
            f"{last['ci_high']:.3f}); no new call was started"
        )
        fields = {k: float(last[k]) for k in ("ci_low", "ci_high", "confidence")}
        fields.update(decision=last["decision"], n_tasks=int(last["n_tasks"]), **self.arms)
        journal.append(
            {"kind": "stopped_early", "created_at": now_iso(), "reason": state.stopped, **fields}
        )


async def _execute(
    todo: list[Call],
    journal: Journal,
    state: RunState,
    specs: Sequence[JudgeSpec],
    adjudicator: JudgeSpec | None,
    adj_calls: Sequence[Call],
    o: JudgeOptions,
    *,
    skip: set[str],
) -> None:
    from tqdm.auto import tqdm

    needed = {j.provider for j in [*specs, *([adjudicator] if adjudicator else [])]}
    throttles = {p: Throttle(o.concurrency) for p in needed}

    def observer(provider: str) -> Any:
        throttle = throttles[provider]
        return lambda status, headers: throttle.observe(status, headers, current_seq.get())

    clients = {
        p: providers.make_client(
            p,
            max_retries=o.max_retries,
            timeout=o.timeout,
            options=o.client_options,
            on_response=observer(p),
        )
        for p in sorted(needed)
    }
    state.bar = tqdm(
        total=len(todo),
        desc="judging",
        unit="call",
        file=sys.stderr,
        disable=not o.progress or not todo,  # no bar for nothing to send
        dynamic_ncols=True,
    )

    async def phase(todo: list[Call]) -> None:
        if state.cfg.batch:
            from .batch import run_batched

            sdks = {p: c.sdk for p, c in clients.items()}
            await run_batched(todo, journal, sdks, state, o.poll_interval, o.max_batch_size)
        else:
            await _run_direct(todo, journal, clients, throttles, state, o)

    try:
        await phase(todo)
        if adjudicator is not None and not state.stopped and not state.fatal:
            disputed = _disagreements(journal, state.cfg.rubric, specs)
            finished = journal.finished_keys() | skip
            adj_todo = [c for c in adj_calls if c.unit.ident in disputed and c.key not in finished]
            state.bar.total += len(adj_todo)
            state.bar.refresh()
            await phase(adj_todo)
    finally:
        state.bar.close()
        for client in clients.values():
            await client.sdk.close()


@dataclass(frozen=True)
class JudgeRunResult:
    """What a judging run did (or, for a dry run, would do).

    Attributes
    ----------
    out : Path
        The journal.
    per_judge : pandas.DataFrame
        One row per judge and ``role``: planned and done calls, tokens, estimated and spent USD.
    no_answer_pairs : int
        Pairs not sent because a run exceeded its budget.
    dry_run : bool
    stopped : str or None
        Why the run stopped early (``max_usd``, an interrupt, ``stop_when_decided``), else None.
    not_retried : int
        Calls not sent because they failed permanently before.
    """

    out: Path
    per_judge: pd.DataFrame = field(repr=False)
    no_answer_pairs: int
    dry_run: bool
    stopped: str | None
    not_retried: int = 0

    @property
    def failed(self) -> int:
        return int(self.per_judge["failed"].sum())

    def to_frame(self) -> pd.DataFrame:
        return self.per_judge.copy()


def _summary(
    calls: Sequence[Call],
    adj_calls: Sequence[Call],
    finished_before: set[str],
    cfg: Config,
    state: RunState,
) -> pd.DataFrame:
    rows, groups = [], {}
    for role, group in (("judge", calls), ("adjudicator", adj_calls)):
        for c in group:
            groups.setdefault((c.judge.name, role), []).append(c)
    for (name, role), group in groups.items():
        todo = [c for c in group if c.key not in finished_before]
        tokens = int(sum(c.unit.input_tokens for c in todo))
        price = price_for(group[0].judge.provider, group[0].judge.model, cfg.prices)
        # est_usd with the expected output, est_usd_max with max_tokens of it
        est = [
            round(price.usd(tokens, out * len(todo), batch=cfg.batch), 4) if price else float("nan")
            for out in (EXPECTED_OUTPUT_TOKENS, cfg.max_tokens)
        ]
        counts = [d.get(name, 0) for d in (state.sent, state.ok, state.failed)]
        usd = round(state.usd.get(name, 0.0), 6)
        planned = [len(group), len(group) - len(todo), len(todo), tokens]
        rows.append([name, role, *planned, *est, *counts, usd])
    # The columns even with no row: "nothing to judge" is a result, not a KeyError.
    return pd.DataFrame(rows, columns=_SUMMARY_COLUMNS)


_SUMMARY_COLUMNS = "judge role calls done_before to_call input_tokens est_usd est_usd_max".split()
_SUMMARY_COLUMNS += ["sent", "ok", "failed", "usd"]
