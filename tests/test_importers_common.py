"""What the importers share: layering, option parsing, problem lines, a missing extra."""

from __future__ import annotations

import ast
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest

from evalstats import DataError, EvalstatsError, EvalstatsWarning
from evalstats.importers import Problem, Source, format_problems, from_inspect, from_table

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


def _arms(tmp_path, values, arm_values, arms=None) -> list[str]:
    """The arm each table value is imported as (the importers' shared mapping, via from_table)."""
    rows = [{"task_id": "q1", "replicate": i + 1, "arm": v, "answer": "x", "wall_s": 1.0}
            for i, v in enumerate(values)]  # fmt: skip
    path = tmp_path / "t.jsonl"
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)
    defaults = {"agent_model": "m", "started_at": "2026-06-01T00:00:00Z"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalstatsWarning)  # the pairs are incomplete on purpose
        _, runs = from_table(path, arm_values=arm_values, arms=arms, defaults=defaults,
                             allow_incomplete=True)  # fmt: skip
    return runs.sort_values("replicate")["arm"].astype(str).tolist()


def test_arm_values_map_table_values_to_arms(tmp_path):
    spec = {"with": ["tool", "Serena"], "without": "plain"}
    assert _arms(tmp_path, ["TOOL", "serena", "plain"], spec) == ["with", "with", "without"]
    with pytest.raises(DataError, match="arm 'x' names no arm"):
        _arms(tmp_path, ["x"], spec)
    default = _arms(tmp_path, [True, False, "with", "WITHOUT"], None)
    assert default == ["with", "without", "with", "without"]
    # any arm names (issue 31)
    assert _arms(tmp_path, ["TOOL", "base"], "none=base,v1=tool", ("none", "v1")) == ["v1", "none"]
    with pytest.raises(ValueError, match="unknown arm 'treatment' in arm values; arms.toml lists"):
        _arms(tmp_path, ["x"], "treatment=x", ("with", "without"))
    with pytest.raises(ValueError, match="with=VALUE"):
        _arms(tmp_path, ["x"], "tool")


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
