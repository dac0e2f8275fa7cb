"""The raster copies of a report's figures, rendered beside the kernel that draws them.

During ``evalstats report`` the kernel draws each figure once, lays it out, writes and shows
its SVG, and hands the laid-out figure (pickled, with its bounding box) to the renderer's
process, which renders the 300-dpi PNG (:func:`render_queued`) while the kernel goes on.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

__all__ = ["enqueue", "render_queued"]

_FILE_DPI = 300


def enqueue(queue: Path, name: str, fig: Any, bbox: Any) -> bool:
    """Hand a laid-out figure to the worker; False when it cannot be pickled (then the
    caller renders the PNG itself)."""
    try:
        blob = pickle.dumps({"name": name, "fig": fig, "bbox": bbox}, pickle.HIGHEST_PROTOCOL)
    except Exception:  # any unpicklable artist: fall back, never fail the page
        return False
    tmp = queue / f".{name}.tmp"
    tmp.write_bytes(blob)
    os.replace(tmp, queue / f"{time.monotonic_ns():020d}-{name}.pickle")  # atomic hand-over
    return True


def render_queued(path: Path, out: Path) -> Path:
    """Render one queued figure's PNG into ``out/figures`` (atomically, mode 0644)."""
    from .. import plots
    from ..records import atomic_write

    # Our own kernel wrote it into our own private temporary directory.
    item = pickle.loads(path.read_bytes())
    png = plots.render_figure(item["fig"], dpi=_FILE_DPI, formats=("png",), bbox=item["bbox"])
    target = out / "figures" / f"{item['name']}.png"
    atomic_write(target, lambda fh: fh.write(png["png"]))
    target.chmod(0o644)
    path.unlink()
    return target
