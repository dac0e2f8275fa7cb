"""Export a report's ``results.json`` to a paper: tables, macros and sentences.

* **Tables** (:func:`latex_tables`, :func:`markdown_tables`): the ``headline``,
  ``consensus``, ``agreement``, ``cost`` and ``per_task`` tables as ``est [lo, hi]`` cells
  (:func:`evalstats.stats.summarize.summarize`), booktabs LaTeX (``\\toprule`` /
  ``\\midrule`` / ``\\bottomrule``, via pandas ``Styler.to_latex(hrules=True)``, every cell
  and header LaTeX-escaped) and GitHub-flavoured Markdown.
* **Macros** (:func:`latex_macros`): one ``\\newcommand`` per headline number, named
  ``\\es<Rubric><Judge><Statistic>`` with ``Lo``/``Hi`` for the interval's bounds, e.g.
  ``\\esWithWithoutClaudeSonnetFourNetWin``, ``...NetWinLo``, ``...NetWinHi``, ``...N``
  (verdicts), ``...Tasks``; agreement ``\\es<Rubric><JudgeA>Vs<JudgeB><Statistic>``
  (``...Kappa``, ``...KappaBootLo``, ``...AcOne``, ``...ObservedAgreement``); cost
  ``\\esCost<Metric>`` (``\\esCostTokensTotalRatio``, ``...Lo``, ``...Hi``); the declared
  primary test when a plan exists (``\\esPrimaryEstimate``, ``...Lo``, ``...Hi`` -- ``--`` on
  the side a one-sided test leaves open --, ``...P``, ``...Df``, ``...Alpha``, ``...Margin``,
  ``...Decision``); and ``\\esConfidence``. How a rubric, judge or statistic becomes letters:
  :mod:`evalstats.report._export_names`. A macro holds the number only (no ``%``).
* **Sentences** (:func:`result_sentences`, :func:`headline_paragraph`): the numbers in words,
  each with n, tasks, the judge and the interval's method.

Precision is one setting for everything exported: ``digits`` decimals in the unit shown,
rates in percent unless ``percent=False`` (coefficients and ratios at ``digits + 2``
decimals, i.e. the same absolute resolution; see :mod:`evalstats.stats.summarize`).

Examples
--------
>>> from evalstats.report import compute_results
>>> res = compute_results("data/sample", n_resamples=200, seed=0)
>>> print(result_sentences(res)[0])  # doctest: +NORMALIZE_WHITESPACE
WITH won 52 % [38, 65], tied 32 % [23, 43] and lost 16 % [9, 29] of 85 pairs (165 judged
pair-orders) in 15 tasks (5 no-answer and 5 unreadable verdicts left out): a net win of 35
points [11, 55]
(Claude Sonnet 4 judge, blind-pair rubric; 95 % CI clustered by task, CR2 Wilson with
Bell-McCaffrey df).
>>> latex_macros(res).splitlines()[4]
'\\\\newcommand{\\\\esBlindPairClaudeSonnetFourWinRate}{52}'
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._display import count_text
from .._tidy import is_long, result_by, wide
from ..errors import DataError
from ..records import atomic_write
from ..stats.summarize import (
    format_interval,
    format_number,
    interval_columns,
    statistic_digits,
    statistic_scale,
    summarize,
)
from ._export_names import judge_label, judge_word, word

__all__ = [
    "EXPORT_TABLES",
    "export",
    "formatted_tables",
    "headline_paragraph",
    "latex_macros",
    "latex_table",
    "latex_tables",
    "markdown_table",
    "markdown_tables",
    "result_sentences",
    "sentences_markdown",
]

_FORMAT = "evalstats-results/1"
_RATES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
# Table name -> statistics shown (those present), in this order.
EXPORT_TABLES: dict[str, tuple[str, ...]] = {
    "headline": _RATES,
    "consensus": _RATES,
    "agreement": ("observed_agreement", "kappa", "kappa_boot", "ac1", "pabak"),
    "cost": ("estimate",),
    "per_task": ("win_rate", "tie_rate", "loss_rate", "net_win"),
}
_MACRO_TABLES = ("headline", "consensus")
_AGREEMENT_MACROS = ("observed_agreement", "kappa", "kappa_boot", "kappa_linear", "ac1", "pabak")
_METHOD_TEXT = {
    "cr2_wilson": "CR2 Wilson with Bell-McCaffrey df",
    "cr2_t": "CR2 t with Bell-McCaffrey df",
    "wild_webb": "wild cluster bootstrap, Webb weights",
    "iid_wilson": "IID Wilson, not clustered",
    "cluster_wilson": "Wilson at the design-effect sample size",
    "cluster_t": "cluster-robust t",
    "bca": "BCa cluster bootstrap",
    "percentile": "percentile cluster bootstrap",
    "basic": "basic cluster bootstrap",
}
_COST_TEXT = {
    "tokens_total_ratio": "total tokens",
    "tokens_geomean_ratio": "tokens per pair (geometric mean of the ratios)",
    "tokens_median_ratio": "tokens per pair (median of the ratios)",
    "wall_total_ratio": "total wall-clock time",
    "wall_geomean_ratio": "wall-clock time per pair (geometric mean of the ratios)",
    "wall_median_ratio": "wall-clock time per pair (median of the ratios)",
}


# --------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------


def _load(results: Any) -> dict[str, Any]:
    """results.json (a path), its parsed dict, or a :class:`~evalstats.report.Results`."""
    if hasattr(results, "to_json") and callable(results.to_json):
        return results.to_json()
    if isinstance(results, Mapping):
        doc = dict(results)
        where = None
    else:
        where = Path(os.fspath(results))
        try:
            doc = json.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError("results file not found", path=where) from None
        except json.JSONDecodeError as exc:
            raise DataError(f"not JSON: {exc.msg}", path=where, line=exc.lineno) from None
    if not isinstance(doc, Mapping) or doc.get("format") != _FORMAT:
        got = doc.get("format") if isinstance(doc, Mapping) else type(doc).__name__
        raise DataError(f"not an {_FORMAT} document (format={got!r})", path=where, field="format")
    if not isinstance(doc.get("tables"), Mapping):
        raise DataError("no tables in the results document", path=where, field="tables")
    return dict(doc)


_COST_LEGACY = {"metric": "statistic", "se_log": "se", "n_pairs": "n", "n_clusters": "n_tasks"}


def _table(doc: Mapping[str, Any], name: str) -> pd.DataFrame | None:
    """Table ``name`` of a results document; a long result pivoted to one row per group
    (its ``<name>_diagnostics`` joined), the side-by-side form every export prints."""
    rows = doc["tables"].get(name)
    if not rows:
        return None
    table = pd.DataFrame(rows)
    if name == "cost" and "metric" in table:  # a results.json of before the one shape
        table = table.rename(columns=_COST_LEGACY)
    if is_long(table) and result_by(table):  # one row per statistic alone is its own view
        diag = doc["tables"].get(f"{name}_diagnostics")
        table = wide(table, diagnostics=pd.DataFrame(diag) if diag else None)
    return table


def _confidence(doc: Mapping[str, Any]) -> float:
    conf = doc.get("parameters", {}).get("confidence")
    if conf is None:
        conf = doc.get("provenance", {}).get("confidence", 0.95)
    return float(conf)


def _pct(x: float) -> str:
    return f"{x * 100:g}"


# --------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------


def formatted_tables(
    results: Any, *, digits: int | None = None, percent: bool = True, na_rep: str = "–"
) -> dict[str, pd.DataFrame]:
    """The exported tables as text frames (``est [lo, hi]`` cells), by table name.

    Only tables present and non-empty in ``results`` are returned; their ``confidence``
    column is dropped (it is one number, stated beside the table).

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
        view = summarize(
            table,
            statistics=[s for s in stats if s in have],
            digits=digits,
            percent=percent,
            na_rep=na_rep,
        )
        out[name] = view.drop(columns=["confidence"], errors="ignore")
    return out


def _caption(doc: Mapping[str, Any], name: str, frame: pd.DataFrame) -> str:
    conf = _pct(_confidence(doc))
    methods = sorted(set(frame["method"].dropna().astype(str))) if "method" in frame else []
    how = f"; method: {', '.join(methods)}" if methods else ""
    sim = " Simulated data." if doc.get("simulated") else ""
    return f"{name}: estimate [{conf} % CI]{how}; n_clusters = tasks.{sim}"


def latex_table(frame: pd.DataFrame) -> str:
    """A text frame as a booktabs ``tabular`` (cells and headers LaTeX-escaped).

    >>> import pandas as pd
    >>> print(latex_table(pd.DataFrame({"judge": ["a_b 5% & #1"], "n": [3]})), end="")
    \\begin{tabular}{lr}
    \\toprule
    judge & n \\\\
    \\midrule
    a\\_b 5\\% \\& \\#1 & 3 \\\\
    \\bottomrule
    \\end{tabular}
    """
    text = frame.astype(object).where(frame.notna(), "--").astype(str)
    align = "".join("l" if _is_label(frame[c]) else "r" for c in frame.columns)
    styler = (
        text.style.hide(axis="index")
        .format(escape="latex")
        .format_index(escape="latex", axis="columns")
    )
    return styler.to_latex(hrules=True, column_format=align)


def _is_label(col: pd.Series) -> bool:
    # Interval cells start with a digit or a sign; labels (rubric, judge, task) do not.
    if pd.api.types.is_numeric_dtype(col.dtype):
        return False
    s = col.dropna().astype(str)
    return bool(len(s)) and not s.str.match(r"^[-–+]?\d").all()


def markdown_table(frame: pd.DataFrame, *, caption: str | None = None) -> str:
    """A text frame as a GitHub-flavoured Markdown table (``|`` in a cell escaped).

    pandas' ``to_markdown`` needs ``tabulate``, which is not a dependency: this is the
    few lines it would take.

    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"judge": ["a|b"], "n": [3]})), end="")
    | judge | n |
    | :--- | ---: |
    | a\\|b | 3 |
    """

    def cell(v: Any) -> str:
        s = "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    cols = [str(c) for c in frame.columns]
    align = [":---" if _is_label(frame[c]) else "---:" for c in frame.columns]
    lines = ["| " + " | ".join(cell(c) for c in cols) + " |", "| " + " | ".join(align) + " |"]
    body = frame.astype(object).to_numpy().tolist()
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in body]
    if caption:
        lines += ["", caption]
    return "\n".join(lines) + "\n"


def latex_tables(
    results: Any, *, digits: int | None = None, percent: bool = True
) -> dict[str, str]:
    """booktabs LaTeX of each exported table, a ``%`` comment line first (the caption).

    >>> from evalstats.report import compute_results
    >>> tex = latex_tables(compute_results("data/sample", n_resamples=200, seed=0))
    >>> tex["headline"].splitlines()[1:3]
    ['\\\\begin{tabular}{llrrrrrrrrl}', '\\\\toprule']
    """
    doc = _load(results)
    out = {}
    for name, frame in formatted_tables(doc, digits=digits, percent=percent, na_rep="--").items():
        comment = "% " + _caption(doc, name, frame).replace("\n", " ")
        out[name] = comment + "\n" + latex_table(frame)
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


# --------------------------------------------------------------------------------------------
# macros
# --------------------------------------------------------------------------------------------


class _Names:
    """Macro name -> (value, source); a second source for one name is an error."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[str, str]] = {}

    def add(self, name: str, value: str, source: str) -> None:
        full = "es" + name
        if full in self.items and self.items[full][1] != source:
            raise ValueError(
                f"macro name \\{full} stands for both {self.items[full][1]!r} and {source!r}: "
                "pass aliases={...} mapping one of the judges/rubrics to other letters"
            )
        self.items[full] = (value, source)


def _interval_values(
    row: Mapping[str, Any],
    stat: str,
    est: str,
    lo: str | None,
    hi: str | None,
    d: int,
    scale: float,
) -> list[tuple[str, str]]:
    vals = []
    if est is not None:
        vals.append(("", format_number([_f(row.get(est)) * scale], d, na_rep="--")[0]))
    if lo is not None and hi is not None:
        vals.append(("Lo", format_number([_f(row.get(lo)) * scale], d, na_rep="--")[0]))
        vals.append(("Hi", format_number([_f(row.get(hi)) * scale], d, na_rep="--")[0]))
    return vals


def _f(v: Any) -> float:
    return np.nan if v is None else float(v)


def latex_macros(
    results: Any,
    *,
    digits: int | None = None,
    percent: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """One ``\\newcommand`` per headline number (names: the module docstring).

    Values are the numbers as the tables show them (rates in percent without the ``%``
    sign by default); a missing number is ``--``. Each line ends with a comment naming its
    source (table, rubric, judge, statistic).
    """
    doc = _load(results)
    names = _Names()
    names.add("Confidence", _pct(_confidence(doc)), "confidence")
    for tname in _MACRO_TABLES:
        table = _table(doc, tname)
        if table is None:
            continue
        for row in table.to_dict("records"):
            prefix = word(str(row["rubric"]), aliases) + judge_word(str(row["judge"]), aliases)
            src = f"{tname}: {row['rubric']} / {row['judge']}"
            for stat in _RATES:
                if stat not in row:
                    continue
                d, sc = (
                    statistic_digits(stat, digits=digits, percent=percent),
                    statistic_scale(stat, percent=percent),
                )
                lo, hi = f"{stat}_ci_low", f"{stat}_ci_high"
                for suffix, value in _interval_values(row, stat, stat, lo, hi, d, sc):
                    names.add(prefix + word(stat) + suffix, value, f"{src} / {stat}{suffix}")
            _counts(names, prefix, row, src)
    agreement = _table(doc, "agreement")
    if agreement is not None:
        found = {c.name: c for c in interval_columns(agreement)}
        for row in agreement.to_dict("records"):
            pair = judge_word(str(row["judge_a"]), aliases)
            if row.get("judge_b") is not None:
                pair += "Vs" + judge_word(str(row["judge_b"]), aliases)
            prefix = word(str(row["rubric"]), aliases) + pair
            src = f"agreement: {row['rubric']} / {row['judge_a']} vs {row.get('judge_b')}"
            for stat in _AGREEMENT_MACROS:
                c = found.get(stat)
                if c is None and stat not in row:
                    continue
                d = statistic_digits(stat, digits=digits, percent=percent)
                sc = statistic_scale(stat, percent=percent)
                # The bootstrap interval shares kappa's estimate: only its bounds are new.
                est = None if stat.endswith("_boot") else (c.estimate if c else stat)
                lo, hi = (c.ci_low, c.ci_high) if c else (None, None)
                for suffix, value in _interval_values(row, stat, est, lo, hi, d, sc):
                    names.add(prefix + word(stat) + suffix, value, f"{src} / {stat}{suffix}")
            _counts(names, prefix, row, src)
    test = _primary_test(doc)
    if test is not None:
        _primary_macros(names, test, digits, percent)
    cost = _table(doc, "cost")
    if cost is not None:
        d = statistic_digits("estimate", digits=digits, percent=percent)
        for row in cost.to_dict("records"):
            prefix = "Cost" + word(str(row["statistic"]), aliases)
            src = f"cost: {row['statistic']}"
            for suffix, value in _interval_values(
                row, "estimate", "estimate", "ci_low", "ci_high", d, 1.0
            ):
                names.add(prefix + suffix, value, f"{src}{suffix}")
    lines = [
        "% evalstats export: one \\newcommand per headline number of results.json.",
        "% Names: \\es<Rubric><Judge><Statistic>[Lo|Hi]; \\es<Rubric><JudgeA>Vs<JudgeB><Stat>;",
        "% \\esCost<Metric>[Lo|Hi]. Rates in "
        + ("percent (no % sign)." if percent else "decimals."),
    ]
    for name, (value, source) in names.items.items():
        del source  # sources are checked for collisions; the comment block states the scheme
        lines.append(f"\\newcommand{{\\{name}}}{{{value}}}")
    return "\n".join(lines) + "\n"


def _primary_macros(names: _Names, t: Mapping[str, Any], digits: int | None, percent: bool) -> None:
    """``\\esPrimary...``: the declared test's estimate, interval bounds (``--`` on a side
    the test leaves open), p-value, df, alpha, margin and decision."""
    stat = str(t["statistic"])
    rate = stat in _RATES
    d = statistic_digits(stat if rate else "estimate", digits=digits, percent=percent)
    sc = statistic_scale(stat, percent=percent) if rate else 1.0
    src = f"primary_test: {t['rubric']} / {t['judge']} / {stat}"
    names.add(
        "PrimaryEstimate", format_number([_f(t.get("estimate")) * sc], d, na_rep="--")[0], src
    )
    _, (lo, hi) = _test_interval(t, digits, percent)
    names.add("PrimaryLo", lo, f"{src} / ci_low")
    names.add("PrimaryHi", hi, f"{src} / ci_high")
    p = t.get("p_value")
    names.add("PrimaryP", "--" if p is None else _p_text(float(p)), f"{src} / p_value")
    df = t.get("df")
    names.add("PrimaryDf", "--" if df is None else f"{float(df):.1f}", f"{src} / df")
    names.add("PrimaryAlpha", _g(t["alpha"]), f"{src} / alpha")
    if t.get("margin") is not None:
        names.add("PrimaryMargin", _g(t["margin"]), f"{src} / margin")
    names.add("PrimaryDecision", str(t.get("decision")), f"{src} / decision")


def _counts(names: _Names, prefix: str, row: Mapping[str, Any], src: str) -> None:
    for col, suffix in (("n", "N"), ("n_pairs", "Pairs"), ("n_clusters", "Tasks")):
        v = row.get(col)
        if v is not None and not (isinstance(v, float) and np.isnan(v)):
            names.add(prefix + suffix, str(int(v)), f"{src} / {col}")


# --------------------------------------------------------------------------------------------
# sentences
# --------------------------------------------------------------------------------------------


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
    return f"{_pct(conf)} % CI clustered by task, {_METHOD_TEXT.get(m, m)}"


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
        f"WITH won {_iv(row, 'win_rate', digits, percent, pct)}, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and "
        f"lost {_iv(row, 'loss_rate', digits, percent, pct)} of {_units(row, ordered)} "
        f"in {int(row['n_clusters'])} tasks{_left_out(row)}: a net win of "
        f"{_iv(row, 'net_win', digits, percent, pts)} ({who}, {rubric} rubric; "
        f"{_method(row, _confidence(doc))})."
    )


def _agreement_sentence(
    row: Mapping[str, Any], doc: Mapping[str, Any], digits: int | None, percent: bool
) -> str | None:
    if row.get("judge_b") is None or row.get("kappa") is None:
        return None
    conf = _pct(_confidence(doc))
    d = statistic_digits("kappa", digits=digits, percent=percent)
    boot = format_interval(
        [_f(row.get("kappa"))],
        [_f(row.get("kappa_boot_ci_low"))],
        [_f(row.get("kappa_boot_ci_high"))],
        d,
    )[0]
    boot_ci = boot[boot.find("[") :] if "[" in boot else ""
    pct = " %" if percent else ""
    return (
        f"{judge_label(str(row['judge_a']))} and {judge_label(str(row['judge_b']))} agreed on "
        f"{_iv(row, 'observed_agreement', digits, percent, pct)} of "
        f"{_units(row, str(row['rubric']) in _ordered_rubrics(doc))} in "
        f"{int(row['n_clusters'])} tasks ({row['rubric']} rubric): Cohen's kappa "
        f"{_iv(row, 'kappa', digits, percent, '')} ({conf} % Wald CI, not clustered"
        + (f"; {boot_ci} by cluster bootstrap over tasks" if boot_ci else "")
        + f"), Gwet's AC1 {_iv(row, 'ac1', digits, percent, '')}."
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
    return (
        f"WITH / WITHOUT ratio of {what}: {iv} over {int(row['n'])} pairs in "
        f"{int(row['n_tasks'])} tasks ({_pct(_confidence(doc))} % CI, {_flat(row.get('method'))})."
    )


def _flat(text: Any) -> str:
    """A method description without parentheses, for use inside a parenthesis."""
    return str(text or "").replace(" (", ", ").replace("(", "").replace(")", "")


def result_sentences(results: Any, *, digits: int | None = None, percent: bool = True) -> list[str]:
    """Ready sentences: one per headline and consensus row, agreement pair and cost metric.

    Each carries n (pairs, or judged pair-orders for a rubric judged in both orders), the
    number of tasks, what was left out, the judge and the interval's method.
    """
    doc = _load(results)
    out: list[str] = []
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
    return out


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
        return (
            " No analysis plan was declared, so this is the first row of the headline and "
            "exploratory, as is every test of the report."
        )
    declared = _declared_primary(doc)
    if (str(row["rubric"]), str(row["judge"])) != declared:
        return (
            f" The plan's primary ({declared[1]} on the {declared[0]} rubric) is not among "
            "these results, so this first row of the headline is exploratory."
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


def _g(x: Any) -> str:
    return f"{float(x):g}"


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
    row of the ``headline`` table, which the paragraph then calls exploratory. The paragraph
    names the verdict, the judge, n, tasks and the method, says whether the interval of the
    net win excludes zero, adds the other judges' net wins, and says when data are simulated.
    With a plan, the verdict is the declared test's (the ``primary_test`` table: reject or
    not, in words), and a sentence gives its p-value, df and the interval it inverts.

    >>> from evalstats.report import compute_results
    >>> p = headline_paragraph(compute_results("data/sample", n_resamples=200, seed=0))
    >>> p.split(". ")[0]
    'On the blind-pair rubric, judged by Claude Sonnet 4, WITH beat WITHOUT'
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
        f"WITH won {_iv(row, 'win_rate', digits, percent, pct)} of "
        f"{_units(row, rubric in _ordered_rubrics(doc))} in {int(row['n_clusters'])} tasks, "
        f"tied {_iv(row, 'tie_rate', digits, percent, pct)} and lost "
        f"{_iv(row, 'loss_rate', digits, percent, pct)}: a net win of "
        f"{_iv(row, 'net_win', digits, percent, pts)} ({_method(row, _confidence(doc))}; "
        f"the {conf} % interval {'excludes' if lo > 0 or hi < 0 else 'includes'} zero)."
    )
    text += _standing(doc, row, explicit)
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
    return text


def sentences_markdown(results: Any, *, digits: int | None = None, percent: bool = True) -> str:
    """The headline paragraph and every sentence, as a Markdown document."""
    doc = _load(results)
    body = [
        "# Results in words",
        "",
        headline_paragraph(doc, digits=digits, percent=percent),
        "",
    ]
    body += [f"- {s}" for s in result_sentences(doc, digits=digits, percent=percent)]
    return "\n".join(body) + "\n"


# --------------------------------------------------------------------------------------------
# files
# --------------------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    data = text.encode("utf-8")
    atomic_write(path, lambda fh: fh.write(data))
    return path


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
    """Write the paper export of ``results_json``; returns the paths written.

    Parameters
    ----------
    results_json : path, dict or Results
        A report's ``results.json`` (or its parsed content, or the Results object).
    latex, markdown : path, optional
        Directories for ``<table>.tex`` / ``<table>.md`` (headline, consensus, agreement,
        cost, per_task: those present).
    macros : path, optional
        File for the ``\\newcommand`` definitions (:func:`latex_macros`).
    sentences : path, optional
        Markdown file of :func:`headline_paragraph` and :func:`result_sentences`.
    digits, percent
        Precision, as :func:`evalstats.stats.summarize.summarize`.
    aliases : mapping, optional
        Letters to use for a rubric, judge or metric in macro names.

    Every file is written atomically.

    >>> import tempfile, pathlib
    >>> from evalstats.report import compute_results
    >>> res = compute_results("data/sample", n_resamples=200, seed=0)
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in export(res, latex=out / "tex", macros=out / "m.tex")][:2]
    ['headline.tex', 'consensus.tex']
    """
    doc = _load(results_json)
    written: list[Path] = []
    if latex is not None:
        for name, text in latex_tables(doc, digits=digits, percent=percent).items():
            written.append(_write(Path(latex) / f"{name}.tex", text))
    if markdown is not None:
        for name, text in markdown_tables(doc, digits=digits, percent=percent).items():
            written.append(_write(Path(markdown) / f"{name}.md", text))
    if macros is not None:
        text = latex_macros(doc, digits=digits, percent=percent, aliases=aliases)
        written.append(_write(Path(macros), text))
    if sentences is not None:
        written.append(
            _write(Path(sentences), sentences_markdown(doc, digits=digits, percent=percent))
        )
    return written
