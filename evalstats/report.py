"""Render the published report: execute the notebooks, then write self-contained HTML + assets.

``evalstats report DATA_DIR -o reports/NAME [--kind KIND] [-p key=value ...]`` (or
:func:`render_report`) executes the notebooks of the report's kind (:data:`REPORT_KINDS`) with
their papermill ``parameters`` cell filled in, in a kernel running this very Python. The kind is
recognised from the directory unless given:

* ``evaluation`` (``tasks.*``, ``runs.*``, ``judgments.*``): ``notebooks/report.ipynb`` and
  ``notebooks/methodology.ipynb``;
* ``alpaca_eval`` (AlpacaEval ``*annotations*.json[l][.gz]`` files):
  ``notebooks/case_study_alpaca_eval.ipynb``, the case study of
  :func:`evalstats.adapters.alpaca_eval.compute_case_study`.

For an evaluation it writes::

    reports/NAME/index.html          the report (inputs hidden, images inlined, no scripts)
    reports/NAME/methodology.html    power / minimum detectable effect, CI coverage evidence
    reports/NAME/results.json        every number both pages show, plus provenance
    reports/NAME/figures/*.png|svg   each figure, as shown
    reports/NAME/tables/*.csv        each table, full precision
    reports/NAME/notebooks/*.ipynb   the executed notebooks, for audit

Each notebook computes its numbers once (:func:`evalstats.results.compute_results`,
:func:`~evalstats.results.compute_methodology`), writes them as JSON and displays them; the
JSON parts are merged into ``results.json``, so the page and the JSON come from one computation.
The case study writes ``index.html``, ``results.json``, ``figures/``, ``tables/`` and
``notebooks/`` the same way, from one notebook.

The helpers ``show_*`` are what the notebooks call to display a section; they escape every
table cell (judge reasoning and raw output are data, never markup).

Examples
--------
>>> from evalstats.report import render_report
>>> render_report("data/sample", "reports/sample", params={"n_resamples": 2000})  # doctest: +SKIP
PosixPath('reports/sample/index.html')
>>> render_report("../shared/data/alpaca_eval", "reports/alpaca_eval")  # doctest: +SKIP
PosixPath('reports/alpaca_eval/index.html')
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import _html
from .errors import EvalstatsError

__all__ = [
    "CASE_STUDY_PARAMETERS",
    "NOTEBOOKS",
    "PARAMETERS",
    "REPORT_KINDS",
    "ReportError",
    "ReportKind",
    "detect_kind",
    "execute_notebook",
    "notebook_path",
    "parse_params",
    "register",
    "render_report",
    "geomean_ci",
    "show_confusions",
    "show_figure",
    "show_provenance",
    "show_table",
    "show_unavailable",
]

# (notebook, html page, title); the first is index.html.
NOTEBOOKS = (
    ("report.ipynb", "index.html", "Report"),
    ("methodology.ipynb", "methodology.html", "Methodology"),
)
# The notebooks' papermill parameters and their defaults (the `parameters` cell holds the same).
PARAMETERS: dict[str, Any] = {
    "data_dir": "data/sample",
    "judges": None,
    "rubric": None,
    "confidence": 0.95,
    "n_resamples": 10_000,
    "seed": 0,
    "output_dir": None,
}
# The AlpacaEval case study's parameters; its data directory is read in place, never copied.
CASE_STUDY_PARAMETERS: dict[str, Any] = {
    "data_dir": "../shared/data/alpaca_eval",
    "confidence": 0.95,
    "n_resamples": 10_000,
    "seed": 0,
    "output_dir": None,
}
_PART_DIR = ".parts"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Free text (judge reasoning and raw output, audit details): wrapped in a bounded column.
_LONG_TEXT = frozenset({"reasoning", "raw", "detail", "parse_error", "rule"})


class ReportError(EvalstatsError):
    """The report could not be rendered (a notebook failed, or produced unsafe output)."""


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

    With ``output_dir``, the figure is written to ``output_dir/figures/<name>.png`` and
    ``.svg``. Says so (instead of failing) when the plot function is not available.
    """
    from IPython.display import display

    try:
        from . import plots
    except ImportError:
        plots = None
    func = getattr(plots, plot, None) if plots is not None else None
    if func is None:
        text = f"figure {name}: not available (evalstats.plots.{plot} is missing)."
        _display(f'<p class="unavailable">{html.escape(text)}</p>', text)
        return
    fig = func(*args, **kwargs)
    if output_dir is not None:
        plots.save_figure(fig, Path(output_dir) / "figures", name)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    png = base64.b64encode(buf.getvalue()).decode("ascii")
    display({"image/png": png, "text/plain": alt or f"figure {name}"}, raw=True)


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


# --------------------------------------------------------------------------------------------
# execution
# --------------------------------------------------------------------------------------------


def notebook_path(name: str) -> Path:
    """The packaged notebooks live in the repository's ``notebooks/`` next to the package."""
    path = Path(__file__).resolve().parent.parent / "notebooks" / name
    if not path.exists():
        raise ReportError(f"notebook {name} not found at {path}")
    return path


def _kernel_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var, sub in (
        ("MPLCONFIGDIR", "matplotlib"),
        ("IPYTHONDIR", "ipython"),
        ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
    ):
        if not env.get(var):
            env[var] = str(cache / sub)
        Path(env[var]).mkdir(parents=True, exist_ok=True)
    env["MPLBACKEND"] = "Agg"
    # ipykernel's debugger warns about frozen modules on stderr; the report has no debugger.
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def execute_notebook(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    parameters: Mapping[str, Any],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: int = 600,
):
    """Fill the ``parameters`` cell (papermill), execute in this Python's kernel, save.

    The kernel is ipykernel's native ``python3`` spec, which launches ``sys.executable``: the
    venv that runs evalstats, whatever other kernelspecs the machine has. Returns the executed
    notebook; raises :class:`ReportError` naming the failing cell.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    # papermill's loader adds the metadata its parameterize step expects.
    nb = load_notebook_node(os.fspath(source))
    nb = parameterize_notebook(nb, dict(parameters), kernel_name="python3", language="python")
    # kernel_dirs=[]: only ipykernel's built-in spec, whose argv[0] is sys.executable.
    km = AsyncKernelManager(
        kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[])
    )
    client = NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": os.fspath(cwd or os.getcwd())}},
    )
    # The kernel's own log (transport warnings, shutdown notices) is kept out of the user's
    # terminal and shown only if the notebook fails.
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log:
        try:
            client.execute(env=dict(env) if env is not None else None, stdout=log, stderr=log)
        except CellExecutionError as exc:
            nbformat.write(nb, os.fspath(destination))
            log.seek(0)
            detail = _ANSI.sub("", str(exc))
            raise ReportError(
                f"{Path(source).name} failed (executed copy: {destination}):\n{detail}\n"
                f"kernel log:\n{log.read()[-2000:]}"
            ) from None
    nbformat.write(nb, os.fspath(destination))
    return nb


def _relative(path: Path, cwd: Path) -> str:
    """Paths handed to the notebook, relative to its cwd when possible (no machine paths)."""
    try:
        return os.fspath(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return os.fspath(path.resolve())


def _check_self_contained(text: str, page: str) -> None:
    found = _html.active_markup(text, page=True)
    if found:
        raise ReportError(f"{page} is not self-contained or not inert: {', '.join(found[:3])}")


# --------------------------------------------------------------------------------------------
# report kinds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportKind:
    """What one kind of report executes, with which parameters, and how its data look.

    Attributes
    ----------
    name : str
        The ``--kind`` value.
    notebooks : tuple of (notebook, html page, title)
        Executed in order; the first page is ``index.html``.
    parameters : mapping
        The notebooks' papermill parameters and their defaults (``data_dir`` and
        ``output_dir`` are set by the renderer; the others may be overridden with ``-p``).
    looks_for : str
        What :attr:`detect` looks for, for error messages.
    detect : callable
        ``detect(data_dir) -> bool``: whether the directory holds this kind's data.
    check : callable
        ``check(data_dir)``: raises :class:`~evalstats.errors.DataError` naming a missing
        input, before any kernel starts.
    """

    name: str
    notebooks: tuple[tuple[str, str, str], ...]
    parameters: Mapping[str, Any]
    looks_for: str
    detect: Callable[[Path], bool]
    check: Callable[[Path], None]

    @property
    def user_parameters(self) -> list[str]:
        """The parameters ``-p`` may set."""
        return [k for k in self.parameters if k not in ("data_dir", "output_dir")]


_EVALUATION_STEMS = ("tasks", "runs", "judgments")


def _has_evaluation(data: Path) -> bool:
    from .records import find_file

    return find_file(data, "tasks", required=False) is not None


def _check_evaluation(data: Path) -> None:
    from .records import find_file

    for stem in _EVALUATION_STEMS:
        find_file(data, stem)  # a missing input is a DataError naming it


def _has_annotations(data: Path) -> bool:
    from .adapters.alpaca_eval import annotation_files

    return bool(annotation_files(data))


def _check_annotations(data: Path) -> None:
    from .adapters.alpaca_eval import annotation_files

    annotation_files(data, required=True)


REPORT_KINDS: dict[str, ReportKind] = {
    "evaluation": ReportKind(
        name="evaluation",
        notebooks=NOTEBOOKS,
        parameters=PARAMETERS,
        looks_for="tasks.jsonl (or .ndjson/.parquet/.csv), runs and judgments",
        detect=_has_evaluation,
        check=_check_evaluation,
    ),
    "alpaca_eval": ReportKind(
        name="alpaca_eval",
        notebooks=(("case_study_alpaca_eval.ipynb", "index.html", "AlpacaEval case study"),),
        parameters=CASE_STUDY_PARAMETERS,
        looks_for="AlpacaEval annotation files (*annotations*.json, .jsonl, .ndjson, optionally "
        ".gz, in the directory or below it)",
        detect=_has_annotations,
        check=_check_annotations,
    ),
}


def detect_kind(data_dir: str | os.PathLike[str]) -> str:
    """The :data:`REPORT_KINDS` name whose data ``data_dir`` holds.

    Raises :class:`ReportError` when no kind, or more than one, recognises the directory.
    """
    data = Path(data_dir)
    if not data.is_dir():
        raise ReportError(f"{data}: not a directory")
    found = [name for name, kind in REPORT_KINDS.items() if kind.detect(data)]
    if not found:
        looked = "; ".join(f"{k.name}: {k.looks_for}" for k in REPORT_KINDS.values())
        raise ReportError(f"{data}: no report kind recognises this directory (looked for {looked})")
    if len(found) > 1:
        raise ReportError(
            f"{data}: holds the data of several report kinds ({', '.join(found)}); "
            "choose one with --kind (kind=)"
        )
    return found[0]


def render_report(
    data_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    params: Mapping[str, Any] | None = None,
    kind: str | None = None,
    timeout: int = 600,
) -> Path:
    """Execute the notebooks on ``data_dir`` and write the report into ``out_dir``.

    Parameters
    ----------
    data_dir : path
        The data directory: an evaluation (tasks, runs, judgments) or AlpacaEval annotations.
    out_dir : path
        Report directory (created; files it already holds with the same names are replaced).
    params : mapping, optional
        Notebook parameters of the kind (:data:`PARAMETERS` for an evaluation: ``judges``,
        ``rubric``, ``confidence``, ``n_resamples``, ``seed``; :data:`CASE_STUDY_PARAMETERS`
        for the AlpacaEval case study: ``confidence``, ``n_resamples``, ``seed``). Unknown
        names are refused before anything runs.
    kind : {"evaluation", "alpaca_eval"}, optional
        The report kind (:data:`REPORT_KINDS`); recognised from ``data_dir`` by default
        (:func:`detect_kind`).
    timeout : int
        Seconds allowed per notebook cell.

    Returns
    -------
    Path
        ``out_dir/index.html``.
    """
    from .results import dump_json, merge_results

    params = dict(params or {})
    if kind is not None and kind not in REPORT_KINDS:
        raise ReportError(f"unknown report kind {kind!r}; known: {', '.join(REPORT_KINDS)}")
    data = Path(data_dir)
    if not data.is_dir():
        raise ReportError(f"{data}: not a directory")
    spec = REPORT_KINDS[kind if kind is not None else detect_kind(data)]
    unknown = sorted(set(params) - set(spec.user_parameters))
    if unknown:
        raise ReportError(
            f"unknown report parameter(s) {', '.join(unknown)} for the {spec.name} report kind; "
            f"known: {', '.join(spec.user_parameters)}"
        )
    spec.check(data)  # a missing input is a DataError naming it, before any kernel
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cwd = Path.cwd()
    parts_dir = out / _PART_DIR
    shutil.rmtree(parts_dir, ignore_errors=True)
    parts_dir.mkdir()
    (out / "notebooks").mkdir(exist_ok=True)
    for sub in ("figures", "tables"):
        shutil.rmtree(out / sub, ignore_errors=True)

    nb_params = {**spec.parameters, **params, "data_dir": _relative(data, cwd)}
    bodies: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="evalstats-report-") as tmp:
        env = _kernel_env(Path(tmp))
        for nb_name, page_name, title in spec.notebooks:
            part = parts_dir / nb_name.replace(".ipynb", "")
            nb = execute_notebook(
                notebook_path(nb_name),
                out / "notebooks" / nb_name,
                {**nb_params, "output_dir": _relative(part, cwd)},
                cwd=cwd,
                env=env,
                timeout=timeout,
            )
            try:
                body = _html.notebook_body(nb)
            except _html.UnsafeOutputError as exc:
                raise ReportError(f"{nb_name}: {exc}") from None
            bodies.append((page_name, title, body))

    # Each notebook wrote results.json, tables/ and figures/ into its part directory.
    docs = []
    for nb_name, _, _ in spec.notebooks:
        part = parts_dir / nb_name.replace(".ipynb", "")
        result_file = part / "results.json"
        if not result_file.exists():
            raise ReportError(f"{nb_name} did not write its results (expected {result_file})")
        docs.append(json.loads(result_file.read_text(encoding="utf-8")))
        for sub in ("figures", "tables"):
            if (part / sub).is_dir():
                (out / sub).mkdir(exist_ok=True)
                for f in sorted((part / sub).iterdir()):
                    shutil.move(os.fspath(f), os.fspath(out / sub / f.name))
    merged = merge_results(*docs)
    (out / "results.json").write_text(dump_json(merged), encoding="utf-8")
    shutil.rmtree(parts_dir)

    banner = None
    if merged["simulated"]:
        banner = (
            "SIMULATED DATA: these numbers come from a simulated dataset "
            f"({merged['provenance'].get('data_dir', '')}/truth.json). No agent was run "
            "and no judge was called; they are not evidence about any tool."
        )
    nav = [(title, page_name) for _, page_name, title in spec.notebooks]
    nav.append(("results.json", "results.json"))
    version = merged["provenance"].get("package", {}).get("version", "")
    footer = (
        f"evalstats {version} · seed {merged['provenance'].get('seed')} · "
        f"{merged['provenance'].get('n_resamples')} resamples · every number on this page "
        "is in results.json"
    )
    for page_name, title, body in bodies:
        text = _html.page(
            f"evalstats {title.lower()}: {merged['provenance'].get('data_dir')}",
            body,
            banner=banner,
            nav=nav,
            footer=footer,
        )
        _check_self_contained(text, page_name)
        (out / page_name).write_text(text, encoding="utf-8")
    return out / "index.html"


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------


def parse_params(items: Iterable[str]) -> dict[str, Any]:
    """``key=value`` strings -> dict; values parsed as JSON when possible, else kept as text."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ReportError(f"-p expects key=value, got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _cmd_report(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    index = render_report(
        args.data_dir, args.output, params=parse_params(args.param or []), kind=args.kind
    )
    print(f"wrote {index} ({time.perf_counter() - start:.1f} s)")
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` subcommand to ``evalstats``'s subparsers."""
    p = subparsers.add_parser(
        "report",
        help="render the self-contained HTML report of a data directory",
        description="Execute the report notebooks on DATA_DIR and write OUT/index.html (and "
        "methodology.html for an evaluation), results.json (every number + provenance), "
        "figures/, tables/ and the executed notebooks. An evaluation directory (tasks, runs, "
        "judgments) gets notebooks/report.ipynb and methodology.ipynb; a directory of "
        "AlpacaEval annotations gets notebooks/case_study_alpaca_eval.ipynb.",
    )
    p.add_argument("data_dir", metavar="DATA_DIR")
    p.add_argument(
        "--kind",
        choices=list(REPORT_KINDS),
        default=None,
        help="report kind (default: recognised from DATA_DIR)",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="report directory, e.g. reports/NAME"
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="notebook parameter (JSON value, else text); repeatable: "
        "judges='[\"a:b\"]', rubric=with-without (evaluation only), confidence=0.9, "
        "n_resamples=2000, seed=1",
    )
    p.set_defaults(func=_cmd_report)
    return p


if __name__ == "__main__":  # pragma: no cover
    parser = argparse.ArgumentParser(prog="python -m evalstats.report")
    register(parser.add_subparsers(dest="command", required=True))
    ns = parser.parse_args()
    try:
        sys.exit(ns.func(ns))
    except EvalstatsError as exc:
        print(f"evalstats report: error: {exc}", file=sys.stderr)
        sys.exit(2)
