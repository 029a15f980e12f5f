"""Confidence intervals for a difference of two proportions or two mean pass rates.

References:
- Newcombe, R. G. (1998b). Interval estimation for the difference between independent
  proportions: comparison of eleven methods. Statistics in Medicine 17, 873-890 (method 10).
- Newcombe, R. G. (1998c). Improved confidence intervals for the difference between
  binomial proportions based on paired data. Statistics in Medicine 17, 2635-2650
  (method 10, with the continuity-corrected correlation phi*).
- Zou, G. Y. and Donner, A. (2008). Construction of confidence limits about effect
  measures: a general approach. Statistics in Medicine 27, 1693-1702 (MOVER).
"""

from __future__ import annotations

import math

from evals.stats.distributions import two_sided_z
from evals.stats.proportions import Interval, wilson_interval


def mover_difference(
    estimate_1: float,
    interval_1: Interval,
    estimate_2: float,
    interval_2: Interval,
    correlation: float = 0.0,
) -> Interval:
    """MOVER limits for estimate_1 - estimate_2 from each estimate's own interval.

    Zou and Donner (2008): the limits of a difference are recovered from the limits of
    its parts, so asymmetric intervals (Wilson near 0 or 1) stay asymmetric. `correlation`
    is the correlation between the two estimates (zero when independent).
    """
    low_1, high_1 = interval_1
    low_2, high_2 = interval_2
    difference = estimate_1 - estimate_2
    down_1, up_1 = estimate_1 - low_1, high_1 - estimate_1
    down_2, up_2 = estimate_2 - low_2, high_2 - estimate_2
    lower = difference - math.sqrt(max(down_1**2 + up_2**2 - 2 * correlation * down_1 * up_2, 0.0))
    upper = difference + math.sqrt(max(up_1**2 + down_2**2 - 2 * correlation * up_1 * down_2, 0.0))
    return max(-1.0, lower), min(1.0, upper)


def newcombe_interval(x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95) -> Interval:
    """Interval for p1 - p2 from two independent samples (Newcombe 1998b, method 10).

    The square-and-add (MOVER) combination of the two Wilson score intervals.
    """
    p1, p2 = x1 / n1, x2 / n2
    return mover_difference(
        p1, wilson_interval(x1, n1, confidence), p2, wilson_interval(x2, n2, confidence)
    )


def _paired_phi(both: int, first_only: int, second_only: int, neither: int) -> float:
    total = both + first_only + second_only + neither
    margins = (
        (both + first_only)
        * (second_only + neither)
        * (both + second_only)
        * (first_only + neither)
    )
    if margins == 0:
        return 0.0
    cross: float = both * neither - first_only * second_only
    if cross > total / 2:
        cross -= total / 2
    elif cross >= 0:
        cross = 0.0
    return cross / math.sqrt(margins)


def paired_newcombe_interval(
    both: int, first_only: int, second_only: int, neither: int, confidence: float = 0.95
) -> Interval:
    """Interval for p1 - p2 from paired binary outcomes (Newcombe 1998c, method 10).

    `first_only` counts pairs where the first passed and the second failed. The Wilson
    intervals of the two marginal proportions are combined with the continuity-corrected
    correlation phi*, which makes the interval narrower when outcomes agree.
    """
    total = both + first_only + second_only + neither
    if total <= 0:
        raise ValueError("the paired table is empty")
    p1, p2 = (both + first_only) / total, (both + second_only) / total
    return mover_difference(
        p1,
        wilson_interval(both + first_only, total, confidence),
        p2,
        wilson_interval(both + second_only, total, confidence),
        _paired_phi(both, first_only, second_only, neither),
    )


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
