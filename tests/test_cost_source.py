"""Issue 22 item 1: a cost ratio names its token source and never prices an answer as a run."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import evalstats
from evalstats.importers import from_table, write_data_dir
from evalstats.stats.cost import cost_ratios

# Integration (slow: make test runs it, make check does not): computes the report per token source.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _user_table(tmp_path: Path, *, tokens: bool) -> tuple[Path, pd.DataFrame]:
    """The sample's runs as a harness export: no transcripts, maybe a real ``tokens`` column."""
    runs = pd.read_json(SAMPLE / "runs.jsonl", lines=True, dtype=False)
    runs = runs.drop(columns=["transcript", "reported_tokens"])
    if tokens:
        rng = np.random.default_rng(7)
        runs["tokens"] = rng.integers(2_000, 9_001, len(runs))
    path = tmp_path / "export.csv"
    runs.drop(columns=["files_inspected"]).to_csv(path, index=False)
    return path, runs


def _cost(tmp_path: Path, table: Path) -> pd.DataFrame:
    imported = from_table(table, tasks_file=SAMPLE / "tasks.jsonl")
    out = tmp_path / "data"
    write_data_dir(imported, out)
    shutil.copy(SAMPLE / "tasks.jsonl", out / "tasks.jsonl")
    shutil.copy(SAMPLE / "judgments.jsonl", out / "judgments.jsonl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = evalstats.load_dir(out)
        frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    return cost_ratios(frame, interval="analytic")


def test_table_with_a_tokens_column_and_no_transcripts_uses_billed(tmp_path):
    table, runs = _user_table(tmp_path, tokens=True)
    res = _cost(tmp_path, table).set_index("statistic")
    assert res.attrs["token_source"] == "billed"
    assert res.loc["tokens_total_ratio", "token_source"] == "billed"
    assert pd.isna(res.loc["wall_total_ratio", "token_source"])
    # Oracle: the ratio of the harness's totals over the pairs, straight from the table.
    wide = runs.pivot_table(index=["task_id", "replicate"], columns="arm", values="tokens")
    wide = wide.dropna()
    expected = wide["with"].sum() / wide["without"].sum()
    assert res.loc["tokens_total_ratio", "estimate"] == pytest.approx(expected, rel=1e-12)
    assert "transcript_ratios" not in res.attrs  # no transcripts: one source only


def test_table_with_answers_only_is_unavailable_with_the_reason(tmp_path):
    table, _ = _user_table(tmp_path, tokens=False)
    res = _cost(tmp_path, table).set_index("statistic")
    assert res.attrs["token_source"] == "unavailable"
    for stat in ("tokens_total_ratio", "tokens_geomean_ratio", "tokens_median_ratio"):
        row = res.loc[stat]
        assert row["method"] == "unavailable"
        assert np.isnan(row["estimate"]) and np.isnan(row["ci_low"])
        assert "answer" in row["estimand"] and "billed" in row["estimand"]
    assert np.isfinite(res.loc["wall_total_ratio", "estimate"])  # wall-clock is still real


def test_sample_has_both_sources_and_reports_both():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = evalstats.load_dir(SAMPLE)
        frame = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    res = cost_ratios(frame, interval="analytic")
    assert res.attrs["token_source"] == "billed"
    alt = res.attrs["transcript_ratios"].set_index("statistic")
    pairs = ds.runs.pivot_table(
        index=["task_id", "replicate"], columns="arm", values="tokens", aggfunc="first"
    ).dropna()
    expected = pairs["with"].astype(float).sum() / pairs["without"].astype(float).sum()
    assert alt.loc["tokens_total_ratio", "estimate"] == pytest.approx(expected, rel=1e-12)
    assert (alt["token_source"] == "transcript").all()


def test_an_unavailable_cost_is_said_with_its_reason():
    """Answer-only counts give no ratio: the exported sentence says so and why."""
    from evalstats.report import FORMAT, result_sentences

    why = "only answer-only token counts: 2 of 2 pairs lack a transcript"
    row = {
        "statistic": "tokens_total_ratio",
        "method": "unavailable",
        "estimand": f"unavailable: {why}",
    }
    (said,) = result_sentences({"format": FORMAT, "tables": {"cost": [row]}})
    assert said == f"The WITH / WITHOUT ratio of total tokens is not reported: {why}."
