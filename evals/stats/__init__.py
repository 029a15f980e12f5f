"""Pure statistics for repeated pass/fail runs: numbers in, numbers out, no I/O.

Every function names its reference in its module's docstring; docs/statistics.md explains
which one the harness uses where and why.

The names below load their module on first use (the numpy-based ones import numpy then),
so a command whose evaluation needs only closed-form statistics never imports numpy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.stats.bootstrap import (
        PairedBootstrap,
        paired_mean_bootstrap,
        paired_quantile_bootstrap,
        paired_total_bootstrap,
    )
    from evals.stats.clustering import (
        clustered_se,
        clustered_se_of_counts,
        intra_class_correlation,
        intra_class_correlation_of_counts,
        mean_of_means_variance,
        pearson_correlation,
    )
    from evals.stats.decisions import gate_status
    from evals.stats.distributions import normal_quantile, t_quantile, t_sf, two_sided_z
    from evals.stats.exact import (
        exact_rejection_probability,
        exact_score_interval,
        exact_score_limit,
        exact_score_p_value,
        paired_exact_interval,
        paired_exact_limit,
        paired_exact_p_value,
        paired_score_statistic,
        score_statistic,
    )
    from evals.stats.futility import futile
    from evals.stats.multiplicity import (
        agreeing_confidence,
        alpha_shares,
        bh_confidences,
        fcr_confidence,
        holm_confidences,
        inverted_p_value,
        spending_shares,
    )
    from evals.stats.noninferiority import (
        CaseMeanDifference,
        case_mean_difference,
        mean_differences,
    )
    from evals.stats.power import (
        case_difference_variance,
        minimum_detectable_drop,
        regression_gate_probability,
        run_noise_variance,
        shifted_case_rates,
        simulated_gate_probability,
    )
    from evals.stats.proportions import (
        binomial_p_value,
        clopper_pearson_interval,
        clopper_pearson_limit,
        effective_clopper_pearson_limit,
        effective_sample_size,
        effective_wilson_interval,
        wilson_interval,
    )
    from evals.stats.quantiles import (
        cluster_quantile_interval,
        percentile,
        weighted_percentile,
    )
    from evals.stats.ratio import normal_limit, ratio_standard_error
    from evals.stats.repeats import case_flake, flake_probability, flake_rate, pass_at_k, pass_hat_k
    from evals.stats.sequential import crossing_probabilities, sequential_levels
    from evals.stats.significance import benjamini_hochberg, holm, weighted_holm
    from evals.stats.stratified import (
        StratifiedDifference,
        detectable_drop,
        stratified_difference,
    )

__all__ = [
    "CaseMeanDifference",
    "PairedBootstrap",
    "StratifiedDifference",
    "agreeing_confidence",
    "alpha_shares",
    "benjamini_hochberg",
    "bh_confidences",
    "binomial_p_value",
    "case_difference_variance",
    "case_flake",
    "case_mean_difference",
    "clopper_pearson_interval",
    "clopper_pearson_limit",
    "cluster_quantile_interval",
    "clustered_se",
    "clustered_se_of_counts",
    "crossing_probabilities",
    "detectable_drop",
    "effective_clopper_pearson_limit",
    "effective_sample_size",
    "effective_wilson_interval",
    "exact_rejection_probability",
    "exact_score_interval",
    "exact_score_limit",
    "exact_score_p_value",
    "fcr_confidence",
    "flake_probability",
    "flake_rate",
    "futile",
    "gate_status",
    "holm",
    "holm_confidences",
    "intra_class_correlation",
    "intra_class_correlation_of_counts",
    "inverted_p_value",
    "mean_differences",
    "mean_of_means_variance",
    "minimum_detectable_drop",
    "normal_limit",
    "normal_quantile",
    "paired_exact_interval",
    "paired_exact_limit",
    "paired_exact_p_value",
    "paired_mean_bootstrap",
    "paired_quantile_bootstrap",
    "paired_score_statistic",
    "paired_total_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "pearson_correlation",
    "percentile",
    "ratio_standard_error",
    "regression_gate_probability",
    "run_noise_variance",
    "score_statistic",
    "sequential_levels",
    "shifted_case_rates",
    "simulated_gate_probability",
    "spending_shares",
    "stratified_difference",
    "t_quantile",
    "t_sf",
    "two_sided_z",
    "weighted_holm",
    "weighted_percentile",
    "wilson_interval",
]

_MODULES = {
    "CaseMeanDifference": "noninferiority",
    "PairedBootstrap": "bootstrap",
    "StratifiedDifference": "stratified",
    "agreeing_confidence": "multiplicity",
    "alpha_shares": "multiplicity",
    "benjamini_hochberg": "significance",
    "bh_confidences": "multiplicity",
    "binomial_p_value": "proportions",
    "case_difference_variance": "power",
    "case_flake": "repeats",
    "case_mean_difference": "noninferiority",
    "clopper_pearson_interval": "proportions",
    "clopper_pearson_limit": "proportions",
    "cluster_quantile_interval": "quantiles",
    "clustered_se": "clustering",
    "clustered_se_of_counts": "clustering",
    "crossing_probabilities": "sequential",
    "detectable_drop": "stratified",
    "effective_clopper_pearson_limit": "proportions",
    "effective_sample_size": "proportions",
    "effective_wilson_interval": "proportions",
    "exact_rejection_probability": "exact",
    "exact_score_interval": "exact",
    "exact_score_limit": "exact",
    "exact_score_p_value": "exact",
    "fcr_confidence": "multiplicity",
    "flake_probability": "repeats",
    "flake_rate": "repeats",
    "futile": "futility",
    "gate_status": "decisions",
    "holm": "significance",
    "holm_confidences": "multiplicity",
    "intra_class_correlation": "clustering",
    "intra_class_correlation_of_counts": "clustering",
    "inverted_p_value": "multiplicity",
    "mean_differences": "noninferiority",
    "mean_of_means_variance": "clustering",
    "minimum_detectable_drop": "power",
    "normal_limit": "ratio",
    "normal_quantile": "distributions",
    "paired_exact_interval": "exact",
    "paired_exact_limit": "exact",
    "paired_exact_p_value": "exact",
    "paired_mean_bootstrap": "bootstrap",
    "paired_total_bootstrap": "bootstrap",
    "paired_quantile_bootstrap": "bootstrap",
    "paired_score_statistic": "exact",
    "pass_at_k": "repeats",
    "pass_hat_k": "repeats",
    "pearson_correlation": "clustering",
    "percentile": "quantiles",
    "weighted_percentile": "quantiles",
    "weighted_holm": "significance",
    "ratio_standard_error": "ratio",
    "regression_gate_probability": "power",
    "run_noise_variance": "power",
    "score_statistic": "exact",
    "sequential_levels": "sequential",
    "shifted_case_rates": "power",
    "simulated_gate_probability": "power",
    "spending_shares": "multiplicity",
    "stratified_difference": "stratified",
    "t_quantile": "distributions",
    "t_sf": "distributions",
    "two_sided_z": "distributions",
    "wilson_interval": "proportions",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
