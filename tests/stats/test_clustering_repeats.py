"""Clustered SE, ICC, pass@k/pass^k and flakiness."""

from __future__ import annotations

import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.stats import (
    case_flake,
    clustered_se,
    flake_rate,
    intra_class_correlation,
    mean_of_means_variance,
    pass_at_k,
    pass_hat_k,
    pearson_correlation,
)

clustered_data = st.lists(
    st.tuples(st.integers(min_value=0, max_value=9), st.floats(min_value=0, max_value=1)),
    min_size=4,
    max_size=80,
).filter(lambda rows: len({c for c, _ in rows}) >= 2)


@settings(deadline=None)
@given(clustered_data)
def test_clustered_se_matches_statsmodels_cr1(rows):
    """statsmodels applies G/(G-1) and (N-1)/(N-K); with an intercept only K=1."""
    clusters = [c for c, _ in rows]
    scores = [s for _, s in rows]
    fit = sm.OLS(np.array(scores), np.ones(len(scores))).fit(
        cov_type="cluster", cov_kwds={"groups": np.array(clusters)}
    )
    assert clustered_se(scores, clusters) == pytest.approx(float(fit.bse[0]), abs=1e-12)


@given(clustered_data, st.randoms())
def test_clustered_se_invariant_to_order(rows, rng):
    shuffled = list(rows)
    rng.shuffle(shuffled)
    assert clustered_se([s for _, s in rows], [c for c, _ in rows]) == pytest.approx(
        clustered_se([s for _, s in shuffled], [c for c, _ in shuffled]), abs=1e-12
    )


@given(st.lists(st.integers(min_value=0, max_value=5), min_size=2, max_size=30))
def test_balanced_clustered_se_is_se_of_case_means(passes):
    repeats = 5
    scores, clusters = [], []
    for case, x in enumerate(passes):
        scores += [1.0] * x + [0.0] * (repeats - x)
        clusters += [case] * repeats
    means = [x / repeats for x in passes]
    assert clustered_se(scores, clusters) ** 2 == pytest.approx(
        mean_of_means_variance(means), abs=1e-12
    )


def test_icc_extremes():
    identical_within = intra_class_correlation([1, 1, 1, 0, 0, 0], ["a", "a", "a", "b", "b", "b"])
    assert identical_within == pytest.approx(1.0)
    no_between = intra_class_correlation([1, 0, 1, 0], ["a", "a", "b", "b"])
    assert no_between == 0.0
    assert intra_class_correlation([1, 0], ["a", "b"]) is None


def test_icc_matches_anova_formula_for_balanced_groups():
    groups = {"a": [1, 1, 0, 1], "b": [0, 0, 1, 0], "c": [1, 1, 1, 1]}
    scores = [s for g in groups.values() for s in g]
    labels = [k for k, g in groups.items() for _ in g]
    k, n = 4, 3
    grand = np.mean(scores)
    msb = k * sum((np.mean(g) - grand) ** 2 for g in groups.values()) / (n - 1)
    msw = sum(sum((s - np.mean(g)) ** 2 for s in g) for g in groups.values()) / (n * (k - 1))
    assert intra_class_correlation(scores, labels) == pytest.approx(
        (msb - msw) / (msb + (k - 1) * msw), abs=1e-12
    )


def _chen_estimator(n, c, k):
    """The numerically stable form published with Chen et al. (2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


@given(st.integers(min_value=1, max_value=60), st.data())
def test_pass_at_k_matches_chen_estimator(n, data):
    c = data.draw(st.integers(min_value=0, max_value=n))
    k = data.draw(st.integers(min_value=1, max_value=n))
    assert pass_at_k(n, c, k) == pytest.approx(_chen_estimator(n, c, k), abs=1e-12)
    assert 0 <= pass_hat_k(n, c, k) <= c / n + 1e-12 <= pass_at_k(n, c, k) + 2e-12


def test_pass_hat_k_values():
    assert pass_hat_k(5, 5, 3) == 1.0
    assert pass_hat_k(5, 4, 5) == 0.0
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(10, 7, 1) == pytest.approx(0.7)


@given(st.integers(min_value=2, max_value=50), st.data())
def test_case_flake_is_probability_two_runs_disagree(k, data):
    x = data.draw(st.integers(min_value=0, max_value=k))
    pairs = [(i, j) for i in range(k) for j in range(k) if i != j]
    outcomes = [1] * x + [0] * (k - x)
    disagree = sum(outcomes[i] != outcomes[j] for i, j in pairs) / len(pairs)
    assert case_flake(x, k) == pytest.approx(disagree, abs=1e-12)
    assert case_flake(x, k) == case_flake(k - x, k)


def test_flake_rate_counts_unstable_cases():
    assert flake_rate([(5, 5), (0, 5), (3, 5), (1, 1)]) == pytest.approx(1 / 3)
    assert flake_rate([(1, 1)]) is None
    assert case_flake(1, 1) is None


def test_pearson_correlation():
    assert pearson_correlation([0, 0.5, 1], [0.1, 0.6, 1.1]) == pytest.approx(1.0)
    assert pearson_correlation([1, 1, 1], [0, 1, 0]) == 0.0
    assert math.isclose(pearson_correlation([0, 1, 0, 1], [1, 0, 1, 0]), -1.0)
