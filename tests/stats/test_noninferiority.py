"""The t test over cases behind the regression gates, its floor, and three-way decisions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import t as student_t
from scipy.stats import ttest_1samp

from evals.stats import CaseMeanDifference, case_mean_difference, gate_status, mean_differences


def _mixed_cases(draw_counts):
    """Cases whose runs never all agree."""
    return st.integers(3, 12).flatmap(
        lambda k: st.lists(
            st.tuples(st.integers(1, k - 1), st.integers(1, k - 1)), min_size=2, max_size=40
        ).map(lambda pairs: (k, pairs))
    )


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(_mixed_cases(None), st.floats(-0.3, 0.3))
def test_without_agreeing_cases_it_is_scipys_one_sample_t_test(data, null):
    k, pairs = data
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    differences = [(a - b) / k for a, b in pairs]
    result = case_mean_difference(first, [k] * len(pairs), second, [k] * len(pairs))
    # the documented floor: half the unbiased run noise of both agents' mixed cases
    noise = sum((x / k) * (1 - x / k) / (k - 1) for x in first + second) / 2
    assume(np.var(differences, ddof=1) > noise / len(pairs) * (1 + 1e-9))
    for alternative in ("less", "greater"):
        expected = ttest_1samp(differences, null, alternative=alternative).pvalue
        assert result.p_value(null, alternative) == pytest.approx(expected, abs=1e-9)
    low, high = student_t.interval(
        0.9,
        len(pairs) - 1,
        loc=np.mean(differences),
        scale=np.std(differences, ddof=1) / np.sqrt(len(pairs)),
    )
    assert result.limit(0.95, "lower") == pytest.approx(max(low, -1), abs=1e-9)
    assert result.limit(0.95, "upper") == pytest.approx(min(high, 1), abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 10).flatmap(
        lambda k: st.lists(
            st.tuples(st.integers(0, k), st.integers(0, k)), min_size=2, max_size=30
        ).map(lambda pairs: (k, pairs))
    ),
    st.floats(0.8, 0.999),
)
def test_limit_and_p_value_agree(data, level):
    k, pairs = data
    result = case_mean_difference(
        [a for a, _ in pairs], [k] * len(pairs), [b for _, b in pairs], [k] * len(pairs)
    )
    upper = result.limit(level, "upper")
    for threshold in (upper - 1e-6, upper + 1e-6):
        if -1 < threshold < 1 and upper < 1:
            assert (upper < threshold) == (result.p_value(threshold, "less") <= 1 - level)


def test_the_floor_binds_when_the_spread_is_implausibly_small():
    """Every case 3/5 for both agents: zero spread, so the standard error is the floor,
    half the unbiased run noise: sqrt(2 * 30 * 0.24/4 / 2) / 30."""
    result = case_mean_difference([3] * 30, [5] * 30, [3] * 30, [5] * 30)
    assert result.standard_error == pytest.approx((2 * 30 * 0.06 / 2) ** 0.5 / 30)


def test_cases_that_all_pass_do_not_give_a_zero_width_interval():
    """Six cases passing every run for both agents: a 10-point tolerance cannot be shown,
    since a candidate at 0.9 per case would pass all 30 runs 4 % of the time."""
    result = case_mean_difference([5] * 6, [5] * 6, [5] * 6, [5] * 6)
    assert result.estimate == 0
    assert result.standard_error > 0
    assert result.limit(0.975, "lower") < -0.1
    assert result.p_value(-0.1, "greater") > 0.025


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 20), st.integers(2, 30), st.integers(0, 2**31))
def test_vectorized_rows_equal_the_scalar_function(cases, repeats, seed):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, repeats + 1, size=(4, cases))
    second = rng.integers(0, repeats + 1, size=(4, cases))
    means, errors = mean_differences(first, repeats, second, repeats)
    for row in range(4):
        scalar = case_mean_difference(
            first[row].tolist(), [repeats] * cases, second[row].tolist(), [repeats] * cases
        )
        assert means[row] == pytest.approx(scalar.estimate, abs=1e-12)
        assert errors[row] == pytest.approx(scalar.standard_error, abs=1e-12)


def test_input_errors():
    with pytest.raises(ValueError):
        case_mean_difference([1], [2], [1], [2])
    with pytest.raises(ValueError):
        case_mean_difference([1, 2], [2, 2], [1], [2])
    with pytest.raises(ValueError):
        CaseMeanDifference(0.0, 0.1, 5, 6).limit(1.0, "lower")


limits = st.floats(-1, 1)


@given(limits, limits, st.floats(-1, 1), st.booleans())
def test_gate_status_follows_the_limits(lower, upper, threshold, higher_is_better):
    lower, upper = min(lower, upper), max(lower, upper)
    status = gate_status(lower, upper, threshold, higher_is_better)
    if higher_is_better:
        expected = "fail" if upper < threshold else "pass" if lower >= threshold else None
    else:
        expected = "fail" if lower > threshold else "pass" if upper <= threshold else None
    assert status == (expected or "undetermined")


def test_a_stricter_fail_threshold_wins_over_a_pass():
    """A P0 case: any shown loss fails; passing needs the loss shown within 0.2."""
    assert gate_status(-0.15, -0.01, -0.2, fail_threshold=0.0) == "fail"
    assert gate_status(-0.15, 0.05, -0.2, fail_threshold=0.0) == "pass"
    assert gate_status(-0.45, 0.05, -0.2, fail_threshold=0.0) == "undetermined"
