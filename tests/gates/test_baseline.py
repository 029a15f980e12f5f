"""The pieces of an honest baseline reuse: the guard's draw, the drift test and the
candidate's allocation from the baseline's history."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.gates.baseline import GUARD_SHARE, MIN_REPEATS, allocation, drift, guard_repeats

histories = st.dictionaries(
    st.sampled_from([f"c{i}" for i in range(30)]),
    st.integers(1, 20).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1,
    max_size=30,
)


@settings(max_examples=80)
@given(histories, st.floats(0.05, 0.5), st.integers(0, 99))
def test_the_guard_reruns_a_share_of_the_stored_runs_and_every_case(stored, share, seed):
    chosen = guard_repeats(stored, share, seed)
    assert set(chosen) == set(stored)
    for case, repeats in chosen.items():
        runs = stored[case][1]
        assert 1 <= len(repeats) <= runs
        assert len(set(repeats)) == len(repeats) and all(0 <= r < runs for r in repeats)
    total = sum(runs for _, runs in stored.values())
    wanted = max(round(share * total), len(stored))
    assert sum(len(r) for r in chosen.values()) == min(wanted, total)
    assert guard_repeats(stored, share, seed) == chosen


def test_the_guard_leans_on_the_cases_whose_runs_disagree():
    stored = {"steady": (20, 20), "flaky": (10, 20), "broken": (0, 20)}
    chosen = guard_repeats(stored, GUARD_SHARE, seed=1)
    assert len(chosen["flaky"]) > len(chosen["steady"]) >= 1
    assert sum(len(r) for r in chosen.values()) <= round(GUARD_SHARE * 60)


def test_no_drift_is_called_drift_at_most_at_the_guards_level():
    """Fresh and stored runs from the same rates, 2000 seeded suites: the guard's drift
    verdict comes at most at its level (plus Monte Carlo error)."""
    rng = np.random.default_rng(4)
    called = 0
    for _ in range(2000):
        rates = rng.choice([0.97, 0.5, 0.03, 0.8], size=20)
        stored = {f"c{i}": (int(rng.binomial(10, p)), 10) for i, p in enumerate(rates)}
        fresh = {f"c{i}": (int(rng.binomial(2, p)), 2) for i, p in enumerate(rates)}
        called += drift(fresh, stored, 0.2).drifted
    assert called / 2000 <= 0.2 + 2 * math.sqrt(0.2 * 0.8 / 2000)


def test_a_case_that_broke_since_is_drift():
    stored = {f"c{i}": (10, 10) for i in range(20)}
    fresh = {f"c{i}": (0 if i < 5 else 2, 2) for i in range(20)}
    verdict = drift(fresh, stored)
    assert verdict.drifted and verdict.fresh_rate < verdict.stored_rate
    assert "drift shown" in verdict.describe()
    assert not drift(stored, stored).drifted


@settings(max_examples=80)
@given(histories, st.floats(2, 20))
def test_allocation_follows_the_spread_and_keeps_every_case_running(history, mean):
    planned = allocation(history, mean)
    assert set(planned) == set(history) and min(planned.values()) >= MIN_REPEATS
    spread = {
        c: math.sqrt((x + 0.5) / (n + 1) * (1 - (x + 0.5) / (n + 1)))
        for c, (x, n) in history.items()
    }
    ordered = sorted(history, key=lambda c: spread[c])
    assert all(planned[a] <= planned[b] for a, b in itertools.pairwise(ordered))
    floor = sum(
        max(MIN_REPEATS, mean * len(history) * s / sum(spread.values())) for s in spread.values()
    )
    assert sum(planned.values()) == pytest.approx(floor, abs=len(history) / 2 + 1e-9)


def test_neyman_allocation_beats_equal_repeats_at_the_same_calls():
    history = {f"c{i}": (x, 10) for i, x in enumerate([10] * 12 + [0] * 3 + [5] * 5)}
    planned = allocation(history, 10, minimum=1)
    variance = {c: (x + 0.5) / 11 * (1 - (x + 0.5) / 11) for c, (x, _) in history.items()}
    calls = sum(planned.values())
    equal = calls / len(history)
    assert sum(v / planned[c] for c, v in variance.items()) < sum(
        v / equal for v in variance.values()
    )


@settings(max_examples=60)
@given(histories, st.floats(2, 20), st.integers(3, 12))
def test_a_capped_allocation_gives_the_capped_cases_share_to_the_others(history, mean, most):
    planned = allocation(history, mean, maximum=most)
    assert set(planned) == set(history)
    assert all(min(MIN_REPEATS, most) <= n <= max(most, MIN_REPEATS) for n in planned.values())
    free = allocation(history, mean)
    # a case below the cap gets at least what it had without one (rounding aside)
    assert all(planned[c] >= free[c] - 1 for c in history if free[c] < most)
