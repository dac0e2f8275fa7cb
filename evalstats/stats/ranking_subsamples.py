"""Repeated-subsample study of prediction-powered ranking on one-battle tasks (Chatbot Arena).

Chatzi, Straitouri, Thejaswi & Gomez-Rodriguez ("Prediction-Powered Ranking of Large Language
Models", NeurIPS 2024) draw, many times, a random ``n`` of the human votes and compare the rank
sets of three estimators with the ranking from *all* human votes: the ``n`` human votes alone
(``human_only``), the LLM judge's verdicts on every battle alone (``judge_only``), and the
prediction-powered combination (``ppr``: the judge on every battle, corrected by the ``n``).

Every estimator here is :func:`evalstats.stats.rank`'s, fit by the same code (Davidson ties,
the first-shown arm's position bonus when both orders occur, the task-cluster bootstrap, the
PPI++ ``lambda``, the bootstrap-t rank sets below
:data:`~evalstats.stats.ranking.STUDENTIZE_MAX_CELLS` per-task numbers and the CR1-scaled
percentile max-t above it). What makes it fast is the design: every task is **one battle**
judged once by every judge, so tasks with the same (cell, verdicts, labelled) *type* are
exchangeable and the task bootstrap (a multinomial over the battles) is exactly a multinomial
over the types, with their counts as weights. A few thousand types replace 26,919 tasks, and
all subsamples' resamples are fitted in one batched Newton (no loop over resamples or rows;
the rank-set step-down runs per subsample).

One choice of ``rank`` matters here: it studentizes the rank sets (bootstrap-t on per-resample
sandwich SEs) only below ``STUDENTIZE_MAX_CELLS`` per-task numbers, so the ``n`` human votes
alone get the bootstrap-t while the prediction-powered fit (over all battles) gets the
spread-standardised max-t. ``human_only_percentile`` is the human-only fit's rank sets from the
same draws by the prediction-powered fit's construction, so that the two can be compared with
the construction held fixed. The numbers match ``rank`` in distribution, not
draw by draw (``rank`` draws task indices): ``tests/test_rank_subsamples.py`` checks the point
strengths and ``lambda``'s estimator against it exactly and the bootstrap SEs within Monte
Carlo error.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
import scipy.stats

from .._tidy import ResultFrame, tidy_frame
from .._validate import check_confidence, check_positive_int
from ..errors import DataError, ParameterError
from . import _btd
from .pairs import encode
from .rank_confidence import point_ranks, rank_bounds
from .ranking import STUDENTIZE_MAX_CELLS, _difference_se, _strengths
from .resample import as_generator

__all__ = ["SUBSAMPLE_ESTIMATORS", "rank_subsamples", "subsample_coverage"]

#: The estimators of the study, in their order in the results.
SUBSAMPLE_ESTIMATORS = ("full_human", "judge_only", "human_only", "human_only_percentile", "ppr")
# Fitted sets per batch (a chunk of subsamples times their resamples): bounds the memory of
# the type-count and score arrays (~ sets x types numbers).
_MAX_SETS = 4_000


class _Design:
    """Battles as cells and outcome columns; every judge's column per battle."""

    def __init__(self, frame: pd.DataFrame, human: str, judges: Sequence[str], arms) -> None:
        eh = encode(frame, judge=human, arms=arms)
        if len(np.unique(eh.task)) != len(eh.task):
            raise DataError(
                f"{human}: a task holds several judgments; the subsample study needs one "
                "battle per task (Chatbot Arena's design)",
                field="task_id",
            )
        self.arms, self.k, self.n = eh.arms, len(eh.arms), len(eh.task)
        cols = {}
        for j in judges:
            ej = encode(frame, judge=j, arms=self.arms)
            where = pd.Index(eh.tasks[eh.task]).get_indexer(ej.tasks[ej.task])
            if len(ej.task) != self.n or (where < 0).any() or len(np.unique(where)) != self.n:
                raise DataError(
                    f"judge {j!r} must judge exactly the {self.n} battles of {human!r}, once each",
                    field="task_id",
                )
            order = np.empty(self.n, dtype=np.int64)
            order[where] = np.arange(self.n)
            if (ej.a[order] != eh.a).any() or (ej.b[order] != eh.b).any():
                raise DataError(
                    f"judge {j!r}: a battle's arms differ from {human!r}'s", field="arm_a"
                )
            cols[j] = ej.y[order]
        pos = eh.pos
        keys = _btd.cells(eh.a, eh.b, pos, eh.y, self.k)[0]
        # As rank(): the position bonus only when both presentation orders occur.
        self.position = bool((keys[:, 2] == 1).any() and (keys[:, 2] == -1).any())
        if not self.position:
            pos = np.zeros_like(pos)
        keys, self.cell, col = _btd.cells(eh.a, eh.b, pos, eh.y, self.k)
        self.x = _btd.design(keys, self.k, self.position)
        self.n_cells = len(keys)
        swap = eh.a > eh.b  # cells() orients every battle to a < b; so must the judges
        self.col = {human: col, **{j: np.where(swap, y, 2 - y) for j, y in cols.items()}}

    def types(self, judge: str) -> np.ndarray:
        """Each battle's (cell, outcome) type, in [0, 3 * n_cells)."""
        return self.cell * 3 + self.col[judge]


def _fit(counts: np.ndarray, x: np.ndarray, init: np.ndarray | None = None) -> np.ndarray:
    """Davidson fits of count sets (M, 3C); resamples start from their data's fit (``init``,
    one row per set): the likelihood is concave, so the maximum is the same, in fewer steps."""
    return _btd.fit(counts.reshape(len(counts), -1, 3), x, ties=True, init=init)[0]


def _multinomial(gen, n: int, counts: np.ndarray, n_resamples: int) -> np.ndarray:
    """Bootstrap type counts (S * B, T): ``n`` battles drawn from each row's types.

    Drawing the ``n`` battles' indices with replacement is a multinomial over the battles;
    exchangeable battles merge into their type, so it is this multinomial over the types.
    Types no row has are left out of the draw (they stay 0).
    """
    s, t = counts.shape
    nz = np.flatnonzero(counts.sum(0) > 0)
    draw = gen.multinomial(n, counts[:, nz] / n, size=(n_resamples, s)).transpose(1, 0, 2)
    out = np.zeros((s * n_resamples, t))
    out[:, nz] = draw.reshape(s * n_resamples, len(nz))
    return out


def _type_se(d: _Design, counts: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """CR1 sandwich SEs of the strength differences (M, K, K) from type counts (M, 3C): the
    meat sums each battle's score outer product, and a battle's score is its type's."""
    out = np.empty((len(counts), d.k, d.k))
    sgn = np.array([0.5, 0.0, -0.5])  # d u-score / d count: win +1/2, tie 0, loss -1/2
    tie = np.array([0.0, 1.0, 0.0])
    du = d.x.shape[1]
    for lo in range(0, len(counts), 400):  # blocks of sets: scores are (sets, C, 3, d)
        th, c = theta[lo : lo + 400], counts[lo : lo + 400]
        p = _btd.outcome_probabilities(th[:, :du] @ d.x.T, th[:, -1:])
        mu = (p[..., 0] - p[..., 2]) / 2
        g_u = (sgn - mu[..., None])[..., None] * d.x[None, :, None, :]
        g_d = tie - p[..., 1:2]
        scores = np.concatenate([g_u, g_d[..., None]], axis=-1).reshape(len(th), c.shape[1], -1)
        cov = _btd.sandwich(c.reshape(len(c), -1, 3), scores, c, th, d.x, True)
        out[lo : lo + 400] = _difference_se(cov, d.k)
    return out


def _one_source(
    d: _Design, type_counts: np.ndarray, n_tasks: int, n_resamples: int, gen, studentize: bool
):
    """Fits of one judge's verdicts on ``n_tasks`` battles per set (S, 3C): the point, the
    bootstrap draws (S, B, d) and, when ``studentize``, the sandwich SEs of the differences."""
    s = len(type_counts)
    point = _fit(type_counts, d.x)
    boot = _multinomial(gen, n_tasks, type_counts, n_resamples)
    theta = _fit(boot, d.x, np.repeat(point, n_resamples, axis=0))
    if not studentize:
        return point, theta.reshape(s, n_resamples, -1), None, None
    se_hat = _type_se(d, type_counts, point)
    se_draws = _type_se(d, boot, theta).reshape(s, n_resamples, d.k, d.k)
    return point, theta.reshape(s, n_resamples, -1), se_hat, se_draws


def _bounds(beta, beta_b, n_tasks, confidence, sets, se_hat=None, se_draws=None):
    """Rank sets of every fit (one per row of ``beta``): {"simultaneous"/"marginal": (lo, hi)}."""
    out = {m: (np.empty(beta.shape, np.int64), np.empty(beta.shape, np.int64)) for m in sets}
    for i in range(len(beta)):  # per subsample: the step-down is sequential
        ok = np.isfinite(beta_b[i]).all(axis=1)
        if se_draws is None:
            # The bootstrap's plug-in variance lacks the CR1 factor C / (C - 1), as in rank().
            dev, kw = (beta_b[i][ok] - beta[i]) * np.sqrt(n_tasks / (n_tasks - 1)), {}
        else:
            dev, kw = beta_b[i][ok] - beta[i], {"se_hat": se_hat[i], "se_draws": se_draws[i][ok]}
        for m in sets:
            lo, hi = rank_bounds(
                beta[i], dev, confidence=confidence, simultaneous=m == "simultaneous", **kw
            )
            out[m][0][i], out[m][1][i] = lo, hi
    return out


def _human_like(d, types, mask, n_resamples, gen, confidence, sets, percentile=False):
    """``rank`` of one judge's verdicts on the battles of each row of ``mask`` (S, N); with
    ``percentile`` also the spread-standardised sets of the same draws (None if not studentized)."""
    n_tasks = int(mask[0].sum())
    counts = np.stack([np.bincount(types[m], minlength=3 * d.n_cells) for m in mask]).astype(float)
    student = n_tasks * d.n_cells * 3 <= STUDENTIZE_MAX_CELLS
    point, draws, se_hat, se_draws = _one_source(d, counts, n_tasks, n_resamples, gen, student)
    beta, beta_b = _strengths(point, d.k), _strengths(draws, d.k)
    bounds = _bounds(beta, beta_b, n_tasks, confidence, sets, se_hat, se_draws)
    if not percentile:
        return beta, bounds
    alt = _bounds(beta, beta_b, n_tasks, confidence, sets) if student else None
    return beta, bounds, alt


def _ppi_lambda(bh: np.ndarray, ba: np.ndarray, bl: np.ndarray) -> np.ndarray:
    """PPI++ ``lambda`` per subsample from the three separate fits' draws (S, B, K): the
    minimiser of the trace of ``Var(b_H + lambda (b_J,all - b_J,L))``, clipped to [0, 1]
    (:func:`evalstats.stats.rank`'s rule)."""
    delta = ba - bl
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        dh, dd = bh - bh.mean(1, keepdims=True), delta - delta.mean(1, keepdims=True)
        cross = np.nanmean((dh * dd).sum(2), axis=1)
        var = np.nanmean((dd**2).sum(2), axis=1)
    lam = np.where(var > 0, -cross / np.where(var > 0, var, 1.0), 0.0)
    return np.clip(lam, 0.0, 1.0)


def _ppr(d, judge, human, labelled, n_resamples, gen, confidence, sets, lam=None):
    """Prediction-powered ``rank`` per subsample: ``labelled`` (S, N) marks its human votes
    (``lam``, one per subsample, replaces the PPI++ choice: for the tests)."""
    c3, n = 3 * d.n_cells, d.n
    jt, ht = d.types(judge), d.col[human]
    # A battle's type: its judge type, and when labelled its human column too.
    types = np.where(labelled, c3 + jt[None] * 3 + ht[None], jt[None])
    n_types = c3 * 4
    counts = np.stack([np.bincount(t, minlength=n_types) for t in types]).astype(float)
    s = len(counts)

    def split(tc: np.ndarray):
        """(human, judge on all, judge on the labelled) counts, each (M, 3C)."""
        lab = tc[:, c3:].reshape(len(tc), d.n_cells, 3, 3)  # (cell, judge col, human col)
        j_lab = lab.sum(3).reshape(len(tc), c3)
        return lab.sum(2).reshape(len(tc), c3), tc[:, :c3] + j_lab, j_lab

    boot = _multinomial(gen, n, counts, n_resamples)
    parts, parts_b = split(counts), split(boot)
    starts = [np.repeat(_fit(p, d.x), n_resamples, axis=0) for p in parts]
    bh, ba, bl = (
        _strengths(_fit(p, d.x, st), d.k).reshape(s, n_resamples, d.k)
        for p, st in zip(parts_b, starts, strict=True)
    )
    lam = _ppi_lambda(bh, ba, bl) if lam is None else np.asarray(lam, dtype=np.float64)

    def combine(h, a, lo, lam_rows):
        n_l, n_a = lo.sum(1, keepdims=True), a.sum(1, keepdims=True)
        return h + lam_rows[:, None] * (n_l / n_a * a - lo)

    point = _fit(combine(*parts, lam), d.x)
    draws = _fit(
        combine(*parts_b, np.repeat(lam, n_resamples)), d.x, np.repeat(point, n_resamples, 0)
    )
    beta, beta_b = _strengths(point, d.k), _strengths(draws, d.k).reshape(s, n_resamples, d.k)
    return beta, _bounds(beta, beta_b, n, confidence, sets), lam


def rank_subsamples(
    frame: pd.DataFrame,
    *,
    human: str = "human",
    judges: Sequence[str] | None = None,
    n_labels: int = 1000,
    n_subsamples: int = 20,
    confidence: float = 0.95,
    n_resamples: int = 500,
    sets: Sequence[str] = ("simultaneous",),
    rng: np.random.Generator | int | None = None,
    arms: Sequence[str] | None = None,
) -> ResultFrame:
    """Rank sets of the all-human, human-only, judge-only and prediction-powered rankings over
    repeated random subsamples of the human votes.

    The experiment of Chatzi et al. (NeurIPS 2024); see the module docstring.

    Parameters
    ----------
    frame : pandas.DataFrame
        A stacked pairwise verdict frame (:func:`evalstats.adapters.arena.load` with
        ``judge="all"``): every judge judges the same battles, one battle per task.
    human : str
        The judge whose verdicts are the truth (people).
    judges : sequence of str, optional
        The LLM judges (default: every other judge of ``frame``).
    n_labels : int
        Human votes per subsample (drawn without replacement).
    n_subsamples : int
        Random subsamples.
    confidence : float
        Level of the rank sets.
    n_resamples : int
        Task-cluster bootstrap resamples per fit.
    sets : sequence of {"simultaneous", "marginal"}
        Which rank sets to compute (``method`` says which a row holds).
    rng : numpy.random.Generator or int, optional
        Seed (subsamples, then every bootstrap).
    arms : sequence of str, optional
        The arms' order.

    Returns
    -------
    ResultFrame
        ``estimator`` (:data:`SUBSAMPLE_ESTIMATORS`), ``judge``, ``subsample`` (missing for
        ``full_human`` and ``judge_only``, which use every battle), ``arm``; ``statistic``
        ``"rank"`` (``estimate`` the point rank, ``ci_low`` / ``ci_high`` the rank set;
        ``n`` the verdicts, ``method`` the set) and, for ``ppr``, ``"lambda"`` (no arm).
        ``diagnostics``: ``n_battles``, ``n_labels``, ``n_subsamples``, ``n_resamples``,
        ``position_effect``.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> arms = np.array(["x", "y", "z"])
    >>> pair = rng.integers(0, 3, 300)
    >>> a, b = arms[pair], arms[(pair + 1) % 3]
    >>> def votes(p):
    ...     return rng.choice(["win", "tie", "loss"], 300, p=p)
    >>> f = pd.concat([pd.DataFrame({"task_id": np.arange(300).astype(str), "judge": j,
    ...                "arm_a": a, "arm_b": b, "order": "a_first", "status": "ok",
    ...                "outcome": votes(p)}) for j, p in
    ...                (("human", [0.4, 0.2, 0.4]), ("llm", [0.5, 0.2, 0.3]))])
    >>> r = rank_subsamples(f, n_labels=100, n_subsamples=3, n_resamples=100, rng=0)
    >>> sorted(set(r["estimator"])), int(r["subsample"].max())
    (['full_human', 'human_only', 'human_only_percentile', 'judge_only', 'ppr'], 2)
    """
    confidence = check_confidence(confidence)
    n_resamples = check_positive_int(n_resamples, "n_resamples", minimum=50)
    n_subsamples = check_positive_int(n_subsamples, "n_subsamples")
    sets = tuple(sets)
    if not sets or set(sets) - {"simultaneous", "marginal"}:
        raise ParameterError(f"sets must name 'simultaneous' and/or 'marginal', got {sets}")
    gen = as_generator(rng)
    if judges is None:
        judges = [j for j in pd.unique(frame["judge"].astype(str)) if j != human]
    judges = [str(j) for j in judges]
    if not judges:
        raise ParameterError("no LLM judge in the frame besides the human one")
    d = _Design(frame, human, judges, arms)
    n_labels = check_positive_int(n_labels, "n_labels", minimum=2)
    if n_labels >= d.n:
        raise ParameterError(f"n_labels must be below the {d.n} battles, got {n_labels}")
    # The subsamples: S random n-subsets of the battles (argpartition of uniform keys).
    keys = gen.random((n_subsamples, d.n))
    labelled = np.zeros((n_subsamples, d.n), dtype=bool)
    np.put_along_axis(labelled, np.argpartition(keys, n_labels - 1, axis=1)[:, :n_labels], True, 1)
    rows: list[pd.DataFrame] = []

    def emit(estimator, judge, subsample, beta, bounds, n_verdicts, n_tasks):
        for m, (lo, hi) in bounds.items():
            rows.append(
                pd.DataFrame(
                    {
                        "estimator": estimator,
                        "judge": judge,
                        "subsample": np.repeat(subsample, d.k),
                        "arm": np.tile(np.array(d.arms, dtype=object), len(beta)),
                        "statistic": "rank",
                        "estimate": np.concatenate([point_ranks(b) for b in beta]),
                        "ci_low": lo.ravel(),
                        "ci_high": hi.ravel(),
                        "n": n_verdicts,
                        "n_tasks": n_tasks,
                        "method": f"{m}_stepdown",
                        "confidence": confidence,
                    }
                )
            )

    everything = np.ones((1, d.n), dtype=bool)
    na = np.array([pd.NA], dtype=object)
    for est, judge in (("full_human", human), *(("judge_only", j) for j in judges)):
        beta, bounds = _human_like(
            d, d.types(judge), everything, n_resamples, gen, confidence, sets
        )
        emit(est, judge, na, beta, bounds, d.n, d.n)
    chunk = max(1, _MAX_SETS // n_resamples)
    for start in range(0, n_subsamples, chunk):  # batches of subsamples (memory)
        part = labelled[start : start + chunk]
        idx = np.arange(start, start + len(part), dtype=object)
        beta, bounds, alt = _human_like(
            d, d.types(human), part, n_resamples, gen, confidence, sets, percentile=True
        )
        emit("human_only", human, idx, beta, bounds, n_labels, n_labels)
        if alt is not None:  # the PPR fit's construction, on the human-only draws
            emit("human_only_percentile", human, idx, beta, alt, n_labels, n_labels)
        for j in judges:
            beta, bounds, lam = _ppr(d, j, human, part, n_resamples, gen, confidence, sets)
            emit("ppr", j, idx, beta, bounds, d.n + n_labels, d.n)
            rows.append(
                pd.DataFrame({"estimator": "ppr", "judge": j, "subsample": idx, "arm": None,
                              "statistic": "lambda", "estimate": lam, "n": n_labels,
                              "n_tasks": d.n, "method": "ppi++", "confidence": confidence})
            )  # fmt: skip
    out = pd.concat(rows, ignore_index=True)
    order = {e: i for i, e in enumerate(SUBSAMPLE_ESTIMATORS)}
    out = out.iloc[
        np.lexsort((out["subsample"].fillna(-1).astype(int), out["estimator"].map(order)))
    ]
    diagnostics = pd.DataFrame(
        {"n_battles": [d.n], "n_labels": [n_labels], "n_subsamples": [n_subsamples],
         "n_resamples": [n_resamples], "position_effect": [d.position]}
    )  # fmt: skip
    return tidy_frame(out, by=["estimator", "judge", "subsample", "arm"], diagnostics=diagnostics)


def subsample_coverage(
    ranks: pd.DataFrame, *, method: str = "simultaneous_stepdown"
) -> ResultFrame:
    """Coverage of the all-human ranking and mean rank-set size, per estimator and judge.

    Over the subsamples of :func:`rank_subsamples`: how often the rank sets cover the
    all-human ranking, how often they meet its rank sets, and their mean size.

    Parameters
    ----------
    ranks : pandas.DataFrame
        :func:`rank_subsamples`' result.
    method : str
        Which rank sets to score (``"simultaneous_stepdown"``: coverage of all ranks at once).

    Returns
    -------
    ResultFrame
        ``estimator``, ``judge``; ``statistic``:

        * ``coverage``: share of subsamples whose sets hold every arm's all-human point rank
          (``se`` the Monte Carlo SE ``sqrt(p (1 - p) / S)``);
        * ``intersects``: share whose every set meets the arm's all-human rank set (the
          paper's "baseline intersection" metric);
        * ``set_size``: mean over subsamples of the mean set size (``se`` their SD / sqrt(S));
        * ``size_vs_human_only`` (``ppr``): mean over subsamples of the PPR set size minus the
          human-only one on the same votes (paired; ``se`` SD / sqrt(S), normal interval);
          ``size_vs_human_only_percentile`` the same against ``human_only_percentile``;
        * ``lambda`` (``ppr``): mean PPI++ weight (``se`` their SD / sqrt(S)).

        ``n`` the subsamples (1 for ``judge_only``, which uses every battle: the same data in
        every subsample, so its share is 0 or 1 and has no Monte Carlo SE).

    Examples
    --------
    >>> r = pd.DataFrame({"estimator": ["full_human"] * 2 + ["human_only"] * 4,
    ...                   "judge": "h", "subsample": [pd.NA, pd.NA, 0, 0, 1, 1],
    ...                   "arm": ["x", "y"] * 3, "statistic": "rank",
    ...                   "estimate": [1, 2, 1, 2, 2, 1], "ci_low": [1, 2, 1, 1, 1, 1],
    ...                   "ci_high": [1, 2, 2, 2, 2, 1], "method": "simultaneous_stepdown",
    ...                   "n": 50, "n_tasks": 50, "confidence": 0.95})
    >>> subsample_coverage(r)[["statistic", "estimate", "n"]].to_string(index=False)
    ' statistic  estimate  n\\n  coverage      0.50  2\\nintersects      0.50  2\\n  set_size      1.75  2'
    """
    r = ranks[(ranks["statistic"] == "rank") & (ranks["method"] == method)]
    truth = r[r["estimator"] == "full_human"]
    if truth.empty:
        raise DataError(
            "no full_human rank rows: pass rank_subsamples()' result", field="estimator"
        )
    true_rank = truth.set_index("arm")["estimate"]
    t_lo, t_hi = truth.set_index("arm")["ci_low"], truth.set_index("arm")["ci_high"]
    r = r[r["estimator"] != "full_human"].assign(
        _cov=lambda f: (
            (f["ci_low"] <= f["arm"].map(true_rank)) & (f["arm"].map(true_rank) <= f["ci_high"])
        ),
        _meet=lambda f: (f["ci_low"] <= f["arm"].map(t_hi)) & (f["arm"].map(t_lo) <= f["ci_high"]),
        _size=lambda f: f["ci_high"] - f["ci_low"] + 1,
        _sub=lambda f: f["subsample"].fillna(-1).astype(int),
    )
    per = r.groupby(["estimator", "judge", "_sub"], sort=False).agg(
        cov=("_cov", "all"), meet=("_meet", "all"), size=("_size", "mean"),
        n=("n", "first"), n_tasks=("n_tasks", "first"), confidence=("confidence", "first"),
    ).reset_index()  # fmt: skip
    lam = ranks[ranks["statistic"] == "lambda"].groupby(["judge"])["estimate"]
    lam_mean, lam_sd = lam.mean(), lam.std(ddof=1)
    humans = {
        ref: per.loc[per["estimator"] == ref, ["_sub", "size"]]
        for ref in ("human_only", "human_only_percentile")
        if (per["estimator"] == ref).any()
    }
    out = []
    for (est, judge), g in per.groupby(["estimator", "judge"], sort=False):
        s = len(g)
        base = {"estimator": est, "judge": judge, "n": s, "n_tasks": int(g["n_tasks"].iloc[0]),
                "confidence": g["confidence"].iloc[0]}  # fmt: skip
        for name, col, kind in (("coverage", "cov", "share"), ("intersects", "meet", "share"),
                                ("set_size", "size", "mean")):  # fmt: skip
            v = g[col].to_numpy(dtype=float)
            est_v = float(v.mean())
            if s < 2:
                se = np.nan
            elif kind == "share":
                se = float(np.sqrt(est_v * (1 - est_v) / s))
            else:
                se = float(v.std(ddof=1) / np.sqrt(s))
            out.append({**base, "statistic": name, "estimate": est_v, "se": se,
                        "method": f"monte_carlo_{method}"})  # fmt: skip
        for ref, other in humans.items() if est == "ppr" else ():
            # Paired over subsamples: the same human votes enter both estimators.
            both = g.merge(other, on="_sub", suffixes=("", "_h"))
            dv = (both["size"] - both["size_h"]).to_numpy(dtype=float)
            if not len(dv):
                continue
            se = float(dv.std(ddof=1) / np.sqrt(len(dv))) if len(dv) > 1 else np.nan
            z = float(scipy.stats.norm.ppf(0.5 + float(base["confidence"]) / 2))
            out.append({**base, "n": len(dv), "statistic": f"size_vs_{ref}",
                        "estimate": float(dv.mean()), "se": se,
                        "ci_low": float(dv.mean()) - z * se, "ci_high": float(dv.mean()) + z * se,
                        "method": f"paired_normal_{method}"})  # fmt: skip
        if est == "ppr":
            out.append({**base, "statistic": "lambda", "estimate": float(lam_mean[judge]),
                        "se": float(lam_sd[judge] / np.sqrt(s)) if s > 1 else np.nan,
                        "method": "ppi++"})  # fmt: skip
    return tidy_frame(pd.DataFrame(out), by=["estimator", "judge"])
