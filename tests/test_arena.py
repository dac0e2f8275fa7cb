"""The Chatbot Arena adapter on ../shared/data/arena/battles.csv.gz (skipped without it)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from evalstats.adapters import arena
from evalstats.errors import DataError, ParameterError
from evalstats.stats import compare, rank

BATTLES = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena" / "battles.csv.gz"
if not BATTLES.exists():  # the main checkout's sibling, when run from a worktree
    BATTLES = Path("/work/shared/data/arena/battles.csv.gz")
needs_data = pytest.mark.skipif(
    not BATTLES.exists(), reason=f"the Arena battles are not here ({BATTLES}); see shared/data"
)


@needs_data
def test_counts_are_those_of_the_data_readme():
    human = arena.load(BATTLES)
    assert len(human) == 26_919 and human.task_id.nunique() == 26_919
    counts = human.outcome.value_counts()
    # README: model_a 9,516, model_b 9,391, tie 2,880, tie (bothbad) 5,132
    assert (counts["win"], counts["loss"], counts["tie"]) == (9_516, 9_391, 2_880 + 5_132)
    gpt4 = arena.load(BATTLES.parent, judge="gpt-4-0125-preview").outcome.value_counts()
    assert (gpt4["win"], gpt4["loss"], gpt4["tie"]) == (10_732, 8_734, 7_453)
    assert len(set(human.arm_a) | set(human.arm_b)) == 20
    both = arena.load(BATTLES, judge=["human", "gpt-3.5-turbo"])
    assert len(both) == 2 * 26_919 and set(both.judge) == {"human", "gpt-3.5-turbo"}


@needs_data
@pytest.mark.slow  # ranks every Arena battle (real data, a bootstrap)
def test_human_ranking_and_the_first_answer_bias_of_gpt4():
    frame = arena.load(BATTLES, judge="all")
    sub = frame[frame.task_id.astype(int) < 6000]
    human = rank(sub, judge="human", n_resamples=100, rng=0)
    top = human[human.statistic == "rank"].sort_values("estimate")
    assert top.arm.iloc[0] == "gpt-4" and top.in_tau_best.iloc[0]
    # GPT-4 as judge prefers the first answer more than people do (README: 10,732 vs 8,734)
    pos = {
        j: rank(sub, judge=j, n_resamples=100, rng=0).set_index("statistic").loc["position"]
        for j in ("human", "gpt-4-0125-preview")
    }
    assert pos["gpt-4-0125-preview"].estimate > pos["human"].ci_high
    net = compare(sub[sub.judge == "human"], reference="gpt-4")
    assert (net[net.statistic == "net_win"].estimate < 0).all()


def test_bad_verdict_and_bad_judge_are_named(tmp_path):
    bad = tmp_path / "battles.csv.gz"
    with gzip.open(bad, "wt") as fh:
        fh.write("num,question_id,model_a,model_b,human\n0,q,a,b,model_a\n1,q,a,b,draw\n")
    with pytest.raises(DataError, match=r"battles.csv.gz:3, field 'human'.*'draw'"):
        arena.load(bad)
    with pytest.raises(ParameterError, match="judge"):
        arena.load(bad, judge="gpt-5")
    with pytest.raises(DataError, match="missing column"):
        arena.load(bad, judge="gpt-3.5-turbo")
