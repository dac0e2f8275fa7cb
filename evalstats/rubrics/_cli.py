"""``evalstats rubric new|show``: make a rubric file from a seed, show a rubric's identity."""

from __future__ import annotations

import argparse
from pathlib import Path

from evalstats._atomic import atomic_write
from evalstats.errors import ParameterError

from ._base import Rubric
from ._file import get, load, names, to_toml, with_tool_name


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``rubric new`` and ``rubric show`` to ``subparsers``."""
    p = subparsers.add_parser("rubric", help="make or inspect a rubric (judge prompt) file")
    sub = p.add_subparsers(dest="rubric_command", required=True)

    new = sub.add_parser(
        "new", help="write a new rubric file from a seed rubric, naming your tool instead of gortex"
    )
    new.add_argument(
        "--from", dest="source", required=True, help=f"a rubric: {', '.join(names())} or a file"
    )
    new.add_argument("--tool-name", required=True, help='your tool, e.g. "Serena MCP"')
    new.add_argument("--name", help="the new rubric's name (default: seed name + tool slug)")
    new.add_argument("-o", "--output", required=True, type=Path, help="the .toml file to write")
    new.add_argument("--force", action="store_true", help="overwrite an existing file")
    new.set_defaults(func=_new)

    show = sub.add_parser("show", help="print a rubric's name, revision and sha256")
    show.add_argument("rubric", help=f"{', '.join(names())} or a rubric .toml file")
    show.set_defaults(func=_show)
    return p


def _get(name: str) -> Rubric:
    try:
        return get(name)
    except KeyError as e:
        raise ParameterError(str(e.args[0])) from None


def _new(args: argparse.Namespace) -> int:
    if args.output.exists() and not args.force:
        raise ParameterError(f"{args.output} exists (use --force to overwrite)")
    rubric = _get(args.source)
    try:
        rubric = with_tool_name(rubric, args.tool_name, name=args.name)
    except ValueError as e:  # with_tool_name's checks of --tool-name / --name
        raise ParameterError(str(e)) from None
    data = to_toml(rubric).encode("utf-8")
    atomic_write(args.output, lambda fh: fh.write(data))
    print(f"wrote {args.output}")
    return _show(argparse.Namespace(rubric=args.output), load)


def _show(args: argparse.Namespace, read=_get) -> int:
    r = read(args.rubric)
    print(f"name: {r.name}\nrevision: {r.revision}\nsha256: {r.sha256}\nkind: {r.kind}")
    print(f"placeholders: {', '.join(r.placeholders)}\nsource: {r.path or 'built-in'}")
    return 0
