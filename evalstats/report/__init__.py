"""Everything after the statistics: the published numbers, their provenance, the notebooks'
display helpers, and rendering them into a self-contained report.

Layout (small private modules behind this public surface):

* ``_kinds``      the report kinds (:data:`REPORT_KINDS`) and :func:`compute`, the one
                  load -> sections -> provenance scaffold every kind shares;
* ``_evaluation`` the sections of an evaluation (``report.ipynb``, ``methodology.ipynb``);
* ``_case_study`` the sections of the AlpacaEval case study, its findings included;
* ``_results``    :class:`Results` and ``results.json`` (:func:`merge_results`,
                  :func:`dump_json`, :func:`to_jsonable`);
* ``_provenance`` input digests, versions and settings (:func:`provenance`);
* ``_display``    what the notebooks call to display a section (``show_*``);
* ``_render``     :func:`render_report`: one computation, one kernel for every page;
* ``_html``       HTML assembly, the self-contained check and the CSP;
* ``_cli``        the ``evalstats report`` subcommand (:func:`register`).

Only the CLI and the notebooks import this package. Names load lazily, so that
``evalstats --help`` (which calls :func:`register`) imports neither pandas nor nbclient.

Examples
--------
>>> from evalstats.report import compute_results
>>> res = compute_results("data/sample", n_resamples=200, seed=0)
>>> res.tables["headline"][["rubric", "judge"]].to_numpy().tolist()[0]
['blind-pair', 'anthropic:claude-sonnet-4-20250514']
>>> len(res.to_json()["provenance"]["inputs"]["judgments.jsonl"]["sha256"])
64
"""

from __future__ import annotations

import importlib
from typing import Any

from ._cli import parse_params, register

__all__ = [
    "CASE_STUDY_PARAMETERS",
    "CONSENSUS_RULE",
    "FORMAT",
    "NOTEBOOKS",
    "PARAMETERS",
    "REPORT_KINDS",
    "ReportError",
    "ReportKind",
    "Results",
    "Section",
    "Unavailable",
    "compute",
    "compute_case_study",
    "compute_methodology",
    "compute_results",
    "detect_kind",
    "dump_json",
    "export",
    "formatted_tables",
    "headline_paragraph",
    "geomean_ci",
    "input_digests",
    "latex_macros",
    "latex_tables",
    "load_results",
    "markdown_tables",
    "merge_ci",
    "merge_results",
    "notebook_path",
    "parse_params",
    "provenance",
    "register",
    "render_report",
    "result_sentences",
    "run_provenance",
    "sentences_markdown",
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
    "to_jsonable",
]

_WHERE = {
    "CASE_STUDY_PARAMETERS": "_kinds",
    "NOTEBOOKS": "_kinds",
    "PARAMETERS": "_kinds",
    "REPORT_KINDS": "_kinds",
    "ReportError": "_kinds",
    "ReportKind": "_kinds",
    "Section": "_kinds",
    "Unavailable": "_kinds",
    "compute": "_kinds",
    "detect_kind": "_kinds",
    "CONSENSUS_RULE": "_evaluation",
    "FORMAT": "_results",
    "Results": "_results",
    "dump_json": "_results",
    "merge_results": "_results",
    "to_jsonable": "_results",
    "input_digests": "_provenance",
    "provenance": "_provenance",
    "run_provenance": "_provenance",
    "geomean_ci": "_display",
    "load_results": "_display",
    "merge_ci": "_display",
    "show_confusions": "_display",
    "show_figure": "_display",
    "show_findings": "_display",
    "show_headline_card": "_display_plan",
    "show_tests": "_display_plan",
    "show_provenance": "_display",
    "show_table": "_display",
    "show_unavailable": "_display",
    "table_view": "_display",
    "table_html": "_display",
    "notebook_path": "_render",
    "render_report": "_render",
    "_html": None,
    "export": "_paper",
    "formatted_tables": "_export_tables",
    "headline_paragraph": "_sentences",
    "latex_macros": "_macros",
    "latex_tables": "_export_tables",
    "markdown_tables": "_export_tables",
    "result_sentences": "_sentences",
    "sentences_markdown": "_sentences",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _WHERE[name] is None:  # a submodule
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def compute_results(data_dir: Any, **params: Any) -> Any:
    """The numbers of an evaluation's report page (``report.ipynb``).

    Parameters are those of :func:`compute` for the ``evaluation`` kind: ``judges``,
    ``rubric``, ``confidence`` (0.95), ``n_resamples`` (10 000), ``seed`` (0) and ``frame``
    (the verdict frame when already loaded). Returns a :class:`Results`.
    """
    from ._kinds import compute

    return compute("evaluation", data_dir, pages=["report"], **params)


def compute_methodology(data_dir: Any, **params: Any) -> Any:
    """The numbers of an evaluation's methodology page: power, minimum detectable effect
    and CI coverage for this design (parameters as :func:`compute_results`)."""
    from ._kinds import compute

    return compute("evaluation", data_dir, pages=["methodology"], **params)


def compute_case_study(data_dir: Any, **params: Any) -> Any:
    """The AlpacaEval case study: leaderboard reproduced, judge agreement, length bias, SEs
    and the findings (``confidence``, ``n_resamples``, ``seed``). Returns a :class:`Results`.

    Its tables (rates x 100, as AlpacaEval publishes them, where noted): ``leaderboard``
    (:func:`evalstats.adapters.alpaca_eval.compare_leaderboard`), ``agreement``
    (:func:`evalstats.adapters.alpaca_eval.judge_agreement_by_model`), ``length_bias`` and
    ``length_slope`` (:func:`evalstats.stats.regression.length_bias`, with the odds ratio of a
    win per doubling of length), ``standard_errors``
    (:func:`evalstats.stats.clustered_se.se_comparison`: AlpacaEval's IID SE beside CR1 and
    cluster-bootstrap SEs by instruction and by source data set) and ``findings`` (the page's
    conclusion, one Markdown sentence per row). ``unavailable`` says why a section is missing
    (no ``leaderboard_rows.json``, a single annotator, no ``dataset`` field).
    """
    from ._kinds import compute

    return compute("alpaca_eval", data_dir, **params)
