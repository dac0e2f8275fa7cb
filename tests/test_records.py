"""Loaders: dtypes, formats, and every DataError naming file, line and field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import make_run, make_task, write_jsonl

import evalstats
from evalstats import DataError, EvalstatsWarning, records


def _error(fn, *args, **kw) -> DataError:
    with pytest.raises(DataError) as info:
        fn(*args, **kw)
    return info.value


def test_tasks_dtypes(small_dir):
    tasks = evalstats.load_tasks(small_dir / "tasks.jsonl")
    assert tasks["task_id"].tolist() == ["T1", "T2"]
    assert str(tasks["canonical_written_at"].dtype).startswith("datetime64")
    assert str(tasks["canonical_written_at"].dt.tz) == "UTC"
    assert tasks["budget_tokens"].dtype == np.int64
    assert tasks["budget_wall_s"].dtype == np.float64
    assert tasks["tags"].tolist() == [["x"], ["x"]]


def test_runs_dtypes_and_tokens(small_dir):
    tasks = evalstats.load_tasks(small_dir / "tasks.jsonl")
    runs = evalstats.load_runs(small_dir / "runs.jsonl", tasks)
    assert isinstance(runs["arm"].dtype, pd.CategoricalDtype)
    assert list(runs["arm"].cat.categories) == ["with", "without"]
    assert runs["replicate"].dtype == np.int64
    assert runs["reported_tokens"].dtype == "Int64"
    expected = [evalstats.count_tokens(a) for a in runs["answer"]]
    assert runs["tokens"].tolist() == expected
    assert not runs["over_budget"].any()


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_other_formats_roundtrip(small_dir, fmt):
    tasks = evalstats.load_tasks(small_dir / "tasks.jsonl")
    runs = evalstats.load_runs(small_dir / "runs.jsonl")
    records.write_frame_atomic(tasks, small_dir / f"tasks2.{fmt}")
    records.write_frame_atomic(runs, small_dir / f"runs2.{fmt}")
    tasks2 = evalstats.load_tasks(small_dir / f"tasks2.{fmt}")
    runs2 = evalstats.load_runs(small_dir / f"runs2.{fmt}", tasks2)
    pd.testing.assert_frame_equal(tasks2, tasks, check_dtype=False)
    assert runs2["files_inspected"].tolist() == runs["files_inspected"].tolist()
    assert runs2["arm"].astype(str).tolist() == runs["arm"].astype(str).tolist()


def test_malformed_json_names_line(tmp_path):
    p = tmp_path / "tasks.jsonl"
    p.write_text(json.dumps(make_task("T1")) + "\n{not json\n")
    err = _error(evalstats.load_tasks, p)
    assert (err.path, err.line) == (str(p), 2)
    assert f"{p}:2" in str(err) and "malformed JSON" in str(err)


def test_non_object_line(tmp_path):
    p = tmp_path / "tasks.jsonl"
    p.write_text("[1, 2]\n")
    err = _error(evalstats.load_tasks, p)
    assert err.line == 1 and "JSON object" in str(err)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("budget_tokens", "many", "expected an integer"),
        ("budget_tokens", True, "got bool True"),
        ("budget_wall_s", -1.0, "non-negative"),
        ("canonical_written_at", "yesterday", "ISO-8601"),
        ("prompt", 17, "expected a string"),
        ("tags", "x", "list of strings"),
    ],
)
def test_mistyped_task_field(tmp_path, field, value, reason):
    p = write_jsonl(tmp_path / "tasks.jsonl", [make_task("T1"), make_task("T2", **{field: value})])
    err = _error(evalstats.load_tasks, p)
    assert (err.line, err.field) == (2, field)
    assert reason in str(err)
    assert f"{p}:2" in str(err) and repr(field) in str(err)


def test_missing_required_field(tmp_path):
    rec = make_task("T1")
    del rec["canonical_answer"]
    p = write_jsonl(tmp_path / "tasks.jsonl", [rec])
    err = _error(evalstats.load_tasks, p)
    assert (err.line, err.field) == (1, "canonical_answer") and "missing" in str(err)


def test_duplicate_task(tmp_path):
    p = write_jsonl(tmp_path / "tasks.jsonl", [make_task("T1"), make_task("T2"), make_task("T1")])
    err = _error(evalstats.load_tasks, p)
    assert (err.line, err.field) == (3, "task_id") and "first seen at line 1" in str(err)


def test_unknown_arm(small_dir):
    p = write_jsonl(
        small_dir / "runs.jsonl", [make_run("T1", 1, "with"), make_run("T1", 1, "tool")]
    )
    err = _error(evalstats.load_runs, p)
    assert (err.line, err.field) == (2, "arm") and "unknown arm 'tool'" in str(err)


def test_duplicate_run(small_dir):
    runs = [make_run("T1", 1, "with"), make_run("T1", 1, "without"), make_run("T1", 1, "with")]
    p = write_jsonl(small_dir / "runs.jsonl", runs)
    err = _error(evalstats.load_runs, p)
    assert (err.line, err.field) == (3, "arm") and "duplicate" in str(err)


def test_unknown_task(small_dir):
    tasks = evalstats.load_tasks(small_dir / "tasks.jsonl")
    runs = [
        make_run("T1", 1, "with"),
        make_run("T1", 1, "without"),
        make_run("T9", 1, "with"),
        make_run("T9", 1, "without"),
    ]
    p = write_jsonl(small_dir / "runs.jsonl", runs)
    err = _error(evalstats.load_runs, p, tasks)
    assert (err.line, err.field) == (3, "task_id") and "unknown task 'T9'" in str(err)


def test_pair_with_one_arm_is_reported(small_dir):
    runs = [make_run("T1", 1, "with"), make_run("T1", 1, "without"), make_run("T1", 2, "with")]
    p = write_jsonl(small_dir / "runs.jsonl", runs)
    err = _error(evalstats.load_runs, p)
    assert (err.line, err.field) == (3, "arm") and "only the 'with' run" in str(err)
    with pytest.warns(EvalstatsWarning, match="only the 'with' run"):
        kept = evalstats.load_runs(p, allow_incomplete=True)
    assert len(kept) == 3  # kept, not dropped
    with pytest.warns(EvalstatsWarning, match="1 incomplete pairs left out"):
        pairs = evalstats.pair_runs(kept)
    assert len(pairs) == 1


def test_replicate_must_be_positive(small_dir):
    p = write_jsonl(
        small_dir / "runs.jsonl", [make_run("T1", 0, "with"), make_run("T1", 0, "without")]
    )
    err = _error(evalstats.load_runs, p)
    assert (err.line, err.field) == (1, "replicate")


def test_csv_errors_count_header_as_line_one(tmp_path):
    frame = pd.DataFrame([make_task("T1"), make_task("T2", budget_tokens="lots")])
    frame["tags"] = frame["tags"].map(json.dumps)
    p = tmp_path / "tasks.csv"
    frame.to_csv(p, index=False)
    err = _error(evalstats.load_tasks, p)
    assert (err.line, err.field) == (3, "budget_tokens")


def test_parquet_errors_name_row(tmp_path):
    frame = pd.DataFrame([make_task("T1"), make_task("T2")])
    frame.loc[1, "prompt"] = None
    p = tmp_path / "tasks.parquet"
    frame.to_parquet(p)
    err = _error(evalstats.load_tasks, p)
    assert err.field == "prompt" and "row 2" in str(err) and str(p) in str(err)


def test_unsupported_extension_and_missing_file(tmp_path):
    assert "unsupported" in str(_error(evalstats.load_tasks, tmp_path / "tasks.txt"))
    assert "not found" in str(_error(evalstats.load_tasks, tmp_path / "tasks.jsonl"))


def test_judgments_skip_bookkeeping_lines(tmp_path):
    line = {
        "judgment_id": "j1",
        "task_id": "T1",
        "replicate": 1,
        "judge": "openai:gpt",
        "rubric": "with-without",
        "prompt_revision": 1,
        "prompt_sha256": "ab",
        "order": None,
        "raw": "{}",
        "created_at": "2026-05-03T00:00:00Z",
        "error": None,
    }
    p = write_jsonl(
        tmp_path / "judgments.jsonl",
        [{"kind": "batch", "batch_id": "b1"}, line, {**line, "order": "sideways"}],
    )
    err = _error(evalstats.load_judgments, p)
    assert (err.line, err.field) == (3, "order")
    ok = evalstats.load_judgments(write_jsonl(tmp_path / "j2.jsonl", [{"kind": "batch"}, line]))
    assert len(ok) == 1 and list(ok.attrs["lines"]) == [2]


def test_atomic_writer_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "out.jsonl"
    records.write_jsonl_atomic(p, [{"a": 1}])

    def bad():
        yield {"a": 2}
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        records.write_jsonl_atomic(p, bad())
    assert p.read_text() == '{"a": 1}\n'
    assert [x.name for x in tmp_path.iterdir()] == ["out.jsonl"]  # no temp file left


def test_load_dir(small_dir):
    ds = evalstats.load_dir(small_dir)
    assert ds.judgments is None and len(ds.runs) == 8 and "tokens" in ds.runs
    os.remove(small_dir / "runs.jsonl")
    assert "no runs.jsonl" in str(_error(evalstats.load_dir, small_dir))


def test_path_objects_and_strings(small_dir: Path):
    a = evalstats.load_tasks(str(small_dir / "tasks.jsonl"))
    b = evalstats.load_tasks(small_dir / "tasks.jsonl")
    pd.testing.assert_frame_equal(a, b)
