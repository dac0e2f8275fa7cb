"""Bounded work of the judge-output reader on pathological text: time, memory, and growth.

Each input here once cost minutes (``"{/*" * 160_000`` took 143 s; ``"{a:" * 160_000`` and
``"{'" * 50_000`` ran into the step budget, 5-7 s) or is named in issue 9 (100,000 ``[``,
megabytes of text, deeply nested braces).  The limits are far above what the reader needs
(well under 2 s on a loaded 2-core machine) and far below what a quadratic scan takes.
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from evalstats import rubrics
from evalstats.errors import ParseError
from evalstats.rubrics._lenient_json import (  # private: the lenient JSON scanner's bounds, directly
    MAX_CHARS,
    find_objects,
)

N = 480_000  # just under MAX_CHARS, the largest text the reader accepts

PATHOLOGICAL = {
    "braces": "{" * 100_000,
    "brackets": "{" + "[" * 100_000,
    "deep-values": '{"a":' * 5_000 + "1" + "}" * 5_000,
    "deep-bare": ("{a:" * (N // 3)),
    "quotes": "{'" * 50_000,
    "quote-pairs": ('"{' * (N // 2)),
    "typographic": ("\u201c{" * (N // 2)),
    "unterminated-string": '{"label": "' + "x" * 400_000,
    "unterminated-comment": "{/*" * (N // 3),
    "backslashes": '{"a": "' + "\\" * N,
    "many-keys": "{" + '"label": "(a)", ' * 20_000 + "}",
    "empty-objects": " {}" * (N // 3),
    "prose-then-verdict": "lorem ipsum " * 39_000 + '{"label": "(a)"}',
    "megabytes": "x" * 3_000_000,
}

TIME_LIMIT_S = 10.0
MEMORY_LIMIT_MB = 32.0


def _read(text: str) -> None:
    try:
        find_objects(text)
    except ParseError as e:
        assert e.reason


@pytest.mark.slow  # reads half-megabyte pathological texts (a guard against a quadratic reader)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_reader_time_is_bounded(name):
    t0 = time.process_time()
    _read(PATHOLOGICAL[name])
    elapsed = time.process_time() - t0
    assert elapsed < TIME_LIMIT_S, f"{name}: {elapsed:.1f} s CPU"


@pytest.mark.slow  # reads half-megabyte pathological texts (a guard against a quadratic reader)
@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_reader_memory_is_bounded(name):
    # A quarter of each text: tracemalloc slows allocation-heavy code ten-fold, and what is
    # checked is that the reader keeps no per-attempt state that grows with the text.
    text = PATHOLOGICAL[name]
    text = text[: len(text) // 4]
    tracemalloc.start()
    try:
        _read(text)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_LIMIT_MB, f"{name}: {peak:.1f} MB peak"


@pytest.mark.slow  # reads half-megabyte pathological texts (a guard against a quadratic reader)
@pytest.mark.parametrize("name", ["with-without", "blind-pair"])
@pytest.mark.parametrize("case", sorted(PATHOLOGICAL))
def test_rubric_parse_on_pathological_text_raises_parse_error_only(name, case):
    r = rubrics.get(name)
    try:
        v = r.parse(PATHOLOGICAL[case], order="with_first" if r.needs_order else None)
    except ParseError as e:
        assert e.reason
    else:
        assert v.label in ("(a)", "(b)", "(c)", "a_wins", "b_wins", "tie")


def _cpu(text: str) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        try:
            find_objects(text)
        except ParseError:
            pass
        best = min(best, time.process_time() - t0)
    return best


@pytest.mark.slow  # reads half-megabyte pathological texts (a guard against a quadratic reader)
@pytest.mark.parametrize("unit", ["{/*", "{a:", "{'", "\u201c{", ' {"k": 1}', '{"a": [', "{'a': '"])
def test_reader_work_grows_linearly(unit):
    # 8x the text must cost well under 64x (quadratic) the time; 24x leaves room for noise.
    small = unit * (N // 8 // len(unit))
    large = unit * (N // len(unit))
    t_small, t_large = _cpu(small), _cpu(large)
    assert t_large < 24 * max(t_small, 0.005), (unit, t_small, t_large)


def test_the_verdict_after_garbage_is_still_found():
    # The fail-fast memos (unclosed comment, unclosed string, quoted key without ":") must
    # not lose an object that follows the garbage they skip.
    for junk in ("{/* never closed ", "{'unclosed ", "{'k'\n", "{k no colon "):
        v = rubrics.get("with-without").parse(junk + '\n{"label": "(b)", "reasoning": "ok"}')
        assert (v.label, v.reasoning) == ("(b)", "ok"), junk


def test_nesting_deeper_than_the_limit_is_refused():
    # Refused outright rather than retried at every inner "{" (which was quadratic).
    with pytest.raises(ParseError, match="nested more than 40 levels"):
        find_objects("{a:" * 41 + "1" + "}" * 41)
    assert find_objects("{a:" * 40 + "1" + "}" * 40)


def test_too_long_text_is_refused_without_reading():
    with pytest.raises(ParseError, match="too long"):
        find_objects("{" * (MAX_CHARS + 1))
