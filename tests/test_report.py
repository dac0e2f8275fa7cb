"""The rendered report: files, self-containment, escaping, and results.json == the library.

One report is rendered per session (``render_once``) from a copy of ``data/sample`` in which
judge texts carry ``<script>`` payloads; the browser test (test_report_browser.py) reuses it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from conftest import first_difference

from evalstats import rubrics
from evalstats.report import (
    PARAMETERS,
    ReportError,
    Results,
    _html,  # private: the notebook body sanitiser on hostile output
    compute_methodology,
    compute_results,
    dump_json,
    merge_results,
    parse_params,
    register,
    render_report,
    table_html,
)

# Integration (slow: make test runs it, make check does not): computes and renders the sample report.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
# Small enough to keep the suite fast; the numbers are still checked exactly.
TEST_PARAMS = {"n_resamples": 300, "seed": 7, "confidence": 0.9}
REASONING_PAYLOAD = "<script>window.__pwned=1</script> WITH names the handler"
RAW_PAYLOAD = '<script>window.__pwned=2</script><img src=x onerror="window.__pwned=3"> no JSON'


def hostile_sample(dest: Path) -> Path:
    """data/sample with script payloads in judge reasoning (readable JSON) and one raw output
    that is not JSON at all (so it is shown among the invalid outputs)."""
    shutil.copytree(SAMPLE, dest)
    lines = (dest / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    out, broke_one = [], False
    for line in lines:
        rec = json.loads(line)
        raw = rec.get("raw")
        if rec["rubric"] == "with-without" and rec.get("error") is None and raw:
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            if isinstance(body, dict) and "reasoning" in body:
                if not broke_one:
                    rec["raw"], broke_one = RAW_PAYLOAD, True
                else:
                    body["reasoning"] = REASONING_PAYLOAD
                    rec["raw"] = json.dumps(body, indent=2)
        out.append(json.dumps(rec))
    (dest / "judgments.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    return dest


def render_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(data_dir, report_dir), rendered once per pytest session."""
    base = tmp_path_factory.getbasetemp() / "evalstats-report"
    data, out = base / "data", base / "report"
    if not (base / "DONE").exists():
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        hostile_sample(data)
        render_report(data, out, params=TEST_PARAMS)
        (base / "DONE").write_text("ok")
    return data, out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, Path]:
    if not SAMPLE.exists():
        pytest.skip("data/sample is absent")
    return render_once(tmp_path_factory)


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _parse(path: Path) -> _Collect:
    p = _Collect()
    p.feed(path.read_text(encoding="utf-8"))
    return p


# --------------------------------------------------------------------------------------------
# the rendered directory
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_report_directory_layout(rendered):
    _, out = rendered
    for name in ("index.html", "methodology.html", "results.json"):
        assert (out / name).stat().st_size > 1000, name
    figures = sorted(p.name for p in (out / "figures").iterdir())
    # Every figure as SVG (shown); PDF and PNG only when asked (issues 20 and 34).
    assert "headline.svg" in figures and all(f.endswith(".svg") for f in figures)
    tables = {p.stem for p in (out / "tables").glob("*.csv")}
    assert {"headline", "agreement", "cost", "accounting", "sensitivity", "design"} <= tables
    assert not (out / ".parts").exists()
    for nb_name in ("report.ipynb", "methodology.ipynb"):
        nb = nbformat.read(out / "notebooks" / nb_name, as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert outputs, f"{nb_name} was not executed"
        assert not [o for o in outputs if o.output_type == "error"]


@pytest.mark.slow
def test_tables_csv_equal_results_json(rendered):
    _, out = rendered
    doc = json.loads((out / "results.json").read_text())
    for name, rows in doc["tables"].items():
        if rows is None:  # unavailable here (primary_test without a plan): the reason, no CSV
            assert doc["unavailable"][name], name
            assert not (out / "tables" / f"{name}.csv").exists(), name
            continue
        csv = pd.read_csv(out / "tables" / f"{name}.csv")
        assert len(csv) == len(rows), name
        assert list(csv.columns) == (list(rows[0]) if rows else list(csv.columns)), name


@pytest.mark.slow
def test_pages_are_self_contained(rendered):
    _, out = rendered
    for page in ("index.html", "methodology.html"):
        text = (out / page).read_text(encoding="utf-8")
        parsed = _parse(out / page)
        tags = [t for t, _ in parsed.tags]
        assert "script" not in tags and "link" not in tags and "iframe" not in tags, page
        images = [a for t, a in parsed.tags if t == "img"]
        assert images, f"{page} has no figure"
        assert all((a.get("src") or "").startswith("data:image/") for a in images), page
        for t, a in parsed.tags:
            for attr in ("src", "href"):
                v = a.get(attr) or ""
                if t != "a":
                    assert not re.match(r"\s*(https?:)?//", v), (page, t, v)
        assert "Content-Security-Policy" in text
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", text), page


@pytest.mark.slow
def test_input_cells_are_hidden(rendered):
    _, out = rendered
    text = (out / "index.html").read_text(encoding="utf-8")
    assert "compute_results(" not in text and "rp.show_table" not in text
    assert "from evalstats" not in "".join(_parse(out / "index.html").text)


@pytest.mark.slow
def test_judge_text_is_escaped(rendered):
    _, out = rendered
    raw_html = (out / "index.html").read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in raw_html
    assert 'onerror="window' not in raw_html
    text = "".join(_parse(out / "index.html").text)
    assert "<script>window.__pwned=1</script>" in text  # reasoning, shown as text
    assert "<script>window.__pwned=2</script>" in text  # unreadable raw output, as text


@pytest.mark.slow
def test_simulated_label_is_at_the_top(rendered):
    _, out = rendered
    text = (out / "index.html").read_text(encoding="utf-8")
    body = text[text.index("<main>") :]
    assert body.index("SIMULATED DATA") < body.index("<h1")
    doc = json.loads((out / "results.json").read_text())
    assert doc["simulated"] is True


# --------------------------------------------------------------------------------------------
# results.json == the library on the same inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_results_json_equals_library(rendered):
    data, out = rendered
    published = json.loads((out / "results.json").read_text())
    kwargs = {**TEST_PARAMS}
    expected = merge_results(
        compute_results(data, **kwargs).to_json(), compute_methodology(data, **kwargs).to_json()
    )
    expected = json.loads(dump_json(expected))  # the same JSON round trip as the file
    assert first_difference(published, expected) is None, first_difference(published, expected)
    n_numbers = sum(
        isinstance(v, int | float) and not isinstance(v, bool)
        for rows in published["tables"].values()
        for row in rows or ()  # null: a table unavailable here
        for v in row.values()
    )
    assert n_numbers > 500
    assert published["parameters"]["n_resamples"] == TEST_PARAMS["n_resamples"]
    assert published["parameters"]["seed"] == TEST_PARAMS["seed"]


@pytest.mark.slow
def test_results_json_differs_with_another_seed(rendered):
    """The comparison above is not vacuous: simulated numbers do depend on the seed (the
    design check's simulation; the cost intervals are no longer resampled)."""
    data, out = rendered
    published = json.loads((out / "results.json").read_text())
    other = compute_results(data, **{**TEST_PARAMS, "seed": TEST_PARAMS["seed"] + 1}).to_json()
    assert published["tables"]["design_coverage"] != other["tables"]["design_coverage"]


@pytest.mark.slow
def test_headline_numbers_on_the_page_match_results_json(rendered):
    _, out = rendered
    doc = json.loads((out / "results.json").read_text())
    html_text = (out / "index.html").read_text(encoding="utf-8")
    # A wide table is shown as stacked parts that repeat the key columns (table_html).
    parts = re.findall(
        r'<table data-(?:table|continues)="headline"[^>]*>(.*?)</table>', html_text, re.S
    )
    assert parts, "headline table missing"
    shown = None
    for part in parts:
        cells = [
            re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", r)
            for r in re.findall(r"<tr>(.*?)</tr>", part)
        ]
        headers, *rows = [[re.sub(r"<[^>]+>", "", c) for c in r] for r in cells]
        got = [dict(zip(headers, r, strict=True)) for r in rows]
        shown = got if shown is None else [{**a, **b} for a, b in zip(shown, got, strict=True)]
    # results.json's long rows, one dict per rubric x judge beside its counts
    diag = {(d["rubric"], d["judge"]): d for d in doc["tables"]["headline_diagnostics"]}
    groups: dict[tuple, dict] = {}
    for r in doc["tables"]["headline"]:
        g = groups.setdefault((r["rubric"], r["judge"]), dict(diag[(r["rubric"], r["judge"])]))
        st = r["statistic"]
        g |= {st: r["estimate"], f"{st}_ci_low": r["ci_low"], f"{st}_ci_high": r["ci_high"]}
        if st == "net_win":
            g["net_win_p_holm"], g["net_win_p"] = r["p_holm"], r["p_value"]
    published = list(groups.values())
    assert len(shown) == len(published) >= 2
    for s, p in zip(shown, published, strict=True):
        assert s["judge"] == p["judge"] and s["rubric"] == p["rubric"]
        for col in ("net_win", "win_rate", "loss_rate"):
            cell = f"{p[col]:.3f} [{p[col + '_ci_low']:.3f}, {p[col + '_ci_high']:.3f}]"
            assert s[col] == cell, (col, s[col], p)
        assert int(s["wins"]) == p["wins"] and int(s["n"]) == p["n"]
        # Holm-adjusted p beside the raw one; no plan in the sample: no row is marked.
        holm = p["net_win_p_holm"]
        assert s["net_win_p_holm"] == (f"{holm:.3f}" if holm >= 1e-3 else f"{holm:.2e}")
        assert p["primary"] is False
        assert "primary" not in s  # a column with nothing to mark is not shown
        assert p["net_win_p_holm"] >= p["net_win_p"]


@pytest.mark.slow
def test_provenance(rendered):
    data, out = rendered
    prov = json.loads((out / "results.json").read_text())["provenance"]
    for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl", "truth.json"):
        digest = hashlib.sha256((data / name).read_bytes()).hexdigest()
        assert prov["inputs"][name]["sha256"] == digest
    by_name = {r["rubric"]: r for r in prov["rubrics"]}
    for name in ("with-without", "blind-pair"):
        pkg = rubrics.get(name)
        assert by_name[name]["package_revision"] == pkg.revision
        assert by_name[name]["package_sha256"] == pkg.sha256
        assert by_name[name]["matches_package"] is True
    judges = {j["judge"]: j["model_ids"] for j in prov["judges"]}
    assert judges["openai:gpt-5.4"] == ["gpt-5.4"]
    assert prov["package"]["name"] == "evalstats" and prov["package"]["version"]
    assert prov["seed"] == TEST_PARAMS["seed"]
    assert prov["n_resamples"] == TEST_PARAMS["n_resamples"]
    assert str(REPO) not in json.dumps(prov)  # no machine paths


# --------------------------------------------------------------------------------------------
# units
# --------------------------------------------------------------------------------------------


def test_compute_results_selection_and_not_simulated(tmp_path):
    data = tmp_path / "d"
    shutil.copytree(SAMPLE, data)
    (data / "truth.json").unlink()
    judge = "openai:gpt-5.4"
    res = compute_results(data, judges=[judge], rubric="with-without", n_resamples=50)
    assert res.simulated is False
    groups = res.tables["headline"].diagnostics  # one row per rubric x judge
    assert groups["judge"].tolist() == [judge]
    assert groups["rubric"].tolist() == ["with-without"]
    assert "agreement" in res.unavailable and "consensus" in res.unavailable
    assert "position_bias" in res.unavailable  # no blind-rubric rows selected
    with pytest.raises(Exception, match="not in the data"):
        compute_results(data, judges=["nobody:none"], n_resamples=50)


def test_to_json_is_strict_json():
    t = pd.DataFrame(
        {
            "x": [1.0, np.nan, np.inf],
            "n": pd.array([1, None, 3], dtype="Int64"),
            "s": pd.Categorical(["a", "b", None]),
            "l": [[1, 2], [3], []],
        }
    )
    res = Results(tables={"t": t}, provenance={"seed": np.int64(3)}, parameters={}, simulated=False)
    doc = res.to_json()
    assert doc["tables"]["t"][1] == {"x": None, "n": None, "s": "b", "l": [3]}
    assert doc["tables"]["t"][2]["x"] is None and doc["tables"]["t"][2]["s"] is None
    assert doc["provenance"]["seed"] == 3
    json.loads(dump_json(doc))


def test_merge_results_refuses_parts_from_other_inputs():
    a = Results({"a": pd.DataFrame({"x": [1]})}, {"seed": 1}, {}, False).to_json()
    b = Results({"b": pd.DataFrame({"x": [2]})}, {"seed": 2}, {}, True).to_json()
    with pytest.raises(ValueError, match="disagree"):
        merge_results(a, b)
    c = Results({"a": pd.DataFrame({"x": [2]})}, {"seed": 1}, {}, True).to_json()
    with pytest.raises(ValueError, match="two parts"):
        merge_results(a, c)
    merged = merge_results(
        a, Results({"b": pd.DataFrame({"x": [2]})}, {"seed": 1}, {}, True).to_json()
    )
    assert set(merged["tables"]) == {"a", "b"} and merged["simulated"] is True


def test_table_html_escapes_every_cell():
    t = pd.DataFrame(
        {
            "judge": ["<b>j</b>"],
            "reasoning": ["<script>alert(1)</script>"],
            "net_win": [0.12345],
            "n": [3],
        }
    )
    out = table_html(t, name="x")
    assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "&lt;b&gt;j&lt;/b&gt;" in out and ">0.123<" in out and ">3<" in out


def test_notebook_body_rejects_active_html():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    nb.cells[0].outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<div onclick='x()'>hi</div>"})
    ]
    with pytest.raises(_html.UnsafeOutputError):
        _html.notebook_body(nb)
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="<script>alert(1)</script>")
    ]
    assert "&lt;script&gt;" in _html.notebook_body(nb)


def test_parse_params():
    got = parse_params(
        [
            "n_resamples=200",
            "rubric=with-without",
            'judges=["a:b","c:d"]',
            "confidence=0.9",
            "seed=null",
        ]
    )
    assert got == {
        "n_resamples": 200,
        "rubric": "with-without",
        "judges": ["a:b", "c:d"],
        "confidence": 0.9,
        "seed": None,
    }
    with pytest.raises(ReportError):
        parse_params(["novalue"])


def test_unknown_parameter_is_refused_before_running(tmp_path):
    with pytest.raises(ReportError, match="unknown report parameter"):
        render_report(SAMPLE, tmp_path / "r", params={"n_resample": 10})
    assert not (tmp_path / "r").exists()


def test_notebook_parameters_cell_matches_defaults():
    for name in ("report.ipynb", "methodology.ipynb"):
        nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
        cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(cells) == 1, name
        ns: dict = {}
        exec(cells[0].source, ns)  # our own notebook's assignments
        assert {k: ns[k] for k in PARAMETERS} == PARAMETERS
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
            f"{name} is stored with outputs"
        )


def test_register_adds_report_subcommand(capsys):
    parser = argparse.ArgumentParser(prog="evalstats")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        ["report", "data/sample", "-o", "reports/x", "-p", "seed=3", "-p", "n_resamples=10"]
    )
    assert args.data_dir == "data/sample" and args.output == "reports/x"
    assert parse_params(args.param) == {"seed": 3, "n_resamples": 10}
    with pytest.raises(SystemExit):
        parser.parse_args(["report", "--help"])
    assert "results.json" in capsys.readouterr().out


def test_missing_input_is_reported_before_any_kernel_starts(tmp_path):
    from evalstats.errors import DataError

    data = tmp_path / "d"
    shutil.copytree(SAMPLE, data)
    (data / "judgments.jsonl").unlink()
    with pytest.raises(DataError, match="judgments"):
        render_report(data, tmp_path / "r")
    assert not (tmp_path / "r").exists()


# --------------------------------------------------------------------------------------------
# the one render path (issue 20): checks first, papermill's parameters cell, figure formats
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_injected_parameters_follow_the_parameters_cell(rendered):
    _, out = rendered
    for nb_name in ("report.ipynb", "methodology.ipynb"):
        nb = nbformat.read(out / "notebooks" / nb_name, as_version=4)
        tags = [c.metadata.get("tags", []) for c in nb.cells]
        at = next(i for i, t in enumerate(tags) if "parameters" in t)
        assert "injected-parameters" in tags[at + 1], nb_name
        assert sum("injected-parameters" in t for t in tags) == 1
        ns: dict = {}
        exec(nb.cells[at + 1].source, ns)  # our own renderer's assignments
        assert ns["n_resamples"] == TEST_PARAMS["n_resamples"]
        assert ns["figure_formats"] == ["svg"]
        assert ns["results_file"].endswith(nb_name.replace(".ipynb", ".pickle"))


_BAD_ARGS = [
    (["-p", "confidence=1.5"], "confidence must be in (0, 1), got 1.5"),
    (["-p", "n_resamples=0"], "n_resamples must be an integer >= 1"),
    (["-p", "seed=-2"], "seed must be an integer >= 0"),
    (["-p", "colour=red"], "unknown report parameter(s) colour"),
    (["--figures", "svg,jpg"], "unknown figure format(s) jpg"),
    (["--figures", "svg,svg"], "without repeats"),
]


def test_a_bad_parameter_is_one_line_and_exit_2_before_any_kernel(tmp_path):
    """In a fresh process (one for every bad argument, to start Python once): each bad
    argument is one line on stderr and exit 2; after all of them neither nbclient nor
    jupyter_client is imported (so no kernel can have started), and nothing is written."""
    import subprocess
    import sys

    out = tmp_path / "r"
    code = (
        "import contextlib, io, json, sys\n"
        "from evalstats.cli import main\n"
        "said = []\n"
        "for args in json.loads(sys.argv[1]):\n"
        "    err, std = io.StringIO(), io.StringIO()\n"
        "    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):\n"
        "        code = main(args)\n"
        "    said.append([code, err.getvalue(), std.getvalue()])\n"
        "assert 'nbclient' not in sys.modules and 'jupyter_client' not in sys.modules\n"
        "print(json.dumps(said))\n"
    )
    calls = [["report", str(SAMPLE), "-o", str(out), *args] for args, _ in _BAD_ARGS]
    proc = subprocess.run(
        [sys.executable, "-c", code, json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    for (args, says), (rc, stderr, stdout) in zip(_BAD_ARGS, json.loads(proc.stdout), strict=True):
        assert rc == 2, (args, stderr)
        assert stderr.count("\n") == 1 and "Traceback" not in stderr, (args, stderr)
        assert stderr.startswith("evalstats report: error: ") and says in stderr, (args, stderr)
        assert stdout == "", args
    assert not out.exists()


def test_figure_files_in_the_formats_asked_for(tmp_path):
    """SVG and PDF by default (TrueType fonts in the PDF), PNG at 300 dpi when asked; the
    SVG shown is the file's; without a directory nothing is written."""
    import io

    from matplotlib.figure import Figure
    from PIL import Image

    from evalstats.report._display import (  # private: the figure writer's formats, directly
        DEFAULT_FORMATS,
        write_figure,
    )

    def fig():
        f = Figure(figsize=(3, 2), layout="constrained")
        f.subplots().plot([0, 1], [1, 0], label="a")
        f.axes[0].set_title("t 0.5")
        return f

    assert DEFAULT_FORMATS == ("svg", "pdf")
    svg, bbox = write_figure(fig(), "a", tmp_path / "one")
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == ["a.pdf", "a.svg"]
    assert (tmp_path / "one" / "a.svg").read_bytes() == svg and 0 < bbox.width <= 3.2
    pdf = (tmp_path / "one" / "a.pdf").read_bytes()
    assert b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType (pdf.fonttype 42)
    write_figure(fig(), "b", tmp_path / "two", ["svg", "pdf", "png"])
    assert sorted(p.name for p in (tmp_path / "two").iterdir()) == ["b.pdf", "b.png", "b.svg"]
    png = Image.open(io.BytesIO((tmp_path / "two" / "b.png").read_bytes()))
    assert round(png.info["dpi"][0]) == 300
    assert (tmp_path / "two" / "b.png").stat().st_mode & 0o777 == 0o644
    svg_only, _ = write_figure(fig(), "c", None)
    assert svg_only.startswith(b"<?xml") and not (tmp_path / "c.svg").exists()


def test_console_script_exits_normally(monkeypatch):
    """``evalstats`` ends with sys.exit (exit handlers and teardown run), for every command."""
    from evalstats import cli

    monkeypatch.setattr(cli, "main", lambda argv=None: 2)
    with pytest.raises(SystemExit) as exc:
        cli.run()
    assert exc.value.code == 2


@pytest.mark.slow
def test_a_failing_cell_names_the_notebook_and_cell_and_keeps_the_copy(tmp_path):
    """Two notebooks run in order in one kernel (the second sees what the first set, which
    is why each page sets its own parameters); a failing cell is one ReportError naming the
    notebook and the cell, and the executed copy is written beside the report."""
    from evalstats.report._render import (  # private: the kernel's environment, directly
        _kernel_env,
        execute_notebooks,
    )

    first = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 41")])
    second = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("print(x + 1)"),
            nbformat.v4.new_code_cell("raise ValueError('no such table')"),
        ]
    )
    copies = tmp_path / "notebooks"
    copies.mkdir()
    with pytest.raises(ReportError, match=r"two\.ipynb failed at cell 2") as exc:
        execute_notebooks(
            [first, second],
            names=["one.ipynb", "two.ipynb"],
            env=_kernel_env(tmp_path / "cache"),
            cwd=tmp_path,
            timeout=120,
            failed_copy=copies,
        )
    assert "no such table" in str(exc.value) and str(copies / "two.ipynb") in str(exc.value)
    saved = nbformat.read(copies / "two.ipynb", as_version=4)
    assert saved.cells[0].outputs[0]["text"] == "42\n"
    assert saved.cells[1].outputs[0]["output_type"] == "error"


def test_image_width_metadata_reaches_the_page():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x")])
    nb.cells[0].outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"image/png": "iVBORw0KGgo=", "text/plain": "fig"},
            metadata={"image/png": {"width": 420}},
        )
    ]
    body = _html.notebook_body(nb)
    assert 'width="420"' in body and 'src="data:image/png;base64,iVBORw0KGgo="' in body
