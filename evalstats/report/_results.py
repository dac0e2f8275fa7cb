"""The object every report kind returns: tables of published numbers plus their provenance.

``results.json`` is :meth:`Results.to_json` of the very object the notebooks display, so the
page and the JSON cannot disagree.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..records import atomic_write

__all__ = ["FORMAT", "Results", "dump_json", "merge_results", "scrub", "to_jsonable"]

FORMAT = "evalstats-results/1"


@dataclass(frozen=True)
class Results:
    """Tables of published numbers plus the provenance needed to reproduce them.

    Attributes
    ----------
    tables : dict of str to DataFrame
        Tidy tables under stable names (for an evaluation: ``headline`` and ``consensus``
        (with ``primary``, the row a declared plan names, and ``net_win_p_holm``),
        ``missing_bounds``, ``agreement``, ``disagreements``, ``cost``, ``judge_spend``,
        ``per_task``, ``dimensions``, ``position_bias``, ``accounting``, ``sensitivity``,
        ``invalid_outputs``, ``audit``; its methodology: ``design``, ``power_mde``,
        ``power_curve``, ``tasks_needed``, ``mde_simulated``, ``ordinal_check``,
        ``ordinal_terms``, ``coverage``; the AlpacaEval case study:
        ``leaderboard``, ``agreement``, ``length_bias``, ``length_slope``,
        ``standard_errors``, ``findings``).
    provenance : dict
        Input digests, package and library versions, seed, n_resamples, confidence, and what
        the report kind adds (rubrics, judges and the declared ``plan``, null without one;
        models and annotators).
    parameters : dict
        The arguments the tables were computed with.
    simulated : bool
        True when ``DATA_DIR/truth.json`` says ``"simulated": true``.
    unavailable : dict of str to str
        Sections that could not be computed here, with the reason.
    frame : DataFrame
        The verdict frame the tables were computed from (for figures; not serialised).
        It and the tables carry ``attrs["arm_names"]`` when the provenance names the arms.

    Examples
    --------
    >>> import pandas as pd
    >>> res = Results({"t": pd.DataFrame({"x": [1.5, float("nan")]})}, {"seed": 0}, {}, False)
    >>> res.to_json()["tables"]["t"]
    [{'x': 1.5}, {'x': None}]
    """

    tables: dict[str, pd.DataFrame]
    provenance: dict[str, Any]
    parameters: dict[str, Any]
    simulated: bool
    unavailable: dict[str, str] = field(default_factory=dict)
    frame: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The arms' names travel with the data (``attrs``, kept by pickle), so that a figure
        # drawn from any table or the frame can name the arms (report.show_figure).
        names = self.provenance.get("arm_names")
        if names:
            for t in (*self.tables.values(), self.frame):
                if isinstance(t, pd.DataFrame):
                    t.attrs["arm_names"] = dict(names)

    def table(self, name: str) -> pd.DataFrame | None:
        """The table ``name``, or None when the section is unavailable or empty."""
        t = self.tables.get(name)
        return None if t is None or t.empty else t

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict: NaN and NA become null, numpy scalars become Python numbers.

        Of a page's first part (:class:`PendingTables`, inside a report's kernel) the
        ``tables`` and ``unavailable`` are read-only mappings that convert a table when it
        is looked up, so that a first cell's words do not wait for the rest of the page.
        """
        if isinstance(self.tables, PendingTables):
            return {
                "format": FORMAT,
                "simulated": bool(self.simulated),
                "parameters": to_jsonable(self.parameters),
                "provenance": to_jsonable(self.provenance),
                "tables": _JsonTables(self),
                "unavailable": _Unavailable(self),
            }
        return {
            "format": FORMAT,
            "simulated": bool(self.simulated),
            "parameters": to_jsonable(self.parameters),
            "provenance": to_jsonable(self.provenance),
            # A section that could not be computed is null, with its reason beside.
            "tables": {
                **{name: None for name in self.unavailable},
                **{name: _records(t) for name, t in self.tables.items()},
            },
            "unavailable": dict(self.unavailable),
        }

    def write(self, out_dir: str | os.PathLike[str], *, name: str = "results") -> Path:
        """Write ``OUT/<name>.json`` and ``OUT/tables/<table>.csv`` (each atomically).

        Returns the JSON path.
        """
        out = Path(out_dir)
        self.write_tables(out)
        path = out / f"{name}.json"
        text = dump_json(self.to_json()).encode("utf-8")
        atomic_write(path, lambda fh: fh.write(text))
        return path

    def write_tables(self, out_dir: str | os.PathLike[str]) -> None:
        """Write each table as ``OUT/tables/<table>.csv`` (full precision, atomically)."""
        for tname, t in self.tables.items():
            buf = io.StringIO()
            t.to_csv(buf, index=False)
            data = scrub(buf.getvalue()).encode("utf-8")
            atomic_write(Path(out_dir) / "tables" / f"{tname}.csv", lambda fh, d=data: fh.write(d))


class PendingTables(dict):
    """The tables of a page's first part, which complete themselves from the parts after it.

    ``evalstats report`` hands a page's notebook the tables of its first sections
    (:attr:`~evalstats.report._kinds.ReportKind.first_part`) while it computes the rest,
    so the kernel starts displaying sooner; later parts follow, the whole page last. The
    first lookup of a table that is not there and that the parts so far do not call
    unavailable (``get``, ``[]``, ``in``) waits for the next part's pickle (written
    atomically by the renderer), adds its tables and replaces the Results' ``unavailable``
    reasons, until the table is there or the whole page is; iteration and ``len`` wait
    for the whole page. ``<whole page>.failed`` (the renderer's error) ends a wait with
    that error. The tables of a part are the page's own: the rest of the page is computed
    after them with the same tables and generator.
    """

    def __init__(
        self,
        tables: Mapping[str, Any],
        complete: str | Sequence[str],
        unavailable: dict[str, str],
    ) -> None:
        super().__init__(tables)
        # The parts still to come, in order; the last one is the whole page.
        self._paths = [complete] if isinstance(complete, str) else list(complete)
        self._unavailable = unavailable

    def __reduce__(self) -> tuple[Any, ...]:
        # dict's own reduction would iterate the tables, which waits for the rest.
        return (PendingTables, (dict(dict.items(self)), list(self._paths), self._unavailable))

    def _next(self) -> None:
        import pickle
        import time

        path = Path(self._paths[0])
        whole = Path(self._paths[-1])
        failed = whole.with_name(whole.name + ".failed")
        deadline = time.monotonic() + _PENDING_WAIT_SECONDS
        while not path.is_file():
            if failed.is_file():
                raise RuntimeError(f"the rest of this page was not computed: {failed.read_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {_PENDING_WAIT_SECONDS} s for {path}")
            time.sleep(0.005)
        # Our own renderer wrote it into our own private temporary directory.
        with path.open("rb") as fh:
            part = pickle.load(fh)
        # dict's own items: a later part's tables are pending too, and must not wait here.
        dict.update(self, dict.items(part.tables))
        self._unavailable.clear()
        self._unavailable.update(part.unavailable)
        self._paths.pop(0)

    def _complete(self) -> None:
        while self._paths:
            self._next()

    def _have(self, name: Any) -> bool:
        # A table the parts so far found unavailable stays so: no wait (the sample's
        # primary_test without a plan kept the kernel from the page's next cells).
        while self._paths and not dict.__contains__(self, name) and name not in self._unavailable:
            self._next()
        return dict.__contains__(self, name)

    def __getitem__(self, name: Any) -> Any:
        self._have(name)
        return dict.__getitem__(self, name)

    def get(self, name: Any, default: Any = None) -> Any:
        return dict.get(self, name, default) if self._have(name) else default

    def __contains__(self, name: Any) -> bool:
        return self._have(name)

    def __iter__(self) -> Any:
        self._complete()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._complete()
        return dict.__len__(self)

    def keys(self) -> Any:
        self._complete()
        return dict.keys(self)

    def values(self) -> Any:
        self._complete()
        return dict.values(self)

    def items(self) -> Any:
        self._complete()
        return dict.items(self)


class _JsonTables(Mapping):
    """``to_json()["tables"]`` of a first part: each table converted when looked up (the
    same values as the eager dict; a name not computed yet waits for the rest)."""

    def __init__(self, results: Results) -> None:
        self._results = results
        self._done: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._done:
            table = self._results.tables.get(name)  # waits for the rest when not there
            if table is not None:
                self._done[name] = _records(table)
            elif name in self._results.unavailable:
                self._done[name] = None  # a section that could not be computed
            else:
                raise KeyError(name)
        return self._done[name]

    def __iter__(self) -> Any:
        tables = self._results.tables
        return iter({**dict.fromkeys(self._results.unavailable), **dict.fromkeys(tables)})

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Unavailable(Mapping):
    """``to_json()["unavailable"]`` of a first part: the whole page's, once it is there."""

    def __init__(self, results: Results) -> None:
        self._results = results

    def _reasons(self) -> dict[str, str]:
        self._results.tables._complete()
        return self._results.unavailable

    def __getitem__(self, name: str) -> str:
        return self._reasons()[name]

    def __iter__(self) -> Any:
        return iter(dict(self._reasons()))

    def __len__(self) -> int:
        return len(self._reasons())


# A page's rest takes well under a second on the sample; this bounds a renderer that died.
_PENDING_WAIT_SECONDS = 600.0


def first_part(
    results: Results, complete: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
) -> Results:
    """``results`` (a page's first part) with :class:`PendingTables` that complete from the
    pickles of the parts after it, in order, the whole page's (``complete``) last."""
    import dataclasses

    paths = (
        [os.fspath(complete)]
        if isinstance(complete, (str, os.PathLike))
        else [os.fspath(c) for c in complete]
    )
    unavailable = dict(results.unavailable)
    part = dataclasses.replace(results, unavailable=unavailable)
    tables = PendingTables(dict(dict.items(results.tables)), paths, unavailable)
    object.__setattr__(part, "tables", tables)  # after __post_init__, which iterates them
    return part


def merge_results(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """Merge the JSON of several :class:`Results` computed from the same inputs into one.

    Tables are united (a name may appear once); parameters and provenance must agree on every
    key they share, otherwise the parts were not computed from the same inputs.

    Examples
    --------
    >>> import pandas as pd
    >>> a = Results({"a": pd.DataFrame({"x": [1]})}, {"seed": 1}, {}, False).to_json()
    >>> b = Results({"b": pd.DataFrame({"x": [2]})}, {"seed": 1}, {}, True).to_json()
    >>> sorted(merge_results(a, b)["tables"])
    ['a', 'b']
    """
    if not parts:
        raise ValueError("nothing to merge")
    merged: dict[str, Any] = {
        "format": FORMAT,
        "simulated": False,
        "parameters": {},
        "provenance": {},
        "tables": {},
        "unavailable": {},
    }
    for part in parts:
        if part.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} document: format={part.get('format')!r}")
        merged["simulated"] = merged["simulated"] or bool(part["simulated"])
        for key in ("parameters", "provenance"):
            for k, v in part[key].items():
                if k in merged[key] and merged[key][k] != v:
                    raise ValueError(f"parts disagree on {key}.{k}: not from the same inputs")
                merged[key][k] = v
        for tname, rows in part["tables"].items():
            if rows is None and tname in merged["tables"]:
                continue  # unavailable in this part, computed in another
            if merged["tables"].get(tname) is not None:
                raise ValueError(f"table {tname!r} appears in two parts")
            merged["tables"][tname] = rows
        merged["unavailable"].update(part.get("unavailable", {}))
    for tname, rows in merged["tables"].items():
        if rows is not None:
            merged["unavailable"].pop(tname, None)
    return merged


def dump_json(doc: Mapping[str, Any]) -> str:
    """Stable, strict JSON text (no NaN literals: they are not JSON), with the configured API
    keys and base-URL credentials scrubbed (:func:`scrub`).

    >>> dump_json({"a": 1})
    '{\\n "a": 1\\n}\\n'
    """
    return scrub(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def scrub(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with the API keys and URL credentials (and their base64 forms) replaced by
    ``[redacted]``: every text the report writes goes through here.

    ``secrets`` defaults to those configured in the environment (``ANTHROPIC_API_KEY``,
    ``OPENAI_API_KEY`` and the credentials of ``*_BASE_URL``), whatever their prefix.

    >>> scrub("the judge echoed k-test-0123456789abcdef", ["k-test-0123456789abcdef"])
    'the judge echoed [redacted]'
    """
    # Imported here: judging loads its providers' code, which the report needs only now.
    from ..judging import redact

    return redact(text, secrets)


def to_jsonable(value: Any) -> Any:
    """Recursively turn numpy/pandas values into JSON-safe Python ones (NaN -> None).

    >>> import numpy as np
    >>> to_jsonable({"a": np.float64("nan"), "b": [np.int64(2), (1.5,)]})
    {'a': None, 'b': [2, [1.5]]}
    """
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_jsonable(v) for v in value]
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    return str(value)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [str(c) for c in table.columns]
    return [
        {c: to_jsonable(v) for c, v in zip(cols, row, strict=True)}
        for row in table.astype(object).itertuples(index=False, name=None)
    ]


def tidy(table: pd.DataFrame) -> pd.DataFrame:
    """Plain columns (categoricals as strings) and a fresh index: what CSV/JSON will hold."""
    out = table.reset_index(drop=True).copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype("string")
    return out


# --------------------------------------------------------------------------------------------
# what a render wrote in OUT: replaced by name, removed only when it wrote them
# --------------------------------------------------------------------------------------------

#: The list of files the last render wrote in OUT (relative paths): the only files a later
#: render removes. Anything else in OUT (a user's notes in ``figures/``) is never touched.
MANIFEST = ".evalstats-report.json"


def _files_under(out: Path) -> dict[str, tuple[int, int]]:
    """Relative path -> (inode, mtime) of every file under OUT but the manifest."""
    if not out.is_dir():
        return {}
    found = {}
    for p in out.rglob("*"):
        if p.name == MANIFEST or not (p.is_file() or p.is_symlink()):
            continue
        st = p.lstat()
        found[p.relative_to(out).as_posix()] = (st.st_ino, st.st_mtime_ns)
    return found


def clear_previous_outputs(out_dir: str | os.PathLike[str]) -> dict[str, tuple[int, int]]:
    """Remove the files the previous render listed in ``OUT/.evalstats-report.json`` (a figure
    or table this render may not write again must not outlive its report); return the
    files left in OUT, which are not the report's, with their inode and mtime, for
    :func:`record_outputs`.

    Only files inside OUT that the manifest names are removed; a manifest that cannot be
    read removes nothing.
    """
    out = Path(out_dir)
    try:
        listed = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        listed = []
    root = out.resolve() if out.exists() else out
    for rel in listed if isinstance(listed, list) else []:
        if not isinstance(rel, str):
            continue
        path = out / rel
        try:
            inside = path.resolve().is_relative_to(root) and ".." not in Path(rel).parts
        except OSError:
            inside = False
        if inside and (path.is_symlink() or path.is_file()):
            path.unlink(missing_ok=True)
    return _files_under(out)


def record_outputs(
    out_dir: str | os.PathLike[str], before: Mapping[str, tuple[int, int]]
) -> list[str]:
    """Write ``OUT/.evalstats-report.json``: every file in OUT that the render created or
    replaced by name (not in ``before``, from :func:`clear_previous_outputs`, or changed
    since). Returns them."""
    out = Path(out_dir)
    files = sorted(rel for rel, sig in _files_under(out).items() if before.get(rel) != sig)
    text = json.dumps({"format": FORMAT, "files": files}, indent=1) + "\n"
    atomic_write(out / MANIFEST, lambda fh: fh.write(text.encode("utf-8")))
    return files
