"""Render a report, one path in order: check the inputs, compute every page's numbers and
write ``results.json``, execute each page's notebook once in one nbclient kernel (parameters
injected as papermill does), convert each into a self-contained page."""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import pickle
import re
import shutil
import signal
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import EvalstatsError
from ._display import check_formats
from ._kinds import REPORT_KINDS, ReportError, ReportKind, detect_kind

__all__ = ["execute_notebooks", "notebook_path", "render_report"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def render_report(
    data_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    params: Mapping[str, Any] | None = None,
    kind: str | None = None,
    figures: str | Iterable[str] = ("svg",),
    timeout: int = 600,
    lock_wait: float | None = None,
) -> Path:
    """Compute the numbers of ``data_dir`` once, execute the notebooks, write the report.

    Parameters
    ----------
    data_dir : path
        The data directory of one of the :data:`~evalstats.report.REPORT_KINDS`.
    out_dir : path
        Report directory (not ``data_dir`` nor inside it); only the files the previous
        render wrote (and still unchanged) are removed.
    params : mapping, optional
        Parameters of the kind (:data:`~evalstats.report.PARAMETERS` for an evaluation).
    kind : {"evaluation", "alpaca_eval", "llmbar", "pandalm", "arena"}, optional
        The report kind; recognised from ``data_dir`` by default.
    figures : str or sequence of str, default ("svg",)
        The formats each figure is written in (``"svg,pdf,png"``); the pages show the SVG.
    timeout : int
        Seconds allowed per notebook cell.
    lock_wait : float, optional
        Seconds to wait for another render into the same OUT
        (``EVALSTATS_REPORT_LOCK_WAIT_S`` or 600 by default).

    Returns
    -------
    Path
        ``out_dir/index.html``.
    """
    import nbformat

    from .._atomic import atomic_write
    from ._kinds import arm_headings, prepare
    from ._results import dump_json, merge_results, render_lock

    data, out, cwd = Path(data_dir), Path(out_dir), Path.cwd()

    # Every check first: an error here is one line, and no kernel exists yet.
    params = dict(params or {})
    spec = _spec(data, kind, params)
    if out.resolve().is_relative_to(data.resolve()):  # equal included
        raise ReportError(  # a judge may be writing there
            f"-o {out}: the report directory must not be the data directory {data} "
            "or inside it; choose another -o"
        )
    lock_wait = _lock_wait(lock_wait)
    formats = check_formats(figures)
    try:
        prepared = prepare(spec.name, data, **params)
    except ValueError as exc:  # a parameter's value (confidence, n_resamples, seed)
        if isinstance(exc, EvalstatsError):
            raise
        raise ReportError(f"report parameter: {exc}") from None
    spec = prepared.spec  # with the pages the data add (K arms: the comparison page)
    results = [prepared.compute([page]) for page in spec.pages]
    out.mkdir(parents=True, exist_ok=True)
    with render_lock(out, wait=lock_wait):
        # Written aside and moved in at the end: an interrupted render leaves the last report.
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.render-", dir=out.parent))
        try:
            merged = merge_results(*(r.to_json() for r in results))
            for r in results:
                r.write_tables(stage)
            text = dump_json(merged).encode("utf-8")
            atomic_write(stage / "results.json", lambda fh: fh.write(text))
            # Each notebook reads its page's Results from a pickle in a private temporary dir.
            with tempfile.TemporaryDirectory(prefix="evalstats-report-") as tmp:
                notebooks = []
                for (nb, _, _), page, res in zip(spec.notebooks, spec.pages, results, strict=True):
                    handed = Path(tmp) / f"{page}.pickle"
                    handed.write_bytes(pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL))
                    values = {**spec.parameters, **params, "data_dir": _relative(data, cwd)}
                    values |= {"output_dir": _relative(stage, cwd), "figure_formats": formats}
                    values["results_file"] = os.fspath(handed)
                    read = nbformat.read(os.fspath(notebook_path(nb)), as_version=4)
                    read = arm_headings(read, merged["provenance"])
                    notebooks.append(_parameterize(read, values))
                executed = execute_notebooks(
                    notebooks,
                    names=[nb for nb, _, _ in spec.notebooks],
                    env=_kernel_env(Path(tmp)),
                    cwd=cwd,
                    timeout=timeout,
                    failed_copy=out / "notebooks",
                )
            moved = {_relative(stage, cwd): _relative(out, cwd)}
            _write_pages(stage, spec, merged, executed, moved)
            _move_in(stage, out, data)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return out / "index.html"


def _move_in(stage: Path, out: Path, data: Path) -> None:
    """Replace the last render's files in OUT by ``stage``'s; the manifest lists only these."""
    from ._results import clear_previous_outputs, sha256_file, write_manifest

    new = sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file())
    hashes = {rel: sha256_file(stage / rel) for rel in new}
    with _deferred_signals():
        clear_previous_outputs(out, exclude=data)
        for rel in new:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, out / rel)
        write_manifest(out, hashes)


@contextlib.contextmanager
def _deferred_signals() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait for the block's end: a swap stopped half way loses both reports.
    (A mask would not do: the kernel hands a process's signal to any thread not masking it.)"""
    got: list[int] = []
    wanted = (signal.SIGINT, signal.SIGTERM)
    try:
        old = {s: signal.signal(s, lambda n, _: got.append(n)) for s in wanted}
    except ValueError:  # not the main thread, where no handler runs anyway
        old = {}
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if got:
            signal.raise_signal(got[0])


def _lock_wait(value: float | None) -> float:
    """The bound on waiting for OUT's lock: ``value``, else the environment's, else 600 s."""
    raw: Any = value if value is not None else os.environ.get("EVALSTATS_REPORT_LOCK_WAIT_S", 600)
    try:
        wait = float(raw)
    except (TypeError, ValueError):
        wait = float("nan")
    if not 0.0 <= wait <= 86_400.0:  # also refuses NaN
        raise ReportError(f"lock wait must be 0 to 86400 seconds, got {raw!r}")
    return wait


def _spec(data: Path, kind: str | None, params: Mapping[str, Any]) -> ReportKind:
    """The report kind of ``data``, its parameters and inputs checked."""
    if kind is not None and kind not in REPORT_KINDS:
        raise ReportError(f"unknown report kind {kind!r}; known: {', '.join(REPORT_KINDS)}")
    if not data.is_dir():
        raise ReportError(f"{data}: not a directory")
    spec = REPORT_KINDS[kind if kind is not None else detect_kind(data)]
    unknown = sorted(set(params) - set(spec.user_parameters))
    if unknown:
        raise ReportError(
            f"unknown report parameter(s) {', '.join(unknown)} for the {spec.name} report kind; "
            f"known: {', '.join(spec.user_parameters)}"
        )
    for key, value in params.items():  # as the notebook declares it: no kernel meets a "0.9"
        types = {float: (int, float), int: (int,), str: (str,), list: (list,)}
        want = types.get(type(spec.parameters[key]), (str, list))  # None: judges, rubric
        listed = value if isinstance(value, list) else []
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, want)
            or not all(isinstance(v, str) for v in listed)
        ):
            shown = " or ".join(t.__name__ for t in want)
            raise ReportError(f"report parameter {key}={value!r}: expected {shown}")
    spec.check(data)
    return spec


def notebook_path(name: str) -> Path:
    """The notebook ``name``: package data when installed, else the checkout's notebooks/."""
    packaged = importlib.resources.files(__package__) / "notebooks" / name
    if packaged.is_file():
        return Path(os.fspath(packaged))  # type: ignore[arg-type]
    checkout = Path(__file__).resolve().parents[2] / "notebooks" / name
    if checkout.is_file():
        return checkout
    raise ReportError(f"notebook {name} not found (looked in {packaged} and {checkout})")


def _parameterize(nb: Any, parameters: Mapping[str, Any]) -> Any:
    """Papermill's convention: a cell tagged ``injected-parameters`` after ``parameters``."""
    import nbformat

    source = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in parameters.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    at = tagged[0] + 1 if tagged else 0
    nb.cells = [*nb.cells[:at], cell, *nb.cells[at:]]
    return nb


def _relative(path: Path, cwd: Path) -> str:
    """Paths handed to the notebook, relative to its cwd when possible (no machine paths)."""
    try:
        return os.fspath(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return os.fspath(path.resolve())


def _kernel_env(cache: Path) -> dict[str, str]:
    """The kernel's environment: state in ``cache`` (unless set), Agg, reproducible hashing."""
    env = dict(os.environ)
    for var, sub in (("IPYTHONDIR", "ipython"), ("JUPYTER_RUNTIME_DIR", "jupyter-runtime")):
        if not env.get(var):
            env[var] = str(cache / sub)
        Path(env[var]).mkdir(parents=True, exist_ok=True)
    env["MPLBACKEND"] = "Agg"
    # ipykernel's debugger warns about frozen modules on stderr; the report has no debugger.
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def execute_notebooks(
    notebooks: Sequence[Any],
    *,
    names: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    timeout: int = 600,
    failed_copy: Path | None = None,
) -> list[Any]:
    """Execute ``notebooks`` in place, in order, in one nbclient kernel of this Python started
    in ``cwd``; a failing cell raises ReportError naming the notebook, the cell and the
    kernel's log (the executed copy written to ``failed_copy/<name>``)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    # kernel_dirs=[]: only ipykernel's built-in spec, whose argv[0] is sys.executable.
    km = AsyncKernelManager(
        kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[])
    )
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log:  # shown on a failure
        run_sync(km.start_kernel)(
            env=dict(env),
            cwd=os.fspath(cwd),
            stdout=log,
            stderr=log,
            extra_arguments=["--HistoryManager.enabled=False"],
        )
        try:
            for nb, name in zip(notebooks, names, strict=True):
                client = NotebookClient(
                    nb,
                    km=km,  # ours: nbclient leaves it running for the next notebook
                    timeout=timeout,
                    kernel_name="python3",
                    resources={"metadata": {"path": os.fspath(cwd)}},
                )
                try:
                    client.execute()
                except CellExecutionError as exc:
                    raise _cell_failed(nb, name, exc, log, failed_copy) from None
        finally:
            run_sync(km.shutdown_kernel)(now=True)
    return list(notebooks)


def _cell_failed(nb: Any, name: str, exc: Exception, log: IO[str], copy: Path | None):
    from ._results import scrub

    failed = [any(o.output_type == "error" for o in c.get("outputs", [])) for c in nb.cells]
    cell = failed.index(True) + 1 if any(failed) else len(nb.cells)
    where = ""
    if copy is not None:
        import nbformat

        _write_text(copy / name, nbformat.writes(nb))
        where = f" (executed copy: {copy / name})"
    log.seek(0)
    return ReportError(
        scrub(
            f"{name} failed at cell {cell}{where}:\n{_ANSI.sub('', str(exc))}\n"
            f"kernel log:\n{log.read()[-2000:]}"
        )
    )


def _write_pages(
    out: Path,
    spec: ReportKind,
    merged: Mapping[str, Any],
    executed: Sequence[Any],
    moved: Mapping[str, str],
) -> None:
    """Write each executed notebook and its page, checked self-contained; ``moved``: the
    staging folder's name in their text -> OUT's."""
    import nbformat

    from . import _html

    prov = merged["provenance"]
    banner = None
    if merged["simulated"]:
        banner = (
            "SIMULATED DATA: these numbers come from a simulated dataset "
            f"({prov.get('data_dir', '')}/truth.json). No agent was run "
            "and no judge was called; they are not evidence about any tool."
        )
    nav = [*((title, page) for _, page, title in spec.notebooks), ("results.json", "results.json")]
    version = prov.get("package", {}).get("version", "")
    footer = (
        f"evalstats {version} · seed {prov.get('seed')} · "
        f"{prov.get('n_resamples')} resamples · every number on this page "
        "is in results.json"
    )
    for (nb_name, page_name, title), nb in zip(spec.notebooks, executed, strict=True):
        text = nbformat.writes(nb)
        for stage, final in moved.items():
            text = text.replace(repr(stage)[1:-1], repr(final)[1:-1])
        _write_text(out / "notebooks" / nb_name, text)
        try:
            body = _html.notebook_body(nb)
        except _html.UnsafeOutputError as exc:
            raise ReportError(f"{nb_name}: {exc}") from None
        heading = f"evalstats {title.lower()}: {prov.get('data_dir')}"
        text = _html.page(heading, body, banner=banner, nav=nav, footer=footer)
        found = _html.active_markup(text, page=True)
        if found:
            raise ReportError(
                f"{page_name} is not self-contained or not inert: {', '.join(found[:3])}"
            )
        _write_text(out / page_name, text)


def _write_text(path: Path, text: str) -> None:
    """Atomically, with the configured API keys and URL credentials scrubbed."""
    from ..records import atomic_write
    from ._results import scrub

    data = scrub(text).encode("utf-8")
    atomic_write(path, lambda fh: fh.write(data))
