"""Report kinds (how a data directory is recognised, its notebooks, its sections) and
:func:`compute`, the one load -> sections -> provenance scaffold they share. Imports neither
pandas nor the statistics, so that ``evalstats --help`` stays light."""

from __future__ import annotations

import copy
import html
import importlib
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .._validate import check_confidence, check_n_resamples, check_positive_int
from ..errors import ReportError

__all__ = [
    "CASE_STUDY_PARAMETERS",
    "NOTEBOOKS",
    "PARAMETERS",
    "REPORT_KINDS",
    "Context",
    "Loaded",
    "Prepared",
    "ReportError",
    "ReportKind",
    "Section",
    "Unavailable",
    "check_parameters",
    "compute",
    "detect_kind",
    "prepare",
]


class Unavailable(Exception):
    """Raised by a section (or returned as a table's value) to say why it is not computed."""


@dataclass(frozen=True)
class Loaded:
    """A kind's data, loaded once: frame, what its sections need, inputs and description."""

    frame: Any
    inputs: Sequence[Path]
    describe: Mapping[str, Any]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    """What every section of one computation sees: one shared ``rng`` (drawn from in section
    order), the ``tables`` so far and ``scratch`` (handed on, not published)."""

    data_dir: Path
    frame: Any
    extra: Mapping[str, Any]
    confidence: float
    n_resamples: int
    seed: int | None
    params: Mapping[str, Any]
    rng: Any
    tables: dict[str, Any] = field(default_factory=dict)
    scratch: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    """One part of a report page.

    ``compute(ctx)`` returns ``{table name: DataFrame or Unavailable(reason)}`` (or raises
    :class:`Unavailable` for a single table ``name``).
    """

    name: str
    page: str
    compute: Callable[[Context], Mapping[str, Any]]


def arm_headings(nb: Any, provenance: Mapping[str, Any]) -> Any:
    """``nb`` with "WITH vs WITHOUT:" in its Markdown headings said with the arms' names
    (arms.toml): "A vs B:", or for K arms "K arms: a, b, c —"."""
    names = provenance.get("arm_names") or {}
    pairs = provenance.get("arm_pairs") or [("with", "without")]
    said = " vs ".join(str(names.get(x, x)) for x in pairs[0]) + ":"
    if len(pairs) > 1:
        said = f"{len(names)} arms: {', '.join(map(str, names.values()))} —"
    ran = "**WITH** the tool and **WITHOUT** it"
    under = f"under each of {len(names)} arms ({', '.join(map(str, names.values()))})"
    for cell in nb.cells:
        if cell.cell_type == "markdown":  # the names as text, not markup
            heading = re.compile(r"^(#[^\n]*?)WITH vs WITHOUT:", re.MULTILINE)
            cell.source = heading.sub(lambda m: m[1] + html.escape(said), cell.source)
            if len(pairs) > 1:
                cell.source = cell.source.replace(ran, html.escape(under)).replace(
                    "from WITH's point of view", "from the first arm's (arm_a's) point of view"
                )
    return nb


# (notebook, html page, title); the first is index.html.
NOTEBOOKS = (
    ("report.ipynb", "index.html", "Report"),
    ("methodology.ipynb", "methodology.html", "Methodology"),
)
_RENDERER_PARAMETERS = ("data_dir", "output_dir", "figure_formats", "results_file")


def _parameters(data_dir: str, n_resamples: int = 10_000, **own: Any) -> dict[str, Any]:
    """A kind's notebook parameters and defaults, papermill's convention; ``results_file`` is
    the renderer's pickle of the numbers (None: the notebook computes them itself)."""
    common = {"confidence": 0.95, "n_resamples": n_resamples, "seed": 0}
    rendered = {"output_dir": None, "figure_formats": ["svg", "pdf"], "results_file": None}
    return {"data_dir": data_dir, **common, **own, **rendered}


PARAMETERS = _parameters("data/sample", judges=None, rubric=None)
CASE_STUDY_PARAMETERS = _parameters("../shared/data/alpaca_eval")


def base_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    """The ``parameters`` entries every report kind shares."""
    return {
        "confidence": float(p["confidence"]),
        "n_resamples": int(p["n_resamples"]),
        "seed": p["seed"],
    }


@dataclass(frozen=True)
class ReportKind:
    """What one kind of report computes and renders, and how its data look.

    The ``--kind`` name, its notebooks ((notebook, html page, title); the first is ``index.html``), their
    parameters, what ``detect(data_dir)`` looks for, ``check(data_dir)`` (a missing input),
    ``load(data_dir, params, frame) -> Loaded``, ``sections()`` in computation order and
    ``describe_parameters(params)`` (the ``parameters`` block of results.json)."""

    name: str
    notebooks: tuple[tuple[str, str, str], ...]
    parameters: Mapping[str, Any]
    looks_for: str
    detect: Callable[[Path], bool]
    check: Callable[[Path], None]
    load: Callable[[Path, Mapping[str, Any], Any], Loaded]
    sections: Callable[[], tuple[Section, ...]]
    describe_parameters: Callable[[Mapping[str, Any]], dict[str, Any]]

    @property
    def user_parameters(self) -> list[str]:
        """The parameters ``-p`` may set."""
        return [k for k in self.parameters if k not in _RENDERER_PARAMETERS]

    @property
    def pages(self) -> list[str]:
        """The notebook pages, by stem (``report``, ``methodology``...)."""
        return [nb.removesuffix(".ipynb") for nb, _, _ in self.notebooks]


def compute(
    kind: str,
    data_dir: str | os.PathLike[str],
    *,
    pages: Sequence[str] | None = None,
    frame: Any = None,
    **params: Any,
):
    """Compute the published numbers of report ``kind`` on ``data_dir``: one scaffold.

    Parameters
    ----------
    kind : str
        A :data:`REPORT_KINDS` name.
    data_dir : path
        The kind's data directory.
    pages : sequence of str, optional
        Only the sections of these notebook pages (default: every page of the kind).
    frame : DataFrame, optional
        The kind's verdict frame when already loaded.
    **params
        The kind's user parameters (``confidence``, ``n_resamples``, ``seed``, ...).

    Examples
    --------
    >>> from evalstats.report import compute
    >>> res = compute("evaluation", "data/sample", pages=["report"], n_resamples=50)
    >>> head = res.tables["headline"]  # long: one row per rubric, judge and statistic
    >>> head.groupby(["rubric", "judge"]).ngroups, sorted(set(head["statistic"]))[:3]
    (4, ['loss_rate', 'net_win', 'score'])
    """
    prepared = prepare(kind, data_dir, frame=frame, **params)
    return prepared.compute(prepared.spec.pages if pages is None else pages)


@dataclass
class Prepared:
    """A kind's validated parameters and its data, loaded once, ready to compute pages."""

    spec: ReportKind
    data_dir: Path
    params: dict[str, Any]
    loaded: Loaded
    _description: dict[str, Any] | None = field(default=None, init=False, repr=False)
    _pair_tables: dict[str, Any] | None = field(default=None, init=False, repr=False)

    def compute(self, pages: Sequence[str]):
        """The :class:`~evalstats.report.Results` of ``pages`` (sections in kind order)."""
        import numpy as np
        import pandas as pd

        from ._results import Results, is_simulated, provenance, tidy

        spec, p, loaded = self.spec, self.params, self.loaded
        if bad := sorted(set(pages) - set(spec.pages)):
            known = ", ".join(spec.pages)
            raise ReportError(f"unknown page(s) {', '.join(bad)}; {spec.name} has {known}")
        ctx = Context(
            data_dir=self.data_dir,
            frame=loaded.frame,
            extra=loaded.extra,
            confidence=p["confidence"],
            n_resamples=p["n_resamples"],
            seed=p["seed"],
            params=p,
            # Each computation starts its own generator: pages do not depend on each other.
            rng=np.random.default_rng(p["seed"]),
        )
        # K arms: the two-arm sections run on each pair's view (own Context and generator),
        # their tables stacked with ``arm_a`` / ``arm_b`` first; the ``across`` pages (the
        # K-arm comparison) run once on the whole frame.
        pairs = loaded.extra.get("pairs")
        check_n_resamples(p["n_resamples"], pairs=max(len(pairs or ()), 1))
        across = loaded.extra.get("across_pages", ())

        def view(f: Any, x: Any) -> Context:
            rng = np.random.default_rng(p["seed"])
            return replace(ctx, frame=f, extra=x, rng=rng, tables={}, scratch={})

        views = [(a, b, view(f, x)) for a, b, f, x in pairs or ()]
        if views and set(pages) & set(across) and set(pages) - set(across):
            # The pairs' pages first (the K-arm sections read them), then the K-arm page.
            res = self.compute([pg for pg in pages if pg not in across])
            more = self.compute([pg for pg in pages if pg in across])
            res.tables.update(more.tables)
            res.unavailable.update(more.unavailable)
            return res
        if views and set(pages) & set(across):
            # The K-arm sections read the pairs' own numbers (one interval per quantity).
            if self._pair_tables is None:
                self.compute(spec.pages[:1])  # the report page: headline, cost
            ctx.scratch["pair_tables"] = self._pair_tables
        unavailable: dict[str, str] = {}
        per_pair: dict[str, list[Any]] = {}
        for section in spec.sections():
            if section.page not in pages:
                continue
            if not views or section.page in across:
                _run(section, ctx, ctx.tables, unavailable)
                continue
            for a, b, view in views:
                why: dict[str, str] = {}
                _run(section, view, view.tables, why)
                for name, reason in why.items():
                    per_pair.setdefault(name, []).append(f"{a} vs {b}: {reason}")
        for name in dict.fromkeys(n for _, _, v in views for n in v.tables):  # a stable order
            parts = [_plain(v.tables[name]).assign(arm_a=a, arm_b=b) for a, b, v in views
                     if isinstance(v.tables.get(name), pd.DataFrame)]  # fmt: skip
            t = pd.concat(parts, ignore_index=True)
            ctx.tables[name] = t[["arm_a", "arm_b", *[c for c in t if c not in ("arm_a", "arm_b")]]]
        if views and not set(pages) & set(across):
            self._pair_tables = {**(self._pair_tables or {}), **ctx.tables}
        for name, reasons in per_pair.items():
            if name not in ctx.tables:  # one reason when every pair has the same
                said = {r.split(": ", 1)[1] for r in reasons}
                unavailable[name] = said.pop() if len(said) == 1 else "; ".join(reasons)
        if self._description is None:  # provenance, parameters, simulated: once for every page
            self._description = {
                "provenance": provenance(
                    self.data_dir,
                    loaded.inputs,
                    seed=p["seed"],
                    n_resamples=p["n_resamples"],
                    confidence=p["confidence"],
                    describe=loaded.describe,
                ),
                "parameters": self.spec.describe_parameters(p),
                "simulated": is_simulated(self.data_dir),
            }
        return Results(
            tables={k: tidy(v) for k, v in ctx.tables.items()},
            **{k: copy.deepcopy(v) for k, v in self._description.items()},
            unavailable=unavailable,
            frame=loaded.frame,
        )


def _plain(table: Any) -> Any:
    """A table as a plain DataFrame without ``attrs`` (diagnostics travel as their own table)."""
    import pandas as pd

    out = pd.DataFrame(table)
    out.attrs = {}
    return out


def _run(section: Section, ctx: Context, tables: dict[str, Any], unavailable: dict[str, str]):
    try:
        produced = section.compute(ctx)
    except Unavailable as why:
        produced = {section.name: why}
    for name, value in produced.items():
        if isinstance(value, Unavailable):
            unavailable[name] = str(value)
            continue
        tables[name] = value
        # A table of the seeds' one pair (with, without on every row): without those columns.
        if {"arm_a", "arm_b"} <= set(getattr(value, "columns", ())) and (
            (value["arm_a"].astype(str) == "with") & (value["arm_b"].astype(str) == "without")
        ).all():
            tables[name] = value.drop(columns=["arm_a", "arm_b"])
            tables[name].attrs = dict(value.attrs)


def findings(rows: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The ``findings`` table: (topic, Markdown sentence), text from the data made inert."""
    import pandas as pd

    from ._untrusted import markdown_text

    table = pd.DataFrame([(t, markdown_text(s)) for t, s in rows], columns=["topic", "text"])
    return {"findings": table}


def check_parameters(spec: ReportKind, params: Mapping[str, Any]) -> dict[str, Any]:
    """The user parameters of ``spec`` (its defaults, overridden by ``params``), checked.

    >>> check_parameters(REPORT_KINDS["evaluation"], {"seed": 3})["seed"]
    3
    >>> try:
    ...     check_parameters(REPORT_KINDS["evaluation"], {"confidence": 1.5})
    ... except ValueError as exc:
    ...     print(exc)
    confidence must be in (0, 1), got 1.5
    """
    p = {k: spec.parameters[k] for k in spec.user_parameters} | dict(params)
    p["confidence"] = check_confidence(p["confidence"])
    p["n_resamples"] = check_n_resamples(p["n_resamples"])
    if p.get("seed") is not None:
        p["seed"] = check_positive_int(p["seed"], "seed", minimum=0)
    return p


def prepare(
    kind: str, data_dir: str | os.PathLike[str], *, frame: Any = None, **params: Any
) -> Prepared:
    """Validate the parameters of report ``kind`` and load its data once."""
    if kind not in REPORT_KINDS:
        raise ReportError(f"unknown report kind {kind!r}; known: {', '.join(REPORT_KINDS)}")
    spec = REPORT_KINDS[kind]
    unknown = sorted(set(params) - set(spec.user_parameters))
    if unknown:
        raise TypeError(f"unexpected parameter(s) for the {kind} report: {', '.join(unknown)}")
    p = check_parameters(spec, params)
    d = Path(data_dir)
    loaded = spec.load(d, p, frame)
    more = tuple(loaded.extra.get("notebooks", ()))
    if more:
        spec = replace(spec, notebooks=spec.notebooks + more)
    return Prepared(spec=spec, data_dir=d, params=p, loaded=loaded)


def _lazy(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported on first call (keeps pandas out of ``evalstats --help``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        mod = importlib.import_module(f"{__package__}.{module}")
        return getattr(mod, name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = f"{module}.{name}"
    return call


def _hooks(module: str) -> dict[str, Callable[..., Any]]:
    """A kind's module supplies every hook under the hook's own name."""
    hooks = ("detect", "check", "load", "sections", "describe_parameters")
    return {hook: _lazy(module, hook) for hook in hooks}


_CASE_STUDIES = (  # (name, module, title, parameters, what detect looks for)
    ("alpaca_eval", "_case_study", "AlpacaEval", CASE_STUDY_PARAMETERS,
     "AlpacaEval annotation files (*annotations*.json, .jsonl, .ndjson, optionally .gz, in "
     "the directory or below it)"),
    ("llmbar", "_llmbar", "LLMBar", _parameters("../shared/data/llmbar", 2_000,
     strategy="Vanilla_NoRules"),
     "LLMBar*.tar.xz, or Dataset/<subset>/dataset.json with evaluators/"),
    ("pandalm", "_pandalm", "PandaLM", _parameters("../shared/data/pandalm", 2_000,
     ppi_judge="gpt-3.5-turbo", ppi_fraction=0.10),
     "PandaLM's testset-v1.json (or .gz) with the two judges' files"),
    ("arena", "_arena", "Chatbot Arena", _parameters("../shared/data/arena", 1_000,
     ppr_judge="gpt-4-0125-preview", ppr_n_labels=1_000, n_subsamples=10,
     subsample_resamples=300),
     "battles.csv.gz (Chatbot Arena battles judged by people and LLMs)"),
)  # fmt: skip


REPORT_KINDS: dict[str, ReportKind] = {
    "evaluation": ReportKind(
        name="evaluation",
        notebooks=NOTEBOOKS,
        parameters=PARAMETERS,
        looks_for="tasks.jsonl (or .ndjson/.parquet/.csv), runs and judgments",
        **_hooks("_evaluation"),
    ),
    **{
        name: ReportKind(
            name=name,
            notebooks=((f"case_study_{name}.ipynb", "index.html", f"{title} case study"),),
            parameters=parameters,
            looks_for=looks_for,
            **_hooks(module),
        )
        for name, module, title, parameters, looks_for in _CASE_STUDIES
    },
}


def detect_kind(data_dir: str | os.PathLike[str]) -> str:
    """The :data:`REPORT_KINDS` name whose data ``data_dir`` holds (exactly one, or ReportError).

    >>> detect_kind("data/sample")
    'evaluation'
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
