"""Inter-rater agreement: Cohen's (weighted) kappa, Scott's pi, Gwet's AC1/AC2, PABAK
(Brennan-Prediger), percent agreement, Fleiss' kappa and Krippendorff's alpha.

The seven coefficients are rows of one table, :data:`COEFFICIENTS`
(:mod:`evalstats.stats._agreement_table`): each names its numeric cores (two raters on a
contingency table, any number on a count matrix), its standard error, its test, its interval
methods, its result class and the oracle the tests match it against. The public functions
below are thin documented ``def``s over that table (real signatures and docstrings for
``help()``, Sphinx and IDEs); what they compute is their row, built by
:mod:`evalstats.stats._agreement_estimators`.

Conventions
-----------
* Weights are *agreement* weights (SAS / statsmodels / Gwet): ``"linear"`` is
  ``1 - |i-j|/(k-1)``, ``"quadratic"`` ``1 - (i-j)^2/(k-1)^2`` over the category order; a
  user matrix must be k x k, symmetric, with ones on the diagonal (1 = full credit).
* ``se`` is the non-null asymptotic SE used for the confidence interval; ``se0`` (Cohen,
  Fleiss) is the SE under H0 (no agreement beyond chance) used for ``z`` and ``p_value``.
  For the Gwet-family coefficients ``z``/``p_value`` are Wald statistics on ``se``.
* Intervals are Wald intervals ``estimate +/- q * se``: ``method="wald_z"`` (default) uses
  the normal quantile (as SAS), ``method="wald_t"`` a t(n-1) quantile (as Gwet's irrCAC).
  The upper end is truncated at 1, the largest value every coefficient here can take (as
  irrCAC does).
* Missing labels (NaN/None/NA) drop the pair (two raters) or the single rating (many raters).
* Input forms (every coefficient that takes ratings): two label vectors ``f(a, b)``, a
  units x raters matrix ``f(matrix)`` (rows = units, columns = raters, NaN = missing; the
  same orientation for every function, ``krippendorff_alpha`` included), or a long
  DataFrame ``f(df, unit="task", rater="judge", rating="label")``. Two raters use the
  two-rater (contingency-table) formulas; more raters Gwet's multi-rater formulas.
* Every result has ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``p_value`` (NaN where a
  coefficient has none), ``n`` (units used), ``method`` and ``confidence``; ``kappa`` /
  ``alpha`` remain as aliases of ``estimate``. ``.to_frame()`` is its tidy row.

The numeric cores live in :mod:`evalstats.stats._kappa` (vectorised over leading axes of
k x k tables, for the cluster bootstrap) and :mod:`evalstats.stats._multirater`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from evalstats._tidy import ResultFrame, tidy_frame
from evalstats._validate import check_confidence
from evalstats.stats import _agreement_input as _inp
from evalstats.stats._agreement_estimators import (
    Weights,
    check_level,
    check_method,
    counts_result,
    fleiss_result,
    krippendorff_result,
    table_result,
)
from evalstats.stats._agreement_results import (
    AgreementResult,
    CohenKappaResult,
    FleissKappaResult,
    KrippendorffAlphaResult,
)
from evalstats.stats._agreement_table import COEFFICIENTS

__all__ = [
    "COEFFICIENTS",
    "AgreementResult",
    "CohenKappaResult",
    "FleissKappaResult",
    "KrippendorffAlphaResult",
    "cohen_kappa",
    "cohen_kappa_table",
    "contingency_table",
    "fleiss_kappa",
    "gwet_ac1",
    "krippendorff_alpha",
    "pabak",
    "percent_agreement",
    "ratings_to_counts",
    "scott_pi",
    "two_rater_agreement",
]

IntervalMethod = Literal["wald_z", "wald_t"]


def _agreement(
    name: str,
    ratings: Any,
    b: Any,
    long: tuple[str | None, str | None, str | None],
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    method: str,
) -> Any:
    """The coefficient ``name`` of ratings in any input form: its table formulas for two
    raters, its count-matrix formulas for more."""
    spec = COEFFICIENTS[name]
    r = _inp.as_ratings(ratings, b, unit=long[0], rater=long[1], rating=long[2])
    if len(r.columns) < 2:
        raise ValueError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    confidence = check_confidence(confidence)
    method = check_method(method)
    if len(r.columns) == 2 and spec.pairs_by_table:
        table, cats, n_dropped = _inp.pair_table(*r.columns, categories)
        if table.sum() == 0:
            raise ValueError("no unit has labels from both raters (every pair has a missing label)")
        return table_result(spec, table, weights, cats, confidence, method, n_dropped)
    if spec.counts is None:
        raise ValueError(
            f"{name} compares two raters; got {len(r.columns)} (use fleiss_kappa, gwet_ac1, "
            "pabak or krippendorff_alpha for more)"
        )
    return counts_result(spec, r.columns, weights, categories, confidence, method)


# --------------------------------------------------------------------------- two raters


def contingency_table(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    categories: Sequence[Any] | None = None,
) -> pd.DataFrame:
    """Cross-tabulate two raters' labels (rows = rater 1), dropping pairs with a missing label.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        Two raters' labels in any of the three input forms (see :func:`cohen_kappa`).
    categories : sequence, optional
        Category set and order; categories nobody used keep their row and column.
        Default: the sorted distinct labels (a shared Categorical's own categories).

    Examples
    --------
    >>> contingency_table(["x", "y", "y"], ["x", "y", "x"]).to_numpy().tolist()
    [[1, 0], [1, 1]]
    """
    r = _inp.as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    if len(r.columns) != 2:
        raise ValueError(f"a contingency table needs two raters; got {len(r.columns)}")
    table, cats, _ = _inp.pair_table(*r.columns, categories)
    idx = pd.Index(cats, name="rater 1")
    return pd.DataFrame(table.astype(np.int64), index=idx, columns=pd.Index(cats, name="rater 2"))


def cohen_kappa_table(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
    categories: Sequence[Any] | None = None,
    n_dropped: int = 0,
) -> CohenKappaResult:
    """Cohen's (weighted) kappa from a k x k contingency table (rows = rater 1).

    Parameters
    ----------
    table : array-like or DataFrame, shape (k, k)
        Counts; rows and columns in the same category order.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights (see module docstring). None = unweighted kappa.
    confidence : float
        Confidence level of the interval.
    method : {"wald_z", "wald_t"}
        Quantile of the Wald interval: normal (SAS) or t(n-1) (Gwet's irrCAC).
    categories : sequence, optional
        Labels of the rows/columns (default: the DataFrame index, else 0..k-1).
    n_dropped : int
        Recorded in the result (pairs dropped upstream for missing labels).

    Returns
    -------
    CohenKappaResult

    Examples
    --------
    >>> res = cohen_kappa_table([[10, 4, 1, 0], [5, 10, 12, 2], [2, 4, 12, 5], [0, 2, 6, 13]])
    >>> round(res.kappa, 4), round(res.se, 4), round(res.ci_low, 3), round(res.ci_high, 4)
    (0.3449, 0.0724, 0.203, 0.4868)
    """
    if categories is None and isinstance(table, pd.DataFrame):
        categories = list(table.index)
    t = _inp.check_table(table)
    confidence = check_confidence(confidence)
    method = check_method(method)
    k = t.shape[0]
    cats = tuple(range(k)) if categories is None else tuple(categories)
    if len(cats) != k:
        raise ValueError(f"{len(cats)} categories given for a {k} x {k} table")
    spec = COEFFICIENTS["cohen_kappa"]
    return table_result(spec, t, weights, cats, confidence, method, n_dropped)  # type: ignore[return-value]


def cohen_kappa(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> CohenKappaResult:
    """Cohen's (weighted) kappa of two raters' labels, with non-null and H0 SEs.

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
        Pairs where either label is missing are dropped (``n`` is the number used,
        ``n_dropped`` the number dropped). Exactly two raters.
    weights : None, "linear", "quadratic" or (k, k) array
        Agreement weights over the category order (see module docstring).
    categories : sequence, optional
        Category set and order. Needed for weighted kappa when the label order is not
        the sort order, and to keep a category one rater never used (changes weighted
        kappa, AC1 and PABAK).
    confidence : float
        Confidence level of the Wald interval.
    method : {"wald_z", "wald_t"}
        Normal (default, SAS) or t(n-1) (Gwet) quantile for the interval.

    Returns
    -------
    CohenKappaResult
        ``estimate`` (alias ``kappa``) is nan (with a ``note``) when chance agreement is 1.

    Examples
    --------
    >>> res = cohen_kappa(["win", "tie", "tie", "loss", "win"], ["win", "tie", "loss", "loss", "win"])
    >>> round(res.estimate, 4), res.n
    (0.7059, 5)
    >>> import pandas as pd
    >>> long = pd.DataFrame({"task": [1, 1, 2, 2, 3, 3], "judge": ["x", "y"] * 3,
    ...                      "label": ["win", "win", "tie", "loss", "tie", "tie"]})
    >>> round(cohen_kappa(long, unit="task", rater="judge", rating="label").kappa, 4)
    0.5
    """
    return _agreement(
        "cohen_kappa", ratings, b, (unit, rater, rating), weights, categories, confidence, method
    )


def scott_pi(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """Scott's pi (chance from the pooled margins), with Gwet's SE.

    Two raters use the two-rater formulas on the contingency table. With three or more
    raters this is Fleiss' generalisation of Scott's pi, i.e. Fleiss' kappa (Gwet's SE),
    equal to :func:`fleiss_kappa`'s ``estimate``.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> round(scott_pi([1, 1, 2, 2], [1, 2, 2, 2]).estimate, 4)
    0.4667
    """
    return _agreement(
        "scott_pi", ratings, b, (unit, rater, rating), weights, categories, confidence, method
    )


def percent_agreement(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """(Weighted) percent agreement, with Gwet's SE.

    Two raters: the share of units on which they agree, SE ``sqrt((sum p w^2 - pa^2)/n)``.
    Three or more: the mean over units of the share of agreeing rater pairs, with Gwet's
    multi-rater SE (the standard error of the per-unit agreements).

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> percent_agreement([1, 1, 2, 2], [1, 2, 2, 2]).estimate
    0.75
    >>> round(percent_agreement([[1, 1, 1], [1, 2, 2], [2, 2, 2]]).estimate, 4)
    0.7778
    """
    return _agreement(
        "percent_agreement",
        ratings,
        b,
        (unit, rater, rating),
        weights,
        categories,
        confidence,
        method,
    )


def pabak(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """PABAK / Brennan-Prediger: ``(k * p_o - 1) / (k - 1)`` for k categories.

    With weights, Brennan-Prediger's weighted form ``(p_o - T/k^2) / (1 - T/k^2)``,
    ``T`` the sum of the weight matrix. ``k`` counts every category in ``categories``
    (default: those observed), used or not. Three or more raters use Gwet's multi-rater
    Brennan-Prediger coefficient (irrCAC ``bp``), ``p_o`` the multi-rater agreement. The
    result's ``coefficient`` (and tidy ``statistic``) is ``"brennan_prediger"``.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> pabak([1, 1, 2, 2], [1, 2, 2, 2]).estimate
    0.5
    """
    return _agreement(
        "pabak", ratings, b, (unit, rater, rating), weights, categories, confidence, method
    )


def gwet_ac1(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    weights: Weights = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> AgreementResult:
    """Gwet's AC1 (unweighted) / AC2 (weighted) with Gwet's SE.

    Two raters (``a``, ``b`` or two columns) use the two-rater formulas on the contingency
    table, dropping incomplete pairs; more raters use Gwet's multi-rater formulas, where a
    unit's missing ratings are simply absent.

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    weights, categories, confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> round(gwet_ac1([1, 1, 2, 2, 1], [1, 2, 2, 2, 1]).estimate, 4)
    0.6
    >>> round(gwet_ac1([[1, 1, 1], [2, 2, 1], [2, 2, 2], [1, 1, 2]]).estimate, 4)
    0.3333
    >>> import pandas as pd
    >>> long = pd.DataFrame({"task": [1, 1, 1, 2, 2, 2], "judge": ["x", "y", "z"] * 2,
    ...                      "label": ["win", "win", "win", "tie", "tie", "win"]})
    >>> round(gwet_ac1(long, unit="task", rater="judge", rating="label").estimate, 4)
    0.4
    """
    return _agreement(
        "gwet_ac1", ratings, b, (unit, rater, rating), weights, categories, confidence, method
    )


def two_rater_agreement(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> ResultFrame:
    """Every two-rater coefficient of a k x k table in one tidy frame.

    Rows (``statistic``): percent_agreement, cohen_kappa, scott_pi, gwet_ac1,
    brennan_prediger, krippendorff_alpha, in the tidy columns (``estimate``, ``se``,
    ``ci_low``, ``ci_high``, ``p_value``, ``df``, ``n``, ``n_tasks``, ``method``,
    ``confidence``). ``.diagnostics`` holds per row ``z``, ``se0`` (Cohen's),
    ``observed_agreement``, ``expected_agreement``, ``k``, ``weights`` and the rest. For
    Cohen's kappa ``z``/``p_value`` use the H0 SE; for the others they are Wald tests on
    ``se``.

    Examples
    --------
    >>> df = two_rater_agreement([[13, 0, 0], [0, 20, 7], [0, 4, 56]], method="wald_t")
    >>> df.set_index("statistic").loc["gwet_ac1", "estimate"].round(4)
    np.float64(0.8493)
    """
    t = _inp.check_table(table)
    confidence = check_confidence(confidence)
    method = check_method(method)
    cats = list(table.index) if isinstance(table, pd.DataFrame) else list(range(t.shape[0]))
    frames = [
        table_result(spec, t, weights, cats, confidence, method).to_frame()
        for spec in COEFFICIENTS.values()
        if spec.table is not None
    ]
    diagnostics = pd.concat([f.diagnostics for f in frames], ignore_index=True)
    return tidy_frame(pd.concat(frames, ignore_index=True), diagnostics=diagnostics)


# --------------------------------------------------------------------------- many raters


def ratings_to_counts(
    ratings: Any,
    categories: Sequence[Any] | None = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
) -> pd.DataFrame:
    """Ratings (units x raters, missing allowed, or a long frame) -> units x categories counts.

    Examples
    --------
    >>> ratings_to_counts([[1, 1, 2], [2, 2, None]]).to_numpy().tolist()
    [[2, 1], [0, 2]]
    """
    r = _inp.as_ratings(ratings, unit=unit, rater=rater, rating=rating)
    codes, cats = _inp.encode(r.columns, _inp.check_categories(categories))
    counts = _inp.counts_from_codes(codes, len(cats))
    if isinstance(ratings, pd.DataFrame) and unit is None:
        index = ratings.index
    else:
        index = None if r.units is None else pd.Index(r.units, name=unit)
    return pd.DataFrame(counts.astype(np.int64), index=index, columns=pd.Index(cats))


def fleiss_kappa(
    ratings: Any = None,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    counts: Any = None,
    categories: Sequence[Any] | None = None,
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> FleissKappaResult:
    """Fleiss' kappa of many raters (Gwet's non-null SE, Fleiss-Nee-Landis H0 test).

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    counts : array-like or DataFrame, shape (subjects, categories), optional
        Instead of ``ratings``: how many raters put each subject in each category (see
        :func:`ratings_to_counts`). Subjects may have different numbers of raters (Gwet's
        generalisation; the H0 quantities are then nan); subjects with no rating are
        ignored.
    categories : sequence, optional
        Category set and order of ``ratings`` (as in :func:`cohen_kappa`).
    confidence, method
        Level and quantile ("wald_z" or "wald_t" with n-1 df) of the interval on Gwet's SE.

    Returns
    -------
    FleissKappaResult
        ``estimate`` (alias ``kappa``); ``n`` (alias ``n_subjects``) subjects rated.

    Examples
    --------
    >>> res = fleiss_kappa(counts=[[3, 0], [0, 3], [2, 1], [3, 0]])
    >>> round(res.estimate, 4), round(res.category_kappa[0], 4)
    (0.625, 0.625)
    >>> ratings = [["a", "a", "a"], ["b", "b", "b"], ["a", "a", "b"], ["a", "a", "a"]]
    >>> round(fleiss_kappa(ratings).kappa, 4)
    0.625
    """
    if (ratings is None) == (counts is None):
        raise ValueError("pass either ratings (labels) or counts= (subjects x categories)")
    if counts is None:
        r = _inp.as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
        codes, names = _inp.encode(r.columns, _inp.check_categories(categories))
        c = _inp.counts_from_codes(codes, len(names))
    else:
        if b is not None or unit is not None or rater is not None or rating is not None:
            raise ValueError("counts= takes no b=, unit=, rater= or rating=")
        c, names = _inp.check_counts(counts)
    confidence = check_confidence(confidence)
    method = check_method(method)
    return fleiss_result(COEFFICIENTS["fleiss_kappa"], c, names, confidence, method)


def krippendorff_alpha(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
    confidence: float = 0.95,
    method: IntervalMethod = "wald_z",
) -> KrippendorffAlphaResult:
    """Krippendorff's alpha of a units x raters matrix (NaN = missing), two label vectors
    or a long frame.

    The matrix orientation is units x raters, as every other agreement function here
    (before 0.2 this function took raters x units, the ``krippendorff`` package's
    ``reliability_data`` layout: transpose such data with ``.T``).

    Computed from the coincidence matrix (Krippendorff 2011). "nominal" only compares
    values for equality (any labels: strings are fine); the other levels need numeric
    codes: "ordinal" uses their order and the frequencies of the values in between,
    "interval" squared differences and "ratio" ((c - k) / (c + k))^2 (values must be
    >= 0). Units with fewer than two values are not pairable and are ignored.

    ``se`` is Gwet's linearised SE with agreement weights ``1 - delta / max(delta)``
    (irrCAC); the t interval uses (pairable units - 1) df. It is nan for "ordinal".

    Parameters
    ----------
    ratings, b, unit, rater, rating
        The ratings in any of the three input forms (see :func:`cohen_kappa`).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement (the distance metric).
    confidence, method
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5]]
    >>> round(krippendorff_alpha(np.transpose(data), level="interval").estimate, 4)
    0.9428
    >>> round(krippendorff_alpha(*data, level="interval").alpha, 4)
    0.9428
    """
    level = check_level(level)  # type: ignore[assignment]
    confidence = check_confidence(confidence)
    method = check_method(method)  # type: ignore[assignment]
    r = _inp.as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    return krippendorff_result(
        COEFFICIENTS["krippendorff_alpha"], r.columns, level, confidence, method
    )
