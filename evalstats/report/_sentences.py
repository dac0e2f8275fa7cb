"""The exported sentences: the numbers in words, each with n, tasks, the judge and method.

:func:`result_sentences` (one per headline, consensus, agreement and cost row),
:func:`headline_paragraph` (the primary result, or the first headline row called
exploratory) and :func:`sentences_markdown` (both, as a Markdown file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._display import count_text
from ..errors import DataError
from ..stats.formatting import format_interval, format_number, statistic_digits, statistic_scale
from ._export_comparison import comparison_sentences, is_comparison
from ._export_names import judge_label
from ._results_doc import (
    _COST_TEXT,
    _MACRO_TABLES,
    _RATES,
    _confidence,
    _f,
    _g,
    _load,
    _pct,
    _table,
    method_words,
)
from ._untrusted import markdown_text

__all__ = ["headline_paragraph", "result_sentences", "sentences_markdown"]


def _ordered_rubrics(doc: Mapping[str, Any]) -> set[str]:
    """Rubrics judged in both orders (whose verdicts are pair-orders, not pairs)."""
    pb = _table(doc, "position_bias")
    known = {"blind-pair"}
    if pb is not None and "rubric" in pb:
        known |= set(pb["rubric"].astype(str))
    return known


def _units(row: Mapping[str, Any], ordered: bool) -> str:
    return count_text(int(row["n"]), row.get("n_pairs"), ordered, judged=True)


def _left_out(row: Mapping[str, Any]) -> str:
    parts = []
    for col, what in (("no_answer", "no-answer"), ("invalid", "unreadable"), ("error", "failed")):
        v = row.get(col)
        if v:
            parts.append(f"{int(v)} {what}")
    if not parts:
        return ""
    return (
        " ("
        + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
        + (" verdicts left out)")
    )


def _iv(row: Mapping[str, Any], stat: str, digits: int | None, percent: bool, unit: str) -> str:
    d = statistic_digits(stat, digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent)
    return format_interval(
        [_f(row.get(stat))],
        [_f(row.get(f"{stat}_ci_low"))],
        [_f(row.get(f"{stat}_ci_high"))],
        d,
        scale=sc,
        unit=unit if sc == 100.0 else "",
    )[0]


def _method(row: Mapping[str, Any], conf: float) -> str:
    m = str(row.get("method") or "")
    # An IID method says so in its own words; every other rate method clusters by task.
    where = "" if m.startswith("iid") else " clustered by task"
    return f"{_pct(conf)} % CI{where}, {method_words(m)}"


def _win_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str:
    rubric, judge = str(row["rubric"]), str(row["judge"])
    ordered = rubric in _ordered_rubrics(doc)
    pct = " %" if percent else ""
    pts = " points" if percent else ""
    who = judge_label(judge)
    who = f"{who} of the judges" if judge.startswith("consensus:") else f"{who} judge"
    return (
        f"{_arm_short(doc)} won {_iv(row, 'win_rate', digits, percent, pct)}, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and "
        f"lost {_iv(row, 'loss_rate', digits, percent, pct)} of {_units(row, ordered)} "
        f"in {int(row['n_clusters'])} tasks{_left_out(row)}: a net win of "
        f"{_iv(row, 'net_win', digits, percent, pts)} ({who}, {rubric} rubric), "
        f"{_method(row, _confidence(doc))}."
    )


def _agreement_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str | None:
    if row.get("judge_b") is None or row.get("kappa") is None:
        return None
    conf = _pct(_confidence(doc))
    pct = " %" if percent else ""
    # Each interval names its own method, read from the row (kappa_method, ac1_method): the
    # same field of results.json as the table's; outside any parenthesis, so a name with one
    # of its own reads whole.
    return (
        f"{judge_label(str(row['judge_a']))} and {judge_label(str(row['judge_b']))} agreed on "
        f"{_iv(row, 'observed_agreement', digits, percent, pct)} of "
        f"{_units(row, str(row['rubric']) in _ordered_rubrics(doc))} in "
        f"{int(row['n_clusters'])} tasks ({row['rubric']} rubric): Cohen's kappa "
        f"{_iv(row, 'kappa', digits, percent, '')}, {conf} % CI clustered by task, "
        f"{method_words(row.get('kappa_method'))}; Gwet's AC1 "
        f"{_iv(row, 'ac1', digits, percent, '')} by {method_words(row.get('ac1_method'))}."
    )


def _cost_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str:
    d = statistic_digits("estimate", digits=digits, percent=percent)
    iv = format_interval(
        [_f(row.get("estimate"))], [_f(row.get("ci_low"))], [_f(row.get("ci_high"))], d
    )[0]
    metric = str(row["statistic"])
    what = _COST_TEXT.get(metric, metric)
    if row.get("method") == "unavailable":  # answer-only counts are no cost: say why
        reason = str(row.get("estimand") or "").removeprefix("unavailable: ")
        return f"The WITH / WITHOUT ratio of {what} is not reported: {reason}."
    source = row.get("token_source")
    counted = f" ({_SOURCE_TEXT.get(str(source), source)})" if isinstance(source, str) else ""
    # The method verbatim and last, outside any parenthesis: flattening its own
    # parentheses once turned "t(Bell-McCaffrey df)" into "tBell-McCaffrey df".
    # A failed model check (cost_ratios' ci_note) is said with the interval it changed.
    note = str(row.get("ci_note") or "")
    return (
        f"WITH / WITHOUT ratio of {what}{counted}: {iv} over {int(row['n'])} pairs in "
        f"{int(row['n_tasks'])} tasks, {_pct(_confidence(doc))} % CI by "
        f"{method_words(row.get('method'))}." + (f" Note: {note}." if note else "")
    )


def _source_sentence(row: Mapping[str, Any], digits: int | None, percent: bool) -> str:
    """The transcript ratio beside the billed one the cost table uses, and how far apart."""
    d = statistic_digits("estimate", digits=digits, percent=percent)
    iv = format_interval(
        [_f(row.get("estimate"))], [_f(row.get("ci_low"))], [_f(row.get("ci_high"))], d
    )[0]
    what = _COST_TEXT.get(str(row["statistic"]), str(row["statistic"]))
    return (
        f"Counted on the transcripts instead ({_SOURCE_TEXT['transcript']}), the ratio of "
        f"{what} is {iv}; billed / transcript = {_f(row.get('billed_over_transcript')):.3f}."
    )


# Where a token count comes from, as the cost sentences say it (results.json token_source).
_SOURCE_TEXT = {
    "billed": "billed: the harness's reported usage, summed over turns",
    "transcript": "transcript: cl100k_base on what each run read and wrote, each token once",
    "as given": "token counts as given in the frame",
}


def result_sentences(results: Any, *, digits: int | None = None, percent: bool = True) -> list[str]:
    """Ready sentences: one per headline and consensus row, agreement pair and cost metric.

    Each carries n (pairs, or judged pair-orders for a rubric judged in both orders), the
    number of tasks, what was left out, the judge and the interval's method.
    """
    doc = _load(results)
    if is_comparison(doc):  # K arms: pairs, rank sets, costs and the frontier
        return [markdown_text(s) for s in comparison_sentences(doc, digits=digits, percent=percent)]
    out: list[str] = [s for s in [_audit_fail_sentence(doc)] if s]
    test = _primary_test(doc)
    if test is not None:
        out.append(_primary_test_sentence(test, digits, percent).strip())
    for tname in _MACRO_TABLES:
        table = _table(doc, tname)
        if table is not None:
            out += [_win_sentence(r, doc, digits, percent) for r in table.to_dict("records")]
    agreement = _table(doc, "agreement")
    if agreement is not None:
        for r in agreement.to_dict("records"):
            s = _agreement_sentence(r, doc, digits, percent)
            if s is not None:
                out.append(s)
    cost = _table(doc, "cost")
    if cost is not None:
        out += [_cost_sentence(r, doc, digits, percent) for r in cost.to_dict("records")]
    sources = _table(doc, "cost_sources")
    if sources is not None:
        out += [_source_sentence(r, digits, percent) for r in sources.to_dict("records")
                if r.get("token_source") == "transcript"]  # fmt: skip
    # Judge, rubric and arm names come from the data: no live HTML in the Markdown.
    return [markdown_text(s) for s in out]


def _caveats(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The audit's rows that did not pass (``headline_audit``: fail first), or none."""
    rows = doc["tables"].get("headline_audit")
    return [dict(r) for r in rows] if isinstance(rows, list) else []


def _pair_words(row: Mapping[str, Any]) -> str:
    """K arms: "v1 vs none, " before what a row of one pair of arms says ("" for two)."""
    return "" if row.get("arm_a") is None else f"{row['arm_a']} vs {row['arm_b']}, "


def _audit_fail_sentence(doc: Mapping[str, Any]) -> str:
    """Every ``fail`` of the methodology audit in one sentence (empty when none fails), the
    first words of the headline paragraph and of the sentences, e.g. "The methodology audit
    fails judge_disagreement: Above the 20.0 % trigger ...: blind-pair: ... (21.9 %) ...".
    """
    fails = [r for r in _caveats(doc) if str(r.get("status")) == "fail"]
    if not fails:
        return ""
    parts = [f"{_pair_words(r)}{r['check']}: {str(r['detail']).rstrip('.')}" for r in fails]
    lead = "The methodology audit fails " + (f"{len(fails)} checks: " if len(fails) > 1 else "")
    return lead + "; ".join(parts) + "."


def _choice(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The headline row shown first and its rule (``headline_choice``), or None."""
    rows = doc["tables"].get("headline_choice")
    return rows[0] if isinstance(rows, list) and rows else None


def _plan(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The declared analysis plan results.json records (``provenance.plan``), or None."""
    plan = doc.get("provenance", {}).get("plan")
    return plan if isinstance(plan, Mapping) else None


def _declared_primary(doc: Mapping[str, Any]) -> tuple[str, str] | None:
    plan = _plan(doc)
    if plan is not None and isinstance(plan.get("primary"), Mapping):
        return str(plan["primary"]["rubric"]), str(plan["primary"]["judge"])
    # Older documents named it in the parameters.
    old = doc.get("parameters", {}).get("primary")
    return (str(old["rubric"]), str(old["judge"])) if isinstance(old, Mapping) else None


def _primary(
    doc: Mapping[str, Any], primary: Sequence[str] | None, *, first: bool = False
) -> dict[str, Any]:
    table = _table(doc, "headline")
    if table is None:
        raise DataError("no headline table in the results: nothing to state", field="tables")
    if primary is None:
        primary = _declared_primary(doc)
    if primary is None or first:
        choice = _choice(doc)
        if choice is not None:
            keys = table["rubric"].astype(str) + "\0" + table["judge"].astype(str)
            hit = table.loc[keys == f"{choice['rubric']}\0{choice['judge']}"]
            if len(hit):
                return hit.iloc[0].to_dict()
        return table.iloc[0].to_dict()
    rubric, judge = primary
    hit = table.loc[(table["rubric"] == rubric) & (table["judge"] == judge)]
    if hit.empty:
        cons = _table(doc, "consensus")
        if cons is not None:
            hit = cons.loc[(cons["rubric"] == rubric) & (cons["judge"] == judge)]
    if hit.empty:
        raise ValueError(f"no headline row for rubric {rubric!r} and judge {judge!r}")
    return hit.iloc[0].to_dict()


def _primary_test(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    """The row of the ``primary_test`` table (the declared test, computed), or None."""
    if not doc.get("provenance", {}).get("plan"):
        # No declared plan, no declared test: the table is null; not looking it up keeps a
        # report kernel's first cell from waiting for the rest of the page.
        return None
    table = _table(doc, "primary_test")
    return None if table is None else table.iloc[0].to_dict()


_TEST_NAMES = {
    "two-sided": "two-sided t test",
    "greater": "one-sided t test (WITH better)",
    "less": "one-sided t test (WITH worse)",
    "equivalence": "equivalence test (TOST)",
    "non-inferiority": "non-inferiority t test",
}


def _p_text(p: float) -> str:
    """A p-value at two significant digits (below 0.0001: "< 0.0001")."""
    return "< 0.0001" if p < 1e-4 else f"{p:.2g}"


def _test_interval(
    t: Mapping[str, Any], digits: int | None, percent: bool
) -> tuple[str, list[str]]:
    """The declared test's interval as text, "[22, ∞)" (rates in points when ``percent``),
    and its bounds as macro values ("--" for an unbounded side)."""
    stat = str(t["statistic"])
    rate = stat in _RATES
    d = statistic_digits(stat if rate else "estimate", digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent) if rate else 1.0
    cells = []
    for v in (_f(t.get("ci_low")), _f(t.get("ci_high"))):
        # results.json writes an infinite bound as null: the side the test leaves open.
        cells.append(None if not np.isfinite(v) else format_number([v * sc], d)[0])
    lo = cells[0] if cells[0] is not None else "−∞"
    hi = cells[1] if cells[1] is not None else "∞"
    left = "[" if cells[0] is not None else "("
    right = "]" if cells[1] is not None else ")"
    unit = (
        " points"
        if rate and sc == 100.0 and stat == "net_win"
        else (" %" if rate and sc == 100.0 else "")
    )
    return f"{left}{lo}, {hi}{right}{unit}", [c if c is not None else "--" for c in cells]


def _primary_test_sentence(t: Mapping[str, Any], digits: int | None, percent: bool) -> str:
    """The declared test in one sentence, e.g. "The declared test, a non-inferiority t test
    (13.8 df), gives p = 0.00039 at alpha 0.05 with the 95 % one-sided interval [22, ∞)
    points: WITH is non-inferior to WITHOUT within 0.1 (net win > -0.1)."."""
    conclusion = str(t.get("conclusion") or "")
    if str(t.get("decision")) == "no test" or t.get("p_value") is None:
        return f" The declared test of {t['statistic']}: {conclusion}."
    iv, _ = _test_interval(t, digits, percent)
    level = _pct(float(t["ci_level"]))
    # results.json holds an open side as null: a one-sided bound.
    side = "one-sided " if t.get("ci_low") is None or t.get("ci_high") is None else ""
    verdict = "rejects its null" if t["decision"] == "reject" else "does not reject its null"
    name = _TEST_NAMES.get(str(t["test"]), str(t["test"]))
    if t.get("df") is None:  # no t test: the total ratio's generalized pivotal interval
        what = f"generalized pivotal {name.replace(' t test', ' test')} (on its interval's draws)"
    else:
        what = f"{name} ({float(t['df']):.1f} df)"
    return (
        f" The declared test of {t['statistic']}, a {what}, "
        f"{verdict}: p = {_p_text(float(t['p_value']))} at alpha "
        f"{_g(t['alpha'])}, with the {level} % {side}interval {iv}, so {conclusion}."
    )


_SIDES = {
    "two-sided": "two-sided",
    "greater": "one-sided, WITH better",
    "less": "one-sided, WITH worse",
}


def _standing(doc: Mapping[str, Any], row: Mapping[str, Any], explicit: bool) -> str:
    """The sentence that says what kind of result the paragraph states."""
    plan = _plan(doc)
    if explicit:
        return ""
    if plan is None:
        choice = _choice(doc)
        if choice is None:
            return (
                " No analysis plan was declared, so this is the first row of the headline and "
                "exploratory, as is every test of the report."
            )
        return (
            " No analysis plan was declared, so this row is exploratory, as is every test of "
            f"the report; it is shown first by a stated rule: {choice['rule']}."
        )
    declared = _declared_primary(doc)
    if (str(row["rubric"]), str(row["judge"])) != declared:
        return (
            f" The plan's primary ({declared[1]} on the {declared[0]} rubric) is not among "
            "these results, so this row of the headline is exploratory."
        )
    margin = ""
    if plan.get("margin") is not None:
        margin = f", {plan.get('margin_kind')} margin {_g(plan['margin'])}"
    stat = str(plan.get("statistic"))
    sides = _SIDES.get(str(plan.get("sidedness")), plan.get("sidedness"))
    declared_as = f"{stat}, alpha {_g(plan['alpha'])}, {sides}{margin}"
    test = _primary_test(doc)
    said = "" if test is None else _primary_test_sentence(test, None, True)
    if stat == "net_win":
        return (
            f" This is the primary analysis declared in the plan ({declared_as}), tested "
            "alone; the report's other net-win tests are Holm-adjusted." + said
        )
    text = (
        f" The plan declares {stat} of this judge and rubric as its primary statistic "
        f"({declared_as}); every net-win test, this one included, is Holm-adjusted."
    )
    cost = _table(doc, "cost")
    if cost is not None and stat in set(cost["statistic"]):
        row = cost.loc[cost["statistic"] == stat].iloc[0].to_dict()
        text += " The primary result: " + _cost_sentence(row, doc, None, True)
    return text + said


def _arm_words(doc: Mapping[str, Any]) -> tuple[str, str]:
    """The arms as the headline card names them: ``WITH (Serena MCP)`` and ``WITHOUT
    (plain Claude Code)`` when the data name them (``provenance.arm_names``), else
    ``WITH`` and ``WITHOUT``."""
    names = (doc.get("provenance") or {}).get("arm_names") or {}
    out = []
    for arm in ("with", "without"):
        name = str(names.get(arm) or "").strip()
        label = arm.upper()
        out.append(f"{label} ({name})" if name and name != label else label)
    return out[0], out[1]


def _arm_short(doc: Mapping[str, Any]) -> str:
    """The WITH arm's own name where the data give one (``Serena MCP``), else ``WITH``."""
    name = str(((doc.get("provenance") or {}).get("arm_names") or {}).get("with") or "")
    return name.strip() or "WITH"


def headline_paragraph(
    results: Any,
    *,
    primary: Sequence[str] | None = None,
    digits: int | None = None,
    percent: bool = True,
) -> str:
    """The primary result in one paragraph of words, with its interval (plain text).

    The primary result is ``primary=(rubric, judge)``, else the declared plan's primary
    (``provenance["plan"]["primary"]`` of results.json, from ``plan.toml``), else the first
    row the ``headline_choice`` table names (its stated rule), which the paragraph then
    calls exploratory. Every ``fail`` of the methodology audit comes first
    (:func:`_audit_fail_sentence`), and a row whose rubric fails ``judge_disagreement`` says
    it is marked. The paragraph
    names the verdict, the judge, n, tasks and the method, says whether the interval of the
    net win excludes zero, adds the other judges' net wins, and says when data are simulated.
    With a plan, the verdict is the declared test's (the ``primary_test`` table: reject or
    not, in words), and a sentence gives its p-value, df and the interval it inverts.

    >>> from evalstats.report import compute_results
    >>> p = headline_paragraph(compute_results("data/sample", n_resamples=200, seed=0))
    >>> p.split(". ")[0]
    'On the with-without rubric, judged by Claude Sonnet 4, WITH beat WITHOUT'
    >>> "exploratory" in p
    True
    """
    doc = _load(results)
    explicit = primary is not None
    try:
        row = _primary(doc, primary)
    except ValueError:
        if explicit:
            raise
        # The plan names a row these results do not hold (its judge or rubric not selected).
        row = _primary(doc, ("", ""), first=True)
    pct = " %" if percent else ""
    pts = " percentage points" if percent else ""
    rubric = str(row["rubric"])
    lo, hi = _f(row.get("net_win_ci_low")), _f(row.get("net_win_ci_high"))
    w, wo = _arm_words(doc)
    short = _arm_short(doc)
    if row.get("arm_a") is not None:  # K arms: the pair of the row shown first, by name
        names = (doc.get("provenance") or {}).get("arm_names") or {}
        w, wo = (str(names.get(row[k], row[k])) for k in ("arm_a", "arm_b"))
        short = w
    if lo > 0:
        verdict = f"{w} beat {wo}"
    elif hi < 0:
        verdict = f"{wo} beat {w}"
    else:
        verdict = f"the data cannot tell {w} from {wo}"
    test = None if explicit else _primary_test(doc)
    if (
        test is not None
        and (str(test["rubric"]), str(test["judge"])) == (rubric, str(row["judge"]))
        and test.get("decision") in ("reject", "not reject")
        and str(test["statistic"]) in _RATES
    ):
        # A plan declares its test: the card's verdict is that test's, not the interval's.
        words = str(test["conclusion"])
        verdict = (
            f"the declared test finds that {words}"
            if test["decision"] == "reject"
            else f"the declared test does not show that {words.removeprefix('not shown: ')}"
        )
    conf = _pct(_confidence(doc))
    text = (
        f"On the {rubric} rubric, judged by {judge_label(str(row['judge']))}, {verdict}. "
        f"{short} won {_iv(row, 'win_rate', digits, percent, pct)} of "
        f"{_units(row, rubric in _ordered_rubrics(doc))} in {int(row['n_clusters'])} tasks, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and lost "
        f"{_iv(row, 'loss_rate', digits, percent, pct)}: a net win of "
        f"{_iv(row, 'net_win', digits, percent, pts)}, {_method(row, _confidence(doc))}: "
        f"the {conf} % interval {'excludes' if lo > 0 or hi < 0 else 'includes'} zero."
    )
    text += _standing(doc, row, explicit)
    if str(row.get("audit") or ""):
        text += (
            f" This row is marked ({row['audit']}): its judges disagree above the trigger, "
            "so it is not a plain result."
        )
    others = []
    for tname in _MACRO_TABLES:
        t = _table(doc, tname)
        if t is None:
            continue
        same = t.loc[(t["rubric"] == rubric) & (t["judge"] != row["judge"])]
        others += [
            f"{_iv(r, 'net_win', digits, percent, '')} by the {judge_label(str(r['judge']))}"
            if str(r["judge"]).startswith("consensus:")
            else f"{_iv(r, 'net_win', digits, percent, '')} by {judge_label(str(r['judge']))}"
            for r in same.to_dict("records")
        ]
    if others:
        text += " The other judges on this rubric: a net win of " + "; ".join(others) + "."
    if doc.get("simulated"):
        text += " These data are simulated."
    fails = _audit_fail_sentence(doc)
    return markdown_text((fails + " " + text) if fails else text)


def sentences_markdown(results: Any, *, digits: int | None = None, percent: bool = True) -> str:
    """The headline paragraph and every sentence, as a Markdown document."""
    doc = _load(results)
    head = (
        [] if is_comparison(doc) else [headline_paragraph(doc, digits=digits, percent=percent), ""]
    )
    body = ["# Results in words", "", *head]
    body += [f"- {s}" for s in result_sentences(doc, digits=digits, percent=percent)]
    return "\n".join(body) + "\n"
