"""Pure statistics for repeated pass/fail runs: numbers in, numbers out, no I/O.

Every function names its reference in its module's docstring; docs/statistics.md explains
which one the harness uses where and why.
"""

from evals.stats.bootstrap import (
    PairedBootstrap,
    cluster_bootstrap_quantile,
    paired_mean_bootstrap,
    paired_quantile_bootstrap,
    percentile,
)
from evals.stats.clustering import (
    clustered_se,
    intra_class_correlation,
    mean_of_means_variance,
    pearson_correlation,
)
from evals.stats.differences import normal_interval, stratified_difference_variance
from evals.stats.distributions import t_quantile, t_sf, two_sided_z
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
    gate_status,
    mean_differences,
)
from evals.stats.power import (
    case_difference_variance,
    minimum_detectable_drop,
    regression_gate_probability,
    shifted_case_rates,
    simulated_gate_probability,
)
from evals.stats.proportions import (
    binomial_p_value,
    clopper_pearson_interval,
    clopper_pearson_limit,
    effective_sample_size,
    effective_wilson_interval,
    wilson_interval,
)
from evals.stats.ratio import normal_limit, ratio_standard_error
from evals.stats.repeats import case_flake, flake_probability, flake_rate, pass_at_k, pass_hat_k
from evals.stats.sequential import crossing_probabilities, sequential_levels
from evals.stats.significance import benjamini_hochberg, holm

__all__ = [
    "CaseMeanDifference",
    "PairedBootstrap",
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
    "cluster_bootstrap_quantile",
    "clustered_se",
    "crossing_probabilities",
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
    "inverted_p_value",
    "mean_differences",
    "mean_of_means_variance",
    "minimum_detectable_drop",
    "normal_interval",
    "normal_limit",
    "paired_exact_interval",
    "paired_exact_limit",
    "paired_exact_p_value",
    "paired_mean_bootstrap",
    "paired_quantile_bootstrap",
    "paired_score_statistic",
    "pass_at_k",
    "pass_hat_k",
    "pearson_correlation",
    "percentile",
    "ratio_standard_error",
    "regression_gate_probability",
    "score_statistic",
    "sequential_levels",
    "shifted_case_rates",
    "simulated_gate_probability",
    "spending_shares",
    "stratified_difference_variance",
    "t_quantile",
    "t_sf",
    "two_sided_z",
    "wilson_interval",
]
