"""Win, tie and loss rates of WITH against WITHOUT, with task-clustered uncertainty.

Every row of the verdict frame is one judgment from WITH's point of view.
Rates are ratio estimators over the counted verdicts (``ok`` rows; in the
``no_answer_as="loss"`` sensitivity view also ``no_answer`` and ``invalid``
rows, as losses): ``win_rate = wins / n`` etc., ``net_win = win - loss`` and
``score = win + tie / 2`` (so ``net_win = 2 * score - 1``). Replicates and
orders of one task are correlated, so the task is the cluster:

* ``<name>_se`` is the cluster-robust SE of the ratio: CR2, the bias-reduced
  linearisation of Bell & McCaffrey (2002), for the default ``"cr2_*"`` methods
  (closed form for this intercept-only regression, :mod:`evalstats.stats.robust`);
  CR1 (``sqrt(C / (C - 1) * sum_c (y_c - r n_c)^2) / n``, statsmodels' cluster SE of
  an intercept-only OLS) for ``"cluster_*"`` and the bootstrap methods. With equal task
  sizes CR2 = CR1.
* ``df`` is the Bell-McCaffrey (Satterthwaite, working independence) degrees of
  freedom of the CR2 variance (Bell & McCaffrey 2002; Pustejovsky & Tipton 2018,
  *JBES*): ``C - 1`` for equal task sizes, fewer for unequal ones (tasks of 1-30
  verdicts: 4.1 of 11). ``net_win_df`` is the df of net win and of the score (one
  statistic: ``net_win = 2 score - 1``) and of the net-win test in the ``"cr2_*"``
  methods: the same Satterthwaite df under an exchangeable working model at the ANOVA
  intra-task correlation of the net-win row values (Imbens & Kolesár 2016;
  :func:`~evalstats.stats.robust.bm_df_exchangeable`), ``C - 1`` for equal task sizes
  at every ICC, lower for unequal ones with a positive ICC (tasks of 1-30 verdicts, ICC
  0.3: 2.5 on average); other methods give it ``df``. ``n_eff_clusters`` is Kish's
  ``n^2 / sum n_c^2``; designs below 8 are flagged (``few_clusters``) and named in an
  :class:`EvalstatsWarning`.
* Intervals (``method``) and the net-win test come from one construction each, so
  ``net_win_p < 1 - confidence`` exactly when the net-win interval excludes 0:
  ``"cr2_wilson"`` (default): the score (Wilson) interval at the design-effect
  effective size ``p (1 - p) / SE_CR2^2`` scaled by ``(t_(n-1) / t_df)^2`` (Korn &
  Graubard 1998's construction with CR2 and the BM df) and the score test it inverts;
  ``"cr2_t"``: ``r +/- t_df SE_CR2`` and the t test; ``"cluster_wilson"`` and
  ``"cluster_t"``: the same with CR1 and ``C - 1`` df (the former defaults); the
  cluster bootstrap (``"bca"``, ``"percentile"``, ``"basic"``;
  :mod:`evalstats.stats.resample`; no net-win test); ``"wild_webb"``: the restricted
  wild cluster bootstrap t test (Webb weights; MacKinnon & Webb 2017) and its
  interval by test inversion (slow: about 20 bootstrap passes per interval end);
  ``"iid_wilson"``: the IID Wilson
  interval over verdicts, ignoring the clustering, only when asked.
* Where no spread is observed (a rate at 0 or 1, all wins, every task alike) the SE is
  0 and no design effect can be estimated: the interval and test use the largest
  design effect the task sizes allow (``n_eff`` = Kish's effective clusters), so they
  keep the clustering and a valid p-value instead of NaN or the IID interval. One
  cluster gives a NaN interval and p-value with the reason in ``ci_note``.
* ``sign_test_p`` is the exact binomial test of wins against losses. It treats
  verdicts as independent, so with replicated tasks it is anti-conservative; read
  ``net_win_p``.

Why ``cr2_wilson`` is the default: ``benchmarks/coverage.py --evals 4000`` (11 designs,
4,000 simulated evaluations each, Monte-Carlo SE of a coverage 0.0034; type-I error at a
true net win of 0 in the same design) gave, for the coverage of nominal 95 % intervals of
win / tie / loss / net win (= score) and the type-I error at 5 %::

    design                 cr2_wilson                 cr2_t
    15x6 ICC .3            .948 .957 .949 .947  .048  .944 .950 .939 .942  .052
    8x3 ICC .3             .949 .962 .960 .956  .040  .940 .943 .938 .948  .049
    12 tasks of 1-30       .944 .956 .941 .969  .035  .934 .955 .918 .962  .041
    10x4 ICC .8            .971 .949 .944 .961  .039  .949 .937 .924 .943  .056
    8x3 ICC .05            .946 .958 .962 .951  .053  .943 .949 .949 .946  .059
    8x3 net +.8            .979 .966 .985 .980  .048  .894 .996 1.00 .924  .059
    8x3 net -.8            .982 .972 .978 .978  .048  .997 .996 .894 .925  .057
    40x2 ICC .3            .955 .954 .953 .949  .052  .952 .946 .952 .949  .054
    blind 15x3, 2 orders   .955 .958 .956 .956  .048  .950 .951 .944 .950  .053
    8x3, skewed costs      .944 .965 .953 .951  .044  .938 .949 .933 .945  .050
    10x3, two judges       .953 .961 .948 .947  .051  .950 .958 .942 .944  .054

Every coverage is inside [0.93, 0.97] except at 8 tasks x 3 with net win +/-0.8 (0.966-0.985)
and the win rate at 10 x 4, ICC 0.8 (0.971): there 24 (or ~10 effective) verdicts are too
discrete for any valid equal-tailed interval to hold 0.95 closely (the IID Wilson interval on
IID data covers 0.970 at n = 24, p = 0.05), so the default stays on the safe side and
:func:`evalstats.stats.design_coverage` reports the simulated coverage of the design at hand
with a ``ci_note``. The net-win test's type-I error is at most 0.053 in every design; on
12 unequal tasks it is 0.035 with ``net_win_df`` (net win covers 0.969 there, inside the
band at its top), 0.064 with the rates' working-independence df (``cr2_t`` 0.075, the old
CR1 / ``C - 1`` default 0.138). Candidates for net win there, 20,000 evaluations each
(coverage / type-I): working-independence df .939 / .063; CR2 unbiased under the
exchangeable model with that df .942 / .061; CR2 and df both under the exchangeable model
(Pustejovsky & Tipton's working-model CR2) .973 / .029; CR3 with its own df .968 / .035
and CR3 with the CR2 df .959 / .044 (both widen equal-sized designs by ``C / (C - 1)``);
the exchangeable df, kept, .968 / .034; ``"wild_webb"`` .940 / .058 (2,000). The former
``(z / t_df)^2`` factor covered up to 0.986 at 8 x 3 (tie rate) and 0.981 at ICC 0.05;
``cr2_t`` undercovers skewed rates (0.89 at a win rate of 0.85) and rejects up to 7.5 %;
the cluster BCa covered 0.85-0.995.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from evalstats._schema import OUTCOMES, STATUSES
from evalstats._validate import check_columns, check_confidence, check_positive_int
from evalstats.errors import DataError
from evalstats.records import EvalstatsWarning
from evalstats.stats._cluster import by_columns, cr1_ratio, segment_sum
from evalstats.stats._missing_rule import apply_missing_rule
from evalstats.stats._proportion import PROPORTION_METHODS, ProportionCI, proportion_ci
from evalstats.stats.binomial import sign_test_p
from evalstats.stats.resample import (
    BOOTSTRAP_METHODS,
    as_generator,
    bootstrap_distribution,
    interval_from_distribution,
)
from evalstats.stats.robust import (
    anova_icc,
    bm_df_exchangeable,
    cr2_ratio,
    t_interval,
    t_test_p,
    wild_cluster_interval,
    wild_cluster_p,
    wild_weights,
    wilson_interval,
    wilson_test_p,
)

__all__ = [
    "DEFAULT_METHOD",
    "PROPORTION_METHODS",
    "RATE_NAMES",
    "WIN_RATE_METHODS",
    "ProportionCI",
    "position_bias",
    "proportion_ci",
    "rate_arrays",
    "win_rates",
]

RATE_NAMES = ("win_rate", "tie_rate", "loss_rate", "net_win", "score")
WIN_RATE_METHODS = (
    "cr2_wilson",
    "cr2_t",
    "cluster_wilson",
    "cluster_t",
    *BOOTSTRAP_METHODS,
    "wild_webb",
    "iid_wilson",
)
DEFAULT_METHOD = "cr2_wilson"
#: Designs with fewer effective clusters (Kish) than this are flagged and warned about.
FEW_CLUSTERS = 8.0
NO_ANSWER_VIEWS = ("exclude", "arm_aware", "loss", "win", "tie")
INVALID_VIEWS = ("exclude", "loss", "win", "tie")

# Row categories, in the order of the per-cluster count columns.
_CATEGORIES = ("loss", "tie", "win", "no_answer", "invalid", "error")
_LOSS, _TIE, _WIN, _NO_ANSWER, _INVALID, _ERROR = range(6)
# Parameter range of each rate (net win lives on [-1, 1]).
_RANGE_LOW = np.array([0.0, 0.0, 0.0, -1.0, 0.0])
_RANGE_HIGH = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
# Bootstrap distributions of a batch of groups, held at once to compute their intervals.
_BATCH_BYTES = 64 * 2**20


def win_rates(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "judge",
    cluster: str = "task_id",
    method: str = DEFAULT_METHOD,
    no_answer_as: str = "exclude",
    invalid_as: str | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
) -> pd.DataFrame:
    """Win/tie/loss rates, net win and score per group, with task-clustered SEs and CIs.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with at least ``status`` (ok / no_answer / invalid /
        error), ``outcome`` (loss / tie / win, NA unless ok), the ``cluster``
        column and the ``by`` columns.
    by : str, list of str or None
        Grouping columns (one output row per group); None gives one overall row.
    cluster : str
        Column identifying the unit of independence (the task).
    method : {"cr2_wilson", "cr2_t", "cluster_wilson", "cluster_t", "bca", "percentile", \
"basic", "wild_webb", "iid_wilson"}
        Interval (and net-win test) construction; see the module docstring. The
        default, CR2 with the Bell-McCaffrey df in a design-effect Wilson interval, was
        chosen by the coverage battery there.
    no_answer_as : {"exclude", "arm_aware", "loss", "win", "tie"}, default "exclude"
        Over-budget pairs (``no_answer``). ``"exclude"``: rates are over ``ok`` verdicts.
        ``"arm_aware"``: WITH loses a pair where only WITH went over budget, wins where
        only WITHOUT did, ties where both did (``over_budget_arm``). ``"loss"`` / ``"win"``
        / ``"tie"``: every such pair counts as that (worst / best case: see
        :func:`~evalstats.stats.missing_bounds`). ``error`` rows (failed judge calls) are
        never counted, only reported.
    invalid_as : {"exclude", "loss", "win", "tie"}, optional
        Unreadable judge output (``invalid``), never a loss unless asked. Default
        ``"exclude"``, except that ``no_answer_as="loss"`` alone keeps the sensitivity view
        of earlier versions (both kinds of missing answer as losses).
    n_resamples : int
        Bootstrap resamples (bootstrap and wild bootstrap methods only).
    confidence : float
        Confidence level of the intervals.
    rng : Generator, int or None
        Random source or seed (bootstrap methods only).

    Returns
    -------
    DataFrame
        One row per group: the ``by`` columns; ``n`` (verdicts in the
        denominator), ``n_pairs`` (distinct pairs, ``(cluster, replicate)``, among
        them: ``n`` when each pair is judged once, ``n / 2`` for a rubric judged in
        both orders; without a ``replicate`` column each verdict counts as a pair),
        ``n_clusters`` (clusters with at least one of them),
        ``wins``, ``ties``, ``losses`` (ok verdicts), ``no_answer``,
        ``invalid``, ``error``; for each of ``win_rate``, ``tie_rate``,
        ``loss_rate``, ``net_win`` (win - loss) and ``score`` (win + tie/2):
        the value, ``<name>_se`` (CR2, or CR1 for the ``cluster_*`` and bootstrap
        methods), ``<name>_ci_low``, ``<name>_ci_high``; ``sign_test_p`` (exact
        binomial test of wins vs losses, ignoring clustering), ``net_win_p`` (the
        test of net win = 0 that the net-win interval inverts; NaN for the bootstrap
        methods), ``df`` (Bell-McCaffrey df, or C - 1), ``net_win_df`` (the df of net
        win, the score and ``net_win_p``: under the exchangeable working model for the
        ``"cr2_*"`` methods, else ``df``), ``n_eff_clusters`` (Kish),
        ``few_clusters`` (fewer than 8 effective clusters), ``ci_note`` (why an
        interval is missing or what it ignores; empty otherwise), and ``method``,
        ``confidence``, ``no_answer_as``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.winrates import win_rates
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b", "c", "c"],
    ...     "judge": "j1",
    ...     "status": ["ok", "ok", "ok", "ok", "ok", "no_answer"],
    ...     "outcome": ["win", "tie", "win", "loss", "win", None],
    ... })
    >>> res = win_rates(frame)
    >>> res[["judge", "n", "n_clusters", "wins", "win_rate", "no_answer"]]
      judge  n  n_clusters  wins  win_rate  no_answer
    0    j1  5           3     3       0.6          1
    >>> float(win_rates(frame, no_answer_as="loss")["loss_rate"].iloc[0])
    0.3333333333333333
    """
    by_cols = by_columns(by)
    if method not in WIN_RATE_METHODS:
        raise ValueError(f"method must be one of {WIN_RATE_METHODS}, got {method!r}")
    if no_answer_as not in NO_ANSWER_VIEWS:
        raise ValueError(f"no_answer_as must be one of {NO_ANSWER_VIEWS}, got {no_answer_as!r}")
    if invalid_as is None:
        invalid_as = "loss" if no_answer_as == "loss" else "exclude"
    if invalid_as not in INVALID_VIEWS:
        raise ValueError(f"invalid_as must be one of {INVALID_VIEWS}, got {invalid_as!r}")
    imputed = no_answer_as != "exclude" or invalid_as != "exclude"
    if imputed:
        # Rewritten rows become ok verdicts; ``imputed_from`` keeps what they were.
        frame = apply_missing_rule(frame, no_answer_as=no_answer_as, invalid_as=invalid_as)
    confidence = check_confidence(confidence)
    if method in BOOTSTRAP_METHODS:
        n_resamples = check_positive_int(n_resamples, "n_resamples")
    category = _row_categories(frame, by_cols, cluster)
    groups, gid, counts, cell_of_row = _cluster_counts(frame, by_cols, cluster, category)

    wins, ties, losses_view = counts[:, _WIN], counts[:, _TIE], counts[:, _LOSS]
    n_groups = len(groups)
    res = rate_arrays(
        wins,
        ties,
        losses_view,
        gid,
        n_groups,
        method=method,
        confidence=confidence,
        n_resamples=n_resamples,
        rng=rng,
    )
    total = segment_sum(counts, gid, n_groups)
    l_tot = segment_sum(losses_view[:, None], gid, n_groups)[:, 0]

    data: dict[str, object] = {c: groups[c] for c in by_cols}
    data["n"] = res["n"].astype(np.int64)
    data["n_pairs"] = _pair_counts(frame, category, cell_of_row, gid, n_groups)
    data["n_clusters"] = res["n_clusters"].astype(np.int64)
    for name, col in (
        ("wins", _WIN),
        ("ties", _TIE),
        ("losses", _LOSS),
        ("no_answer", _NO_ANSWER),
        ("invalid", _INVALID),
        ("error", _ERROR),
    ):
        data[name] = total[:, col].astype(np.int64)
    if imputed:  # the missing answers the rule counted are still reported as missing
        for name in ("no_answer", "invalid"):
            hit = (frame["imputed_from"] == name).fillna(False).to_numpy(dtype=bool)
            rewritten = np.bincount(gid[cell_of_row[hit]], minlength=n_groups)
            data[name] = rewritten + total[:, _STATUS_COL[name]].astype(np.int64)
    for j, name in enumerate(RATE_NAMES):
        data[name] = res["est"][:, j]
        data[f"{name}_se"] = res["se"][:, j]
        data[f"{name}_ci_low"] = res["low"][:, j]
        data[f"{name}_ci_high"] = res["high"][:, j]
    data["sign_test_p"] = sign_test_p(total[:, _WIN], l_tot)
    data["net_win_p"] = res["net_win_p"]
    data["df"] = res["df"]
    data["net_win_df"] = res["net_win_df"]
    data["n_eff_clusters"] = res["n_eff_clusters"]
    data["few_clusters"] = res["few_clusters"]
    data["ci_note"] = res["ci_note"]
    data["method"] = np.full(n_groups, method, dtype=object)
    data["confidence"] = np.full(n_groups, confidence)
    data["no_answer_as"] = np.full(n_groups, no_answer_as, dtype=object)
    data["invalid_as"] = np.full(n_groups, invalid_as, dtype=object)
    out = pd.DataFrame(data, index=pd.RangeIndex(n_groups))
    _warn_few_clusters(out, by_cols)
    return out


def _warn_few_clusters(out: pd.DataFrame, by_cols: list[str]) -> None:
    # One-cluster groups (e.g. per-task rows) carry their reason in ci_note instead.
    few = out["few_clusters"].to_numpy(bool) & (out["n_clusters"].to_numpy() > 1)
    if not few.any():
        return
    if by_cols:
        names = [
            ", ".join(f"{c}={out[c].iloc[i]}" for c in by_cols) for i in np.flatnonzero(few)[:5]
        ]
        more = f" and {int(few.sum()) - 5} more" if few.sum() > 5 else ""
        where = "; ".join(names) + more
    else:
        where = "the whole frame"
    warnings.warn(
        f"fewer than {FEW_CLUSTERS:g} effective clusters (Kish) in {where}: "
        "cluster-robust intervals rest on few tasks (see the df and n_eff_clusters columns)",
        EvalstatsWarning,
        stacklevel=3,
    )


def rate_arrays(
    wins: np.ndarray,
    ties: np.ndarray,
    losses: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    method: str = DEFAULT_METHOD,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | int | None = None,
    net_win_test: bool = True,
    also: Sequence[str] = (),
) -> dict[str, Any]:
    """The five rates with SEs, intervals, df and the net-win test from per-cluster counts.

    The array core of :func:`win_rates`: ``wins``, ``ties``, ``losses`` are the counted
    verdicts of each (group, cluster) cell and ``gid`` its group; many evaluations are
    computed at once by giving each its own group (as the coverage battery does).
    ``net_win_test=False`` leaves ``net_win_p`` NaN: a simulation that needs only the
    intervals (or only whether the net win's interval excludes 0, which is exactly when
    the closed-form methods' ``net_win_p < 1 - confidence``) skips the p-value's root
    search, most of the cost of a large call. ``also`` names more bootstrap methods
    (``method`` being one) whose intervals come from the same resamples as ``method``'s:
    a comparison of bootstrap intervals (the coverage study) then pays for one
    distribution, and compares them on common random numbers.

    Returns
    -------
    dict of ndarray
        ``est``, ``se``, ``low``, ``high`` (groups x the five rates), ``net_win_p``,
        ``df`` (the rates'), ``net_win_df`` (net win's and the score's), ``net_win_icc``
        (the ANOVA ICC of the net-win rows it is computed at; NaN outside ``"cr2_*"``),
        ``n_eff_clusters``, ``few_clusters``, ``ci_note``, ``n``, ``n_clusters``; with
        ``also``, ``also``: ``{method: (low, high)}``.

    Examples
    --------
    >>> import numpy as np
    >>> from evalstats.stats.winrates import rate_arrays
    >>> r = rate_arrays(np.array([2, 1, 3, 0]), np.array([1, 1, 0, 1]), np.array([0, 1, 0, 2]),
    ...                 np.zeros(4, dtype=int), 1)
    >>> r["est"][0].round(3).tolist()  # win, tie, loss, net win, score
    [0.5, 0.25, 0.25, 0.25, 0.625]
    >>> round(float(r["df"][0]), 3), bool(r["few_clusters"][0])
    (3.0, True)
    """
    if method not in WIN_RATE_METHODS:
        raise ValueError(f"method must be one of {WIN_RATE_METHODS}, got {method!r}")
    also = tuple(also)
    if also and not set((method, *also)) <= set(BOOTSTRAP_METHODS):
        raise ValueError(f"also: bootstrap methods ({BOOTSTRAP_METHODS}) beside one, got {also}")
    extra: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    wins, ties, losses = (np.asarray(v, dtype=np.float64) for v in (wins, ties, losses))
    gid = np.asarray(gid, dtype=np.int64)
    denom = wins + ties + losses
    numerators = np.stack([wins, ties, losses, wins - losses, wins + 0.5 * ties], axis=1)
    used = denom > 0  # clusters with no counted verdict carry no information on a rate
    y, m, g = numerators[used], denom[used], gid[used]
    est, se2, df2, n_clusters, n, kish = cr2_ratio(y, m, g, n_groups)
    # Row-level variance of each statistic (0/1 rates: p(1-p); score: 0, 1/2, 1 values).
    row_var = est * (1.0 - est)
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = segment_sum((wins + 0.25 * ties)[used, None], g, n_groups)[:, 0]
        row_var[:, 4] = np.maximum(sq / n - est[:, 4] ** 2, 0.0)
        row_var[:, 3] = 4.0 * row_var[:, 4]
    if method in ("cluster_t", "cluster_wilson", "wild_webb", *BOOTSTRAP_METHODS):
        _, se, _, _ = cr1_ratio(y, m, g, n_groups)
        df = np.where(n_clusters > 1, n_clusters - 1.0, np.nan)
    elif method == "iid_wilson":
        se = np.sqrt(row_var / n[:, None])
        df = np.where(n > 1, np.inf, np.nan)
    else:
        se, df = se2, df2
    if method in ("cr2_wilson", "cr2_t"):
        # Net win (and score, the same statistic) gets the Satterthwaite df under an
        # exchangeable working model at the ICC of its own row values: with unequal task
        # sizes the working-independence df let the net-win test reject 6.4 % at 5 %
        # (benchmarks/coverage.py); equal sizes keep C - 1 whatever the ICC.
        icc = anova_icc(y[:, 4], (wins + 0.25 * ties)[used], m, g, n_groups)
        net_df = bm_df_exchangeable(m, icc, g, n_groups)
    else:
        icc, net_df = np.full(n_groups, np.nan), df
    dfs = np.repeat(df[:, None], len(RATE_NAMES), axis=1)
    dfs[:, 3:] = net_df[:, None]
    # Boundary size where no spread is observed: Kish's effective clusters (the largest
    # design effect the cluster sizes allow); the verdicts themselves for the IID interval.
    boundary_n = n if method == "iid_wilson" else kish
    if method in ("cr2_wilson", "cluster_wilson", "iid_wilson"):
        low, high, p_net = _score_construction(
            est, se, n, dfs, boundary_n, row_var, confidence, net_win_test
        )
    elif method in ("cr2_t", "cluster_t"):
        low, high = t_interval(est, se, dfs, confidence)
        low = np.clip(low, _RANGE_LOW, _RANGE_HIGH)
        high = np.clip(high, _RANGE_LOW, _RANGE_HIGH)
        p_net = t_test_p(est[:, 3], se[:, 3], net_df) if net_win_test else np.full(n_groups, np.nan)
        # No spread observed (a rate at 0 or 1, or every task alike): the t interval has
        # zero width, so take the boundary score construction, which keeps the df.
        flat = se <= 0
        if flat.any():
            b_low, b_high, b_p = _score_construction(
                est, se, n, dfs, kish, row_var, confidence, net_win_test
            )
            low, high = np.where(flat, b_low, low), np.where(flat, b_high, high)
            p_net = np.where(flat[:, 3], b_p, p_net)
    elif method == "wild_webb":
        gen = as_generator(rng)
        width = int(np.bincount(g, minlength=n_groups).max(initial=1))
        v = wild_weights(width, n_resamples, gen, kind="webb")
        low = np.full_like(est, np.nan)
        high = np.full_like(est, np.nan)
        for j in range(len(RATE_NAMES)):  # five statistics, each vectorised over groups
            low[:, j], high[:, j] = wild_cluster_interval(
                y[:, j],
                m,
                g,
                n_groups,
                confidence=confidence,
                weights=v,
                bounds=(_RANGE_LOW[j], _RANGE_HIGH[j]),
            )
        p_net = wild_cluster_p(y[:, 3], m, g, n_groups, 0.0, v)
        flat = ~(se > 0)
        if flat.any():
            b_low, b_high, b_p = _score_construction(est, se, n, dfs, kish, row_var, confidence)
            low, high = np.where(flat, b_low, low), np.where(flat, b_high, high)
            p_net = np.where(flat[:, 3], b_p, p_net)
    else:
        ends = _bootstrap_intervals(
            wins[used],
            ties[used],
            m,
            g,
            n_groups,
            methods=(method, *also),
            n_resamples=n_resamples,
            confidence=confidence,
            rng=as_generator(rng),
        )
        b_low, b_high, _ = _score_construction(est, se, n, dfs, kish, row_var, confidence, False)
        for name, (lo, hi) in ends.items():
            flat = ~(hi - lo > 0)
            ends[name] = (np.where(flat, b_low, lo), np.where(flat, b_high, hi))
        low, high = ends.pop(method)
        extra = ends
        p_net = np.full(n_groups, np.nan)  # a bootstrap interval is not a test here
    note = np.full(n_groups, "", dtype=object)
    if method in BOOTSTRAP_METHODS:
        note[:] = "net_win_p not computed for bootstrap intervals"
    note[n_clusters == 1] = (
        "one cluster: no between-task variation can be estimated "
        "(method='iid_wilson' gives an IID interval over verdicts)"
    )
    if method == "iid_wilson":
        note[:] = "IID interval over verdicts: ignores clustering by task"
    note[n == 0] = "no counted verdicts"
    one = (n_clusters <= 1) & (method != "iid_wilson")
    low[one], high[one], p_net[one] = np.nan, np.nan, np.nan
    for lo, hi in extra.values():
        lo[one], hi[one] = np.nan, np.nan
    out: dict[str, Any] = {
        "est": est,
        "se": np.where(one[:, None], np.nan, se),
        "low": low,
        "high": high,
        "net_win_p": p_net,
        "df": df,
        "net_win_df": np.where(one, np.nan, net_df),
        "net_win_icc": icc,
        "n_eff_clusters": kish,
        "few_clusters": ~(kish >= FEW_CLUSTERS),
        "ci_note": note,
        "n": n,
        "n_clusters": n_clusters,
    }
    if also:
        out["also"] = extra
    return out


def _score_construction(est, se, n, dfs, kish, row_var, confidence, net_win_test=True):
    """Score interval of each rate (net win from the score's) and the net-win test (NaN
    unless ``net_win_test``); ``dfs`` is (groups x rates), net win's and score's the same."""
    p = est.copy()
    s = se.copy()
    rv = row_var.copy()
    # Net win is 2 * score - 1: work on the score scale for it.
    p[:, 3], s[:, 3], rv[:, 3] = p[:, 4], s[:, 4], rv[:, 4]
    args = (s, n[:, None], dfs, kish[:, None])
    low, high = wilson_interval(p, *args, confidence, row_var=rv)
    low[:, 3], high[:, 3] = 2.0 * low[:, 3] - 1.0, 2.0 * high[:, 3] - 1.0
    if not net_win_test:
        return low, high, np.full(len(n), np.nan)
    p_net = wilson_test_p(p[:, 4], s[:, 4], n, dfs[:, 4], kish, 0.5, row_var=rv[:, 4])
    return low, high, p_net


def position_bias(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = "judge",
    cluster: str = "task_id",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Order effects of the blind rubric: P(first-shown wins) and order consistency.

    Only ``ok`` rows with a non-null ``order`` are used (the blind rubric). Both rates are
    ratio estimators over tasks with the inference of :func:`win_rates`' default
    (``"cr2_wilson"``): the CR2 SE (Bell & McCaffrey 2002), the Bell-McCaffrey df
    (Pustejovsky & Tipton 2018) and the design-effect Wilson interval, with the score test
    that interval inverts (:mod:`evalstats.stats.robust`), so ``first_shown_p <
    1 - confidence`` exactly when the interval excludes 0.5. Where no spread is observed
    the boundary construction keeps the clustering; one task gives NaN, with the reason
    in ``ci_note``.

    * ``first_shown_win_rate``: among decisive verdicts (win or loss), the
      share won by the answer shown first (WITH when ``order == "with_first"``,
      WITHOUT otherwise). 0.5 means no position bias. ``first_shown_p`` is the
      task-clustered test of 0.5 described above; ``first_shown_sign_test_p`` the exact
      binomial test of 0.5 over verdicts (ignoring clustering, anti-conservative with
      replicated tasks).
    * ``order_consistency``: among pairs (``cluster``, ``replicate``) judged
      in both orders, the share whose WITH-viewpoint outcome is the same in
      both (the first ok row of each order is used).

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with ``status``, ``outcome``, ``order``, ``replicate``,
        the ``cluster`` column and the ``by`` columns.
    by : str, list of str or None
        Grouping columns.
    cluster : str
        Unit of independence (the task).
    confidence : float
        Confidence level.

    Returns
    -------
    DataFrame
        One row per group: ``n_decisive``, ``first_shown_wins``,
        ``first_shown_win_rate`` with ``_se`` (CR2), ``_ci_low``, ``_ci_high``,
        ``first_shown_p``, ``first_shown_sign_test_p``, ``first_shown_df`` (Bell-McCaffrey);
        ``n_pairs_both_orders``, ``order_consistent``, ``order_consistency`` with ``_se``,
        ``_ci_low``, ``_ci_high``, ``order_consistency_df``; ``method`` and ``ci_note``.

    Examples
    --------
    >>> import pandas as pd
    >>> from evalstats.stats.winrates import position_bias
    >>> frame = pd.DataFrame({
    ...     "task_id": ["a", "a", "b", "b"], "replicate": 1, "judge": "j",
    ...     "order": ["with_first", "without_first"] * 2, "status": "ok",
    ...     "outcome": ["win", "loss", "win", "win"],
    ... })
    >>> res = position_bias(frame)
    >>> res[["n_decisive", "first_shown_wins", "n_pairs_both_orders", "order_consistent"]]
       n_decisive  first_shown_wins  n_pairs_both_orders  order_consistent
    0           4                 3                    2                 1
    >>> round(float(res["first_shown_df"].iloc[0]), 1), res["method"].iloc[0]
    (1.0, 'cr2_wilson')
    """
    by_cols = by_columns(by)
    confidence = check_confidence(confidence)
    check_columns(frame, [*by_cols, cluster, "order", "replicate"])
    category = _row_categories(frame, by_cols, cluster)
    order = frame["order"].astype("object")
    keep = (category <= _WIN) & order.notna().to_numpy()
    kept_order = order[keep]
    bad = ~kept_order.isin(["with_first", "without_first"]).to_numpy()
    if bad.any():
        raise DataError(f"unknown order value {kept_order[bad].iloc[0]!r}", field="order")
    groups, group_of_row = _row_groups(frame, by_cols)
    n_groups = len(groups)
    cl, _ = pd.factorize(frame[cluster], use_na_sentinel=False)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    n_cl = max(int(cl.max(initial=0)) + 1, 1)
    n_rep = max(int(rep.max(initial=0)) + 1, 1)
    idx = np.flatnonzero(keep)
    cat = category[idx]
    with_first = (kept_order == "with_first").to_numpy()
    # One (group, cluster) cell per task of a group; a pair adds the replicate.
    cell = group_of_row[idx].astype(np.int64) * n_cl + np.asarray(cl, dtype=np.int64)[idx]

    decisive = cat != _TIE
    first_won = np.where(with_first, cat == _WIN, cat == _LOSS) & decisive
    cells, cell_id = np.unique(cell, return_inverse=True)
    won = np.bincount(cell_id, weights=first_won.astype(np.float64), minlength=len(cells))
    dec = np.bincount(cell_id, weights=decisive.astype(np.float64), minlength=len(cells))
    first = rate_arrays(
        won, np.zeros_like(won), dec - won, cells // n_cl, n_groups, net_win_test=False
    )

    # Pairs judged in both orders: the first ok row of each order (rows in frame order).
    pair = cell * n_rep + np.asarray(rep, dtype=np.int64)[idx]
    pairs, pair_id = np.unique(pair, return_inverse=True)
    _, first_row = np.unique(pair_id * 2 + with_first, return_index=True)
    shown = np.full((len(pairs), 2), -1, dtype=np.int64)
    shown[pair_id[first_row], with_first[first_row].astype(np.int64)] = cat[first_row]
    both = (shown >= 0).all(axis=1)
    same = both & (shown[:, 0] == shown[:, 1])
    pair_cells, pair_cell = np.unique(pairs[both] // n_rep, return_inverse=True)
    n_both = np.bincount(pair_cell, minlength=len(pair_cells)).astype(np.float64)
    n_same = np.bincount(
        pair_cell, weights=same[both].astype(np.float64), minlength=len(pair_cells)
    )
    cons = rate_arrays(
        n_same,
        np.zeros_like(n_same),
        n_both - n_same,
        pair_cells // n_cl,
        n_groups,
        net_win_test=False,
    )

    first_gid, cons_gid = cells // n_cl, pair_cells // n_cl
    wins = np.bincount(first_gid, weights=won, minlength=n_groups).astype(np.int64)
    consistent = np.bincount(cons_gid, weights=n_same, minlength=n_groups).astype(np.int64)
    out = groups.copy()
    out["n_decisive"] = first["n"].astype(np.int64)
    out["first_shown_wins"] = wins
    _put_rate(out, "first_shown_win_rate", first)
    # The score test of 0.5 that the rate's interval inverts (its df, the rates' one).
    est = first["est"][:, 0]
    out["first_shown_p"] = wilson_test_p(
        est, first["se"][:, 0], first["n"], first["df"], first["n_eff_clusters"], 0.5
    )
    out["first_shown_sign_test_p"] = sign_test_p(wins, first["n"] - wins)
    out["first_shown_df"] = first["df"]
    out["n_pairs_both_orders"] = cons["n"].astype(np.int64)
    out["order_consistent"] = consistent
    _put_rate(out, "order_consistency", cons)
    out["order_consistency_df"] = cons["df"]
    out["method"] = DEFAULT_METHOD
    notes = [
        _order_note("first_shown_win_rate", first, "no decisive verdict"),
        _order_note("order_consistency", cons, "no pair judged in both orders"),
    ]
    out["ci_note"] = ["; ".join(n for n in row if n) for row in zip(*notes, strict=True)]
    return out


def _order_note(name: str, res: dict[str, np.ndarray], empty: str) -> np.ndarray:
    note = np.full(len(res["n"]), "", dtype=object)
    note[res["n_clusters"] == 1] = f"{name}: one task, no between-task variation to estimate"
    note[res["n"] == 0] = f"{name}: {empty}"
    return note


def _put_rate(out: pd.DataFrame, name: str, res: dict[str, np.ndarray]) -> None:
    """The win-rate column of :func:`rate_arrays` as ``name`` with its SE and interval."""
    out[name] = res["est"][:, 0]
    out[f"{name}_se"] = res["se"][:, 0]
    out[f"{name}_ci_low"] = res["low"][:, 0]
    out[f"{name}_ci_high"] = res["high"][:, 0]


# --------------------------------------------------------------------------- cores


def _rates_from_sums(s: np.ndarray) -> np.ndarray:
    w, t, n = s[..., 0], s[..., 1], s[..., 2]
    loss = n - w - t
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.stack([w / n, t / n, loss / n, (w - loss) / n, (w + 0.5 * t) / n], axis=-1)


def _bootstrap_intervals(
    wins: np.ndarray,
    ties: np.ndarray,
    denom: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
    *,
    methods: Sequence[str],
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Interval ends (groups x rates) of each bootstrap method in ``methods``, all from
    one bootstrap distribution per group (the same resamples for every method)."""
    ends = {}
    for method in methods:
        low = np.full((n_groups, len(RATE_NAMES)), np.nan)
        ends[method] = (low, np.full_like(low, np.nan))
    stats = np.stack([wins, ties, denom], axis=1).astype(np.float64)
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(n_groups + 1))
    sizes = np.diff(bounds)
    todo = np.flatnonzero(sizes >= 2)
    if not todo.size:
        return ends
    # The draws are made group after group (the generator's stream, so the numbers, do not
    # depend on the batching); the intervals of a batch of groups are computed at once.
    width = int(sizes.max())
    per_group = 8 * len(RATE_NAMES) * (n_resamples + width)
    step = max(1, _BATCH_BYTES // per_group)
    for start in range(0, todo.size, step):
        batch = todo[start : start + step]
        theta_b = np.empty((batch.size, n_resamples, len(RATE_NAMES)))
        theta_hat = np.empty((batch.size, len(RATE_NAMES)))
        jack = np.full((batch.size, width, len(RATE_NAMES)), np.nan) if "bca" in methods else None
        for k, g in enumerate(batch):
            cs = stats[order[bounds[g] : bounds[g + 1]]]
            theta_hat[k] = _rates_from_sums(cs.sum(axis=0))
            theta_b[k] = bootstrap_distribution(cs, _rates_from_sums, n_resamples, rng)
            if jack is not None:
                jack[k, : len(cs)] = _rates_from_sums(cs.sum(axis=0) - cs)
        if len(ends) > 1:  # one sort serves every method's quantiles
            theta_b.sort(axis=1)
        for method, (low, high) in ends.items():
            lo, hi = interval_from_distribution(
                theta_b, theta_hat, confidence, method, jack, presorted=len(ends) > 1
            )
            low[batch] = np.clip(lo, _RANGE_LOW, _RANGE_HIGH)
            high[batch] = np.clip(hi, _RANGE_LOW, _RANGE_HIGH)
    return ends


# --------------------------------------------------------------------------- input handling


def _codes(series: pd.Series, values: tuple[str, ...], field: str) -> np.ndarray:
    """Integer codes of ``values`` (-1 for missing); unknown values raise DataError."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) and tuple(dtype.categories) == values:
        return series.cat.codes.to_numpy(np.int64)  # the schema's dtype: no re-encoding
    codes = pd.Index(list(values)).get_indexer(series.astype(object)).astype(np.int64)
    unknown = (codes < 0) & series.notna().to_numpy()
    if unknown.any():
        pos = int(np.flatnonzero(unknown)[0])
        raise DataError(
            f"unknown {field} value {series.iloc[pos]!r} (expected one of {list(values)})",
            line=pos,
            field=field,
        )
    return codes


def _row_categories(frame: pd.DataFrame, by_cols: list[str], cluster: str) -> np.ndarray:
    """Category code of each row: loss, tie, win (ok rows), no_answer, invalid, error."""
    check_columns(frame, [*by_cols, cluster, "status", "outcome"])
    if frame[cluster].isna().any():
        pos = int(np.flatnonzero(frame[cluster].isna().to_numpy())[0])
        raise DataError("missing cluster id", line=pos, field=cluster)
    status = _codes(frame["status"], STATUSES, "status")
    if (status < 0).any():
        pos = int(np.flatnonzero(status < 0)[0])
        raise DataError("missing status", line=pos, field="status")
    outcome = _codes(frame["outcome"], OUTCOMES, "outcome")
    ok = status == STATUSES.index("ok")
    if (ok & (outcome < 0)).any():
        pos = int(np.flatnonzero(ok & (outcome < 0))[0])
        raise DataError("status is ok but outcome is missing", line=pos, field="outcome")
    # OUTCOMES is (loss, tie, win) = codes 0, 1, 2; other statuses follow.
    status_cat = np.array([-1, _NO_ANSWER, _INVALID, _ERROR])[status]
    return np.where(ok, outcome, status_cat)


_STATUS_COL = {"no_answer": _NO_ANSWER, "invalid": _INVALID}


def _cluster_counts(
    frame: pd.DataFrame, by_cols: list[str], cluster: str, category: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Per (group, cluster) counts of the six row categories.

    Returns the group table (sorted by the ``by`` columns), the group id of
    each (group, cluster) cell, the count matrix (rows = cells, columns =
    _CATEGORIES) and the cell of each row.
    """
    groups, group_of_row = _row_groups(frame, by_cols)
    k, u = pd.factorize(frame[cluster], sort=True, use_na_sentinel=False)
    n_cluster_ids = max(len(u), 1)
    key = group_of_row * n_cluster_ids + np.asarray(k, dtype=np.int64)
    cells, cell_of_row = np.unique(key, return_inverse=True)
    cell_of_row = cell_of_row.reshape(-1).astype(np.int64)
    counts = np.bincount(cell_of_row * 6 + category, minlength=len(cells) * 6).reshape(-1, 6)
    return groups, (cells // n_cluster_ids).astype(np.int64), counts, cell_of_row


def _row_groups(frame: pd.DataFrame, by_cols: list[str]) -> tuple[pd.DataFrame, np.ndarray]:
    """The group table (sorted by the ``by`` columns, missing values last) and each row's
    group id. Keys are factorised once and combined into integers, which is several times
    faster than a pandas groupby on small frames."""
    if not by_cols:
        return pd.DataFrame(index=pd.RangeIndex(1)), np.zeros(len(frame), dtype=np.int64)
    codes, uniques = [], []
    for col in by_cols:
        k, u = pd.factorize(frame[col], sort=True, use_na_sentinel=False)
        codes.append(np.asarray(k, dtype=np.int64))
        uniques.append(u)
    sizes = [max(len(u), 1) for u in uniques]
    group_keys, group_of_row = np.unique(np.ravel_multi_index(codes, sizes), return_inverse=True)
    parts = np.unravel_index(group_keys, sizes)
    groups = pd.DataFrame(
        {col: pd.Series(uniques[j].take(parts[j])) for j, col in enumerate(by_cols)}
    )
    return groups, group_of_row.reshape(-1).astype(np.int64)


def _pair_counts(
    frame: pd.DataFrame,
    category: np.ndarray,
    cell_of_row: np.ndarray,
    gid: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """Distinct pairs, (cluster, ``replicate``), among the counted verdicts of each group.

    A pair judged in both orders of the blind rubric is two verdicts but one pair. Without a
    ``replicate`` column every counted verdict is taken as a pair of its own.
    """
    counted = category <= _WIN
    if "replicate" not in frame.columns:
        return np.bincount(gid[cell_of_row[counted]], minlength=n_groups).astype(np.int64)
    rep, _ = pd.factorize(frame["replicate"], use_na_sentinel=False)
    rep = np.asarray(rep, dtype=np.int64)
    # A (group, cluster) cell and a replicate code name one pair of one group.
    key = cell_of_row[counted] * (int(rep.max(initial=0)) + 1) + rep[counted]
    cells = np.unique(key) // (int(rep.max(initial=0)) + 1)
    return np.bincount(gid[cells], minlength=n_groups).astype(np.int64)
