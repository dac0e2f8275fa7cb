"""Tables a reader scans (issue 34, Deliver 2): one table per caption, wrapped to fit; a
confusion matrix shown as a matrix; integers printed as integers; no unexplained rows."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import confusion_matrix

from evalstats import summarize
from evalstats.report import merge_ci, show_table, table_html


class _Tables(HTMLParser):
    """Each <table> of a fragment: its caption and rows of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._caption = False

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append({"attrs": dict(attrs), "caption": "", "rows": []})
        elif tag == "tr":
            self.tables[-1]["rows"].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._caption = True

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1]["rows"][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "caption":
            self._caption = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._caption:
            self.tables[-1]["caption"] += data


def _tables(fragment: str) -> list[dict]:
    parser = _Tables()
    parser.feed(fragment)
    return parser.tables


def _wide_table(n_stats: int = 12) -> pd.DataFrame:
    data = {"rubric": ["blind-pair", "with-without", "x<y"], "judge": ["a:b", "c:d", "e&f"]}
    for i in range(n_stats):
        est = np.array([0.1 * i + 0.01 * r for r in range(3)])
        data |= {f"rate_{i}": est, f"rate_{i}_ci_low": est - 0.05, f"rate_{i}_ci_high": est + 0.05}
    data["n"] = [10, 20, 30]
    return merge_ci(pd.DataFrame(data), [f"rate_{i}" for i in range(n_stats)])


def test_a_wide_table_is_one_table_with_one_caption():
    table = _wide_table()
    fragment = table_html(table, caption="rates", name="t")
    (shown,) = _tables(fragment)
    assert "continued" not in fragment and "data-part" not in fragment
    assert shown["caption"] == "rates" and shown["attrs"] == {"data-table": "t"}
    header, *rows = shown["rows"]
    assert header == list(table.columns)  # every column once, in order
    assert rows == table.astype(str).to_numpy().tolist()  # "est [lo, hi]" text intact
    # Where a header may wrap: after "_" (the text is unchanged); cells escaped.
    assert "rate_<wbr>0" in fragment and ">a:b<" in fragment and "x&lt;y" in fragment
    assert '<td class="ci">0.000 <span>[-0.050, 0.050]</span></td>' in fragment


def test_whole_numbers_print_as_integers():
    t = pd.DataFrame({
        "judge": ["a", "b"], "calls": [170.0, 85.0], "input_tokens": [112582.0, 0.0],
        "n_errors": [0.0, 0.0], "usd": [0.718281, 0.2], "df": [14.0, 14.5],
        "coverage": [1.0, 1.0], "primary": ["", ""],
    })  # fmt: skip
    header, *rows = _tables(table_html(t))[0]["rows"]
    # A column of empty text (no plan: no primary mark) is not shown.
    assert header == ["judge", "calls", "input_tokens", "n_errors", "usd", "df", "coverage"]
    assert rows[0] == ["a", "170", "112,582", "0", "0.718", "14.000", "1.000"]
    assert not any(re.fullmatch(r"[\d,]+\.000", c) for c in rows[0][1:4])
    # A rank and its rank set: whole numbers; a rate keeps its decimals.
    ranks = pd.DataFrame({
        "arm": ["none", "v1", "v2"], "rank": [3.0, 2.0, 1.0], "rank_ci_low": [1.0, 1.0, 1.0],
        "rank_ci_high": [3.0, 3.0, 1.0], "rate": [0.5, 1.0, 0.0], "rate_ci_low": [0.4, 0.9, 0.0],
        "rate_ci_high": [0.6, 1.0, 0.1],
    })  # fmt: skip
    merged = merge_ci(ranks, ["rank", "rate"])
    assert merged["rank"].tolist() == ["3 [1, 3]", "2 [1, 3]", "1 [1, 1]"]
    assert merged["rate"].tolist()[1] == "1.000 [0.900, 1.000]"
    view = summarize(ranks, statistics=["rank"])
    assert view["rank"].tolist() == ["3 [1, 3]", "2 [1, 3]", "1 [1, 1]"]


def test_a_confusion_table_is_shown_as_one_matrix_per_judge_and_rubric(monkeypatch):
    rng = np.random.default_rng(4)
    order = ["loss", "tie", "win"]
    truth, rows = {}, []
    for rubric in ("blind-pair", "with-without"):
        for judge in ("anthropic:x", "openai:y"):
            gold, predicted = rng.choice(order, 40), rng.choice(order, 40)
            truth[(rubric, judge)] = confusion_matrix(predicted, gold, labels=order)
            rows += [
                {"rubric": rubric, "judge": judge, "gold": g, "predicted": p,
                 "n": int(np.sum((gold == g) & (predicted == p)))}
                for g in order for p in order
            ]  # fmt: skip
    results = SimpleNamespace(tables={"labels_confusion": pd.DataFrame(rows)}, unavailable={})
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    show_table(results, "labels_confusion", matrix=("predicted", "gold"), caption="counts")
    (out,) = shown
    tables = _tables(out["text/html"])
    assert len(tables) == 4 and "counts" in out["text/html"]
    for t in tables:
        rubric, judge = t["caption"].split(" · ")
        header, *body = t["rows"]
        assert header == ["predicted \\ gold", *order]  # the judge down, the people across
        assert [r[0] for r in body] == order
        got = np.array([[int(c) for c in r[1:]] for r in body])
        np.testing.assert_array_equal(got, truth[(rubric, judge)])


@pytest.mark.slow
def test_the_sample_report_reads_as_tables(tmp_path_factory):
    import importlib.util
    from pathlib import Path

    # The session's one render of the sample, shared with test_report.py (loaded by path).
    spec = importlib.util.spec_from_file_location(
        "_evalstats_test_report", Path(__file__).with_name("test_report.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    _, out = mod.render_once(tmp_path_factory)
    page = (out / "index.html").read_text(encoding="utf-8")
    doc = json.loads((out / "results.json").read_text())
    assert "(continued)" not in page and "data-continues" not in page
    assert page.count('data-table="headline"') == 1
    # Judge spend: tokens and calls as integers with thousands separators.
    (spend,) = (t for t in _tables(page) if t["attrs"].get("data-table") == "judge_spend")
    header, *rows = spend["rows"]
    for row, want in zip(rows, doc["tables"]["judge_spend"], strict=True):
        cells = dict(zip(header, row, strict=True))
        for c in ("calls", "input_tokens", "output_tokens", "n_errors"):
            assert cells[c] == f"{int(want[c]):,}", c
    # Audit lines a reviewer can check: the ratio in words, each percentage's denominator.
    (audit,) = (t for t in _tables(page) if t["attrs"].get("data-table") == "audit")
    details = {r[0]: r[2] for r in audit["rows"][1:]}
    assert "reported / counted" not in page
    assert "(reported tokens are 1.25× the count in all 13)" in details["reported_tokens"]
    assert re.search(r"of \d+ pair-orders \(\d+ pairs\), \d+\.\d % of the pair-orders",
                     details["judge_failure_rate"])  # fmt: skip
