"""Named arms in the report: results.json, the page's arms line, and the figures' text.

A copy of data/sample whose ``arms.toml`` names the arms is rendered once (module fixture);
the unnamed case is test_report.py's session render (``render_once``), which must still say
WITH / WITHOUT only.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import tempfile
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

# Matplotlib reads MPLCONFIGDIR when first imported: a private directory, as in test_plots.py.
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="evalstats-mpl-"))

import IPython.display
import pandas as pd
import pytest
from test_report import SAMPLE, TEST_PARAMS, render_once

from evalstats import plots
from evalstats.records import DEFAULT_ARM_NAMES
from evalstats.report import (
    Results,
    compute_results,
    load_results,
    render_report,
    show_figure,
    show_provenance,
    table_view,
)

# Integration (slow: make test runs it, make check does not): renders the report with named arms.
pytestmark = pytest.mark.slow

NAMES = {"with": "Serena MCP", "without": "plain Claude Code"}
ARMS_TOML = 'with = "Serena MCP"\nwithout = "plain Claude Code"\n'


def named_sample(dest: Path, toml: str = ARMS_TOML) -> Path:
    shutil.copytree(SAMPLE, dest)
    (dest / "arms.toml").write_text(toml, encoding="utf-8")
    return dest


def svg_text(path: Path) -> str:
    """Every text of an SVG figure (matplotlib writes text as text: svg.fonttype none), its
    lines joined by single spaces."""
    root = ET.parse(path).getroot()
    parts = ["".join(el.itertext()) for el in root.iter("{http://www.w3.org/2000/svg}text")]
    return " ".join(" ".join(parts).split())


def page_text(path: Path) -> str:
    """The visible text of a page (tags dropped, entities kept as written)."""
    return " ".join(re.sub(r"<[^>]+>", " ", path.read_text(encoding="utf-8")).split())


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> tuple[Path, Path]:
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    base = tmp_path_factory.mktemp("arms")
    data, out = named_sample(base / "data"), base / "report"
    render_report(data, out, params=TEST_PARAMS, figures="svg")
    return data, out


@pytest.fixture(scope="module")
def unnamed(tmp_path_factory) -> tuple[Path, Path]:
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    return render_once(tmp_path_factory)


# --------------------------------------------------------------------------------------------
# the rendered report, arms named
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_results_json_names_the_arms(named):
    _, out = named
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["provenance"]["arm_names"] == NAMES
    # The tables keep the data contract's names for the arms.
    assert {row["arm"] for row in doc["tables"]["dimensions"]} == {"with", "without", "difference"}


@pytest.mark.slow
def test_page_says_which_arm_is_which_at_the_top(named):
    _, out = named
    for page in ("index.html", "methodology.html"):
        html_text = (out / page).read_text(encoding="utf-8")
        assert "<strong>WITH</strong> = Serena MCP" in html_text, page
        text = page_text(out / page)
        line = "WITH = Serena MCP · WITHOUT = plain Claude Code"
        assert line in text, page
        # Before every section of the page: the arms line comes with the provenance, first.
        first_section = html_text.index("<h2")
        assert html_text.index('<p class="arms">') < first_section, page


@pytest.mark.slow
def test_headline_card_names_the_arms(named, unnamed):
    # The card's verdict says which arm is which; without names it says WITH / WITHOUT only.
    from evalstats.report import headline_paragraph

    card = headline_paragraph(named[1] / "results.json")
    assert "WITH (Serena MCP)" in card and "WITHOUT (plain Claude Code)" in card
    # Once named, the arm is called by its name: "Serena MCP won 52 % ...", in the card and
    # in every exported win sentence.
    assert "Serena MCP won " in card and "WITH won" not in card
    from evalstats.report import result_sentences

    wins = [x for x in result_sentences(named[1] / "results.json") if " won " in x]
    assert wins and all(x.startswith("Serena MCP won ") for x in wins)
    plain = headline_paragraph(unnamed[1] / "results.json")
    assert "Serena" not in plain and "(WITH)" not in plain
    assert "WITH" in plain.split(". ")[0]


@pytest.mark.slow
def test_figures_name_the_arms(named):
    _, out = named
    figures = out / "figures"
    headline = svg_text(figures / "headline.svg")
    assert "Serena MCP better (win)" in headline and "Serena MCP worse (loss)" in headline
    assert "Headline: Serena MCP vs plain Claude Code" in headline
    cost = svg_text(figures / "cost_ratios.svg")
    assert "Cost of Serena MCP relative to plain Claude Code, per pair" in cost
    assert "ratio Serena MCP / plain Claude Code" in cost
    heat = svg_text(figures / "task_heatmap_blind-pair.svg")
    assert "W = Serena MCP shown first, O = plain Claude Code first" in heat
    dims = svg_text(figures / "dimension_scores.svg")
    assert "Serena MCP − plain Claude Code (points)" in dims
    for name in ("headline", "cost_ratios", "task_heatmap_blind-pair", "dimension_scores"):
        assert "WITH" not in svg_text(figures / f"{name}.svg"), name


# --------------------------------------------------------------------------------------------
# the rendered report, arms not named: as before
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_unnamed_report_says_with_and_without(unnamed):
    _, out = unnamed
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert doc["provenance"]["arm_names"] == DEFAULT_ARM_NAMES
    html_text = (out / "index.html").read_text(encoding="utf-8")
    assert 'class="arms"' not in html_text and "(not named)" not in html_text
    figures = out / "figures"
    headline = svg_text(figures / "headline.svg")
    assert "WITH better (win)" in headline and "Headline: WITH vs WITHOUT" in headline
    cost = svg_text(figures / "cost_ratios.svg")
    assert "Cost of WITH relative to WITHOUT, per pair" in cost
    assert "Serena" not in headline + cost


@pytest.mark.slow  # draws every figure twice
def test_default_names_draw_the_very_same_figures():
    # The report now always passes the arms' names; for unnamed data they are WITH / WITHOUT
    # and the figure is byte for byte the one drawn without them.
    from evalstats.frames import load_frame, select_rubric
    from evalstats.stats import dimension_means, win_rates

    frame = load_frame(SAMPLE)
    blind, _ = select_rubric(frame, "blind-pair")
    draws = {
        "headline": lambda **kw: plots.plot_headline(
            win_rates(frame, by=["rubric", "judge"]), group=["rubric", "judge"], **kw
        ),
        "cost": lambda **kw: plots.plot_cost_ratios(frame, **kw),
        "heatmap": lambda **kw: plots.plot_task_heatmap(frame, rubric="blind-pair", **kw),
        "dimensions": lambda **kw: plots.plot_dimension_scores(dimension_means(blind), **kw),
    }

    def svg(fig) -> bytes:
        return plots.render_figure(fig, formats=("svg",), bbox=plots.layout_figure(fig))["svg"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sample's few-cluster warnings
        for name, draw in draws.items():
            for width in ("column", "page"):
                plain = svg(draw(width=width))
                assert svg(draw(width=width, arm_names=dict(DEFAULT_ARM_NAMES))) == plain, name
                assert svg(draw(width=width, arm_names=NAMES)) != plain, name


# --------------------------------------------------------------------------------------------
# units: compute, pickle, show_provenance, show_figure's plumbing
# --------------------------------------------------------------------------------------------


def test_results_tables_and_frame_carry_the_names_through_pickle(tmp_path):
    data = named_sample(tmp_path / "d")
    res = compute_results(data, n_resamples=50, seed=0)
    assert res.provenance["arm_names"] == NAMES
    assert res.to_json()["provenance"]["arm_names"] == NAMES
    assert res.frame.attrs["arm_names"] == NAMES
    assert all(t.attrs["arm_names"] == NAMES for t in res.tables.values())
    path = tmp_path / "res.pickle"
    path.write_bytes(pickle.dumps(res))
    again = load_results(path)  # what the report's notebooks read
    assert table_view(again, "headline").attrs["arm_names"] == NAMES
    assert again.frame.attrs["arm_names"] == NAMES


def test_results_without_names_stamp_nothing():
    t = pd.DataFrame({"x": [1]})
    Results({"t": t}, {"seed": 0}, {}, False)
    assert "arm_names" not in t.attrs


@pytest.fixture
def shown(monkeypatch):
    out: list[tuple[str, str]] = []
    # What a notebook would be shown, caught where IPython displays it.
    show = lambda obj, raw: out.append((obj["text/html"], obj["text/plain"]))  # noqa: E731
    monkeypatch.setattr(IPython.display, "display", show)
    return out


def _results(arm_names) -> Results:
    prov = {"data_dir": "d", "seed": 0, "n_resamples": 10, "confidence": 0.95}
    if arm_names is not None:
        prov["arm_names"] = arm_names
    return Results({}, prov, {}, False)


def test_show_provenance_names_the_arms_first(shown):
    show_provenance(_results(NAMES))
    html_text, plain = shown[0]
    assert html_text.startswith(
        '<p class="arms"><strong>WITH</strong> = Serena MCP · '
        "<strong>WITHOUT</strong> = plain Claude Code</p>"
    )
    assert plain.splitlines()[0] == "WITH = Serena MCP · WITHOUT = plain Claude Code"


def test_show_provenance_one_arm_named_and_escaped(shown):
    show_provenance(_results({"with": "<b>Serena</b> & co", "without": "WITHOUT"}))
    html_text, plain = shown[0]
    assert "<b>Serena" not in html_text
    assert "<strong>WITH</strong> = &lt;b&gt;Serena&lt;/b&gt; &amp; co" in html_text
    assert "<strong>WITHOUT</strong> = (not named)" in html_text
    assert plain.splitlines()[0] == "WITH = <b>Serena</b> & co · WITHOUT = (not named)"


@pytest.mark.parametrize("arm_names", [None, dict(DEFAULT_ARM_NAMES)])
def test_show_provenance_unnamed_is_as_before(shown, arm_names):
    show_provenance(_results(arm_names))
    html_text, plain = shown[0]
    assert html_text.startswith('<div class="table-wrap"><table data-table="provenance">')
    assert plain.startswith("data: d")


def test_show_figure_passes_the_data_s_names(monkeypatch):
    calls: list[dict] = []

    def plot_named(frame, *, arm_names=None, title=None):
        calls.append({"arm_names": arm_names, "title": title})
        raise ValueError("stop here")  # show_figure reports it as unavailable

    def plot_plain(frame, *, title=None):
        calls.append({"title": title})
        raise ValueError("stop here")

    monkeypatch.setattr(plots, "plot_named", plot_named, raising=False)
    monkeypatch.setattr(plots, "plot_plain", plot_plain, raising=False)
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw: None)
    carrying = pd.DataFrame({"x": [1]})
    carrying.attrs["arm_names"] = NAMES
    show_figure("plot_named", carrying, name="n")
    show_figure("plot_named", carrying, name="n", arm_names={"with": "X"})
    show_figure("plot_named", pd.DataFrame({"x": [1]}), name="n")
    show_figure("plot_plain", carrying, name="n", title="t")
    assert calls == [
        {"arm_names": NAMES, "title": None},
        {"arm_names": {"with": "X"}, "title": None},  # the caller's names win
        {"arm_names": None, "title": None},  # data that names nothing: the defaults
        {"title": "t"},  # a figure without arm names is not given any
    ]


def test_the_report_plot_functions_take_arm_names():
    import inspect

    for name in ("plot_headline", "plot_cost_ratios", "plot_task_heatmap", "plot_dimension_scores"):
        assert "arm_names" in inspect.signature(getattr(plots, name)).parameters, name


@pytest.mark.slow
def test_title_and_headings_use_the_arms_names(named, unnamed):
    headings = {}
    for key, (_, out) in (("named", named), ("unnamed", unnamed)):
        text = (out / "index.html").read_text(encoding="utf-8")
        found = re.findall(r"<(h[1-6])[^>]*>(.*?)</\1>|<caption[^>]*>(.*?)</caption>", text, re.S)
        headings[key] = [" ".join(re.sub(r"<[^>]+>", " ", h or c).split()) for _, h, c in found]
    named_text = " | ".join(headings["named"])
    assert "Serena MCP vs plain Claude Code: what the judges say" in named_text
    assert "Blind-rubric dimension scores, Serena MCP vs plain Claude Code" in named_text
    assert "Serena MCP / plain Claude Code cost ratios" in named_text
    assert "WITH" not in named_text
    assert "WITH vs WITHOUT: what the judges say" in " | ".join(headings["unnamed"])


@pytest.mark.slow
def test_cost_figure_is_the_cost_tables_row(named):
    """Line and band from the row the cost table leads with (billed), said in the figure."""
    _, out = named
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    row = next(r for r in doc["tables"]["cost"] if r["statistic"] == "tokens_geomean_ratio")
    cost = svg_text(out / "figures" / "cost_ratios.svg")
    assert f"Tokens ({row['token_source']})" in cost and "cost table's geometric mean" in cost
    assert f"geometric mean {row['estimate']:.2f}×" in cost
    assert f"CI [{row['ci_low']:.2f}×, {row['ci_high']:.2f}×]" in cost
