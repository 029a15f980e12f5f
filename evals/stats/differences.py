"""The difference of two agents' mean per-case pass rates if the suite were fixed.

The verdicts treat cases as a sample of tasks (`evals.stats.noninferiority`); this is
the narrower interval of a fixed set of cases, where only run-to-run noise counts.
"""

from __future__ import annotations

import math

from evals.stats.distributions import two_sided_z
from evals.stats.proportions import Interval


def stratified_difference_variance(
    rates_1: list[float], runs_1: list[int], rates_2: list[float], runs_2: list[int]
) -> float:
    """Variance of the difference of mean per-case rates when the suite is fixed.

    Treats each case as a stratum the suite will always contain, so only run-to-run noise
    counts: sum over cases of p(1-p)/(k-1) for each agent (the unbiased within-case
    variance of a mean of k runs), over the squared number of cases. Cases with a single
    run contribute nothing, since their noise cannot be estimated.
    """
    if not (len(rates_1) == len(runs_1) == len(rates_2) == len(runs_2)) or not rates_1:
        raise ValueError("need the same positive number of cases for both agents")
    total = 0.0
    for rates, runs in ((rates_1, runs_1), (rates_2, runs_2)):
        for rate, k in zip(rates, runs, strict=True):
            if k > 1:
                total += rate * (1 - rate) / (k - 1)
    return total / len(rates_1) ** 2


def normal_interval(estimate: float, variance: float, confidence: float = 0.95) -> Interval:
    """estimate ± z·sqrt(variance), the Wald interval for a difference on [-1, 1]."""
    half = two_sided_z(confidence) * math.sqrt(max(variance, 0.0))
    return max(-1.0, estimate - half), min(1.0, estimate + half)
