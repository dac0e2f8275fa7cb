"""``evalstats report --pdf``: each rendered page printed by its own headless Chromium (one
target per run), offline, merged with pypdf into ``OUT/report.pdf`` (added to the manifest)."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ..records import atomic_write
from ._kinds import ReportError

__all__ = ["CHROMIUM_NAMES", "find_chromium", "print_pdf", "report_pages", "require_pypdf"]

PDF_NAME = "report.pdf"
_TIMEOUT = 180  # seconds per page
_PIPES = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
# Looked up on PATH in this order unless EVALSTATS_CHROMIUM names the binary.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
# No network (file:// only), no profile left behind, nothing but the page on the paper.
_FLAGS = (
    *"--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync --disable-extensions".split(),
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--no-pdf-header-footer",
)
_INSTALL = (
    "install Debian's chromium with scripts/install-chromium.sh (in the source tree; "
    "`make chromium`) or set EVALSTATS_CHROMIUM to a Chromium or Chrome binary"
)


def find_chromium() -> str:
    """``$EVALSTATS_CHROMIUM``, else the first of :data:`CHROMIUM_NAMES` on ``PATH``."""
    named = os.environ.get("EVALSTATS_CHROMIUM")
    if named:
        found = shutil.which(named)
        if found is None:
            raise ReportError(f"--pdf: EVALSTATS_CHROMIUM={named} is not an executable; {_INSTALL}")
        return found
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found is not None:
            return found
    raise ReportError(
        f"--pdf needs Chromium, and none of {', '.join(CHROMIUM_NAMES)} is on PATH; {_INSTALL}"
    )


def require_pypdf() -> Any:
    """The ``pypdf`` module, or a :class:`ReportError` naming the extra that installs it."""
    try:
        import pypdf
    except ImportError:
        raise ReportError(
            "--pdf needs pypdf to merge the printed pages: pip install 'evalstats-withwithout[pdf]'"
        ) from None
    return pypdf


def report_pages(out_dir: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The (file, title) of each page of a rendered report: ``index.html``, then its nav's."""
    out = Path(out_dir)
    index = out / "index.html"
    if not index.is_file():
        raise ReportError(f"{index}: no rendered report to print (run `evalstats report` first)")
    # The page() we wrote: one title, one nav; only the report's own pages, beside index.html.
    text = index.read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", text, re.S)
    nav = re.search(r'<nav class="pages">(.*?)</nav>', text, re.S)
    pages = [("index.html", (html.unescape(title.group(1)).strip() if title else "") or "Report")]
    for href, label in re.findall(r'<a href="([^"]*)">(.*?)</a>', nav.group(1) if nav else ""):
        href, label = html.unescape(href), html.unescape(label).strip()
        if href.endswith(".html") and "/" not in href and ":" not in href:
            if href == "index.html":
                pages[0] = (href, label or pages[0][1])
            elif (out / href).is_file() and href not in (p for p, _ in pages):
                pages.append((href, label or href))
    return pages


def print_pdf(out_dir: str | os.PathLike[str], *, chromium: str | None = None) -> Path:
    """Print a rendered report's pages (:func:`report_pages`) through headless Chromium
    (``chromium``, default :func:`find_chromium`) into ``OUT/report.pdf``, one bookmark per
    page; returns its path."""
    from ._results import MANIFEST, read_manifest, sha256_file, write_manifest

    out = Path(out_dir)
    pages = report_pages(out)
    binary = chromium or find_chromium()
    pypdf = require_pypdf()
    with tempfile.TemporaryDirectory(prefix="evalstats-pdf-") as tmp:
        # One process per page, all at once, each with its own profile (a profile is locked).
        jobs = []
        for k, (page, _) in enumerate(pages):
            pdf = Path(tmp) / f"page-{k}.pdf"
            cmd = [binary, *_FLAGS, f"--user-data-dir={Path(tmp) / f'profile-{k}'}"]
            cmd += [f"--print-to-pdf={pdf}", (out / page).resolve().as_uri()]
            jobs.append((page, pdf, subprocess.Popen(cmd, **_PIPES)))
        try:
            for page, pdf, proc in jobs:
                try:
                    _, err = proc.communicate(timeout=_TIMEOUT)
                except subprocess.TimeoutExpired:
                    raise ReportError(f"{binary} did not print {page} in {_TIMEOUT} s") from None
                if proc.returncode != 0 or not pdf.is_file() or pdf.stat().st_size == 0:
                    lines = [ln for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
                    raise ReportError(
                        f"{binary} could not print {page} (exit {proc.returncode}): "
                        + (lines[-1] if lines else "no message")
                    )
        finally:
            for _, _, proc in jobs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        writer = pypdf.PdfWriter()
        for (_, pdf, _), (_, title) in zip(jobs, pages, strict=True):
            writer.append(os.fspath(pdf), outline_item=title)
        writer.add_metadata({"/Title": pages[0][1], "/Creator": "evalstats report --pdf"})
        target = out / PDF_NAME
        atomic_write(target, writer.write)
    digest = sha256_file(target)
    if (out / MANIFEST).is_file() and digest is not None:  # else not a render's directory
        write_manifest(out, read_manifest(out) | {PDF_NAME: digest})
    return target
