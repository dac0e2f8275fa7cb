"""The comparison report's export: its tables as text frames and its results in words.

A results document of K arms (its comparison page's tables ``compare``, ``rank``, ``rank_sets``,
``beats``, ``arm_costs``, ``pareto``) is exported by :func:`comparison_tables` (``est [lo,
hi]`` text frames that :func:`evalstats.report.latex_tables` and
:func:`~evalstats.report.markdown_tables` typeset like every other table) and
:func:`comparison_sentences`. Every number is read from results.json; every interval's
method is the row's ``method`` field, in :func:`~evalstats.report.method_words`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..stats.formatting import format_interval, format_number, statistic_digits, statistic_scale
from ._results_doc import _confidence, _pct, method_words

__all__ = ["COMPARISON_TABLES", "comparison_sentences", "comparison_tables", "is_comparison"]

#: The tables of a comparison results document, in export order.
COMPARISON_TABLES = ("compare", "rank", "beats", "arm_costs", "pareto")


def is_comparison(doc: Mapping[str, Any]) -> bool:
    """True for a results document of K arms (it has the rank sets)."""
    return bool(doc["tables"].get("rank_sets")) and bool(doc["tables"].get("compare"))


def _long(doc: Mapping[str, Any], name: str) -> pd.DataFrame | None:
    rows = doc["tables"].get(name)
    return pd.DataFrame(rows) if rows else None


def _names(doc: Mapping[str, Any]) -> dict[str, str]:
    return dict((doc.get("provenance") or {}).get("arm_names") or {})


def _iv(rows: pd.DataFrame, stat: str, digits: int | None, percent: bool, *, lo="ci_low",
        hi="ci_high", unit: str = "", na_rep: str = "–") -> np.ndarray:  # fmt: skip
    d = statistic_digits(stat, digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent)
    return format_interval(rows["estimate"], rows[lo], rows[hi], d, scale=sc,
                           unit=unit if sc == 100.0 else "", na_rep=na_rep)  # fmt: skip


def _bounds(rows: pd.DataFrame, stat: str, digits: int | None, percent: bool) -> list[str]:
    d = statistic_digits(stat, digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent)
    lo = format_number(rows["sim_low"] * sc, d)
    hi = format_number(rows["sim_high"] * sc, d)
    return [f"[{a}, {b}]" for a, b in zip(lo, hi, strict=True)]


def _set(lo: Any, hi: Any) -> str:
    lo, hi = int(lo), int(hi)
    return str(lo) if lo == hi else f"{lo}–{hi}"


def _pcol(percent: bool) -> str:
    return " (%)" if percent else ""


def _by_judge(doc: Mapping[str, Any]) -> list[tuple[str | None, Mapping[str, Any]]]:
    """(judge, the document with only that judge's comparison rows) for each judge; the
    cost tables, which no judge made, kept whole."""
    judges = sorted({str(r["judge"]) for r in doc["tables"]["compare"] if "judge" in r})
    if not judges:
        return [(None, doc)]
    out = []
    for j in judges:
        tables = {
            k: [r for r in v if str(r.get("judge", j)) == j] if isinstance(v, list) else v
            for k, v in doc["tables"].items()
        }
        out.append((j, {**doc, "tables": tables}))
    return out


def comparison_tables(
    doc: Mapping[str, Any], *, digits: int | None = None, percent: bool = True, na_rep: str = "–"
) -> dict[str, pd.DataFrame]:
    """The comparison tables as text frames (arms by display name), by table name; with a
    ``Judge`` column first when the comparison names its judges (one block per judge).

    A ``method`` column is kept where one method makes the whole table (the LaTeX export
    moves it to the note); the others are said in the column names.
    """
    if not is_comparison(doc):
        return {}
    parts: dict[str, list[pd.DataFrame]] = {}
    for judge, sub in _by_judge(doc):
        for name, t in _tables_of_one(sub, digits, percent, na_rep).items():
            if name == "arm_costs" and name in parts:
                continue  # no judge made it: once
            if judge is not None and name != "arm_costs":
                t.insert(0, "Judge", judge)
            parts.setdefault(name, []).append(t)
    return {name: pd.concat(ts, ignore_index=True) for name, ts in parts.items()}


def _tables_of_one(
    doc: Mapping[str, Any], digits: int | None, percent: bool, na_rep: str
) -> dict[str, pd.DataFrame]:
    """:func:`comparison_tables` of one judge's rows."""
    names = _names(doc)
    nm = lambda a: names.get(str(a), str(a))  # noqa: E731
    p = _pcol(percent)
    out: dict[str, pd.DataFrame] = {}
    c = _long(doc, "compare")
    net = c.loc[c["statistic"] == "net_win"].reset_index(drop=True)
    out["compare"] = pd.DataFrame({
        "Arm": net["arm_a"].map(nm), "Against": net["arm_b"].map(nm),
        f"Net win{p}": _iv(net, "net_win", digits, percent, na_rep=na_rep),
        f"Simultaneous{p}": _bounds(net, "net_win", digits, percent),
        "p (Holm)": format_number(net["p_holm"], 3, na_rep=na_rep),
        "Verdicts": net["n"].astype(int), "Tasks": net["n_tasks"].astype(int),
        "method": net["method"],
    })  # fmt: skip
    r = _long(doc, "rank")
    sets = _long(doc, "rank_sets")
    if r is not None and sets is not None:
        st = r.loc[r["statistic"] == "strength"].set_index("arm")
        m = sets.loc[sets["statistic"] == "marginal_rank_set"].set_index("arm")
        s = sets.loc[sets["statistic"] == "simultaneous_rank_set"].set_index("arm")
        arms = s.sort_values("estimate", kind="stable").index
        st, m, s = st.reindex(arms), m.reindex(arms), s.reindex(arms)
        out["rank"] = pd.DataFrame({
            "Arm": [nm(a) for a in arms],
            "Strength": _iv(st, "strength", digits, False, na_rep=na_rep),
            "Rank": s["estimate"].astype(int).to_numpy(),
            "Marginal rank set": [_set(a, b) for a, b in zip(m["ci_low"], m["ci_high"], strict=True)],
            "Simultaneous rank set": [_set(a, b) for a, b in zip(s["ci_low"], s["ci_high"], strict=True)],
            "May be best": np.where(s["in_tau_best"].astype(bool), "yes", "no"),
            "method": st["method"].to_numpy(),
        })  # fmt: skip
    b = _long(doc, "beats")
    if b is not None:
        out["beats"] = pd.DataFrame({
            "Arm": b["arm"].map(nm), "Opponent": b["opponent"].map(nm),
            "P(beats)": _iv(b, "p_beats", digits, False, na_rep=na_rep), "method": b["method"],
        })  # fmt: skip
    k = _long(doc, "arm_costs")
    if k is not None:
        view = {}
        for stat, label in (("tokens_total_ratio", "Tokens"), ("wall_total_ratio", "Wall-clock")):
            rows = k.loc[k["statistic"] == stat].set_index("arm")
            if len(rows):
                view[label] = pd.Series(_iv(rows, "ratio", digits, False, na_rep=na_rep),
                                        index=rows.index)  # fmt: skip
        cost = pd.DataFrame(view)
        first = k.drop_duplicates("arm").set_index("arm")
        cost.insert(0, "Arm", [nm(a) for a in cost.index])
        cost["Against"] = first["reference"].reindex(cost.index).map(nm)
        cost["Pairs"] = first["n"].reindex(cost.index).astype(int)
        cost["Tasks"] = first["n_tasks"].reindex(cost.index).astype(int)
        src = k["token_source"].dropna().astype(str).unique() if "token_source" in k else []
        if len(src):
            cost["token_source"] = src[0]
        cost["method"] = k["method"].iloc[0]
        out["arm_costs"] = cost.reset_index(drop=True)
    pr = _long(doc, "pareto")
    if pr is not None:
        # The reference's quality and cost are 0 and 1 by definition: no interval to print.
        ref = (pr["method"] == "reference").to_numpy()
        pr.loc[ref, ["ci_low", "ci_high"]] = np.nan
        metric = [x for x in pr["statistic"].unique() if x not in ("net_win", "p_frontier")][0]
        q = pr.loc[pr["statistic"] == "net_win"].set_index("arm")
        cc = pr.loc[pr["statistic"] == metric].set_index("arm")
        pf = pr.loc[pr["statistic"] == "p_frontier"].set_index("arm")
        out["pareto"] = pd.DataFrame({
            "Arm": [nm(a) for a in q.index],
            f"Net win{p}": _iv(q, "net_win", digits, percent, na_rep=na_rep),
            "Token ratio" if metric.startswith("tokens") else "Wall-clock ratio":
                _iv(cc, "ratio", digits, False, na_rep=na_rep),
            "P(on frontier)": format_number(pf["estimate"].reindex(q.index), 2, na_rep=na_rep),
            "On frontier": np.where(q["on_frontier"].astype(bool), "yes", "no"),
            # the net win's interval is the compare table's (one quantity, one interval)
            "method": ", ".join(sorted(set(q["method"].astype(str)) - {"reference"})),
        })  # fmt: skip
    return out


def comparison_sentences(
    doc: Mapping[str, Any], *, digits: int | None = None, percent: bool = True
) -> list[str]:
    """The comparison in words: each pair's net win (marginal and simultaneous interval,
    Holm p), each arm's rank sets, the arms that may be best, cost ratios, the frontier."""
    if not is_comparison(doc):
        return []
    out: list[str] = []
    for i, (judge, sub) in enumerate(_by_judge(doc)):
        said = _sentences_of_one(sub, digits, percent, costs=i == 0)
        out += [f"Judged by {judge}: {s}" if judge else s for s in said]
    if doc.get("simulated"):
        out.append("These data are simulated.")
    return out


def _sentences_of_one(
    doc: Mapping[str, Any], digits: int | None, percent: bool, *, costs: bool
) -> list[str]:
    """:func:`comparison_sentences` of one judge's rows (the cost ratios when ``costs``)."""
    names = _names(doc)
    nm = lambda a: names.get(str(a), str(a))  # noqa: E731
    conf = _pct(_confidence(doc))
    pts = " points" if percent else ""
    out = []
    c = _long(doc, "compare")
    net = c.loc[c["statistic"] == "net_win"].reset_index(drop=True)
    ivs = _iv(net, "net_win", digits, percent, unit=pts)
    sims = _bounds(net, "net_win", digits, percent)
    for row, iv, sim in zip(net.to_dict("records"), ivs, sims, strict=True):
        out.append(
            f"{nm(row['arm_a'])} against {nm(row['arm_b'])}: a net win of {iv} over "
            f"{int(row['n'])} verdicts in {int(row['n_tasks'])} tasks ({conf} % CI by "
            f"{method_words(row['method'])}; simultaneous over the {len(net)} pairs {sim}; "
            f"Holm-adjusted p = {row['p_holm']:.3g})."
        )
    sets = _long(doc, "rank_sets")
    s = sets.loc[sets["statistic"] == "simultaneous_rank_set"].set_index("arm")
    m = sets.loc[sets["statistic"] == "marginal_rank_set"].set_index("arm")
    for arm in s.sort_values("estimate", kind="stable").index:
        out.append(
            f"{nm(arm)} ranks {int(s.at[arm, 'estimate'])} of {len(s)}: simultaneous {conf} % "
            f"rank set {_set(s.at[arm, 'ci_low'], s.at[arm, 'ci_high'])} "
            f"({method_words(s.at[arm, 'method'])}), marginal "
            f"{_set(m.at[arm, 'ci_low'], m.at[arm, 'ci_high'])}."
        )
    best = [nm(a) for a in s.index if bool(s.at[a, "in_tau_best"])]
    out.append(f"With {conf} % confidence the best arm is among: {', '.join(best)}.")
    k = _long(doc, "arm_costs")
    if k is not None and costs:
        for row, iv in zip(k.to_dict("records"), _iv(k, "ratio", digits, False), strict=True):
            what = (
                "total tokens" if row["statistic"].startswith("tokens") else "total wall-clock time"
            )
            src = (
                f" ({row['token_source']} counts)"
                if isinstance(row.get("token_source"), str)
                else ""
            )
            out.append(
                f"{nm(row['arm'])} / {nm(row['reference'])} ratio of {what}{src}: {iv} over "
                f"{int(row['n'])} pairs in {int(row['n_tasks'])} tasks, {conf} % CI by "
                f"{method_words(row['method'])}."
            )  # fmt: skip
    pr = _long(doc, "pareto")
    if pr is not None:
        pf = pr.loc[pr["statistic"] == "p_frontier"]
        n_b = int(pf["n"].iloc[0])
        on = [nm(a) for a, f in zip(pf["arm"], pf["on_frontier"], strict=True) if f]
        probs = ", ".join(
            f"{nm(a)} {p:.2f}" for a, p in zip(pf["arm"], pf["estimate"], strict=True)
        )
        out.append(
            f"On the cost-quality frontier at the estimates: {', '.join(on) or 'none'}; the "
            f"probability of being on it over {n_b} task-bootstrap resamples: {probs}."
        )
    return out
