"""Corrections for testing many cases, tags or hypotheses of one gate at once.

References:
- Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57,
  289-300.
- Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
  Journal of Statistics 6, 65-70.
- Bretz, F., Maurer, W., Brannath, W. and Posch, M. (2009). A graphical approach to
  sequentially rejective multiple test procedures. Statistics in Medicine 28, 586-604.
"""

from __future__ import annotations

from collections.abc import Sequence


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


def weighted_holm(p_values: Sequence[float], weights: Sequence[float]) -> list[float]:
    """Weighted Holm adjusted p-values (family-wise error), in input order.

    Hypothesis i starts with the share `weights[i]` of alpha (weights positive, any
    sum); a rejected hypothesis passes its share to those left in proportion to their
    weights, so at each step the hypothesis with the smallest p/w is rejected when
    p <= alpha·w/W, W the weight of the hypotheses not yet rejected (Holm 1979's
    weighted procedure; the graph of Bretz et al. 2009 whose edges follow the weights).
    It is the closed test of weighted Bonferroni intersection tests, so it controls the
    family-wise error strongly whatever the p-values' dependence; equal weights give
    `holm`.
    """
    if len(weights) != len(p_values):
        raise ValueError("need one weight per p-value")
    if any(not w > 0 for w in weights):
        raise ValueError("weights must be positive")
    order = sorted(range(len(p_values)), key=lambda i: (p_values[i] / weights[i], i))
    adjusted = [0.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        left = sum(weights[i] for i in order[rank:])
        scaled = max(p_values[index], p_values[index] * left / weights[index])
        running = max(running, min(1.0, scaled))
        adjusted[index] = running
    return adjusted
