"""The observed quantile of a sample (numpy's method='inverted_cdf', Hyndman, R. J. and
Fan, Y. (1996), Sample Quantiles in Statistical Packages, definition 1), in plain Python:
every evaluation reports a p95 latency, and a small one should not import numpy for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], quantile: float) -> float:
    """The inverted-CDF quantile: the smallest value with at least `quantile` of the data
    at or below it (numpy's method='inverted_cdf'), so a p95 is an observed value."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    index = max(0, math.ceil(quantile * len(ordered) - 1e-9) - 1)
    return float(ordered[min(index, len(ordered) - 1)])
