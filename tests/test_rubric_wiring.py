"""Rubric files through the pipeline (issue 13 items 2-3): judge -> journal -> frame -> audit.

Every sha256 expected here is computed with ``hashlib`` over the file's bytes (what
``sha256sum`` prints), independently of the package's own hashing; every prompt checked is
the one the loopback fake server actually received.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from fakellm import FakeLLM, default_reply, make_data

import evalstats
from evalstats import DataError, rubrics
from evalstats.cli import main
from evalstats.frames import load_frame, resolve_rubrics, verdict_frame
from evalstats.methodology import audit
from evalstats.records import EvalstatsWarning, load_dir

# Integration (slow: make test runs it, make check does not): judges with rubric files through both SDKs.
pytestmark = pytest.mark.slow

KEY = "sk-test-wiring-0000000000"
JUDGE = "openai:gpt-4o"


@pytest.fixture
def seen():
    return []


@pytest.fixture
def fake(monkeypatch, seen):
    def reply(system: str, user: str, model: str) -> str:
        seen.append(system + "\n" + user)
        return default_reply(system, user, model)

    with FakeLLM(api_key=KEY, reply=reply) as server:
        server.point_sdks(monkeypatch)
        yield server


def _data_dir(root: Path, n_tasks: int = 4) -> Path:
    tasks, pairs = make_data(n_tasks)
    data = root / "data"
    data.mkdir()
    tasks.assign(
        canonical_written_at="2026-01-01T00:00:00Z", budget_tokens=10_000, budget_wall_s=600.0
    ).to_json(data / "tasks.jsonl", orient="records", lines=True)
    runs = [
        {
            "task_id": row.task_id,
            "replicate": row.replicate,
            "arm": arm,
            "agent_model": "agent",
            "answer": getattr(row, f"{arm}_answer"),
            "wall_s": getattr(row, f"{arm}_wall_s"),
            "started_at": "2026-01-02T00:00:00Z",
        }
        for row in pairs.itertuples()
        for arm in ("with", "without")
    ]
    pd.DataFrame(runs).to_json(data / "runs.jsonl", orient="records", lines=True)
    return data


def _new_rubric(root: Path, *extra: str) -> Path:
    path = root / "rubrics" / "serena.toml"
    args = ["rubric", "new", "--from", "with-without", "--tool-name", "Serena MCP"]
    assert main([*args, *extra, "-o", str(path)]) == 0
    return path


def _judge(data: Path, rubric: str | Path, *extra: str) -> int:
    return main(
        ["judge", str(data), "--rubric", str(rubric), "--judge", JUDGE, "--no-progress", *extra]
    )


def _journal(data: Path) -> list[dict]:
    lines = (data / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r.get("kind", "judgment") == "judgment"]


def _write_journal(data: Path, records: list[dict]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in records)
    (data / "judgments.jsonl").write_text(text, encoding="utf-8")


def _pin(table: pd.DataFrame) -> tuple[str, str]:
    row = table.loc[table["check"] == "prompt_hash_pinned"].iloc[0]
    return str(row["status"]), str(row["detail"])


def test_judge_with_a_rubric_file_records_its_sha_and_keeps_a_copy(fake, seen, tmp_path):
    data = _data_dir(tmp_path)
    path = _new_rubric(tmp_path)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    seed_sha = rubrics.get("with-without").sha256
    assert sha != seed_sha

    assert _judge(data, path, "--dry-run") == 0
    assert not (data / "rubrics").exists(), "a dry run writes nothing"
    assert _judge(data, path) == 0

    # What the judge was actually sent names the tool and never the seed's gortex.
    assert len(seen) == 4
    assert all("gortex" not in p.lower() and "Serena MCP" in p for p in seen)
    records = _journal(data)
    assert len(records) == 4
    assert {r["prompt_sha256"] for r in records} == {sha}
    assert {(r["rubric"], r["prompt_revision"]) for r in records} == {
        ("with-without-serena-mcp", 1)
    }
    copy = data / "rubrics" / "with-without-serena-mcp.r1.toml"
    assert copy.read_bytes() == path.read_bytes()

    # The data directory describes itself: the original file can go.
    path.unlink()
    frame = load_frame(data)
    assert frame["status"].astype(str).tolist() == ["ok"] * 4
    assert set(frame["prompt_sha256"]) == {sha}
    assert frame["outcome"].notna().all()
    ds = load_dir(data)
    assert ds.arm_names == {"with": "WITH", "without": "WITHOUT"}  # arms.toml names them
    status, detail = _pin(audit(ds))
    assert status == "pass", detail
    assert "with-without-serena-mcp r1" in detail

    # A rerun by name (the copy in DATA_DIR/rubrics) makes no new calls.
    assert _judge(data, "with-without-serena-mcp") == 0
    assert len(seen) == 4 and len(_journal(data)) == 4


def test_a_changed_rubric_under_the_same_revision_is_refused(fake, tmp_path, capsys):
    data = _data_dir(tmp_path, n_tasks=2)
    path = _new_rubric(tmp_path)
    assert _judge(data, path) == 0
    copy = data / "rubrics" / "with-without-serena-mcp.r1.toml"
    before = copy.read_bytes()
    path.write_text(path.read_text(encoding="utf-8").replace("Serena MCP", "Serena"), "utf-8")
    capsys.readouterr()
    assert _judge(data, path) == 2
    err = capsys.readouterr().err
    assert "a different rubric file already holds 'with-without-serena-mcp' revision 1" in err
    assert str(copy) in err
    assert copy.read_bytes() == before
    assert len(_journal(data)) == 2

    # Bumping the revision is the way: a second copy, new calls, the audit warns of the mix.
    text = path.read_text(encoding="utf-8").replace("revision = 1", "revision = 2", 1)
    path.write_text(text, encoding="utf-8")
    assert _judge(data, path) == 0
    assert (data / "rubrics" / "with-without-serena-mcp.r2.toml").exists()
    records = _journal(data)
    assert sorted(r["prompt_revision"] for r in records) == [1, 1, 2, 2]
    path.unlink()
    frame = load_frame(data)
    assert (frame["status"].astype(str) == "ok").all()
    # Each revision is read with its own file: the shas in the frame are those of the copies.
    for rev in (1, 2):
        want = hashlib.sha256(
            (data / "rubrics" / f"with-without-serena-mcp.r{rev}.toml").read_bytes()
        ).hexdigest()
        assert set(frame.loc[frame["prompt_revision"] == rev, "prompt_sha256"]) == {want}
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalstatsWarning)
        ds = load_dir(data)
    status, detail = _pin(audit(ds))
    assert status == "warn", detail
    assert "with-without-serena-mcp mixes prompt revisions [1, 2]" in detail


def test_audit_catches_a_silently_edited_rubric(fake, tmp_path):
    data = _data_dir(tmp_path, n_tasks=3)
    path = _new_rubric(tmp_path)
    assert _judge(data, path) == 0
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    copy = data / "rubrics" / "with-without-serena-mcp.r1.toml"

    # The kept copy edited in place: the judgments' sha is no longer the rubric's.
    copy.write_text(copy.read_text(encoding="utf-8").replace("Serena MCP", "Serena"), "utf-8")
    edited = hashlib.sha256(copy.read_bytes()).hexdigest()
    status, detail = _pin(audit(load_dir(data)))
    assert status == "fail"
    assert detail.startswith("3 of 3 judgments fail the pin")
    assert f"prompt_sha256 {sha[:12]}..., not {edited[:12]}..." in detail
    assert str(copy) in detail

    # Judgments of one name and revision carrying two texts.
    copy.write_bytes(path.read_bytes())
    records = _journal(data)
    records[0]["prompt_sha256"] = edited
    _write_journal(data, records)
    status, detail = _pin(audit(load_dir(data)))
    assert status == "fail"
    assert "with-without-serena-mcp r1 changed text under the same name and revision" in detail
    assert detail.startswith("1 of 3 judgments fail the pin")


def test_unknown_rubric_is_a_data_error_with_file_and_line(fake, tmp_path, capsys):
    data = _data_dir(tmp_path, n_tasks=2)
    path = _new_rubric(tmp_path)
    assert _judge(data, path) == 0
    (data / "rubrics" / "with-without-serena-mcp.r1.toml").unlink()
    with pytest.raises(DataError) as err:
        load_frame(data)
    msg = str(err.value)
    assert "judgments.jsonl:1" in msg and "field 'rubric'" in msg
    assert "unknown rubric 'with-without-serena-mcp'" in msg
    # Given explicitly, it is found again.
    frame = load_frame(data, rubrics=[path])
    assert (frame["status"].astype(str) == "ok").all()
    capsys.readouterr()
    assert _judge(data, "nope", "--dry-run") == 2  # one line on stderr, no traceback
    assert "unknown rubric 'nope'" in capsys.readouterr().err


def _blind_file(tmp_path: Path) -> Path:
    # A blind-scores rubric of its own: three dimensions, one the seed does not have.
    text = rubrics.seed_toml("blind-pair")
    text = text.replace('name = "blind-pair"', 'name = "blind-three"')
    text = text.replace(
        'dimensions = ["correctness", "specificity", "completeness", "hallucination_safety"]',
        'dimensions = ["correctness", "brevity", "hallucination_safety"]',
    )
    assert '"brevity"' in text
    path = tmp_path / "blind-three.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_verdict_frame_parses_a_blind_scores_file_with_its_own_dimensions(tmp_path):
    path = _blind_file(tmp_path)
    rubric = rubrics.load(path)
    data = _data_dir(tmp_path, n_tasks=2)
    ds = load_dir(data)
    side_a = {"correctness": 5, "brevity": 2, "hallucination_safety": 4}
    side_b = {"correctness": 3, "brevity": 4, "hallucination_safety": 5}
    raw = json.dumps(
        {"agent_a": side_a, "agent_b": side_b, "verdict": "a_wins", "verdict_reasoning": "x"}
    )
    judgments = pd.DataFrame(
        {
            "judgment_id": ["j1", "j2"],
            "task_id": ["t000", "t001"],
            "replicate": [1, 1],
            "judge": [JUDGE, JUDGE],
            "rubric": ["blind-three"] * 2,
            "prompt_revision": [1, 1],
            "prompt_sha256": [rubric.sha256] * 2,
            "order": ["with_first", "without_first"],
            "raw": [raw, raw],
            "created_at": pd.to_datetime(["2026-01-03T00:00:00Z"] * 2),
            "input_tokens": [10, 10],
            "output_tokens": [5, 5],
            "usd": [0.0, 0.0],
            "latency_s": [0.1, 0.1],
            "error": [None, None],
        }
    )
    frame = verdict_frame(judgments, ds.runs, ds.tasks, rubrics=path)
    assert frame["outcome"].astype(str).tolist() == ["win", "loss"]
    assert frame[["with_brevity", "without_brevity"]].to_numpy().tolist() == [[2, 4], [4, 2]]
    assert frame["with_correctness"].tolist() == [5, 3]
    assert frame["with_specificity"].isna().all()
    cols = list(frame.columns)  # the file's dimensions, together, after the contract's
    at = cols.index("with_brevity")
    assert cols[at : at + 2] == ["with_brevity", "without_brevity"] and at > cols.index("status")
    found = resolve_rubrics(judgments, [path])
    assert [r.path for r in found.values()] == [str(path)]


def test_arm_names_from_arms_toml_not_rubric_files(tmp_path):
    data = _data_dir(tmp_path, n_tasks=2)
    assert evalstats.load_dir(data).arm_names == {"with": "WITH", "without": "WITHOUT"}
    folder = data / "rubrics"
    folder.mkdir()
    r = rubrics.with_tool_name(rubrics.get("with-without"), "Serena MCP")
    (folder / "a.r1.toml").write_text(rubrics.to_toml(r), encoding="utf-8")
    # arms.toml is the one description of the arms, not a rubric file.
    assert evalstats.load_dir(data).arm_names == {"with": "WITH", "without": "WITHOUT"}
    (data / "arms.toml").write_text(
        'with = "Serena MCP"\nwithout = "plain Claude Code"\n', encoding="utf-8"
    )
    names = {"with": "Serena MCP", "without": "plain Claude Code"}
    assert evalstats.load_dir(data).arm_names == names
    (data / "arms.toml").write_text('with = "x"\ncontrol = "y"\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"arms.toml:2, field 'control': unknown key"):
        evalstats.load_dir(data)
    (data / "arms.toml").write_text('with = ""\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"arms.toml:1, field 'with': must be a non-empty"):
        evalstats.load_dir(data)


def test_a_file_named_like_a_builtin_with_other_text_is_refused(fake, tmp_path, capsys):
    data = _data_dir(tmp_path, n_tasks=2)
    path = tmp_path / "fake-seed.toml"
    text = rubrics.seed_toml("with-without").replace("gortex", "other", 1)
    path.write_text(text, encoding="utf-8")
    assert _judge(data, path) == 2
    assert "a built-in rubric, with another text" in capsys.readouterr().err
    assert not (data / "judgments.jsonl").exists()
