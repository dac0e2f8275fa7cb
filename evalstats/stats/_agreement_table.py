"""The table of agreement coefficients the public functions of
:mod:`evalstats.stats.agreement` are built from: one :class:`Coefficient` row per coefficient.

A row names the coefficient's numeric cores (:mod:`evalstats.stats._kappa` for two raters'
k x k tables, :mod:`evalstats.stats._multirater` for units x categories counts), which
standard error and test it reports, its interval methods, its result class and the oracle
``tests/test_agreement.py`` matches it against. Adding a coefficient is adding a row here,
its cores, and a documented ``def`` in :mod:`evalstats.stats.agreement`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal, NamedTuple

from evalstats.stats import _kappa, _multirater
from evalstats.stats._agreement_results import (
    INTERVAL_METHODS,
    AgreementResult,
    CohenKappaResult,
    FleissKappaResult,
    KrippendorffAlphaResult,
)

__all__ = ["COEFFICIENTS", "Coefficient"]


class Coefficient(NamedTuple):
    """One row of the table of agreement coefficients (:data:`COEFFICIENTS`).

    Attributes
    ----------
    statistic : str
        The coefficient's name in its result and in a tidy frame's ``statistic`` column.
    table : callable or None
        Estimate and SE of ``(..., k, k)`` contingency tables (two raters) and agreement
        weights, from :mod:`~evalstats.stats._kappa`; None when there is no table form.
    counts : callable or None
        Estimate and SE of a units x categories count matrix (any number of raters) and
        weights, from :mod:`~evalstats.stats._multirater` (Krippendorff's: the estimate of
        a units x values matrix at a level of measurement; its SE is
        ``krippendorff_gwet_se``); None for two raters only.
    pairs_by_table : bool
        Two raters go through ``table`` (incomplete pairs dropped); otherwise ``counts``
        takes them too.
    se : str
        Which standard error ``se`` is (the interval's).
    test : {"wald", "h0"}
        ``z = estimate / se`` (t(n-1) p-value with ``"wald_t"``), or the normal test on the
        SE under no agreement beyond chance (``se0``).
    result : type
        The result class.
    oracle : str
        What tests/test_agreement.py checks the estimate and SE against.
    methods : tuple of str
        The interval methods (:data:`INTERVAL_METHODS`).
    """

    statistic: str
    table: Callable[..., Any] | None
    counts: Callable[..., Any] | None
    pairs_by_table: bool
    se: str
    test: Literal["wald", "h0"]
    result: type
    oracle: str
    methods: tuple[str, ...] = INTERVAL_METHODS


_GWET_SE = "Gwet (2014) linearisation, finite-population factor 1"

#: The coefficients: public function name -> its row (see :class:`Coefficient`).
COEFFICIENTS: dict[str, Coefficient] = {
    "percent_agreement": Coefficient(
        statistic="percent_agreement",
        table=_kappa.percent_agreement_stats,
        counts=partial(_multirater._gwet_family, kind="pa"),
        pairs_by_table=True,
        se=f"sqrt((sum p w^2 - pa^2) / n); many raters: {_GWET_SE}",
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC pa2 / raw.CAC bp's pa; SEM of per-unit agreement",
    ),
    "cohen_kappa": Coefficient(
        statistic="cohen_kappa",
        table=_kappa.cohen_stats,
        counts=None,
        pairs_by_table=True,
        se="Fleiss-Cohen-Everitt (1969) non-null ASE; se0 the ASE under H0 (SAS PROC FREQ)",
        test="h0",
        result=CohenKappaResult,
        oracle="SAS PROC FREQ printouts, sklearn cohen_kappa_score, irrCAC table.CAC",
    ),
    "scott_pi": Coefficient(
        statistic="scott_pi",
        table=_kappa.scott_stats,
        counts=partial(_multirater._gwet_family, kind="fleiss"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC scott / raw.CAC fleiss",
    ),
    "gwet_ac1": Coefficient(
        statistic="gwet_ac1",
        table=_kappa.gwet_stats,
        counts=partial(_multirater._gwet_family, kind="gwet"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC gwet / raw.CAC gwet, Gwet's published examples",
    ),
    "pabak": Coefficient(
        statistic="brennan_prediger",
        table=_kappa.brennan_prediger_stats,
        counts=partial(_multirater._gwet_family, kind="bp"),
        pairs_by_table=True,
        se=_GWET_SE,
        test="wald",
        result=AgreementResult,
        oracle="irrCAC table.CAC bp / raw.CAC bp",
    ),
    "fleiss_kappa": Coefficient(
        statistic="fleiss_kappa",
        table=None,
        counts=partial(_multirater._gwet_family, kind="fleiss"),
        pairs_by_table=False,
        se=f"{_GWET_SE}; se0 of Fleiss, Nee & Landis (1979)",
        test="h0",
        result=FleissKappaResult,
        oracle="statsmodels fleiss_kappa, irrCAC raw.CAC fleiss, R irr::kappam.fleiss",
    ),
    "krippendorff_alpha": Coefficient(
        statistic="krippendorff_alpha",
        table=_kappa.krippendorff_table_stats,
        counts=_multirater.krippendorff_from_counts,
        pairs_by_table=False,
        se="Gwet's linearisation with weights 1 - delta / max(delta); none for ordinal",
        test="wald",
        result=KrippendorffAlphaResult,
        oracle="krippendorff.alpha (estimate), irrCAC raw.CAC krippendorff (SE, p-value)",
    ),
}
