"""The paper export of a report's ``results.json``: booktabs LaTeX and Markdown tables of
``est [lo, hi]`` cells, one LaTeX macro per number (``\\es<Rubric><Judge><Statistic>[Lo|Hi]``,
name parts in ASCII letters) and sentences that say the numbers with n, tasks, judge and method.
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._display import judge_label, judge_model
from ..errors import DataError, ParameterError
from ..records import atomic_write
from ..stats.formatting import (
    format_interval,
    format_number,
    interval_columns,
    statistic_digits,
    statistic_scale,
    summarize,
)
from ._results import (
    _AGREEMENT_MACROS,
    _COST_TEXT,
    _MACRO_TABLES,
    _RATES,
    EXPORT_TABLES,
    _confidence,
    _f,
    _g,
    _load,
    _pct,
    _table,
    method_words,
)
from ._untrusted import markdown_text, show_bidi

__all__ = [
    "export",
    "formatted_tables",
    "headline_paragraph",
    "latex_macros",
    "latex_tables",
    "markdown_tables",
    "result_sentences",
    "sentences_markdown",
]

_DIGITS = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine")
_LETTERS = re.compile(r"^[A-Za-z]+$")
_RATIO = ("estimate", "ci_low", "ci_high")


def word(text: str, aliases: Mapping[str, str] | None = None) -> str:
    """``text`` as a macro-name part of ASCII letters (digits spelled out, accents dropped,
    other characters by their Unicode names).

    >>> word("with-without"), word("ac1"), word("kappa_boot"), word("café"), word("β")
    ('WithWithout', 'AcOne', 'KappaBoot', 'Cafe', 'GreekSmallLetterBeta')
    """
    if aliases and text in aliases:
        alias = aliases[text]
        if not _LETTERS.match(alias):
            raise ParameterError(f"alias for {text!r} must be ASCII letters only, got {alias!r}")
        return alias
    plain = "".join(
        c if c.isascii() else f" {unicodedata.name(c, '').title()} "
        for c in unicodedata.normalize("NFKD", text)
        if not unicodedata.combining(c)
    )
    tokens = re.findall(r"[A-Za-z]+|\d", plain)
    out = "".join(t[:1].upper() + t[1:] if t.isalpha() else _DIGITS[int(t)] for t in tokens)
    if not out:
        raise DataError(f"{text!r} gives no letters for a macro name: pass an alias for it")
    return out


def judge_word(judge: str, aliases: Mapping[str, str] | None = None) -> str:
    """Macro-name part of a judge: its model (``ClaudeSonnetFour``) unless aliased."""
    if aliases and judge in aliases:
        return word(judge, aliases)
    return word(judge_model(judge))


def is_comparison(doc: Mapping[str, Any]) -> bool:
    """True for a results document of K arms (it has the rank sets)."""
    return bool(doc["tables"].get("rank_sets")) and bool(doc["tables"].get("compare"))


def _long(doc: Mapping[str, Any], name: str) -> pd.DataFrame | None:
    rows = doc["tables"].get(name)
    return pd.DataFrame(rows) if rows else None


def _ivs(rows: Any, stat: str, digits: int | None, percent: bool, *, unit: str = "",
         na_rep: str = "–", cols: Sequence[str] = _RATIO) -> np.ndarray:  # fmt: skip
    d = statistic_digits(stat, digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent)
    return format_interval(*(rows[c] for c in cols), d, scale=sc,
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


def _by_judge(doc: Mapping[str, Any]) -> list[tuple[str | None, Mapping[str, Any]]]:
    """(judge, the document with that judge's comparison rows) for each judge."""
    judges = sorted({str(r["judge"]) for r in doc["tables"]["compare"] if "judge" in r})
    if not judges:
        return [(None, doc)]
    return [
        (j, {**doc, "tables": {k: [r for r in v if str(r.get("judge", j)) == j]
                               if isinstance(v, list) else v for k, v in doc["tables"].items()}})
        for j in judges
    ]  # fmt: skip


def comparison_tables(
    doc: Mapping[str, Any], *, digits: int | None = None, percent: bool = True, na_rep: str = "–"
) -> dict[str, pd.DataFrame]:
    """The K-arm comparison tables as text frames (arms by display name), by table name,
    with a ``Judge`` column first when the comparison names its judges."""
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


def _by_arm(frame: pd.DataFrame, stat: str) -> pd.DataFrame:
    return frame.loc[frame["statistic"] == stat].set_index("arm")


def _one(doc: Mapping[str, Any]) -> tuple[Any, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(display name of an arm, net-win rows, simultaneous and marginal rank sets by arm)."""
    names = dict((doc.get("provenance") or {}).get("arm_names") or {})
    c, sets = _long(doc, "compare"), _long(doc, "rank_sets")
    net = c.loc[c["statistic"] == "net_win"].reset_index(drop=True)
    s, m = _by_arm(sets, "simultaneous_rank_set"), _by_arm(sets, "marginal_rank_set")
    return lambda a: names.get(str(a), str(a)), net, s, m


def _tables_of_one(
    doc: Mapping[str, Any], digits: int | None, percent: bool, na_rep: str
) -> dict[str, pd.DataFrame]:
    nm, net, s, m = _one(doc)
    iv = lambda rows, stat, pct=False: _ivs(rows, stat, digits, pct, na_rep=na_rep)  # noqa: E731
    p = " (%)" if percent else ""
    yes = lambda flags: np.where(flags.astype(bool), "yes", "no")  # noqa: E731
    out = {"compare": pd.DataFrame({
        "Arm": net["arm_a"].map(nm), "Against": net["arm_b"].map(nm),
        f"Net win{p}": iv(net, "net_win", percent),
        f"Simultaneous{p}": _bounds(net, "net_win", digits, percent),
        "p (Holm)": [_p_text(p, na_rep) for p in net["p_holm"]],
        "Verdicts": net["n"].astype(int), "Tasks": net["n_tasks"].astype(int),
        "method": net["method"],
    })}  # fmt: skip
    if (r := _long(doc, "rank")) is not None:
        arms = s.sort_values("estimate", kind="stable").index
        st, m, s = _by_arm(r, "strength").reindex(arms), m.reindex(arms), s.reindex(arms)
        out["rank"] = pd.DataFrame({
            "Arm": [nm(a) for a in arms], "Strength": iv(st, "strength"),
            "Rank": s["estimate"].astype(int).to_numpy(),
            "Marginal rank set": list(map(_set, m["ci_low"], m["ci_high"])),
            "Simultaneous rank set": list(map(_set, s["ci_low"], s["ci_high"])),
            "May be best": yes(s["in_tau_best"]), "method": st["method"].to_numpy(),
        })  # fmt: skip
    if (b := _long(doc, "beats")) is not None:
        out["beats"] = pd.DataFrame({
            "Arm": b["arm"].map(nm), "Opponent": b["opponent"].map(nm),
            "P(beats)": iv(b, "p_beats"), "method": b["method"],
        })  # fmt: skip
    if (k := _long(doc, "arm_costs")) is not None:
        rows = {label: _by_arm(k, stat) for stat, label in
                (("tokens_total_ratio", "Tokens"), ("wall_total_ratio", "Wall-clock"))}  # fmt: skip
        cost = pd.DataFrame({c: pd.Series(iv(r, "ratio"), index=r.index)
                             for c, r in rows.items() if len(r)})  # fmt: skip
        first = k.drop_duplicates("arm").set_index("arm").reindex(cost.index)
        cost.insert(0, "Arm", [nm(a) for a in cost.index])
        cost["Against"] = first["reference"].map(nm)
        cost["Pairs"], cost["Tasks"] = first["n"].astype(int), first["n_tasks"].astype(int)
        src = k["token_source"].dropna().astype(str).unique() if "token_source" in k else []
        if len(src):
            cost["token_source"] = src[0]
        cost["method"] = k["method"].iloc[0]
        out["arm_costs"] = cost.reset_index(drop=True)
    if (pr := _long(doc, "pareto")) is not None:
        # The reference's quality and cost are 0 and 1 by definition: no interval to print.
        pr.loc[(pr["method"] == "reference").to_numpy(), ["ci_low", "ci_high"]] = np.nan
        metric = [x for x in pr["statistic"].unique() if x not in ("net_win", "p_frontier")][0]
        q, pf = _by_arm(pr, "net_win"), _by_arm(pr, "p_frontier")["estimate"].reindex
        out["pareto"] = pd.DataFrame({
            "Arm": [nm(a) for a in q.index], f"Net win{p}": iv(q, "net_win", percent),
            "Token ratio" if metric.startswith("tokens") else "Wall-clock ratio":
                iv(_by_arm(pr, metric), "ratio"),
            "P(on frontier)": format_number(pf(q.index), 2, na_rep=na_rep),
            "On frontier": yes(q["on_frontier"]),
            # the net win's interval is the compare table's (one quantity, one interval)
            "method": ", ".join(sorted(set(q["method"].astype(str)) - {"reference"})),
        })  # fmt: skip
    return out


def comparison_sentences(
    doc: Mapping[str, Any], *, digits: int | None = None, percent: bool = True
) -> list[str]:
    """The K-arm comparison in words: net wins, rank sets, cost ratios, the frontier."""
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
    nm, net, s, m = _one(doc)
    conf = _pct(_confidence(doc))
    ivs = _ivs(net, "net_win", digits, percent, unit=" points" if percent else "")
    sims = _bounds(net, "net_win", digits, percent)
    out = [
        f"{nm(row['arm_a'])} against {nm(row['arm_b'])}: a net win of {iv} over "
        f"{int(row['n'])} verdicts in {int(row['n_tasks'])} tasks ({conf} % CI by "
        f"{method_words(row['method'])}; simultaneous over the {len(net)} pairs {sim}; "
        f"Holm-adjusted p {_p_text(row['p_holm'], eq='= ')})."
        for row, iv, sim in zip(net.to_dict("records"), ivs, sims, strict=True)
    ]
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
        for row, iv in zip(k.to_dict("records"), _ivs(k, "ratio", digits, False), strict=True):
            what = "tokens" if row["statistic"].startswith("tokens") else "wall-clock time"
            src = row.get("token_source")
            src = f" ({src} counts)" if isinstance(src, str) else ""
            out.append(
                f"{nm(row['arm'])} / {nm(row['reference'])} ratio of total {what}{src}: {iv} over "
                f"{int(row['n'])} pairs in {int(row['n_tasks'])} tasks, {conf} % CI by "
                f"{method_words(row['method'])}."
            )  # fmt: skip
    pr = _long(doc, "pareto")
    if pr is not None:
        pf = pr.loc[pr["statistic"] == "p_frontier"]
        on = [nm(a) for a, f in zip(pf["arm"], pf["on_frontier"], strict=True) if f]
        probs = ", ".join(
            f"{nm(a)} {p:.2f}" for a, p in zip(pf["arm"], pf["estimate"], strict=True)
        )
        out.append(
            f"On the cost-quality frontier at the estimates: {', '.join(on) or 'none'}; the "
            f"probability of being on it over {int(pf['n'].iloc[0])} task-bootstrap resamples: "
            f"{probs}."
        )
    return out


def formatted_tables(
    results: Any, *, digits: int | None = None, percent: bool = True, na_rep: str = "–"
) -> dict[str, pd.DataFrame]:
    """The exported tables present in ``results`` as text frames (``est [lo, hi]`` cells).

    >>> from evalstats.report import compute_results
    >>> res = compute_results("data/sample", n_resamples=200, seed=0)
    >>> t = formatted_tables(res)
    >>> sorted(t)
    ['agreement', 'consensus', 'cost', 'headline', 'per_task']
    >>> t["headline"].loc[0, "net_win (%)"]
    '35 [11, 55]'
    """
    doc = _load(results)
    out = {}
    for name, stats in EXPORT_TABLES.items():
        table = _table(doc, name)
        if table is None:
            continue
        have = {c.name for c in interval_columns(table)} | set(table.columns)
        pick = [s for s in stats if s in have]
        kw = {"statistics": pick, "digits": digits, "percent": percent, "na_rep": na_rep}
        if name == "cost" and "arm_a" in table.columns:  # K arms: each pair's rows
            pairs = table.groupby(["arm_a", "arm_b"], sort=False)[list(table.columns)]
            view = pairs.apply(lambda t, kw=kw: summarize(t.drop(columns=["arm_a", "arm_b"]), **kw))
            view = view.reset_index(level=[0, 1]).reset_index(drop=True)
        else:
            view = summarize(table, **kw)
        view = view.drop(columns=["confidence"], errors="ignore")
        if "audit" in view and not view["audit"].astype(str).str.strip().ne("").any():
            view = view.drop(columns=["audit"])
        out[name] = view
    out.update(comparison_tables(doc, digits=digits, percent=percent, na_rep=na_rep))
    return out


def _caption(doc: Mapping[str, Any], name: str, frame: pd.DataFrame) -> str:
    conf = _pct(_confidence(doc))
    methods = sorted(set(frame["method"].dropna().astype(str))) if "method" in frame else []
    how = f"; method: {', '.join(methods)}" if methods else ""
    sim = " Simulated data." if doc.get("simulated") else ""
    return f"{_title(doc, name)}: estimate [{conf} % CI]{how}; n_clusters = tasks.{sim}"


def _title(doc: Mapping[str, Any], name: str) -> str:
    """The table's title as the report captions it (the arms by name)."""
    if name == "cost" and not is_comparison(doc):
        return f"{_arm_short(doc)} / {_arm_short(doc, 'without')} cost ratios"
    return _TITLES.get(name, name.replace("_", " ").capitalize())


def latex_table(frame: pd.DataFrame) -> str:
    """A text frame as a booktabs ``tabular``: escaped, a math minus in numbers, ``$<$`` for a
    small p, long text (a method, a long name) in a ragged-right column that wraps."""
    show = functools.partial(show_bidi, controls=True)  # a blank line would end the tabular
    text = frame.astype(object).where(frame.notna(), "--").astype(str).map(show)
    text.columns = [show(str(c)) for c in text.columns]
    numbers = [c for c, f in zip(text.columns, frame, strict=True) if not _is_label(frame[f])]
    wrap = [c for c in text if c not in numbers and (c in _WRAP or text[c].str.len().max() > 30)]
    ragged = ">{\\raggedright\\arraybackslash}X"  # long text takes the width the rest leave
    align = "".join("r" if c in numbers else ragged if c in wrap else "l" for c in text.columns)
    tie = lambda cell: re.sub(r"(?<=\w) - (?=\w)", "~$-$~", cell)  # noqa: E731  "t(C - 1)"
    styler = (
        text.style.hide(axis="index")
        .format(escape="latex")
        .format(_latex_number, subset=numbers, escape="latex")
        .format(tie, subset=wrap, escape="latex")
        .format_index(escape="latex", axis="columns")
    )
    tex = styler.to_latex(hrules=True, column_format=align)
    if not wrap:
        return tex
    return tex.replace("{tabular}", "{tabularx}").replace(
        "{tabularx}{", "{tabularx}{\\linewidth}{", 1
    )


def _latex_number(cell: str) -> str:
    """A minus, not a hyphen, before a digit; ``< 0.001`` as math."""
    return re.sub(r"(?<![\w.])[-−](?=\d)", "$-$", cell).replace("< ", "$<$\\,")


def _is_label(col: pd.Series) -> bool:
    # Number cells start with a digit, a sign, "<" (a small p) or a bound's bracket; labels do not.
    if pd.api.types.is_numeric_dtype(col.dtype):
        return False
    s = col.dropna().astype(str)
    return bool(len(s)) and not s.str.match(r"^([\[(]?[-−–+<]?\s?\d|--$|–$)").all()


def markdown_table(frame: pd.DataFrame, *, caption: str | None = None) -> str:
    """A text frame as a GitHub-flavoured Markdown table (``|`` in a cell escaped)."""
    cell = lambda v: markdown_text(str(v)).replace("|", "\\|")  # noqa: E731
    align = [":---" if _is_label(frame[c]) else "---:" for c in frame.columns]
    body = frame.astype(object).where(frame.notna(), "").map(cell).to_numpy().tolist()
    lines = ["| " + " | ".join(r) + " |" for r in [list(map(cell, frame.columns)), align, *body]]
    return "\n".join(lines + (["", markdown_text(caption)] if caption else [])) + "\n"


_HEADERS = {  # else the name capitalized, "_" as " "
    "p (Holm)": "p (Holm)",
    "judge_a": "Judge A",
    "judge_b": "Judge B",
    "task_id": "Task",
    "statistic": "Ratio",
    "n": "n",
    "n_pairs": "Pairs",
    "n_tasks": "Tasks",
    "win_rate": "Win",
    "tie_rate": "Tie",
    "loss_rate": "Loss",
    "net_win": "Net win",
    "observed_agreement": "Agr.",
    "kappa_linear": "Kappa (linear)",
    "ac1": "AC1",
    "pabak": "PABAK",
    "estimate": "Ratio [CI]",
    "token_source": "Tokens",
    "arm_a": "Arm",
    "arm_b": "Against",
    "Marginal rank set": "Marginal set",
    "Simultaneous rank set": "Simultaneous set",
}
_JUDGE_COLUMNS = ("judge", "judge_a", "judge_b", "Judge")
_WRAP = ("Method", "Estimand")  # long text: wrapped
# Labels and counts every row shares go to the notes: a paper does not repeat a constant.
_SHARED = ("rubric", *_JUDGE_COLUMNS, "audit", "n", "n_pairs", "n_tasks")
# Each table's title as the report captions it.
_TITLES = {
    "headline": "Win, tie and loss per judge",
    "consensus": "Consensus verdicts",
    "agreement": "Agreement between judges, per rubric",
    "cost": "Cost ratios",
    "per_task": "Verdicts per task",
    "compare": "Net win per pair of arms",
    "rank": "Rank and rank sets of the arms",
    "beats": "P(arm beats opponent)",
    "arm_costs": "Cost ratio to the reference",
    "pareto": "Quality, cost and P(on frontier)",
}


def _header(col: str) -> str:
    stat, unit = (col[:-4], " (%)") if col.endswith(" (%)") else (col, "")
    return (_HEADERS.get(stat) or stat[:1].upper() + stat[1:].replace("_", " ")) + unit


def paper_table(
    doc: Mapping[str, Any], name: str, frame: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """A text frame as a paper prints it (human column names, short judge names, a single
    method moved to the notes); returns (frame, notes)."""
    # Judges as a reader names them ("Claude Sonnet 4") where unique, the full id in a note.
    ids = sorted({str(v) for c in _JUDGE_COLUMNS if c in frame for v in frame[c].dropna()})
    short = {j: judge_label(j) for j in ids}
    count = pd.Series(list(short.values())).value_counts()
    short = {j: (s if count[s] == 1 else j) for j, s in short.items()}
    out = frame.replace({c: short for c in _JUDGE_COLUMNS if c in frame})
    notes = [f"{s}: {j}." for j, s in short.items() if s != j]
    shared = [c for c in _SHARED if c in out and len(out) > 1 and out[c].nunique(dropna=False) == 1]
    notes += [f"{_header(c)}: {out[c].iloc[0]}." for c in shared]
    out = out.drop(columns=shared)
    methods = out["method"].dropna().astype(str).unique() if "method" in out else []
    if len(methods) == 1:
        m = methods[0]
        where = "" if m.startswith("iid") else " clustered by task"
        words = method_words(m)
        said = words if words == m else f"{words} ({m})"
        notes.append(f"{_pct(_confidence(doc))} % CI{where}: {said}.".replace("_", "\\_"))
        out = out.drop(columns="method")
    notes += _statistic_methods(doc, name, out)
    if "token_source" in out:
        sources = out["token_source"].replace("", None).dropna().astype(str).unique()
        if len(sources) == 1:
            notes.append(f"Token counts: {sources[0]}.")
            out = out.drop(columns="token_source")
    if "statistic" in out:
        out["statistic"] = out["statistic"].map(_ratio_name)
    if doc.get("simulated"):
        notes.append("Simulated data.")
    out.columns = [_header(str(c)) for c in out.columns]
    return out, notes


def _ratio_name(statistic: Any) -> Any:
    """``tokens_geomean_ratio`` -> ``Tokens, geometric mean`` (any other name as it is)."""
    what, _, how = str(statistic).removesuffix("_ratio").partition("_")
    if not how:
        return statistic
    how = {"geomean": "geometric mean", "wall": "wall-clock"}.get(how, how.replace("_", " "))
    return f"{ {'wall': 'Wall-clock'}.get(what, what.capitalize()) }, {how}"


def _statistic_methods(doc: Mapping[str, Any], name: str, shown: pd.DataFrame) -> list[str]:
    """The interval method of each shown statistic that carries its own (``kappa_method``)."""
    wide = _table(doc, name)
    said: dict[str, list[str]] = {}
    for stat in (str(c).removesuffix(" (%)") for c in shown.columns):
        if wide is not None and f"{stat}_method" in wide:
            methods = wide[f"{stat}_method"].dropna().astype(str).unique()
            if len(methods):
                how = "; ".join(method_words(m) for m in methods)
                said.setdefault(how, []).append(_header(stat))
    conf = _pct(_confidence(doc))
    return [f"{', '.join(cols)}: {conf} % CI by {how}." for how, cols in said.items()]


def _escape(text: str) -> str:
    styler = pd.DataFrame({"x": [show_bidi(text)]}).style.hide(axis="index")
    tex = styler.format(escape="latex").hide(axis="columns").to_latex()
    return tex.split("\n", 1)[1].rsplit("\\\\", 1)[0].strip()


def latex_tables(
    results: Any, *, digits: int | None = None, percent: bool = True
) -> dict[str, str]:
    """Each exported table as a ``table*`` float with ``\\caption`` then ``\\label``.

    Labels ``tab:evalstats-<name>``; set in ``\\small`` at natural width (booktabs, tabularx).

    >>> from evalstats.report import compute_results
    >>> tex = latex_tables(compute_results("data/sample", n_resamples=200, seed=0))
    >>> print(tex["headline"].splitlines()[4])
    \\caption{Win, tie and loss per judge: estimate [95 \\% CI].}
    """
    doc = _load(results)
    out = {}
    conf = _pct(_confidence(doc))
    for name, frame in formatted_tables(doc, digits=digits, percent=percent, na_rep="--").items():
        table, notes = paper_table(doc, name, frame)
        # The method's underscores are escaped already.
        said = " ".join("\\_".join(_escape(p) for p in n.split("\\_")) for n in notes)
        out[name] = (
            "% needs \\usepackage{booktabs,tabularx}\n\\begin{table*}[tbp]\n\\centering\\small\n"
            "\\setlength{\\tabcolsep}{4pt}\n"
            f"\\caption{{{_escape(f'{_title(doc, name)}: estimate [{conf} % CI].')}}}\n"
            f"\\label{{tab:evalstats-{name.replace('_', '-')}}}\n"
            + latex_table(table)
            + f"\\par\\smallskip\n\\parbox{{\\linewidth}}{{\\footnotesize {said}}}\n\\end{{table*}}\n"
        )
    return out


def markdown_tables(
    results: Any, *, digits: int | None = None, percent: bool = True
) -> dict[str, str]:
    """Markdown of each exported table, its caption below it."""
    doc = _load(results)
    return {
        name: markdown_table(frame, caption=_caption(doc, name, frame))
        for name, frame in formatted_tables(doc, digits=digits, percent=percent).items()
    }


class _Names:
    """Macro name -> (value, source); a second source for one name is an error."""

    def __init__(self, digits: int | None, percent: bool) -> None:
        self.items: dict[str, tuple[str, str]] = {}
        self.digits, self.percent = digits, percent

    def add(self, name: str, value: str, source: str) -> None:
        full = "es" + name
        if full in self.items and self.items[full][1] != source:
            raise DataError(
                f"macro name \\{full} stands for both {self.items[full][1]!r} and {source!r}: "
                "pass aliases={...} (--alias NAME=Letters) giving one of them other letters"
            )
        self.items[full] = (value, source)

    def interval(self, name: str, src: str, row: Mapping[str, Any], cols: Sequence[Any],
                 kind: str) -> None:  # fmt: skip
        """``name`` (estimate), ``name``Lo and ``name``Hi from ``cols`` of ``row`` (None: none)."""
        d = statistic_digits(kind, digits=self.digits, percent=self.percent)
        sc = statistic_scale(kind, percent=self.percent)
        est, lo, hi = cols
        picked = [("", est)] + (
            [("Lo", lo), ("Hi", hi)] if lo is not None and hi is not None else []
        )
        for suffix, col in picked:
            if col is not None:
                value = format_number([_f(row.get(col)) * sc], d, na_rep="--")[0]
                self.add(name + suffix, value, f"{src}{suffix}")


def _ci(stat: str) -> tuple[str, str, str]:
    return stat, f"{stat}_ci_low", f"{stat}_ci_high"


def _comparison_macros(names: _Names, doc: Any, aliases: Any) -> None:
    for tname, cols, prefix in (
        ("compare", ("arm_a", "arm_b"), "Cmp"),
        ("arm_costs", ("arm",), "ArmCost"),
    ):
        table = _table(doc, tname)
        if table is None or not set(cols) <= set(table.columns):
            continue
        for row in table.to_dict("records"):  # one row per pair (arm), its statistics wide
            arms = "Vs".join(word(str(row[c]), aliases) for c in cols)
            where = " vs ".join(str(row[c]) for c in cols)
            if "judge" in row:  # every judge's comparison: the judge names the macro
                arms = judge_word(str(row["judge"]), aliases) + arms
                where = f"{row['judge']}: {where}"
            for stat in [c for c in row if f"{c}_ci_low" in row]:
                src = f"{tname}: {where} / {stat}"
                names.interval(prefix + arms + word(stat), src, row, _ci(stat), stat)


def _pair(row: Mapping[str, Any], aliases: Any) -> str:
    """K arms: ``<ArmA>Vs<ArmB>`` leading the names of a pair's numbers ("" for two arms)."""
    if row.get("arm_a") is None or (row["arm_a"], row.get("arm_b")) == ("with", "without"):
        return ""
    return word(str(row["arm_a"]), aliases) + "Vs" + word(str(row["arm_b"]), aliases)


def latex_macros(
    results: Any,
    *,
    digits: int | None = None,
    percent: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """One ``\\newcommand`` per headline number, as the tables show it (``--`` when missing).

    Names: ``\\es<Rubric><Judge><Statistic>[Lo|Hi]``, ``...N``, ``...Tasks``; agreement
    ``\\es<Rubric><JudgeA>Vs<JudgeB><Statistic>``; ``\\esCost<Metric>``; ``\\esPrimary...``
    for the declared test; ``\\esConfidence``. ``aliases`` resolve a name collision.

    >>> from evalstats.report import compute_results
    >>> latex_macros(compute_results("data/sample", n_resamples=200, seed=0)).splitlines()[4]
    '\\\\newcommand{\\\\esBlindPairClaudeSonnetFourWinRate}{52}'
    """
    doc = _load(results)
    names = _Names(digits, percent)
    names.add("Confidence", _pct(_confidence(doc)), "confidence")
    for tname in _MACRO_TABLES:
        for row in _rows(doc, tname):
            prefix = _pair(row, aliases) + word(str(row["rubric"]), aliases)
            prefix += judge_word(str(row["judge"]), aliases)
            src = f"{tname}: {_pair_words(row, ' / ')}{row['rubric']} / {row['judge']}"
            for stat in (s for s in _RATES if s in row):
                names.interval(prefix + word(stat), f"{src} / {stat}", row, _ci(stat), stat)
            _counts(names, prefix, row, src)
    agreement = _table(doc, "agreement")
    if agreement is not None:
        found = {c.name: c for c in interval_columns(agreement)}
        for row in agreement.to_dict("records"):
            pair = judge_word(str(row["judge_a"]), aliases)
            if row.get("judge_b") is not None:
                pair += "Vs" + judge_word(str(row["judge_b"]), aliases)
            prefix = _pair(row, aliases) + word(str(row["rubric"]), aliases) + pair
            src = f"agreement: {_pair_words(row, ' / ')}{row['rubric']} / {row['judge_a']} vs "
            src += str(row.get("judge_b"))
            for stat in _AGREEMENT_MACROS:
                c = found.get(stat)
                if c is None and stat not in row:
                    continue
                # The bootstrap interval shares kappa's estimate: only its bounds are new.
                est = None if stat.endswith("_boot") else (c.estimate if c else stat)
                cols = (est, c.ci_low, c.ci_high) if c else (est, None, None)
                names.interval(prefix + word(stat), f"{src} / {stat}", row, cols, stat)
            _counts(names, prefix, row, src)
    test = _primary_test(doc)
    if test is not None:
        _primary_macros(names, test, digits, percent)
    for row in _rows(doc, "cost"):
        prefix = "Cost" + _pair(row, aliases) + word(str(row["statistic"]), aliases)
        src = f"cost: {_pair_words(row, ' / ')}{row['statistic']}"
        names.interval(prefix, src, row, ("estimate", "ci_low", "ci_high"), "estimate")
    _comparison_macros(names, doc, aliases)
    lines = [
        "% evalstats export: one \\newcommand per headline number of results.json.",
        "% Names: \\es<Rubric><Judge><Statistic>[Lo|Hi]; \\es<Rubric><JudgeA>Vs<JudgeB><Stat>;",
        "% \\esCost<Metric>[Lo|Hi]; K arms: each of these led by <ArmA>Vs<ArmB> (after Cost),"
        " \\esCmp<Judge><ArmA>Vs<ArmB><Statistic>[Lo|Hi], \\esArmCost<Arm><Metric>[Lo|Hi]."
        " Rates in " + ("percent (no % sign)." if percent else "decimals."),
    ]
    lines += [f"\\newcommand{{\\{name}}}{{{value}}}" for name, (value, _) in names.items.items()]
    return show_bidi("\n".join(lines) + "\n")


def _rows(doc: Mapping[str, Any], name: str) -> list[dict[str, Any]]:
    table = _table(doc, name)
    return [] if table is None else table.to_dict("records")


def _primary_macros(names: _Names, t: Mapping[str, Any], digits: int | None, percent: bool) -> None:
    """``\\esPrimary...``: the declared test's numbers (``--`` on an open side)."""
    stat = str(t["statistic"])
    src = f"primary_test: {t['rubric']} / {t['judge']} / {stat}"
    _, (est, lo, hi) = _test_interval(t, digits, percent)
    names.add("PrimaryEstimate", est, src)
    names.add("PrimaryLo", lo, f"{src} / ci_low")
    names.add("PrimaryHi", hi, f"{src} / ci_high")
    p = t.get("p_value")
    p = "--" if p is None else _p_text(float(p)).replace("< ", "\\ensuremath{<}\\,")
    names.add("PrimaryP", p, f"{src} / p_value")
    df = t.get("df")
    names.add("PrimaryDf", "--" if df is None else f"{float(df):.1f}", f"{src} / df")
    names.add("PrimaryAlpha", _g(t["alpha"]), f"{src} / alpha")
    if t.get("margin") is not None:
        names.add("PrimaryMargin", _g(t["margin"]), f"{src} / margin")
    names.add("PrimaryDecision", str(t.get("decision")), f"{src} / decision")


def _counts(names: _Names, prefix: str, row: Mapping[str, Any], src: str) -> None:
    for col, suffix in (("n", "N"), ("n_pairs", "Pairs"), ("n_tasks", "Tasks")):
        v = row.get(col)
        if v is not None and not (isinstance(v, float) and np.isnan(v)):
            names.add(prefix + suffix, str(int(v)), f"{src} / {col}")


def _ordered_rubrics(doc: Mapping[str, Any]) -> set[str]:
    """Rubrics judged in both orders (whose verdicts are pair-orders, not pairs)."""
    pb = _table(doc, "position_bias")
    known = {"blind-pair"}
    if pb is not None and "rubric" in pb:
        known |= set(pb["rubric"].astype(str))
    return known


def _units(row: Mapping[str, Any], ordered: bool) -> str:
    """The rates' own denominator, named: "the 165 readable pair-orders (85 pairs; 170 judged,
    5 unreadable)"."""
    n, pairs = int(row["n"]), _f(row.get("n_pairs"))
    orders = n != pairs if np.isfinite(pairs) else ordered
    said = [f"{int(pairs)} pairs"] if orders and np.isfinite(pairs) else []
    bad = [(int(row.get(c) or 0), w) for c, w in (("invalid", "unreadable"), ("error", "failed"))]
    if any(k for k, _ in bad):
        out = ", ".join(f"{k} {w}" for k, w in bad if k)
        said.append(f"{n + sum(k for k, _ in bad)} judged, {out}")
    tail = f" ({'; '.join(said)})" if said else ""
    return f"the {n} readable {'pair-orders' if orders else 'pairs'}{tail}"


def _left_out(row: Mapping[str, Any]) -> str:
    k = int(row.get("no_answer") or 0)
    return f"; {k} no-answer pairs not judged" if k else ""


def _iv(row: Mapping[str, Any], stat: str, digits: int | None, percent: bool, unit: str,
        cols: Sequence[str] | None = None) -> str:  # fmt: skip
    cols = cols or _ci(stat)
    return _ivs({c: [_f(row.get(c))] for c in cols}, stat, digits, percent, unit=unit, cols=cols)[0]


def _method(row: Mapping[str, Any], conf: float) -> str:
    m = str(row.get("method") or "")
    where = "" if m.startswith("iid") else " clustered by task"
    return f"{_pct(conf)} % CI{where}, {method_words(m)}"


def _win_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str:
    rubric, judge = str(row["rubric"]), str(row["judge"])
    pct = " %" if percent else ""
    who = judge_label(judge)
    who = f"{who} of the judges" if judge.startswith("consensus:") else f"{who} judge"
    return (
        f"{_arm_short(doc)} won {_iv(row, 'win_rate', digits, percent, pct)}, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and "
        f"lost {_iv(row, 'loss_rate', digits, percent, pct)} of "
        f"{_units(row, rubric in _ordered_rubrics(doc))} in {int(row['n_tasks'])} tasks"
        f"{_left_out(row)}. The net win is "
        f"{_iv(row, 'net_win', digits, percent, ' points' if percent else '')} ({who}, {rubric} "
        f"rubric), {_method(row, _confidence(doc))}."
    )


def _agreement_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str | None:
    if row.get("judge_b") is None or row.get("kappa") is None:
        return None
    conf = _pct(_confidence(doc))
    pct = " %" if percent else ""
    return (
        f"{judge_label(str(row['judge_a']))} and {judge_label(str(row['judge_b']))} agreed on "
        f"{_iv(row, 'observed_agreement', digits, percent, pct)} of "
        f"{_units(row, str(row['rubric']) in _ordered_rubrics(doc))} in "
        f"{int(row['n_tasks'])} tasks ({row['rubric']} rubric). Cohen's kappa is "
        f"{_iv(row, 'kappa', digits, percent, '')}, {conf} % CI clustered by task, "
        f"{method_words(row.get('kappa_method'))}. Gwet's AC1 is "
        f"{_iv(row, 'ac1', digits, percent, '')} by {method_words(row.get('ac1_method'))}."
    )


def _cost_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str:
    iv = _iv(row, "estimate", digits, percent, "", _RATIO)
    metric = str(row["statistic"])
    what = _COST_TEXT.get(metric, metric)
    if row.get("method") == "unavailable":  # answer-only counts are no cost: say why
        reason = str(row.get("estimand") or "").removeprefix("unavailable: ")
        return f"The WITH / WITHOUT ratio of {what} is not reported: {reason}."
    source = row.get("token_source")
    counted = f" ({_SOURCE_TEXT.get(str(source), source)})" if isinstance(source, str) else ""
    # The method last, outside any parenthesis (it may hold its own).
    note = str(row.get("ci_note") or "")
    return (
        f"WITH / WITHOUT ratio of {what}{counted}: {iv} over {int(row['n'])} pairs in "
        f"{int(row['n_tasks'])} tasks, {_pct(_confidence(doc))} % CI by "
        f"{method_words(row.get('method'))}."
        + "".join(f" {n[:1].upper()}{n[1:]}." for n in f"Note: {note}".split("; ") if note)
    )


def _source_sentence(row: Mapping[str, Any], digits: int | None, percent: bool) -> str:
    """The transcript ratio beside the billed one the cost table uses, and how far apart."""
    iv = _iv(row, "estimate", digits, percent, "", _RATIO)
    what = _COST_TEXT.get(str(row["statistic"]), str(row["statistic"]))
    return (
        f"Counted on the transcripts instead ({_SOURCE_TEXT['transcript']}), the ratio of "
        f"{what} is {iv}; billed / transcript = {_f(row.get('billed_over_transcript')):.3f}."
    )


_SOURCE_TEXT = {
    "billed": "billed: the harness's reported usage, summed over turns",
    "transcript": "transcript: cl100k_base on what each run read and wrote, each token once",
    "as given": "token counts as given in the frame",
}


def result_sentences(results: Any, *, digits: int | None = None, percent: bool = True) -> list[str]:
    """Ready sentences (n, tasks, left out, judge, method): one per headline and consensus row,
    agreement pair and cost metric.

    >>> from evalstats.report import compute_results
    >>> res = compute_results("data/sample", n_resamples=200, seed=0)
    >>> print(result_sentences(res)[0])  # doctest: +NORMALIZE_WHITESPACE
    WITH won 52 % [38, 65], tied 32 % [23, 43] and lost 16 % [9, 29] of the 165 readable
    pair-orders (85 pairs; 170 judged, 5 unreadable) in 15 tasks; 5 no-answer pairs not judged.
    The net win is 35 points [11, 55] (Claude Sonnet 4 judge, blind-pair rubric), 95 % CI
    clustered by task, CR2 Wilson with Bell-McCaffrey df.
    """
    doc = _load(results)
    if is_comparison(doc):  # K arms: pairs, rank sets, costs and the frontier
        return [markdown_text(s) for s in comparison_sentences(doc, digits=digits, percent=percent)]
    out = _audit_fail_sentences(doc)
    test = _primary_test(doc)
    if test is not None:
        out.append(_primary_test_sentence(test, digits, percent).strip())
    for tname in _MACRO_TABLES:
        table = _table(doc, tname)
        if table is not None:
            out += [_win_sentence(r, doc, digits, percent) for r in table.to_dict("records")]
    agreement = _table(doc, "agreement")
    if agreement is not None:
        said = (_agreement_sentence(r, doc, digits, percent) for r in agreement.to_dict("records"))
        out += [s for s in said if s is not None]
    cost = _table(doc, "cost")
    if cost is not None:
        out += [_cost_sentence(r, doc, digits, percent) for r in cost.to_dict("records")]
    sources = _table(doc, "cost_sources")
    if sources is not None:
        out += [_source_sentence(r, digits, percent) for r in sources.to_dict("records")
                if r.get("token_source") == "transcript"]  # fmt: skip
    return [markdown_text(s) for s in out]


def _caveats(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The audit's rows that did not pass (``headline_audit``: fail first), or none."""
    rows = doc["tables"].get("headline_audit")
    return [dict(r) for r in rows] if isinstance(rows, list) else []


def _pair_words(row: Mapping[str, Any], sep: str = ", ") -> str:
    """K arms: "v1 vs none, " before what a row of one pair of arms says ("" for two)."""
    return "" if row.get("arm_a") is None else f"{row['arm_a']} vs {row['arm_b']}{sep}"


def _audit_fail_sentences(doc: Mapping[str, Any]) -> list[str]:
    """Each ``fail`` of the methodology audit in a sentence of its own."""
    return [
        f"The methodology audit fails {_pair_words(r)}{r['check']}: {str(r['detail']).rstrip('.')}."
        for r in _caveats(doc)
        if str(r.get("status")) == "fail"
    ]


def _choice(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    rows = doc["tables"].get("headline_choice")
    return rows[0] if isinstance(rows, list) and rows else None


def _plan(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    plan = doc.get("provenance", {}).get("plan")
    return plan if isinstance(plan, Mapping) else None


def _declared_primary(doc: Mapping[str, Any]) -> tuple[str, str] | None:
    plan = _plan(doc)
    if plan is not None and isinstance(plan.get("primary"), Mapping):
        return str(plan["primary"]["rubric"]), str(plan["primary"]["judge"])
    return None


def _primary(doc: Mapping[str, Any], primary: Sequence[str] | None) -> dict[str, Any]:
    """The row of ``primary=(rubric, judge)``, else the one ``headline_choice`` names."""
    table = _table(doc, "headline")
    if table is None:
        raise DataError("no headline table in the results: nothing to state", field="tables")
    if primary is None:  # the chosen row, else the first (the choice not in this selection)
        choice = _choice(doc) or {}
        keys = (table["rubric"] == choice.get("rubric")) & (table["judge"] == choice.get("judge"))
        return (table.loc[keys] if keys.any() else table).iloc[0].to_dict()
    rubric, judge = primary
    hit = table.loc[(table["rubric"] == rubric) & (table["judge"] == judge)]
    cons = _table(doc, "consensus")
    if hit.empty and cons is not None:
        hit = cons.loc[(cons["rubric"] == rubric) & (cons["judge"] == judge)]
    if hit.empty:
        raise ValueError(f"no headline row for rubric {rubric!r} and judge {judge!r}")
    return hit.iloc[0].to_dict()


def _primary_test(doc: Mapping[str, Any]) -> dict[str, Any] | None:
    if not doc.get("provenance", {}).get("plan"):
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


def _p_text(p: float, na_rep: str = "--", eq: str = "") -> str:
    """A p-value as a paper prints it: ``< 0.001`` below 0.001, else two significant digits
    (after ``eq``: "= " in a sentence)."""
    return na_rep if not np.isfinite(p) else "< 0.001" if p < 1e-3 else f"{eq}{p:.2g}"


def _test_interval(
    t: Mapping[str, Any], digits: int | None, percent: bool
) -> tuple[str, list[str]]:
    """The declared test's interval as text ("[22, ∞)"), its estimate and bounds as macros."""
    stat = str(t["statistic"])
    rate = stat in _RATES
    d = statistic_digits(stat if rate else "estimate", digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent) if rate else 1.0
    est = format_number([_f(t.get("estimate")) * sc], d, na_rep="--")[0]
    cells = []
    for v in (_f(t.get("ci_low")), _f(t.get("ci_high"))):  # null: the side left open
        cells.append(None if not np.isfinite(v) else format_number([v * sc], d)[0])
    lo = cells[0] if cells[0] is not None else "−∞"
    hi = cells[1] if cells[1] is not None else "∞"
    left = "[" if cells[0] is not None else "("
    right = "]" if cells[1] is not None else ")"
    unit = "" if not (rate and sc == 100.0) else " points" if stat == "net_win" else " %"
    return f"{left}{lo}, {hi}{right}{unit}", [est, *(c if c is not None else "--" for c in cells)]


def _primary_test_sentence(t: Mapping[str, Any], digits: int | None, percent: bool) -> str:
    conclusion = str(t.get("conclusion") or "")
    if str(t.get("decision")) == "no test" or t.get("p_value") is None:
        return f" The declared test of {t['statistic']}: {conclusion}."
    iv, _ = _test_interval(t, digits, percent)
    level = _pct(float(t["ci_level"]))
    side = "one-sided " if t.get("ci_low") is None or t.get("ci_high") is None else ""
    verdict = "rejects its null" if t["decision"] == "reject" else "does not reject its null"
    name = _TEST_NAMES.get(str(t["test"]), str(t["test"]))
    if t.get("df") is None:  # no t test: the total ratio's generalized pivotal interval
        what = f"generalized pivotal {name.replace(' t test', ' test')} (on its interval's draws)"
    else:
        what = f"{name} ({float(t['df']):.1f} df)"
    return (
        f" The declared test of {t['statistic']}, a {what}, "
        f"{verdict}: p {_p_text(float(t['p_value']), eq='= ')} at alpha "
        f"{_g(t['alpha'])}, with the {level} % {side}interval {iv}, so {conclusion}."
    )


_SIDES = {"greater": "one-sided (WITH better)", "less": "one-sided (WITH worse)"}


def _plan_terms(plan: Mapping[str, Any]) -> str:
    """ "alpha 0.05, one-sided (WITH better), non-inferiority margin 0.1" """
    sides = _SIDES.get(str(plan["sidedness"]), plan["sidedness"])
    margin = plan.get("margin")
    return f"alpha {_g(plan['alpha'])}, {sides}" + (
        "" if margin is None else f", {plan.get('margin_kind')} margin {_g(margin)}"
    )


def _standing(doc: Mapping[str, Any], row: Mapping[str, Any], explicit: bool) -> str:
    plan = _plan(doc)
    if explicit:
        return ""
    if plan is None:
        rule = str((_choice(doc) or {}).get("rule") or "the first row of the headline")
        first, *rest = rule.split("; ")
        return (
            " No analysis plan was declared, so this row is exploratory, as is every test of "
            f"the report. It is shown first by a stated rule: {first}."
            + "".join(f" {r[:1].upper()}{r[1:]}." for r in rest)
        )
    declared = _declared_primary(doc)
    if (str(row["rubric"]), str(row["judge"])) != declared:
        return (
            f" The plan's primary ({declared[1]} on the {declared[0]} rubric) is not among "
            "these results, so this row of the headline is exploratory."
        )
    stat = str(plan.get("statistic"))
    declared_as = f"{stat}, {_plan_terms(plan)}"
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


def _arm_short(doc: Mapping[str, Any], arm: str = "with", *, long: bool = False) -> str:
    """``Serena MCP`` (``WITH (Serena MCP)`` when ``long``), or ``WITH`` when not named."""
    name = str(((doc.get("provenance") or {}).get("arm_names") or {}).get(arm) or "").strip()
    if not long:
        return name or arm.upper()
    return f"{arm.upper()} ({name})" if name and name != arm.upper() else arm.upper()


def headline_paragraph(
    results: Any,
    *,
    primary: Sequence[str] | None = None,
    digits: int | None = None,
    percent: bool = True,
) -> str:
    """The primary result in one paragraph of words, with its interval (plain text).

    The primary is ``primary=(rubric, judge)``, else the declared plan's, else the row
    ``headline_choice`` names (then called exploratory). The result comes first, then the
    audit's failures, then why this row and the other judges, each in sentences of its own.

    >>> from evalstats.report import compute_results
    >>> p = headline_paragraph(compute_results("data/sample", n_resamples=200, seed=0))
    >>> p.split(". ")[0]
    'On the with-without rubric, judged by Claude Sonnet 4, WITH beat WITHOUT'
    >>> "exploratory" in p
    True
    """
    result, fails, why = _headline_parts(results, primary, digits, percent)
    return " ".join([result, *fails, why])


def _headline_parts(
    results: Any, primary: Sequence[str] | None, digits: int | None, percent: bool
) -> tuple[str, list[str], str]:
    """:func:`headline_paragraph` in three: the result, the audit's fails, why this row."""
    doc = _load(results)
    explicit = primary is not None
    try:
        row = _primary(doc, primary or _declared_primary(doc))
    except ValueError:
        if explicit:
            raise
        row = _primary(doc, None)  # the plan's primary is not among these results
    pct = " %" if percent else ""
    pts = " percentage points" if percent else ""
    rubric = str(row["rubric"])
    lo, hi = _f(row.get("net_win_ci_low")), _f(row.get("net_win_ci_high"))
    w, wo = (_arm_short(doc, arm, long=True) for arm in ("with", "without"))
    short = _arm_short(doc)
    if row.get("arm_a") is not None:  # K arms: the pair of the row shown first, by name
        names = (doc.get("provenance") or {}).get("arm_names") or {}
        w, wo = (str(names.get(row[k], row[k])) for k in ("arm_a", "arm_b"))
        short = w
    verdict = f"the data cannot tell {w} from {wo}"
    verdict = f"{w} beat {wo}" if lo > 0 else f"{wo} beat {w}" if hi < 0 else verdict
    test = None if explicit else _primary_test(doc)
    if (
        test is not None
        and (str(test["rubric"]), str(test["judge"])) == (rubric, str(row["judge"]))
        and test.get("decision") in ("reject", "not reject")
        and str(test["statistic"]) in _RATES
    ):
        words = str(test["conclusion"])
        verdict = (
            f"the declared test finds that {words}"
            if test["decision"] == "reject"
            else f"the declared test does not show that {words.removeprefix('not shown: ')}"
        )
    result = (
        f"On the {rubric} rubric, judged by {judge_label(str(row['judge']))}, {verdict}. "
        f"{short} won {_iv(row, 'win_rate', digits, percent, pct)} of "
        f"{_units(row, rubric in _ordered_rubrics(doc))} in {int(row['n_tasks'])} tasks, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and lost "
        f"{_iv(row, 'loss_rate', digits, percent, pct)}: a net win of "
        f"{_iv(row, 'net_win', digits, percent, pts)}."
    )
    why = (
        f"The net-win interval is the {_method(row, _confidence(doc))}; it "
        f"{'excludes' if lo > 0 or hi < 0 else 'includes'} zero."
    ) + _standing(doc, row, explicit)
    if str(row.get("audit") or ""):
        why += (
            f" This row is marked ({row['audit']}): its judges disagree above the trigger, "
            "so it is not a plain result."
        )
    others = []
    for t in filter(lambda t: t is not None, map(functools.partial(_table, doc), _MACRO_TABLES)):
        same = (t["rubric"] == rubric) & (t["judge"] != row["judge"])
        if row.get("arm_a") is not None:  # the same pair of arms only
            same &= (t["arm_a"] == row["arm_a"]) & (t["arm_b"] == row["arm_b"])
        others += [
            f"{_iv(r, 'net_win', digits, percent, '')} by "
            f"{'the ' if str(r['judge']).startswith('consensus:') else ''}"
            f"{judge_label(str(r['judge']))}"
            for r in t.loc[same].to_dict("records")
        ]
    if others:
        why += " The other judges on this rubric: a net win of " + "; ".join(others) + "."
    if doc.get("simulated"):
        why += " These data are simulated."
    fails = [markdown_text(f) for f in _audit_fail_sentences(doc)]
    return markdown_text(result), fails, markdown_text(why)


def sentences_markdown(results: Any, *, digits: int | None = None, percent: bool = True) -> str:
    """The headline paragraph and every sentence, as a Markdown document."""
    doc = _load(results)
    head = (
        [] if is_comparison(doc) else [headline_paragraph(doc, digits=digits, percent=percent), ""]
    )
    body = ["# Results in words", "", *head]
    body += [f"- {s}" for s in result_sentences(doc, digits=digits, percent=percent)]
    return "\n".join(body) + "\n"


def export(
    results_json: Any,
    *,
    latex: str | os.PathLike[str] | None = None,
    markdown: str | os.PathLike[str] | None = None,
    macros: str | os.PathLike[str] | None = None,
    sentences: str | os.PathLike[str] | None = None,
    digits: int | None = None,
    percent: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the paper export of ``results_json`` atomically; returns the paths written.

    Parameters
    ----------
    results_json : path, dict or Results
        A report's ``results.json`` (or its parsed content, or the Results object).
    latex, markdown : path, optional
        Directories for ``<table>.tex`` / ``<table>.md``.
    macros, sentences : path, optional
        Files for :func:`latex_macros` and :func:`sentences_markdown`.
    digits, percent
        Precision, as :func:`evalstats.stats.formatting.summarize`.
    aliases : mapping, optional
        Letters to use for a rubric, judge or metric in macro names.

    >>> import tempfile, pathlib
    >>> from evalstats.report import compute_results
    >>> res = compute_results("data/sample", n_resamples=200, seed=0)
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in export(res, latex=out / "tex", macros=out / "m.tex")][:2]
    ['headline.tex', 'consensus.tex']
    """
    doc = _load(results_json)
    kw = {"digits": digits, "percent": percent}
    files = {}
    for where, tables, ext in ((latex, latex_tables, "tex"), (markdown, markdown_tables, "md")):
        if where is not None:
            files |= {Path(where) / f"{n}.{ext}": t for n, t in tables(doc, **kw).items()}
    if macros is not None:
        files[Path(macros)] = latex_macros(doc, **kw, aliases=aliases)
    if sentences is not None:
        files[Path(sentences)] = sentences_markdown(doc, **kw)
    for path, text in files.items():
        data = text.encode("utf-8")
        atomic_write(path, lambda fh, data=data: fh.write(data))
    return list(files)
