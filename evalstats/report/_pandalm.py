"""The PandaLM case study report kind: PandaLM's tables (annotator kappas, majority-vote
counts, judge accuracy, win / lose / tie) beside its published figures, and a PPI demo."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._schema import OUTCOMES
from .._tidy import wide
from ..errors import DataError
from ..stats.agreement import gold_labels
from ._kinds import Context, Loaded, Section, base_parameters, findings
from ._results import _RATES

__all__ = ["check", "describe_parameters", "detect", "load", "sections"]

_PAGE = "case_study_pandalm"
_NAMES = ("testset-v1.json", "gpt-3.5-turbo-testset-v1.json", "pandalm-7b-testset-v1.json")
# PandaLM prints kappas to 2 decimals and the accuracy figures (percent) to 2 decimals.
_DECIMALS = 2
# The row model of a pair is the earlier of these (PandaLM's table order).
MODELS = ("llama-7b", "bloom-7b", "cerebras-gpt-6.7B", "opt-7b", "pythia-6.9b")
# How an unparsable verdict counts against the majority vote: a tie (what reproduces the
# published figures), a fourth answer that is always wrong, or left out.
UNPARSABLE = ("tie", "invalid", "exclude")
# PandaLM's README, to the printed precision.
PUBLISHED = {
    "annotator_kappa": {
        (f"annotator{a}", f"annotator{b}"): k
        for a, b, k in ((1, 2, 0.85), (1, 3, 0.88), (2, 3, 0.86))
    },  # fmt: skip
    "label_counts": {"tie": 105, "1": 422, "2": 472},
    "judge_accuracy": {
        "gpt-3.5-turbo": (71.07, 58.79, 57.36, 57.55),
        "pandalm-7b": (66.77, 57.38, 57.50, 57.43),
    },
}
# Outcome (WITH = response1) -> PandaLM's label, for the tables that use its names.
_PANDA_LABEL = {"win": "1", "loss": "2", "tie": "tie"}


def _file(data: Path, name: str) -> Path | None:
    for p in (data / f"{name}.gz", data / name):
        if p.is_file():
            return p
    return None


def detect(data: Path) -> bool:
    return _file(data, _NAMES[0]) is not None


def check(data: Path) -> None:
    for name in _NAMES:
        if _file(data, name) is None:
            raise DataError(f"no {name} (or {name}.gz): PandaLM's data/ files", path=data)


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    from ..adapters import pandalm

    check(d)
    data = pandalm.load(d)
    if frame is not None:
        data = type(data)(frame=frame, labels=data.labels)
    inputs = [p for p in (_file(d, n) for n in _NAMES) if p is not None]
    return Loaded(
        frame=data.frame,
        inputs=inputs,
        describe={
            "items": int(data.labels["task_id"].nunique()),
            "annotators": sorted(data.labels["labeler"].astype(str).unique()),
            "llm_judges": list(pandalm.JUDGES),
            "source": "WeOpenML/PandaLM, data/ (Apache-2.0)",
            "convention": "response1 = WITH, response2 = WITHOUT; one order only",
        },
        extra={"data": data},
    )


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **base_parameters(p),
        "ppi_judge": str(p["ppi_judge"]),
        "ppi_fraction": float(p["ppi_fraction"]),
        "match_rule": f"reproduced value rounded to {_DECIMALS} decimals equals the published",
    }


def _kappas(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import labeler_agreement

    rng = np.random.default_rng(np.random.SeedSequence(ctx.seed).spawn(1)[0])
    t = labeler_agreement(ctx.extra["data"].labels, confidence=ctx.confidence,
                          n_resamples=ctx.n_resamples, rng=rng)  # fmt: skip
    t = t[["a", "b", "n", "kappa", "ci_low", "ci_high", "observed_agreement"]].copy()
    pub = PUBLISHED["annotator_kappa"]
    t.insert(4, "published", [pub.get((a, b)) for a, b in zip(t["a"], t["b"], strict=True)])
    t["match"] = t["kappa"].round(_DECIMALS) == t["published"]
    return {"annotator_kappas": t}


def _counts(ctx: Context) -> dict[str, Any]:
    """Majority-vote label counts (tie / 1 / 2, PandaLM's names) beside the published ones."""
    g = gold_labels(ctx.extra["data"].labels)
    counts = g["gold"].astype(object).map(_PANDA_LABEL).value_counts()
    t = pd.DataFrame({"label": ["tie", "1", "2"]})
    t["n"] = [int(counts.get(k, 0)) for k in t["label"]]
    t["published"] = t["label"].map(PUBLISHED["label_counts"])
    t["match"] = t["n"] == t["published"]
    t["no_majority"] = int(g["gold"].isna().sum())
    return {"label_counts": t}


_METRICS = ("acc", "precision", "recall", "f1")


def _scores(y: np.ndarray, p: np.ndarray, k: int = 3) -> tuple[float, float, float, float]:
    """Accuracy and macro P/R/F1 over classes 0..k-1; predictions of -1 are always wrong."""
    valid = p >= 0
    table = np.bincount(y[valid] * k + p[valid], minlength=k * k).reshape(k, k)
    rows = np.bincount(y, minlength=k)  # every gold item, invalid predictions included
    cols, diag = table.sum(axis=0), np.diag(table)
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(cols > 0, diag / cols, 0.0)
        rec = np.where(rows > 0, diag / rows, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return float(diag.sum() / len(y)), float(prec.mean()), float(rec.mean()), float(f1.mean())


def _judge_accuracy(data: Any, unparsable: str) -> pd.DataFrame:
    """Each judge against the majority vote as PandaLM reports it (Acc, macro P/R/F1 %)."""
    from ..adapters.pandalm import JUDGES

    g = gold_labels(data.labels)
    g = g.loc[g["gold"].notna(), ["task_id", "gold"]]
    code = {o: i for i, o in enumerate(OUTCOMES)}
    rows = []
    for judge in JUDGES:
        f = data.frame.loc[data.frame["judge"].astype(str) == judge]
        m = f[["task_id", "status", "outcome"]].merge(g, on="task_id", how="inner")
        bad = (m["status"].astype(str) != "ok").to_numpy()
        y = m["gold"].astype(object).map(code).to_numpy(dtype=np.int64)
        p = m["outcome"].astype(object).map(code).fillna(-1).to_numpy(dtype=np.int64)
        if unparsable == "tie":
            p = np.where(bad, code["tie"], p)
        elif unparsable == "exclude":
            y, p = y[~bad], p[~bad]
        scores = dict(zip(_METRICS, (100 * v for v in _scores(y, p)), strict=True))
        rest = {"n": len(y), "n_unparsable": int(bad.sum()), "unparsable": unparsable}
        rows.append({"judge": judge, **scores, **rest})
    return pd.DataFrame(rows)


def _accuracy(ctx: Context) -> dict[str, Any]:
    data = ctx.extra["data"]
    t = pd.concat([_judge_accuracy(data, u) for u in UNPARSABLE], ignore_index=True)
    pub = pd.DataFrame(
        [(j, "tie", *v) for j, v in PUBLISHED["judge_accuracy"].items()],
        columns=["judge", "unparsable", *(f"published_{m}" for m in _METRICS)],
    )
    t = t.merge(pub, on=["judge", "unparsable"], how="left")
    has = t["published_acc"].notna()
    same = np.ones(len(t), dtype=bool)
    for m in _METRICS:
        same &= (t[m].round(_DECIMALS) == t[f"published_{m}"]).to_numpy()
    t["match"] = pd.array(np.where(has, same, pd.NA), dtype="boolean")
    first = ["unparsable", "judge", "n", "n_unparsable"]
    return {"judge_accuracy": t[[*first, *[c for c in t.columns if c not in first]]]}


def _win_lose_tie_table(data: Any, unparsable: str) -> pd.DataFrame:
    """Wins, losses and ties of the row model against the column model, per source."""
    from ..adapters.pandalm import JUDGES

    f = data.frame
    sides = f.drop_duplicates("task_id")[["task_id", "with_system", "without_system"]]
    g = gold_labels(data.labels)
    parts = [g.assign(source="human", status="ok", outcome=g["gold"])]
    for judge in JUDGES:
        parts.append(f.loc[f["judge"].astype(str) == judge].assign(source=judge))
    cols = ["task_id", "source", "status", "outcome"]
    long = pd.concat([p[cols] for p in parts], ignore_index=True).merge(sides, on="task_id")
    rank = {m: i for i, m in enumerate(MODELS)}
    r1 = long["with_system"].map(rank)
    r2 = long["without_system"].map(rank)
    if r1.isna().any() or r2.isna().any():
        unknown = set(long.loc[r1.isna(), "with_system"]) | set(
            long.loc[r2.isna(), "without_system"]
        )
        unknown = sorted(unknown)
        raise DataError(f"models {unknown} are not among {list(MODELS)}", field="cmp_key")
    first_is_row = (r1 < r2).to_numpy()
    out = long["outcome"].astype(object).to_numpy()
    bad = (long["status"].astype(str) != "ok").to_numpy()
    out = np.where(bad, "tie" if unparsable == "tie" else "invalid", out)
    flip = {"win": "lose", "loss": "win", "tie": "tie", "invalid": "invalid"}
    same = {"win": "win", "loss": "lose", "tie": "tie", "invalid": "invalid"}
    long = long.assign(
        row_model=np.where(first_is_row, long["with_system"], long["without_system"]),
        col_model=np.where(first_is_row, long["without_system"], long["with_system"]),
        result=[(same if fr else flip)[o] for o, fr in zip(out, first_is_row, strict=True)],
    )
    keys = ["source", "row_model", "col_model"]
    table = long.groupby([*keys, "result"]).size().unstack(fill_value=0)
    table = table.reindex(columns=["win", "lose", "tie", "invalid"], fill_value=0).reset_index()
    table.columns.name = None
    order = {"human": 0, **{j: i + 1 for i, j in enumerate(JUDGES)}}
    key = table["source"].map(order) * 100 + table["row_model"].map(rank) * 10
    key = key + table["col_model"].map(rank)
    return table.iloc[np.argsort(key.to_numpy(), kind="stable")].reset_index(drop=True)


def _win_lose_tie(ctx: Context) -> dict[str, Any]:
    data = ctx.extra["data"]
    parts = [_win_lose_tie_table(data, u).assign(unparsable=u) for u in ("tie", "invalid")]
    t = pd.concat(parts, ignore_index=True)
    first = ["unparsable", "source", "row_model", "col_model"]
    return {"win_lose_tie": t[[*first, *[c for c in t.columns if c not in first]]]}


def _rate_cols(row: pd.Series) -> dict[str, float]:
    return {f"{r}{s}": float(row[f"{r}{s}"]) for r in _RATES for s in ("", "_ci_low", "_ci_high")}


def _ppi(ctx: Context) -> dict[str, Any]:
    """A judge's win rates corrected with a random ``ppi_fraction`` of the human majority labels."""
    from ..stats.ppi import ppi_win_rates
    from ..stats.rates import win_rates

    data, judge = ctx.extra["data"], str(ctx.params["ppi_judge"])
    seed = 0 if ctx.seed is None else int(ctx.seed)
    g = gold_labels(data.labels)
    g = g.loc[g["gold"].notna()].reset_index(drop=True)
    k = max(1, int(round(float(ctx.params["ppi_fraction"]) * len(g))))
    pick = np.sort(np.random.default_rng(seed).choice(len(g), size=k, replace=False))
    sample = g.iloc[pick]
    # The sheet's provenance (the seed and the majority votes' digest): a random sample.
    votes = g[["task_id"]].assign(gold=g["gold"].astype(str)).values.tolist()
    digest = hashlib.sha256(json.dumps(votes).encode()).hexdigest()
    labels = pd.DataFrame({"task_id": sample["task_id"], "replicate": sample["replicate"],
                           "labeler": "majority", "outcome": sample["gold"],
                           "sample_seed": seed, "frame_sha256": digest})  # fmt: skip
    frame = data.frame
    rows = []
    for name, part in (
        ("all human", g.assign(judge="all human", status="ok", outcome=g["gold"])),
        ("judge only", frame.loc[frame["judge"].astype(str) == judge].assign(judge="judge only")),
        ("labels only", labels.assign(judge="labels only", status="ok")),
    ):
        # The demonstration's table sets the estimators side by side: one row each.
        r = wide(win_rates(part, by="judge")).iloc[0]
        rows.append({"estimate": name, "n": int(r["n"]), **_rate_cols(r)})
    ppi = ppi_win_rates(frame, labels, judge=judge, n_resamples=ctx.n_resamples, rng=seed)
    ppi = wide(ppi).iloc[0]
    rows.append({"estimate": "PPI++", "n": int(ppi["n"]), **_rate_cols(ppi)})
    rows[-1]["n_labelled"] = int(ppi["n_labelled"])
    rows[-1]["ess_gain"] = float(ppi["win_rate_ess_gain"])
    t = pd.DataFrame(rows)
    truth = t.loc[0, "win_rate"]
    t["covers_human"] = (t["win_rate_ci_low"] <= truth) & (truth <= t["win_rate_ci_high"])
    t["n_labelled"] = t["n_labelled"].astype("Int64")  # a count (NA on the other rows)
    return {"ppi_demo": t.assign(judge=judge)}


def _findings(ctx: Context) -> dict[str, Any]:
    """The page's conclusion: one Markdown sentence per finding, built from the tables."""
    rows: list[tuple[str, str]] = []
    k = ctx.tables["annotator_kappas"]
    rows.append(("annotators", (
        "* **Annotators.** Cohen's kappa "
        + ", ".join(
            f"{r['a'][-1]}–{r['b'][-1]} {r['kappa']:.3f} [{r['ci_low']:.3f}, "
            f"{r['ci_high']:.3f}]"
            for r in k.to_dict("records")
        )
        + f"; published {', '.join(f'{v:.2f}' for v in k['published'])}: "
        f"{int(k['match'].sum())} of {len(k)} match to 2 decimals."
    )))  # fmt: skip
    c = ctx.tables["label_counts"]
    rows.append(("labels", (
        "* **Majority vote.** "
        + ", ".join(f"{r['label']}: {r['n']}" for r in c.to_dict("records"))
        + f" ({int(c['match'].sum())} of {len(c)} counts as published; "
        f"{int(c['no_majority'].iloc[0])} items without a majority)."
    )))  # fmt: skip
    a = ctx.tables["judge_accuracy"]
    for r in a.to_dict("records"):
        figures = " / ".join(f"{r[m]:.2f}" for m in _METRICS)
        if r["unparsable"] == "tie":
            pub = " / ".join(f"{r[f'published_{m}']:.2f}" for m in _METRICS)
            text = (
                f"* **{r['judge']}, unparsable counted as tie** (how the published figures "
                f"were computed; {r['n_unparsable']} unparsable): Acc / P / R / F1 {figures} "
                f"(published {pub}: {'match' if r['match'] else 'DIFFERENT'})."
            )
        elif r["unparsable"] == "invalid":
            text = (
                f"* **{r['judge']}, unparsable kept invalid** (always wrong, no class gains "
                f"from it): Acc / P / R / F1 {figures}."
            )
        else:
            text = (
                f"* **{r['judge']}, unparsable left out** (n = {r['n']}): Acc / P / R / F1 "
                f"{figures}."
            )
        rows.append(("accuracy", text))
    p = ctx.tables["ppi_demo"].set_index("estimate")
    human = p.loc["all human"]

    def _rate(name: str) -> str:
        r = p.loc[name]
        return (
            f"{r['win_rate']:.3f} [{r['win_rate_ci_low']:.3f}, {r['win_rate_ci_high']:.3f}]"
            f"{'' if r['covers_human'] else ' (misses it)'}"
        )

    ppi = p.loc["PPI++"]
    rows.append(("ppi", (
        f"* **PPI.** The all-human win rate of response1 is {human['win_rate']:.3f}; "
        f"{p['judge'].iloc[0]} alone gives {_rate('judge only')}, the "
        f"{int(p.loc['labels only', 'n'])} sampled labels alone {_rate('labels only')}, "
        f"and PPI++ (the judge corrected by those labels) {_rate('PPI++')}, an "
        f"effective-sample-size gain of {float(ppi['ess_gain']):.2f} over the labels "
        "alone."
    )))  # fmt: skip
    return findings(rows)


def sections() -> tuple[Section, ...]:
    return (
        Section("annotator_kappas", _PAGE, _kappas),
        Section("label_counts", _PAGE, _counts),
        Section("judge_accuracy", _PAGE, _accuracy),
        Section("win_lose_tie", _PAGE, _win_lose_tie),
        Section("ppi_demo", _PAGE, _ppi),
        Section("findings", _PAGE, _findings),
    )
