"""What k repeats of a case say: pass@k, pass^k and how often repeats disagree.

References:
- Hoeffding, W. (1948). A class of statistics with asymptotically normal distribution.
  Annals of Mathematical Statistics 19, 293-325 (U-statistics: 2x(k-x)/(k(k-1)) is the
  unbiased estimator of the probability that two runs disagree).
- Chen, M. et al. (2021). Evaluating large language models trained on code.
  arXiv:2107.03374 (unbiased pass@k = 1 - C(n-c, k)/C(n, k)).
- Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction in
  real-world domains. arXiv:2406.12045 (pass^k = C(c, k)/C(n, k)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from evals.stats.distributions import t_quantile
from evals.stats.proportions import Interval


def _check(n: int, c: int, k: int) -> None:
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be within [1, n={n}], got {k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k runs drawn without replacement from n passes.

    Unbiased estimator of Chen et al. (2021) with c passing runs out of n; exact
    integer arithmetic.
    """
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that all of k runs drawn without replacement from n pass (tau-bench)."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def case_flake(passes: int, runs: int) -> float | None:
    """Probability that two different repeats of a case disagree: 2x(k-x)/(k(k-1)).

    0 for a case that always passes or always fails, 1 at most; None with fewer than two
    runs, where disagreement cannot be observed.
    """
    if runs < 2:
        return None
    if not 0 <= passes <= runs:
        raise ValueError(f"passes must be within [0, {runs}], got {passes}")
    return 2 * passes * (runs - passes) / (runs * (runs - 1))


def flake_rate(outcomes: Sequence[tuple[int, int]]) -> float | None:
    """Share of cases (with at least two runs) that both passed and failed.

    The definition a team reads in a gate ("no more than 3 % unstable cases"); cases run
    once are left out. `outcomes` holds (passes, runs) per case.
    """
    eligible = [(x, k) for x, k in outcomes if k >= 2]
    if not eligible:
        return None
    return sum(1 for x, k in eligible if 0 < x < k) / len(eligible)


@lru_cache(maxsize=4096)
def _flake_noise(passes: int, runs: int) -> float:
    """Half the run noise of one case's flake estimate: half the variance of
    2x(k-x)/(k(k-1)) for x ~ Binomial(k, q), q the case's rate, or Jeffreys' 0.5/(k+1)
    when its runs all agree (the floor `case_mean_difference` uses for pass rates)."""
    agree = passes in (0, runs)
    rate = 0.5 / (runs + 1) if agree else passes / runs
    moments = [0.0, 0.0]
    for x in range(runs + 1):
        weight = math.comb(runs, x) * rate**x * (1 - rate) ** (runs - x)
        flake = 2 * x * (runs - x) / (runs * (runs - 1))
        moments[0] += weight * flake
        moments[1] += weight * flake * flake
    return (moments[1] - moments[0] ** 2) / 2


def flake_probability(
    outcomes: Sequence[tuple[int, int]], confidence: float = 0.95
) -> tuple[float, Interval] | None:
    """Probability that two repeats of a case disagree, averaged over cases, with its interval.

    Each case's 2x(k-x)/(k(k-1)) is unbiased for 2p(1-p) whatever its k, so the mean is a
    property of the agent, not of the number of repeats (the share of cases that both
    passed and failed, `flake_rate`, grows towards 1 as k grows). The interval treats the
    case as the unit. Per-case flakes pile up at 0 (stable cases), a skew under which the
    plain t interval's lower limit is too high, so each limit inverts Johnson's modified
    t, which corrects for the sample skewness (Johnson, N. J. (1978), Modified t tests and
    confidence intervals for asymmetrical populations, JASA 73, 536-544), at
    (1 + confidence)/2 on its side. Its standard deviation is never below half the run
    noise of the per-case estimates (at Jeffreys' rate 0.5/(k+1) for a case whose runs
    all agree), so stable cases do not give a zero-width interval. `outcomes` holds
    (passes, runs) per case; cases with fewer than two runs are left out. None when no
    case has two runs; with one case the interval is [0, 1].
    """
    eligible = [(x, k) for x, k in outcomes if k >= 2]
    if not eligible:
        return None
    for x, k in eligible:
        if not 0 <= x <= k:
            raise ValueError(f"passes must be within [0, {k}], got {x}")
    flakes = [2 * x * (k - x) / (k * (k - 1)) for x, k in eligible]
    count = len(flakes)
    mean = sum(flakes) / count
    if count == 1:
        return mean, (0.0, 1.0)
    spread = sum((f - mean) ** 2 for f in flakes) / (count - 1)
    floor = sum(_flake_noise(x, k) for x, k in eligible) / count
    deviation = math.sqrt(max(spread, floor))
    skewness = 0.0
    if count > 2 and spread > 0:
        third = sum((f - mean) ** 3 for f in flakes) * count / ((count - 1) * (count - 2))
        skewness = third / spread**1.5
    critical = t_quantile(1 - (1 - confidence) / 2, count - 1)
    low = _johnson_limit(mean, deviation, skewness, count, critical)
    high = _johnson_limit(mean, deviation, skewness, count, -critical)
    return mean, (max(0.0, low), min(1.0, high))


def _johnson_limit(mean: float, deviation: float, skewness: float, count: int, t: float) -> float:
    """The mean mu at which Johnson's t equals `t` (positive: lower limit, negative: upper).

    With D = mean - mu, Johnson's statistic is (D + g·s/(6n) + g·D^2/(3s))·sqrt(n)/s; the
    limit solves the quadratic for the root nearest the plain t limit D = t·s/sqrt(n).
    Without a real root the limit is the end of [0, 1] on its side.
    """
    plain = t * deviation / math.sqrt(count)
    curvature = skewness / (3 * deviation)
    constant = skewness * deviation / (6 * count) - plain
    if abs(curvature) < 1e-12:
        return mean + constant
    discriminant = 1 - 4 * curvature * constant
    if discriminant < 0:
        return 0.0 if t > 0 else 1.0
    roots = [(-1 + sign * math.sqrt(discriminant)) / (2 * curvature) for sign in (1, -1)]
    return mean - min(roots, key=lambda root: abs(root - plain))
