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

import numpy as np

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


def _log_comb(n: int) -> np.ndarray:
    return np.array(
        [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in range(n + 1)]
    )


def _one_sided_boschloo(x1: int, n1: int, x2: int, n2: int) -> float:
    """P-value of Boschloo's test that group 1 does worse (alternative 'less')."""
    total = n1 + n2
    log_c1, log_c2, log_cn = _log_comb(n1), _log_comb(n2), _log_comb(total)
    a = np.arange(n1 + 1)[:, None]
    b = np.arange(n2 + 1)[None, :]
    sums = a + b
    log_pmf = log_c1[:, None] + log_c2[None, :] - log_cn[sums]
    fisher = np.empty((n1 + 1, n2 + 1))
    for s in range(total + 1):
        rows = np.arange(max(0, s - n2), min(n1, s) + 1)
        fisher[rows, s - rows] = np.cumsum(np.exp(log_pmf[rows, s - rows]))
    region = fisher <= fisher[x1, x2] * (1 + 1e-13)
    log_weights = np.full(total + 1, -np.inf)
    weights = log_c1[:, None] + log_c2[None, :]
    for s in np.unique(sums[region]):
        chosen = weights[region & (sums == s)]
        peak = chosen.max()
        log_weights[s] = peak + math.log(np.exp(chosen - peak).sum())
    present = np.isfinite(log_weights)
    powers = np.arange(total + 1)[present]
    coefficients = log_weights[present]

    def tail(pi: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_pi = np.where(pi > 0, np.log(np.where(pi > 0, pi, 1)), -np.inf)
            log_rest = np.where(pi < 1, np.log1p(-np.where(pi < 1, pi, 0)), -np.inf)
            terms = coefficients + np.nan_to_num(powers * log_pi[:, None], nan=0.0, neginf=-np.inf)
            terms = terms + np.nan_to_num((total - powers) * log_rest[:, None], nan=0.0)
        return np.exp(terms).sum(axis=1)

    low, high, best_value = 0.0, 1.0, 0.0
    for points in (1001, 201, 201):
        grid = np.linspace(low, high, points)
        values = tail(grid)
        best = int(values.argmax())
        best_value = max(best_value, float(values[best]))
        low, high = grid[max(best - 1, 0)], grid[min(best + 1, points - 1)]
    return min(1.0, best_value)


@lru_cache(maxsize=4096)
def boschloo_p_value(x1: int, n1: int, x2: int, n2: int) -> float | None:
    """Two-sided Boschloo exact test of x1/n1 against x2/n2.

    Unconditional and uniformly more powerful than Fisher's exact test, which matters with
    the handful of repeats a case gets. The statistic is Fisher's one-sided p-value; the
    p-value is its tail probability maximized over the common pass rate (a 1001-point grid
    refined twice around its peak); two-sided is twice the smaller one-sided value, as
    in scipy.stats.boschloo_exact, which it reproduces without importing scipy. None
    when a sample is empty. Cached by table: a suite's cases share few distinct tables.
    """
    if n1 <= 0 or n2 <= 0:
        return None
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError("successes must lie within [0, trials]")
    less = _one_sided_boschloo(x1, n1, x2, n2)
    greater = _one_sided_boschloo(x2, n2, x1, n1)
    return min(1.0, 2 * min(less, greater))


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
