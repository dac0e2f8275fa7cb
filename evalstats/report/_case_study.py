"""The AlpacaEval case study report kind: the leaderboard recomputed and set beside the
published rows, the annotators' agreement, the length bias and AlpacaEval's IID standard
error beside clustered ones, and the findings in words."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._tidy import tidy_frame, wide, with_detail, with_diagnostics
from .._validate import check_columns
from ..errors import DataError, ParameterError
from ._kinds import Context, Loaded, Section, Unavailable, base_parameters, findings

__all__ = ["LENGTH_BINS", "LENGTH_MEASURE", "check", "describe_parameters", "detect", "load"]

LENGTH_BINS = 5
LENGTH_MEASURE = "log_ratio"
_KEYS = ["model", "baseline", "annotator"]
# Clusterings beside AlpacaEval's IID SE: the instruction (equal to it) and its source data set.
_CLUSTERINGS = (("instruction", "task_id"), ("dataset", "dataset"))


# The columns AlpacaEval publishes in its leaderboard CSVs, in their order.
LEADERBOARD_COLUMNS = tuple(
    "win_rate standard_error n_wins n_wins_base n_draws n_total discrete_win_rate avg_length".split()
)


def leaderboard_row(frame: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame:
    """AlpacaEval's :data:`LEADERBOARD_COLUMNS` per (model, baseline, annotator), recomputed.

    ``win_rate`` is the mean of ``preference - 1`` x 100 with its task-clustered SE (with one
    record per instruction, AlpacaEval's ``sem``) and t interval; the counts and
    ``discrete_win_rate`` come from :func:`evalstats.win_rates`; ``avg_length`` is truncated
    as AlpacaEval does.
    """
    check_columns(
        frame,
        ["model", "baseline", "judge", "task_id", "status", "outcome", "win_share"],
        what="frame (expected from alpaca_eval.load)",
    )
    from ..adapters.alpaca_eval import GROUP_COLUMNS
    from ..stats.rates import cluster_mean, win_rates

    if frame.empty:
        raise ParameterError("the frame has no annotations")
    keys = list(GROUP_COLUMNS)
    ok = (frame["status"] == "ok").to_numpy(dtype=bool)
    f = frame.assign(
        judge=frame["judge"].astype(str),
        model=frame["model"].astype(str),
        baseline=frame["baseline"].astype(str),
        _share=np.where(ok, frame["win_share"].to_numpy(np.float64, na_value=np.nan), np.nan),
    )
    cont = cluster_mean(f, "_share", cluster="task_id", by=keys, confidence=confidence)
    cont = with_detail(cont).rename(columns={"estimate": "mean"})
    disc = wide(win_rates(f, by=keys, cluster="task_id", method="cluster_t", confidence=confidence))
    board = cont.merge(disc, on=keys, how="outer", suffixes=("", "_disc"), validate="1:1")
    if "len_with" in f.columns:
        lengths = f.assign(_len=f["len_with"].astype("Float64")).groupby(keys, sort=False)["_len"]
        board = board.merge(lengths.mean().rename("_avg_len").reset_index(), on=keys, how="left")
        avg = board["_avg_len"].to_numpy(np.float64, na_value=np.nan)
    else:
        avg = np.full(len(board), np.nan)
    out = pd.DataFrame(
        {
            "model": board["model"],
            "baseline": board["baseline"],
            "annotator": board["judge"],
            "win_rate": board["mean"] * 100.0,
            "standard_error": board["se"] * 100.0,
            "n_wins": board["wins"].astype(np.int64),
            "n_wins_base": board["losses"].astype(np.int64),
            "n_draws": board["ties"].astype(np.int64),
            "n_total": board["n_disc"].astype(np.int64),
            "discrete_win_rate": board["score"] * 100.0,
            # AlpacaEval writes int(mean length): truncation, not rounding.
            "avg_length": pd.array([pd.NA if np.isnan(a) else int(a) for a in avg], dtype="Int64"),
            # The win rate lives on [0, 100]; a t interval on few tasks can overshoot.
            "win_rate_ci_low": np.clip(board["ci_low"] * 100.0, 0.0, 100.0),
            "win_rate_ci_high": np.clip(board["ci_high"] * 100.0, 0.0, 100.0),
            "discrete_standard_error": board["score_se"] * 100.0,
            "n_tasks": board["n_tasks"].astype(np.int64),
            "n_invalid": board["invalid"].astype(np.int64),
            "method": "cluster_t",
            "confidence": float(confidence),
        }
    )
    return out.sort_values(["model", "baseline", "annotator"], kind="stable").reset_index(drop=True)


def judge_agreement_by_model(frame: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """:func:`evalstats.judge_agreement` within each (model, baseline) of 2+ annotators, stacked."""
    from ..adapters.alpaca_eval import RUBRIC
    from ..stats.agreement import judge_agreement

    check_columns(frame, ["model", "baseline", "judge"], what="frame")
    kwargs.setdefault("rubric", RUBRIC)
    parts = []
    for (model, baseline), sub in frame.groupby(["model", "baseline"], sort=True, observed=True):
        if sub["judge"].astype(str).nunique() < 2:
            continue
        parts.append((model, baseline, judge_agreement(sub, **kwargs)))
    if not parts:
        raise ParameterError("no (model, baseline) has two or more annotators to compare")
    keys = {"model": [m for m, _, _ in parts], "baseline": [b for _, b, _ in parts]}

    def stacked(frames: list[pd.DataFrame]) -> pd.DataFrame:
        out = pd.concat(
            [f.assign(model=m, baseline=b) for f, m, b in zip(frames, *keys.values(), strict=True)],
            ignore_index=True,
        )
        return out[[*keys, *(c for c in out.columns if c not in keys)]]

    rows = stacked([pd.DataFrame(r) for _, _, r in parts])
    diagnostics = stacked([r.diagnostics for _, _, r in parts])
    return tidy_frame(rows, by=[*keys, *parts[0][2].by], diagnostics=diagnostics)


LEADERBOARD_FILE = "leaderboard_rows.json"  # the published rows (optional input)
# A recomputation summing in another order differs by ~1e-15 relative; counts must be equal.
REL_TOLERANCE = 1e-12
COUNT_COLUMNS = ("n_wins", "n_wins_base", "n_draws", "n_total", "avg_length")


def published_rows(data_dir: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], str] | None:
    """The rows (CSV cells as strings) of the published leaderboard and its source, or None."""
    path = Path(data_dir) / LEADERBOARD_FILE
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"unreadable leaderboard file: {exc}", path=path) from None
    rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise DataError("expected an object with a 'rows' list of objects", path=path)
    for i, r in enumerate(rows):
        for field in ("model", "annotator"):
            if not isinstance(r.get(field), str) or not r[field]:
                raise DataError(f"row {i} lacks a {field!r} string", path=path, field=field)
    return rows, str(doc.get("source", ""))


def _published_number(value: Any, *, integer: bool) -> Any:
    """A published CSV cell (a string such as "103.0" or "12.9") as a number; None if empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise DataError(f"published value {value!r} is not a number") from None
    if integer:
        if not x.is_integer():
            raise DataError(f"published count {value!r} is not a whole number")
        return int(x)
    return x


def compare_leaderboard(
    board: pd.DataFrame, published: list[dict[str, Any]] | None
) -> pd.DataFrame:
    """Reproduced and published columns side by side, per (model, annotator), and ``match``."""
    mine = {(r["model"], r["annotator"]): r for r in board.to_dict("records")}
    theirs = {(r["model"], r["annotator"]): r for r in (published or [])}
    keys = list(theirs) + sorted(set(mine) - set(theirs))
    rows = []
    for key in keys:
        rep, pub = mine.get(key), theirs.get(key)
        row: dict[str, Any] = {
            "model": key[0],
            "annotator": key[1],
            "baseline": rep["baseline"] if rep is not None else None,
            "mode": pub.get("mode") if pub is not None else None,
        }
        rel = []
        counts_equal = True
        for col in LEADERBOARD_COLUMNS:
            integer = col in COUNT_COLUMNS
            p = _published_number(pub.get(col), integer=integer) if pub is not None else None
            r = rep[col] if rep is not None else None
            r = None if r is None or r is pd.NA else (int(r) if integer else float(r))
            row[f"{col}_published"] = p
            row[f"{col}_reproduced"] = r
            row[f"{col}_abs_diff"] = abs(r - p) if p is not None and r is not None else None
            if p is None or r is None:
                continue
            if integer:
                counts_equal &= r == p
            else:
                rel.append(abs(r - p) / abs(p) if p != 0 else (0.0 if r == 0 else math.inf))
        both = pub is not None and rep is not None
        row["max_rel_diff"] = max(rel) if both and rel else None
        row["rel_tolerance"] = REL_TOLERANCE
        row["match"] = bool(counts_equal and all(x <= REL_TOLERANCE for x in rel)) if both else None
        lc = pub.get("length_controlled_winrate") if pub is not None else None
        row["length_controlled_winrate_published"] = _published_number(lc, integer=False)
        if rep is None:
            row["note"] = "published, but the data hold no annotations for this row"
        elif published is None:
            row["note"] = f"no {LEADERBOARD_FILE}: reproduced values only"
        elif pub is None:
            row["note"] = f"not in {LEADERBOARD_FILE}"
        else:
            row["note"] = None
        rows.append(row)
    out = pd.DataFrame(rows)
    kinds = ("published", "reproduced", "abs_diff")
    dtypes = {f"{c}_{k}": "Int64" if c in COUNT_COLUMNS else "Float64"
              for c in LEADERBOARD_COLUMNS for k in kinds}  # fmt: skip
    dtypes |= dict.fromkeys(["max_rel_diff", "length_controlled_winrate_published"], "Float64")
    dtypes["match"] = "boolean"
    out = out.assign(**{c: pd.array(out[c].tolist(), dtype=d) for c, d in dtypes.items()})
    return out.astype(dict.fromkeys(["baseline", "mode", "note"], "string"))


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
    pub = published_rows(d)
    inputs = list(files)
    for extra in (d / LEADERBOARD_FILE, d / "truth.json"):
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
    return {
        **base_parameters(p),
        "length_bins": LENGTH_BINS,
        "length_measure": LENGTH_MEASURE,
        "rel_tolerance": REL_TOLERANCE,
    }


def _seeds(ctx: Context) -> list[np.random.SeedSequence]:
    """Two child seeds of the one seed: the agreement's and the standard errors'."""
    return np.random.SeedSequence(ctx.seed).spawn(2)


def _leaderboard(ctx: Context) -> dict[str, Any]:
    board = leaderboard_row(ctx.frame, confidence=ctx.confidence)
    published = ctx.extra["published"]
    out: dict[str, Any] = {"leaderboard": compare_leaderboard(board, published)}
    if published is None:
        out["published_leaderboard"] = Unavailable(
            f"no {LEADERBOARD_FILE} in the data directory: reproduced values only"
        )
    return out


def _agreement(ctx: Context) -> dict[str, Any]:
    try:
        table = judge_agreement_by_model(ctx.frame, confidence=ctx.confidence,
                                         n_resamples=ctx.n_resamples,
                                         rng=np.random.default_rng(_seeds(ctx)[0]))  # fmt: skip
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
    # Per group: the length slope and the odds ratio of a win at twice the length.
    slope = "x n_group intercept slope slope_se slope_ci_low slope_ci_high slope_p".split()
    out = lb.drop_duplicates(_KEYS)[[*_KEYS, *slope]].reset_index(drop=True)
    if (out["x"] == "log_ratio").all():
        for end in ("", "_ci_low", "_ci_high"):
            out[f"odds_ratio_doubling{end}"] = np.exp(out[f"slope{end}"] * math.log(2.0))
    return {"length_bias": lb, "length_slope": out}


def _standard_errors(ctx: Context) -> dict[str, Any]:
    """AlpacaEval's IID SE of the win rate beside clustered ones (percentage points)."""
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
    table = se_comparison(f, "_pp", by=_KEYS, clusterings=clusterings, confidence=ctx.confidence,
                          n_resamples=ctx.n_resamples, rng=_seeds(ctx)[1], estimate="win_rate",
                          iid_note="AlpacaEval's pandas sem, records independent")  # fmt: skip
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
        rows.append(("leaderboard", (
            f"* **Leaderboard.** {int(both['match'].sum())} of {len(both)} published rows "
            f"with annotations are reproduced (every count equal, every rate within a "
            f"relative {describe_parameters(ctx.params)['rel_tolerance']:g}; largest "
            f"relative difference {float(both['max_rel_diff'].max()):.1e})"
            + (f"; {len(missing)} published row(s) have no annotations in the data."
               if len(missing) else ".")
        )))  # fmt: skip
    agreement = wide(ctx.tables.get("agreement"))  # a sentence reads a model's row across
    if agreement is not None:
        for row in agreement.loc[agreement["judge_a"] != "all judges"].to_dict("records"):
            rows.append(("agreement", (
                f"* **Agreement, {_name(row['model'])}.** The annotators disagree on "
                f"{row['disagreements']} of {row['n']} pairs "
                f"({row['disagreement_rate']:.1%}); kappa {row['kappa']:.2f} "
                f"[{row['kappa_ci_low']:.2f}, {row['kappa_ci_high']:.2f}], "
                f"AC1 {row['ac1']:.2f}, PABAK {row['pabak']:.2f}."
            )))  # fmt: skip
    slopes = ctx.tables.get("length_slope")
    if slopes is not None and "odds_ratio_doubling" in slopes:
        for row in slopes.to_dict("records"):
            rows.append(("length", (
                f"* **Length, {_name(row['model'])} · {_name(row['annotator'])}.** The odds "
                f"of a win multiply by {row['odds_ratio_doubling']:.2f} "
                f"[{row['odds_ratio_doubling_ci_low']:.2f}, "
                f"{row['odds_ratio_doubling_ci_high']:.2f}] "
                "when the model's answer is twice as long."
            )))  # fmt: skip
    ses = ctx.tables["standard_errors"]
    by_dataset = ses.loc[ses["clustering"] == "dataset"]
    by_instruction = ses.loc[ses["clustering"] == "instruction"]
    if len(by_instruction):
        rows.append(("standard_errors", (
            "* **Standard errors.** Clustered by instruction, the SE equals AlpacaEval's "
            f"IID SE (se_ratio {by_instruction['se_ratio'].min():.3f}–"
            f"{by_instruction['se_ratio'].max():.3f}; bootstrap "
            f"{by_instruction['boot_se_ratio'].min():.2f}–"
            f"{by_instruction['boot_se_ratio'].max():.2f})"
            + (f"; clustered by the {int(by_dataset['n_tasks'].max())} source data "
               f"sets it is {by_dataset['se_ratio'].min():.1f}–"
               f"{by_dataset['se_ratio'].max():.1f} times larger, a rough estimate from "
               "so few clusters." if len(by_dataset) else ".")
        )))  # fmt: skip
    return findings(rows)


def sections() -> tuple[Section, ...]:
    page = "case_study_alpaca_eval"
    return (
        Section("leaderboard", page, _leaderboard),
        Section("agreement", page, lambda ctx: with_diagnostics(_agreement(ctx))),
        Section("length_bias", page, _length),
        Section("standard_errors", page, _standard_errors),
        Section("findings", page, _findings),
    )
