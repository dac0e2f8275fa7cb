"""The LLMBar case study rendered with ``evalstats report``: every published Acc / Agr of the
shared subsets reproduced exactly, the new analyses checked against direct computations
(scikit-learn's kappa, counts from the raw result.json), the page showing them.

The oracle reads ``LLMBar_subset.tar.xz`` with :mod:`tarfile` in memory (nothing extracted); the
render reads the shared folder in place and must leave no extracted copy behind.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import nbformat
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from evalstats.report import REPORT_KINDS, compute, detect_kind, render_report, table_view

# The case studies render their reports (a Jupyter kernel each): not in `make check`.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
LLMBAR = Path(__file__).resolve().parents[2] / "shared" / "data" / "llmbar"
TARBALL = LLMBAR / "LLMBar_subset.tar.xz"
PARAMS = {"n_resamples": 100, "seed": 3}
# The examples the shared data's README quotes (Acc / Agr, %, to one decimal).
README_EXAMPLES = {
    ("Natural", "GPT-4", "Vanilla_NoRules"): (93.5, 97.0),
    ("Neighbor", "GPT-4", "Vanilla_NoRules"): (64.2, 89.6),
    ("Natural", "ChatGPT", "Vanilla_NoRules"): (79.0, 68.0),
    ("MT-Bench", "GPT-4", "Vanilla_NoRules"): (81.0, 87.0),
}


def _require_shared() -> None:
    if not TARBALL.exists():
        pytest.skip(
            f"{TARBALL} not found: ../shared (public LLMBar reference data) is not beside this "
            "clone of the repo"
        )


def _leftovers() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("evalstats-llmbar-*")}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    _require_shared()
    before_shared = sorted(p.name for p in LLMBAR.iterdir())
    before_tmp = _leftovers()
    out = tmp_path_factory.mktemp("llmbar-report") / "report"
    index = render_report(LLMBAR, out, params=PARAMS)  # the kind is recognised
    assert index == out / "index.html"
    # Nothing extracted beside the data, no temporary copy left behind.
    assert sorted(p.name for p in LLMBAR.iterdir()) == before_shared
    assert _leftovers() == before_tmp
    return out


@pytest.fixture(scope="module")
def doc(rendered) -> dict:
    return json.loads((rendered / "results.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def raw() -> dict[str, dict]:
    """Every subset's dataset.json, result.json and statistics.json, read from the tarball."""
    _require_shared()
    subsets: dict[str, dict] = {}
    with tarfile.open(TARBALL) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".json"):
                continue
            parts = Path(member.name).parts
            data = json.load(io.TextIOWrapper(tar.extractfile(member), encoding="utf-8"))
            if parts[-1] == "dataset.json":
                subsets.setdefault(parts[-2], {})["dataset"] = data
            else:  # .../<subset>/evaluators/<judge>/<strategy>/<file>
                subset, judge, strategy = parts[-5], parts[-3], parts[-2]
                key = "results" if parts[-1] == "result.json" else "statistics"
                subsets.setdefault(subset, {}).setdefault(key, {})[(judge, strategy)] = data
    return subsets


def _table(doc: dict, name: str) -> pd.DataFrame:
    """Table ``name`` of results.json as a page shows it: one row per group beside its counts."""
    t = doc["tables"]
    tables = {n: pd.DataFrame(t[n]) for n in (name, f"{name}_diagnostics") if n in t}
    return table_view(SimpleNamespace(tables=tables), name)


def _winners(records: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """The winners (as strings, None kept) of each record in the two orders."""
    last = [r["results"][-1] for r in records]
    return (
        np.array([str(x["swap = False"]["winner"]) for x in last], dtype=object),
        np.array([str(x["swap = True"]["winner"]) for x in last], dtype=object),
    )


class _Tables(HTMLParser):
    """The cell texts of every ``data-table`` table of a page (a wide table's stacked parts,
    ``data-continues``, joined back: their repeated key columns once)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._name: str | None = None
        self._rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and (a.get("data-table") or a.get("data-continues")):
            self._name = a.get("data-table") or a["data-continues"]
            self._rows = []
        elif tag == "tr" and self._name:
            self._rows.append([])
        elif tag in ("td", "th") and self._name:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._name:
            self._rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table" and self._name:
            rows = self.tables.setdefault(self._name, [])
            if not rows:
                rows.extend(self._rows)
            else:
                new = [j for j, h in enumerate(self._rows[0]) if h not in rows[0]]
                for row, more in zip(rows, self._rows, strict=True):
                    row.extend(more[j] for j in new)
            self._name = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def page(rendered) -> tuple[str, dict[str, list[list[str]]]]:
    # an "est [lo, hi]" cell may break before its interval: <span>[lo, hi]</span>
    text = re.sub(r"</?span>", "", (rendered / "index.html").read_text(encoding="utf-8"))
    p = _Tables()
    p.feed(text)
    return text, p.tables


# --------------------------------------------------------------------------------------------
# reproduced: every published Acc / Agr, exactly
# --------------------------------------------------------------------------------------------


def test_every_published_acc_and_agr_reproduced_exactly(doc, raw):
    acc = _table(doc, "accuracy").set_index(["subset", "evaluator", "strategy"])
    published = {
        (subset, judge, strategy): s
        for subset, parts in raw.items()
        for (judge, strategy), s in parts["statistics"].items()
    }
    assert len(published) == len(acc) == 138
    for key, s in published.items():
        row = acc.loc[key]
        # statistics.json's strings: "93.5%" and "97 / 100 = 97.0%".
        want_acc = float(s["correct_average"].rstrip("%"))
        want_agr = float(s["equal"].split("=")[-1].strip().rstrip("%"))
        assert row["acc"] == want_acc, key
        assert row["agr"] == want_agr, key
        assert row["published_acc"] == want_acc and row["published_agr"] == want_agr
        assert bool(row["match"]) is True
    for key, (a, g) in README_EXAMPLES.items():  # quoted to one decimal
        assert (round(acc.loc[key, "acc"], 1), round(acc.loc[key, "agr"], 1)) == (a, g)


def test_acc_recomputed_from_the_raw_verdicts(doc, raw):
    """Acc and Agr from result.json directly, as LLMBar's script counts them."""
    acc = _table(doc, "accuracy").set_index(["subset", "evaluator", "strategy"])
    for subset, parts in raw.items():
        gold = np.array([str(r["label"]) for r in parts["dataset"]], dtype=object)
        for (judge, strategy), records in parts["results"].items():
            first, swapped = _winners(records)
            n = len(gold)
            want_acc = (int((first == gold).sum()) + int((swapped == gold).sum())) / (2 * n) * 100
            want_agr = int((first == swapped).sum()) / n * 100
            row = acc.loc[(subset, judge, strategy)]
            assert row["acc"] == want_acc and row["agr"] == want_agr
            assert row["n"] == n


# --------------------------------------------------------------------------------------------
# what the paper does not give, against direct computations
# --------------------------------------------------------------------------------------------


def _outcomes(winners: np.ndarray) -> np.ndarray:
    return np.array([{"1": "win", "2": "loss"}.get(w, "invalid") for w in winners], dtype=object)


@pytest.mark.parametrize("subset", ["Natural", "Neighbor", "MT-Bench"])
def test_kappa_vs_gold_is_sklearns(doc, raw, subset):
    k = _table(doc, "kappa_vs_gold").set_index(["subset", "evaluator", "strategy"])
    parts = raw[subset]
    gold = _outcomes(np.array([str(r["label"]) for r in parts["dataset"]], dtype=object))
    for (judge, strategy), records in parts["results"].items():
        first, swapped = _winners(records)
        pred = np.concatenate([_outcomes(first), _outcomes(swapped)])
        truth = np.concatenate([gold, gold])
        ok = pred != "invalid"
        row = k.loc[(subset, judge, strategy)]
        assert row["n"] == int(ok.sum())
        assert row["accuracy"] == pytest.approx(float((pred[ok] == truth[ok]).mean()), abs=1e-12)
        if len(set(pred[ok]) | set(truth[ok])) > 1:
            want = cohen_kappa_score(truth[ok], pred[ok], labels=["win", "tie", "loss"])
            assert row["kappa"] == pytest.approx(want, abs=1e-12), (judge, strategy)
    natural = k.loc[("Natural", "GPT-4", "Vanilla_NoRules")]
    assert natural["kappa_ci_low"] < natural["kappa"] < natural["kappa_ci_high"]


def test_position_bias_counts_the_first_shown_output(doc, raw):
    pb = _table(doc, "position_bias").set_index(["subset", "evaluator", "strategy"])
    for subset, parts in raw.items():
        for (judge, strategy), records in parts["results"].items():
            first, swapped = _winners(records)
            # Shown first: output 1 in the original order, output 2 in the swapped one.
            wins = int((first == "1").sum()) + int((swapped == "2").sum())
            decisive = int(np.isin(first, ["1", "2"]).sum() + np.isin(swapped, ["1", "2"]).sum())
            row = pb.loc[(subset, judge, strategy)]
            assert row["n_decisive"] == decisive
            assert row["first_shown_wins"] == wins
            assert row["first_shown_win_rate"] == pytest.approx(wins / decisive, abs=1e-12)
            assert row["first_shown_win_rate_ci_low"] <= row["first_shown_win_rate"]
            assert row["first_shown_win_rate"] <= row["first_shown_win_rate_ci_high"]


def test_cross_judge_kappa_is_sklearns(doc, raw):
    cj = _table(doc, "cross_judge")
    pairs = cj.loc[cj["judge_b"].notna() & (cj["judge_a"] != "all judges")]
    assert len(pairs) > 0
    for row in pairs.to_dict("records"):
        results = raw[row["subset"]]["results"]
        a = np.concatenate(_winners(results[(row["judge_a"], "Vanilla_NoRules")]))
        b = np.concatenate(_winners(results[(row["judge_b"], "Vanilla_NoRules")]))
        ok = np.isin(a, ["1", "2"]) & np.isin(b, ["1", "2"])
        assert row["n"] == int(ok.sum())
        assert row["kappa"] == pytest.approx(cohen_kappa_score(a[ok], b[ok]), abs=1e-12)


def test_length_bias_of_the_gold_labels(doc, raw):
    lb = _table(doc, "length_bias")
    for subset, parts in raw.items():
        d = parts["dataset"]
        l1 = np.array([len(r["output_1"]) for r in d])
        l2 = np.array([len(r["output_2"]) for r in d])
        gold = np.array([str(r["label"]) for r in d])
        keep = l1 != l2
        longer = np.where(l1 > l2, "1", "2")
        want = float((gold[keep] == longer[keep]).mean())
        row = lb.loc[(lb["subset"] == subset) & (lb["evaluator"] == "gold")].iloc[0]
        assert row["n"] == int(keep.sum())
        assert row["longer_wins"] == pytest.approx(want, abs=1e-12)


# --------------------------------------------------------------------------------------------
# provenance, the page, the notebook
# --------------------------------------------------------------------------------------------


def test_provenance_digests_the_tarball(doc):
    prov = doc["provenance"]
    sha = hashlib.sha256(TARBALL.read_bytes()).hexdigest()
    assert prov["inputs"] == {
        "LLMBar_subset.tar.xz": {"sha256": sha, "bytes": TARBALL.stat().st_size}
    }
    assert sha.startswith("f6bf6968") and sha.endswith("e3ca4cc")  # the data README's digest
    assert prov["seed"] == PARAMS["seed"] and prov["n_resamples"] == PARAMS["n_resamples"]
    assert prov["versions"]["numpy"] and prov["package"]["name"] == "evalstats"
    assert set(prov["subsets"]) == {"Natural", "Neighbor", "MT-Bench"}
    assert doc["parameters"]["strategy"] == "Vanilla_NoRules"


def test_page_shows_the_reproduced_numbers(page, doc):
    text, tables = page
    rows = tables["accuracy"]
    header, body = rows[0], rows[1:]
    assert len(body) == 138
    col = {name: i for i, name in enumerate(header)}
    shown = {(r[col["subset"]], r[col["evaluator"]], r[col["strategy"]]): r for r in body}
    for key, (a, g) in README_EXAMPLES.items():
        r = shown[key]
        assert (r[col["acc"]], r[col["published_acc"]]) == (f"{a:.1f}", f"{a:.1f}")
        assert (r[col["agr"]], r[col["published_agr"]]) == (f"{g:.1f}", f"{g:.1f}")
        assert r[col["match"]] == "True"
    assert all(r[col["match"]] == "True" for r in body)
    assert "138 of 138 published" in text
    for name in ("kappa_vs_gold", "position_bias", "cross_judge", "length_bias"):
        assert len(tables[name]) > 1, name
    # The comparison strategy's GPT-4 kappa on Natural, as results.json has it.
    k = _table(doc, "kappa_vs_gold").set_index(["subset", "evaluator", "strategy"])
    kap = k.loc[("Natural", "GPT-4", "Vanilla_NoRules")]
    assert f"{kap['kappa']:.3f} [{kap['kappa_ci_low']:.3f}, {kap['kappa_ci_high']:.3f}]" in text
    assert not re.search(r"<script", text, re.I)


def test_kind_detection_and_parameters_cell():
    _require_shared()
    assert detect_kind(LLMBAR) == "llmbar"
    spec = REPORT_KINDS["llmbar"]
    assert spec.user_parameters == ["confidence", "n_resamples", "seed", "strategy"]
    nb = nbformat.read(REPO / "notebooks" / "case_study_llmbar.ipynb", as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    ns: dict = {}
    exec(cells[0].source, ns)  # our own notebook's assignments
    assert {k: ns[k] for k in spec.parameters} == dict(spec.parameters)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
    assert (REPO / spec.parameters["data_dir"]).resolve() == LLMBAR.resolve()


def test_an_extracted_dataset_tree_is_read_in_place(tmp_path):
    _require_shared()
    with tarfile.open(TARBALL) as tar:
        tar.extractall(tmp_path, filter="data")
    assert detect_kind(tmp_path) == "llmbar"
    res = compute("llmbar", tmp_path, n_resamples=20)
    acc = res.tables["accuracy"]
    assert acc["match"].all() and len(acc) == 138
    inputs = res.provenance["inputs"]
    assert "Dataset/LLMBar/Natural/dataset.json" in inputs
    assert "Dataset/LLMBar/Natural/evaluators/GPT-4/Vanilla_NoRules/result.json" in inputs


def test_not_llmbar_data_is_refused(tmp_path):
    from evalstats.errors import DataError
    from evalstats.report import REPORT_KINDS, ReportError

    check = REPORT_KINDS["llmbar"].check  # the kind's check of its data, before any work

    with pytest.raises(DataError, match="no LLMBar data"):
        check(tmp_path)
    with pytest.raises(ReportError, match="no report kind"):
        detect_kind(tmp_path)
