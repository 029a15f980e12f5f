"""How many errors a set of decisions may make, and at what level each interval must be shown.

A report that tests many cases, tags and gates has to say, for each family of decisions,
which error it controls, and print next to each decision an interval that agrees with it.

- Cases: the false discovery rate (Benjamini and Hochberg 1995). The intervals of the
  selected cases are false-coverage-rate intervals at level 1 - R·alpha/m, R the number
  selected among m (Benjamini, Y. and Yekutieli, D. (2005), False discovery
  rate-adjusted multiple confidence intervals for selected parameters, JASA 100, 71-81).
- Tags and the hypotheses inside one gate: the family-wise error (Holm 1979). The interval
  of a hypothesis is shown at level 1 - alpha·p/q, q its Holm-adjusted p-value, the level
  of the step of Holm's procedure that decides it.
- The gates of a build: the false-failure budget is split among the blocking gates
  (weighted Bonferroni), so the chance that any of them fails falsely stays within it
  whatever their dependence; a build passes only when every gate passes, which needs no
  correction (an intersection-union test: Berger, R. L. (1982), Multiparameter hypothesis
  testing and acceptance sampling, Technometrics 24, 295-300).
- Looks of a staged run: each look spends the increment of an alpha-spending function
  alpha·t^rho at its information fraction t (Lan and DeMets 1983; the power family of
  Kim, K. and DeMets, D. L. (1987), Biometrika 74, 149-154), combined by the union bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

from evals.stats.significance import benjamini_hochberg, holm


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")


def fcr_confidence(q_values: Sequence[float], alpha: float) -> float:
    """Benjamini-Yekutieli level 1 - R·alpha/m for the intervals of BH-selected cases.

    R counts the q-values at most `alpha`; with none selected the level is the Bonferroni
    one, 1 - alpha/m, at which no interval excludes the null either. An interval from a
    test's inversion at this level excludes the null exactly for the selected cases: a
    selected case has p <= R·alpha/m, and one BH leaves out has p > R·alpha/m.
    """
    _check_alpha(alpha)
    count = len(q_values)
    if count == 0:
        return 1 - alpha
    selected = sum(1 for q in q_values if q <= alpha)
    return 1 - max(selected, 1) * alpha / count


def agreeing_confidence(p_value: float, adjusted: float, alpha: float) -> float:
    """The level at which a test-inverted interval agrees with `adjusted <= alpha`.

    1 - alpha·p/q: the interval excludes the null exactly when p <= alpha·p/q, that is
    when the adjusted p-value q is at most alpha. For Holm this is the level of the step
    that decides the hypothesis (1 - alpha/m for the smallest p-value); for Bonferroni
    it is 1 - alpha/m. A p-value of zero takes the level 1 - alpha.
    """
    _check_alpha(alpha)
    if not 0 <= p_value <= adjusted <= 1:
        raise ValueError(f"need 0 <= p <= adjusted p <= 1, got {p_value} and {adjusted}")
    if adjusted == 0:
        return 1 - alpha
    return 1 - alpha * p_value / adjusted


def holm_confidences(p_values: Sequence[float], alpha: float) -> list[float]:
    """Per hypothesis, the level at which its interval agrees with Holm's decision."""
    return [agreeing_confidence(p, q, alpha) for p, q in zip(p_values, holm(p_values), strict=True)]


def bh_confidences(p_values: Sequence[float], alpha: float) -> tuple[list[float], float]:
    """BH q-values in input order, and the one level for every case's interval (BY FCR)."""
    q_values = benjamini_hochberg(p_values)
    return q_values, fcr_confidence(q_values, alpha)


def alpha_shares(alpha: float, weights: Sequence[float]) -> list[float]:
    """`alpha` split in proportion to `weights` (weighted Bonferroni); shares sum to alpha."""
    _check_alpha(alpha)
    if not weights or any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError("need non-negative weights with a positive sum")
    total = sum(weights)
    return [alpha * w / total for w in weights]


def spending_shares(fractions: Sequence[float], alpha: float, rho: float = 1.0) -> list[float]:
    """The error each look of a staged run may spend: increments of alpha·t^rho.

    `fractions` are the information fractions of the looks (repeats so far over the
    planned maximum), increasing to 1. rho = 1 spends in proportion to information;
    larger rho saves error for the last look (rho = 3 is close to O'Brien-Fleming). The
    shares sum to alpha, so by the union bound a false decision at any look stays within
    alpha whatever the dependence between looks.
    """
    _check_alpha(alpha)
    if rho <= 0:
        raise ValueError(f"rho must be positive, got {rho}")
    if not fractions or any(b <= a for a, b in pairwise(fractions)):
        raise ValueError("information fractions must increase")
    if fractions[0] <= 0 or abs(fractions[-1] - 1) > 1e-12:
        raise ValueError("information fractions must be positive and end at 1")
    spent = [alpha * t**rho for t in fractions]
    return [b - a for a, b in zip([0.0, *spent], spent, strict=False)]


def inverted_p_value(
    limit: Callable[[float], float], value: float, side: str, tolerance: float = 1e-10
) -> float:
    """The one-sided p-value of `value` from a family of confidence limits.

    `limit(level)` is the lower (side="lower") or upper limit at one-sided `level`. The
    p-value is the error 1 - level at which the limit reaches `value`, so "p <= a" holds
    exactly when the limit at level 1 - a excludes it: the test whose inversion the
    interval is. Bisection on the level over [1/2, 1), since limits built from two-sided
    intervals exist only there; limits widen as the level grows. When even the level-1/2
    limit (the estimate) does not exclude `value`, the p-value is at least 1/2 and is
    returned as 1, which can only make an adjusted p-value larger.
    """
    if side not in ("lower", "upper"):
        raise ValueError(f"side must be lower or upper, not {side!r}")

    def excludes(level: float) -> bool:
        bound = limit(level)
        return bound > value if side == "lower" else bound < value

    kept, rejected = 0.5 + 1e-12, 1 - 1e-12
    if not excludes(kept):
        return 1.0
    if excludes(rejected):
        return 1 - rejected
    while rejected - kept > tolerance:
        middle = (kept + rejected) / 2
        if excludes(middle):
            kept = middle
        else:
            rejected = middle
    return 1 - kept
