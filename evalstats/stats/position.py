"""Order effects of the blind rubric: P(first-shown wins) and order consistency."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalstats._tidy import ResultFrame, refuse_pooled_rubrics, stack_statistics
from evalstats._validate import check_columns, check_confidence
from evalstats.errors import DataError
from evalstats.stats._cluster import by_columns
from evalstats.stats._rate_core import DEFAULT_METHOD, rate_arrays
from evalstats.stats._verdicts import LOSS, TIE, WIN, row_categories, row_groups
from evalstats.stats.robust import wilson_test_p
from evalstats.stats.winrates import DEFAULT_BY, sign_test_p

__all__ = ["position_bias"]


def position_bias(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    confidence: float = 0.95,
) -> ResultFrame:
    """Order effects of the blind rubric: P(first-shown wins) and order consistency.

    Only ``ok`` rows with a non-null ``order`` are used (the blind rubric). Both rates are
    ratio estimators over tasks with the inference of :func:`win_rates`' default
    (``"cr2_wilson"``): the CR2 SE (Bell & McCaffrey 2002), the Bell-McCaffrey df
    (Pustejovsky & Tipton 2018) and the design-effect Wilson interval, with the score test
    that interval inverts (:mod:`evalstats.stats.robust`), so ``first_shown_p <
    1 - confidence`` exactly when the interval excludes 0.5. Where no spread is observed
    the boundary construction keeps the clustering; one task gives NaN, with the reason
    in ``ci_note``.

    * ``first_shown_win_rate``: among decisive verdicts (win or loss), the
      share won by the answer shown first (WITH when ``order == "with_first"``,
      WITHOUT otherwise). 0.5 means no position bias. ``first_shown_p`` is the
      task-clustered test of 0.5 described above; ``first_shown_sign_test_p`` the exact
      binomial test of 0.5 over verdicts (ignoring clustering, anti-conservative with
      replicated tasks).
    * ``order_consistency``: among pairs (``cluster``, ``replicate``) judged
      in both orders, the share whose WITH-viewpoint outcome is the same in
      both (the first ok row of each order is used).

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``outcome``, ``order``, ``replicate``,
        the ``cluster`` column and the ``by`` columns.
    by : str, list of str or None
        Grouping columns.
    cluster : str
        Unit of independence (the task).
    confidence : float
        Confidence level.

    Returns
    -------
    ResultFrame
        Long: per group, the statistics ``first_shown_win_rate`` (``p_value``: the
        clustered test of 0.5; ``n``: the decisive verdicts) and ``order_consistency``
        (``n``: the pairs judged in both orders), each with ``se`` (CR2), ``ci_low``,
        ``ci_high``, ``df`` (Bell-McCaffrey), ``n_tasks``, ``method``, ``confidence`` and
        ``ci_note``. ``.diagnostics``: ``n_decisive``, ``first_shown_wins``,
        ``first_shown_sign_test_p`` (the IID binomial test of 0.5), ``n_pairs_both_orders``,
        ``order_consistent``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.position import position_bias
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b"], "replicate": 1, "judge": "j",
    ...     "order": ["with_first", "without_first"] * 2, "status": "ok",
    ...     "outcome": ["win", "loss", "win", "win"],
    ... })
    >>> res = position_bias(frame)
    >>> res[["statistic", "estimate", "n", "df", "method"]]
                  statistic  estimate  n   df      method
    0  first_shown_win_rate      0.75  4  1.0  cr2_wilson
    1     order_consistency      0.50  2  1.0  cr2_wilson
    >>> res.diagnostics[["first_shown_wins", "n_pairs_both_orders", "order_consistent"]]
       first_shown_wins  n_pairs_both_orders  order_consistent
    0                 3                    2                 1
    """
    by_cols = by_columns(by)
    if by is DEFAULT_BY and "rubric" not in frame.columns:
        by_cols = [c for c in by_cols if c != "rubric"]
    refuse_pooled_rubrics(frame, by_cols, "position_bias")
    confidence = check_confidence(confidence)
    check_columns(frame, [*by_cols, cluster, "order", "replicate"])
    category = row_categories(frame, by_cols, cluster)
    order = frame["order"].astype("object")
    keep = (category <= WIN) & order.notna().to_numpy()
    kept_order = order[keep]
    bad = ~kept_order.isin(["with_first", "without_first"]).to_numpy()
    if bad.any():
        raise DataError(f"unknown order value {kept_order[bad].iloc[0]!r}", field="order")
    groups, group_of_row = row_groups(frame, by_cols)
    n_groups = len(groups)
    cl, _ = pd.factorize(frame[cluster], use_na_sentinel=False)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    n_cl = max(int(cl.max(initial=0)) + 1, 1)
    n_rep = max(int(rep.max(initial=0)) + 1, 1)
    idx = np.flatnonzero(keep)
    cat = category[idx]
    with_first = (kept_order == "with_first").to_numpy()
    # One (group, cluster) cell per task of a group; a pair adds the replicate.
    cell = group_of_row[idx].astype(np.int64) * n_cl + np.asarray(cl, dtype=np.int64)[idx]

    decisive = cat != TIE
    first_won = np.where(with_first, cat == WIN, cat == LOSS) & decisive
    cells, cell_id = np.unique(cell, return_inverse=True)
    won = np.bincount(cell_id, weights=first_won.astype(np.float64), minlength=len(cells))
    dec = np.bincount(cell_id, weights=decisive.astype(np.float64), minlength=len(cells))
    first = rate_arrays(
        won, np.zeros_like(won), dec - won, cells // n_cl, n_groups, net_win_test=False
    )

    # Pairs judged in both orders: the first ok row of each order (rows in frame order).
    pair = cell * n_rep + np.asarray(rep, dtype=np.int64)[idx]
    pairs, pair_id = np.unique(pair, return_inverse=True)
    _, first_row = np.unique(pair_id * 2 + with_first, return_index=True)
    shown = np.full((len(pairs), 2), -1, dtype=np.int64)
    shown[pair_id[first_row], with_first[first_row].astype(np.int64)] = cat[first_row]
    both = (shown >= 0).all(axis=1)
    same = both & (shown[:, 0] == shown[:, 1])
    pair_cells, pair_cell = np.unique(pairs[both] // n_rep, return_inverse=True)
    n_both = np.bincount(pair_cell, minlength=len(pair_cells)).astype(np.float64)
    n_same = np.bincount(
        pair_cell, weights=same[both].astype(np.float64), minlength=len(pair_cells)
    )
    cons = rate_arrays(
        n_same,
        np.zeros_like(n_same),
        n_both - n_same,
        pair_cells // n_cl,
        n_groups,
        net_win_test=False,
    )

    first_gid, cons_gid = cells // n_cl, pair_cells // n_cl
    wins = np.bincount(first_gid, weights=won, minlength=n_groups).astype(np.int64)
    consistent = np.bincount(cons_gid, weights=n_same, minlength=n_groups).astype(np.int64)
    notes = {
        "first": _order_note("first_shown_win_rate", first, "no decisive verdict"),
        "cons": _order_note("order_consistency", cons, "no pair judged in both orders"),
    }
    diagnostics = groups.copy()
    diagnostics["n_decisive"] = first["n"].astype(np.int64)
    diagnostics["first_shown_wins"] = wins
    diagnostics["first_shown_sign_test_p"] = sign_test_p(wins, first["n"] - wins)
    diagnostics["n_pairs_both_orders"] = cons["n"].astype(np.int64)
    diagnostics["order_consistent"] = consistent
    # The score test of 0.5 that the rate's interval inverts (its df, the rates' one).
    first_p = wilson_test_p(
        first["est"][:, 0], first["se"][:, 0], first["n"], first["df"], first["n_eff_clusters"], 0.5
    )
    statistics = [
        (
            "first_shown_win_rate",
            {**_rate_columns(first), "p_value": first_p, "ci_note": notes["first"]},
        ),
        ("order_consistency", {**_rate_columns(cons), "ci_note": notes["cons"]}),
    ]
    for _, cols in statistics:
        cols["confidence"] = confidence
    return stack_statistics(groups, statistics, diagnostics=diagnostics, extra=("ci_note",))


def _order_note(name: str, res: dict[str, np.ndarray], empty: str) -> np.ndarray:
    note = np.full(len(res["n"]), "", dtype=object)
    note[res["n_clusters"] == 1] = f"{name}: one task, no between-task variation to estimate"
    note[res["n"] == 0] = f"{name}: {empty}"
    return note


def _rate_columns(res: dict[str, np.ndarray]) -> dict[str, object]:
    """The win-rate column of :func:`rate_arrays` as the tidy columns of one statistic."""
    return {
        "estimate": res["est"][:, 0],
        "se": res["se"][:, 0],
        "ci_low": res["low"][:, 0],
        "ci_high": res["high"][:, 0],
        "df": res["df"],
        "n": res["n"].astype(np.int64),
        "n_tasks": res["n_clusters"].astype(np.int64),
        "method": DEFAULT_METHOD,
    }
