"""The audit of K-arm judgments: every check per pair of arms.

With K arms a judge is asked about pairs of arms (``arm_a``, ``arm_b`` on each judgment
line). Two judges can agree on one pair and not on another, and the arms of a pair can be
run by different agent models, so the checks are evaluated for each pair separately and the
detail names each pair that does not pass. The disagreement trigger and the family rule have
their own per-pair wording here; every other pair-dependent check is the two-arm audit of
that pair (``arm_a`` in the WITH role, ``arm_b`` in the WITHOUT role, ``a_first`` read as
``with_first``), its status the worst over the pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pandas as pd

from .._schema import ARM_DTYPE, ORDER_DTYPE
from ..stats.pairs import pairwise_frame
from ._design import _check_canonical, _check_families, _check_self
from ._judgments import _check_hashes, _disagreements
from ._rows import AUDIT_CHECKS, _pct, _row, _table

__all__ = ["audit_arm_pairs", "has_arm_pairs"]

_RANK = {"pass": 0, "unknown": 1, "warn": 2, "fail": 3}


def has_arm_pairs(judgments: pd.DataFrame | None) -> bool:
    """True when judgment lines name the pair of arms judged (K arms)."""
    return (
        judgments is not None and "arm_a" in judgments.columns and judgments["arm_a"].notna().any()
    )


def _pair_disagreement(frame: pd.DataFrame, threshold: float) -> dict[str, Any]:
    check = "judge_disagreement"
    parts, failing, rubrics, unmeasured = [], [], set(), []
    for (a, b), grp in frame.groupby(["arm_a", "arm_b"], sort=False):
        d = _disagreements(grp)
        if d.empty:
            unmeasured.append(f"{a} vs {b}")
            continue
        for r in d.itertuples():
            if r.n == 0:
                unmeasured.append(f"{a} vs {b} ({r.rubric})")
                continue
            rate = r.disagree / r.n
            text = (
                f"{a} vs {b} ({r.rubric}): {r.judge_1} vs {r.judge_2} disagree on "
                f"{r.disagree} of {r.n} {r.unit} ({_pct(rate)})"
            )
            if rate > threshold:
                failing.append(text)
                rubrics.add(str(r.rubric))
            else:
                parts.append(text)
    if failing:
        row = _row(
            check,
            "fail",
            f"Above the {_pct(threshold)} trigger for {len(failing)} pair(s) of arms "
            "(re-curate the tasks or add a third judge): "
            + "; ".join(failing)
            + (f". Within it: {'; '.join(parts)}." if parts else "."),
        )
        return row | {"rubrics": sorted(rubrics)}
    if not parts:
        return _row(
            check, "warn", "No pair of arms has two judges with ok verdicts: not measurable."
        )
    status = "warn" if unmeasured else "pass"
    extra = f" Not measurable for {', '.join(unmeasured)}." if unmeasured else ""
    return _row(
        check,
        status,
        f"Within the {_pct(threshold)} trigger for every pair of arms: "
        + "; ".join(parts)
        + "."
        + extra,
    )


def _pair_self(runs, judgments, families, agent_family) -> dict[str, str]:
    arm = runs["arm"].astype(str)
    rows = []
    for (a, b), j in judgments.groupby(["arm_a", "arm_b"], sort=False):
        r = runs.loc[arm.isin((a, b)).to_numpy()]
        judges = sorted(set(j["judge"].astype(str)))
        rows.append((f"{a} vs {b}", _check_self(r, judges, families, agent_family, j)))
    worst = max((row["status"] for _, row in rows), key=_RANK.__getitem__)
    bad = [f"{name}: {row['detail']}" for name, row in rows if row["status"] != "pass"]
    if worst == "pass":
        return _row(
            "judge_not_self",
            "pass",
            f"No judge shares the agent's family in any of the {len(rows)} pairs of arms "
            f"({'; '.join(name for name, _ in rows)}).",
        )
    return _row(
        "judge_not_self",
        worst,
        f"{len(bad)} of {len(rows)} pairs of arms: " + " | ".join(bad),
    )


def _as_two_arms(
    runs: pd.DataFrame, judgments: pd.DataFrame, a: str, b: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs and judgments of the pair (a, b) as the seeds' two arms: a WITH, b WITHOUT."""
    arm = runs["arm"].astype(str)
    r = runs.loc[arm.isin((a, b)).to_numpy()].copy()
    r["arm"] = pd.Categorical(r["arm"].astype(str).map({a: "with", b: "without"}), dtype=ARM_DTYPE)
    hit = (judgments["arm_a"].astype(str) == a) & (judgments["arm_b"].astype(str) == b)
    j = judgments.loc[hit.to_numpy()].drop(columns=["arm_a", "arm_b"])
    order = j["order"].astype(object).map({"a_first": "with_first", "b_first": "without_first"})
    j = j.assign(order=pd.Categorical(order, dtype=ORDER_DTYPE))
    r, j = r.reset_index(drop=True), j.reset_index(drop=True)
    # The source line numbers follow the rows kept (errors and the latest-call rule read them).
    for part, whole, keep in (
        (r, runs, arm.isin((a, b)).to_numpy()),
        (j, judgments, hit.to_numpy()),
    ):
        lines = whole.attrs.get("lines")
        if lines is not None:
            part.attrs["lines"] = [n for n, k in zip(lines, keep, strict=True) if k]
    return r, j


def _per_pair(
    tasks, runs, judgments, audit: Callable[..., pd.DataFrame], options: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Each check's row over the pairs of arms, from the two-arm ``audit`` of every pair."""
    per: dict[str, list[tuple[str, str, str]]] = {}
    pairs = judgments[["arm_a", "arm_b"]].astype(str).drop_duplicates()
    for a, b in pairs.itertuples(index=False):
        r, j = _as_two_arms(runs, judgments, a, b)
        table = audit(tasks, r, j, **options)
        for row in table.itertuples(index=False):
            per.setdefault(row.check, []).append((f"{a} vs {b}", str(row.status), row.detail))
    out = {}
    for check, rows in per.items():
        worst = max((st for _, st, _ in rows), key=_RANK.__getitem__)
        if len({(st, d) for _, st, d in rows}) == 1:  # a check that reads no pair's arms
            detail = f"{rows[0][2]} (the same for each of the {len(rows)} pairs of arms)"
        elif worst == "pass":
            detail = f"Every pair of arms passes ({len(rows)}): " + " | ".join(
                f"{name}: {d}" for name, _, d in rows
            )
        else:
            bad = [f"{name} ({st}): {d}" for name, st, d in rows if st != "pass"]
            detail = f"{len(bad)} of {len(rows)} pairs of arms: " + " | ".join(bad)
        out[check] = _row(check, worst, detail)
    return out


def audit_arm_pairs(
    tasks: pd.DataFrame,
    runs: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    rubrics: Any = None,
    families: Any = None,
    agent_family: str | None = None,
    disagreement_threshold: float,
    two_arm_audit: Callable[..., pd.DataFrame],
    **options: Any,
) -> pd.DataFrame:
    """The audit table of K-arm judgments (the shape of :func:`evalstats.methodology.audit`).

    ``judge_disagreement`` and ``judge_not_self`` are evaluated per pair of arms here; the
    checks that do not depend on how runs pair (``judge_families``, ``canonical_before_runs``,
    ``prompt_hash_pinned``) as for two arms; every other check is the two-arm audit of each
    pair (``two_arm_audit``, given by the caller: :func:`evalstats.methodology.audit`;
    ``options``: its thresholds and plan), the worst status over the pairs.
    """
    frame = pairwise_frame(
        SimpleNamespace(tasks=tasks, runs=runs, judgments=judgments), rubrics=rubrics
    )
    done = {
        "judge_not_self": _pair_self(runs, judgments, families, agent_family),
        "judge_families": _check_families(judgments, families),
        "canonical_before_runs": _check_canonical(tasks, runs),
        "prompt_hash_pinned": _check_hashes(judgments, rubrics),
        "judge_disagreement": _pair_disagreement(frame, disagreement_threshold),
    }
    rest = _per_pair(tasks, runs, judgments, two_arm_audit, {"rubrics": rubrics, **options})
    rows = [
        done.get(check)
        or rest.get(check)
        or _row(check, "unknown", "Not evaluated: no judged pair of arms.")
        for check in AUDIT_CHECKS
    ]
    return _table(rows)
