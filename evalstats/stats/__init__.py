"""Statistics on verdict frames: rates, agreement, cost, power, ranking, ppi, design studies.

Names load on first use (:func:`evalstats._surface.lazy_surface`): a notebook kernel that
imports :mod:`evalstats.stats.formatting` does not load scipy.stats and every estimator.
"""

from __future__ import annotations

from .._surface import lazy_surface

# submodule -> the public names it defines (the README's API table lists each one).
__all__, __getattr__, __dir__ = lazy_surface(
    __name__,
    {
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
            "clustered_agreement",
            "GoldResult",
            "gold_labels",
            "judge_vs_gold",
            "labeler_agreement",
            "SEED_DISAGREEMENT_TRIGGER",
            "consensus",
            "judge_agreement",
        ],
        ".cost": [
            "ARM_COST_METHODS",
            "ARM_COST_METRICS",
            "COST_METRICS",
            "arm_costs",
            "cost_ratios",
            "judge_spend",
            "pareto",
            "pareto_frontier",
        ],
        ".design": [
            "coverage_study",
            "design_coverage",
        ],
        ".equivalence": [
            "EquivalenceResult",
            "cost_equivalence",
            "declared_test",
            "noninferiority",
            "tost",
        ],
        ".formatting": ["summarize"],
        ".models": ["OrdinalCheckResult", "ordinal_check"],
        ".power": [
            "Design",
            "PowerResult",
            "mde_curve",
            "min_detectable_net_win",
            "outcome_icc",
            "power_curve",
            "power_net_win",
            "simulated_mde",
            "simulated_power",
            "simulated_tasks_needed",
            "tasks_needed",
        ],
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
        ".rates": [
            "CLUSTER_MEAN_METHODS",
            "DEFAULT_METHOD",
            "INVALID_RULES",
            "NO_ANSWER_RULES",
            "RATE_NAMES",
            "WIN_RATE_METHODS",
            "ProportionCI",
            "apply_missing_rule",
            "cluster_mean",
            "dimension_means",
            "missing_bounds",
            "position_bias",
            "proportion_ci",
            "win_rates",
        ],
        ".resample": ["BOOTSTRAP_METHODS", "BootstrapResult", "cluster_bootstrap"],
    },
)
