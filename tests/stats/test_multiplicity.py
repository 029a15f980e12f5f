"""Levels at which intervals agree with multiplicity-adjusted decisions; error splits."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import norm

from evals.stats import (
    agreeing_confidence,
    alpha_shares,
    benjamini_hochberg,
    bh_confidences,
    effective_wilson_interval,
    fcr_confidence,
    holm,
    holm_confidences,
    inverted_p_value,
    spending_shares,
)

p_lists = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=40)
alphas = st.sampled_from([0.01, 0.05, 0.1])


def _away_from(values, edges, gap=1e-9):
    return all(abs(v - e) > gap for v in values for e in edges)


@given(p_lists, alphas)
def test_fcr_level_excludes_the_null_exactly_for_bh_selected_cases(p_values, alpha):
    """A case's test-inverted interval at the BY level excludes the null exactly when
    p <= 1 - level; that must be the BH selection."""
    level = fcr_confidence(benjamini_hochberg(p_values), alpha)
    q_values = benjamini_hochberg(p_values)
    assume(_away_from(p_values, [1 - level]) and _away_from(q_values, [alpha]))
    for p, q in zip(p_values, q_values, strict=True):
        assert (p <= 1 - level) == (q <= alpha)


def test_fcr_level_counts_the_selected():
    q_values = [0.001, 0.02, 0.2, 0.6]
    assert fcr_confidence(q_values, 0.05) == pytest.approx(1 - 2 * 0.05 / 4)
    assert fcr_confidence([0.3, 0.9], 0.05) == pytest.approx(1 - 0.05 / 2)
    # q-values 0.004, 0.04, 0.27, 0.6: two selected among four
    assert bh_confidences([0.001, 0.02, 0.2, 0.6], 0.05)[1] == pytest.approx(1 - 2 * 0.05 / 4)


@given(p_lists, alphas)
def test_holm_levels_agree_with_holm_decisions(p_values, alpha):
    adjusted = holm(p_values)
    levels = holm_confidences(p_values, alpha)
    assume(_away_from(adjusted, [alpha]))
    for p, q, level in zip(p_values, adjusted, levels, strict=True):
        if p > 0:
            assert (p <= 1 - level + 1e-15) == (q <= alpha)


def test_holm_level_of_the_smallest_p_is_bonferroni():
    p_values = [0.001, 0.2, 0.04]
    assert holm_confidences(p_values, 0.05)[0] == pytest.approx(1 - 0.05 / 3)
    assert agreeing_confidence(0.01, 0.03, 0.05) == pytest.approx(1 - 0.05 / 3)
    with pytest.raises(ValueError):
        agreeing_confidence(0.2, 0.1, 0.05)


@given(st.lists(st.floats(min_value=0.01, max_value=10), min_size=1, max_size=10), alphas)
def test_alpha_shares_are_proportional_and_sum_to_alpha(weights, alpha):
    shares = alpha_shares(alpha, weights)
    assert sum(shares) == pytest.approx(alpha)
    for share, weight in zip(shares, weights, strict=True):
        assert share == pytest.approx(alpha * weight / sum(weights))


@given(
    st.lists(st.integers(1, 50), min_size=1, max_size=6, unique=True),
    alphas,
    st.floats(min_value=0.5, max_value=4),
)
def test_spending_shares_sum_to_alpha_and_favour_late_looks_as_rho_grows(stages, alpha, rho):
    stages = sorted(stages)
    fractions = [s / stages[-1] for s in stages]
    shares = spending_shares(fractions, alpha, rho)
    assert sum(shares) == pytest.approx(alpha)
    assert all(share > 0 for share in shares)
    steeper = spending_shares(fractions, alpha, rho + 1)
    assert steeper[-1] >= shares[-1] - 1e-15


def test_spending_shares_known_values():
    assert spending_shares([0.25, 0.5, 1.0], 0.05) == pytest.approx([0.0125, 0.0125, 0.025])
    with pytest.raises(ValueError):
        spending_shares([0.5, 0.4, 1.0], 0.05)
    with pytest.raises(ValueError):
        spending_shares([0.5, 0.9], 0.05)


@pytest.mark.slow
@given(
    st.floats(min_value=-2, max_value=2),
    st.floats(min_value=0.05, max_value=2),
    st.floats(min_value=-3, max_value=3),
    st.sampled_from(["lower", "upper"]),
)
def test_inverted_p_value_of_a_normal_limit_is_the_normal_tail(estimate, sigma, value, side):
    def limit(level):
        z = norm.ppf(level)
        return estimate - z * sigma if side == "lower" else estimate + z * sigma

    distance = estimate - value if side == "lower" else value - estimate
    expected = norm.sf(distance / sigma)
    assume(1e-9 < expected < 0.5 - 1e-9 or expected > 0.5 + 1e-9)
    got = inverted_p_value(limit, value, side)
    assert got == pytest.approx(expected if expected < 0.5 else 1.0, abs=1e-8)


def test_inverted_p_value_agrees_with_the_effective_wilson_limit():
    """The p-value of a minimum pass rate, from the interval the gate shows."""

    def lower(level):
        return effective_wilson_interval(0.8, 0.001, 30, 150, 2 * level - 1)[0]

    p_value = inverted_p_value(lower, 0.7, "lower")
    assert lower(1 - p_value + 1e-6) <= 0.7 + 1e-9 < lower(1 - p_value - 1e-6) + 1e-6
    assert 0 < p_value < 0.05
