"""The stratified score test on these cases, against independent implementations: the
restricted rates against scipy's numerical maximum likelihood, one case against
statsmodels' Miettinen-Nurminen score test, the A/A statistic against statsmodels'
Cochran-Mantel-Haenszel test, and the interval against the test it inverts."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize
from statsmodels.stats import proportion
from statsmodels.stats.contingency_tables import StratifiedTable

from evals.stats import detectable_drop, stratified_difference
from evals.stats.stratified import restricted_rates

counts = st.integers(1, 12).flatmap(
    lambda n1: st.integers(1, 12).flatmap(
        lambda n2: st.tuples(st.integers(0, n1), st.just(n1), st.integers(0, n2), st.just(n2))
    )
)
strata = st.lists(counts, min_size=1, max_size=8)


def _numerical_restricted(x1: int, n1: int, x2: int, n2: int, theta: float) -> float:
    """p2 maximizing the two binomials' likelihood under p1 - p2 = theta, by scipy."""

    def minus_log_likelihood(p2: float) -> float:
        p1 = p2 + theta
        tiny = 1e-300
        return -(
            x1 * math.log(max(p1, tiny))
            + (n1 - x1) * math.log(max(1 - p1, tiny))
            + x2 * math.log(max(p2, tiny))
            + (n2 - x2) * math.log(max(1 - p2, tiny))
        )

    low, high = max(0.0, -theta), min(1.0, 1 - theta)
    found = optimize.minimize_scalar(
        minus_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-13}
    )
    return float(found.x)


@settings(max_examples=120)
@given(counts, st.floats(-0.98, 0.98))
def test_restricted_rates_maximize_the_likelihood(table, theta):
    x1, n1, x2, n2 = table
    first, second = restricted_rates(*(np.array([v], dtype=float) for v in table), theta)
    assert first[0] - second[0] == pytest.approx(theta, abs=1e-9)
    assert second[0] == pytest.approx(_numerical_restricted(x1, n1, x2, n2, theta), abs=2e-6)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=80)
@given(counts)
def test_one_case_at_no_difference_is_statsmodels_miettinen_nurminen_test(table):
    x1, n1, x2, n2 = table
    test = replace(stratified_difference([x1], [n1], [x2], [n2]), skew=False)
    for mine, theirs in (("less", "smaller"), ("greater", "larger")):
        expected = proportion.test_proportions_2indep(
            x1, n1, x2, n2, value=0, method="score", correction=True, alternative=theirs
        ).pvalue
        if math.isnan(expected):  # statsmodels divides 0 by 0 when every run agrees
            assert test.p_value(0.0, mine) == pytest.approx(0.5)
            continue
        assert test.p_value(0.0, mine) == pytest.approx(expected, abs=1e-9)


@settings(max_examples=80)
@given(counts, st.floats(-0.9, 0.9))
def test_one_case_off_the_null_is_the_score_test_at_the_numerical_restricted_rates(table, theta):
    """Off the null statsmodels' restricted estimate is not the maximum likelihood (its
    cubic's linear coefficient), so the reference is built from scipy's maximization."""
    x1, n1, x2, n2 = table
    p2 = _numerical_restricted(x1, n1, x2, n2, theta)
    p1 = p2 + theta
    variance = (p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2) * (n1 + n2) / (n1 + n2 - 1)
    test = replace(stratified_difference([x1], [n1], [x2], [n2]), skew=False)
    # Near a variance of 0 (every run agreeing, theta within about 1e-6 of no difference)
    # the statistic is a ratio of two vanishing numbers, and the optimizer's last digits of
    # the restricted rate decide its third.
    if variance < 1e-6:
        return
    z = (x1 / n1 - x2 / n2 - theta) / math.sqrt(variance)
    assert test.score(theta) == pytest.approx(z, rel=1e-4, abs=1e-4)


@settings(max_examples=80)
@given(
    st.integers(1, 10),
    st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10)), min_size=2, max_size=10),
)
def test_no_difference_with_equal_repeats_is_the_cochran_mantel_haenszel_statistic(runs, pairs):
    """With equal repeats the score at 0 is, squared, the CMH statistic without continuity
    correction: the N/(N-1) factor turns the binomial variance into the hypergeometric."""
    pairs = [(min(a, runs), min(b, runs)) for a, b in pairs]
    informative = [(a, b) for a, b in pairs if 0 < a + b < 2 * runs]
    if not informative:
        return
    test = stratified_difference(
        [a for a, _ in pairs], [runs] * len(pairs), [b for _, b in pairs], [runs] * len(pairs)
    )
    tables = np.array([[[a, runs - a], [b, runs - b]] for a, b in informative], dtype=float)
    cmh = StratifiedTable(tables.transpose(1, 2, 0)).test_null_odds(correction=False)
    assert test.score(0.0) ** 2 == pytest.approx(cmh.statistic, rel=1e-9)


@settings(max_examples=60)
@given(strata, st.floats(0.6, 0.999), st.sampled_from(["lower", "upper"]))
def test_the_interval_is_the_set_the_test_keeps(tables, level, side):
    test = stratified_difference(*(list(column) for column in zip(*tables, strict=True)))
    limit = test.limit(level, side)
    alternative = "greater" if side == "lower" else "less"
    if -1 < limit < 1:
        assert test.p_value(limit, alternative) == pytest.approx(1 - level, abs=1e-6)
    step = 1e-4 if side == "upper" else -1e-4
    beyond = limit + step
    if -1 < beyond < 1:
        assert test.p_value(beyond, alternative) < 1 - level + 1e-6
    within = limit - step
    if -1 < within < 1 and min(abs(within - test.estimate), 1) > 2e-4:
        assert test.p_value(within, alternative) > 1 - level - 1e-6


def test_a_tag_of_seven_cases_dropping_from_97_to_52_percent_is_shown():
    base = [5, 5, 5, 5, 5, 5, 4]
    cand = [3, 2, 3, 2, 3, 2, 3]
    test = stratified_difference(cand, [5] * 7, base, [5] * 7)
    assert test.estimate == pytest.approx(-0.4571, abs=1e-3)
    # Far below any tolerated loss at any share of the budget the gates use.
    assert test.limit(1 - 0.05 / 40, "upper") < -0.15


@pytest.mark.slow
def test_identical_agents_keep_the_level_on_a_realistic_mix_of_cases():
    """Identical agents, 20 cases of 5 runs: 60 % of cases near a pass rate of 1, 15 %
    near 0, 25 % flaky; the one-sided 1 % test of no loss rejects at most 1 % of the
    time (seeded, 4000 suites; Monte Carlo standard error 0.16 points)."""
    rng = np.random.default_rng(20261207)
    rejected = 0
    for _ in range(4000):
        kind = rng.choice(3, size=20, p=[0.6, 0.15, 0.25])
        rates = np.where(
            kind == 0, rng.beta(30, 1, 20), np.where(kind == 1, rng.beta(1, 30, 20), rng.random(20))
        )
        test = stratified_difference(
            rng.binomial(5, rates), [5] * 20, rng.binomial(5, rates), [5] * 20
        )
        rejected += test.p_value(0.0, "less") < 0.01
    assert rejected / 4000 <= 0.01 + 2 * math.sqrt(0.01 * 0.99 / 4000)


def test_detectable_drop_shrinks_with_runs_and_is_what_a_simulation_catches():
    base = [5] * 12 + [3] * 5 + [0] * 3
    few = detectable_drop(base, [5] * 20, [3] * 20, 0.0, 0.99)
    many = detectable_drop(base, [5] * 20, [10] * 20, 0.0, 0.99)
    assert few is not None and many is not None and many < few
    assert detectable_drop([5], [5], [1], 0.9, 0.9999) is None
    # At the drop it reports, one log-odds shift of the Jeffreys case rates is caught about
    # 80 % of the time by the test itself.
    rates = (np.array(base) + 0.5) / 6
    logit = np.log(rates / (1 - rates))
    shift = optimize.brentq(lambda s: np.mean(rates - 1 / (1 + np.exp(-(logit - s)))) - many, 0, 40)
    shifted = 1 / (1 + np.exp(-(logit - shift)))
    rng = np.random.default_rng(3)
    caught = 0
    for _ in range(1500):
        test = stratified_difference(
            rng.binomial(10, shifted), [10] * 20, rng.binomial(5, rates), [5] * 20
        )
        caught += test.p_value(0.0, "less") < 0.01
    assert caught / 1500 == pytest.approx(0.8, abs=0.08)
