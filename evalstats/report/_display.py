"""What the report notebooks call to display a section: escaped tables that fit the page,
figures (shown as SVG, written in the formats asked for), provenance, the headline card and
the declared plan. Each ``show_*`` displays and returns None."""

from __future__ import annotations

import html
import inspect
import os
import pickle
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..records import DEFAULT_ARM_NAMES
from ._kinds import ReportError
from ._results import wide_view

__all__ = [
    "DEFAULT_FORMATS",
    "FORMATS",
    "check_formats",
    "load_results",
    "merge_ci",
    "pair_frames",
    "plan_sentence",
    "show_confusions",
    "show_figure",
    "show_findings",
    "show_headline_card",
    "show_provenance",
    "show_table",
    "show_tests",
    "show_unavailable",
    "table_html",
    "table_view",
    "write_figure",
]

FORMATS = ("svg", "pdf", "png")
DEFAULT_FORMATS = ("svg", "pdf")
_FILE_DPI = 300


def check_formats(formats: str | Iterable[str]) -> list[str]:
    """The figure formats ``formats`` names (``"svg,pdf"`` or a sequence), checked.

    >>> check_formats("svg,pdf,png")
    ['svg', 'pdf', 'png']
    >>> check_formats("svg,jpg")
    Traceback (most recent call last):
    ...
    evalstats.errors.ReportError: unknown figure format(s) jpg; known: svg, pdf, png
    """
    items = formats.split(",") if isinstance(formats, str) else list(formats)
    names = [str(f).strip().lower() for f in items]
    unknown = [f for f in names if f not in FORMATS]
    if unknown:
        raise ReportError(
            f"unknown figure format(s) {', '.join(unknown)}; known: {', '.join(FORMATS)}"
        )
    if not names or len(set(names)) != len(names):
        raise ReportError(f"figure formats must be a non-empty list without repeats, got {items}")
    return names


def write_figure(
    fig: Any, name: str, figures: Path | None, formats: Iterable[str] = DEFAULT_FORMATS
) -> tuple[bytes, Any]:
    """Lay ``fig`` out once, write ``figures/<name>.<format>`` for each of ``formats`` (unless
    ``figures`` is None); return the SVG the page shows and the bounding box (inches)."""
    from .. import plots
    from ..records import atomic_write

    formats = check_formats(formats)
    bbox = plots.layout_figure(fig)
    svg = plots.render_figure(fig, formats=("svg",), bbox=bbox)["svg"]
    if figures is None:
        return svg, bbox
    others = [f for f in formats if f != "svg"]
    rendered = {"svg": svg, **plots.render_figure(fig, dpi=_FILE_DPI, formats=others, bbox=bbox)}
    for fmt in formats:
        target = figures / f"{name}.{fmt}"
        atomic_write(target, lambda fh, data=rendered[fmt]: fh.write(data))
        target.chmod(0o644)  # figures are for sharing (the temporary file was 0600)
    return svg, bbox


# Free text, wrapped in a bounded column.
_LONG_TEXT = frozenset({"reasoning", "raw", "detail", "parse_error", "rule"})
_WIDE_FROM = 14  # columns
_CI_CELL = re.compile(r"^\S+ \[[^\[\]]+\]$")  # "0.352 [0.156, 0.521]", wrapped at its spaces
_SHOWN_DPI = 110  # the page shows the SVG at the size of a 110-dpi image


def _display(html_text: str, plain: str) -> None:
    from IPython.display import display

    display({"text/html": html_text, "text/plain": plain}, raw=True)


def _fmt_number(v: Any, digits: int, integer: bool = False) -> str:
    """``v`` with ``digits`` decimals; ``integer``: a whole number, with thousands separators."""
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and abs(v) == float("inf"):  # e.g. more_tasks when never decided
        return "∞" if v > 0 else "−∞"
    if isinstance(v, int) or (integer and isinstance(v, float)):
        return f"{round(v):,}"
    if isinstance(v, float):
        if v != 0 and abs(v) < 10 ** (-digits):
            return f"{v:.{digits - 1}e}"
        return f"{v:.{digits}f}"
    return str(v)


_COUNT_NAME = re.compile(r"^n$|^n_|tokens$|^calls$")


def _whole(*columns: pd.Series) -> bool:
    """Whether ``columns`` hold counts or ranks: whole numbers, some above 1 or named a count
    (a rate of exactly 0 or 1 keeps its decimals)."""
    values = pd.concat([pd.to_numeric(c, errors="coerce") for c in columns]).dropna()
    if not len(values) or not (values == values.round()).all():
        return False
    return bool(values.abs().max() > 1) or any(_COUNT_NAME.search(str(c.name)) for c in columns)


def table_html(
    table: pd.DataFrame, *, caption: str | None = None, digits: int = 3, name: str | None = None
) -> str:
    """An escaped HTML table that wraps to fit the page: one table, one caption.

    Headers wrap after ``_``, ``:`` and ``-``, an ``est [lo, hi]`` cell at its spaces;
    whole-number columns print as integers; a column of empty strings is left out.

    Examples
    --------
    >>> t = pd.DataFrame({"judge": ["a:b"], "net_win": ["0.352 [0.156, 0.521]"], "n": [3.0]})
    >>> print(table_html(t, name="x"))  # doctest: +NORMALIZE_WHITESPACE
    <div class="table-wrap"><table data-table="x"><thead><tr><th class="text"
    scope="col">judge</th><th class="ci" scope="col">net_<wbr>win</th><th class="num"
    scope="col">n</th></tr></thead><tbody><tr><td class="text">a:b</td><td
    class="ci">0.352 <span>[0.156, 0.521]</span></td><td class="num">3</td></tr></tbody></table></div>
    """
    # A column with no text in any row (no plan: no primary mark; no note) is not shown.
    blank = [len(table) > 0 and (table[c].astype(object) == "").all() for c in table.columns]
    table = table.loc[:, [not b for b in blank]]
    columns = [str(c) for c in table.columns]
    numeric = [
        pd.api.types.is_numeric_dtype(table[c]) and not pd.api.types.is_bool_dtype(table[c])
        for c in table.columns
    ]
    whole = [num and _whole(table[c]) for num, c in zip(numeric, table.columns, strict=True)]
    texts = [
        [
            _fmt_number(v.item() if hasattr(v, "item") else v, digits, whole[j])
            for j, v in enumerate(row)
        ]
        for row in table.astype(object).itertuples(index=False, name=None)
    ]
    kinds = []
    for j, c in enumerate(columns):
        if c in _LONG_TEXT:
            kinds.append("long")
        elif numeric[j]:
            kinds.append("num")
        elif texts and all(_CI_CELL.match(r[j]) or r[j] == "—" for r in texts):
            kinds.append("ci")
        else:
            kinds.append("text")
    head = "".join(
        f'<th class="{k}" scope="col">{re.sub(r"(?<=[-_:])(?!$)", "<wbr>", html.escape(c))}</th>'
        for c, k in zip(columns, kinds, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{k}">{_cell(t, k)}</td>' for t, k in zip(row, kinds, strict=True))
        + "</tr>"
        for row in texts
    )
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    attrs = f' data-table="{html.escape(name)}"' if name else ""
    wrap = "table-wrap wide" if len(columns) > _WIDE_FROM else "table-wrap"  # a smaller font
    return (
        f'<div class="{wrap}"><table{attrs}>{cap}<thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _cell(text: str, kind: str) -> str:
    """``text`` escaped; an interval in a span, kept on one line where the page has room."""
    if kind != "ci" or " [" not in text:
        return html.escape(text)
    return html.escape(text).replace(" [", " <span>[", 1) + "</span>"


def merge_ci(table: pd.DataFrame, names: Sequence[str], *, digits: int = 3) -> pd.DataFrame:
    """Replace each statistic and its two interval columns (``<name>_ci_low``, ``_ci_high``,
    else a tidy table's ``ci_low``, ``ci_high``) by one text cell "est [lo, hi]"."""
    out = table.copy()
    for name in names:
        lo, hi = f"{name}_ci_low", f"{name}_ci_high"
        if lo not in out.columns:
            lo, hi = "ci_low", "ci_high"
        if lo not in out.columns or hi not in out.columns:
            continue
        est = out[name] if name in out.columns else None
        # A rank and its rank set are whole numbers: "3 [1, 3]", not "3.000 [1.000, 3.000]".
        whole = _whole(out[lo], out[hi], *([] if est is None else [est]))
        cells = [
            f"[{_fmt_number(a, digits, whole)}, {_fmt_number(b, digits, whole)}]"
            for a, b in zip(out[lo], out[hi], strict=True)
        ]
        if est is None:
            out.insert(out.columns.get_loc(lo), name, cells)
        else:
            out[name] = [
                f"{_fmt_number(e, digits, whole)} {c}" for e, c in zip(est, cells, strict=True)
            ]
        out = out.drop(columns=[lo, hi])
    return out


PAIR_COLUMNS = ("arm_a", "arm_b")


def table_view(results: Any, name: str) -> pd.DataFrame | None:
    """Table ``name`` of ``results`` as a page shows it (a long result pivoted to one row per
    group, its diagnostics joined)."""
    table = results.tables.get(name)
    diagnostics = getattr(table, "diagnostics", None)
    if diagnostics is None:
        diagnostics = results.tables.get(f"{name}_diagnostics")
    return wide_view(table, diagnostics)


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
    matrix: tuple[str, str] | None = None,
) -> None:
    """Display table ``name`` of a :class:`~evalstats.report.Results` (escaped HTML + text),
    or why it is unavailable.

    ``columns`` picks and orders columns; ``query`` filters rows; ``ci`` names statistics
    shown as one cell ``estimate [ci_low, ci_high]``; ``transpose_by`` shows one column per
    row, labelled by those key columns; ``matrix=(rows, cols)`` shows the last column as one
    matrix (``rows`` × ``cols``) per group of the other columns.
    """
    table = table_view(results, name)
    if table is None:
        show_unavailable(results, name)
        return
    if query:
        table = table.query(query)
    if matrix is not None:
        _show_matrices(table, *matrix, caption, name)
        return
    if ci:
        table = merge_ci(table, ci, digits=digits)
    pair = [c for c in PAIR_COLUMNS if c in table.columns]
    if columns is not None:
        table = table[[c for c in dict.fromkeys([*pair, *columns]) if c in table.columns]]
    if transpose_by and not table.empty:
        keys = [c for c in dict.fromkeys([*pair, *transpose_by]) if c in table.columns]
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


def _show_matrices(table: pd.DataFrame, rows: str, cols: str, caption: Any, name: str) -> None:
    """One small table per group: ``rows`` down, ``cols`` across, the last column's values."""
    value = table.columns[-1]
    keys = [c for c in table.columns if c not in (rows, cols, value)]
    groups = table.groupby(keys, sort=False, observed=True) if keys else [((), table)]
    parts, plain = [], [caption or name]
    for key, g in groups:
        label = " · ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
        m = g.pivot_table(value, rows, cols, "sum", fill_value=0, observed=True, sort=False)
        m = m.rename_axis(index=f"{rows} \\ {cols}", columns=None).reset_index()
        parts.append(table_html(m, caption=label or None, name=name))
        plain.append(f"{label}\n{m.to_string(index=False)}")
    head = f'<p class="note">{html.escape(caption)}</p>' if caption else ""
    _display(f'{head}<div class="matrices">{"".join(parts)}</div>', "\n\n".join(plain))


def show_unavailable(results: Any, section: str) -> None:
    """Say plainly that a section is not available, and why."""
    reason = results.unavailable.get(section, "not computed")
    text = f"{section}: not available ({reason})."
    _display(f'<p class="unavailable">{html.escape(text)}</p>', text)


def _arm_pairs(arm_names: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """(WITH, its name), (WITHOUT, its name); empty when neither arm is named."""
    if arm_names and set(arm_names) - set(DEFAULT_ARM_NAMES):
        return [(str(arm), str(name)) for arm, name in arm_names.items()]
    names = {arm: str((arm_names or {}).get(arm, d)) for arm, d in DEFAULT_ARM_NAMES.items()}
    if names == DEFAULT_ARM_NAMES:
        return []
    return [
        (d, names[arm] if names[arm] != d else "(not named)")
        for arm, d in DEFAULT_ARM_NAMES.items()
    ]


def show_provenance(results: Any) -> None:
    """Which arm is which, the simulated-data label and where the numbers come from."""
    p = results.provenance
    simulated = "YES (truth.json): not evidence about any tool" if results.simulated else "no"
    rows = [("data", p.get("data_dir", "")), ("simulated", simulated)]
    rows += [(f"sha256 {name}", info["sha256"]) for name, info in p.get("inputs", {}).items()]
    for r in p.get("rubrics", []):
        other = "" if r["matches_package"] else " (judgments used a different prompt!)"
        said = f"revision {r['package_revision']}, sha256 {r['package_sha256']}{other}"
        rows.append((f"rubric {r['rubric']}", said))
    rows += [(f"judge {j['judge']}", ", ".join(j["model_ids"]) or "—") for j in p.get("judges", [])]
    rows.append(("evalstats", p.get("package", {}).get("version", "")))
    settings = f"{p.get('seed')} / {p.get('n_resamples')} / {p.get('confidence')}"
    rows.append(("seed / resamples / confidence", settings))
    arms = _arm_pairs(p.get("arm_names"))
    said = " · ".join(f"<strong>{html.escape(a)}</strong> = {html.escape(n)}" for a, n in arms)
    parts = [f'<p class="arms">{said}</p>'] if arms else []
    parts.append(
        '<div class="table-wrap"><table data-table="provenance"><tbody>'
        + "".join(
            f'<tr><th class="text" scope="row">{html.escape(str(k))}</th>'
            f'<td class="text"><code>{html.escape(str(v))}</code></td></tr>'
            for k, v in rows
        )
        + "</tbody></table></div>"
    )
    lines = [" · ".join(f"{arm} = {name}" for arm, name in arms)] if arms else []
    plain = "\n".join([*lines, *(f"{k}: {v}" for k, v in rows)])
    _display("".join(parts), plain)


def show_figure(
    plot: str,
    *args: Any,
    name: str,
    output_dir: str | os.PathLike[str] | None = None,
    alt: str = "",
    formats: Sequence[str] = DEFAULT_FORMATS,
    source: str = "",
    **kwargs: Any,
) -> None:
    """Draw ``evalstats.plots.<plot>(*args, **kwargs)``, save it and display it as an SVG,
    with ``source`` (what of results.json it draws) said under it.

    With ``output_dir``, written to ``output_dir/figures/<name>.<format>`` for each of
    ``formats``. A figure that cannot be drawn is said, not raised; ``arm_names`` is passed from the
    data's ``attrs`` unless given.
    """
    from IPython.display import display

    from .. import plots

    func, why = getattr(plots, plot, None), f"evalstats.plots.{plot} is missing"
    try:
        fig = func(*args, **_with_arm_names(func, args, kwargs)) if func else None
    except (ValueError, KeyError, IndexError, TypeError, ZeroDivisionError) as exc:
        fig, why = None, f"evalstats.plots.{plot}: {exc}"
    if fig is None:
        text = f"figure {name}: not available ({why})."
        _display(f'<p class="unavailable">{html.escape(text)}</p>', text)
        return
    figures = None if output_dir is None else Path(output_dir) / "figures"
    svg, bbox = write_figure(fig, name, figures, formats)
    display(
        {"image/svg+xml": svg.decode("utf-8"), "text/plain": alt or f"figure {name}"},
        metadata={"image/svg+xml": {"width": round(bbox.width * _SHOWN_DPI)}},
        raw=True,
    )
    if source:
        said = f"Drawn from {source}."
        _display(f'<p class="figure-source">{html.escape(said)}</p>', said)


def _with_arm_names(func: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` plus ``arm_names`` from the first DataFrame argument that carries them."""
    if kwargs.get("arm_names") is not None:
        return kwargs
    kwargs = {k: v for k, v in kwargs.items() if k != "arm_names"}
    if "arm_names" in inspect.signature(func).parameters:
        frames = (a for a in args if isinstance(a, pd.DataFrame) and a.attrs.get("arm_names"))
        names = next(frames, None)
        kwargs |= {"arm_names": dict(names.attrs["arm_names"])} if names is not None else {}
    return kwargs


def pair_frames(results: Any) -> list[tuple[Any, pd.DataFrame, Any, str]]:
    """The verdict frame of each pair of arms of ``results``, as the figures draw it.

    ``(pair, frame, arm_names, figure-name stem)``; ``[(None, results.frame, None, "")]`` for
    two arms.
    """
    frame = results.frame
    if frame is None or "arm_a" not in frame.columns or not results.provenance.get("arm_pairs"):
        return [(None, frame, None, "")]
    names = results.provenance.get("arm_names") or {}
    out = []
    for a, b in frame[["arm_a", "arm_b"]].drop_duplicates().itertuples(index=False, name=None):
        f = frame.loc[(frame["arm_a"] == a) & (frame["arm_b"] == b)].reset_index(drop=True)
        who = {"with": names.get(a, a), "without": names.get(b, b)}
        out.append(((a, b), f, who, f"_{a}_{b}"))
    return out


def show_confusions(
    results: Any,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> None:
    """One judge-vs-judge confusion matrix per row of the ``agreement`` table."""
    import numpy as np

    agreement = table_view(results, "agreement")
    if agreement is None:
        show_unavailable(results, "agreement")
        return
    for row in agreement.to_dict("records"):
        if not isinstance(row.get("confusion"), list):
            continue  # the many-judge summary row has no 2-judge table
        pair = f"{row['arm_a']} vs {row['arm_b']}, " if "arm_a" in row else ""
        stem = f"_{row['arm_a']}_{row['arm_b']}" if "arm_a" in row else ""
        show_figure(
            "plot_confusion",
            np.asarray(row["confusion"]),
            judges=(row["judge_a"], row["judge_b"]),
            kappa=row["kappa"],
            title=f"{pair}{row['rubric']}: {row['judge_a']} vs {row['judge_b']}",
            name=f"confusion_{row['rubric']}{stem}",
            output_dir=output_dir,
            formats=formats,
            alt=f"Confusion matrix of the two judges' verdicts, rubric {row['rubric']}",
        )


def show_findings(results: Any, *, table: str = "findings") -> None:
    """The findings of ``results``: one Markdown sentence per row of its ``findings`` table."""
    from IPython.display import Markdown, display

    t = results.tables.get(table)
    if t is None or t.empty:
        show_unavailable(results, table)
        return
    display(Markdown("\n".join(t["text"].astype(str))))


def load_results(path: str | os.PathLike[str]) -> Any:
    """The Results the renderer handed to a notebook (its own pickle: never load another)."""
    with Path(path).open("rb") as fh:
        return pickle.load(fh)


_PRIMARY_MARK = "★ primary"


def show_headline_card(results: Any) -> None:
    """The primary result in at most six lines: the answer, what it rests on and the audit's
    verdict (its fails in full); the audit's list and why this row one click away."""
    from collections import Counter

    from ._evaluation import estimate_note
    from ._export import _caveats, _headline_parts, _pair_words
    from ._results import _load

    if results.tables.get("headline") is None:
        show_unavailable(results, "headline")
        return
    doc = _load(results)
    result, _, why = _headline_parts(doc, None, None, True)
    result += estimate_note(results.tables["headline"])
    audit = results.tables.get("audit")
    caveats = _caveats(doc)
    # A failed check stays in view, one line per check however many pairs fail it.
    failing: dict[str, list[str]] = {}
    for r in caveats:
        if str(r.get("status")) == "fail":
            failing.setdefault(str(r["check"]), []).append(_pair_words(r, ""))
    fails = [
        f"The audit fails {check}" + (f" for {', '.join(p)}" if any(p) else "") + "."
        for check, p in failing.items()
    ]
    tally = Counter(str(r.get("status")) for r in caveats)  # fail first
    n = f"{len(audit)} checks" if audit is not None else "the checks"
    said = " and ".join(f"{k} {s}" for s, k in tally.items())
    said = f"Audit: of {n}, {said}" if tally else f"Audit: all {n} pass"
    lines = [f"{r['status']} {_pair_words(r)}{r['check']}: {r['detail']}" for r in caveats]
    items = "".join(f"<li>{html.escape(x)}</li>" for x in lines)
    audit_html = (
        f"<details><summary>{html.escape(said)} (the list)</summary><ul>{items}</ul></details>"
        if caveats
        else f"<p>{html.escape(said)}.</p>"
    )
    _display(
        '<section class="headline-card" aria-label="headline result"><p><strong>Headline.'
        f"</strong> {html.escape(result)}</p>"
        + "".join(f'<p class="fail">{html.escape(f)}</p>' for f in fails)
        + audit_html
        + f"<details><summary>Why this row</summary><p>{html.escape(why)}</p></details></section>",
        "\n".join([f"Headline. {result}", *fails, f"{said}.", *lines, f"Why this row: {why}"]),
    )


def plan_sentence(results: Any) -> str:
    """What the page says under the headline table about the plan and Holm's adjustment."""
    from ._export import _p_text, _plan_terms

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
    text = (
        f"Declared analysis plan ({plan.get('file') or 'plan'}, sha256 {plan['sha256'][:12]}…): "
        f"primary {primary['statistic']} of {primary['judge']} on the {primary['rubric']} "
        f"rubric, {where}; {_plan_terms(plan)}. "
    )
    text += (
        "The primary is tested alone at alpha; the other net-win tests of the headline "
        "and consensus tables form the Holm family (net_win_p_holm)."
        if primary["statistic"] == "net_win"
        else "The primary statistic is not a net win, so every net-win test is secondary and "
        "Holm-adjusted together (net_win_p_holm)."
    )
    test = results.tables.get("primary_test")
    if test is not None and len(test):
        row = test.iloc[0]
        if row["decision"] == "no test":
            text += f" The declared test (primary_test, below): {row['conclusion']}."
        else:
            text += (
                f" The declared test is computed in the primary_test table below ({row['test']}, "
                f"p {_p_text(float(row['p_value']), eq='= ')}, {row['decision']}); net_win_p here is the "
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
    """:func:`show_table` with the plan's primary row marked, and :func:`plan_sentence` under it."""
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
