"""Normal and Student-t quantiles and t tail areas without importing scipy.

The summary of an evaluation runs on every `evals run`; scipy's import alone costs more
than the whole analysis, so the few distribution functions it needs live here. The t
distribution goes through the regularized incomplete beta function, evaluated with
Lentz's continued fraction (Press et al., Numerical Recipes, 3rd ed., section 6.4).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from statistics import NormalDist

_STANDARD_NORMAL = NormalDist()
_TINY = 1e-300
_EPS = 1e-16


def normal_quantile(probability: float) -> float:
    """The standard normal quantile (inverse CDF) at `probability`."""
    return _STANDARD_NORMAL.inv_cdf(probability)


def normal_cdf(x: float) -> float:
    """The standard normal CDF at `x`."""
    return _STANDARD_NORMAL.cdf(x)


def two_sided_z(confidence: float) -> float:
    """z such that a standard normal lies within ±z with probability `confidence`."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return normal_quantile(1 - (1 - confidence) / 2)


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with `df` degrees of freedom.

    Near zero the tail is computed from its complement, I_{t²/(df+t²)}(1/2, df/2), whose
    argument keeps t² exactly instead of rounding it away inside df/(df+t²).
    """
    squared = t * t
    if squared < df:
        tail = 0.5 - 0.5 * regularized_beta(0.5, df / 2, squared / (df + squared))
    else:
        tail = 0.5 * regularized_beta(df / 2, 0.5, df / (df + squared))
    return tail if t >= 0 else 1.0 - tail


@lru_cache(maxsize=1024)
def t_quantile(probability: float, df: float) -> float:
    """The Student-t quantile at `probability` (bisection then Newton on `t_sf`)."""
    if not 0 < probability < 1:
        raise ValueError(f"probability must be strictly between 0 and 1, got {probability}")
    if probability < 0.5:
        return -t_quantile(1 - probability, df)
    target = 1 - probability
    low, high = 0.0, 1.0
    while t_sf(high, df) > target:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if t_sf(middle, df) > target:
            low = middle
        else:
            high = middle
        if high - low < 1e-15 * max(1.0, high):
            break
    return (low + high) / 2


def falling_root(
    gap: Callable[[float], float], low: float, high: float, precision: float = 1e-10
) -> float:
    """Where `gap`, falling from `low` to `high`, crosses 0 (within `precision`): the
    Illinois variant of regula falsi (Dowell and Jarratt 1971), bisecting while an end is
    infinite. An end is returned when `gap` does not change sign between them."""
    at_low, at_high = gap(low), gap(high)
    if at_low <= 0:
        return low
    if at_high >= 0:
        return high
    side = 0
    for _ in range(200):
        if high - low <= precision:
            break
        if math.isinf(at_low) or math.isinf(at_high):
            middle = (low + high) / 2
        else:
            middle = high - at_high * (high - low) / (at_high - at_low)
            if not low < middle < high:
                middle = (low + high) / 2
        value = gap(middle)
        if value > 0:
            low, at_low = middle, value
            at_high = at_high / 2 if side == 1 else at_high
            side = 1
        else:
            high, at_high = middle, value
            at_low = at_low / 2 if side == -1 else at_low
            side = -1
        if value == 0:
            return middle
    return (low + high) / 2
