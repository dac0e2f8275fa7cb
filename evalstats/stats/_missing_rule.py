"""The missing-answer rules themselves, apart from the bounds (see :mod:`.missing`).

Kept free of :mod:`evalstats.stats.winrates` so that ``win_rates(..., no_answer_as=...)``
can apply a rule without an import cycle (:func:`~evalstats.stats.missing.missing_bounds`
calls ``win_rates``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalstats._schema import ORDERS, OUTCOME_DTYPE, STATUS_DTYPE
from evalstats._validate import check_columns
from evalstats.errors import DataError

__all__ = ["INVALID_RULES", "NO_ANSWER_RULES", "apply_missing_rule", "category_codes"]

NO_ANSWER_RULES = ("exclude", "arm_aware", "loss", "win", "tie")
INVALID_RULES = ("exclude", "loss", "win", "tie")
_ARM_AWARE = {"with": "loss", "without": "win", "both": "tie"}
_PAIR_CALL = ["task_id", "replicate", "judge", "rubric"]
_OK, _NO_ANSWER, _INVALID = (
    STATUS_DTYPE.categories.get_loc(s) for s in ("ok", "no_answer", "invalid")
)
_OUTCOME_CODE = {o: OUTCOME_DTYPE.categories.get_loc(o) for o in ("loss", "tie", "win")}


def _check_rule(value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def category_codes(s: pd.Series, dtype: pd.CategoricalDtype) -> np.ndarray:
    """Writable codes of ``s`` in ``dtype`` (-1: missing, or a value outside it), by one
    hash pass over the column and a lookup of its few distinct values."""
    if isinstance(s.dtype, pd.CategoricalDtype) and s.dtype == dtype:
        return np.array(s.cat.codes.to_numpy(), dtype=np.int8)
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    known = pd.Index(list(dtype.categories)).get_indexer(pd.Index(uniques).astype(object))
    lookup = np.append(known, -1).astype(np.int8)  # code -1 (NA) reads the appended -1
    return lookup[codes]


def _both_orders(frame: pd.DataFrame, na_rows: np.ndarray) -> pd.DataFrame:
    """Give an unshown no_answer pair one row per order where its judge showed both.

    A judged blind-rubric pair shown in both orders has two rows; the single order-less
    row added for an over-budget pair would otherwise weigh half as much as a judged pair.
    A (judge, rubric) counts as "both orders" when at least half of its judged pairs have
    two distinct orders.
    """
    if not {"order", *_PAIR_CALL} <= set(frame.columns):
        return frame
    order = frame["order"]
    lone = na_rows & order.isna().to_numpy()
    if not lone.any():
        return frame
    shown = frame.loc[~na_rows & order.notna().to_numpy(), [*_PAIR_CALL, "order"]]
    key = [frame[c].astype(str) for c in ("judge", "rubric")]
    if shown.empty:
        return frame
    per_pair = (
        shown.assign(judge=shown["judge"].astype(str), rubric=shown["rubric"].astype(str))
        .groupby(_PAIR_CALL, observed=True)["order"]
        .nunique()
    )
    share = (per_pair >= 2).groupby(level=["judge", "rubric"]).mean()
    both = set(share.index[share.to_numpy() >= 0.5])
    if not both:
        return frame
    combo = pd.Series(list(zip(key[0], key[1], strict=True)), index=frame.index)
    grow = lone & combo.isin(both).to_numpy()
    if not grow.any():
        return frame
    extra = frame.loc[grow]
    first = extra.assign(order=ORDERS[0])
    second = extra.assign(order=ORDERS[1])
    kept = frame.loc[~grow]
    out = pd.concat([kept, first, second], ignore_index=False)
    out["order"] = out["order"].astype(frame["order"].dtype)
    return out.sort_index(kind="stable").reset_index(drop=True)


def apply_missing_rule(
    frame: pd.DataFrame,
    *,
    no_answer_as: str = "exclude",
    invalid_as: str = "exclude",
) -> pd.DataFrame:
    """A copy of a verdict frame whose ``no_answer`` / ``invalid`` rows follow a rule.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status`` and ``outcome``; ``over_budget_arm`` too for
        ``no_answer_as="arm_aware"``.
    no_answer_as : {"exclude", "arm_aware", "loss", "win", "tie"}, default "exclude"
        ``"exclude"`` leaves ``no_answer`` rows as they are (not counted by
        :func:`~evalstats.stats.win_rates`). ``"arm_aware"``: a loss for WITH where only
        WITH went over budget, a win where only WITHOUT did, a tie where both did.
        ``"loss"`` / ``"win"`` / ``"tie"``: every over-budget pair counts as that.
    invalid_as : {"exclude", "loss", "win", "tie"}, default "exclude"
        The same for unreadable judge output (``invalid`` rows). Never a loss unless asked.

    Returns
    -------
    DataFrame
        The frame with the rewritten rows set to ``status="ok"`` and the rule's
        ``outcome``, and a column ``imputed_from`` (the original status of a rewritten
        row, NA otherwise), so that nothing is lost and the rewritten rows can be counted.
        An order-less ``no_answer`` row of a judge and rubric that showed most pairs in
        both orders (the blind rubric) becomes one row per order, so that a missing pair
        weighs as much as a judged one; those rows carry an order the judge never showed,
        so compute order effects (``position_bias``) on the original frame.

    Raises
    ------
    DataError
        ``arm_aware`` on a frame with ``no_answer`` rows and without ``over_budget_arm``,
        or with a ``no_answer`` row whose ``over_budget_arm`` is missing (rebuild it with
        :func:`evalstats.verdict_frame`). A frame with no ``no_answer`` row needs no
        ``over_budget_arm``: the rule has nothing to place and gives what ``"exclude"``
        gives.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.missing import apply_missing_rule
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "b", "c", "d"],
    ...     "status": ["ok", "no_answer", "no_answer", "invalid"],
    ...     "over_budget_arm": [None, "with", "without", None],
    ...     "outcome": ["win", None, None, None],
    ... })
    >>> out = apply_missing_rule(frame, no_answer_as="arm_aware")
    >>> out[["task_id", "status", "outcome", "imputed_from"]]
      task_id   status outcome imputed_from
    0       a       ok     win          NaN
    1       b       ok    loss    no_answer
    2       c       ok     win    no_answer
    3       d  invalid     NaN          NaN
    """
    _check_rule(no_answer_as, NO_ANSWER_RULES, "no_answer_as")
    _check_rule(invalid_as, INVALID_RULES, "invalid_as")
    check_columns(frame, ["status", "outcome"])
    # Categorical codes throughout: a million-row frame's strings are read once, not
    # boxed into Python objects per rule (missing_bounds applies four).
    status = category_codes(frame["status"], STATUS_DTYPE)
    na_rows = status == _NO_ANSWER
    if no_answer_as == "arm_aware" and na_rows.any():
        if "over_budget_arm" not in frame.columns:
            raise DataError(
                "no_answer_as='arm_aware' needs the over_budget_arm column: rebuild the "
                "frame with evalstats.verdict_frame",
                field="over_budget_arm",
            )
        arm = frame["over_budget_arm"]
        lacking = na_rows & arm.isna().to_numpy()
        if lacking.any():
            raise DataError(
                "no_answer row without over_budget_arm: cannot tell which arm went over",
                line=int(np.flatnonzero(lacking)[0]),
                field="over_budget_arm",
            )
        bad = na_rows & ~arm.isin(list(_ARM_AWARE)).to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"unknown over_budget_arm {arm.iloc[pos]!r}; expected one of {list(_ARM_AWARE)}",
                line=pos,
                field="over_budget_arm",
            )
    # Only whole columns are replaced below, so a shallow copy leaves the caller's intact.
    out = frame.copy(deep=False)
    if no_answer_as != "exclude" and na_rows.any():
        grown = _both_orders(out, na_rows)
        if grown is not out:
            out = grown
            status = category_codes(out["status"], STATUS_DTYPE)
            na_rows = status == _NO_ANSWER
    outcome = category_codes(out["outcome"], OUTCOME_DTYPE)
    imputed = np.full(len(out), -1, dtype=np.int8)
    if no_answer_as != "exclude":
        if no_answer_as == "arm_aware":
            # Read only where there is a no-answer to place: a frame with none needs no
            # over_budget_arm (nothing to rewrite; the rule is then "exclude").
            arm = out.loc[na_rows, "over_budget_arm"] if na_rows.any() else pd.Series([])
            fill = category_codes(arm.astype(object).map(_ARM_AWARE), OUTCOME_DTYPE)
        else:
            fill = _OUTCOME_CODE[no_answer_as]
        outcome[na_rows] = fill
        imputed[na_rows] = _NO_ANSWER
    if invalid_as != "exclude":
        inv = status == _INVALID
        outcome[inv] = _OUTCOME_CODE[invalid_as]
        imputed[inv] = _INVALID
    new_status = status.copy()
    new_status[imputed >= 0] = _OK
    out["status"] = pd.Categorical.from_codes(new_status, dtype=STATUS_DTYPE)
    out["outcome"] = pd.Categorical.from_codes(outcome, dtype=OUTCOME_DTYPE)
    out["imputed_from"] = pd.Categorical.from_codes(imputed, dtype=STATUS_DTYPE)
    return out
