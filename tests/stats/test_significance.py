"""Multiplicity corrections against scipy and statsmodels."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import false_discovery_control
from statsmodels.stats.multitest import multipletests

from evals.stats import (
    benjamini_hochberg,
    holm,
)

p_lists = st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=30)


@given(p_lists)
def test_benjamini_hochberg_matches_scipy(p_values):
    expected = false_discovery_control(p_values, method="bh")
    assert benjamini_hochberg(p_values) == pytest.approx(list(expected), abs=1e-12)


@settings(max_examples=30)  # statsmodels' multipletests costs tens of ms a call
@given(p_lists)
def test_holm_matches_statsmodels(p_values):
    expected = multipletests(p_values, method="holm")[1]
    assert holm(p_values) == pytest.approx(list(expected), abs=1e-12)
