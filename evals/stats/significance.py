"""Exact tests for pass/fail counts and corrections for testing many cases or tags.

References:
- McNemar, Q. (1947). Note on the sampling error of the difference between correlated
  proportions or percentages. Psychometrika 12, 153-157; exact binomial form and mid-p:
  Fagerland, Lydersen and Laake (2013), BMC Medical Research Methodology 13:91.
- Boschloo, R. D. (1970). Raised conditional level of significance for the 2x2-table
  when testing the equality of two probabilities. Statistica Neerlandica 24, 1-9.
- Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57,
  289-300.
- Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
  Journal of Statistics 6, 65-70.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from evals.stats.distributions import t_sf


def mcnemar_exact(first_only: int, second_only: int, mid_p: bool = False) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs.

    Under no difference, each discordant pair is equally likely to favour either side, so
    the smaller count is Binomial(b + c, 1/2). The mid-p variant subtracts half the
    probability of the observed count, which is less conservative and keeps close to the
    nominal level (Fagerland et al. 2013). Computed with exact integers.
    """
    if first_only < 0 or second_only < 0:
        raise ValueError("counts must be non-negative")
    total = first_only + second_only
    if total == 0:
        return 1.0
    smaller = min(first_only, second_only)
    tail = sum(math.comb(total, i) for i in range(smaller + 1))
    if mid_p:
        doubled_tail = 2 * tail - math.comb(total, smaller)
        return min(1.0, doubled_tail / 2**total)
    return min(1.0, 2 * tail / 2**total)


@lru_cache(maxsize=4096)
def boschloo_p_value(x1: int, n1: int, x2: int, n2: int) -> float | None:
    """Two-sided Boschloo exact test of x1/n1 against x2/n2 (scipy.stats.boschloo_exact).

    Unconditional and uniformly more powerful than Fisher's exact test, which matters with
    the handful of repeats a case gets. Identical counts give 1 without calling scipy;
    None when a sample is empty. Results are cached by table, since a suite's cases share
    few distinct tables.
    """
    if n1 <= 0 or n2 <= 0:
        return None
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError("successes must lie within [0, trials]")
    if x1 * n2 == x2 * n1 and (x1 in (0, n1) or (x1, n1) == (x2, n2)):
        return 1.0
    from scipy.stats import boschloo_exact

    table = [[x1, x2], [n1 - x1, n2 - x2]]
    return float(boschloo_exact(table, alternative="two-sided").pvalue)


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), in input order.

    Agrees with scipy.stats.false_discovery_control(method='bh').
    """
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    adjusted = [0.0] * count
    running = 1.0
    for rank in range(count, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * count / rank)
        adjusted[index] = running
    return adjusted


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error), in input order."""
    count = len(p_values)
    order = sorted(range(count), key=lambda i: p_values[i])
    adjusted = [0.0] * count
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (count - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def paired_t_p_value(differences: Sequence[float]) -> float | None:
    """Two-sided one-sample t-test p-value that the mean of `differences` is zero.

    Applied to per-case differences of pass rates, it tests a suite or tag with the case
    as the unit (Miller 2024, section 4). None with fewer than two cases; 1 when every
    difference is zero, and 0 when all are equal and non-zero.
    """
    count = len(differences)
    if count < 2:
        return None
    mean = sum(differences) / count
    variance = sum((d - mean) ** 2 for d in differences) / (count - 1)
    if variance == 0:
        return 1.0 if mean == 0 else 0.0
    statistic = mean / math.sqrt(variance / count)
    return min(1.0, 2 * t_sf(abs(statistic), count - 1))
