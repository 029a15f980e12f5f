"""Confidence intervals for one binomial proportion.

References:
- Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
  inference. JASA 22, 209-212.
- Newcombe, R. G. (1998a). Two-sided confidence intervals for the single proportion:
  comparison of seven methods. Statistics in Medicine 17, 857-872 (method 4: Wilson
  with continuity correction).
- Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits
  illustrated in the case of the binomial. Biometrika 26, 404-413.
- Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with
  small expected number of positive counts estimated from survey data. Survey
  Methodology 24, 193-201 (effective sample size with a degrees-of-freedom factor).
"""

from __future__ import annotations

import math
from functools import lru_cache

from evals.stats.distributions import falling_root, regularized_beta, t_quantile, two_sided_z

Interval = tuple[float, float]


def _check_counts(successes: float, trials: float) -> None:
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be within [0, {trials}], got {successes}")


def _wilson_at(proportion: float, size: float, z: float) -> Interval:
    z2 = z * z
    denominator = 1 + z2 / size
    center = (proportion + z2 / (2 * size)) / denominator
    half = (
        z / denominator * math.sqrt(proportion * (1 - proportion) / size + z2 / (4 * size * size))
    )
    return max(0.0, min(center - half, proportion)), min(1.0, max(center + half, proportion))


def wilson_interval(
    successes: int, trials: int, confidence: float = 0.95, continuity: bool = False
) -> Interval:
    """Wilson score interval for successes/trials (Wilson 1927).

    With `continuity=True`, the continuity-corrected form (Newcombe 1998a, method 4),
    which never under-covers in small samples at the price of width. The interval always
    lies within [0, 1] and contains the observed proportion.
    """
    _check_counts(successes, trials)
    z = two_sided_z(confidence)
    proportion = successes / trials
    if not continuity:
        return _wilson_at(proportion, trials, z)
    z2 = z * z
    denominator = 2 * (trials + z2)
    low = 0.0
    if successes > 0:
        root = z2 - 2 - 1 / trials + 4 * proportion * (trials * (1 - proportion) + 1)
        low = (2 * successes + z2 - 1 - z * math.sqrt(max(root, 0.0))) / denominator
    high = 1.0
    if successes < trials:
        root = z2 + 2 - 1 / trials + 4 * proportion * (trials * (1 - proportion) - 1)
        high = (2 * successes + z2 + 1 + z * math.sqrt(max(root, 0.0))) / denominator
    return max(0.0, low), min(1.0, high)


def clopper_pearson_interval(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """The exact (conservative) Clopper-Pearson interval from beta quantiles (1934)."""
    _check_counts(successes, trials)
    from scipy.special import betaincinv

    alpha = 1 - confidence
    low = 0.0 if successes == 0 else betaincinv(successes, trials - successes + 1, alpha / 2)
    high = (
        1.0 if successes == trials else betaincinv(successes + 1, trials - successes, 1 - alpha / 2)
    )
    return float(low), float(high)


def effective_sample_size(
    proportion: float, variance: float | None, n_cases: int, n_runs: int
) -> float:
    """n* = p(1-p)/v: the number of independent runs worth the repeats' information.

    Runs of one case are correlated, so k runs of a case count for less than k. The value
    is clamped to [n_cases, n_runs]: never less than one independent observation per case
    (perfectly repeatable cases), never more than the runs themselves. When the variance is
    zero the data cannot tell, and an all-pass or all-fail suite counts its cases only.
    """
    if n_cases <= 0 or n_runs < n_cases:
        raise ValueError(f"need 0 < n_cases <= n_runs, got {n_cases} and {n_runs}")
    if n_cases == 1:
        return float(n_runs)
    if proportion in (0.0, 1.0):
        return float(n_cases)
    if variance is None or variance <= 0:
        return float(n_runs)
    return min(max(proportion * (1 - proportion) / variance, float(n_cases)), float(n_runs))


def effective_wilson_interval(
    proportion: float,
    variance: float | None,
    n_cases: int,
    n_runs: int,
    confidence: float = 0.95,
) -> Interval:
    """Wilson interval at the effective sample size with the Korn-Graubard df factor.

    `variance` is the variance of the estimated proportion that respects clustering (the
    squared clustered standard error). The effective size n* is shrunk by (z / t_df)^2 with
    df = n_cases - 1, so few cases widen the interval the way a t interval would (Korn and
    Graubard 1998; Dean and Pagano 2015 found this variant to cover well in clusters).
    """
    if not 0 <= proportion <= 1:
        raise ValueError(f"proportion must be within [0, 1], got {proportion}")
    size = effective_sample_size(proportion, variance, n_cases, n_runs)
    z = two_sided_z(confidence)
    if n_cases > 1:
        t = t_quantile(1 - (1 - confidence) / 2, n_cases - 1)
        size *= (z / t) ** 2
    return _wilson_at(proportion, size, z)


def binomial_p_value(successes: int, trials: int, rate: float, alternative: str) -> float:
    """Exact one-sided binomial p-value of H0: rate, against a rate "greater" or "less".

    P(X >= successes) or P(X <= successes) for X ~ Binomial(trials, rate), through the
    regularized incomplete beta function (no scipy import).
    """
    _check_counts(successes, trials)
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie within [0, 1], got {rate}")
    if alternative == "greater":
        return 1.0 if successes == 0 else regularized_beta(successes, trials - successes + 1, rate)
    if alternative == "less":
        if successes == trials:
            return 1.0
        return 1.0 - regularized_beta(successes + 1, trials - successes, rate)
    raise ValueError(f"alternative must be greater or less, not {alternative!r}")


@lru_cache(maxsize=16384)
def clopper_pearson_limit(successes: int, trials: int, level: float, side: str) -> float:
    """One-sided Clopper-Pearson limit at `level`, the inversion of `binomial_p_value`.

    For pooled runs of a fixed set of cases, each with its own rate, the count of events
    is a sum of independent Bernoulli trials with unequal rates; its tails are no heavier
    than the binomial's with the mean rate (Hoeffding, W. (1956), On the distribution of
    the number of successes in independent trials, Annals of Mathematical Statistics
    27, 713-721), so the limit is valid (conservative) for the suite's mean rate too.
    With no events the upper limit is 1 - alpha^(1/n), with all events the lower limit
    alpha^(1/n), in closed form; otherwise bisection on the binomial tail.
    """
    _check_counts(successes, trials)
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    alpha = 1 - level
    if side == "lower":
        if successes == 0:
            return 0.0
        if successes == trials:
            return alpha ** (1 / trials)
        alternative, low, high = "greater", 0.0, successes / trials
    elif side == "upper":
        if successes == trials:
            return 1.0
        if successes == 0:
            return 1 - alpha ** (1 / trials)
        alternative, low, high = "less", successes / trials, 1.0
    else:
        raise ValueError(f"side must be lower or upper, not {side!r}")
    for _ in range(60):
        middle = (low + high) / 2
        rejected = binomial_p_value(successes, trials, middle, alternative) <= alpha
        if (side == "lower") == rejected:
            low = middle
        else:
            high = middle
    return high if side == "lower" else low


def effective_clopper_pearson_limit(
    proportion: float, size: float, level: float, side: str
) -> float:
    """One-sided Clopper-Pearson limit at `level` for `proportion` of an effective `size`
    (possibly fractional): the beta-quantile form of the exact limit with x = p·n
    successes (Korn and Graubard 1998 use it at the effective sample size of a cluster
    sample). With a whole `size` and p·n successes it equals `clopper_pearson_limit`.
    """
    if not 0 <= proportion <= 1:
        raise ValueError(f"proportion must be within [0, 1], got {proportion}")
    if size <= 0:
        raise ValueError(f"size must be positive, got {size}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    alpha = 1 - level
    successes = proportion * size
    if side == "lower":
        if successes <= 0:
            return 0.0
        a, b = successes, size - successes + 1
        return falling_root(lambda p: alpha - regularized_beta(a, b, p), 0.0, proportion, 1e-12)
    if side == "upper":
        if successes >= size:
            return 1.0
        a, b = successes + 1, size - successes
        return falling_root(lambda p: 1 - alpha - regularized_beta(a, b, p), proportion, 1.0, 1e-12)
    raise ValueError(f"side must be lower or upper, not {side!r}")
