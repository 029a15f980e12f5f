"""The value checks every suite setting goes through: numbers within bounds, shapes, keys."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.model.bounds import CONFIDENCE, COUNT, FINITE, FRACTION, NON_NEGATIVE, POSITIVE, Bounds
from evals.model.errors import SuiteError
from evals.suite import checks

BOUNDS = [COUNT, CONFIDENCE, FINITE, FRACTION, NON_NEGATIVE, Bounds(low=-1, high=1)]


def _accepts(bounds: Bounds, value: float) -> bool:
    """The bounds written out independently of `Bounds.holds`."""
    if bounds.integer and value != int(value):
        return False
    below = bounds.low is not None and (
        value < bounds.low or (bounds.open_low and value == bounds.low)
    )
    above = bounds.high is not None and (
        value > bounds.high or (bounds.open_high and value == bounds.high)
    )
    return not (below or above)


@given(
    bounds=st.sampled_from(BOUNDS),
    value=st.one_of(st.integers(-5, 5), st.floats(-3, 3, allow_nan=False)),
)
def test_a_finite_number_passes_exactly_when_within_the_bounds(bounds, value):
    if _accepts(bounds, value):
        assert checks.number(value, "x.key", bounds, file="s.yaml", line=3) == float(value)
    else:
        with pytest.raises(SuiteError) as info:
            checks.number(value, "x.key", bounds, file="s.yaml", line=3)
        assert info.value.line == 3
        assert bounds.describe() in info.value.message + (info.value.fix or "")


@given(
    bounds=st.sampled_from(BOUNDS),
    value=st.one_of(
        st.booleans(),
        st.text(max_size=5),
        st.none(),
        st.lists(st.integers(), max_size=2),
        st.sampled_from([math.nan, math.inf, -math.inf, 10**400]),
    ),
)
def test_booleans_text_nan_and_infinities_are_never_numbers(bounds, value):
    with pytest.raises(SuiteError) as info:
        checks.number(value, "evaluateOptions.repeat", bounds, file="s.yaml", line=7, example="3")
    error = info.value
    assert (error.file, error.line) == ("s.yaml", 7)
    assert error.message.startswith("evaluateOptions.repeat must be")
    assert error.fix is not None and error.fix.startswith("write repeat: 3")


def test_a_whole_number_setting_refuses_fractions_and_takes_whole_floats():
    assert checks.number(3.0, "repeat", COUNT, file=None, line=None) == 3
    with pytest.raises(SuiteError, match="whole number"):
        checks.number(2.5, "repeat", COUNT, file=None, line=None)


def test_bounds_describe_their_ends():
    assert COUNT.describe() == "a whole number >= 1"
    assert CONFIDENCE.describe() == "a number > 0 and < 1"
    assert FINITE.describe() == "a number"
    assert FRACTION.describe() == "a number between 0 and 1"
    assert POSITIVE.describe() == "a positive number"


@pytest.mark.parametrize(
    ("check", "good", "bad"),
    [
        (checks.mapping, {"a": 1}, [1]),
        (checks.sequence, [1], {"a": 1}),
        (checks.text, "x", 5),
    ],
)
def test_shapes_refuse_the_wrong_kind_with_an_example(check, good, bad):
    assert check(good, "env", file="s.yaml", line=2, example="env: {A: b}") is good
    with pytest.raises(SuiteError) as info:
        check(bad, "env", file="s.yaml", line=2, example="env: {A: b}")
    assert info.value.line == 2
    assert info.value.fix == "write env: {A: b}"


def test_flag_refuses_quoted_yes():
    assert checks.flag(False, "gates.paired", file=None, line=None) is False
    with pytest.raises(SuiteError, match="true or false, not the text 'yes'"):
        checks.flag("yes", "gates.paired", file=None, line=4)


def test_unknown_key_is_refused_at_its_line_with_the_closest_known_key():
    with pytest.raises(SuiteError) as info:
        checks.known_keys(
            {"max_cots": 1},
            ["max_cost", "max_steps"],
            "budget",
            file="s.yaml",
            lines={"max_cots": 9},
            line=8,
        )
    assert info.value.line == 9
    assert "did you mean 'max_cost'?" in (info.value.fix or "")
