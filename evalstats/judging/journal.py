"""The append-only judgment journal: one JSON line per finished call, plus batch bookkeeping.

Durability, and why a kill -9 never pays twice for a finished call: a result is written with
one ``os.write`` on an ``O_APPEND`` descriptor as soon as the response is read (no Python
buffer, so a killed process loses nothing it wrote), then made durable by ``fsync``. Fsyncs
are group-committed: a caller waits until an fsync that started after its write has
finished, and concurrent callers share one fsync. Against kill -9 this is exact: the only
window is between the HTTP response arriving and the write, microseconds. Against power
loss, lines written within the last fsync interval (about 0.1-5 ms) could be lost, and those
calls would be paid again on the rerun; fsyncing every line one by one would only shrink
that window, at the price of serialising all calls behind the disk.

Line kinds: judgment lines have no ``kind`` field (they follow ``JUDGMENT_FIELDS``);
``{"kind": "batch", ...}`` records a submitted provider batch and ``{"kind": "batch_done",
...}`` its collection. :func:`read_journal` returns judgment lines only.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evalstats.errors import EvalstatsError

__all__ = ["Journal", "JournalLockedError", "read_journal"]


#: ``call_status`` values of failed lines that a rerun does not send again by itself.
NOT_RETRIED = ("failed_permanent", "truncated")


class JournalLockedError(EvalstatsError):
    """Another process is writing the same journal."""


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """Every well-formed line; a torn or corrupt line is skipped with a warning."""
    if not path.exists():
        return []
    out = []
    with path.open("rb") as fh:
        data = fh.read()
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            record = None
        if not isinstance(record, dict):
            warnings.warn(
                f"{path}:{number}: unreadable journal line skipped (a write cut short by a "
                "kill leaves one; the call will be made again)",
                stacklevel=3,
            )
            continue
        out.append(record)
    return out


def is_judgment(record: Mapping[str, Any]) -> bool:
    return record.get("kind") in (None, "judgment")


def read_journal(path: str | os.PathLike[str], *, all_attempts: bool = False) -> list[dict]:
    """Judgment lines of a journal, without batch bookkeeping lines.

    Parameters
    ----------
    path : path-like
        The journal (``judgments.jsonl``).
    all_attempts : bool, default False
        If False, one line per call key: its successful line if any, else its last failed
        one (a failed call retried later is one judgment, not two). Lines without a
        ``call_key`` (written by hand) are all kept. If True, every judgment line.

    Returns
    -------
    list of dict
        In journal order.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "j.jsonl"
    >>> lines = [{"call_key": "k", "error": "RateLimitError: 429"},
    ...          {"kind": "batch", "batch_id": "b1"},
    ...          {"call_key": "k", "error": None, "raw": "{}"}]
    >>> _ = p.write_text("".join(json.dumps(x) + "\\n" for x in lines))
    >>> [x["error"] for x in read_journal(p)]
    [None]
    >>> len(read_journal(p, all_attempts=True))
    2
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


def peek(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The lines of a journal, read without locking or repairing it (for dry runs)."""
    p = Path(path)
    return _read_lines(p) if p.is_file() else []


def _lock(fd: int) -> bool:
    try:
        import fcntl
    except ImportError:  # Windows: lock one byte far past any data, so appends are free
        import msvcrt

        try:
            os.lseek(fd, 1 << 40, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


class Journal:
    """An open journal: the lock, what is finished, and the writer.

    The lock is an OS lock (``flock``) on the journal file itself, so it follows the file
    (its device and inode) whatever path reaches it -- a symlink, a hard link, ``..`` --
    and it dies with its process: a run killed with kill -9 never leaves a stale lock, and
    there is no lock file to leave behind. A journal this run created and never wrote to
    is removed on close, so an aborted run leaves nothing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o666)
        if not _lock(self._fd):
            os.close(self._fd)
            real = os.path.realpath(self.path)
            raise JournalLockedError(
                f"{self.path} is being written by another evalstats run"
                + (f" (it is {real})" if real != str(self.path.absolute()) else "")
                + "; wait for it to finish or stop it, then rerun (finished calls are kept)"
            )
        self._created = not existed
        self._set_aside_torn_tail()
        self.records = _read_lines(self.path)
        self._write_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = 0
        self._synced = 0
        self._closed = False

    def _set_aside_torn_tail(self) -> None:
        """Move a last line cut short by a kill (no newline) to ``<journal>.torn``.

        The journal stays valid JSON Lines for every reader, and the torn bytes are kept,
        not dropped; the call they belonged to is not finished and is made again.
        """
        if not self.path.exists():
            return
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

    # -- state -----------------------------------------------------------------------------
    def finished_keys(self) -> set[str]:
        """Call keys with a successful judgment line."""
        return finished_keys(self.records)

    def not_retried_keys(self) -> set[str]:
        """Call keys without a success whose last failure is permanent (or a cut body)."""
        return not_retried_keys(self.records)

    def judgments(self) -> list[dict[str, Any]]:
        return [r for r in self.records if is_judgment(r)]

    def spent_usd(self) -> float:
        """Spend counted against ``max_usd``: per line, the larger of claimed and plausible."""
        return float(
            sum(
                (r.get("usd_counted") if r.get("usd_counted") is not None else r.get("usd")) or 0.0
                for r in self.records
                if is_judgment(r)
            )
        )

    def pending_batches(self) -> list[dict[str, Any]]:
        """Submitted batches not yet collected, in submission order."""
        done = {r.get("batch_id") for r in self.records if r.get("kind") == "batch_done"}
        return [r for r in self.records if r.get("kind") == "batch" and r["batch_id"] not in done]

    # -- writing ---------------------------------------------------------------------------
    def append(self, record: Mapping[str, Any]) -> int:
        """Write one line now (one syscall); return its sequence number for :meth:`sync`."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        data = line.encode("utf-8")
        with self._write_lock:
            if self._closed:
                raise ValueError(f"journal {self.path} is closed")
            written = os.write(self._fd, data)
            if written != len(data):  # only on a full disk; keep the line whole or fail loudly
                raise OSError(f"short write to {self.path} ({written} of {len(data)} bytes)")
            self._written += 1
            self.records.append(dict(record))
            return self._written

    def sync(self, upto: int | None = None) -> None:
        """Return once every line up to ``upto`` (default: all written) is on disk."""
        target = self._written if upto is None else upto
        with self._sync_lock:
            if self._synced >= target or self._closed:
                return
            reached = self._written
            os.fsync(self._fd)
            self._synced = reached

    def write(self, record: Mapping[str, Any]) -> None:
        """Append and fsync (for code that is not concurrent)."""
        self.sync(self.append(record))

    def close(self) -> None:
        if self._closed:
            return
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
