"""The result classes of the agreement coefficients and their one tidy row.

Every result is a frozen dataclass with ``estimate``, ``se``, ``ci_low``, ``ci_high``,
``p_value``, ``n``, ``method`` (how the interval is made: ``"wald_z"`` or ``"wald_t"``) and
``confidence`` (its level). :meth:`to_frame` gives the one result shape of
:mod:`evalstats._tidy`: one row of ``statistic``, ``estimate``, ``se``, ``ci_low``,
``ci_high``, ``p_value``, ``df``, ``n``, ``n_tasks``, ``method``, ``confidence``; every other
field (the test's ``z``, ``se0``, the agreement terms, the categories, the note) is on the
frame's ``diagnostics``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evalstats._display import ResultDisplay
from evalstats._tidy import TIDY_COLUMNS, ResultFrame, tidy_frame

__all__ = [
    "INTERVAL_METHODS",
    "AgreementResult",
    "CohenKappaResult",
    "FleissKappaResult",
    "KrippendorffAlphaResult",
]

#: How an agreement interval is made: ``estimate +/- q * se`` with the normal quantile (as
#: SAS) or the t quantile with n - 1 df (as Gwet's irrCAC), the upper end truncated at 1.
INTERVAL_METHODS = ("wald_z", "wald_t")

# A field whose name means something else in the tidy shape is renamed in the diagnostics:
# Krippendorff's ``level`` is the level of measurement, not the interval's.
_DIAGNOSTIC_NAMES = {"level": "level_of_measurement"}


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.4g}" if abs(v) < 1e-3 and v != 0 else f"{v:.4f}"
    return repr(v)


class _Result(ResultDisplay):
    """Readable one-line repr and the tidy row shared by the agreement results."""

    _headline: tuple[str, ...] = ()
    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str
    n: int

    @property
    def statistic(self) -> str:
        """The coefficient's name in a tidy frame's ``statistic`` column."""
        return getattr(self, "coefficient", None) or _STATISTIC[type(self).__name__]

    @property
    def df(self) -> float:
        """Degrees of freedom of the t quantile (NaN for a normal-quantile interval)."""
        return float(self.n - 1) if self.method == "wald_t" and self.n > 1 else float("nan")

    def to_frame(self) -> ResultFrame:
        """The result as one tidy row; the other fields on ``.diagnostics`` (tuples joined).

        Examples
        --------
        >>> from evalstats.stats import pabak
        >>> frame = pabak([1, 1, 2, 2], [1, 2, 2, 2]).to_frame()
        >>> frame[["statistic", "estimate", "n", "method", "confidence"]].to_dict("records")
        [{'statistic': 'brennan_prediger', 'estimate': 0.5, 'n': 4, 'method': 'wald_z', 'confidence': 0.95}]
        >>> frame.diagnostics[["observed_agreement", "n_raters"]].to_dict("records")
        [{'observed_agreement': 0.75, 'n_raters': 2}]
        """
        row: dict[str, Any] = {"statistic": self.statistic, "df": self.df, "n_tasks": np.nan}
        extra: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            v = getattr(self, f.name)
            if f.name in TIDY_COLUMNS:
                row[f.name] = v
            elif f.name != "coefficient":
                extra[_DIAGNOSTIC_NAMES.get(f.name, f.name)] = (
                    ", ".join(map(str, v)) if isinstance(v, tuple) else v
                )
        return tidy_frame(pd.DataFrame([row]), diagnostics=pd.DataFrame([extra]))

    def __repr__(self) -> str:
        names = self._headline or tuple(f.name for f in dataclasses.fields(self))  # type: ignore[arg-type]
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
    method: str
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
    method: str
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
    method: str
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
    pairable units - 1 df when ``method="wald_t"``, as irrCAC); ``n`` counts the pairable
    units; ``level`` is the level of measurement (``level_of_measurement`` in the tidy
    frame's diagnostics).
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
    method: str
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


# The ``statistic`` of the results that carry no ``coefficient`` field.
_STATISTIC = {
    "CohenKappaResult": "cohen_kappa",
    "FleissKappaResult": "fleiss_kappa",
    "KrippendorffAlphaResult": "krippendorff_alpha",
}
