"""Statistics on verdict frames: agreement, resampling, win rates, cost, power.

Names are resolved on first use (PEP 562): ``from evalstats.stats.summarize import ...``
(what a report's notebook kernel displays with) loads that module alone, not scipy.stats
and every estimator; ``evalstats.stats.win_rates`` loads :mod:`.winrates` when first
touched. ``__all__`` and ``dir()`` list the whole surface.

>>> import evalstats.stats as st
>>> st.win_rates.__module__, "win_rates" in dir(st)
('evalstats.stats.winrates', True)
"""

# The TYPE_CHECKING imports are the re-exports that ``_LAZY`` resolves at run time.

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from .._surface import LazySurface

# public name -> the submodule (relative to this package) that defines it
_LAZY: dict[str, str] = {
    "AgreementResult": ".agreement",
    "BOOTSTRAP_METHODS": ".resample",
    "BootstrapResult": ".resample",
    "CLUSTER_MEAN_METHODS": ".means",
    "COST_METRICS": ".cost",
    "ClusterRatioResult": ".robust",
    "CohenKappaResult": ".agreement",
    "DEFAULT_METHOD": ".winrates",
    "DeclaredTest": ".equivalence",
    "EquivalenceResult": ".equivalence",
    "FleissKappaResult": ".agreement",
    "GoldResult": ".gold",
    "INVALID_RULES": ".missing",
    "KrippendorffAlphaResult": ".agreement",
    "NO_ANSWER_RULES": ".missing",
    "OrdinalCheckResult": ".models",
    "PPI_METHODS": ".ppi",
    "PowerResult": ".power",
    "ProportionCI": "._proportion",
    "RATE_NAMES": ".winrates",
    "SEED_DISAGREEMENT_TRIGGER": ".judges",
    "WIN_RATE_METHODS": ".winrates",
    "agent_spend": ".spend",
    "apply_missing_rule": ".missing",
    "cluster_bootstrap": ".resample",
    "cluster_mean": ".means",
    "cluster_ratio_test": ".robust",
    "cohen_kappa": ".agreement",
    "cohen_kappa_table": ".agreement",
    "consensus": ".judges",
    "contingency_table": ".agreement",
    "cost_equivalence": ".equivalence",
    "cost_ratios": ".cost",
    "declared_test": ".equivalence",
    "coverage_study": ".coverage",
    "design_coverage": "._design_coverage",
    "dimension_means": ".dimensions",
    "fleiss_kappa": ".agreement",
    "gold_labels": ".gold",
    "gwet_ac1": ".agreement",
    "holm": ".multiplicity",
    "holm_table": ".multiplicity",
    "judge_agreement": ".judges",
    "judge_spend": ".spend",
    "judge_vs_gold": ".gold",
    "krippendorff_alpha": ".agreement",
    "labeler_agreement": ".gold",
    "mde_curve": ".power",
    "min_detectable_net_win": ".power",
    "missing_bounds": ".missing",
    "net_win_equivalence": ".equivalence",
    "noninferiority": ".equivalence",
    "ordinal_check": ".models",
    "outcome_icc": ".power",
    "pabak": ".agreement",
    "percent_agreement": ".agreement",
    "position_bias": ".position",
    "power_curve": ".power",
    "power_net_win": ".power",
    "ppi_win_rates": ".ppi",
    "proportion_ci": "._proportion",
    "ratings_to_counts": ".agreement",
    "scott_pi": ".agreement",
    "simulated_mde": ".power",
    "simulated_power": ".power",
    "simulated_tasks_needed": ".power",
    "solve_power": ".power",
    "summarize": ".summarize",
    "tasks_needed": ".power",
    "tost": ".equivalence",
    "two_rater_agreement": ".agreement",
    "win_rates": ".winrates",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # resolve once; later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Keeps a public name bound to its object when the submodule of that name is imported.
sys.modules[__name__].__class__ = LazySurface


if TYPE_CHECKING:
    from ._design_coverage import design_coverage
    from ._proportion import ProportionCI, proportion_ci
    from .agreement import (
        AgreementResult,
        CohenKappaResult,
        FleissKappaResult,
        KrippendorffAlphaResult,
        cohen_kappa,
        cohen_kappa_table,
        contingency_table,
        fleiss_kappa,
        gwet_ac1,
        krippendorff_alpha,
        pabak,
        percent_agreement,
        ratings_to_counts,
        scott_pi,
        two_rater_agreement,
    )
    from .cost import COST_METRICS, cost_ratios
    from .coverage import coverage_study
    from .dimensions import dimension_means
    from .equivalence import (
        DeclaredTest,
        EquivalenceResult,
        cost_equivalence,
        declared_test,
        net_win_equivalence,
        noninferiority,
        tost,
    )
    from .gold import GoldResult, gold_labels, judge_vs_gold, labeler_agreement
    from .judges import SEED_DISAGREEMENT_TRIGGER, consensus, judge_agreement
    from .means import CLUSTER_MEAN_METHODS, cluster_mean
    from .missing import INVALID_RULES, NO_ANSWER_RULES, apply_missing_rule, missing_bounds
    from .models import OrdinalCheckResult, ordinal_check
    from .multiplicity import holm, holm_table
    from .position import position_bias
    from .power import (
        PowerResult,
        mde_curve,
        min_detectable_net_win,
        outcome_icc,
        power_curve,
        power_net_win,
        simulated_mde,
        simulated_power,
        simulated_tasks_needed,
        solve_power,
        tasks_needed,
    )
    from .ppi import PPI_METHODS, ppi_win_rates
    from .resample import BOOTSTRAP_METHODS, BootstrapResult, cluster_bootstrap
    from .robust import ClusterRatioResult, cluster_ratio_test
    from .spend import agent_spend, judge_spend
    from .summarize import summarize
    from .winrates import DEFAULT_METHOD, RATE_NAMES, WIN_RATE_METHODS, win_rates

# No ``power = solve_power`` alias: it would hide the ``evalstats.stats.power`` submodule.
__all__ = [
    "AgreementResult",
    "BOOTSTRAP_METHODS",
    "BootstrapResult",
    "CLUSTER_MEAN_METHODS",
    "COST_METRICS",
    "ClusterRatioResult",
    "CohenKappaResult",
    "DEFAULT_METHOD",
    "DeclaredTest",
    "EquivalenceResult",
    "FleissKappaResult",
    "GoldResult",
    "INVALID_RULES",
    "KrippendorffAlphaResult",
    "NO_ANSWER_RULES",
    "OrdinalCheckResult",
    "PPI_METHODS",
    "PowerResult",
    "ProportionCI",
    "RATE_NAMES",
    "SEED_DISAGREEMENT_TRIGGER",
    "WIN_RATE_METHODS",
    "agent_spend",
    "apply_missing_rule",
    "cluster_bootstrap",
    "cluster_mean",
    "cluster_ratio_test",
    "cohen_kappa",
    "cohen_kappa_table",
    "consensus",
    "contingency_table",
    "cost_equivalence",
    "cost_ratios",
    "declared_test",
    "coverage_study",
    "design_coverage",
    "dimension_means",
    "fleiss_kappa",
    "gold_labels",
    "gwet_ac1",
    "holm",
    "holm_table",
    "judge_agreement",
    "judge_spend",
    "judge_vs_gold",
    "krippendorff_alpha",
    "labeler_agreement",
    "mde_curve",
    "min_detectable_net_win",
    "missing_bounds",
    "net_win_equivalence",
    "noninferiority",
    "ordinal_check",
    "outcome_icc",
    "pabak",
    "percent_agreement",
    "position_bias",
    "power_curve",
    "power_net_win",
    "ppi_win_rates",
    "proportion_ci",
    "ratings_to_counts",
    "scott_pi",
    "simulated_mde",
    "simulated_power",
    "simulated_tasks_needed",
    "solve_power",
    "summarize",
    "tasks_needed",
    "tost",
    "two_rater_agreement",
    "win_rates",
]
