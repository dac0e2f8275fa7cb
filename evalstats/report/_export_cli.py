"""The ``evalstats export`` subcommand (argparse only: ``evalstats --help`` stays light)."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def _alias(item: str) -> tuple[str, str]:
    key, sep, value = item.rpartition("=")
    if not sep or not key or not value.isalpha() or not value.isascii():
        raise argparse.ArgumentTypeError(f"--alias expects NAME=Letters, got {item!r}")
    return key, value


def _cmd_export(args: argparse.Namespace) -> int:
    from ._paper import export

    if not any((args.latex, args.markdown, args.macros, args.sentences)):
        args.parser.error("nothing to write: give --latex, --markdown, --macros or --sentences")
    paths = export(
        args.results_json,
        latex=args.latex,
        markdown=args.markdown,
        macros=args.macros,
        sentences=args.sentences,
        digits=args.digits,
        percent=not args.decimals,
        aliases=dict(args.alias or []),
    )
    for p in paths:
        print(f"wrote {p}")
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``export`` subcommand to ``evalstats``'s subparsers.

    >>> parser = argparse.ArgumentParser(prog="evalstats")
    >>> _ = register(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["export", "r/results.json", "--macros", "m.tex", "--digits", "1"])
    >>> args.macros, args.digits, args.decimals
    ('m.tex', 1, False)
    """
    p = subparsers.add_parser(
        "export",
        help="export a report's results.json to LaTeX/Markdown tables, macros and sentences",
        description="Write the headline, consensus, agreement, cost and per-task tables of "
        "REPORT_DIR/results.json as booktabs LaTeX and Markdown ('est [lo, hi]' cells), one "
        "\\newcommand per headline number (\\es<Rubric><Judge><Statistic>[Lo|Hi]) and ready "
        "sentences with n, tasks, judge and interval method. Every number is the one in "
        "results.json, rounded to --digits.",
    )
    p.add_argument("results_json", metavar="RESULTS_JSON", help="REPORT_DIR/results.json")
    p.add_argument("--latex", metavar="DIR", help="write DIR/<table>.tex")
    p.add_argument("--markdown", metavar="DIR", help="write DIR/<table>.md")
    p.add_argument("--macros", metavar="FILE", help="write the \\newcommand macros to FILE")
    p.add_argument("--sentences", metavar="FILE", help="write the sentences (Markdown) to FILE")
    p.add_argument(
        "--digits",
        type=int,
        default=None,
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
    p.set_defaults(func=_cmd_export, parser=p)
    return p
