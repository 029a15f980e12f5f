"""The difference of two agents' pass rates on a fixed set of cases: inference conditional on
the cases, whose only noise is the agents' run-to-run randomness.

A versioned suite is the set of tasks a team decided to protect, not a sample of tasks, so
the question a comparison asks of it is "did the candidate get worse *on these cases*?".
The estimand is the weighted mean over the cases (strata) of p1_i - p2_i, each case's pass
rates those of its own binomial runs; with equal weights, the difference of the two
agents' mean per-case pass rates on exactly these cases.

The test is the stratified score test with fixed weights (Miettinen and Nurminen 1985,
section 5; Laud 2017, section 2.2): the score is sum_i w_i (d_i - theta), d_i a case's
observed difference, and its variance sum_i w_i² V_i(theta) is taken at the rates that
maximize each case's likelihood under p1_i - p2_i = theta (the root of Miettinen and
Nurminen's cubic, in Farrington and Manning's 1990 form), with their N/(N-1) factor. At
theta = 0 these are each case's pooled rate: the variance of the Cochran-Mantel-Haenszel
statistic's null (Mantel and Haenszel 1959; with equal repeats the numerator is the CMH
numerator), where identical agents make it exact in distribution, whatever the cases'
rates. The statistic is corrected for the skewness of the score (Gart and Nam 1990; Laud
2017's SCAS), which matters because the gates test one side at small levels and cases
near a pass rate of 0 or 1 make the score skewed. With one case it is Miettinen and
Nurminen's test of a difference of proportions. The interval is the set of theta the test
keeps, so the interval and the test cannot disagree.

Pure numpy; no scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evals.stats.distributions import falling_root, normal_cdf, normal_quantile

Side = Literal["lower", "upper"]
Alternative = Literal["less", "greater"]


def restricted_rates(
    first_passes: np.ndarray,
    first_runs: np.ndarray,
    second_passes: np.ndarray,
    second_runs: np.ndarray,
    theta: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Each case's maximum-likelihood rates (p1, p2) under p1 - p2 = `theta`, elementwise.

    p2 is the root of L3·p³ + L2·p² + L1·p + L0 in [max(0, -theta), min(1, 1 - theta)],
    with L3 = N, L2 = (n1 + 2·n2)·theta - N - x, L1 = (n2·theta - N - 2·x2)·theta + x and
    L0 = x2·theta·(1 - theta) (x = x1 + x2, N = n1 + n2; Farrington and Manning 1990),
    taken by the trigonometric formula.
    """
    x1, n1, x2, n2 = first_passes, first_runs, second_passes, second_runs
    total, passes = n1 + n2, x1 + x2
    l2 = (n1 + 2 * n2) * theta - total - passes
    l1 = (n2 * theta - total - 2 * x2) * theta + passes
    l0 = x2 * theta * (1 - theta)
    third = l2 / (3 * total)
    q = third**3 - l1 * l2 / (6 * total**2) + l0 / (2 * total)
    p = np.sign(q) * np.sqrt(np.maximum(third**2 - l1 / (3 * total), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        cosine = np.nan_to_num(q / p**3, nan=0.0, posinf=1.0, neginf=-1.0)
    angle = (math.pi + np.arccos(np.minimum(np.maximum(cosine, -1.0), 1.0))) / 3
    root = 2 * p * np.cos(angle) - third
    second = np.minimum(np.maximum(root, max(0.0, -theta)), min(1.0, 1 - theta))
    return second + theta, second


def stratified_scores(
    first_passes: np.ndarray,
    first_runs: np.ndarray | float,
    second_passes: np.ndarray,
    second_runs: np.ndarray | float,
    null: float,
    weights: np.ndarray | None = None,
    skew: bool = True,
) -> np.ndarray:
    """The score statistic of H0: sum_i w_i (p1_i - p2_i) = `null` over the last axis
    (cases), for many suites at once: positive when the estimate lies above `null`,
    skewness-corrected unless `skew` is false; equal weights by default. What
    `StratifiedDifference` tests, vectorized so that planning simulates exactly it."""
    x1, x2 = np.asarray(first_passes, dtype=float), np.asarray(second_passes, dtype=float)
    n1 = np.broadcast_to(np.asarray(first_runs, dtype=float), x1.shape)
    n2 = np.broadcast_to(np.asarray(second_runs, dtype=float), x2.shape)
    cases = x1.shape[-1]
    w = np.full(cases, 1 / cases) if weights is None else np.asarray(weights, dtype=float)
    score = np.sum(w * (x1 / n1 - x2 / n2), axis=-1) - null
    if not -1 < null < 1:
        return np.where(score == 0, 0.0, np.where(score > 0, np.inf, -np.inf))
    first, second = restricted_rates(x1, n1, x2, n2, null)
    v1, v2 = first * (1 - first), second * (1 - second)
    variance = np.sum(w**2 * (v1 / n1 + v2 / n2) * (n1 + n2) / (n1 + n2 - 1), axis=-1)
    third = np.sum(w**3 * (v1 * (1 - 2 * first) / n1**2 - v2 * (1 - 2 * second) / n2**2), axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = np.where(
            variance > 0,
            score / np.sqrt(variance),
            np.where(np.abs(score) < 1e-12, 0.0, np.where(score > 0, np.inf, -np.inf)),
        )
        scale = np.where(variance > 0, third / (6 * variance**1.5), 0.0)
        discriminant = 1 + 4 * scale * (plain + scale)
        corrected = (np.sqrt(np.maximum(discriminant, 0.0)) - 1) / (2 * scale)
    keep = (not skew) | (np.abs(scale) < 1e-12) | (discriminant < 0) | ~np.isfinite(plain)
    return np.where(keep, plain, corrected)


@dataclass(frozen=True, slots=True)
class StratifiedDifference:
    """sum_i w_i (first_i - second_i) over cases, conditional on the cases: the first
    agent's passes and runs per case, the second's, and the weights (summing to 1).

    `limit` and `p_value` invert and compute the score test of the module's docstring,
    skewness-corrected unless `skew` is false; `standard_error` is the Wald standard error
    at the observed rates, for display.
    """

    first_passes: np.ndarray
    first_runs: np.ndarray
    second_passes: np.ndarray
    second_runs: np.ndarray
    weights: np.ndarray
    skew: bool = True

    @property
    def cases(self) -> int:
        """How many cases the difference is over."""
        return len(self.weights)

    @property
    def estimate(self) -> float:
        """The weighted mean of per-case differences of pass rates."""
        first = self.first_passes / self.first_runs
        second = self.second_passes / self.second_runs
        return float(np.dot(self.weights, first - second))

    @property
    def standard_error(self) -> float:
        """sqrt(sum w_i² (p1(1-p1)/n1 + p2(1-p2)/n2)) at the observed rates."""
        first = self.first_passes / self.first_runs
        second = self.second_passes / self.second_runs
        variance = first * (1 - first) / self.first_runs + second * (1 - second) / self.second_runs
        return math.sqrt(float(np.dot(self.weights**2, variance)))

    def score(self, null: float) -> float:
        """The score statistic of H0: difference = `null`, positive when the estimate lies
        above it (skewness-corrected unless `skew` is false)."""
        return float(
            stratified_scores(
                self.first_passes,
                self.first_runs,
                self.second_passes,
                self.second_runs,
                null,
                self.weights,
                self.skew,
            )
        )

    def p_value(self, null: float, alternative: Alternative) -> float:
        """One-sided p-value of H0: difference = `null` against `alternative` ("less": the
        difference lies below `null`). "less" is at most a exactly when
        `limit(1 - a, "upper")` lies below `null`."""
        z = self.score(null)
        return normal_cdf(z) if alternative == "less" else normal_cdf(-z)

    def limit(self, level: float, side: Side) -> float:
        """One-sided confidence limit at `level`: the difference at which the one-sided
        test at 1 - `level` stops rejecting (the score falls as the null rises)."""
        if not 0 < level < 1:
            raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
        target = normal_quantile(level) * (1 if side == "lower" else -1)
        if side == "lower":
            return falling_root(lambda null: self.score(null) - target, -1.0, self.estimate)
        return falling_root(lambda null: self.score(null) - target, self.estimate, 1.0)


def stratified_difference(
    first_passes: Sequence[int],
    first_runs: Sequence[int],
    second_passes: Sequence[int],
    second_runs: Sequence[int],
    weights: Sequence[float] | None = None,
) -> StratifiedDifference:
    """The first agent's pass rates minus the second's on the same cases, conditional on
    the cases; equal weights (the difference of mean per-case pass rates) by default.

    Counts are per case, in the same order for both agents; every case needs runs from
    both.
    """
    count = len(first_passes)
    if not count == len(first_runs) == len(second_passes) == len(second_runs):
        raise ValueError("need passes and runs of both agents for every case")
    if count < 1:
        raise ValueError("a difference over cases needs at least one case")
    x1, n1, x2, n2 = (
        np.asarray(v, dtype=float) for v in (first_passes, first_runs, second_passes, second_runs)
    )
    if min(n1.min(), n2.min()) < 1:
        raise ValueError("every case needs runs from both agents")
    if np.any((x1 < 0) | (x1 > n1) | (x2 < 0) | (x2 > n2)):
        raise ValueError("passes must lie between 0 and the runs")
    w = np.full(count, 1 / count) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != count or np.any(w <= 0):
        raise ValueError("need one positive weight per case")
    return StratifiedDifference(x1, n1, x2, n2, w / w.sum())


def _expit(value: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-value))


def detectable_drop(
    baseline_passes: Sequence[int],
    baseline_runs: Sequence[int],
    candidate_runs: Sequence[int],
    tolerance: float,
    level: float,
    power: float = 0.8,
) -> float | None:
    """The smallest drop of the mean per-case pass rate that this many runs would show
    beyond `tolerance` with probability `power`, when the fail side tests at one-sided
    `level`; None when no drop can be shown.

    The drop is modelled as one log-odds shift of every case (cases that always pass
    barely move, as with `evals plan`), from the baseline's case rates (x + 1/2)/(n + 1)
    (Jeffreys' estimate, so a case that passed every run can still drop), and the test by
    its normal approximation: a drop D is shown with probability
    Φ((D - tolerance - z_level·σ(D)) / σ(D)), σ(D) the standard error of the estimate at
    the shifted rates with the candidate's runs per case.
    """
    x, n_base, n_cand = (
        np.asarray(v, dtype=float) for v in (baseline_passes, baseline_runs, candidate_runs)
    )
    base = (x + 0.5) / (n_base + 1)
    logit = np.log(base / (1 - base))
    need = normal_quantile(level) + normal_quantile(power)

    def gap(shift: float) -> tuple[float, float]:
        cand = _expit(logit - shift)
        drop = float(np.mean(base - cand))
        spread = cand * (1 - cand) / n_cand + base * (1 - base) / n_base
        return drop, drop - tolerance - need * math.sqrt(float(np.mean(spread)) / len(base))

    if gap(40.0)[1] <= 0:
        return None
    return gap(falling_root(lambda shift: -gap(shift)[1], 0.0, 40.0, 1e-8))[0]
