"""Missing answers: how over-budget pairs and unreadable judge output enter the rates.

A pair whose WITH or WITHOUT run went over its task's budget is ``no_answer``: no judge
saw it (or its verdict is not used). Dropping such pairs (``exclude``, the default) is
honest only when going over budget says nothing about which arm is better; the seed asks
that a run over budget be "no answer", never a (c). This module offers the alternatives
issue 11 names, and the bounds that make the choice visible:

* :func:`apply_missing_rule` rewrites a verdict frame so that ``no_answer`` rows (and,
  separately, ``invalid`` rows) count as a chosen outcome. ``"arm_aware"`` reads the
  frame's ``over_budget_arm``: WITH loses a pair where only WITH went over budget, wins
  one where only WITHOUT did, and ties where both did. Blanket ``"loss"`` counts every
  over-budget pair against WITH, even the ones WITHOUT lost by running over.
* :func:`missing_bounds` gives, for each rate of :func:`evalstats.stats.win_rates`, the
  value with missing answers excluded and the best and worst case (every missing answer
  a win, resp. a loss, for WITH), plus the range over every way of filling them in.

Invalid output (the judge's answer could not be read) is the judge's failure, not an
arm's, so it has its own option and is excluded unless asked otherwise; it is never a
loss by default. ``error`` and ``conflict`` rows (failed or ambiguous judge calls) are
never counted.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalstats._schema import ORDERS, OUTCOME_DTYPE, STATUS_DTYPE
from evalstats._validate import check_columns
from evalstats.errors import DataError
from evalstats.stats._cluster import by_columns
from evalstats.stats.resample import as_generator
from evalstats.stats.winrates import DEFAULT_METHOD, RATE_NAMES, win_rates

__all__ = ["INVALID_RULES", "NO_ANSWER_RULES", "apply_missing_rule", "missing_bounds"]

NO_ANSWER_RULES = ("exclude", "arm_aware", "loss", "win", "tie")
INVALID_RULES = ("exclude", "loss", "win", "tie")
_ARM_AWARE = {"with": "loss", "without": "win", "both": "tie"}
_PAIR_CALL = ["task_id", "replicate", "judge", "rubric"]


def _check_rule(value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _as_str(s: pd.Series) -> np.ndarray:
    return np.array(s.astype(object).where(s.notna(), None).to_numpy(dtype=object), copy=True)


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
        ``arm_aware`` on a frame without ``over_budget_arm``, or with a ``no_answer``
        row whose ``over_budget_arm`` is missing (rebuild it with
        :func:`evalstats.verdict_frame`).

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
    status = _as_str(frame["status"])
    na_rows = status == "no_answer"
    out = frame.copy()
    if no_answer_as == "arm_aware" and na_rows.any():
        if "over_budget_arm" not in frame.columns:
            raise DataError(
                "no_answer_as='arm_aware' needs the over_budget_arm column: rebuild the "
                "frame with evalstats.verdict_frame",
                field="over_budget_arm",
            )
        arm = _as_str(frame["over_budget_arm"])
        lacking = na_rows & pd.isna(arm)
        if lacking.any():
            raise DataError(
                "no_answer row without over_budget_arm: cannot tell which arm went over",
                line=int(np.flatnonzero(lacking)[0]),
                field="over_budget_arm",
            )
        bad = na_rows & ~pd.Series(arm).isin(list(_ARM_AWARE)).to_numpy()
        if bad.any():
            pos = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"unknown over_budget_arm {arm[pos]!r}; expected one of {list(_ARM_AWARE)}",
                line=pos,
                field="over_budget_arm",
            )
    if no_answer_as != "exclude" and na_rows.any():
        out = _both_orders(out, na_rows)
        status = _as_str(out["status"])
        na_rows = status == "no_answer"
    outcome = _as_str(out["outcome"])
    imputed = np.full(len(out), None, dtype=object)
    if no_answer_as != "exclude":
        if no_answer_as == "arm_aware":
            arm = _as_str(out["over_budget_arm"])
            fill = np.array([_ARM_AWARE.get(a) for a in arm[na_rows]], dtype=object)
        else:
            fill = no_answer_as
        outcome[na_rows] = fill
        imputed[na_rows] = "no_answer"
    if invalid_as != "exclude":
        inv = status == "invalid"
        outcome[inv] = invalid_as
        imputed[inv] = "invalid"
    rewritten = pd.notna(imputed)
    new_status = status.copy()
    new_status[rewritten] = "ok"
    out["status"] = pd.Categorical(new_status, dtype=STATUS_DTYPE)
    out["outcome"] = pd.Categorical(outcome, dtype=OUTCOME_DTYPE)
    out["imputed_from"] = pd.Categorical(imputed, dtype=STATUS_DTYPE)
    return out


def missing_bounds(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "judge",
    cluster: str = "task_id",
    invalid_as: str = "exclude",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Each rate with missing answers excluded, and its best- and worst-case bounds.

    Every ``no_answer`` row is counted as a win for WITH (best case), a loss (worst
    case) and a tie; each rate is a ratio over the same denominator, linear in how the
    missing answers are filled in, so its range over *every* filling is spanned by these
    three (the tie rate peaks when all are ties; the others at all wins or all losses).
    Computed with :func:`evalstats.stats.win_rates` on frames from
    :func:`apply_missing_rule`.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame (``status``, ``outcome``, the ``cluster`` and ``by`` columns).
    by, cluster, method, n_resamples, confidence, rng
        As in :func:`~evalstats.stats.win_rates`.
    invalid_as : {"exclude", "loss", "win", "tie", "bounds"}, default "exclude"
        How ``invalid`` rows are counted in every scenario; ``"bounds"`` treats them as
        missing answers too (a win in the best case, a loss in the worst).

    Returns
    -------
    DataFrame
        One row per group and rate: the ``by`` columns, ``rate`` (win_rate, tie_rate,
        loss_rate, net_win, score), ``estimate`` (missing answers excluded), ``n``
        (verdicts counted there), ``n_missing`` (rows filled in for the bounds),
        ``worst_case`` and ``best_case`` (every missing answer a loss, resp. a win, for
        WITH), ``low`` and ``high`` (the range over every filling) and ``ci_low`` /
        ``ci_high`` (the widest confidence limits over the three scenarios).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.missing import missing_bounds
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c"], "judge": "j",
    ...     "status": ["ok", "ok", "ok", "no_answer", "ok"],
    ...     "outcome": ["win", "loss", "win", None, "tie"],
    ... })
    >>> b = missing_bounds(frame).set_index("rate")
    >>> b.loc["net_win", ["estimate", "worst_case", "best_case"]].tolist()
    [0.25, 0.0, 0.4]
    >>> b.loc["tie_rate", ["low", "high"]].tolist()
    [0.2, 0.4]
    """
    allowed = (*INVALID_RULES, "bounds")
    _check_rule(invalid_as, allowed, "invalid_as")
    gen = as_generator(rng)
    kw = {
        "by": by,
        "cluster": cluster,
        "method": method,
        "n_resamples": n_resamples,
        "confidence": confidence,
    }
    base_invalid = "exclude" if invalid_as == "bounds" else invalid_as
    est = win_rates(apply_missing_rule(frame, invalid_as=base_invalid), rng=gen, **kw)
    scenarios = {}
    for fill in ("loss", "tie", "win"):
        filled = apply_missing_rule(
            frame,
            no_answer_as=fill,
            invalid_as=fill if invalid_as == "bounds" else invalid_as,
        )
        scenarios[fill] = win_rates(filled, rng=gen, **kw)
    by_cols = by_columns(by)
    # Imputation changes no group's key, so every scenario lists the same groups in order.
    for res in scenarios.values():
        if not res[by_cols].equals(est[by_cols]):
            raise AssertionError("scenario groups differ from the estimate's")
    n_groups = len(est)
    parts = []
    for name in RATE_NAMES:
        point = np.stack([scenarios[s][name].to_numpy(float) for s in scenarios])
        lows = np.stack([scenarios[s][f"{name}_ci_low"].to_numpy(float) for s in scenarios])
        highs = np.stack([scenarios[s][f"{name}_ci_high"].to_numpy(float) for s in scenarios])
        part = est[by_cols].copy()
        part["rate"] = name
        part["estimate"] = est[name].to_numpy(float)
        part["n"] = est["n"].to_numpy()
        part["n_missing"] = scenarios["loss"]["n"].to_numpy() - est["n"].to_numpy()
        part["worst_case"] = scenarios["loss"][name].to_numpy(float)
        part["best_case"] = scenarios["win"][name].to_numpy(float)
        part["low"] = point.min(axis=0)
        part["high"] = point.max(axis=0)
        part["ci_low"] = lows.min(axis=0)
        part["ci_high"] = highs.max(axis=0)
        part["_g"] = np.arange(n_groups)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    out = out.sort_values("_g", kind="stable").drop(columns="_g").reset_index(drop=True)
    return out
