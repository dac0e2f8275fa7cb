"""What the importers share: layering, option parsing, problem lines, a missing extra."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from evalstats import EvalstatsError
from evalstats.importers import Problem, Source, format_problems, from_inspect
from evalstats.importers._common import (  # private: the shared importer helpers at edge cases
    arm_mapper,
    file_tool_keys,
)

PKG = Path(__file__).resolve().parents[1] / "evalstats" / "importers"
# DESIGN.md: importers sit beside records, above errors/_schema; only the CLI imports them.
ALLOWED = {
    "evalstats._atomic",
    "evalstats.records",
    "evalstats.tokens",
    "evalstats.errors",
    "evalstats._schema",
    "evalstats._validate",
}


def test_importers_import_nothing_above_records():
    for path in sorted(PKG.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mod = node.module
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
                assert not any(m.startswith("evalstats") for m in mods), path.name
                continue
            else:
                continue
            if mod.startswith("evalstats"):
                assert mod in ALLOWED, f"{path.name} imports {mod}"
                for alias in node.names:
                    assert not alias.name.startswith("_"), f"{path.name}: {alias.name}"


def test_arm_mapper():
    f = arm_mapper({"with": ["tool", "Serena"], "without": "plain"})
    assert [f("TOOL"), f("serena"), f("plain"), f("x"), f(None)] == [
        "with",
        "with",
        "without",
        None,
        None,
    ]
    default = arm_mapper(None)
    assert [default(True), default(False), default("with"), default("WITHOUT")] == [
        "with",
        "without",
        "with",
        "without",
    ]
    assert arm_mapper("none=base,v1=tool")("TOOL") == "v1"  # any arm names (issue 31)
    with pytest.raises(ValueError, match="unknown arm 'treatment' in arm values; arms.toml lists"):
        arm_mapper("treatment=x", ("with", "without"))
    with pytest.raises(ValueError, match="with=VALUE"):
        arm_mapper("tool")


def test_file_tool_keys():
    keys = file_tool_keys(["view", "mcp__x__read:path,paths"], {"Read": ("file_path",)})
    assert keys == {
        "Read": ("file_path",),
        "view": ("path", "file_path", "file"),
        "mcp__x__read": ("path", "paths"),
    }


def test_format_problems_collapses_repeats():
    problems = [Problem(Source(f"f{i}.json"), "no start time") for i in range(8)]
    problems.insert(3, Problem(Source("g.jsonl", line=4), "odd"))
    lines = format_problems(problems, max_alike=2)
    assert lines == [
        "f0.json: no start time",
        "f1.json: no start time",
        "... and 6 more: no start time",
        "g.jsonl:4: odd",
    ]
    assert (
        str(Problem(Source("a.eval", "sample 'q1' epoch 2"), "m"))
        == "a.eval: sample 'q1' epoch 2: m"
    )


def test_missing_inspect_extra_is_a_clear_error(monkeypatch, tmp_path):
    log = tmp_path / "x.eval"
    log.write_bytes(b"")
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import now raises ImportError
    with pytest.raises(EvalstatsError, match=r"pip install 'evalstats\[inspect\]'"):
        from_inspect(log, arm_from="model")
