"""Judges against people: accuracy, macro P/R/F1 and Cohen's kappa against a gold label.

The gold label of a pair (task, replicate) comes from the ``labels`` table
(:func:`evalstats.records.load_labels`): one labeler's verdict, or the majority of the labelers (strictly
more than half of the votes on that pair; pairs without one are counted and reported, never
guessed). Every ``ok`` judgment of a pair with a gold label is one unit: a pair judged in both
orders contributes two, as LLMBar counts them, and those two are correlated, as are the pairs
of one task, so kappa's interval is a **cluster bootstrap over tasks**: per-task 3 x 3
confusion tables are resampled (:func:`evalstats.stats.cluster_bootstrap`, BCa by default) and
kappa is evaluated on the summed tables, vectorised over resamples. The analytic IID interval
(Fleiss-Cohen-Everitt ASE, :func:`evalstats.stats.cohen_kappa_table`) is shown beside it.

Macro precision / recall / F1 follow scikit-learn's ``average="macro"``: the mean over the
outcomes present in the gold labels or the verdicts, with 0 for a class never predicted
(``zero_division=0``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._display import ResultDisplay
from .._schema import OUTCOME_DTYPE, OUTCOMES
from .._tidy import ResultFrame, stack_statistics
from .._validate import check_columns, check_confidence, check_n_resamples
from ..errors import DataError
from ..frames import select_rubric
from ._kappa import _kappa_from_tables
from .agreement import cohen_kappa_table
from .resample import BOOTSTRAP_METHODS, cluster_bootstrap

__all__ = ["GoldResult", "gold_labels", "judge_vs_gold", "labeler_agreement", "macro_scores"]

_K = len(OUTCOMES)
_PAIR = ["task_id", "replicate"]


@dataclass(frozen=True)
class GoldResult(ResultDisplay):
    """What :func:`judge_vs_gold` returns.

    Attributes
    ----------
    judges : ResultFrame
        Long, per judge: ``accuracy``, ``precision``, ``recall``, ``f1`` (macro),
        ``kappa`` (its interval: cluster bootstrap over tasks) and ``kappa_iid`` (the same
        kappa, its analytic IID interval); where both orders exist also
        ``accuracy_with_first``, ``accuracy_without_first`` and ``positional_agreement``
        (same verdict in both orders; ``n``: the pairs judged in both). ``.diagnostics``:
        ``judge``, ``n`` (ok judgments of gold pairs), ``n_pairs``, ``n_tasks``,
        ``n_not_ok`` (invalid / error / no_answer judgments of gold pairs, left out),
        ``n_pairs_both_orders``.
    confusion : DataFrame
        ``judge``, ``gold``, ``predicted``, ``n`` (every cell, zeros included).
    labelers : DataFrame
        Inter-labeler kappa: ``a``, ``b``, ``n``, ``kappa``, ``ci_low``, ``ci_high``
        (cluster bootstrap), ``observed_agreement``.
    gold : DataFrame
        The gold label per pair: ``task_id``, ``replicate``, ``gold`` (NA without a
        majority), ``votes``, ``agreeing``.
    gold_rule : str
        ``"majority"`` or the labeler's name.
    n_gold_pairs, n_no_majority : int
        Pairs with a gold label, pairs with labels but no majority.
    confidence : float
    method : str
        Bootstrap interval method.
    """

    judges: pd.DataFrame
    confusion: pd.DataFrame
    labelers: pd.DataFrame
    gold: pd.DataFrame
    gold_rule: str
    n_gold_pairs: int
    n_no_majority: int
    confidence: float
    method: str

    def to_frame(self) -> pd.DataFrame:
        """The per-judge table."""
        return self.judges


def _codes(values: pd.Series) -> np.ndarray:
    return pd.Categorical(values.astype(object), dtype=OUTCOME_DTYPE).codes.astype(np.int64)


def gold_labels(labels: pd.DataFrame, gold: str = "majority") -> pd.DataFrame:
    """The gold outcome of each labelled pair: one labeler's, or the strict majority.

    Parameters
    ----------
    labels : DataFrame
        ``task_id``, ``replicate``, ``labeler``, ``outcome``.
    gold : str
        ``"majority"`` or a labeler's name (their own majority if they labelled a pair more
        than once, e.g. in both orders).

    Returns
    -------
    DataFrame
        ``task_id``, ``replicate``, ``gold`` (outcome dtype; NA without a strict majority),
        ``votes`` and ``agreeing`` (votes for the gold outcome).

    Examples
    --------
    >>> labels = pd.DataFrame({"task_id": ["a", "a", "a", "b", "b"], "replicate": 1,
    ...                        "labeler": ["x", "y", "z", "x", "y"],
    ...                        "outcome": ["win", "win", "tie", "win", "loss"]})
    >>> gold_labels(labels)[["task_id", "gold", "votes"]]
      task_id gold  votes
    0       a  win      3
    1       b  NaN      2
    """
    check_columns(labels, [*_PAIR, "labeler", "outcome"], what="labels")
    lab = labels
    if gold != "majority":
        present = sorted(labels["labeler"].astype(str).unique())
        if gold not in present:
            raise ValueError(f"gold must be 'majority' or a labeler; labelers: {present}")
        lab = labels.loc[labels["labeler"].astype(str) == gold]
    codes = _codes(lab["outcome"])
    if (codes < 0).any():
        raise DataError("labels hold an outcome other than win / tie / loss", field="outcome")
    pairs = lab[_PAIR].reset_index(drop=True)
    pid, uniq = pd.MultiIndex.from_frame(pairs).factorize()
    counts = np.bincount(pid * _K + codes, minlength=len(uniq) * _K).reshape(len(uniq), _K)
    votes = counts.sum(axis=1)
    top = counts.argmax(axis=1)
    agreeing = counts.max(axis=1)
    has = 2 * agreeing > votes
    out = pd.DataFrame(list(uniq), columns=_PAIR)
    out["gold"] = pd.Categorical.from_codes(np.where(has, top, -1), dtype=OUTCOME_DTYPE)
    out["votes"] = votes
    out["agreeing"] = agreeing
    return out.sort_values(_PAIR, kind="stable").reset_index(drop=True)


def macro_scores(table: np.ndarray) -> tuple[float, float, float, float]:
    """Accuracy and macro precision, recall, F1 of a confusion table (rows = gold).

    Classes absent from both the gold labels and the predictions are left out, and a class
    never predicted has precision 0, as scikit-learn's ``average="macro"``.

    >>> macro_scores(np.array([[2, 1, 0], [0, 0, 0], [1, 0, 3]]))
    (0.7142857142857143, 0.5555555555555555, 0.47222222222222215, 0.5079365079365079)
    """
    t = np.asarray(table, dtype=np.float64)
    n = t.sum()
    rows, cols, diag = t.sum(axis=1), t.sum(axis=0), np.diag(t)
    present = (rows > 0) | (cols > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(cols > 0, diag / cols, 0.0)
        r = np.where(rows > 0, diag / rows, 0.0)
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    acc = float(diag.sum() / n) if n else float("nan")
    if not present.any():
        return acc, float("nan"), float("nan"), float("nan")
    return acc, float(p[present].mean()), float(r[present].mean()), float(f[present].mean())


def _per_cluster_tables(cluster: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, c = np.unique(cluster, return_inverse=True)
    n_c = int(c.max()) + 1 if c.size else 0
    flat = c * (_K * _K) + a * _K + b
    return np.bincount(flat, minlength=n_c * _K * _K).reshape(n_c, _K * _K)


def _clustered_kappa(
    cluster: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    *,
    confidence: float,
    n_resamples: int,
    method: str,
    rng: np.random.Generator | int | None,
) -> dict[str, float]:
    """Kappa of codes ``a`` vs ``b`` with a cluster-bootstrap and an IID interval."""
    tables = _per_cluster_tables(cluster, a, b)
    total = tables.sum(axis=0).reshape(_K, _K)
    res = cohen_kappa_table(total, confidence=confidence) if total.sum() else None
    out = {
        "kappa": res.kappa if res else np.nan,
        "kappa_ci_low": np.nan,
        "kappa_ci_high": np.nan,
        "kappa_iid_ci_low": res.ci_low if res else np.nan,
        "kappa_iid_ci_high": res.ci_high if res else np.nan,
        "observed_agreement": res.observed_agreement if res else np.nan,
    }
    if tables.shape[0] >= 2 and np.isfinite(out["kappa"]):
        boot = cluster_bootstrap(
            tables,
            lambda s: _kappa_from_tables(s.reshape(*s.shape[:-1], _K, _K)),
            method=method,
            n_resamples=n_resamples,
            confidence=confidence,
            rng=rng,
        )
        out["kappa_ci_low"], out["kappa_ci_high"] = float(boot.ci_low[0]), float(boot.ci_high[0])
    return out


def labeler_agreement(
    labels: pd.DataFrame,
    *,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    method: str = "bca",
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Cohen's kappa between every two labelers on the pairs both labelled.

    A labeler's first label of a pair is used (labels in both orders: the first row).
    Returns ``a``, ``b``, ``n``, ``n_tasks``, ``kappa``, ``ci_low``, ``ci_high`` (cluster
    bootstrap over tasks), ``iid_ci_low``, ``iid_ci_high``, ``observed_agreement``.

    >>> labels = pd.DataFrame({"task_id": list("aabbcc") * 2, "replicate": [1, 2] * 6,
    ...     "labeler": ["x"] * 6 + ["y"] * 6,
    ...     "outcome": ["win", "tie", "loss", "win", "win", "tie",
    ...                 "win", "tie", "loss", "loss", "win", "tie"]})
    >>> labeler_agreement(labels, rng=0)[["a", "b", "n", "kappa"]].round(3)
       a  b  n  kappa
    0  x  y  6   0.75
    """
    confidence = check_confidence(confidence)
    first = labels.drop_duplicates([*_PAIR, "labeler"], keep="first")
    names = sorted(first["labeler"].astype(str).unique())
    rows = []
    for a, b in itertools.combinations(names, 2):
        la = first.loc[first["labeler"].astype(str) == a, [*_PAIR, "outcome"]]
        lb = first.loc[first["labeler"].astype(str) == b, [*_PAIR, "outcome"]]
        both = la.merge(lb, on=_PAIR, suffixes=("_a", "_b"))
        k = _clustered_kappa(
            both["task_id"].to_numpy(dtype=object).astype(str),
            _codes(both["outcome_a"]),
            _codes(both["outcome_b"]),
            confidence=confidence,
            n_resamples=n_resamples,
            method=method,
            rng=rng,
        )
        rows.append(
            {
                "a": a,
                "b": b,
                "n": len(both),
                "n_tasks": both["task_id"].nunique(),
                "kappa": k["kappa"],
                "ci_low": k["kappa_ci_low"],
                "ci_high": k["kappa_ci_high"],
                "iid_ci_low": k["kappa_iid_ci_low"],
                "iid_ci_high": k["kappa_iid_ci_high"],
                "observed_agreement": k["observed_agreement"],
            }
        )
    cols = ["a", "b", "n", "n_tasks", "kappa", "ci_low", "ci_high", "iid_ci_low", "iid_ci_high"]
    return pd.DataFrame(rows, columns=[*cols, "observed_agreement"])


#: The statistics of a judge against gold, in the rows' order (the order ones where both
#: orders exist).
GOLD_STATISTICS = ("accuracy", "precision", "recall", "f1", "kappa", "kappa_iid")
ORDER_STATISTICS = ("accuracy_with_first", "accuracy_without_first", "positional_agreement")


def _judges_long(wide_rows: pd.DataFrame, confidence: float, method: str) -> ResultFrame:
    """The per-judge rows of :func:`judge_vs_gold` in the one result shape."""
    diag_cols = ["judge", "n", "n_pairs", "n_tasks", "n_not_ok"]
    if "n_pairs_both_orders" in wide_rows:
        diag_cols.append("n_pairs_both_orders")
    diagnostics = wide_rows[diag_cols].reset_index(drop=True)
    base = {"n": wide_rows["n"].to_numpy(), "n_tasks": wide_rows["n_tasks"].to_numpy()}
    statistics = []
    for name in GOLD_STATISTICS:
        cols = {**base, "estimate": wide_rows[name if name != "kappa_iid" else "kappa"]}
        if name == "kappa":  # the task-clustered bootstrap interval
            cols |= {"ci_low": wide_rows["kappa_ci_low"], "ci_high": wide_rows["kappa_ci_high"]}
            cols |= {"method": f"cluster bootstrap ({method})", "confidence": confidence}
        elif name == "kappa_iid":  # the same kappa, its analytic interval over verdicts
            cols |= {
                "ci_low": wide_rows["kappa_iid_ci_low"],
                "ci_high": wide_rows["kappa_iid_ci_high"],
                "method": "iid analytic",
                "confidence": confidence,
            }
        statistics.append((name, {k: np.asarray(v) for k, v in cols.items()}))
    if "positional_agreement" in wide_rows:
        for name in ORDER_STATISTICS:
            cols = {**base, "estimate": wide_rows[name].to_numpy()}
            if name == "positional_agreement":
                cols["n"] = wide_rows["n_pairs_both_orders"].to_numpy()
            statistics.append((name, cols))
    return stack_statistics(wide_rows[["judge"]], statistics, diagnostics=diagnostics)


def judge_vs_gold(
    frame: pd.DataFrame,
    labels: pd.DataFrame,
    *,
    gold: str = "majority",
    rubric: str | None = None,
    judges: Sequence[str] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2_000,
    method: str = "bca",
    rng: np.random.Generator | int | None = None,
) -> GoldResult:
    """Every judge against the people: accuracy, macro P/R/F1, kappa (clustered CI), orders.

    Parameters
    ----------
    frame : DataFrame
        A verdict frame (``task_id``, ``replicate``, ``judge``, ``rubric``, ``order``,
        ``status``, ``outcome``).
    labels : DataFrame
        A labels table (:func:`evalstats.records.load_labels` or an adapter's labels).
    gold : str, default "majority"
        ``"majority"`` (strict majority of the labelers; pairs without one are counted in
        ``n_no_majority`` and left out) or one labeler's name.
    rubric : str, optional
        Required when the frame holds several rubrics.
    judges : sequence of str, optional
        Judges to score (default: all).
    confidence : float, default 0.95
    n_resamples : int, default 2 000
        Cluster bootstrap resamples for kappa's interval.
    method : {"bca", "percentile", "basic"}
        Bootstrap interval method.
    rng : Generator, int or None

    Returns
    -------
    GoldResult

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "task_id": list("aabbccdd"), "replicate": 1, "judge": "j", "rubric": "r",
    ...     "order": ["with_first", "without_first"] * 4, "status": "ok",
    ...     "outcome": ["win", "win", "loss", "win", "tie", "tie", "loss", "loss"]})
    >>> labels = pd.DataFrame({"task_id": list("abcd"), "replicate": 1, "labeler": "ann",
    ...                        "outcome": ["win", "loss", "tie", "loss"]})
    >>> res = judge_vs_gold(frame, labels, rng=0)
    >>> res.judges.set_index("statistic").loc[["accuracy", "positional_agreement"], "estimate"]
    statistic
    accuracy                0.875
    positional_agreement    0.750
    Name: estimate, dtype: float64
    """
    check_columns(frame, [*_PAIR, "judge", "rubric", "status", "outcome"])
    confidence = check_confidence(confidence)
    n_resamples = check_n_resamples(n_resamples)
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}")
    f, _ = select_rubric(frame, rubric)
    g = gold_labels(labels, gold)
    with_gold = g.loc[g["gold"].notna()]
    n_no_majority = int(g["gold"].isna().sum())
    present = sorted(f["judge"].astype(str).unique())
    judges = present if judges is None else list(judges)
    unknown = [j for j in judges if j not in present]
    if unknown:
        raise ValueError(f"judges {unknown} have no rows; present: {present}")

    keep_cols = [*_PAIR, "judge", "status", "outcome"]
    has_order = "order" in f.columns and f["order"].notna().any()
    if has_order:
        keep_cols.append("order")
    m = f[keep_cols].assign(judge=f["judge"].astype(str))
    m = m.merge(with_gold[[*_PAIR, "gold"]], on=_PAIR, how="inner")

    rows, conf_parts = [], []
    for judge in judges:
        mj = m.loc[m["judge"] == judge]
        ok = mj.loc[mj["status"].astype(str) == "ok"]
        gc, pc = _codes(ok["gold"]), _codes(ok["outcome"])
        table = np.bincount(gc * _K + pc, minlength=_K * _K).reshape(_K, _K)
        acc, prec, rec, f1 = macro_scores(table)
        k = _clustered_kappa(
            ok["task_id"].to_numpy(dtype=object).astype(str),
            gc,
            pc,
            confidence=confidence,
            n_resamples=n_resamples,
            method=method,
            rng=rng,
        )
        row = {
            "judge": judge,
            "n": len(ok),
            "n_pairs": int(ok[_PAIR].drop_duplicates().shape[0]),
            "n_tasks": int(ok["task_id"].nunique()),
            "n_not_ok": int(len(mj) - len(ok)),
            "accuracy": acc,
            "precision": prec,
            "recall": rec,
            "f1": f1,
            **{key: k[key] for key in k if key != "observed_agreement"},
        }
        if has_order:
            order = ok["order"].astype(object)
            correct = (gc == pc).astype(np.float64)
            for o in ("with_first", "without_first"):
                sel = (order == o).to_numpy()
                row[f"accuracy_{o}"] = float(correct[sel].mean()) if sel.any() else np.nan
            first = ok.loc[order.notna().to_numpy()].drop_duplicates([*_PAIR, "order"])
            wide = first.pivot(index=_PAIR, columns="order", values="outcome")
            both = wide.dropna() if wide.shape[1] == 2 else wide.iloc[:0]
            row["n_pairs_both_orders"] = len(both)
            row["positional_agreement"] = (
                float((both.iloc[:, 0].astype(str) == both.iloc[:, 1].astype(str)).mean())
                if len(both)
                else np.nan
            )
        rows.append(row)
        gi, pi = np.divmod(np.arange(_K * _K), _K)
        conf_parts.append(
            pd.DataFrame(
                {
                    "judge": judge,
                    "gold": pd.Categorical.from_codes(gi, dtype=OUTCOME_DTYPE),
                    "predicted": pd.Categorical.from_codes(pi, dtype=OUTCOME_DTYPE),
                    "n": table.ravel(),
                }
            )
        )
    labelers = labeler_agreement(
        labels, confidence=confidence, n_resamples=n_resamples, method=method, rng=rng
    )
    return GoldResult(
        judges=_judges_long(pd.DataFrame(rows), confidence, method),
        confusion=pd.concat(conf_parts, ignore_index=True),
        labelers=labelers,
        gold=g,
        gold_rule=gold,
        n_gold_pairs=len(with_gold),
        n_no_majority=n_no_majority,
        confidence=confidence,
        method=method,
    )
