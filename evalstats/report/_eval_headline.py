"""What the headline card says besides its numbers (issue 22): which row it shows first and
why, and every audit check that did not pass.

Two tables, computed right after the audit (both draw nothing from the generator):

* ``headline_choice``: one row, the ``rubric`` and ``judge`` shown first and the ``rule``
  that chose them (:data:`CHOICE_RULE`, or the plan's declared primary);
* ``headline_audit``: the audit's rows whose status is not ``pass`` (``fail`` first, then
  the other statuses in the audit's order), the card's caveats.

The headline and consensus tables gain an ``audit`` column: ``"fail: judge_disagreement"``
on the rows of a rubric whose judges disagree above the trigger, else empty, so that no such
row is ever read plain.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._families import model_family
from ._eval_common import _plan
from ._kinds import Context, Unavailable

# The seeds' rubrics, the primary first: seed 000's three-way label (WITH better / equivalent
# / worse) is the published comparison; seed 001's blind pair is its position-blind check.
SEED_RUBRICS = ("with-without", "blind-pair")
# The seed's default judge (seed 000, "Judge model selection").
SEED_JUDGE_MODEL = "claude-sonnet-4-20250514"
CHOICE_RULE = (
    "the rubric is the judge prompt seed's three-way with-without label, else the blind-pair "
    "seed's, else the one with the most readable verdicts; the judge is the seed's default, "
    "Anthropic's Claude Sonnet, unless it shares the agent's model family, else the judge of "
    "another family with the most readable verdicts, ties going to the first in the judgments"
)
FLAG_COLUMN = "audit"
_DISAGREEMENT = "judge_disagreement"


def _most_ok(ok: pd.DataFrame, col: str, among: list[str]) -> str:
    """The value of ``col`` among ``among`` with the most ok verdicts, ties by first seen."""
    counts = ok[col].astype(str).value_counts()
    best = max(int(counts.get(v, 0)) for v in among)
    return next(v for v in among if int(counts.get(v, 0)) == best)


def choose_first(frame: pd.DataFrame, agent_models: list[str]) -> tuple[str, str]:
    """The (rubric, judge) the headline shows first without a plan (:data:`CHOICE_RULE`).

    >>> f = pd.DataFrame({"rubric": ["blind-pair", "with-without", "with-without"],
    ...                   "judge": ["openai:gpt-5.4", "openai:gpt-5.4",
    ...                             "anthropic:claude-sonnet-4-20250514"],
    ...                   "status": ["ok", "ok", "ok"]})
    >>> choose_first(f, ["qwen:qwen3-coder"])
    ('with-without', 'anthropic:claude-sonnet-4-20250514')
    >>> choose_first(f, ["anthropic:claude-opus-4"])  # the default judge is the agent's kin
    ('with-without', 'openai:gpt-5.4')
    """
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    if ok.empty:
        ok = frame
    seen_rubrics = list(dict.fromkeys(ok["rubric"].astype(str)))
    rubric = next((r for r in SEED_RUBRICS if r in seen_rubrics), None) or _most_ok(
        ok, "rubric", seen_rubrics
    )
    mine = ok.loc[ok["rubric"].astype(str) == rubric]
    judges = list(dict.fromkeys(mine["judge"].astype(str)))
    agent_fams = {model_family(a) for a in agent_models} - {"unknown"}
    other = [j for j in judges if model_family(j) not in agent_fams] or judges
    default = [j for j in other if j.split(":", 1)[-1] == SEED_JUDGE_MODEL]
    return rubric, (default[0] if default else _most_ok(mine, "judge", other))


def _headline_audit(ctx: Context) -> dict[str, Any]:
    """``headline_choice``, ``headline_audit`` and the ``audit`` column (module docstring)."""
    head = ctx.tables.get("headline")
    if not isinstance(head, pd.DataFrame):
        raise Unavailable("no headline table: nothing to choose or mark")
    plan = _plan(ctx)
    if plan is not None:
        key = plan.primary_key
        rubric, judge = str(key["rubric"]), str(key["judge"])
        rule = "the primary declared in the analysis plan (plan.toml)"
    else:
        runs = getattr(ctx.extra.get("dataset"), "runs", None)
        agents = [] if runs is None else sorted({str(a) for a in runs["agent_model"].dropna()})
        rubric, judge = choose_first(ctx.frame, agents)
        rule = CHOICE_RULE
    out: dict[str, Any] = {
        "headline_choice": pd.DataFrame([{"rubric": rubric, "judge": judge, "rule": rule}])
    }
    audit = ctx.tables.get("audit")
    if not isinstance(audit, pd.DataFrame):
        raise Unavailable("the audit is not available: the headline cannot show its caveats")
    status = audit["status"].astype(str)
    caveats = audit.loc[status != "pass"].assign(_fail=(status != "fail").astype(int))
    caveats = caveats.sort_values("_fail", kind="stable").drop(columns="_fail")
    out["headline_audit"] = caveats.reset_index(drop=True)
    failing = set(audit.attrs.get("rubrics", {}).get(_DISAGREEMENT, []))
    for name in ("headline", "consensus"):
        table = ctx.tables.get(name)
        if not isinstance(table, pd.DataFrame):
            continue
        table = table.copy()
        bad = table["rubric"].astype(str).isin(failing).to_numpy()
        table[FLAG_COLUMN] = np.where(bad, f"fail: {_DISAGREEMENT}", "")
        out[name] = table
    return out
