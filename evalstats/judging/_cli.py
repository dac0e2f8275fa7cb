"""The ``evalstats judge`` subcommand (wired into ``evalstats.cli`` by ``register``)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path
from typing import Any

from evalstats._atomic import atomic_write, guard_output
from evalstats.errors import DataError, EvalstatsError, ParameterError

DESCRIPTION = """\
Send every pair of DATA_DIR (tasks.jsonl + runs.jsonl) to each judge and append one line per
finished call to the journal (DATA_DIR/judgments.jsonl unless --out). With three or more arms
(arms.toml [arms]) --pairs says which pairs of arms: all, or each against the reference.
Rerunning resumes: finished calls are skipped, failed or interrupted ones are made again.
Pairs with a run over its budget are not sent (no_answer). Keys come from ANTHROPIC_API_KEY /
OPENAI_API_KEY and base URLs from ANTHROPIC_BASE_URL / OPENAI_BASE_URL. Ctrl-C (or SIGTERM)
once stops new calls and journals the calls in flight (within --timeout); twice stops at once.

--rubric takes a built-in rubric's name, a rubric .toml file (see `evalstats rubric new`), or
the name of a rubric file already in DATA_DIR/rubrics/. A rubric file is copied into
DATA_DIR/rubrics/<name>.r<revision>.toml so the data directory keeps the exact prompt its
judgments were made with; a different file already there under that name is refused (bump
the rubric's revision when you change a word).
"""

RUBRIC_DIR = "rubrics"
# The JudgeOptions given on the command line as they are (progress is --no-progress).
_OPTIONS = ("concurrency", "max_usd", "batch", "adjudicate", "temperature", "max_tokens", "prices")
_OPTIONS += ("max_retries", "timeout", "poll_interval", "retry_failed", "allow_same_family")
_TRUE = {"action": "store_true"}
# (flag, help, argparse keywords) in --help order.
_ARGS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("--judge", "anthropic:MODEL or openai:MODEL; repeat for several judges",
     {"action": "append", "required": True, "metavar": "PROVIDER:MODEL"}),
    ("--adjudicate", "a third judge, called only where the two --judge disagree",
     {"metavar": "PROVIDER:MODEL"}),
    ("--orders", "blind-pair: one seeded A/B order per pair (default) or both orders",
     {"choices": ("random", "both"), "default": "random"}),
    ("--pairs", "three or more arms (arms.toml [arms]): judge every pair of arms, or each arm "
     "against arms.toml's reference (both orders of each pair with --orders both)",
     {"choices": ("all", "reference")}),
    ("--seed", "seed of the A/B orders (default 0)", {"type": int, "default": 0}),
    ("--concurrency", "calls in flight (default 16)", {"type": int, "default": 16}),
    ("--max-usd", "stop starting calls once the estimated spend in the journal reaches X",
     {"type": float, "metavar": "X"}),
    ("--dry-run", "count calls, tokens and USD only", _TRUE),
    ("--batch", "use the providers' batch APIs (50%% off)", _TRUE),
    ("--temperature", "sent and recorded when given; default: the provider's own",
     {"type": float}),
    ("--max-tokens", "output cap (default 1024)", {"type": int, "default": 1024}),
    ("--prices", 'price overrides: {"MODEL": {"input": USD_per_Mtok, "output": USD_per_Mtok}}',
     {"metavar": "FILE.json"}),
    ("--out", "default: DATA_DIR/judgments.jsonl", {"metavar": "JOURNAL"}),
    ("--force", "allow --out to name another data file of DATA_DIR", _TRUE),
    ("--max-retries", "SDK retries per call (default 2)", {"type": int, "default": 2}),
    ("--timeout", "seconds per attempt, connect to last byte (default 120); a server's wait hint "
     "is capped at EVALSTATS_MAX_WAIT_S (default 600 s)", {"type": float, "default": 120.0}),
    ("--poll-interval", "batch poll seconds", {"type": float, "default": 30.0}),
    ("--retry-failed", "also re-send calls that failed permanently (400/404/413/422, a cut body)",
     _TRUE),
    ("--no-progress", "no progress bar", _TRUE),
    ("--stop-when-decided", "no new call once the first pair's net win is decided (anytime-valid)",
     _TRUE),
    ("--margin", "equivalence margin of the net win for --stop-when-decided", {"type": float}),
    ("--allow-same-family", "run a judge of the agent's own model family (refused by default; "
     "recorded on every judgment and reported by the audit)", _TRUE),
)  # fmt: skip


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``judge`` to an ``argparse`` subparsers object; returns the new parser."""
    from evalstats import rubrics

    p = subparsers.add_parser(
        "judge",
        help="run LLM judges over the pairs of a data directory (resumable)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data_dir", metavar="DATA_DIR", help="directory with tasks.jsonl and runs.jsonl")
    p.add_argument(
        "--rubric",
        required=True,
        metavar="NAME|FILE.toml",
        help=f"judge prompt: {', '.join(rubrics.names())}, a rubric file, or the name of one "
        "in DATA_DIR/rubrics/",
    )
    for flag, text, kwargs in _ARGS:
        p.add_argument(flag, help=text, **kwargs)
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    """Run ``evalstats judge``: 0 when every call is finished, 1 when some are not (rerun)."""
    from evalstats.records import find_file, load_arms, load_runs, load_tasks

    from ._calls import JudgeOptions
    from .runner import run_judges

    journal = Path(args.data_dir) / "judgments.jsonl"
    out = Path(args.out) if args.out else journal
    options = {name: getattr(args, name) for name in _OPTIONS}
    if args.stop_when_decided:  # evalstats.cli gives the rule: judging sits below stats
        options["stop_when_decided"] = functools.partial(args.monitor, margin=args.margin)
    elif args.margin is not None:
        raise ParameterError("--margin is the equivalence margin of --stop-when-decided")
    try:
        if out.resolve() != journal.resolve():
            guard_output(out, Path(args.data_dir), force=args.force, append=True)
        # Not load_dir: a journal line torn by kill -9 must not stop the rerun that repairs it.
        tasks = load_tasks(find_file(args.data_dir, "tasks"))
        apath = Path(args.data_dir) / "arms.toml"
        arms = load_arms(apath) if apath.is_file() else None
        runs = load_runs(
            find_file(args.data_dir, "runs"), tasks, arms=None if arms is None else arms.ids
        )
        rubric = resolve_rubric(args.rubric, args.data_dir)
        if rubric.path is not None and not args.dry_run:
            keep_rubric_file(rubric, args.data_dir)
        result = run_judges(
            tasks,
            runs,
            rubric=rubric,
            judges=args.judge,
            out=out,
            options=JudgeOptions(**options, progress=not args.no_progress),
            arms=arms,
            **{name: getattr(args, name) for name in ("orders", "seed", "pairs", "dry_run")},
        )
    except EvalstatsError:
        raise  # evalstats.cli.main prints it: one line, exit 2
    except KeyError as exc:  # an unknown rubric (resolve_rubric) or provider
        raise ParameterError(str(exc.args[0]) if exc.args else str(exc)) from None
    except ValueError as exc:
        # Checks of providers and prices raise a plain ValueError: a bad option value.
        raise ParameterError(str(exc)) from None
    except KeyboardInterrupt:  # before or after the calls: nothing in flight to drain
        print("evalstats judge: interrupted; rerun to resume", file=sys.stderr)
        return 130
    frame = result.to_frame()
    if frame.empty:
        why = f"all {result.no_answer_pairs} pair(s) are over their budget (no_answer)"
        if not result.no_answer_pairs:
            why = "no task and replicate has runs of two arms to compare"
        raise DataError(f"nothing to judge: {why}; nothing was sent", path=args.data_dir)
    if result.dry_run:
        return 0
    print(
        frame[["judge", "role", "calls", "done_before", "sent", "ok", "failed", "usd"]].to_string(
            index=False
        )
    )
    print(f"journal: {out}; {result.no_answer_pairs} pair(s) over budget not sent (no_answer)")
    if result.failed:
        print(
            f"{result.failed} call(s) failed and are recorded with their error; rerun to "
            "retry them",
            file=sys.stderr,
        )
    decided = args.stop_when_decided and (result.stopped or "").startswith("decided")
    return 1 if (result.failed or (result.stopped and not decided) or result.not_retried) else 0


def resolve_rubric(name_or_path: str | os.PathLike[str], data_dir: str | os.PathLike[str]) -> Any:
    """The rubric ``--rubric`` names: built-in, a file, or a file in ``DATA_DIR/rubrics/``."""
    from evalstats import rubrics

    try:
        return rubrics.get(name_or_path)
    except KeyError:
        folder = Path(data_dir) / RUBRIC_DIR
        found = [rubrics.load(p) for p in sorted(folder.glob("*.toml"))] if folder.is_dir() else []
        same = [r for r in found if r.name == str(name_or_path)]
        if same:
            return max(same, key=lambda r: r.revision)
        raise KeyError(
            f"unknown rubric {str(name_or_path)!r}; known rubrics: {', '.join(rubrics.names())}"
            f"{', ' if found else ''}{', '.join(sorted({r.name for r in found}))} "
            f"(in {folder}), or a path to a rubric .toml file"
        ) from None


def keep_rubric_file(rubric: Any, data_dir: str | os.PathLike[str]) -> Path:
    """Copy a file rubric into ``DATA_DIR/rubrics/<name>.r<revision>.toml`` (atomically)."""
    from evalstats import rubrics

    source = Path(rubric.path)
    if rubric.name in rubrics.names() and rubrics.get(rubric.name).sha256 != rubric.sha256:
        raise DataError(
            f"the rubric file names itself {rubric.name!r}, a built-in rubric, with another "
            "text: judgments of it would be read with the built-in one; give it its own name",
            path=source,
            field="name",
        )
    data = source.read_bytes()
    dest = Path(data_dir) / RUBRIC_DIR / f"{rubric.name}.r{rubric.revision}.toml"
    if dest.exists():
        if dest.read_bytes() == data:
            return dest
        raise DataError(
            f"a different rubric file already holds {rubric.name!r} revision "
            f"{rubric.revision} for this data directory (from {source}): a changed rubric "
            "needs a new revision (edit 'revision = ...' in the file), or a new name",
            path=dest,
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(dest, lambda fh: fh.write(data))
    return dest
