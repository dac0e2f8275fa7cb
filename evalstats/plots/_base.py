"""What every figure shares: palette, style, sizes, titles, text fitting, layout and saving."""

from __future__ import annotations

import functools
import io
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure
from matplotlib.font_manager import FontProperties
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.textpath import TextToPath
from matplotlib.transforms import Bbox, ScaledTranslation

from .._schema import ARMS
from ..records import DEFAULT_ARM_NAMES, atomic_write

STYLE: dict[str, Any] = {
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": False,
    "grid.color": "#DDDDDD",
    "grid.linewidth": 0.6,
    "svg.fonttype": "none",  # text stays text in SVG: searchable and editable
    "svg.hashsalt": "evalstats",  # stable element ids: SVGs diff cleanly between runs
    # Journals ask for Type 1 or TrueType fonts; matplotlib's default (3) embeds Type 3.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}


# Okabe & Ito (2008), "Color Universal Design".
OKABE_ITO: dict[str, str] = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
OUTCOME_COLORS: dict[str, str] = {
    "win": OKABE_ITO["blue"],
    "tie": OKABE_ITO["yellow"],
    "loss": OKABE_ITO["vermillion"],
    "no_answer": "#C8C8C8",
    "invalid": "#8C8C8C",
    "error": "#4D4D4D",
    "conflict": OKABE_ITO["reddish_purple"],
    "missing": "#FFFFFF",
}
ARM_COLORS: dict[str, str] = {"with": OKABE_ITO["blue"], "without": OKABE_ITO["orange"]}
# Line colours in order; yellow is left out (too light for a line on white).
LINE_COLORS = (
    "blue",
    "vermillion",
    "bluish_green",
    "reddish_purple",
    "orange",
    "sky_blue",
    "black",
)
LINE_STYLES = ("-", "--", "-.", ":")
EDGE = "#333333"

#: Widths of the presets in inches: a column and the text width of a two-column paper.
WIDTHS: dict[str, float] = {"column": 3.5, "page": 7.0}

# Sizes relative to the caller's rcParams["font.size"], where the caller left the default.
_RELATIVE_SIZES: dict[str, str] = {"axes.titlesize": "medium", "axes.labelsize": "small",
                                   "xtick.labelsize": "small", "ytick.labelsize": "small",
                                   "legend.fontsize": "small", "legend.title_fontsize": "small",
                                   "figure.titlesize": "medium"}  # fmt: skip
# Below this, print is hard to read; the layouts abbreviate and wrap instead of shrinking.
MIN_FONT_PT = 6.0

_F = TypeVar("_F", bound=Callable[..., Any])


def style() -> dict[str, Any]:
    """The rc settings a figure is built under, given the caller's current rcParams."""
    rc = dict(STYLE)
    for key, value in _RELATIVE_SIZES.items():
        if matplotlib.rcParams[key] == matplotlib.rcParamsDefault[key]:
            rc[key] = value
    return rc


def styled(func: _F) -> _F:
    """Build the figure under the package style without touching the caller's rcParams."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context(style()):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


class PlotFigure(Figure):
    """A :class:`~matplotlib.figure.Figure` that shows itself as a PNG in Jupyter (no pyplot)."""

    def _repr_png_(self) -> bytes:
        return render_figure(self, dpi=max(int(self.dpi), 100), formats=("png",))["png"]


def font_pt(scale: float = 1.0) -> float:
    """``scale`` × rcParams["font.size"], never below :data:`MIN_FONT_PT` (nor the base)."""
    base = float(matplotlib.rcParams["font.size"])
    return max(min(base, MIN_FONT_PT), scale * base)


def size_pt(name: str) -> float:
    """The size in points of an rc font setting such as ``"xtick.labelsize"``."""
    return float(FontProperties(size=matplotlib.rcParams[name]).get_size_in_points())


@functools.lru_cache(maxsize=4096)
def _line_width_pt(line: str, size: float, family: tuple[str, ...]) -> float:
    prop = FontProperties(family=list(family), size=size)
    width, _, _ = TextToPath().get_text_width_height_descent(line, prop, ismath=False)
    return float(width)


def text_width_in(text: str, size: float) -> float:
    """The width of ``text`` (its longest line) in inches, as the current font draws it."""
    family = tuple(matplotlib.rcParams["font.family"])
    lines = str(text).split("\n")
    return max((_line_width_pt(line, float(size), family) for line in lines), default=0.0) / 72.0


def wrap(text: str, width_in: float, size: float, *, hyphens: bool = True) -> str:
    """``text`` wrapped to ``width_in`` inches at spaces (and hyphens of a too-wide word)."""
    out = []
    for line in str(text).split("\n"):
        pieces = []
        for word in line.split(" "):
            if hyphens and text_width_in(word, size) > width_in and "-" in word:
                parts = re.findall(r"[^-]*-+|[^-]+$", word)
                pieces += [(p, "") for p in parts[:-1]] + [(parts[-1], " ")]
            else:
                pieces.append((word, " "))
        current, sep = "", ""
        for piece, after in pieces:
            trial = current + sep + piece
            if current and text_width_in(trial, size) > width_in:
                out.append(current)
                current = piece
            else:
                current = trial
            sep = after
        out.append(current)
    return "\n".join(out)


def arm_labels(arm_names: Mapping[str, str] | None) -> dict[str, str]:
    """What a figure calls the two arms (whitespace collapsed), WITH / WITHOUT by default.

    >>> arm_labels({"with": "Serena MCP"})
    {'with': 'Serena MCP', 'without': 'WITHOUT'}
    """
    names = dict(DEFAULT_ARM_NAMES)
    if arm_names is None:
        return names
    if not isinstance(arm_names, Mapping):
        raise TypeError(
            f"arm_names must be a mapping such as {{'with': 'Serena MCP'}}, got "
            f"{type(arm_names).__name__}"
        )
    unknown = sorted(str(k) for k in arm_names if k not in ARMS)
    if unknown:
        raise ValueError(f"arm_names has unknown key(s) {unknown}; the arms are {list(ARMS)}")
    for arm, value in arm_names.items():
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"arm_names[{arm!r}] must be a non-empty string, got {value!r}")
        names[arm] = " ".join(value.split())
    return names


@dataclass
class Canvas:
    """Where a plotting function draws: its axes, and the (sub)figure that holds them."""

    fig: Figure | SubFigure
    axes: list[Axes]
    owned: bool  # the function created the figure (so it may title and size it)
    width: float  # inches of the figure, or of the caller's (sub)figure

    @property
    def root(self) -> Figure:
        return self.axes[0].get_figure(root=True) if self.axes else self.fig  # type: ignore[return-value]


def _axes_list(made: Any) -> list[Axes]:
    return [made] if isinstance(made, Axes) else list(np.ravel(np.asarray(made, dtype=object)))


def panels(
    n: int, side: Callable[[float], bool], row: dict | None = None, column: dict | None = None
) -> Callable[[Figure], Any]:
    """A ``make`` for :func:`new_canvas`: ``n`` panels in a row when ``side(width)``, else stacked."""

    def make(fig: Figure) -> Any:
        if side(fig.get_figwidth()):
            return fig.subplots(1, n, squeeze=False, **(row or {}))[0]
        return fig.subplots(n, 1, squeeze=False, **(column or {}))[:, 0]

    return make


def new_canvas(
    what: str,
    ax: Any,
    width: str | float | None,
    figsize: Sequence[float] | None,
    height: Callable[[float], float],
    *,
    n_axes: int = 1,
    make: Callable[[Figure], Any] = Figure.subplots,
) -> Canvas:
    """The caller's ``ax`` (``n_axes`` of them) or a new :class:`PlotFigure`, ``height(w)`` tall."""
    if ax is not None:
        if figsize is not None:
            raise ValueError("pass ax= or figsize=, not both")
        axes = _axes_list(ax)
        if not axes or not all(isinstance(a, Axes) for a in axes):
            raise TypeError(f"ax must be a matplotlib Axes or a sequence of them, got {ax!r}")
        if len(axes) != n_axes:
            raise ValueError(
                f"{what} draws {n_axes} panel(s): pass ax= a sequence of {n_axes} Axes"
            )
        parent = axes[0].get_figure(root=False)
        return Canvas(parent, axes, False, float(parent.bbox.width) / parent.dpi)
    if figsize is not None:
        if len(figsize) != 2 or not all(np.isfinite(v) and v > 0 for v in figsize):
            raise ValueError(f"figsize must be (width, height) in inches, got {figsize!r}")
        w = float(figsize[0])
    elif isinstance(width, str):
        if width not in WIDTHS:
            raise ValueError(f"width must be one of {sorted(WIDTHS)} or inches, got {width!r}")
        w = WIDTHS[width]
    else:
        w = WIDTHS["page"] if width is None else float(width)
        if not np.isfinite(w) or w < 2.0:
            raise ValueError(f"width must be at least 2 inches, got {width!r}")
    # Larger type needs taller panels (tick labels stack vertically); never shorter.
    grow = max(1.0, float(matplotlib.rcParams["font.size"]) / 10.0)
    h = float(figsize[1]) if figsize is not None else float(height(w)) * grow
    fig = PlotFigure(figsize=(w, h), layout="constrained")
    return Canvas(fig, _axes_list(make(fig)), True, w)


def _title(title: Any, default: str) -> str | None:
    """The title to draw: ``default`` for None, nothing for False or ""."""
    if title is not None and title is not False and not isinstance(title, str):
        raise TypeError(f"title must be None, False or a str, got {type(title).__name__}")
    return None if title is False or title == "" else default if title is None else title


def figure_title(canvas: Canvas, title: str | bool | None, default: str) -> None:
    """The figure's title, wrapped; a default one only on a figure made here."""
    text = _title(title, default)
    if text is not None and (canvas.owned or title is not None):
        canvas.fig.suptitle(wrap(text, canvas.width - 0.15, size_pt("figure.titlesize")))


def axes_title(ax: Axes, title: str | bool | None, default: str, width_in: float) -> None:
    text = _title(title, default)
    if text is not None:
        ax.set_title(wrap(text, width_in, size_pt("axes.titlesize")))


def legend_columns(labels: Sequence[str], width_in: float, size: float) -> int:
    """How many legend columns of these labels fit ``width_in`` inches (handles included)."""
    widest = max((text_width_in(lab, size) for lab in labels), default=0.0) + 0.4
    return int(max(1, min(len(labels), width_in // max(widest, 1e-6))))


def figure_legend(canvas: Canvas, handles: list, labels: list[str], ax: Axes | None = None) -> None:
    """The legend under the figure, labels wrapped to its width (in ``ax`` on a caller's)."""
    pt = size_pt("legend.fontsize")
    labels = [wrap(lab, canvas.width - 0.6, pt) for lab in labels]
    ncol = legend_columns(labels, canvas.width - 0.2, pt)
    if ax is not None and not canvas.owned:
        ax.legend(handles, labels, loc="upper center", ncols=ncol, frameon=False)
    else:
        canvas.fig.legend(handles, labels, loc="outside lower center", ncols=ncol, frameon=False)


def num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def asym_err(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error-bar lengths; NaN bounds become 0-length bars (nothing drawn)."""
    lo = np.where(np.isfinite(low), value - low, 0.0)
    hi = np.where(np.isfinite(high), high - value, 0.0)
    return np.vstack([np.maximum(lo, 0.0), np.maximum(hi, 0.0)])


def conf_text(confidence: float | None) -> str:
    return f"{round(100 * confidence)} % CI" if confidence is not None else "CI"


# Tick formatters are module functions, not lambdas, so that a figure can be pickled.
def format_pp(v: float, _pos: Any = None) -> str:
    return f"{100 * v:+.0f} pp" if abs(v) > 1e-12 else "0"


def format_times(v: float, _pos: Any = None) -> str:
    return f"{v:g}×"


def legend_below(
    ax: Axes, *, ncol: int, title: str | None = None, labels: Sequence[str] | None = None
) -> None:
    """The axes' legend under its x axis label; ``labels`` replace the artists' own."""
    lines = ax.get_xlabel().count("\n") + 1 if ax.get_xlabel() else 0
    ticks = max((t.get_text().count("\n") + 1 for t in ax.get_xticklabels()), default=1)
    drop_pt = (
        10.0 + 1.25 * size_pt("xtick.labelsize") * ticks + 1.25 * size_pt("axes.labelsize") * lines
    )
    fig = ax.get_figure(root=False)
    below = ax.transAxes + ScaledTranslation(0, -drop_pt / 72.0, fig.dpi_scale_trans)
    handles, own = ax.get_legend_handles_labels()
    ax.legend(handles, own if labels is None else list(labels), loc="upper center",
              bbox_to_anchor=(0.5, 0.0), bbox_transform=below, ncols=ncol, frameon=False,
              title=title)  # fmt: skip


# How long a vertical tick label's line may be: a third of a column figure's height.
_VERTICAL_LINE_IN = 1.3


def fit_ticks(ax: Axes, x: Any, labels: Sequence[str], slot_in: float, size: float) -> None:
    """Tick labels wrapped to ``slot_in`` inches at spaces; vertical when a word is wider."""
    wrapped = [wrap(lab, slot_in, size, hyphens=False) for lab in labels]
    if max((text_width_in(w, size) for w in wrapped), default=0.0) <= slot_in:
        ax.set_xticks(x, wrapped)
        return
    vertical = [
        wrap(lab.replace("\n", " "), _VERTICAL_LINE_IN, size, hyphens=False) for lab in labels
    ]
    ax.set_xticks(x, vertical, rotation=90, multialignment="center")


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
        Any matplotlib Figure.
    path_stem : path-like
        The files' path without a suffix (directory created).
    formats : sequence of str, default ("pdf", "svg", "png")
        Any of ``pdf``, ``svg`` and ``png``.
    dpi : int, default 300
        Raster resolution (at least 200).
    tight : bool, default False
        Crop to the drawn content.

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
        path = stem.with_name(f"{stem.name}.{fmt}")
        atomic_write(path, lambda fh, data=data: fh.write(data))
        # The atomic writer's temporary file is private (0600); figures are for sharing.
        path.chmod(0o644)
        paths.append(path)
    return paths


def layout_figure(fig: Figure) -> Any:
    """Settle and freeze ``fig``'s layout; return its tight bounding box (inches).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(3, 2), layout="constrained"); _ = fig.subplots().plot([1, 2])
    >>> bbox = layout_figure(fig)
    >>> bool(0 < bbox.width <= 3.3), fig.get_layout_engine().__class__.__name__
    (True, 'PlaceHolderLayoutEngine')
    """
    with matplotlib.rc_context(STYLE):
        engine = fig.get_layout_engine()
        if engine is not None:
            engine.execute(fig)
        bbox = fig.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
        fig.set_layout_engine("none")  # keeps the settled positions
    return bbox


def render_figure(
    fig: Figure, *, dpi: int = 300, formats: Sequence[str] = ("png", "svg"), bbox: Any = None
) -> dict[str, bytes]:
    """The bytes of ``fig`` in each format, laid out once, reproducible byte for byte.

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
                # savefig draws twice while the figure has any layout engine, even this one.
                fig.set_layout_engine(None)
            for fmt in formats:
                buf = io.BytesIO()
                fig.savefig(buf, format=fmt, dpi=int(dpi), bbox_inches=bbox, facecolor="white",
                            metadata=_METADATA[fmt])  # fmt: skip
                out[fmt] = buf.getvalue()
    finally:
        if isinstance(frozen, PlaceHolderLayoutEngine):
            fig.set_layout_engine(frozen)
        if engine is not None:
            fig.set_layout_engine(engine)
    return out
