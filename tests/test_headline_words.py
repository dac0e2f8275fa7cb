"""Issue 34: the answer first. The headline card in at most six lines with the rule that chose
its row one click away; exported sentences of at most 45 words, each percentage of its own
denominator, named. Through the public API (headline_paragraph, show_headline_card,
`evalstats export`) on the sample and the three-arm directory.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

import evalstats
from evalstats.report import (
    compute_results,
    dump_json,
    headline_paragraph,
    merge_results,
    result_sentences,
    show_headline_card,
)

DATA = Path(__file__).resolve().parents[1] / "data"
CLAUDE = "anthropic:claude-sonnet-4-20250514"
CARD_CH = 90  # .headline-card p { max-width: 90ch }: characters a line holds at most


@pytest.fixture(scope="module", params=["sample", "karm"])
def res(request):
    return compute_results(DATA / request.param, n_resamples=100, seed=0)


def _sentences(text: str) -> list[str]:
    return [s for s in text.split(". ") if s.strip()]


def test_every_sentence_is_at_most_45_words(res):
    said = [headline_paragraph(res), *result_sentences(res)]
    long = [s for t in said for s in _sentences(t) if len(s.split()) > 45]
    assert not long, long


@pytest.mark.slow  # starts a Python subprocess
def test_exported_sentences_file(res, tmp_path):
    results = tmp_path / "results.json"
    results.write_text(dump_json(merge_results(res.to_json())), encoding="utf-8")
    out = tmp_path / "sentences.md"
    cmd = [sys.executable, "-m", "evalstats.cli", "export", str(results), "--sentences", str(out)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [x.removeprefix("- ") for x in out.read_text().splitlines() if x and x[0] != "#"]
    # The result first: the headline paragraph (two arms) or the first pair's net win (K arms).
    assert lines[0] == headline_paragraph(res) or lines[0].startswith("Judged by ")
    assert max(len(s.split()) for x in lines for s in _sentences(x)) <= 45


def test_result_first_then_the_rule_and_caveats(res):
    doc = res.to_json()
    p = headline_paragraph(res)
    assert p.startswith("On the with-without rubric, judged by Claude Sonnet 4, ")
    choice = doc["tables"]["headline_choice"][0]  # K arms: one per pair, the same rule
    rule = choice["rule"].split("; ")
    # The rule after the result, its clauses in sentences of their own.
    assert p.index("a net win of") < p.index(rule[0]) < p.index(rule[1][1:])
    fails = [r for r in doc["tables"]["headline_audit"] if r["status"] == "fail"]
    for r in fails:  # the three-arm data fail judge_disagreement: after the result too
        assert p.index("a net win of") < p.index(f"fails {r['arm_a']} vs {r['arm_b']}, ")


def _card(res, monkeypatch) -> dict:
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, raw=False: shown.append(obj))
    show_headline_card(res)
    (card,) = shown
    return card


def test_card_is_six_lines_with_the_rule_behind_details(res, monkeypatch):
    card = _card(res, monkeypatch)
    html = unescape(card["text/html"])
    doc = res.to_json()
    fails = [r for r in doc["tables"]["headline_audit"] if r["status"] == "fail"]
    # Outside <details>: the blocks shown, each as many lines as 90 characters fill; a
    # <summary> is one line. A failed check stays in view, one line per check.
    outside = re.sub(r"<details>.*?</details>", "<summary>x</summary>", html, flags=re.S)
    outside = re.sub(r"<summary>.*?</summary>", "<p>x</p>", outside, flags=re.S)
    blocks = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<(?:p|li)\b.*?</(?:p|li)>", html)]
    shown = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<p\b.*?</p>", outside, flags=re.S)]
    lines = sum(math.ceil(len(b) / CARD_CH) for b in shown)
    assert lines <= 6, shown
    for r in fails:  # each failed check in view, its detail one click away
        assert any(f"fails {r['check']}" in b for b in shown)
        assert any(r["detail"].rstrip(".") in b for b in blocks)
    choice = doc["tables"]["headline_choice"][0]  # K arms: one per pair, the same rule
    first = choice["rule"].split("; ")[0]
    assert first in html and not any(first in b for b in shown)
    assert any(first in b for b in blocks)  # inside <details>
    assert re.search(r"<details><summary>Why this row</summary>.*" + re.escape(first), html)
    # What it rests on, in view: pairs, tasks, the judge; the audit's verdict in one line.
    assert re.search(r"of the \d+ readable pairs.* in 15 tasks", shown[0])
    assert "judged by Claude Sonnet 4" in shown[0]
    n = len(doc["tables"]["audit"])
    warn = sum(r["status"] == "warn" for r in doc["tables"]["headline_audit"])
    assert f"Audit: of {n} checks, " in html and f"{warn} warn" in html
    # Plain text: the same, the details as following lines.
    plain = card["text/plain"].splitlines()
    assert plain[0] == f"Headline. {shown[0].removeprefix('Headline. ')}"
    assert plain[-1].startswith("Why this row: ") and first in plain[-1]


@pytest.fixture(scope="module")
def garbled(tmp_path_factory):
    """The sample with 12 more of Claude's with-without verdicts unreadable."""
    d = tmp_path_factory.mktemp("garbled")
    for f in (DATA / "sample").iterdir():
        shutil.copy(f, d / f.name)
    rows = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    hit = [r for r in rows if (r["rubric"], r["judge"]) == ("with-without", CLAUDE)]
    for r in hit[:12]:
        r["raw"] = "I would rather not pick a label."
    (d / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return d


def test_percentages_of_their_own_named_denominator(garbled):
    res = compute_results(garbled, n_resamples=100, seed=0)
    f = evalstats.load_frame(garbled)
    f = f.loc[(f["rubric"] == "with-without") & (f["judge"] == CLAUDE)]
    status = f["status"].value_counts()
    ok, bad, err = (int(status.get(k, 0)) for k in ("ok", "invalid", "error"))
    assert bad >= 12 and ok > 0
    wins = int((f.loc[f["status"] == "ok", "outcome"] == "win").sum())
    judged = ok + bad + err
    said = f"of the {ok} readable pairs ({judged} judged, {bad} unreadable)"
    p = headline_paragraph(res)
    m = re.search(r"WITH won (\d+) % \[[^\]]+\] (of the .*?\)) in", p)
    assert m and m[2] == said, p
    assert int(m[1]) == round(100 * wins / ok) != round(100 * wins / judged)
    (s,) = [x for x in result_sentences(res) if "Claude Sonnet 4 judge, with-without" in x]
    assert f"{said} in " in s
