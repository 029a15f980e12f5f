"""Exact unconditional score tests and their inverted intervals, against scipy, statsmodels
and brute-force enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.stats import barnard_exact, binom, multinomial
from statsmodels.stats import proportion as sm_proportion
from statsmodels.stats.contingency_tables import mcnemar

from evals.stats import (
    exact_rejection_probability,
    exact_score_interval,
    exact_score_limit,
    exact_score_p_value,
    paired_exact_interval,
    paired_exact_limit,
    paired_exact_p_value,
    paired_score_statistic,
    score_statistic,
)
from evals.stats.exact import _restricted_rates


def _tables(most: int):
    return st.integers(1, most).flatmap(
        lambda n1: st.integers(1, most).flatmap(
            lambda n2: st.tuples(st.integers(0, n1), st.just(n1), st.integers(0, n2), st.just(n2))
        )
    )


def _likelihood_maximum(x1, n1, x2, n2, delta):
    """p2 maximizing the binomial likelihood under p1 = p2 + delta, numerically."""
    low, high = max(0.0, -delta), min(1.0, 1.0 - delta)

    def minus_log_likelihood(p2):
        terms = ((x1, p2 + delta), (n1 - x1, 1 - p2 - delta), (x2, p2), (n2 - x2, 1 - p2))
        return -sum(count * math.log(max(rate, 1e-300)) for count, rate in terms if count)

    found = minimize_scalar(
        minus_log_likelihood, bounds=(low, high), method="bounded", options={"xatol": 1e-13}
    ).x
    return min((low, high, found), key=minus_log_likelihood)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(_tables(30), st.floats(-0.99, 0.99))
def test_restricted_rates_maximize_the_likelihood(table, delta):
    """The cubic's root against numerical maximization (statsmodels 0.15 is no reference
    here: its cubic has the second group's count where Miettinen and Nurminen have its
    size, so its restricted rates miss the maximum whenever delta is not 0)."""
    x1, n1, x2, n2 = table
    p1, p2 = _restricted_rates(x1, n1, x2, n2, delta)
    assert float(p1) - float(p2) == pytest.approx(delta, abs=1e-12)
    assert float(p2) == pytest.approx(_likelihood_maximum(x1, n1, x2, n2, delta), abs=1e-6)


# statsmodels also works out odds ratios, which divide by zero at a 0 or 1 rate
@pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning:statsmodels")
@settings(max_examples=60, deadline=None)
@given(_tables(30))
def test_score_statistic_at_zero_matches_statsmodels(table):
    x1, n1, x2, n2 = table
    assume(0 < x1 + x2 < n1 + n2)
    expected = sm_proportion.test_proportions_2indep(
        x1, n1, x2, n2, value=0, method="score", compare="diff", correction=False
    ).statistic
    assert float(score_statistic(x1, n1, x2, n2, 0.0)) == pytest.approx(expected, rel=1e-9)


def test_score_statistic_on_the_boundary():
    """0/1 against 0/1 under p1 - p2 = -0.5: the likelihood (1 - p1)(1 - p2) is largest at
    p2 = 0.5, p1 = 0, so the variance is 0.25 and z = 0.5 / 0.5."""
    assert float(score_statistic(0, 1, 0, 1, -0.5)) == pytest.approx(1.0)


def _has_near_tie(x1, n1, x2, n2):
    """Another table whose statistic equals the observed one up to rounding (a mirror
    table of a balanced design included): scipy's strict comparison on its own rounding
    may drop it from the tail, this implementation keeps it."""
    a, b = np.meshgrid(np.arange(n1 + 1), np.arange(n2 + 1), indexing="ij")
    z = score_statistic(a, n1, b, n2, 0.0)
    observed = z[x1, x2]
    close = np.abs(z - observed) < 1e-9 * (1 + abs(observed))
    return bool(np.sum(close) > 1)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(_tables(15), st.sampled_from(["less", "greater"]))
@example((2, 13, 0, 8), "greater")  # two bumps of the nuisance tail within 2e-4 of each other
@example((13, 14, 11, 11), "less")  # the two maximisations over the nuisance differ by 2.3e-7
def test_at_zero_matches_scipy_barnard_pooled(table, alternative):
    x1, n1, x2, n2 = table
    assume(not _has_near_tie(x1, n1, x2, n2))
    expected = barnard_exact(
        [[x1, x2], [n1 - x1, n2 - x2]], alternative=alternative, pooled=True, n=200
    ).pvalue
    # Both maximise the tail over the nuisance rate numerically (scipy on a 200-point grid
    # refined by an optimiser), so they agree to the optimisers' tolerance, not exactly.
    assert exact_score_p_value(x1, n1, x2, n2, 0.0, alternative) == pytest.approx(
        expected, abs=1e-6
    )


def _brute_force_p(x1, n1, x2, n2, delta, less):
    """Tail of the score statistic (restricted rates by numerical maximization), maximized
    on a 4001-point nuisance grid."""

    def z(a, b):
        p2 = _likelihood_maximum(a, n1, b, n2, delta)
        p1 = p2 + delta
        variance = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
        excess = a / n1 - b / n2 - delta
        if abs(excess) < 1e-12:
            return 0.0
        return excess / math.sqrt(variance) if variance > 1e-300 else math.copysign(1e300, excess)

    observed = z(x1, x2)
    region = [
        (a, b)
        for a in range(n1 + 1)
        for b in range(n2 + 1)
        if (z(a, b) <= observed + 1e-9 if less else z(a, b) >= observed - 1e-9)
    ]
    grid = np.linspace(max(0.0, -delta), min(1.0, 1 - delta), 4001)
    firsts = np.array([a for a, _ in region])
    seconds = np.array([b for _, b in region])
    tails = [
        float(np.sum(binom.pmf(firsts, n1, p2 + delta) * binom.pmf(seconds, n2, p2))) for p2 in grid
    ]
    return max(tails)


@pytest.mark.slow
@pytest.mark.parametrize(
    "table,delta,less",
    [
        ((0, 5, 5, 5), -0.2, True),
        ((3, 5, 5, 5), -0.3, True),
        ((5, 5, 5, 5), -0.4, False),
        ((4, 6, 2, 7), 0.1, False),
        ((2, 4, 3, 5), 0.25, True),
    ],
)
def test_p_value_with_a_margin_matches_brute_force(table, delta, less):
    with np.errstate(all="ignore"):
        expected = _brute_force_p(*table, delta, less)
    alternative = "less" if less else "greater"
    assert exact_score_p_value(*table, delta, alternative) == pytest.approx(expected, abs=2e-5)


def test_known_values():
    # the only table as extreme as 0/5 against 5/5 at a common rate 1/2: 2^-10
    assert exact_score_p_value(0, 5, 5, 5, 0.0, "less") == pytest.approx(2**-10, abs=1e-12)
    # with a tolerated loss of 0.2 the worst case is p2 = 0.6, p1 = 0.4: 0.6^10
    assert exact_score_p_value(0, 5, 5, 5, -0.2, "less") == pytest.approx(0.6**10, abs=1e-9)
    # 3/5 against 0/5: not significant at 5 %, and the interval says so too
    assert exact_score_p_value(3, 5, 0, 5) > 0.05
    assert exact_score_interval(3, 5, 0, 5)[0] < 0


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(_tables(12), st.sampled_from([0.9, 0.95, 0.99]))
def test_interval_excludes_zero_exactly_when_the_test_rejects(table, confidence):
    x1, n1, x2, n2 = table
    low, high = exact_score_interval(x1, n1, x2, n2, confidence)
    p_value = exact_score_p_value(x1, n1, x2, n2)
    assume(abs(p_value - (1 - confidence)) > 1e-6)
    assert (low > 0 or high < 0) == (p_value <= 1 - confidence)
    assert low <= x1 / n1 - x2 / n2 <= high


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(_tables(10), st.sampled_from([0.9, 0.975, 0.995]), st.sampled_from(["lower", "upper"]))
def test_limit_is_where_the_one_sided_p_value_crosses(table, level, side):
    """The limit returned is kept by the test; 1e-5 beyond it, the test rejects."""
    x1, n1, x2, n2 = table
    limit = exact_score_limit(x1, n1, x2, n2, level, side)
    alternative = "greater" if side == "lower" else "less"
    outside = limit - 1e-5 if side == "lower" else limit + 1e-5
    estimate = x1 / n1 - x2 / n2
    if limit != estimate:
        assert exact_score_p_value(x1, n1, x2, n2, limit, alternative) > 1 - level
    if -1 <= outside <= 1:
        assert exact_score_p_value(x1, n1, x2, n2, outside, alternative) <= 1 - level


@pytest.mark.slow
@pytest.mark.parametrize("n1,n2", [(5, 5), (6, 4)])
@pytest.mark.parametrize("p1,p2", [(0.5, 0.5), (0.9, 0.6), (0.2, 0.7), (1.0, 0.8)])
def test_interval_covers_at_least_nominally(n1, n2, p1, p2):
    """Exact coverage by enumerating every table: the tail method never under-covers."""
    coverage = 0.0
    for a in range(n1 + 1):
        for b in range(n2 + 1):
            low, high = exact_score_interval(a, n1, b, n2, 0.9)
            if low - 1e-9 <= p1 - p2 <= high + 1e-9:
                coverage += binom.pmf(a, n1, p1) * binom.pmf(b, n2, p2)
    assert coverage >= 0.9 - 1e-9


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_paired_statistic_at_zero_is_mcnemar(b, c, concordant):
    pairs = b + c + concordant
    assume(pairs > 0 and b + c > 0)
    z = float(paired_score_statistic(b, c, pairs, 0.0))
    chi2 = mcnemar([[concordant, b], [c, 0]], exact=False, correction=False).statistic
    assert z * z == pytest.approx(chi2, rel=1e-9)
    assert math.copysign(1, z) == math.copysign(1, b - c) or b == c


def _brute_force_paired(b, c, pairs, delta, less):
    tables = [(i, j) for i in range(pairs + 1) for j in range(pairs + 1 - i)]
    z = {t: float(paired_score_statistic(t[0], t[1], pairs, delta)) for t in tables}
    observed = z[(b, c)]
    region = [t for t in tables if (z[t] <= observed + 1e-9 if less else z[t] >= observed - 1e-9)]
    best = 0.0
    for q in np.linspace(max(0.0, -delta), (1 - delta) / 2, 801):
        probabilities = [q + delta, q, max(0.0, 1 - 2 * q - delta)]
        total = sum(multinomial.pmf([i, j, pairs - i - j], pairs, probabilities) for i, j in region)
        best = max(best, total)
    return best


@pytest.mark.slow
@pytest.mark.parametrize(
    "b,c,concordant,delta,less",
    [(0, 5, 0, 0.0, True), (1, 4, 2, -0.1, True), (3, 0, 3, 0.0, False), (2, 1, 4, 0.2, False)],
)
def test_paired_p_value_matches_brute_force(b, c, concordant, delta, less):
    pairs = b + c + concordant
    expected = _brute_force_paired(b, c, pairs, delta, less)
    alternative = "less" if less else "greater"
    got = paired_exact_p_value(concordant, b, c, 0, delta, alternative)
    assert got == pytest.approx(expected, abs=2e-5)


def test_paired_five_discordant_pairs_cannot_reach_two_and_a_half_percent():
    """Five pairs all favouring one side: the exact one-sided p is 1/32 (at q = 1/2)."""
    assert paired_exact_p_value(0, 0, 5, 0, 0.0, "less") == pytest.approx(1 / 32, abs=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6), st.integers(0, 6))
def test_paired_interval_agrees_with_its_test(both, first, second, neither):
    assume(both + first + second + neither > 0)
    low, high = paired_exact_interval(both, first, second, neither, 0.95)
    p_value = paired_exact_p_value(both, first, second, neither)
    assume(abs(p_value - 0.05) > 1e-6)
    assert (low > 0 or high < 0) == (p_value <= 0.05)
    upper = paired_exact_limit(both, first, second, neither, 0.975, "upper")
    assert upper == pytest.approx(high)


def _brute_force_rejection(n1, p1, n2, p2, delta, alpha, alternative):
    return sum(
        binom.pmf(a, n1, p1) * binom.pmf(b, n2, p2)
        for a in range(n1 + 1)
        for b in range(n2 + 1)
        if exact_score_p_value(a, n1, b, n2, delta, alternative) <= alpha
    )


@pytest.mark.parametrize(
    "args",
    [
        (5, 0.2, 5, 0.9, 0.0, 0.002, "less"),
        (8, 0.6, 6, 0.7, -0.1, 0.05, "less"),
        (6, 0.95, 6, 0.95, -0.3, 0.025, "greater"),
    ],
)
def test_rejection_probability_matches_enumeration(args):
    assert exact_rejection_probability(*args) == pytest.approx(
        _brute_force_rejection(*args), abs=1e-12
    )


@pytest.mark.parametrize("rate", [0.1, 0.5, 0.8, 0.97])
@pytest.mark.parametrize("alpha", [0.025, 0.002])
def test_size_never_exceeds_alpha_at_the_null(rate, alpha):
    """The exact test keeps its level at any common rate: identical agents rarely fail."""
    assert exact_rejection_probability(5, rate, 5, rate, 0.0, alpha, "less") <= alpha + 1e-12
    shifted = max(rate - 0.2, 0.0)
    size = exact_rejection_probability(6, shifted, 6, shifted + 0.2, -0.2, alpha, "less")
    assert size <= alpha + 1e-12
