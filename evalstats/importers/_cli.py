"""The ``evalstats import`` subcommand (wired into ``evalstats.cli`` by ``register``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evalstats._atomic import FORCE_HELP, guard_output
from evalstats.errors import ParameterError

DESCRIPTION = """\
Turn another harness's run logs into DATA_DIR/tasks.jsonl and DATA_DIR/runs.jsonl, validated
with the usual loaders. What could not be mapped is printed, one line per problem, naming the
source file and record; a source that cannot be read at all is an error naming file and line.

  evalstats import inspect logs/ --arm-from task_arg:tools --arm-values with=true,without=false -o data/mine
  evalstats import claude-code outputs/ --pattern '{task_id}__{arm}__{replicate}.jsonl' --tasks tasks.jsonl -o data/mine
  evalstats import table results.csv --map task_id=qid --map arm=condition --arm-values with=tool,without=baseline -o data/mine
  evalstats import table runs.csv --arm-values none=base,v1=tool-1,v2=tool-2 --reference none -o data/three

Any arm names: DATA_DIR/arms.toml, when present, lists the arms --arm-values may name; with arms
other than with/without and no arms.toml, one is written (names = ids, --reference if given).
"""

ARM_FROM_HELP = (
    "where the arm is: task_arg:NAME (a task argument), metadata:KEY (sample metadata, else "
    "the eval's), model_role:ROLE (the model bound to ROLE) or model (the eval's model)"
)


def _common(p: argparse.ArgumentParser, file_tools: str | None) -> None:
    if file_tools is not None:
        p.add_argument(
            "--file-tool",
            action="append",
            metavar="NAME[:KEY,...]",
            help=f"a tool whose calls read files, and its path arguments; repeatable ({file_tools})",
        )
    p.add_argument("-o", "--out", required=True, metavar="DATA_DIR", help="directory to write")
    p.add_argument(
        "--tasks", metavar="FILE", help="tasks file to use (and copy) instead of building tasks"
    )
    p.add_argument(
        "--arm-values",
        metavar="ARM=V[|V],...",
        help="source values meaning each arm, any arm names (with=tool,without=base or "
        "none=none,v1=v1,v2=v2); default: with/without, true/false and arms.toml's ids",
    )
    p.add_argument(
        "--reference",
        metavar="ARM",
        help="the arm the others are compared with, for the arms.toml written with K arms",
    )
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="keep a task/replicate that only one arm ran (default: an error)",
    )
    p.set_defaults(func=main)


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``import`` to an ``argparse`` subparsers object; returns the new parser."""
    p = subparsers.add_parser(
        "import",
        help="import inspect_ai logs, Claude Code outputs or any table as tasks/runs",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="source_kind", required=True, metavar="SOURCE")

    q = kinds.add_parser("inspect", help="inspect_ai .eval/.json logs (needs evalstats[inspect])")
    q.add_argument("sources", nargs="+", metavar="SRC", help="log files or directories")
    q.add_argument("--arm-from", required=True, metavar="SPEC", help=ARM_FROM_HELP)
    q.add_argument("--budget-tokens", type=int, help="task budget when the logs set no token_limit")
    q.add_argument(
        "--budget-wall-s", type=float, help="task budget when the logs set no time_limit"
    )
    q.add_argument(
        "--canonical-written-at",
        metavar="ISO-8601",
        help="when the canonical answers were written (needed for tasks.jsonl: never guessed)",
    )
    _common(q, "built in: read_file, view_file, text_editor view")

    q = kinds.add_parser("claude-code", help="claude -p outputs (json or stream-json), one per run")
    q.add_argument("sources", nargs="*", metavar="SRC", help="output files or folders")
    q.add_argument(
        "--pattern",
        default="{task_id}__{arm}__{replicate}.json*",
        help="file-name pattern with {task_id}, {arm} and optionally {replicate} "
        "(default %(default)s)",
    )
    q.add_argument(
        "--manifest",
        metavar="CSV",
        help="CSV with file,task_id,arm[,replicate,agent_model,started_at] instead of a pattern",
    )
    q.add_argument("--agent-model", help="model name for outputs that name none")
    _common(
        q, "built in: Read, Grep, Glob, NotebookRead; e.g. mcp__serena__read_file:relative_path"
    )

    q = kinds.add_parser("table", help="any JSONL/CSV/Parquet table through a column mapping")
    q.add_argument("sources", nargs="+", metavar="SRC", help=".jsonl, .csv or .parquet files")
    q.add_argument(
        "--map",
        action="append",
        metavar="FIELD=COLUMN",
        help="read a contract field from a column, e.g. task_id=qid; repeatable",
    )
    q.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="a constant for a field no column holds, e.g. agent_model=gpt-4o; repeatable",
    )
    _common(q, None)
    return p


def _run(args: argparse.Namespace):
    from evalstats.records import load_arms

    from . import from_claude_code, from_inspect, from_table
    from ._table import parse_assignments

    toml = Path(args.out) / "arms.toml"
    listed = load_arms(toml) if toml.is_file() else None
    if listed is not None and args.reference not in (None, listed.reference):
        raise ParameterError(f"--reference {args.reference} differs from {toml}'s reference")
    shared = {
        "arm_values": args.arm_values,
        "tasks_file": args.tasks,
        "allow_incomplete": args.allow_incomplete,
        "arms": None if listed is None else listed.ids,
    }
    if args.source_kind == "inspect":
        return from_inspect(
            args.sources,
            arm_from=args.arm_from,
            file_tools=args.file_tool,
            budget_tokens=args.budget_tokens,
            budget_wall_s=args.budget_wall_s,
            canonical_written_at=args.canonical_written_at,
            **shared,
        )
    if args.source_kind == "claude-code":
        if not args.sources and args.manifest is None:
            raise ParameterError("give output files/folders or --manifest")
        return from_claude_code(
            args.sources,
            pattern=args.pattern,
            manifest=args.manifest,
            file_tools=args.file_tool,
            agent_model=args.agent_model,
            **shared,
        )
    return from_table(
        args.sources,
        mapping=parse_assignments(args.map, "--map"),
        defaults=parse_assignments(args.set, "--set"),
        **shared,
    )


def main(args: argparse.Namespace) -> int:
    """Run ``evalstats import``; problems go to stderr, one line each."""
    from evalstats.errors import DataError, EvalstatsError
    from evalstats.records import load_dir

    from . import format_problems, write_data_dir

    out = Path(args.out)
    # A data directory (or one holding only the user's arms.toml) is imported into.
    if not (out.is_dir() and any(p.stem in ("tasks", "runs", "arms") for p in out.iterdir())):
        guard_output(out, None, force=args.force)
    try:
        imported = _run(args)
    except ValueError as exc:
        if isinstance(exc, EvalstatsError):
            raise
        # Bad option values (a malformed --map, an unknown --arm-from kind) are usage errors.
        raise ParameterError(str(exc)) from None
    for line in format_problems(imported.problems):
        print(f"evalstats import: {line}", file=sys.stderr)
    if imported.tasks is None:
        # Exit 0 means a directory judge and report accept; runs without tasks are not one.
        raise DataError("nothing written: judge and report need tasks (see above)", path=args.out)
    written = write_data_dir(imported, args.out, reference=args.reference)
    load_dir(args.out)  # what judge and report read first; a DataError here names the file
    runs = imported.runs
    pairs = runs.groupby(["task_id", "replicate"], observed=True).ngroups
    n_tasks = runs["task_id"].nunique()
    arms = sorted(set(runs["arm"].astype(str)))
    shown = "" if set(arms) <= {"with", "without"} else f" of the arms {', '.join(arms)}"
    files = ", ".join(str(p) for p in written)
    print(f"imported {len(runs)} runs ({pairs} pairs over {n_tasks} tasks){shown}; wrote {files}")
    return 0
