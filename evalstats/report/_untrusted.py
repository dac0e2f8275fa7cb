"""Agent and user text made inert where a reader opens it: bidirectional controls shown as
``[U+202E]`` marks ("Trojan source"), and what Markdown would read as raw HTML made text."""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "markdown_text", "show_bidi"]

#: The bidirectional embedding, override, isolate and mark characters.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
# CommonMark raw HTML starts with "<" and a tag name, "/", "!" or "?"; "p < 0.05" does not.
_RAW_HTML = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def show_bidi(text: str) -> str:
    """``text`` with every bidirectional control character shown as ``[U+XXXX]``.

    >>> show_bidi("safe\u202eexe.txt")
    'safe[U+202E]exe.txt'
    """
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def markdown_text(text: str) -> str:
    """``text`` safe inside Markdown: raw HTML shown as text, bidi controls shown.

    >>> markdown_text("<script>alert(1)</script> p < 0.05, R&D, &amp;")
    '&lt;script>alert(1)&lt;/script> p < 0.05, R&D, &amp;amp;'
    """
    return _RAW_HTML.sub("&lt;", _ENTITY.sub("&amp;", show_bidi(text)))
