"""The comparison report kind: K >= 3 arms detected, computed and rendered end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from karm_dir import write_karm_dir

from evalstats.records import load_dir
from evalstats.report import compute, detect_kind
from evalstats.stats import arm_costs, compare, pairwise_frame

# Integration (slow: make test runs it, make check does not): computes and renders the K-arm report.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def karm(tmp_path_factory):
    return write_karm_dir(tmp_path_factory.mktemp("karm"), n_tasks=8, n_reps=2)


@pytest.fixture(scope="module")
def res(karm):
    return compute("comparison", karm, n_resamples=200)


def test_three_arms_choose_the_comparison_kind(karm):
    assert detect_kind(karm) == "comparison"
    assert detect_kind("data/sample") == "evaluation"


def test_the_reader_gives_back_the_written_verdicts(karm):
    ds = load_dir(karm)
    f = pairwise_frame(ds)
    lines = [json.loads(x) for x in (karm / "judgments.jsonl").read_text().splitlines()]
    label = {"(a)": "win", "(b)": "tie", "(c)": "loss"}
    want = sorted((r["task_id"], r["replicate"], r["arm_a"], r["arm_b"],
                   label[json.loads(r["raw"])["label"]]) for r in lines)  # fmt: skip
    got = sorted(zip(f.task_id, f.replicate, f.arm_a, f.arm_b, f.outcome, strict=True))
    assert got == want and set(f.status) == {"ok"}


def test_results_hold_every_table_and_match_the_statistics(karm, res):
    assert set(res.tables) == {"compare", "rank", "rank_sets", "beats", "arm_costs", "pareto"}
    assert not res.unavailable
    cmp_ = res.tables["compare"]
    assert {(a, b) for a, b in zip(cmp_.arm_a, cmp_.arm_b, strict=True)} == {
        ("v1", "v2"), ("v1", "none"), ("v2", "none")}  # fmt: skip
    # the same generator order as compute: compare first, on a fresh seed-0 generator
    f = pairwise_frame(load_dir(karm))
    direct = compare(f, arms=["v1", "v2", "none"], n_resamples=200, rng=np.random.default_rng(0))
    assert cmp_["estimate"].to_numpy() == pytest.approx(direct["estimate"].to_numpy())
    assert cmp_["sim_high"].to_numpy() == pytest.approx(direct["sim_high"].to_numpy(), nan_ok=True)
    sets = res.tables["rank_sets"]
    assert sorted(set(sets.statistic)) == ["marginal_rank_set", "simultaneous_rank_set"]
    wide = sets.pivot(index="arm", columns="statistic", values=["ci_low", "ci_high"])
    # a simultaneous set contains the marginal one
    assert (wide["ci_low"]["simultaneous_rank_set"] <= wide["ci_low"]["marginal_rank_set"]).all()
    assert (wide["ci_high"]["simultaneous_rank_set"] >= wide["ci_high"]["marginal_rank_set"]).all()
    costs = res.tables["arm_costs"]
    point = arm_costs(load_dir(karm).runs, reference="none", n_resamples=20, rng=0)
    assert costs["estimate"].to_numpy() == pytest.approx(point["estimate"].to_numpy())
    p = res.tables["pareto"]
    probs = p.loc[p.statistic == "p_frontier", "estimate"]
    assert ((probs >= 0) & (probs <= 1)).all()
    doc = res.to_json()
    assert doc["provenance"]["arm_names"]["v1"] == "tool v1"
    assert doc["simulated"] is True


@pytest.mark.slow
def test_a_three_arm_directory_renders_end_to_end(karm, tmp_path):
    from evalstats.report import render_report

    out = tmp_path / "out"
    render_report(karm, out, params={"n_resamples": 200})
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "not available" not in html
    for name in ("compare", "rank_sets", "beats", "pareto"):
        assert (out / "figures" / f"{name}.svg").is_file()
    assert "task_bootstrap_studentized" in html  # captions name the tables' methods
    doc = json.loads((out / "results.json").read_text())
    assert "pareto" in doc["tables"]


def test_export_tables_and_sentences_read_the_results(res):
    from evalstats.report import latex_tables, markdown_tables
    from evalstats.report._sentences import result_sentences, sentences_markdown
    from evalstats.stats.formatting import format_interval

    doc = res.to_json()
    md = markdown_tables(doc)
    assert set(md) == {"compare", "rank", "beats", "arm_costs", "pareto"}
    net = res.tables["compare"].query("statistic == 'net_win'")
    cells = format_interval(net["estimate"], net["ci_low"], net["ci_high"], 0, scale=100)
    for cell in cells:
        assert f"| {cell} |" in md["compare"]
    assert "tool v1" in md["compare"] and "no tool" in md["pareto"]
    tex = latex_tables(doc)
    assert "\\toprule" in tex["rank"] and "Simultaneous rank set" in tex["rank"]
    assert "task-cluster bootstrap-t" in tex["compare"]  # the method, from its field, in words
    said = result_sentences(doc)
    pairs = [s for s in said if " against " in s]
    assert len(pairs) == len(net)
    holm = net["p_holm"].map(lambda p: f"Holm-adjusted p = {p:.3g}")
    assert all(any(h in s for s in pairs) for h in holm)
    assert any(s.startswith("With 95 % confidence the best arm is among") for s in said)
    p = res.tables["pareto"].query("statistic == 'p_frontier'")
    front = said[-2]
    assert all(f"{v:.2f}" in front for v in p["estimate"])
    assert sentences_markdown(doc).startswith("# Results in words\n\n- ")


def test_a_two_arm_document_is_not_a_comparison():
    from evalstats.report._export_comparison import comparison_tables, is_comparison

    doc = {"tables": {"headline": [{"rubric": "with-without"}], "cost": [{"estimate": 1.0}]}}
    assert not is_comparison(doc) and comparison_tables(doc) == {}


def test_notebook_parameters_cell_matches_the_kind():
    import nbformat

    from evalstats.report import REPORT_KINDS
    from evalstats.report._render import notebook_path

    kind = REPORT_KINDS["comparison"]
    nb = nbformat.read(notebook_path("comparison.ipynb"), as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    ns: dict = {}
    exec(cells[0].source, ns)  # our own notebook's assignments
    assert {k: ns[k] for k in kind.parameters} == dict(kind.parameters)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    src = "\n".join(c.source for c in nb.cells)
    for plot in ("plot_compare", "plot_rank_sets", "plot_beats", "plot_pareto"):
        assert f'"{plot}"' in src


def test_the_shipped_k_arm_sample_computes_every_table():
    # data/karm is the kind's default directory (make sample writes it with token ratios).
    from pathlib import Path

    import pandas as pd

    data = Path(__file__).resolve().parents[1] / "data" / "karm"
    res = compute("comparison", data, n_resamples=100)
    assert not res.unavailable
    runs = pd.read_json(data / "runs.jsonl", lines=True)
    totals = runs.groupby("arm")["reported_tokens"].sum()
    costs = res.tables["arm_costs"].set_index(["arm", "statistic"])["estimate"]
    for arm in ("v1", "v2"):  # every pair of runs complete: the ratio of the billed totals
        assert costs[(arm, "tokens_total_ratio")] == pytest.approx(totals[arm] / totals["none"])
    assert res.to_json()["provenance"]["reference"] == "none"


def test_latex_macros_hold_every_pair_and_arm_cost(res):
    import re

    from evalstats.report._macros import latex_macros

    doc = res.to_json()
    tex = latex_macros(doc)
    macros = dict(re.findall(r"\\newcommand\{\\(\w+)\}\{([^}]*)\}", tex))
    words = {"v1": "VOne", "v2": "VTwo", "none": "None"}
    for row in doc["tables"]["compare"]:
        name = "Cmp" + words[row["arm_a"]] + "Vs" + words[row["arm_b"]]
        name += "".join(p.title() for p in row["statistic"].split("_"))
        for suffix, key in (("", "estimate"), ("Lo", "ci_low"), ("Hi", "ci_high")):
            want = "--" if row[key] is None else str(round(100 * row[key]))  # -- : no number
            assert macros["es" + name + suffix] == want, name + suffix
    for row in doc["tables"]["arm_costs"]:
        name = "esArmCost" + words[row["arm"]]
        name += "".join(p.title() for p in row["statistic"].split("_"))
        assert float(macros[name]) == pytest.approx(row["estimate"], abs=0.005)
        assert float(macros[name + "Lo"]) == pytest.approx(row["ci_low"], abs=0.005)
