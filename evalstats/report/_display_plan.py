"""The headline card and the declared plan under the tests: what the report page says first.

The card is the primary result in one paragraph of words
(:func:`evalstats.report.headline_paragraph`); the tables of tests mark the plan's primary
row and say, under them, what the plan declares and what Holm's adjustment covers (issue 11:
primary and Holm; issue 14: the card).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ._display import _display, show_table, show_unavailable, table_view

__all__ = ["plan_sentence", "show_headline_card", "show_tests"]


_PRIMARY_MARK = "★ primary"
_SIDES = {"two-sided": "two-sided", "greater": "one-sided (WITH better)", "less": "one-sided"}


def show_headline_card(results: Any) -> None:
    """The primary result in one paragraph of words, at the top of the report
    (:func:`evalstats.report.headline_paragraph`: the declared primary, else the
    first headline row, called exploratory)."""
    from ._eval_labels import estimate_note
    from ._results_doc import _load
    from ._sentences import _caveats, _pair_words, headline_paragraph

    if results.tables.get("headline") is None:
        show_unavailable(results, "headline")
        return
    text = headline_paragraph(results) + estimate_note(results.tables["headline"])
    # Every fail opens the paragraph; the other statuses (warn, unknown) are listed right
    # under the card, never left 14,000 px below in the audit section alone.
    rest = [r for r in _caveats(_load(results)) if str(r.get("status")) != "fail"]
    items = "".join(
        f"<li><strong>{html.escape(str(r['status']))}</strong> "
        f"{html.escape(_pair_words(r) + str(r['check']))}: "
        f"{html.escape(str(r['detail']))}</li>"
        for r in rest
    )
    under = (
        f'<p class="headline-caveats-title">The audit also found ({len(rest)}):</p>'
        f'<ul class="headline-caveats">{items}</ul>'
        if rest
        else ""
    )
    plain = "".join(f"\n- {r['status']} {_pair_words(r)}{r['check']}: {r['detail']}" for r in rest)
    _display(
        '<section class="headline-card" aria-label="headline result"><p><strong>Headline.'
        f"</strong> {html.escape(text)}</p>{under}</section>",
        f"Headline. {text}" + (f"\nThe audit also found ({len(rest)}):{plain}" if rest else ""),
    )


def plan_sentence(results: Any) -> str:
    """What the page says under the headline table about the declared analysis plan and the
    Holm adjustment (plain text)."""
    plan = results.provenance.get("plan")
    tables = [table_view(results, t) for t in ("headline", "consensus")]
    n_tests = sum(
        int(t["net_win_p"].notna().sum()) for t in tables if t is not None and "net_win_p" in t
    )
    if not plan:
        return (
            "No analysis plan declared: every test below is exploratory. net_win_p_holm "
            f"adjusts the {n_tests} net-win tests of the headline and consensus tables together "
            "(Holm's step-down, which holds under any dependence between the judges)."
        )
    primary = plan["primary"]
    found = any(t is not None and "primary" in t and bool(t["primary"].any()) for t in tables)
    cost = results.tables.get("cost")
    if found:
        where = f"marked {_PRIMARY_MARK}"
    elif cost is not None and primary["statistic"] in set(cost["statistic"].astype(str)):
        where = f"a cost ratio: the {primary['statistic']} row of the cost table"
    else:
        where = "not among these rows (its judge or rubric is not in the data selected)"
    margin = ""
    if plan.get("margin") is not None:
        margin = f", {plan['margin_kind']} margin {plan['margin']:g}"
    sides = _SIDES.get(plan["sidedness"], plan["sidedness"])
    text = (
        f"Declared analysis plan ({plan.get('file') or 'plan'}, sha256 {plan['sha256'][:12]}…): "
        f"primary {primary['statistic']} of {primary['judge']} on the {primary['rubric']} "
        f"rubric, {where}; alpha {plan['alpha']:g}, {sides}{margin}. "
    )
    if primary["statistic"] == "net_win":
        text += (
            "The primary is tested alone at alpha; the other net-win tests of the headline "
            "and consensus tables form the Holm family (net_win_p_holm)."
        )
    else:
        text += (
            "The primary statistic is not a net win, so every net-win test is secondary and "
            "Holm-adjusted together (net_win_p_holm)."
        )
    test = results.tables.get("primary_test")
    if test is not None and len(test):
        row = test.iloc[0]
        if row["decision"] == "no test":
            text += f" The declared test (primary_test, below): {row['conclusion']}."
        else:
            p = float(row["p_value"])
            shown = "< 0.0001" if p < 1e-4 else f"{p:.2g}"
            text += (
                f" The declared test is computed in the primary_test table below "
                f"({row['test']}, p = {shown}, {row['decision']}); net_win_p here is the "
                "two-sided score test of net win = 0."
            )
    elif plan["sidedness"] != "two-sided":
        text += (
            " net_win_p is two-sided: the one-sided test at alpha rejects when net_win_p is "
            "below 2 alpha with the estimate on the declared side."
        )
    return text


def show_tests(
    results: Any,
    name: str,
    *,
    columns: Sequence[str] | None = None,
    plan_note: bool = True,
    **kwargs: Any,
) -> None:
    """:func:`show_table` of a table of tests with the plan's primary row marked
    (``★ primary`` in a ``primary`` text column), and the plan sentence under it
    (:func:`plan_sentence`) when ``plan_note``."""
    from types import SimpleNamespace

    table = table_view(results, name)
    if table is not None and "primary" in table.columns:
        mark = table["primary"].astype(bool).map({True: _PRIMARY_MARK, False: ""})
        table = table.assign(primary=mark)
    shown = SimpleNamespace(
        tables={name: table} if table is not None else {}, unavailable=results.unavailable
    )
    show_table(shown, name, columns=columns, **kwargs)
    if plan_note and table is not None:
        text = plan_sentence(results)
        _display(f'<p class="note">{html.escape(text)}</p>', text)
