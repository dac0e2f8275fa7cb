"""Issue 22 item 2: ``evalstats judge`` refuses a judge of the agent's own model family unless
``--allow-same-family``, which every judgment line records and the audit reports."""

from __future__ import annotations

import pytest
from fakellm import FakeLLM

import evalstats
from evalstats.cli import main
from evalstats.judging import read_journal
from evalstats.methodology import audit

# Integration (slow: make test runs it, make check does not): judges through both SDKs and audits the families.
pytestmark = pytest.mark.slow

KEY = "sk-test-0123456789abcdefFAKEKEY"
AGENT = "anthropic:claude-sonnet-4-20250514"
SAME = "anthropic:claude-opus-4-20250514"  # another model of the agent's family


@pytest.fixture
def same_family_data(tmp_path):
    """A data directory whose agent is a Claude model, with no judgments yet."""
    data = tmp_path / "data"
    evalstats.simulate(data, n_tasks=3, n_replicates=1, seed=0, agent_model=AGENT)
    (data / "judgments.jsonl").unlink()
    return data


def _judge(data, *extra):
    return [
        "judge", str(data), "--rubric", "with-without", "--judge", SAME,
        "--judge", "openai:gpt-4o", "--no-progress", *extra,
    ]  # fmt: skip


def test_a_same_family_judge_is_refused_in_one_line(same_family_data, capsys):
    code = main(_judge(same_family_data, "--dry-run"))
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("evalstats judge: error: "), err
    assert SAME in err and "anthropic" in err and AGENT in err
    assert "--allow-same-family" in err
    assert "Traceback" not in out + err
    assert not (same_family_data / "judgments.jsonl").exists()


def test_a_judge_of_another_family_is_not_refused(same_family_data, capsys):
    argv = ["judge", str(same_family_data), "--rubric", "with-without"]
    argv += ["--judge", "openai:gpt-4o", "--dry-run", "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err


def test_allowed_with_the_flag_recorded_and_reported(same_family_data, capsys, monkeypatch):
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        code = main(_judge(same_family_data, "--allow-same-family", "--timeout", "5"))
    err = capsys.readouterr().err
    assert code == 0, err
    lines = read_journal(same_family_data / "judgments.jsonl")
    assert len(lines) == 6  # 3 pairs x 2 judges
    assert {x["same_family_allowed"] for x in lines} == {"anthropic"}
    table = audit(evalstats.load_dir(same_family_data)).set_index("check")
    assert table.loc["judge_not_self", "status"] == "fail"
    detail = table.loc["judge_not_self", "detail"]
    assert f"{SAME} (anthropic)" in detail
    assert "--allow-same-family (family anthropic), recorded on 6 of 6 judgments" in detail


def test_a_same_family_judge_without_the_recorded_flag_is_called_out(tmp_path):
    # Judgments written by hand (or by another tool) carry no override: the audit says so.
    data = tmp_path / "sim"
    evalstats.simulate(data, n_tasks=3, n_replicates=1, seed=0, agent_model=AGENT)
    detail = audit(evalstats.load_dir(data)).set_index("check").loc["judge_not_self", "detail"]
    assert "No --allow-same-family was recorded" in detail
