"""The audit of K-arm judgments: the disagreement trigger and the family rule per pair of arms.

With K arms a judge is asked about pairs of arms (``arm_a``, ``arm_b`` on each judgment
line). Two judges can agree on one pair and not on another, and the arms of a pair can be
run by different agent models, so both checks are evaluated for each pair separately and the
detail names each failing pair.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pandas as pd

from ..stats.pairs import pairwise_frame
from ._design import _check_canonical, _check_families, _check_self
from ._judgments import _check_hashes, _disagreements
from ._rows import _STATUS_DTYPE, AUDIT_CHECKS, _pct, _row

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


def audit_arm_pairs(
    tasks: pd.DataFrame,
    runs: pd.DataFrame,
    judgments: pd.DataFrame,
    *,
    rubrics: Any = None,
    families: Any = None,
    agent_family: str | None = None,
    disagreement_threshold: float,
) -> pd.DataFrame:
    """The audit table of K-arm judgments (the shape of :func:`evalstats.methodology.audit`).

    ``judge_disagreement`` and ``judge_not_self`` are evaluated per pair of arms; the checks
    that do not depend on how runs pair (``judge_families``, ``canonical_before_runs``,
    ``prompt_hash_pinned``) as for two arms; every other check is ``unknown`` (not yet
    evaluated for K arms; it is never read as a pass).
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
    rows = [
        done.get(check) or _row(check, "unknown", "Not evaluated for K arms (pairs of arms) yet.")
        for check in AUDIT_CHECKS
    ]
    table = pd.DataFrame(rows, columns=["check", "status", "detail", "rule"])
    table["status"] = table["status"].astype(_STATUS_DTYPE)
    for col in ("check", "detail", "rule"):
        table[col] = table[col].astype("str")
    table.attrs["rubrics"] = {r["check"]: list(r["rubrics"]) for r in rows if r.get("rubrics")}
    return table
