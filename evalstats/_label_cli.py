"""The ``evalstats label`` subcommand (wired into ``evalstats.cli`` by ``register``).

``evalstats label DATA_DIR -n N --seed S -o sheet.csv`` draws a labelling sheet;
``evalstats label --read sheet.csv [--key KEY.json] DATA_DIR`` adds its verdicts to
``DATA_DIR/labels.jsonl`` (``--key`` finds the blinding key of a renamed sheet).
"""

from __future__ import annotations

import argparse
from typing import Any

from .errors import EvalstatsError, ParameterError

DESCRIPTION = """\
Draw N pairs of DATA_DIR uniformly at random, stratified by task, into a sheet for people to
label: with K arms a pair is two runs of any two arms of one task and replicate. The two answers
show as A and B in a random recorded order, no arm names; the blinding key (with the arms of
each pair) is written next to it as SHEET.key.json. With --read, turn a filled sheet back into labels
(de-blinded, with the sample's seed and the pairs' sha256) and add them to DATA_DIR/labels.jsonl.
"""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``label`` to an ``argparse`` subparsers object; returns the new parser."""
    p = subparsers.add_parser(
        "label",
        help="draw a labelling sheet of random pairs, or read a filled one into labels",
        description=DESCRIPTION,
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
    p.set_defaults(func=main)
    return p


def main(args: argparse.Namespace) -> int:
    """Run ``evalstats label``; 0 on success; a usage or data error is raised as an
    :class:`~evalstats.errors.EvalstatsError` (``evalstats.cli.main`` prints it, exit 2)."""
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
        sheet = draw_sheet(args.data_dir, args.n, seed=args.seed, path=args.output)
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
