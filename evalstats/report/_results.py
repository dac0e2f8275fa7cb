""":class:`Results` (the published tables plus provenance, written as ``results.json``), the
export's reading of a results document, and the report folder's manifest and render lock."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._csvsafe import safe_csv
from .._tidy import is_long, result_by, wide
from ..errors import DataError, ReportError
from ..records import atomic_write

__all__ = [
    "FORMAT",
    "Results",
    "dump_json",
    "input_digests",
    "is_simulated",
    "merge_results",
    "provenance",
    "run_provenance",
    "scrub",
    "to_jsonable",
]

FORMAT = "evalstats-results/1"


@dataclass(frozen=True)
class Results:
    """Tables of published numbers plus the provenance needed to reproduce them.

    Attributes
    ----------
    tables : dict of str to DataFrame
        Tidy tables under stable names (``headline``, ``consensus``, ``agreement``, ``cost``...).
    provenance : dict
        Input digests, versions, seed, n_resamples, confidence and the kind's description.
    parameters : dict
        The arguments the tables were computed with.
    simulated : bool
        True when ``DATA_DIR/truth.json`` says ``"simulated": true``.
    unavailable : dict of str to str
        Sections that could not be computed here, with the reason.
    frame : DataFrame
        The verdict frame the tables were computed from (for figures; not serialised).

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
        # The arms' names travel in ``attrs`` so that a figure can name them (two arms only).
        names = self.provenance.get("arm_names")
        if names and set(names) <= {"with", "without"}:
            for t in (*self.tables.values(), self.frame):
                if isinstance(t, pd.DataFrame):
                    t.attrs["arm_names"] = dict(names)

    def table(self, name: str) -> pd.DataFrame | None:
        """The table ``name``, or None when the section is unavailable or empty."""
        t = self.tables.get(name)
        return None if t is None or t.empty else t

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict: NaN and NA become null, numpy scalars become Python numbers."""
        return {
            "format": FORMAT,
            "simulated": bool(self.simulated),
            "parameters": to_jsonable(self.parameters),
            "provenance": to_jsonable(self.provenance),
            "tables": {
                **{name: None for name in self.unavailable},
                **{name: _records(t) for name, t in self.tables.items()},
            },
            "unavailable": dict(self.unavailable),
        }

    def write(self, out_dir: str | os.PathLike[str], *, name: str = "results") -> Path:
        """Write ``OUT/<name>.json`` and ``OUT/tables/<table>.csv`` atomically; return the JSON path."""
        out = Path(out_dir)
        self.write_tables(out)
        path = out / f"{name}.json"
        text = dump_json(self.to_json()).encode("utf-8")
        atomic_write(path, lambda fh: fh.write(text))
        return path

    def write_tables(self, out_dir: str | os.PathLike[str]) -> None:
        """Write each table as ``OUT/tables/<table>.csv`` (formula-like cells quoted)."""
        for tname, t in self.tables.items():
            data = scrub(safe_csv(t, index=False) or "").encode("utf-8")
            atomic_write(Path(out_dir) / "tables" / f"{tname}.csv", lambda fh, d=data: fh.write(d))


def merge_results(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """Merge the JSON of several :class:`Results` of the same inputs (shared keys must agree).

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
    merged: dict[str, Any] = {"format": FORMAT, "simulated": False}
    merged |= {k: {} for k in ("parameters", "provenance", "tables", "unavailable")}
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
    """Stable, strict JSON text (no NaN literals), with credentials scrubbed (:func:`scrub`).

    >>> dump_json({"a": 1})
    '{\\n "a": 1\\n}\\n'
    """
    return scrub(json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n")


def scrub(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with API keys and URL credentials (default: the environment's) redacted.

    >>> scrub("the judge echoed k-test-0123456789abcdef", ["k-test-0123456789abcdef"])
    'the judge echoed [redacted]'
    """
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


# What the last render wrote in OUT, with sha256: the only files a later render removes, and
# only while unchanged (a file edited since is the user's).
MANIFEST = ".evalstats-report.json"
LOCK = ".evalstats-report.lock"  # flock'ed while a render writes OUT
# Where the report writes in OUT, by folder: only such files are ever listed or removed.
_REPORT_LAYOUT = {
    "": (".html", ".pdf"),
    "figures": (".svg", ".pdf", ".png"),
    "tables": (".csv",),
    "notebooks": (".ipynb",),
}
_REPORT_FILES = frozenset({"results.json"})
# Data files the suffixes below do not already name (tasks.jsonl, plan.toml, ...).
_DATA_NAMES = frozenset({"truth.json", "dataset.json", "annotations.json"})
_DATA_SUFFIXES = (".jsonl", ".toml", ".parquet", ".eval")


def is_report_file(rel: str) -> bool:
    """Whether ``rel`` (relative to OUT) is where the report writes, not a data file.

    >>> [is_report_file(r) for r in ("index.html", "tables/cost.csv", "judgments.jsonl")]
    [True, True, False]
    >>> is_report_file("rubrics/x.toml"), is_report_file("figures/../judgments.jsonl")
    (False, False)
    """
    parts = Path(rel).parts
    if not parts or ".." in parts or len(parts) > 2:
        return False
    name = parts[-1]
    if name in _DATA_NAMES or name.endswith(_DATA_SUFFIXES) or name in (MANIFEST, LOCK):
        return False
    folder = parts[0] if len(parts) == 2 else ""
    if folder == "" and name in _REPORT_FILES:
        return True
    return name.endswith(_REPORT_LAYOUT.get(folder, ()))


def sha256_file(path: Path) -> str | None:
    """The sha256 of the file at ``path`` (not following a symlink), None if unreadable."""
    try:
        return None if path.is_symlink() or not path.is_file() else _sha256(path)
    except OSError:
        return None


def read_manifest(out_dir: str | os.PathLike[str]) -> dict[str, str]:
    """Relative path -> sha256 of what the last render wrote in OUT ({} if unreadable)."""
    try:
        manifest = json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))
        hashes = manifest["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    if not isinstance(hashes, dict):
        return {}
    return {k: v for k, v in hashes.items() if isinstance(k, str) and isinstance(v, str)}


def clear_previous_outputs(
    out_dir: str | os.PathLike[str], *, exclude: str | os.PathLike[str] | None = None
) -> None:
    """Remove the files the previous render listed in the manifest (only inside OUT, where the
    report writes, not under ``exclude`` and still byte-identical)."""
    out = Path(out_dir)
    root = out.resolve() if out.exists() else out
    skip = Path(exclude).resolve() if exclude is not None else None
    for rel, digest in read_manifest(out).items():
        if not is_report_file(rel):
            continue
        path = out / rel
        try:
            where = path.parent.resolve() / path.name
            inside = where.is_relative_to(root) and not (skip and where.is_relative_to(skip))
        except OSError:
            inside = False
        if inside and sha256_file(path) == digest:
            path.unlink(missing_ok=True)


def write_manifest(out_dir: str | os.PathLike[str], hashes: Mapping[str, str]) -> None:
    """OUT's manifest: the files the last render (and --pdf) wrote, with their sha256."""
    doc = {"format": FORMAT, "files": sorted(hashes), "sha256": dict(hashes)}
    text = json.dumps(doc, indent=1) + "\n"
    atomic_write(Path(out_dir) / MANIFEST, lambda fh: fh.write(text.encode("utf-8")))


@contextlib.contextmanager
def render_lock(out_dir: str | os.PathLike[str], *, wait: float = 600.0) -> Iterator[None]:
    """Hold ``OUT/.evalstats-report.lock`` while a render writes OUT; a second render waits
    (saying so once) up to ``wait`` seconds, then fails."""
    import fcntl

    path = Path(out_dir) / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        deadline, said = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ReportError(
                        f"{out_dir}: another render is writing this directory "
                        f"(waited {wait:g} s); try again when it ends or choose another -o"
                    ) from None
                if not said:
                    print(f"evalstats: waiting for another render into {out_dir}", file=sys.stderr)
                    said = True
                time.sleep(min(0.2, max(deadline - time.monotonic(), 0.0)))
        yield
    finally:
        os.close(fd)  # releases the lock


_RATES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
EXPORT_TABLES: dict[str, tuple[str, ...]] = {
    "headline": _RATES,
    "consensus": _RATES,
    "agreement": ("observed_agreement", "kappa", "kappa_linear", "ac1", "pabak"),
    "cost": ("estimate",),
    "per_task": ("win_rate", "tie_rate", "loss_rate", "net_win"),
}
_MACRO_TABLES = ("headline", "consensus")
_AGREEMENT_MACROS = ("observed_agreement", "kappa", "kappa_linear", "ac1", "pabak")
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
    "jackknife_t": "jackknife over tasks with t quantiles",
    "task_bootstrap_studentized": (
        "task-cluster bootstrap-t on the logit (rates) / atanh (net win) scale, replicates "
        "nested in tasks"
    ),
    "task_bootstrap_percentile": "percentile task-cluster bootstrap (replicates nested)",
    "task_bootstrap_wald": "CR1 Wald t with a task-bootstrap max-t for the simultaneous bands",
    "task_bootstrap_studentized_log": "task-cluster bootstrap-t on the log ratio",
    "task_bootstrap_percentile_log": "percentile task-cluster bootstrap of the ratio",
    "simultaneous_stepdown": "simultaneous step-down (Mogstad, Romano, Shaikh & Wilhelm 2023)",
    "marginal_stepdown": "marginal step-down (Mogstad, Romano, Shaikh & Wilhelm 2023)",
    "task_bootstrap_share": "share of the task-bootstrap resamples",
    "atanh_jackknife_exact": (
        "delete-one-task jackknife t on Fisher's z (with an exact bound at few disagreements)"
    ),
    "atanh_jackknife_midp_blaker": (
        "delete-one-task jackknife t on Fisher's z (with a mid-p binomial bound at few "
        "disagreements)"
    ),
}
_COST_TEXT = {
    "tokens_total_ratio": "total tokens",
    "tokens_geomean_ratio": "tokens per pair (geometric mean of the ratios)",
    "tokens_median_ratio": "tokens per pair (median of the ratios)",
    "wall_total_ratio": "total wall-clock time",
    "wall_geomean_ratio": "wall-clock time per pair (geometric mean of the ratios)",
    "wall_median_ratio": "wall-clock time per pair (median of the ratios)",
}


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
    if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, Mapping) else type(doc).__name__
        raise DataError(f"not an {FORMAT} document (format={got!r})", path=where, field="format")
    if not isinstance(doc.get("tables"), Mapping):
        raise DataError("no tables in the results document", path=where, field="tables")
    return dict(doc)


def _table(doc: Mapping[str, Any], name: str) -> pd.DataFrame | None:
    """Table ``name`` of a results document, a long result pivoted to one row per group."""
    rows = doc["tables"].get(name)
    if not rows:
        return None
    diag = doc["tables"].get(f"{name}_diagnostics")
    return wide_view(pd.DataFrame(rows), pd.DataFrame(diag) if diag else None)


def wide_view(table: Any, diagnostics: Any) -> Any:
    """A long result pivoted to one row per group (by more than a pair of arms), else as is."""
    if is_long(table) and set(result_by(table)) - {"arm_a", "arm_b"}:
        return wide(table, diagnostics=diagnostics)
    return table


def _confidence(doc: Mapping[str, Any]) -> float:
    conf = doc.get("parameters", {}).get("confidence")
    if conf is None:
        conf = doc.get("provenance", {}).get("confidence", 0.95)
    return float(conf)


def _pct(x: float) -> str:
    return f"{x * 100:g}"


def _f(v: Any) -> float:
    return np.nan if v is None else float(v)


def _g(x: Any) -> str:
    return f"{float(x):g}"


def method_words(method: Any) -> str:
    """The words a sentence uses for an interval method (an unknown one verbatim).

    >>> method_words("cr2_wilson"), method_words("clustered atanh jackknife")
    ('CR2 Wilson with Bell-McCaffrey df', 'clustered atanh jackknife')
    """
    m = "" if method is None or method != method else str(method)
    return _METHOD_TEXT.get(m, m)


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def input_digests(base: Path, files: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """sha256 and size of each input, keyed by its path relative to ``base``.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> input_digests(d, [d / "a.txt"])["a.txt"]["bytes"]
    1
    """
    return {
        p.relative_to(base).as_posix(): {"sha256": _sha256(p), "bytes": p.stat().st_size}
        for p in files
    }


def run_provenance(*, seed: int | None, n_resamples: int, confidence: float) -> dict[str, Any]:
    """Versions plus the settings every published number depends on.

    >>> run_provenance(seed=0, n_resamples=10, confidence=0.9)["package"]["name"]
    'evalstats'
    """
    from .. import __version__

    return {
        "package": {"name": "evalstats", "version": __version__},
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "scipy": importlib.import_module("scipy").__version__,
        },
        "seed": seed,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
    }


def provenance(
    data_dir: Path,
    inputs: Sequence[Path],
    *,
    seed: int | None,
    n_resamples: int,
    confidence: float,
    describe: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block of ``results.json``.

    The data directory's name, input digests, ``describe`` (the kind's description of its
    data), versions and settings.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "mydata"; d.mkdir(); _ = (d / "x.json").write_text("{}")
    >>> p = provenance(d, [d / "x.json"], seed=1, n_resamples=5, confidence=0.95)
    >>> p["data_dir"], list(p["inputs"]), p["seed"]
    ('mydata', ['x.json'], 1)
    """
    return {
        "data_dir": data_dir.name,
        "inputs": input_digests(data_dir, inputs),
        **dict(describe or {}),
        **run_provenance(seed=seed, n_resamples=n_resamples, confidence=confidence),
    }


def is_simulated(data_dir: Path) -> bool:
    """True when ``data_dir/truth.json`` says ``"simulated": true``."""
    truth = data_dir / "truth.json"
    if not truth.exists():
        return False
    try:
        return json.loads(truth.read_text(encoding="utf-8")).get("simulated") is True
    except (json.JSONDecodeError, AttributeError) as exc:
        raise DataError(f"unreadable truth.json: {exc}", path=truth) from None
