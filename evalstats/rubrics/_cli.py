"""``evalstats rubric new|show``: make a rubric file from a seed, show a rubric's identity.

:func:`register` adds the ``rubric`` subcommand to the CLI's subparsers; each action is a
plain function returning the exit code (a mistake is raised as an ``EvalstatsError``, which
``evalstats.cli.main`` prints as one line, exit 2), so the CLI and the tests call the same thing.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TextIO

from evalstats._atomic import atomic_write
from evalstats.errors import DataError, ParameterError

from ._base import names
from ._file import get, load, to_toml, with_tool_name

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``rubric new`` and ``rubric show`` to ``subparsers`` (from ``add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="evalstats")
    >>> _ = register(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["rubric", "show", "with-without"])
    >>> args.func(args)  # doctest: +ELLIPSIS
    name: with-without
    revision: 1
    sha256: ab998fa642ab...
    kind: three-way
    ...
    0
    """
    p = subparsers.add_parser("rubric", help="make or inspect a rubric (judge prompt) file")
    sub = p.add_subparsers(dest="rubric_command", required=True)

    new = sub.add_parser(
        "new",
        help="write a new rubric file from a seed rubric, naming your tool instead of gortex",
    )
    new.add_argument(
        "--from", dest="source", required=True, help=f"a rubric: {', '.join(names())} or a file"
    )
    new.add_argument("--tool-name", required=True, help='your tool, e.g. "Serena MCP"')
    new.add_argument("--name", help="the new rubric's name (default: seed name + tool slug)")
    new.add_argument(
        "--without-name", help='what the report calls the WITHOUT arm, e.g. "plain Claude Code"'
    )
    new.add_argument("-o", "--output", required=True, type=Path, help="the .toml file to write")
    new.add_argument("--force", action="store_true", help="overwrite an existing file")
    new.set_defaults(func=_new)

    show = sub.add_parser("show", help="print a rubric's name, revision and sha256")
    show.add_argument("rubric", help=f"{', '.join(names())} or a rubric .toml file")
    show.set_defaults(func=_show)
    return p


def _new(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    out_path: Path = args.output
    if out_path.exists() and not args.force:
        raise ParameterError(f"{out_path} exists (use --force to overwrite)")
    try:
        seed = get(args.source)
        rubric = with_tool_name(seed, args.tool_name, name=args.name)
    except KeyError as e:
        raise ParameterError(str(e.args[0])) from None
    except DataError:
        raise
    except ValueError as e:  # with_tool_name's checks of --tool-name / --name
        raise ParameterError(str(e)) from None
    if args.without_name:
        rubric = with_tool_name(
            type(rubric)(**{**_fields(rubric), "arms": (rubric.arms[0], args.without_name)}),
            args.tool_name,
            name=rubric.name,
        )
    data = to_toml(rubric).encode("utf-8")
    atomic_write(out_path, lambda fh: fh.write(data))
    written = load(out_path)
    print(f"wrote {out_path}", file=out)
    _print_identity(written, out)
    return 0


def _fields(rubric) -> dict:
    return {f.name: getattr(rubric, f.name) for f in dataclasses.fields(rubric)}


def _show(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        rubric = get(args.rubric)
    except KeyError as e:
        raise ParameterError(str(e.args[0])) from None
    _print_identity(rubric, out)
    return 0


def _print_identity(rubric, out: TextIO) -> None:
    print(f"name: {rubric.name}", file=out)
    print(f"revision: {rubric.revision}", file=out)
    print(f"sha256: {rubric.sha256}", file=out)
    print(f"kind: {rubric.kind}", file=out)
    print(f"arms: WITH = {rubric.arms[0]}, WITHOUT = {rubric.arms[1]}", file=out)
    print(f"placeholders: {', '.join(rubric.placeholders)}", file=out)
    print(f"source: {rubric.path or 'built-in'}", file=out)
