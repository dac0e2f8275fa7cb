"""Finding and reading JSON objects in what a judge writes: bounded, ParseError only.

Why not a library: docs/judging.md (Reading a judge's JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from evalstats.errors import ParseError

# Bounds against pathological input; the step budget is summed over all start positions.
MAX_CHARS = 500_000
MAX_DEPTH = 40
STEP_BUDGET = 4_000_000
MAX_INT_DIGITS = 40

# Opening quote -> characters that may close it (loosely: models mix “...", ”...”).
_CLOSERS = {'"': '"', "'": "'", "\u201c": '\u201d\u201c"', "\u201d": '\u201d"',
            "\u2018": "\u2019'", "\u2019": "\u2019"}  # fmt: skip
_STOP = {c: re.compile("[\\\\" + re.escape(c) + "]") for c in set(_CLOSERS.values())}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\"}
_WS = " \t\r\n\u00a0\ufeff"
_INLINE_WS = " \t\r\u00a0"
_AFTER_STRING = ",:}]\n"  # what may follow a closing quote
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_BARE_KEY = re.compile(r"[A-Za-z_$][\w$\-]*(?:[ \t]+[A-Za-z_$][\w$\-]*){0,3}")
_BARE_VALUE_END = re.compile(r"[,}\]\n]")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
# A "{" that can begin an object: filtering in the regex engine keeps "{" * 480_000 linear.
_OBJECT_START = re.compile("\\{(?=[" + re.escape(_WS + ",}/$_" + "".join(_CLOSERS)) + "A-Za-z])")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None, "none": None}


class JsonObject(dict):
    """A parsed object (``dict``); ``dupes`` keeps every value of a key written twice."""

    __slots__ = ("dupes",)

    def __init__(self) -> None:
        super().__init__()
        self.dupes: dict[str, list[Any]] = {}


class _Fail(Exception):
    """This start position does not begin a readable object."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.budget = STEP_BUDGET
        # Where a scan already ran to the end unsuccessfully: later starts fail at once.
        self.no_comment_end_from = self.n + 1
        self.unclosed_from: dict[str, int] = {}
        # A quoted key not followed by ":": any key opened inside it fails the same way.
        self.bad_key: dict[str, tuple[int, int]] = {}

    def _spend(self, k: int) -> None:
        self.budget -= max(k, 1)
        if self.budget < 0:
            raise ParseError("judge output too long or too convoluted to read as JSON")

    def _skip_ws(self, i: int) -> int:
        s, n = self.s, self.n
        start = i
        while i < n:
            c = s[i]
            if c in _WS:
                i += 1
            elif c == "/" and i + 1 < n and s[i + 1] == "/":
                j = s.find("\n", i)
                i = n if j < 0 else j + 1
            elif c == "/" and i + 1 < n and s[i + 1] == "*":
                if i + 2 >= self.no_comment_end_from:
                    raise _Fail
                j = s.find("*/", i + 2)
                if j < 0:
                    self._spend(n - i)
                    self.no_comment_end_from = i + 2
                    raise _Fail
                i = j + 2
            else:
                break
        self._spend(i - start)
        return i

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        i = self._skip_ws(i)
        if i >= self.n:
            raise _Fail
        c = self.s[i]
        if c in "{[":
            return self.nest(i, depth + 1)
        if c in _CLOSERS:
            return self.string(i)
        m = _NUMBER.match(self.s, i)
        if m is not None:
            end = m.end()
            j = end
            while j < self.n and self.s[j] in _INLINE_WS:
                j += 1
            # "4/5" or "3 of 5" is not a number: read it as a bare word instead.
            if j >= self.n or self.s[j] in ",}]\n":
                self._spend(end - i)
                return _number(m.group()), end
        return self.bare(i)

    def string(self, i: int) -> tuple[str, int]:
        s, n = self.s, self.n
        closers = _CLOSERS[s[i]]
        out: list[str] = []
        j = i + 1
        # Sound: from any start at or after a failed one, the same closers are tried alike.
        if j >= self.unclosed_from.get(closers, n + 1):
            raise _Fail
        start = j
        while True:
            hit = _STOP[closers].search(s, j)
            k = n if hit is None else hit.start()
            self._spend(k - j + 1)
            out.append(s[j:k])
            if k >= n or (s[k] == "\\" and k + 1 >= n):
                self.unclosed_from[closers] = min(start, self.unclosed_from.get(closers, n + 1))
                raise _Fail
            if s[k] == "\\":
                e = s[k + 1]
                if e == "u":
                    ch, j = self._unicode_escape(k)
                    out.append(ch)
                    continue
                out.append(_ESCAPES.get(e, e))
                j = k + 2
                continue
            # A quote closes the string only if a delimiter follows (unescaped inner quotes).
            m = k + 1
            while m < n and s[m] in _INLINE_WS:
                m += 1
            if m >= n or s[m] in _AFTER_STRING:
                return "".join(out), k + 1
            out.append(s[k])
            j = k + 1

    def _unicode_escape(self, k: int) -> tuple[str, int]:
        s = self.s
        if not _HEX4.fullmatch(s, k + 2, k + 6):
            return "u", k + 2
        code = int(s[k + 2 : k + 6], 16)
        j = k + 6
        if 0xD800 <= code <= 0xDBFF and s[j : j + 2] == "\\u" and _HEX4.fullmatch(s, j + 2, j + 6):
            lo = int(s[j + 2 : j + 6], 16)
            if 0xDC00 <= lo <= 0xDFFF:
                return chr(0x10000 + ((code - 0xD800) << 10) + (lo - 0xDC00)), j + 6
        if 0xD800 <= code <= 0xDFFF:
            # A lone surrogate cannot be written back out as UTF-8 later.
            return "\ufffd", j
        return chr(code), j

    def bare(self, i: int) -> tuple[Any, int]:
        m = _BARE_VALUE_END.search(self.s, i)
        end = self.n if m is None else m.start()
        self._spend(end - i)
        word = self.s[i:end].strip(_WS)
        if not word or word[0] in "{[":
            raise _Fail
        return _LITERALS.get(word.lower(), word), end

    def key(self, i: int) -> tuple[str, int]:
        c = self.s[i]
        if c in _CLOSERS:
            closers = _CLOSERS[c]
            lo, hi = self.bad_key.get(closers, (1, 0))
            if lo <= i + 1 <= hi:
                raise _Fail
            k, j = self.string(i)
            after = self._skip_ws(j)
            if after >= self.n or self.s[after] not in ":=":
                self.bad_key[closers] = (i + 1, j - 1)
                raise _Fail
            return k, j
        m = _BARE_KEY.match(self.s, i)
        if m is None:
            raise _Fail
        self._spend(m.end() - i)
        return m.group().strip(), m.end()

    def nest(self, i: int, depth: int) -> tuple[JsonObject | list[Any], int]:
        """The object or array whose bracket is at ``i``."""
        if depth > MAX_DEPTH:  # not a per-start failure: every later start would descend again
            raise ParseError(f"judge output nested more than {MAX_DEPTH} levels deep")
        s, n = self.s, self.n
        is_obj = s[i] == "{"
        out: Any = JsonObject() if is_obj else []
        i += 1
        while True:
            i = self._skip_ws(i)
            if i >= n:
                # Truncated output or a forgotten final brace: keep what was read.
                if is_obj and out:
                    return out, n
                raise _Fail
            c = s[i]
            if c == ("}" if is_obj else "]"):
                return out, i + 1
            if c == ",":  # trailing or doubled comma
                i += 1
                continue
            if not is_obj:
                v, i = self.value(i, depth)
                out.append(v)
                continue
            k, i = self.key(i)
            i = self._skip_ws(i)
            if i >= n or s[i] not in ":=":
                raise _Fail
            v, i = self.value(i + 1, depth)
            if k in out:
                out.dupes.setdefault(k, [out[k]]).append(v)
            out[k] = v
            i = self._skip_ws(i)
            c = s[i] if i < n else ","
            if c not in ",}" and c not in _CLOSERS and not (c.isalpha() or c in "_$"):
                raise _Fail


def _number(tok: str) -> int | float | str:
    body = tok.lstrip("+-")
    if any(c in body for c in ".eE"):
        return float(tok)  # the regex admits only valid floats
    return tok if len(body) > MAX_INT_DIGITS else int(tok)


def find_objects(text: str) -> list[JsonObject]:
    """Return every outermost JSON-like object in ``text``, in order of appearance."""
    if not isinstance(text, str):
        raise ParseError(f"judge output is not text (got {type(text).__name__})")
    if len(text) > MAX_CHARS:
        raise ParseError(f"judge output too long ({len(text)} characters > {MAX_CHARS})")
    reader = _Reader(text)
    found: list[JsonObject] = []
    m = _OBJECT_START.search(text)
    while m is not None:
        pos = m.start()
        try:
            obj, end = reader.nest(pos, 1)
        except _Fail:
            m = _OBJECT_START.search(text, pos + 1)
            continue
        found.append(obj)
        m = _OBJECT_START.search(text, end)
    return found


def iter_dicts(value: Any, depth: int = 0) -> Iterator[dict]:
    """Yield ``value`` and every dict nested in it (depth-first, outer before inner)."""
    if depth > MAX_DEPTH + 2:
        return
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from iter_dicts(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from iter_dicts(v, depth + 1)
