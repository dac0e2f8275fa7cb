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
and the win rate at 10 x 4, ICC 0.8 (0.971; exact, all 1,961,256 evaluations, .9678 .9540
.9442 .9596: in the band, the 0.971 is Monte-Carlo error): at 8 x 3, 24 verdicts are too
discrete for any valid equal-tailed interval to hold 0.95 closely (the IID Wilson interval on
IID data covers 0.970 at n = 24, p = 0.05), so the default stays on the safe side and
:func:`evalstats.stats.design_coverage` reports the simulated coverage of the design at hand
with a ``ci_note``. At 8 x 3, net win +0.8, the exact coverage (all 24,310 evaluations of the
design with their probabilities, ``benchmarks/coverage_exact_rates.py``; 40,000 simulated:
.976 .968 .982 .976) is .977 .968 .982 .976, and every miss is on one side: all 24 verdicts
are wins with probability 0.035 (no tie 0.093, no loss 0.327), above 0.025, so an interval
with at most 0.025 error on that side cannot exclude the truth at that most extreme outcome,
nor (its ends monotone in the evidence) at any other: it covers at least 0.975. The default
misses .023 .032 .018 .024 on the other side. The exact test that knows the true
distribution and orders evaluations by the estimate covers .985 .989 .988 .978 (its mid-p
version, not a valid test, .950 .964 .988 .943). Variants, exact (coverage at
+0.8; type-I at 8 x 3, ICC .3): no Korn-Graubard factor .967 .958 .964 .966, type-I .076
(loss .911 at 8 x 3 ICC .3); the IID size where no spread is seen, win .941 but .874 at ICC
0.8; the IID df ``A - 1`` for ``n - 1`` in the factor .970 .967 .964 .977 (tie .973 at 8 x 3
ICC .3); Jeffreys or Agresti-Coull at ``n_eff`` .977-.985; one-sided at level alpha where the
design cannot reach the other tail .945 .958 .921 .953 (loss .921; tie .916 at a win rate of
0.93). None keeps every design in the band: reaching 0.97 here takes one tail at 0.03 or more.
The net-win test's type-I error is at most 0.053 in every design; on
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

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._tidy import ResultFrame, refuse_pooled_rubrics, stack_statistics, with_detail
from evalstats._validate import check_confidence, check_n_resamples
from evalstats.records import EvalstatsWarning
from evalstats.stats._cluster import by_columns, segment_sum
from evalstats.stats._missing_rule import apply_missing_rule
from evalstats.stats._proportion import PROPORTION_METHODS, ProportionCI, proportion_ci
from evalstats.stats._rate_core import (
    DEFAULT_METHOD,
    FEW_CLUSTERS,
    RATE_NAMES,
    WIN_RATE_METHODS,
    rate_arrays,
)
from evalstats.stats._verdicts import (
    ERROR,
    INVALID,
    LOSS,
    NO_ANSWER,
    STATUS_COL,
    TIE,
    WIN,
    cluster_counts,
    pair_counts,
    row_categories,
)
from evalstats.stats.binomial import sign_test_p
from evalstats.stats.resample import BOOTSTRAP_METHODS

__all__ = [
    "BOOTSTRAP_METHODS",
    "DEFAULT_METHOD",
    "DEFAULT_BY",
    "PROPORTION_METHODS",
    "RATE_NAMES",
    "WIN_RATE_METHODS",
    "ProportionCI",
    "proportion_ci",
    "rate_arrays",
    "sign_test_p",
    "win_rates",
]

NO_ANSWER_VIEWS = ("exclude", "arm_aware", "loss", "win", "tie")
INVALID_VIEWS = ("exclude", "loss", "win", "tie")
#: The default grouping; ``rubric`` is left out only for a frame without that column.
DEFAULT_BY = ("rubric", "judge")


def win_rates(
    frame: pd.DataFrame,
    *,
    by: str | Sequence[str] | None = DEFAULT_BY,
    cluster: str = "task_id",
    method: str = DEFAULT_METHOD,
    no_answer_as: str = "exclude",
    invalid_as: str | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator | int | None = None,
    detail: bool = False,
) -> ResultFrame:
    """Win/tie/loss rates, net win and score per group, with task-clustered SEs and CIs.

    Parameters
    ----------
    frame : DataFrame
        Verdict frame with at least ``status`` (ok / no_answer / invalid /
        error), ``outcome`` (loss / tie / win, NA unless ok), the ``cluster``
        column and the ``by`` columns.
    by : str, list of str or None
        Grouping columns; None gives one overall group. The default
        ``("rubric", "judge")`` drops ``rubric`` only for a frame without that column. A
        frame with several rubrics and a ``by`` without ``rubric`` is refused
        (:class:`~evalstats.errors.DataError`): a three-way label and a blind pair-order
        verdict are different measurements, never one rate.
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

    detail : bool
        Also join the diagnostics (below) onto every row.

    Returns
    -------
    ResultFrame
        Long: one row per group and statistic (``win_rate``, ``tie_rate``,
        ``loss_rate``, ``net_win`` = win - loss, ``score`` = win + tie / 2): the ``by``
        columns, ``statistic``, ``estimate``, ``se`` (CR2, or CR1 for the ``cluster_*``
        and bootstrap methods), ``ci_low``, ``ci_high``, ``p_value`` (for ``net_win``
        and ``score``: the test of net win = 0 that the net-win interval inverts; NaN
        for the rates and for the bootstrap methods), ``df`` (the rates:
        Bell-McCaffrey df, or C - 1; net win and score: the df of the net-win test,
        under the exchangeable working model for the ``"cr2_*"`` methods), ``n``
        (verdicts in the denominator), ``n_tasks`` (clusters with at least one of
        them), ``method``, ``confidence`` and ``ci_note`` (why an interval is missing
        or what it ignores; empty otherwise).

        ``.diagnostics``, one row per group: the ``by`` columns, ``n``, ``n_pairs``
        (distinct pairs, ``(cluster, replicate)``: ``n`` when each pair is judged once,
        ``n / 2`` for a rubric judged in both orders; without a ``replicate`` column
        each verdict counts as a pair), ``n_clusters``, ``wins``, ``ties``, ``losses``
        (ok verdicts), ``no_answer``, ``invalid``, ``error``, ``sign_test_p`` (exact
        binomial test of wins vs losses, ignoring clustering: anti-conservative with
        replicated tasks), ``n_eff_clusters`` (Kish), ``few_clusters`` (fewer than 8
        effective clusters), ``no_answer_as``, ``invalid_as``.

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
    >>> res[["judge", "statistic", "estimate", "n", "n_tasks"]]
      judge  statistic  estimate  n  n_tasks
    0    j1   win_rate       0.6  5        3
    1    j1   tie_rate       0.2  5        3
    2    j1  loss_rate       0.2  5        3
    3    j1    net_win       0.4  5        3
    4    j1      score       0.7  5        3
    >>> res.diagnostics[["judge", "wins", "ties", "losses", "no_answer"]]
      judge  wins  ties  losses  no_answer
    0    j1     3     1       1          1
    >>> loss = win_rates(frame, no_answer_as="loss").set_index("statistic")
    >>> float(loss.loc["loss_rate", "estimate"])
    0.3333333333333333
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a DataFrame, got {type(frame).__name__}")
    by_cols = by_columns(by)
    if by is DEFAULT_BY and "rubric" not in frame.columns:
        by_cols = [c for c in by_cols if c != "rubric"]
    refuse_pooled_rubrics(frame, by_cols, "win_rates")
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
        n_resamples = check_n_resamples(n_resamples)
    category = row_categories(frame, by_cols, cluster)
    groups, gid, counts, cell_of_row = cluster_counts(frame, by_cols, cluster, category)

    wins, ties, losses_view = counts[:, WIN], counts[:, TIE], counts[:, LOSS]
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

    diag: dict[str, object] = {c: groups[c] for c in by_cols}
    diag["n"] = res["n"].astype(np.int64)
    diag["n_pairs"] = pair_counts(frame, category, cell_of_row, gid, n_groups)
    diag["n_clusters"] = res["n_clusters"].astype(np.int64)
    for name, col in (
        ("wins", WIN),
        ("ties", TIE),
        ("losses", LOSS),
        ("no_answer", NO_ANSWER),
        ("invalid", INVALID),
        ("error", ERROR),
    ):
        diag[name] = total[:, col].astype(np.int64)
    if imputed:  # the missing answers the rule counted are still reported as missing
        for name in ("no_answer", "invalid"):
            hit = (frame["imputed_from"] == name).fillna(False).to_numpy(dtype=bool)
            rewritten = np.bincount(gid[cell_of_row[hit]], minlength=n_groups)
            diag[name] = rewritten + total[:, STATUS_COL[name]].astype(np.int64)
    diag["sign_test_p"] = sign_test_p(total[:, WIN], l_tot)
    diag["n_eff_clusters"] = res["n_eff_clusters"]
    diag["few_clusters"] = res["few_clusters"]
    diag["no_answer_as"] = np.full(n_groups, no_answer_as, dtype=object)
    diag["invalid_as"] = np.full(n_groups, invalid_as, dtype=object)
    ci_note = res["ci_note"]
    if no_answer_as == "exclude" and "over_budget_arm" in frame.columns:
        arm_diag, ci_note = _unbalanced_no_answers(
            frame,
            gid[cell_of_row],
            groups[by_cols],
            ci_note,
            (res["low"][:, 3], res["high"][:, 3]),
            by=by,
            cluster=cluster,
            method=method,
            invalid_as=invalid_as,
            n_resamples=n_resamples,
            confidence=confidence,
            rng=rng,
        )
        diag.update(arm_diag)
    diagnostics = pd.DataFrame(diag, index=pd.RangeIndex(n_groups))
    shared = {
        "n": diag["n"],
        "n_tasks": diag["n_clusters"],
        "method": method,
        "confidence": confidence,
        "ci_note": ci_note,
    }
    no_test = np.full(n_groups, np.nan)
    statistics = [
        (
            name,
            {
                "estimate": res["est"][:, j],
                "se": res["se"][:, j],
                "ci_low": res["low"][:, j],
                "ci_high": res["high"][:, j],
                # net win and score are one statistic (net = 2 score - 1): one test, one df
                "p_value": res["net_win_p"] if j >= 3 else no_test,
                "df": res["net_win_df"] if j >= 3 else res["df"],
                **shared,
            },
        )
        for j, name in enumerate(RATE_NAMES)
    ]
    out = stack_statistics(groups[by_cols], statistics, diagnostics=diagnostics, extra=("ci_note",))
    _warn_few_clusters(diagnostics, by_cols)
    return with_detail(out) if detail else out


#: Two-sided exact binomial p-value (WITH-only vs WITHOUT-only no-answers, even split)
#: below which the no-answers count as unbalanced between the arms.
UNBALANCED_P = 0.05


def _unbalanced_no_answers(frame, row_gid, groups, ci_note, net_ci, **kwargs):
    """Per group: the no-answers by arm, whether they are unbalanced, and the arm-aware net
    win beside the default; a note appended to ``ci_note`` where they are unbalanced (exact
    binomial p below :data:`UNBALANCED_P`) or where placing them by arm changes the
    conclusion (the arm-aware net-win interval excludes 0 where the default does not, or
    the reverse, or the two estimates differ in sign): the no-answers are then correlated
    with the outcome as far as the data show it.

    Excluding over-budget pairs is unbiased only if the arms go over budget alike; when one
    arm does so far more often the excluded pairs are that arm's failures, and the
    intention-to-treat (arm-aware) count can disagree in sign.
    """
    n_groups = len(groups)
    arm = frame["over_budget_arm"].astype(object).to_numpy()
    na = (frame["status"].astype(object) == "no_answer").to_numpy()
    counts = {}
    for side in ("with", "without", "both"):
        hit = na & (arm == side)
        counts[side] = np.bincount(row_gid[hit], minlength=n_groups).astype(np.int64)
    one_sided = counts["with"] + counts["without"]
    low = np.minimum(counts["with"], counts["without"])
    # Exact two-sided binomial test of an even split, vectorised: 2 P(X <= min).
    p = np.minimum(1.0, 2.0 * stats.binom.cdf(low, one_sided, 0.5))
    p = np.where(one_sided > 0, p, 1.0)
    unbalanced = p < UNBALANCED_P
    out = {
        "no_answer_with": counts["with"],
        "no_answer_without": counts["without"],
        "no_answer_both": counts["both"],
        "no_answer_balance_p": p,
        "no_answer_unbalanced": unbalanced,
        "arm_aware_net_win": np.full(n_groups, np.nan),
        "arm_aware_ci_low": np.full(n_groups, np.nan),
        "arm_aware_ci_high": np.full(n_groups, np.nan),
    }
    if not (one_sided > 0).any():
        return out, ci_note
    aware = win_rates(frame, no_answer_as="arm_aware", **kwargs)
    aware = aware.loc[aware["statistic"] == "net_win"]
    by_cols = list(groups.columns)
    if by_cols:
        keyed = aware.set_index(by_cols)[["estimate", "ci_low", "ci_high"]]
        aware_rows = keyed.reindex(
            pd.MultiIndex.from_frame(groups) if len(by_cols) > 1 else pd.Index(groups[by_cols[0]])
        )
    else:
        aware_rows = aware[["estimate", "ci_low", "ci_high"]]
    est, lo, hi = (aware_rows[c].to_numpy(dtype=float) for c in ("estimate", "ci_low", "ci_high"))
    out.update(arm_aware_net_win=est, arm_aware_ci_low=lo, arm_aware_ci_high=hi)
    d_lo, d_hi = net_ci
    with np.errstate(invalid="ignore"):
        verdict = np.sign(np.where(d_lo > 0, 1, np.where(d_hi < 0, -1, 0)))
        aware_verdict = np.where(lo > 0, 1, np.where(hi < 0, -1, 0))
        changes = (one_sided > 0) & (
            (verdict != aware_verdict) | (np.sign(est) * np.sign(0.5 * (d_lo + d_hi)) < 0)
        )
    out["no_answer_changes_conclusion"] = changes
    flagged = (unbalanced | changes) & (one_sided > 0)
    note = np.asarray(ci_note, dtype=object).copy()
    for i in np.flatnonzero(flagged):  # the few flagged groups, to word their notes
        why = (
            f"unbalanced between arms (exact p = {p[i]:.2g})"
            if unbalanced[i]
            else "placed by arm, they change the conclusion"
        )
        text = (
            f"no-answers {why}: WITH alone over budget {counts['with'][i]}, WITHOUT alone "
            f"{counts['without'][i]}; excluding them favours the arm that failed more; "
            f"arm-aware net win {est[i]:+.3f} [{lo[i]:+.3f}, {hi[i]:+.3f}] "
            "(no_answer_as='arm_aware'; bounds: missing_bounds)"
        )
        note[i] = f"{note[i]}; {text}" if note[i] else text
    return out, note


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
