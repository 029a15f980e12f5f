"""Error-rate limits, flake probability and the power of the regression gate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binom, binomtest
from scipy.stats import t as student_t
from statsmodels.stats.power import TTestPower

from evals.stats import (
    binomial_p_value,
    case_difference_variance,
    clopper_pearson_limit,
    flake_probability,
    minimum_detectable_drop,
    regression_gate_probability,
    run_noise_variance,
    shifted_case_rates,
    simulated_gate_probability,
)
from evals.stats.repeats import _flake_noise

counts = st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts, st.floats(0.001, 0.999), st.sampled_from(["greater", "less"]))
def test_binomial_p_value_matches_scipy(table, rate, alternative):
    successes, trials = table
    expected = binomtest(successes, trials, rate, alternative=alternative).pvalue
    assert binomial_p_value(successes, trials, rate, alternative) == pytest.approx(
        expected, rel=1e-8, abs=1e-12
    )


@pytest.mark.slow
@given(counts, st.sampled_from([0.9, 0.975, 0.995]))
def test_clopper_pearson_limits_match_beta_quantiles(table, level):
    successes, trials = table
    lower = 0.0 if successes == 0 else beta.ppf(1 - level, successes, trials - successes + 1)
    upper = 1.0 if successes == trials else beta.ppf(level, successes + 1, trials - successes)
    assert clopper_pearson_limit(successes, trials, level, "lower") == pytest.approx(
        lower, abs=1e-12
    )
    assert clopper_pearson_limit(successes, trials, level, "upper") == pytest.approx(
        upper, abs=1e-12
    )


def _poisson_binomial(rates):
    distribution = np.array([1.0])
    for rate in rates:
        distribution = np.convolve(distribution, [1 - rate, rate])
    return distribution


@pytest.mark.slow
@pytest.mark.parametrize(
    "rates",
    [[0.0] * 20 + [0.3] * 10, [0.02, 0.05, 0.0, 0.1, 0.01] * 6, [0.5, 0.0, 0.0, 0.9] * 5],
)
@pytest.mark.parametrize("runs", [2, 5])
def test_pooled_limits_cover_the_mean_rate_of_unequal_cases(rates, runs):
    """Errors pooled over cases with unequal rates: the one-sided limits still cover
    the suite's mean rate at their level (Hoeffding 1956), checked exactly."""
    per_run = np.repeat(rates, runs)
    distribution = _poisson_binomial(per_run)
    mean = float(np.mean(rates))
    trials = len(per_run)
    for level in (0.9, 0.975):
        upper_covers = sum(
            p
            for x, p in enumerate(distribution)
            if clopper_pearson_limit(x, trials, level, "upper") >= mean
        )
        lower_covers = sum(
            p
            for x, p in enumerate(distribution)
            if clopper_pearson_limit(x, trials, level, "lower") <= mean
        )
        assert upper_covers >= level - 1e-12
        assert lower_covers >= level - 1e-12


@pytest.mark.parametrize("runs", [2, 3, 5, 10, 20])
@pytest.mark.parametrize("rate", [0.05, 0.3, 0.5, 0.9])
def test_flake_probability_is_unbiased_whatever_the_repeats(runs, rate):
    """E[2x(k-x)/(k(k-1))] over x ~ Binomial(k, p) is 2p(1-p) for every k: the estimate
    describes the agent, not the number of repeats."""
    expectation = sum(
        binom.pmf(x, runs, rate) * flake_probability([(x, runs)])[0] for x in range(runs + 1)
    )
    assert expectation == pytest.approx(2 * rate * (1 - rate), abs=1e-12)


@pytest.mark.slow
@given(
    st.lists(
        st.integers(2, 20).flatmap(lambda k: st.tuples(st.integers(0, k), st.just(k))),
        min_size=1,
        max_size=40,
    )
)
def test_flake_probability_interval_holds_the_mean(outcomes):
    mean, (low, high) = flake_probability(outcomes, 0.95)
    flakes = [2 * x * (k - x) / (k * (k - 1)) for x, k in outcomes]
    assert mean == pytest.approx(sum(flakes) / len(flakes))
    assert 0 <= low <= mean <= high <= 1


def test_flake_probability_leaves_out_single_runs():
    assert flake_probability([(1, 1), (0, 1)]) is None
    assert flake_probability([(1, 1), (1, 2)])[0] == pytest.approx(1.0)


@pytest.mark.parametrize("mu,icc,drop", [(0.7, 0.3, 0.1), (0.85, 0.5, 0.1), (0.5, 0.2, 0.05)])
def test_difference_variance_matches_simulating_the_model(mu, icc, drop):
    rng = np.random.default_rng(11)
    scale = (1 - icc) / icc
    baseline = np.clip(rng.beta(mu * scale, (1 - mu) * scale, 400_000), 1e-12, 1 - 1e-12)
    log_odds = np.log(baseline / (1 - baseline))
    low, high = -10.0, 0.0
    for _ in range(60):
        middle = (low + high) / 2
        mean = np.mean(1 / (1 + np.exp(-(log_odds + middle))))
        low, high = (middle, high) if mean < mu - drop else (low, middle)
    candidate = 1 / (1 + np.exp(-(log_odds + low)))
    observed = (rng.binomial(5, candidate) - rng.binomial(5, baseline)) / 5
    assert case_difference_variance(mu, mu - drop, icc, 5) == pytest.approx(
        np.var(observed), rel=0.02
    )


@pytest.mark.parametrize(
    "cases,repeats,mu,drop,icc,tolerance,alpha",
    [(40, 5, 0.7, 0.1, 0.3, 0.0, 0.05), (30, 10, 0.8, 0.05, 0.5, 0.02, 0.01)],
)
def test_gate_power_is_statsmodels_one_sample_t_power(
    cases, repeats, mu, drop, icc, tolerance, alpha
):
    sd = np.sqrt(case_difference_variance(mu, mu - drop, icc, repeats))
    effect = (-drop + tolerance) / sd
    expected = TTestPower().power(effect, cases, alpha, alternative="smaller")
    assert regression_gate_probability(
        cases, repeats, mu, mu - drop, icc, tolerance, alpha, estimand="tasks"
    ) == pytest.approx(expected, abs=1e-6)
    margin_effect = tolerance / np.sqrt(case_difference_variance(mu, mu, icc, repeats))
    expected_pass = TTestPower().power(margin_effect, cases, alpha, alternative="larger")
    assert regression_gate_probability(
        cases, repeats, mu, mu, icc, tolerance, alpha, side="pass", estimand="tasks"
    ) == pytest.approx(expected_pass, abs=1e-6)


@pytest.mark.parametrize("estimand", ["cases", "tasks"])
def test_simulated_power_is_seeded_and_near_its_approximation_when_differences_are_regular(
    estimand,
):
    """The simulation runs the gate's own test (the stratified score test on these cases,
    the t test on tasks like these); with regular cases its approximation (normal, or
    noncentral t) is close."""
    population = shifted_case_rates(0.5, 0.1, 0.44)
    kwargs = {"alpha": 0.05, "estimand": estimand}
    first = simulated_gate_probability(*population, 60, 10, seed=3, **kwargs)
    assert first == simulated_gate_probability(*population, 60, 10, seed=3, **kwargs)
    analytic = regression_gate_probability(60, 10, 0.5, 0.44, 0.1, **kwargs)
    assert first == pytest.approx(analytic, abs=0.03)
    same = shifted_case_rates(0.7, 0.3, 0.7)
    passes = simulated_gate_probability(
        *same, 60, 10, 0.1, 0.025, side="pass", seed=4, estimand=estimand
    )
    assert passes == pytest.approx(
        regression_gate_probability(60, 10, 0.7, 0.7, 0.3, 0.1, 0.025, "pass", estimand),
        abs=0.03,
    )


def test_on_these_cases_repeats_shrink_all_of_the_noise():
    """On these cases only run noise counts: ten times the repeats, ten times less
    variance; on tasks like these the spread between cases stays."""
    assert run_noise_variance(0.7, 0.6, 0.3, 50) == pytest.approx(
        run_noise_variance(0.7, 0.6, 0.3, 5) / 10
    )
    between = [
        case_difference_variance(0.7, 0.6, 0.3, k) - run_noise_variance(0.7, 0.6, 0.3, k)
        for k in (5, 50)
    ]
    assert between[0] == pytest.approx(between[1]) and between[0] > 0


@pytest.mark.slow
@pytest.mark.parametrize("power", [0.5, 0.8, 0.9])
def test_minimum_detectable_drop_reaches_the_power(power):
    drop = minimum_detectable_drop(40, 5, 0.7, 0.3, alpha=0.01, power=power)
    assert regression_gate_probability(40, 5, 0.7, 0.7 - drop, 0.3, alpha=0.01) >= power - 1e-9
    assert regression_gate_probability(40, 5, 0.7, 0.7 - drop + 0.002, 0.3, alpha=0.01) < power
    tasks = {"alpha": 0.001, "power": 0.99, "estimand": "tasks"}
    assert minimum_detectable_drop(2, 1, 0.7, 0.9, **tasks) is None


def test_flake_interval_without_skew_is_the_t_interval():
    """Per-case flakes 0.2 and 0.556 equally often (k = 10): no skew, so Johnson's
    correction vanishes and the spread is well above the floor."""
    outcomes = [(1, 10), (5, 10)] * 15
    values = [2 * x * (10 - x) / 90 for x, _ in outcomes]
    assert np.var(values, ddof=1) > np.mean([_flake_noise(x, k) for x, k in outcomes])
    mean, (low, high) = flake_probability(outcomes, 0.9)
    scale = np.std(values, ddof=1) / np.sqrt(len(values))
    expected = student_t.interval(0.9, len(values) - 1, loc=np.mean(values), scale=scale)
    assert mean == pytest.approx(np.mean(values))
    assert (low, high) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=3, max_size=40).filter(
        lambda xs: len({min(x, 6 - x) for x in xs}) > 1
    ),
    st.sampled_from([0.9, 0.95, 0.99]),
)
def test_flake_limits_solve_johnsons_statistic(passes, confidence):
    """At each limit, Johnson's modified t (computed here from its definition) equals the
    t quantile: the limits are the inversion of that test."""
    outcomes = [(x, 6) for x in passes]
    values = np.array([2 * x * (6 - x) / 30 for x in passes])
    n = len(values)
    mean, (low, high) = flake_probability(outcomes, confidence)
    sd = np.std(values, ddof=1)
    skew = np.sum((values - mean) ** 3) * n / ((n - 1) * (n - 2)) / sd**3
    critical = student_t.ppf((1 + confidence) / 2, n - 1)

    def johnson(mu):
        gap = mean - mu
        return (gap + skew * sd / (6 * n) + skew * gap**2 / (3 * sd)) * np.sqrt(n) / sd

    floor = np.mean([_flake_noise(x, 6) for x in passes])
    if sd**2 <= floor:
        return
    if low > 0:
        assert johnson(low) == pytest.approx(critical, abs=1e-7)
    if high < 1:
        assert johnson(high) == pytest.approx(-critical, abs=1e-7)
