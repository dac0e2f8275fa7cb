"""``evalstats report --pdf``: the printed report holds every headline number, nothing cut.

The session's rendered sample (``render_once`` of test_report.py, with its hostile judge
texts) is copied and printed through the real ``evalstats report ... --pdf`` command path;
only the render itself is the session's (``render_report`` is replaced by a copy of it, so
that the suite renders the sample once). The PDF's text is read back with pypdf. Without
Chromium the printing tests skip locally but fail under CI, as the browser test does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pypdf
import pytest

from evalstats import cli
from evalstats.report import ReportError, _pdf  # private: browser discovery, no browser needed
from evalstats.report._results import (  # private: the output manifest and cleanup, directly
    MANIFEST,
    clear_previous_outputs,
)

HERE = Path(__file__).resolve().parent
# Letter and A4, in PDF points.
PAPER = {(612, 792), (595, 842)}


def _require_chromium() -> str:
    try:
        return _pdf.find_chromium()
    except ReportError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI is set but the PDF test cannot run: {exc}")
        pytest.skip(str(exc))


def _render_once():
    spec = importlib.util.spec_from_file_location("_evalstats_test_report", HERE / "test_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.render_once, mod.TEST_PARAMS


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> tuple[Path, Path]:
    """(report dir, its report.pdf), printed by `evalstats report DATA -o OUT --pdf`."""
    _require_chromium()
    if not (HERE.parent / "data" / "sample").exists():
        pytest.skip("data/sample is absent")
    render_once, params = _render_once()
    data, session_out = render_once(tmp_path_factory)
    out = tmp_path_factory.mktemp("pdf") / "report"
    calls = []

    def render_copy(data_dir, out_dir, *, params, kind, figures):
        calls.append((Path(data_dir), Path(out_dir), params, kind, figures))
        shutil.copytree(session_out, out_dir)  # the session's render, not a second one
        return Path(out_dir) / "index.html"

    mp = pytest.MonkeyPatch()
    import evalstats.report

    mp.setattr(evalstats.report, "render_report", render_copy)
    try:
        argv = ["report", str(data), "-o", str(out), "--pdf"]
        argv += [a for k, v in params.items() for a in ("-p", f"{k}={v}")]
        assert cli.main(argv) == 0
    finally:
        mp.undo()
    assert calls == [(data, out, params, None, "svg,pdf")]
    return out, out / "report.pdf"


def _text(pdf: Path) -> str:
    reader = pypdf.PdfReader(pdf)
    text = "\n".join(page.extract_text() for page in reader.pages)
    # Line breaks (a cell wrapped between its estimate and interval) and no-break spaces.
    return re.sub(r"\s+", " ", text)


def _page_cells(html_text: str, name: str) -> list[str]:
    cells = []
    for part in re.findall(
        rf'<table data-(?:table|continues)="{name}"[^>]*>(.*?)</table>', html_text, re.S
    ):
        cells += [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td\b[^>]*>(.*?)</td>", part)]
    return cells


@pytest.mark.slow
def test_pdf_holds_both_pages_on_paper(printed):
    out, pdf = printed
    reader = pypdf.PdfReader(pdf)
    assert len(reader.pages) >= 4
    assert {(round(p.mediabox.width), round(p.mediabox.height)) for p in reader.pages} <= PAPER
    assert [item.title for item in reader.outline] == ["Report", "Methodology"]
    text = _text(pdf)
    assert text.index("WITH vs WITHOUT") < text.index("Methodology: what this design can detect")
    assert "SIMULATED DATA" in text
    # Hostile judge text is printed as text; the nav links and anchors are not printed.
    assert "<script>window.__pwned=1</script>" in text
    assert "Report Methodology results.json" not in text and "¶" not in text
    assert json.loads((out / MANIFEST).read_text())["files"].count("report.pdf") == 1


@pytest.mark.slow
def test_pdf_holds_every_headline_number_as_the_page_shows_it(printed):
    out, pdf = printed
    text = _text(pdf)
    headline = json.loads((out / "results.json").read_text())["tables"]["headline"]
    rates = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
    rows = [r for r in headline if r["statistic"] in rates]  # long: one row per statistic
    assert len(rows) >= 4 * len(rates)
    expected = []
    for row in rows:
        cell = f"{row['estimate']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        expected.append((row["rubric"], row["judge"], row["statistic"], cell))
    missing = [e for e in expected if e[3] not in text]
    assert missing == []
    # ...and every headline cell of the page, whatever its column (counts, p-values, method).
    shown = _page_cells((out / "index.html").read_text(encoding="utf-8"), "headline")
    assert len(shown) >= len(expected)
    assert {e[3] for e in expected} <= set(shown)
    assert [c for c in shown if c not in text] == []


@pytest.mark.slow
def test_no_table_is_cut_at_the_page_edge(printed):
    _, pdf = printed
    text = _text(pdf)
    assert re.search(r"win_r(?!ate)", text) is None  # the cut headline
    # A header or text cell wrapped after a hyphen (with-without, t(C-1)), a header after "_".
    joined = re.sub(r"([-_]) ", r"\1", text)
    html_text = (printed[0] / "index.html").read_text(encoding="utf-8")
    headers = {
        re.sub(r"<[^>]+>", "", h)
        for h in re.findall(r"<th\b[^>]*scope=\"col\">(.*?)</th>", html_text)
    }
    assert {"win_rate", "net_win", "score", "sign_test_p", "net_win_p"} <= headers
    # Every column header of every table of the report page is on paper.
    assert sorted(h for h in headers if h not in joined) == []


def test_missing_chromium_is_one_line_before_any_render(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("EVALSTATS_CHROMIUM", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no browser on it
    with pytest.raises(ReportError, match="scripts/install-chromium.sh"):
        _pdf.find_chromium()
    out = tmp_path / "out"
    assert cli.main(["report", "data/sample", "-o", str(out), "--pdf"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "needs Chromium" in err and "install-chromium.sh" in err
    assert not out.exists()  # refused before the render
    monkeypatch.setenv("EVALSTATS_CHROMIUM", str(tmp_path / "nope"))
    with pytest.raises(ReportError, match="EVALSTATS_CHROMIUM=.*nope is not an executable"):
        _pdf.find_chromium()


def test_missing_pypdf_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import fails
    with pytest.raises(ReportError, match=r"evalstats-withwithout\[pdf\]"):
        _pdf.require_pypdf()


def _fake_report(out: Path) -> Path:
    out.mkdir(parents=True)
    nav = '<nav class="pages"><a href="index.html">Report</a><a href="other.html">Other</a>'
    nav += '<a href="results.json">results.json</a><a href="https://example.org/x.html">x</a>'
    for name in ("index.html", "other.html"):
        (out / name).write_text(f"<title>t</title>{nav}</nav><p>{name}</p>", encoding="utf-8")
    digest = hashlib.sha256((out / "index.html").read_bytes()).hexdigest()
    manifest = {"format": "x", "files": ["index.html"], "sha256": {"index.html": digest}}
    (out / MANIFEST).write_text(json.dumps(manifest))
    return out


def test_pages_follow_the_navigation(tmp_path):
    out = _fake_report(tmp_path / "r")
    assert _pdf.report_pages(out) == [("index.html", "Report"), ("other.html", "Other")]
    with pytest.raises(ReportError, match="no rendered report"):
        _pdf.report_pages(tmp_path)


def test_a_failing_browser_leaves_the_previous_pdf(tmp_path):
    out = _fake_report(tmp_path / "r")
    (out / "report.pdf").write_bytes(b"previous")
    false = shutil.which("false")
    with pytest.raises(ReportError, match=r"could not print index\.html \(exit 1\)"):
        _pdf.print_pdf(out, chromium=false)
    assert (out / "report.pdf").read_bytes() == b"previous"
    assert not list(out.glob(".report.pdf.*"))  # no temporary file left behind


@pytest.mark.slow
def test_printed_pdf_is_listed_and_removed_by_the_next_render(tmp_path):
    chromium = _require_chromium()
    out = _fake_report(tmp_path / "r")
    pdf = _pdf.print_pdf(out, chromium=chromium)
    reader = pypdf.PdfReader(pdf)
    assert [i.title for i in reader.outline] == ["Report", "Other"]
    text = _text(pdf)
    assert text.index("index.html") < text.index("other.html")
    assert json.loads((out / MANIFEST).read_text())["files"] == ["index.html", "report.pdf"]
    clear_previous_outputs(out)  # what the next render does first
    assert not pdf.exists()
