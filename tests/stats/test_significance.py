"""Multiplicity corrections against scipy and statsmodels."""

from __future__ import annotations

from itertools import combinations
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import false_discovery_control
from statsmodels.stats.multitest import multipletests

from evals.stats import (
    benjamini_hochberg,
    holm,
    weighted_holm,
)

p_lists = st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30)


@pytest.mark.slow
@given(p_lists)
def test_benjamini_hochberg_matches_scipy(p_values):
    expected = false_discovery_control(p_values, method="bh")
    assert benjamini_hochberg(p_values) == pytest.approx(list(expected), abs=1e-12)


def statsmodels_holm(p_values: list[float]) -> list[float]:
    """statsmodels' Holm-adjusted p-values, without the full garbage collection it runs.

    multipletests(method="holm") calls gc.collect() on every call, which costs up to a
    second in a test process holding the whole suite's objects; the collection frees
    memory and changes no result.
    """
    with mock.patch("gc.collect"):
        return list(multipletests(p_values, method="holm")[1])


@pytest.mark.slow
@given(p_lists)
def test_holm_matches_statsmodels(p_values):
    expected = statsmodels_holm(p_values)
    assert holm(p_values) == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.slow
@given(p_lists)
def test_weighted_holm_with_equal_weights_is_statsmodels_holm(p_values):
    expected = statsmodels_holm(p_values)
    weighted = weighted_holm(p_values, [2.5] * len(p_values))
    assert weighted == pytest.approx(expected, abs=1e-12)


def closed_weighted_bonferroni(p_values, weights, alpha):
    """Which hypotheses the closed test of weighted Bonferroni intersection tests rejects,
    by brute force over every intersection: H_i falls when every intersection holding it
    has some member j with p_j <= alpha·w_j / (the weights of that intersection)."""
    indices = range(len(p_values))
    subsets = [s for size in indices for s in combinations(indices, size + 1)]

    def rejected(subset):
        total = sum(weights[j] for j in subset)
        return any(p_values[j] <= alpha * weights[j] / total for j in subset)

    return [all(rejected(s) for s in subsets if i in s) for i in indices]


@given(
    st.lists(
        st.tuples(st.floats(0, 0.2), st.floats(0.05, 5)),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([0.01, 0.05, 0.1]),
)
def test_weighted_holm_is_the_closed_weighted_bonferroni_test(pairs, alpha):
    p_values = [p for p, _ in pairs]
    weights = [w for _, w in pairs]
    adjusted = weighted_holm(p_values, weights)
    expected = closed_weighted_bonferroni(p_values, weights, alpha)
    for q, p, w, reject in zip(adjusted, p_values, weights, expected, strict=True):
        total = sum(weights)
        if abs(p * total / w - alpha) < 1e-9 or abs(q - alpha) < 1e-9:
            continue  # ties at the boundary: floating point decides either way
        assert (q <= alpha) == reject


def test_weighted_holm_passes_a_rejected_share_on():
    # the suite holds half of alpha = 0.04, four tags an eighth each: a tag at p = 0.009
    # misses its own 0.005, and is rejected once the suite's 0.02 is passed on (0.01)
    p_values = [0.001, 0.009, 0.5, 0.5, 0.5]
    adjusted = weighted_holm(p_values, [4, 1, 1, 1, 1])
    assert adjusted[0] == pytest.approx(0.002)
    assert adjusted[1] == pytest.approx(0.036)
    assert adjusted[1] <= 0.04 < 0.009 * 8
    with pytest.raises(ValueError):
        weighted_holm([0.1], [0.0])
