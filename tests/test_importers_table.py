"""Any-table importer: a column mapping over JSONL, CSV and Parquet, errors naming file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import evalstats
from evalstats import DataError
from evalstats.cli import build_parser
from evalstats.importers import from_table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"


def _foreign(tmp_path: Path) -> pd.DataFrame:
    """The sample's runs and tasks as another tool would write them: own names, own arms."""
    runs = pd.read_json(SAMPLE / "runs.jsonl", lines=True, dtype=False)
    tasks = pd.read_json(SAMPLE / "tasks.jsonl", lines=True, dtype=False)
    wide = runs.merge(tasks, on="task_id")
    wide["condition"] = wide["arm"].map({"with": "tool", "without": "baseline"})
    return wide.drop(columns=["arm"]).rename(
        columns={"task_id": "qid", "answer": "output", "prompt": "question"}
    )


MAP = ["task_id=qid", "arm=condition", "answer=output", "prompt=question"]
MAPPING = dict(m.split("=") for m in MAP)


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        out = frame.copy()
        for col in ("files_inspected", "tags"):
            out[col] = out[col].map(lambda v: json.dumps(v) if isinstance(v, list) else v)
        out.to_csv(path, index=False)
    elif path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        path.write_text(frame.to_json(orient="records", lines=True))
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_mapped_table_equals_the_contract_files(tmp_path, suffix):
    src = _write(_foreign(tmp_path), tmp_path / f"results{suffix}")
    tasks, runs = from_table(src, mapping=MAPPING, arm_values="with=tool,without=baseline")
    ref = evalstats.load_dir(SAMPLE)
    key = ["task_id", "replicate", "arm"]
    cols = [*key, "answer", "wall_s", "reported_tokens", "tokens", "files_inspected"]
    a = runs[cols].sort_values(key).reset_index(drop=True)
    b = ref.runs[cols].sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
    assert (
        runs["started_at"].to_numpy()
        == ref.runs.set_index(key)
        .loc[pd.MultiIndex.from_frame(runs[key].astype({"arm": str}))]["started_at"]
        .to_numpy()
    ).all()
    t = tasks.set_index("task_id").sort_index()
    r = ref.tasks.set_index("task_id").sort_index()
    assert t["prompt"].equals(r["prompt"])
    assert t["budget_tokens"].tolist() == r["budget_tokens"].tolist()


def test_mapping_to_a_missing_column(tmp_path):
    src = _write(_foreign(tmp_path), tmp_path / "results.csv")
    with pytest.raises(DataError) as info:
        from_table(src, mapping={**MAPPING, "task_id": "question_id"})
    msg = str(info.value)
    assert msg.startswith(
        f"{src}:1, field 'question_id': mapping task_id=question_id names a missing column"
    )
    assert "\n" not in msg


def test_bad_value_names_the_source_line(tmp_path):
    frame = _foreign(tmp_path)
    frame["wall_s"] = frame["wall_s"].astype(object)
    frame.loc[4, "wall_s"] = "slow"
    src = _write(frame, tmp_path / "results.csv")
    with pytest.raises(DataError) as info:
        from_table(src, mapping=MAPPING, arm_values="with=tool,without=baseline")
    # row 4 (0-based) is line 6 of the CSV: the header is line 1
    assert str(info.value).startswith(f"{src}:6, field 'wall_s': run: expected a number")


def test_unmapped_arm_value(tmp_path):
    src = _write(_foreign(tmp_path), tmp_path / "results.jsonl")
    with pytest.raises(DataError) as info:
        from_table(src, mapping=MAPPING, arm_values="with=tool")
    assert str(info.value).startswith(f"{src}:")
    assert "'baseline' names no arm" in str(info.value)


def test_runs_only_table_needs_tasks(tmp_path):
    frame = _foreign(tmp_path)[["qid", "replicate", "condition", "output", "wall_s"]]
    src = _write(frame, tmp_path / "runs.parquet")
    imported = from_table(
        src,
        mapping={"task_id": "qid", "arm": "condition", "answer": "output"},
        arm_values="with=tool,without=baseline",
        defaults={"agent_model": "m", "started_at": "2026-06-01T00:00:00Z"},
    )
    assert imported.tasks is None
    (problem,) = [p for p in imported.problems if "billed" not in p.message]
    assert "tasks not built" in str(problem) and "prompt" in str(problem)
    assert set(imported.runs["agent_model"]) == {"m"}
    with_tasks = from_table(
        src,
        mapping={"task_id": "qid", "arm": "condition", "answer": "output"},
        arm_values="with=tool,without=baseline",
        defaults={"agent_model": "m", "started_at": "2026-06-01T00:00:00Z"},
        tasks_file=SAMPLE / "tasks.jsonl",
    )
    assert len(with_tasks.tasks) == 15 and "tokens" in with_tasks.runs


def test_cli_import_table(tmp_path, capsys, monkeypatch):
    src = _write(_foreign(tmp_path), tmp_path / "results.csv")
    parser = build_parser()
    out = tmp_path / "data"
    argv = [
        "import",
        "table",
        str(src),
        "-o",
        str(out),
        "--arm-values",
        "with=tool,without=baseline",
    ]
    for m in MAP:
        argv += ["--map", m]
    args = parser.parse_args(argv)
    assert args.func(args) == 0
    assert "imported 180 runs (90 pairs over 15 tasks)" in capsys.readouterr().out
    ds = evalstats.load_dir(out)
    assert len(ds.runs) == 180 and len(ds.tasks) == 15
    bad = parser.parse_args([*argv, "--map", "nonsense"])
    with pytest.raises(evalstats.EvalstatsError, match="--map expects FIELD=VALUE"):
        bad.func(bad)


def test_conflicting_task_fields_are_a_problem_line(tmp_path):
    frame = _foreign(tmp_path)
    first = frame.index[frame["qid"] == frame.at[0, "qid"]]
    frame.loc[first[1], "question"] = "a different question"
    src = _write(frame, tmp_path / "results.jsonl")
    imported = from_table(src, mapping=MAPPING, arm_values="with=tool,without=baseline")
    (problem,) = [p for p in imported.problems if "billed" not in p.message]
    assert str(problem).startswith(
        f"{src}:{first[1] + 1}: task {frame.at[0, 'qid']!r}: prompt differ"
    )
    kept = imported.tasks.set_index("task_id").at[frame.at[0, "qid"], "prompt"]
    assert kept == frame.at[0, "question"]


def test_every_missing_field_is_named_at_once_with_its_fix(tmp_path):
    # A user's table: own column names, no model, no start time, no task id column mapped.
    frame = _foreign(tmp_path).drop(columns=["agent_model", "started_at"])
    src = _write(frame, tmp_path / "results.csv")
    mapping = {k: v for k, v in MAPPING.items() if k != "task_id"}
    with pytest.raises(DataError) as info:
        from_table(src, mapping=mapping, arm_values="with=tool,without=baseline")
    msg = str(info.value)
    assert msg.startswith(f"{src}: no column for 3 required run field(s): ")
    for field in ("task_id", "agent_model", "started_at"):
        assert f"{field} (--map {field}=COLUMN or --set {field}=VALUE)" in msg
    assert "answer" not in msg.split("(columns:")[0]  # mapped from 'output'
    assert "\n" not in msg


def test_cli_writes_nothing_and_exits_2_without_tasks(tmp_path, capsys):
    from evalstats.cli import main

    frame = _foreign(tmp_path)[["qid", "replicate", "condition", "output", "wall_s"]]
    src = _write(frame, tmp_path / "runs.jsonl")
    out = tmp_path / "data"
    argv = [
        "import",
        "table",
        str(src),
        "-o",
        str(out),
        "--arm-values",
        "with=tool,without=baseline",
    ]
    argv += ["--map", "task_id=qid", "--map", "arm=condition", "--map", "answer=output"]
    argv += ["--set", "agent_model=m", "--set", "started_at=2026-06-01T00:00:00Z"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    # The problem line names each missing task field with its fix, then one error line.
    assert "prompt (--map prompt=COLUMN or --set prompt=VALUE)" in err
    assert "canonical_written_at (--map canonical_written_at=COLUMN" in err
    assert "or pass --tasks FILE" in err
    assert f"{out}: nothing written: judge and report need tasks" in err
    assert not out.exists()
    # With tasks, exit 0 means the directory loads as judge and report load it.
    assert main([*argv, "--tasks", str(SAMPLE / "tasks.jsonl")]) == 0
    ds = evalstats.load_dir(out)
    assert len(ds.runs) == 180 and len(ds.tasks) == 15
