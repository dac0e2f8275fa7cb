"""The evaluation report kind: the sections of ``report.ipynb`` and ``methodology.ipynb``,
each a package function's output filtered and labelled (a design a section cannot handle is
"unavailable, because ..."). With K arms each pair of arms gets the two-arm sections."""

from __future__ import annotations

import functools
import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._disagreement import DISAGREEMENT_TRIGGER, disagreeing
from .._families import model_family
from .._schema import BLIND_DIMENSIONS
from .._tidy import concat_results, stack_statistics, wide, with_diagnostics
from ..errors import DataError
from . import _comparison
from ._kinds import Context, Loaded, Section, Unavailable, base_parameters
from ._results import _RATES

__all__ = [
    "CONSENSUS_RULE",
    "check",
    "describe_parameters",
    "detect",
    "load",
    "plan_provenance",
    "sections",
]

# Seed 000: when in doubt, "(b) roughly equivalent": judges that disagree make a tie.
CONSENSUS_RULE = "unanimous"
# Judge text in example tables is cut to this many characters.
_TEXT_LIMIT = 400
_N_EXAMPLES = 12
_INPUT_STEMS = ("tasks", "runs", "judgments", "labels")
_EXAMPLE_COLUMNS = ["rubric", "task_id", "replicate", "order", "judge", "outcome", "label"]

# The between-task correlation is not estimated from one small evaluation: a range of ICCs.
_ICC_GRID = (0.0, 0.1, 0.3, 0.5)
_NET_WIN_TARGETS = (0.1, 0.2, 0.3)
_POWER = 0.8
_N_TASKS_GRID = (5, 10, 15, 20, 30, 40, 60, 80, 100, 150, 200, 300)
_CURVE_ICC = 0.3
_POWER_SIMS = 4000
_COVERAGE_EVALS = 1000
_COVERAGE_MAX_RESAMPLES = 1000


def _rubrics_in(frame: pd.DataFrame) -> list[str]:
    known = ("with-without", "blind-pair")
    present = set(frame["rubric"].astype(str))
    return [r for r in known if r in present] + sorted(present - set(known))


def _multi_judge_rubrics(f: pd.DataFrame) -> list[str]:
    return [r for r in _rubrics_in(f) if f.loc[f["rubric"] == r, "judge"].nunique() >= 2]


def _need_verdicts(f: pd.DataFrame) -> None:
    """Win rates need readable verdicts; say so (rather than fail) when there are none."""
    if not (f["status"] == "ok").any():
        counts = f["status"].astype(str).value_counts()
        seen = ", ".join(f"{n} {s}" for s, n in counts.items()) or "no judgments"
        raise Unavailable(
            f"no judge gave a readable verdict here ({seen}): nothing to count; "
            "see the accounting section"
        )


_REASONS = {
    "at least 2 clusters": "needs readable verdicts on at least two tasks (the task is the unit "
    "of resampling)",
    "p_tie must be in [0, 1)": "every verdict is a tie: there is no win or loss to size",
}


def _reason(exc: BaseException) -> str:
    msg = str(exc).strip() or type(exc).__name__
    for needle, plain in _REASONS.items():
        if needle in msg:
            return f"{plain}: {msg}"
    return f"cannot be computed on this data: {msg}"


def _guarded(
    compute: Callable[[Context], Mapping[str, Any]], tables: Sequence[str], study: bool = False
) -> Callable[[Context], Mapping[str, Any]]:
    """``compute``, a design it cannot handle making each of its ``tables`` unavailable (a
    design ``study`` too on a pair whose studies are left to the headline pair)."""

    @functools.wraps(compute)
    def run(ctx: Context) -> Mapping[str, Any]:
        try:
            if study and (why := ctx.extra.get("design_skipped")):
                raise Unavailable(why)
            return with_diagnostics(compute(ctx))
        except Unavailable:
            raise
        except (ValueError, KeyError, IndexError, ZeroDivisionError, FloatingPointError) as exc:
            why = _reason(exc)
            return {t: Unavailable(why) for t in tables}

    return run


def _attempt(make: Callable[[], Any]) -> Any:
    """One table of a section: its value, or why it cannot be computed here."""
    try:
        return make()
    except Unavailable as why:
        return why
    except (ValueError, KeyError, IndexError, ZeroDivisionError, FloatingPointError) as exc:
        return Unavailable(_reason(exc))


# Past this many pairs of arms the design studies (_STUDIES, the design check) run on the headline
# pair (the first judged) only: they check the one design all pairs share, at most of the cost.
DESIGN_PAIRS = 6
_STUDIES = ("missing_bounds", "design", "power_mde", "power_simulated", "ordinal_check", "coverage")


def _common(ctx: Context) -> dict[str, Any]:
    return {"confidence": ctx.confidence, "n_resamples": ctx.n_resamples}


def _child_rng(seed: int | None, stream: int) -> np.random.Generator:
    """A generator of its own for one section, derived from the report's seed."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


def _plan(ctx: Context) -> Any:
    """The data directory's declared analysis plan (an :class:`evalstats.plan.Plan`), or None."""
    return getattr(ctx.extra.get("dataset"), "plan", None)


def _front(table: pd.DataFrame, cols: str | list[str]) -> pd.DataFrame:
    cols = [cols] if isinstance(cols, str) else cols
    return table[[*cols, *(c for c in table.columns if c not in cols)]]


# The seeds' rubrics, the primary first.
SEED_RUBRICS = ("with-without", "blind-pair")
SEED_JUDGE_MODEL = "claude-sonnet-4-20250514"
CHOICE_RULE = (
    "the rubric is the judge prompt seed's three-way with-without label, else the blind-pair "
    "seed's, else the one with the most readable verdicts; the judge is the seed's default, "
    "Anthropic's Claude Sonnet, unless it shares the agent's model family, else the judge of "
    "another family with the most readable verdicts, ties going to the first in the judgments"
)
FLAG_COLUMN = "audit"
_DISAGREEMENT = "judge_disagreement"


def _most_ok(ok: pd.DataFrame, col: str, among: list[str]) -> str:
    """The value of ``col`` among ``among`` with the most ok verdicts, ties by first seen."""
    counts = ok[col].astype(str).value_counts()
    best = max(int(counts.get(v, 0)) for v in among)
    return next(v for v in among if int(counts.get(v, 0)) == best)


def choose_first(
    frame: pd.DataFrame, agent_models: list[str], families: Mapping[str, str | None] | None = None
) -> tuple[str, str]:
    """The (rubric, judge) the headline shows first without a plan (:data:`CHOICE_RULE`; a
    seed's rubric is also one made from it: ``families``, name -> :attr:`Rubric.family`)."""
    ok = frame.loc[frame["status"].astype(str) == "ok"]
    if ok.empty:
        ok = frame
    seen_rubrics = list(dict.fromkeys(ok["rubric"].astype(str)))
    seed = {r: (families or {}).get(r) or r for r in seen_rubrics}
    kin = ([r for r in seen_rubrics if seed[r] == s] for s in SEED_RUBRICS if s in seed.values())
    among = next(kin, seen_rubrics)
    rubric = next((r for r in SEED_RUBRICS if r in among), None) or _most_ok(ok, "rubric", among)
    mine = ok.loc[ok["rubric"].astype(str) == rubric]
    judges = list(dict.fromkeys(mine["judge"].astype(str)))
    agent_fams = {model_family(a) for a in agent_models} - {"unknown"}
    other = [j for j in judges if model_family(j) not in agent_fams] or judges
    default = [j for j in other if j.split(":", 1)[-1] == SEED_JUDGE_MODEL]
    return rubric, (default[0] if default else _most_ok(mine, "judge", other))


def _headline_audit(ctx: Context) -> dict[str, Any]:
    """``headline_choice``, ``headline_audit`` and the ``audit`` column (module docstring)."""
    head = ctx.tables.get("headline")
    if not isinstance(head, pd.DataFrame):
        raise Unavailable("no headline table: nothing to choose or mark")
    plan = _plan(ctx)
    if plan is not None:
        key = plan.primary_key
        rubric, judge = str(key["rubric"]), str(key["judge"])
        rule = "the primary declared in the analysis plan (plan.toml)"
    else:
        from ..frames import resolve_rubrics

        ds = ctx.extra.get("dataset")
        runs = getattr(ds, "runs", None)
        agents = [] if runs is None else sorted({str(a) for a in runs["agent_model"].dropna()})
        found = {} if ds is None else resolve_rubrics(ds.judgments).items()
        rubric, judge = choose_first(ctx.frame, agents, {k[0]: r.family for k, r in found})
        rule = CHOICE_RULE
    out: dict[str, Any] = {
        "headline_choice": pd.DataFrame([{"rubric": rubric, "judge": judge, "rule": rule}])
    }
    audit = ctx.tables.get("audit")
    if not isinstance(audit, pd.DataFrame):
        raise Unavailable("the audit is not available: the headline cannot show its caveats")
    status = audit["status"].astype(str)
    caveats = audit.loc[status != "pass"].assign(_fail=(status != "fail").astype(int))
    caveats = caveats.sort_values("_fail", kind="stable").drop(columns="_fail")
    out["headline_audit"] = caveats.reset_index(drop=True)
    failing = set(audit.attrs.get("rubrics", {}).get(_DISAGREEMENT, []))
    for name in ("headline", "consensus"):
        table = ctx.tables.get(name)
        if not isinstance(table, pd.DataFrame):
            continue
        table = table.copy()
        bad = table["rubric"].astype(str).isin(failing).to_numpy()
        table[FLAG_COLUMN] = np.where(bad, f"fail: {_DISAGREEMENT}", "")
        out[name] = table
    return out


# The headline's ``estimate_source`` when there are labels (the PPI rates are in labels_ppi).
HEADLINE_ESTIMATE = "judge-only"

# Labels-needed target: the interval this many times narrower than now.
SHARPER = 2.0

# The section's own generator streams (other sections use 1-4).
_STREAM_GOLD, _STREAM_PPI = 11, 12


def labels_needed(
    half_width: float, n_labelled: int, *, target_half_width: float, n_pairs: int | None = None
) -> int:
    """Labels for an interval of half-width ``target_half_width``, from one of ``half_width``
    with ``n_labelled`` labels: ``ceil(n * (half_width / target) ** 2)``, capped at ``n_pairs``."""
    if not (half_width > 0 and target_half_width > 0 and n_labelled >= 1):
        raise ValueError("half-widths must be > 0 and n_labelled >= 1")
    # The 1e-9 keeps a float product like 40.000000000000007 from asking for one more.
    n = math.ceil(n_labelled * (half_width / target_half_width) ** 2 - 1e-9)
    return min(n, n_pairs) if n_pairs is not None else n


def _labels(ctx: Context) -> dict[str, Any]:
    from scipy.stats import norm

    from ..records import EvalstatsWarning, has_provenance
    from ..stats.agreement import judge_vs_gold
    from ..stats.ppi import ppi_win_rates

    ds = ctx.extra.get("dataset")
    labels = getattr(ds, "labels", None)
    if labels is None or labels.empty:
        raise Unavailable("no labels.jsonl in the data directory (`evalstats label`)")
    frame = ctx.frame
    agreement, confusion, ppi, needed = [], [], [], []
    notes: list[str] = []
    gold_rng, ppi_rng = _child_rng(ctx.seed, _STREAM_GOLD), _child_rng(ctx.seed, _STREAM_PPI)
    z = float(norm.ppf(0.5 + ctx.confidence / 2))
    for rubric in _rubrics_in(frame):
        f = frame.loc[frame["rubric"].astype(str) == rubric]
        g = judge_vs_gold(
            f, labels, rubric=rubric, rng=gold_rng, confidence=ctx.confidence,
            n_resamples=ctx.n_resamples,
        )  # fmt: skip
        if g.n_gold_pairs == 0:
            notes.append(f"{rubric}: no labelled pair has a majority label")
            continue
        agreement.append(g.judges.assign(rubric=rubric))
        confusion.append(g.confusion.assign(rubric=rubric))
        for judge in sorted(f["judge"].astype(str).unique()):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", EvalstatsWarning)
                r = ppi_win_rates(
                    f, labels, judge=judge, rubric=rubric, rng=ppi_rng, **_common(ctx)
                )
            notes.extend(f"{rubric} / {judge}: {w.message}" for w in caught)
            d = r.diagnostics
            r = r.assign(rubric=rubric)
            ppi.append(r)
            n_lab = int(d["n_labelled"].iloc[0]) if isinstance(d, pd.DataFrame) else 0
            half = (r["ci_high"] - r["ci_low"]).to_numpy(dtype=float) / 2
            for stat, h, n in zip(r["statistic"], half, r["n"], strict=True):
                ok = bool(np.isfinite(h) and h > 0 and n_lab >= 1)
                t = h / SHARPER
                k = labels_needed(h, n_lab, target_half_width=t, n_pairs=int(n)) if ok else None
                needed.append(dict(rubric=rubric, judge=judge, statistic=stat, n_labelled=n_lab,
                                   n_pairs=int(n), half_width=h, target_half_width=t,
                                   labels_needed=k))  # fmt: skip
    if not ppi:
        raise Unavailable("; ".join(notes) or "no labelled pair was judged")
    front = ["rubric", "judge"]
    out = {
        "labels_agreement": _front(pd.concat(agreement, ignore_index=True), front),
        "labels_confusion": _front(pd.concat(confusion, ignore_index=True), front),
        "labels_ppi": _front(pd.concat(ppi, ignore_index=True), front),
        "labels_needed": pd.DataFrame(needed),
    }
    head = ctx.tables.get("headline")
    if isinstance(head, pd.DataFrame):
        # The headline's rates stay the judges' own (PPI needs a random sample of >= 15 labels).
        out["headline"] = head.assign(estimate_source=HEADLINE_ESTIMATE)
    out["labels_ppi"].attrs["notes"] = notes
    out["labels_ppi"].attrs["random_sample"] = has_provenance(labels)
    out["labels_ppi"].attrs["z"] = z
    return out


def _replicates(ctx: Context) -> dict[str, Any]:
    from ..stats.reliability import replicates

    runs = ctx.extra["dataset"].runs
    if "passed" not in runs.columns or not runs["passed"].notna().any():
        raise Unavailable("the runs have no `passed` outcome: no replicates to compare")
    out = replicates(runs, confidence=ctx.confidence)
    ids = runs.attrs.get("arm_ids")  # K arms: the pair's own arm ids, not with / without
    if ids:
        out = out.assign(arm=out["arm"].map(ids), reference=out["reference"].map(ids))
    return {"replicates": out}


def _monitor(ctx: Context) -> dict[str, Any]:
    """The headline judge's confidence sequence over tasks in the order they completed."""
    from ..records import find_file
    from ..stats.sequential import monitor

    runs = ctx.extra["dataset"].runs
    done = runs["started_at"] + pd.to_timedelta(runs["wall_s"], unit="s")
    if done.isna().all():
        raise Unavailable("the runs have no completion times (started_at + wall_s)")
    choice = ctx.tables.get("headline_choice")
    if not isinstance(choice, pd.DataFrame):
        raise Unavailable("no headline judge chosen: nothing to monitor")
    rubric, judge = str(choice["rubric"].iloc[0]), str(choice["judge"].iloc[0])
    f = ctx.frame
    f = f.loc[(f["rubric"].astype(str) == rubric) & (f["judge"].astype(str) == judge)]
    if f.empty:
        raise Unavailable(f"the headline judge {judge} is not one judge's verdicts")
    finished = done.groupby(runs["task_id"].astype(str)).max()
    f = f.assign(completed_at=f["task_id"].astype(str).map(finished))
    out = monitor(f, order="completed_at", by=["rubric", "judge"], confidence=ctx.confidence)
    journal = find_file(ctx.data_dir, "judgments", required=False)
    stops = [] if journal is None or journal.suffix != ".jsonl" else [
        json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()
        if '"stopped_early"' in line
    ]  # fmt: skip
    out["stopped_early"] = next((str(s.get("reason")) for s in stops[::-1]), None)
    return {"monitor": out}


def estimate_note(headline: pd.DataFrame) -> str:
    """The headline card's words on which estimate it shows; empty without labels."""
    if "estimate_source" not in headline.columns or not len(headline):
        return ""
    shown = ", ".join(sorted(set(headline["estimate_source"].astype(str))))
    return f" Estimate shown: {shown} (the people's PPI-corrected rates: 'Judges against people')."


def _headline(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates

    _need_verdicts(ctx.frame)
    return {"headline": win_rates(ctx.frame, by=["rubric", "judge"], rng=ctx.rng, **_common(ctx))}


def _consensus(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import consensus
    from ..stats.rates import win_rates

    multi = _multi_judge_rubrics(ctx.frame)
    if not multi:
        raise Unavailable("fewer than two judges on every rubric")
    _need_verdicts(ctx.frame)
    plan = _plan(ctx)
    rules = [CONSENSUS_RULE]
    if plan is not None and plan.consensus is not None and plan.consensus not in rules:
        rules.append(plan.consensus)
    cons = pd.concat(
        [consensus(ctx.frame, rule, rubric=r) for rule in rules for r in multi], ignore_index=True
    )
    ctx.scratch["consensus_frame"] = cons  # the design check re-simulates its design
    return {"consensus": win_rates(cons, by=["rubric", "judge"], rng=ctx.rng, **_common(ctx))}


# Holm's family: every net-win test of the headline and consensus tables.
_TEST_TABLES = ("headline", "consensus")


def _tests(ctx: Context) -> dict[str, Any]:
    """``primary`` and ``net_win_p_holm`` on the headline and consensus tables."""
    from ..stats.ranking import holm_table

    names = [t for t in _TEST_TABLES if t in ctx.tables]
    if not names:
        raise Unavailable("no headline table: no test to adjust")
    # One test per group: the net-win row (the score's p-value is the same test).
    parts = []
    for t in names:
        rows = pd.DataFrame(ctx.tables[t])
        rows = rows.assign(_table=t, _row=np.arange(len(rows)))
        parts.append(rows.loc[rows["statistic"] == "net_win"])
    family = pd.concat(parts, ignore_index=True)
    keys = family[["rubric", "judge"]].astype(str)
    plan = _plan(ctx)
    marked = np.zeros(len(family), dtype=bool)
    if plan is not None and plan.statistic in _RATES:
        key = plan.primary_key
        marked = ((keys["rubric"] == key["rubric"]) & (keys["judge"] == key["judge"])).to_numpy()
    tested_alone = marked if plan is not None and plan.statistic == "net_win" else None
    adjusted = holm_table(family, p="p_value", primary=tested_alone if marked.sum() == 1 else None)
    out: dict[str, Any] = {}
    for t in names:
        hit = (adjusted["_table"] == t).to_numpy()
        rows = adjusted.loc[hit]
        table = ctx.tables[t].copy()
        p_holm = np.full(len(table), np.nan)
        p_holm[rows["_row"].to_numpy()] = rows["p_holm"].to_numpy()
        table["p_holm"] = p_holm  # on the net-win row, the test Holm's family holds
        diag = table.diagnostics.copy()
        diag.insert(diag.columns.get_loc("judge") + 1, "primary", marked[hit])
        table.diagnostics = diag
        out[t] = table
    return out


def _missing_bounds(ctx: Context) -> dict[str, Any]:
    """The net win with over-budget pairs excluded, at its worst and best case, under the
    arm-aware rule and the bounds' interval, per rubric x judge."""
    from ..stats.rates import bounds_view, missing_bounds, win_rates

    _need_verdicts(ctx.frame)
    by = ["rubric", "judge"]
    # Its own generator: the other numbers must not depend on whether this section ran.
    rng = _child_rng(ctx.seed, 1)
    bounds = missing_bounds(ctx.frame, by=by, rng=rng, **_common(ctx))
    net = bounds_view(bounds, "net_win")
    readings = [
        ("net_win", net["estimate"], np.nan, np.nan),
        ("worst_case", net["worst_case"], np.nan, np.nan),
        ("best_case", net["best_case"], np.nan, np.nan),
    ]
    if "over_budget_arm" in ctx.frame.columns:
        aware = win_rates(ctx.frame, by=by, no_answer_as="arm_aware", rng=rng, **_common(ctx))
        aware = pd.DataFrame(aware.loc[aware["statistic"] == "net_win"])
        aware = aware.astype({c: str for c in by}).set_index(by)
        aware = aware.reindex(pd.MultiIndex.from_frame(net[by].astype(str)))
        readings.append(("arm_aware", *(aware[c].to_numpy() for c in _EST_CI)))
    readings.append(("bounds", np.nan, net["ci_low"], net["ci_high"]))
    common = {"n": net["n"].to_numpy(), "method": bounds["method"].iloc[0]}
    common["confidence"] = ctx.confidence
    statistics = [
        (name, {c: np.asarray(v, dtype=float) for c, v in zip(_EST_CI, vals, strict=True)} | common)
        for name, *vals in readings
    ]
    out = stack_statistics(net[by], statistics, diagnostics=net[[*by, "n", "n_missing"]])
    return {"missing_bounds": out}


_EST_CI = ("estimate", "ci_low", "ci_high")


def _design_check(ctx: Context) -> dict[str, Any]:
    """The headline and consensus intervals' simulated coverage on this very design."""
    from ..stats import design_coverage

    by = ["rubric", "judge"]
    if why := ctx.extra.get("design_skipped"):  # the rows say why they have no check
        notes = {n: ctx.tables.get(n) for n in ("headline", "consensus")}
        notes = {n: _with_coverage_notes(t, t[by].assign(ci_note=why), by) for n, t in notes.items()
                 if isinstance(t, pd.DataFrame)}  # fmt: skip
        return {"design_coverage": Unavailable(why), **notes}
    _need_verdicts(ctx.frame)
    # Its own generator: whether this check ran must not move any other number.
    cov = design_coverage(
        ctx.frame, by=by, confidence=ctx.confidence, n_resamples=2000, rng=_child_rng(ctx.seed, 2)
    )
    out: dict[str, Any] = {}
    parts = [cov]
    cons_frame = ctx.scratch.get("consensus_frame")
    cons_cov = None
    if cons_frame is not None and isinstance(ctx.tables.get("consensus"), pd.DataFrame):
        cons_cov = _attempt(
            lambda: design_coverage(
                cons_frame,
                by=by,
                confidence=ctx.confidence,
                n_resamples=_CONSENSUS_COVERAGE_SIMS,
                rng=_child_rng(ctx.seed, 3),
            )
        )
        if isinstance(cons_cov, pd.DataFrame):
            parts.append(cons_cov)
    out["design_coverage"] = pd.concat(parts, ignore_index=True) if len(parts) > 1 else cov
    for name, table_cov in (("headline", cov), ("consensus", cons_cov)):
        noted = _with_coverage_notes(ctx.tables.get(name), table_cov, by)
        if noted is not None:
            out[name] = noted
    return out


# Evaluations of the consensus rows' design check (MC SE 0.007 at 0.95).
_CONSENSUS_COVERAGE_SIMS = 1000


def _with_coverage_notes(table: Any, cov: Any, by: list[str]) -> pd.DataFrame | None:
    """``table`` with the design check's ``ci_note`` appended; None when ``cov`` has none."""
    if not isinstance(table, pd.DataFrame) or not isinstance(cov, pd.DataFrame):
        return None
    if not cov["ci_note"].astype(bool).any():
        return None
    notes = cov.astype({c: str for c in by}).set_index(by)["ci_note"]
    idx = pd.MultiIndex.from_frame(table[by].astype(str))
    extra = notes.reindex(idx).fillna("").to_numpy(dtype=object)
    out = table.copy()
    old = out["ci_note"].fillna("").astype(str) if "ci_note" in out else [""] * len(out)
    out["ci_note"] = ["; ".join(n for n in (a, b) if n) for a, b in zip(old, extra, strict=True)]
    return out


def _agreement(ctx: Context) -> dict[str, Any]:
    from ..stats.agreement import judge_agreement

    multi = _multi_judge_rubrics(ctx.frame)
    if not multi:
        raise Unavailable("fewer than two judges on every rubric")
    # Rubrics on which at least two judges gave a verdict on the same pair (and order).
    ok = ctx.frame.loc[ctx.frame["status"] == "ok"]
    g = ok.assign(rubric=ok["rubric"].astype(str), order=ok["order"].astype(object).fillna(""))
    n = g.groupby(["rubric", "task_id", "replicate", "order"], observed=True)["judge"].nunique()
    multi = [r for r in multi if r in set(n[n >= 2].index.get_level_values("rubric"))]
    if not multi:
        raise Unavailable(
            "kappa needs two judges with answers on the same pairs: none here "
            "(on every rubric, at most one judge gave a readable verdict per pair)"
        )
    parts = [judge_agreement(ctx.frame, rubric=r, rng=ctx.rng, **_common(ctx)) for r in multi]
    return {"agreement": concat_results(parts)}


def _text(series: pd.Series) -> pd.Series:
    """Judge text cut for display (escaping happens when rendered, never here)."""
    s = series.astype("string").fillna("")
    long = s.str.len() > _TEXT_LIMIT
    return s.where(~long, s.str.slice(0, _TEXT_LIMIT) + " […]")


def _disagreements(ctx: Context) -> dict[str, Any]:
    """Example pairs on which two judges gave different outcomes, with their reasoning."""
    from ..frames import select_rubric, wide_by_judge

    frame = ctx.frame
    columns = [*_EXAMPLE_COLUMNS, "reasoning"]
    rows = []
    for rubric in _rubrics_in(frame):
        sub, _ = select_rubric(frame, rubric)
        sub = sub.loc[sub["status"] == "ok"]
        if sub["judge"].nunique() < 2:
            continue
        wide = wide_by_judge(sub, rubric=rubric)
        judges = [j for j in sub["judge"].astype(str).unique() if j in wide.columns]
        if len(judges) < 2:
            continue
        on = ["task_id", "replicate", *(["order"] if "order" in wide.columns else [])]
        keys = wide.loc[disagreeing(wide, judges), on].head(_N_EXAMPLES)
        if "order" in on:  # plain objects on both sides, so a missing order matches itself
            keys = keys.assign(order=keys["order"].astype(object))
        ex = sub.assign(order=sub["order"].astype(object)).merge(keys, on=on)
        rows.append(ex.assign(rubric=rubric, reasoning=_text(ex["reasoning"]))[columns])
    if not rows:
        return {"disagreements": pd.DataFrame(columns=columns)}
    out = pd.concat(rows, ignore_index=True)
    out = out.astype({"judge": str, "outcome": "string", "order": "string"})
    by = ["rubric", "task_id", "replicate", "order", "judge"]
    out = out.sort_values(by, kind="stable", na_position="first").reset_index(drop=True)
    return {"disagreements": out}


def _cost(ctx: Context) -> dict[str, Any]:
    from ..stats.cost import cost_ratios, judge_spend

    cost = _attempt(lambda: cost_ratios(ctx.frame, confidence=ctx.confidence))
    return {
        "cost": cost,
        "cost_sources": _cost_sources(cost),
        "judge_spend": _attempt(lambda: judge_spend(ctx.frame, by=["rubric", "judge"])),
    }


def _cost_sources(cost: Any) -> Any:
    """The billed and transcript token ratios side by side, or why there is one source only."""
    if isinstance(cost, Unavailable):
        return cost
    other = cost.attrs.get("transcript_ratios")
    if other is None:
        source = cost.attrs.get("token_source")
        return Unavailable(
            f"one token source only ({source}): "
            + (cost.attrs.get("token_source_reason") or "no pair has both billed and transcript")
        )
    cols = ["statistic", "token_source", "estimate", "ci_low", "ci_high", "method", "n", "n_tasks"]
    billed = pd.DataFrame(cost.loc[cost["statistic"].str.startswith("tokens_"), cols])
    transcript = pd.DataFrame(other[cols])
    both = pd.concat([billed, transcript], ignore_index=True)
    ratio = (
        billed.set_index("statistic")["estimate"] / transcript.set_index("statistic")["estimate"]
    )
    both["billed_over_transcript"] = both["statistic"].map(ratio)
    both["confidence"] = float(cost["confidence"].iloc[0])
    return both


def _per_task(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates

    _need_verdicts(ctx.frame)
    return {"per_task": win_rates(ctx.frame, by=["rubric", "task_id"], rng=ctx.rng, **_common(ctx))}


def _blind(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import dimension_means, position_bias

    f = ctx.frame
    dims = f.loc[f[[f"with_{d}" for d in BLIND_DIMENSIONS]].notna().any(axis=1)]
    blind = f.loc[f["order"].notna()]
    return {
        "dimensions": Unavailable("no blind-rubric dimension scores in the data")
        if dims.empty
        else _attempt(lambda: dimension_means(dims, confidence=ctx.confidence)),
        "position_bias": Unavailable("no blind-rubric judgments with an order")
        if blind.empty
        else _attempt(
            lambda: position_bias(blind, by=["rubric", "judge"], confidence=ctx.confidence)
        ),
    }


def _accounting(ctx: Context) -> dict[str, Any]:
    from ..stats.rates import win_rates
    from ..summary import status_table

    f = ctx.frame

    def views() -> pd.DataFrame:
        _need_verdicts(f)
        by, kw = ["rubric", "judge"], _common(ctx)
        views = ("exclude", "loss")
        rates = {v: win_rates(f, by=by, no_answer_as=v, rng=ctx.rng, **kw) for v in views}
        return concat_results(rates, "no_answer_as")

    bad = f.loc[f["status"] == "invalid"]
    cols = ["rubric", "task_id", "replicate", "judge", "parse_error"]
    invalid = bad[cols].astype({"rubric": str, "judge": str})
    return {
        "accounting": _attempt(lambda: status_table(f)),
        "sensitivity": _attempt(views),
        "invalid_outputs": invalid.assign(raw=_text(bad["raw"])).reset_index(drop=True),
    }


def _audit(ctx: Context) -> dict[str, Any]:
    from ..methodology import audit

    ds, f = ctx.extra["dataset"], ctx.frame
    j = ds.judgments
    keep = j["judge"].astype(str).isin(set(f["judge"].astype(str)))
    keep &= j["rubric"].astype(str).isin(set(f["rubric"].astype(str)))
    table = audit(ds.tasks, ds.runs, j.loc[keep], frame=f, plan=ds.plan,
                  disagreement_threshold=DISAGREEMENT_TRIGGER)  # fmt: skip
    return {"audit": table}


# The value of no difference (score = (1 + net win) / 2); a single rate has none.
_NULLS = {"net_win": 0.0, "score": 0.5}
_COST_WORDS = {
    "tokens_total_ratio": "total tokens",
    "tokens_geomean_ratio": "tokens per pair",
    "tokens_median_ratio": "tokens per pair",
    "wall_total_ratio": "total wall-clock time",
    "wall_geomean_ratio": "wall-clock time per pair",
    "wall_median_ratio": "wall-clock time per pair",
}
_SE_WORDS = {
    "cr2": "CR2 SE (Bell & McCaffrey 2002), Bell-McCaffrey df",
    "iid": "IID SE over verdicts (not clustered), normal reference",
    "cr1": "CR1 SE, C - 1 df",
}
PRIMARY_TEST_COLUMNS = (
    "rubric", "judge", "statistic", "source", "n", "n_tasks", "estimate", "test_centre",
    "se", "df", "null", "test", "alpha", "margin", "margin_kind", "lower_margin",
    "upper_margin", "p_value", "ci_low", "ci_high", "ci_level", "decision", "conclusion",
    "method", "ci_note",
)  # fmt: skip


def _primary_row(ctx: Context, plan: Any) -> tuple[str, pd.Series]:
    """The plan's primary row: (table name, row) of the headline / consensus or cost table."""
    key = plan.primary_key
    if plan.statistic in _RATES:
        for name in _TEST_TABLES:
            t = ctx.tables.get(name)
            if not isinstance(t, pd.DataFrame):
                continue
            t = wide(t)  # the group's row: every rate's estimate, SE and df side by side
            hit = t.loc[
                (t["rubric"].astype(str) == key["rubric"])
                & (t["judge"].astype(str) == key["judge"])
            ]
            if len(hit):
                return name, hit.iloc[0]
        raise Unavailable(
            f"the plan's primary ({key['judge']} on the {key['rubric']} rubric) is not among "
            "these results: its judge or rubric is not in the data selected"
        )
    cost = ctx.tables.get("cost")
    if cost is None:
        # Before the cost section: these rows do not depend on the generator; a child stream.
        from ..stats.cost import cost_ratios

        cost = _attempt(lambda: cost_ratios(ctx.frame, confidence=ctx.confidence))
    if not isinstance(cost, pd.DataFrame) or plan.statistic not in set(cost["statistic"]):
        raise Unavailable(
            f"the plan's primary {plan.statistic} is a cost ratio, and the cost table is not "
            "available here (see the cost section)"
        )
    return "cost", cost.loc[cost["statistic"] == plan.statistic].iloc[0]


def _conclusion(stat: str, test: str, lo: float, hi: float, margin: float | None) -> str:
    """What rejecting the declared null means, in words."""
    if stat in _COST_WORDS:
        what = _COST_WORDS[stat]
        label = f"{stat} (WITH / WITHOUT)"
        phrases = {
            "two-sided": f"WITH and WITHOUT differ in {what} ({label} != 1)",
            "greater": f"WITH uses more {what} than WITHOUT ({label} > 1)",
            "less": f"WITH uses less {what} than WITHOUT ({label} < 1)",
            "equivalence": f"WITH's {what} is equivalent to WITHOUT's within a factor "
            f"{hi:.4g} ({lo:.4g} < {label} < {hi:.4g})",
        }
        if test == "non-inferiority":
            return (
                f"WITH uses no more than {hi:.4g}x the {what} of WITHOUT ({label} < {hi:.4g})"
                if np.isfinite(hi)
                else f"WITH uses at least {lo:.4g}x the {what} of WITHOUT ({label} > {lo:.4g})"
            )
        return phrases[test]
    word = stat.replace("_", " ")
    null = _NULLS[stat]
    if test == "equivalence":
        return f"WITH is equivalent to WITHOUT within {margin:g} ({lo:g} < {word} < {hi:g})"
    if test == "non-inferiority":
        return (
            f"WITH is non-inferior to WITHOUT within {margin:g} ({word} > {lo:g})"
            if np.isfinite(lo)
            else f"WITH is at most {margin:g} better than WITHOUT ({word} < {hi:g})"
        )
    return {
        "two-sided": f"WITH and WITHOUT differ ({word} != {null:g})",
        "greater": f"WITH is better than WITHOUT ({word} > {null:g})",
        "less": f"WITH is worse than WITHOUT ({word} < {null:g})",
    }[test]


def _primary_test(ctx: Context) -> dict[str, Any]:
    """The test the plan declares, computed: one row (see :data:`PRIMARY_TEST_COLUMNS`)."""
    from ..stats import equivalence as eq
    from ..stats.cost import GPQ_HULL_METHOD, GPQ_METHOD, cost_ratios, total_ratio_draws

    plan = _plan(ctx)
    if plan is None:
        raise Unavailable(
            "no analysis plan declared (plan.toml in the data directory): every "
            "test of the report is exploratory"
        )
    source, row = _primary_row(ctx, plan)
    stat, key = plan.statistic, plan.primary_key
    n = int(row["n"]) if "n" in row else int(row["n_pairs"])
    out: dict[str, Any] = dict(rubric=key["rubric"], judge=key["judge"], statistic=stat,
                               source=source, n=n, n_tasks=int(row["n_tasks"]), alpha=plan.alpha,
                               margin=plan.margin, margin_kind=plan.margin_kind)  # fmt: skip
    notes = [str(row["ci_note"])] if "ci_note" in row and str(row.get("ci_note") or "") else []
    if source == "cost":
        out["estimate"] = float(row["estimate"])
        with np.errstate(divide="ignore", invalid="ignore"):
            # The t intervals are symmetric on the log scale: centre the test at their midpoint.
            est = 0.5 * (np.log(float(row["ci_low"])) + np.log(float(row["ci_high"])))
        se, df, null, better = float(row["se"]), float(row["df"]), 0.0, "lower"
        margin = None if plan.margin is None else float(np.log1p(plan.margin))
        base = f"t test on the log ratio, {row['method']}"
        usable = "median" not in stat
        refusal = "the median ratio has no standard error to test with"
    else:
        est = float(row[stat])
        out["estimate"] = est
        # The rates' (working-independence) df for every rate, as the published numbers use.
        se, df, better = float(row[f"{stat}_se"]), float(row["win_rate_df"]), "higher"
        method = str(row["method"])
        kind = "cr2" if method.startswith("cr2") else ("iid" if method.startswith("iid") else "cr1")
        base = f"t test on the {_SE_WORDS[kind]} ({source} row, {method})"
        null = _NULLS.get(stat, np.nan)
        margin = plan.margin
        usable = stat in _NULLS
        refusal = (
            f"a {stat.replace('_', ' ')} alone has no value of no difference between WITH and "
            "WITHOUT (declare net_win or score to test)"
        )
    draws = None
    if source == "cost" and usable and str(row["method"]).startswith((GPQ_METHOD, GPQ_HULL_METHOD)):
        # The total ratio's default interval is generalized pivotal: test on its draws.
        draws = total_ratio_draws(ctx.frame, measure=stat.split("_")[0])
        usable = draws is not None
        refusal = "the pivotal draws of this ratio are not available here"
        base = f"generalized pivotal test on the log ratio, {row['method']}"
    if draws is None and usable and not (np.isfinite(est) and np.isfinite(se) and df > 0):
        usable, refusal = False, "no cluster-robust SE and df here (fewer than two tasks?)"
    if not usable:
        out |= {"test_centre": np.nan, "se": se, "df": df, "null": null, "test": "none"}
        out |= {"p_value": np.nan, "decision": "no test", "conclusion": f"no test: {refusal}"}
        out |= {"method": base, "ci_note": "; ".join(notes)}
        return {"primary_test": pd.DataFrame([out]).reindex(columns=list(PRIMARY_TEST_COLUMNS))}
    how = eq.Hypothesis(null, plan.sidedness, margin, plan.margin_kind, better, 1.0 - plan.alpha)
    if draws is None:
        res = eq.declared_test(est, se, df, how)
    else:
        res = eq.declared_test_draws(draws, how)
        if str(row["method"]).startswith(GPQ_HULL_METHOD):
            cr2 = cost_ratios(ctx.frame, interval="cr2").set_index("statistic").loc[stat]
            t_cr2 = eq.declared_test(np.log(cr2["estimate"]), cr2["se"], cr2["df"], how)
            res = eq.hull_declared_test(res, t_cr2)
    res, diag = res.iloc[0], res.diagnostics.iloc[0]  # the declared test's row (tidy shape)
    back = np.exp if source == "cost" else (lambda x: x)
    lo_m, hi_m = float(back(diag["lower_margin"])), float(back(diag["upper_margin"]))
    words = _conclusion(stat, res["test"], lo_m, hi_m, plan.margin)
    if res["test"] == "two-sided" and diag["reject"]:  # which way it differs
        up, down = ("higher", "lower") if source == "cost" else ("better", "worse")
        words += f": WITH {up if res['estimate'] > diag['null'] else down}"
    if se == 0.0:
        notes.append("SE 0 (no spread between tasks): the test is exact under the model")
    if plan.sidedness != "two-sided" and res["test"] == "equivalence":
        notes.append(f"equivalence tests both sides; the plan's sidedness {plan.sidedness} "
                     "does not apply")  # fmt: skip
    out |= {c: float(back(res[k])) for c, k in _BACK.items()}
    out |= {"se": float(res["se"]), "df": float(res["df"]), "null": float(back(diag["null"]))}
    out |= {"test": res["test"], "lower_margin": lo_m, "upper_margin": hi_m}
    out |= {"p_value": float(res["p_value"]), "ci_level": float(res["confidence"])}
    out |= {"decision": "reject" if diag["reject"] else "not reject"}
    out |= {"conclusion": words if diag["reject"] else f"not shown: {words}"}
    out |= {"method": base, "ci_note": "; ".join(notes)}
    return {"primary_test": pd.DataFrame([out]).reindex(columns=list(PRIMARY_TEST_COLUMNS))}


_BACK = {"test_centre": "estimate", "ci_low": "ci_low", "ci_high": "ci_high"}


def _design(ctx: Context) -> dict[str, Any]:
    """Tasks, pairs and whole pairs per task of each rubric, with the pooled tie rate."""
    from ..stats.rates import win_rates

    f = ctx.frame
    _need_verdicts(f)
    rates = pd.DataFrame(win_rates(f, by=["rubric"], confidence=ctx.confidence))
    pooled = rates.astype({"rubric": str}).pivot(index="rubric", columns="statistic",
                                                 values="estimate").reset_index()  # fmt: skip
    pairs = f.loc[f["status"] != "no_answer"].drop_duplicates(["rubric", "task_id", "replicate"])
    per_task = pairs.groupby(pairs["rubric"].astype(str))["task_id"].agg(["nunique", "size"])
    per_task = per_task.rename(columns={"nunique": "n_tasks", "size": "n_pairs"})
    design = pooled[["rubric", "net_win", "tie_rate"]].astype({"rubric": str})
    design = design.merge(per_task, left_on="rubric", right_index=True)
    # Power formulas take a whole number of pairs per task: round the average down.
    design["n_replicates"] = np.maximum(design["n_pairs"] // design["n_tasks"], 1).astype(int)
    design = design.rename(columns={"net_win": "observed_net_win", "tie_rate": "p_tie"})
    ctx.scratch["pooled"] = pooled  # the coverage study simulates at these rates
    cols = ["rubric", "n_tasks", "n_pairs", "n_replicates", "p_tie", "observed_net_win"]
    return {"design": design[cols]}


def _power(ctx: Context) -> dict[str, Any]:
    from ..stats.power import Design, mde_curve, power_curve, simulated_power, tasks_needed_curve

    if "design" not in ctx.tables:
        why = Unavailable("needs the design section, which is not available here")
        return {"power_mde": why, "power_curve": why, "tasks_needed": why}
    alpha = 1.0 - ctx.confidence
    mde, curves, needed = [], [], []
    sim_rng = np.random.default_rng(ctx.seed)
    for row in ctx.tables["design"].itertuples(index=False):
        n_t, n_r, p_tie = int(row.n_tasks), int(row.n_replicates), float(row.p_tie)
        if n_t < 2:
            continue
        by_icc = Design(n_r, list(_ICC_GRID), p_tie, alpha)
        curve = mde_curve([n_t], by_icc, power=_POWER).assign(rubric=row.rubric)
        # Simulate the test at each analytic MDE: how far the normal approximation is off.
        curve["power_simulated"] = [
            simulated_power(
                m, n_t, Design(n_r, i, p_tie, alpha), n_resamples=_POWER_SIMS, rng=sim_rng
            )["power"].item()  # fmt: skip
            if np.isfinite(m)
            else np.nan
            for m, i in zip(curve["net_win"], curve["icc"], strict=True)
        ]
        mde.append(curve)
        effects = [e for e in _NET_WIN_TARGETS if e <= 1.0 - p_tie]
        curve = power_curve(effects, list(_N_TASKS_GRID), Design(n_r, _CURVE_ICC, p_tie, alpha))
        curves.append(curve.assign(rubric=row.rubric))
        if effects:  # every target x ICC in one vectorised search (targets outer)
            grid = tasks_needed_curve(effects, by_icc, power=_POWER)
            needed.append(_front(grid.assign(rubric=row.rubric), "rubric"))
    if not mde:
        raise Unavailable("fewer than two tasks: no clustered design to size")
    return {
        "power_mde": _front(pd.concat(mde, ignore_index=True), "rubric"),
        "power_curve": _front(pd.concat(curves, ignore_index=True), "rubric"),
        "tasks_needed": pd.concat(needed, ignore_index=True) if needed else pd.DataFrame(),
    }


# The simulated MDE and tasks needed: a bisection over one seeded draw of this many evaluations.
_MDE_SIMS = 400
# Targets needing more tasks than this analytically are not simulated (normal is close).
_SIMULATE_MAX_TASKS = 100


def _power_simulated(ctx: Context) -> dict[str, Any]:
    """The minimum detectable net win and the tasks needed, by simulating the reported test."""
    from ..stats.power import Design, simulated_mde, simulated_tasks_needed, tasks_needed

    if "design" not in ctx.tables:
        raise Unavailable("needs the design section, which is not available here")
    alpha = 1.0 - ctx.confidence
    rng = _child_rng(ctx.seed, 2)
    mdes, needed = [], []
    for row in ctx.tables["design"].itertuples(index=False):
        n_t, n_r, p_tie = int(row.n_tasks), int(row.n_replicates), float(row.p_tie)
        if n_t < 2:
            continue
        design = Design(n_r, _CURVE_ICC, p_tie, alpha)
        common = {"power": _POWER, "n_resamples": _MDE_SIMS, "rng": rng}
        mdes.append(simulated_mde(n_t, design, **common).assign(rubric=row.rubric))
        needed += [
            simulated_tasks_needed(target, design, **common).assign(rubric=row.rubric)
            for target in _NET_WIN_TARGETS
            if target <= 1.0 - p_tie
            and tasks_needed(target, design, power=_POWER).n_tasks <= _SIMULATE_MAX_TASKS
        ]
    if not mdes:
        raise Unavailable("fewer than two tasks: no clustered design to size")
    tasks = pd.concat(needed, ignore_index=True) if needed else pd.DataFrame()
    if not tasks.empty:
        tasks["n_tasks"] = tasks["n_tasks"].astype("Int64")  # NaN when max_tasks is not enough
    return {
        "mde_simulated": _front(pd.concat(mdes, ignore_index=True), "rubric"),
        "tasks_needed_simulated": _front(tasks, "rubric")
        if not tasks.empty
        else Unavailable(
            f"every target net win needs more than {_SIMULATE_MAX_TASKS} tasks analytically, "
            "where the normal approximation is close: see tasks_needed"
        ),
    }


def _ordinal(ctx: Context) -> dict[str, Any]:
    """The ordinal model across judges beside each judge's design-based rates."""
    from ..stats.models import ordinal_check
    from ..stats.rates import win_rates

    f = ctx.frame
    _need_verdicts(f)
    design = wide(win_rates(f, by=["rubric", "judge"], confidence=ctx.confidence))
    design = design.astype({"rubric": str, "judge": str})
    quantities = dict(p_win="win_rate", p_tie="tie_rate", p_loss="loss_rate", net_win="net_win")
    probs, terms = [], []
    for rubric in _rubrics_in(f):
        fit = _attempt(lambda r=rubric: ordinal_check(f, rubric=r, confidence=ctx.confidence))
        if isinstance(fit, Unavailable):
            continue
        mine = design.loc[design["rubric"] == rubric].set_index("judge")
        p = fit.probabilities.rename(columns=_MODEL_COLUMNS)
        judged = p["judge"].isin(mine.index)
        for part in ("", "_ci_low", "_ci_high"):
            values = np.full(len(p), np.nan)
            for q, col in quantities.items():
                hit = judged & (p["quantity"] == q)
                values[hit.to_numpy()] = mine.loc[p.loc[hit, "judge"], col + part].to_numpy()
            p["design" + part] = values
        for q, col in quantities.items():  # the judges' average: the rates averaged
            p.loc[(~judged & (p["quantity"] == q)).to_numpy(), "design"] = float(mine[col].mean())
        p["difference"] = p["model"] - p["design"]
        done = {"rubric": rubric, "converged": fit.converged}
        probs.append(p.assign(n_fitted=fit.n, n_tasks=fit.n_tasks, **done))
        terms.append(fit.coefficients.assign(reference_judge=fit.reference_judge, **done))
    if not probs:
        raise Unavailable("no rubric with at least two outcomes on two tasks to fit")
    table = pd.concat(probs, ignore_index=True)
    cols = ["rubric", "judge", "quantity", "model", "model_ci_low", "model_ci_high", "se"]
    cols += ["design", "design_ci_low", "design_ci_high", "difference", "n_fitted", "n_tasks"]
    terms = _front(pd.concat(terms, ignore_index=True), "rubric")
    return {"ordinal_check": table[[*cols, "converged", "method"]], "ordinal_terms": terms}


_MODEL_COLUMNS = {"estimate": "model", "ci_low": "model_ci_low", "ci_high": "model_ci_high"}


def _coverage(ctx: Context) -> dict[str, Any]:
    from ..stats.design import coverage_study

    if "power_mde" not in ctx.tables:
        raise Unavailable("needs a design that power can be computed for: not this one")
    pooled = ctx.scratch["pooled"]
    first = ctx.tables["design"].iloc[0]
    rates = pooled.loc[pooled["rubric"].astype(str) == first["rubric"]].iloc[0]
    table = coverage_study(
        n_tasks=int(first["n_tasks"]),
        n_replicates=int(first["n_replicates"]),
        **{f"p_{k}": float(rates[f"{k}_rate"]) for k in ("win", "tie", "loss")},
        icc=_CURVE_ICC,
        confidence=ctx.confidence,
        # 1 000 evaluations x 1 000 resamples (benchmarks/coverage.py: 2 000 x 2 000).
        n_evals=_COVERAGE_EVALS,
        n_resamples=min(ctx.n_resamples, _COVERAGE_MAX_RESAMPLES),
        methods=_COVERAGE_METHODS,
        rng=np.random.default_rng(ctx.seed),
    )
    return {"coverage": table}


# The wild cluster bootstrap (slow) is left to benchmarks/coverage.py.
_COVERAGE_METHODS = (
    "cr2_wilson",
    "cr2_t",
    "cluster_wilson",
    "cluster_t",
    "bca",
    "percentile",
    "basic",
)


def detect(data: Path) -> bool:
    from ..records import find_file

    return find_file(data, "tasks", required=False) is not None


def check(data: Path) -> None:
    from ..records import find_file

    for stem in _INPUT_STEMS:
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
    out = out.copy()
    for col in ("judge", "rubric"):
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].cat.remove_unused_categories()
    return out.reset_index(drop=True)


def load(d: Path, params: Mapping[str, Any], frame: pd.DataFrame | None) -> Loaded:
    """The Dataset read once and the verdict frame of the selected judges and rubrics."""
    from ..frames import verdict_frame
    from ..records import find_file, load_dir

    ds = load_dir(d)
    if ds.judgments is None:
        raise DataError("no judgments file: run `evalstats judge` first", path=d)
    judges, rubric = _as_list(params.get("judges")), _as_list(params.get("rubric"))
    pairs = judged_pairs(ds)
    if pairs is None:
        full = verdict_frame(ds.judgments, ds.runs, ds.tasks) if frame is None else frame
        f = _select(full, judges, rubric)
        extra: dict[str, Any] = {"dataset": ds}
    else:  # K arms: the two-arm view of every pair judged, stacked
        # Each pair's rows found in one pass, not one scan of every verdict per pair.
        j_at = ds.judgments.groupby(["arm_a", "arm_b"], observed=True, sort=False).indices
        r_at = ds.runs.groupby("arm", observed=True, sort=False).indices
        views = [(a, b, *pair_view(ds, a, b, j_at, r_at)) for a, b in pairs]
        views = [(a, b, _select(v, judges, rubric), {"dataset": x}) for a, b, v, x in views]
        if len(views) > DESIGN_PAIRS:
            why = (f"design studies run on the headline pair {pairs[0][0]} vs {pairs[0][1]} only "
                   f"({len(views)} pairs > {DESIGN_PAIRS}): the pairs share one design")  # fmt: skip
            for *_, x in views[1:]:
                x["design_skipped"] = why
        f = pd.concat([v.assign(arm_a=a, arm_b=b) for a, b, v, _ in views], ignore_index=True)
        stale = [
            ((r, j, a, b), n)
            for a, b, v, _ in views
            for (r, j, *_), n in v.attrs.get("stale", {}).items()
        ]
        f.attrs["stale"] = dict(stale)
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
            "arm_names": ds.arm_names,  # arms.toml, else the arm ids
            "rubrics": _rubric_provenance(f, ds.judgments),
            "judges": _judge_provenance(f, ds.judgments),
            "plan": plan_provenance(ds.plan, d),
            **({} if pairs is None else _comparison.describe(ds, pairs)),
        },
        extra=extra,
    )


def judged_pairs(ds: Any) -> list[tuple[str, str]] | None:
    """The pairs of arms the judgments name, in order; None for the seeds' two arms."""
    j = ds.judgments
    if "arm_a" not in j.columns or not j["arm_a"].notna().any():
        return None
    named = j.dropna(subset=["arm_a", "arm_b"])[["arm_a", "arm_b"]].astype(str)
    pairs = list(named.drop_duplicates().itertuples(index=False, name=None))
    return None if pairs == [("with", "without")] else pairs


def pair_view(
    ds: Any, a: str, b: str, j_at: Mapping[Any, Any], r_at: Mapping[Any, Any]
) -> tuple[pd.DataFrame, Any]:
    """The pair (``a``, ``b``) of a K-arm Dataset as two arms (``a`` WITH, ``b`` WITHOUT):
    returns the pair's verdict frame and Dataset view (its judgments and labels). ``j_at`` /
    ``r_at``: the row positions of each pair's judgments and each arm's runs."""
    from .._schema import ARM_DTYPE, ORDER_DTYPE
    from ..frames import verdict_frame

    none = np.array([], dtype=np.intp)
    keep_r = np.sort(np.concatenate([r_at.get(a, none), r_at.get(b, none)]))
    keep_j = j_at.get((a, b), none)
    r = ds.runs.take(keep_r).reset_index(drop=True)
    arm = r["arm"].astype(str).map({a: "with", b: "without"})
    r["arm"] = pd.Categorical(arm, dtype=ARM_DTYPE)
    jj = ds.judgments.take(keep_j).drop(columns=["arm_a", "arm_b"]).reset_index(drop=True)
    order = jj["order"].astype(object).map({"a_first": "with_first", "b_first": "without_first"})
    jj["order"] = pd.Categorical(order, dtype=ORDER_DTYPE)
    for part, whole, keep in ((r, ds.runs, keep_r), (jj, ds.judgments, keep_j)):
        part.attrs = dict(whole.attrs)
        if whole.attrs.get("lines") is not None:
            part.attrs["lines"] = np.asarray(whole.attrs["lines"])[keep].tolist()
    r.attrs["arm_names"] = {"with": ds.arms.name(a), "without": ds.arms.name(b)}
    r.attrs["arm_ids"] = {"with": a, "without": b}
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
    """The declared plan as results.json records it (its file relative to the data
    directory, sha256 and primary row); None without a plan."""
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
    """Per rubric: the prompt's revision and sha256 (package or rubric file) and the judgments'."""
    from ..frames import resolve_rubrics
    from ._results import to_jsonable

    found: dict[str, Any] = {}
    for (name, _, _), rubric in resolve_rubrics(judgments).items():
        found.setdefault(str(name), rubric)
    rows = []
    for name in sorted(frame["rubric"].astype(str).unique()):
        sub = frame.loc[frame["rubric"].astype(str) == name]
        keys = ["prompt_revision", "prompt_sha256"]
        observed = sub.groupby(keys, dropna=True).size().reset_index(name="n_judgments")
        rubric = found.get(name)
        rev, sha = (None, None) if rubric is None else (rubric.revision, rubric.sha256)
        path = None if rubric is None or rubric.path is None else str(rubric.path)
        same = len(observed) == 1 and tuple(observed[keys].iloc[0]) == (rev, sha)
        rows.append(dict(rubric=name, package_revision=rev, package_sha256=sha, rubric_file=path,
                         judgments_prompt=to_jsonable(observed.to_dict("records")),
                         matches_package=bool(same)))  # fmt: skip
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
    return {"judges": _as_list(p["judges"]), "rubric": p["rubric"], **base_parameters(p)}


# (name, page, compute, tables) in computation order: the report page's bootstraps share one
# generator in exactly this order (changing it changes the published numbers).
_SECTIONS = (
    ("headline", "report", _headline, ["headline"]),
    ("consensus", "report", _consensus, ["consensus"]),
    ("tests", "report", _tests, ["tests"]),  # adds columns to the two above; draws nothing
    ("audit", "report", _audit, ["audit"]),  # draws nothing: early, for the headline card
    ("headline_audit", "report", _headline_audit, ["headline_choice", "headline_audit"]),
    ("missing_bounds", "report", _missing_bounds, ["missing_bounds"]),
    # Draws nothing; the headline's words need position_bias.
    ("blind", "report", _blind, ["dimensions", "position_bias"]),
    ("design_coverage", "report", _design_check, ["design_coverage"]),
    # Draws nothing; after the design check, whose note its row carries.
    ("primary_test", "report", _primary_test, ["primary_test"]),
    ("agreement", "report", _agreement, ["agreement"]),
    ("disagreements", "report", _disagreements, ["disagreements"]),
    ("cost", "report", _cost, ["cost", "cost_sources", "judge_spend"]),
    ("per_task", "report", _per_task, ["per_task"]),
    ("accounting", "report", _accounting, ["accounting", "sensitivity", "invalid_outputs"]),
    # Its own generators (streams 11, 12).
    (
        "labels",
        "report",
        _labels,
        [f"labels_{t}" for t in ("agreement", "confusion", "ppi", "needed")],
    ),
    ("replicates", "report", _replicates, ["replicates"]),  # draws nothing
    ("monitor", "report", _monitor, ["monitor"]),  # draws nothing
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


def sections() -> tuple[Section, ...]:
    """The evaluation's sections in computation order, then the K-arm comparison's."""
    sections = (
        Section(n, page, _guarded(fn, tables, n in _STUDIES)) for n, page, fn, tables in _SECTIONS
    )
    return (*sections, *_comparison.sections())
