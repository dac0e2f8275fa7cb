"""Every number the published report shows, computed in one place from one data directory.

The report notebooks only call :func:`compute_results` (the story: headline, agreement, cost,
per task, blind-rubric dimensions, accounting, audit) and :func:`compute_methodology` (power
and minimum detectable effect for this design, CI coverage evidence), then display the tables
section by section. ``results.json`` is :meth:`Results.to_json` of the very objects the
notebooks displayed, so the HTML and the JSON cannot disagree; a test recomputes both from the
same inputs and compares every number.

No statistics live here: each table is the output of a package function (``evalstats.stats``,
``evalstats.audit``), filtered and labelled. A section whose function is not available in this
installation is listed in :attr:`Results.unavailable` with the reason instead of being guessed.

Examples
--------
>>> from evalstats.results import compute_results
>>> res = compute_results("data/sample", n_resamples=200, seed=0)  # doctest: +SKIP
>>> res.tables["headline"][["rubric", "judge", "net_win", "net_win_ci_low"]]  # doctest: +SKIP
>>> res.to_json()["provenance"]["inputs"]["judgments.jsonl"]["sha256"]  # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._schema import BLIND_DIMENSIONS
from .errors import DataError

__all__ = [
    "CONSENSUS_RULE",
    "DISAGREEMENT_TRIGGER",
    "FORMAT",
    "Results",
    "compute_methodology",
    "compute_results",
    "load_frame",
    "merge_results",
    "provenance",
    "to_jsonable",
]

FORMAT = "evalstats-results/1"
# The seed's rule: when the judges disagree on more than this share of pairs, a human reads
# the disagreements before anything is published.
DISAGREEMENT_TRIGGER = 0.20
# Judge text is shown in example tables only, cut to this many characters (escaped on render).
_TEXT_LIMIT = 400
_N_EXAMPLES = 12
_INPUT_STEMS = ("tasks", "runs", "judgments")
# Seed 000: when in doubt, "(b) roughly equivalent": judges that disagree make a tie.
CONSENSUS_RULE = "unanimous"


# --------------------------------------------------------------------------------------------
# the result object
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Results:
    """Tables of published numbers plus the provenance needed to reproduce them.

    Attributes
    ----------
    tables : dict of str to DataFrame
        Tidy tables under stable names (``headline``, ``consensus``, ``agreement``, ``cost``,
        ``judge_spend``, ``per_task``, ``dimensions``, ``position_bias``, ``accounting``,
        ``sensitivity``, ``audit``, ``disagreements``, ``invalid_outputs``; for the
        methodology: ``design``, ``power_mde``, ``power_curve``, ``coverage``).
    provenance : dict
        Rubrics (package revision and sha256, and what the judgments recorded), judge models,
        package and library versions, sha256 of each input file, seed, n_resamples.
    parameters : dict
        The arguments the tables were computed with.
    simulated : bool
        True when ``DATA_DIR/truth.json`` says ``"simulated": true``.
    unavailable : dict of str to str
        Sections that could not be computed here, with the reason.
    frame : DataFrame
        The verdict frame the tables were computed from (for figures; not serialised).
    """

    tables: dict[str, pd.DataFrame]
    provenance: dict[str, Any]
    parameters: dict[str, Any]
    simulated: bool
    unavailable: dict[str, str] = field(default_factory=dict)
    frame: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def table(self, name: str) -> pd.DataFrame | None:
        """The table ``name``, or None when the section is unavailable or empty."""
        t = self.tables.get(name)
        return None if t is None or t.empty else t

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict: NaN and NA become null, numpy scalars become Python numbers."""
        return {
            "format": FORMAT,
            "simulated": bool(self.simulated),
            "parameters": to_jsonable(self.parameters),
            "provenance": to_jsonable(self.provenance),
            "tables": {name: _records(t) for name, t in self.tables.items()},
            "unavailable": dict(self.unavailable),
        }

    def write(self, out_dir: str | os.PathLike[str], *, name: str = "results") -> Path:
        """Write ``OUT/<name>.json`` and ``OUT/tables/<table>.csv``; returns the JSON path."""
        out = Path(out_dir)
        (out / "tables").mkdir(parents=True, exist_ok=True)
        for tname, t in self.tables.items():
            t.to_csv(out / "tables" / f"{tname}.csv", index=False)
        path = out / f"{name}.json"
        path.write_text(dump_json(self.to_json()), encoding="utf-8")
        return path


def merge_results(*parts: Mapping[str, Any]) -> dict[str, Any]:
    """Merge the JSON of several :class:`Results` computed from the same inputs into one.

    Tables are united (a name may appear once); parameters and provenance must agree on every
    key they share, otherwise the parts were not computed from the same inputs.
    """
    if not parts:
        raise ValueError("nothing to merge")
    merged: dict[str, Any] = {
        "format": FORMAT,
        "simulated": False,
        "parameters": {},
        "provenance": {},
        "tables": {},
        "unavailable": {},
    }
    for part in parts:
        if part.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} document: format={part.get('format')!r}")
        merged["simulated"] = merged["simulated"] or bool(part["simulated"])
        for key in ("parameters", "provenance"):
            for k, v in part[key].items():
                if k in merged[key] and merged[key][k] != v:
                    raise ValueError(f"parts disagree on {key}.{k}: not from the same inputs")
                merged[key][k] = v
        for tname, rows in part["tables"].items():
            if tname in merged["tables"]:
                raise ValueError(f"table {tname!r} appears in two parts")
            merged["tables"][tname] = rows
        merged["unavailable"].update(part.get("unavailable", {}))
    return merged


def dump_json(doc: Mapping[str, Any]) -> str:
    """Stable, strict JSON text (no NaN literals: they are not JSON)."""
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def to_jsonable(value: Any) -> Any:
    """Recursively turn numpy/pandas values into JSON-safe Python ones (NaN -> None)."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_jsonable(v) for v in value]
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    return str(value)


def _records(table: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [str(c) for c in table.columns]
    return [
        {c: to_jsonable(v) for c, v in zip(cols, row, strict=True)}
        for row in table.astype(object).itertuples(index=False, name=None)
    ]


# --------------------------------------------------------------------------------------------
# inputs and provenance
# --------------------------------------------------------------------------------------------


def load_frame(data_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """The verdict frame of ``data_dir`` (tasks, runs and judgments, validated)."""
    from .frames import verdict_frame
    from .records import load_dir

    ds = load_dir(data_dir)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=Path(data_dir))
    return verdict_frame(ds.judgments, ds.runs, ds.tasks)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _input_files(data_dir: Path) -> list[Path]:
    from .records import find_file

    files = [find_file(data_dir, stem, required=False) for stem in _INPUT_STEMS]
    truth = data_dir / "truth.json"
    return [p for p in (*files, truth if truth.exists() else None) if p is not None]


def _is_simulated(data_dir: Path) -> bool:
    truth = data_dir / "truth.json"
    if not truth.exists():
        return False
    try:
        return json.loads(truth.read_text(encoding="utf-8")).get("simulated") is True
    except (json.JSONDecodeError, AttributeError) as exc:
        raise DataError(f"unreadable truth.json: {exc}", path=truth) from None


def provenance(
    data_dir: str | os.PathLike[str],
    frame: pd.DataFrame,
    *,
    seed: int | None,
    n_resamples: int,
    confidence: float,
) -> dict[str, Any]:
    """What a reader needs to reproduce the numbers: inputs, prompts, judges, versions, seed."""
    from . import rubrics
    from .records import load_judgments

    d = Path(data_dir)
    files = _input_files(d)
    rubric_rows = []
    for name in sorted(frame["rubric"].astype(str).unique()):
        sub = frame.loc[frame["rubric"].astype(str) == name]
        observed = (
            sub.groupby(["prompt_revision", "prompt_sha256"], dropna=True)
            .size()
            .reset_index(name="n_judgments")
        )
        try:
            pkg = rubrics.get(name)
            pkg_rev, pkg_sha = pkg.revision, pkg.sha256
        except KeyError:
            pkg_rev = pkg_sha = None
        rubric_rows.append(
            {
                "rubric": name,
                "package_revision": pkg_rev,
                "package_sha256": pkg_sha,
                "judgments_prompt": to_jsonable(observed.to_dict("records")),
                "matches_package": bool(
                    len(observed) == 1
                    and observed["prompt_revision"].iloc[0] == pkg_rev
                    and observed["prompt_sha256"].iloc[0] == pkg_sha
                ),
            }
        )
    judges = sorted(frame["judge"].astype(str).unique())
    model_ids: dict[str, list[str]] = {j: [] for j in judges}
    from .records import find_file

    jpath = find_file(d, "judgments", required=False)
    if jpath is not None:
        j = load_judgments(jpath)
        if "model_id" in j.columns:
            ids = j.dropna(subset=["model_id"]).groupby(j["judge"].astype(str))["model_id"]
            for judge, values in ids:
                if judge in model_ids:
                    model_ids[judge] = sorted({str(v) for v in values})
    return {
        "data_dir": d.name,
        "inputs": input_digests(d, files),
        "rubrics": rubric_rows,
        "judges": [{"judge": j, "model_ids": model_ids[j]} for j in judges],
        **run_provenance(seed=seed, n_resamples=n_resamples, confidence=confidence),
    }


def input_digests(base: Path, files: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """sha256 and size of each input, keyed by its path relative to ``base`` (no machine
    paths in published JSON)."""
    return {
        p.relative_to(base).as_posix(): {"sha256": _sha256(p), "bytes": p.stat().st_size}
        for p in files
    }


def run_provenance(*, seed: int | None, n_resamples: int, confidence: float) -> dict[str, Any]:
    """Package and library versions plus the settings every published number depends on."""
    from . import __version__

    return {
        "package": {"name": "evalstats", "version": __version__},
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "scipy": importlib.import_module("scipy").__version__,
        },
        "seed": seed,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
    }


# --------------------------------------------------------------------------------------------
# the report's numbers
# --------------------------------------------------------------------------------------------


def _select(frame: pd.DataFrame, judges: Sequence[str] | None, rubric: Any) -> pd.DataFrame:
    out = frame
    if judges is not None:
        judges = [judges] if isinstance(judges, str) else list(judges)
        unknown = sorted(set(judges) - set(frame["judge"].astype(str)))
        if unknown:
            raise DataError(f"judges not in the data: {', '.join(unknown)}")
        out = out.loc[out["judge"].astype(str).isin(judges)]
    if rubric is not None:
        rubrics = [rubric] if isinstance(rubric, str) else list(rubric)
        unknown = sorted(set(rubrics) - set(frame["rubric"].astype(str)))
        if unknown:
            raise DataError(f"rubrics not in the data: {', '.join(unknown)}")
        out = out.loc[out["rubric"].astype(str).isin(rubrics)]
    if out.empty:
        raise DataError("no judgments left after selecting judges and rubric")
    # Drop unused categories so groupings do not produce empty judge/rubric rows.
    out = out.copy()
    for col in ("judge", "rubric"):
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.remove_unused_categories()
    return out.reset_index(drop=True)


def _rubrics_in(frame: pd.DataFrame) -> list[str]:
    return [r for r in ("with-without", "blind-pair") if (frame["rubric"] == r).any()] + sorted(
        set(frame["rubric"].astype(str)) - {"with-without", "blind-pair"}
    )


def _text(series: pd.Series) -> pd.Series:
    """Judge text cut for display (escaping happens when rendered, never here)."""
    s = series.astype("string").fillna("")
    long = s.str.len() > _TEXT_LIMIT
    return s.where(~long, s.str.slice(0, _TEXT_LIMIT) + " […]")


def _disagreements(frame: pd.DataFrame) -> pd.DataFrame:
    """Example pairs on which two judges gave different outcomes, with their reasoning."""
    from .frames import wide_by_judge

    rows = []
    for rubric in _rubrics_in(frame):
        sub = frame.loc[(frame["rubric"] == rubric) & (frame["status"] == "ok")]
        if sub["judge"].nunique() < 2:
            continue
        wide = wide_by_judge(sub, rubric=rubric)
        judges = [j for j in sub["judge"].astype(str).unique() if j in wide.columns]
        if len(judges) < 2:
            continue
        outcomes = wide[judges].astype("string")
        disagree = outcomes.notna().sum(axis=1).ge(2) & outcomes.nunique(axis=1).gt(1)
        on = (
            ["task_id", "replicate", "order"]
            if "order" in wide.columns
            else ["task_id", "replicate"]
        )
        keys = wide.loc[disagree, on].head(_N_EXAMPLES)
        if "order" in on:  # plain objects on both sides, so a missing order matches itself
            keys = keys.assign(order=keys["order"].astype(object))
        ex = sub.assign(order=sub["order"].astype(object)).merge(keys, on=on)
        ex = ex.assign(rubric=rubric, reasoning=_text(ex["reasoning"]))
        rows.append(
            ex[
                [
                    "rubric",
                    "task_id",
                    "replicate",
                    "order",
                    "judge",
                    "outcome",
                    "label",
                    "reasoning",
                ]
            ]
        )
    if not rows:
        return pd.DataFrame(
            columns=[
                "rubric",
                "task_id",
                "replicate",
                "order",
                "judge",
                "outcome",
                "label",
                "reasoning",
            ]
        )
    out = pd.concat(rows, ignore_index=True)
    return (
        out.astype({"judge": str, "outcome": "string", "order": "string"})
        .sort_values(
            ["rubric", "task_id", "replicate", "order", "judge"], kind="stable", na_position="first"
        )
        .reset_index(drop=True)
    )


def _invalid_outputs(frame: pd.DataFrame) -> pd.DataFrame:
    """Judge outputs that could not be read: kept, counted, shown (never silently dropped)."""
    bad = frame.loc[frame["status"] == "invalid"]
    out = bad[["rubric", "task_id", "replicate", "judge", "parse_error"]].astype(
        {"rubric": str, "judge": str}
    )
    return out.assign(raw=_text(bad["raw"])).reset_index(drop=True)


def compute_results(
    data_dir: str | os.PathLike[str],
    *,
    judges: Sequence[str] | str | None = None,
    rubric: Sequence[str] | str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    frame: pd.DataFrame | None = None,
) -> Results:
    """Compute every number of the report from the files in ``data_dir``.

    Parameters
    ----------
    data_dir : path
        Directory with tasks, runs and judgments (and ``truth.json`` when simulated).
    judges : str or list of str, optional
        Judges to include (default: all in the data).
    rubric : str or list of str, optional
        Rubrics to include (default: all in the data).
    confidence : float
        Confidence level of every interval.
    n_resamples : int
        Bootstrap resamples wherever a bootstrap is used.
    seed : int
        Seed of the one random generator every bootstrap draws from, in a fixed order.
    frame : DataFrame, optional
        The verdict frame of ``data_dir`` when already loaded (saves the parse).

    Returns
    -------
    Results
    """
    from .audit import audit
    from .stats.cost import cost_ratios, judge_spend
    from .stats.dimensions import dimension_means
    from .stats.judges import consensus, judge_agreement
    from .stats.winrates import position_bias, win_rates
    from .summary import status_table

    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples!r}")
    from .frames import verdict_frame
    from .records import load_dir

    d = Path(data_dir)
    ds = load_dir(d)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=d)
    full = verdict_frame(ds.judgments, ds.runs, ds.tasks) if frame is None else frame
    f = _select(full, judges, rubric)
    rng = np.random.default_rng(seed)
    common = {"confidence": confidence, "n_resamples": int(n_resamples)}
    tables: dict[str, pd.DataFrame] = {}
    unavailable: dict[str, str] = {}

    # Headline: per judge within each rubric, clustered by task.
    tables["headline"] = win_rates(f, by=["rubric", "judge"], rng=rng, **common)

    rubric_names = _rubrics_in(f)
    multi = [r for r in rubric_names if f.loc[f["rubric"] == r, "judge"].nunique() >= 2]
    if not multi:
        unavailable["consensus"] = "fewer than two judges on every rubric"
    else:
        cons = pd.concat([consensus(f, CONSENSUS_RULE, rubric=r) for r in multi], ignore_index=True)
        tables["consensus"] = win_rates(cons, by=["rubric", "judge"], rng=rng, **common)
    if not multi:
        unavailable["agreement"] = "fewer than two judges on every rubric"
    else:
        tables["agreement"] = pd.concat(
            [judge_agreement(f, rubric=r, rng=rng, **common) for r in multi], ignore_index=True
        )
    tables["disagreements"] = _disagreements(f)

    tables["cost"] = cost_ratios(f, rng=rng, **common)
    tables["judge_spend"] = judge_spend(f, by=["rubric", "judge"])

    per_task = win_rates(f, by=["rubric", "task_id"], rng=rng, **common)
    tables["per_task"] = per_task

    dims = f.loc[f[[f"with_{d_}" for d_ in BLIND_DIMENSIONS]].notna().any(axis=1)]
    if dims.empty:
        unavailable["dimensions"] = "no blind-rubric dimension scores in the data"
    else:
        tables["dimensions"] = dimension_means(dims, confidence=confidence)
    blind = f.loc[f["order"].notna()]
    if blind.empty:
        unavailable["position_bias"] = "no blind-rubric judgments with an order"
    else:
        tables["position_bias"] = position_bias(
            blind, by=["rubric", "judge"], confidence=confidence
        )

    tables["accounting"] = status_table(f)
    views = [
        win_rates(f, by=["rubric", "judge"], no_answer_as=view, rng=rng, **common)
        for view in ("exclude", "loss")
    ]
    tables["sensitivity"] = pd.concat(views, ignore_index=True)
    tables["invalid_outputs"] = _invalid_outputs(f)

    j = ds.judgments
    keep = j["judge"].astype(str).isin(f["judge"].astype(str).unique()) & j["rubric"].astype(
        str
    ).isin(f["rubric"].astype(str).unique())
    tables["audit"] = audit(
        ds.tasks, ds.runs, j.loc[keep], frame=f, disagreement_threshold=DISAGREEMENT_TRIGGER
    )

    params = {
        "judges": None
        if judges is None
        else ([judges] if isinstance(judges, str) else list(judges)),
        "rubric": rubric,
        "confidence": float(confidence),
        "n_resamples": int(n_resamples),
        "seed": seed,
    }
    prov = provenance(d, f, seed=seed, n_resamples=n_resamples, confidence=confidence)
    return Results(
        tables={k: _tidy(v) for k, v in tables.items()},
        provenance=prov,
        parameters=params,
        simulated=_is_simulated(d),
        unavailable=unavailable,
        frame=f,
    )


def _tidy(table: pd.DataFrame) -> pd.DataFrame:
    """Plain columns (categoricals as strings) and a fresh index: what CSV/JSON will hold."""
    out = table.reset_index(drop=True).copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype("string")
    return out


# --------------------------------------------------------------------------------------------
# the methodology page's numbers
# --------------------------------------------------------------------------------------------

# The between-task correlation is not estimated from one small evaluation: the design is shown
# over a range of latent ICCs that brackets what clustered evals report.
_ICC_GRID = (0.0, 0.1, 0.3, 0.5)
_NET_WIN_TARGETS = (0.1, 0.2, 0.3)
_POWER = 0.8
_N_TASKS_GRID = (5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300)
_CURVE_ICC = 0.3


def compute_methodology(
    data_dir: str | os.PathLike[str],
    *,
    judges: Sequence[str] | str | None = None,
    rubric: Sequence[str] | str | None = None,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    frame: pd.DataFrame | None = None,
) -> Results:
    """Power and minimum detectable effect for this dataset's design, and CI coverage evidence.

    The design (tasks, pairs per task, observed tie rate per rubric) is read from the data;
    the power calculations use a two-sided test at ``alpha = 1 - confidence`` and 80 % power,
    over a grid of latent between-task ICCs. Parameters are those of :func:`compute_results`.
    """
    from .stats.coverage import coverage_study
    from .stats.power import mde_curve, power_curve, simulated_power, tasks_needed
    from .stats.winrates import win_rates

    d = Path(data_dir)
    f = _select(load_frame(d) if frame is None else frame, judges, rubric)
    alpha = 1.0 - float(confidence)
    tables: dict[str, pd.DataFrame] = {}
    unavailable: dict[str, str] = {}

    pooled = win_rates(f, by=["rubric"], confidence=confidence)
    pairs = f.loc[f["status"] != "no_answer"].drop_duplicates(["rubric", "task_id", "replicate"])
    per_task = pairs.groupby(pairs["rubric"].astype(str))["task_id"].agg(["nunique", "size"])
    design = (
        pooled[["rubric", "net_win", "tie_rate"]]
        .astype({"rubric": str})
        .merge(
            per_task.rename(columns={"nunique": "n_tasks", "size": "n_pairs"}),
            left_on="rubric",
            right_index=True,
        )
    )
    # Power formulas take a whole number of pairs per task: round the average down.
    design["n_replicates"] = np.maximum(design["n_pairs"] // design["n_tasks"], 1).astype(int)
    design = design.rename(columns={"net_win": "observed_net_win", "tie_rate": "p_tie"})
    tables["design"] = design[
        ["rubric", "n_tasks", "n_pairs", "n_replicates", "p_tie", "observed_net_win"]
    ]

    mde, curves, needed = [], [], []
    sim_rng = np.random.default_rng(seed)
    for row in design.itertuples(index=False):
        n_t, n_r, p_tie = int(row.n_tasks), int(row.n_replicates), float(row.p_tie)
        if n_t < 2:
            continue
        curve = mde_curve(
            [n_t],
            n_replicates=[n_r],
            icc=list(_ICC_GRID),
            p_tie=[p_tie],
            alpha=alpha,
            power=_POWER,
        ).assign(rubric=row.rubric)
        # The analytic MDE treats task means as normal; simulate the test at each MDE to
        # show how far that approximation is off for this few tasks.
        curve["power_simulated"] = [
            simulated_power(
                m,
                n_t,
                n_replicates=n_r,
                icc=i,
                p_tie=p_tie,
                alpha=alpha,
                n_sims=4000,
                rng=sim_rng,
            )["power"].item()
            if np.isfinite(m)
            else np.nan
            for m, i in zip(curve["net_win"], curve["icc"], strict=True)
        ]
        mde.append(curve)
        effects = [e for e in _NET_WIN_TARGETS if e <= 1.0 - p_tie]
        curves.append(
            power_curve(
                effects,
                list(_N_TASKS_GRID),
                n_replicates=n_r,
                icc=_CURVE_ICC,
                p_tie=p_tie,
                alpha=alpha,
            ).assign(rubric=row.rubric)
        )
        for target in _NET_WIN_TARGETS:
            if target > 1.0 - p_tie:
                continue
            for icc in _ICC_GRID:
                res = tasks_needed(
                    target, n_replicates=n_r, icc=icc, p_tie=p_tie, alpha=alpha, power=_POWER
                )
                needed.append(
                    {
                        "rubric": row.rubric,
                        "net_win": target,
                        "n_replicates": n_r,
                        "icc": icc,
                        "p_tie": p_tie,
                        "power": _POWER,
                        "n_tasks": res.n_tasks,
                    }
                )
    if mde:
        tables["power_mde"] = _front(pd.concat(mde, ignore_index=True), "rubric")
        tables["power_curve"] = _front(pd.concat(curves, ignore_index=True), "rubric")
        tables["tasks_needed"] = pd.DataFrame(needed)
    else:
        unavailable["power_mde"] = "fewer than two tasks: no clustered design to size"

    if mde:
        first = design.iloc[0]
        pooled_first = pooled.loc[pooled["rubric"].astype(str) == first["rubric"]].iloc[0]
        tables["coverage"] = coverage_study(
            n_tasks=int(first["n_tasks"]),
            n_replicates=int(first["n_replicates"]),
            p_win=float(pooled_first["win_rate"]),
            p_tie=float(pooled_first["tie_rate"]),
            p_loss=float(pooled_first["loss_rate"]),
            icc=_CURVE_ICC,
            confidence=confidence,
            # 1 000 evaluations x 1 000 resamples keeps the render well under a minute;
            # benchmarks/coverage.py runs the full study (2 000 x 2 000).
            n_evals=1000,
            n_resamples=min(int(n_resamples), 1000),
            rng=np.random.default_rng(seed),
        )

    params = {
        "judges": None
        if judges is None
        else ([judges] if isinstance(judges, str) else list(judges)),
        "rubric": rubric,
        "confidence": float(confidence),
        "n_resamples": int(n_resamples),
        "seed": seed,
    }
    return Results(
        tables={k: _tidy(v) for k, v in tables.items()},
        provenance=provenance(d, f, seed=seed, n_resamples=n_resamples, confidence=confidence),
        parameters=params,
        simulated=_is_simulated(d),
        unavailable=unavailable,
        frame=f,
    )


def _front(table: pd.DataFrame, col: str) -> pd.DataFrame:
    return table[[col, *(c for c in table.columns if c != col)]]
