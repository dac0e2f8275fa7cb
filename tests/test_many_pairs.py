"""Issue 32 (bounded by design): with many pairs of arms the design studies run on the
headline pair only, and the other pairs' headline rows say why (the 60- and 200-arm cases run
in ``benchmarks/bench_faults.py --round 3 --case arms``)."""

from __future__ import annotations

import warnings

import pytest

from evalstats import load_dir
from evalstats.cli import main
from evalstats.report import compute

ARMS = [f"a{i}" for i in range(5)]  # every pair: 10 pairs, more than 6
STUDIES = ("missing_bounds", "design", "power_mde", "mde_simulated", "ordinal_check", "coverage")


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    data = tmp_path_factory.mktemp("many") / "data"
    argv = ["simulate", str(data), "--arms", ",".join(ARMS), "--reference", "a0"]
    argv += ["--strengths", "0,0.2,0.4,0.6,0.8", "--pairs", "all", "--tasks", "4"]
    argv += ["--replicates", "1", "--judge", "openai:gpt-4o", "--rubric", "with-without"]
    assert main([*argv, "--seed", "1"]) == 0
    judged = load_dir(data).judgments[["arm_a", "arm_b"]].astype(str).drop_duplicates()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = compute("evaluation", data, n_resamples=40, seed=1)
    return res, list(judged.itertuples(index=False, name=None))


def test_design_studies_are_computed_for_the_headline_pair_only(many):
    res, pairs = many
    assert len(pairs) == 10
    for name in STUDIES:
        table = res.tables[name]
        assert set(zip(table["arm_a"], table["arm_b"], strict=True)) == {pairs[0]}, name


def test_the_other_pairs_rows_say_why(many):
    res, pairs = many
    head = res.tables["headline"]
    assert set(zip(head["arm_a"], head["arm_b"], strict=True)) == set(pairs)
    first = (head["arm_a"] == pairs[0][0]) & (head["arm_b"] == pairs[0][1])
    note = head["ci_note"].fillna("").astype(str)
    assert not note[first].str.contains("headline pair").any()
    said = note[~first]
    assert said.str.contains(f"headline pair {pairs[0][0]} vs {pairs[0][1]} only").all()
