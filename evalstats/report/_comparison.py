"""The K-arm sections of an evaluation, the ``comparison`` page: compare, rank, arm costs and
the Pareto frontier for every judge of one rubric, each pair's marginal numbers those of the
pair's own two-arm sections (one quantity, one interval)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ._kinds import Context, Section, Unavailable

__all__ = ["describe", "sections", "setup"]

PAGE = "comparison"
NOTEBOOK = ("comparison.ipynb", "comparison.html", "Comparison of K arms")


def setup(ds: Any, frame: pd.DataFrame, rubric: list[str] | None) -> dict[str, Any]:
    """What the comparison sections need (``Loaded.extra``): the page, the arms, the
    reference, the rubric and the verdicts (arm_a, arm_b on every row) of that rubric."""
    arms = ds.arms
    present = sorted(set(frame["rubric"].astype(str)))
    chosen = str(rubric[0]) if rubric else min(present, key=lambda r: (r != "with-without", r))
    verdicts = frame.loc[frame["rubric"].astype(str) == chosen].reset_index(drop=True)
    return {
        "notebooks": (NOTEBOOK,),
        "across_pages": (PAGE,),
        "arms": list(arms.ids),
        "reference": arms.reference or arms.ids[0],
        "rubric": chosen,
        "verdicts": verdicts,
    }


def describe(ds: Any, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """The provenance's description of K arms: names, tools, reference, pairs judged."""
    arms = ds.arms
    return {
        "arm_names": {a: arms.name(a) for a in arms.ids},
        "arm_tools": dict(arms.tools),
        "reference": arms.reference or arms.ids[0],
        "arm_pairs": [list(p) for p in pairs],
    }


def _judges(ctx: Context) -> list[tuple[str, pd.DataFrame]]:
    f = ctx.extra["verdicts"]
    ok = f.loc[f["status"] == "ok"]
    if ok.empty:
        raise Unavailable(f"no ok verdicts for rubric {ctx.extra['rubric']}")
    return [(j, f.loc[f["judge"] == j].reset_index(drop=True)) for j in sorted(set(ok["judge"]))]


def _labelled(t: pd.DataFrame, judge: str, ctx: Context) -> pd.DataFrame:
    """``t`` with its judge and rubric first: grouping columns of the long result."""
    out = pd.DataFrame(t).drop(columns=["judge", "rubric"], errors="ignore")
    out.insert(0, "rubric", ctx.extra["rubric"])
    out.insert(0, "judge", judge)
    return out


def _stack(parts: dict[str, list[pd.DataFrame]]) -> dict[str, Any]:
    return {name: pd.concat(ts, ignore_index=True) for name, ts in parts.items()}


def _arm_order(ctx: Context) -> list[str]:
    """The arms, most often ``arm_a`` first (pairs oriented as judged), the reference last."""
    ref = ctx.extra["reference"]
    first = ctx.extra["verdicts"]["arm_a"].value_counts()
    rest = [a for a in ctx.extra["arms"] if a != ref]
    return sorted(rest, key=lambda a: -int(first.get(a, 0))) + [ref]


def _pair_table(ctx: Context, name: str) -> pd.DataFrame | None:
    """A table of the pairs' own sections (the report page), of the chosen rubric."""
    t = (ctx.scratch.get("pair_tables") or {}).get(name)
    if t is None or "arm_a" not in t.columns:
        return None
    return t.loc[t["rubric"].astype(str) == ctx.extra["rubric"]] if "rubric" in t else t


_MARGINAL = ["estimate", "se", "ci_low", "ci_high", "p_value", "df", "method"]


def _flipped(rates: pd.DataFrame) -> pd.DataFrame:
    """The pairs' rates from the other arm's point of view (b against a)."""
    f = rates.rename(columns={"arm_a": "arm_b", "arm_b": "arm_a"}).copy()
    f["statistic"] = f["statistic"].replace({"win_rate": "loss_rate", "loss_rate": "win_rate"})
    lo, hi = f["ci_low"].copy(), f["ci_high"].copy()
    for stat, sign, shift in (("net_win", -1.0, 0.0), ("score", -1.0, 1.0)):
        m = f["statistic"] == stat
        f.loc[m, "estimate"] = shift + sign * f.loc[m, "estimate"]
        f.loc[m, "ci_low"], f.loc[m, "ci_high"] = shift + sign * hi[m], shift + sign * lo[m]
    return f


def _one_source(t: pd.DataFrame, rates: pd.DataFrame | None) -> pd.DataFrame:
    """The compare table with each pair's marginal rows from the pair's own section."""
    from ..stats.ranking import holm

    if rates is None:
        return t
    keys = ["judge", "arm_a", "arm_b", "statistic"]
    have = pd.concat([rates, _flipped(rates)], ignore_index=True)
    have = have.drop_duplicates(keys).set_index(keys)[_MARGINAL]
    out = t.copy()
    at = pd.MultiIndex.from_frame(out[keys].astype(str))
    found = at.isin(have.index)
    out.loc[found, _MARGINAL] = have.reindex(at[found])[_MARGINAL].to_numpy()
    for _, rows in out.loc[out["statistic"] == "net_win"].groupby("judge"):
        p = rows["p_value"].astype(float)
        ok = p.notna()
        if ok.any():
            out.loc[p.index[ok], "p_holm"] = holm(p[ok].to_numpy())
    return out


def _compare(ctx: Context) -> dict[str, Any]:
    from ..stats import compare

    order = _arm_order(ctx)
    rates = _pair_table(ctx, "headline")
    parts = []
    for judge, f in _judges(ctx):
        t = compare(f, arms=order, confidence=ctx.confidence)
        parts.append(_one_source(_labelled(t, judge, ctx), rates))
    return _stack({"compare": parts})


def _rank(ctx: Context) -> dict[str, Any]:
    from ..stats import rank

    common = {"arms": ctx.extra["arms"], "n_resamples": max(ctx.n_resamples, 50),
              "confidence": ctx.confidence, "sets": ("simultaneous", "marginal")}  # fmt: skip
    parts: dict[str, list[pd.DataFrame]] = {"rank": [], "rank_sets": [], "beats": []}
    for judge, f in _judges(ctx):
        # Both families of rank sets from the very same fits: only the family differs.
        both = rank(f, rng=ctx.rng, **common)
        marginal = both["method"] == "marginal_stepdown"
        sim, marg = both.loc[~marginal], both.loc[marginal]
        sets = pd.concat(
            [
                marg.loc[marg["statistic"] == "rank"].assign(statistic="marginal_rank_set"),
                sim.loc[sim["statistic"] == "rank"].assign(statistic="simultaneous_rank_set"),
            ]
        )
        parts["rank"].append(_labelled(sim.loc[sim["statistic"] != "p_beats"], judge, ctx))
        parts["rank_sets"].append(_labelled(sets, judge, ctx))
        parts["beats"].append(_labelled(sim.loc[sim["statistic"] == "p_beats"], judge, ctx))
    return _stack(parts)


def _one_interval(p: pd.DataFrame, ctx: Context, judge: str) -> pd.DataFrame:
    """The frontier's net win and cost ratio with the compare and arm_costs intervals."""
    ref, cols, have = ctx.extra["reference"], ["se", "ci_low", "ci_high", "method"], []
    if (c := ctx.tables.get("compare")) is not None:
        pick = (c["judge"] == judge) & (c["arm_b"] == ref) & (c["statistic"] == "net_win")
        have.append(c.loc[pick].rename(columns={"arm_a": "arm"}))
    if (k := ctx.tables.get("arm_costs")) is not None:
        have.append(k.loc[k["statistic"].isin(["tokens_total_ratio", "wall_total_ratio"])])
    out = p.copy()
    if have:  # a row found once (by arm and statistic) gives its interval
        h = pd.concat(have, ignore_index=True).astype({"arm": str, "statistic": str})
        h = h.drop_duplicates(["arm", "statistic"], keep=False).set_index(["arm", "statistic"])
        at = pd.MultiIndex.from_frame(out[["arm", "statistic"]].astype(str))
        found = at.isin(h.index)
        out.loc[found, cols] = h.reindex(at[found])[cols].to_numpy()
    return out


def _costs_one_source(c: pd.DataFrame, cost: pd.DataFrame | None, ref: str) -> pd.DataFrame:
    """Each arm's cost ratio with the interval of the pair's own cost section."""
    if cost is None:
        return c
    inverse = cost.loc[cost["arm_a"] == ref].rename(columns={"arm_a": "arm_b", "arm_b": "arm_a"})
    inverse = inverse.assign(
        estimate=1 / inverse["estimate"], ci_low=1 / inverse["ci_high"],
        ci_high=1 / inverse["ci_low"], se=float("nan"),
    )  # fmt: skip
    have = pd.concat([cost.loc[cost["arm_b"] == ref], inverse], ignore_index=True)
    have = have.set_index(["arm_a", "statistic"])
    out = c.copy()
    at = pd.MultiIndex.from_frame(out[["arm", "statistic"]].astype(str))
    found = at.isin(have.index)
    cols = [k for k in _MARGINAL if k in have.columns]
    out.loc[found, cols] = have.reindex(at[found])[cols].to_numpy()
    if "se_log" in out.columns:  # the bootstrap's own log-scale SE went with its interval
        out.loc[found, "se_log"] = float("nan")
    return out


def _costs(ctx: Context) -> dict[str, Any]:
    from ..stats import arm_costs, pareto

    runs = ctx.extra["dataset"].runs
    ref = ctx.extra["reference"]
    c = arm_costs(runs, reference=ref, arms=ctx.extra["arms"], n_resamples=ctx.n_resamples,
                  confidence=ctx.confidence, rng=ctx.rng)  # fmt: skip
    reason = c.diagnostics["token_reason"].iloc[0]
    c = _costs_one_source(pd.DataFrame(c), _pair_table(ctx, "cost"), ref)
    ctx.tables["arm_costs"] = c
    out: dict[str, Any] = {"arm_costs": c}
    metric = "tokens_total_ratio" if (c["statistic"] == "tokens_total_ratio").any() else None
    if metric is None:
        out["pareto"] = Unavailable(f"no token ratio: {reason}")
        return out
    parts = []
    for judge, f in _judges(ctx):
        p = pareto(f, runs, reference=ref, arms=ctx.extra["arms"], metric=metric,
                   n_resamples=ctx.n_resamples, confidence=ctx.confidence, rng=ctx.rng)  # fmt: skip
        parts.append(_labelled(_one_interval(p, ctx, judge), judge, ctx))
    out["pareto"] = pd.concat(parts, ignore_index=True)
    return out


def _audit(ctx: Context) -> dict[str, Any]:
    """Every pair's audit (each check and its status), for the page that compares them."""
    t = _pair_table(ctx, "audit")
    if t is None:
        raise Unavailable("the pairs' audit is not available")
    return {"pair_audit": t[["arm_a", "arm_b", "check", "status", "detail"]].reset_index(drop=True)}


def sections() -> tuple[Section, ...]:
    return (
        Section("compare", PAGE, _compare),
        Section("rank", PAGE, _rank),
        Section("arm_costs", PAGE, _costs),
        Section("pair_audit", PAGE, _audit),  # draws nothing: last
    )
