"""PNG files written from matplotlib's Agg buffer without per-row filter selection.

Pillow (what matplotlib's ``print_png`` writes with) tries the five PNG row filters on every
row of an RGBA image and keeps the best; for a 300-dpi figure (about 2100 × 1400 pixels,
white background, flat colours) that search is two thirds of the encoding time and makes
the files ~9 % smaller. This writer stores every row unfiltered (filter type 0) and deflates it
at zlib level 1: the same pixels and resolution (``pHYs``), written in about a third of the
time. Registered with matplotlib as the save format :data:`FORMAT`, so a figure is drawn
exactly as ``savefig(format="png")`` draws it (same canvas, dpi, bounding box, facecolor).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
from matplotlib.backend_bases import register_backend
from matplotlib.backends.backend_agg import FigureCanvasAgg

__all__ = ["FORMAT", "FigureCanvas", "encode_png"]

# The save format ``render_figure`` passes to ``savefig`` for its PNG.
FORMAT = "evalstats_png"
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_LEVEL = 1


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def encode_png(rgba: Any, dpi: float, metadata: dict[str, str | None] | None = None) -> bytes:
    """The PNG bytes of an 8-bit RGBA image (``height × width × 4``) at ``dpi``.

    ``metadata`` entries with a value become ``tEXt`` chunks (``None`` leaves one out, as
    in matplotlib). The resolution is stored as pixels per metre, rounded as Pillow does.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from PIL import Image
    >>> rgba = np.zeros((2, 3, 4), np.uint8); rgba[..., 0] = 255; rgba[..., 3] = 255
    >>> im = Image.open(io.BytesIO(encode_png(rgba, dpi=300)))
    >>> im.mode, im.size, im.getpixel((2, 1)), round(im.info["dpi"][0])
    ('RGBA', (3, 2), (255, 0, 0, 255), 300)
    """
    image = np.asarray(rgba)
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 4:
        raise ValueError(f"expected an 8-bit RGBA image, got {image.dtype} {image.shape}")
    height, width = image.shape[:2]
    rows = np.empty((height, 1 + 4 * width), np.uint8)
    rows[:, 0] = 0  # filter type 0 (None) for every row
    rows[:, 1:] = image.reshape(height, 4 * width)
    per_metre = int(dpi / 0.0254 + 0.5)
    parts = [
        _SIGNATURE,
        _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)),
        _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
    ]
    for key, value in (metadata or {}).items():
        if value is not None:
            parts.append(_chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1")))
    parts.append(_chunk(b"IDAT", zlib.compress(rows, _LEVEL)))
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)


class FigureCanvas(FigureCanvasAgg):
    """matplotlib's Agg canvas, saving :data:`FORMAT` with :func:`encode_png`."""

    def print_evalstats_png(
        self,
        filename_or_obj: Any,
        *,
        metadata: dict[str, str | None] | None = None,
        **_print_figure_kwargs: Any,
    ) -> None:
        # print_figure has already applied dpi, facecolor and edgecolor to the figure (and
        # passes them, with orientation and bbox_inches_restore, to every print method).
        FigureCanvasAgg.draw(self)
        data = encode_png(self.buffer_rgba(), self.figure.dpi, metadata)
        if hasattr(filename_or_obj, "write"):
            filename_or_obj.write(data)
        else:
            with open(filename_or_obj, "wb") as fh:
                fh.write(data)


register_backend(FORMAT, __name__, "PNG, rows unfiltered (evalstats)")
