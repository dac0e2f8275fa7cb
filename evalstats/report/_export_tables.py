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
from ._results_doc import EXPORT_TABLES, _confidence, _load, _pct, _table
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
        view = summarize(
            table,
            statistics=[s for s in stats if s in have],
            digits=digits,
            percent=percent,
            na_rep=na_rep,
        )
        view = view.drop(columns=["confidence"], errors="ignore")
        if "audit" in view and not view["audit"].astype(str).str.strip().ne("").any():
            # The audit mark (issue 22) is a column only where a row carries one: a row of
            # a failing rubric is never exported plain, and a clean table stays as it was.
            view = view.drop(columns=["audit"])
        out[name] = view
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
    text = frame.astype(object).where(frame.notna(), "--").astype(str).map(show_bidi)
    # A bidi control in a cell would reorder the typeset line: shown as [U+202E] instead.
    text.columns = [show_bidi(str(c)) for c in text.columns]
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
