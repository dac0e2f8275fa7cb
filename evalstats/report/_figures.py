"""A report's figure files, rendered by whichever of the two processes is free.

During ``evalstats report`` the kernel draws each figure once, lays it out, writes and shows
its SVG; the PNG (300 dpi) and the PDF (TrueType fonts) are then rendered from the same
laid-out figure, either by the renderer's process (the kernel pickles the figure, with its
bounding box, into a queue that :func:`render_queued` drains while the kernel goes on) or,
when that process already has figures waiting (:func:`enqueue` says no), by the kernel
itself. After the last cell the kernel helps drain what is left (:func:`drain`): a queued
figure is claimed by renaming it, so each is rendered once, by whichever process takes it
first. The two cores share the drawing that way, to the end.
"""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

__all__ = [
    "FILE_FORMATS",
    "QUEUE_VAR",
    "drain",
    "enqueue",
    "render_queued",
    "warm_up",
    "write_figure_files",
]

# Where the kernel finds the renderer's queue (set in the kernel's environment).
QUEUE_VAR = "EVALSTATS_FIGURE_QUEUE"
# What is written beside each figure's SVG (which the kernel writes and shows itself).
FILE_FORMATS = ("png", "pdf")
_FILE_DPI = 300
# Figures queued and not yet rendered beyond which the kernel renders its own: one being
# rendered and one waiting keeps the renderer busy without a backlog at the end.
_QUEUE_LIMIT = 2


def _pending(queue: Path) -> int:
    return sum(1 for _ in queue.glob("*.pickle"))


def enqueue(
    queue: Path, name: str, fig: Any, bbox: Any, figures: Path, *, limit: int = _QUEUE_LIMIT
) -> bool:
    """Hand a laid-out figure to the renderer's process, to be rendered into ``figures``;
    False when that process already has ``limit`` figures to render, or the figure cannot
    be pickled (then the caller renders the files itself: :func:`write_figure_files`)."""
    if _pending(queue) >= limit:
        return False
    # Absolute: the renderer resolves it in its own working directory.
    item = {"name": name, "fig": fig, "bbox": bbox, "figures": os.path.abspath(figures)}
    try:
        blob = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
    except Exception:  # any unpicklable artist: fall back, never fail the page
        return False
    tmp = queue / f".{name}.tmp"
    tmp.write_bytes(blob)
    os.replace(tmp, queue / f"{time.monotonic_ns():020d}-{name}.pickle")  # atomic hand-over
    return True


def write_figure_files(fig: Any, bbox: Any, name: str, figures: Path) -> list[Path]:
    """Render ``fig`` (laid out: ``bbox`` from :func:`evalstats.plots.layout_figure`) as
    ``figures/<name>.png`` (300 dpi) and ``.pdf``, atomically, mode 0644."""
    from .. import plots
    from ..records import atomic_write

    rendered = plots.render_figure(fig, dpi=_FILE_DPI, formats=FILE_FORMATS, bbox=bbox)
    paths = []
    for fmt, data in rendered.items():
        target = figures / f"{name}.{fmt}"
        atomic_write(target, lambda fh, data=data: fh.write(data))
        target.chmod(0o644)  # figures are for sharing (the temporary file was 0600)
        paths.append(target)
    return paths


def render_queued(path: Path) -> list[Path]:
    """Render one queued figure's files into the directory it was queued for, unless the
    other process has claimed it first (then nothing is done: ``[]``); the item is removed."""
    claimed = path.with_name(f"{path.name}.{os.getpid()}.claimed")
    try:
        os.rename(path, claimed)  # atomic: of two processes, one wins
    except FileNotFoundError:
        return []
    # Our own kernel wrote it into our own private temporary directory.
    item = pickle.loads(claimed.read_bytes())
    paths = write_figure_files(item["fig"], item["bbox"], item["name"], Path(item["figures"]))
    claimed.unlink()
    return paths


def drain(queue: str | os.PathLike[str] | None = None) -> list[Path]:
    """Render every figure still queued in ``queue`` (default: the kernel's
    :data:`QUEUE_VAR`), oldest first, alongside the renderer's process: what the kernel
    runs after the last notebook cell, so that the last figures' files are not left to
    one process."""
    where = queue if queue is not None else os.environ.get(QUEUE_VAR)
    if not where:
        return []
    paths: list[Path] = []
    for path in sorted(Path(where).glob("*.pickle")):
        paths += render_queued(path)
    return paths


def warm_up() -> None:
    """Pay the first figure's one-off costs (the SVG, PNG and PDF backends and encoders,
    font loading, fontTools) now: the kernel calls it as it starts, while it would
    otherwise wait for the first page's numbers, so that its first figure does not."""
    from matplotlib.figure import Figure

    from .. import plots

    fig = Figure(figsize=(2.0, 1.5), layout="constrained")
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="a")
    ax.set_title("warm-up 0.5 %", fontweight="bold")
    ax.set_xlabel("x")
    ax.legend()
    plots.render_figure(fig, dpi=72, formats=("svg", "png", "pdf"))
