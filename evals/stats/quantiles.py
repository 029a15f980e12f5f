"""The observed quantile of a sample (numpy's method='inverted_cdf', Hyndman, R. J. and
Fan, Y. (1996), Sample Quantiles in Statistical Packages, definition 1), and its interval
when the values come in correlated groups (the repeats of a case): Woodruff, R. S. (1952),
Confidence intervals for medians and other position measures, JASA 47, 635-646, as survey
statistics computes it for cluster samples (Francisco, C. A. and Fuller, W. A. (1991),
Quantile estimation with a complex survey design, Annals of Statistics 19, 454-469).

In plain Python: every evaluation reports a p95 latency with its interval, and neither
should need numpy or resampling.
"""

from __future__ import annotations

import bisect
import itertools
import math
from array import array
from collections.abc import Sequence

from evals.stats.proportions import Interval, effective_wilson_interval

_ROUNDING = 1e-9
"""Slack for `quantile * count` computed in floating point (0.95 * 100 is 94.99999...)."""


def _at_or_above(ordered: Sequence[float], share: float) -> int:
    """The 0-based index of the inverted-CDF quantile at `share` of sorted `ordered`."""
    index = max(0, math.ceil(share * len(ordered) - _ROUNDING) - 1)
    return min(index, len(ordered) - 1)


def percentile(values: Sequence[float], quantile: float) -> float:
    """The inverted-CDF quantile: the smallest value with at least `quantile` of the data
    at or below it (numpy's method='inverted_cdf'), so a p95 is an observed value."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    return float(ordered[_at_or_above(ordered, quantile)])


class _Ordered:
    """Values with weights (how many runs each stands for) in ascending order, read by
    the 0-based position a run would have in the list of all runs sorted."""

    def __init__(self, values: Sequence[float], weights: Sequence[int]) -> None:
        if len(values) != len(weights):
            raise ValueError(f"{len(values)} values but {len(weights)} weights")
        # sorted by value alone (stable), held as machine numbers: a million runs' latency
        # items take 16 bytes each here, not a tuple and two objects each
        order = sorted(range(len(values)), key=values.__getitem__)
        self.values = array("d", (values[i] for i in order))
        self.ends = array("q", itertools.accumulate(weights[i] for i in order))
        self.count = self.ends[-1] if self.ends else 0

    def at(self, position: int) -> float:
        """The value at 0-based `position` of the runs sorted."""
        return float(self.values[bisect.bisect_right(self.ends, position)])

    def quantile(self, share: float) -> float:
        """The inverted-CDF quantile at `share`."""
        index = max(0, math.ceil(share * self.count - _ROUNDING) - 1)
        return self.at(min(index, self.count - 1))


def weighted_percentile(values: Sequence[float], weights: Sequence[int], quantile: float) -> float:
    """`percentile` of the runs `values` stand for, value i standing for `weights[i]`
    runs (a quantile sketch's items); equal to `percentile` when every weight is 1."""
    ordered = _Ordered(values, weights)
    if not ordered.count:
        raise ValueError("no values")
    return ordered.quantile(quantile)


def cluster_quantile_interval(
    groups: Sequence[Sequence[float]],
    quantile: float = 0.95,
    confidence: float = 0.95,
    weights: Sequence[Sequence[int]] | None = None,
) -> tuple[float, Interval]:
    """(the inverted-CDF quantile of all values, Woodruff's interval for it), each group
    the runs of one case.

    The share of values at or below the estimate is a proportion whose runs are clustered
    by case; its interval is the Wilson interval at the effective sample size, with the
    Korn-Graubard factor for few cases (`effective_wilson_interval`, as the pass rates),
    from the share's cluster-robust (CR1) variance. The two limits of that interval are
    carried back through the sorted values, rounded outward to the order statistics that
    bracket them (the lower limit at floor(n·p_low), the upper at ceil(n·p_high) + 1, both
    1-based), so the limits are observed values and the interval holds the estimate.
    Needs two cases or more: with one, its runs' correlation cannot be estimated.
    `weights[i][j]`, when given, is how many runs `groups[i][j]` stands for (the items of
    a quantile sketch); without, every value is one run.
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be within (0, 1), got {quantile}")
    sized = [
        (g, [1] * len(g) if weights is None else list(weights[i]))
        for i, g in enumerate(groups)
        if len(g)
    ]
    if len(sized) < 2:
        raise ValueError("a clustered quantile interval needs values of two cases or more")
    ordered = _Ordered([v for g, _ in sized for v in g], [w for _, ws in sized for w in ws])
    count = ordered.count
    estimate = ordered.quantile(quantile)
    at_or_below = [
        (sum(w for v, w in zip(g, ws, strict=True) if v <= estimate), sum(ws)) for g, ws in sized
    ]
    share = sum(inside for inside, _ in at_or_below) / count
    meat = sum((inside - size * share) ** 2 for inside, size in at_or_below)
    variance = meat / count**2 * len(sized) / (len(sized) - 1)
    low, high = effective_wilson_interval(quantile, variance, len(sized), count, confidence)
    lower = max(0, math.floor(low * count + _ROUNDING) - 1)
    upper = min(count - 1, math.ceil(high * count - _ROUNDING))
    return estimate, (ordered.at(lower), ordered.at(upper))
