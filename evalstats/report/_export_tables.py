"""The exported tables: ``est [lo, hi]`` cells as booktabs LaTeX and Markdown.

The ``headline``, ``consensus``, ``agreement``, ``cost`` and ``per_task`` tables
(:func:`evalstats.stats.formatting.summarize`), booktabs LaTeX (``\\toprule`` /
``\\midrule`` / ``\\bottomrule``, via pandas ``Styler.to_latex(hrules=True)``, every cell
and header LaTeX-escaped) and GitHub-flavoured Markdown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..stats.formatting import interval_columns, summarize
from ._export_comparison import comparison_tables
from ._export_names import judge_label
from ._results_doc import EXPORT_TABLES, _confidence, _load, _pct, _table, method_words
from ._untrusted import markdown_text, show_bidi

__all__ = [
    "EXPORT_TABLES",
    "formatted_tables",
    "latex_table",
    "latex_tables",
    "markdown_table",
    "markdown_tables",
]


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
        pick = [s for s in stats if s in have]
        kw = {"statistics": pick, "digits": digits, "percent": percent, "na_rep": na_rep}
        if name == "cost" and "arm_a" in table.columns:  # K arms: each pair's rows
            pairs = table.groupby(["arm_a", "arm_b"], sort=False)
            view = pd.concat(
                [
                    summarize(t.drop(columns=["arm_a", "arm_b"]), **kw).assign(arm_a=a, arm_b=b)
                    for (a, b), t in pairs
                ],
                ignore_index=True,
            )
            view = view[["arm_a", "arm_b", *view.columns[:-2]]]
        else:
            view = summarize(table, **kw)
        view = view.drop(columns=["confidence"], errors="ignore")
        if "audit" in view and not view["audit"].astype(str).str.strip().ne("").any():
            # The audit mark (issue 22) is a column only where a row carries one: a row of
            # a failing rubric is never exported plain, and a clean table stays as it was.
            view = view.drop(columns=["audit"])
        out[name] = view
    # A comparison of K arms (its comparison page) has its own tables.
    out.update(comparison_tables(doc, digits=digits, percent=percent, na_rep=na_rep))
    return out


def _caption(doc: Mapping[str, Any], name: str, frame: pd.DataFrame) -> str:
    conf = _pct(_confidence(doc))
    methods = sorted(set(frame["method"].dropna().astype(str))) if "method" in frame else []
    how = f"; method: {', '.join(methods)}" if methods else ""
    sim = " Simulated data." if doc.get("simulated") else ""
    return f"{name}: estimate [{conf} % CI]{how}; n_clusters = tasks.{sim}"


def latex_table(frame: pd.DataFrame, *, widths: Mapping[str, str] | None = None) -> str:
    """A text frame as a booktabs ``tabular`` (cells and headers LaTeX-escaped).

    ``widths`` gives a column's format by name (``{"Method": "p{4cm}"}``: wraps its text).

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
    widths = dict(widths or {})
    text = frame.astype(object).where(frame.notna(), "--").astype(str).map(show_bidi)
    # A bidi control in a cell would reorder the typeset line: shown as [U+202E] instead.
    text.columns = [show_bidi(str(c)) for c in text.columns]
    align = "".join(widths.get(str(c), "l" if _is_label(frame[c]) else "r") for c in frame.columns)
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
        s = s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
        return markdown_text(s)

    cols = [str(c) for c in frame.columns]
    align = [":---" if _is_label(frame[c]) else "---:" for c in frame.columns]
    lines = ["| " + " | ".join(cell(c) for c in cols) + " |", "| " + " | ".join(align) + " |"]
    body = frame.astype(object).to_numpy().tolist()
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in body]
    if caption:
        lines += ["", markdown_text(caption)]
    return "\n".join(lines) + "\n"


# A paper's column names; a statistic keeps its " (%)" unit suffix after the name.
_HEADERS = {
    "rubric": "Rubric",
    "judge": "Judge",
    "judge_a": "Judge A",
    "judge_b": "Judge B",
    "task_id": "Task",
    "statistic": "Ratio",
    "estimand": "Estimand",
    "n": "n",
    "n_pairs": "Pairs",
    "n_clusters": "Tasks",
    "n_tasks": "Tasks",
    "win_rate": "Win",
    "tie_rate": "Tie",
    "loss_rate": "Loss",
    "net_win": "Net win",
    "score": "Score",
    "observed_agreement": "Agr.",
    "kappa": "Kappa",
    "kappa_linear": "Kappa (linear)",
    "ac1": "AC1",
    "pabak": "PABAK",
    "estimate": "Ratio [CI]",
    "method": "Method",
    "token_source": "Tokens",
}
_JUDGE_COLUMNS = ("judge", "judge_a", "judge_b")
_WRAP = {"Method": "p{0.3\\linewidth}", "Estimand": "p{0.2\\linewidth}"}
# The table is typeset once in a box; only a table wider than the line (long user names)
# is scaled down to it, and says so in the log, so nothing ever runs into the margin.
_FIT = (
    "\\ifdefined\\esTableBox\\else\\newsavebox{\\esTableBox}\\fi\n"
    "\\sbox{\\esTableBox}{%\n@BODY@}%\n"
    "\\ifdim\\wd\\esTableBox>\\linewidth"
    "\\typeout{evalstats: table @NAME@ scaled to the line width}"
    "\\resizebox{\\linewidth}{!}{\\usebox{\\esTableBox}}"
    "\\else\\usebox{\\esTableBox}\\fi\n"
)


def _header(col: str) -> str:
    stat, unit = (col[:-4], " (%)") if col.endswith(" (%)") else (col, "")
    return _HEADERS.get(stat, stat.replace("_", " ")) + unit


def _short_judges(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """Judges as a reader names them ("Claude Sonnet 4"), and short -> full id for the note.

    Two judges that would read alike keep their full ids (no note needed for them)."""
    ids = sorted({str(v) for c in _JUDGE_COLUMNS if c in frame for v in frame[c].dropna()})
    short = {j: judge_label(j) for j in ids}
    count = pd.Series(list(short.values())).value_counts()
    short = {j: (s if count[s] == 1 else j) for j, s in short.items()}
    out = frame.copy()
    for c in _JUDGE_COLUMNS:
        if c in out:
            out[c] = out[c].map(lambda v: short.get(str(v), v) if isinstance(v, str) else v)
    return out, {s: j for j, s in short.items() if s != j}


def paper_table(
    doc: Mapping[str, Any], name: str, frame: pd.DataFrame
) -> tuple[pd.DataFrame, list[str]]:
    """An exported text frame as a paper prints it: human column names, short judge names,
    one method for the whole table moved to the notes; returns (frame, notes).

    >>> import pandas as pd
    >>> f = pd.DataFrame({"judge": ["openai:gpt-5.4"], "net_win (%)": ["35 [11, 55]"],
    ...                   "method": ["cr2_wilson"]})
    >>> t, notes = paper_table({"parameters": {"confidence": 0.95}, "tables": {}}, "headline", f)
    >>> list(t.columns), t.iloc[0, 0]
    (['Judge', 'Net win (%)'], 'GPT 5.4')
    >>> notes
    ['GPT 5.4: openai:gpt-5.4.', '95 % CI clustered by task: CR2 Wilson with Bell-McCaffrey df (cr2\\\\_wilson).']
    """
    out, full = _short_judges(frame)
    notes = [f"{s}: {j}." for s, j in full.items()]
    if "method" in out:
        methods = out["method"].dropna().astype(str).unique()
        if len(methods) == 1:
            m = methods[0]
            where = "" if m.startswith("iid") else " clustered by task"
            words = method_words(m)
            said = words if words == m else f"{words} ({m})"
            notes.append(f"{_pct(_confidence(doc))} % CI{where}: {said}.".replace("_", "\\_"))
            out = out.drop(columns="method")
    notes += _statistic_methods(doc, name, out)
    if "token_source" in out:
        # One source for every token row (cost_ratios chooses one): said once, in the note.
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
    """The interval method of each statistic column whose rows carry one of their own
    (agreement: ``kappa_method`` ...), as results.json names it, for the note."""
    wide_table = _table(doc, name) if isinstance(doc.get("tables"), Mapping) else None
    if wide_table is None:
        return []
    said: dict[str, list[str]] = {}
    for col in shown.columns:
        stat = str(col).removesuffix(" (%)")
        mcol = f"{stat}_method"
        if mcol not in wide_table:
            continue
        methods = wide_table[mcol].dropna().astype(str).unique()
        if len(methods):
            said.setdefault("; ".join(method_words(m) for m in methods), []).append(_header(stat))
    conf = _pct(_confidence(doc))
    return [f"{', '.join(cols)}: {conf} % CI by {how}." for how, cols in said.items()]


def _latex_note(notes: list[str]) -> str:
    if not notes:
        return ""
    text = " ".join(_escape_note(n) for n in notes)
    return f"\\par\\smallskip\n\\parbox{{\\linewidth}}{{\\scriptsize {text}}}\n"


def _escape_note(note: str) -> str:
    # The method's underscores are escaped already; everything else goes through pandas'
    # escaper (the same as the cells), one character at a time where pre-escaped.
    parts = note.split("\\_")
    return "\\_".join(_escape(p) for p in parts)


def _escape(text: str) -> str:
    styler = pd.DataFrame({"x": [show_bidi(text)]}).style.hide(axis="index")
    tex = styler.format(escape="latex").hide(axis="columns").to_latex()
    return tex.split("\n", 1)[1].rsplit("\\\\", 1)[0].strip()


def latex_tables(
    results: Any, *, digits: int | None = None, percent: bool = True
) -> dict[str, str]:
    """Each exported table as a ``table*`` float that fits ``\\textwidth`` (booktabs).

    A ``%`` comment line first (the caption), then the float: human column names, short
    judge names with the full model ids in a note below, the interval method (when one
    method makes the whole table) in the note. Needs ``\\usepackage{booktabs,graphicx}``;
    a table wider than the line even so (very long names) is scaled to it, never overfull.

    >>> from evalstats.report import compute_results
    >>> tex = latex_tables(compute_results("data/sample", n_resamples=200, seed=0))
    >>> tex["headline"].splitlines()[2:4]
    ['\\\\begin{table*}[tbp]', '\\\\centering\\\\footnotesize']
    """
    doc = _load(results)
    out = {}
    for name, frame in formatted_tables(doc, digits=digits, percent=percent, na_rep="--").items():
        comment = "% " + _caption(doc, name, frame).replace("\n", " ")
        table, notes = paper_table(doc, name, frame)
        # Long words wrap in their column instead of widening the table.
        body = latex_table(table, widths=_WRAP)
        out[name] = (
            comment
            + "\n% needs \\usepackage{booktabs,graphicx}\n"
            + "\\begin{table*}[tbp]\n\\centering\\footnotesize\n"
            + "\\setlength{\\tabcolsep}{3pt}\n"
            + _FIT.replace("@NAME@", name.replace("_", "-")).replace("@BODY@", body)
            + _latex_note(notes)
            + f"\\label{{tab:evalstats-{name.replace('_', '-')}}}\n"
            + "\\end{table*}\n"
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
