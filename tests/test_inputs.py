"""Bad input never gets a traceback (issue 10, sections 3-4).

Each case is run through the loaders (a ``DataError`` naming the file, the line and the field)
and, where the CLI is the way in, through ``evalstats.cli.main``: exit status 2, exactly one
line on stderr, no output file left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import evalstats
from evalstats import records
from evalstats.cli import main
from evalstats.errors import DataError
from evalstats.records import EvalstatsWarning, check_output_path, load_dir
from evalstats.tokens import annotate_runs


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("sim")
    evalstats.simulate(d, n_tasks=3, n_replicates=2, seed=11)
    return d


@pytest.fixture
def data(source, tmp_path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    for name in ("tasks.jsonl", "runs.jsonl", "judgments.jsonl"):
        shutil.copy(source / name, d / name)
    return d


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _edit(path: Path, line: int, **fields) -> None:
    """Change fields of the record on 1-based ``line``."""
    records = _lines(path)
    records[line - 1].update(fields)
    _write(path, records)


def _tasks_table(source: Path) -> pd.DataFrame:
    """The simulated tasks as a table to write as CSV (without the list column)."""
    return pd.DataFrame(_lines(source / "tasks.jsonl")).drop(columns=["tags"], errors="ignore")


def _cli_error(capsys, *argv: str) -> str:
    """Run the CLI; it must exit 2 with exactly one stderr line and no traceback."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"evalstats {argv[0]}: error: ")
    return lines[0]


def _load_error(data_dir: Path) -> DataError:
    with pytest.raises(DataError) as info:
        load_dir(data_dir)
    return info.value


def _frame_error(capsys, data_dir: Path, tmp_path: Path) -> str:
    out = tmp_path / "frame.parquet"
    line = _cli_error(capsys, "frame", str(data_dir), "-o", str(out))
    assert not out.exists() and not list(tmp_path.glob(".frame.parquet.*"))
    return line


# --------------------------------------------------------------------------- unreadable files


def test_invalid_utf8_in_jsonl(data, capsys, tmp_path):
    p = data / "runs.jsonl"
    lines = p.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"answer": "', b'"answer": "\xff\xfe', 1)
    p.write_bytes(b"".join(lines))
    err = _load_error(data)
    assert (err.path, err.line) == (str(p), 3) and "invalid UTF-8" in str(err)
    assert f"{p}:3" in _frame_error(capsys, data, tmp_path)


def test_invalid_utf8_in_csv(tmp_path):
    p = tmp_path / "tasks.csv"
    p.write_bytes(b"task_id,prompt\nT1,fine\nT2,caf\xe9\n")
    with pytest.raises(DataError, match="invalid UTF-8") as info:
        evalstats.load_tasks(p)
    assert info.value.line == 3


def test_a_byte_order_mark_is_read(data):
    p = data / "tasks.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    assert len(load_dir(data).tasks) == 3


def test_unreadable_file_even_as_root(data, capsys, tmp_path):
    # Root reads any file whatever its mode, so chmod 000 proves nothing here; a procfs file
    # that is write-only refuses a read even to root (Permission denied).
    target = Path("/proc/sys/vm/drop_caches")
    try:
        target.read_bytes()
    except PermissionError:
        pass
    except OSError:
        pytest.skip("no write-only procfs file to read on this system")
    else:
        pytest.skip(f"{target} is readable here, so it cannot stand for an unreadable file")
    (data / "tasks.jsonl").unlink()
    (data / "tasks.jsonl").symlink_to(target)
    err = _load_error(data)
    assert err.path == str(data / "tasks.jsonl") and "Permission denied" in str(err)
    assert "cannot read" in _frame_error(capsys, data, tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files and folders whatever their mode")
def test_unreadable_file_and_folder_by_mode(data):
    p = data / "runs.jsonl"
    p.chmod(0)
    try:
        assert "Permission denied" in str(_load_error(data))
    finally:
        p.chmod(stat.S_IRUSR | stat.S_IWUSR)
    data.chmod(0)
    try:
        assert "cannot read the directory" in str(_load_error(data))
    finally:
        data.chmod(stat.S_IRWXU)


def test_data_dir_missing_or_a_file(tmp_path, capsys):
    assert "not found" in str(_load_error(tmp_path / "nope"))
    f = tmp_path / "file"
    f.write_text("x")
    assert "not a directory" in str(_load_error(f))
    assert "not a directory" in _cli_error(capsys, "summary", str(f))


def test_runs_jsonl_is_a_folder(data, capsys, tmp_path):
    (data / "runs.jsonl").unlink()
    (data / "runs.jsonl").mkdir()
    err = _load_error(data)
    assert err.path == str(data / "runs.jsonl") and "is a directory" in str(err)
    assert "is a directory" in _frame_error(capsys, data, tmp_path)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_device_is_not_read(data):
    # /dev/zero is one endless line: reading it would never end (and fill the memory).
    (data / "runs.jsonl").unlink()
    (data / "runs.jsonl").symlink_to("/dev/zero")
    assert "not a regular file" in str(_load_error(data))


def test_empty_csv(tmp_path):
    p = tmp_path / "tasks.csv"
    p.write_bytes(b"")
    with pytest.raises(DataError, match="empty CSV") as info:
        evalstats.load_tasks(p)
    assert info.value.path == str(p)


def test_csv_with_a_duplicated_column(tmp_path):
    p = tmp_path / "tasks.csv"
    p.write_text("task_id,prompt,prompt\nT1,a,b\n", encoding="utf-8")
    with pytest.raises(DataError, match="twice") as info:
        evalstats.load_tasks(p)
    assert (info.value.line, info.value.field) == (1, "prompt")


def test_json_object_with_a_duplicated_key(data):
    p = data / "tasks.jsonl"
    text = p.read_text(encoding="utf-8").splitlines()
    text[1] = text[1].replace('{"task_id"', '{"budget_tokens": 1, "budget_tokens": 2, "task_id"')
    p.write_text("\n".join(text) + "\n", encoding="utf-8")
    err = _load_error(data)
    assert (err.line, err.field) == (2, "budget_tokens") and "twice" in str(err)


def test_two_files_for_one_table(data, capsys, tmp_path):
    pd.DataFrame(_lines(data / "tasks.jsonl")).to_csv(data / "tasks.csv", index=False)
    err = _load_error(data)
    assert "tasks.jsonl" in str(err) and "tasks.csv" in str(err) and err.path == str(data)
    line = _frame_error(capsys, data, tmp_path)
    assert "tasks.jsonl and tasks.csv" in line


# --------------------------------------------------------------------------- hostile values


def test_deeply_nested_line(data, capsys, tmp_path):
    p = data / "runs.jsonl"
    with p.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "\n")
    n = len(p.read_text(encoding="utf-8").splitlines())
    err = _load_error(data)
    assert (err.path, err.line) == (str(p), n) and "nested too deeply" in str(err)
    assert f"{p}:{n}" in _frame_error(capsys, data, tmp_path)


def test_deeply_nested_list_in_a_csv_cell(tmp_path, source):
    tasks = _tasks_table(source)
    tasks["tags"] = "[" * 100_000
    p = tmp_path / "tasks.csv"
    tasks.to_csv(p, index=False)
    with pytest.raises(DataError, match="JSON array") as info:
        evalstats.load_tasks(p)
    assert (info.value.line, info.value.field) == (2, "tags")
    assert len(str(info.value)) < 300  # the 100,000 brackets are not quoted back


@pytest.mark.parametrize("value", [1e30, 10**30, 2**63])
def test_huge_budget(data, capsys, tmp_path, value):
    _edit(data / "tasks.jsonl", 2, budget_tokens=value)
    err = _load_error(data)
    assert (err.line, err.field) == (2, "budget_tokens") and "out of range" in str(err)
    assert "budget_tokens" in _frame_error(capsys, data, tmp_path)


def test_huge_float(data):
    p = data / "runs.jsonl"
    text = p.read_text(encoding="utf-8").splitlines()
    record = json.loads(text[0])
    record["wall_s"] = 0
    text[0] = json.dumps(record).replace('"wall_s": 0', '"wall_s": ' + "9" * 400)
    p.write_text("\n".join(text) + "\n", encoding="utf-8")
    err = _load_error(data)
    assert (err.line, err.field) == (1, "wall_s") and "out of range" in str(err)


def test_negative_budget_names_file_and_line(data, capsys, tmp_path):
    _edit(data / "tasks.jsonl", 3, budget_tokens=-5)
    err = _load_error(data)
    assert (err.path, err.line, err.field) == (str(data / "tasks.jsonl"), 3, "budget_tokens")
    assert "non-negative" in str(err)
    assert f"{data / 'tasks.jsonl'}:3" in _frame_error(capsys, data, tmp_path)


def test_negative_budget_in_a_tasks_frame_names_file_and_line(data):
    # A tasks frame built by hand and handed to annotate_runs is checked there too.
    tasks = evalstats.load_tasks(data / "tasks.jsonl")
    tasks.loc[1, "budget_wall_s"] = -1.0
    runs = evalstats.load_runs(data / "runs.jsonl")
    with pytest.raises(DataError, match="negative budget") as info:
        annotate_runs(runs, tasks)
    assert (info.value.path, info.value.line) == (str(data / "tasks.jsonl"), 2)
    assert info.value.field == "budget_wall_s"


@pytest.mark.parametrize(
    ("field", "value"),
    [("input_tokens", -3), ("output_tokens", -1), ("replicate", -1), ("prompt_revision", -1)],
)
def test_negative_counts_in_judgments(data, field, value):
    _edit(data / "judgments.jsonl", 4, **{field: value})
    err = _load_error(data)
    assert (err.path, err.line, err.field) == (str(data / "judgments.jsonl"), 4, field)


def test_negative_reported_tokens(data):
    _edit(data / "runs.jsonl", 2, reported_tokens=-10)
    err = _load_error(data)
    assert (err.line, err.field) == (2, "reported_tokens") and "non-negative" in str(err)


@pytest.mark.parametrize("name", ["", "   "])
@pytest.mark.parametrize("field", ["judge", "rubric"])
def test_empty_judge_or_rubric_name(data, field, name):
    _edit(data / "judgments.jsonl", 2, **{field: name})
    err = _load_error(data)
    assert (err.line, err.field) == (2, field) and "must not be empty" in str(err)


def test_optional_ids_may_be_empty(data):
    # A provider that sends no request id leaves "" in the journal: that is not a bad line.
    _edit(data / "judgments.jsonl", 2, request_id="", model_id="")
    assert len(load_dir(data).judgments)


def test_empty_agent_model(data):
    _edit(data / "runs.jsonl", 5, agent_model="")
    err = _load_error(data)
    assert (err.line, err.field) == (5, "agent_model")


def test_unknown_rubric_names_file_and_line(data, capsys, tmp_path):
    _edit(data / "judgments.jsonl", 7, rubric="no-such-rubric")
    line = _frame_error(capsys, data, tmp_path)
    assert f"{data / 'judgments.jsonl'}:7" in line and "'rubric'" in line
    assert "no-such-rubric" in line


@pytest.mark.parametrize("text", ["12_000", "1 2", "١٢", "0x10", "12.5", "nan"])
def test_csv_integer_must_be_plain_digits(source, tmp_path, text):
    tasks = _tasks_table(source)
    tasks["budget_tokens"] = tasks["budget_tokens"].astype(object)
    tasks.loc[1, "budget_tokens"] = text
    p = tmp_path / "tasks.csv"
    tasks.to_csv(p, index=False)
    with pytest.raises(DataError, match="expected an integer") as info:
        evalstats.load_tasks(p)
    assert (info.value.line, info.value.field) == (3, "budget_tokens")


@pytest.mark.parametrize("text", ["1_000.5", "inf", "1e999"])
def test_csv_number_must_be_plain_decimal(source, tmp_path, text):
    tasks = _tasks_table(source)
    tasks["budget_wall_s"] = tasks["budget_wall_s"].astype(object)
    tasks.loc[0, "budget_wall_s"] = text
    p = tmp_path / "tasks.csv"
    tasks.to_csv(p, index=False)
    with pytest.raises(DataError) as info:
        evalstats.load_tasks(p)
    assert (info.value.line, info.value.field) == (2, "budget_wall_s")


def test_csv_plain_numbers_still_read(source, tmp_path):
    tasks = _tasks_table(source)
    tasks["budget_tokens"] = [" 12000", "+7", "0"]
    tasks["budget_wall_s"] = ["1.5", ".5", "2e3"]
    p = tmp_path / "tasks.csv"
    tasks.to_csv(p, index=False)
    got = evalstats.load_tasks(p)
    assert got["budget_tokens"].tolist() == [12000, 7, 0]
    assert got["budget_wall_s"].tolist() == [1.5, 0.5, 2000.0]


# --------------------------------------------------------------------------- the judge journal


def test_corrupt_middle_journal_line_is_an_error_naming_the_line(data, capsys):
    # Every journal line is one write ending in a newline, and the runner sets a torn tail
    # aside before it appends; a corrupt line in the middle is damage, not a kill.
    p = data / "judgments.jsonl"
    text = p.read_text(encoding="utf-8").splitlines()
    text[4] = text[4][: len(text[4]) // 2]
    p.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        evalstats.load_judgments(p)
    assert info.value.line == 5 and "malformed JSON" in str(info.value)
    assert main(["summary", str(data)]) == 2
    out = capsys.readouterr()
    assert out.err.count("\n") == 1 and f"{p}:5" in out.err and "error" in out.err


def test_torn_last_journal_line_is_skipped_with_a_warning(data, capsys):
    # A kill -9 mid-write leaves a last line without its newline: that call never finished.
    p = data / "judgments.jsonl"
    text = p.read_text(encoding="utf-8").splitlines()
    n = len(text)
    p.write_text("\n".join(text[:-1]) + "\n" + text[-1][: len(text[-1]) // 2], encoding="utf-8")
    with pytest.warns(EvalstatsWarning, match=f"{p}:{n}: torn last journal line skipped"):
        assert len(evalstats.load_judgments(p)) == n - 1
    assert main(["summary", str(data)]) == 0
    out = capsys.readouterr()
    assert "with-without" in out.out
    assert out.err.count("\n") == 1 and f"{p}:{n}" in out.err and "warning" in out.err


def test_corrupt_lines_in_tasks_and_runs_stay_errors(data):
    p = data / "runs.jsonl"
    text = p.read_text(encoding="utf-8").splitlines()
    text[1] = text[1][:20]
    p.write_text("\n".join(text) + "\n", encoding="utf-8")
    err = _load_error(data)
    assert err.line == 2 and "malformed JSON" in str(err)


# --------------------------------------------------------------------------- outputs


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("x.txt", "unsupported output type '.txt'"),
        ("x", "unsupported output type 'x'"),
        ("outdir/", "is a directory"),
        ("existing", "is a directory"),
    ],
)
def test_frame_output_checked_before_the_frame_is_computed(data, tmp_path, capsys, name, reason):
    (tmp_path / "existing").mkdir()
    # No judgments: were the frame computed first, the error would be about them.
    (data / "judgments.jsonl").unlink()
    out = str(tmp_path / name) + ("/" if name.endswith("/") else "")
    line = _cli_error(capsys, "frame", str(data), "-o", out)
    assert reason in line and "judgments" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "existing"]


def test_frame_output_under_proc(data, capsys):
    (data / "judgments.jsonl").unlink()
    line = _cli_error(capsys, "frame", str(data), "-o", "/proc/evalstats-verdicts.parquet")
    assert "cannot write in /proc" in line
    line = _cli_error(capsys, "summary", str(data), "-o", "/proc/self/x/table.csv")
    assert "cannot write in /proc/self" in line


def test_output_under_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match="not a directory"):
        check_output_path(tmp_path / "f" / "out.csv")


def test_check_output_path_leaves_nothing(tmp_path):
    check_output_path(tmp_path / "new" / "deeper" / "out.jsonl")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_outputs_get_the_umask(data, tmp_path, capsys, mask):
    old = os.umask(mask)
    try:
        for ext in ("parquet", "csv", "jsonl"):
            out = tmp_path / f"frame.{ext}"
            assert main(["frame", str(data), "-o", str(out)]) == 0
            assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask, ext
    finally:
        os.umask(old)


def test_write_frame_atomic_refuses_bad_names(tmp_path):
    frame = pd.DataFrame({"a": [1]})
    with pytest.raises(DataError, match="unsupported output type"):
        records.write_frame_atomic(frame, tmp_path / "a.xlsx")
    with pytest.raises(ValueError):  # DataError stays a ValueError for older callers
        records.write_frame_atomic(frame, tmp_path / "a.xlsx")


@pytest.mark.slow  # starts a Python subprocess
def test_errors_are_one_line_in_a_fresh_process(data):
    """The whole way in, as a user meets it: exit 2, one line, no traceback."""
    (data / "runs.jsonl").write_bytes(b'{"task_id": "\xff"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "evalstats.cli", "summary", str(data)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and f"{data / 'runs.jsonl'}:1" in proc.stderr


@pytest.mark.parametrize(
    "argv",
    [["power", "--tasks", "0"], ["power", "--icc", "2"], ["simulate", "OUT", "--p-win", "2"]],
)
def test_bad_option_values_are_one_line(tmp_path, capsys, argv):
    argv = [str(tmp_path / "sim") if a == "OUT" else a for a in argv]
    assert "bad option value" in _cli_error(capsys, *argv)
    assert not (tmp_path / "sim").exists()
