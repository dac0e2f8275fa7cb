"""The ``evalstats report`` and ``evalstats export`` subcommands (argparse only: light)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable
from typing import Any

from .._atomic import FORCE_HELP

__all__ = ["KIND_NAMES", "parse_params", "register", "register_export"]

# The --kind choices: the keys of REPORT_KINDS (a test checks), without importing it.
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
    from .._atomic import guard_output

    guard_output(args.output, args.data_dir, force=args.force)
    chromium = None
    if args.pdf:  # a missing browser or pypdf is said before the render, not after it
        from . import _pdf

        chromium = _pdf.find_chromium()
        _pdf.require_pypdf()
    start = time.perf_counter()
    index = report.render_report(
        args.data_dir,
        args.output,
        params=parse_params(args.param or []),
        kind=args.kind,
        # Checked by the renderer, before anything runs; figure PDFs only when asked for.
        figures=("svg,pdf" if args.pdf else "svg") if args.figures is None else args.figures,
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
    >>> args = parser.parse_args(["report", "data/sample", "-o", "out", "--pdf"])
    >>> args.output, args.pdf, args.figures
    ('out', True, None)
    """
    p = subparsers.add_parser(
        "report",
        help="render the self-contained HTML report of a data directory",
        description="Compute every number of DATA_DIR once, execute the report notebooks of "
        "its kind on them and write OUT/index.html and the other pages, results.json (every "
        "number + provenance), figures/, tables/ and the executed notebooks.",
    )
    p.add_argument("data_dir", metavar="DATA_DIR")
    p.add_argument(
        "--kind", choices=list(KIND_NAMES), help="report kind (default: recognised from DATA_DIR)"
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
        metavar="FORMATS",
        help="the formats each figure is written in, in OUT/figures/, comma-separated among "
        "svg, pdf (TrueType fonts, for a paper) and png (300 dpi) (default: svg, and svg,pdf "
        "with --pdf); the pages show the SVG",
    )
    p.add_argument(
        "--pdf",
        action="store_true",
        help="also print the pages (index.html, then the others) through headless Chromium "
        "into OUT/report.pdf (needs chromium, or EVALSTATS_CHROMIUM, and "
        "evalstats-withwithout[pdf])",
    )
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_report)
    return p


def _alias(item: str) -> tuple[str, str]:
    key, sep, value = item.rpartition("=")
    if not sep or not key or not value.isalpha() or not value.isascii():
        raise argparse.ArgumentTypeError(f"--alias expects NAME=Letters, got {item!r}")
    return key, value


def _cmd_export(args: argparse.Namespace) -> int:
    from .._atomic import guard_output, mark_output
    from ..errors import DataError, EvalstatsError
    from ._export import export

    outs = {k: getattr(args, k) for k in ("latex", "markdown", "macros", "sentences")}
    outs = {k: v for k, v in outs.items() if v}
    if not outs:
        args.parser.error("nothing to write: give --latex, --markdown, --macros or --sentences")
    for out in outs.values():
        guard_output(out, None, force=args.force)
    try:
        paths = export(
            args.results_json,
            **outs,
            digits=args.digits,
            percent=not args.decimals,
            aliases=dict(args.alias or []),
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        if isinstance(exc, EvalstatsError):
            raise
        # A KeyError names the missing field; anything else is a value inside the tables.
        field = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else "tables"
        raise DataError(f"malformed results ({exc})", path=args.results_json, field=field) from None
    for p in paths:
        mark_output(p)
        print(f"wrote {p}")
    return 0


def register_export(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand to ``evalstats``'s subparsers.

    >>> parser = argparse.ArgumentParser(prog="evalstats")
    >>> _ = register_export(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["export", "r/results.json", "--macros", "m.tex", "--digits", "1"])
    >>> args.macros, args.digits, args.decimals
    ('m.tex', 1, False)
    """
    p = subparsers.add_parser(
        "export",
        help="export a report's results.json to LaTeX/Markdown tables, macros and sentences",
        description="Write the tables of REPORT_DIR/results.json as booktabs LaTeX and "
        "Markdown ('est [lo, hi]' cells), one \\newcommand per headline number and ready "
        "sentences; every number is the one in results.json, rounded to --digits.",
    )
    p.add_argument("results_json", metavar="RESULTS_JSON", help="REPORT_DIR/results.json")
    p.add_argument("--latex", metavar="DIR", help="write DIR/<table>.tex")
    p.add_argument("--markdown", metavar="DIR", help="write DIR/<table>.md")
    p.add_argument("--macros", metavar="FILE", help="write the \\newcommand macros to FILE")
    p.add_argument("--sentences", metavar="FILE", help="write the sentences (Markdown) to FILE")
    p.add_argument(
        "--digits",
        type=int,
        help="decimals in the unit shown (default 0 for percent, 2 with --decimals); "
        "coefficients and ratios get two more in percent mode",
    )
    p.add_argument(
        "--decimals",
        action="store_true",
        help="show rates as decimals (0.58) instead of percent (58)",
    )
    p.add_argument(
        "--alias",
        action="append",
        type=_alias,
        metavar="NAME=Letters",
        help="letters for a judge, rubric or metric in macro names (resolves a collision); "
        "repeatable, e.g. --alias openai:gpt-5.4=GptFive",
    )
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_export, parser=p)
    return p
