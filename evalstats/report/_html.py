"""Self-contained HTML pages from executed notebooks: markdown and outputs only (images as
``data:`` URIs in ``<img>``, escaped tables and text), no outside resources, and a
Content-Security-Policy that forbids scripts (nbconvert's templates load a CDN)."""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from typing import Any

from nbconvert.filters.markdown_mistune import markdown2html_mistune

from ._untrusted import show_bidi

__all__ = ["UnsafeOutputError", "active_markup", "notebook_body", "page"]

# No script, no outside host: images from data: URIs only, styles from the page itself.
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)

_FORBIDDEN_TAGS = frozenset(
    "script iframe frame object embed link meta base form input button audio video source svg "
    "math template".split()
)


class _ActiveMarkup(HTMLParser):
    """Finds markup that could run code or fetch from elsewhere (text content is inert)."""

    def __init__(self, *, page: bool = False) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        # A whole page may hold its own <meta> tags and <style> (checked for imports).
        self._allowed = {"meta"} if page else set()
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_style = tag == "style"
        if tag in _FORBIDDEN_TAGS - self._allowed:
            self.found.append(f"<{tag}>")
        if tag == "meta" and (dict(attrs).get("http-equiv") or "").lower() == "refresh":
            self.found.append("<meta http-equiv=refresh>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.found.append(f"{name}= on <{tag}>")
            elif name in ("src", "srcset", "poster", "data", "formaction", "xlink:href"):
                if not value.strip().startswith("data:image/"):
                    self.found.append(f"{name}={value[:40]!r} on <{tag}>")
            elif name == "href" and re.match(r"^\s*(javascript|vbscript|data):", value, re.I):
                self.found.append(f"href={value[:40]!r}")
            elif name == "style" and re.search(r"url\s*\(|expression\s*\(", value, re.I):
                self.found.append(f"style={value[:40]!r}")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and re.search(r"@import|url\s*\(", data, re.IGNORECASE):
            self.found.append("a stylesheet import or url()")


def active_markup(document: str, *, page: bool = False) -> list[str]:
    """What in ``document`` could run code or load something from outside (empty: nothing)."""
    parser = _ActiveMarkup(page=page)
    parser.feed(document)
    parser.close()
    return parser.found


CSS = """
:root { --fg:#1d1f23; --muted:#5b6270; --line:#d8dbe2; --accent:#1f5fa8; --bg:#fff;
        --warn-bg:#fff4d6; --warn-line:#e0a800; }
* { box-sizing: border-box; }
body { margin:0; color:var(--fg); background:var(--bg);
       font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; }
main { max-width: 1320px; overflow-wrap: break-word; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
nav.pages { font-size: .9rem; margin-bottom: 1rem; color: var(--muted); }
nav.pages a { color: var(--accent); margin-right: 1rem; }
.headline-card { border-left:4px solid var(--accent); background:#f3f7fc; padding:.7rem 1rem;
                 margin: 0 0 1.25rem; border-radius:0 4px 4px 0; }
.headline-card p { margin: 0; max-width: 90ch; }
.banner { border:2px solid var(--warn-line); background:var(--warn-bg); padding:.75rem 1rem;
          margin: 0 0 1.25rem; font-weight:600; border-radius:4px; }
h1 { font-size: 1.8rem; margin: .2rem 0 .8rem; }
h2 { font-size: 1.35rem; margin: 2.2rem 0 .6rem; padding-top:.6rem;
     border-top:1px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
p, li { max-width: 80ch; }
code { font-family: ui-monospace,SFMono-Regular,Menlo,Consolas,monospace; font-size:.9em; }
pre { background:#f6f7f9; border:1px solid var(--line); padding:.6rem .8rem; overflow-x:auto;
      font-size:.85rem; white-space:pre-wrap; word-break:break-word; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border:1px solid var(--line); }
.table-wrap { overflow-x: auto; max-width: 100%; margin: .6rem 0 1rem; }
.matrices { display: flex; flex-wrap: wrap; column-gap: 2.5rem; }
table { border-collapse: collapse; font-size: .74rem; font-variant-numeric: tabular-nums; }
.wide > table { font-size: .7rem; }
caption { caption-side: top; text-align:left; font-weight:600; padding:.2rem 0 .4rem;
          color: var(--muted); }
th, td { border-bottom: 1px solid var(--line); padding: .3em .45em; text-align: right;
         vertical-align: top; }
th { background:#f0f2f5; overflow-wrap: normal; }
td.num { white-space: nowrap; }
@media screen and (min-width: 1200px) { td.ci span { white-space: nowrap; } }
td.text, th.text { text-align: left; }
td.long, th.long { text-align: left; min-width: 30ch; max-width: 60ch; white-space: pre-wrap;
                   overflow-wrap: anywhere; }
td code { overflow-wrap: anywhere; }
a.anchor-link { visibility: hidden; text-decoration: none; margin-left: .3rem; }
h1:hover a.anchor-link, h2:hover a.anchor-link, h3:hover a.anchor-link { visibility: visible; }
/* A table too wide even wrapped scrolls in its box, its first column (the row's name) kept. */
.table-wrap td:first-child, .table-wrap thead th:first-child { position: sticky; left: 0; }
.table-wrap td:first-child { background: var(--bg); }
tbody tr:nth-child(even), .table-wrap tbody tr:nth-child(even) > td { background: #fafbfc; }
.note { color: var(--muted); font-size: .9rem; }
.unavailable { color:#8a4b00; font-style: italic; }
.figure-source { color:#555; font-size: 0.9em; margin-top: 0.2em; }
details.kernel { color: var(--muted); font-size: .8rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .8rem; }
@media screen and (max-width: 900px) {
  table, .wide > table { font-size: .66rem; }
  th, td { padding: .25em .3em; }
}
/* Print (and --pdf): margins for A4 and Letter alike. */
@page { margin: 14mm 12mm; }
@media print {
  body { font-size: 10pt; line-height: 1.4; font-variant-ligatures: no-common-ligatures; }
  main { max-width: none; padding: 0; overflow-wrap: break-word; }
  nav.pages, a.anchor-link { display: none; }
  a { color: inherit; text-decoration: none; }
  a::after { content: none; }
  h1, h2, h3, h4, caption { break-after: avoid; page-break-after: avoid; }
  h2 { margin-top: 1.4rem; }
  p, li { max-width: none; orphans: 3; widows: 3; }
  .table-wrap { overflow: visible; }
  table { font-size: 7pt; }
  .wide > table { font-size: 6.5pt; }
  th, td { padding: .25em .3em; }
  thead { display: table-header-group; }
  tr, figure, img, pre, .banner, .headline-card { break-inside: avoid; page-break-inside: avoid; }
  figure img { width: auto; max-width: 100%; max-height: 240mm; height: auto; }
  th, tbody tr:nth-child(even), .banner { print-color-adjust: exact;
                                          -webkit-print-color-adjust: exact; }
}
"""


class UnsafeOutputError(ValueError):
    """A notebook output holds active HTML (a script, a handler, an outside resource)."""


def _join(text: str | list[str]) -> str:
    return "".join(text) if isinstance(text, list) else str(text)


def _checked_html(fragment: str, where: str) -> str:
    found = active_markup(fragment)
    if found:
        raise UnsafeOutputError(
            f"{where}: HTML output contains {', '.join(found[:3])}; only escaped tables may be "
            "shown"
        )
    return fragment


def _scrubbed(value: Any, scrub: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrubbed(v, scrub) for v in value]
    if isinstance(value, Mapping):
        return {k: _scrubbed(v, scrub) for k, v in value.items()}
    return value


def _render_output(out: Mapping[str, Any], where: str) -> str:
    kind = out.get("output_type")
    if kind == "stream":
        text = html.escape(_join(out.get("text", "")))
        if out.get("name") == "stderr":
            return (
                f'<details class="kernel"><summary>kernel messages</summary><pre>{text}</pre>'
                "</details>"
            )
        return f"<pre>{text}</pre>"
    if kind == "error":
        tb = "\n".join(out.get("traceback", [])) or f"{out.get('ename')}: {out.get('evalue')}"
        tb = re.sub(r"\x1b\[[0-9;]*m", "", tb)
        return f"<pre>{html.escape(tb)}</pre>"
    data = out.get("data", {})
    alt = _join(data.get("text/plain", "figure"))[:200]
    meta = out.get("metadata", {})
    for mime in ("image/png", "image/svg+xml"):
        if mime in data:
            payload = _join(data[mime])
            if mime == "image/svg+xml":
                payload = base64.b64encode(payload.encode("utf-8")).decode("ascii")
            else:
                payload = "".join(payload.split())
            width = meta.get(mime, {}).get("width") if isinstance(meta.get(mime), Mapping) else None
            size = f' width="{int(width)}"' if isinstance(width, int | float) and width > 0 else ""
            src = f"data:{mime};base64,{payload}"
            return f'<figure><img alt="{html.escape(alt)}"{size} src="{src}"></figure>'
    if "text/html" in data:
        return _checked_html(_join(data["text/html"]), where)
    if "text/markdown" in data:
        return _checked_html(markdown2html_mistune(_join(data["text/markdown"])), where)
    if "text/plain" in data:
        return f"<pre>{html.escape(_join(data['text/plain']))}</pre>"
    return ""


def notebook_body(nb: Mapping[str, Any]) -> str:
    """HTML of an executed notebook's markdown and outputs (no inputs; credentials scrubbed)."""
    from ._results import scrub

    parts: list[str] = []
    for i, cell in enumerate(nb.get("cells", []), start=1):
        where = f"cell {i}"
        if cell.get("cell_type") == "markdown":
            text = _scrubbed(_join(cell.get("source", "")), scrub)
            parts.append(_checked_html(markdown2html_mistune(text), where))
        elif cell.get("cell_type") == "code":
            # Scrubbed before it is escaped or base64-encoded, so no form of a key survives.
            parts.extend(
                _render_output(_scrubbed(o, scrub), where) for o in cell.get("outputs", [])
            )
    return "\n".join(p for p in parts if p)


def page(
    title: str,
    body: str,
    *,
    banner: str | None = None,
    nav: Iterable[tuple[str, str]] = (),
    footer: str = "",
) -> str:
    """A complete HTML document: inline CSS, the CSP, credentials scrubbed, bidi shown."""
    from ._results import scrub

    title, body, footer = scrub(title), scrub(body), scrub(footer)
    banner = scrub(banner) if banner else banner
    nav = [(scrub(label), href) for label, href in nav]
    links = "".join(
        f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in nav
    )
    return show_bidi(
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n"
        + (f'<nav class="pages">{links}</nav>\n' if links else "")
        + (f'<div class="banner" role="alert">{html.escape(banner)}</div>\n' if banner else "")
        + body
        + (f"\n<footer>{html.escape(footer)}</footer>" if footer else "")
        + "\n</main>\n</body>\n</html>\n"
    )
