"""The declared primary test (``primary_test``) and the consensus rows of ``design_coverage``.

``declared_test`` is checked against statsmodels' t tests and TOST of a mean (``DescrStatsW``:
an IID sample's mean, SE and n - 1 df are an estimate, SE and df like any other) and against
a direct scipy computation; its decision against its interval on thousands of random
estimates. The report's ``primary_test`` row is recomputed from the primary row's published
estimate, CR2 SE and Bell-McCaffrey df (or the cost table's log-scale SE and df) with
``scipy.stats.t``, for a plan of every kind, with a judge and with a consensus primary.
Without a plan nothing published moves: the report with these sections disabled gives the
same results.json but for the new table and rows.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from contract import TIDY_COLUMNS
from scipy import stats as sps

from evalstats.report import table_view
from evalstats.stats import Hypothesis, declared_test
from evalstats.stats.equivalence import declared_test_draws, hull_declared_test

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "sample"
PARAMS = {"n_resamples": 200, "seed": 3}
HEAD = 'written_at = 2026-05-01T09:00:00Z\nprimary_rubric = "with-without"\n'
JUDGE = 'primary_judge = "openai:gpt-5.4"\n'


def report_test(test):
    """A test of the report's rows: it computes the sample report (integration, marked
    ``slow``: make test runs it, make check runs the declared test's own tests)."""
    test = pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is absent")(test)
    return pytest.mark.slow(test)


def _flat(res: pd.DataFrame) -> SimpleNamespace:
    """A declared test's one tidy row and its diagnostics, read as attributes."""
    assert isinstance(res, pd.DataFrame) and len(res) == 1 and len(res.diagnostics) == 1
    row = {**res.iloc[0].to_dict(), **res.diagnostics.iloc[0].to_dict()}
    return SimpleNamespace(**row, ci_level=row["confidence"])


def _declared(estimate, se, df, **hypothesis) -> SimpleNamespace:
    return _flat(declared_test(estimate, se, df, Hypothesis(**hypothesis)))


# --------------------------------------------------------------------------------------------
# declared_test against statsmodels and scipy
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_declared_test_matches_statsmodels_on_a_mean(seed):
    from statsmodels.stats.weightstats import DescrStatsW

    x = np.random.default_rng(seed).normal(0.05 * seed, 1.0, 12 + 5 * seed)
    d = DescrStatsW(x)
    est, se, df = float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x))), len(x) - 1.0
    # equivalence: statsmodels' TOST of the mean
    r = _declared(est, se, df, margin=0.3, margin_kind="equivalence", confidence=0.95)
    p_sm = d.ttost_mean(-0.3, 0.3)[0]
    assert r.p_value == pytest.approx(p_sm, rel=1e-10)
    lo, hi = d.tconfint_mean(alpha=0.10)  # TOST's interval is the 1 - 2 alpha one
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-10)
    # one-sided and two-sided tests of a null value
    for side, alt in (("greater", "larger"), ("less", "smaller"), ("two-sided", "two-sided")):
        r = _declared(est, se, df, null=0.1, sidedness=side, confidence=0.95)
        assert r.p_value == pytest.approx(d.ttest_mean(0.1, alternative=alt)[1], rel=1e-10)
        lo, hi = d.tconfint_mean(alpha=0.05, alternative=alt)
        assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), rel=1e-10)
    # non-inferiority: the one-sided test at the shifted bound
    r = _declared(est, se, df, null=0.0, margin=0.2, margin_kind="non-inferiority")
    assert r.lower_margin == -0.2 and r.upper_margin == np.inf
    assert r.p_value == pytest.approx(d.ttest_mean(-0.2, alternative="larger")[1], rel=1e-10)


def test_declared_test_is_one_row_of_the_tidy_shape():
    t = declared_test(0.12, 0.05, 14, Hypothesis(sidedness="greater"), statistic="net_win")
    assert list(t.columns) == [*TIDY_COLUMNS, "test"]
    assert t.loc[0, "statistic"] == "net_win" and t.loc[0, "method"] == "t"
    assert np.isnan(t.loc[0, ["n", "n_tasks"]].astype(float)).all()
    assert list(t.diagnostics.columns) == [
        "null",
        "lower_margin",
        "upper_margin",
        "alpha",
        "reject",
    ]
    assert declared_test(0.12, 0.05, np.inf).loc[0, "method"] == "z"
    assert t.summary(digits=3).iloc[0] == "0.120 [0.032, inf], p = 0.0154"
    draws = np.linspace(-0.1, 0.3, 401)
    g = declared_test_draws(draws, Hypothesis(sidedness="greater"))
    assert g.loc[0, "method"] == "generalized_pivotal" and list(g.columns) == list(t.columns)
    h = hull_declared_test(g, t)
    assert h.loc[0, "method"] == "hull"
    assert h.loc[0, "p_value"] == max(g.loc[0, "p_value"], t.loc[0, "p_value"])
    assert h.loc[0, "ci_low"] == min(g.loc[0, "ci_low"], t.loc[0, "ci_low"])
    assert h.diagnostics.loc[0, "reject"] == (h.loc[0, "p_value"] < 0.05)


def test_declared_test_directions_by_scipy():
    est, se, df = -0.03, 0.02, 9.3
    t = sps.t
    r = _declared(est, se, df, null=0.0, margin=0.1, margin_kind="non-inferiority",
                      sidedness="less")  # fmt: skip
    assert r.upper_margin == 0.1 and r.lower_margin == -np.inf
    assert r.p_value == pytest.approx(t.cdf((est - 0.1) / se, df), rel=1e-12)
    assert r.ci_low == -np.inf and r.ci_high == pytest.approx(est + t.ppf(0.95, df) * se)
    # two-sided non-inferiority: the side `better` names
    hi = _declared(est, se, df, margin=0.1, margin_kind="non-inferiority", better="higher")
    lo = _declared(est, se, df, margin=0.1, margin_kind="non-inferiority", better="lower")
    assert hi.lower_margin == -0.1 and lo.upper_margin == 0.1
    # confidence 0.5 is a valid two-sided level (the plan allows it), not a one-sided one
    assert _declared(est, se, df, confidence=0.5).ci_level == 0.5
    with pytest.raises(ValueError, match="confidence"):
        _declared(est, se, df, sidedness="greater", confidence=0.5)
    with pytest.raises(ValueError, match="together"):
        _declared(est, se, df, margin=0.1)
    with pytest.raises(ValueError, match="se"):
        _declared(est, np.nan, df)


def _excludes(r) -> bool:
    """The interval lies inside the alternative: above the lower and below the upper margin
    (a two-sided test: away from the null on either side)."""
    if r.test == "two-sided":
        return bool(r.ci_low > r.null or r.ci_high < r.null)
    return _inside(r.ci_low, r.ci_high, r.lower_margin, r.upper_margin)


def _inside(lo: float, hi: float, lower: float, upper: float) -> bool:
    """``[lo, hi]`` strictly inside ``(lower, upper)``; an infinite margin is a side not
    tested (the interval is open there too)."""
    return bool((lower == -np.inf or lo > lower) and (upper == np.inf or hi < upper))


@pytest.mark.slow  # simulation study
def test_decision_agrees_with_the_interval_on_many_draws():
    rng = np.random.default_rng(2026)
    n = 600
    est = rng.normal(0, 0.3, n)
    se = np.where(rng.random(n) < 0.05, 0.0, rng.gamma(2.0, 0.05, n))  # some SE of 0
    df = np.where(rng.random(n) < 0.1, np.inf, rng.uniform(1.5, 40, n))
    alpha = rng.choice([0.01, 0.05, 0.1, 0.2], n)
    margin = rng.uniform(0.01, 0.5, n)
    kinds = [
        {"sidedness": "two-sided"},
        {"sidedness": "greater"},
        {"sidedness": "less"},
        {"margin_kind": "equivalence"},
        {"margin_kind": "non-inferiority", "sidedness": "greater"},
        {"margin_kind": "non-inferiority", "sidedness": "less"},
    ]
    seen = {True: 0, False: 0}
    for i in range(n):
        kw = dict(kinds[i % len(kinds)])
        if "margin_kind" in kw:
            kw["margin"] = margin[i]
        r = _declared(est[i], se[i], df[i], confidence=1 - alpha[i], **kw)
        assert r.reject == (r.p_value < r.alpha) == _excludes(r), (i, kw, r)
        seen[r.reject] += 1
    assert min(seen.values()) > n // 10  # both decisions are exercised


@pytest.mark.slow  # simulation study
def test_type_one_error_at_the_margin_is_alpha():
    """At the boundary of the null (true net win = -margin) the non-inferiority test rejects
    in alpha of the evaluations: simulated on normal estimates with a chi-square SE."""
    rng = np.random.default_rng(11)
    n, df, sigma, margin = 4000, 9.0, 0.1, 0.1
    est = rng.normal(-margin, sigma, n)
    se = sigma * np.sqrt(rng.chisquare(df, n) / df)
    rejected = np.array(
        [
            _declared(e, s, df, margin=margin, margin_kind="non-inferiority").reject
            for e, s in zip(est, se, strict=True)
        ]
    )
    assert abs(rejected.mean() - 0.05) < 4 * np.sqrt(0.05 * 0.95 / n)


# --------------------------------------------------------------------------------------------
# the report's primary_test, against the published primary row and scipy
# --------------------------------------------------------------------------------------------

PLANS = {
    "two-sided judge": JUDGE + 'statistic = "net_win"\n',
    "greater consensus": 'consensus = "unanimous"\nstatistic = "net_win"\nsidedness = "greater"\n',
    "non-inferiority judge": JUDGE
    + 'statistic = "net_win"\nsidedness = "greater"\nmargin = 0.10\n'
    'margin_kind = "non-inferiority"\n',
    "equivalence consensus": 'consensus = "majority"\nstatistic = "score"\nmargin = 0.05\n'
    'margin_kind = "equivalence"\n',
    "equivalence judge alpha 0.1": JUDGE.replace("openai:gpt-5.4", "anthropic:claude-sonnet-4-20250514")
    + 'statistic = "net_win"\nmargin = 0.6\nmargin_kind = "equivalence"\nalpha = 0.1\n',
    "cost non-inferiority": JUDGE
    + 'statistic = "tokens_total_ratio"\nsidedness = "less"\nmargin = 0.10\n'
    'margin_kind = "non-inferiority"\n',
    "cost geomean two-sided": JUDGE + 'statistic = "tokens_geomean_ratio"\n',
    "cost geomean equivalence": JUDGE
    + 'statistic = "tokens_geomean_ratio"\nmargin = 0.2\nmargin_kind = "equivalence"\n',
}  # fmt: skip


def _with_plan(dest: Path, body: str) -> Path:
    shutil.copytree(SAMPLE, dest)
    text = HEAD + body + ("" if "alpha" in body else "alpha = 0.05\n")
    (dest / "plan.toml").write_text(text, encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    from evalstats.report import compute_results

    out = {}
    for name, body in PLANS.items():
        d = _with_plan(tmp_path_factory.mktemp("p") / name.replace(" ", "_"), body)
        out[name] = compute_results(d, **PARAMS)
    return out


def _oracle(row: pd.Series, plan, *, log: bool) -> dict[str, float]:
    """p-value and interval straight from the published estimate, SE and df with scipy."""
    est, se, df, a = row["est"], row["se"], row["df"], plan.alpha
    t = sps.t
    null = 0.0 if log else {"net_win": 0.0, "score": 0.5}[plan.statistic]
    m = None if plan.margin is None else (np.log1p(plan.margin) if log else plan.margin)
    if plan.margin_kind == "equivalence":
        p = max(t.sf((est - (null - m)) / se, df), t.cdf((est - (null + m)) / se, df))
        q = t.ppf(1 - a, df)
        return {"p": p, "lo": est - q * se, "hi": est + q * se}
    side = plan.sidedness
    if plan.margin_kind == "non-inferiority":
        side = side if side != "two-sided" else ("less" if log else "greater")
        bound = null - m if side == "greater" else null + m
    else:
        bound = null
    if side == "two-sided":
        q = t.ppf(1 - a / 2, df)
        return {"p": 2 * t.sf(abs(est - null) / se, df), "lo": est - q * se, "hi": est + q * se}
    q = t.ppf(1 - a, df)
    if side == "greater":
        return {"p": t.sf((est - bound) / se, df), "lo": est - q * se, "hi": np.inf}
    return {"p": t.cdf((est - bound) / se, df), "lo": -np.inf, "hi": est + q * se}


def _draws_oracle(draws: np.ndarray, plan) -> dict[str, float]:
    """Generalized p-values and order-statistic limits of pivot draws, with numpy alone
    (a log cost ratio: lower is better)."""
    d, a = np.sort(np.asarray(draws, dtype=float)), plan.alpha
    k = d.size

    def limits(level):
        j = max(1, int(np.ceil(k * (1 - level) / 2 - 1e-9)))
        return d[j - 1], d[k - j]

    m = None if plan.margin is None else np.log1p(plan.margin)
    if plan.margin_kind == "equivalence":
        lo, hi = limits(1 - 2 * a)
        return {"p": max(np.mean(d <= -m), np.mean(d >= m)), "lo": lo, "hi": hi}
    side = plan.sidedness
    if plan.margin_kind == "non-inferiority":
        side = side if side != "two-sided" else "less"
        bound = -m if side == "greater" else m
    else:
        bound = 0.0
    if side == "two-sided":
        lo, hi = limits(1 - a)
        return {"p": min(1, 2 * min(np.mean(d <= 0), np.mean(d >= 0))), "lo": lo, "hi": hi}
    lo, hi = limits(1 - 2 * a)
    if side == "greater":
        return {"p": np.mean(d <= bound), "lo": lo, "hi": np.inf}
    return {"p": np.mean(d >= bound), "lo": -np.inf, "hi": hi}


@report_test
@pytest.mark.parametrize("name", list(PLANS))
def test_primary_test_matches_scipy_on_the_published_row(planned, name):
    from evalstats.plan import parse_plan

    res = planned[name]
    doc = res.to_json()
    plan = parse_plan(
        {
            k: v
            for k, v in doc["provenance"]["plan"].items()
            if k not in ("file", "sha256", "primary")
        }
    )
    table = res.tables["primary_test"]
    assert len(table) == 1 and doc["tables"]["primary_test"]  # in results.json
    got = table.iloc[0]
    assert (got["rubric"], got["judge"], got["statistic"]) == (
        plan.primary_rubric, plan.primary_judge_name, plan.statistic
    )  # fmt: skip
    log = plan.statistic.startswith("tokens")
    pivotal = False
    if log:
        src = res.tables["cost"].set_index("statistic").loc[plan.statistic]
        est = 0.5 * (np.log(src["ci_low"]) + np.log(src["ci_high"]))
        row = pd.Series({"est": est, "se": src["se"], "df": src["df"]})
        assert got["estimate"] == src["estimate"] and got["source"] == "cost"
        pivotal = str(src["method"]).startswith("generalized pivotal")
    else:
        both = pd.concat(
            [table_view(res, "headline"), table_view(res, "consensus")], ignore_index=True
        )
        src = both.loc[
            (both["rubric"] == plan.primary_rubric) & (both["judge"] == plan.primary_judge_name)
        ]
        assert len(src) == 1
        src = src.iloc[0]
        row = pd.Series(
            {
                "est": src[plan.statistic],
                "se": src[f"{plan.statistic}_se"],
                "df": src["win_rate_df"],
            }
        )
        assert got["estimate"] == src[plan.statistic]
        assert got["ci_note"] == src["ci_note"]
        assert bool(src["primary"])  # the row the table tests is the one marked
    if pivotal:  # the total ratio's interval is no t interval: test on its draws
        from evalstats.stats.cost import total_ratio_draws

        draws = total_ratio_draws(res.frame, measure=plan.statistic.split("_")[0])
        want = _draws_oracle(draws, plan)
    else:
        want = _oracle(row, plan, log=log)
    back = np.exp if log else (lambda v: v)
    assert got["p_value"] == pytest.approx(want["p"], rel=1e-9, abs=1e-15)
    assert got["ci_low"] == pytest.approx(back(want["lo"]), rel=1e-9)
    assert got["ci_high"] == pytest.approx(back(want["hi"]), rel=1e-9)
    assert got["se"] == pytest.approx(row["se"])
    assert got["df"] == pytest.approx(row["df"], nan_ok=True)  # NaN: no t test (pivotal)
    # the decision and the interval agree, and the words say which
    ends = got[["ci_low", "ci_high", "lower_margin", "upper_margin"]].astype(float)
    with np.errstate(divide="ignore"):  # a ratio's open side is 0 (log: -inf)
        inside = _inside(*(np.log(ends) if log else ends))
    if got["test"] == "two-sided":
        inside = got["ci_low"] > got["null"] or got["ci_high"] < got["null"]
    assert (got["decision"] == "reject") == (got["p_value"] < plan.alpha) == inside
    assert got["conclusion"].startswith("not shown: ") == (got["decision"] == "not reject")
    if got["test"] == "two-sided" and got["decision"] == "reject":  # and which way it differs
        up = got["test_centre"] > got["null"]
        way = ("higher" if up else "lower") if log else ("better" if up else "worse")
        assert got["conclusion"].endswith(f": WITH {way}")


@report_test
def test_primary_test_decisions_cover_both_outcomes(planned):
    decisions = {n: r.tables["primary_test"]["decision"].item() for n, r in planned.items()}
    assert decisions["non-inferiority judge"] == "reject"
    assert decisions["equivalence consensus"] == "not reject"  # a score of 0.7 is no tie
    nonin = planned["non-inferiority judge"].tables["primary_test"].iloc[0]
    assert nonin["conclusion"] == "WITH is non-inferior to WITHOUT within 0.1 (net win > -0.1)"
    cost = planned["cost non-inferiority"].tables["primary_test"].iloc[0]
    assert cost["upper_margin"] == pytest.approx(1.1) and cost["lower_margin"] == 0.0
    assert cost["conclusion"].startswith("WITH uses no more than 1.1x the total tokens")
    # the cost test is the one cost_equivalence runs (the package's own non-inferiority)
    from evalstats.stats.equivalence import cost_equivalence

    eq = cost_equivalence(planned["cost non-inferiority"].frame, margin=1.1)
    eq = eq.set_index("metric").loc["tokens_total_ratio"]
    assert cost["p_value"] == pytest.approx(eq["p_value"], rel=1e-9)
    assert cost["ci_high"] == pytest.approx(eq["ci_high"], rel=1e-9)


@report_test
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (JUDGE + 'statistic = "win_rate"\n', "no value of no difference"),
        (JUDGE + 'statistic = "tokens_median_ratio"\n', "no standard error"),
    ],
)
def test_untestable_statistic_is_said(tmp_path, body, reason):
    from evalstats.report import compute_results

    res = compute_results(_with_plan(tmp_path / "d", body), **PARAMS)
    row = res.tables["primary_test"].iloc[0]
    assert row["decision"] == "no test" and reason in row["conclusion"]
    assert np.isnan(row["p_value"])


@report_test
def test_primary_not_selected_is_unavailable(tmp_path):
    from evalstats.report import compute_results

    d = _with_plan(tmp_path / "d", JUDGE + 'statistic = "net_win"\n')
    res = compute_results(d, judges=["anthropic:claude-sonnet-4-20250514"], **PARAMS)
    assert "primary_test" not in res.tables
    assert "not among these results" in res.unavailable["primary_test"]


# --------------------------------------------------------------------------------------------
# the card, the sentences and the macros
# --------------------------------------------------------------------------------------------


@report_test
def test_card_sentences_and_macros_state_the_declared_test(planned):
    from evalstats.report import headline_paragraph, latex_macros, result_sentences

    res = planned["non-inferiority judge"]
    doc = res.to_json()
    t = doc["tables"]["primary_test"][0]
    card = headline_paragraph(res)
    assert card.startswith(
        "On the with-without rubric, judged by GPT 5.4, the declared test finds that WITH is "
        "non-inferior to WITHOUT within 0.1 (net win > -0.1)."
    )
    m = re.search(
        r"a non-inferiority t test \(([\d.]+) df\), rejects its null: p ([=<] [\d.e-]+) at alpha "
        r"([\d.]+), with the 95 % one-sided interval \[(-?\d+), ∞\) points",
        card,
    )
    assert m, card
    assert float(m.group(1)) == round(t["df"], 1)
    small = t["p_value"] < 1e-3  # "< 0.001", never "0.000" or "= 0.00012"
    assert m.group(2) == ("< 0.001" if small else f"= {t['p_value']:.2g}")
    assert float(m.group(3)) == t["alpha"]
    assert int(m.group(4)) == round(t["ci_low"] * 100)
    assert t["ci_high"] is None  # the open side, null in results.json
    # the card's verdict is the declared test's, not the two-sided interval's
    not_shown = planned["equivalence consensus"]
    assert "the declared test does not show that WITH is equivalent" in headline_paragraph(
        not_shown
    )
    first = result_sentences(res)[0]
    assert first.startswith("The declared test of net_win") and m.group(0) in first
    value = r"((?:[^{}]|\{[^{}]*\})*)"  # one level of braces: \ensuremath{<}
    macros = dict(
        re.findall(r"\\newcommand\{\\(esPrimary\w+)\}\{" + value + r"\}", latex_macros(res))
    )
    assert macros["esPrimaryEstimate"] == str(round(t["estimate"] * 100))
    assert macros["esPrimaryLo"] == str(round(t["ci_low"] * 100))
    assert macros["esPrimaryHi"] == "--"
    assert macros["esPrimaryP"] == ("\\ensuremath{<}\\,0.001" if small else f"{t['p_value']:.2g}")
    assert macros["esPrimaryDecision"] == "reject" and macros["esPrimaryMargin"] == "0.1"
    cost = latex_macros(planned["cost non-inferiority"])
    c = planned["cost non-inferiority"].to_json()["tables"]["primary_test"][0]
    assert f"\\newcommand{{\\esPrimaryHi}}{{{c['ci_high']:.2f}}}" in cost


@report_test
def test_no_plan_no_primary_macros_or_sentence():
    from evalstats.report import compute_results, latex_macros, result_sentences

    res = compute_results(SAMPLE, **PARAMS)
    assert "primary_test" not in res.tables
    assert "no analysis plan declared" in res.unavailable["primary_test"]
    assert "esPrimary" not in latex_macros(res)
    assert not result_sentences(res)[0].startswith("The declared test")


# --------------------------------------------------------------------------------------------
# design_coverage of the consensus rows; nothing else moves
# --------------------------------------------------------------------------------------------


@report_test
def test_consensus_rows_in_design_coverage():
    from evalstats.report import compute_results
    from evalstats.stats import design_coverage
    from evalstats.stats.agreement import consensus

    res = compute_results(SAMPLE, **PARAMS)
    cov = res.tables["design_coverage"]
    cons = table_view(res, "consensus")
    rows = cov.loc[cov["judge"].astype(str).str.startswith("consensus:")]
    assert len(rows) == len(cons) == 2
    assert set(rows["judge"]) == {"consensus:unanimous"}
    merged = rows.merge(cons, on=["rubric", "judge"], suffixes=("", "_c"))
    assert (merged["n"] == merged["n_c"]).all()
    assert (merged["n_tasks"] == merged["n_tasks_c"]).all()
    assert (rows["n_resamples"] == 1000).all()
    np.testing.assert_allclose(rows["mc_se"], np.sqrt(0.95 * 0.05 / 1000), rtol=1e-6)
    # the numbers are the design check of the consensus verdicts on stream 3 of the seed
    frame = res.frame
    cframe = pd.concat(
        [consensus(frame, "unanimous", rubric=r) for r in ("with-without", "blind-pair")],
        ignore_index=True,
    )
    gen = np.random.default_rng(np.random.SeedSequence(PARAMS["seed"], spawn_key=(3,)))
    again = design_coverage(cframe, by=["rubric", "judge"], n_resamples=1000, rng=gen)
    # The one pair of arms (with, without) is a key of the result, left implicit in the report.
    assert set(zip(again.pop("arm_a"), again.pop("arm_b"), strict=True)) == {("with", "without")}
    pd.testing.assert_frame_equal(
        rows.reset_index(drop=True).astype({"rubric": str, "judge": str}),
        again.astype({"rubric": str, "judge": str}).reset_index(drop=True),
        check_dtype=False,
        check_categorical=False,
    )


def test_coverage_notes_are_appended_to_the_table():
    from evalstats.report._evaluation import (
        _with_coverage_notes,  # private: the coverage notes at designs the sample lacks
    )

    table = pd.DataFrame(
        {"rubric": ["r", "r"], "judge": ["consensus:unanimous", "a"], "ci_note": ["", "x"]}
    )
    cov = pd.DataFrame(
        {
            "rubric": ["r", "r"],
            "judge": ["consensus:unanimous", "a"],
            "ci_note": ["liberal: y", "z"],
        }
    )
    out = _with_coverage_notes(table, cov, ["rubric", "judge"])
    assert out["ci_note"].tolist() == ["liberal: y", "x; z"]
    assert _with_coverage_notes(table, cov.assign(ci_note=""), ["rubric", "judge"]) is None


@report_test
def test_without_plan_nothing_published_moves(monkeypatch):
    """results.json of the sample with the new section and rows switched off equals today's
    but for the new key (``unavailable.primary_test``) and the consensus rows of
    ``design_coverage``."""
    from evalstats.report import (
        _evaluation as ev,  # private: fault seams monkeypatched into the evaluation
    )
    from evalstats.report import compute_results

    new = compute_results(SAMPLE, **PARAMS).to_json()
    original = ev._consensus

    def consensus_without_check(ctx):
        out = original(ctx)
        ctx.scratch.pop("consensus_frame", None)
        return out

    def no_primary(ctx):
        return {}

    swap = {"consensus": consensus_without_check, "primary_test": no_primary}
    sections = tuple((n, page, swap.get(n, fn), t) for n, page, fn, t in ev._SECTIONS)
    monkeypatch.setattr(ev, "_SECTIONS", sections)
    old = compute_results(SAMPLE, **PARAMS).to_json()

    assert set(new) == set(old)
    assert set(new["unavailable"]) - set(old["unavailable"]) == {"primary_test"}
    assert set(new["tables"]) - set(old["tables"]) == {"primary_test"}
    assert not new["tables"].pop("primary_test")  # unavailable: an empty table
    cov_new, cov_old = new["tables"].pop("design_coverage"), old["tables"].pop("design_coverage")
    assert cov_new[: len(cov_old)] == cov_old
    assert all(r["judge"].startswith("consensus:") for r in cov_new[len(cov_old) :])
    new["unavailable"].pop("primary_test")
    for key in ("tables", "unavailable", "parameters", "simulated"):
        assert json.dumps(new[key], sort_keys=True) == json.dumps(old[key], sort_keys=True), key
    # provenance: identical but for the package build (nothing of the data or settings)
    assert new["provenance"]["inputs"] == old["provenance"]["inputs"]
    assert new["provenance"]["plan"] is old["provenance"]["plan"] is None


def test_declared_test_on_draws_decides_as_its_interval_says():
    """Generalized p-values and order-statistic limits agree on every kind of test."""
    gen = np.random.default_rng(4)
    for _ in range(120):
        draws = gen.normal(gen.normal(0, 0.2), gen.uniform(0.02, 0.3), size=gen.integers(50, 900))
        kind = gen.choice(["two-sided", "greater", "less", "non-inferiority", "equivalence"])
        margin = float(gen.uniform(0.01, 0.4))
        alpha = float(gen.choice([0.01, 0.05, 0.1]))
        if kind in ("non-inferiority", "equivalence"):
            h = Hypothesis(margin=margin, margin_kind=kind, confidence=1 - alpha)
        else:
            h = Hypothesis(sidedness=kind, confidence=1 - alpha)
        r = _flat(declared_test_draws(draws, h))
        if r.test == "two-sided":
            excluded = not (r.ci_low <= r.null <= r.ci_high)
        elif r.test == "equivalence":
            excluded = r.lower_margin < r.ci_low and r.ci_high < r.upper_margin
        elif np.isinf(r.ci_high):  # shown above a bound
            excluded = r.lower_margin < r.ci_low
        else:
            excluded = r.ci_high < r.upper_margin
        assert r.reject == excluded, (kind, r)
        assert np.isnan(r.df) and r.estimate == pytest.approx(np.median(draws))
