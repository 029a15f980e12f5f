"""Futility of a gate at a look: which gates can no longer be decided by the last look."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from evals.stats import futile

LEVELS = st.floats(0.9, 0.9999)
FRACTIONS = st.floats(0.05, 0.95)


def _gate(measured: float, error: float, threshold: float, fail: float, passing: float):
    """Limits of a higher-is-better gate with standard error `error` at the two levels."""
    return (
        measured,
        threshold,
        measured + norm.ppf(fail) * error,
        fail,
        measured - norm.ppf(passing) * error,
        passing,
    )


@pytest.mark.slow
@given(
    st.floats(-0.5, 0.5),
    st.floats(0.005, 0.3),
    st.floats(-0.3, 0.3),
    LEVELS,
    LEVELS,
    FRACTIONS,
    LEVELS,
    LEVELS,
    st.floats(0.0, 3.0),
    st.floats(0.0, 1.0),
)
def test_futility_is_monotone_in_reach_and_mirrors_for_lower_is_better(
    measured, error, threshold, fail, passing, fraction, final_fail, final_pass, reach, less
):
    gate = _gate(measured, error, threshold, fail, passing)
    now = futile(*gate, fraction, final_fail, final_pass, reach)
    # A smaller reach can only call more gates futile.
    assert futile(*gate, fraction, final_fail, final_pass, reach * less) or not now
    # The same gate with every number negated (lower is better) is judged alike.
    m, t, f, fl, p, pl = gate
    mirrored = (-m, -t, -f, fl, -p, pl)
    assert futile(*mirrored, fraction, final_fail, final_pass, reach) == now


@pytest.mark.slow
@given(
    st.floats(-0.5, 0.5),
    st.floats(0.005, 0.3),
    st.floats(-0.3, 0.3),
    LEVELS,
    LEVELS,
    FRACTIONS,
    st.floats(0.0, 3.0),
    st.floats(0.0, 3.0),
    st.floats(0.0, 1.0),
)
def test_the_pass_sides_reach_only_adds_futile_gates_as_it_shrinks(
    measured, error, threshold, fail, passing, fraction, reach, pass_reach, less
):
    gate = _gate(measured, error, threshold, fail, passing)
    both = futile(*gate, fraction, fail, passing, reach)
    # The pass side's reach defaults to the fail side's.
    assert futile(*gate, fraction, fail, passing, reach, reach) == both
    now = futile(*gate, fraction, fail, passing, reach, pass_reach)
    assert futile(*gate, fraction, fail, passing, reach, pass_reach * less) or not now
    # Futile with a pass reach of at least the fail reach implies futile with both equal.
    if pass_reach >= reach:
        assert both or not now


@given(st.floats(0.01, 0.1), FRACTIONS, st.floats(0.9, 0.999), st.floats(0.0, 3.0))
def test_a_gate_whose_limits_lie_beyond_a_threshold_is_never_futile(error, fraction, level, reach):
    for measured in (-0.5, 0.5):  # both limits below, or both above, a threshold of 0
        gate = _gate(measured, error, 0.0, level, level)
        assert (gate[2] < 0 and gate[4] < 0) or (gate[2] > 0 and gate[4] > 0)
        assert not futile(*gate, fraction, level, level, reach)


def test_a_futile_gate_decides_at_the_last_look_rarely_under_its_estimate():
    """Monte Carlo of the nested-means model with only run noise (standard error
    proportional to 1/sqrt(k)): from the current estimate, the last look fails a futile
    gate with probability at most Φ(-reach) and passes it with at most Φ(-pass_reach)."""
    error, fail, passing, final_fail, final_pass, threshold = 0.1, 0.998, 0.995, 0.99, 0.985, 0.1
    rng = np.random.default_rng(7)
    checked = 0
    for measured in np.linspace(-0.3, 0.1, 9):
        for fraction in (0.2, 0.4, 0.6, 0.8):
            for reach, pass_reach in ((1.0, 1.0), (2.0, 2.0), (2.0, 0.5), (2.0, 0.0)):
                gate = _gate(measured, error, -threshold, fail, passing)
                if not futile(*gate, fraction, final_fail, final_pass, reach, pass_reach):
                    continue
                checked += 1
                final_error = error * np.sqrt(fraction)
                # The final estimate given the current one: variance SE² - SE_K².
                spread = np.sqrt(error**2 - final_error**2)
                final = measured + rng.normal(0, spread, 100_000)
                fails = np.mean(final + norm.ppf(final_fail) * final_error < -threshold)
                passes = np.mean(final - norm.ppf(final_pass) * final_error >= -threshold)
                assert fails <= norm.cdf(-reach) + 0.004
                assert passes <= norm.cdf(-pass_reach) + 0.004
    assert checked >= 5


def test_a_gate_at_its_edge_early_is_not_futile_but_late_is():
    """Estimate at the threshold: early on, the estimate can still move enough; near the
    last look it cannot, since the interval cannot shrink enough to pass."""
    gate = _gate(-0.1, 0.05, -0.1, 0.99, 0.99)
    assert not futile(*gate, 0.1, 0.98, 0.98, 2.0)
    assert futile(*gate, 0.9, 0.98, 0.98, 2.0)


def test_levels_and_reach_are_checked():
    gate = _gate(0.0, 0.1, 0.0, 0.99, 0.99)
    with pytest.raises(ValueError, match="fraction"):
        futile(*gate, 1.0, 0.99, 0.99)
    with pytest.raises(ValueError, match="above 1/2"):
        futile(*gate, 0.5, 0.4, 0.99)
    with pytest.raises(ValueError, match="reach"):
        futile(*gate, 0.5, 0.99, 0.99, -1.0)


def test_a_rate_with_no_errored_run_reads_its_spread_off_its_pass_limit():
    """Before: an error rate of 0 (its lower fail limit at the estimate) was never futile,
    so every staged pull request ran to its last stage for it."""
    # no errored run of 100: lower limit 0, upper 0.052 at 99.5 %, at most 0.05 allowed
    gate = (0.0, 0.05, 0.0, 0.995, 0.052, 0.995)
    assert futile(*gate, 0.5, 0.99, 0.975, 2.0, 0.0, fail_only=True)
    # early, with half the spread left, failing is still within reach
    assert not futile(0.0, 0.05, 0.0, 0.995, 0.2, 0.995, 0.1, 0.99, 0.975, 2.0, fail_only=True)


def test_fail_only_stops_a_gate_on_its_way_to_a_pass():
    """Where an undetermined verdict passes, a gate whose estimate would pass by the last
    look but cannot fail stops; judging the pass side too keeps it running."""
    gate = _gate(0.05, 0.05, -0.1, 0.99, 0.99)  # estimate above the threshold
    assert not futile(*gate, 0.5, 0.99, 0.99, 2.0, 0.0)
    assert futile(*gate, 0.5, 0.99, 0.99, 2.0, 0.0, fail_only=True)
