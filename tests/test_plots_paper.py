"""Figures for a paper: ax=, figsize=, title=None|False|str, PDF fonts, one meaning of n, and
figures that display themselves in Jupyter without a magic."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

# Matplotlib reads MPLCONFIGDIR when first imported: a private directory, as in test_plots.py.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import io

import matplotlib
import pandas as pd
import pytest
from matplotlib.figure import Figure

from evalstats import plots
from evalstats.frames import load_frame, select_rubric
from evalstats.stats import dimension_means, win_rates

# Integration (slow: make test runs it, make check does not): writes every figure as PDF, SVG and PNG.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"


@pytest.fixture(scope="module")
def frame():
    return load_frame(SAMPLE)


@pytest.fixture(scope="module")
def rates(frame):
    # One row per group (the plot pivots a long result the same way): columns can be dropped.
    return win_rates(frame, by=["rubric", "judge"]).wide()


def pdf_font_subtypes(data: bytes) -> set[str]:
    """The /Subtype of every font object: matplotlib writes object dictionaries
    uncompressed (only streams are deflated), so a byte scan of each object's dictionary
    (the part before its stream) finds them all."""
    out = set()
    for obj in re.split(rb"\bendobj\b", data):
        head = obj.split(b"stream", 1)[0]
        if re.search(rb"/Type\s*/Font\b", head):
            out |= {m.decode() for m in re.findall(rb"/Subtype\s*/(\w+)", head)}
    return out


# --------------------------------------------------------------------------- PDF


def test_save_figure_writes_pdf_svg_png_with_truetype_fonts(rates, tmp_path):
    before = dict(matplotlib.rcParams)
    fig = plots.plot_headline(rates, group=["rubric", "judge"], width="column")
    paths = plots.save_figure(fig, tmp_path / "figs" / "headline")
    assert [p.name for p in paths] == ["headline.pdf", "headline.svg", "headline.png"]
    assert dict(matplotlib.rcParams) == before  # fonttype set locally, not globally
    data = paths[0].read_bytes()
    assert data[:5] == b"%PDF-"
    subtypes = pdf_font_subtypes(data)
    assert subtypes, "no font dictionary found"
    assert "Type3" not in subtypes and b"/Type3" not in data
    assert subtypes <= {"Type0", "CIDFontType2", "TrueType"}
    # The file has the preset's width exactly: MediaBox in points.
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", data)
    assert float(box.group(1)) == pytest.approx(3.5 * 72)
    svg = paths[1].read_text(encoding="utf-8")
    assert 'width="252pt"' in svg  # 3.5 in
    tight = plots.save_figure(fig, tmp_path / "tight", formats=("pdf",), tight=True)[0]
    box = re.search(rb"/MediaBox\s*\[\s*0 0 ([\d.]+)", tight.read_bytes())
    assert float(box.group(1)) != pytest.approx(3.5 * 72)


def test_the_font_check_sees_type3():
    # matplotlib's default pdf.fonttype (3) embeds Type 3 fonts: the scan must say so.
    fig = Figure()
    fig.subplots().set_title("Type 3 by default")
    buf = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 3}):
        fig.savefig(buf, format="pdf")
    assert "Type3" in pdf_font_subtypes(buf.getvalue())


def test_render_figure_pdf_uses_truetype(rates):
    out = plots.render_figure(
        plots.plot_headline(rates, group=["rubric", "judge"]), formats=("pdf",)
    )
    assert "Type3" not in pdf_font_subtypes(out["pdf"])


# --------------------------------------------------------------------------- titles


CALLS = {
    "headline": lambda f, r, **kw: plots.plot_headline(r, group=["rubric", "judge"], **kw),
    "heatmap": lambda f, r, **kw: plots.plot_task_heatmap(f, rubric="blind-pair", **kw),
    "cost": lambda f, r, **kw: plots.plot_cost_ratios(f, **kw),
    "dimensions": lambda f, r, **kw: plots.plot_dimension_scores(
        dimension_means(select_rubric(f, "blind-pair")[0]), **kw
    ),
}


def fig_title(fig) -> str:
    return fig.get_suptitle()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_title_none_false_empty_and_text(frame, rates, name):
    draw = CALLS[name]
    assert fig_title(draw(frame, rates)) != ""  # None: the default title
    assert fig_title(draw(frame, rates, title=False)) == ""
    assert fig_title(draw(frame, rates, title="")) == ""  # "" no longer draws the default
    assert fig_title(draw(frame, rates, title="Mine")) == "Mine"
    with pytest.raises(TypeError, match="title"):
        draw(frame, rates, title=3)


def test_single_panel_titles_are_the_axes_title():
    curve = pd.DataFrame({"n_tasks": [10, 20], "power": [0.2, 0.5]})
    assert plots.plot_power_curve(curve).axes[0].get_title() != ""
    assert plots.plot_power_curve(curve, title=False).axes[0].get_title() == ""
    assert plots.plot_power_curve(curve, title="").axes[0].get_title() == ""
    table = [[3, 1], [1, 4]]
    assert plots.plot_confusion(table, title="").axes[0].get_title() == ""
    assert plots.plot_confusion(table, title="κ").axes[0].get_title() == "κ"


# --------------------------------------------------------------------------- ax=, figsize=


def test_ax_draws_into_the_callers_subfigures(frame, rates):
    fig = Figure(figsize=(7, 6), layout="constrained")
    top, bottom = fig.subfigures(2, 1)
    heads = top.subplots(1, 2)
    out = plots.plot_headline(rates, group=["rubric", "judge"], ax=heads)
    assert out is fig  # the caller's figure, drawn into, not a new one
    assert len(heads[0].patches) == 3 * len(rates)
    assert top.get_suptitle() == "" and fig.get_suptitle() == ""  # the caller titles
    curve = pd.DataFrame({"n_tasks": [10, 20], "power": [0.2, 0.5]})
    left, right = bottom.subplots(1, 2)
    plots.plot_power_curve(curve, ax=left)
    plots.plot_confusion([[3, 1], [1, 4]], ax=right)
    assert left.get_lines() and right.images
    plots.plot_headline(rates, group=["rubric", "judge"], ax=top.subplots(1, 2), title="T")
    assert top.get_suptitle() == "T"
    fig.draw_without_rendering()


def test_ax_validation(frame, rates):
    fig = Figure()
    with pytest.raises(ValueError, match="2 panel"):
        plots.plot_headline(rates, group=["rubric", "judge"], ax=fig.subplots())
    with pytest.raises(ValueError, match="2 panel"):
        plots.plot_task_heatmap(frame, rubric="blind-pair", ax=fig.subplots(1, 3))
    with pytest.raises(TypeError, match="Axes"):
        plots.plot_power_curve(pd.DataFrame({"n_tasks": [1], "power": [0.1]}), ax="no")
    with pytest.raises(ValueError, match="not both"):
        plots.plot_confusion([[1, 0], [0, 1]], ax=fig.subplots(), figsize=(3, 3))


def test_width_and_figsize(rates):
    r = rates
    # 3.3 in, plus room for a count on two lines ("32 pairs" / "(64 pair-orders)").
    assert tuple(plots.plot_headline(r, group="judge", width=5.5).get_size_inches()) == (
        5.5,
        pytest.approx(3.6),
    )
    one_order = r.drop(columns="n_pairs").assign(rubric="with-without")
    assert tuple(plots.plot_headline(one_order, group="judge", width=5.5).get_size_inches()) == (
        5.5,
        pytest.approx(3.3),
    )
    assert tuple(plots.plot_headline(r, group="judge", figsize=(6, 2.5)).get_size_inches()) == (
        6,
        2.5,
    )
    with pytest.raises(ValueError, match="width"):
        plots.plot_headline(r, group="judge", width="poster")
    with pytest.raises(ValueError, match="figsize"):
        plots.plot_headline(r, group="judge", figsize=(6, -1))


# --------------------------------------------------------------------------- one n


def test_headline_names_pairs_and_pair_orders(frame, rates):
    # 32 pairs judged in two orders are "64 pair-orders (32 pairs)", never "64 pairs".
    ok = frame.loc[frame["status"] == "ok"]
    pairs = (
        ok.groupby(["rubric", "judge"], observed=True)[["task_id", "replicate"]]
        .apply(lambda d: len(d.drop_duplicates()))
        .rename("n_pairs")
        .reset_index()
    )
    # win_rates counts them itself (n_pairs); checked here against the count by hand.
    by_hand = rates.merge(pairs, on=["rubric", "judge"], suffixes=("", "_by_hand"))
    assert (by_hand["n_pairs"] == by_hand["n_pairs_by_hand"]).all()
    with_pairs = rates
    blind = with_pairs["rubric"].astype(str) == "blind-pair"
    assert (with_pairs.loc[blind, "n"] > with_pairs.loc[blind, "n_pairs"]).all()
    assert (with_pairs.loc[~blind, "n"] == with_pairs.loc[~blind, "n_pairs"]).all()
    fig = plots.plot_headline(with_pairs, group=["rubric", "judge"])
    ticks = [t.get_text().replace("\n", " ") for t in fig.axes[0].get_xticklabels()]
    for tick, row in zip(ticks, with_pairs.itertuples(), strict=True):
        if row.rubric == "blind-pair":
            assert f"{row.n} pair-orders ({row.n_pairs} pairs)" in tick
        else:
            assert f"{row.n} pairs" in tick and "pair-orders" not in tick
    assert "share of readable verdicts" in fig.axes[0].get_ylabel().replace("\n", " ")
    # Without n_pairs, blind-rubric rows are counted as what they are: pair-orders.
    rates = rates.drop(columns="n_pairs")
    plain = plots.plot_headline(rates, group=["rubric", "judge"])
    ticks = [t.get_text().replace("\n", " ") for t in plain.axes[0].get_xticklabels()]
    for tick, row in zip(ticks, rates.itertuples(), strict=True):
        unit = "pair-orders" if row.rubric == "blind-pair" else "pairs"
        assert f"{row.n} {unit} " in tick
    assert not any(re.search(r"\bn = \d+ pairs", t) for t in ticks)


# --------------------------------------------------------------------------- Jupyter


def test_figures_have_a_png_repr(rates):
    fig = plots.plot_headline(rates, group=["rubric", "judge"], width="column")
    png = fig._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.get_layout_engine() is not None  # showing it did not freeze the layout
    import pickle

    assert isinstance(pickle.loads(pickle.dumps(fig)), plots.PlotFigure)


def test_notebook_shows_figures_without_a_magic(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    code = (
        "import pandas as pd\n"
        "from evalstats import plots\n"
        "curve = pd.DataFrame({'n_tasks': [10, 20, 40], 'power': [0.2, 0.5, 0.8]})\n"
        "plots.plot_power_curve(curve, width='column')"
    )
    # The control: a plain matplotlib Figure, built the same way outside pyplot, shows as text.
    control = "from matplotlib.figure import Figure\nFigure()"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(code), nbformat.v4.new_code_cell(control)]
    )
    # ipykernel's built-in spec only (kernel_dirs=[]): its argv[0] is this very Python, the
    # venv's, whatever kernels the machine has installed.
    km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    assert km.kernel_spec.argv[0] == sys.executable
    client = nbclient.NotebookClient(
        nb, km=km, timeout=180, resources={"metadata": {"path": str(tmp_path)}}
    )
    # MPLBACKEND=agg: no inline backend either, so the image can only come from the figure.
    env = {"MPLCONFIGDIR": os.environ["MPLCONFIGDIR"], "MPLBACKEND": "agg"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client.execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    outputs = nb.cells[0].outputs
    results = [o for o in outputs if o.get("output_type") == "execute_result"]
    assert results, f"no result displayed: {outputs}"
    assert "image/png" in results[0]["data"], results[0]["data"].keys()
    import base64

    assert base64.b64decode(results[0]["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    plain = [o for o in nb.cells[1].outputs if o.get("output_type") == "execute_result"]
    assert plain and "image/png" not in plain[0]["data"]
