"""The comparison report kind: K >= 3 arms, every number of ``comparison.ipynb``.

Chosen by :func:`~evalstats.report.detect_kind` when the data directory's ``arms.toml`` lists
three or more arms in its ``[arms]`` table. The sections call package functions only:
:func:`evalstats.stats.compare` (every pair), :func:`evalstats.stats.rank` (simultaneous and
marginal rank sets, P(i beats j)), :func:`evalstats.stats.arm_costs` and
:func:`evalstats.stats.pareto`, on one judge and one rubric (parameters ``judge`` and
``rubric``; by default the only one, else the first in sorted order, recorded in
``results.json``'s parameters).

The pairwise verdict frame is read here (:func:`pairwise_verdicts`) from the judgments'
``arm_a`` / ``arm_b`` fields, each ``raw`` parsed with its rubric; it stands in for
``Dataset.pairwise_frame()`` until the records layer provides it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, ParseError
from ._kinds import Context, Loaded, Section, Unavailable

__all__ = [
    "check",
    "describe_parameters",
    "detect",
    "is_k_arm",
    "load",
    "pairwise_verdicts",
    "sections",
]

_PAGE = "comparison"
_ORDER = {"a_first": "a_first", "b_first": "b_first",
          "with_first": "a_first", "without_first": "b_first"}  # fmt: skip
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


def _raw_arms(path: Path, lines: list[int]) -> tuple[list[Any], list[Any]]:
    """``arm_a`` / ``arm_b`` of the judgment lines ``lines`` (1-based) of a JSON-lines file."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise DataError("arm_a / arm_b are read from a JSON-lines judgments file", path=path)
    text = path.read_text(encoding="utf-8").split("\n")
    a, b = [], []
    for n in lines:
        rec = json.loads(text[n - 1])
        a.append(rec.get("arm_a"))
        b.append(rec.get("arm_b"))
    return a, b


def pairwise_verdicts(ds: Any, path: Path) -> pd.DataFrame:
    """The pairwise verdict frame (:mod:`evalstats.stats.pairs`) of a K-arm directory.

    One row per judge call (its success, else its latest failure): ``status`` ``ok``,
    ``invalid`` (unparsable; ``parse_error``) or ``error``; ``outcome`` from ``arm_a``'s
    view. Raises ``DataError`` naming the line of a judgment without ``arm_a`` / ``arm_b``
    or with an arm ``arms.toml`` does not list.
    """
    from ..frames import resolve_rubrics, rubric_of

    j = ds.judgments.reset_index(drop=True).copy()
    lines = list(j.attrs.get("lines", range(1, len(j) + 1)))
    j["arm_a"], j["arm_b"] = _raw_arms(path, lines)
    j["_line"] = lines
    known = set(ds.arms.ids)
    for col in ("arm_a", "arm_b"):
        bad = ~j[col].isin(known)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"{col} {j.at[i, col]!r} is not an arm of arms.toml ({', '.join(ds.arms.ids)})",
                path=path, line=int(lines[i]), field=col,
            )  # fmt: skip
    j["order"] = j["order"].astype(object).map(_ORDER)
    j["call_ok"] = j["error"].isna()
    key = ["task_id", "replicate", "judge", "rubric", "arm_a", "arm_b", "_okey"]
    j = j.assign(_okey=j["order"].fillna(""))
    j = j.sort_values(["call_ok", "created_at", "_line"], kind="stable").drop_duplicates(
        key, keep="last"
    )
    found = resolve_rubrics(ds.judgments)
    status, outcome, reason = [], [], []
    for r in j.itertuples():
        if not r.call_ok:
            status.append("error"), outcome.append(None), reason.append(None)
            continue
        rubric = rubric_of(found, r.rubric, r.prompt_revision, r.prompt_sha256)
        order = (
            None
            if pd.isna(r.order)
            else ("with_first" if r.order == "a_first" else "without_first")
        )
        try:
            v = rubric.parse(r.raw if isinstance(r.raw, str) else "", order=order)
        except ParseError as exc:
            status.append("invalid"), outcome.append(None), reason.append(exc.reason)
            continue
        status.append("ok"), outcome.append(v.outcome), reason.append(None)
    out = pd.DataFrame({
        "task_id": j["task_id"].astype(str).to_numpy(),
        "replicate": j["replicate"].astype("int64").to_numpy(),
        "judge": j["judge"].astype(str).to_numpy(), "rubric": j["rubric"].astype(str).to_numpy(),
        "arm_a": j["arm_a"].astype(str).to_numpy(), "arm_b": j["arm_b"].astype(str).to_numpy(),
        "order": j["order"].to_numpy(dtype=object), "status": status, "outcome": outcome,
        "parse_error": reason,
    })  # fmt: skip
    return out.sort_values(["task_id", "replicate", "judge", "arm_a", "arm_b"]).reset_index(
        drop=True
    )


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

    check(d)
    ds = load_dir(d)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=d)
    jpath = find_file(d, "judgments")
    full = pairwise_verdicts(ds, jpath) if frame is None else frame
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
            "pairwise_reader": "report._comparison.pairwise_verdicts (judgments' arm_a/arm_b)",
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
