"""Atomic file writes, shared by every layer that writes a file (no pandas, no numpy).

A reader never sees half a file and a failure leaves none: the bytes go to a temporary file in
the same folder, are fsynced, and replace the target in one rename.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import DataError

__all__ = ["atomic_write", "guard_output", "locked", "mark_output"]

# What a data directory holds: never an output path (unless --force).
_DATA_STEMS = frozenset({"tasks", "runs", "judgments", "labels"})
_DATA_NAMES = frozenset({"arms.toml", "plan.toml", "truth.json"})
# A directory holding one of these is an evalstats output (a report, a simulation).
_OUTPUT_MARKS = frozenset({"results.json", ".evalstats-report.json", "truth.json"})
FORCE_HELP = "write over an existing file or folder evalstats did not write, even a data file"
OUTPUTS = ".evalstats-outputs.json"  # per folder: file name -> sha256 of what we wrote there


def atomic_write(path: Path, write: Any) -> None:
    """Write ``path`` through ``write(binary_file)`` into a temporary file, then rename it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    # Mode 0o666 less the umask, as for a file open() creates (mkstemp's would be 0o600).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _is_data(p: Path) -> bool:
    name, stem, suffix = p.name, p.name.partition(".")[0], p.suffix.lower()
    data_table = stem in _DATA_STEMS and suffix in (".jsonl", ".ndjson", ".parquet", ".csv")
    return name in _DATA_NAMES or data_table or p.parent.name == "rubrics"


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _written(folder: Path) -> dict[str, Any]:
    try:
        found = json.loads((folder / OUTPUTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def guard_output(path: Path, data_dir: Path | None, *, force: bool, append: bool = False) -> None:
    """``DataError`` for an output ``path`` that is a data file, or exists and evalstats did not
    write it (or it changed since), unless ``force``; ``append``: a journal may be resumed."""
    if force:
        return
    p = Path(path)
    where = p.resolve()
    why = "use --force to overwrite it"
    if data_dir is not None and where.is_relative_to(d := Path(data_dir).resolve()):
        if where == d or _is_data(where) or "rubrics" in where.relative_to(d).parts:
            raise DataError(
                f"is a data file of {data_dir}; choose another output (or pass --force)", path=p
            )
    if where.is_dir():
        names = set(os.listdir(where)) - {".evalstats-report.lock"}
        if names and not names & (_OUTPUT_MARKS | {OUTPUTS}):
            raise DataError(f"exists and holds no evalstats output; {why}", path=p)
    elif where.exists():
        # A journal is appended to, so resuming one is no overwrite; other data files are.
        if _is_data(where) and not (append and where.name.startswith("judgments.")):
            raise DataError(f"is a data file; {why}", path=p)
        if not append and _written(where.parent).get(where.name) != _sha256(where):
            raise DataError(f"exists and is not what evalstats wrote there; {why}", path=p)


def mark_output(path: Path) -> None:
    """Record ``path`` (just written) as ours, so that the next run may replace it."""
    p = Path(path).resolve()
    written = _written(p.parent) | {p.name: _sha256(p)}
    text = json.dumps(written, indent=1, sort_keys=True).encode("utf-8")
    atomic_write(p.parent / OUTPUTS, lambda fh: fh.write(text))


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on ``.<name>.lock`` beside ``path``: writers of one file in turn."""
    lock = Path(path).with_name(f".{Path(path).name}.lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
