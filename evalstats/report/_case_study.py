"""The AlpacaEval case study report kind: every number of ``case_study_alpaca_eval.ipynb``.

No statistics live here: each table is the output of a package function
(:func:`~evalstats.adapters.alpaca_eval.leaderboard_row` and
:func:`~evalstats.adapters.alpaca_eval.compare_leaderboard`,
:func:`~evalstats.adapters.alpaca_eval.judge_agreement_by_model`,
:func:`evalstats.stats.models.length_bias`,
:func:`evalstats.stats.rates.se_comparison`), put side by side with what AlpacaEval
published; the findings the page closes with are sentences built from those tables, stored
in ``results.json`` with them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import wide, with_diagnostics
from ._kinds import Context, Loaded, Section, Unavailable

__all__ = ["LENGTH_BINS", "LENGTH_MEASURE", "check", "describe_parameters", "detect", "load"]

LENGTH_BINS = 5
LENGTH_MEASURE = "log_ratio"
# Groups of the case study: AlpacaEval's leaderboard row key.
_KEYS = ["model", "baseline", "annotator"]
# Clusterings compared with AlpacaEval's IID standard error: the instruction (one record per
# instruction, so it should equal the IID SE) and the instruction's source data set.
_CLUSTERINGS = (("instruction", "task_id"), ("dataset", "dataset"))


def detect(data: Path) -> bool:
    from ..adapters.alpaca_eval import annotation_files

    return bool(annotation_files(data))


def check(data: Path) -> None:
    from ..adapters.alpaca_eval import annotation_files

    annotation_files(data, required=True)


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    """The annotation files (all of them), read once, and the published rows if present."""
    from ..adapters import alpaca_eval as ae

    files = ae.annotation_files(d, required=True)
    f = ae.load(files) if frame is None else frame
    pub = ae.published_rows(d)
    inputs = list(files)
    for extra in (d / ae.LEADERBOARD_FILE, d / "truth.json"):
        if extra.exists():
            inputs.append(extra)
    return Loaded(
        frame=f,
        inputs=inputs,
        describe={
            "leaderboard_source": pub[1] if pub is not None else None,
            "models": sorted(f["model"].astype(str).unique()),
            "baselines": sorted(f["baseline"].astype(str).unique()),
            "annotators": sorted(f["judge"].astype(str).unique()),
        },
        extra={"published": pub[0] if pub is not None else None},
    )


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    from ..adapters.alpaca_eval import REL_TOLERANCE

    return {
        "confidence": float(p["confidence"]),
        "n_resamples": int(p["n_resamples"]),
        "seed": p["seed"],
        "length_bins": LENGTH_BINS,
        "length_measure": LENGTH_MEASURE,
        "rel_tolerance": REL_TOLERANCE,
    }


def _seeds(ctx: Context) -> list[np.random.SeedSequence]:
    """The agreement's and the standard errors' seeds: two children of the one seed (fresh
    on every computation: spawning is stateful)."""
    return np.random.SeedSequence(ctx.seed).spawn(2)


def _leaderboard(ctx: Context) -> dict[str, Any]:
    from ..adapters import alpaca_eval as ae

    board = ae.leaderboard_row(ctx.frame, confidence=ctx.confidence)
    published = ctx.extra["published"]
    out: dict[str, Any] = {"leaderboard": ae.compare_leaderboard(board, published)}
    if published is None:
        out["published_leaderboard"] = Unavailable(
            f"no {ae.LEADERBOARD_FILE} in the data directory: reproduced values only"
        )
    return out


def _agreement(ctx: Context) -> dict[str, Any]:
    from ..adapters.alpaca_eval import judge_agreement_by_model

    try:
        table = judge_agreement_by_model(
            ctx.frame,
            confidence=ctx.confidence,
            n_resamples=ctx.n_resamples,
            rng=np.random.default_rng(_seeds(ctx)[0]),
        )
    except ValueError as exc:  # a single annotator per model: nothing to compare
        raise Unavailable(str(exc)) from None
    return {"agreement": table}


def _length(ctx: Context) -> dict[str, Any]:
    from ..stats.models import length_bias

    try:
        lb = length_bias(ctx.frame, bins=LENGTH_BINS, x=LENGTH_MEASURE, confidence=ctx.confidence)
    except ValueError as exc:  # no output lengths in the annotations
        return {"length_bias": Unavailable(str(exc)), "length_slope": Unavailable(str(exc))}
    lb = lb.rename(columns={"judge": "annotator"})
    return {"length_bias": lb, "length_slope": _length_slopes(lb)}


def _length_slopes(lb: pd.DataFrame) -> pd.DataFrame:
    """One row per group: the logistic slope of win on the length log-ratio, and the odds
    ratio of a win when the model's output is twice as long (a monotone map of the slope)."""
    cols = [
        *_KEYS,
        "x",
        "n_group",
        "intercept",
        "slope",
        "slope_se",
        "slope_ci_low",
        "slope_ci_high",
        "slope_p",
    ]
    out = lb.drop_duplicates(_KEYS)[cols].reset_index(drop=True)
    if (out["x"] == "log_ratio").all():
        ln2 = math.log(2.0)
        out["odds_ratio_doubling"] = np.exp(out["slope"] * ln2)
        out["odds_ratio_doubling_ci_low"] = np.exp(out["slope_ci_low"] * ln2)
        out["odds_ratio_doubling_ci_high"] = np.exp(out["slope_ci_high"] * ln2)
    return out


def _standard_errors(ctx: Context) -> dict[str, Any]:
    """AlpacaEval's IID SE of the win rate (``pandas.Series.sem`` of ``(preference - 1) *
    100``) beside the CR1 and cluster-bootstrap SEs clustered by instruction and by source
    data set; rates in percentage points, as AlpacaEval publishes them."""
    from ..stats.rates import se_comparison

    frame = ctx.frame
    ok = (frame["status"] == "ok").to_numpy(dtype=bool)
    f = pd.DataFrame(
        {
            "model": frame["model"].astype(str),
            "baseline": frame["baseline"].astype(str),
            "annotator": frame["judge"].astype(str),
            "task_id": frame["task_id"].astype(str),
            "dataset": frame["dataset"],
            "_pp": frame["win_share"].to_numpy(np.float64, na_value=np.nan) * 100.0,
        }
    ).loc[ok]
    out: dict[str, Any] = {}
    clusterings = list(_CLUSTERINGS)
    if f["dataset"].isna().any():
        clusterings = [c for c in clusterings if c[0] != "dataset"]
        out["standard_errors_by_dataset"] = Unavailable(
            "some annotations have no dataset field: no clustering by source data set"
        )
    table = se_comparison(
        f,
        "_pp",
        by=_KEYS,
        clusterings=clusterings,
        confidence=ctx.confidence,
        n_resamples=ctx.n_resamples,
        rng=_seeds(ctx)[1],
        estimate="win_rate",
        iid_note="AlpacaEval's pandas sem, records independent",
    )
    return {"standard_errors": table, **out}


def _name(v: Any) -> str:
    return f"`{v}`"


def _findings(ctx: Context) -> dict[str, Any]:
    """The page's conclusion: one sentence per finding, from the tables above (Markdown)."""
    rows: list[tuple[str, str]] = []
    board = ctx.tables["leaderboard"]
    both = board.loc[board["match"].notna()]
    missing = board.loc[board["win_rate_reproduced"].isna()]
    if len(both):
        rows.append(
            (
                "leaderboard",
                f"* **Leaderboard.** {int(both['match'].sum())} of {len(both)} published rows "
                f"with annotations are reproduced (every count equal, every rate within a "
                f"relative {describe_parameters(ctx.params)['rel_tolerance']:g}; largest "
                f"relative difference {float(both['max_rel_diff'].max()):.1e})"
                + (
                    f"; {len(missing)} published row(s) have no annotations in the data."
                    if len(missing)
                    else "."
                ),
            )
        )
    agreement = wide(ctx.tables.get("agreement"))  # a sentence reads a model's row across
    if agreement is not None:
        for row in agreement.loc[agreement["judge_a"] != "all judges"].to_dict("records"):
            rows.append(
                (
                    "agreement",
                    f"* **Agreement, {_name(row['model'])}.** The annotators disagree on "
                    f"{row['disagreements']} of {row['n']} pairs "
                    f"({row['disagreement_rate']:.1%}); kappa {row['kappa']:.2f} "
                    f"[{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}], "
                    f"AC1 {row['ac1']:.2f}, PABAK {row['pabak']:.2f}.",
                )
            )
    slopes = ctx.tables.get("length_slope")
    if slopes is not None and "odds_ratio_doubling" in slopes:
        for row in slopes.to_dict("records"):
            rows.append(
                (
                    "length",
                    f"* **Length, {_name(row['model'])} · {_name(row['annotator'])}.** The odds "
                    f"of a win multiply by {row['odds_ratio_doubling']:.2f} "
                    f"[{row['odds_ratio_doubling_ci_low']:.2f}, "
                    f"{row['odds_ratio_doubling_ci_high']:.2f}] "
                    "when the model's answer is twice as long.",
                )
            )
    ses = ctx.tables["standard_errors"]
    by_dataset = ses.loc[ses["clustering"] == "dataset"]
    by_instruction = ses.loc[ses["clustering"] == "instruction"]
    if len(by_instruction):
        rows.append(
            (
                "standard_errors",
                "* **Standard errors.** Clustered by instruction, the SE equals AlpacaEval's "
                f"IID SE (se_ratio {by_instruction['se_ratio'].min():.3f}–"
                f"{by_instruction['se_ratio'].max():.3f}; bootstrap "
                f"{by_instruction['boot_se_ratio'].min():.2f}–"
                f"{by_instruction['boot_se_ratio'].max():.2f})"
                + (
                    f"; clustered by the {int(by_dataset['n_clusters'].max())} source data "
                    f"sets it is {by_dataset['se_ratio'].min():.1f}–"
                    f"{by_dataset['se_ratio'].max():.1f} times larger, a rough estimate from "
                    "so few clusters."
                    if len(by_dataset)
                    else "."
                ),
            )
        )
    return {"findings": pd.DataFrame(rows, columns=["topic", "text"])}


def sections() -> tuple[Section, ...]:
    page = "case_study_alpaca_eval"
    return (
        Section("leaderboard", page, _leaderboard),
        Section("agreement", page, lambda ctx: with_diagnostics(_agreement(ctx))),
        Section("length_bias", page, _length),
        Section("standard_errors", page, _standard_errors),
        Section("findings", page, _findings),
    )
