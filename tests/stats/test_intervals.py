"""Single-proportion and difference intervals against scipy/statsmodels and published values."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from evals.stats import (
    clopper_pearson_interval,
    effective_sample_size,
    effective_wilson_interval,
    mover_difference,
    newcombe_interval,
    paired_newcombe_interval,
    wilson_interval,
)

counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
confidences = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@given(counts, confidences)
def test_wilson_matches_scipy_and_statsmodels(xn, confidence):
    x, n = xn
    ours = wilson_interval(x, n, confidence)
    theirs = binomtest(x, n).proportion_ci(confidence, method="wilson")
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)
    low, high = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    assert ours == pytest.approx((low, high), abs=1e-12)


@given(counts, confidences)
def test_wilson_continuity_matches_scipy(xn, confidence):
    x, n = xn
    ours = wilson_interval(x, n, confidence, continuity=True)
    theirs = binomtest(x, n).proportion_ci(confidence, method="wilsoncc")
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)


@given(counts, confidences)
def test_clopper_pearson_matches_statsmodels(xn, confidence):
    x, n = xn
    low, high = proportion_confint(x, n, alpha=1 - confidence, method="beta")
    assert clopper_pearson_interval(x, n, confidence) == pytest.approx((low, high), abs=1e-12)


@given(counts, st.booleans())
def test_wilson_bounds_contain_estimate_and_mirror(xn, continuity):
    x, n = xn
    low, high = wilson_interval(x, n, continuity=continuity)
    assert 0 <= low <= x / n <= high <= 1
    mirror_low, mirror_high = wilson_interval(n - x, n, continuity=continuity)
    assert (mirror_low, mirror_high) == pytest.approx((1 - high, 1 - low), abs=1e-12)


@given(st.integers(min_value=2, max_value=200), st.data())
def test_wilson_monotonic_in_successes(n, data):
    x = data.draw(st.integers(min_value=0, max_value=n - 1))
    low, high = wilson_interval(x, n)
    next_low, next_high = wilson_interval(x + 1, n)
    assert next_low > low and next_high > high


@given(st.integers(min_value=1, max_value=50), st.integers(min_value=1, max_value=20))
def test_wilson_narrower_with_more_data(n, factor):
    x = n // 2
    low, high = wilson_interval(x, n)
    big_low, big_high = wilson_interval(x * (factor + 1), n * (factor + 1))
    assert big_high - big_low < high - low


@given(counts, counts, confidences)
def test_newcombe_matches_statsmodels(first, second, confidence):
    (x1, n1), (x2, n2) = first, second
    ours = newcombe_interval(x1, n1, x2, n2, confidence)
    low, high = confint_proportions_2indep(
        x1, n1, x2, n2, method="newcomb", compare="diff", alpha=1 - confidence
    )
    assert ours == pytest.approx((low, high), abs=1e-12)


@given(counts, counts)
def test_newcombe_antisymmetric_and_contains_estimate(first, second):
    (x1, n1), (x2, n2) = first, second
    low, high = newcombe_interval(x1, n1, x2, n2)
    swapped = newcombe_interval(x2, n2, x1, n1)
    assert swapped == pytest.approx((-high, -low), abs=1e-12)
    assert -1 <= low <= x1 / n1 - x2 / n2 <= high <= 1


@pytest.mark.parametrize(
    ("x1", "n1", "x2", "n2", "expected"),
    [
        (56, 70, 48, 80, (0.0524, 0.3339)),
        (9, 10, 3, 10, (0.1705, 0.8090)),
        (10, 10, 0, 20, (0.6791, 1.0)),
    ],
)
def test_newcombe_published_independent_examples(x1, n1, x2, n2, expected):
    """Newcombe (1998b), table II, method 10."""
    low, high = newcombe_interval(x1, n1, x2, n2)
    assert (round(low, 4), round(high, 4)) == expected


def test_paired_newcombe_published_example():
    """Fagerland, Lydersen and Laake (2017), Statistical Analysis of Contingency Tables,
    chapter 8: the paired table [[59, 6], [16, 80]] gives -0.0621 (95 % CI -0.1186 to
    -0.0046) with Newcombe's square-and-add interval."""
    low, high = paired_newcombe_interval(59, 6, 16, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    assert paired_newcombe_interval(59, 16, 6, 80) == pytest.approx((-high, -low), abs=1e-12)


def test_paired_without_correlation_reduces_to_marginal_mover():
    """A weak positive association (ad - bc <= n/2) is corrected to phi* = 0, so the
    interval is the independent combination of the two marginal Wilson intervals."""
    both, first_only, second_only, neither = 2, 4, 3, 7
    total = 16
    p1, p2 = 6 / total, 5 / total
    expected = mover_difference(p1, wilson_interval(6, total), p2, wilson_interval(5, total))
    assert paired_newcombe_interval(both, first_only, second_only, neither) == pytest.approx(
        expected, abs=1e-15
    )


def _paired_reference(a, b, c, d, z=1.959963984540054):
    """Newcombe (1998c) method 10 written out term by term from the paper's formulas."""
    n = a + b + c + d

    def wilson(x):
        p = x / n
        centre = (2 * n * p + z * z) / (2 * (n + z * z))
        half = z * math.sqrt(z * z + 4 * n * p * (1 - p)) / (2 * (n + z * z))
        return centre - half, centre + half

    (l1, u1), (l2, u2) = wilson(a + b), wilson(a + c)
    p1, p2 = (a + b) / n, (a + c) / n
    product = (a + b) * (c + d) * (a + c) * (b + d)
    numerator = a * d - b * c
    corrected = numerator - n / 2 if numerator > n / 2 else (0 if numerator >= 0 else numerator)
    phi = corrected / math.sqrt(product) if product else 0.0
    delta = p1 - p2
    low = delta - math.sqrt((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2)
    high = delta + math.sqrt((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2)
    return max(-1.0, low), min(1.0, high)


cells = st.integers(min_value=0, max_value=60)


@given(cells, cells, cells, cells)
def test_paired_newcombe_matches_written_out_formula(a, b, c, d):
    assume(a + b + c + d > 0)
    assert paired_newcombe_interval(a, b, c, d) == pytest.approx(
        _paired_reference(a, b, c, d), abs=1e-12
    )


@given(cells, cells, cells, cells)
def test_paired_newcombe_properties(a, b, c, d):
    assume(a + b + c + d > 0)
    low, high = paired_newcombe_interval(a, b, c, d)
    n = a + b + c + d
    assert -1 <= low <= (b - c) / n <= high <= 1
    assert paired_newcombe_interval(a, c, b, d) == pytest.approx((-high, -low), abs=1e-12)


def test_paired_concordance_narrows_the_interval():
    """Same marginals, more agreement between the two arms: a narrower interval."""
    agreeing = paired_newcombe_interval(40, 8, 2, 50)
    independent_like = paired_newcombe_interval(20, 28, 22, 30)
    assert agreeing[1] - agreeing[0] < independent_like[1] - independent_like[0]


@given(
    st.floats(min_value=0.01, max_value=0.99),
    st.floats(min_value=1e-5, max_value=0.05),
    st.integers(min_value=2, max_value=100),
    st.integers(min_value=1, max_value=10),
)
def test_effective_sample_size_clamped(p, variance, cases, repeats):
    size = effective_sample_size(p, variance, cases, cases * repeats)
    assert cases <= size <= cases * repeats


def test_effective_wilson_is_wider_than_run_wilson_when_cases_differ():
    """Perfectly repeatable cases: n* = number of cases, so the interval is the case-level
    one (widened by the t factor), wider than pretending every run is independent."""
    rates = [1.0] * 6 + [0.0] * 4
    p = sum(rates) / 10
    variance = sum((r - p) ** 2 for r in rates) / 9 / 10
    effective = effective_wilson_interval(p, variance, 10, 50)
    naive = wilson_interval(30, 50)
    assert effective[1] - effective[0] > naive[1] - naive[0]
    assert effective[0] <= p <= effective[1]


def test_effective_wilson_without_repeats_equals_t_adjusted_wilson():
    """One run per case: n* = n, and only the Korn-Graubard factor (z/t)^2 shrinks it."""
    from scipy.stats import norm, t

    x, n = 12, 20
    p = x / n
    size = n * (norm.ppf(0.975) / t.ppf(0.975, n - 1)) ** 2
    z = norm.ppf(0.975)
    centre = (p + z * z / (2 * size)) / (1 + z * z / size)
    half = z / (1 + z * z / size) * math.sqrt(p * (1 - p) / size + z * z / (4 * size * size))
    variance = p * (1 - p) / n
    ours = effective_wilson_interval(p, variance, n, n)
    assert ours == pytest.approx((centre - half, centre + half), abs=1e-12)
