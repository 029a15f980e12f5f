"""Exact tests and multiplicity corrections against scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom, boschloo_exact, false_discovery_control, ttest_1samp
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from evals.stats import (
    benjamini_hochberg,
    boschloo_p_value,
    holm,
    mcnemar_exact,
    paired_t_p_value,
)

small = st.integers(min_value=0, max_value=40)


@given(small, small)
def test_mcnemar_matches_statsmodels(b, c):
    expected = mcnemar([[5, b], [c, 7]], exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)


@given(small, small)
def test_mcnemar_mid_p_matches_binomial_formula_and_is_smaller(b, c):
    n = b + c
    if n == 0:
        assert mcnemar_exact(b, c, mid_p=True) == 1.0
        return
    low = min(b, c)
    expected = min(1.0, 2 * (binom.cdf(low, n, 0.5) - 0.5 * binom.pmf(low, n, 0.5)))
    assert mcnemar_exact(b, c, mid_p=True) == pytest.approx(expected, abs=1e-12)
    assert mcnemar_exact(b, c, mid_p=True) <= mcnemar_exact(b, c)
    assert mcnemar_exact(b, c) == mcnemar_exact(c, b)


tables = st.integers(min_value=1, max_value=15).flatmap(
    lambda n1: st.integers(min_value=1, max_value=15).flatmap(
        lambda n2: st.tuples(
            st.integers(min_value=0, max_value=n1),
            st.just(n1),
            st.integers(min_value=0, max_value=n2),
            st.just(n2),
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(tables)
def test_boschloo_matches_scipy(table):
    x1, n1, x2, n2 = table
    expected = boschloo_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative="two-sided").pvalue
    assert boschloo_p_value(x1, n1, x2, n2) == pytest.approx(expected, abs=1e-9)
    assert boschloo_p_value(x2, n2, x1, n1) == pytest.approx(expected, abs=1e-9)


def test_boschloo_known_tables():
    """Tables from scipy's documentation and the typical repeats of a case."""
    assert boschloo_p_value(74, 117, 31, 63) == pytest.approx(
        boschloo_exact([[74, 31], [43, 32]]).pvalue, abs=1e-9
    )
    assert boschloo_p_value(5, 5, 0, 5) < 0.01
    assert boschloo_p_value(3, 5, 3, 5) == 1.0
    assert boschloo_p_value(0, 0, 1, 3) is None


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


@given(st.lists(st.floats(min_value=-1, max_value=1), min_size=2, max_size=40))
def test_paired_t_matches_scipy(differences):
    if np.var(differences) < 1e-12:
        return
    expected = ttest_1samp(differences, 0).pvalue
    assert paired_t_p_value(differences) == pytest.approx(expected, abs=1e-10)


def test_paired_t_degenerate_inputs():
    assert paired_t_p_value([0.2]) is None
    assert paired_t_p_value([0.0, 0.0, 0.0]) == 1.0
    assert paired_t_p_value([0.1, 0.1]) == 0.0
    assert math.isclose(paired_t_p_value([0.1, -0.1]), 1.0)
