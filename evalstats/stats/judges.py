"""Frame-level judge agreement and consensus verdicts.

:func:`judge_agreement` compares every pair of judges on the pairs (and, for the
blind rubric, orders) both judged ``ok``; the units of one task are correlated,
so every coefficient's interval (Cohen's kappa, linear-weighted kappa, Gwet's AC1,
PABAK; Fleiss' kappa and Krippendorff's alpha for three or more judges) is
task-clustered, made by :func:`evalstats.stats.agreement_intervals.clustered_agreement`:
``atanh_jackknife_midp_blaker``, a delete-one-task jackknife t(C - 1) interval on Fisher's z
(``atanh``) of the coefficient, back-transformed by ``tanh`` — so it lies in [-1, 1] by
construction, not by clipping — and joined with a mid-p binomial bound on the observed
agreement (Blaker's combined tails) where there are fewer than ten effective disagreeing
units (at perfect agreement the interval is not [1, 1]). Chosen by ``benchmarks/coverage_agreement.py``
(kappa 0-0.95, 6-40 tasks). The analytic IID SE and z test of kappa
(Fleiss-Cohen-Everitt) stay beside it as ``kappa_iid``, without an interval (a Wald
interval leaves [-1, 1] near perfect agreement). :func:`consensus` turns several
judges' verdicts into one per pair, in the shape of a verdict frame, so the same
win-rate functions apply to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from .._disagreement import DISAGREEMENT_TRIGGER, disagreement_counts
from .._schema import OUTCOME_DTYPE, OUTCOMES, STATUS_DTYPE, STATUSES
from .._tidy import ResultFrame, tidy_frame
from .._validate import check_columns, check_confidence, check_n_resamples, check_probability
from ..errors import ParameterError
from ..frames import select_rubric, wide_by_judge
from .agreement import cohen_kappa_table, fleiss_kappa
from .agreement_intervals import CLUSTERED_METHODS, DEFAULT_METHOD, clustered_agreement

__all__ = ["SEED_DISAGREEMENT_TRIGGER", "consensus", "judge_agreement"]

#: Seed 000's trigger (disagreement above 20 %), kept under its old public name; the one
#: definition is :data:`evalstats._disagreement.DISAGREEMENT_TRIGGER`.
SEED_DISAGREEMENT_TRIGGER = DISAGREEMENT_TRIGGER
_K = len(OUTCOMES)


def _select(
    frame: pd.DataFrame, rubric: str | None, judges: Sequence[str] | None, cluster: str = "task_id"
):
    # ``order`` too: the units of a rubric judged in both orders are pair-orders.
    cols = ("task_id", "replicate", "order", "rubric", "judge", "status", "outcome", cluster)
    needed = dict.fromkeys(cols)
    check_columns(frame, tuple(needed))
    f, rubric = select_rubric(frame, rubric)
    present = sorted(f["judge"].astype(str).unique().tolist())
    if judges is None:
        judges = present
    missing = [j for j in judges if j not in present]
    if missing:
        raise ValueError(f"judges {missing} have no rows for rubric {rubric!r}; present: {present}")
    if len(judges) < 2:
        raise ValueError(f"agreement needs at least two judges, got {list(judges)}")
    return f, rubric, list(judges)


def _codes(col: pd.Series) -> np.ndarray:
    """Outcome codes 0=loss, 1=tie, 2=win; -1 where missing."""
    return pd.Categorical(col, dtype=OUTCOME_DTYPE).codes.astype(np.int64)


def _n_distinct(values: np.ndarray) -> int:
    """Distinct task ids, by hashing (``np.unique`` sorts a million strings: ~0.2 s)."""
    return int(len(pd.unique(pd.Series(values, copy=False))))


def _per_task_tables(task: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(C, k*k) confusion counts per task, vectorised with one bincount."""
    tasks, t = np.unique(task, return_inverse=True)
    flat = t * (_K * _K) + a * _K + b
    return np.bincount(flat, minlength=len(tasks) * _K * _K).reshape(len(tasks), _K * _K)


def _n_pairs(wide: pd.DataFrame, used: np.ndarray, cluster: str) -> int:
    """Distinct (task, replicate) pairs among the ``used`` rows; each row is a pair when
    the frame has no replicate column."""
    if "replicate" not in wide.columns:
        return int(np.count_nonzero(used))
    return int(wide.loc[used, [cluster, "replicate"]].drop_duplicates().shape[0])


def judge_agreement(
    frame: pd.DataFrame,
    *,
    judges: Sequence[str] | None = None,
    rubric: str | None = None,
    cluster: str = "task_id",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    method: str = DEFAULT_METHOD,
    threshold: float = DISAGREEMENT_TRIGGER,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Agreement between every pair of judges: each coefficient with its interval.

    Units are the pairs (task, replicate[, order]) that both judges judged ``ok``;
    outcomes are ordered loss < tie < win.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame: ``task_id, replicate, rubric, judge, status, outcome`` (and
        ``order`` for a rubric judged in both orders); a missing one is a DataError
        naming it.
    judges : sequence of str, optional
        Judges to compare (default: all in the rubric).
    rubric : str, optional
        Required when the frame holds several rubrics.
    cluster : str, default "task_id"
        Cluster column of every interval.
    confidence : float, default 0.95
    n_resamples : int, default 2000
        Cluster bootstrap resamples, used only by ``method="bootstrap_percentile"``.
    method : str, default "atanh_jackknife_midp_blaker"
        Interval construction, among
        :data:`evalstats.stats.agreement_intervals.CLUSTERED_METHODS` (every one in
        [-1, 1]); the default is the one the coverage study chose (module docstring).
    threshold : float, default 0.20
        Disagreement rate above which ``trigger`` is True (the seed's rule).
    rng : Generator or int, optional
        Seed of the bootstrap (``bootstrap_percentile`` only).

    Returns
    -------
    ResultFrame
        Long: per ``rubric, judge_a, judge_b``, one row per coefficient, each with the
        interval made as its ``method`` says: ``observed_agreement``,
        ``disagreement_rate``; ``kappa`` (task-clustered: delete-one-task jackknife
        ``se``, ``df`` C - 1, the ``method`` interval and the t test of kappa = 0 on the
        atanh scale; NaN with fewer than two tasks); ``kappa_iid`` (the same kappa, its
        analytic IID SE and z test, Fleiss-Cohen-Everitt; no interval); ``kappa_linear``
        (linear weights), ``ac1``, ``pabak`` (each task-clustered as kappa is). ``n`` is
        the judged units (pair-orders for a rubric judged in both orders), ``n_tasks``
        the tasks. With three or more judges the last group (``judge_a == "all
        judges"``) has ``fleiss_kappa`` on the units every judge rated ``ok`` and
        ``krippendorff_alpha`` (which also uses units with missing judges), both
        task-clustered alike. ``.diagnostics``, one row per pair of judges: ``n``,
        ``n_pairs`` (distinct (task, replicate) pairs), ``n_clusters``, ``agreements``,
        ``disagreements``, ``trigger`` (disagreement above ``threshold``), ``kappa_se0``
        (null SE), ``kappa_z``, ``ci_note`` (perfect or near-perfect agreement: the
        exact bound was joined) and ``confusion`` (k x k counts, rows = judge_a, columns
        = judge_b, order loss/tie/win).

    Examples
    --------
    >>> import evalstats, tempfile
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=8, n_replicates=3, seed=1)
    >>> ds = evalstats.load_dir(sim.out_dir)
    >>> f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    >>> agr = judge_agreement(f, rubric="with-without")
    >>> agr["statistic"].tolist()[:4]
    ['observed_agreement', 'disagreement_rate', 'kappa', 'kappa_iid']
    >>> agr.loc[agr["statistic"] == "kappa", "method"].iloc[0]
    'atanh_jackknife_midp_blaker'
    >>> iv = agr.dropna(subset=["ci_low", "ci_high"])  # the coefficients with an interval
    >>> bool(((iv["ci_low"] >= -1) & (iv["ci_high"] <= 1)).all()), len(iv)
    (True, 4)
    """
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    threshold = check_probability(threshold, "threshold")
    if method not in CLUSTERED_METHODS:
        raise ParameterError(f"method must be one of {list(CLUSTERED_METHODS)}; got {method!r}")
    f, rubric, judges = _select(frame, rubric, judges, cluster)
    ok = f.assign(outcome=f["outcome"].where(f["status"] == "ok"))
    wide = wide_by_judge(ok, rubric=rubric)
    # Counted once, by the rule the runner, audit and report use too.
    dis = disagreement_counts(wide, judges, threshold=threshold)
    dis = {
        frozenset((a, b)): r
        for a, b, r in zip(dis["judge_a"], dis["judge_b"], dis.to_dict("records"), strict=True)
    }
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
    clustered = partial(
        _clustered,
        confidence=confidence,
        method=method,
        n_resamples=n_resamples,
        rng=gen,
    )
    rows = []
    for ja, jb in itertools.combinations(judges, 2):
        a, b = _codes(wide[ja]), _codes(wide[jb])
        both = (a >= 0) & (b >= 0)
        a, b = a[both], b[both]
        task = wide.loc[both, cluster].to_numpy()
        table = np.bincount(a * _K + b, minlength=_K * _K).reshape(_K, _K)
        d = dis[frozenset((ja, jb))]
        n, disagreements = int(d["n"]), int(d["disagreements"])
        row = {
            "judge_a": ja,
            "judge_b": jb,
            "n": n,
            "n_pairs": _n_pairs(wide, both, cluster),
            "n_clusters": _n_distinct(task),
            "agreements": n - disagreements,
            "disagreements": disagreements,
            "observed_agreement": (n - disagreements) / n if n else np.nan,
            "disagreement_rate": d["disagreement_rate"],
            "trigger": d["trigger"],
        }
        if n:
            k = cohen_kappa_table(table, confidence=confidence)
            row.update(
                kappa_iid=k.estimate,
                kappa_iid_se=k.se,
                kappa_se0=k.se0,
                kappa_z=k.z,
                kappa_iid_p=k.p_value,
            )
            res = clustered(a, b, task, ["cohen_kappa", "gwet_ac1", "pabak"])
            lin = clustered(a, b, task, ["cohen_kappa"], weights="linear")
            for prefix, r in zip(("kappa", "ac1", "pabak"), res, strict=True):
                row.update(_prefixed(prefix, r))
            row.update(_prefixed("kappa_linear", lin[0]))
            row["ci_note"] = res[0]["ci_note"]
        row["confusion"] = table.tolist()
        rows.append(row)
    if len(judges) >= 3:
        codes = np.column_stack([_codes(wide[j]) for j in judges]).astype(float)
        codes[codes < 0] = np.nan
        complete = ~np.isnan(codes).any(axis=1)
        task = wide[cluster].to_numpy()
        row = {
            "judge_a": "all judges",
            "judge_b": f"{len(judges)} judges",
            "n": int(complete.sum()),
            "n_pairs": _n_pairs(wide, complete, cluster),
            "n_clusters": int(wide.loc[complete, cluster].nunique()),
        }
        if complete.any():
            fk = fleiss_kappa(codes[complete], categories=[0.0, 1.0, 2.0])
            row["fleiss_se0"] = fk.se0
            (fl,) = clustered(codes[complete], None, task[complete], ["fleiss_kappa"])
            row.update(_prefixed("fleiss_kappa", fl))
        rated = (~np.isnan(codes)).sum(axis=1) >= 2
        if rated.any():
            (al,) = clustered(codes, None, task, ["krippendorff_alpha"], categories=None)
            row.update(_prefixed("krippendorff_alpha", al))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.insert(0, "rubric", rubric)
    return _agreement_long(out, confidence)


_CLUSTERED_FIELDS = ("estimate", "se", "ci_low", "ci_high", "p_value", "df", "method", "ci_note")


def _clustered(
    a: np.ndarray,
    b: np.ndarray | None,
    task: np.ndarray,
    coefficients: list[str],
    *,
    weights: str | None = None,
    categories: Any = range(_K),
    confidence: float,
    method: str,
    n_resamples: int,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """:func:`clustered_agreement`'s rows, or NaN rows (with the reason) on one task."""
    if _n_distinct(task) < 2:
        nan = dict.fromkeys(_CLUSTERED_FIELDS, np.nan)
        nan.update(method=method, ci_note="one task: no task-clustered interval")
        return [nan for _ in coefficients]
    res = clustered_agreement(
        a,
        b,
        clusters=task,
        coefficient=coefficients,
        weights=weights,
        categories=categories,
        confidence=confidence,
        method=method,
        n_resamples=n_resamples,
        rng=rng,
    )
    return [{c: r[c] for c in _CLUSTERED_FIELDS} for r in res.to_dict("records")]


def _prefixed(prefix: str, r: dict[str, Any]) -> dict[str, Any]:
    """One clustered row as the per-pair columns ``prefix``, ``prefix_se``, ... ."""
    return {(prefix if c == "estimate" else f"{prefix}_{c}"): v for c, v in r.items()}


# statistic -> {tidy column: column of the per-pair row, or a constant}, in the rows' order.
_AGREEMENT_ROWS: dict[str, dict[str, Any]] = {
    "observed_agreement": {"estimate": "observed_agreement"},
    "disagreement_rate": {"estimate": "disagreement_rate"},
    **{
        name: {
            "estimate": name,
            **{c: f"{name}_{c}" for c in ("se", "ci_low", "ci_high", "p_value", "df", "method")},
        }
        for name in ("kappa",)
    },
    "kappa_iid": {
        "estimate": "kappa_iid",
        "se": "kappa_iid_se",
        "p_value": "kappa_iid_p",
        "method": "iid z test (no interval)",
    },
    **{
        name: {
            "estimate": name,
            **{c: f"{name}_{c}" for c in ("se", "ci_low", "ci_high", "p_value", "df", "method")},
        }
        for name in ("kappa_linear", "ac1", "pabak", "fleiss_kappa", "krippendorff_alpha")
    },
}
#: ``judge_a`` of the row that compares every judge at once.
MANY_JUDGES = "all judges"
_MANY_JUDGE_STATISTICS = ("fleiss_kappa", "krippendorff_alpha")
_AGREEMENT_DIAGNOSTICS = (
    "n",
    "n_pairs",
    "n_clusters",
    "agreements",
    "disagreements",
    "trigger",
    "kappa_se0",
    "kappa_z",
    "fleiss_se0",
    "ci_note",
    "confusion",
)


def _agreement_long(rows: pd.DataFrame, confidence: float) -> ResultFrame:
    """The per-pair rows of :func:`judge_agreement` in the one result shape: each pair's
    coefficients as rows (those it has: the many-judge row has Fleiss' kappa and alpha)."""
    by = ["rubric", "judge_a", "judge_b"]
    parts = []
    for name, spec in _AGREEMENT_ROWS.items():
        if spec["estimate"] not in rows.columns:
            continue
        part = rows[by].copy()
        part["statistic"] = name
        for col, src in spec.items():
            if src in rows.columns:
                part[col] = rows[src].to_numpy()
            else:  # a constant (kappa_iid's method), or a column no pair has
                part[col] = src if col == "method" else np.nan
        part["n"] = rows["n"].to_numpy()
        part["n_tasks"] = rows["n_clusters"].to_numpy()
        part["confidence"] = confidence
        part["_pair"] = np.arange(len(rows))
        part["_order"] = len(parts)
        # Pairs carry the two-judge coefficients (NaN ones too: an all-tie design has no
        # kappa, and says so); the many-judge row carries Fleiss' kappa and alpha.
        many = (rows["judge_a"] == MANY_JUDGES).to_numpy()
        keep = many if name in _MANY_JUDGE_STATISTICS else ~many
        parts.append(part.loc[keep])
    long = pd.concat(parts, ignore_index=True).sort_values(["_pair", "_order"], kind="stable")
    long = long.drop(columns=["_pair", "_order"])
    long.loc[long["ci_low"].isna() & long["ci_high"].isna(), "confidence"] = np.nan
    diagnostics = rows[[*by, *(c for c in _AGREEMENT_DIAGNOSTICS if c in rows.columns)]]
    return tidy_frame(long, by=by, diagnostics=diagnostics)


_SEVERITY = {"no_answer": 3, "error": 2, "invalid": 1, "ok": 0}


def consensus(
    frame: pd.DataFrame,
    rule: str = "unanimous",
    *,
    judges: Sequence[str] | None = None,
    rubric: str | None = None,
) -> pd.DataFrame:
    """One verdict per pair (and order) from several judges.

    ``"unanimous"``: the shared outcome when every judge is ``ok`` and agrees; when
    they disagree the consensus is ``tie`` — seed 000's rule that doubt defaults to
    "(b) roughly equivalent" ("uncertainty is not a marketing argument").
    ``"majority"``: the outcome of a strict majority of all judges, else ``tie``.
    A pair that is not ``ok`` for every judge (unanimous) or for a majority
    (majority) takes the most serious status among the judges (no_answer > error >
    invalid) and no outcome.

    Returns
    -------
    DataFrame
        ``task_id, replicate, order, rubric, judge`` (``"consensus:<rule>"``),
        ``status``, ``outcome``, ``n_judges_ok``, ``agreed`` (bool), plus the pair's
        ``tokens_with, tokens_without, wall_with_s, wall_without_s`` and, when the frame
        has it, ``over_budget_arm`` — so :func:`evalstats.win_rates` accepts it, with the
        arm-aware missing-answer rule too.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({
    ...     "task_id": ["t1", "t1", "t2", "t2"], "replicate": 1, "order": None,
    ...     "rubric": "with-without", "judge": ["a:x", "b:y", "a:x", "b:y"],
    ...     "status": "ok", "outcome": ["win", "win", "win", "loss"],
    ...     "tokens_with": 100, "tokens_without": 120, "wall_with_s": 1.0, "wall_without_s": 2.0})
    >>> c = consensus(frame, "unanimous")
    >>> c[["task_id", "outcome", "agreed"]].to_numpy().tolist()
    [['t1', 'win', True], ['t2', 'tie', False]]
    """
    if rule not in ("unanimous", "majority"):
        raise ValueError(f"rule must be 'unanimous' or 'majority', got {rule!r}")
    f, rubric, judges = _select(frame, rubric, judges)
    f = f.loc[f["judge"].astype(str).isin(judges)]
    # One spread of a single code per verdict: the outcome (0-2) where ok, else -1 - the
    # status's severity; a judge with no row for a unit is NaN (an error, no outcome).
    ok = (f["status"].astype(object) == "ok").to_numpy()
    severity = f["status"].astype(object).map(_SEVERITY).fillna(_SEVERITY["error"])
    value = np.where(ok, _codes(f["outcome"]), -1 - severity.to_numpy(dtype=np.int64))
    wide = wide_by_judge(f.assign(_verdict=value), value="_verdict", rubric=rubric)
    keys = [c for c in ("task_id", "replicate", "order") if c in wide.columns]
    cells = np.column_stack([wide[j].to_numpy(dtype=np.float64, na_value=np.nan) for j in judges])
    missing = np.isnan(cells)
    cells = np.where(missing, -1 - _SEVERITY["error"], cells).astype(np.int64)
    codes = np.where(cells >= 0, cells, -1)  # -1 = not ok
    sev = np.where(cells >= 0, _SEVERITY["ok"], -1 - cells)
    n_ok = (codes >= 0).sum(axis=1)
    m = len(judges)
    votes = np.stack([(codes == k).sum(axis=1) for k in range(_K)], axis=1)  # (units, K)
    top = votes.argmax(axis=1)
    agreed = votes.max(axis=1) == m
    if rule == "unanimous":
        decided = n_ok == m
        result = np.where(agreed, top, 1)
    else:
        decided = n_ok * 2 > m
        result = np.where(votes.max(axis=1) * 2 > m, top, 1)
    worst = sev.max(axis=1)
    status_names = np.array(["ok", "invalid", "error", "no_answer"], dtype=object)
    out_status = np.where(decided, "ok", status_names[np.maximum(worst, 1)])
    out_outcome = np.where(decided, np.asarray(OUTCOMES, dtype=object)[result], None)
    out = wide[keys].copy()
    out["rubric"] = rubric
    out["judge"] = f"consensus:{rule}"
    out["status"] = pd.Categorical(out_status, dtype=STATUS_DTYPE)
    out["outcome"] = pd.Categorical(out_outcome, dtype=OUTCOME_DTYPE)
    out["n_judges_ok"] = n_ok
    out["agreed"] = agreed & decided
    pair_cols = ["tokens_with", "tokens_without", "wall_with_s", "wall_without_s"]
    # Which arm went over budget is a property of the pair, whoever judged it: carried so
    # that win_rates(..., no_answer_as="arm_aware") applies to consensus verdicts too.
    pair_cols += [c for c in ("over_budget_arm",) if c in f.columns]
    pair_info = f.drop_duplicates(["task_id", "replicate"])[["task_id", "replicate", *pair_cols]]
    out = out.merge(pair_info, on=["task_id", "replicate"], how="left")
    assert set(STATUSES) >= set(out["status"].astype(str))
    return out
