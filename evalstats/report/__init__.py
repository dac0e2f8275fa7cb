"""Everything after the statistics: the published numbers and their provenance, the notebooks'
display helpers, the self-contained report and the paper export (names load lazily).

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
    """The :class:`Results` of an evaluation's report page.

    Parameters as :func:`compute`: ``judges``, ``rubric``, ``confidence``, ``n_resamples``,
    ``seed``, ``frame``.
    """
    from ._kinds import compute

    return compute("evaluation", data_dir, pages=["report"], **params)


def compute_methodology(data_dir: Any, **params: Any) -> Any:
    """The numbers of an evaluation's methodology page (parameters as :func:`compute_results`)."""
    from ._kinds import compute

    return compute("evaluation", data_dir, pages=["methodology"], **params)


def compute_case_study(data_dir: Any, **params: Any) -> Any:
    """The :class:`Results` of the AlpacaEval case study.

    Parameters ``confidence``, ``n_resamples``, ``seed``; tables ``leaderboard``, ``agreement``,
    ``length_bias``, ``length_slope``, ``standard_errors`` and ``findings``.
    """
    from ._kinds import compute

    return compute("alpaca_eval", data_dir, **params)
