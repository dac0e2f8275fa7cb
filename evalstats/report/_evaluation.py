"""The evaluation report kind: the numbers of ``report.ipynb`` and ``methodology.ipynb``.

No statistics live here: each table is the output of a package function
(:mod:`evalstats.stats`, :func:`evalstats.audit`), filtered and labelled. The sections run in
the order of :func:`sections` on one :class:`~evalstats.report._kinds.Context`; the report
page's bootstraps draw from its one generator in that order, the methodology page's
simulations from generators of their own seeded with the same seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import DataError
from . import _comparison
from ._eval_common import (
    _INPUT_STEMS,
    CONSENSUS_RULE,
    _guarded,
)
from ._eval_headline import _headline_audit
from ._eval_labels import _labels
from ._eval_methodology import (
    _coverage,
    _design,
    _ordinal,
    _power,
    _power_simulated,
)
from ._eval_primary import (
    _primary_test,
)
from ._eval_report import (
    _accounting,
    _agreement,
    _audit,
    _blind,
    _consensus,
    _cost,
    _design_check,
    _disagreements,
    _headline,
    _missing_bounds,
    _per_task,
    _tests,
)
from ._kinds import Loaded, Section

__all__ = [
    "CONSENSUS_RULE",
    "check",
    "describe_parameters",
    "detect",
    "load",
    "plan_provenance",
    "sections",
]

# --------------------------------------------------------------------------------------------
# recognising, checking and loading the data
# --------------------------------------------------------------------------------------------


def detect(data: Path) -> bool:
    from ..records import find_file

    return find_file(data, "tasks", required=False) is not None


def check(data: Path) -> None:
    from ..records import find_file

    for stem in _INPUT_STEMS:
        # a missing input is a DataError naming it; labels are optional
        find_file(data, stem, required=stem != "labels")


def _as_list(value: Sequence[str] | str | None) -> list[str] | None:
    return None if value is None else ([value] if isinstance(value, str) else list(value))


def _select(frame: pd.DataFrame, judges: list[str] | None, rubric: list[str] | None):
    out = frame
    if judges is not None:
        unknown = sorted(set(judges) - set(frame["judge"].astype(str)))
        if unknown:
            raise DataError(f"judges not in the data: {', '.join(unknown)}")
        out = out.loc[out["judge"].astype(str).isin(judges)]
    if rubric is not None:
        unknown = sorted(set(rubric) - set(frame["rubric"].astype(str)))
        if unknown:
            raise DataError(f"rubrics not in the data: {', '.join(unknown)}")
        out = out.loc[out["rubric"].astype(str).isin(rubric)]
    if out.empty:
        raise DataError("no judgments left after selecting judges and rubric")
    # Drop unused categories so groupings do not produce empty judge/rubric rows.
    out = out.copy()
    for col in ("judge", "rubric"):
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.remove_unused_categories()
    return out.reset_index(drop=True)


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    """Tasks, runs and judgments read once; the verdict frame of the selected judges/rubrics.

    The audit needs the whole :class:`~evalstats.Dataset` besides the frame, so the directory
    is read with :func:`~evalstats.load_dir` and the frame built from it (rather than
    :func:`evalstats.frames.load_frame`, which would read every file a second time).
    """
    from ..frames import verdict_frame
    from ..records import find_file, load_dir

    ds = load_dir(d)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=d)
    judges, rubric = _as_list(params.get("judges")), _as_list(params.get("rubric"))
    pairs = arm_pairs(ds)
    if pairs is None:
        full = verdict_frame(ds.judgments, ds.runs, ds.tasks) if frame is None else frame
        f = _select(full, judges, rubric)
        extra: dict[str, Any] = {"dataset": ds}
    else:  # K arms: the two-arm view of every pair judged, stacked
        views = [(a, b, *pair_view(ds, a, b)) for a, b in pairs]
        views = [(a, b, _select(v, judges, rubric), {"dataset": x}) for a, b, v, x in views]
        f = pd.concat([v.assign(arm_a=a, arm_b=b) for a, b, v, _ in views], ignore_index=True)
        extra = {"dataset": ds, "pairs": views, **_comparison.setup(ds, f, rubric)}
    files = [find_file(d, stem, required=False) for stem in _INPUT_STEMS]
    truth = d / "truth.json"
    plan_file = None if ds.plan is None or ds.plan.path is None else Path(ds.plan.path)
    extra_files = (truth if truth.exists() else None, plan_file)
    inputs = [p for p in (*files, *extra_files) if p is not None]
    return Loaded(
        frame=f,
        inputs=inputs,
        describe={
            "arm_names": ds.arm_names,  # arms.toml or the rubric files' [arms]
            "rubrics": _rubric_provenance(f, ds.judgments),
            "judges": _judge_provenance(f, ds.judgments),
            "plan": plan_provenance(ds.plan, d),
            **({} if pairs is None else _comparison.describe(ds, pairs)),
        },
        extra=extra,
    )


def arm_pairs(ds: Any) -> list[tuple[str, str]] | None:
    """The pairs of arms the judgments name (``arm_a``, ``arm_b``), in the order first
    judged; None for the seeds' two arms (no pair named, or only WITH against WITHOUT)."""
    j = ds.judgments
    if "arm_a" not in j.columns or not j["arm_a"].notna().any():
        return None
    named = j.dropna(subset=["arm_a", "arm_b"])[["arm_a", "arm_b"]].astype(str)
    pairs = list(named.drop_duplicates().itertuples(index=False, name=None))
    return None if pairs == [("with", "without")] else pairs


def pair_view(ds: Any, a: str, b: str) -> tuple[pd.DataFrame, Any]:
    """The pair (``a``, ``b``) of a K-arm Dataset as the seeds' two arms: ``a``'s runs in
    the WITH role, ``b``'s in the WITHOUT role, the judgments of that pair (``a_first`` read
    as ``with_first``), the people's labels of that pair when they name it. Returns the
    verdict frame of the pair and the Dataset view.

    >>> import evalstats, tempfile
    >>> d = tempfile.mkdtemp()
    >>> _ = evalstats.simulate(d, arms=("none", "v1"), reference="none", n_tasks=2,
    ...                        n_replicates=1, judges=("openai:gpt-4o",))
    >>> f, view = pair_view(evalstats.load_dir(d), "v1", "none")
    >>> sorted(set(view.runs["arm"].astype(str))), len(f)
    (['with', 'without'], 2)
    """
    from .._schema import ARM_DTYPE, ORDER_DTYPE
    from ..frames import verdict_frame

    runs, j = ds.runs, ds.judgments
    arm = runs["arm"].astype(str)
    keep_r = arm.isin((a, b)).to_numpy()
    r = runs.loc[keep_r].copy()
    r["arm"] = pd.Categorical(arm[keep_r].map({a: "with", b: "without"}), dtype=ARM_DTYPE)
    keep_j = ((j["arm_a"].astype(str) == a) & (j["arm_b"].astype(str) == b)).to_numpy()
    jj = j.loc[keep_j].drop(columns=["arm_a", "arm_b"])
    order = jj["order"].astype(object).map({"a_first": "with_first", "b_first": "without_first"})
    jj = jj.assign(order=pd.Categorical(order, dtype=ORDER_DTYPE))
    r, jj = r.reset_index(drop=True), jj.reset_index(drop=True)
    # The source line numbers follow the rows kept (messages and the latest-call rule).
    for part, whole, keep in ((r, runs, keep_r), (jj, j, keep_j)):
        part.attrs = dict(whole.attrs)
        if whole.attrs.get("lines") is not None:
            part.attrs["lines"] = [n for n, k in zip(whole.attrs["lines"], keep, strict=True) if k]
    r.attrs["arm_names"] = {"with": ds.arms.name(a), "without": ds.arms.name(b)}
    r.attrs.pop("arms", None)
    labels = ds.labels
    if labels is not None:
        if "arm_a" in labels.columns:
            hit = (labels["arm_a"].astype(str) == a) & (labels["arm_b"].astype(str) == b)
            labels = labels.loc[hit.to_numpy()].drop(columns=["arm_a", "arm_b"])
            labels = labels.reset_index(drop=True) if len(labels) else None
        else:
            labels = None  # people's verdicts that name no pair of arms belong to none
    view = ds._replace(runs=r, judgments=jj, labels=labels)
    return verdict_frame(jj, r, ds.tasks), view


def plan_provenance(plan: Any, data_dir: Path) -> dict[str, Any] | None:
    """The declared plan as results.json records it: every field, its file (relative to the
    data directory: no machine paths), its sha256 and the primary row it names; None
    without a plan.

    >>> from evalstats.plan import parse_plan
    >>> plan = parse_plan({"primary_rubric": "with-without", "consensus": "unanimous",
    ...                    "statistic": "net_win"})
    >>> p = plan_provenance(plan, Path("."))
    >>> p["primary"], p["alpha"], p["sha256"] == plan.sha256
    ({'rubric': 'with-without', 'judge': 'consensus:unanimous', 'statistic': 'net_win'}, 0.05, True)
    """
    from ._results import to_jsonable

    if plan is None:
        return None
    file = None
    if plan.path is not None:
        path = Path(plan.path)
        try:
            file = path.relative_to(data_dir).as_posix()
        except ValueError:
            file = path.name
    return {
        **to_jsonable(plan.to_dict()),
        "file": file,
        "sha256": plan.sha256,
        "primary": {**plan.primary_key, "statistic": plan.statistic},
    }


def _rubric_provenance(frame: pd.DataFrame, judgments: pd.DataFrame) -> list[dict[str, Any]]:
    """Per rubric: the revision and sha256 of the prompt it resolves to (built in, or a rubric
    file of the data directory, whose path is given), and what the judgments used."""
    from ..frames import resolve_rubrics
    from ._results import to_jsonable

    found: dict[str, Any] = {}
    for (name, _, _), rubric in resolve_rubrics(judgments).items():
        found.setdefault(str(name), rubric)
    rows = []
    for name in sorted(frame["rubric"].astype(str).unique()):
        sub = frame.loc[frame["rubric"].astype(str) == name]
        observed = (
            sub.groupby(["prompt_revision", "prompt_sha256"], dropna=True)
            .size()
            .reset_index(name="n_judgments")
        )
        rubric = found.get(name)
        pkg_rev = None if rubric is None else rubric.revision
        pkg_sha = None if rubric is None else rubric.sha256
        path = None if rubric is None or rubric.path is None else str(rubric.path)
        rows.append(
            {
                "rubric": name,
                "package_revision": pkg_rev,
                "package_sha256": pkg_sha,
                "rubric_file": path,
                "judgments_prompt": to_jsonable(observed.to_dict("records")),
                "matches_package": bool(
                    len(observed) == 1
                    and observed["prompt_revision"].iloc[0] == pkg_rev
                    and observed["prompt_sha256"].iloc[0] == pkg_sha
                ),
            }
        )
    return rows


def _judge_provenance(frame: pd.DataFrame, judgments: pd.DataFrame) -> list[dict[str, Any]]:
    """Per judge: the model ids the provider reported (when the journal recorded them)."""
    judges = sorted(frame["judge"].astype(str).unique())
    model_ids: dict[str, list[str]] = {j: [] for j in judges}
    if "model_id" in judgments.columns:
        j = judgments
        ids = j.dropna(subset=["model_id"]).groupby(j["judge"].astype(str))["model_id"]
        for judge, values in ids:
            if judge in model_ids:
                model_ids[judge] = sorted({str(v) for v in values})
    return [{"judge": j, "model_ids": model_ids[j]} for j in judges]


def describe_parameters(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "judges": _as_list(p["judges"]),
        "rubric": p["rubric"],
        "confidence": float(p["confidence"]),
        "n_resamples": int(p["n_resamples"]),
        "seed": p["seed"],
    }


def sections() -> tuple[Section, ...]:
    """The evaluation's sections in computation order (the report page's bootstraps share one
    generator in exactly this order: changing it changes the published numbers)."""
    return (
        tuple(
            Section(name, page, _guarded(fn, tables))
            for name, page, fn, tables in (
                ("headline", "report", _headline, ["headline"]),
                ("consensus", "report", _consensus, ["consensus"]),
                # Adds columns to the two tables above; draws nothing from the generator.
                ("tests", "report", _tests, ["tests"]),
                # Draws nothing: early, so that the headline card can show what it found.
                ("audit", "report", _audit, ["audit"]),
                # Draws nothing: the row shown first, the card's caveats, the headline's marks.
                (
                    "headline_audit",
                    "report",
                    _headline_audit,
                    ["headline_choice", "headline_audit"],
                ),
                ("missing_bounds", "report", _missing_bounds, ["missing_bounds"]),
                # Draws nothing; before the first part's end: the headline's words need
                # position_bias (which rubrics are judged in both orders).
                ("blind", "report", _blind, ["dimensions", "position_bias"]),
                ("design_coverage", "report", _design_check, ["design_coverage"]),
                # Draws nothing (its cost rows, when the plan's statistic is one, do not depend
                # on the generator); after the design check, whose note its row carries; the
                # end of the page's first part.
                ("primary_test", "report", _primary_test, ["primary_test"]),
                ("agreement", "report", _agreement, ["agreement"]),
                ("disagreements", "report", _disagreements, ["disagreements"]),
                ("cost", "report", _cost, ["cost", "cost_sources", "judge_spend"]),
                # Reads the tables above (the design check's notes included); draws nothing.
                ("per_task", "report", _per_task, ["per_task"]),
                (
                    "accounting",
                    "report",
                    _accounting,
                    ["accounting", "sensitivity", "invalid_outputs"],
                ),
                # Its own generators (streams 11, 12); unavailable, drawing nothing, without labels.
                (
                    "labels",
                    "report",
                    _labels,
                    ["labels_agreement", "labels_confusion", "labels_ppi", "labels_needed"],
                ),
                ("design", "methodology", _design, ["design"]),
                ("power_mde", "methodology", _power, ["power_mde", "power_curve", "tasks_needed"]),
                (
                    "power_simulated",
                    "methodology",
                    _power_simulated,
                    ["mde_simulated", "tasks_needed_simulated"],
                ),
                ("ordinal_check", "methodology", _ordinal, ["ordinal_check", "ordinal_terms"]),
                ("coverage", "methodology", _coverage, ["coverage"]),
            )
        )
        + _comparison.sections()
    )
