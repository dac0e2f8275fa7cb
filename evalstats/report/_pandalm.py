"""The PandaLM case study report kind: every number of ``case_study_pandalm.ipynb``.

The data (PandaLM's ``data/*.json``, gzipped or not) are read once with
:func:`evalstats.adapters.pandalm.load`; each section calls a package function
(:func:`evalstats.stats.agreement.labeler_agreement`, :func:`~evalstats.adapters.pandalm.label_counts`,
:func:`~evalstats.adapters.pandalm.judge_accuracy`, :func:`~evalstats.adapters.pandalm.win_lose_tie`,
:func:`~evalstats.adapters.pandalm.ppi_demo`) and puts PandaLM's published figures
(:data:`~evalstats.adapters.pandalm.PUBLISHED`, its README) beside the reproduced ones, with a
``match`` column at the printed precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DataError
from ._kinds import Context, Loaded, Section

__all__ = ["check", "describe_parameters", "detect", "load", "sections"]

_PAGE = "case_study_pandalm"
_NAMES = ("testset-v1.json", "gpt-3.5-turbo-testset-v1.json", "pandalm-7b-testset-v1.json")
# PandaLM prints kappas to 2 decimals and the accuracy figures (percent) to 2 decimals.
_DECIMALS = 2


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
        "confidence": float(p["confidence"]),
        "n_resamples": int(p["n_resamples"]),
        "seed": p["seed"],
        "ppi_judge": str(p["ppi_judge"]),
        "ppi_fraction": float(p["ppi_fraction"]),
        "match_rule": f"reproduced value rounded to {_DECIMALS} decimals equals the published",
    }


def _kappas(ctx: Context) -> dict[str, Any]:
    from ..adapters.pandalm import PUBLISHED
    from ..stats.agreement import labeler_agreement

    t = labeler_agreement(
        ctx.extra["data"].labels,
        confidence=ctx.confidence,
        n_resamples=ctx.n_resamples,
        rng=np.random.default_rng(np.random.SeedSequence(ctx.seed).spawn(1)[0]),
    )
    t = t[["a", "b", "n", "kappa", "ci_low", "ci_high", "observed_agreement"]].copy()
    pub = PUBLISHED["annotator_kappa"]
    t.insert(4, "published", [pub.get((a, b)) for a, b in zip(t["a"], t["b"], strict=True)])
    t["match"] = t["kappa"].round(_DECIMALS) == t["published"]
    return {"annotator_kappas": t}


def _counts(ctx: Context) -> dict[str, Any]:
    from ..adapters.pandalm import PUBLISHED, label_counts

    t = label_counts(data=ctx.extra["data"])
    no_majority = int(t.attrs.get("no_majority", 0))
    t = pd.DataFrame({"label": t["label"], "n": t["n"]})
    t["published"] = t["label"].map(PUBLISHED["label_counts"])
    t["match"] = t["n"] == t["published"]
    t["no_majority"] = no_majority
    return {"label_counts": t}


_METRICS = ("acc", "precision", "recall", "f1")


def _accuracy(ctx: Context) -> dict[str, Any]:
    from ..adapters.pandalm import PUBLISHED, UNPARSABLE, judge_accuracy

    data = ctx.extra["data"]
    t = pd.concat([judge_accuracy(data=data, unparsable=u) for u in UNPARSABLE], ignore_index=True)
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


def _win_lose_tie(ctx: Context) -> dict[str, Any]:
    from ..adapters.pandalm import win_lose_tie

    data = ctx.extra["data"]
    t = pd.concat(
        [win_lose_tie(data=data, unparsable=u).assign(unparsable=u) for u in ("tie", "invalid")],
        ignore_index=True,
    )
    first = ["unparsable", "source", "row_model", "col_model"]
    return {"win_lose_tie": t[[*first, *[c for c in t.columns if c not in first]]]}


def _ppi(ctx: Context) -> dict[str, Any]:
    from ..adapters.pandalm import ppi_demo

    seed = 0 if ctx.seed is None else int(ctx.seed)
    t = ppi_demo(
        data=ctx.extra["data"],
        judge=str(ctx.params["ppi_judge"]),
        fraction=float(ctx.params["ppi_fraction"]),
        seed=seed,
        n_resamples=ctx.n_resamples,
    )
    t["n_labelled"] = t["n_labelled"].astype("Int64")  # a count (NA on the other rows)
    return {"ppi_demo": t.assign(judge=str(ctx.params["ppi_judge"]))}


def _findings(ctx: Context) -> dict[str, Any]:
    """The page's conclusion: one Markdown sentence per finding, built from the tables."""
    rows: list[tuple[str, str]] = []
    k = ctx.tables["annotator_kappas"]
    rows.append(
        (
            "annotators",
            "* **Annotators.** Cohen's kappa "
            + ", ".join(
                f"{r['a'][-1]}–{r['b'][-1]} {r['kappa']:.3f} [{r['ci_low']:.3f}, "
                f"{r['ci_high']:.3f}]"
                for r in k.to_dict("records")
            )
            + f"; published {', '.join(f'{v:.2f}' for v in k['published'])}: "
            f"{int(k['match'].sum())} of {len(k)} match to 2 decimals.",
        )
    )
    c = ctx.tables["label_counts"]
    rows.append(
        (
            "labels",
            "* **Majority vote.** "
            + ", ".join(f"{r['label']}: {r['n']}" for r in c.to_dict("records"))
            + f" ({int(c['match'].sum())} of {len(c)} counts as published; "
            f"{int(c['no_majority'].iloc[0])} items without a majority).",
        )
    )
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
    rows.append(
        (
            "ppi",
            f"* **PPI.** The all-human win rate of response1 is {human['win_rate']:.3f}; "
            f"{p['judge'].iloc[0]} alone gives {_rate('judge only')}, the "
            f"{int(p.loc['labels only', 'n'])} sampled labels alone {_rate('labels only')}, "
            f"and PPI++ (the judge corrected by those labels) {_rate('PPI++')}, an "
            f"effective-sample-size gain of {float(ppi['ess_gain']):.2f} over the labels "
            "alone.",
        )
    )
    return {"findings": pd.DataFrame(rows, columns=["topic", "text"])}


def sections() -> tuple[Section, ...]:
    return (
        Section("annotator_kappas", _PAGE, _kappas),
        Section("label_counts", _PAGE, _counts),
        Section("judge_accuracy", _PAGE, _accuracy),
        Section("win_lose_tie", _PAGE, _win_lose_tie),
        Section("ppi_demo", _PAGE, _ppi),
        Section("findings", _PAGE, _findings),
    )
