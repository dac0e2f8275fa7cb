"""Which token count a cost ratio may use: ``billed``, else ``transcript``, never ``answer``.

The verdict frame carries the cl100k_base count (``tokens_with`` / ``tokens_without``), the
text it was counted on (``tokens_counted_from``: ``transcript`` or ``answer``) and, when the
harness reported usage, ``billed_with`` / ``billed_without`` (input, output, cache read and
write, summed over turns). A transcript counted once is not what the agent paid when its
context was re-sent on each turn, so ``billed`` comes first; an answer-only count is not a
cost at all and yields an ``unavailable`` row with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

__all__ = ["TOKEN_SOURCES", "TokenChoice", "choose_token_source"]

#: The sources a run's token count can have, in the order cost prefers them.
TOKEN_SOURCES = ("billed", "transcript", "answer")
_BILLED = ("billed_with", "billed_without")
_COUNTED = ("tokens_with", "tokens_without")


@dataclass(frozen=True)
class TokenChoice:
    """The chosen source, the frame whose ``tokens_*`` columns hold it, and the alternative.

    ``source`` is ``billed``, ``transcript``, ``as given`` (a hand-made frame without
    ``tokens_counted_from``: the caller vouches for its counts) or ``unavailable``;
    ``reason`` says why when unavailable. ``other`` is the transcript frame when billed was
    chosen and every pair also has a transcript count, so both ratios can be shown.
    """

    source: str
    frame: pd.DataFrame
    reason: str | None = None
    other: pd.DataFrame | None = None


def _with_billed(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{c: frame[b] for c, b in zip(_COUNTED, _BILLED, strict=True)})


def choose_token_source(frame: pd.DataFrame) -> TokenChoice:
    """Billed where every pair has it, else transcript where every pair has it, else none.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"tokens_with": [3, 4], "tokens_without": [5, 6],
    ...                   "tokens_counted_from": ["answer", "answer"],
    ...                   "billed_with": pd.array([2000, 9000], dtype="Int64"),
    ...                   "billed_without": pd.array([2500, 7000], dtype="Int64")})
    >>> c = choose_token_source(f)
    >>> c.source, c.frame["tokens_with"].tolist(), c.other is None
    ('billed', [2000, 9000], True)
    >>> choose_token_source(f.drop(columns=["billed_with", "billed_without"])).reason
    'only answer-only token counts: 2 of 2 pairs lack a transcript and no harness usage (billed) was imported; an answer is not what a run consumed'
    """
    counted = frame.get("tokens_counted_from")
    all_transcript = counted is not None and bool((counted == "transcript").all())
    has_billed = all(c in frame.columns for c in _BILLED)
    if has_billed and bool(frame[list(_BILLED)].notna().all(axis=None)):
        other = frame if all_transcript else None
        return TokenChoice("billed", _with_billed(frame), other=other)
    if counted is None:
        return TokenChoice("as given", frame)
    if all_transcript:
        return TokenChoice("transcript", frame)
    n_answer = int((counted != "transcript").sum())
    n_billed = int(frame[list(_BILLED)].notna().all(axis=1).sum()) if has_billed else 0
    billed_note = (
        f"harness usage (billed) covers only {n_billed} of the {len(frame)} pairs"
        if n_billed
        else "no harness usage (billed) was imported"
    )
    reason = (
        f"only answer-only token counts: {n_answer} of {len(frame)} pairs lack a transcript "
        f"and {billed_note}; an answer is not what a run consumed"
    )
    return TokenChoice("unavailable", frame, reason=reason)
