"""Writing figures: laid out once, then PDF (TrueType fonts), SVG (text as text) and PNG."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.transforms import Bbox

from ..records import atomic_write
from ._style import STYLE

_FORMATS = ("pdf", "svg", "png")
# ``set_layout_engine(None)`` would pick these up; rendering a settled figure never should.
_NO_AUTO_LAYOUT = {"figure.autolayout": False, "figure.constrained_layout.use": False}
# Metadata without dates or versions: the same figure gives the same bytes.
_METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
}


def save_figure(
    fig: Figure,
    path_stem: str | os.PathLike[str],
    *,
    formats: Sequence[str] = ("pdf", "svg", "png"),
    dpi: int = 300,
    tight: bool = False,
) -> list[Path]:
    """Write ``fig`` as ``path_stem.pdf``, ``.svg`` and ``.png`` (atomically, mode 0644).

    Parameters
    ----------
    fig : Figure
        A figure from this package (or any matplotlib Figure).
    path_stem : path-like
        The files' path without a suffix, e.g. ``"figures/headline"``; its directory is
        created if needed.
    formats : sequence of str, default ("pdf", "svg", "png")
        Any of ``pdf`` (TrueType fonts, ``pdf.fonttype = 42``, as journals ask), ``svg``
        (text kept as text) and ``png``.
    dpi : int, default 300
        Raster resolution (at least 200).
    tight : bool, default False
        Crop to the drawn content (matplotlib's ``bbox_inches="tight"``). By default the
        file has the figure's own size, e.g. exactly 3.5 in for ``width="column"``.

    Returns
    -------
    list of Path
        The files written, in ``formats`` order.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from matplotlib.figure import Figure
    >>> from evalstats.plots import save_figure
    >>> fig = Figure(); _ = fig.subplots().plot([1, 2])
    >>> [p.suffix for p in save_figure(fig, Path(tempfile.mkdtemp()) / "demo")]
    ['.pdf', '.svg', '.png']
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    stem = Path(path_stem)
    if not stem.name or stem.name in (".", ".."):
        raise ValueError(f"path_stem must name a file, got {str(path_stem)!r}")
    if int(dpi) < 200:
        raise ValueError(f"dpi must be at least 200 for publication, got {dpi}")
    bad = [f for f in formats if f not in _FORMATS]
    if bad or not formats or isinstance(formats, str):
        raise ValueError(f"formats must be among pdf, svg, png, got {formats!r}")
    engine = fig.get_layout_engine()
    bbox = layout_figure(fig)
    try:
        if not tight:
            bbox = Bbox.from_bounds(0, 0, *fig.get_size_inches())
        rendered = render_figure(fig, dpi=dpi, formats=formats, bbox=bbox)
    finally:
        fig.set_layout_engine(engine)
    paths = []
    for fmt, data in rendered.items():
        # The stem may hold dots ("fig.v2"): append the suffix instead of replacing one.
        path = stem.with_name(f"{stem.name}.{fmt}")
        atomic_write(path, lambda fh, data=data: fh.write(data))
        # The atomic writer's temporary file is private (0600); figures are for sharing.
        path.chmod(0o644)
        paths.append(path)
    return paths


def layout_figure(fig: Figure) -> Any:
    """Settle ``fig``'s layout, freeze it, and return its tight bounding box (inches).

    After this, every rendering of ``fig`` (any format, any dpi, in this process or after
    pickling it to another) is one draw at the same positions: what :func:`render_figure`
    does first.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(3, 2), layout="constrained"); _ = fig.subplots().plot([1, 2])
    >>> bbox = layout_figure(fig)
    >>> bool(0 < bbox.width <= 3.3), fig.get_layout_engine().__class__.__name__
    (True, 'PlaceHolderLayoutEngine')
    """
    with matplotlib.rc_context(STYLE):
        # One layout pass, then frozen: every later rendering draws at these positions, so
        # the same figure gives the same bytes whenever and wherever it is saved. The
        # engine is run as a draw would run it first, without the draw itself: the tight
        # box measures every artist anyway, and the rest of a draw (a third of the time)
        # would be redone by the first rendering (the files are byte-identical).
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
        bbox = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
        fig.set_layout_engine("none")  # keeps the settled positions
    return bbox


def render_figure(
    fig: Figure,
    *,
    dpi: int = 300,
    formats: Sequence[str] = ("png", "svg"),
    bbox: Any = None,
) -> dict[str, bytes]:
    """The bytes of ``fig`` in each format, laid out once (what :func:`save_figure` writes).

    The layout (constrained, then the tight bounding box) is computed once and frozen
    (:func:`layout_figure`; pass its ``bbox`` when already done), so each format costs one
    draw instead of a layout pass and two draws (matplotlib's ``savefig`` draws twice while
    a figure has a layout engine, even a frozen one); the bytes are the same whenever the same
    figure is rendered (no dates or versions in the metadata). PDF embeds TrueType fonts.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(); _ = fig.subplots().plot([1, 2])
    >>> out = render_figure(fig)
    >>> sorted(out), out["png"][:4]
    (['png', 'svg'], b'\x89PNG')
    """
    engine = None
    if bbox is None:
        engine = fig.get_layout_engine()
        bbox = layout_figure(fig)
    frozen = fig.get_layout_engine()
    out: dict[str, bytes] = {}
    try:
        with matplotlib.rc_context({**STYLE, **_NO_AUTO_LAYOUT}):
            if isinstance(frozen, PlaceHolderLayoutEngine):
                # savefig draws twice while the figure has any layout engine, the frozen
                # placeholder included (a first draw "to make sure the layout works"):
                # without one, each format is one draw at the settled positions.
                fig.set_layout_engine(None)
            for fmt in formats:
                buf = io.BytesIO()
                fig.savefig(
                    buf,
                    format=fmt,
                    dpi=int(dpi),
                    bbox_inches=bbox,
                    facecolor="white",
                    metadata=_METADATA[fmt],
                )
                out[fmt] = buf.getvalue()
    finally:
        if isinstance(frozen, PlaceHolderLayoutEngine):
            fig.set_layout_engine(frozen)
        if engine is not None:
            fig.set_layout_engine(engine)
    return out
