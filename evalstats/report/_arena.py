"""The Chatbot Arena case study report kind (``battles.csv.gz``: battles judged by people and
LLMs; Chatzi et al., NeurIPS 2024): the human ranking with rank sets, each judge against the
people, prediction-powered ranking from a sample of human votes, the paper's subsample study."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError
from ._kinds import Context, Loaded, Section, base_parameters, findings

__all__ = ["check", "describe_parameters", "detect", "load", "sections"]

_PAGE = "case_study_arena"
_FILE = "battles.csv.gz"
_LABELS = {"full_human": "all human votes", "human_only": "human votes only",
           "human_only_percentile": "human votes only, percentile max-t",
           "judge_only": "judge only", "ppr": "prediction-powered"}  # fmt: skip


def detect(data: Path) -> bool:
    return (data / _FILE).is_file()


def check(data: Path) -> None:
    if not detect(data):
        raise DataError(f"no {_FILE}: the Chatbot Arena battles (see ../shared/data/README.md)",
                        path=data)  # fmt: skip


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    from ..adapters import arena

    check(d)
    data = arena.load(d, judge="all") if frame is None else frame
    human = data[data["judge"] == "human"]
    return Loaded(
        frame=data,
        inputs=[d / _FILE],
        describe={
            "battles": int(len(human)),
            "models": int(pd.unique(pd.concat([human["arm_a"], human["arm_b"]])).size),
            "verdict_columns": sorted(map(str, pd.unique(data["judge"]))),
            "source": "Networks-Learning/prediction-powered-ranking, data/ (MIT); LMSYS "
            "chatbot_arena_conversations",
            "convention": "model_a = arm_a, shown first; ties and 'tie (bothbad)' are ties",
        },
    )


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **base_parameters(p),
        "ppr_judge": str(p["ppr_judge"]),
        "ppr_n_labels": int(p["ppr_n_labels"]),
        "n_subsamples": int(p["n_subsamples"]),
        "subsample_resamples": int(p["subsample_resamples"]),
        "rank_model": "davidson ties, first-shown (model A) bonus; task = battle",
        "rank_sets": "step-down max-t (Mogstad et al. 2023), simultaneous unless marked",
    }


def _judges(ctx: Context) -> list[str]:
    return [j for j in pd.unique(ctx.frame["judge"].astype(str)) if j != "human"]


def _headline(ctx: Context) -> pd.DataFrame:
    """One subsample's fits (human, judge, labels, prediction-powered), computed once."""
    if "headline" not in ctx.scratch:
        from ..stats import rank_subsamples

        judge = str(ctx.params["ppr_judge"])
        if judge not in _judges(ctx):
            raise ParameterError(f"ppr_judge must be one of {_judges(ctx)}, got {judge!r}")
        ctx.scratch["headline"] = rank_subsamples(
            ctx.frame, judges=[judge], n_labels=int(ctx.params["ppr_n_labels"]), n_subsamples=1,
            confidence=ctx.confidence, n_resamples=ctx.n_resamples,
            sets=("simultaneous", "marginal"), rng=ctx.rng,
        )  # fmt: skip
    return ctx.scratch["headline"]


def _human_ranking(ctx: Context) -> dict[str, Any]:
    r = _headline(ctx)
    full = r[r["estimator"] == "full_human"]
    sim = full[full["method"] == "simultaneous_stepdown"].set_index("arm")
    marg = full[full["method"] == "marginal_stepdown"].set_index("arm")
    human = ctx.frame[ctx.frame["judge"] == "human"]
    swapped = human["outcome"].map({"win": "loss", "loss": "win", "tie": "tie"})
    long = pd.DataFrame({"arm": np.concatenate([human["arm_a"], human["arm_b"]]),
                         "outcome": np.concatenate([human["outcome"], swapped])})  # fmt: skip
    counts = pd.crosstab(long["arm"], long["outcome"]).reindex(columns=["win", "tie", "loss"])
    t = pd.DataFrame({"arm": sim.index, "rank": sim["estimate"].to_numpy(),
                      "sim_low": sim["ci_low"].to_numpy(), "sim_high": sim["ci_high"].to_numpy(),
                      "marginal_low": marg.loc[sim.index, "ci_low"].to_numpy(),
                      "marginal_high": marg.loc[sim.index, "ci_high"].to_numpy()})  # fmt: skip
    c = counts.reindex(t["arm"]).fillna(0).astype(int)
    t["battles"] = c.sum(axis=1).to_numpy()
    for col, outcome in (("wins", "win"), ("ties", "tie"), ("losses", "loss")):
        t[col] = c[outcome].to_numpy()
    t["n_votes"] = int(sim["n"].iloc[0])
    return {"human_ranking": t.sort_values(["rank", "arm"], kind="stable").reset_index(drop=True)}


def _agreement(ctx: Context) -> dict[str, Any]:
    from ..stats import cohen_kappa
    from ..stats.rates import position_bias

    f = ctx.frame
    human = f[f["judge"] == "human"].set_index("task_id")["outcome"]
    pb = position_bias(f.assign(order="with_first"), by=["judge"], confidence=ctx.confidence)
    first = pb[pb["statistic"] == "first_shown_win_rate"].set_index("judge")
    rows = []
    for judge in ["human", *_judges(ctx)]:
        verdict = f[f["judge"] == judge].set_index("task_id")["outcome"]
        row: dict[str, Any] = {"judge": judge, "n": int(len(verdict))}
        if judge == "human":
            row.update(kappa=np.nan, kappa_ci_low=np.nan, kappa_ci_high=np.nan, agreement=np.nan)
        else:
            h = human.reindex(verdict.index).to_numpy()
            k = cohen_kappa(h, verdict.to_numpy(), categories=["win", "tie", "loss"],
                            confidence=ctx.confidence)  # fmt: skip
            row.update(kappa=k.estimate, kappa_ci_low=k.ci_low, kappa_ci_high=k.ci_high,
                       agreement=float(np.mean(h == verdict.to_numpy())))  # fmt: skip
        p = first.loc[judge]
        row.update(
            prefers_a=p["estimate"], prefers_a_ci_low=p["ci_low"], prefers_a_ci_high=p["ci_high"],
            prefers_a_p=p["p_value"], n_decisive=int(p["n"]),
            tie_share=float((verdict == "tie").mean()),
        )  # fmt: skip
        rows.append(row)
    return {"judge_agreement": pd.DataFrame(rows)}


def _ppr(ctx: Context) -> dict[str, Any]:
    r = _headline(ctx)
    sim = r[(r["method"] == "simultaneous_stepdown") & (r["statistic"] == "rank")]
    truth = sim[sim["estimator"] == "full_human"].set_index("arm")["estimate"]
    t = sim[sim["estimator"] != "full_human"][
        ["estimator", "judge", "arm", "estimate", "ci_low", "ci_high", "n", "n_tasks"]
    ].rename(columns={"estimate": "rank"})
    t["full_human_rank"] = t["arm"].map(truth).to_numpy()
    t["covers"] = (t["ci_low"] <= t["full_human_rank"]) & (t["full_human_rank"] <= t["ci_high"])
    t["size"] = t["ci_high"] - t["ci_low"] + 1
    t.insert(0, "label", t["estimator"].map(_LABELS))
    lam = r.loc[r["statistic"] == "lambda", "estimate"]
    summary = t.groupby(["label", "estimator", "judge"], sort=False).agg(
        n=("n", "first"), n_tasks=("n_tasks", "first"), mean_size=("size", "mean"),
        covers_all=("covers", "all"), arms_covered=("covers", "sum"),
    ).reset_index()  # fmt: skip
    summary["lambda"] = np.where(summary["estimator"] == "ppr", float(lam.iloc[0]), np.nan)
    order = truth.sort_values(kind="stable").index
    t["_o"] = t["arm"].map({a: i for i, a in enumerate(order)})
    t = t.sort_values(["_o", "estimator"], kind="stable").drop(columns="_o")
    return {"ppr_ranking": t.reset_index(drop=True), "ppr_summary": summary}


def _study(ctx: Context) -> dict[str, Any]:
    from ..stats import rank_subsamples, subsample_coverage

    ranks = rank_subsamples(
        ctx.frame, n_labels=int(ctx.params["ppr_n_labels"]),
        n_subsamples=int(ctx.params["n_subsamples"]), confidence=ctx.confidence,
        n_resamples=int(ctx.params["subsample_resamples"]), rng=ctx.rng,
    )  # fmt: skip
    cov = subsample_coverage(ranks)
    runs = ranks[(ranks["statistic"] == "rank") & (ranks["estimator"] != "full_human")]
    truth = ranks[(ranks["estimator"] == "full_human") & (ranks["statistic"] == "rank")]
    true_rank = truth.set_index("arm")["estimate"]
    runs = runs.assign(
        covered=(runs["ci_low"] <= runs["arm"].map(true_rank))
        & (runs["arm"].map(true_rank) <= runs["ci_high"]),
        size=runs["ci_high"] - runs["ci_low"] + 1,
    )
    per = runs.groupby(["estimator", "judge", "subsample"], sort=False, dropna=False).agg(
        covers_all=("covered", "all"), mean_size=("size", "mean")
    ).reset_index()  # fmt: skip
    lam = ranks[ranks["statistic"] == "lambda"][["judge", "subsample", "estimate"]]
    per = per.merge(lam.rename(columns={"estimate": "lambda"}), on=["judge", "subsample"],
                    how="left")  # fmt: skip
    per.loc[per["estimator"] != "ppr", "lambda"] = np.nan
    cov = cov.assign(label=cov["estimator"].map(_LABELS))
    return {"subsample_study": cov, "subsample_runs": per}


def _findings(ctx: Context) -> dict[str, Any]:
    rows: list[tuple[str, str]] = []
    h = ctx.tables["human_ranking"]
    singles = int((h["sim_low"] == h["sim_high"]).sum())
    top = h.iloc[0]
    rows.append(("human", (
        f"* **People.** From all {int(top['n_votes']):,} human votes, {top['arm']} ranks first "
        f"(simultaneous rank set {int(top['sim_low'])}–{int(top['sim_high'])}); {singles} of "
        f"{len(h)} models have a single-rank simultaneous set, and the mean set size is "
        f"{(h['sim_high'] - h['sim_low'] + 1).mean():.2f} simultaneous, "
        f"{(h['marginal_high'] - h['marginal_low'] + 1).mean():.2f} marginal."
    )))  # fmt: skip
    a = ctx.tables["judge_agreement"].set_index("judge")
    people = a.loc["human"]
    for judge, r in a.drop(index="human").iterrows():
        rows.append(("agreement", (
            f"* **{judge}.** Cohen's kappa with the people {r['kappa']:.3f} "
            f"[{r['kappa_ci_low']:.3f}, {r['kappa_ci_high']:.3f}] (same verdict on "
            f"{100 * r['agreement']:.1f} % of battles); it prefers model A (shown first) in "
            f"{100 * r['prefers_a']:.1f} % [{100 * r['prefers_a_ci_low']:.1f}, "
            f"{100 * r['prefers_a_ci_high']:.1f}] of its decisive verdicts, the people in "
            f"{100 * people['prefers_a']:.1f} %; ties {100 * r['tie_share']:.1f} % "
            f"(people {100 * people['tie_share']:.1f} %)."
        )))  # fmt: skip
    s = ctx.tables["ppr_summary"].set_index("estimator")
    judge = str(ctx.params["ppr_judge"])
    ppr, hum, jo = s.loc["ppr"], s.loc["human_only"], s.loc["judge_only"]

    def said(r: pd.Series) -> str:
        n_arms = len(ctx.tables["human_ranking"])
        cov = (
            "covers"
            if r["covers_all"]
            else f"misses ({int(r['arms_covered'])} of {n_arms} arms covered)"
        )
        return f"mean set size {r['mean_size']:.2f}, {cov} the all-human ranking"

    rows.append(("ppr", (
        f"* **One draw of {int(ctx.params['ppr_n_labels']):,} human votes.** "
        f"Prediction-powered with {judge} (lambda {ppr['lambda']:.2f}): {said(ppr)}; the same "
        f"votes alone: {said(hum)}; {judge} alone: {said(jo)}."
    )))  # fmt: skip
    st = ctx.tables["subsample_study"]
    n_sub = int(ctx.params["n_subsamples"])
    parts = []
    for (est, j), g in st.groupby(["estimator", "judge"], sort=False):
        v = g.set_index("statistic")
        name = _LABELS[est] if est.startswith("human_only") else f"{_LABELS[est]} ({j})"
        se = v.loc["coverage", "se"]
        cov = f"{v.loc['coverage', 'estimate']:.2f}" + ("" if se != se else f" ± {se:.2f}")
        parts.append(f"{name} coverage {cov}, size {v.loc['set_size', 'estimate']:.2f}")
    rows.append(("study", (
        f"* **{n_sub} random subsamples** (B = {int(ctx.params['subsample_resamples'])}): "
        + "; ".join(parts) + ". Judge-only rankings use every battle, so they are the same in "
        "every subsample."
    )))  # fmt: skip
    for ref, how in (("human_only", "bootstrap-t"),
                     ("human_only_percentile", "the same percentile max-t as PPR")):  # fmt: skip
        for r in st[st["statistic"] == f"size_vs_{ref}"].to_dict("records"):
            smaller = r["ci_high"] < 0
            larger = r["ci_low"] > 0
            verdict = "smaller" if smaller else "larger" if larger else "not shown different"
            rows.append(("study", (
                f"* **PPR with {r['judge']} vs human votes only ({how})**: set size difference "
                f"{r['estimate']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] per model "
                f"(paired over subsamples): {verdict}."
            )))  # fmt: skip
    return findings(rows)


def sections() -> tuple[Section, ...]:
    return (
        Section("human_ranking", _PAGE, _human_ranking),
        Section("judge_agreement", _PAGE, _agreement),
        Section("ppr_ranking", _PAGE, _ppr),
        Section("subsample_study", _PAGE, _study),
        Section("findings", _PAGE, _findings),
    )
