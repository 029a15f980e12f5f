"""Woodruff's interval for a quantile of clustered values (the p95 latency of a suite)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.stats import cluster_quantile_interval, effective_wilson_interval, percentile

groups_of_values = st.lists(
    st.lists(st.floats(min_value=0, max_value=1e4), min_size=1, max_size=6),
    min_size=2,
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(groups_of_values, st.sampled_from([0.5, 0.9, 0.95, 0.99]), st.sampled_from([0.8, 0.95]))
def test_the_interval_holds_the_estimate_and_its_limits_are_observed(groups, quantile, level):
    estimate, (low, high) = cluster_quantile_interval(groups, quantile, level)
    values = [v for g in groups for v in g]
    assert estimate == percentile(values, quantile)
    assert estimate == float(np.quantile(values, quantile, method="inverted_cdf"))
    assert low <= estimate <= high
    assert low in values and high in values


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(groups_of_values, st.randoms(use_true_random=False))
def test_the_order_of_cases_and_of_their_runs_does_not_matter(groups, rng):
    shuffled = [rng.sample(g, len(g)) for g in groups]
    rng.shuffle(shuffled)
    assert cluster_quantile_interval(shuffled) == cluster_quantile_interval(groups)


@settings(max_examples=100, deadline=None)
@given(groups_of_values)
def test_a_higher_confidence_never_narrows_the_interval(groups):
    _, (low, high) = cluster_quantile_interval(groups, 0.95, 0.8)
    _, (wider_low, wider_high) = cluster_quantile_interval(groups, 0.95, 0.99)
    assert wider_low <= low and high <= wider_high


def _reference(groups: list[list[float]], quantile: float, level: float) -> tuple[float, float]:
    """Woodruff's interval worked out apart: the share's cluster-robust variance from
    statsmodels (an intercept-only regression of the indicator, CR1), the share's
    effective Wilson interval, then the order statistics floor(n·p_low) and
    ceil(n·p_high) + 1 (1-based) of the sorted values."""
    values = np.array([v for g in groups for v in g])
    cases = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    ordered = np.sort(values)
    estimate = np.quantile(values, quantile, method="inverted_cdf")
    below = (values <= estimate).astype(float)
    fit = sm.OLS(below, np.ones(len(values))).fit(cov_type="cluster", cov_kwds={"groups": cases})
    share_low, share_high = effective_wilson_interval(
        quantile, float(fit.bse[0]) ** 2, len(groups), len(values), level
    )
    count = len(values)
    lower = max(1, math.floor(count * share_low + 1e-9))
    upper = min(count, math.ceil(count * share_high - 1e-9) + 1)
    return float(ordered[lower - 1]), float(ordered[upper - 1])


@pytest.mark.parametrize("seed", range(6))
def test_the_interval_matches_an_independent_computation(seed):
    rng = np.random.default_rng(seed)
    groups = [
        list(np.exp(rng.normal(0, 0.5) + rng.normal(0, 0.5, rng.integers(1, 7))))
        for _ in range(int(rng.integers(5, 80)))
    ]
    _, interval = cluster_quantile_interval(groups, 0.95, 0.95)
    assert interval == _reference(groups, 0.95, 0.95)


def test_woodruffs_interval_covers_the_p95_of_clustered_latencies():
    """Latencies exp(case effect + run noise), both normal with sd 0.5: runs of a case are
    correlated, and the population's p95 is exp(z_0.95 · sqrt(0.5)). 600 suites of 60
    cases x 5 repeats; the 95 % interval should cover it about 95 % of the time."""
    rng = random.Random(20)
    truth = math.exp(1.6448536269514722 * math.sqrt(0.5))
    covered = 0
    for _ in range(600):
        groups = []
        for _ in range(60):
            case = rng.gauss(0, 0.5)
            groups.append([math.exp(case + rng.gauss(0, 0.5)) for _ in range(5)])
        _, (low, high) = cluster_quantile_interval(groups, 0.95, 0.95)
        covered += low <= truth <= high
    assert 0.92 <= covered / 600 <= 0.985


def test_one_case_or_a_quantile_outside_zero_and_one_is_refused():
    with pytest.raises(ValueError, match="two cases"):
        cluster_quantile_interval([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="two cases"):
        cluster_quantile_interval([[1.0], []])
    with pytest.raises(ValueError, match="quantile"):
        cluster_quantile_interval([[1.0], [2.0]], 1.0)
