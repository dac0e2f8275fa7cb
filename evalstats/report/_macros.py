"""The exported macros: one LaTeX ``\\newcommand`` per headline number of results.json.

Named ``\\es<Rubric><Judge><Statistic>`` with ``Lo``/``Hi`` for the interval's bounds, e.g.
``\\esWithWithoutClaudeSonnetFourNetWin``; agreement ``\\es<Rubric><JudgeA>Vs<JudgeB><Stat>``;
cost ``\\esCost<Metric>``; the declared primary test (``\\esPrimaryEstimate`` ...); and
``\\esConfidence``. How a rubric, judge or statistic becomes letters:
:mod:`evalstats.report._export_names`. A macro holds the number only (no ``%``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..stats.formatting import format_number, interval_columns, statistic_digits, statistic_scale
from ._export_names import judge_word, word
from ._results_doc import (
    _AGREEMENT_MACROS,
    _MACRO_TABLES,
    _RATES,
    _confidence,
    _f,
    _g,
    _load,
    _pct,
    _table,
)
from ._sentences import _p_text, _primary_test, _test_interval
from ._untrusted import show_bidi

__all__ = ["latex_macros"]


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


def _comparison_macros(
    names: _Names, doc: Any, digits: int | None, percent: bool, aliases: Any
) -> None:
    """A K-arm comparison's numbers: every pair's rates (``compare``) and each arm's cost
    ratios to the reference (``arm_costs``), with their intervals."""
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
                d = statistic_digits(stat, digits=digits, percent=percent)
                sc = statistic_scale(stat, percent=percent)
                lo, hi = f"{stat}_ci_low", f"{stat}_ci_high"
                for suffix, value in _interval_values(row, stat, stat, lo, hi, d, sc):
                    names.add(
                        prefix + arms + word(stat) + suffix, value, f"{tname}: {where} / {stat}"
                    )


def _pair(row: Mapping[str, Any], aliases: Any) -> str:
    """K arms: ``<ArmA>Vs<ArmB>`` leading the names of a pair's numbers ("" for two arms)."""
    if row.get("arm_a") is None:
        return ""
    return word(str(row["arm_a"]), aliases) + "Vs" + word(str(row["arm_b"]), aliases)


def _pair_src(row: Mapping[str, Any]) -> str:
    return "" if row.get("arm_a") is None else f"{row['arm_a']} vs {row['arm_b']} / "


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
            prefix = _pair(row, aliases) + word(str(row["rubric"]), aliases)
            prefix += judge_word(str(row["judge"]), aliases)
            src = f"{tname}: {_pair_src(row)}{row['rubric']} / {row['judge']}"
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
            prefix = _pair(row, aliases) + word(str(row["rubric"]), aliases) + pair
            src = f"agreement: {_pair_src(row)}{row['rubric']} / {row['judge_a']} vs "
            src += str(row.get("judge_b"))
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
            prefix = "Cost" + _pair(row, aliases) + word(str(row["statistic"]), aliases)
            src = f"cost: {_pair_src(row)}{row['statistic']}"
            for suffix, value in _interval_values(
                row, "estimate", "estimate", "ci_low", "ci_high", d, 1.0
            ):
                names.add(prefix + suffix, value, f"{src}{suffix}")
    _comparison_macros(names, doc, digits, percent, aliases)
    lines = [
        "% evalstats export: one \\newcommand per headline number of results.json.",
        "% Names: \\es<Rubric><Judge><Statistic>[Lo|Hi]; \\es<Rubric><JudgeA>Vs<JudgeB><Stat>;",
        "% \\esCost<Metric>[Lo|Hi]; K arms: each of these led by <ArmA>Vs<ArmB> (after Cost),"
        " \\esCmp<Judge><ArmA>Vs<ArmB><Statistic>[Lo|Hi], \\esArmCost<Arm><Metric>[Lo|Hi]."
        " Rates in " + ("percent (no % sign)." if percent else "decimals."),
    ]
    for name, (value, source) in names.items.items():
        del source  # sources are checked for collisions; the comment block states the scheme
        lines.append(f"\\newcommand{{\\{name}}}{{{value}}}")
    # Names come from judges and rubrics: no bidi control may reach the .tex file.
    return show_bidi("\n".join(lines) + "\n")


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
