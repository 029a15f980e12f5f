"""The power of the regression gate: how often its own test fails a drop, or passes.

Miller, E. (2024). Adding error bars to evals. arXiv:2411.00640, section 5 ("power
analysis"): the variance of a difference of two agents' mean scores over n cases with k
repeats has a between-case part and a run-noise part that repeats shrink. Here the
cases are drawn from a population: the baseline's case rates are Beta with the suite's
mean and intra-class correlation, and the candidate's are the same cases moved by one
log-odds shift to its mean, so both agents' rates enter.

The gate's test depends on what it is about (`estimand`). On these cases ("cases", the
default) it is the stratified score test (`evals.stats.stratified`): only run noise
counts, so its variance is the run-noise part alone and repeats shrink all of it; the
drop planned for is the mean drop of the drawn cases. On tasks like these ("tasks") it is
the one-sided t test on per-case differences, whose variance also holds the spread
between cases. `simulated_gate_probability` runs the test itself,
`regression_gate_probability` is its normal (cases) or noncentral t (tasks) approximation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from evals.stats.distributions import normal_cdf, normal_quantile, t_quantile

_QUADRATURE = 4000
# An ICC below this leaves every case's rate within 1e-5 of the mean: the cases are
# alike. (An estimate of 0 that rounding left at 7e-17 would otherwise make the Beta's
# parameters 1e16, and its quantiles take a minute each.)
NEGLIGIBLE_ICC = 1e-9


def _case_rate_quantiles(mean: float, icc: float) -> np.ndarray:
    """Equal-probability quantiles of the Beta case rates with `mean` and `icc`."""
    if not 0 < mean < 1:
        return np.full(_QUADRATURE, float(mean))
    if icc < NEGLIGIBLE_ICC:
        return np.full(_QUADRATURE, float(mean))
    from scipy.special import betaincinv

    scale = (1 - min(icc, 1 - 1e-9)) / min(icc, 1 - 1e-9)
    probabilities = (np.arange(_QUADRATURE) + 0.5) / _QUADRATURE
    return betaincinv(mean * scale, (1 - mean) * scale, probabilities)


def _logit_shifted(rates: np.ndarray, target: float) -> np.ndarray:
    """`rates` moved by one log-odds shift so that their mean is `target` (bisection)."""
    if target <= 0 or target >= 1:
        return np.full_like(rates, float(target))
    clipped = np.clip(rates, 1e-12, 1 - 1e-12)
    log_odds = np.log(clipped / (1 - clipped))
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        if np.mean(1 / (1 + np.exp(-(log_odds + middle)))) < target:
            low = middle
        else:
            high = middle
    return 1 / (1 + np.exp(-(log_odds + (low + high) / 2)))


def shifted_case_rates(
    baseline_rate: float, icc: float, candidate_rate: float
) -> tuple[np.ndarray, np.ndarray]:
    """A population of cases for planning: the baseline's rates and the candidate's.

    Equal-probability quantiles of Beta(`baseline_rate`, `icc`) case rates, and the same
    cases moved by one log-odds shift so that their mean is `candidate_rate`.
    """
    for name, value in (("baseline_rate", baseline_rate), ("candidate_rate", candidate_rate)):
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must lie within [0, 1], got {value}")
    if not 0 <= icc <= 1:
        raise ValueError(f"icc must lie within [0, 1], got {icc}")
    baseline = _case_rate_quantiles(baseline_rate, icc)
    return baseline, _logit_shifted(baseline, candidate_rate)


@lru_cache(maxsize=4096)
def case_difference_variance(
    baseline_rate: float, candidate_rate: float, icc: float, repeats: int
) -> float:
    """Variance of one case's observed difference of pass rates, candidate minus baseline.

    The model the gate is planned for: the baseline's case rates are Beta with mean
    `baseline_rate` and intra-class correlation `icc`; the candidate's are the same cases
    moved by one shift on the log-odds scale so their mean is `candidate_rate` (a change
    makes every case equally harder or easier in log-odds, so cases that always pass
    barely move). Then Var = (E[a(1-a)] + E[b(1-b)])/k + Var(a - b), by quadrature over
    the Beta.
    """
    if repeats < 1:
        raise ValueError("need at least one repeat")
    baseline, candidate = shifted_case_rates(baseline_rate, icc, candidate_rate)
    noise = np.mean(candidate * (1 - candidate)) + np.mean(baseline * (1 - baseline))
    return float(noise / repeats + np.var(candidate - baseline))


@lru_cache(maxsize=4096)
def run_noise_variance(
    baseline_rate: float, candidate_rate: float, icc: float, repeats: int
) -> float:
    """Variance of one case's observed difference of pass rates from run noise alone:
    (E[a(1-a)] + E[b(1-b)])/k over the same population as `case_difference_variance`,
    what a comparison on these cases has (the cases' own differences are not noise)."""
    if repeats < 1:
        raise ValueError("need at least one repeat")
    baseline, candidate = shifted_case_rates(baseline_rate, icc, candidate_rate)
    noise = np.mean(candidate * (1 - candidate)) + np.mean(baseline * (1 - baseline))
    return float(noise / repeats)


def _shift(
    n_cases: int,
    repeats: int,
    baseline_rate: float,
    candidate_rate: float,
    icc: float,
    tolerance: float,
    estimand: str,
) -> float:
    """(true difference + tolerance) in standard errors of the mean difference."""
    if estimand == "tasks":
        if n_cases < 2:
            raise ValueError("the t test over cases needs at least two cases")
        variance = case_difference_variance(baseline_rate, candidate_rate, icc, repeats)
    else:
        if n_cases < 1:
            raise ValueError("need at least one case")
        variance = run_noise_variance(baseline_rate, candidate_rate, icc, repeats)
    difference = candidate_rate - baseline_rate + tolerance
    if variance <= 0:
        return math.copysign(math.inf, difference) if difference else 0.0
    return difference / math.sqrt(variance / n_cases)


def regression_gate_probability(
    n_cases: int,
    repeats: int,
    baseline_rate: float,
    candidate_rate: float,
    icc: float,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    side: str = "fail",
    estimand: str = "cases",
) -> float:
    """Probability that the regression gate fails (side="fail", its power) or passes.

    It fails when the upper limit at 1 - alpha (alpha: the gate's share of the build's
    budget) is below -tolerance; it passes when the lower limit at 1 - alpha (the pass
    level) reaches -tolerance, which for identical agents is the chance that a release
    with `on_undetermined: fail` passes. On these cases the test's score is close to
    normal with the run noise as its variance; on tasks like these the t test's
    probability is a noncentral t tail with noncentrality (difference + tolerance)/SE,
    df = cases - 1 (the floor on its standard error ignored: it only binds when the cases'
    differences hardly vary). Neither accounts for the skew when many cases pass every
    run: `simulated_gate_probability` runs the test itself.
    """
    if side not in ("fail", "pass"):
        raise ValueError(f"side must be fail or pass, not {side!r}")
    shift = _shift(n_cases, repeats, baseline_rate, candidate_rate, icc, tolerance, estimand)
    failing = side == "fail"
    if math.isinf(shift):
        return 1.0 if (shift < 0) == failing else 0.0
    if estimand != "tasks":
        critical = normal_quantile(1 - alpha)
        return normal_cdf(-shift - critical) if failing else normal_cdf(shift - critical)
    from scipy.stats import nct

    critical = t_quantile(1 - alpha, n_cases - 1)
    if failing:
        return float(nct.cdf(-critical, n_cases - 1, shift))
    return float(nct.sf(critical, n_cases - 1, shift))


def minimum_detectable_drop(
    n_cases: int,
    repeats: int,
    baseline_rate: float,
    icc: float,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
    estimand: str = "cases",
) -> float | None:
    """Smallest drop of the mean pass rate the regression gate fails with `power`.

    Bisection on the candidate's rate between the baseline's and 0; None when even a
    candidate at 0 is not found with that power.
    """

    def found(drop: float) -> bool:
        rate = baseline_rate - drop
        return (
            regression_gate_probability(
                n_cases, repeats, baseline_rate, rate, icc, tolerance, alpha, "fail", estimand
            )
            >= power
        )

    if not found(baseline_rate):
        return None
    low, high = 0.0, baseline_rate
    for _ in range(30):
        middle = (low + high) / 2
        if found(middle):
            high = middle
        else:
            low = middle
    return high


def simulated_gate_probability(
    baseline_rates: Sequence[float] | np.ndarray,
    candidate_rates: Sequence[float] | np.ndarray,
    n_cases: int,
    repeats: int,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    side: str = "fail",
    simulations: int = 4000,
    seed: int = 0,
    estimand: str = "cases",
) -> float:
    """Share of simulated comparisons in which the regression gate fails (or passes).

    The exact test the gate runs, where `regression_gate_probability` is only an
    approximation (scores and per-case differences are skewed when many cases pass every
    run): each simulation draws `n_cases` cases with replacement from the population
    (case i has true rates baseline_rates[i] and candidate_rates[i], e.g. from
    `shifted_case_rates` or a stored evaluation's cases), runs each agent `repeats`
    times, and applies the gate's test for `estimand` (`stratified_scores` on these
    cases, `mean_differences` on tasks like these) at one-sided 1 - alpha: side="fail"
    counts upper limits below -tolerance, side="pass" lower limits at or above it.
    Seeded, so a plan prints the same number twice; the Monte Carlo standard error is at
    most 0.5/sqrt(simulations).
    """
    from evals.stats.noninferiority import mean_differences
    from evals.stats.stratified import stratified_scores

    baseline = np.asarray(baseline_rates, dtype=float)
    candidate = np.asarray(candidate_rates, dtype=float)
    if baseline.shape != candidate.shape or baseline.ndim != 1 or not len(baseline):
        raise ValueError("need one baseline and one candidate rate per case of the population")
    if n_cases < (2 if estimand == "tasks" else 1) or repeats < 1 or simulations < 1:
        raise ValueError("need enough cases, at least one repeat and one simulation")
    if side not in ("fail", "pass"):
        raise ValueError(f"side must be fail or pass, not {side!r}")
    rng = np.random.default_rng(seed)
    critical = t_quantile(1 - alpha, max(n_cases - 1, 1))
    found = 0
    block = max(1, 2_000_000 // (n_cases * repeats))
    for start in range(0, simulations, block):
        size = min(block, simulations - start)
        chosen = rng.integers(0, len(baseline), size=(size, n_cases))
        first = rng.binomial(repeats, candidate[chosen])
        second = rng.binomial(repeats, baseline[chosen])
        if estimand != "tasks":
            z = normal_quantile(1 - alpha)
            scores = stratified_scores(first, repeats, second, repeats, -tolerance)
            found += int(np.sum(scores < -z if side == "fail" else scores > z))
            continue
        mean, error = mean_differences(first, repeats, second, repeats)
        if side == "fail":
            found += int(np.sum(mean + critical * error < -tolerance))
        else:
            found += int(np.sum(mean - critical * error >= -tolerance))
    return found / simulations
