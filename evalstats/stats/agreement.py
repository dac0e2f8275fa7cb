"""Inter-rater agreement: Cohen's (weighted) kappa, Scott's pi, Gwet's AC1/AC2, PABAK
(Brennan-Prediger), percent agreement, Fleiss' kappa and Krippendorff's alpha.

Conventions
-----------
* Weights are *agreement* weights (SAS / statsmodels / Gwet): ``"linear"`` is
  ``1 - |i-j|/(k-1)``, ``"quadratic"`` ``1 - (i-j)^2/(k-1)^2`` over the category order; a
  user matrix must be k x k, symmetric, with ones on the diagonal (1 = full credit).
* ``se`` is the non-null asymptotic SE used for the confidence interval; ``se0`` (Cohen,
  Fleiss) is the SE under H0 (no agreement beyond chance) used for ``z`` and ``p_value``.
  For the Gwet-family coefficients ``z``/``p_value`` are Wald statistics on ``se``.
* Intervals are Wald intervals ``estimate +/- q * se``: ``ci="z"`` (default) uses the
  normal quantile (as SAS), ``ci="t"`` a t(n-1) quantile (as Gwet's irrCAC). The upper end
  is truncated at 1, the largest value every coefficient here can take (as irrCAC does).
* Missing labels (NaN/None/NA) drop the pair (two raters) or the single rating (many raters).
* Input forms (every coefficient that takes ratings): two label vectors ``f(a, b)``, a
  units x raters matrix ``f(matrix)`` (rows = units, columns = raters, NaN = missing; the
  same orientation for every function, ``krippendorff_alpha`` included), or a long
  DataFrame ``f(df, unit="task", rater="judge", rating="label")``. Two raters use the
  two-rater (contingency-table) formulas; more raters Gwet's multi-rater formulas.
* Every result has ``estimate``, ``se``, ``ci_low``, ``ci_high``, ``p_value`` (NaN where a
  coefficient has none) and ``n`` (units used); ``kappa`` / ``alpha`` remain as aliases.

The numeric cores live in :mod:`evalstats.stats._kappa` (vectorised over leading axes of
k x k tables, for the cluster bootstrap: see :func:`_kappa_from_tables`) and
:mod:`evalstats.stats._multirater`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

from evalstats._display import ResultDisplay
from evalstats._validate import check_confidence
from evalstats.stats import _agreement_input as _inp
from evalstats.stats import _kappa, _multirater
from evalstats.stats._kappa import _kappa_from_tables, weight_matrix

__all__ = [
    "AgreementResult",
    "CohenKappaResult",
    "FleissKappaResult",
    "KrippendorffAlphaResult",
    "_kappa_from_tables",
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

Weights = Literal["linear", "quadratic"] | np.ndarray | None
CIMethod = Literal["z", "t"]

_UNDEFINED = "undefined: chance agreement is 1 (a single category was used)"


# --------------------------------------------------------------------------- results


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return repr(v)


class _Result(ResultDisplay):
    """Readable repr and a one-row tidy frame for the frozen result dataclasses."""

    _headline: tuple[str, ...] = ()
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float

    def _scalars(self) -> dict[str, Any]:
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, tuple):
                v = ", ".join(map(str, v))
            out[f.name] = v
        return out

    def to_frame(self) -> pd.DataFrame:
        """One-row DataFrame of the result's fields (tuples joined into strings)."""
        return pd.DataFrame([self._scalars()])

    def __repr__(self) -> str:
        names = self._headline or tuple(f.name for f in dataclasses.fields(self))
        body = ", ".join(f"{k}={_fmt(getattr(self, k))}" for k in names)
        ci = f"{round(100 * self.confidence)}% CI [{_fmt(self.ci_low)}, {_fmt(self.ci_high)}]"
        note = f", note={self.note!r}" if getattr(self, "note", None) else ""
        return f"{type(self).__name__}({body}, {ci}{note})"


@dataclass(frozen=True, repr=False)
class CohenKappaResult(_Result):
    """Cohen's (weighted) kappa for two raters.

    ``se`` is the Fleiss-Cohen-Everitt non-null ASE (SAS "ASE") behind the interval;
    ``se0`` the ASE under H0 behind ``z = kappa / se0`` and the two-sided ``p_value``.
    """

    estimate: float
    se: float
    se0: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    k: int
    weights: str | None
    categories: tuple[Any, ...]
    confidence: float
    ci: str
    n_dropped: int
    note: str | None

    _headline = ("estimate", "se", "se0", "z", "p_value", "n", "k", "weights")

    @property
    def kappa(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate


@dataclass(frozen=True, repr=False)
class AgreementResult(_Result):
    """A chance-corrected agreement coefficient (or percent agreement) with Gwet's SE."""

    coefficient: str
    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    k: int
    n_raters: int
    weights: str | None
    categories: tuple[Any, ...]
    confidence: float
    ci: str
    n_dropped: int
    note: str | None

    _headline = ("coefficient", "estimate", "se", "n", "k", "n_raters", "weights")


@dataclass(frozen=True, repr=False)
class FleissKappaResult(_Result):
    """Fleiss' kappa for many raters.

    ``se0``/``z``/``p_value`` are the H0 test of Fleiss, Nee & Landis (1979) (as R's
    ``irr::kappam.fleiss``); ``se``/``ci_low``/``ci_high`` use Gwet's non-null SE (as
    irrCAC). Per-category kappas (category vs the rest) come with their H0 SE and z.
    H0 quantities need the same number of raters per subject; otherwise they are nan.
    """

    estimate: float
    se0: float
    z: float
    p_value: float
    se: float
    ci_low: float
    ci_high: float
    observed_agreement: float
    expected_agreement: float
    n: int
    n_raters: int | None
    categories: tuple[Any, ...]
    category_kappa: tuple[float, ...]
    category_se0: tuple[float, ...]
    category_z: tuple[float, ...]
    category_p_value: tuple[float, ...]
    confidence: float
    ci: str
    note: str | None

    _headline = ("estimate", "se0", "z", "p_value", "se", "n", "n_raters")

    @property
    def kappa(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate

    @property
    def n_subjects(self) -> int:
        """Alias of ``n``: subjects with at least one rating."""
        return self.n

    def category_frame(self) -> pd.DataFrame:
        """Tidy per-category kappas: category, kappa, se0, z, p_value."""
        return pd.DataFrame(
            {
                "category": list(self.categories),
                "kappa": self.category_kappa,
                "se0": self.category_se0,
                "z": self.category_z,
                "p_value": self.category_p_value,
            }
        )


@dataclass(frozen=True, repr=False)
class KrippendorffAlphaResult(_Result):
    """Krippendorff's alpha with Gwet's linearised SE (nan for the ordinal level, whose
    metric depends on the data's own value frequencies).

    ``z`` / ``p_value`` are the two-sided Wald test of alpha = 0 on ``se`` (t with
    pairable units - 1 df when ``ci="t"``, as irrCAC); ``n`` counts the pairable units.
    """

    estimate: float
    se: float
    z: float
    p_value: float
    ci_low: float
    ci_high: float
    level: str
    observed_disagreement: float
    expected_disagreement: float
    n_pairable_values: int
    n: int
    n_raters: int
    values: tuple[Any, ...]
    confidence: float
    ci: str
    note: str | None

    _headline = ("estimate", "se", "level", "n", "n_raters", "n_pairable_values")

    @property
    def alpha(self) -> float:
        """Alias of ``estimate``."""
        return self.estimate

    @property
    def n_units(self) -> int:
        """Alias of ``n``: units with two or more values."""
        return self.n


# --------------------------------------------------------------------------- helpers


def _wald(est: float, se: float, n: int, confidence: float, ci: str) -> tuple[float, float]:
    """Wald interval; the upper end is truncated at 1 (no coefficient here exceeds it)."""
    if ci == "t":
        q = stats.t.ppf(0.5 + confidence / 2.0, n - 1) if n > 1 else np.nan
    else:
        q = stats.norm.ppf(0.5 + confidence / 2.0)
    hi = float(est + q * se)
    return float(est - q * se), hi if math.isnan(hi) else min(1.0, hi)


def _test(est: float, se: float, n: int, ci: str) -> tuple[float, float]:
    """Two-sided Wald test of coefficient = 0 (t(n-1) when ci='t')."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = float(np.divide(est, se))
    if math.isnan(z):
        return z, float("nan")
    if ci == "t" and n > 1:
        return z, float(2.0 * stats.t.sf(abs(z), n - 1))
    return z, float(2.0 * stats.norm.sf(abs(z)))


def _weights_name(weights: Weights) -> str | None:
    if weights is None or isinstance(weights, str):
        return weights
    return "custom"


def _two_rater_result(
    name: str,
    core,
    table: np.ndarray,
    weights: Weights,
    categories: Sequence[Any],
    confidence: float,
    ci: str,
    n_dropped: int = 0,
) -> AgreementResult:
    w = weight_matrix(weights, table.shape[0])
    res = core(table, w)
    est, se = float(res.estimate), float(res.se)
    n = int(round(float(res.n)))
    lo, hi = _wald(est, se, n, confidence, ci)
    z, p = _test(est, se, n, ci)
    return AgreementResult(
        coefficient=name,
        estimate=est,
        se=se,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=float(res.observed),
        expected_agreement=float(res.expected),
        n=n,
        k=table.shape[0],
        n_raters=2,
        weights=_weights_name(weights),
        categories=tuple(categories),
        confidence=confidence,
        ci=ci,
        n_dropped=n_dropped,
        note=None if not math.isnan(est) else f"{name} {_UNDEFINED}",
    )


def _prepare_pair(a, b, categories, confidence, ci):
    confidence = check_confidence(confidence)
    ci = _inp.check_ci(ci)
    table, cats, n_dropped = _inp.pair_table(a, b, categories)
    if table.sum() == 0:
        raise ValueError("no unit has labels from both raters (every pair has a missing label)")
    return table, cats, n_dropped, confidence, ci


def _multi_rater_result(
    name: str,
    kind: str,
    cols: list[Any],
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    ci: str,
) -> AgreementResult:
    """A Gwet-family coefficient on a units x categories count matrix (three or more raters)."""
    codes, cats = _inp.encode(cols, _inp.check_categories(categories))
    counts = _inp.counts_from_codes(codes, len(cats))
    if not np.any(counts.sum(axis=1) >= 2):
        raise ValueError("no unit has ratings from two or more raters")
    w = weight_matrix(weights, len(cats))
    est = _multirater._gwet_family(counts, w, kind)
    lo, hi = _wald(est.estimate, est.se, est.n, confidence, ci)
    z, p = _test(est.estimate, est.se, est.n, ci)
    return AgreementResult(
        coefficient=name,
        estimate=est.estimate,
        se=est.se,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=est.observed,
        expected_agreement=est.expected,
        n=est.n,
        k=len(cats),
        n_raters=len(cols),
        weights=_weights_name(weights),
        categories=tuple(cats),
        confidence=confidence,
        ci=ci,
        n_dropped=0,
        note=None if not math.isnan(est.estimate) else f"{name} {_UNDEFINED}",
    )


def _agreement(
    name: str,
    pair_core,
    multi_kind: str | None,
    data: Any,
    b: Any,
    long: tuple[str | None, str | None, str | None],
    weights: Weights,
    categories: Sequence[Any] | None,
    confidence: float,
    ci: str,
) -> AgreementResult:
    """Dispatch on the number of raters: the table formulas for two, Gwet's for more."""
    r = _inp.as_ratings(data, b, unit=long[0], rater=long[1], rating=long[2])
    if len(r.columns) < 2:
        raise ValueError(f"ratings needs at least two raters (columns); got {len(r.columns)}")
    if len(r.columns) == 2:
        table, cats, n_dropped, confidence, ci = _prepare_pair(
            *r.columns, categories, confidence, ci
        )
        return _two_rater_result(name, pair_core, table, weights, cats, confidence, ci, n_dropped)
    if multi_kind is None:
        raise ValueError(
            f"{name} compares two raters; got {len(r.columns)} (use fleiss_kappa, gwet_ac1, "
            "pabak or krippendorff_alpha for more)"
        )
    confidence = check_confidence(confidence)
    ci = _inp.check_ci(ci)
    return _multi_rater_result(name, multi_kind, r.columns, weights, categories, confidence, ci)


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
    ci: CIMethod = "z",
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
    ci : {"z", "t"}
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
    ci = _inp.check_ci(ci)
    k = t.shape[0]
    cats = tuple(range(k)) if categories is None else tuple(categories)
    if len(cats) != k:
        raise ValueError(f"{len(cats)} categories given for a {k} x {k} table")
    w = weight_matrix(weights, k)
    s = _kappa.cohen_stats(t, w)
    kappa, se, se0 = float(s.kappa), float(s.se), float(s.se0)
    n = int(round(float(s.n)))
    lo, hi = _wald(kappa, se, n, confidence, ci)
    z, p = _test(kappa, se0, n, "z")  # the H0 test is a normal test, as in SAS
    note = None if not math.isnan(kappa) else f"kappa {_UNDEFINED}"
    return CohenKappaResult(
        estimate=kappa,
        se=se,
        se0=se0,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=float(s.observed),
        expected_agreement=float(s.expected),
        n=n,
        k=k,
        weights=_weights_name(weights),
        categories=cats,
        confidence=confidence,
        ci=ci,
        n_dropped=int(n_dropped),
        note=note,
    )


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
    ci: CIMethod = "z",
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
    ci : {"z", "t"}
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
    r = _inp.as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    if len(r.columns) != 2:
        raise ValueError(
            f"Cohen's kappa compares two raters; got {len(r.columns)} (use fleiss_kappa, "
            "gwet_ac1 or krippendorff_alpha for more)"
        )
    table, cats, n_dropped, confidence, ci = _prepare_pair(*r.columns, categories, confidence, ci)
    return cohen_kappa_table(
        table, weights=weights, confidence=confidence, ci=ci, categories=cats, n_dropped=n_dropped
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
    ci: CIMethod = "z",
) -> AgreementResult:
    """Scott's pi (chance from the pooled margins), with Gwet's SE.

    Two raters use the two-rater formulas on the contingency table. With three or more
    raters this is Fleiss' generalisation of Scott's pi, i.e. Fleiss' kappa (Gwet's SE),
    equal to :func:`fleiss_kappa`'s ``estimate``.

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    weights, categories, confidence, ci
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> round(scott_pi([1, 1, 2, 2], [1, 2, 2, 2]).estimate, 4)
    0.4667
    """
    return _agreement(
        "scott_pi",
        _kappa.scott_stats,
        "fleiss",
        ratings,
        b,
        (unit, rater, rating),
        weights,
        categories,
        confidence,
        ci,
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
    ci: CIMethod = "z",
) -> AgreementResult:
    """(Weighted) percent agreement, with Gwet's SE.

    Two raters: the share of units on which they agree, SE ``sqrt((sum p w^2 - pa^2)/n)``.
    Three or more: the mean over units of the share of agreeing rater pairs, with Gwet's
    multi-rater SE (the standard error of the per-unit agreements).

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    weights, categories, confidence, ci
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
        _kappa.percent_agreement_stats,
        "pa",
        ratings,
        b,
        (unit, rater, rating),
        weights,
        categories,
        confidence,
        ci,
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
    ci: CIMethod = "z",
) -> AgreementResult:
    """PABAK / Brennan-Prediger: ``(k * p_o - 1) / (k - 1)`` for k categories.

    With weights, Brennan-Prediger's weighted form ``(p_o - T/k^2) / (1 - T/k^2)``,
    ``T`` the sum of the weight matrix. ``k`` counts every category in ``categories``
    (default: those observed), used or not. Three or more raters use Gwet's multi-rater
    Brennan-Prediger coefficient (irrCAC ``bp``), ``p_o`` the multi-rater agreement.

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    weights, categories, confidence, ci
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> pabak([1, 1, 2, 2], [1, 2, 2, 2]).estimate
    0.5
    """
    return _agreement(
        "brennan_prediger",
        _kappa.brennan_prediger_stats,
        "bp",
        ratings,
        b,
        (unit, rater, rating),
        weights,
        categories,
        confidence,
        ci,
    )


_TABLE_COEFFICIENTS = {
    "percent_agreement": _kappa.percent_agreement_stats,
    "scott_pi": _kappa.scott_stats,
    "gwet_ac1": _kappa.gwet_stats,
    "brennan_prediger": _kappa.brennan_prediger_stats,
    "krippendorff_alpha": _kappa.krippendorff_table_stats,
}


def two_rater_agreement(
    table: Any,
    *,
    weights: Weights = None,
    confidence: float = 0.95,
    ci: CIMethod = "z",
) -> pd.DataFrame:
    """Every two-rater coefficient of a k x k table in one tidy DataFrame.

    Rows: percent_agreement, cohen_kappa, scott_pi, gwet_ac1, brennan_prediger,
    krippendorff_alpha; columns: coefficient, estimate, se, ci_low, ci_high, z, p_value,
    observed_agreement, expected_agreement, n, k, weights, confidence, ci. For Cohen's
    kappa ``z``/``p_value`` use the H0 SE; for the others they are Wald tests on ``se``.

    Examples
    --------
    >>> df = two_rater_agreement([[13, 0, 0], [0, 20, 7], [0, 4, 56]], ci="t")
    >>> df.set_index("coefficient").loc["gwet_ac1", "estimate"].round(4)
    np.float64(0.8493)
    """
    t = _inp.check_table(table)
    confidence = check_confidence(confidence)
    cats = list(table.index) if isinstance(table, pd.DataFrame) else list(range(t.shape[0]))
    cols = [
        "coefficient",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "z",
        "p_value",
        "observed_agreement",
        "expected_agreement",
        "n",
        "k",
        "weights",
        "confidence",
        "ci",
    ]
    rows = []
    for name, core in _TABLE_COEFFICIENTS.items():
        r = _two_rater_result(name, core, t, weights, cats, confidence, _inp.check_ci(ci))
        rows.append({c: getattr(r, c) for c in cols})
    ck = cohen_kappa_table(t, weights=weights, confidence=confidence, ci=ci, categories=cats)
    rows.insert(1, {**{c: getattr(ck, c, None) for c in cols}, "coefficient": "cohen_kappa"})
    rows[1]["estimate"] = ck.kappa
    return pd.DataFrame(rows, columns=cols)


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
    ci: CIMethod = "z",
) -> FleissKappaResult:
    """Fleiss' kappa of many raters (Gwet's non-null SE, Fleiss-Nee-Landis H0 test).

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    counts : array-like or DataFrame, shape (subjects, categories), optional
        Instead of ``ratings``: how many raters put each subject in each category (see
        :func:`ratings_to_counts`). Subjects may have different numbers of raters (Gwet's
        generalisation; the H0 quantities are then nan); subjects with no rating are
        ignored.
    categories : sequence, optional
        Category set and order of ``ratings`` (as in :func:`cohen_kappa`).
    confidence, ci
        Level and quantile ("z" or "t" with n-1 df) of the interval on Gwet's SE.

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
        codes, cats = _inp.encode(r.columns, _inp.check_categories(categories))
        c, names = _inp.counts_from_codes(codes, len(cats)), cats
    else:
        if b is not None or unit is not None or rater is not None or rating is not None:
            raise ValueError("counts= takes no b=, unit=, rater= or rating=")
        c, names = _inp.check_counts(counts)
    confidence = check_confidence(confidence)
    ci = _inp.check_ci(ci)
    rated = c.sum(axis=1)
    if not np.any(rated >= 2):
        raise ValueError("Fleiss' kappa needs at least one subject with two or more ratings")
    c = c[rated > 0]
    q = c.shape[1]
    est = _multirater._gwet_family(c, np.eye(q), "fleiss")
    lo, hi = _wald(est.estimate, est.se, est.n, confidence, ci)
    m = c.sum(axis=1)
    notes = []
    if np.all(m == m[0]):
        h0 = _multirater.fleiss_h0(c)
        se0 = h0.se0
        cat_kappa, cat_se0 = h0.category_kappa, h0.category_se0
        n_raters: int | None = int(m[0])
    else:
        se0 = float("nan")
        cat_kappa = cat_se0 = np.full(q, np.nan)
        n_raters = None
        notes.append("subjects have different numbers of raters: H0 SE and category kappas nan")
    z, p = _test(est.estimate, se0, est.n, "z")
    with np.errstate(divide="ignore", invalid="ignore"):
        cat_z = cat_kappa / cat_se0
    cat_p = 2.0 * stats.norm.sf(np.abs(cat_z))
    if math.isnan(est.estimate):
        notes.append(f"kappa {_UNDEFINED}")
    return FleissKappaResult(
        estimate=est.estimate,
        se0=se0,
        z=z,
        p_value=p,
        se=est.se,
        ci_low=lo,
        ci_high=hi,
        observed_agreement=est.observed,
        expected_agreement=est.expected,
        n=est.n,
        n_raters=n_raters,
        categories=tuple(names),
        category_kappa=tuple(float(x) for x in cat_kappa),
        category_se0=tuple(float(x) for x in cat_se0),
        category_z=tuple(float(x) for x in cat_z),
        category_p_value=tuple(float(x) for x in cat_p),
        confidence=confidence,
        ci=ci,
        note="; ".join(notes) or None,
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
    ci: CIMethod = "z",
) -> AgreementResult:
    """Gwet's AC1 (unweighted) / AC2 (weighted) with Gwet's SE.

    Two raters (``a``, ``b`` or two columns) use the two-rater formulas on the contingency
    table, dropping incomplete pairs; more raters use Gwet's multi-rater formulas, where a
    unit's missing ratings are simply absent.

    Parameters
    ----------
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    weights, categories, confidence, ci
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
        "gwet_ac1",
        _kappa.gwet_stats,
        "gwet",
        ratings,
        b,
        (unit, rater, rating),
        weights,
        categories,
        confidence,
        ci,
    )


_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _check_level(level: str) -> str:
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {_LEVELS}; got {level!r}")
    return level


def krippendorff_alpha(
    ratings: Any,
    b: Any = None,
    *,
    unit: str | None = None,
    rater: str | None = None,
    rating: str | None = None,
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "nominal",
    confidence: float = 0.95,
    ci: CIMethod = "z",
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
    ratings : array-like or DataFrame
        Rater 1's labels (then pass ``b``), a units x raters matrix (NaN / None =
        missing), or a long DataFrame (then pass ``unit``, ``rater``, ``rating``).
    b : array-like, optional
        Rater 2's labels of the same units.
    unit, rater, rating : str, optional
        Column names of a long ``ratings`` frame (one row per rating).
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement (the distance metric).
    confidence, ci
        As in :func:`cohen_kappa`.

    Examples
    --------
    >>> data = [[1, 2, 3, 3, 2, 1, 4, 1, 2, np.nan], [1, 2, 3, 3, 2, 2, 4, 1, 2, 5]]
    >>> round(krippendorff_alpha(np.transpose(data), level="interval").estimate, 4)
    0.9428
    >>> round(krippendorff_alpha(*data, level="interval").alpha, 4)
    0.9428
    """
    level = _check_level(level)
    confidence = check_confidence(confidence)
    ci = _inp.check_ci(ci)
    r = _inp.as_ratings(ratings, b, unit=unit, rater=rater, rating=rating)
    x = _numeric_matrix(r.columns, level)
    if x.size == 0:
        raise ValueError("ratings is empty")
    if np.isinf(x).any():
        raise ValueError("ratings must be finite (use NaN for missing)")
    if level == "ratio" and np.nanmin(x) < 0:
        raise ValueError("ratio-level alpha needs non-negative values")
    ok = ~np.isnan(x)
    values, inv = np.unique(x[ok], return_inverse=True)
    q = len(values)
    n_units = x.shape[0]
    unit_of = np.broadcast_to(np.arange(n_units)[:, None], x.shape)[ok]
    counts = np.bincount(unit_of * q + inv, minlength=n_units * q).reshape(n_units, q)
    counts = counts.astype(float)
    if not np.any(counts.sum(axis=1) >= 2):
        raise ValueError("no unit has two or more values: alpha is undefined")
    alpha, d_o, d_e, total, units, delta = _multirater.krippendorff_from_counts(
        counts, values, level
    )
    notes = []
    if level == "ordinal":
        se = float("nan")
        notes.append("no SE for the ordinal level (its metric depends on the data)")
    elif q < 2 or delta.max() == 0:
        se = float("nan")
    else:
        se = _multirater.krippendorff_gwet_se(counts, 1.0 - delta / delta.max())
    if math.isnan(alpha):
        notes.append("alpha undefined: no variation among the pairable values")
    lo, hi = _wald(alpha, se, units, confidence, ci)
    z, p = _test(alpha, se, units, ci)
    return KrippendorffAlphaResult(
        estimate=alpha,
        se=se,
        z=z,
        p_value=p,
        ci_low=lo,
        ci_high=hi,
        level=level,
        observed_disagreement=d_o,
        expected_disagreement=d_e,
        n_pairable_values=int(round(total)),
        n=units,
        n_raters=x.shape[1],
        values=tuple(values.tolist()),
        confidence=confidence,
        ci=ci,
        note="; ".join(notes) or None,
    )


def _numeric_matrix(cols: list[Any], level: str) -> np.ndarray:
    """Units x raters float matrix (NaN = missing); nominal labels may be any values."""
    try:
        return np.column_stack(
            [
                pd.to_numeric(pd.Series(c), errors="raise").to_numpy(float, na_value=np.nan)
                for c in cols
            ]
        )
    except (TypeError, ValueError) as exc:
        if level != "nominal":
            raise ValueError(
                f"{level}-level alpha needs numeric codes (NaN or None for missing)"
            ) from exc
    # Nominal alpha only compares labels for equality: any labels become category codes.
    codes, _ = _inp.encode(cols, None)
    x = np.column_stack(codes).astype(float)
    x[x < 0] = np.nan
    return x
