"""What an importer will read: regular files within a size cap, JSON without duplicate keys.

An importer reads files a user points it at, often produced elsewhere. A symlink to
``/dev/zero``, a 1 GiB ``.eval`` member that is 1 MB zipped, a JSON object with a key twice
(which value wins is the parser's choice, not the data's), or 100,000 nested brackets must
each end in one clear :class:`~evalstats.errors.DataError` naming the file, not in a full
memory, a silent pick or a ``RecursionError`` traceback.
"""

from __future__ import annotations

import json
import os
import stat
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

from evalstats.errors import DataError

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_MEMBER_BYTES",
    "check_zip",
    "read_cap_check",
    "loads",
    "read_bytes",
    "require_regular",
    "unique_columns",
]

#: Largest input file an importer reads (bytes); ``EVALSTATS_MAX_INPUT_BYTES`` overrides it.
MAX_INPUT_BYTES = 1024**3
#: Largest uncompressed archive member (and archive total) an importer accepts: an inspect_ai
#: log's members are a header and one JSON file per sample, a few MB each.
MAX_MEMBER_BYTES = 256 * 1024**2


def _cap(default: int) -> int:
    text = os.environ.get("EVALSTATS_MAX_INPUT_BYTES")
    if text and text.isdigit() and int(text) > 0:
        return int(text)
    return default


def require_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """The file's stat, refusing anything but a regular file (after symlinks).

    >>> require_regular("/dev/zero")
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: /dev/zero: not a regular file (a device, pipe or ...
    """
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise DataError("file not found", path=p) from None
    except OSError as exc:
        raise DataError(f"unreadable: {exc.strerror or exc}", path=p) from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(
            "not a regular file (a device, pipe or directory): nothing to import from it",
            path=p,
        )
    return info


def read_cap_check(path: str | os.PathLike[str], cap: int | None = None) -> None:
    """Refuse a file that is not regular or is over ``cap`` bytes, without reading it."""
    limit = _cap(MAX_INPUT_BYTES) if cap is None else cap
    info = require_regular(path)
    if info.st_size > limit:
        raise DataError(
            f"the file is {info.st_size:,} bytes, over the import cap of {limit:,} "
            "(EVALSTATS_MAX_INPUT_BYTES): split it",
            path=path,
        )


def read_bytes(path: str | os.PathLike[str], cap: int | None = None) -> bytes:
    """The whole file, if it is a regular file of at most ``cap`` bytes."""
    limit = _cap(MAX_INPUT_BYTES) if cap is None else cap
    read_cap_check(path, limit)
    with open(path, "rb") as fh:
        data = fh.read(limit + 1)  # it may have grown since the stat
    if len(data) > limit:
        raise DataError(f"the file grew past the import cap of {limit:,} bytes", path=path)
    return data


def _no_duplicates(path: Any, line: int | None):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            twice = sorted(k for k, n in Counter(k for k, _ in pairs).items() if n > 1)
            raise DataError(
                f"key(s) {', '.join(map(repr, twice))} appear twice in one object: which "
                "value is meant is not knowable",
                path=path,
                line=line,
                field=twice[0],
            )
        return out

    return hook


def loads(text: str | bytes, path: Any, line: int | None = None) -> Any:
    """``json.loads`` that refuses duplicate keys and deep nesting with a ``DataError``.

    ``json.JSONDecodeError`` passes through (callers word it for their format).

    >>> loads('{"a": 1}', "x.jsonl", 3)
    {'a': 1}
    >>> loads('{"a": 1, "a": 2}', "x.jsonl", 3)
    Traceback (most recent call last):
    ...
    evalstats.errors.DataError: x.jsonl:3, field 'a': key(s) 'a' appear twice in one object: ...
    """
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates(path, line))
    except RecursionError:
        raise DataError("the JSON nests too deeply to be a record", path=path, line=line) from None


def unique_columns(columns: list[str], path: Any, line: int | None = 1) -> None:
    """Refuse a header that names a column twice."""
    twice = sorted(c for c, n in Counter(columns).items() if n > 1)
    if twice:
        raise DataError(
            f"column(s) {', '.join(map(repr, twice))} appear twice in the header: which one "
            "is meant is not knowable",
            path=path,
            line=line,
            field=twice[0],
        )


def check_zip(path: str | os.PathLike[str], cap: int | None = None) -> None:
    """Refuse an archive with a duplicate member or members that inflate past ``cap``.

    A member's declared size bounds what :mod:`zipfile` will inflate (it stops there and
    fails the CRC), so checking the declared sizes bounds the memory of reading them.
    """
    limit = _cap(MAX_MEMBER_BYTES) if cap is None else cap
    require_regular(path)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not an archive at all: the reader says so in its own words
    names = Counter(i.filename for i in infos)
    twice = sorted(n for n, k in names.items() if k > 1)
    if twice:
        raise DataError(
            f"the archive holds member(s) {', '.join(map(repr, twice[:3]))} twice: which "
            "one is meant is not knowable",
            path=path,
            field=twice[0],
        )
    for info in infos:
        if info.file_size > limit:
            raise DataError(
                f"member {info.filename!r} inflates to {info.file_size:,} bytes, over the "
                f"import cap of {limit:,} (EVALSTATS_MAX_INPUT_BYTES)",
                path=path,
                field=info.filename,
            )
    total = sum(i.file_size for i in infos)
    if total > limit:
        raise DataError(
            f"the archive inflates to {total:,} bytes, over the import cap of {limit:,} "
            "(EVALSTATS_MAX_INPUT_BYTES)",
            path=path,
        )
