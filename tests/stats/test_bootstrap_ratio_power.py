"""Percentiles, cluster bootstrap, cost per accepted task and t distribution."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evals.stats import (
    normal_limit,
    paired_mean_bootstrap,
    paired_quantile_bootstrap,
    percentile,
    ratio_standard_error,
    t_quantile,
    t_sf,
)
from evals.stats.bootstrap import _case_weights, _linear_quantiles, _resampled_quantiles


@given(
    st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=200),
    st.sampled_from([0.05, 0.5, 0.9, 0.95, 0.99]),
)
def test_percentile_is_numpy_inverted_cdf(values, q):
    assert percentile(values, q) == float(np.quantile(values, q, method="inverted_cdf"))


def test_resampled_quantiles_equal_quantiles_of_expanded_samples():
    rng = np.random.default_rng(3)
    groups = [list(rng.lognormal(5, 1, rng.integers(1, 6))) for _ in range(40)]
    weights = _case_weights(40, 200, seed=1)
    values = np.array([v for g in groups for v in g])
    owners = np.repeat(np.arange(40), [len(g) for g in groups])
    for q in (0.5, 0.95):
        ours = _resampled_quantiles(groups, weights, q)
        expected = [
            np.quantile(np.repeat(values, weights[b][owners].astype(int)), q, method="inverted_cdf")
            for b in range(200)
        ]
        assert np.array_equal(ours, expected)


def test_bootstrap_is_seeded_and_order_of_runs_irrelevant():
    rng = np.random.default_rng(0)
    groups = [list(rng.lognormal(6, 0.5, 5)) for _ in range(30)]
    others = [list(rng.lognormal(6, 0.5, 5)) for _ in range(30)]
    first = paired_quantile_bootstrap(groups, others, seed=7)
    assert first == paired_quantile_bootstrap(groups, others, seed=7)
    reversed_runs = [list(reversed(g)) for g in groups]
    assert first == paired_quantile_bootstrap(reversed_runs, others, seed=7)
    low, high = first.candidate_interval
    assert low <= first.candidate <= high


def test_paired_bootstrap_ratio_of_identical_agents_is_one():
    rng = np.random.default_rng(1)
    groups = [list(rng.lognormal(6, 0.5, 4)) for _ in range(25)]
    latency = paired_quantile_bootstrap(groups, groups)
    assert latency.ratio == 1.0 and latency.ratio_interval == (1.0, 1.0)
    slower = paired_quantile_bootstrap([[2 * v for v in g] for g in groups], groups)
    assert slower.ratio == pytest.approx(2.0)
    assert slower.ratio_interval == pytest.approx((2.0, 2.0))
    cost = paired_mean_bootstrap([[3 * v for v in g] for g in groups], groups)
    assert cost.ratio == pytest.approx(3.0)


def test_ratio_standard_error_is_the_delta_method():
    costs, accepted = [1.0, 2.0, 3.0, 2.0], [1, 2, 2, 1]
    estimate, standard_error = ratio_standard_error(costs, accepted)
    r = 8 / 6
    residuals = [y - r * x for y, x in zip(costs, accepted, strict=True)]
    se = np.sqrt(sum(e * e for e in residuals) * 4 / 3) / 6
    assert estimate == pytest.approx(r)
    assert standard_error == pytest.approx(se)
    assert normal_limit(r, se, 0.975, "upper") == pytest.approx(r + sps.norm.ppf(0.975) * se)
    assert normal_limit(r, se, 0.9, "lower") == pytest.approx(r + sps.norm.ppf(0.1) * se)
    assert ratio_standard_error([1.0, 2.0], [0, 0]) is None
    assert ratio_standard_error([1.0], [2]) == (0.5, None)
    with pytest.raises(ValueError):
        normal_limit(r, se, 1.0, "upper")


def test_log_ratio_standard_error_is_that_of_the_resampled_log_ratios():
    """The bootstrap's log-ratio SE equals the spread of log(candidate/baseline) over
    resamples drawn with the same case weights, computed here directly."""
    from evals.stats.bootstrap import _case_weights

    rng = np.random.default_rng(5)
    candidate = [list(rng.lognormal(0, 0.4, 3)) for _ in range(30)]
    baseline = [list(rng.lognormal(0, 0.4, 3)) for _ in range(30)]
    result = paired_mean_bootstrap(candidate, baseline, resamples=400, seed=2)
    weights = _case_weights(30, 400, 2)
    sums = [np.array([sum(g) for g in groups]) for groups in (candidate, baseline)]
    sizes = np.array([3.0] * 30)
    ratios = (weights @ sums[0] / (weights @ sizes)) / (weights @ sums[1] / (weights @ sizes))
    assert result.log_ratio_se == pytest.approx(np.std(np.log(ratios), ddof=1))
    zero = paired_mean_bootstrap([[0.0]] * 5, [[1.0]] * 5)
    assert zero.ratio == 0.0 and zero.log_ratio_se is None


@given(
    st.floats(min_value=0.001, max_value=0.999),
    st.sampled_from([1, 2, 3, 4.5, 9, 29, 99, 1000]),
)
def test_t_distribution_matches_scipy(p, df):
    assert t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-10, abs=1e-12)
    x = sps.t.ppf(p, df)
    assert t_sf(x, df) == pytest.approx(sps.t.sf(x, df), rel=1e-10, abs=1e-13)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=300),
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4),
)
def test_bootstrap_quantiles_equal_numpys_linear_quantiles(
    values: list[float], quantiles: list[float]
) -> None:
    samples = np.array(values)
    ours = _linear_quantiles(samples, quantiles)

    assert np.allclose(ours, np.quantile(samples, quantiles), rtol=1e-12, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.lists(st.floats(min_value=0, max_value=1e3), min_size=1, max_size=6),
        min_size=2,
        max_size=40,
    ),
    st.sampled_from([1, 7, 64, 4_000_000]),
)
def test_the_bootstrap_does_not_depend_on_its_block_size(groups, cells):
    """Resamples drawn in blocks of any size give exactly the intervals of one block."""
    from unittest import mock

    import evals.stats.bootstrap as bootstrap

    with mock.patch.object(bootstrap, "_BLOCK_CELLS", 10**9):
        whole = paired_quantile_bootstrap(groups, groups, resamples=200, seed=3)
    with mock.patch.object(bootstrap, "_BLOCK_CELLS", cells):
        assert paired_quantile_bootstrap(groups, groups, resamples=200, seed=3) == whole
