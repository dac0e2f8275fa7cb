"""The ``evalstats report`` subcommand (argparse only: ``evalstats --help`` stays light)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable
from typing import Any

__all__ = ["KIND_NAMES", "parse_params", "register"]

# The --kind choices; a test checks they are the keys of REPORT_KINDS, which this module does
# not import (building the registry is cheap, but its kinds' checks are not).
KIND_NAMES = ("evaluation", "alpaca_eval", "llmbar", "pandalm", "arena")


def parse_params(items: Iterable[str]) -> dict[str, Any]:
    """``key=value`` strings -> dict; values parsed as JSON when possible, else kept as text.

    >>> parse_params(["n_resamples=200", "rubric=with-without", "seed=null"])
    {'n_resamples': 200, 'rubric': 'with-without', 'seed': None}
    """
    from ._kinds import ReportError

    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ReportError(f"-p expects key=value, got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _cmd_report(args: argparse.Namespace) -> int:
    from .. import report

    chromium = None
    if args.pdf:
        from . import _pdf

        # Before the render: a missing browser or pypdf is said in a second, not after it.
        chromium = _pdf.find_chromium()
        _pdf.require_pypdf()
    start = time.perf_counter()
    index = report.render_report(
        args.data_dir,
        args.output,
        params=parse_params(args.param or []),
        kind=args.kind,
        figures=args.figures,  # checked by the renderer, before anything runs
    )
    print(f"wrote {index} ({time.perf_counter() - start:.1f} s)")
    if args.pdf:
        start = time.perf_counter()
        pdf = _pdf.print_pdf(args.output, chromium=chromium)
        print(f"wrote {pdf} ({time.perf_counter() - start:.1f} s)")
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``report`` subcommand to ``evalstats``'s subparsers.

    >>> parser = argparse.ArgumentParser(prog="evalstats")
    >>> _ = register(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["report", "data/sample", "-o", "out"]).output
    'out'
    >>> parser.parse_args(["report", "data/sample", "-o", "out", "--pdf"]).pdf
    True
    >>> parser.parse_args(["report", "data/sample", "-o", "out"]).figures
    'svg,pdf'
    """
    p = subparsers.add_parser(
        "report",
        help="render the self-contained HTML report of a data directory",
        description="Compute every number of DATA_DIR once, execute the report notebooks on "
        "them and write OUT/index.html (and methodology.html for an evaluation), results.json "
        "(every number + provenance), figures/, tables/ and the executed notebooks. An "
        "evaluation directory (tasks, runs, judgments) gets notebooks/report.ipynb and "
        "methodology.ipynb; a directory of AlpacaEval annotations gets "
        "notebooks/case_study_alpaca_eval.ipynb.",
    )
    p.add_argument("data_dir", metavar="DATA_DIR")
    p.add_argument(
        "--kind",
        choices=list(KIND_NAMES),
        default=None,
        help="report kind (default: recognised from DATA_DIR)",
    )
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="report directory, e.g. reports/NAME"
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="report parameter (JSON value, else text); repeatable: "
        "judges='[\"a:b\"]', rubric=with-without (evaluation only), confidence=0.9, "
        "n_resamples=2000, seed=1",
    )
    p.add_argument(
        "--figures",
        default="svg,pdf",
        metavar="FORMATS",
        help="the formats each figure is written in, in OUT/figures/, comma-separated among "
        "svg, pdf (TrueType fonts, for a paper) and png (300 dpi) (default: svg,pdf); the "
        "pages show the SVG",
    )
    p.add_argument(
        "--pdf",
        action="store_true",
        help="also print the pages (index.html, then the others) through headless Chromium "
        "into OUT/report.pdf (needs chromium, or EVALSTATS_CHROMIUM, and "
        "evalstats-withwithout[pdf])",
    )
    p.set_defaults(func=_cmd_report)
    return p
