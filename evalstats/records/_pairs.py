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

__all__ = [
    "PAIR_MODES",
    "arm_pairs",
    "check_judgment_arms",
    "incomplete_pairs",
    "pair_runs",
    "pair_token_sources",
]

#: The ``pairs`` argument of :func:`pair_runs` (``evalstats judge --pairs``).
PAIR_MODES = ("all", "reference")
_PAIR = ["task_id", "replicate"]
_RUN_COLS = (
    "answer",
    "tokens",
    "wall_s",
    "files_inspected",
    "over_budget",
    "agent_model",
    "transcript",
    "reported_tokens",
    "tokens_source",
)


def arm_pairs(arms: Arms, pairs: str = "all") -> list[tuple[str, str]]:
    """The oriented pairs ``(arm_a, arm_b)`` of ``arms``, in ``arms.ids`` order.

    ``"all"``: every unordered pair once; the reference (when there is one) is always
    ``arm_b``, otherwise the arm listed later in ``arms.toml`` is the candidate ``arm_a``
    (the seeds' two arms: ``("with", "without")``).
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
    if arms.two_arm and ref is None:
        return [("with", "without")]  # the seeds' pair: WITH is the candidate
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


def pair_runs(runs: pd.DataFrame, arms: Arms | None = None, pairs: str = "all") -> pd.DataFrame:
    """One row per (task_id, replicate, pair of arms), the two runs side by side.

    Parameters
    ----------
    runs : pandas.DataFrame
        Long runs (:func:`evalstats.load_runs`, with tasks for ``tokens`` / ``over_budget``).
    arms : Arms, optional
        The arms (:attr:`evalstats.records.Dataset.arms`; default: the runs' arms, in the
        order of the ``arm`` categories); see :func:`arm_pairs`.
    pairs : {"all", "reference"}
        All K(K-1)/2 pairs, or each arm against ``arms.reference``.

    Returns
    -------
    pandas.DataFrame
        ``task_id``, ``replicate``, ``arm_a``, ``arm_b``, then ``with_<col>`` (arm_a's run,
        the rubric's WITH role) and ``without_<col>`` (arm_b's) for the runs' ``answer``,
        ``tokens``, ``wall_s``, ``files_inspected``, ``over_budget``, ``agent_model``,
        ``transcript``, ``reported_tokens``, ``tokens_source`` (those present), and
        ``over_budget`` (either run). The seeds' two arms are one pair, ``with`` against
        ``without``. A pair lacking a run is left out, with an :class:`EvalstatsWarning`.

    Examples
    --------
    >>> runs = pd.DataFrame({"task_id": ["t"] * 3, "replicate": 1, "arm": ["a", "b", "c"],
    ...                      "answer": ["x", "y", "z"]})
    >>> p = pair_runs(runs, Arms(("a", "b", "c")))
    >>> p[["arm_a", "arm_b", "with_answer", "without_answer"]].values.tolist()
    [['b', 'a', 'y', 'x'], ['c', 'a', 'z', 'x'], ['c', 'b', 'z', 'y']]
    """
    if arms is None:
        present = set(runs["arm"].astype(str))
        order = getattr(runs["arm"].dtype, "categories", None)
        order = [str(a) for a in order] if order is not None else sorted(present)
        arms = Arms(tuple(a for a in order if a in present))
    oriented = arm_pairs(arms, pairs)
    cols = [c for c in _RUN_COLS if c in runs.columns]
    arm = runs["arm"].astype(str)
    parts, lacking = [], 0
    for a, b in oriented:
        sides = []
        for side, name in (("with", a), ("without", b)):
            part = runs.loc[(arm == name).to_numpy(), [*_PAIR, *cols]]
            sides.append(part.rename(columns={c: f"{side}_{c}" for c in cols}))
        both = sides[0].merge(sides[1], on=_PAIR, how="outer", indicator=True)
        lacking += int((both["_merge"] != "both").sum())
        both = both.loc[both["_merge"] == "both"].drop(columns="_merge")
        both.insert(2, "arm_a", a)
        both.insert(3, "arm_b", b)
        parts.append(both.assign(_k=len(parts)))
    if lacking:
        warnings.warn(
            f"{lacking} incomplete pairs left out: (task, replicate, pair of arms) "
            "lacking the run of one arm",
            EvalstatsWarning,
            stacklevel=2,
        )
    out = pd.concat(parts, ignore_index=True)
    if "over_budget" in cols:
        out["over_budget"] = out["with_over_budget"].astype(bool) | out[
            "without_over_budget"
        ].astype(bool)
    out = out.sort_values([*_PAIR, "_k"], kind="stable").drop(columns="_k")
    return out.reset_index(drop=True)


def incomplete_pairs(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs whose (task, replicate) has no other arm: ``task_id``, ``replicate``, ``arm``, ``index``."""
    counts = runs.groupby(_PAIR, observed=True)["arm"].transform("size")
    lonely = runs.loc[counts.to_numpy() < 2, [*_PAIR, "arm"]]
    return lonely.assign(arm=lonely["arm"].astype(str)).reset_index()


def pair_token_sources(pairs: pd.DataFrame) -> dict[str, Any]:
    """``billed_with`` / ``billed_without`` and ``tokens_counted_from`` of paired runs.

    ``tokens_with`` / ``tokens_without`` stay the cl100k_base counts; ``tokens_counted_from``
    says whether both runs of the pair were counted on a transcript (else ``answer``), and
    the billed columns hold the harness's reported usage, for
    :func:`evalstats.stats.cost_ratios` to choose from. Only the columns the runs support.
    """
    out: dict[str, Any] = {}
    if "with_reported_tokens" in pairs.columns:
        for side in ("with", "without"):
            out[f"billed_{side}"] = pd.array(
                pd.to_numeric(pairs[f"{side}_reported_tokens"], errors="coerce"), dtype="Int64"
            )
    if "with_tokens_source" in pairs.columns:
        both = (pairs["with_tokens_source"] == "transcript") & (
            pairs["without_tokens_source"] == "transcript"
        )
        counted = np.where(both.to_numpy(dtype=bool), "transcript", "answer")
        out["tokens_counted_from"] = np.where(pairs["with_tokens_source"].isna(), None, counted)
    return out


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
