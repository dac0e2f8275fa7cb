"""Issue 32, area D: no estimate without data; ranges checked where they enter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from karm_dir import write_karm_dir

import evalstats as es
from evalstats.cli import main

ARMS = ["none", "v1", "v2"]


@pytest.fixture(scope="module")
def no_v2(tmp_path_factory) -> Path:
    """A three-arm directory whose arm v2 has runs but not one judgment."""
    d = write_karm_dir(tmp_path_factory.mktemp("nov2") / "data")
    rows = [json.loads(x) for x in (d / "judgments.jsonl").read_text().splitlines()]
    keep = [r for r in rows if "v2" not in (r["arm_a"], r["arm_b"])]
    (d / "judgments.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    return d


def test_an_arm_without_verdicts_gets_a_reason_not_the_references_numbers(no_v2):
    f = es.load_frame(no_v2)
    r = es.rank(f, arms=ARMS, n_resamples=100, rng=0)
    v2 = r.loc[r["arm"] == "v2"]
    assert set(v2["statistic"]) == {"strength", "rank"}
    assert v2["estimate"].isna().all() and (v2["ci_note"] == "no verdicts: no estimate").all()
    assert not v2["in_tau_best"].fillna(False).astype(bool).any()
    ranked = r.loc[r["statistic"] == "rank"].set_index("arm")["estimate"]
    assert sorted(ranked.dropna()) == [1.0, 2.0]  # two judged arms, two ranks
    assert not (r["opponent"] == "v2").any()
    c = es.compare(f, arms=ARMS)
    pair = c["arm_b"] == "v2"
    assert pair.sum() == 8 and c.loc[pair, "estimate"].isna().all()
    assert (c.loc[pair, "ci_note"] == "no verdicts: no estimate").all()
    assert c.loc[~pair, "ci_note"].isna().all() and c.loc[~pair, "estimate"].notna().all()
    p = es.pareto(f, es.load_runs(no_v2 / "runs.jsonl"), reference="none", arms=ARMS,
                  n_resamples=100, rng=0)  # fmt: skip
    q = p.loc[(p["arm"] == "v2") & (p["statistic"] != "tokens_total_ratio")]
    assert q["estimate"].isna().all() and not p.loc[p["arm"] == "v2", "on_frontier"].any()


def test_the_reports_results_carry_the_reason(no_v2, tmp_path):
    out = tmp_path / "rep"
    assert main(["report", str(no_v2), "-o", str(out), "-p", "n_resamples=100"]) == 0
    tables = json.loads((out / "results.json").read_text())["tables"]
    for name in ("rank", "rank_sets", "compare"):
        rows = [r for r in tables[name] if "v2" in (r.get("arm"), r.get("arm_b"))]
        assert rows and all(r["estimate"] is None for r in rows), name
        assert all(r["ci_note"] == "no verdicts: no estimate" for r in rows), name
    assert not any("v2" in (r["arm"], r["opponent"]) for r in tables["beats"])
