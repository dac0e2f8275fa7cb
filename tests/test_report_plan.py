"""The report with and without a declared analysis plan: provenance, the primary row, Holm,
the missing-answer bounds, the headline card, and the methodology page's model and
simulation checks.

The plan case copies ``data/sample`` to a temporary directory and writes a ``plan.toml``
(the sample itself declares none); one report is rendered on it per module. Every number is
checked against an independent computation: statsmodels for Holm and the ordinal GEE,
counts of the verdicts for the bounds, fresh simulations for the simulated power.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import IPython.display
import numpy as np
import pandas as pd
import pytest

from evalstats.plan import load_plan
from evalstats.report import (
    compute_methodology,
    compute_results,
    render_report,
    show_tests,
    table_view,
)

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PARAMS = {"n_resamples": 200, "seed": 3}
PRIMARY = {"rubric": "with-without", "judge": "openai:gpt-5.4"}
# Written before the sample's first judgment (2026-05-21T09:00Z) and matching its design.
PLAN_TOML = """\
written_at = 2026-05-01T09:00:00Z
primary_rubric = "with-without"
primary_judge = "openai:gpt-5.4"
statistic = "net_win"
alpha = 0.05
sidedness = "greater"
margin = 0.10
margin_kind = "non-inferiority"
tasks = 15
replicates = 6
judges = ["anthropic:claude-sonnet-4-20250514", "openai:gpt-5.4"]
rubrics = ["with-without", "blind-pair"]
note = "declared before any judge was asked"
"""
NUM = r"-?\d+(?:\.\d+)?"

# Integration (slow: make test runs it, make check does not): computes the report with each kind of declared plan.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is absent"),
]


def with_plan(dest: Path, text: str = PLAN_TOML) -> Path:
    shutil.copytree(SAMPLE, dest)
    (dest / "plan.toml").write_text(text, encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def planned(tmp_path_factory) -> Path:
    return with_plan(tmp_path_factory.mktemp("plan") / "data")


@pytest.fixture(scope="module")
def planned_results(planned):
    return compute_results(planned, **PARAMS)


@pytest.fixture(scope="module")
def plain_results():
    return compute_results(SAMPLE, **PARAMS)


@pytest.fixture(scope="module")
def rendered_plan(planned, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plan-report") / "report"
    render_report(planned, out, params=PARAMS, figures="svg")
    return out


def family_of(res) -> pd.DataFrame:
    return pd.concat(
        [table_view(res, "headline").assign(table="headline"), table_view(res, "consensus")],
        ignore_index=True,
    ).assign(table=lambda t: t["table"].fillna("consensus"))


# --------------------------------------------------------------------------------------------
# the plan in results.json
# --------------------------------------------------------------------------------------------


def test_plan_is_recorded_in_provenance(planned, planned_results):
    plan = load_plan(planned / "plan.toml")
    recorded = planned_results.to_json()["provenance"]["plan"]
    assert recorded["sha256"] == plan.sha256
    assert recorded["file"] == "plan.toml"  # relative: no machine path
    assert recorded["primary"] == {**PRIMARY, "statistic": "net_win"}
    for key in ("alpha", "sidedness", "margin", "margin_kind", "replicates", "note"):
        assert recorded[key] == getattr(plan, key), key
    assert recorded["judges"] == sorted(plan.judges)
    assert recorded["written_at"] == "2026-05-01T09:00:00+00:00"
    inputs = planned_results.to_json()["provenance"]["inputs"]
    import hashlib

    assert inputs["plan.toml"]["sha256"] == hashlib.sha256(PLAN_TOML.encode()).hexdigest()
    assert str(planned) not in json.dumps(planned_results.to_json()["provenance"])


def test_plan_hash_changes_with_substance_not_layout(tmp_path, planned_results):
    moved = with_plan(tmp_path / "a", "\n".join(reversed(PLAN_TOML.splitlines())) + "\n")
    other = with_plan(tmp_path / "b", PLAN_TOML.replace("alpha = 0.05", "alpha = 0.01"))
    same = planned_results.provenance["plan"]["sha256"]
    assert compute_results(moved, **PARAMS).provenance["plan"]["sha256"] == same
    assert compute_results(other, **PARAMS).provenance["plan"]["sha256"] != same


def test_no_plan_means_null_plan_and_no_primary(plain_results):
    assert plain_results.to_json()["provenance"]["plan"] is None
    for name in ("headline", "consensus"):
        assert not table_view(plain_results, name)["primary"].any()


def test_primary_row_is_marked_once(planned_results):
    fam = family_of(planned_results)
    hit = fam.loc[fam["primary"]]
    assert len(hit) == 1
    assert hit[["table", "rubric", "judge"]].to_numpy().tolist() == [
        ["headline", PRIMARY["rubric"], PRIMARY["judge"]]
    ]


# --------------------------------------------------------------------------------------------
# Holm, against statsmodels
# --------------------------------------------------------------------------------------------


def test_holm_without_plan_matches_statsmodels(plain_results):
    from statsmodels.stats.multitest import multipletests

    fam = family_of(plain_results)
    assert len(fam) == 6  # 2 judges x 2 rubrics + 2 consensus rows
    expected = multipletests(fam["net_win_p"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(fam["net_win_p_holm"].to_numpy(), expected, rtol=1e-12)
    # The adjustment is not a no-op on this data.
    assert (fam["net_win_p_holm"] > fam["net_win_p"]).all()


def test_holm_with_plan_tests_the_primary_alone(planned_results):
    from statsmodels.stats.multitest import multipletests

    fam = family_of(planned_results)
    prim = fam["primary"].to_numpy()
    assert fam.loc[prim, "net_win_p_holm"].item() == fam.loc[prim, "net_win_p"].item()
    rest = fam.loc[~prim]
    expected = multipletests(rest["net_win_p"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(rest["net_win_p_holm"].to_numpy(), expected, rtol=1e-12)


def test_published_numbers_do_not_move_with_a_plan(planned_results, plain_results):
    """The plan adds columns; every rate, interval and test stays what it was."""
    for name in ("headline", "consensus", "agreement", "cost", "per_task", "missing_bounds"):
        a = table_view(planned_results, name).drop(
            columns=["primary", "net_win_p_holm"], errors="ignore"
        )
        b = table_view(plain_results, name).drop(
            columns=["primary", "net_win_p_holm"], errors="ignore"
        )
        pd.testing.assert_frame_equal(a, b)


def test_consensus_primary_adds_the_plans_rule(tmp_path):
    text = PLAN_TOML.replace('primary_judge = "openai:gpt-5.4"', 'consensus = "majority"')
    res = compute_results(with_plan(tmp_path / "d", text), **PARAMS)
    cons = table_view(res, "consensus")
    assert set(cons["judge"]) == {"consensus:unanimous", "consensus:majority"}
    hit = cons.loc[cons["primary"], ["rubric", "judge"]].to_numpy().tolist()
    assert hit == [["with-without", "consensus:majority"]]
    assert not table_view(res, "headline")["primary"].any()
    from evalstats.report import headline_paragraph

    assert headline_paragraph(res).startswith(
        "On the with-without rubric, judged by majority consensus"
    )


def test_primary_not_in_the_selection_is_said(planned, monkeypatch):
    from evalstats.report import headline_paragraph

    res = compute_results(planned, judges=["anthropic:claude-sonnet-4-20250514"], **PARAMS)
    assert not table_view(res, "headline")["primary"].any()
    assert "not among these rows" in _plan_note(res, monkeypatch)
    assert "is not among these results" in headline_paragraph(res)


def test_cost_ratio_primary_points_at_the_cost_table(tmp_path, monkeypatch):
    from evalstats.report import headline_paragraph

    text = PLAN_TOML.replace('statistic = "net_win"', 'statistic = "tokens_total_ratio"')
    text = text.replace('margin_kind = "non-inferiority"\n', "").replace("margin = 0.10\n", "")
    res = compute_results(with_plan(tmp_path / "d", text), **PARAMS)
    from statsmodels.stats.multitest import multipletests

    fam = family_of(res)
    assert not fam["primary"].any()  # a cost ratio is no row of the win-rate tables
    expected = multipletests(fam["net_win_p"].to_numpy(), method="holm")[1]
    np.testing.assert_allclose(fam["net_win_p_holm"].to_numpy(), expected, rtol=1e-12)
    assert "a cost ratio: the tokens_total_ratio row of the cost table" in _plan_note(
        res, monkeypatch
    )
    card = headline_paragraph(res)
    row = res.tables["cost"].set_index("statistic").loc["tokens_total_ratio"]
    m = re.search(
        rf"The primary result: .*?total tokens \([^)]*\): ({NUM}) \[({NUM}), ({NUM})\]", card
    )
    assert m, card
    shown = [float(x) for x in m.groups()]
    np.testing.assert_allclose(
        shown, row[["estimate", "ci_low", "ci_high"]].astype(float), atol=0.005
    )


def test_audit_sees_the_plan(planned_results, plain_results):
    def status(res, check):
        a = res.tables["audit"]
        return a.loc[a["check"] == check, "status"].astype(str).tolist()

    assert status(planned_results, "plan_before_judging") == ["pass"]
    assert status(planned_results, "plan_design") == ["pass"]
    assert status(plain_results, "plan_before_judging") == ["warn"]


# --------------------------------------------------------------------------------------------
# missing-answer bounds, against counts of the verdicts
# --------------------------------------------------------------------------------------------


def test_missing_bounds_equal_counts(plain_results):
    head = table_view(plain_results, "headline").set_index(["rubric", "judge"])
    frame = plain_results.frame
    bounds = table_view(plain_results, "missing_bounds")
    assert len(bounds) == len(head)
    for row in bounds.to_dict("records"):
        h = head.loc[(row["rubric"], row["judge"])]
        sub = frame.loc[
            (frame["rubric"].astype(str) == row["rubric"])
            & (frame["judge"].astype(str) == row["judge"])
            & (frame["status"].astype(str) == "no_answer")
        ]
        arms = sub["over_budget_arm"].astype(str).value_counts()
        # A pair no judge saw weighs what a judged pair weighs: one row per order shown.
        per_row = row["n_missing"] / len(sub)
        assert per_row in (1.0, 2.0) and len(sub) > 0
        n, diff, m = h["n"], h["wins"] - h["losses"], row["n_missing"]
        assert row["n"] == n
        assert row["net_win"] == pytest.approx(diff / n, abs=1e-12)
        assert row["net_win"] == pytest.approx(h["net_win"], abs=1e-12)
        assert row["worst_case"] == pytest.approx((diff - m) / (n + m), abs=1e-12)
        assert row["best_case"] == pytest.approx((diff + m) / (n + m), abs=1e-12)
        aware = diff + per_row * (arms.get("without", 0) - arms.get("with", 0))
        assert row["arm_aware"] == pytest.approx(aware / (n + m), abs=1e-12)
        assert row["worst_case"] <= row["arm_aware"] <= row["best_case"]
        assert row["arm_aware_ci_low"] < row["arm_aware"] < row["arm_aware_ci_high"]


# --------------------------------------------------------------------------------------------
# the pages
# --------------------------------------------------------------------------------------------


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []

    def handle_data(self, data):
        self.text.append(data)


def page_text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8"))
    return re.sub(r"\s+", " ", "".join(p.text))


def card_text(page: Path) -> str:
    html_text = page.read_text(encoding="utf-8")
    m = re.search(r'<section class="headline-card"[^>]*>(.*?)</section>', html_text, re.S)
    assert m, "no headline card"
    p = _Text()
    p.feed(m.group(1))
    return "".join(p.text)


def _plan_note(res, monkeypatch) -> str:
    """The plan sentence ``show_tests`` writes under a table, caught where IPython shows it."""
    shown: list[dict] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False: shown.append(obj))
    show_tests(res, "headline")
    return shown[-1]["text/plain"]


def check_card(card: str, doc: dict, rubric: str, judge: str) -> None:
    """Every number of the card equals results.json at the export's precision."""
    # The audit's rows listed under the card quote the audit table's details (their numbers
    # are words of results.json's audit rows; tests/test_headline_audit.py checks the list).
    head, _, rest = card.partition("Audit: ")
    card = head + rest[rest.index("Why this row") :] if "Why this row" in rest else head
    t = doc["tables"]
    rows = [  # results.json's long rows, one row per group beside its counts
        r
        for name in ("headline", "consensus")
        for r in table_view(
            SimpleNamespace(tables={n: pd.DataFrame(t[n]) for n in (name, f"{name}_diagnostics")}),
            name,
        ).to_dict("records")
    ]
    row = next(r for r in rows if r["rubric"] == rubric and r["judge"] == judge)
    m = re.search(
        rf"WITH won ({NUM}) % \[({NUM}), ({NUM})\] of the (\d+) .*? in (\d+) tasks, tied ({NUM}) % "
        rf"\[({NUM}), ({NUM})\] and lost ({NUM}) % \[({NUM}), ({NUM})\]: a net win of ({NUM}) "
        rf"percentage points \[({NUM}), ({NUM})\]",
        card,
    )
    assert m, card
    g = m.groups()

    def pct(text, value):
        assert float(text) == round(value * 100), (text, value)

    for i, stat in zip(
        (0, 5, 8, 11), ("win_rate", "tie_rate", "loss_rate", "net_win"), strict=True
    ):
        pct(g[i], row[stat])
        pct(g[i + 1], row[f"{stat}_ci_low"])
        pct(g[i + 2], row[f"{stat}_ci_high"])
    # "of the 165 readable pair-orders (85 pairs; 170 judged, ...)": the rates' own
    # denominator first, the judged ones beside.
    assert int(g[3]) == row["n"] and int(g[4]) == row["n_tasks"]
    # Every other number of the card is in results.json too: the other rows' net wins on this
    # rubric, the confidence, and the plan's alpha and margin.
    allowed = {f"{doc['parameters']['confidence'] * 100:g}", str(row["n"]), str(row["n_pairs"]), *g}
    allowed |= {str(row[k]) for k in ("invalid", "error")}
    allowed.add(str(row["n"] + row["invalid"] + row["error"]))
    for r in rows:
        if r["rubric"] == rubric:
            allowed |= {
                str(round(r[k] * 100)) for k in ("net_win", "net_win_ci_low", "net_win_ci_high")
            }
    plan = doc["provenance"]["plan"]
    if plan:
        allowed |= {f"{plan['alpha']:g}", f"{plan['margin']:g}"}
    test = (doc["tables"].get("primary_test") or [None])[0]
    if test:
        # The declared test's sentence: its df, p-value, interval and margins, each as
        # results.json holds it (p at two significant digits, bounds in points).
        m = re.search(
            rf"\(({NUM}) df\), (?:rejects|does not reject) its null: p (= {NUM}|< 0.001) at alpha "
            rf"({NUM}), with the 95 % (?:one-sided )?interval [\[(]({NUM}|−∞), ({NUM}|∞)[\])]",
            card,
        )
        assert m, card
        assert float(m.group(1)) == round(test["df"], 1)
        small = test["p_value"] < 1e-3  # "< 0.001", as a paper prints it
        assert (
            m.group(2) == "< 0.001"
            if small
            else float(m.group(2)[2:]) == float(f"{test['p_value']:.2g}")
        )
        assert float(m.group(3)) == test["alpha"]
        for text, value in zip(m.groups()[3:], (test["ci_low"], test["ci_high"]), strict=True):
            if value is None:  # the side the one-sided test leaves open
                assert text in ("−∞", "∞")
            else:
                assert float(text) == round(value * 100)
        allowed |= set(m.groups()[:4]) | {m.group(5), "0.001", m.group(2)[2:]}
        allowed |= {f"{test[k]:g}" for k in ("lower_margin", "upper_margin") if test[k] is not None}
    words = card.replace("Claude Sonnet 4", "").replace("GPT 5.4", "")
    stray = set(re.findall(rf"(?<![\w.]){NUM}", words)) - allowed
    assert not stray, (stray, card)


def headline_cells(page: Path) -> list[str]:
    html_text = page.read_text(encoding="utf-8")
    # A wide table is split into parts that repeat its key columns; the first part holds them.
    table = re.search(r'<table data-table="headline"[^>]*>(.*?)</table>', html_text, re.S).group(1)
    return re.findall(r"<tr>(.*?)</tr>", table)[1:]


@pytest.mark.slow
def test_card_without_plan_states_the_first_row_as_exploratory(tmp_path_factory):
    from test_report import render_once

    _, out = render_once(tmp_path_factory)
    doc = json.loads((out / "results.json").read_text())
    card = card_text(out / "index.html")
    # the row the stated rule chose (issue 22), not the first of the table
    (first,) = doc["tables"]["headline_choice"]
    check_card(card, doc, first["rubric"], first["judge"])
    assert "exploratory" in card
    text = page_text(out / "index.html")
    assert text.index("Headline.") < text.index("sha256 tasks.jsonl")  # at the top
    assert "No analysis plan declared: every test below is exploratory" in text
    assert not [r for r in headline_cells(out / "index.html") if "★ primary" in r]
    assert "Missing answers" in text and 'data-table="missing_bounds"' in (
        out / "index.html"
    ).read_text(encoding="utf-8")


@pytest.mark.slow
def test_rendered_plan_report(rendered_plan):
    doc = json.loads((rendered_plan / "results.json").read_text())
    assert doc["provenance"]["plan"]["primary"]["judge"] == PRIMARY["judge"]
    card = card_text(rendered_plan / "index.html")
    check_card(card, doc, PRIMARY["rubric"], PRIMARY["judge"])
    assert "primary analysis declared in the plan" in card and "alpha 0.05" in card
    assert "non-inferiority margin 0.1" in card
    marked = [r for r in headline_cells(rendered_plan / "index.html") if "★ primary" in r]
    assert len(marked) == 1 and PRIMARY["judge"] in marked[0] and PRIMARY["rubric"] in marked[0]
    text = page_text(rendered_plan / "index.html")
    sha = doc["provenance"]["plan"]["sha256"]
    assert f"Declared analysis plan (plan.toml, sha256 {sha[:12]}" in text
    assert "alpha 0.05, one-sided (WITH better), non-inferiority margin 0.1" in text
    assert "tested alone at alpha" in text
    assert "exploratory" not in card
    # The declared test, computed: its table right after the headline table, its verdict
    # first on the card.
    page = (rendered_plan / "index.html").read_text(encoding="utf-8")
    at = page.index('data-table="primary_test"')
    assert page.index('data-table="headline"') < at < page.index('data-table="missing_bounds"')
    test = doc["tables"]["primary_test"][0]
    assert test["decision"] == "reject" and test["test"] == "non-inferiority"
    assert "the declared test finds that WITH is non-inferior to WITHOUT within 0.1" in card
    table = re.search(r'<table data-table="primary_test"[^>]*>(.*?)</table>', page, re.S)
    import html

    cells = html.unescape(re.sub(r"<[^>]+>", " ", table.group(1)))
    p = test["p_value"]
    assert (f"{p:.2e}" if p < 1e-3 else f"{p:.3f}") in cells  # the page's 3 decimals
    assert test["conclusion"] in cells
    shown = "< 0.001" if test["p_value"] < 1e-3 else f"= {test['p_value']:.2g}"  # as exported
    assert f"computed in the primary_test table below (non-inferiority, p {shown}, reject)" in (
        text
    )


def test_card_without_plan_has_no_declared_test(plain_results):
    from evalstats.report import headline_paragraph

    card = headline_paragraph(plain_results)
    assert "declared test" not in card
    assert "primary_test" in plain_results.unavailable


# --------------------------------------------------------------------------------------------
# methodology: the ordinal model and the simulated power
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def method_results():
    return compute_methodology(SAMPLE, **PARAMS)


def test_ordinal_terms_match_a_direct_statsmodels_fit(method_results):
    from statsmodels.genmod.cov_struct import Exchangeable
    from statsmodels.genmod.generalized_estimating_equations import OrdinalGEE

    terms = method_results.tables["ordinal_terms"]
    frame = method_results.frame
    for rubric in ("with-without", "blind-pair"):
        ok = frame.loc[(frame["rubric"].astype(str) == rubric) & (frame["status"] == "ok")]
        y = ok["outcome"].astype(str).map({"loss": 0, "tie": 1, "win": 2}).to_numpy(float)
        x = (ok["judge"].astype(str) == "openai:gpt-5.4").to_numpy(float)[:, None]
        groups = pd.factorize(ok["task_id"], sort=True)[0]
        fit = OrdinalGEE(y, x, groups, cov_struct=Exchangeable()).fit(cov_type="bias_reduced")
        mine = terms.loc[terms["rubric"] == rubric]
        np.testing.assert_allclose(mine["estimate"].to_numpy(), fit.params, rtol=1e-6)
        np.testing.assert_allclose(mine["se"].to_numpy(), fit.bse, rtol=1e-6)


def test_ordinal_check_sits_beside_the_design_rates(method_results, plain_results):
    table = method_results.tables["ordinal_check"]
    head = table_view(plain_results, "headline").set_index(["rubric", "judge"])
    judged = table.loc[table["judge"] != "average of judges"]
    names = {"p_win": "win_rate", "p_tie": "tie_rate", "p_loss": "loss_rate", "net_win": "net_win"}
    for row in judged.to_dict("records"):
        h = head.loc[(row["rubric"], row["judge"])]
        col = names[row["quantity"]]
        assert row["design"] == pytest.approx(h[col], abs=1e-12)
        assert row["design_ci_low"] == pytest.approx(h[f"{col}_ci_low"], abs=1e-12)
        assert row["difference"] == pytest.approx(row["model"] - row["design"], abs=1e-12)
    # The model's three probabilities of a judge sum to one, and the model is close here.
    wide = judged.pivot_table(index=["rubric", "judge"], columns="quantity", values="model")
    np.testing.assert_allclose(wide[["p_win", "p_tie", "p_loss"]].sum(axis=1), 1.0, atol=1e-9)
    assert (judged["difference"].abs() < 0.05).all()


def test_simulated_mde_and_tasks_needed_hold_under_a_fresh_simulation(method_results):
    from evalstats.stats.power import Design, min_detectable_net_win, simulated_power, tasks_needed

    design = method_results.tables["design"].set_index("rubric")
    mde = method_results.tables["mde_simulated"]
    needed = method_results.tables["tasks_needed_simulated"]
    assert len(mde) == 2 and len(needed) >= 2
    # Simulated where the analytic design is at most 100 tasks (the page says so).
    assert (needed["n_tasks_analytic"] <= 100).all()
    assert len(needed) == sum(
        tasks_needed(t, Design(int(d["n_replicates"]), 0.3, float(d["p_tie"]))).n_tasks <= 100
        for _, d in design.iterrows()
        for t in (0.1, 0.2, 0.3)
    )
    for table in (mde, needed):
        np.testing.assert_allclose(table["mc_se"], np.sqrt(0.8 * 0.2 / 400))
        assert (table["power_simulated"] >= 0.8).all() and (table["icc"] == 0.3).all()
    checks = []
    for row in mde.to_dict("records"):
        d = design.loc[row["rubric"]]
        design_d = Design(int(d["n_replicates"]), 0.3, float(d["p_tie"]))
        assert row["n_tasks"] == d["n_tasks"]
        analytic = min_detectable_net_win(int(d["n_tasks"]), design_d).net_win
        assert row["net_win_analytic"] == pytest.approx(analytic, rel=1e-9)
        checks.append((row["net_win"], int(d["n_tasks"]), design_d, row["mc_se"]))
    for row in needed.to_dict("records"):
        d = design.loc[row["rubric"]]
        design_d = Design(int(d["n_replicates"]), 0.3, float(d["p_tie"]))
        assert row["n_tasks_analytic"] == tasks_needed(row["net_win"], design_d).n_tasks
        checks.append((row["net_win"], int(row["n_tasks"]), design_d, row["mc_se"]))
    for effect, n_tasks, design_d, mc_se in checks:
        # An independent draw (another seed, 10x the simulations) at the simulated design:
        # its power is the 80 % target, within the Monte-Carlo error of both studies.
        fresh = simulated_power(effect, n_tasks, design_d, n_resamples=4000, rng=12345)[
            "power"
        ].item()
        assert abs(fresh - 0.8) < 4 * np.hypot(mc_se, 0.0063), (effect, n_tasks, fresh)
