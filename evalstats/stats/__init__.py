"""Statistics on verdict frames: agreement, resampling, win rates, cost, power."""

from __future__ import annotations

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
from .cost import COST_METRICS, agent_spend, cost_ratios, judge_spend
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
from .summarize import summarize
from .winrates import DEFAULT_METHOD, RATE_NAMES, WIN_RATE_METHODS, position_bias, win_rates

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
    "declared_test",
    "cost_ratios",
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
