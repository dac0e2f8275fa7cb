"""The data contract for K >= 2 arms: any arm name, ``arms.toml`` (both forms), its errors."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import make_run, make_task, write_jsonl
from karm_dir import HAND_UNREADABLE, import_hand_karm, write_hand_karm

import evalstats
from evalstats import DataError
from evalstats.records import pair_runs

K_ARMS_TOML = """\
# no tool, then two versions of it
reference = "none"

[arms]
none = "no tool"
v1 = { name = "tool v1", tool = "Serena 0.9" }
"v2" = { tool = "Serena 1.0" }
"""


def _k_dir(tmp_path, arms=("none", "v1", "v2"), *, toml: str | None = K_ARMS_TOML):
    write_jsonl(tmp_path / "tasks.jsonl", [make_task("T1"), make_task("T2")])
    # Runs written in an order unlike arms.toml's: the arm column follows arms.toml.
    runs = [make_run(t, r, a) for t in ("T1", "T2") for r in (1, 2) for a in reversed(arms)]
    write_jsonl(tmp_path / "runs.jsonl", runs)
    if toml is not None:
        (tmp_path / "arms.toml").write_text(toml, encoding="utf-8")
    return tmp_path


def _error(fn, *args, **kw) -> DataError:
    with pytest.raises(DataError) as info:
        fn(*args, **kw)
    return info.value


def test_k_arms_listed_in_arms_toml(tmp_path):
    ds = evalstats.load_dir(_k_dir(tmp_path))
    arms = ds.arms
    assert arms.ids == ("none", "v1", "v2")
    assert arms.reference == "none"
    assert dict(arms.tools) == {"v1": "Serena 0.9", "v2": "Serena 1.0"}
    # v2 has no display name: its id is shown.
    assert ds.arm_names == {"none": "no tool", "v1": "tool v1", "v2": "v2"}
    assert arms.path == str(tmp_path / "arms.toml")
    assert list(ds.runs["arm"].cat.categories) == ["none", "v1", "v2"]
    assert ds.runs["arm"].value_counts().to_dict() == {"none": 4, "v1": 4, "v2": 4}
    # Slicing the runs keeps the arms (pandas copies attrs; Arms is shared, not copied).
    assert ds.runs.head(2).attrs["arms"] is arms
    text = repr(ds)
    assert "12: no tool (none) 4, tool v1 (v1) 4, v2 4" in text
    assert "4 (task, replicate) pairs" in text and "lacking" not in text


def test_k_arms_without_arms_toml_are_the_runs_in_order_of_appearance(tmp_path):
    ds = evalstats.load_dir(_k_dir(tmp_path, toml=None))
    assert ds.arms.ids == ("v2", "v1", "none") and ds.arms.reference is None
    assert ds.arm_names == {"v2": "v2", "v1": "v1", "none": "none"}  # nothing names them
    assert ds.arms.name("v1") == "v1"


def test_a_task_replicate_lacking_one_of_k_arms_is_counted(tmp_path):
    d = _k_dir(tmp_path)
    runs = [make_run("T1", 1, a) for a in ("none", "v1", "v2")] + [
        make_run("T2", 1, a) for a in ("none", "v2")
    ]
    write_jsonl(d / "runs.jsonl", runs)
    assert "2 (task, replicate) pairs, 1 lacking an arm" in repr(evalstats.load_dir(d))


def test_the_seeds_two_arms_are_unchanged(small_dir):
    plain = evalstats.load_dir(small_dir)
    assert plain.arms.ids == ("with", "without") and plain.arms.two_arm
    assert plain.runs["arm"].dtype == pd.CategoricalDtype(["with", "without"])
    (small_dir / "arms.toml").write_text(
        'reference = "without"\nwith = "Serena MCP"\n', encoding="utf-8"
    )
    top = evalstats.load_dir(small_dir)
    assert top.arm_names == {"with": "Serena MCP", "without": "WITHOUT"}
    assert top.arms.reference == "without"
    # The same two arms as an [arms] table: the same names, dtype and pairs.
    (small_dir / "arms.toml").write_text(
        '[arms]\nwith = "Serena MCP"\nwithout = "WITHOUT"\n', encoding="utf-8"
    )
    table = evalstats.load_dir(small_dir)
    assert table.arm_names == top.arm_names
    assert table.runs["arm"].dtype == plain.runs["arm"].dtype
    pd.testing.assert_frame_equal(pair_runs(table.runs), pair_runs(plain.runs))


def test_the_sample_loads_as_before():
    ds = evalstats.load_dir("data/sample")
    assert ds.arms.ids == ("with", "without") and ds.arms.reference is None
    assert ds.arm_names == {"with": "WITH", "without": "WITHOUT"}
    assert list(ds.runs["arm"].cat.categories) == ["with", "without"]


def test_a_run_of_an_arm_not_in_arms_toml(tmp_path):
    d = _k_dir(tmp_path)
    write_jsonl(d / "runs.jsonl", [make_run("T1", 1, "none"), make_run("T1", 1, "v3")])
    err = _error(evalstats.load_dir, d)
    assert (err.path, err.line, err.field) == (str(d / "runs.jsonl"), 2, "arm")
    assert "unknown arm 'v3'; arms.toml lists none, v1, v2" in str(err)


def test_seed_names_mixed_with_others_without_arms_toml(small_dir):
    # A typo ("witout") must not become a third arm.
    runs = [make_run("T1", 1, "with"), make_run("T1", 1, "without"), make_run("T1", 2, "witout")]
    err = _error(evalstats.load_runs, write_jsonl(small_dir / "runs.jsonl", runs))
    assert (err.line, err.field) == (3, "arm") and "unknown arm 'witout'" in str(err)
    assert "arms.toml" in str(err)


def test_a_blank_arm_name(small_dir):
    runs = [make_run("T1", 1, "a"), make_run("T1", 1, "  ")]
    err = _error(evalstats.load_runs, write_jsonl(small_dir / "runs.jsonl", runs))
    assert (err.line, err.field) == (2, "arm") and "non-empty name" in str(err)


def test_pair_runs_pairs_every_two_of_k_arms(tmp_path):
    ds = evalstats.load_dir(_k_dir(tmp_path))
    pairs = pair_runs(ds.runs)  # the reference is always arm_b, the later arm arm_a
    got = sorted(set(zip(pairs["arm_a"], pairs["arm_b"], strict=True)))
    assert got == [("v1", "none"), ("v2", "none"), ("v2", "v1")]
    assert {"with_answer", "without_answer"} <= set(pairs.columns)


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ('colour = "red"\n[arms]\na = "A"\nb = "B"\n', 1, "colour", "unknown key"),
        ('reference = "c"\n[arms]\na = "A"\nb = "B"\n', 1, "reference", "'c' is not one of"),
        ('reference = 3\n[arms]\na = "A"\nb = "B"\n', 1, "reference", "non-empty string"),
        ('[arms]\na = "A"\nb = 7\n', 3, "arms.b", "non-empty string"),
        ('[arms]\na = "A"\nb = { name = "B", tol = "x" }\n', 3, "arms.b.tol", "unknown key"),
        ('[arms]\na = "A"\n\n[arms.b]\nname = ""\n', 4, "arms.b.name", "non-empty string"),
        ('[arms]\na = "A"\n', 1, "arms", "at least two"),
        ('arms = "a, b"\n', 1, "arms", "must be a table"),
        ('[arms]\na = "A"\nb = "B"\nc = "C"\n', 4, "arms.c", "has no runs"),
        ('reference = "x"\nwith = "W"\n', 1, "reference", "'x' is not one of"),
        ("[arms\n", 1, None, "not valid TOML"),
    ],
)
def test_bad_arms_toml_names_file_line_and_field(tmp_path, text, line, field, message):
    d = _k_dir(tmp_path, arms=("a", "b"), toml=text)
    err = _error(evalstats.load_dir, d)
    assert err.path == str(d / "arms.toml")
    assert (err.line, err.field) == (line, field)
    if message is not None:
        assert message in str(err)


def test_arm_names_for_k_arms(tmp_path):
    d = _k_dir(tmp_path)
    assert evalstats.load_dir(d).arm_names == {"none": "no tool", "v1": "tool v1", "v2": "v2"}


# ----------------------------------------------------------------------------- K arms end to end


@pytest.mark.parametrize("arms_toml", [True, False], ids=["own-arms-toml", "written-by-import"])
def test_three_arms_import_frame_summary_label(tmp_path, capsys, arms_toml):
    from evalstats.cli import main

    d = import_hand_karm(write_hand_karm(tmp_path / "src"), tmp_path / "d", arms_toml=arms_toml)
    ds = evalstats.load_dir(d)
    assert ds.arms.ids == ("none", "v1", "v2")
    assert ds.arms.reference == ("none" if arms_toml else None)
    assert ds.runs["reported_tokens"].notna().all()  # the table's harness tokens
    assert len(ds.labels) == 10 and set(ds.labels["arm_a"]) == {"v1", "v2"}

    assert main(["frame", str(d), "-o", str(tmp_path / "f.parquet")]) == 0
    frame = pd.read_parquet(tmp_path / "f.parquet")
    assert list(frame.columns[:4]) == ["task_id", "replicate", "arm_a", "arm_b"]
    pairs = set(zip(frame["arm_a"], frame["arm_b"], strict=True))
    assert pairs == {("v1", "none"), ("v2", "none"), ("v2", "v1")}
    bad = frame.loc[frame["judgment_id"] == HAND_UNREADABLE]
    assert bad["status"].tolist() == ["invalid"] and len(frame) == 2 * 6 * 2 * 3

    capsys.readouterr()
    assert main(["summary", str(d), "-o", str(tmp_path / "s.csv")]) == 0
    table = pd.read_csv(tmp_path / "s.csv")
    assert int(table["invalid"].sum()) == 1 and int(table["n"].sum()) == len(frame)
    assert len(table) == 2 * 3  # judges x pairs of arms

    sheet = tmp_path / "sheet.csv"
    assert main(["label", str(d), "-n", "6", "--seed", "3", "-o", str(sheet)]) == 0
    filled = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled["verdict"], filled["labeler"] = ["A", "B", "tie"] * 2, "cy"
    filled.to_csv(sheet, index=False)
    assert main(["label", str(d), "--read", str(sheet)]) == 0
    labels = evalstats.load_dir(d).labels
    drawn = labels.loc[labels["labeler"] == "cy"]
    assert len(labels) == 16 and drawn["arm_a"].isin(["v1", "v2"]).all()
    assert (drawn["arm_a"] != drawn["arm_b"]).all()


def test_import_arm_values_outside_arms_toml(tmp_path, capsys):
    from evalstats.cli import main

    src = write_hand_karm(tmp_path / "src")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "arms.toml").write_text('[arms]\nnone = "A"\nv1 = "B"\n')
    argv = ["import", "table", str(src / "runs.csv"), "--map", "arm=config", "--tasks"]
    argv += [str(src / "tasks.jsonl"), "--arm-values", "none=baseline,v3=tool-2", "-o"]
    assert main([*argv, str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "unknown arm 'v3' in arm values; arms.toml lists none, v1" in err
    assert len(err.strip().splitlines()) == 1


def test_k_arm_runs_with_judgments_naming_no_pair(tmp_path):
    d = import_hand_karm(write_hand_karm(tmp_path / "src", n_tasks=2), tmp_path / "d")
    lines = (d / "judgments.jsonl").read_text().splitlines()
    text = "".join(
        line.replace('"arm_a": ', '"x_a": ').replace('"arm_b": ', '"x_b": ') + "\n"
        for line in lines
    )
    (d / "judgments.jsonl").write_text(text)
    err = _error(evalstats.load_frame, d)
    assert (err.line, err.field) == (1, "arm_a") and "--pairs" in str(err)
