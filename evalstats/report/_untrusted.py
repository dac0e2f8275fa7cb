"""Agent and user text made inert where a reader opens it: bidirectional controls shown as
``[U+202E]`` marks ("Trojan source"), and what Markdown would read as raw HTML, a link or an
image, or a line break made text."""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "markdown_text", "show_bidi"]

#: The bidirectional embedding, override, isolate and mark characters.
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
# Every control character and line separator too: a newline in an arm name must not start a
# heading, a list or a link definition.
_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{BIDI_CONTROLS}]")
# CommonMark raw HTML starts with "<" and a tag name, "/", "!" or "?"; "p < 0.05" does not.
_RAW_HTML = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
# An inline link or image needs "](" (or "][" for a reference): "[11, 55]" stays as it is.
_LINK = re.compile(r"\](?=[(\[])")


def show_bidi(text: str, *, controls: bool = False) -> str:
    """``text`` with every bidirectional control character (and with ``controls``, every
    control character and line separator) shown as ``[U+XXXX]``.

    >>> show_bidi("safe\u202eexe.txt"), show_bidi("a\\n# b", controls=True)
    ('safe[U+202E]exe.txt', 'a[U+000A]# b')
    """
    return (_CONTROLS if controls else _BIDI).sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def markdown_text(text: str) -> str:
    """``text`` safe inside Markdown: raw HTML, links, images and backslashes shown as text,
    controls shown.

    >>> markdown_text("<script>alert(1)</script> p < 0.05, R&D, &amp;")
    '&lt;script>alert(1)&lt;/script> p < 0.05, R&D, &amp;amp;'
    >>> markdown_text("![x](https://e.example/b.png) [11, 55]")
    '![x\\\\](https://e.example/b.png) [11, 55]'
    """
    text = _ENTITY.sub("&amp;", show_bidi(text.replace("\\", "\\\\"), controls=True))
    return _LINK.sub("\\\\]", _RAW_HTML.sub("&lt;", text))
