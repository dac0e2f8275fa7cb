"""Per-provider pacing from the providers' rate-limit headers, and an adaptive concurrency.

How it works: docs/judging.md, "Rate limits".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import email.utils
import math
import os
import re
import sys
import threading
import time
from collections.abc import Mapping
from datetime import datetime

#: Longest a server may make the run wait at once, in seconds (``EVALSTATS_MAX_WAIT_S``).
MAX_WAIT_S = 600.0
_noted: set[str] = set()
_noted_lock = threading.Lock()


def max_wait_s() -> float:
    """The wait cap: ``EVALSTATS_MAX_WAIT_S`` if set to a positive finite number, else 600."""
    value = _seconds(os.environ.get("EVALSTATS_MAX_WAIT_S"))
    return value if value and math.isfinite(value) else MAX_WAIT_S


def capped_wait(seconds: float, what: str) -> float:
    """``seconds`` bounded by :func:`max_wait_s` (NaN or negative: 0); says so once per kind."""
    if not seconds > 0:  # NaN, negative
        return 0.0
    cap = max_wait_s()
    if seconds <= cap:
        return float(seconds)
    with _noted_lock:
        first = what not in _noted
        _noted.add(what)
    if first:
        print(
            f"evalstats judge: the server asked to wait {seconds:.4g} s ({what}); waiting at "
            f"most {cap:g} s (EVALSTATS_MAX_WAIT_S)",
            file=sys.stderr,
        )
    return cap


# The sequence number of the call a worker is making, read by the HTTP response hook.
current_seq: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "evalstats_call_seq", default=None
)

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def parse_reset(value: str | None, *, capped: bool = True) -> float | None:
    """Seconds until a reset (a duration, RFC 3339 or HTTP date); None if unreadable."""
    seconds = _reset_seconds(value)
    return seconds if seconds is None or not capped else capped_wait(seconds, "a rate-limit reset")


def _seconds(value: str | None) -> float | None:
    """A number of seconds >= 0; None if ``value`` is not one (or NaN)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else max(0.0, number)


def _reset_seconds(value: str | None) -> float | None:
    if not value:
        return None
    value = value.strip()
    if (number := _seconds(value)) is not None:
        return number
    parts = _DURATION.findall(value)
    if parts and "".join(n + u for n, u in parts) == value:
        return sum(float(n) * _UNIT_S[u] for n, u in parts)
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)  # "Wed, 21 Oct 2999 07:28:00 GMT"
        except (TypeError, ValueError, IndexError):
            return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def retry_after(headers: Mapping[str, str], *, capped: bool = True) -> float | None:
    """The server's wait hint in seconds (``retry-after-ms`` beats ``retry-after``)."""
    ms = _seconds(headers.get("retry-after-ms") or None)
    seconds = _reset_seconds(headers.get("retry-after")) if ms is None else ms / 1000
    return seconds if seconds is None or not capped else capped_wait(seconds, "retry-after")


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value is not None else None
    except ValueError:
        return None


_KEYS = ("limit", "remaining", "reset")


def _limits(headers: Mapping[str, str], what: str) -> tuple[int | None, int | None, float | None]:
    """(limit, remaining, reset seconds) of ``what`` ("requests" or "tokens")."""
    low = {k.lower(): v for k, v in headers.items()}
    # Anthropic also meters input and output tokens separately.
    subs = [what, "input-tokens", "output-tokens"] if what == "tokens" else [what]
    candidates = [tuple(f"anthropic-ratelimit-{s}-{k}" for k in _KEYS) for s in subs]
    candidates.insert(1, tuple(f"x-ratelimit-{k}-{what}" for k in _KEYS))
    best: tuple[int | None, int | None, float | None] = (None, None, None)
    for lim, rem, rst in candidates:
        remaining = _int(low.get(rem))
        if remaining is None:
            continue
        # The most constraining bucket, relative to its size.
        limit = _int(low.get(lim))
        if best[1] is None or (remaining / max(limit or 1, 1)) < (best[1] / max(best[0] or 1, 1)):
            best = (limit, remaining, parse_reset(low.get(rst)))
    return best


class _Bucket:
    """A local copy of one server bucket (None fields: not known yet)."""

    def __init__(self) -> None:
        self.limit: int | None = None
        self.level: float | None = None
        self.at = 0.0
        self.reset_s: float | None = None

    def rate(self) -> float | None:
        """Refill per second (the limit is per minute); None without a known limit."""
        return self.limit / 60.0 if self.limit else None

    def refill(self, now: float) -> None:
        if self.level is None:
            return
        rate = self.rate()
        if rate:
            self.level = min(float(self.limit or 0), self.level + rate * (now - self.at))
        elif self.reset_s is not None and now - self.at >= self.reset_s:
            self.level = None  # reset passed and no limit known: trust the server again
        self.at = now

    def wait(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` is available (0: now)."""
        self.refill(now)
        if self.level is None or self.level >= cost:
            return 0.0
        rate = self.rate()
        if rate:
            return (min(cost, float(self.limit or cost)) - self.level) / rate
        return max(0.01, (self.reset_s or 1.0) - (now - self.at))

    def take(self, cost: float) -> None:
        if self.level is not None:
            self.level -= cost

    def observe(
        self, limit: int | None, remaining: int, reset_s: float | None, later: float
    ) -> None:
        """The server's view after one call, minus ``later`` (spent since, not yet counted)."""
        self.limit = limit or self.limit
        self.level = remaining - later
        self.at = time.monotonic()
        self.reset_s = reset_s


class Throttle:
    """Pacing and adaptive concurrency for one provider (event-loop thread only)."""

    def __init__(self, concurrency: int) -> None:
        self.max_concurrency = concurrency
        self.window = float(concurrency)
        self.in_flight = 0
        self.pause_until = 0.0
        self.requests = _Bucket()
        self.tokens = _Bucket()
        self.seq = 0
        self.started_tokens: list[tuple[int, float]] = []
        self._changed: asyncio.Event | None = None

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    async def acquire(self, tokens: float) -> int:
        """Wait until a call may start; return its sequence number."""
        while True:
            now = time.monotonic()
            wait = self.pause_until - now
            if wait <= 0:
                wait = max(self.requests.wait(1, now), self.tokens.wait(tokens, now))
            if wait <= 0 and self.in_flight < max(1, int(self.window)):
                self.requests.take(1)
                self.tokens.take(tokens)
                self.in_flight += 1
                self.seq += 1
                self.started_tokens.append((self.seq, tokens))
                if len(self.started_tokens) > 4096:
                    del self.started_tokens[:2048]
                return self.seq
            event = self._event()
            event.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=wait if wait > 0 else None)

    def release(self, *, ok: bool) -> None:
        self.in_flight -= 1
        if ok:
            self.window = min(float(self.max_concurrency), self.window + 1.0 / self.window)
        self._event().set()

    def observe(self, status: int, headers: Mapping[str, str], seq: int | None) -> None:
        """Update from one HTTP response (every attempt, the SDKs' retries included)."""
        later_calls = self.seq - seq if seq is not None else 0
        later_tokens = sum(t for s, t in self.started_tokens if seq is not None and s > seq)
        for kind, later in (("requests", later_calls), ("tokens", later_tokens)):
            limit, remaining, reset_s = _limits(headers, kind)
            if remaining is not None:
                getattr(self, kind).observe(limit, remaining, reset_s, later)
        if status == 429:
            wait = retry_after(headers)
            self.pause_until = max(self.pause_until, time.monotonic() + (wait or 1.0))
            self.window = max(1.0, self.window / 2)
        self._event().set()
