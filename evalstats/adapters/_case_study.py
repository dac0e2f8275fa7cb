"""Every number of the AlpacaEval case study, computed in one place from one data directory.

``notebooks/case_study_alpaca_eval.ipynb`` calls :func:`compute_case_study` once and displays
its tables; ``results.json`` is :meth:`~evalstats.results.Results.to_json` of the very object
the notebook displayed, so the page and the JSON cannot disagree (a test recomputes one from the
same inputs and compares every number).

No statistics live here: each table is the output of a package function
(:func:`~evalstats.adapters.alpaca_eval.leaderboard_row`,
:func:`~evalstats.adapters.alpaca_eval.judge_agreement_by_model`,
:func:`~evalstats.adapters.alpaca_eval.length_bias`, :func:`evalstats.cluster_mean`,
:func:`evalstats.cluster_bootstrap`), put side by side with what AlpacaEval published.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..errors import DataError
from ..results import Results, _is_simulated, _tidy, input_digests, run_provenance
from ..stats.means import cluster_mean
from ..stats.resample import cluster_bootstrap
from . import alpaca_eval as _ae

__all__ = [
    "LEADERBOARD_FILE",
    "LENGTH_BINS",
    "REL_TOLERANCE",
    "compute_case_study",
    "published_rows",
]

# AlpacaEval's published leaderboard rows for the annotated models (optional input).
LEADERBOARD_FILE = "leaderboard_rows.json"
# Published rates carry every digit of a float64 (16-17 significant digits); a recomputation
# that sums in another order differs in the last one or two, ~1e-15 relative. Agreement to
# 1e-12 relative is agreement to every digit a paper could print; counts must be equal.
REL_TOLERANCE = 1e-12
RATE_COLUMNS = ("win_rate", "standard_error", "discrete_win_rate")
COUNT_COLUMNS = ("n_wins", "n_wins_base", "n_draws", "n_total", "avg_length")
LENGTH_BINS = 5
LENGTH_MEASURE = "log_ratio"
# Groups of the case study: AlpacaEval's leaderboard row key.
_KEYS = ["model", "baseline", "annotator"]
# Clusterings compared with AlpacaEval's IID standard error: the instruction (one record per
# instruction, so it should equal the IID SE) and the instruction's source data set.
_CLUSTERINGS = (("instruction", "task_id"), ("dataset", "dataset"))


def published_rows(data_dir: str | os.PathLike[str]) -> tuple[list[dict[str, Any]], str] | None:
    """The rows of ``DATA_DIR/leaderboard_rows.json`` and their ``source``; None if absent.

    The file is ``{"source": str, "rows": [{"model": ..., "annotator": ..., <column>: str}]}``
    with AlpacaEval's leaderboard CSV cells as strings.
    """
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


def _leaderboard_table(board: pd.DataFrame, published: list[dict[str, Any]] | None) -> pd.DataFrame:
    """Reproduced and published leaderboard columns side by side, one row per (model, annotator).

    Published rows without annotations are kept with reproduced values null and a note;
    reproduced rows that were not published are kept with published values null.
    """
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
        for col in _ae.LEADERBOARD_COLUMNS:
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
    for col in _ae.LEADERBOARD_COLUMNS:
        dtype = "Int64" if col in COUNT_COLUMNS else "Float64"
        for suffix in ("published", "reproduced", "abs_diff"):
            out[f"{col}_{suffix}"] = pd.array(out[f"{col}_{suffix}"].tolist(), dtype=dtype)
    for col in ("max_rel_diff", "length_controlled_winrate_published"):
        out[col] = pd.array(out[col].tolist(), dtype="Float64")
    out["match"] = pd.array(out["match"].tolist(), dtype="boolean")
    for col in ("baseline", "mode", "note"):
        out[col] = out[col].astype("string")
    return out


def _standard_errors(
    frame: pd.DataFrame,
    *,
    confidence: float,
    n_resamples: int,
    seed: np.random.SeedSequence,
) -> tuple[pd.DataFrame, str | None]:
    """AlpacaEval's IID standard error of the win rate beside cluster-robust and bootstrap ones.

    Per (model, baseline, annotator): one ``iid`` row (AlpacaEval's ``pandas.Series.sem`` of
    ``(preference - 1) * 100``, records treated as independent, with the normal interval a
    reader builds from it), then one row per clustering (instruction, source data set): the
    CR1 SE with its t(C - 1) interval (:func:`cluster_mean`, ``cluster_t``), the cluster
    bootstrap SE, and the percentile and BCa cluster-bootstrap intervals (:func:`cluster_mean`
    with the same resamples as the SE). Rates in percentage points, as AlpacaEval publishes.
    """
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
    groups = f.groupby(_KEYS, sort=True)
    # AlpacaEval's own standard error: every record an independent observation.
    iid = groups["_pp"].agg(n="size", win_rate="mean", se="sem").reset_index()
    z = float(special.ndtri(0.5 + confidence / 2.0))
    iid_se = {tuple(r[k] for k in _KEYS): r["se"] for r in iid.to_dict("records")}
    rows = [
        {
            **{k: r[k] for k in _KEYS},
            "clustering": "iid",
            "n": int(r["n"]),
            "n_clusters": int(r["n"]),
            "win_rate": r["win_rate"],
            "se": r["se"],
            "se_ratio": 1.0,
            "df": math.nan,
            "win_rate_ci_low": r["win_rate"] - z * r["se"],
            "win_rate_ci_high": r["win_rate"] + z * r["se"],
            "interval": "normal: win_rate ± z·SE (AlpacaEval's pandas sem, records independent)",
        }
        for r in iid.to_dict("records")
    ]
    skipped = None
    clusterings = list(_CLUSTERINGS)
    if f["dataset"].isna().any():
        clusterings = [c for c in clusterings if c[0] != "dataset"]
        skipped = "some annotations have no dataset field: no clustering by source data set"
    seeds = iter(seed.spawn(len(iid) * len(clusterings)))
    parts = {key: sub for key, sub in groups}
    for label, col in clusterings:
        cr1 = cluster_mean(f, "_pp", cluster=col, by=_KEYS, confidence=confidence)
        for r in cr1.to_dict("records"):
            key = tuple(r[k] for k in _KEYS)
            sub = parts[key]
            child = next(seeds)
            boot: dict[str, Any] = {}
            for method in ("percentile", "bca"):
                # The same seed for both methods and the SE: one set of resamples.
                res = cluster_mean(
                    sub,
                    "_pp",
                    cluster=col,
                    method=method,
                    confidence=confidence,
                    n_resamples=n_resamples,
                    rng=np.random.default_rng(child),
                )
                boot[f"boot_{method}_ci_low"] = float(res["ci_low"].iloc[0])
                boot[f"boot_{method}_ci_high"] = float(res["ci_high"].iloc[0])
            # Per-cluster sums in cluster_mean's order (sorted ids): its resamples, its SE.
            sums = sub.groupby(col, sort=True)["_pp"].agg(["sum", "size"]).to_numpy(np.float64)
            if len(sums) >= 2:
                se_boot = float(
                    cluster_bootstrap(
                        sums,
                        lambda s: s[..., 0] / s[..., 1],
                        method="percentile",
                        n_resamples=n_resamples,
                        confidence=confidence,
                        rng=np.random.default_rng(child),
                    ).se[0]
                )
            else:
                se_boot = math.nan
            c = int(r["n_clusters"])
            rows.append(
                {
                    **dict(zip(_KEYS, key, strict=True)),
                    "clustering": label,
                    "n": int(r["n"]),
                    "n_clusters": c,
                    "win_rate": r["mean"],
                    "se": r["se"],
                    "se_ratio": r["se"] / iid_se[key],
                    "df": r["df"],
                    "win_rate_ci_low": r["ci_low"],
                    "win_rate_ci_high": r["ci_high"],
                    "interval": f"cluster_t: win_rate ± t({c - 1})·CR1 SE",
                    "boot_se": se_boot,
                    "boot_se_ratio": se_boot / iid_se[key],
                    **boot,
                }
            )
    out = pd.DataFrame(rows)
    order = {label: i for i, label in enumerate(["iid", *(c[0] for c in _CLUSTERINGS)])}
    out = out.sort_values(
        [*_KEYS, "clustering"], key=lambda s: s.map(order) if s.name == "clustering" else s
    ).reset_index(drop=True)
    out["n_resamples"] = int(n_resamples)
    out["confidence"] = float(confidence)
    return out, skipped


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


def _provenance(
    d: Path,
    inputs: Sequence[Path],
    frame: pd.DataFrame,
    source: str | None,
    *,
    seed: int | None,
    n_resamples: int,
    confidence: float,
) -> dict[str, Any]:
    return {
        "data_dir": d.name,
        "inputs": input_digests(d, inputs),
        "leaderboard_source": source,
        "models": sorted(frame["model"].astype(str).unique()),
        "baselines": sorted(frame["baseline"].astype(str).unique()),
        "annotators": sorted(frame["judge"].astype(str).unique()),
        **run_provenance(seed=seed, n_resamples=n_resamples, confidence=confidence),
    }


def compute_case_study(
    data_dir: str | os.PathLike[str],
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> Results:
    """The AlpacaEval case study: leaderboard reproduced, judge agreement, length bias, SEs.

    Parameters
    ----------
    data_dir : path-like
        A directory holding AlpacaEval annotation files (any of
        :func:`~evalstats.adapters.alpaca_eval.annotation_files`; all are read) and optionally
        ``leaderboard_rows.json`` (:data:`LEADERBOARD_FILE`, the published rows to compare).
    confidence : float, default 0.95
    n_resamples : int, default 10 000
        Cluster-bootstrap resamples (kappa's bootstrap interval, the bootstrap SEs).
    seed : int or None, default 0
        Seed of every bootstrap (one :class:`numpy.random.SeedSequence`, spawned per use).

    Returns
    -------
    Results
        Tables (rates x 100, as AlpacaEval publishes them, where noted):

        ``leaderboard``
            One row per (model, annotator), published rows first: for each of
            :data:`~evalstats.adapters.alpaca_eval.LEADERBOARD_COLUMNS`
            ``<col>_published``, ``<col>_reproduced``, ``<col>_abs_diff``; ``max_rel_diff``
            over the rates, ``rel_tolerance``, ``match`` (every count equal and every rate
            within :data:`REL_TOLERANCE` relative; null when one side is missing),
            ``length_controlled_winrate_published`` (not recomputed) and ``note``.
        ``agreement``
            :func:`~evalstats.adapters.alpaca_eval.judge_agreement_by_model`: kappa with Wald
            and instruction-clustered bootstrap (BCa) intervals, linear weighted kappa, AC1,
            PABAK, disagreement counts and the confusion matrix, per model.
        ``length_bias``, ``length_slope``
            :func:`~evalstats.adapters.alpaca_eval.length_bias` in :data:`LENGTH_BINS`
            quantile bins of log(model length / baseline length), and per group the logistic
            slope with its Wald interval and the odds ratio of a win per doubling of length.
        ``standard_errors``
            Per group, AlpacaEval's IID SE of the win rate beside the CR1 and cluster-bootstrap
            SEs and intervals clustered by instruction and by source data set (see
            ``clustering``, ``se_ratio``, ``boot_se_ratio``).

        ``unavailable`` says why a section is missing (no ``leaderboard_rows.json``, a single
        annotator, no ``dataset`` field).

    Raises
    ------
    DataError
        No annotation file, an unreadable one, or a malformed ``leaderboard_rows.json``.

    Examples
    --------
    >>> from evalstats.adapters.alpaca_eval import compute_case_study
    >>> res = compute_case_study("../shared/data/alpaca_eval", n_resamples=500)  # doctest: +SKIP
    >>> res.tables["leaderboard"][["model", "annotator", "match"]]  # doctest: +SKIP
    """
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    confidence, n_resamples = float(confidence), int(n_resamples)
    d = Path(data_dir)
    files = _ae.annotation_files(d, required=True)
    frame = _ae.load(files)
    pub = published_rows(d)
    seq_agreement, seq_se = np.random.SeedSequence(seed).spawn(2)

    tables: dict[str, pd.DataFrame] = {}
    unavailable: dict[str, str] = {}

    board = _ae.leaderboard_row(frame, confidence=confidence)
    tables["leaderboard"] = _leaderboard_table(board, pub[0] if pub is not None else None)
    if pub is None:
        unavailable["published_leaderboard"] = (
            f"no {LEADERBOARD_FILE} in the data directory: reproduced values only"
        )
    try:
        agreement = _ae.judge_agreement_by_model(
            frame,
            confidence=confidence,
            n_resamples=n_resamples,
            rng=np.random.default_rng(seq_agreement),
        )
    except ValueError as exc:  # a single annotator per model: nothing to compare
        unavailable["agreement"] = str(exc)
    else:
        tables["agreement"] = agreement
    try:
        lb = _ae.length_bias(frame, bins=LENGTH_BINS, x=LENGTH_MEASURE, confidence=confidence)
    except ValueError as exc:  # no output lengths in the annotations
        unavailable["length_bias"] = str(exc)
        unavailable["length_slope"] = str(exc)
    else:
        lb = lb.rename(columns={"judge": "annotator"})
        tables["length_bias"] = lb
        tables["length_slope"] = _length_slopes(lb)
    ses, skipped = _standard_errors(
        frame, confidence=confidence, n_resamples=n_resamples, seed=seq_se
    )
    tables["standard_errors"] = ses
    if skipped:
        unavailable["standard_errors_by_dataset"] = skipped

    inputs = list(files)
    for extra in (d / LEADERBOARD_FILE, d / "truth.json"):
        if extra.exists():
            inputs.append(extra)
    params: Mapping[str, Any] = {
        "confidence": confidence,
        "n_resamples": n_resamples,
        "seed": seed,
        "length_bins": LENGTH_BINS,
        "length_measure": LENGTH_MEASURE,
        "rel_tolerance": REL_TOLERANCE,
    }
    return Results(
        tables={k: _tidy(v) for k, v in tables.items()},
        provenance=_provenance(
            d,
            inputs,
            frame,
            pub[1] if pub is not None else None,
            seed=seed,
            n_resamples=n_resamples,
            confidence=confidence,
        ),
        parameters=dict(params),
        simulated=_is_simulated(d),
        unavailable=unavailable,
        frame=frame,
    )
