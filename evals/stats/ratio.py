"""Cost per accepted task: total cost over passing runs, with a delta-method interval.

The chapter on evaluation argues that cost must be read per accepted task, not per call:
a cheap agent that fails often is expensive. The estimate is a ratio of two case totals,
so its variance comes from the linearization of a ratio estimator with cases as clusters
(Cochran, W. G. (1977), Sampling Techniques, 3rd ed., section 6.4), with the G/(G-1)
factor used for clustered standard errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evals.stats.distributions import two_sided_z

Interval = tuple[float, float]


def ratio_estimate(
    numerators: Sequence[float], denominators: Sequence[float], confidence: float = 0.95
) -> tuple[float, Interval | None] | None:
    """(sum(y)/sum(x), interval) from per-case totals y (cost) and x (accepted runs).

    None when nothing was accepted; the interval is None with fewer than two cases. The
    lower limit is clipped at zero (a cost cannot be negative).
    """
    if len(numerators) != len(denominators):
        raise ValueError("need one numerator and one denominator per case")
    total_x = sum(denominators)
    if total_x <= 0:
        return None
    estimate = sum(numerators) / total_x
    count = len(numerators)
    if count < 2:
        return estimate, None
    residuals = sum((y - estimate * x) ** 2 for y, x in zip(numerators, denominators, strict=True))
    standard_error = math.sqrt(residuals * count / (count - 1)) / total_x
    half = two_sided_z(confidence) * standard_error
    return estimate, (max(0.0, estimate - half), estimate + half)
