"""What k repeats of a case say: pass@k, pass^k and how often repeats disagree.

References:
- Hoeffding, W. (1948). A class of statistics with a asymptotically normal distribution.
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

from evals.stats.clustering import mean_of_means_variance
from evals.stats.proportions import Interval, effective_wilson_interval


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


def flake_probability(
    outcomes: Sequence[tuple[int, int]], confidence: float = 0.95
) -> tuple[float, Interval] | None:
    """Probability that two repeats of a case disagree, averaged over cases, with its interval.

    Each case's 2x(k-x)/(k(k-1)) is unbiased for 2p(1-p) whatever its k, so the mean is a
    property of the agent, not of the number of repeats (the share of cases that both
    passed and failed, `flake_rate`, grows towards 1 as k grows). The interval treats the
    case as the unit: the effective-n Wilson interval of the mean (as for a suite's pass
    rate), whose effective size is never below the number of cases (the largest variance
    a mean of values within [0, 1] can have, Bhatia and Davis 2000). `outcomes` holds
    (passes, runs) per case; cases with fewer than two runs are left out. None when no
    case has two runs.
    """
    eligible = [(x, k) for x, k in outcomes if k >= 2]
    if not eligible:
        return None
    flakes = [2 * x * (k - x) / (k * (k - 1)) for x, k in eligible]
    for x, k in eligible:
        if not 0 <= x <= k:
            raise ValueError(f"passes must be within [0, {k}], got {x}")
    mean = sum(flakes) / len(flakes)
    runs = sum(k for _, k in eligible)
    interval = effective_wilson_interval(
        mean, mean_of_means_variance(flakes), len(flakes), runs, confidence
    )
    return mean, interval
