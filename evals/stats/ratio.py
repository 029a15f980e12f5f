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

from evals.stats.distributions import normal_quantile


def ratio_standard_error(
    numerators: Sequence[float], denominators: Sequence[float]
) -> tuple[float, float | None] | None:
    """(sum(y)/sum(x), its delta-method standard error) from per-case totals.

    None when nothing was accepted; the standard error is None with fewer than two cases.
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
    return estimate, math.sqrt(residuals * count / (count - 1)) / total_x


def normal_limit(estimate: float, standard_error: float, level: float, side: str) -> float:
    """One-sided normal limit estimate ∓ z·SE at `level` (side "lower" or "upper").

    The limits of cost per accepted run (clipped at 0 by the caller) and, on the log
    scale, of the bootstrap cost and latency ratios: one formula for the interval a
    report shows and the limits a gate decides on.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be lower or upper, not {side!r}")
    half = normal_quantile(level) * standard_error
    return estimate - half if side == "lower" else estimate + half
