"""Issue 31's acceptance: three arms written by hand, through every command, exit 0 everywhere.

A runs table with harness token counts (three arms, named by the user's own values), ten
people's labels and an ``arms.toml`` with a reference go through ``import table``, ``judge``
(two judges of different families, through the real SDKs against the loopback fake server,
one answer unreadable), ``frame``, ``summary``, ``label`` (a sheet drawn and read back),
``report`` and ``export``. The page must name both judges and show, per pair of arms, the
audit, the agreement between the judges, the people and the invalid-verdict accounting.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from fakellm import FakeLLM
from karm_dir import HAND_JUDGES, import_hand_karm, write_hand_karm

import evalstats
from evalstats.cli import main

# Integration (slow: make test runs it): a kernel renders the report.
pytestmark = pytest.mark.slow

KEY = "sk-test-ACCEPTANCE-KEY-31313131"
PAIRS = {("v1", "none"), ("v2", "none"), ("v2", "v1")}
UNREADABLE = "I cannot tell which answer is better."


def _reply(system: str, user: str, model: str) -> str:
    """A three-way verdict that depends on the prompt; exactly one prompt of one judge gets
    an answer no rubric reads."""
    digest = hashlib.sha256((user + model).encode()).digest()
    if (
        model == "gpt-4o"
        and "handler 2?" in user
        and "(v1 run 1)" in user
        and "(none run 1)" in user
    ):
        return UNREADABLE
    label = ("(a)", "(b)", "(c)")[digest[0] % 3]
    return json.dumps(
        {"label": label, "reasoning": "Compared the two answers.", "uncertainty": "low"}
    )


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The hand-written directory imported and judged by two judges (module-wide: one run)."""
    tmp = tmp_path_factory.mktemp("acceptance")
    src = write_hand_karm(tmp / "src")
    d = import_hand_karm(src, tmp / "data", judgments=False)  # runs, arms.toml, ten labels
    with pytest.MonkeyPatch.context() as mp, FakeLLM(api_key=KEY, reply=_reply) as server:
        server.point_sdks(mp)
        argv = ["judge", str(d), "--rubric", "with-without", "--pairs", "all", "--no-progress"]
        for judge in HAND_JUDGES:
            argv += ["--judge", judge]
        assert main(argv) == 0
        paid = server.requests
    return tmp, d, paid


def test_judge_pays_each_pair_of_arms_once_per_judge(judged):
    _, d, paid = judged
    ds = evalstats.load_dir(d)
    n_pairs = ds.runs[["task_id", "replicate"]].drop_duplicates().shape[0] * len(PAIRS)
    assert paid == len(HAND_JUDGES) * n_pairs
    assert set(zip(ds.judgments["arm_a"], ds.judgments["arm_b"], strict=True)) == PAIRS
    assert (ds.judgments["raw"] == UNREADABLE).sum() == 1


def test_frame_summary_and_label(judged, capsys):
    tmp, d, _ = judged
    assert main(["frame", str(d), "-o", str(tmp / "frame.parquet")]) == 0
    frame = pd.read_parquet(tmp / "frame.parquet")
    assert set(zip(frame["arm_a"], frame["arm_b"], strict=True)) == PAIRS
    assert (frame["status"] == "invalid").sum() == 1
    assert main(["summary", str(d), "-o", str(tmp / "summary.csv")]) == 0
    summary = pd.read_csv(tmp / "summary.csv")
    assert len(summary) == len(HAND_JUDGES) * len(PAIRS) and summary["invalid"].sum() == 1
    sheet = tmp / "sheet.csv"
    assert main(["label", str(d), "-n", "6", "--seed", "1", "-o", str(sheet)]) == 0
    filled = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled["verdict"], filled["labeler"] = ["A", "tie", "B"] * 2, "dee"
    filled.to_csv(sheet, index=False)
    assert main(["label", str(d), "--read", str(sheet)]) == 0
    assert len(evalstats.load_dir(d).labels) == 16


@pytest.fixture(scope="module")
def rendered(judged):
    tmp, d, _ = judged
    out = tmp / "report"
    assert main(["report", str(d), "-o", str(out)]) == 0
    return out


def test_the_page_names_both_judges_and_shows_every_pair(rendered):
    pages = " ".join(p.read_text(encoding="utf-8") for p in rendered.glob("*.html"))
    text = re.sub(r"<[^>]+>", " ", pages)
    for judge in HAND_JUDGES:
        assert judge.split(":")[1] in text, judge
    results = json.loads((rendered / "results.json").read_text(encoding="utf-8"))
    tables = results["tables"]

    def pairs_of(name: str) -> set[tuple[str, str]]:
        rows = pd.DataFrame(tables[name])
        return set(zip(rows["arm_a"], rows["arm_b"], strict=True))

    # The audit, the judges' agreement, the people and the accounting: every pair of arms.
    for name in ("audit", "agreement", "accounting"):
        assert pairs_of(name) == PAIRS, name
    # People (ten hand-written labels, six from the sheet) against each judge, per pair of
    # arms: agreement with its clustered kappa, and the PPI rates.
    for name in ("labels_agreement", "labels_ppi"):
        assert pairs_of(name) == PAIRS, name  # the hand labels name every pair
    kappa = pd.DataFrame(tables["labels_agreement"]).query("statistic == 'kappa'")
    assert ((kappa["ci_low"] > -1) & (kappa["ci_high"] < 1)).all()  # no degenerate [x, 1]
    accounting = pd.DataFrame(tables["accounting"])
    assert "invalid" in accounting.columns and accounting["invalid"].sum() == 1


def test_export_every_table(rendered, tmp_path):
    argv = ["export", str(rendered / "results.json"), "--latex", str(tmp_path / "tex")]
    argv += ["--markdown", str(tmp_path / "md"), "--macros", str(tmp_path / "macros.tex")]
    argv += ["--sentences", str(tmp_path / "sentences.md")]
    assert main(argv) == 0
    assert list((tmp_path / "tex").glob("*.tex")) and (tmp_path / "macros.tex").stat().st_size


def test_no_key_reaches_the_outputs(judged, rendered):
    _, d, _ = judged
    for p in [*Path(d).rglob("*"), *rendered.rglob("*")]:
        if p.is_file() and p.suffix in {".jsonl", ".json", ".html", ".csv", ".toml"}:
            assert KEY not in p.read_text(encoding="utf-8", errors="replace"), p
