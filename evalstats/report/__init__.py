"""Everything after the statistics: the published numbers, their provenance, the notebooks'
display helpers, rendering them into a self-contained report, and the paper export.

Modules: ``_kinds`` (the report kinds and :func:`compute`), ``_evaluation`` and ``_comparison``
(an evaluation's sections), the case studies, ``_results`` (:class:`Results`, results.json,
provenance), ``_display`` (the notebooks' ``show_*``, figure files), ``_export`` (LaTeX,
Markdown, macros, sentences), ``_render`` / ``_html`` / ``_pdf`` (the pages) and ``_cli``.
Names load lazily, so ``evalstats --help`` imports neither pandas nor nbclient.

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

from typing import Any

from .._surface import lazy_surface
from ._cli import parse_params as parse_params
from ._cli import register as register

# submodule -> the public names it defines (docs/reference.md lists each one).
_LAZY_NAMES, __getattr__, __dir__ = lazy_surface(
    __name__,
    {
        "._display": [
            "geomean_ci",
            "load_results",
            "merge_ci",
            "pair_frames",
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
        ],
        "._evaluation": ["CONSENSUS_RULE"],
        "._kinds": [
            "CASE_STUDY_PARAMETERS",
            "NOTEBOOKS",
            "PARAMETERS",
            "REPORT_KINDS",
            "ReportError",
            "ReportKind",
            "Section",
            "Unavailable",
            "compute",
            "detect_kind",
        ],
        "._render": ["notebook_path", "render_report"],
        "._results": [
            "FORMAT",
            "Results",
            "dump_json",
            "input_digests",
            "merge_results",
            "method_words",
            "provenance",
            "run_provenance",
            "to_jsonable",
        ],
        "._export": [
            "export",
            "formatted_tables",
            "headline_paragraph",
            "latex_macros",
            "latex_tables",
            "markdown_tables",
            "result_sentences",
            "sentences_markdown",
        ],
    },
)

__all__ = sorted(
    [
        *_LAZY_NAMES,
        "compute_case_study",
        "compute_methodology",
        "compute_results",
        "parse_params",
        "register",
    ]
)


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
    ``length_slope`` (:func:`evalstats.stats.models.length_bias`, with the odds ratio of a
    win per doubling of length), ``standard_errors``
    (:func:`evalstats.stats.rates.se_comparison`: AlpacaEval's IID SE beside CR1 and
    cluster-bootstrap SEs by instruction and by source data set) and ``findings`` (the page's
    conclusion, one Markdown sentence per row). ``unavailable`` says why a section is missing
    (no ``leaderboard_rows.json``, a single annotator, no ``dataset`` field).
    """
    from ._kinds import compute

    return compute("alpaca_eval", data_dir, **params)
