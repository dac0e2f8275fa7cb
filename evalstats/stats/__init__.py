"""Statistics on verdict frames: agreement, resampling, win rates, cost, power.

Names are resolved on first use (:func:`evalstats._surface.lazy_surface`, PEP 562):
``from evalstats.stats.formatting import ...``
(what a report's notebook kernel displays with) loads that module alone, not scipy.stats
and every estimator; ``evalstats.stats.win_rates`` loads :mod:`.winrates` when first
touched. ``__all__`` and ``dir()`` list the whole surface.

>>> import evalstats.stats as st
>>> st.win_rates.__module__, "win_rates" in dir(st)
('evalstats.stats.winrates', True)
"""

# The TYPE_CHECKING imports are what type checkers see of the lazy names. No ``power =
# solve_power`` alias: a public name may not be a submodule's name (lazy_surface refuses it).
# ruff: noqa: F401

from __future__ import annotations

from typing import TYPE_CHECKING

from .._surface import lazy_surface

# submodule -> the public names it defines (the README's API table lists each one).
__all__, __getattr__, __dir__ = lazy_surface(
    __name__,
    {
        "._design_coverage": ["design_coverage"],
        "._design_coverage_more": ["design_coverage_cost", "design_coverage_kappa"],
        "._proportion": ["ProportionCI", "proportion_ci"],
        ".agreement": [
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
        ],
        ".agreement_intervals": ["clustered_agreement"],
        ".arm_cost": [
            "ARM_COST_METHODS",
            "ARM_COST_METRICS",
            "arm_costs",
            "pareto",
            "pareto_frontier",
        ],
        ".cost": ["COST_METRICS", "cost_ratios"],
        ".coverage": ["coverage_study"],
        ".dimensions": ["dimension_means"],
        ".equivalence": [
            "EquivalenceResult",
            "cost_equivalence",
            "net_win_equivalence",
            "noninferiority",
            "tost",
        ],
        ".formatting": ["summarize"],
        ".gold": ["GoldResult", "gold_labels", "judge_vs_gold", "labeler_agreement"],
        ".judges": ["SEED_DISAGREEMENT_TRIGGER", "consensus", "judge_agreement"],
        ".means": ["CLUSTER_MEAN_METHODS", "cluster_mean"],
        ".missing": ["INVALID_RULES", "NO_ANSWER_RULES", "apply_missing_rule", "missing_bounds"],
        ".models": ["OrdinalCheckResult", "ordinal_check"],
        ".pairs": ["PAIRWISE_COLUMNS", "pairwise_frame", "pairwise_from_verdicts"],
        ".planned_test": ["declared_test"],
        ".position": ["position_bias"],
        ".power_analytic": [
            "PowerResult",
            "mde_curve",
            "min_detectable_net_win",
            "outcome_icc",
            "power_curve",
            "power_net_win",
            "solve_power",
            "tasks_needed",
        ],
        ".power_simulation": ["simulated_mde", "simulated_power", "simulated_tasks_needed"],
        ".ppi": ["PPI_METHODS", "ppi_win_rates"],
        ".ranking": [
            "COMPARE_METHODS",
            "COMPARE_STATISTICS",
            "RANK_MODELS",
            "SUBSAMPLE_ESTIMATORS",
            "compare",
            "holm",
            "holm_table",
            "rank",
            "rank_sets",
            "rank_subsamples",
            "subsample_coverage",
        ],
        ".resample": ["BOOTSTRAP_METHODS", "BootstrapResult", "cluster_bootstrap"],
        ".robust": ["ClusterRatioResult", "cluster_ratio_test"],
        ".spend": ["agent_spend", "judge_spend"],
        ".winrates": [
            "DEFAULT_METHOD",
            "RATE_NAMES",
            "WIN_RATE_METHODS",
            "win_rates",
        ],
    },
)


if TYPE_CHECKING:
    from ._design_coverage import design_coverage
    from ._design_coverage_more import design_coverage_cost, design_coverage_kappa
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
    from .agreement_intervals import clustered_agreement
    from .arm_cost import ARM_COST_METHODS, ARM_COST_METRICS, arm_costs, pareto, pareto_frontier
    from .cost import COST_METRICS, cost_ratios
    from .coverage import coverage_study
    from .dimensions import dimension_means
    from .equivalence import (
        EquivalenceResult,
        cost_equivalence,
        net_win_equivalence,
        noninferiority,
        tost,
    )
    from .formatting import summarize
    from .gold import GoldResult, gold_labels, judge_vs_gold, labeler_agreement
    from .judges import SEED_DISAGREEMENT_TRIGGER, consensus, judge_agreement
    from .means import CLUSTER_MEAN_METHODS, cluster_mean
    from .missing import INVALID_RULES, NO_ANSWER_RULES, apply_missing_rule, missing_bounds
    from .models import OrdinalCheckResult, ordinal_check
    from .pairs import PAIRWISE_COLUMNS, pairwise_frame, pairwise_from_verdicts
    from .planned_test import declared_test
    from .position import position_bias
    from .power_analytic import (
        PowerResult,
        mde_curve,
        min_detectable_net_win,
        outcome_icc,
        power_curve,
        power_net_win,
        solve_power,
        tasks_needed,
    )
    from .power_simulation import simulated_mde, simulated_power, simulated_tasks_needed
    from .ppi import PPI_METHODS, ppi_win_rates
    from .ranking import (
        COMPARE_METHODS,
        COMPARE_STATISTICS,
        RANK_MODELS,
        SUBSAMPLE_ESTIMATORS,
        compare,
        holm,
        holm_table,
        rank,
        rank_sets,
        rank_subsamples,
        subsample_coverage,
    )
    from .resample import BOOTSTRAP_METHODS, BootstrapResult, cluster_bootstrap
    from .robust import ClusterRatioResult, cluster_ratio_test
    from .spend import agent_spend, judge_spend
    from .winrates import DEFAULT_METHOD, RATE_NAMES, WIN_RATE_METHODS, win_rates
