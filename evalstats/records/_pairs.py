"""Pairs of K arms: which arms are judged against which, per task and replicate.

The seeds' two arms pair WITH with WITHOUT (:func:`evalstats.records.pair_runs`). With K arms
(``arms.toml``'s ``[arms]`` table) a judge is asked about pairs of arms: every one of the
K(K-1)/2 unordered pairs, or each arm against the ``reference``. A pair is oriented: ``arm_a``
is the candidate (the three-way rubric's WITH role, the side whose outcome is reported) and
``arm_b`` the reference or the other arm (the WITHOUT role).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._schema import ORDER_DTYPE, PAIR_ORDER_DTYPE, PAIR_ORDERS
from ..errors import DataError, ParameterError
from ._arms import Arms
from ._read import EvalstatsWarning

__all__ = ["PAIR_MODES", "arm_pairs", "check_judgment_arms", "pair_arms"]

#: The ``pairs`` argument of :func:`pair_arms` (``evalstats judge --pairs``).
PAIR_MODES = ("all", "reference")
_RUN_COLS = ("answer", "tokens", "wall_s", "files_inspected", "over_budget", "agent_model")


def arm_pairs(arms: Arms, pairs: str = "all") -> list[tuple[str, str]]:
    """The oriented pairs ``(arm_a, arm_b)`` of ``arms``, in ``arms.ids`` order.

    ``"all"``: every unordered pair once; the reference (when there is one) is always
    ``arm_b``, otherwise the arm listed later in ``arms.toml`` is the candidate ``arm_a``.
    ``"reference"``: each other arm against ``arms.reference``.

    Raises
    ------
    ParameterError
        An unknown ``pairs``; ``"reference"`` when ``arms.toml`` names no reference.

    Examples
    --------
    >>> a = Arms(("none", "v1", "v2"), reference="none")
    >>> arm_pairs(a)
    [('v1', 'none'), ('v2', 'none'), ('v2', 'v1')]
    >>> arm_pairs(a, "reference")
    [('v1', 'none'), ('v2', 'none')]
    """
    if pairs not in PAIR_MODES:
        raise ParameterError(f"pairs must be one of {PAIR_MODES}, got {pairs!r}")
    ids, ref = tuple(arms.ids), arms.reference
    if pairs == "reference":
        if ref is None:
            where = f" ({arms.path})" if arms.path else ""
            raise ParameterError(
                f"pairs='reference' needs a reference arm, and arms.toml{where} names none: "
                'add reference = "ARM" to it, or judge all pairs (--pairs all)'
            )
        return [(a, ref) for a in ids if a != ref]
    out = []
    for i, x in enumerate(ids):
        for y in ids[i + 1 :]:
            out.append((x, y) if y == ref else (y, x))
    return out


def pair_arms(runs: pd.DataFrame, arms: Arms, pairs: str = "all") -> pd.DataFrame:
    """One row per (task_id, replicate, pair of arms), the two runs side by side.

    Parameters
    ----------
    runs : pandas.DataFrame
        Long runs (:func:`evalstats.load_runs`, with tasks for ``tokens`` / ``over_budget``).
    arms : Arms
        The arms (:attr:`evalstats.records.Dataset.arms`); see :func:`arm_pairs`.
    pairs : {"all", "reference"}
        All K(K-1)/2 pairs, or each arm against ``arms.reference``.

    Returns
    -------
    pandas.DataFrame
        ``task_id``, ``replicate``, ``arm_a``, ``arm_b``, then ``a_<col>`` and ``b_<col>``
        for the runs' ``answer``, ``tokens``, ``wall_s``, ``files_inspected``,
        ``over_budget``, ``agent_model`` (those present), and ``over_budget`` (either run).
        A (task, replicate) lacking one of a pair's arms leaves that pair out, with an
        :class:`EvalstatsWarning` counting them.

    Examples
    --------
    >>> runs = pd.DataFrame({"task_id": ["t"] * 3, "replicate": 1, "arm": ["a", "b", "c"],
    ...                      "answer": ["x", "y", "z"]})
    >>> p = pair_arms(runs, Arms(("a", "b", "c")))
    >>> p[["arm_a", "arm_b", "a_answer", "b_answer"]].values.tolist()
    [['b', 'a', 'y', 'x'], ['c', 'a', 'z', 'x'], ['c', 'b', 'z', 'y']]
    """
    oriented = arm_pairs(arms, pairs)
    cols = [c for c in _RUN_COLS if c in runs.columns]
    long = runs.assign(arm=runs["arm"].astype(str))[["task_id", "replicate", "arm", *cols]]
    parts, lacking = [], 0
    for a, b in oriented:
        left = long.loc[long["arm"] == a].drop(columns="arm")
        right = long.loc[long["arm"] == b].drop(columns="arm")
        both = left.merge(
            right, on=["task_id", "replicate"], how="outer", suffixes=("_a", "_b"), indicator=True
        )
        lacking += int((both["_merge"] != "both").sum())
        both = both.loc[both["_merge"] == "both"].drop(columns="_merge")
        both = both.rename(columns={f"{c}_a": f"a_{c}" for c in cols})
        both = both.rename(columns={f"{c}_b": f"b_{c}" for c in cols})
        parts.append(both.assign(arm_a=a, arm_b=b))
    if lacking:
        warnings.warn(
            f"{lacking} (task, replicate, pair of arms) left out: a run of one arm is missing",
            EvalstatsWarning,
            stacklevel=2,
        )
    out = pd.concat(parts, ignore_index=True)
    first = ["task_id", "replicate", "arm_a", "arm_b"]
    out = out[[*first, *(f"{s}_{c}" for c in cols for s in ("a", "b"))]]
    if "over_budget" in cols:
        out["over_budget"] = out["a_over_budget"].astype(bool) | out["b_over_budget"].astype(bool)
    rank = {p: i for i, p in enumerate(oriented)}
    key = np.array([rank[(a, b)] for a, b in zip(out["arm_a"], out["arm_b"], strict=True)])
    out = out.assign(_k=key).sort_values(["task_id", "replicate", "_k"], kind="stable")
    return out.drop(columns="_k").reset_index(drop=True)


def check_judgment_arms(frame: pd.DataFrame, path: Any) -> pd.DataFrame:
    """Judgment lines' ``arm_a`` / ``arm_b`` and ``order`` checked together (K arms).

    Either no line names a pair (the seeds' two arms: ``order`` with_first / without_first)
    or every line does (``order`` a_first / b_first, ``arm_a`` differing from ``arm_b``).
    """
    a, b = frame["arm_a"], frame["arm_b"]
    lines = frame.attrs.get("lines", range(1, len(frame) + 1))

    def fail(i: int, field: str, why: str) -> DataError:
        return DataError(why, path=path, line=int(lines[i]), field=field)

    named = (a.notna() | b.notna()).to_numpy()
    if not named.any():
        order = frame["order"]
        if order.dtype != ORDER_DTYPE:
            bad = np.flatnonzero(order.isin(PAIR_ORDERS).to_numpy())
            raise fail(int(bad[0]), "order", "a_first / b_first on a line without arm_a, arm_b")
        return frame
    half = np.flatnonzero(a.isna().to_numpy() | b.isna().to_numpy())
    if half.size:
        i = int(half[0])
        raise fail(
            i,
            "arm_a" if a.isna().iat[i] else "arm_b",
            "judgments name the pair of arms on every line (arm_a and arm_b) or on none",
        )
    same = np.flatnonzero((a == b).to_numpy())
    if same.size:
        raise fail(int(same[0]), "arm_b", f"arm_b equals arm_a ({a.iat[int(same[0])]!r})")
    order = frame["order"].astype(object)
    wrong = np.flatnonzero((order.notna() & ~order.isin(PAIR_ORDERS)).to_numpy())
    if wrong.size:
        raise fail(
            int(wrong[0]),
            "order",
            f"a line naming arm_a / arm_b has order a_first or b_first, got "
            f"{order.iat[int(wrong[0])]!r}",
        )
    frame["order"] = order.astype(PAIR_ORDER_DTYPE)
    return frame
