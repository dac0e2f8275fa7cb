"""What every figure shares: palette, rc style, the figure class, sizes, titles, text fitting,
and laying out and saving a figure (PDF with TrueType fonts, SVG, PNG)."""

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
from matplotlib.transforms import Bbox

from .._schema import ARMS
from ..records import DEFAULT_ARM_NAMES, atomic_write

__all__ = ["STYLE"]

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

#: Figure widths of the presets, in inches: one column and the full text width of a
#: two-column paper (the common journal and conference templates are 3.3–3.5 and 6.7–7.2 in).
WIDTHS: dict[str, float] = {"column": 3.5, "page": 7.0}

# No font size here: sizes follow the caller's rcParams["font.size"]. The named sizes below are
# relative to it and apply only where the caller has left matplotlib's default.
_RELATIVE_SIZES: dict[str, str] = {
    "axes.titlesize": "medium",
    "axes.labelsize": "small",
    "xtick.labelsize": "small",
    "ytick.labelsize": "small",
    "legend.fontsize": "small",
    "legend.title_fontsize": "small",
    "figure.titlesize": "medium",
}
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
    """A :class:`~matplotlib.figure.Figure` that shows itself as a PNG in Jupyter.

    The plotting functions build figures outside pyplot (no global registry, no backend), so
    IPython's matplotlib integration never sees them; ``_repr_png_`` lets any IPython display
    them inline without ``%matplotlib inline``.
    """

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
    from matplotlib.textpath import TextToPath

    prop = FontProperties(family=list(family), size=size)
    width, _, _ = TextToPath().get_text_width_height_descent(line, prop, ismath=False)
    return float(width)


def text_width_in(text: str, size: float) -> float:
    """The width of ``text`` (its longest line) in inches, as the current font draws it."""
    family = tuple(matplotlib.rcParams["font.family"])
    lines = str(text).split("\n")
    return max((_line_width_pt(line, float(size), family) for line in lines), default=0.0) / 72.0


def wrap(text: str, width_in: float, size: float, *, hyphens: bool = True) -> str:
    """``text`` wrapped to lines that fit ``width_in`` inches: at spaces, and inside a word
    after its hyphens only when the word alone is wider and ``hyphens``; a longer piece
    stays whole (the caller rotates or abbreviates)."""
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
    """What a figure calls the two arms: ``{"with": ..., "without": ...}``.

    ``WITH`` / ``WITHOUT`` unless ``arm_names`` names them (either may be left out), as
    :attr:`evalstats.Dataset.arm_names` and ``results.json`` (``provenance.arm_names``) give
    them. A name is drawn on one line (its whitespace collapsed); the layouts wrap it.

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


def figure_width(width: str | float | None, figsize: Sequence[float] | None) -> float:
    if figsize is not None:
        if len(figsize) != 2 or not all(np.isfinite(v) and v > 0 for v in figsize):
            raise ValueError(f"figsize must be (width, height) in inches, got {figsize!r}")
        return float(figsize[0])
    if isinstance(width, str):
        if width not in WIDTHS:
            raise ValueError(f"width must be one of {sorted(WIDTHS)} or inches, got {width!r}")
        return WIDTHS[width]
    if width is None:
        return WIDTHS["page"]
    w = float(width)
    if not np.isfinite(w) or w < 2.0:
        raise ValueError(f"width must be at least 2 inches, got {width!r}")
    return w


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


def caller_axes(ax: Any, n: int | None, what: str) -> list[Axes]:
    """The caller's axes as a list, checked: one Axes, or a sequence of ``n`` of them."""
    axes = [ax] if isinstance(ax, Axes) else list(np.ravel(np.asarray(ax, dtype=object)))
    if not axes or not all(isinstance(a, Axes) for a in axes):
        raise TypeError(f"ax must be a matplotlib Axes or a sequence of them, got {ax!r}")
    if n is not None and len(axes) != n:
        raise ValueError(f"{what} draws {n} panel(s): pass ax= a sequence of {n} Axes")
    return axes


def new_canvas(
    *,
    ax: Any,
    n_axes: int,
    width: str | float | None,
    figsize: Sequence[float] | None,
    height: Callable[[float], float],
    make: Callable[[Figure], Any],
    what: str,
) -> Canvas:
    """The caller's axes (``ax=``) or a new :class:`PlotFigure` of the asked width.

    ``height(width)`` gives the height for a width (unless ``figsize`` says it) and
    ``make(fig)`` creates the axes.
    """
    if ax is not None:
        if figsize is not None:
            raise ValueError("pass ax= or figsize=, not both")
        axes = caller_axes(ax, n_axes, what)
        parent = axes[0].get_figure(root=False)
        return Canvas(parent, axes, False, float(parent.bbox.width) / parent.dpi)
    w = figure_width(width, figsize)
    # Larger type needs taller panels (tick labels stack vertically); never shorter.
    grow = max(1.0, float(matplotlib.rcParams["font.size"]) / 10.0)
    h = float(figsize[1]) if figsize is not None else float(height(w)) * grow
    fig = PlotFigure(figsize=(w, h), layout="constrained")
    made = make(fig)
    axes = [made] if isinstance(made, Axes) else list(np.ravel(np.asarray(made, dtype=object)))
    return Canvas(fig, axes, True, w)


def check_title(title: Any) -> None:
    if title is not None and title is not False and not isinstance(title, str):
        raise TypeError(f"title must be None, False or a str, got {type(title).__name__}")


def figure_title(canvas: Canvas, title: str | bool | None, default: str) -> None:
    """The figure's title: the default when None (only on a figure made here), none when
    False or "", else ``title``; wrapped to the figure's width."""
    check_title(title)
    if title is False or title == "":
        return
    if title is None:
        if not canvas.owned:
            return  # the caller's figure: its title is the caller's
        title = default
    size = size_pt("figure.titlesize")
    canvas.fig.suptitle(wrap(str(title), canvas.width - 0.15, size))


def axes_title(ax: Axes, title: str | bool | None, default: str, width_in: float) -> None:
    """An axes' own title: the default when None, none when False or "", else ``title``."""
    check_title(title)
    if title is False or title == "":
        return
    text = default if title is None else str(title)
    ax.set_title(wrap(text, width_in, size_pt("axes.titlesize")))


def panel_width(canvas: Canvas, n_cols: int, reserve: float = 0.6) -> float:
    """Rough width in inches of one of ``n_cols`` side-by-side panels (labels reserved)."""
    return max(0.8, (canvas.width - reserve * n_cols) / max(n_cols, 1))


def legend_columns(labels: Sequence[str], width_in: float, size: float) -> int:
    """How many legend columns of these labels fit ``width_in`` inches (handles included)."""
    widest = max((text_width_in(lab, size) for lab in labels), default=0.0) + 0.4
    return int(max(1, min(len(labels), width_in // max(widest, 1e-6))))


def require(frame: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what} must be a DataFrame, got {type(frame).__name__}")
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} lacks column(s) {missing}; has {list(frame.columns)}")


def num(s: pd.Series) -> np.ndarray:
    return pd.to_numeric(s, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)


def asym_err(value: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error-bar lengths; NaN bounds become 0-length bars (nothing drawn)."""
    lo = np.where(np.isfinite(low), value - low, 0.0)
    hi = np.where(np.isfinite(high), high - value, 0.0)
    return np.vstack([np.maximum(lo, 0.0), np.maximum(hi, 0.0)])


def conf_text(confidence: float | None) -> str:
    return f"{round(100 * confidence)} % CI" if confidence is not None else "CI"


# Tick formatters are module functions, not lambdas, so that a figure can be pickled (the
# report renders its raster copy in another process).
def format_pp(v: float, _pos: Any = None) -> str:
    return f"{100 * v:+.0f} pp" if abs(v) > 1e-12 else "0"


def format_times(v: float, _pos: Any = None) -> str:
    return f"{v:g}×"


def legend_below(
    ax: Axes, *, ncol: int, title: str | None = None, labels: Sequence[str] | None = None
) -> None:
    """The axes' legend under its x axis label, at a fixed distance whatever its height
    (constrained layout then makes room for it); ``labels`` replace the artists' own (e.g.
    wrapped), in their order."""
    from matplotlib.transforms import ScaledTranslation

    lines = ax.get_xlabel().count("\n") + 1 if ax.get_xlabel() else 0
    ticks = max((t.get_text().count("\n") + 1 for t in ax.get_xticklabels()), default=1)
    drop_pt = (
        10.0 + 1.25 * size_pt("xtick.labelsize") * ticks + 1.25 * size_pt("axes.labelsize") * lines
    )
    fig = ax.get_figure(root=False)
    below = ax.transAxes + ScaledTranslation(0, -drop_pt / 72.0, fig.dpi_scale_trans)
    handles, own = ax.get_legend_handles_labels()
    ax.legend(
        handles,
        own if labels is None else list(labels),
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        bbox_transform=below,
        ncols=ncol,
        frameon=False,
        title=title,
    )


# How long a vertical tick label's line may be: a third of a column figure's height.
_VERTICAL_LINE_IN = 1.3


def fit_ticks(ax: Axes, x: Any, labels: Sequence[str], slot_in: float, size: float) -> None:
    """Tick labels wrapped to ``slot_in`` inches each, at spaces only (a name such as
    "with-without" never breaks inside); vertical when a word is wider."""
    wrapped = [wrap(lab, slot_in, size, hyphens=False) for lab in labels]
    if max((text_width_in(w, size) for w in wrapped), default=0.0) <= slot_in:
        ax.set_xticks(x, wrapped)
        return
    # Upright labels would collide: vertical ones, each wrapped (at spaces) into lines of at
    # most _VERTICAL_LINE_IN, so that its few lines side by side still fit the slot.
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
