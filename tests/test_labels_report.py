"""Human labels reach the report: Dataset.labels, the inputs digest, the labels section.

The data directory is written as a user would: the sample copied, a sheet of ten pairs drawn
with ``evalstats label``, filled in, read back with ``evalstats label --read``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, confusion_matrix
from statsmodels.stats.proportion import samplesize_confint_proportion

from evalstats.cli import build_parser
from evalstats.errors import DataError
from evalstats.frames import verdict_frame
from evalstats.labelsheet import SHEET_COLUMNS, draw_sheet
from evalstats.records import load_dir
from evalstats.report import Unavailable
from evalstats.report._evaluation import (  # private: section internals, hand-made context
    SHARPER,
    _child_rng,
    _labels,
    labels_needed,
    load,
)
from evalstats.report._kinds import Context  # private: section internals, hand-made context
from evalstats.stats.agreement import gold_labels
from evalstats.stats.ppi import ppi_win_rates

# Integration (slow: make test runs it, make check does not): computes the report with human labels.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
VERDICTS = ["A", "B", "tie", "A", "A", "B", "A", "tie", "B", "A"]


def _cli(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample plus ten labels: drawn, filled, the sheet renamed, read back with --key."""
    tmp_path = tmp_path_factory.mktemp("labelled")
    d = tmp_path / "data"
    shutil.copytree(SAMPLE, d)
    sheet = tmp_path / "sheet.csv"
    assert _cli(["label", str(d), "-n", "10", "--seed", "3", "-o", str(sheet)]) == 0
    filled = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled["verdict"] = VERDICTS
    filled["labeler"] = "ann"
    renamed = tmp_path / "ann's verdicts.csv"
    filled.to_csv(renamed, index=False)
    key = tmp_path / "sheet.csv.key.json"
    assert _cli(["label", "--read", str(renamed), "--key", str(key), str(d)]) == 0
    return d


def test_sheet_lists_allowed_answers(tmp_path: Path) -> None:
    sheet = draw_sheet(SAMPLE, 4, seed=1, path=tmp_path / "s.csv")
    written = pd.read_csv(tmp_path / "s.csv", dtype=str, keep_default_na=False)
    assert list(written.columns) == list(SHEET_COLUMNS) == list(sheet.columns)
    assert set(written["allowed_verdicts"]) == {"A (answer_a better), B (answer_b better) or tie"}


def test_renamed_sheet_without_key_names_the_missing_key(tmp_path: Path) -> None:
    d = tmp_path / "data"
    shutil.copytree(SAMPLE, d)
    draw_sheet(d, 4, seed=1, path=tmp_path / "s.csv")
    (tmp_path / "s.csv").rename(tmp_path / "renamed.csv")
    with pytest.raises(DataError, match="blinding key is missing"):
        _cli(["label", "--read", str(tmp_path / "renamed.csv"), str(d)])


def test_load_dir_reads_labels(labelled: Path) -> None:
    ds = load_dir(labelled)
    assert ds.labels is not None and len(ds.labels) == 10
    assert set(ds.labels["labeler"]) == {"ann"}
    assert ds.labels["sample_seed"].eq(3).all()
    tasks, runs, judgments, plan = ds  # still four parts
    assert ds._replace(plan=None).labels is ds.labels
    assert load_dir(SAMPLE).labels is None
    html = ds._repr_html_()
    assert "10 (10 pairs, 1 labeler)" in html
    # The labels add one short row (about 160 characters of HTML) and their file to the
    # (length-capped) files row; the whole display's
    # 2,000-character limit is issue 22 item 8's.
    assert len(html) - len(ds._replace(labels=None)._repr_html_()) < 250


def test_inputs_digest_includes_labels(labelled: Path, labelled_ctx: Context) -> None:
    frame = labelled_ctx.frame  # built once: load() then only reads the files
    loaded = load(labelled, {"judges": None, "rubric": None}, frame)
    assert "labels.jsonl" in [p.name for p in loaded.inputs]
    assert "labels.jsonl" not in [p.name for p in load(SAMPLE, {}, frame).inputs]


@pytest.fixture(scope="module")
def labelled_ctx(labelled: Path) -> Context:
    return _ctx(labelled)


def _ctx(d: Path, seed: int = 5) -> Context:
    ds = load_dir(d)
    frame = verdict_frame(ds.judgments, ds.runs, ds.tasks)
    return Context(
        data_dir=d,
        frame=frame,
        extra={"dataset": ds},
        confidence=0.95,
        n_resamples=100,
        seed=seed,
        params={},
        rng=np.random.default_rng(0),
    )


def test_section_unavailable_without_labels() -> None:
    with pytest.raises(Unavailable, match="no labels.jsonl"):
        _labels(_ctx(SAMPLE))


def test_section_numbers_match_oracles(labelled_ctx: Context) -> None:
    ctx = labelled_ctx
    out = _labels(ctx)
    assert set(out) == {"labels_agreement", "labels_confusion", "labels_ppi", "labels_needed"}
    # No headline computed in this context: nothing to name.
    ds, frame = ctx.extra["dataset"], ctx.frame
    gold = gold_labels(ds.labels)
    judges = sorted(frame["judge"].astype(str).unique())
    agree = out["labels_agreement"].set_index(["rubric", "judge", "statistic"])["estimate"]
    conf = out["labels_confusion"]
    order = ["loss", "tie", "win"]
    for rubric in frame["rubric"].astype(str).unique():
        for judge in judges:
            ok = frame.loc[
                (frame["rubric"].astype(str) == rubric)
                & (frame["judge"].astype(str) == judge)
                & (frame["status"].astype(str) == "ok")
            ].merge(gold.dropna(subset=["gold"]), on=["task_id", "replicate"])
            y, p = ok["gold"].astype(str), ok["outcome"].astype(str)
            assert agree[(rubric, judge, "accuracy")] == pytest.approx(accuracy_score(y, p))
            cell = conf.loc[(conf["rubric"] == rubric) & (conf["judge"] == judge)]
            got = cell.pivot(index="gold", columns="predicted", values="n").loc[order, order]
            np.testing.assert_array_equal(got.to_numpy(), confusion_matrix(y, p, labels=order))
    # The PPI rows are ppi_win_rates' own, from the section's generator stream.
    ppi = out["labels_ppi"]
    first = ppi.iloc[0]
    f = frame.loc[frame["rubric"].astype(str) == first["rubric"]]
    with pytest.warns(Warning):  # fewer than 15 labelled pairs
        direct = ppi_win_rates(
            f, ds.labels, judge=first["judge"], rubric=first["rubric"],
            rng=_child_rng(5, 12), n_resamples=100,
        )  # fmt: skip
    np.testing.assert_allclose(
        ppi.iloc[:5][["estimate", "ci_low", "ci_high", "judge_only"]].to_numpy(float),
        direct[["estimate", "ci_low", "ci_high", "judge_only"]].to_numpy(float),
    )
    assert any("15" in n for n in ppi.attrs["notes"])
    need = out["labels_needed"]
    row = need.iloc[0]
    assert row["target_half_width"] == pytest.approx(row["half_width"] / SHARPER)
    # Halving the interval takes four times the labels (capped by the judged pairs).
    assert row["labels_needed"] == min(4 * row["n_labelled"], row["n_pairs"])


def test_headline_names_its_estimate(labelled_ctx: Context) -> None:
    from evalstats.report._evaluation import _headline  # private: the headline text, in isolation

    ctx = labelled_ctx
    ctx.tables.update(_headline(ctx))
    try:
        out = _labels(ctx)
    finally:
        head = ctx.tables.pop("headline")
    assert set(out["headline"]["estimate_source"]) == {"judge-only"}
    assert out["headline"].shape[1] == head.shape[1] + 1 <= 16
    assert "estimate_source" not in head.columns  # the computed table is left alone
    assert out["headline"].diagnostics is not None


@pytest.mark.parametrize("p, h, n", [(0.5, 0.1, 10), (0.3, 0.05, 40), (0.8, 0.2, 7)])
def test_labels_needed_matches_statsmodels(p: float, h: float, n: int) -> None:
    # A labels-only proportion from n labels has half-width z sqrt(p (1 - p) / n).
    z = 1.959963984540054
    now = z * np.sqrt(p * (1 - p) / n)
    want = int(np.ceil(samplesize_confint_proportion(p, h, alpha=0.05)))
    assert labels_needed(now, n, target_half_width=h) == want


def test_labels_needed_refuses_nonsense() -> None:
    with pytest.raises(ValueError):
        labels_needed(0.0, 10, target_half_width=0.1)


def test_card_names_the_estimate(labelled_ctx: Context, monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    import evalstats.report._display as dp  # private: a display seam monkeypatched to capture output
    import evalstats.report._export as sentences  # private: a display seam monkeypatched to capture output
    from evalstats.report._evaluation import (  # private: a display seam monkeypatched to capture output
        _headline,
        estimate_note,
    )

    ctx = labelled_ctx
    ctx.tables.update(_headline(ctx))
    try:
        head = _labels(ctx)["headline"]
    finally:
        plain = ctx.tables.pop("headline")
    assert estimate_note(plain) == ""
    # The card's paragraph is the sentences module's (tested there); the line added is ours.
    monkeypatch.setattr(sentences, "_headline_parts", lambda doc, *a: ("WITH won.", [], "Why."))
    monkeypatch.setattr(sentences, "_caveats", lambda doc: [])  # the audit's list: tested there
    shown: list[str] = []
    monkeypatch.setattr(dp, "_display", lambda html, text: shown.append(text))
    for table in (head, plain):
        dp.show_headline_card(types.SimpleNamespace(tables={"headline": table}, to_json=dict))
    assert shown == [
        "Headline. WITH won. Estimate shown: judge-only (the people's PPI-corrected rates: "
        "'Judges against people').\nAudit: all the checks pass.\nWhy this row: Why.",
        "Headline. WITH won.\nAudit: all the checks pass.\nWhy this row: Why.",
    ]


@pytest.mark.slow
def test_rendered_page_shows_the_labels_section(labelled: Path, tmp_path: Path) -> None:
    import json
    import re

    from test_report import TEST_PARAMS

    from evalstats.report import render_report

    out = tmp_path / "report"
    render_report(labelled, out, params=TEST_PARAMS, figures="svg")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "labels.jsonl" in doc["provenance"]["inputs"]
    assert {r["estimate_source"] for r in doc["tables"]["headline"]} == {"judge-only"}
    assert doc["tables"]["labels_ppi"] and doc["tables"]["labels_needed"]
    page = (out / "index.html").read_text(encoding="utf-8")
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "Judges against people" in text
    assert "Each judge against the people" in text and "Labels needed to halve" in text
    assert "Estimate shown: judge-only" in text
