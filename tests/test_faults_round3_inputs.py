"""Issue 32, inputs that tracebacked or loaded wrong: one line naming file, line and field, exit 2.

A lone UTF-16 surrogate (JSON ``"\\ud800"``) is refused where it enters (it is not text: it can
be neither written as UTF-8 nor sent to a judge), not replaced.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from evalstats.cli import main
from evalstats.importers import from_table

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def _error_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and "Traceback" not in err[-1]
    return err[-1]


def _claude_output(folder: Path, *, duration: str = "1000", usage: str = "{}", answer='"ok"'):
    folder.mkdir()
    for arm in ("with", "without"):
        body = (
            f'{{"type":"result","subtype":"success","duration_ms":{duration},"result":{answer},'
            f'"session_id":"s","usage":{usage},"modelUsage":{{"m":{{"outputTokens":5}}}}}}'
        )
        (folder / f"q1__{arm}__1.json").write_text(body)


@pytest.mark.parametrize(
    ("field", "kwargs", "why"),
    [
        ("usage.input_tokens", {"usage": '{"input_tokens": Infinity}'}, "got float inf"),
        ("usage.input_tokens", {"usage": '{"input_tokens": 300.9}'}, "got float 300.9"),
        ("duration_ms", {"duration": "1e400"}, "finite"),
        ("duration_ms", {"duration": "NaN"}, "finite"),
        ("duration_ms", {"duration": "1e300"}, "longer than any run"),
        ("answer", {"answer": '"a\\ud800b"'}, "surrogate"),
    ],
)
def test_claude_code_numbers_and_text_are_refused_naming_the_field(
    tmp_path, capsys, field, kwargs, why
):
    _claude_output(tmp_path / "cc", **kwargs)
    line = _error_line(
        capsys, ["import", "claude-code", str(tmp_path / "cc"), "-o", str(tmp_path / "o")]
    )
    assert f"q1__with__1.json, field '{field}'" in line and why in line


def _edit_runs(tmp_path: Path, **changes) -> Path:
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    lines = (data / "runs.jsonl").read_text().splitlines()
    lines[2] = json.dumps(json.loads(lines[2]) | changes)  # ensure_ascii: "\ud800" stays escaped
    (data / "runs.jsonl").write_text("\n".join(lines) + "\n")
    return data


@pytest.mark.parametrize(
    ("changes", "field", "why"),
    [
        ({"answer": "bad \ud800 text"}, "answer", "surrogate"),
        ({"files_inspected": ["a.py", "\udc00"]}, "files_inspected.1", "surrogate"),
        ({"started_at": "now"}, "started_at", "ISO-8601"),
        ({"started_at": "Jan 5 2026"}, "started_at", "ISO-8601"),
    ],
)
def test_runs_with_non_text_or_a_non_iso_time_do_not_load(tmp_path, capsys, changes, field, why):
    data = _edit_runs(tmp_path, **changes)
    line = _error_line(capsys, ["summary", str(data)])
    assert f"runs.jsonl:3, field '{field}'" in line and why in line


def test_a_label_key_without_a_seed_is_one_line(tmp_path, capsys):
    data = tmp_path / "data"
    shutil.copytree(SAMPLE, data)
    sheet = tmp_path / "sheet.csv"
    assert main(["label", str(data), "-n", "3", "--seed", "1", "-o", str(sheet)]) == 0
    key = Path(f"{sheet}.key.json")
    key.write_text(json.dumps(json.loads(key.read_text()) | {"seed": None}, indent=1))
    line = _error_line(capsys, ["label", str(data), "--read", str(sheet)])
    assert f"{key}:2, field 'seed'" in line and "got None" in line


def test_import_table_says_which_token_column_it_used(tmp_path):
    runs = pd.read_json(SAMPLE / "runs.jsonl", lines=True, dtype=False)
    tasks = pd.read_json(SAMPLE / "tasks.jsonl", lines=True, dtype=False)
    wide = runs.merge(tasks, on="task_id").drop(columns="reported_tokens")
    for name, column, said in [
        ("a.jsonl", "tokens", "tokens from column 'tokens'"),
        ("b.jsonl", "total_tokens", "tokens from column 'total_tokens'"),
        ("c.jsonl", "usage_tokens", "no billed token column found"),
    ]:
        src = tmp_path / name
        src.write_text(wide.assign(**{column: 7}).to_json(orient="records", lines=True))
        (note,) = [str(p) for p in from_table(src).problems if "billed" in str(p)]
        assert said in note and "budget_tokens" not in note  # a task field, used
        assert (column == "usage_tokens") == ("'usage_tokens' left unused" in note)


@pytest.mark.parametrize(
    ("row", "field"), [(",q1,with,1", "file"), ("x.json,q1,with,1.5", "replicate")]
)
def test_a_claude_code_manifest_row_is_checked(tmp_path, capsys, row, field):
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(f"file,task_id,arm,replicate\n{row}\n")
    argv = ["import", "claude-code", "--manifest", str(manifest), "-o", str(tmp_path / "o")]
    assert f"manifest.csv:2, field '{field}'" in _error_line(capsys, argv)
