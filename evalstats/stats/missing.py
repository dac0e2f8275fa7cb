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

from evalstats.stats._cluster import by_columns
from evalstats.stats._missing_rule import INVALID_RULES, NO_ANSWER_RULES, apply_missing_rule
from evalstats.stats.resample import as_generator
from evalstats.stats.winrates import DEFAULT_METHOD, RATE_NAMES, win_rates

__all__ = ["INVALID_RULES", "NO_ANSWER_RULES", "apply_missing_rule", "missing_bounds"]


def _check_rule(value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


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
