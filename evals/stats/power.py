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
from collections.abc import Sequence

import numpy as np

from evals.stats.distributions import normal_cdf, normal_quantile, t_quantile


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


_QUADRATURE = 4000


def _case_rate_quantiles(mean: float, icc: float) -> np.ndarray:
    """Equal-probability quantiles of the Beta case rates with `mean` and `icc`."""
    if not 0 < mean < 1:
        return np.full(_QUADRATURE, float(mean))
    if icc <= 0:
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


def case_difference_variance(
    baseline_rate: float,
    candidate_rate: float,
    icc: float,
    repeats: int,
    interaction: float = 0.0,
) -> float:
    """Variance of one case's observed difference of pass rates, candidate minus baseline.

    The model the gate is planned for: the baseline's case rates are Beta with mean
    `baseline_rate` and intra-class correlation `icc`; the candidate's are the same cases
    moved by one shift on the log-odds scale so their mean is `candidate_rate` (a change
    makes every case equally harder or easier in log-odds, so cases that always pass
    barely move). Then Var = (E[a(1-a)] + E[b(1-b)])/k + Var(a - b) + interaction, by
    quadrature over the Beta; `interaction` is the variance of agent-by-case effects
    beyond the shift (`interaction_variance` estimates it from a stored comparison).
    """
    if repeats < 1:
        raise ValueError("need at least one repeat")
    if interaction < 0:
        raise ValueError("interaction is a variance: non-negative")
    baseline, candidate = shifted_case_rates(baseline_rate, icc, candidate_rate)
    noise = np.mean(candidate * (1 - candidate)) + np.mean(baseline * (1 - baseline))
    return float(noise / repeats + np.var(candidate - baseline) + interaction)


def interaction_variance(
    first_passes: Sequence[int],
    first_runs: Sequence[int],
    second_passes: Sequence[int],
    second_runs: Sequence[int],
) -> float | None:
    """Variance of true per-case differences between two agents, from a comparison.

    The spread of observed per-case differences minus the run noise each case adds
    (p(1-p)/(k-1), unbiased, per agent), floored at 0: what repeats cannot average away.
    None with fewer than two cases or a case run once.
    """
    count = len(first_passes)
    if count < 2 or min(*first_runs, *second_runs) < 2:
        return None
    differences = [
        a / k - b / m
        for a, k, b, m in zip(first_passes, first_runs, second_passes, second_runs, strict=True)
    ]
    mean = sum(differences) / count
    spread = sum((d - mean) ** 2 for d in differences) / (count - 1)
    noise = (
        sum(
            (x / k) * (1 - x / k) / (k - 1)
            for passes, runs in ((first_passes, first_runs), (second_passes, second_runs))
            for x, k in zip(passes, runs, strict=True)
        )
        / count
    )
    return max(spread - noise, 0.0)


def _shift(
    n_cases: int,
    repeats: int,
    baseline_rate: float,
    candidate_rate: float,
    icc: float,
    interaction: float,
    tolerance: float,
) -> float:
    """(true difference + tolerance) in standard errors of the mean difference."""
    if n_cases < 2:
        raise ValueError("the t test over cases needs at least two cases")
    variance = case_difference_variance(baseline_rate, candidate_rate, icc, repeats, interaction)
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
    interaction: float = 0.0,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    side: str = "fail",
) -> float:
    """Probability that the regression gate fails (side="fail", its power) or passes.

    The gate's own test: a one-sided t test on per-case differences, df = cases - 1, so
    the probability is a noncentral t tail with noncentrality (difference + tolerance)/SE.
    It fails when the upper limit at 1 - alpha (alpha: the gate's share of the build's
    budget) is below -tolerance; it passes when the lower limit at 1 - alpha (the pass
    level) reaches -tolerance, which for identical agents is the chance that a release
    with `on_undetermined: fail` passes. The floor on the standard error is ignored (it
    only binds when the cases' differences hardly vary), and so is the skew of per-case
    differences when many cases pass every run: `simulated_gate_probability` runs the
    test itself.
    """
    if side not in ("fail", "pass"):
        raise ValueError(f"side must be fail or pass, not {side!r}")
    from scipy.stats import nct

    shift = _shift(n_cases, repeats, baseline_rate, candidate_rate, icc, interaction, tolerance)
    critical = t_quantile(1 - alpha, n_cases - 1)
    failing = side == "fail"
    if math.isinf(shift):
        return 1.0 if (shift < 0) == failing else 0.0
    if failing:
        return float(nct.cdf(-critical, n_cases - 1, shift))
    return float(nct.sf(critical, n_cases - 1, shift))


def minimum_detectable_drop(
    n_cases: int,
    repeats: int,
    baseline_rate: float,
    icc: float,
    interaction: float = 0.0,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    power: float = 0.8,
) -> float | None:
    """Smallest drop of the mean pass rate the regression gate fails with `power`.

    Bisection on the candidate's rate between the baseline's and 0; None when even a
    candidate at 0 is not found with that power.
    """

    def found(drop: float) -> bool:
        rate = baseline_rate - drop
        return (
            regression_gate_probability(
                n_cases, repeats, baseline_rate, rate, icc, interaction, tolerance, alpha
            )
            >= power
        )

    if not found(baseline_rate):
        return None
    low, high = 0.0, baseline_rate
    for _ in range(50):
        middle = (low + high) / 2
        if found(middle):
            high = middle
        else:
            low = middle
    return high


def simulated_gate_probability(
    baseline_rates: Sequence[float],
    candidate_rates: Sequence[float],
    n_cases: int,
    repeats: int,
    tolerance: float = 0.0,
    alpha: float = 0.05,
    side: str = "fail",
    simulations: int = 4000,
    seed: int = 0,
) -> float:
    """Share of simulated comparisons in which the regression gate fails (or passes).

    The exact test the gate runs, where the noncentral t of `regression_gate_probability` is
    only an approximation (per-case differences are skewed when many cases pass every
    run): each simulation draws `n_cases` cases with replacement from the population
    (case i has true rates baseline_rates[i] and candidate_rates[i], e.g. from
    `shifted_case_rates` or a stored evaluation's cases), runs each agent `repeats`
    times, and applies `mean_differences` with the one-sided limit at 1 - alpha:
    side="fail" counts upper limits below -tolerance, side="pass" lower limits at or
    above it. Seeded, so a plan prints the same number twice; the Monte Carlo standard
    error is at most 0.5/sqrt(simulations).
    """
    from evals.stats.noninferiority import mean_differences

    baseline = np.asarray(baseline_rates, dtype=float)
    candidate = np.asarray(candidate_rates, dtype=float)
    if baseline.shape != candidate.shape or baseline.ndim != 1 or not len(baseline):
        raise ValueError("need one baseline and one candidate rate per case of the population")
    if n_cases < 2 or repeats < 1 or simulations < 1:
        raise ValueError("need at least two cases, one repeat and one simulation")
    if side not in ("fail", "pass"):
        raise ValueError(f"side must be fail or pass, not {side!r}")
    rng = np.random.default_rng(seed)
    critical = t_quantile(1 - alpha, n_cases - 1)
    found = 0
    block = max(1, 2_000_000 // (n_cases * repeats))
    for start in range(0, simulations, block):
        size = min(block, simulations - start)
        chosen = rng.integers(0, len(baseline), size=(size, n_cases))
        first = rng.binomial(repeats, candidate[chosen])
        second = rng.binomial(repeats, baseline[chosen])
        mean, error = mean_differences(first, repeats, second, repeats)
        if side == "fail":
            found += int(np.sum(mean + critical * error < -tolerance))
        else:
            found += int(np.sum(mean - critical * error >= -tolerance))
    return found / simulations
