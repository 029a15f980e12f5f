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
from evals.stats.differences import (
    mover_difference,
    newcombe_interval,
    normal_interval,
    paired_newcombe_interval,
    stratified_difference_variance,
)
from evals.stats.distributions import t_quantile, t_sf, two_sided_z
from evals.stats.power import (
    cases_needed,
    difference_standard_error,
    minimum_detectable_effect,
    power_to_detect,
    repeats_needed,
)
from evals.stats.proportions import (
    clopper_pearson_interval,
    effective_sample_size,
    effective_wilson_interval,
    wilson_interval,
)
from evals.stats.ratio import ratio_estimate
from evals.stats.repeats import case_flake, flake_rate, pass_at_k, pass_hat_k
from evals.stats.significance import (
    benjamini_hochberg,
    boschloo_p_value,
    holm,
    mcnemar_exact,
    paired_t_p_value,
)

__all__ = [
    "PairedBootstrap",
    "benjamini_hochberg",
    "boschloo_p_value",
    "case_flake",
    "cases_needed",
    "clopper_pearson_interval",
    "cluster_bootstrap_quantile",
    "clustered_se",
    "difference_standard_error",
    "effective_sample_size",
    "effective_wilson_interval",
    "flake_rate",
    "holm",
    "intra_class_correlation",
    "mcnemar_exact",
    "mean_of_means_variance",
    "minimum_detectable_effect",
    "mover_difference",
    "newcombe_interval",
    "normal_interval",
    "paired_mean_bootstrap",
    "paired_newcombe_interval",
    "paired_quantile_bootstrap",
    "paired_t_p_value",
    "pass_at_k",
    "pass_hat_k",
    "pearson_correlation",
    "percentile",
    "power_to_detect",
    "ratio_estimate",
    "repeats_needed",
    "stratified_difference_variance",
    "t_quantile",
    "t_sf",
    "two_sided_z",
    "wilson_interval",
]
