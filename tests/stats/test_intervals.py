"""Single-proportion and difference intervals against scipy/statsmodels and published values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest
from statsmodels.stats.proportion import proportion_confint

from evals.stats import (
    clopper_pearson_interval,
    effective_sample_size,
    effective_wilson_interval,
    wilson_interval,
)

counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
confidences = st.sampled_from([0.8, 0.9, 0.95, 0.99])


@pytest.mark.slow
@given(counts, confidences)
def test_wilson_matches_scipy_and_statsmodels(xn, confidence):
    x, n = xn
    ours = wilson_interval(x, n, confidence)
    theirs = binomtest(x, n).proportion_ci(confidence, method="wilson")
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)
    low, high = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    assert ours == pytest.approx((low, high), abs=1e-12)


@pytest.mark.slow
@given(counts, confidences)
def test_wilson_continuity_matches_scipy(xn, confidence):
    x, n = xn
    ours = wilson_interval(x, n, confidence, continuity=True)
    theirs = binomtest(x, n).proportion_ci(confidence, method="wilsoncc")
    assert ours == pytest.approx((theirs.low, theirs.high), abs=1e-12)


@pytest.mark.slow
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
