"""Multiplicity corrections against scipy and statsmodels."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import false_discovery_control
from statsmodels.stats.multitest import multipletests

from evals.stats import (
    benjamini_hochberg,
    holm,
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
