"""Frame-level judge agreement and consensus verdicts.

:func:`judge_agreement` compares every pair of judges on the pairs (and, for the
blind rubric, orders) both judged ``ok``; the units of one task are correlated,
so the reported kappa interval and test are task-clustered: a delete-one-task
jackknife SE with a t(C - 1) reference (chosen by ``benchmarks/coverage.py``: at
10 tasks x 3, kappa about 0.4, it covered 0.94-0.95 where the IID Wald interval
covered about 0.92), with the analytic IID interval (Fleiss-Cohen-Everitt) and a
cluster bootstrap interval beside it. :func:`consensus` turns several
judges' verdicts into one per pair, in the shape of a verdict frame, so the same
win-rate functions apply to it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._disagreement import DISAGREEMENT_TRIGGER, disagreement_counts
from .._schema import OUTCOME_DTYPE, OUTCOMES, STATUS_DTYPE, STATUSES
from .._tidy import ResultFrame, tidy_frame
from .._validate import check_columns, check_confidence, check_n_resamples, check_probability
from ..frames import select_rubric, wide_by_judge
from ._kappa import _kappa_from_tables
from .agreement import (
    cohen_kappa_table,
    fleiss_kappa,
    gwet_ac1,
    krippendorff_alpha,
    pabak,
)
from .resample import cluster_bootstrap
from .robust import cluster_jackknife, t_interval, t_test_p

__all__ = ["SEED_DISAGREEMENT_TRIGGER", "consensus", "judge_agreement"]

#: Seed 000's trigger (disagreement above 20 %), kept under its old public name; the one
#: definition is :data:`evalstats._disagreement.DISAGREEMENT_TRIGGER`.
SEED_DISAGREEMENT_TRIGGER = DISAGREEMENT_TRIGGER
_K = len(OUTCOMES)


def _select(frame: pd.DataFrame, rubric: str | None, judges: Sequence[str] | None):
    check_columns(frame, ("task_id", "replicate", "rubric", "judge", "status", "outcome"))
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
    n_resamples: int = 10_000,
    method: str = "bca",
    threshold: float = DISAGREEMENT_TRIGGER,
    rng: np.random.Generator | int | None = None,
) -> ResultFrame:
    """Agreement between every pair of judges: each coefficient with its interval.

    Units are the pairs (task, replicate[, order]) that both judges judged ``ok``;
    outcomes are ordered loss < tie < win.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame.
    judges : sequence of str, optional
        Judges to compare (default: all in the rubric).
    rubric : str, optional
        Required when the frame holds several rubrics.
    cluster : str, default "task_id"
        Cluster column for the bootstrap interval of kappa.
    confidence : float, default 0.95
    n_resamples : int, default 10 000
    method : {"bca", "percentile", "basic"}
        Bootstrap interval method.
    threshold : float, default 0.20
        Disagreement rate above which ``trigger`` is True (the seed's rule).
    rng : Generator or int, optional

    Returns
    -------
    ResultFrame
        Long: per ``rubric, judge_a, judge_b``, one row per coefficient, each with the
        interval made as its ``method`` says: ``observed_agreement``,
        ``disagreement_rate``; ``kappa`` (task-clustered: the delete-one-task jackknife
        ``se``, ``df`` C - 1, the interval ``kappa +/- t_{C-1} SE`` and the t test of
        kappa = 0 it inverts, ``method`` ``"jackknife_t"``; NaN with one task);
        ``kappa_iid`` (the same kappa, its analytic IID SE, Wald interval and z test:
        Fleiss-Cohen-Everitt); ``kappa_boot`` (the same kappa, its cluster bootstrap
        interval); ``kappa_linear``, ``ac1``, ``pabak`` (IID Wald intervals). ``n`` is the
        judged units (pair-orders for a rubric judged in both orders), ``n_tasks`` the
        tasks. With three or more judges the last group (``judge_a == "all judges"``) has
        ``fleiss_kappa`` (its p-value) and ``krippendorff_alpha`` on the units every judge
        rated ``ok`` (alpha also uses units with missing judges). ``.diagnostics``, one
        row per pair of judges: ``n``, ``n_pairs`` (distinct (task, replicate) pairs),
        ``n_clusters``, ``agreements``, ``disagreements``, ``trigger`` (disagreement
        above ``threshold``), ``kappa_se0`` (null SE), ``kappa_z``, ``fleiss_se0`` and
        ``confusion`` (k x k counts, rows = judge_a, columns = judge_b, order
        loss/tie/win).

    Examples
    --------
    >>> import evalstats, tempfile
    >>> sim = evalstats.simulate(tempfile.mkdtemp(), n_tasks=8, n_replicates=3, seed=1)
    >>> ds = evalstats.load_dir(sim.out_dir)
    >>> f = evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks)
    >>> agr = judge_agreement(f, rubric="with-without", n_resamples=500, rng=0)
    >>> agr["statistic"].tolist()[:4]
    ['observed_agreement', 'disagreement_rate', 'kappa', 'kappa_iid']
    >>> agr.diagnostics[["judge_a", "judge_b", "n"]].shape
    (1, 3)
    """
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    threshold = check_probability(threshold, "threshold")
    f, rubric, judges = _select(frame, rubric, judges)
    ok = f.assign(outcome=f["outcome"].where(f["status"] == "ok"))
    wide = wide_by_judge(ok, rubric=rubric)
    # Counted once, by the rule the runner, audit and report use too.
    dis = disagreement_counts(wide, judges, threshold=threshold)
    dis = {
        frozenset((a, b)): r
        for a, b, r in zip(dis["judge_a"], dis["judge_b"], dis.to_dict("records"), strict=True)
    }
    gen = np.random.default_rng(rng) if not isinstance(rng, np.random.Generator) else rng
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
            "n_clusters": int(len(np.unique(task))),
            "agreements": n - disagreements,
            "disagreements": disagreements,
            "observed_agreement": (n - disagreements) / n if n else np.nan,
            "disagreement_rate": d["disagreement_rate"],
            "trigger": d["trigger"],
        }
        if n:
            per_task = _per_task_tables(task, a, b).astype(np.float64)
            k_est, k_se, k_df = cluster_jackknife(per_task, _kappa_of_sums)
            k_low, k_high = t_interval(k_est, k_se, k_df, confidence)
            k_p = t_test_p(k_est, k_se, k_df)
            k = cohen_kappa_table(table, confidence=confidence)
            kl = cohen_kappa_table(table, weights="linear", confidence=confidence)
            ac1 = gwet_ac1(a, b, categories=range(_K), confidence=confidence)
            pb = pabak(a, b, categories=range(_K), confidence=confidence)
            boot = cluster_bootstrap(
                per_task,
                lambda s: _kappa_from_tables(s.reshape(*s.shape[:-1], _K, _K)),
                method=method,
                n_resamples=n_resamples,
                confidence=confidence,
                rng=gen,
            )
            row.update(
                kappa=k.estimate,
                kappa_cluster_se=float(k_se),
                kappa_df=float(k_df),
                kappa_ci_low=float(k_low),
                kappa_ci_high=float(k_high),
                kappa_p=float(k_p),
                kappa_method="jackknife_t",
                kappa_se=k.se,
                kappa_se0=k.se0,
                kappa_z=k.z,
                kappa_iid_p=k.p_value,
                kappa_iid_ci_low=k.ci_low,
                kappa_iid_ci_high=k.ci_high,
                kappa_boot_ci_low=float(boot.ci_low[0]),
                kappa_boot_ci_high=float(boot.ci_high[0]),
                kappa_linear=kl.estimate,
                kappa_linear_ci_low=kl.ci_low,
                kappa_linear_ci_high=kl.ci_high,
                ac1=ac1.estimate,
                ac1_se=ac1.se,
                ac1_ci_low=ac1.ci_low,
                ac1_ci_high=ac1.ci_high,
                pabak=pb.estimate,
                pabak_ci_low=pb.ci_low,
                pabak_ci_high=pb.ci_high,
            )
        row["confusion"] = table.tolist()
        rows.append(row)
    if len(judges) >= 3:
        codes = np.column_stack([_codes(wide[j]) for j in judges]).astype(float)
        codes[codes < 0] = np.nan
        complete = ~np.isnan(codes).any(axis=1)
        fk = fleiss_kappa(codes[complete], categories=[0.0, 1.0, 2.0])
        alpha = krippendorff_alpha(codes, level="nominal")
        rows.append(
            {
                "judge_a": "all judges",
                "judge_b": f"{len(judges)} judges",
                "n": int(complete.sum()),
                "n_pairs": _n_pairs(wide, complete, cluster),
                "n_clusters": int(wide.loc[complete, cluster].nunique()),
                "fleiss_kappa": fk.estimate,
                "fleiss_se0": fk.se0,
                "fleiss_p": fk.p_value,
                "krippendorff_alpha": alpha.estimate,
            }
        )
    out = pd.DataFrame(rows)
    out.insert(0, "rubric", rubric)
    return _agreement_long(out, confidence, method)


# statistic -> {tidy column: column of the per-pair row, or a constant}, in the rows' order.
_IID = "iid Wald (z)"
_AGREEMENT_ROWS: dict[str, dict[str, Any]] = {
    "observed_agreement": {"estimate": "observed_agreement"},
    "disagreement_rate": {"estimate": "disagreement_rate"},
    "kappa": {
        "estimate": "kappa",
        "se": "kappa_cluster_se",
        "ci_low": "kappa_ci_low",
        "ci_high": "kappa_ci_high",
        "p_value": "kappa_p",
        "df": "kappa_df",
        "method": "jackknife_t",
    },
    "kappa_iid": {
        "estimate": "kappa",
        "se": "kappa_se",
        "ci_low": "kappa_iid_ci_low",
        "ci_high": "kappa_iid_ci_high",
        "p_value": "kappa_iid_p",
        "method": _IID,
    },
    "kappa_boot": {
        "estimate": "kappa",
        "ci_low": "kappa_boot_ci_low",
        "ci_high": "kappa_boot_ci_high",
        "method": "cluster bootstrap ({method})",
    },
    "kappa_linear": {
        "estimate": "kappa_linear",
        "ci_low": "kappa_linear_ci_low",
        "ci_high": "kappa_linear_ci_high",
        "method": _IID,
    },
    "ac1": {
        "estimate": "ac1",
        "se": "ac1_se",
        "ci_low": "ac1_ci_low",
        "ci_high": "ac1_ci_high",
        "method": _IID,
    },
    "pabak": {
        "estimate": "pabak",
        "ci_low": "pabak_ci_low",
        "ci_high": "pabak_ci_high",
        "method": _IID,
    },
    "fleiss_kappa": {"estimate": "fleiss_kappa", "p_value": "fleiss_p", "method": "iid"},
    "krippendorff_alpha": {"estimate": "krippendorff_alpha"},
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
    "confusion",
)


def _agreement_long(rows: pd.DataFrame, confidence: float, boot_method: str) -> ResultFrame:
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
            if col == "method":
                part[col] = src.format(method=boot_method)
            else:
                part[col] = rows[src].to_numpy() if src in rows.columns else np.nan
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


def _kappa_of_sums(s: np.ndarray) -> np.ndarray:
    """Cohen's kappa of summed, flattened k x k tables (leading axes vectorised)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return _kappa_from_tables(s.reshape(*s.shape[:-1], _K, _K))


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
