"""Statistics on verdict frames: agreement, resampling, win rates, cost, power."""

from __future__ import annotations

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
from .gold import GoldResult, gold_labels, judge_vs_gold, labeler_agreement
from .judges import SEED_DISAGREEMENT_TRIGGER, consensus, judge_agreement
from .means import CLUSTER_MEAN_METHODS, cluster_mean
from .missing import INVALID_RULES, NO_ANSWER_RULES, apply_missing_rule, missing_bounds
from .multiplicity import holm, holm_table
from .power import (
    PowerResult,
    mde_curve,
    min_detectable_net_win,
    outcome_icc,
    power_curve,
    power_net_win,
    simulated_power,
    solve_power,
    tasks_needed,
)
from .ppi import PPI_METHODS, ppi_win_rates
from .resample import BOOTSTRAP_METHODS, BootstrapResult, cluster_bootstrap
from .summarize import summarize
from .winrates import DEFAULT_METHOD, RATE_NAMES, WIN_RATE_METHODS, position_bias, win_rates

# No ``power = solve_power`` alias: it would hide the ``evalstats.stats.power`` submodule.
__all__ = [
    "BOOTSTRAP_METHODS",
    "CLUSTER_MEAN_METHODS",
    "COST_METRICS",
    "INVALID_RULES",
    "NO_ANSWER_RULES",
    "PPI_METHODS",
    "DEFAULT_METHOD",
    "RATE_NAMES",
    "SEED_DISAGREEMENT_TRIGGER",
    "WIN_RATE_METHODS",
    "AgreementResult",
    "BootstrapResult",
    "CohenKappaResult",
    "FleissKappaResult",
    "GoldResult",
    "KrippendorffAlphaResult",
    "PowerResult",
    "ProportionCI",
    "agent_spend",
    "apply_missing_rule",
    "cluster_bootstrap",
    "cluster_mean",
    "cohen_kappa",
    "cohen_kappa_table",
    "consensus",
    "contingency_table",
    "cost_ratios",
    "coverage_study",
    "dimension_means",
    "gold_labels",
    "fleiss_kappa",
    "gwet_ac1",
    "holm",
    "holm_table",
    "judge_agreement",
    "judge_vs_gold",
    "judge_spend",
    "krippendorff_alpha",
    "labeler_agreement",
    "mde_curve",
    "min_detectable_net_win",
    "missing_bounds",
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
    "simulated_power",
    "solve_power",
    "summarize",
    "tasks_needed",
    "two_rater_agreement",
    "win_rates",
]
