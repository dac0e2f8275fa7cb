"""What the report notebooks call to display a section: escaped tables, figures, provenance.

Every table cell goes through ``html.escape`` (judge reasoning and raw output are data, never
markup); figures are drawn by :mod:`evalstats.plots`, laid out once, shown as SVG and
written as SVG, PNG and PDF. Each helper displays and returns None, so a cell ending with one does not
display the table a second time.
"""

from __future__ import annotations

import html
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..records import atomic_write
from ._figures import enqueue, write_figure_files

__all__ = [
    "geomean_ci",
    "load_results",
    "merge_ci",
    "show_confusions",
    "show_figure",
    "show_findings",
    "show_provenance",
    "show_table",
    "show_unavailable",
    "table_html",
]

# Free text (judge reasoning and raw output, audit details): wrapped in a bounded column.
_LONG_TEXT = frozenset({"reasoning", "raw", "detail", "parse_error", "rule"})
# Figures are written as SVG, PNG (300 dpi) and PDF (:mod:`._figures`); the page shows the
# SVG at the size a 110-dpi image had.
_SHOWN_DPI = 110


# --------------------------------------------------------------------------------------------
# notebook-side display helpers
# --------------------------------------------------------------------------------------------


def _display(html_text: str, plain: str) -> None:
    from IPython.display import display

    display({"text/html": html_text, "text/plain": plain}, raw=True)


def _fmt_number(v: Any, digits: int) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}f}"
    return str(v)


def table_html(
    table: pd.DataFrame,
    *,
    caption: str | None = None,
    digits: int = 3,
    name: str | None = None,
) -> str:
    """An escaped HTML table: every cell goes through ``html.escape`` (judge text is data)."""
    kinds = {
        c: "long"
        if c in _LONG_TEXT
        else "num"
        if pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
        else "text"
        for c in table.columns
    }
    head = "".join(
        f'<th class="{kinds[c]}" scope="col">{html.escape(str(c))}</th>' for c in table.columns
    )
    body = []
    for row in table.astype(object).itertuples(index=False, name=None):
        cells = []
        for c, v in zip(table.columns, row, strict=True):
            cls = kinds[c]
            text = _fmt_number(v.item() if hasattr(v, "item") else v, digits)
            cells.append(f'<td class="{cls}">{html.escape(text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    attr = f' data-table="{html.escape(name)}"' if name else ""
    return (
        f'<div class="table-wrap"><table{attr}>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def merge_ci(table: pd.DataFrame, names: Sequence[str], *, digits: int = 3) -> pd.DataFrame:
    """Replace each statistic and its two interval columns by one text cell "est [lo, hi]"."""
    out = table.copy()
    for name in names:
        lo, hi = f"{name}_ci_low", f"{name}_ci_high"
        if lo not in out.columns or hi not in out.columns:
            continue
        est = out[name] if name in out.columns else None
        cells = [
            f"[{_fmt_number(a, digits)}, {_fmt_number(b, digits)}]"
            for a, b in zip(out[lo], out[hi], strict=True)
        ]
        if est is not None:  # an interval with no estimate column shows the interval alone
            cells = [f"{_fmt_number(e, digits)} {c}" for e, c in zip(est, cells, strict=True)]
        if est is None:
            out.insert(out.columns.get_loc(lo), name, cells)
        else:
            out[name] = cells
        out = out.drop(columns=[lo, hi])
    return out


def show_table(
    results: Any,
    name: str,
    *,
    columns: Sequence[str] | None = None,
    caption: str | None = None,
    digits: int = 3,
    query: str | None = None,
    ci: Sequence[str] = (),
    transpose_by: Sequence[str] | None = None,
) -> None:
    """Display table ``name`` of a :class:`~evalstats.results.Results` (escaped HTML + text).

    ``ci`` names statistics shown as one cell ``estimate [ci_low, ci_high]`` (from the
    ``<name>_ci_low`` / ``<name>_ci_high`` columns), the compact form a paper prints.
    ``transpose_by`` shows one column per row, labelled by those key columns.

    ``columns`` picks and orders columns (those absent are skipped); ``query`` filters rows
    (``DataFrame.query``). Shows why when the section is unavailable. Returns None, so that
    a notebook cell ending with it does not display the table a second time.
    """
    table = results.tables.get(name)
    if table is None:
        show_unavailable(results, name)
        return
    if query:
        table = table.query(query)
    if ci:
        table = merge_ci(table, ci, digits=digits)
    if columns is not None:
        table = table[[c for c in columns if c in table.columns]]
    if transpose_by and not table.empty:
        # Few rows and many statistics read better as one column per row.
        keys = [c for c in transpose_by if c in table.columns]
        labels = table[keys].astype(str).agg(" · ".join, axis=1)
        body = table.drop(columns=keys).astype(object)
        body.index = labels
        table = body.T.rename_axis("statistic").reset_index()
        table.columns = [str(c) for c in table.columns]
    if table.empty:
        _display('<p class="note">(no rows)</p>', "(no rows)")
        return
    with pd.option_context("display.max_columns", 50, "display.width", 200):
        plain = table.to_string(index=False, max_colwidth=60)
    _display(table_html(table, caption=caption, digits=digits, name=name), plain)


def show_unavailable(results: Any, section: str) -> None:
    """Say plainly that a section is not available, and why."""
    reason = results.unavailable.get(section, "not computed")
    text = f"{section}: not available ({reason})."
    _display(f'<p class="unavailable">{html.escape(text)}</p>', text)


def show_provenance(results: Any) -> None:
    """The simulated-data label (when it applies) and where the numbers come from."""
    p = results.provenance
    rows = [
        ("data", p.get("data_dir", "")),
        (
            "simulated",
            "YES (truth.json): not evidence about any tool" if results.simulated else "no",
        ),
        *((f"sha256 {name}", info["sha256"]) for name, info in p.get("inputs", {}).items()),
        *(
            (
                f"rubric {r['rubric']}",
                f"revision {r['package_revision']}, sha256 {r['package_sha256']}"
                + ("" if r["matches_package"] else " (judgments used a different prompt!)"),
            )
            for r in p.get("rubrics", [])
        ),
        *((f"judge {j['judge']}", ", ".join(j["model_ids"]) or "—") for j in p.get("judges", [])),
        ("evalstats", p.get("package", {}).get("version", "")),
        (
            "seed / resamples / confidence",
            f"{p.get('seed')} / {p.get('n_resamples')} / {p.get('confidence')}",
        ),
    ]
    parts = []
    parts.append(
        '<div class="table-wrap"><table data-table="provenance"><tbody>'
        + "".join(
            f'<tr><th class="text" scope="row">{html.escape(str(k))}</th>'
            f'<td class="text"><code>{html.escape(str(v))}</code></td></tr>'
            for k, v in rows
        )
        + "</tbody></table></div>"
    )
    plain = "\n".join(f"{k}: {v}" for k, v in rows)
    _display("".join(parts), plain)


def show_figure(
    plot: str,
    *args: Any,
    name: str,
    output_dir: str | os.PathLike[str] | None = None,
    alt: str = "",
    **kwargs: Any,
) -> None:
    """Draw ``evalstats.plots.<plot>(*args, **kwargs)``, save it and display it as a PNG.

    With ``output_dir``, the figure is written to ``output_dir/figures/<name>.svg``,
    ``.png`` (300 dpi) and ``.pdf`` (TrueType fonts). Says so (instead of failing) when the plot function is not available.
    """
    from IPython.display import display

    try:
        from .. import plots
    except ImportError:
        plots = None
    func = getattr(plots, plot, None) if plots is not None else None
    if func is None:
        text = f"figure {name}: not available (evalstats.plots.{plot} is missing)."
        _display(f'<p class="unavailable">{html.escape(text)}</p>', text)
        return
    try:
        fig = func(*args, **kwargs)
    except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError) as exc:
        # A design the figure cannot draw (one task, no verdict...): the page says so.
        text = f"figure {name}: not available (evalstats.plots.{plot}: {exc})."
        _display(f'<p class="unavailable">{html.escape(text)}</p>', text)
        return
    # Laid out once; the SVG is written and shown, the 300-dpi PNG and the PDF rendered
    # from the same laid-out figure (by `evalstats report`'s process, beside this kernel,
    # when it runs one and is not behind: EVALSTATS_FIGURE_QUEUE; else here).
    bbox = plots.layout_figure(fig)
    svg = plots.render_figure(fig, formats=("svg",), bbox=bbox)["svg"]
    if output_dir is not None:
        figures = Path(output_dir) / "figures"
        _write(figures / f"{name}.svg", svg)
        queue = os.environ.get("EVALSTATS_FIGURE_QUEUE")
        if not (queue and enqueue(Path(queue), name, fig, bbox)):
            write_figure_files(fig, bbox, name, figures)
    display(
        {"image/svg+xml": svg.decode("utf-8"), "text/plain": alt or f"figure {name}"},
        metadata={"image/svg+xml": {"width": round(bbox.width * _SHOWN_DPI)}},
        raw=True,
    )


def _write(path: Path, data: bytes) -> None:
    atomic_write(path, lambda fh: fh.write(data))
    path.chmod(0o644)  # figures are for sharing (the temporary file was 0600)


def geomean_ci(results: Any) -> dict[str, tuple[float, float]] | None:
    """The cost table's geometric-mean intervals, as :func:`evalstats.plots.plot_cost_ratios`
    draws them (so the figure shows the same interval as the table)."""
    cost = results.tables.get("cost")
    if cost is None:
        return None
    rows = cost.set_index("metric")
    out = {}
    for measure in ("tokens", "wall"):
        metric = f"{measure}_geomean_ratio"
        if metric in rows.index:
            out[measure] = (float(rows.loc[metric, "ci_low"]), float(rows.loc[metric, "ci_high"]))
    return out or None


def show_confusions(results: Any, *, output_dir: str | os.PathLike[str] | None = None) -> None:
    """One judge-vs-judge confusion matrix per row of the ``agreement`` table."""
    import numpy as np

    agreement = results.tables.get("agreement")
    if agreement is None:
        show_unavailable(results, "agreement")
        return
    for row in agreement.to_dict("records"):
        if not isinstance(row.get("confusion"), list):
            continue  # the many-judge summary row has no 2-judge table
        show_figure(
            "plot_confusion",
            np.asarray(row["confusion"]),
            judges=(row["judge_a"], row["judge_b"]),
            kappa=row["kappa"],
            title=f"{row['rubric']}: {row['judge_a']} vs {row['judge_b']}",
            name=f"confusion_{row['rubric']}",
            output_dir=output_dir,
            alt=f"Confusion matrix of the two judges' verdicts, rubric {row['rubric']}",
        )


def show_findings(results: Any, *, table: str = "findings") -> None:
    """The findings of ``results`` (one Markdown sentence per row of its ``findings`` table,
    computed in Python and stored in results.json with the numbers they quote)."""
    from IPython.display import Markdown, display

    t = results.tables.get(table)
    if t is None or t.empty:
        show_unavailable(results, table)
        return
    display(Markdown("\n".join(t["text"].astype(str))))


def load_results(path: str | os.PathLike[str]) -> Any:
    """The :class:`~evalstats.report.Results` that ``evalstats report`` computed once and
    handed to the notebooks (a pickle in the renderer's own private temporary directory;
    never load one from elsewhere: unpickling runs code)."""
    with Path(path).open("rb") as fh:
        return pickle.load(fh)
