"""The append-only judgment journal: one JSON line per finished call, plus batch bookkeeping.

How it works: docs/judging.md, "The journal".
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import stat
import sys
import threading
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalstats.errors import DataError, EvalstatsError

#: ``call_status`` values of failed lines that a rerun does not send again by itself.
NOT_RETRIED = ("failed_permanent", "truncated")


class JournalLockedError(EvalstatsError):
    """Another process is writing the same journal."""


class JournalWriteError(EvalstatsError):
    """A line could not be written to the journal (full disk, I/O error); the run stops."""


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


_STRINGS = ("judge", "raw", "error", "call_status", "kind", "rubric", "order", "arm_a", "arm_b")
_COSTS = ("usd", "usd_counted")
_TOKENS = ("input_tokens", "output_tokens")
# Fields a line may leave null: what a value must be, as the error says it.
_FIELD_CHECKS = [
    (_STRINGS, lambda v: isinstance(v, str), "must be a string or null"),
    (("call_key",), lambda v: isinstance(v, str) and v, "must be a non-empty string or null"),
    (_COSTS, _number, "must be a number or null"),
    (_COSTS, lambda v: math.isfinite(v) and v >= 0, "must be a finite number >= 0 (a cost)"),
    (_TOKENS, lambda v: type(v) is int and v >= 0, "must be an integer >= 0 or null"),
]


def check_line(record: Mapping[str, Any], path: Path, number: int) -> None:
    """Refuse a line the runner would trust wrongly (a NaN cost would disable the cap)."""

    def bad(field: str, what: str) -> DataError:
        return DataError(
            f"{what}, got {record.get(field)!r:.80}; the journal is not trusted past a line "
            "like this (fix or remove the line; nothing was sent)",
            path=path,
            line=number,
            field=field,
        )

    for names, ok, what in _FIELD_CHECKS:
        for name in names:
            if record.get(name) is not None and not ok(record[name]):
                raise bad(name, what)
    if record.get("kind") in ("batch", "batch_done"):
        if not isinstance(record.get("batch_id"), str) or not record["batch_id"]:
            raise bad("batch_id", "must be a non-empty string")
    if record.get("kind") == "batch":
        if record.get("provider") not in (None, "anthropic", "openai"):
            raise bad("provider", "must be 'anthropic' or 'openai'")
        keys = record.get("call_keys")
        if keys is not None and not (
            isinstance(keys, list) and all(isinstance(k, str) and k for k in keys)
        ):
            raise bad("call_keys", "must be a list of call keys (strings)")
        units = record.get("units")
        if units is not None and not isinstance(units, dict):
            raise bad("units", "must be an object keyed by call key")


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Every well-formed line; a torn or corrupt line is skipped with a warning."""
    if not path.exists():
        return []
    _require_regular(path)
    out = []
    for number, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        except RecursionError:
            raise DataError(
                "the line nests too deeply to be a journal line", path=path, line=number
            ) from None
        if not isinstance(record, dict):
            warnings.warn(
                f"{path}:{number}: unreadable journal line skipped (a write cut short by a "
                "kill leaves one; the call will be made again)",
                stacklevel=3,
            )
            continue
        check_line(record, path, number)
        out.append(record)
    return out


def _require_regular(path: Path, fd: int | None = None) -> None:
    mode = os.fstat(fd).st_mode if fd is not None else path.stat().st_mode
    if not stat.S_ISREG(mode):
        raise DataError(
            "the journal must be a regular file (this is a device, a pipe or a directory: "
            "every answer written there would be lost); give --out a file path",
            path=path,
        )


def is_judgment(record: Mapping[str, Any]) -> bool:
    return record.get("kind") in (None, "judgment")


def read_journal(path: str | os.PathLike[str], *, all_attempts: bool = False) -> list[dict]:
    """Judgment lines of a journal, without batch bookkeeping lines.

    Parameters
    ----------
    path : path-like
        The journal (``judgments.jsonl``).
    all_attempts : bool, default False
        If False, one line per call key (its success, else its last failure).

    Returns
    -------
    list of dict
        In journal order.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.jsonl"
    >>> lines = [{"call_key": "k", "error": "RateLimitError: 429"}, {"call_key": "k", "error": None}]
    >>> _ = p.write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> [x["error"] for x in read_journal(p)], len(read_journal(p, all_attempts=True))
    ([None], 2)
    """
    records = [r for r in _read_lines(Path(path)) if is_judgment(r)]
    if all_attempts:
        return records
    chosen: dict[str, int] = {}
    for i, record in enumerate(records):
        key = record.get("call_key")
        if key is None:
            continue
        previous = chosen.get(key)
        if previous is None or records[previous].get("error") is not None:
            chosen[key] = i
    keep = set(chosen.values())
    return [r for i, r in enumerate(records) if r.get("call_key") is None or i in keep]


def finished_keys(records: Iterable[Mapping[str, Any]]) -> set[str]:
    """Call keys with a successful judgment line."""
    return {
        r["call_key"]
        for r in records
        if is_judgment(r) and r.get("call_key") and r.get("error") is None
    }


def not_retried_keys(records: Iterable[Mapping[str, Any]]) -> set[str]:
    """Call keys with no success whose last failed line has a ``NOT_RETRIED`` status."""
    last: dict[str, Any] = {}
    for r in records:
        if is_judgment(r) and r.get("call_key"):
            if r.get("error") is None:
                last[r["call_key"]] = "ok"
            elif last.get(r["call_key"]) != "ok":
                last[r["call_key"]] = r.get("call_status")
    return {k for k, status in last.items() if status in NOT_RETRIED}


class Journal:
    """An open journal: the lock (docs/judging.md), what is finished, and the writer."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        if existed:
            _require_regular(self.path)
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            _require_regular(self.path, self._fd)
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                real = os.path.realpath(self.path)
                raise JournalLockedError(
                    f"{self.path} is being written by another evalstats run"
                    + (f" (it is {real})" if real != str(self.path.absolute()) else "")
                    + "; wait for it to finish or stop it, then rerun (finished calls are kept)"
                ) from None
            self._set_aside_torn_tail()
            self.records = _read_lines(self.path)
        except BaseException:
            os.close(self._fd)
            raise
        self._created = not existed
        #: Why writing failed (then no new call may start), else None.
        self.failed: str | None = None
        self._write_lock, self._sync_lock = threading.Lock(), threading.Lock()
        self._written = self._synced = 0
        self._closed = False

    def _set_aside_torn_tail(self) -> None:
        """Move a last line cut short by a kill (no newline) to ``<journal>.torn``."""
        data = self.path.read_bytes()
        if not data or data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        side = self.path.with_name(self.path.name + ".torn")
        with side.open("ab") as fh:
            fh.write(data[cut:] + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.ftruncate(self._fd, cut)
        warnings.warn(
            f"{self.path}: its last line was cut short (a killed run); moved its "
            f"{len(data) - cut} bytes to {side}; that call will be made again",
            stacklevel=3,
        )

    def finished_keys(self) -> set[str]:
        """Call keys with a successful judgment line."""
        return finished_keys(self.records)

    def spent_usd(self) -> float:
        """Spend counted against ``max_usd``: per line, the larger of claimed and plausible."""
        pairs = [(r.get("usd_counted"), r.get("usd")) for r in self.records if is_judgment(r)]
        return float(sum((usd if counted is None else counted) or 0.0 for counted, usd in pairs))

    def pending_batches(self) -> list[dict[str, Any]]:
        """Submitted batches not yet collected, in submission order."""
        done = {r.get("batch_id") for r in self.records if r.get("kind") == "batch_done"}
        return [r for r in self.records if r.get("kind") == "batch" and r["batch_id"] not in done]

    def append(self, record: Mapping[str, Any]) -> int:
        """Write one line now (one syscall); return its sequence number for :meth:`sync`."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        with self._write_lock:
            if self._closed:
                raise ValueError(f"journal {self.path} is closed")
            if self.failed is not None:
                self._rescue(line)
                raise JournalWriteError(self.failed)
            # We hold the flock: nobody else appends, so the size before is where we cut.
            before = os.fstat(self._fd).st_size
            try:
                written = os.write(self._fd, data)
                problem = None
                if written != len(data):  # a full disk: never leave a torn line behind
                    problem = f"short write ({written} of {len(data)} bytes)"
            except OSError as exc:
                problem = f"{type(exc).__name__}: {exc.strerror or exc}"
            if problem is not None:
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fd, before)
                self.failed = (
                    f"could not write to the journal {self.path}: {problem}; no new call is "
                    "started (free space or fix the file, then rerun to resume)"
                )
                self._rescue(line)
                raise JournalWriteError(self.failed)
            self._written += 1
            self.records.append(dict(record))
            return self._written

    def _rescue(self, line: str) -> None:
        """A line the journal cannot take: print it (its answer may be paid for)."""
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"evalstats judge: not journaled ({self.path}): {line}")
            sys.stderr.flush()

    def sync(self, upto: int | None = None) -> None:
        """Return once every line up to ``upto`` (default: all written) is on disk."""
        target = self._written if upto is None else upto
        with self._sync_lock:
            if self._synced >= target or self._closed:
                return
            reached = self._written
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self.failed = (
                    f"could not fsync the journal {self.path}: {exc}; no new call is started"
                )
                raise JournalWriteError(self.failed) from None
            self._synced = reached

    def write(self, record: Mapping[str, Any]) -> None:
        """Append and fsync (for code that is not concurrent)."""
        self.sync(self.append(record))

    def close(self) -> None:
        if self._closed:
            return
        if self.failed is None:
            self.sync()
        with self._write_lock:
            self._closed = True
            if self._created and self._written == 0 and os.fstat(self._fd).st_size == 0:
                # Still locked: nobody else can have started writing it.
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            os.close(self._fd)  # releases the flock

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
