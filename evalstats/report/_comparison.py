"""The comparison report kind: K >= 3 arms, every number of ``comparison.ipynb``.

Chosen by :func:`~evalstats.report.detect_kind` when the data directory's ``arms.toml`` lists
three or more arms in its ``[arms]`` table. The sections call package functions only:
:func:`evalstats.stats.compare` (every pair), :func:`evalstats.stats.rank` (simultaneous and
marginal rank sets, P(i beats j)), :func:`evalstats.stats.arm_costs` and
:func:`evalstats.stats.pareto`, on one judge and one rubric (parameters ``judge`` and
``rubric``; by default the only one, else the first in sorted order, recorded in
``results.json``'s parameters).

The pairwise verdict frame is :func:`evalstats.stats.pairwise_frame` of the data directory
(the judgments' ``arm_a`` / ``arm_b``, read as the two-arm verdict frame is read).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError
from ._kinds import Context, Loaded, Section, Unavailable

__all__ = [
    "check",
    "describe_parameters",
    "detect",
    "is_k_arm",
    "load",
    "sections",
]

_PAGE = "comparison"
_STEMS = ("tasks", "runs", "judgments")


def is_k_arm(data: Path) -> bool:
    """True when ``data/arms.toml`` lists three or more arms in an ``[arms]`` table."""
    path = Path(data) / "arms.toml"
    if not path.is_file():
        return False
    from ..records import load_arms

    try:
        arms = load_arms(path)
    except DataError:
        return False  # the evaluation kind reports the broken file
    return len(arms.ids) >= 3


def detect(data: Path) -> bool:
    return is_k_arm(data)


def check(data: Path) -> None:
    from ..records import find_file

    for stem in _STEMS:
        find_file(data, stem, required=True)


def _pick(frame: pd.DataFrame, column: str, wanted: Any) -> str:
    present = sorted(set(frame[column]))
    if wanted is None:
        if "with-without" in present and column == "rubric":
            return "with-without"
        return present[0]
    if wanted not in present:
        raise DataError(f"{column} {wanted!r} is not in the judgments ({', '.join(present)})")
    return str(wanted)


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    from ..records import find_file, load_dir
    from ..stats import pairwise_frame

    check(d)
    ds = load_dir(d)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=d)
    full = pairwise_frame(ds) if frame is None else frame
    rubric = _pick(full, "rubric", params.get("rubric"))
    judge = _pick(full.loc[full["rubric"] == rubric], "judge", params.get("judge"))
    f = full.loc[(full["rubric"] == rubric) & (full["judge"] == judge)].reset_index(drop=True)
    arms = ds.arms
    reference = arms.reference or arms.ids[0]
    inputs = [find_file(d, s) for s in _STEMS] + [d / "arms.toml"]
    truth = d / "truth.json"
    return Loaded(
        frame=f,
        inputs=[*inputs, *([truth] if truth.exists() else [])],
        describe={
            "arm_names": {a: arms.name(a) for a in arms.ids},
            "arm_tools": dict(arms.tools),
            "reference": reference,
            "rubric": rubric,
            "judge": judge,
            "judges_in_data": sorted(set(full["judge"])),
        },
        extra={"dataset": ds, "arms": list(arms.ids), "reference": reference,
               "judge": judge, "rubric": rubric},
    )  # fmt: skip


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "confidence": float(p["confidence"]),
        "n_resamples": int(p["n_resamples"]),
        "seed": p["seed"],
        "judge": p.get("judge"),
        "rubric": p.get("rubric"),
    }


def _labelled(t: pd.DataFrame, ctx: Context) -> pd.DataFrame:
    out = pd.DataFrame(t).assign(judge=ctx.extra["judge"], rubric=ctx.extra["rubric"])
    return out


def _compare(ctx: Context) -> dict[str, Any]:
    from ..stats import compare

    ok = ctx.frame.loc[ctx.frame["status"] == "ok"]
    if ok.empty:
        raise Unavailable("no ok verdicts for this judge and rubric")
    # The reference last: every pair with it reads "candidate vs reference".
    ref = ctx.extra["reference"]
    order = [a for a in ctx.extra["arms"] if a != ref] + [ref]
    t = compare(ctx.frame, arms=order, n_resamples=ctx.n_resamples,
                confidence=ctx.confidence, rng=ctx.rng)  # fmt: skip
    return {"compare": _labelled(t, ctx)}


def _rank(ctx: Context) -> dict[str, Any]:
    from ..stats import rank

    common = {"arms": ctx.extra["arms"], "n_resamples": max(ctx.n_resamples, 50),
              "confidence": ctx.confidence}  # fmt: skip
    state = ctx.rng.bit_generator.state
    sim = rank(ctx.frame, rng=ctx.rng, **common)
    # The marginal sets from the very same resamples: only the family differs.
    after = ctx.rng.bit_generator.state
    ctx.rng.bit_generator.state = state
    marg = rank(ctx.frame, rng=ctx.rng, simultaneous=False, **common)
    ctx.rng.bit_generator.state = after
    sets = pd.concat(
        [
            marg.loc[marg["statistic"] == "rank"].assign(statistic="marginal_rank_set"),
            sim.loc[sim["statistic"] == "rank"].assign(statistic="simultaneous_rank_set"),
        ]
    )
    return {
        "rank": _labelled(sim.loc[sim["statistic"] != "p_beats"], ctx),
        "rank_sets": _labelled(sets, ctx),
        "beats": _labelled(sim.loc[sim["statistic"] == "p_beats"], ctx),
    }


def _costs(ctx: Context) -> dict[str, Any]:
    from ..stats import arm_costs, pareto

    runs = ctx.extra["dataset"].runs
    ref = ctx.extra["reference"]
    out: dict[str, Any] = {}
    c = arm_costs(runs, reference=ref, arms=ctx.extra["arms"], n_resamples=ctx.n_resamples,
                  confidence=ctx.confidence, rng=ctx.rng)  # fmt: skip
    out["arm_costs"] = pd.DataFrame(c)
    reason = c.diagnostics["token_reason"].iloc[0]
    metric = "tokens_total_ratio" if (c["statistic"] == "tokens_total_ratio").any() else None
    if metric is None:
        out["pareto"] = Unavailable(f"no token ratio: {reason}")
        return out
    p = pareto(ctx.frame, runs, reference=ref, arms=ctx.extra["arms"], metric=metric,
               n_resamples=ctx.n_resamples, confidence=ctx.confidence, rng=ctx.rng)  # fmt: skip
    out["pareto"] = _labelled(p, ctx)
    return out


def sections() -> tuple[Section, ...]:
    return (
        Section("compare", _PAGE, _compare),
        Section("rank", _PAGE, _rank),
        Section("arm_costs", _PAGE, _costs),
    )
