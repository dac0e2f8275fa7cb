"""The PandaLM case study rendered with ``evalstats report``: the published kappas, counts and
judge scores reproduced to their printed precision (unparsable verdicts as ties), the same with
unparsable verdicts kept invalid, checked against scikit-learn on the raw files, and the page
showing them.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, cohen_kappa_score, precision_recall_fscore_support

from evalstats.report import REPORT_KINDS, detect_kind, render_report

# The case studies render their reports (a Jupyter kernel each): not in `make check`.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PANDALM = Path(__file__).resolve().parents[2] / "shared" / "data" / "pandalm"
FILES = ("testset-v1.json.gz", "gpt-3.5-turbo-testset-v1.json.gz", "pandalm-7b-testset-v1.json.gz")
PARAMS = {"n_resamples": 200, "seed": 5}
# PandaLM's README, as the shared data's README quotes it.
PUBLISHED_KAPPA = {("annotator1", "annotator2"): 0.85, ("annotator1", "annotator3"): 0.88,
                   ("annotator2", "annotator3"): 0.86}  # fmt: skip
PUBLISHED_COUNTS = {"tie": 105, "1": 422, "2": 472}
PUBLISHED_SCORES = {
    "gpt-3.5-turbo": (71.07, 58.79, 57.36, 57.55),
    "pandalm-7b": (66.77, 57.38, 57.50, 57.43),
}
METRICS = ("acc", "precision", "recall", "f1")


def _require_shared() -> None:
    if not PANDALM.exists():
        pytest.skip(
            f"{PANDALM} not found: ../shared (public PandaLM reference data) is not beside this "
            "clone of the repo"
        )


def _read(name: str) -> list[dict]:
    with gzip.open(PANDALM / name, "rt", encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def raw() -> dict[str, np.ndarray]:
    """Labels as codes 0 = tie, 1, 2 (-1 = unparsable), read with the json module."""
    _require_shared()
    test, gpt, panda = (_read(n) for n in FILES)
    code = {"1": 1, "2": 2, "tie": 0, "0": 0}
    out = {f"annotator{k}": np.array([int(r[f"annotator{k}"]) for r in test]) for k in (1, 2, 3)}
    out["gpt-3.5-turbo"] = np.array([code.get(str(r["gpt_result"]).lower(), -1) for r in gpt])
    out["pandalm-7b"] = np.array([code.get(str(r["pandalm_result"]).lower(), -1) for r in panda])
    votes = np.stack([out["annotator1"], out["annotator2"], out["annotator3"]], axis=1)
    majority = []
    for row in votes:
        label, n = Counter(row.tolist()).most_common(1)[0]
        majority.append(label if n >= 2 else -9)
    out["majority"] = np.array(majority)
    out["cmp_key"] = np.array([r["cmp_key"] for r in test], dtype=object)
    return out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    _require_shared()
    before = sorted(p.name for p in PANDALM.iterdir())
    out = tmp_path_factory.mktemp("pandalm-report") / "report"
    assert render_report(PANDALM, out, params=PARAMS) == out / "index.html"
    assert sorted(p.name for p in PANDALM.iterdir()) == before  # read in place, nothing added
    return out


@pytest.fixture(scope="module")
def doc(rendered) -> dict:
    return json.loads((rendered / "results.json").read_text(encoding="utf-8"))


def _table(doc: dict, name: str) -> pd.DataFrame:
    return pd.DataFrame(doc["tables"][name])


def test_annotator_kappas_reproduced(doc, raw):
    k = _table(doc, "annotator_kappas")
    assert len(k) == 3
    for r in k.to_dict("records"):
        want = cohen_kappa_score(raw[r["a"]], raw[r["b"]])
        assert r["kappa"] == pytest.approx(want, abs=1e-12)
        assert round(r["kappa"], 2) == PUBLISHED_KAPPA[(r["a"], r["b"])] == r["published"]
        assert r["match"] is True
        assert r["ci_low"] < r["kappa"] < r["ci_high"]


def test_label_counts_reproduced(doc, raw):
    c = _table(doc, "label_counts").set_index("label")
    counts = Counter(raw["majority"].tolist())
    assert counts[-9] == 0  # three annotators, three labels: no item without a majority here
    assert {"tie": counts[0], "1": counts[1], "2": counts[2]} == PUBLISHED_COUNTS
    assert c["n"].to_dict() == PUBLISHED_COUNTS
    assert c["match"].all() and (c["no_majority"] == 0).all()


def _sklearn_scores(y: np.ndarray, p: np.ndarray) -> tuple[float, ...]:
    # labels=[0, 1, 2]: a -1 prediction (kept invalid) is wrong, and no class's precision
    # counts it.
    prec, rec, f1, _ = precision_recall_fscore_support(
        y, p, labels=[0, 1, 2], average="macro", zero_division=0
    )
    return tuple(100 * v for v in (accuracy_score(y, p), prec, rec, f1))


@pytest.mark.parametrize("judge", ["gpt-3.5-turbo", "pandalm-7b"])
def test_judge_scores_unparsable_as_tie_are_the_published_ones(doc, raw, judge):
    acc = _table(doc, "judge_accuracy")
    row = acc.loc[(acc["judge"] == judge) & (acc["unparsable"] == "tie")].iloc[0]
    p = np.where(raw[judge] < 0, 0, raw[judge])
    want = _sklearn_scores(raw["majority"], p)
    for m, w, pub in zip(METRICS, want, PUBLISHED_SCORES[judge], strict=True):
        assert row[m] == pytest.approx(w, abs=1e-9), m
        assert round(row[m], 2) == pub == row[f"published_{m}"], m
    assert row["match"] is True


@pytest.mark.parametrize("judge", ["gpt-3.5-turbo", "pandalm-7b"])
def test_judge_scores_unparsable_kept_invalid_and_left_out(doc, raw, judge):
    acc = _table(doc, "judge_accuracy")
    y, p = raw["majority"], raw[judge]
    kept = acc.loc[(acc["judge"] == judge) & (acc["unparsable"] == "invalid")].iloc[0]
    for m, w in zip(METRICS, _sklearn_scores(y, p), strict=True):
        assert kept[m] == pytest.approx(w, abs=1e-9), m
    assert kept["n"] == 999 and kept["n_unparsable"] == int((p < 0).sum())
    assert kept["match"] is None  # nothing published for this rule
    out = acc.loc[(acc["judge"] == judge) & (acc["unparsable"] == "exclude")].iloc[0]
    ok = p >= 0
    for m, w in zip(METRICS, _sklearn_scores(y[ok], p[ok]), strict=True):
        assert out[m] == pytest.approx(w, abs=1e-9), m
    if judge == "gpt-3.5-turbo":
        assert kept["n_unparsable"] == 25 and out["n"] == 974
        assert kept["acc"] < 71.07 and kept["f1"] < 57.55  # the honest figures are lower


def test_win_lose_tie_counts(doc, raw):
    t = _table(doc, "win_lose_tie")
    t = t.loc[t["unparsable"] == "tie"].set_index(["source", "row_model", "col_model"])
    order = ("llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b")
    m1 = np.array([k.split("_", 1)[0] for k in raw["cmp_key"]], dtype=object)
    m2 = np.array([k.split("_", 1)[1] for k in raw["cmp_key"]], dtype=object)
    for source, labels in (("human", raw["majority"]), ("pandalm-7b", raw["pandalm-7b"])):
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                fwd, rev = (m1 == a) & (m2 == b), (m1 == b) & (m2 == a)
                win = int((labels[fwd] == 1).sum() + (labels[rev] == 2).sum())
                lose = int((labels[fwd] == 2).sum() + (labels[rev] == 1).sum())
                tie = int((labels[fwd] == 0).sum() + (labels[rev] == 0).sum())
                row = t.loc[(source, a, b)]
                assert (row["win"], row["lose"], row["tie"]) == (win, lose, tie), (source, a, b)
    assert len(t) == 30


def test_ppi_demo(doc, raw):
    p = _table(doc, "ppi_demo").set_index("estimate")
    assert list(p.index) == ["all human", "judge only", "labels only", "PPI++"]
    human = p.loc["all human"]
    assert human["n"] == 999
    assert human["win_rate"] == pytest.approx(422 / 999, abs=1e-12)
    gpt = raw["gpt-3.5-turbo"]
    judge = p.loc["judge only"]
    assert judge["n"] == int((gpt >= 0).sum()) == 974
    assert judge["win_rate"] == pytest.approx(float((gpt == 1).sum()) / 974, abs=1e-12)
    assert p.loc["labels only", "n"] == 100  # 10 % of 999, rounded
    for name, r in p.iterrows():
        covers = r["win_rate_ci_low"] <= human["win_rate"] <= r["win_rate_ci_high"]
        assert r["covers_human"] == bool(covers), name
    ppi = p.loc["PPI++"]
    assert ppi["win_rate_ci_low"] < ppi["win_rate"] < ppi["win_rate_ci_high"]
    assert ppi["ess_gain"] > 0 and ppi["n_labelled"] <= 100
    assert doc["parameters"]["ppi_fraction"] == 0.10
    assert doc["parameters"]["ppi_judge"] == "gpt-3.5-turbo"


def test_provenance(doc):
    prov = doc["provenance"]
    assert set(prov["inputs"]) == set(FILES)
    for name in FILES:
        want = hashlib.sha256((PANDALM / name).read_bytes()).hexdigest()
        assert prov["inputs"][name]["sha256"] == want
    assert prov["seed"] == PARAMS["seed"] and prov["n_resamples"] == PARAMS["n_resamples"]
    assert prov["versions"]["pandas"] and prov["package"]["name"] == "evalstats"


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        self._in = tag in ("td", "th")
        if self._in:
            self.cells.append("")

    def handle_endtag(self, tag):
        self._in = False

    def handle_data(self, data):
        if self._in:
            self.cells[-1] += data


def test_page_shows_the_published_and_the_honest_figures(rendered, doc):
    # an "est [lo, hi]" cell may break before its interval: <span>[lo, hi]</span>
    text = re.sub(r"</?span>", "", (rendered / "index.html").read_text(encoding="utf-8"))
    parser = _Cells()
    parser.feed(text)
    cells = Counter(c.strip() for c in parser.cells)
    for kappa in PUBLISHED_KAPPA.values():
        assert cells[f"{kappa:.3f}"] >= 1  # the published column
    for n in PUBLISHED_COUNTS.values():
        assert cells[str(n)] >= 2  # reproduced and published
    for figures in PUBLISHED_SCORES.values():
        for v in figures:
            assert cells[f"{v:.2f}"] >= 2, v  # reproduced and published
    acc = _table(doc, "judge_accuracy")
    kept = acc.loc[(acc["judge"] == "gpt-3.5-turbo") & (acc["unparsable"] == "invalid")].iloc[0]
    for m in METRICS:
        assert cells[f"{kept[m]:.2f}"] >= 1, m
    assert "unparsable kept invalid" in text
    assert "counted as ties" in text
    human = _table(doc, "ppi_demo").iloc[0]
    assert f"{human['win_rate']:.3f} [{human['win_rate_ci_low']:.3f}" in text


def test_kind_detection_and_parameters_cell():
    _require_shared()
    assert detect_kind(PANDALM) == "pandalm"
    spec = REPORT_KINDS["pandalm"]
    nb = nbformat.read(REPO / "notebooks" / "case_study_pandalm.ipynb", as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    ns: dict = {}
    exec(cells[0].source, ns)  # our own notebook's assignments
    assert {k: ns[k] for k in spec.parameters} == dict(spec.parameters)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert (REPO / spec.parameters["data_dir"]).resolve() == PANDALM.resolve()


def test_missing_judge_file_is_named(tmp_path):
    _require_shared()
    from evalstats.errors import DataError
    from evalstats.report import REPORT_KINDS

    check = REPORT_KINDS["pandalm"].check  # the kind's check of its data, before any work

    (tmp_path / FILES[0]).write_bytes((PANDALM / FILES[0]).read_bytes())
    assert detect_kind(tmp_path) == "pandalm"
    with pytest.raises(DataError, match="gpt-3.5-turbo-testset-v1.json"):
        check(tmp_path)
