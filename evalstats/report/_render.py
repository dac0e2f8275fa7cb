"""Render a report: compute its numbers once, execute its notebooks in one kernel, write HTML.

``render_report`` (``evalstats report DATA_DIR -o OUT``) does, in order:

1. checks the kind, its parameters and its inputs (errors before anything runs);
2. starts one Jupyter kernel (this very Python, ipykernel's built-in spec), which imports
   what the notebooks display with (pandas, matplotlib, :mod:`evalstats.plots`) while...
3. ...this process computes every published number once (:func:`~evalstats.report.compute`)
   and writes ``results.json`` and ``tables/``;
4. executes all the kind's notebooks, one after the other, in that kernel: each reads the
   computed :class:`~evalstats.report.Results` (``results_file``), displays its sections and
   draws its figures into ``figures/``;
5. turns each executed notebook into a self-contained page (:mod:`._html`) and checks it.

For an evaluation it writes::

    OUT/index.html          the report (inputs hidden, images inlined, no scripts)
    OUT/methodology.html    power / minimum detectable effect, CI coverage evidence
    OUT/results.json        every number both pages show, plus provenance
    OUT/figures/*.svg|png|pdf  each figure: as shown, 300 dpi, TrueType fonts
    OUT/tables/*.csv        each table, full precision
    OUT/notebooks/*.ipynb   the executed notebooks, for audit

The notebooks are package data (``evalstats/report/notebooks/`` in a wheel, mapped from the
checkout's top-level ``notebooks/`` at build time) and found with :mod:`importlib.resources`;
an editable install or a checkout falls back to ``notebooks/`` beside the package.
"""

from __future__ import annotations

import importlib.resources
import os
import pickle
import re
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._figures import QUEUE_VAR, render_queued
from ._kinds import REPORT_KINDS, ReportError, ReportKind, detect_kind

__all__ = ["execute_notebooks", "notebook_path", "render_report"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# What every report notebook displays with: imported by the kernel as it starts, while this
# process computes the numbers (the two run side by side).
# Then the figure machinery is warmed and the results' classes are loaded (the pickle
# handed to the notebooks needs them): the kernel is otherwise idle until page 0 is ready.
_PRELOAD = (
    "import pandas, evalstats.plots, evalstats.report._display, evalstats.report._results; "
    "from evalstats.report._figures import warm_up; warm_up(); del warm_up; "
    # The headline card's words are the first cell's (export imports no scipy.stats).
    "import evalstats.report._sentences"
)
# Run by the kernel after the last page's last cell (and cut from the pages): the figures
# still queued are rendered by both processes instead of by this one alone.
_EPILOGUE = "import evalstats.report._figures as _f; _f.drain(); del _f"


def notebook_path(name: str) -> Path:
    """The notebook ``name``: package data when installed, else the checkout's notebooks/."""
    packaged = importlib.resources.files(__package__) / "notebooks" / name
    if packaged.is_file():
        return Path(os.fspath(packaged))  # type: ignore[arg-type]
    checkout = Path(__file__).resolve().parents[2] / "notebooks" / name
    if checkout.is_file():
        return checkout
    raise ReportError(f"notebook {name} not found (looked in {packaged} and {checkout})")


def _kernel_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    # Not MPLCONFIGDIR: the kernel shares matplotlib's own cache with this process (as any
    # matplotlib user does; matplotlib falls back to a temporary one where it cannot
    # write), instead of rebuilding the font list in an empty directory at every render.
    for var, sub in (
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


def _parameterize(nb: Any, parameters: Mapping[str, Any]) -> Any:
    """Papermill's convention without papermill (whose import alone costs about a second):
    a cell tagged ``injected-parameters`` right after the one tagged ``parameters``."""
    import nbformat

    source = "# Parameters\n" + "".join(f"{k} = {v!r}\n" for k, v in parameters.items())
    cell = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    at = tagged[0] + 1 if tagged else 0
    nb.cells = [*nb.cells[:at], cell, *nb.cells[at:]]
    return nb


def _read_notebook(name: str) -> Any:
    import nbformat

    return nbformat.read(os.fspath(notebook_path(name)), as_version=4)


class _Kernel:
    """One kernel for every page: started first, so that it boots while the numbers are
    computed; shut down (connection file removed) however the render ends."""

    def __init__(self, env: Mapping[str, str], cwd: Path, log: Any) -> None:
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import AsyncKernelManager
        from jupyter_core.utils import run_sync

        self._run_sync = run_sync
        self._closer: threading.Thread | None = None
        self._close_error: BaseException | None = None
        # kernel_dirs=[]: only ipykernel's built-in spec, whose argv[0] is sys.executable.
        self.km = AsyncKernelManager(
            kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[])
        )
        run_sync(self.km.start_kernel)(
            env=dict(env),
            cwd=os.fspath(cwd),
            stdout=log,
            stderr=log,
            # No input history: a report kernel is never asked for it, and its SQLite
            # database and writer thread cost the kernel's start.
            extra_arguments=[
                f"--IPKernelApp.exec_lines={_PRELOAD}",
                "--HistoryManager.enabled=False",
            ],
        )

    def close(self, client: Any = None, *, wait: bool = True) -> None:
        """Stop the client's channels and the kernel; with ``wait=False`` the kernel is shut
        down in a thread while the caller goes on (the next ``close()`` waits for it).
        Closing again is a no-op."""
        try:
            if client is not None and getattr(client, "kc", None) is not None:
                client.kc.stop_channels()
        finally:
            if self._closer is None and self.km.has_kernel:
                # jupyter_client polls the killed process every 0.1 s: ~0.2 s of waiting
                # that the pages' HTML and results.json need not sit behind.
                self._closer = threading.Thread(
                    target=self._shutdown, name="evalstats-kernel-shutdown", daemon=True
                )
                self._closer.start()
            if wait and self._closer is not None:
                self._closer.join()
                if self._close_error is not None:
                    error, self._close_error = self._close_error, None
                    raise error

    def _shutdown(self) -> None:
        try:
            self._run_sync(self.km.shutdown_kernel)(now=True)
        except BaseException as exc:  # raised by the waiting close()
            self._close_error = exc


def execute_notebooks(
    notebooks: Sequence[Any],
    *,
    kernel: _Kernel,
    cwd: Path,
    timeout: int,
    log: Any,
    before_page: Callable[[int], None] | None = None,
    epilogue: str | None = None,
) -> list[Any]:
    """Execute ``notebooks`` one after the other in ``kernel`` (one process for all pages).

    They run as one notebook, cut back into the pages afterwards; each page starts with its
    own parameters and imports, so nothing carries over that a page does not set itself.
    ``before_page(k)`` is called (in a worker thread) before page ``k``'s first cell: the
    renderer waits there for that page's numbers. ``epilogue`` is code run after the last
    page, in no page. The kernel is shut down in the background (``kernel.close()`` waits
    for it). Raises ``_CellFailed`` naming the notebook and cell that failed (the last page
    for the epilogue).
    """
    import asyncio

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    bounds, cells = [], []
    for nb in notebooks:
        bounds.append((len(cells), len(cells) + len(nb.cells)))
        cells.extend(nb.cells)
    if epilogue:
        cells.append(nbformat.v4.new_code_cell(epilogue))
    combined = nbformat.v4.new_notebook(cells=cells, metadata=notebooks[0].metadata)
    starts = {lo: k for k, (lo, _) in enumerate(bounds)}

    async def on_cell_start(cell: Any, cell_index: int) -> None:
        if before_page is not None and cell_index in starts:
            # Off the event loop, so the kernel's messages keep flowing while we wait.
            await asyncio.to_thread(before_page, starts[cell_index])

    client = NotebookClient(
        combined,
        km=kernel.km,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": os.fspath(cwd)}},
        on_cell_start=on_cell_start,
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        failed = next(
            (
                i
                for i, c in enumerate(cells)
                if any(o.output_type == "error" for o in c.get("outputs", []))
            ),
            len(cells) - 1,
        )
        page = next((k for k, (lo, hi) in enumerate(bounds) if lo <= failed < hi), len(bounds) - 1)
        failed = min(failed, bounds[page][1] - 1)
        log.seek(0)
        raise _CellFailed(
            _split(notebooks, bounds, combined)[page],
            page,
            failed - bounds[page][0] + 1,
            _ANSI.sub("", str(exc)),
            log.read(),
        ) from None
    finally:
        kernel.close(client, wait=False)
    return _split(notebooks, bounds, combined)


def _split(notebooks: Sequence[Any], bounds: Sequence[tuple[int, int]], combined: Any) -> list:
    out = []
    for nb, (lo, hi) in zip(notebooks, bounds, strict=True):
        nb.cells = combined.cells[lo:hi]
        if "language_info" in combined.metadata:
            nb.metadata["language_info"] = combined.metadata["language_info"]
        out.append(nb)
    return out


class _CellFailed(Exception):
    def __init__(self, nb: Any, page: int, cell: int, detail: str, kernel_log: str) -> None:
        super().__init__(detail)
        self.nb, self.page, self.cell = nb, page, cell
        self.detail, self.kernel_log = detail, kernel_log


def _relative(path: Path, cwd: Path) -> str:
    """Paths handed to the notebook, relative to its cwd when possible (no machine paths)."""
    try:
        return os.fspath(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return os.fspath(path.resolve())


def _check_self_contained(text: str, page: str) -> None:
    from . import _html

    found = _html.active_markup(text, page=True)
    if found:
        raise ReportError(f"{page} is not self-contained or not inert: {', '.join(found[:3])}")


class _Pages:
    """Each page's numbers, computed in order and handed to its notebook as a pickle; then
    the figures' PNGs.

    Page 0 is computed before the notebooks start; the others in a worker thread while the
    kernel displays the pages before them. The thread then renders the PNG and PDF of each
    figure the kernel drew and queued (:mod:`._figures`), while the kernel goes on, and
    loads the HTML converter.
    """

    def __init__(self, names: Sequence[str], tmp: Path, queue: Path, out: Path) -> None:
        self.queue, self.out = queue, out
        self._executed = threading.Event()
        self.names = list(names)
        self.files = [tmp / f"{name}.pickle" for name in self.names]
        # Each page's parts before the whole (none where the kind names none): what its
        # notebook loads is the first (completing itself from the next ones, then from the
        # page's file), else the page's file.
        self.parts: list[list[Path]] = [[] for _ in self.names]
        self.results: list[Any] = [None] * len(self.names)
        self._done = [threading.Event() for _ in self.names]
        self._started = [threading.Event() for _ in self.names]
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def compute(self, prepared: Any, k: int) -> None:
        from ._results import first_part

        handed = iter(range(len(self.parts[k])))

        def hand_over(part: Any) -> None:
            i = next(handed)
            later = [*self.parts[k][i + 1 :], self.files[k]]
            _dump(first_part(part, [os.fspath(p) for p in later]), self.parts[k][i])
            self._started[k].set()

        split = bool(self.parts[k])
        res = prepared.compute([self.names[k]], on_first_part=hand_over if split else None)
        for i in handed:  # a part whose section this page did not compute: the whole page
            _dump(res, self.parts[k][i])
        _dump(res, self.files[k])
        self.results[k] = res
        self._started[k].set()
        self._done[k].set()

    @property
    def handed(self) -> list[Path]:
        """What each page's notebook loads: its first part, else the page's file."""
        return [parts[0] if parts else f for parts, f in zip(self.parts, self.files, strict=True)]

    def start(self, prepared: Any) -> None:
        for k, name in enumerate(self.names):
            ends = prepared.spec.part_ends(name)
            self.parts[k] = [
                self.files[k].with_name(f"{name}.part{i + 1}.pickle") for i in range(len(ends))
            ]

        def work() -> None:
            try:
                for k in range(len(self.names)):
                    self.compute(prepared, k)
                from . import _html  # noqa: F401 - loaded here, off the pages' tail

                while True:
                    executed = self._executed.is_set()
                    items = sorted(self.queue.glob("*.pickle"))
                    for path in items:
                        render_queued(path)
                    if executed and not items:
                        break
                    if not items:
                        self._executed.wait(0.05)
            except BaseException as exc:  # handed to the waiting side
                self._error = exc
                for k, done in enumerate(self._done):
                    if not done.is_set():
                        # A kernel waiting for the rest of a page it has started ends.
                        failed = self.files[k].with_name(self.files[k].name + ".failed")
                        failed.write_text(f"{type(exc).__name__}: {exc}", encoding="utf-8")
                    self._started[k].set()
                    done.set()

        self._thread = threading.Thread(target=work, name="evalstats-report-pages", daemon=True)
        self._thread.start()

    def wait(self, k: int) -> None:
        """Until page ``k``'s notebook can start: its first part (or all of it) is written."""
        self._started[k].wait()
        if self._error is not None:
            raise self._error

    def wait_all(self) -> None:
        for done in self._done:
            done.wait()
        if self._error is not None:
            raise self._error

    def join(self) -> None:
        """Let the thread drain the figure queue (the kernel has finished) and end."""
        self._executed.set()
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error


def _spec(data: Path, kind: str | None, params: Mapping[str, Any]) -> ReportKind:
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
    spec.check(data)  # a missing input is a DataError naming it, before any kernel
    return spec


def render_report(
    data_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    params: Mapping[str, Any] | None = None,
    kind: str | None = None,
    timeout: int = 600,
) -> Path:
    """Compute the numbers of ``data_dir`` once, execute the notebooks, write the report.

    Parameters
    ----------
    data_dir : path
        The data directory: an evaluation (tasks, runs, judgments) or AlpacaEval annotations.
    out_dir : path
        Report directory (created). The report's files are replaced by name; the files the
        previous render listed in ``OUT/.evalstats-report.json`` are removed first, and no
        other file in OUT is touched (a user's notes in ``figures/`` stay).
    params : mapping, optional
        Parameters of the kind (:data:`~evalstats.report.PARAMETERS` for an evaluation:
        ``judges``, ``rubric``, ``confidence``, ``n_resamples``, ``seed``;
        :data:`~evalstats.report.CASE_STUDY_PARAMETERS` for the AlpacaEval case study:
        ``confidence``, ``n_resamples``, ``seed``). Unknown names are refused before
        anything runs.
    kind : {"evaluation", "alpaca_eval"}, optional
        The report kind (:data:`~evalstats.report.REPORT_KINDS`); recognised from
        ``data_dir`` by default (:func:`~evalstats.report.detect_kind`).
    timeout : int
        Seconds allowed per notebook cell.

    Returns
    -------
    Path
        ``out_dir/index.html``.
    """
    params = dict(params or {})
    data = Path(data_dir)
    if kind is not None and kind not in REPORT_KINDS:
        raise ReportError(f"unknown report kind {kind!r}; known: {', '.join(REPORT_KINDS)}")
    if not data.is_dir():
        raise ReportError(f"{data}: not a directory")
    out = Path(out_dir)
    cwd = Path.cwd()

    with (
        tempfile.TemporaryDirectory(prefix="evalstats-report-") as tmp,
        tempfile.TemporaryFile(mode="w+", encoding="utf-8") as log,
    ):
        # The kernel boots (and imports what the notebooks display with) while this process
        # checks the inputs and computes; it is shut down however the render ends. Its own
        # log (transport warnings, shutdown notices) is shown only if a notebook fails.
        env = _kernel_env(Path(tmp))
        queue = Path(tmp) / "figure-queue"
        queue.mkdir()
        env[QUEUE_VAR] = os.fspath(queue)
        kernel = _Kernel(env, cwd, log)
        # Imported once the kernel is booting: pandas and the statistics (~0.6 s) need not
        # delay its start; the HTML converter is warmed by the pages' thread.
        from ._kinds import prepare
        from ._results import clear_previous_outputs, scrub

        pages = executed = None
        try:
            spec = _spec(data, kind, params)  # refuses bad parameters and missing inputs
            notebooks = [_read_notebook(nb_name) for nb_name, _, _ in spec.notebooks]
            pages = _Pages(spec.pages, Path(tmp), queue, out)
            prepared = prepare(spec.name, data, **params)
            out.mkdir(parents=True, exist_ok=True)
            # Only what the last render wrote is removed (its manifest); the user's files stay.
            user_files = clear_previous_outputs(out)
            (out / "notebooks").mkdir(exist_ok=True)
            # Every page's numbers in a worker thread: the kernel starts the first page as
            # soon as its first part is written, and shows it while the rest is computed.
            pages.start(prepared)
            for k, nb in enumerate(notebooks):
                _parameterize(
                    nb,
                    {
                        **spec.parameters,
                        **params,
                        "data_dir": _relative(data, cwd),
                        "output_dir": _relative(out, cwd),
                        "results_file": os.fspath(pages.handed[k]),
                    },
                )
            executed = execute_notebooks(
                notebooks,
                kernel=kernel,
                cwd=cwd,
                timeout=timeout,
                log=log,
                before_page=pages.wait,
                epilogue=_EPILOGUE,
            )
        except _CellFailed as exc:
            if pages is not None and pages._error is not None:
                raise pages._error from None  # the computation failed, not the notebook
            import nbformat

            nb_name = spec.notebooks[exc.page][0]
            destination = out / "notebooks" / nb_name
            _write_text(destination, nbformat.writes(exc.nb))
            raise ReportError(
                scrub(
                    f"{nb_name} failed at cell {exc.cell} (executed copy: {destination}):\n"
                    f"{exc.detail}\nkernel log:\n{exc.kernel_log[-2000:]}"
                )
            ) from None
        finally:
            if executed is None:  # else it is being shut down while the pages are written
                kernel.close()
            if pages is not None:
                pages.join()
        try:
            pages.wait_all()
            _publish(out, spec, pages.results, executed, user_files)
        finally:
            kernel.close()
    return out / "index.html"


def _publish(
    out: Path, spec: ReportKind, results: Sequence[Any], executed: Sequence[Any], user_files: Any
) -> None:
    """Write results.json, the tables, the executed notebooks and the HTML pages."""
    import nbformat

    from ..records import atomic_write
    from . import _html
    from ._results import dump_json, merge_results, record_outputs

    merged = merge_results(*(r.to_json() for r in results))
    for r in results:
        r.write_tables(out)
    text = dump_json(merged).encode("utf-8")
    atomic_write(out / "results.json", lambda fh: fh.write(text))
    bodies = []
    for (nb_name, page_name, title), nb in zip(spec.notebooks, executed, strict=True):
        _write_text(out / "notebooks" / nb_name, nbformat.writes(nb))
        try:
            bodies.append((page_name, title, _html.notebook_body(nb)))
        except _html.UnsafeOutputError as exc:
            raise ReportError(f"{nb_name}: {exc}") from None

    prov = merged["provenance"]
    banner = None
    if merged["simulated"]:
        banner = (
            "SIMULATED DATA: these numbers come from a simulated dataset "
            f"({prov.get('data_dir', '')}/truth.json). No agent was run "
            "and no judge was called; they are not evidence about any tool."
        )
    nav = [(title, page_name) for _, page_name, title in spec.notebooks]
    nav.append(("results.json", "results.json"))
    version = prov.get("package", {}).get("version", "")
    footer = (
        f"evalstats {version} · seed {prov.get('seed')} · "
        f"{prov.get('n_resamples')} resamples · every number on this page "
        "is in results.json"
    )
    for page_name, title, body in bodies:
        text = _html.page(
            f"evalstats {title.lower()}: {prov.get('data_dir')}",
            body,
            banner=banner,
            nav=nav,
            footer=footer,
        )
        _check_self_contained(text, page_name)
        _write_text(out / page_name, text)
    record_outputs(out, user_files)


def _dump(obj: Any, path: Path) -> None:
    """Pickle ``obj`` to ``path`` atomically: a kernel waiting for the file sees it whole."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as fh:
        pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def _write_text(path: Path, text: str) -> None:
    """Atomically, with the configured API keys and URL credentials scrubbed."""
    from ..records import atomic_write
    from ._results import scrub

    data = scrub(text).encode("utf-8")
    atomic_write(path, lambda fh: fh.write(data))
