"""What one judge call is, and the counters of a run: shared by the direct and batch runners."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import os
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .._validate import check_positive_int
from .prices import Price, price_for
from .providers import CallResult, JudgeSpec

DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True)
class JudgeOptions:
    """How :func:`run_judges` sends and pays for its calls.

    Attributes
    ----------
    concurrency : int, default 16
        Calls in flight at once (direct mode).
    max_usd : float, optional
        Stop starting calls once the journal's spend plus those in flight could pass this.
    batch : bool, default False
        Use Anthropic Message Batches / the OpenAI Batch API (half price, slow).
    adjudicate : str, optional
        A third judge called only where the two judges disagree.
    temperature : float, optional
        Sent when given and recorded; None leaves the provider default.
    max_tokens : int, default 1024
        Output cap, sent and recorded.
    prices : mapping or path, optional
        Overrides of :data:`evalstats.judging.DEFAULT_PRICES` (USD per million tokens).
    max_retries, timeout : int, float
        The SDKs' retry count and the per-attempt timeout in seconds.
    poll_interval : float, default 30
        Seconds between batch status polls.
    max_batch_size : int, default 10,000
        Most requests in one provider batch.
    progress : bool, default True
        A tqdm bar on stderr.
    client_options : mapping, optional
        Extra SDK client arguments (never a key).
    retry_failed : bool, default False
        Also re-send calls whose last failure is permanent.
    allow_same_family : bool, default False
        Run a judge of an agent's own model family (else refused; the audit reports it).
    stop_when_decided : callable, optional
        :func:`evalstats.stats.monitor` (its ``margin`` bound, e.g. by ``functools.partial``):
        called on the first pair's verdicts of each finished task; no new call is sent once
        its last ``decision`` is not ``continue`` (direct mode only).

    >>> JudgeOptions(max_usd=20.0, progress=False).concurrency
    16
    """

    concurrency: int = 16
    max_usd: float | None = None
    batch: bool = False
    adjudicate: str | JudgeSpec | None = None
    temperature: float | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS
    prices: Mapping[str, Any] | str | os.PathLike[str] | None = None
    max_retries: int = 2
    timeout: float = 120.0
    poll_interval: float = 30.0
    max_batch_size: int = 10_000
    progress: bool = True
    client_options: Mapping[str, Any] | None = None
    retry_failed: bool = False
    allow_same_family: bool = False
    stop_when_decided: Callable[[Any], Any] | None = None


#: A K-arm pair's order as the rubrics read it: arm_a fills the WITH side, arm_b WITHOUT.
_RUBRIC_ORDER = {"a_first": "with_first", "b_first": "without_first"}


def rubric_order(order: str | None) -> str | None:
    """The order a rubric renders and parses with: ``a_first`` is ``with_first``, etc."""
    return _RUBRIC_ORDER.get(order, order) if order is not None else None


# Output tokens of a judge's answer (the seeds' JSON): the dry run's and the throttle's estimate.
EXPECTED_OUTPUT_TOKENS = 300
# Claimed input usage above this multiple of our own count (plus a margin) is flagged.
INPUT_SLACK = 4.0
INPUT_MARGIN = 1000


@dataclass(frozen=True)
class Unit:
    """One rendered prompt: a pair in one order."""

    task_id: str
    replicate: int
    order: str | None
    messages: list[dict[str, str]]
    input_tokens: int
    # K arms: the pair judged (order is then a_first / b_first); None for WITH / WITHOUT.
    arm_a: str | None = None
    arm_b: str | None = None
    runs_sha256: str | None = None  # records.answers_sha256 of the pair's answers

    @property
    def ident(self) -> tuple:
        """What one prompt is judged on: (task_id, replicate, order[, arm_a, arm_b])."""
        base = (self.task_id, self.replicate, self.order)
        return base if self.arm_a is None else (*base, self.arm_a, self.arm_b)

    def arm_fields(self) -> dict[str, str]:
        """``arm_a`` / ``arm_b`` for a journal line; none for the seeds' two arms."""
        return {} if self.arm_a is None else {"arm_a": self.arm_a, "arm_b": self.arm_b}


@dataclass(frozen=True)
class Call:
    key: str
    judge: JudgeSpec
    unit: Unit
    params: dict[str, Any]

    @property
    def request_sha256(self) -> str | None:
        """sha256 of the judge and its request body: byte-identical requests share it."""
        if not self.params:
            return None
        body = json.dumps([self.judge.name, self.params], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Config:
    rubric: Any
    temperature: float | None
    max_tokens: int
    prices: dict[str, Price]
    batch: bool
    # The family a same-family judge was allowed for (on every line, for the audit), else None.
    same_family: str | None = None


#: Most SDK retries per call: each may wait up to the wait cap, so more is a hang by design.
MAX_RETRIES_LIMIT = 20
#: Most requests in one provider batch (both providers accept at most 50,000).
MAX_BATCH_SIZE_LIMIT = 50_000


def check_run_limits(o: JudgeOptions) -> None:
    """Refuse options that would hang a run or never end it (``ValueError``)."""

    def number(x: Any) -> bool:
        return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)

    if not (number(o.timeout) and o.timeout > 0):
        raise ValueError(f"timeout must be a finite number of seconds > 0, got {o.timeout!r}")
    if not (number(o.poll_interval) and 0 <= o.poll_interval <= 3600):
        raise ValueError(
            f"poll_interval must be between 0 and 3600 seconds, got {o.poll_interval!r}"
        )
    if o.max_usd is not None and not (number(o.max_usd) and o.max_usd > 0):
        raise ValueError(f"max_usd must be a finite number > 0, got {o.max_usd!r}")
    check_positive_int(o.max_retries, "max_retries", minimum=0, maximum=MAX_RETRIES_LIMIT)
    check_positive_int(o.max_batch_size, "max_batch_size", maximum=MAX_BATCH_SIZE_LIMIT)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RunState:
    """Counters shared by the workers of one run (all on the event loop's thread)."""

    def __init__(self, cfg: Config, spent_before: float, max_usd: float | None) -> None:
        self.cfg = cfg
        self.spent = spent_before
        self.reserved, self.in_flight = 0.0, 0
        self.freed = asyncio.Event()  # set when calls in flight end
        self.max_usd = max_usd
        self.stopped: str | None = None
        self.fatal: str | None = None
        # Per judge: attempts sent, answered, failed for good, and USD claimed.
        self.sent, self.ok, self.failed, self.usd = Counter(), Counter(), Counter(), Counter()
        self.bar: Any = None
        self.watch: Any = None  # runner._Watch under stop_when_decided

    def price(self, judge: JudgeSpec) -> Price | None:
        return price_for(judge.provider, judge.model, self.cfg.prices)

    def reserve(self, calls: Sequence[Call], *, wait: bool = False) -> bool:
        """Hold the worst case of ``calls``; False if over ``max_usd``, and then the run stops
        unless ``wait`` and calls are in flight (their actual cost may leave room)."""
        if self.stopped or self.fatal:
            return False
        cost = sum(self.worst_case(c) for c in calls)
        if self.max_usd is not None and self.spent + self.reserved + cost > self.max_usd:
            if not (wait and self.in_flight):
                self.stopped = (
                    f"stopped starting new calls: estimated spend ${self.spent + self.reserved:.4f}"
                    f" (recorded in the journal plus calls in flight or in pending batches) would "
                    f"pass max_usd ${self.max_usd:.4f} with the next call"
                )
            return False
        self.hold(calls)
        return True

    def hold(self, calls: Sequence[Call], sign: int = 1) -> None:
        """Count ``calls`` as in flight (``sign=-1``: no longer) with their worst case."""
        self.in_flight += sign * len(calls)
        self.reserved = max(0.0, self.reserved + sign * sum(self.worst_case(c) for c in calls))
        if sign < 0:
            self.freed.set()

    def worst_case(self, c: Call) -> float:
        price = self.price(c.judge)
        if price is None:  # max_usd refuses unpriced judges before the run
            return 0.0
        return price.usd(c.unit.input_tokens, self.cfg.max_tokens, batch=self.cfg.batch)

    def spend(self, c: Call, result: CallResult | None, answered: bool) -> tuple[Any, Any, Any]:
        """(claimed usd, usd counted against max_usd, usage flag) of one finished call."""
        price = self.price(c.judge)
        claimed_in = result.input_tokens if result is not None else None
        claimed_out = result.output_tokens if result is not None else None
        flags = []
        if claimed_out is not None and claimed_out > self.cfg.max_tokens:
            flags.append(f"output_tokens {claimed_out} above max_tokens {self.cfg.max_tokens}")
        limit_in = INPUT_SLACK * c.unit.input_tokens + INPUT_MARGIN
        if claimed_in is not None and claimed_in > limit_in:
            flags.append(
                f"input_tokens {claimed_in} above {int(limit_in)} (4x the prompt's count + 1000)"
            )
        flag = "; ".join(flags) or None
        if price is None:
            return None, None, flag
        claimed = None
        if claimed_in is not None:
            claimed = price.usd(claimed_in, claimed_out or 0, batch=self.cfg.batch)
        if not answered:
            return claimed, claimed, flag
        out = self.cfg.max_tokens if claimed_out is None else min(claimed_out, self.cfg.max_tokens)
        plausible = price.usd(c.unit.input_tokens, out, batch=self.cfg.batch)
        return claimed, max(claimed or 0.0, plausible), flag

    def record(
        self,
        c: Call,
        result: CallResult | None,
        error: str | None,
        latency: float | None,
        created_at: str,
        *,
        call_status: str = "failed",
        raw: str | None = None,
        answered: bool | None = None,
        final: bool = True,
        maybe_billed: int = 0,
    ) -> dict[str, Any]:
        """The journal line of one attempt; counts it (``final``: no retry follows)."""
        name = c.judge.name
        if answered is None:
            answered = result is not None
        usd, counted, flag = self.spend(c, result, answered)
        if counted is not None or maybe_billed:
            # Each attempt that timed out after it was sent may have been billed in full.
            counted = (counted or 0.0) + maybe_billed * self.worst_case(c)
            self.spent += counted
        self.usd[name] += usd or 0.0
        self.sent[name] += 1
        if error is None:
            self.ok[name] += 1
        elif final:
            self.failed[name] += 1
        if self.bar is not None and (final or error is None):
            self.bar.update(1)
            failed, usd_total = sum(self.failed.values()), f"{sum(self.usd.values()):.4f}"
            # refresh=False: tqdm's mininterval throttles the redraws.
            self.bar.set_postfix(failed=failed, usd=usd_total, refresh=False)
        rubric = self.cfg.rubric
        if raw is None and result is not None and error is None:
            raw = result.raw
        return {
            "judgment_id": uuid.uuid4().hex,
            "task_id": c.unit.task_id,
            "replicate": c.unit.replicate,
            "judge": name,
            "rubric": rubric.name,
            "prompt_revision": rubric.revision,
            "prompt_sha256": rubric.sha256,
            "order": c.unit.order,
            "raw": raw,
            "created_at": created_at,
            "input_tokens": result.input_tokens if result is not None else None,
            "output_tokens": result.output_tokens if result is not None else None,
            "usd": usd,
            "latency_s": None if latency is None else round(latency, 4),
            "error": error,
            "model_id": result.model_id if result is not None else None,
            "request_id": result.request_id if result is not None else None,
            "temperature": self.cfg.temperature,
            "max_tokens": self.cfg.max_tokens,
            "call_key": c.key,
            "call_status": call_status if error is not None else "ok",
            "usd_counted": counted,
            "maybe_billed": maybe_billed,
            "flag": flag,
            "same_family_allowed": self.cfg.same_family,
            "runs_sha256": c.unit.runs_sha256,
            "request_sha256": c.request_sha256,
            **c.unit.arm_fields(),
        }
