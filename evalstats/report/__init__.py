"""Everything after the statistics: the published numbers, their provenance, the notebooks'
display helpers, and rendering them into a self-contained report.

Layout (small private modules behind this public surface):

* ``_kinds``      the report kinds (:data:`REPORT_KINDS`) and :func:`compute`, the one
                  load -> sections -> provenance scaffold every kind shares;
* ``_evaluation`` the sections of an evaluation (``report.ipynb``, ``methodology.ipynb``),
                  by topic in ``_eval_report``, ``_eval_primary``, ``_eval_methodology``;
* ``_case_study`` the sections of the AlpacaEval case study, its findings included;
* ``_results``    :class:`Results` and ``results.json`` (:func:`merge_results`,
                  :func:`dump_json`, :func:`to_jsonable`);
* ``_provenance`` input digests, versions and settings (:func:`provenance`);
* ``_display``    what the notebooks call to display a section (``show_*``; the plan's
                  headline card and tests in ``_display_plan``);
* ``_paper``      :func:`export`: the paper's files from ``results.json`` (tables in
                  ``_export_tables``, LaTeX macros in ``_macros``, sentences in ``_sentences``);
* ``_render``     :func:`render_report`: check, compute, execute the notebooks (nbclient,
                  one kernel), convert, in that order;
* ``_figures``    the figure files' formats (``--figures``) and writing them;
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

from typing import Any

from .._surface import lazy_surface
from ._cli import parse_params as parse_params
from ._cli import register as register

# submodule -> the public names it defines (the README's API table lists each one).
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
            "show_provenance",
            "show_table",
            "show_unavailable",
            "table_html",
            "table_view",
        ],
        "._display_plan": ["show_headline_card", "show_tests"],
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
        "._provenance": ["input_digests", "provenance", "run_provenance"],
        "._render": ["notebook_path", "render_report"],
        "._results_doc": ["method_words"],
        "._results": ["FORMAT", "Results", "dump_json", "merge_results", "to_jsonable"],
        "._export_tables": ["formatted_tables", "latex_tables", "markdown_tables"],
        "._macros": ["latex_macros"],
        "._paper": ["export"],
        "._sentences": [
            "headline_paragraph",
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
