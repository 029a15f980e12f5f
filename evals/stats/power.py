"""How many cases and repeats a comparison needs: power and minimum detectable effect.

Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 5 ("power
analysis"): the variance of a difference of two agents' mean scores over n cases with k
repeats is (Var_between_A + Var_between_B - 2 Cov + (sigma2_A + sigma2_B) / k) / n, where
the between-case parts come from case difficulty and sigma2 is the run-to-run noise.
Here a pass rate p is split by the intra-class correlation: between = icc·p(1-p),
within = (1-icc)·p(1-p), and the two agents' case rates correlate by `correlation`.
"""

from __future__ import annotations

import math

from evals.stats.distributions import normal_cdf, normal_quantile


def _components(pass_rate: float, icc: float) -> tuple[float, float]:
    if not 0 <= pass_rate <= 1 or not 0 <= icc <= 1:
        raise ValueError("pass_rate and icc must lie within [0, 1]")
    total = pass_rate * (1 - pass_rate)
    return icc * total, (1 - icc) * total


def _detection_z(alpha: float, power: float) -> float:
    return normal_quantile(1 - alpha / 2) + normal_quantile(power)


def difference_standard_error(
    n_cases: int, repeats: int, pass_rate: float, icc: float, correlation: float = 0.0
) -> float:
    """Standard error of the difference of two agents' mean per-case pass rates."""
    if n_cases < 1 or repeats < 1:
        raise ValueError("need at least one case and one repeat")
    between, within = _components(pass_rate, icc)
    variance = 2 * between * (1 - correlation) + 2 * within / repeats
    return math.sqrt(variance / n_cases)


def minimum_detectable_effect(
    n_cases: int,
    repeats: int,
    pass_rate: float,
    icc: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float:
    """Smallest true difference a two-sided test at `alpha` detects with `power`."""
    z = _detection_z(alpha, power)
    return z * difference_standard_error(n_cases, repeats, pass_rate, icc, correlation)


def power_to_detect(
    effect: float,
    n_cases: int,
    repeats: int,
    pass_rate: float,
    icc: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
) -> float:
    """Probability that a two-sided test at `alpha` finds a true difference `effect`."""
    standard_error = difference_standard_error(n_cases, repeats, pass_rate, icc, correlation)
    if standard_error == 0:
        return 1.0 if effect else alpha
    z = normal_quantile(1 - alpha / 2)
    shift = abs(effect) / standard_error
    return normal_cdf(shift - z) + normal_cdf(-shift - z)


def cases_needed(
    effect: float,
    repeats: int,
    pass_rate: float,
    icc: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int:
    """Cases needed to detect a true difference `effect` with `power` (rounded up)."""
    if effect == 0:
        raise ValueError("a zero effect cannot be detected")
    z = _detection_z(alpha, power)
    unit_se = difference_standard_error(1, repeats, pass_rate, icc, correlation)
    return max(1, math.ceil((z * unit_se / effect) ** 2))


def repeats_needed(
    effect: float,
    n_cases: int,
    pass_rate: float,
    icc: float,
    correlation: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> int | None:
    """Fewest repeats with which `n_cases` cases detect `effect`, or None if no number can.

    Repeats only shrink the within-case part of the variance; when the between-case part
    alone already exceeds what the effect allows, only more cases help.
    """
    if effect == 0:
        raise ValueError("a zero effect cannot be detected")
    between, within = _components(pass_rate, icc)
    z = _detection_z(alpha, power)
    room = n_cases * (effect / z) ** 2 - 2 * between * (1 - correlation)
    if room <= 0:
        return None
    return max(1, math.ceil(2 * within / room - 1e-12))
