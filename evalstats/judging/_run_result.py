"""What a judging run reports: :class:`JudgeRunResult`, its summary and the dry run's plan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ._calls import EXPECTED_OUTPUT_TOKENS, Call, Config, RunState
from .prices import PRICES_AS_OF, price_for

__all__ = ["JudgeRunResult"]


@dataclass(frozen=True)
class JudgeRunResult:
    """What a judging run did (or, for a dry run, would do).

    Attributes
    ----------
    out : Path
        The journal.
    per_judge : pandas.DataFrame
        One row per judge: ``judge``, ``role`` ("judge" or "adjudicator"), ``calls``
        (planned), ``done_before`` (finished in the journal already), ``to_call``,
        ``input_tokens`` (counted, for ``to_call``), ``est_usd`` (expected),
        ``est_usd_max`` (every call using max_tokens), ``sent``, ``ok``, ``failed``,
        ``usd`` (recorded by this run).
    no_answer_pairs : int
        Pairs not sent because a run exceeded its budget.
    dry_run : bool
    stopped : str or None
        Why the run stopped before starting every call (``max_usd``), else None.
    not_retried : int
        Calls of this run not sent because they failed permanently before
        (``retry_failed=False``).
    """

    out: Path
    per_judge: pd.DataFrame = field(repr=False)
    no_answer_pairs: int
    dry_run: bool
    stopped: str | None
    not_retried: int = 0

    @property
    def failed(self) -> int:
        return int(self.per_judge["failed"].sum())

    @property
    def usd(self) -> float:
        return float(self.per_judge["usd"].sum())

    def to_frame(self) -> pd.DataFrame:
        return self.per_judge.copy()


def _summary(
    calls: Sequence[Call],
    adj_calls: Sequence[Call],
    finished_before: set[str],
    cfg: Config,
    state: RunState | None,
) -> pd.DataFrame:
    rows = []
    groups: dict[tuple[str, str], list[Call]] = {}
    for c in calls:
        groups.setdefault((c.judge.name, "judge"), []).append(c)
    for c in adj_calls:
        groups.setdefault((c.judge.name, "adjudicator"), []).append(c)
    for (name, role), group in groups.items():
        todo = [c for c in group if c.key not in finished_before]
        tokens = int(sum(c.unit.input_tokens for c in todo))
        price = price_for(group[0].judge.provider, group[0].judge.model, cfg.prices)
        if price is None:
            est = est_max = float("nan")
        else:
            est = price.usd(tokens, EXPECTED_OUTPUT_TOKENS * len(todo), batch=cfg.batch)
            est_max = price.usd(tokens, cfg.max_tokens * len(todo), batch=cfg.batch)
        rows.append(
            {
                "judge": name,
                "role": role,
                "calls": len(group),
                "done_before": len(group) - len(todo),
                "to_call": len(todo),
                "input_tokens": tokens,
                "est_usd": round(est, 4),
                "est_usd_max": round(est_max, 4),
                "sent": state.sent.get(name, 0) if state else 0,
                "ok": state.ok.get(name, 0) if state else 0,
                "failed": state.failed.get(name, 0) if state else 0,
                "usd": round(state.usd.get(name, 0.0), 6) if state else 0.0,
            }
        )
    # The columns even with no row: "nothing to judge" is a result, not a KeyError.
    return pd.DataFrame(rows, columns=_SUMMARY_COLUMNS)


_SUMMARY_COLUMNS = [
    "judge",
    "role",
    "calls",
    "done_before",
    "to_call",
    "input_tokens",
    "est_usd",
    "est_usd_max",
    "sent",
    "ok",
    "failed",
    "usd",
]


def _dry_run(
    path: Path,
    calls: Sequence[Call],
    adj_calls: Sequence[Call],
    finished: set[str],
    cfg: Config,
    no_answer: int,
) -> JudgeRunResult:
    frame = _summary(calls, adj_calls, finished, cfg, None)
    if len(frame):
        shown = frame[
            [
                "judge",
                "role",
                "calls",
                "done_before",
                "to_call",
                "input_tokens",
                "est_usd",
                "est_usd_max",
            ]
        ]
        print(shown.to_string(index=False))
    else:
        print("nothing to judge")
    batch_note = " with the 50 % batch discount" if cfg.batch else ""
    notes = [
        f"{no_answer} pair(s) over budget are not sent (no_answer).",
        f"input tokens counted with cl100k_base; est_usd assumes {EXPECTED_OUTPUT_TOKENS} "
        f"output tokens per call, est_usd_max assumes max_tokens={cfg.max_tokens}; prices "
        f"are estimates as of {PRICES_AS_OF}{batch_note}.",
    ]
    if adj_calls:
        notes.append("adjudicator rows are an upper bound: only disagreements are sent.")
    if len(frame) and frame["est_usd"].isna().any():
        notes.append("NaN: no price for that model; pass prices= / --prices FILE.json.")
    print("\n".join(notes))
    return JudgeRunResult(path, frame, no_answer, True, None)
