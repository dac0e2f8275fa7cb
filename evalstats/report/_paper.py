"""Export a report's ``results.json`` to a paper: tables, macros and sentences.

* **Tables** (:func:`~evalstats.report.latex_tables`, :func:`~evalstats.report.markdown_tables`): the ``headline``,
  ``consensus``, ``agreement``, ``cost`` and ``per_task`` tables as ``est [lo, hi]`` cells
  (:func:`evalstats.stats.formatting.summarize`), booktabs LaTeX (``\\toprule`` /
  ``\\midrule`` / ``\\bottomrule``, via pandas ``Styler.to_latex(hrules=True)``, every cell
  and header LaTeX-escaped) and GitHub-flavoured Markdown.
* **Macros** (:func:`latex_macros`): one ``\\newcommand`` per headline number, named
  ``\\es<Rubric><Judge><Statistic>`` with ``Lo``/``Hi`` for the interval's bounds, e.g.
  ``\\esWithWithoutClaudeSonnetFourNetWin``, ``...NetWinLo``, ``...NetWinHi``, ``...N``
  (verdicts), ``...Tasks``; agreement ``\\es<Rubric><JudgeA>Vs<JudgeB><Statistic>``
  (``...Kappa``, ``...KappaBootLo``, ``...AcOne``, ``...ObservedAgreement``); cost
  ``\\esCost<Metric>`` (``\\esCostTokensTotalRatio``, ``...Lo``, ``...Hi``); the declared
  primary test when a plan exists (``\\esPrimaryEstimate``, ``...Lo``, ``...Hi`` -- ``--`` on
  the side a one-sided test leaves open --, ``...P``, ``...Df``, ``...Alpha``, ``...Margin``,
  ``...Decision``); and ``\\esConfidence``. How a rubric, judge or statistic becomes letters:
  :mod:`evalstats.report._export_names`. A macro holds the number only (no ``%``).
* **Sentences** (:func:`result_sentences`, :func:`headline_paragraph`): the numbers in words,
  each with n, tasks, the judge and the interval's method.

Precision is one setting for everything exported: ``digits`` decimals in the unit shown,
rates in percent unless ``percent=False`` (coefficients and ratios at ``digits + 2``
decimals, i.e. the same absolute resolution; see :mod:`evalstats.stats.formatting`).

Examples
--------
>>> from evalstats.report import compute_results, latex_macros, result_sentences
>>> res = compute_results("data/sample", n_resamples=200, seed=0)
>>> print(result_sentences(res)[0])  # doctest: +NORMALIZE_WHITESPACE
WITH won 52 % [38, 65], tied 32 % [23, 43] and lost 16 % [9, 29] of 165 judged pair-orders
(85 pairs) in 15 tasks (5 no-answer and 5 unreadable verdicts left out): a net win of 35
points [11, 55]
(Claude Sonnet 4 judge, blind-pair rubric), 95 % CI clustered by task, CR2 Wilson with
Bell-McCaffrey df.
>>> latex_macros(res).splitlines()[4]
'\\\\newcommand{\\\\esBlindPairClaudeSonnetFourWinRate}{52}'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..records import atomic_write
from ._export_tables import latex_tables, markdown_tables
from ._macros import latex_macros
from ._results_doc import _load
from ._sentences import sentences_markdown

__all__ = ["export"]


def _write(path: Path, text: str) -> Path:
    data = text.encode("utf-8")
    atomic_write(path, lambda fh: fh.write(data))
    return path


def export(
    results_json: Any,
    *,
    latex: str | os.PathLike[str] | None = None,
    markdown: str | os.PathLike[str] | None = None,
    macros: str | os.PathLike[str] | None = None,
    sentences: str | os.PathLike[str] | None = None,
    digits: int | None = None,
    percent: bool = True,
    aliases: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the paper export of ``results_json``; returns the paths written.

    Parameters
    ----------
    results_json : path, dict or Results
        A report's ``results.json`` (or its parsed content, or the Results object).
    latex, markdown : path, optional
        Directories for ``<table>.tex`` / ``<table>.md`` (headline, consensus, agreement,
        cost, per_task: those present).
    macros : path, optional
        File for the ``\\newcommand`` definitions (:func:`latex_macros`).
    sentences : path, optional
        Markdown file of :func:`headline_paragraph` and :func:`result_sentences`.
    digits, percent
        Precision, as :func:`evalstats.stats.formatting.summarize`.
    aliases : mapping, optional
        Letters to use for a rubric, judge or metric in macro names.

    Every file is written atomically.

    >>> import tempfile, pathlib
    >>> from evalstats.report import compute_results
    >>> res = compute_results("data/sample", n_resamples=200, seed=0)
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> [p.name for p in export(res, latex=out / "tex", macros=out / "m.tex")][:2]
    ['headline.tex', 'consensus.tex']
    """
    doc = _load(results_json)
    written: list[Path] = []
    if latex is not None:
        for name, text in latex_tables(doc, digits=digits, percent=percent).items():
            written.append(_write(Path(latex) / f"{name}.tex", text))
    if markdown is not None:
        for name, text in markdown_tables(doc, digits=digits, percent=percent).items():
            written.append(_write(Path(markdown) / f"{name}.md", text))
    if macros is not None:
        text = latex_macros(doc, digits=digits, percent=percent, aliases=aliases)
        written.append(_write(Path(macros), text))
    if sentences is not None:
        written.append(
            _write(Path(sentences), sentences_markdown(doc, digits=digits, percent=percent))
        )
    return written
