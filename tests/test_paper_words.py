"""Words that match numbers: every exported percentage against its stated denominator, every
method name against the ``method`` field of the same results.json row the tables print.

The oracle is the counts results.json itself holds (wins, ties, losses, agreements of ``n``
verdicts), not the rates: a sentence that states a share of the pairs where it is a share of
the pair-orders fails here.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

import evalstats.report as ex
from evalstats.report import method_words

# Integration (slow: make test runs it, make check does not): checks every exported sentence of the whole report.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
NUM = r"-?\d+(?:\.\d+)?"
# "of the 165 readable pair-orders (85 pairs; 170 judged, 5 unreadable)" or "of the 83 readable
# pairs (85 judged, 2 unreadable)": the first number is the stated one, the judged ones beside.
OF = (
    r"of the (\d+) readable (pair-orders|pairs)(?: \((?:(\d+) pairs)?;? ?(?:(\d+) judged)?[^)]*\))?"
)


@pytest.fixture(scope="module")
def doc() -> dict:
    from evalstats.report import compute_results, dump_json, merge_results

    res = compute_results(SAMPLE, n_resamples=100, seed=0)
    return json.loads(dump_json(merge_results(res.to_json())))


def _groups(doc: dict, name: str) -> list[dict]:
    """Long rows of table ``name`` folded by group: {statistic: row} beside the diagnostics."""
    rows = doc["tables"][name]
    by = [c for c in ("rubric", "judge", "judge_a", "judge_b") if c in rows[0]]
    diag = {tuple(r[c] for c in by): r for r in doc["tables"].get(f"{name}_diagnostics", [])}
    out: dict[tuple, dict] = {}
    for r in rows:
        key = tuple(r[c] for c in by)
        g = out.setdefault(key, {"diag": diag.get(key, {}), "stats": {}})
        g["stats"][r["statistic"]] = r
    return list(out.values())


def _share(count: int, of: int) -> int:
    return round(100 * count / of)


def test_win_percentages_have_their_own_denominator(doc):
    sentences = [s for s in ex.result_sentences(doc) if s.startswith("WITH won")]
    groups = _groups(doc, "headline") + _groups(doc, "consensus")
    assert len(sentences) == len(groups) > 0
    pat = re.compile(
        rf"WITH won ({NUM}) % \[[^\]]+\], tied ({NUM}) % \[[^\]]+\] and lost ({NUM}) % "
        rf"\[[^\]]+\] {OF} in (\d+) tasks"
    )
    seen_orders = seen_judged = False
    for s, g in zip(sentences, groups, strict=True):
        m = pat.search(s)
        assert m, s
        d = g["diag"]
        stated = int(m[4])
        # The counts add up to the stated number: it is the denominator of these shares.
        assert d["wins"] + d["ties"] + d["losses"] == stated, s
        for i, count in enumerate((d["wins"], d["ties"], d["losses"]), start=1):
            assert int(m[i]) == _share(count, stated), (s, count, stated)
        if m[5] == "pair-orders":
            seen_orders = True
            # The pairs are named beside, never as the denominator.
            assert int(m[6]) == d["n_pairs"] < stated
            assert _share(d["wins"], d["n_pairs"]) != int(m[1])
        else:
            assert stated == d["n_pairs"] and m[6] is None
        # The judged ones beside: the readable plus the unreadable and failed.
        judged = stated + d["invalid"] + d["error"]
        assert (int(m[7]) if m[7] else stated) == judged, s
        if judged != stated:
            seen_judged = True
    assert seen_orders  # the sample's blind rubric is judged in both orders
    assert seen_judged  # the sample has unreadable verdicts


def test_headline_paragraph_percentages(doc):
    p = ex.headline_paragraph(doc)
    m = re.search(rf"WITH won ({NUM}) % \[[^\]]+\] {OF} in (\d+) tasks", p)
    assert m, p
    # the row the paragraph shows: the one headline_choice names (its stated rule)
    (choice,) = doc["tables"]["headline_choice"]
    (g,) = [
        g for g in _groups(doc, "headline")
        if (g["diag"]["rubric"], g["diag"]["judge"]) == (choice["rubric"], choice["judge"])
    ]  # fmt: skip
    d = g["diag"]
    assert int(m[2]) == d["wins"] + d["ties"] + d["losses"]
    assert int(m[1]) == _share(d["wins"], int(m[2]))


def test_agreement_percentages_and_methods(doc):
    sentences = [s for s in ex.result_sentences(doc) if "Cohen's kappa" in s]
    groups = _groups(doc, "agreement")
    assert len(sentences) == len(groups) == 2
    for s, g in zip(sentences, groups, strict=True):
        m = re.search(rf"agreed on ({NUM}) % {OF} in", s)
        assert m, s
        d = g["diag"]
        stated = int(m[1 + 1])
        assert stated == g["stats"]["kappa"]["n"]
        assert d["agreements"] + d["disagreements"] == stated
        assert int(m[1]) == _share(d["agreements"], stated)
        # Each interval's method is the one its own row carries, in the sentence's words.
        for stat, lead in (("kappa", "95 % CI clustered by task, "), ("ac1", "] by ")):
            name = method_words(g["stats"][stat]["method"])
            assert lead + name in s, (stat, name, s)
        # No interval called Wald or "not clustered" unless results.json says so.
        methods = " ".join(str(r["method"]) for r in g["stats"].values())
        assert ("Wald" in s) == ("Wald" in methods) and "not clustered" not in s


def test_methods_follow_results_json_not_a_fixed_name(doc):
    renamed = copy.deepcopy(doc)
    for r in renamed["tables"]["agreement"]:
        if r["statistic"] == "kappa":
            r["method"] = "clustered atanh jackknife (t, 14 df)"
    for r in renamed["tables"]["headline"]:
        r["method"] = "wild_webb"
    s = ex.result_sentences(renamed)
    assert all("clustered atanh jackknife (t, 14 df)" in x for x in s if "kappa" in x)
    wins = [x for x in s if x.startswith("WITH won") and "consensus" not in x]
    assert wins and all(x.endswith(method_words("wild_webb") + ".") for x in wins)
    assert "wild cluster bootstrap" in ex.headline_paragraph(renamed)


def test_win_and_cost_methods_match_the_tables(doc):
    sentences = ex.result_sentences(doc)
    tables = ex.formatted_tables(doc)
    wins = [s for s in sentences if s.startswith("WITH won")]
    methods = list(tables["headline"]["method"]) + list(tables["consensus"]["method"])
    for s, method in zip(wins, methods, strict=True):
        assert s.endswith(f"95 % CI clustered by task, {method_words(method)}."), s
    cost = [s for s in sentences if s.startswith("WITH / WITHOUT ratio")]
    notes = [str(r.get("ci_note") or "") for r in doc["tables"]["cost"]]
    for s, method, note in zip(cost, tables["cost"]["method"], notes, strict=True):
        # Verbatim, its own parentheses whole: "t(Bell-McCaffrey df)", never "tBell-"; a
        # failed model check's note (the sample's wall-clock total) after it, whole.
        assert f"95 % CI by {method}." in s, s
        # The note after it, each of its clauses a sentence of its own (45 words at most).
        for i, clause in enumerate(filter(None, note.split("; "))):
            said = f"Note: {clause}." if i == 0 else f"{clause[:1].upper()}{clause[1:]}."
            assert said in s, (clause, s)
    assert any("t(Bell-McCaffrey df)" in s for s in cost)
    assert not any("tBell" in s for s in sentences)


def test_method_words_reads_unknown_names_verbatim():
    assert method_words("clustered atanh jackknife") == "clustered atanh jackknife"
    assert method_words(None) == "" and method_words(float("nan")) == ""
    assert method_words("cr2_wilson") != "cr2_wilson"
