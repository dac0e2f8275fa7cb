"""inspect_ai importer on REAL logs, made here by ``inspect eval`` with mockllm in both arms.

The task file (fixtures/importers/inspect_tiny_task.py) defines two tasks, one per arm (task
argument ``tools``); its mockllm outputs carry their own usage, because mockllm's default
usage counts tokens with o200k_base, which tiktoken would download. Every expected value
below is read back from the logs with inspect_ai's reader, not typed in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import evalstats
from evalstats import DataError
from evalstats.cli import build_parser
from evalstats.importers import from_inspect, write_data_dir


def inspect_log():
    """inspect_ai's log module, imported when a test reads logs (importing it costs ~1.5 s,
    which collecting this file for ``make check`` need not pay), or the test skips."""
    return pytest.importorskip("inspect_ai.log", reason="inspect_ai (evalstats[inspect]) absent")


FIXTURES = Path(__file__).parent / "fixtures" / "importers"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    """Run the tiny two-arm task once with the ``inspect`` CLI; {arm: log path}."""
    inspect_log()  # skips without inspect_ai
    work = tmp_path_factory.mktemp("inspect")
    shutil.copy(FIXTURES / "inspect_tiny_task.py", work / "tiny_task.py")
    inspect = Path(sys.executable).with_name("inspect")
    env = {
        **os.environ,
        # inspect_ai keeps traces and buffers in the user's data dir: keep them in tmp.
        "XDG_DATA_HOME": str(work / "xdg-data"),
        "XDG_CACHE_HOME": str(work / "xdg-cache"),
        "INSPECT_LOG_DIR": str(work / "logs"),
    }
    proc = subprocess.run(
        [str(inspect), "eval", "tiny_task.py", "--log-dir", "logs", "--display", "none"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = {}
    for path in sorted((work / "logs").glob("*.eval")):
        log = inspect_log().read_eval_log(str(path))
        assert log.status == "success", log.error
        found["with" if log.eval.task_args["tools"] else "without"] = path
    assert set(found) == {"with", "without"}
    return found


def _expected(logs: dict[str, Path]) -> dict[tuple[str, int, str], dict]:
    out = {}
    for arm, path in logs.items():
        for s in inspect_log().read_eval_log(str(path)).samples:
            out[(str(s.id), s.epoch, arm)] = {
                "answer": s.output.completion,
                "reported_tokens": sum(u.total_tokens for u in s.model_usage.values()),
                "wall_s": s.total_time,
                "model": s.output.model,
                "files": [
                    c.arguments["path"]
                    for m in s.messages
                    for c in (getattr(m, "tool_calls", None) or [])
                    if c.function == "read_file"
                ],
                "messages": [m.text for m in s.messages],
            }
    return out


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_runs_match_the_logs(logs):
    tasks, runs = from_inspect(
        list(logs.values()), arm_from="task_arg:tools", canonical_written_at=WRITTEN
    )
    expected = _expected(logs)
    assert len(runs) == len(expected) == 12  # 3 samples x 2 epochs x 2 arms
    assert sorted(runs["replicate"].unique().tolist()) == [1, 2]
    for row in runs.itertuples():
        exp = expected[(row.task_id, row.replicate, row.arm)]
        assert row.answer == exp["answer"]
        assert row.reported_tokens == exp["reported_tokens"]
        assert row.wall_s == pytest.approx(exp["wall_s"])
        assert row.agent_model == exp["model"]
        assert row.files_inspected == exp["files"]
        for text in exp["messages"]:
            assert text in row.transcript
    # each arm's own mock answered it (the two arms share the model name mockllm/model)
    assert set(runs["agent_model"]) == {"mockllm/model"}
    prefix = {"with": "tools answer", "without": "plain answer"}
    assert all(r.answer.startswith(prefix[r.arm]) for r in runs.itertuples())
    # the WITH arm called read_file once per sample, the WITHOUT arm never
    assert runs.loc[runs["arm"] == "with", "files_inspected"].map(len).eq(1).all()
    assert runs.loc[runs["arm"] == "without", "files_inspected"].map(len).eq(0).all()
    # our own count (cl100k_base over the transcript) is the one used, beside the reported
    counts = evalstats.count_tokens(runs["transcript"].tolist())
    assert runs["tokens"].tolist() == list(counts)


WRITTEN = "2025-12-01T08:00:00Z"


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_no_canonical_time_means_no_tasks_not_an_invented_time(logs):
    # Issue 22 item 5: the eval's start is not when the targets were written.
    imported = from_inspect(logs.values(), arm_from="task_arg:tools")
    assert imported.tasks is None
    assert any("--canonical-written-at" in p.message for p in imported.problems)


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_tasks_from_the_logs(logs):
    imported = from_inspect(logs.values(), arm_from="task_arg:tools", canonical_written_at=WRITTEN)
    tasks = imported.tasks
    samples = inspect_log().read_eval_log(str(logs["with"])).samples
    spec = inspect_log().read_eval_log(str(logs["with"])).eval
    by_id = {str(s.id): s for s in samples}
    assert sorted(tasks["task_id"]) == sorted(by_id)
    for t in tasks.itertuples():
        assert t.prompt == by_id[t.task_id].input
        assert t.canonical_answer == by_id[t.task_id].target
        assert t.budget_tokens == spec.config.token_limit
        assert t.budget_wall_s == spec.config.time_limit
    assert (tasks["canonical_written_at"] == pd.Timestamp(WRITTEN)).all()
    assert imported.problems == ()


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
@pytest.mark.parametrize(
    ("arm_from", "arm_values"),
    [
        ("metadata:condition", "with=tools,without=plain"),
        ("model_role:agent", {"with": "mockllm/tools", "without": ["mockllm/plain"]}),
    ],
)
def test_other_arm_sources_agree(logs, arm_from, arm_values):
    base = from_inspect(logs.values(), arm_from="task_arg:tools").runs
    other = from_inspect(logs.values(), arm_from=arm_from, arm_values=arm_values).runs
    keys = ["task_id", "replicate", "arm", "answer"]
    a = base[keys].astype(str).sort_values(keys).reset_index(drop=True)
    b = other[keys].astype(str).sort_values(keys).reset_index(drop=True)
    assert a.equals(b)


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_unmapped_arm_value_names_the_sample(logs):
    with pytest.raises(DataError) as info:
        from_inspect([logs["with"]], arm_from="metadata:condition")
    msg = str(info.value)
    assert str(logs["with"]) in msg and "sample 'q1' epoch 1" in msg and "'tools'" in msg
    assert "\n" not in msg


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_missing_arm_source(logs):
    with pytest.raises(DataError, match="model 'mockllm/model' names no arm"):
        from_inspect(logs.values(), arm_from="model")
    with pytest.raises(DataError, match="no task_arg:nope here"):
        from_inspect(logs.values(), arm_from="task_arg:nope")
    with pytest.raises(ValueError, match="arm_from must be"):
        from_inspect(logs.values(), arm_from="sample:x")


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_truncated_log_is_a_one_line_error(logs, tmp_path):
    data = logs["with"].read_bytes()
    bad = tmp_path / "cut.eval"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(bad)  # the file really is a broken archive
    with pytest.raises(DataError) as info:
        from_inspect([bad, logs["without"]], arm_from="task_arg:tools")
    assert str(info.value).startswith(f"{bad}: unreadable inspect_ai log")
    assert "\n" not in str(info.value)


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_json_log_format_reads_the_same(logs, tmp_path):
    """The same logs converted to inspect's .json format import to the same runs."""
    paths = []
    for arm, path in logs.items():
        log = inspect_log().read_eval_log(str(path))
        out = tmp_path / f"{arm}.json"
        inspect_log().write_eval_log(log, str(out), format="json")
        json.loads(out.read_text())  # really JSON
        paths.append(out)
    a = from_inspect(logs.values(), arm_from="task_arg:tools").runs
    b = from_inspect(paths, arm_from="task_arg:tools").runs
    cols = ["task_id", "replicate", "arm", "answer", "reported_tokens", "transcript"]
    key = ["task_id", "replicate", "arm"]
    assert (
        a[cols]
        .sort_values(key)
        .reset_index(drop=True)
        .equals(b[cols].sort_values(key).reset_index(drop=True))
    )


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_incomplete_pair_needs_allow_incomplete(logs):
    with pytest.raises(DataError, match="has only the 'with' run"):
        from_inspect([logs["with"]], arm_from="task_arg:tools")
    with pytest.warns(evalstats.EvalstatsWarning):
        runs = from_inspect([logs["with"]], arm_from="task_arg:tools", allow_incomplete=True).runs
    assert len(runs) == 6


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_budget_flags_and_tasks_file_win(logs, tmp_path):
    imported = from_inspect(
        logs.values(), arm_from="task_arg:tools", budget_tokens=7, canonical_written_at=WRITTEN
    )
    assert (imported.tasks["budget_tokens"] == 7).all()
    given = from_inspect(logs.values(), arm_from="task_arg:tools", tasks_file=_tasks_file(tmp_path))
    assert given.tasks["budget_tokens"].tolist() == [123, 123, 123]


def _tasks_file(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    rows = [
        {
            "task_id": q,
            "prompt": "p",
            "canonical_answer": "a",
            "canonical_written_at": "2026-01-01T00:00:00Z",
            "budget_tokens": 123,
            "budget_wall_s": 60.0,
        }
        for q in ("q1", "q2", "q3")
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_cli_writes_a_loadable_data_dir(logs, tmp_path, capsys):

    parser = build_parser()
    out = tmp_path / "data"
    args = parser.parse_args(
        [
            "import",
            "inspect",
            str(logs["with"].parent),
            "--arm-from",
            "task_arg:tools",
            "--canonical-written-at",
            WRITTEN,
            "-o",
            str(out),
        ]
    )
    assert args.func(args) == 0
    printed = capsys.readouterr()
    assert "imported 12 runs (6 pairs over 3 tasks)" in printed.out
    ds = evalstats.load_dir(out)
    assert len(ds.runs) == 12 and len(ds.tasks) == 3
    again = from_inspect(logs.values(), arm_from="task_arg:tools")
    write_data_dir(again, tmp_path / "data2")
    assert (out / "runs.jsonl").read_bytes() == (tmp_path / "data2" / "runs.jsonl").read_bytes()


def test_unknown_budgets_mean_no_tasks():
    """Without eval limits or flags, budgets are not invented: the reason is returned."""
    from evalstats.importers._inspect import (
        _finish_tasks,  # private: a fault seam of the inspect importer
    )

    tasks = {"q1": {"task_id": "q1", "prompt": "p", "canonical_answer": "a"}}
    reason = _finish_tasks(
        tasks, {"budget_tokens": {None}, "budget_wall_s": {600}}, None, None, "2026-01-01"
    )
    assert reason.startswith("tasks not written") and "--budget-tokens" in reason
    reason = _finish_tasks(
        tasks, {"budget_tokens": {10, 20}, "budget_wall_s": {600}}, None, None, "2026-01-01"
    )
    assert "differ between logs" in reason
    (rec,) = _finish_tasks(
        tasks, {"budget_tokens": {None}, "budget_wall_s": {600}}, 50, None, "2026-01-01"
    )
    assert rec["budget_tokens"] == 50 and rec["budget_wall_s"] == 600.0


@pytest.mark.slow  # runs inspect_ai's CLI for its logs
def test_directory_skips_eval_set_bookkeeping(logs, tmp_path):
    for path in logs.values():
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "logs.json").write_text("{}")
    (tmp_path / "eval-set.json").write_text("{}")
    assert len(from_inspect(tmp_path, arm_from="task_arg:tools").runs) == 12
