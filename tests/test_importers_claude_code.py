"""Claude Code importer on fixtures written to the documented output formats.

Format source: Claude Code docs, "Headless mode" / "Output formats" (``claude -p
--output-format json`` prints one result object with ``result``, ``usage``, ``duration_ms``,
``num_turns``, ``total_cost_usd``, ``session_id``; with ``--verbose`` a JSON array of every
event; ``--output-format stream-json`` prints one event per line: ``system``/``init``,
``assistant`` messages whose content holds ``text`` and ``tool_use`` blocks, ``user`` messages
with ``tool_result`` blocks, and a final ``result``). The fixtures in
fixtures/importers/claude_code were written by hand from that description; expected values
below are read back from the fixture files with ``json``, not typed twice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalstats
from evalstats import DataError
from evalstats.cli import build_parser
from evalstats.importers import format_problems, from_claude_code, parse_output

FIX = Path(__file__).parent / "fixtures" / "importers"
OUT = FIX / "claude_code"
ARMS = "with=serena,without=plain"
SERENA = ["mcp__serena__find_symbol:relative_path"]


def _events(path: Path) -> list[dict]:
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return data if isinstance(data, list) else [data]


def _result(path: Path) -> dict:
    return next(e for e in reversed(_events(path)) if e["type"] == "result")


def _tool_inputs(path: Path) -> list[tuple[str, dict]]:
    return [
        (b["name"], b["input"])
        for e in _events(path)
        if e["type"] == "assistant"
        for b in e["message"]["content"]
        if b["type"] == "tool_use"
    ]


def _import(**kw):
    return from_claude_code(
        OUT, arm_values=ARMS, file_tools=SERENA, tasks_file=FIX / "tasks.jsonl", **kw
    )


def test_runs_from_both_formats():
    tasks, runs = _import()
    assert len(runs) == 4 and len(tasks) == 2
    by_file = {
        ("t1", "with"): OUT / "t1__serena__1.jsonl",
        ("t1", "without"): OUT / "t1__plain__1.json",
        ("t2", "with"): OUT / "t2__serena__1.json",
        ("t2", "without"): OUT / "t2__plain__1.jsonl",
    }
    for row in runs.itertuples():
        path = by_file[(row.task_id, row.arm)]
        res = _result(path)
        assert row.answer == res["result"]
        assert row.wall_s == res["duration_ms"] / 1000
        u = res["usage"]
        assert row.reported_tokens == (
            u["input_tokens"]
            + u["output_tokens"]
            + u["cache_creation_input_tokens"]
            + u["cache_read_input_tokens"]
        )
        assert row.replicate == 1
        assert row.agent_model == "claude-sonnet-4-5-20250929"


def test_files_inspected_from_read_grep_glob_and_mcp():
    runs = _import().runs.set_index(["task_id", "arm"])
    # stream-json: Read file_path, Grep path and the configured MCP tool's relative_path
    assert runs.at[("t1", "with"), "files_inspected"] == [
        "/repo/src/retry.go",
        "/repo/cmd",
        "src/backoff.go",
    ]
    # json --verbose (an event array): Glob's path and Read
    assert runs.at[("t2", "with"), "files_inspected"] == [
        "/repo/internal",
        "/repo/internal/flags.go",
    ]
    # Bash is not a file tool; the file read twice counts once
    assert runs.at[("t2", "without"), "files_inspected"] == ["/repo/cmd/main.go"]
    # plain json holds no tool calls: unknown, not "none"
    assert runs.at[("t1", "without"), "files_inspected"] is None
    # without the MCP tool configured, its path is not taken
    plain = from_claude_code(OUT, arm_values=ARMS).runs.set_index(["task_id", "arm"])
    assert "src/backoff.go" not in plain.at[("t1", "with"), "files_inspected"]
    # named without keys, a tool's usual ones (path, file_path, file): not relative_path
    bare = from_claude_code(OUT, arm_values=ARMS, file_tools=[SERENA[0].split(":")[0]])
    bare = bare.runs.set_index(["task_id", "arm"])
    assert bare.at[("t1", "with"), "files_inspected"] == ["/repo/src/retry.go", "/repo/cmd"]
    # a mapping names the keys as a NAME:KEY spec does, beside the default tools
    mapped = from_claude_code(
        OUT, arm_values=ARMS, file_tools={SERENA[0].split(":")[0]: ["relative_path"]}
    )
    assert mapped.runs.set_index(["task_id", "arm"])["files_inspected"].equals(
        runs["files_inspected"]
    )


def test_transcript_holds_everything_read_and_written():
    runs = _import().runs.set_index(["task_id", "arm"])
    transcript = runs.at[("t1", "with"), "transcript"]
    for e in _events(OUT / "t1__serena__1.jsonl"):
        if e["type"] not in ("assistant", "user"):
            continue
        for b in e["message"]["content"]:
            if b["type"] == "text":
                assert b["text"] in transcript
            elif b["type"] == "tool_use":
                assert json.dumps(b["input"]) in transcript
            elif b["type"] == "tool_result":
                content = b["content"]
                texts = [content] if isinstance(content, str) else [c["text"] for c in content]
                assert all(t in transcript for t in texts)
    thinking = runs.at[("t2", "without"), "transcript"]
    assert "Flags are usually in main.go." in thinking
    # tokens are counted on the transcript, or on the answer where there is none
    t1 = runs.loc[("t1", "without")]
    assert t1["tokens"] == evalstats.count_tokens([t1["answer"]])[0]
    assert runs.at[("t1", "with"), "tokens"] == evalstats.count_tokens([transcript])[0]


def test_problems_name_file_and_record():
    lines = format_problems(_import().problems)
    assert any(
        line.startswith(f"{OUT / 't1__plain__1.json'}: json output holds only the result")
        for line in lines
    )
    # stream-json names the line of the result event
    n = len((OUT / "t1__serena__1.jsonl").read_text().splitlines())
    assert f"{OUT / 't1__serena__1.jsonl'}:{n}: no start time in the output" in "\n".join(lines)


def test_manifest_gives_arm_task_and_start_time():
    imported = from_claude_code(
        manifest=FIX / "manifest.csv", arm_values=ARMS, tasks_file=FIX / "tasks.jsonl"
    )
    runs = imported.runs
    assert len(runs) == 4
    assert runs["started_at"].min().isoformat() == "2026-06-01T09:00:00+00:00"
    assert not any("start time" in str(p) for p in imported.problems)


def test_manifest_missing_column(tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_text("path,task_id,arm\nx.json,t1,with\n")
    with pytest.raises(DataError) as info:
        from_claude_code(manifest=bad)
    assert str(info.value).startswith(f"{bad}:1, field 'file': manifest has no 'file' column")


def test_no_result_event_is_a_one_line_error(tmp_path):
    src = (OUT / "t1__serena__1.jsonl").read_text().splitlines()
    cut = tmp_path / "t1__serena__1.jsonl"
    cut.write_text("\n".join(src[:-1]) + "\n")  # the run was killed before its result
    with pytest.raises(DataError) as info:
        parse_output(cut)
    assert str(info.value) == (
        f"{cut}:{len(src) - 1}: no result event (the run was cut off before it finished?)"
    )
    half = tmp_path / "t2__plain__1.jsonl"
    lines = (OUT / "t2__plain__1.jsonl").read_text().splitlines()
    half.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # truncated mid-line
    with pytest.raises(DataError) as info:
        from_claude_code(tmp_path, arm_values=ARMS)
    assert str(info.value).startswith(f"{cut}:")  # files are read in name order
    cut.unlink()
    with pytest.raises(DataError) as info:
        from_claude_code(tmp_path, arm_values=ARMS)
    assert str(info.value).startswith(f"{half}:4: malformed stream-json event")
    assert "\n" not in str(info.value)


def test_unknown_arm_and_unmatched_names(tmp_path):
    for name in ("t1__serena__1.jsonl", "t1__plain__1.json"):
        shutil.copy(OUT / name, tmp_path / name)
    (tmp_path / "notes.txt").write_text("not a run")
    with pytest.raises(DataError) as info:
        from_claude_code(tmp_path)  # files are read in name order: plain first
    assert str(info.value).startswith(f"{tmp_path / 't1__plain__1.json'}, field 'arm': arm 'plain'")
    imported = from_claude_code(tmp_path, arm_values=ARMS)
    assert any("notes.txt: file name does not match" in str(p) for p in imported.problems)
    assert imported.tasks is None


def test_replicates_numbered_without_a_replicate_field(tmp_path):
    for name in ("a", "b"):
        shutil.copy(OUT / "t2__serena__1.json", tmp_path / f"t2-with-{name}.json")
        shutil.copy(OUT / "t2__plain__1.jsonl", tmp_path / f"t2-without-{name}.jsonl")
    runs = from_claude_code(tmp_path, pattern="{task_id}-{arm}-{run}.json*").runs
    assert sorted(runs["replicate"].tolist()) == [1, 1, 2, 2]


def test_json_output_without_model_needs_agent_model(tmp_path):
    res = _result(OUT / "t1__plain__1.json")
    del res["modelUsage"]
    for arm in ("with", "without"):
        (tmp_path / f"t1__{arm}__1.json").write_text(json.dumps(res))
    with pytest.raises(DataError, match="names no model; pass agent_model"):
        from_claude_code(tmp_path)
    runs = from_claude_code(tmp_path, agent_model="claude-x").runs
    assert set(runs["agent_model"]) == {"claude-x"}


def test_cli_import_claude_code(tmp_path, capsys):
    parser = build_parser()
    out = tmp_path / "data"
    args = parser.parse_args(
        [
            "import",
            "claude-code",
            str(OUT),
            "--arm-values",
            ARMS,
            "--file-tool",
            SERENA[0],
            "--tasks",
            str(FIX / "tasks.jsonl"),
            "-o",
            str(out),
        ]
    )
    assert args.func(args) == 0
    captured = capsys.readouterr()
    assert "imported 4 runs (2 pairs over 2 tasks)" in captured.out
    assert "json output holds only the result" in captured.err
    ds = evalstats.load_dir(out)
    assert ds.tasks["task_id"].tolist() == ["t1", "t2"]
    assert ds.runs["wall_s"].sum() == pytest.approx((12345 + 8100 + 4500 + 6250) / 1000)


def test_cli_import_claude_code_any_arm_names(tmp_path, capsys):
    # Issue 31: arms are data; two arms named tool / plain get an arms.toml of their own.
    from evalstats.cli import main

    out = tmp_path / "data"
    argv = ["import", "claude-code", str(OUT), "--arm-values", "tool=serena,plain=plain"]
    argv += ["--tasks", str(FIX / "tasks.jsonl"), "--reference", "plain", "-o", str(out)]
    assert main(argv) == 0
    ds = evalstats.load_dir(out)
    assert set(ds.arms.ids) == {"tool", "plain"} and ds.arms.reference == "plain"
    frame_pairs = evalstats.pair_runs(ds.runs, ds.arms)
    assert set(zip(frame_pairs["arm_a"], frame_pairs["arm_b"], strict=True)) == {("tool", "plain")}
