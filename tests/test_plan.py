"""The declared analysis plan: loading, validation (file:line:field), hash, load_dir."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from pathlib import Path

import pytest

import evalstats
from evalstats import DataError
from evalstats.plan import PLAN_STATISTICS, Plan, find_plan, load_plan, parse_plan

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"

GOOD = """\
# the plan, fixed before any judge was asked
written_at = 2026-05-01T11:00:00+02:00
primary_rubric = "with-without"
primary_judge = "anthropic:claude-sonnet-4-20250514"
statistic = "net_win"
alpha = 0.05
sidedness = "greater"
margin = 0.1
margin_kind = "non-inferiority"
tasks = 15
replicates = 6
judges = ["openai:gpt-5.4", "anthropic:claude-sonnet-4-20250514"]
rubrics = ["with-without", "blind-pair"]
"""


def write(tmp_path: Path, text: str, name: str = "plan.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def error(tmp_path: Path, text: str, name: str = "plan.toml") -> DataError:
    with pytest.raises(DataError) as exc:
        load_plan(write(tmp_path, text, name))
    return exc.value


def test_good_plan_loads(tmp_path):
    plan = load_plan(write(tmp_path, GOOD))
    assert plan.primary_rubric == "with-without" and plan.statistic == "net_win"
    assert plan.written_at == dt.datetime(2026, 5, 1, 9, 0, tzinfo=dt.UTC)  # to UTC
    assert plan.judges == ("anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4")
    assert (plan.alpha, plan.sidedness, plan.margin, plan.margin_kind) == (
        0.05,
        "greater",
        0.1,
        "non-inferiority",
    )
    assert plan.n_tasks == 15 and plan.replicates == 6
    assert plan.primary_key == {"rubric": "with-without", "judge": plan.primary_judge}
    assert plan.path == str(tmp_path / "plan.toml") and plan.file_mtime is not None


def test_defaults_and_task_list(tmp_path):
    plan = load_plan(
        write(
            tmp_path,
            'primary_rubric = "blind-pair"\nconsensus = "majority"\nstatistic = "score"\n'
            'tasks = ["T2", "T1"]\n',
        )
    )
    assert (plan.alpha, plan.sidedness) == (0.05, "two-sided")
    assert plan.tasks == ("T1", "T2") and plan.n_tasks == 2
    assert plan.primary_judge_name == "consensus:majority"
    assert plan.written_at is None


def test_sha256_is_canonical(tmp_path):
    a = load_plan(write(tmp_path, GOOD))
    # reordered keys, comments, whitespace, the same instant in another zone, list order
    lines = GOOD.splitlines()[1:]
    shuffled = "\n".join(reversed(lines)).replace("+02:00", "+02:00  # local")
    shuffled = shuffled.replace(
        'judges = ["openai:gpt-5.4", "anthropic:claude-sonnet-4-20250514"]',
        'judges = [ "anthropic:claude-sonnet-4-20250514" ,\n  "openai:gpt-5.4" ]',
    )
    shuffled = shuffled.replace("2026-05-01T11:00:00+02:00", "2026-05-01T09:00:00Z")
    (tmp_path / "b").mkdir()
    b = load_plan(write(tmp_path / "b", shuffled))
    assert a == b and a.sha256 == b.sha256
    # the hash is sha256 of the sorted-key compact JSON of to_dict()
    canon = json.dumps(a.to_dict(), sort_keys=True, separators=(",", ":"))
    assert a.sha256 == hashlib.sha256(canon.encode()).hexdigest()
    assert a.to_dict()["written_at"] == "2026-05-01T09:00:00+00:00"
    # any change of substance changes it
    c = load_plan(write(tmp_path, GOOD.replace("alpha = 0.05", "alpha = 0.025")))
    assert c.sha256 != a.sha256


@pytest.mark.parametrize(
    ("text", "line", "field", "reason"),
    [
        (GOOD + "alfa = 0.05\n", 14, "alfa", "unknown key 'alfa'"),
        (GOOD.replace("alpha = 0.05", "alpha = 0.6"), 6, "alpha", "alpha must be in (0, 0.5]"),
        (GOOD.replace("alpha = 0.05", "alpha = 0"), 6, "alpha", "alpha must be in (0, 0.5]"),
        (GOOD.replace("alpha = 0.05", 'alpha = "0.05"'), 6, "alpha", "alpha must be in (0, 0.5]"),
        (GOOD.replace("tasks = 15", "tasks = 1.5"), 10, "tasks", "tasks must be an integer"),
        (GOOD.replace("replicates = 6", "replicates = 0"), 11, "replicates", ">= 1"),
        (GOOD.replace('"net_win"', '"netwin"'), 5, "statistic", "statistic must be one of"),
        (GOOD.replace('"greater"', '"up"'), 7, "sidedness", "sidedness must be one of"),
        (GOOD.replace("margin = 0.1", "margin = -0.1"), 8, "margin", "margin must be in (0, inf)"),
        (GOOD.replace("margin = 0.1", "margin = 50"), 8, "margin", "< 1 for net_win (in [-1, 1])"),
        (GOOD.replace('margin_kind = "non-inferiority"\n', ""), 8, "margin", "go together"),
        (
            GOOD.replace("2026-05-01T11:00:00+02:00", "2026-05-01"),
            2,
            "written_at",
            "the date 2026-05-01 alone",
        ),
        (GOOD.replace("2026-05-01T11:00:00+02:00", '"yesterday"'), 2, "written_at", "ISO-8601"),
        (GOOD + 'consensus = "unanimous"\n', 14, "consensus", "not both"),
        (
            GOOD.replace('"with-without", "blind-pair"', '"blind-pair"'),
            3,
            "primary_rubric",
            "not in",
        ),
        (
            GOOD.replace(', "anthropic:claude-sonnet-4-20250514"]', "]"),
            4,
            "primary_judge",
            "not in judges",
        ),
        (GOOD.replace("judges = [", 'judges = ["openai:gpt-5.4", '), 12, "judges", "listed twice"),
        (GOOD + "[extra]\nx = 1\n", 14, "extra", "unknown key 'extra'"),
        (
            GOOD.replace('primary_rubric = "with-without"', "primary_rubric = 3"),
            3,
            "primary_rubric",
            "expected a string",
        ),
    ],
)
def test_bad_plans_name_line_and_field(tmp_path, text, line, field, reason):
    err = error(tmp_path, text)
    assert (err.line, err.field) == (line, field), str(err)
    assert reason in err.reason
    assert str(err).startswith(f"{tmp_path / 'plan.toml'}:{line}, field '{field}'")


def test_missing_required_keys(tmp_path):
    err = error(tmp_path, 'primary_rubric = "with-without"\nstatistic = "net_win"\n')
    assert "give primary_judge or consensus" in err.reason
    err = error(tmp_path, 'primary_judge = "a:b"\nstatistic = "net_win"\n')
    assert "missing required key 'primary_rubric'" in err.reason


def test_malformed_files(tmp_path):
    err = error(tmp_path, 'primary_rubric = "x"\nalpha = \n')
    assert err.line == 2 and "not valid TOML" in err.reason
    err = error(tmp_path, 'primary_rubric = "x"\nprimary_rubric = "y"\n')
    assert err.line == 2 and "not valid TOML" in err.reason  # TOML refuses a repeated key
    with pytest.raises(DataError, match="unsupported plan file type"):
        load_plan(write(tmp_path, "{}", "plan.json"))  # plan.toml is the one plan format
    with pytest.raises(DataError, match="file not found"):
        load_plan(tmp_path / "nope.toml")
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(DataError, match="UTF-8"):
        load_plan(tmp_path / "bin.toml")


def test_parse_plan_from_a_mapping():
    plan = parse_plan(
        {"primary_rubric": "r", "primary_judge": "j", "statistic": "tokens_total_ratio"}
    )
    assert isinstance(plan, Plan) and plan.path is None
    with pytest.raises(DataError, match="field 'replicates'"):
        parse_plan(
            {"primary_rubric": "r", "primary_judge": "j", "statistic": "score", "replicates": True}
        )


def test_statistics_match_the_stats_layer():
    assert PLAN_STATISTICS == (*evalstats.stats.RATE_NAMES, *evalstats.stats.COST_METRICS)


@pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is not in this checkout")
def test_load_dir_reads_the_plan(tmp_path):
    d = tmp_path / "d"
    shutil.copytree(SAMPLE, d)
    assert evalstats.load_dir(d).plan is None
    write(d, GOOD)
    ds = evalstats.load_dir(d)
    assert ds.plan == load_plan(d / "plan.toml")
    tasks, runs, judgments, plan = ds  # a Dataset unpacks into its four parts
    assert plan is ds.plan and judgments is ds.judgments
    write(d, "{}", "plan.json")  # not read: plan.toml is the one plan format
    assert evalstats.load_dir(d).plan == ds.plan
    assert find_plan(tmp_path) is None
