"""Atomic file writes, shared by every layer that writes a file (no pandas, no numpy).

A reader never sees half a file and a failure leaves none: the bytes go to a temporary file in
the same folder, are fsynced, and replace the target in one rename.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from evalstats.errors import DataError

__all__ = ["atomic_write", "guard_output"]

# What a data directory holds (records' tables in every format, arms, plan, rubrics).
_DATA_STEMS = ("tasks", "runs", "judgments", "labels")
_DATA_SUFFIXES = (".jsonl", ".ndjson", ".parquet", ".csv")


def _umask() -> int:
    # Linux reports it without changing it; elsewhere the only way to read the umask is to
    # set it and put it straight back (a thread creating a file meanwhile could see 022).
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Any) -> None:
    """Write ``path`` through ``write(binary_file)`` into a temporary file, then rename it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def guard_output(path: Path, data_dir: Path | None, *, force: bool) -> None:
    """Refuse (``DataError``) an output ``path`` naming a data file of ``data_dir``."""
    if force or data_dir is None:
        return
    target, folder = Path(path).resolve(), Path(data_dir).resolve()
    data = target.parent == folder and (
        target.name in ("arms.toml", "plan.toml")
        or (target.stem in _DATA_STEMS and target.suffix in _DATA_SUFFIXES)
    )
    if data or folder / "rubrics" in target.parents:
        raise DataError(
            f"is a data file of {data_dir}: writing there would replace or corrupt it; "
            "choose another output path (or pass --force)",
            path=path,
        )
