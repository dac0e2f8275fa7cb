"""Markdown cells as HTML, as nbconvert's ``markdown2html_mistune`` writes them, without
importing nbconvert for the text the report's notebooks hold.

nbconvert renders markdown with mistune, configured its own way: five plugins, raw HTML
kept, text escaped without quotes, each heading given an ``id`` and an anchor link, plus
math, highlighted fenced code and embedded images. Importing it (its package, pygments,
bleach, bs4) costs ~0.24 s of a report's ~5 s. The notebooks' markdown is headings,
paragraphs, lists, emphasis, links and a little HTML, which mistune configured the same way
renders identically (a test compares the two on every shipped notebook and a corpus of
constructs). Text with anything nbconvert treats specially (math delimiters or any
backslash, fenced code, images, an ATX heading without its space) is handed to nbconvert.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree

import mistune

__all__ = ["markdown_to_html"]

# nbconvert's MarkdownWithMath.DEFAULT_PLUGINS.
_PLUGINS = ("strikethrough", "table", "url", "task_lists", "def_list")
# What only nbconvert's math parsers, code highlighting, image embedding or heading rule
# handle: "$" and backslashes (TeX and LaTeX delimiters), code fences, images, "#Title".
_NBCONVERT_ONLY = re.compile(r"[$\\]|```|~~~|!\[|^ {0,3}#{1,6}[^#\s]", re.M)


def _text(element: Any) -> str:
    """The element's text, its children's and its tail (nbconvert's ``html2text``)."""
    out = element.text or ""
    for child in element:
        out += _text(child)
    return out + (element.tail or "")


class _Renderer(mistune.HTMLRenderer):
    """nbconvert's IPythonRenderer for text without math, fenced code or images."""

    def __init__(self) -> None:
        super().__init__(escape=False, allow_harmful_protocols=True)

    def escape_html(self, text: str) -> str:  # mistune's name
        return html.escape(text, quote=False)

    def heading(self, text: str, level: int, **attrs: Any) -> str:
        out = super().heading(text, level, **attrs)
        # nbconvert's add_anchor: the id from the heading's text, then a "¶" link to it.
        try:
            h = ElementTree.fromstring(out)
        except ElementTree.ParseError:
            return out
        link = quote(_text(h).replace(" ", "-"), safe="?/:@!$&'()*+,;=")
        h.set("id", link)
        anchor = ElementTree.Element("a", {"class": "anchor-link", "href": "#" + link})
        anchor.text = "¶"
        h.append(anchor)
        return ElementTree.tostring(h).decode("utf-8")


_MARKDOWN = mistune.Markdown(
    renderer=_Renderer(), plugins=[mistune.import_plugin(p) for p in _PLUGINS]
)


def markdown_to_html(source: str) -> str:
    """The HTML nbconvert's ``markdown2html_mistune`` gives for ``source``.

    Examples
    --------
    >>> out = markdown_to_html("## Cost ratios\\n\\nWITH / WITHOUT, *per pair*.")
    >>> print(out.replace("</h2>", "</h2>\\n"), end="")
    <h2 id="Cost-ratios">Cost ratios<a class="anchor-link" href="#Cost-ratios">&#182;</a></h2>
    <p>WITH / WITHOUT, <em>per pair</em>.</p>
    """
    if _NBCONVERT_ONLY.search(source):
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        return markdown2html_mistune(source)
    return str(_MARKDOWN(source))
