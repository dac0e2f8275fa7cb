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

from evalstats._tidy import ResultFrame, tidy_frame
from evalstats.stats._missing_rule import INVALID_RULES, NO_ANSWER_RULES, apply_missing_rule
from evalstats.stats.resample import as_generator
from evalstats.stats.winrates import DEFAULT_BY, DEFAULT_METHOD, RATE_NAMES, win_rates

__all__ = [
    "FILLINGS",
    "INVALID_RULES",
    "NO_ANSWER_RULES",
    "apply_missing_rule",
    "bounds_view",
    "missing_bounds",
]

#: How the missing answers are counted in the rows of :func:`missing_bounds`.
FILLINGS = ("exclude", "loss", "tie", "win")


def _check_rule(value: str, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def missing_bounds(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    invalid_as: str = "exclude",
    method: str = DEFAULT_METHOD,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Each rate with missing answers excluded, and at every filling that bounds it.

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
        As in :func:`~evalstats.stats.win_rates` (a ``by`` that would pool rubrics is
        refused there).
    invalid_as : {"exclude", "loss", "win", "tie", "bounds"}, default "exclude"
        How ``invalid`` rows are counted in every scenario; ``"bounds"`` treats them as
        missing answers too (a win in the best case, a loss in the worst).

    Returns
    -------
    ResultFrame
        Long: the ``by`` columns, ``filling`` (``"exclude"``: missing answers left out;
        ``"loss"``, the worst case, ``"tie"`` and ``"win"``, the best case: every missing
        answer counted so), then the rows of :func:`~evalstats.stats.win_rates` under that
        filling (``statistic`` = win_rate ... score, ``estimate``, its interval...). The
        range of a rate over every filling is the min and max ``estimate`` over the
        three fillings, its widest confidence limits their min ``ci_low`` and max
        ``ci_high``. ``.diagnostics``: per group, ``n`` (verdicts counted with missing
        answers excluded) and ``n_missing`` (rows filled in).

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.missing import missing_bounds
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c"], "judge": "j",
    ...     "status": ["ok", "ok", "ok", "no_answer", "ok"],
    ...     "outcome": ["win", "loss", "win", None, "tie"],
    ... })
    >>> b = missing_bounds(frame)
    >>> net = b[b["statistic"] == "net_win"].set_index("filling")["estimate"]
    >>> net.round(2).to_dict()
    {'exclude': 0.25, 'loss': 0.0, 'tie': 0.2, 'win': 0.4}
    >>> b.diagnostics[["judge", "n", "n_missing"]]
      judge  n  n_missing
    0     j  4          1
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
    scenarios = {
        "exclude": win_rates(apply_missing_rule(frame, invalid_as=base_invalid), rng=gen, **kw)
    }
    for fill in FILLINGS[1:]:
        filled = apply_missing_rule(
            frame,
            no_answer_as=fill,
            invalid_as=fill if invalid_as == "bounds" else invalid_as,
        )
        scenarios[fill] = win_rates(filled, rng=gen, **kw)
    est = scenarios["exclude"]
    by_cols = list(est.by)
    # Imputation changes no group's key, so every scenario lists the same groups in order.
    for res in scenarios.values():
        if not res[by_cols].equals(est[by_cols]):
            raise AssertionError("scenario groups differ from the estimate's")
    n_rates = len(RATE_NAMES)
    parts = []
    for k, (fill, res) in enumerate(scenarios.items()):
        part = pd.DataFrame(res)
        part.insert(len(by_cols), "filling", fill)
        part["_order"] = (
            np.arange(len(part)) // n_rates * 100 + k * 10 + np.arange(len(part)) % n_rates
        )
        parts.append(part)
    rows = pd.concat(parts, ignore_index=True).sort_values("_order", kind="stable")
    diagnostics = est.diagnostics[[*by_cols, "n"]].copy()
    diagnostics["n_missing"] = (
        scenarios["loss"].diagnostics["n"].to_numpy() - est.diagnostics["n"].to_numpy()
    )
    return tidy_frame(
        rows.drop(columns="_order"),
        by=[*by_cols, "filling"],
        diagnostics=diagnostics,
        extra=("ci_note",),
    )


def bounds_view(bounds: pd.DataFrame, statistic: str = "net_win") -> pd.DataFrame:
    """One row per group from :func:`missing_bounds`: ``estimate`` (missing answers
    excluded), ``worst_case``, ``best_case``, ``low`` / ``high`` (the range over every
    filling) and ``ci_low`` / ``ci_high`` (the widest confidence limits over the three
    fillings) of one statistic, with the diagnostics (``n``, ``n_missing``).

    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c"], "judge": "j",
    ...     "status": ["ok", "ok", "ok", "no_answer", "ok"],
    ...     "outcome": ["win", "loss", "win", None, "tie"],
    ... })
    >>> v = bounds_view(missing_bounds(frame), "tie_rate")
    >>> v[["judge", "n_missing", "estimate", "low", "high"]]
      judge  n_missing  estimate  low  high
    0     j          1      0.25  0.2   0.4
    """
    by = [c for c in bounds.by if c != "filling"]
    rows = pd.DataFrame(bounds[bounds["statistic"] == statistic])
    key = rows[by].astype(object).fillna("<NA>").apply(tuple, axis=1) if by else 0
    rows = rows.assign(_g=pd.factorize(key)[0] if by else 0)
    fill = rows[rows["filling"] != "exclude"].groupby("_g")
    point = rows[rows["filling"] == "exclude"].set_index("_g")
    out = bounds.diagnostics.reset_index(drop=True).copy()
    at = {f: rows[rows["filling"] == f].set_index("_g")["estimate"] for f in ("loss", "win")}
    out["estimate"] = point["estimate"].to_numpy()
    out["worst_case"] = at["loss"].to_numpy()
    out["best_case"] = at["win"].to_numpy()
    out["low"] = fill["estimate"].min().to_numpy()
    out["high"] = fill["estimate"].max().to_numpy()
    out["ci_low"] = fill["ci_low"].min().to_numpy()
    out["ci_high"] = fill["ci_high"].max().to_numpy()
    return out
