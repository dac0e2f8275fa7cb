"""A report's figure files: which formats are written, and writing them.

The pages show every figure as SVG, inlined. Beside it, in ``OUT/figures/``, each figure is
written in the formats asked for (``evalstats report --figures``): by default SVG and PDF
(TrueType fonts, ``pdf.fonttype`` 42, for a paper); PNG (300 dpi) only when asked. The
figure is laid out once (:func:`evalstats.plots.layout_figure`) and every format is drawn
from that layout with matplotlib's ``savefig``, in the kernel that drew it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._kinds import ReportError

__all__ = ["DEFAULT_FORMATS", "FORMATS", "check_formats", "write_figure"]

# Every format a figure file may be written in, and what is written unless asked otherwise.
FORMATS = ("svg", "pdf", "png")
DEFAULT_FORMATS = ("svg", "pdf")
_FILE_DPI = 300


def check_formats(formats: str | Iterable[str]) -> list[str]:
    """The figure formats ``formats`` names (``"svg,pdf"`` or a sequence), checked.

    Raises :class:`~evalstats.report.ReportError` for an unknown, repeated or empty list
    (the renderer calls it before anything runs).

    >>> check_formats("svg,pdf,png")
    ['svg', 'pdf', 'png']
    >>> check_formats(["pdf"])
    ['pdf']
    >>> check_formats("svg,jpg")
    Traceback (most recent call last):
    ...
    evalstats.errors.ReportError: unknown figure format(s) jpg; known: svg, pdf, png
    """
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    names = [str(f).strip().lower() for f in items]
    unknown = [f for f in names if f not in FORMATS]
    if unknown:
        raise ReportError(
            f"unknown figure format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}"
        )
    if not names or len(set(names)) != len(names):
        raise ReportError(f"figure formats must be a non-empty list without repeats, got {items}")
    return names


def write_figure(
    fig: Any, name: str, figures: Path | None, formats: Iterable[str] = DEFAULT_FORMATS
) -> tuple[bytes, Any]:
    """Lay ``fig`` out once, write ``figures/<name>.<format>`` for each of ``formats``
    (atomically, mode 0644; nothing when ``figures`` is None) and return the SVG the page
    shows with the laid-out bounding box (inches)."""
    from .. import plots
    from ..records import atomic_write

    formats = check_formats(formats)
    bbox = plots.layout_figure(fig)
    svg = plots.render_figure(fig, formats=("svg",), bbox=bbox)["svg"]
    if figures is None:
        return svg, bbox
    others = [f for f in formats if f != "svg"]
    rendered = {"svg": svg, **plots.render_figure(fig, dpi=_FILE_DPI, formats=others, bbox=bbox)}
    for fmt in formats:
        target = figures / f"{name}.{fmt}"
        atomic_write(target, lambda fh, data=rendered[fmt]: fh.write(data))
        target.chmod(0o644)  # figures are for sharing (the temporary file was 0600)
    return svg, bbox
