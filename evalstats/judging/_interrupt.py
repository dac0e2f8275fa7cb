"""SIGINT / SIGTERM during a run: the first drains, the second stops at once.

How it works: docs/judging.md, "Interrupts".
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any

#: The drain of the run whose task reads it (worker tasks inherit it when created).
current: contextvars.ContextVar[Drain | None] = contextvars.ContextVar(
    "evalstats_drain", default=None
)
_SIGNALS = ("SIGINT", "SIGTERM")


class Drain:
    """What the signal handlers of one run share with its calls."""

    def __init__(self, state: Any, grace: float) -> None:
        self.state = state
        self.grace = max(0.0, float(grace))
        self.signals = 0
        self.in_flight: set[asyncio.Task[Any]] = set()
        self.cancelled: set[asyncio.Task[Any]] = set()
        self.woken = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None

    @property
    def stopping(self) -> bool:
        return self.signals > 0

    def on_signal(self, name: str) -> None:
        self.signals += 1
        self.woken.set()
        if self.signals == 1:
            self.state.stopped = (
                f"interrupted by {name}: no new call was started; calls in flight were let "
                "finish and journaled; rerun to resume"
            )
            print(
                f"\nevalstats judge: {name}: finishing the {len(self.in_flight)} call(s) in "
                f"flight (at most {self.grace:g} s) and journaling them; "
                f"{name} again stops at once",
                file=sys.stderr,
            )
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.grace, self.cancel_in_flight)
        else:
            self.state.stopped = (
                f"interrupted by a second {name}: calls in flight were cancelled and journaled "
                "as interrupted; rerun to resume"
            )
            print(f"\nevalstats judge: {name} again: stopping now", file=sys.stderr)
            self.cancel_in_flight()

    def cancel_in_flight(self) -> None:
        for task in list(self.in_flight):
            self.cancelled.add(task)
            task.cancel()

    def enter_call(self) -> asyncio.Task[Any] | None:
        task = asyncio.current_task()
        if task is not None:
            self.in_flight.add(task)
        return task

    def leave_call(self, task: asyncio.Task[Any] | None) -> None:
        """Unregister a call; a cancel of ours is undone."""
        if task is None:
            return
        self.in_flight.discard(task)
        if task in self.cancelled:
            self.cancelled.discard(task)
            task.uncancel()

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


async def pause(seconds: float) -> None:
    """``asyncio.sleep`` that a run's first signal cuts short."""
    drain = current.get()
    if drain is None:
        await asyncio.sleep(seconds)
    elif not drain.stopping:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(drain.woken.wait(), timeout=seconds)


def stopping() -> bool:
    """True once the current run was interrupted."""
    drain = current.get()
    return drain is not None and drain.stopping


async def drained(coro: Coroutine[Any, Any, Any], state: Any, grace: float) -> Any:
    """Run ``coro`` with the run's SIGINT/SIGTERM handlers installed (main thread only)."""
    drain = Drain(state, grace)
    token = current.set(drain)
    loop = asyncio.get_running_loop()
    installed: list[tuple[int, Any]] = []
    if threading.current_thread() is threading.main_thread():
        for name in _SIGNALS:
            number = getattr(signal, name)  # both exist on Windows too
            previous = signal.getsignal(number)
            try:
                loop.add_signal_handler(number, drain.on_signal, name)
            except (NotImplementedError, RuntimeError, ValueError):
                continue  # Windows' loop has no signal handlers
            installed.append((number, previous))
    try:
        return await coro
    finally:
        drain.close()
        for number, previous in installed:
            loop.remove_signal_handler(number)
            if previous is not None:
                signal.signal(number, previous)
        current.reset(token)
