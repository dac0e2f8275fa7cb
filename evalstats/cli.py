"""The ``evalstats`` console script.

Only the standard library at the top: ``--help`` loads neither pandas nor numpy, and the
subcommands whose parsers live with their own code are registered only when chosen.
"""

from __future__ import annotations

import argparse
import functools
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ._atomic import FORCE_HELP
from .errors import EvalstatsError, ParameterError

# Commands whose work is a library call on option values alone (no input files).
_OPTION_COMMANDS = frozenset({"simulate", "power"})


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ._atomic import guard_output
    from .simulation import SimulationParams, simulate

    guard_output(args.out_dir, None, force=args.force)
    params = SimulationParams(
        n_tasks=args.tasks,
        n_replicates=args.replicates,
        judges=tuple(args.judge) if args.judge else SimulationParams.judges,
        rubrics=tuple(args.rubric) if args.rubric else SimulationParams.rubrics,
        orders=args.orders,
        seed=args.seed,
        **{name: getattr(args, name) for name in _SIM_FLOATS},
    )
    k_arm = {}
    if args.arms:
        k_arm = {"arms": tuple(a.strip() for a in args.arms.split(",")), "pairs": args.pairs}
        if args.reference:
            k_arm["reference"] = args.reference
        if args.strengths:
            k_arm["strengths"] = [float(x) for x in args.strengths.split(",")]
    elif args.reference or args.strengths:
        raise ParameterError("--reference and --strengths need --arms")
    sim = simulate(args.out_dir, params, **k_arm)
    print(f"wrote {sim.tasks}, {sim.runs}, {sim.judgments}, {sim.truth}")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    """frame, summary, monitor and replicates: a table of a data directory, shown or written."""
    from ._atomic import guard_output, mark_output
    from .records import check_output_path

    if args.output:  # before the (long) work, not after it
        check_output_path(args.output)
        guard_output(args.output, args.data_dir, force=args.force)
    from .frames import load_frame
    from .records import write_frame_atomic

    statistic = args.command in ("monitor", "replicates")
    table = _statistic(args) if statistic else load_frame(args.data_dir)
    if args.command == "summary":
        from .summary import status_table

        table = status_table(table)
        print(table.to_string(index=False))
    if args.output:
        write_frame_atomic(table, args.output)
        mark_output(args.output)
    if args.command == "frame":
        print(f"wrote {len(table)} verdicts to {args.output}")
    return 0


def _statistic(args: argparse.Namespace):
    """``monitor`` (every look; the last one printed) or ``replicates`` of a data directory."""
    import pandas as pd

    from .errors import DataError
    from .frames import verdict_frame
    from .records import load_dir
    from .stats import monitor, replicates

    ds = load_dir(args.data_dir)
    runs = ds.runs
    if args.command == "replicates":
        if runs["passed"].isna().all():
            why = "no run has a passed (true/false) outcome to measure replicates by"
            raise DataError(why, path=runs.attrs.get("source"), field="passed")
        table = replicates(runs, reference=ds.arms.reference)
        print(table.summary().to_string())
        return table
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=args.data_dir)
    frame = verdict_frame(ds.judgments, runs, ds.tasks)
    if args.judge is not None:
        if args.judge not in set(frame["judge"]):
            known = ", ".join(sorted(set(frame["judge"])))
            raise ParameterError(f"--judge {args.judge!r} judged nothing here; judges: {known}")
        frame = frame[frame["judge"] == args.judge]
    # A task completes when its last run ends.
    ends = runs["started_at"] + pd.to_timedelta(runs["wall_s"], unit="s")
    frame = frame.assign(done_at=frame["task_id"].map(ends.groupby(runs["task_id"]).max()))
    table = monitor(frame, statistic=args.statistic, order="done_at", margin=args.margin,
                    confidence=args.confidence)  # fmt: skip
    by = [c for c in ("arm_a", "arm_b", "judge", "rubric") if c in table.columns]
    cols = [*by, "n_tasks", "estimate", "ci_low", "ci_high", "decision", "more_tasks"]
    print(table.groupby(by, observed=True).tail(1)[cols].round(3).to_string(index=False))
    return table


def _cmd_label(args: argparse.Namespace) -> int:
    from ._atomic import guard_output, mark_output
    from .labelsheet import draw_sheet, key_path, merge_labels, read_sheet

    try:
        if args.read:
            labels = read_sheet(args.read, args.data_dir, labeler=args.labeler, key=args.key)
            target = merge_labels(args.data_dir, labels)
            print(
                f"{len(labels)} label(s) added to {target}; "
                f"{labels.attrs.get('unlabelled', 0)} row(s) of the sheet left empty"
            )
            return 0
        missing = [
            flag
            for flag, value in (("-n", args.n), ("--seed", args.seed), ("-o", args.output))
            if value is None
        ]
        if missing:
            raise ParameterError(
                f"drawing a sheet needs {', '.join(missing)} (or --read SHEET.csv to read one)"
            )
        guard_output(args.output, args.data_dir, force=args.force)
        sheet = draw_sheet(args.data_dir, args.n, seed=args.seed, path=args.output)
        mark_output(args.output)
        print(
            f"{len(sheet)} pair(s) from {sheet['task_id'].nunique()} task(s) written to "
            f"{args.output}; blinding key {key_path(args.output)}"
        )
        return 0
    except EvalstatsError:
        raise  # evalstats.cli.main prints it: one line, exit 2
    except ValueError as exc:
        # labelsheet's argument checks (a bad -n) still raise a plain ValueError.
        raise ParameterError(str(exc)) from None


def _cmd_power(args: argparse.Namespace) -> int:
    import pandas as pd

    from .stats.power import Design, min_detectable_net_win, tasks_needed

    design = Design(args.replicates, args.icc, args.p_tie, args.alpha, icc_scale=args.icc_scale)
    rows = [min_detectable_net_win(args.tasks, design, power=args.power).to_frame()]
    for target in args.net_win or []:
        rows.append(tasks_needed(target, design, power=args.power).to_frame())
    table = pd.concat(rows, ignore_index=True)
    cols = "solved_for net_win n_tasks n_replicates power alpha icc icc_outcome design_effect se"
    print(table[[c for c in cols.split() if c in table.columns]].to_string(index=False))
    return 0


def _register(name: str, subparsers: Any) -> argparse.ArgumentParser:
    """Add the real parser of a hooked subcommand, importing its code only now."""
    if name == "judge":
        from .judging._cli import register
    elif name == "export":
        from .report._cli import register_export as register
    elif name == "import":
        from .importers._cli import register
    elif name == "rubric":
        from .rubrics._cli import register
    else:
        from .report import register
    parser = register(subparsers)
    if name == "judge":  # --stop-when-decided's rule: the judge runner sits below stats
        parser.set_defaults(monitor=_monitor)
    return parser


def _monitor(*args: Any, **kwargs: Any) -> Any:
    from .stats.sequential import monitor

    return monitor(*args, **kwargs)


# name -> the help line ``evalstats --help`` shows before the real parser is registered
# (tests/test_cli.py checks each against the one its hook registers).
_HOOKED: dict[str, str] = {
    "judge": "run LLM judges over the pairs of a data directory (resumable)",
    "export": "export a report's results.json to LaTeX/Markdown tables, macros and sentences",
    "import": "import inspect_ai logs, Claude Code outputs or any table as tasks/runs",
    "report": "render the self-contained HTML report of a data directory",
    "rubric": "make or inspect a rubric (judge prompt) file",
}
_LABEL_DESCRIPTION = """\
Draw N pairs of DATA_DIR uniformly at random, stratified by task, into a sheet for people to
label: with K arms a pair is two runs of any two arms of one task and replicate. The two answers
show as A and B in a random recorded order, no arm names; the blinding key (with the arms of
each pair) is written next to it as SHEET.key.json. With --read, turn a filled sheet back into labels
(de-blinded, with the sample's seed and the pairs' sha256) and add them to DATA_DIR/labels.jsonl.
"""

# simulate's float options: (SimulationParams field, default, help).
_SIM_FLOATS = {
    "p_win": (0.45, None),
    "p_tie": (0.35, None),
    "p_loss": (0.20, None),
    "icc": (0.3, "between-task correlation (latent)"),
    "judge_noise": (0.6, None),
    "over_budget_rate": (0.03, None),
    "malformed_rate": (0.03, None),
    "error_rate": (0.01, None),
    "position_bias": (0.0, None),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command``, only that subcommand's parser is built in full.

    >>> parser = build_parser("power")
    >>> parser.parse_args(["power", "--tasks", "20"]).tasks
    20
    """
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="evalstats",
        description="Statistically honest reports from LLM-judge verdicts on runs of K >= 2 "
        "arms (WITH / WITHOUT, or the arms arms.toml lists).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "simulate",
        help="write a simulated evaluation with known truth",
        description="Write tasks.jsonl, runs.jsonl, judgments.jsonl and "
        "truth.json for a synthetic evaluation.",
    )
    p.add_argument("out_dir", metavar="OUT_DIR")
    p.add_argument("--tasks", type=int, default=15, help="number of tasks (default 15)")
    p.add_argument("--replicates", type=int, default=6, help="pairs per task (default 6)")
    p.add_argument(
        "--judge",
        action="append",
        metavar="PROVIDER:MODEL",
        help="judge name; repeat for several (default: a Claude and a GPT judge)",
    )
    p.add_argument(
        "--rubric",
        action="append",
        choices=["with-without", "blind-pair"],
        help="rubric; repeat for both (default both)",
    )
    for name, (default, help_text) in _SIM_FLOATS.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=float, default=default, help=help_text)
    p.add_argument(
        "--orders",
        choices=["random", "both"],
        default="random",
        help="blind rubric: one seeded order per pair, or both orders",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--arms",
        metavar="A,B,C",
        help="K arms (e.g. none,v1,v2): arms.toml, runs of every arm and three-way judgments "
        "of every pair of arms (Bradley-Terry-Davidson; --p-* and --icc are not used)",
    )
    p.add_argument("--reference", metavar="ARM", help="with --arms: the reference arm")
    strengths = "with --arms: each arm's strength on the logit scale (default 0, 0.5, 1, ...)"
    p.add_argument("--strengths", metavar="X,Y,Z", help=strengths)
    pairs_help = "with --arms: the pairs judged (default all)"
    p.add_argument("--pairs", choices=("all", "reference"), default="all", help=pairs_help)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_simulate)

    p = sub.add_parser(
        "frame",
        help="write the verdict frame of a data directory",
        description="Load DATA_DIR (tasks, runs, judgments), validate, count tokens, parse "
        "verdicts and write the long verdict frame: one row per judgment of a pair of arms "
        "(arm_a, arm_b), the outcome from arm_a's view.",
    )
    p.add_argument("data_dir", metavar="DATA_DIR")
    out_help = "output file: .parquet, .csv or .jsonl"
    p.add_argument("-o", "--output", required=True, metavar="FILE", help=out_help)
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser(
        "summary",
        help="print verdict counts per judge, rubric and pair of arms",
        description="Counts of ok/no_answer/invalid/error/conflict and win/tie/loss per "
        "rubric, judge and pair of arms (arm_a, arm_b).",
    )
    p.add_argument("data_dir", metavar="DATA_DIR")
    p.add_argument("-o", "--output", metavar="FILE", help="also write the table (.csv/.parquet)")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_table)

    p = sub.add_parser(
        "monitor",
        help="anytime-valid confidence sequence and stop rule over tasks as they completed",
        description="Order DATA_DIR's tasks by completion (their last run's start + wall_s) "
        "and print, per pair of arms, judge and rubric, the last look of evalstats.monitor: "
        "tasks seen, estimate, the sequence's interval, the decision and the tasks likely "
        "still needed. -o writes every look (CSV).",
    )
    p.add_argument("--margin", type=float, help="equivalence margin for the net win")
    p.add_argument("--confidence", type=float, default=0.95, help="over the whole sequence")
    p.add_argument("--judge", metavar="PROVIDER:MODEL", help="only this judge's verdicts")
    p.add_argument("--statistic", choices=("net_win", "win_rate", "loss_rate"), default="net_win")
    p2 = sub.add_parser(
        "replicates",
        help="pass@k, pass^k, flip rate, agreement and ICC of the runs' passed, per arm",
        description="evalstats.replicates on DATA_DIR's runs (their passed field): each arm's "
        "reliability across replicates and its difference from the reference arm (arms.toml).",
    )
    for q in (p, p2):
        q.add_argument("data_dir", metavar="DATA_DIR")
        q.add_argument("-o", "--output", metavar="FILE", help="also write it (.csv/.parquet)")
        q.add_argument("--force", action="store_true", help=FORCE_HELP)
        q.set_defaults(func=_cmd_table)

    p = sub.add_parser(
        "power",
        help="minimum detectable net win and tasks needed for a design",
        description="Power of the cluster t-test on net win for tasks x replicates with a "
        "between-task ICC: the minimum detectable net win for --tasks, and the tasks needed "
        "for each --net-win.",
    )
    p.add_argument("--tasks", type=int, default=15, help="number of tasks (default 15)")
    p.add_argument("--replicates", type=int, default=6, help="pairs per task (default 6)")
    p.add_argument("--icc", type=float, default=0.3, help="between-task ICC (default 0.3)")
    p.add_argument(
        "--icc-scale",
        choices=["latent", "outcome"],
        default="latent",
        help="ICC on the latent probit scale (as the simulator) or of the outcome itself",
    )
    p.add_argument("--p-tie", type=float, default=0.35, help="expected tie rate")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--power", type=float, default=0.8)
    p.add_argument("--net-win", type=float, action="append", help="target net win; repeatable")
    p.set_defaults(func=_cmd_power)

    p = sub.add_parser(
        "label",
        help="draw a labelling sheet of random pairs, or read a filled one into labels",
        description=_LABEL_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data_dir", metavar="DATA_DIR", help="directory with tasks and runs")
    p.add_argument("-n", type=int, help="pairs to draw")
    p.add_argument("--seed", type=int, help="seed of the draw (recorded in every label)")
    p.add_argument("-o", "--output", metavar="SHEET.csv", help="sheet to write")
    p.add_argument("--read", metavar="SHEET.csv", help="read this filled sheet into labels")
    p.add_argument(
        "--key",
        metavar="KEY.json",
        help="the sheet's blinding key, when the sheet was renamed (default: SHEET.csv.key.json)",
    )
    p.add_argument("--labeler", help="labeler name for rows whose labeler cell is empty")
    p.add_argument("--force", action="store_true", help=FORCE_HELP)
    p.set_defaults(func=_cmd_label)

    for name, help_text in _HOOKED.items():
        if command is None or command == name:
            _register(name, sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _show_warning(
    command: str, seen: set[str], message: Any, category: type, *_: Any, **__: Any
) -> None:
    # The sentence, not the library line that raised it, and each sentence once.
    text = _one_line(str(message))
    if text not in seen:
        seen.add(text)
        print(f"evalstats {command}: warning: {text}", file=sys.stderr)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalstats`` console script: an ``EvalstatsError`` becomes one line
    on stderr and exit status 2.

    >>> main(["power", "--tasks", "0"])
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    parser = build_parser(command)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():  # restores showwarning for in-process callers
            warnings.showwarning = functools.partial(_show_warning, args.command, set())
            return int(args.func(args) or 0)
    except (EvalstatsError, ValueError) as exc:
        # simulate and power hand their options straight to library calls: a refused
        # argument (ParameterError or a plain ValueError) is a refused option.
        option = args.command in _OPTION_COMMANDS and (
            isinstance(exc, ParameterError) or not isinstance(exc, EvalstatsError)
        )
        if not (option or isinstance(exc, EvalstatsError)):
            raise
        text = f"bad option value: {exc}" if option else str(exc)
        print(f"evalstats {args.command}: error: {_one_line(text)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:  # what was written stays whole (atomic writes, staged renders)
        print(f"evalstats {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the machine, not the input: one line, exit 1
        where = f": {exc.filename}" if exc.filename else ""
        print(
            f"evalstats {args.command}: error: {_one_line(str(exc.strerror or exc))}{where}",
            file=sys.stderr,
        )
        return 1


def run() -> None:
    """The ``evalstats`` console script: :func:`main`, then a normal exit with its code."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()


__all__ = ["build_parser", "main", "run"]
