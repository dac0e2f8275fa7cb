"""Issue 32, Deliver 3: one verdict per call that still exists. Stale verdicts (their answers
changed) are kept in the journal, left out of the frame and counted; re-judging replaces; a
byte-identical request body is never paid twice, whatever the arm order or K."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakellm import FakeLLM

import evalstats
from evalstats.cli import main
from evalstats.judging import JudgeOptions, read_journal, run_judges

KEY = "sk-test-RECOGNISABLE-KEY-4242424242"
J1 = "anthropic:claude-sonnet-4-20250514"


@pytest.fixture
def fake(monkeypatch):
    with FakeLLM(api_key=KEY) as server:
        server.point_sdks(monkeypatch)
        yield server


def _judge(d: Path, rubric: str = "with-without", **kw) -> None:
    ds = evalstats.load_dir(d)
    opts = JudgeOptions(progress=False, max_tokens=kw.pop("max_tokens", 1024))
    pairs = None if ds.arms is None or ds.arms.two_arm else "all"
    run_judges(ds.tasks, ds.runs, rubric=rubric, judges=J1, out=d / "judgments.jsonl",
               options=opts, pairs=pairs, arms=ds.arms, **kw)  # fmt: skip


def _sim(tmp_path: Path, **kw) -> Path:
    d = tmp_path / "data"
    evalstats.simulate(d, n_tasks=2, n_replicates=kw.pop("n_replicates", 1), judges=(), **kw)
    (d / "judgments.jsonl").unlink()
    return d


def _rewrite_runs(d: Path, edit) -> None:
    rows = [json.loads(x) for x in (d / "runs.jsonl").read_text().splitlines()]
    rows = [r for row in rows for r in edit(row)]
    (d / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_changed_answers_make_their_verdicts_stale(fake, tmp_path, capsys):
    d = _sim(tmp_path, n_replicates=2)
    _judge(d)
    assert fake.requests == 4 and len(evalstats.load_frame(d)) == 4

    def edit(row):  # a re-import with other answers for task T01
        yield {**row, "answer": row["answer"] + " (new)"} if row["task_id"] == "T01" else row

    _rewrite_runs(d, edit)
    frame = evalstats.load_frame(d)
    assert frame.attrs["stale"] == {("with-without", J1, "with", "without"): 2}
    assert set(frame["task_id"]) == {"T02"} and len(frame) == 2
    assert main(["summary", str(d)]) == 0  # the accounting counts them
    assert "stale" in capsys.readouterr().out
    _judge(d)  # only the changed pairs are judged again
    assert fake.requests == 6 and len(read_journal(d / "judgments.jsonl")) == 6
    frame = evalstats.load_frame(d)
    assert len(frame) == 4 and sum(frame.attrs["stale"].values()) == 2


def test_rejudging_with_other_options_replaces_the_verdict(fake, tmp_path):
    d = _sim(tmp_path, n_replicates=5)
    _judge(d)
    n, rows = fake.requests, len(evalstats.load_frame(d))
    _judge(d, max_tokens=2048)
    assert fake.requests == 2 * n
    frame = evalstats.load_frame(d)
    assert len(frame) == rows and (frame["status"] == "ok").sum() == n
    assert frame.attrs["superseded_failures"] == n
    latest = {
        r["judgment_id"] for r in read_journal(d / "judgments.jsonl") if r["max_tokens"] == 2048
    }
    assert set(frame.loc[frame["status"] == "ok", "judgment_id"]) == latest


@pytest.mark.parametrize("orders", ["random", "both"])
def test_reordered_arms_toml_sends_no_identical_body_again(fake, tmp_path, orders):
    d = _sim(tmp_path, arms=("none", "v1", "v2"), reference="none")
    _judge(d, "blind-pair", orders=orders)
    paid = fake.requests
    assert paid == 2 * 3 * (2 if orders == "both" else 1)
    toml = (d / "arms.toml").read_text().splitlines()
    (d / "arms.toml").write_text("\n".join([*toml[:3], *reversed(toml[3:])]) + "\n")
    assert evalstats.load_dir(d).arms.ids == ("v2", "v1", "none")
    _judge(d, "blind-pair", orders=orders)
    assert fake.requests == paid and max(fake.paid.values()) == 1
    frame = evalstats.load_frame(d)
    assert len(frame) == paid and (frame["status"] == "ok").all()


def test_grown_study_pays_only_the_new_pairs(fake, tmp_path, capsys):
    d = _sim(tmp_path)
    _judge(d, "blind-pair", orders="both")
    assert fake.requests == 4

    def edit(row):
        yield row
        if row["arm"] == "without":
            yield {**row, "arm": "new", "answer": row["answer"] + " (new arm)"}

    _rewrite_runs(d, edit)
    (d / "arms.toml").write_text('[arms]\nwith = "WITH"\nwithout = "WITHOUT"\nnew = "NEW"\n')
    _judge(d, "blind-pair", orders="both")
    assert fake.requests == 4 + 8 and max(fake.paid.values()) == 1
    assert main(["summary", str(d)]) == 0
    frame = evalstats.load_frame(d)
    assert len(frame) == 12 and frame.groupby(["arm_a", "arm_b"]).size().tolist() == [4] * 3


def test_import_over_a_judged_directory_leaves_the_old_verdicts_stale(fake, tmp_path):
    from karm_dir import import_hand_karm, write_hand_karm

    src = write_hand_karm(tmp_path / "src", n_tasks=2)
    d = import_hand_karm(src, tmp_path / "d", judgments=False)
    argv = ["judge", str(d), "--rubric", "with-without", "--judge", J1, "--no-progress"]
    assert main([*argv, "--pairs", "reference"]) == 0
    n = fake.requests
    csv = (src / "runs.csv").read_text()
    (src / "runs.csv").write_text(csv.replace(" run ", " rerun "))  # every answer changed
    import_hand_karm(src, d, judgments=False)
    frame = evalstats.load_frame(d)
    assert len(frame) == 0 or (frame["status"] != "ok").all()
    assert sum(frame.attrs["stale"].values()) == n
    assert main([*argv, "--pairs", "reference"]) == 0
    frame = evalstats.load_frame(d)
    assert fake.requests == 2 * n and (frame["status"] == "ok").sum() == n


def test_pairs_with_identical_bodies_share_one_paid_answer(fake, tmp_path):
    d = _sim(tmp_path, arms=("none", "v1", "v2"), reference="none")
    answers = {}

    def edit(row):  # v2 answers what v1 answered: some pairs render the same request body
        answers.setdefault((row["task_id"], row["replicate"]), {})[row["arm"]] = row["answer"]
        same = answers[(row["task_id"], row["replicate"])].get("v1")
        yield {**row, "answer": same} if row["arm"] == "v2" else row

    _rewrite_runs(d, edit)
    _judge(d, "blind-pair", orders="both")
    # Per task: (v1, none) in two orders; (v2, none) the same bodies; (v2, v1) one body.
    assert fake.requests == 2 * 3 and max(fake.paid.values()) == 1
    frame = evalstats.load_frame(d)
    assert len(frame) == 2 * 3 * 2 and (frame["status"] == "ok").all()
    lines = read_journal(d / "judgments.jsonl")
    assert sum(x["usd"] for x in lines) == pytest.approx(sum(x["usd"] for x in lines[:6]))
