"""The Chatbot Arena case study (report kind ``arena``): its sections computed on a slice of
``battles.csv.gz`` and checked against the raw file (scikit-learn's kappa, hand counts), and one
slow render of the whole kind on all 26,919 battles.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats.errors import DataError, ParameterError
from evalstats.report import REPORT_KINDS, compute, detect_kind, render_report

REPO = Path(__file__).resolve().parents[1]
ARENA = Path(__file__).resolve().parents[2] / "shared" / "data" / "arena"
TOP = ["gpt-4", "claude-v1", "claude-instant-v1", "gpt-3.5-turbo", "vicuna-13b", "palm-2"]
JUDGES = ("gpt-4-0125-preview", "claude-3-opus-20240229", "gpt-3.5-turbo")
SMALL = {"n_resamples": 100, "n_subsamples": 2, "subsample_resamples": 60, "ppr_n_labels": 300,
         "seed": 3}  # fmt: skip


def _require_shared() -> None:
    if not (ARENA / "battles.csv.gz").exists():
        pytest.skip(f"{ARENA} not found: ../shared (the public Arena battles) is not beside "
                    "this clone of the repo")  # fmt: skip


@pytest.fixture(scope="module")
def raw() -> pd.DataFrame:
    """The first 1,500 battles among six models, read with pandas alone."""
    _require_shared()
    f = pd.read_csv(ARENA / "battles.csv.gz", dtype=str, keep_default_na=False)
    return f[f["model_a"].isin(TOP) & f["model_b"].isin(TOP)].iloc[:1500].reset_index(drop=True)


@pytest.fixture(scope="module")
def sliced(raw, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("arena-slice")
    with gzip.open(d / "battles.csv.gz", "wt", encoding="utf-8", newline="") as fh:
        raw.to_csv(fh, index=False)
    return d


@pytest.fixture(scope="module")
def res(sliced):
    return compute("arena", sliced, **SMALL)


def _code(v: pd.Series) -> np.ndarray:
    return v.replace({"tie (bothbad)": "tie"}).to_numpy()


def test_detected_and_checked(sliced, tmp_path):
    assert detect_kind(sliced) == "arena"
    from evalstats.report import REPORT_KINDS

    check = REPORT_KINDS["arena"].check  # the kind's check of its data, before any work

    with pytest.raises(DataError, match="battles.csv.gz"):
        check(tmp_path)


def test_kappa_and_position_against_the_raw_file(res, raw):
    a = res.tables["judge_agreement"].set_index("judge")
    human = _code(raw["human"])
    for judge in JUDGES:
        got = a.loc[judge]
        verdict = _code(raw[judge])
        assert got["kappa"] == pytest.approx(cohen_kappa_score(human, verdict), abs=1e-12)
        assert got["kappa_ci_low"] < got["kappa"] < got["kappa_ci_high"]
        assert got["agreement"] == pytest.approx(np.mean(human == verdict))
    for judge in ("human", *JUDGES):
        v = _code(raw[judge])
        wins_a, wins_b = (v == "model_a").sum(), (v == "model_b").sum()
        got = a.loc[judge]
        assert got["n_decisive"] == wins_a + wins_b
        assert got["prefers_a"] == pytest.approx(wins_a / (wins_a + wins_b))
        assert got["prefers_a_ci_low"] < got["prefers_a"] < got["prefers_a_ci_high"]
        assert got["tie_share"] == pytest.approx(np.mean(v == "tie"))
    assert np.isnan(a.loc["human", "kappa"])


def test_human_ranking_counts_and_sets(res, raw):
    h = res.tables["human_ranking"].set_index("arm")
    v = _code(raw["human"])
    assert set(h.index) == set(raw["model_a"]) | set(raw["model_b"])
    for arm in h.index:
        as_a, as_b = raw["model_a"] == arm, raw["model_b"] == arm
        wins = ((as_a & (v == "model_a")) | (as_b & (v == "model_b"))).sum()
        losses = ((as_a & (v == "model_b")) | (as_b & (v == "model_a"))).sum()
        ties = ((as_a | as_b) & (v == "tie")).sum()
        assert (h.loc[arm, "wins"], h.loc[arm, "losses"], h.loc[arm, "ties"]) == (
            wins,
            losses,
            ties,
        )
        assert h.loc[arm, "battles"] == (as_a | as_b).sum()
    assert (h["sim_low"] <= h["rank"]).all() and (h["rank"] <= h["sim_high"]).all()
    assert ((h["marginal_high"] - h["marginal_low"]) <= (h["sim_high"] - h["sim_low"])).all()
    assert sorted(h["rank"]) == list(range(1, len(h) + 1))  # distinct strengths
    assert (h["n_votes"] == len(raw)).all()


def test_ppr_section(res, raw):
    p = res.tables["ppr_ranking"]
    assert set(p["estimator"]) == {"human_only", "human_only_percentile", "judge_only", "ppr"}
    assert set(p.loc[p["estimator"].isin(["judge_only", "ppr"]), "judge"]) == {"gpt-4-0125-preview"}
    truth = res.tables["human_ranking"].set_index("arm")["rank"]
    covers = (p["ci_low"] <= p["arm"].map(truth)) & (p["arm"].map(truth) <= p["ci_high"])
    assert (covers == p["covers"]).all()
    s = res.tables["ppr_summary"].set_index("estimator")
    assert s.loc["human_only", "n"] == 300 and s.loc["judge_only", "n"] == len(raw)
    assert 0 <= s.loc["ppr", "lambda"] <= 1 and np.isnan(s.loc["human_only", "lambda"])
    for est, g in p.groupby("estimator"):
        assert s.loc[est, "mean_size"] == pytest.approx(g["size"].mean())
        assert s.loc[est, "covers_all"] == bool(g["covers"].all())


def test_study_and_findings(res):
    st = res.tables["subsample_study"]
    assert set(st["estimator"]) == {"human_only", "human_only_percentile", "judge_only", "ppr"}
    assert set(st.loc[st["estimator"] == "ppr", "judge"]) == set(JUDGES)
    share = st[st["statistic"].isin(["coverage", "intersects"])]["estimate"]
    assert ((share >= 0) & (share <= 1)).all()
    runs = res.tables["subsample_runs"]
    assert len(runs) == 3 + 2 * (2 + 3)  # judge-only once each; 2 human-only, 3 PPR per draw
    ppr = runs[runs["estimator"] == "ppr"]
    cov = st[(st["estimator"] == "ppr") & (st["statistic"] == "coverage")].set_index("judge")
    for judge, g in ppr.groupby("judge"):
        assert cov.loc[judge, "estimate"] == pytest.approx(g["covers_all"].mean())
    text = " ".join(res.tables["findings"]["text"])
    assert "Cohen's kappa" in text and "2 random subsamples" in text
    for judge in JUDGES:
        assert f"PPR with {judge} vs human votes only (bootstrap-t)" in text


def test_unknown_ppr_judge_is_refused(sliced):
    with pytest.raises(ParameterError, match="ppr_judge"):
        compute("arena", sliced, pages=None, **{**SMALL, "ppr_judge": "nobody"})


def test_parameters_cell_matches_the_kind():
    spec = REPORT_KINDS["arena"]
    nb = nbformat.read(REPO / "notebooks" / "case_study_arena.ipynb", as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    ns: dict = {}
    exec(cells[0].source, ns)  # our own notebook's assignments
    assert {k: ns[k] for k in spec.parameters} == dict(spec.parameters)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert (REPO / spec.parameters["data_dir"]).resolve() == ARENA.resolve()


@pytest.mark.slow
def test_render_on_all_battles(tmp_path):
    _require_shared()
    before = sorted(p.name for p in ARENA.iterdir())
    out = tmp_path / "report"
    params = {"n_resamples": 200, "n_subsamples": 2, "subsample_resamples": 100, "seed": 1}
    assert render_report(ARENA, out, params=params) == out / "index.html"
    assert sorted(p.name for p in ARENA.iterdir()) == before  # read in place, nothing added
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    human = pd.DataFrame(doc["tables"]["human_ranking"])
    assert len(human) == 20 and (human["n_votes"] == 26_919).all()
    assert human.sort_values("rank")["arm"].iloc[0] == "gpt-4"
    assert doc["parameters"]["n_subsamples"] == 2
    assert doc["provenance"]["inputs"]["battles.csv.gz"]["sha256"]
    page = (out / "index.html").read_text(encoding="utf-8")
    for text in pd.DataFrame(doc["tables"]["findings"])["text"]:
        assert text.split("**")[1] in page
    for name in ("human_rank_sets", "ppr_rank_sets"):
        assert (out / "figures" / f"{name}.svg").is_file(), name
    assert "not available" not in page


def test_rank_set_plot():
    import matplotlib.figure

    from evalstats.plots import plot_arena_rank_sets

    t = pd.DataFrame({"label": ["a"] * 3 + ["b"] * 3, "arm": list("xyz") * 2,
                      "estimate": [1, 2, 3, 2, 1, 3], "ci_low": [1, 1, 2, 1, 1, 3],
                      "ci_high": [2, 3, 3, 3, 2, 3]})  # fmt: skip
    truth = pd.Series({"z": 3, "x": 1, "y": 2})
    fig = plot_arena_rank_sets(t, truth=truth, confidence=0.9, width="column")
    ax = fig.axes[0]
    assert [tk.get_text() for tk in ax.get_yticklabels()] == ["x", "y", "z"]  # by the truth
    assert "90 %" in ax.get_title()
    assert [h.get_text() for h in ax.get_legend().get_texts()] == ["a", "b", "reference rank"]
    segments = [c for c in ax.collections if len(c.get_segments()) == 3]
    assert len(segments) == 2  # one bar per arm and ranking
    x = segments[1].get_segments()[0][:, 0]  # ranking b, arm x: the set 1-3
    assert x.tolist() == pytest.approx([0.7, 3.3])
    other = matplotlib.figure.Figure()
    assert plot_arena_rank_sets(t, ax=other.subplots(), title=False) is other
    with pytest.raises(ValueError, match="no rows"):
        plot_arena_rank_sets(t.iloc[:0])
