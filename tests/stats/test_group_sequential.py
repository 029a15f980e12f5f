"""Exact group-sequential levels: crossing probabilities against scipy's multivariate
normal and published O'Brien-Fleming and Pocock constants; levels that spend exactly."""

from __future__ import annotations

import math
from itertools import accumulate, pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal, norm

from evals.stats import crossing_probabilities, sequential_levels, spending_shares


def _canonical(fractions: list[float]) -> np.ndarray:
    return np.array([[math.sqrt(min(a, b) / max(a, b)) for b in fractions] for a in fractions])


def _first_crossings_by_scipy(fractions: list[float], boundaries: list[float]) -> list[float]:
    """P(no crossing up to look k-1) - P(no crossing up to look k), from scipy's CDF."""
    cov = _canonical(fractions)
    staying = [1.0]
    for k in range(1, len(fractions) + 1):
        upper = np.array(boundaries[:k])
        mvn = multivariate_normal(
            mean=np.zeros(k), cov=cov[:k, :k], seed=1, maxpts=400_000, abseps=1e-7, releps=1e-7
        )
        staying.append(float(mvn.cdf(upper)))
    return [a - b for a, b in pairwise(staying)]


# Looks at multiples of 1/20 of the information, ending at all of it.
FRACTIONS = st.lists(st.integers(1, 19), max_size=4, unique=True).map(
    lambda steps: [*(s / 20 for s in sorted(steps)), 1.0]
)


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(fractions=FRACTIONS, boundaries=st.lists(st.floats(1.0, 4.0), min_size=5, max_size=5))
def test_crossing_probabilities_agree_with_scipys_multivariate_normal(
    fractions: list[float], boundaries: list[float]
) -> None:
    bounds = boundaries[: len(fractions)]
    ours = list(accumulate(crossing_probabilities(fractions, bounds)))
    # scipy's CDF is quasi-Monte Carlo: within about 1e-4 in five dimensions.
    theirs = list(accumulate(_first_crossings_by_scipy(fractions, bounds)))
    assert ours == pytest.approx(theirs, abs=1e-4)


@pytest.mark.parametrize(
    ("looks", "constant", "shape"),
    [
        # Jennison and Turnbull (2000), Tables 2.1 and 2.3: two-sided alpha 0.05, so one
        # side crosses with probability 0.025 (the other side's share is below 1e-6).
        (5, 2.040, "obrien-fleming"),
        (4, 2.024, "obrien-fleming"),
        (5, 2.413, "pocock"),
        (3, 2.289, "pocock"),
    ],
)
def test_published_boundaries_cross_with_their_nominal_error(
    looks: int, constant: float, shape: str
) -> None:
    fractions = [k / looks for k in range(1, looks + 1)]
    scale = [math.sqrt(1 / t) if shape == "obrien-fleming" else 1.0 for t in fractions]
    crossed = sum(crossing_probabilities(fractions, [constant * s for s in scale]))
    # The constants are rounded to three decimals: within the error that rounding allows.
    assert crossed == pytest.approx(0.025, abs=3e-4)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    fractions=FRACTIONS,
    alpha=st.floats(1e-4, 0.2),
    rho=st.floats(0.5, 4.0),
)
def test_levels_spend_exactly_and_beat_the_union_bound(
    fractions: list[float], alpha: float, rho: float
) -> None:
    spends = spending_shares(fractions, alpha, rho)
    levels = sequential_levels(fractions, spends)
    boundaries = [float(norm.isf(level)) for level in levels]
    assert crossing_probabilities(fractions, boundaries) == pytest.approx(spends, abs=1e-7)
    assert levels[0] == pytest.approx(spends[0], rel=1e-6)
    assert all(level >= spend * (1 - 1e-6) for level, spend in zip(levels, spends, strict=True))
    assert sum(_first_crossings_by_scipy(fractions, boundaries)) == pytest.approx(alpha, abs=1e-4)


@settings(max_examples=10, deadline=None)
@given(
    fractions=FRACTIONS,
    alphas=st.lists(st.floats(1e-4, 0.2), min_size=2, max_size=2, unique=True),
    rho=st.floats(1.0, 4.0),
)
def test_the_gain_over_the_spend_grows_with_the_error(
    fractions: list[float], alphas: list[float], rho: float
) -> None:
    """What makes one budget conservative for every coarser test of a look."""
    small, large = sorted(alphas)
    gains = [
        [
            level / spend
            for level, spend in zip(
                sequential_levels(fractions, spending_shares(fractions, a, rho)),
                spending_shares(fractions, a, rho),
                strict=True,
            )
        ]
        for a in (small, large)
    ]
    assert all(g <= h * (1 + 1e-6) for g, h in zip(*gains, strict=True))


def test_bad_designs_are_refused() -> None:
    with pytest.raises(ValueError, match="increase"):
        crossing_probabilities([0.5, 0.5], [2.0, 2.0])
    with pytest.raises(ValueError, match="one boundary per look"):
        crossing_probabilities([0.5, 1.0], [2.0])
    with pytest.raises(ValueError, match="sum to an error"):
        sequential_levels([0.5, 1.0], [0.3, 0.3])
    with pytest.raises(ValueError, match="non-negative"):
        sequential_levels([0.5, 1.0], [-0.01, 0.05])
