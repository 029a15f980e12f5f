"""trajectory:match against a brute-force reference that enumerates every assignment."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trajectory_kit import grade_run, tool

from evals.graders.contracts import ToolContract
from evals.graders.trajectory_match import (
    ARGS_MODES,
    MATCH_MODES,
    Call,
    ExpectedCall,
    align,
    args_match,
    value_matches,
)

NAMES = ("a", "b", "c")
KEYS = ("k", "q", "z")
VALUES = st.one_of(st.integers(min_value=0, max_value=2), st.sampled_from(["x", "y"]))
ARGS = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=2)
ACTUAL = st.lists(st.builds(Call, st.sampled_from(NAMES), ARGS), max_size=5)
EXPECTED = st.lists(
    st.builds(
        ExpectedCall,
        st.sampled_from(NAMES),
        st.one_of(st.none(), ARGS),
        st.sampled_from(ARGS_MODES),
    ),
    max_size=5,
)


def reference_args(actual: dict[str, Any], expected: dict[str, Any] | None, mode: str) -> bool:
    """The argument modes by their definitions (plain values, no choices or schemas)."""
    if expected is None or mode == "ignore":
        return True
    if mode == "exact":
        return actual == expected
    if mode == "subset":
        return all(k in expected and expected[k] == v for k, v in actual.items())
    return all(k in actual and actual[k] == v for k, v in expected.items())


def reference_matrix(actual: list[Call], expected: list[ExpectedCall]) -> list[list[bool]]:
    return [
        [a.name == e.name and reference_args(a.args, e.args, e.args_mode) for e in expected]
        for a in actual
    ]


def brute_force_matching(matrix: list[list[bool]], n: int, m: int) -> int:
    """The largest number of matching pairs over every one-to-one assignment."""
    if n <= m:
        return max(
            (sum(matrix[i][p[i]] for i in range(n)) for p in permutations(range(m), n)),
            default=0,
        )
    return max(
        (sum(matrix[p[j]][j] for j in range(m)) for p in permutations(range(n), m)), default=0
    )


def reference_verdict(actual: list[Call], expected: list[ExpectedCall], mode: str) -> bool:
    n, m = len(actual), len(expected)
    matrix = reference_matrix(actual, expected)
    if mode == "strict":
        return n == m and all(matrix[i][i] for i in range(n))
    if mode == "unordered":
        return n == m and any(
            all(matrix[p[j]][j] for j in range(m)) for p in permutations(range(n))
        )
    best = brute_force_matching(matrix, n, m)
    return best == (n if mode == "subset" else m)


def greedy_matching(matrix: list[list[bool]]) -> int:
    """First-fit matching: each reference call takes the first free actual call it matches."""
    used: set[int] = set()
    for j in range(len(matrix[0]) if matrix else 0):
        for i, row in enumerate(matrix):
            if i not in used and row[j]:
                used.add(i)
                break
    return len(used)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(ACTUAL, EXPECTED, st.sampled_from(MATCH_MODES))
def test_every_mode_agrees_with_brute_force(
    actual: list[Call], expected: list[ExpectedCall], mode: str
) -> None:
    result = align(actual, expected, mode)
    assert result.passed == reference_verdict(actual, expected, mode)
    if mode != "strict":
        n, m = len(actual), len(expected)
        assert len(result.pairs) == brute_force_matching(reference_matrix(actual, expected), n, m)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(ACTUAL, EXPECTED)
def test_pairs_are_one_to_one_and_really_match(
    actual: list[Call], expected: list[ExpectedCall]
) -> None:
    result = align(actual, expected, "superset")
    matrix = reference_matrix(actual, expected)
    assert len({i for i, _ in result.pairs}) == len(result.pairs)
    assert len({j for _, j in result.pairs}) == len(result.pairs)
    assert all(matrix[i][j] for i, j in result.pairs)
    assert len(result.pairs) >= greedy_matching(matrix)


@settings(deadline=None)
@given(ACTUAL)
def test_a_trajectory_matches_itself_in_every_mode(actual: list[Call]) -> None:
    reference = [ExpectedCall(c.name, dict(c.args), "exact") for c in actual]
    for mode in MATCH_MODES:
        result = align(actual, reference, mode)
        assert result.passed and result.score == 1.0


@pytest.mark.slow
@settings(deadline=None)
@given(ACTUAL, EXPECTED)
def test_unordered_is_subset_and_superset_with_equal_lengths(
    actual: list[Call], expected: list[ExpectedCall]
) -> None:
    unordered = align(actual, expected, "unordered").passed
    both = align(actual, expected, "subset").passed and align(actual, expected, "superset").passed
    assert unordered == (both and len(actual) == len(expected))


# Two calls of the same tool: the permissive reference call matches both actual calls, the
# specific one only the first. First-fit spends the permissive one on the first call.
REPEATED_ACTUAL = [
    Call("precio", {"ticker": "BUSI", "fecha": "2024-03-15"}),
    Call("precio", {"ticker": "BUSI", "fecha": "2024-03-22"}),
]
REPEATED_REFERENCE = [
    ExpectedCall("precio", {"ticker": "BUSI"}, "superset"),
    ExpectedCall("precio", {"ticker": "BUSI", "fecha": "2024-03-15"}, "exact"),
]


def test_repeated_calls_need_the_optimal_assignment() -> None:
    matrix = reference_matrix(REPEATED_ACTUAL, REPEATED_REFERENCE)
    assert greedy_matching(matrix) == 1
    for mode in ("unordered", "superset", "subset"):
        result = align(REPEATED_ACTUAL, REPEATED_REFERENCE, mode)
        assert result.passed, mode
        assert sorted(result.pairs) == [(0, 1), (1, 0)]
    assert not align(REPEATED_ACTUAL, REPEATED_REFERENCE, "strict").passed


def test_scores_are_the_matched_share() -> None:
    actual = [Call("a"), Call("b"), Call("x")]
    reference = [ExpectedCall("a"), ExpectedCall("b"), ExpectedCall("c"), ExpectedCall("d")]
    assert align(actual, reference, "superset").score == 2 / 4
    assert align(actual, reference, "subset").score == 2 / 3
    assert align(actual, reference, "unordered").score == 2 / 4
    assert align(actual, [ExpectedCall("a"), ExpectedCall("x")], "strict").score == 1 / 3
    assert align([], [], "strict").passed and align([], [], "unordered").score == 1.0


def test_int_accepted_where_a_float_is_declared_but_not_the_reverse() -> None:
    contract = ToolContract(
        "t",
        parameters={"properties": {"f": {"type": "number"}, "i": {"type": "integer"}}},
    )
    assert args_match({"f": 3}, {"f": 3.0}, "exact", contract)
    assert not args_match({"i": 3.0}, {"i": 3}, "exact", contract)
    assert args_match({"i": 3}, {"i": 3}, "exact", contract)
    assert not args_match({"f": "3"}, {"f": 3}, "exact", contract)


def test_booleans_are_not_numbers() -> None:
    assert not value_matches(True, 1)
    assert not value_matches(1, True)
    assert not value_matches(0, False)
    assert value_matches(1, 1.0)


def test_one_of_and_optional_arguments() -> None:
    expected = {
        "unit": {"one_of": ["celsius", "C"]},
        "days": {"one_of": [1, 3], "optional": True},
    }
    assert args_match({"unit": "C"}, expected, "exact")
    assert args_match({"unit": "celsius", "days": 3}, expected, "exact")
    assert not args_match({"unit": "kelvin"}, expected, "exact")
    assert not args_match({"unit": "C", "days": 2}, expected, "exact")
    assert not args_match({"days": 1}, expected, "exact")
    assert not args_match({"unit": "C", "extra": 1}, expected, "exact")
    assert args_match({"unit": "C", "extra": 1}, expected, "superset")
    assert args_match({"days": 1}, expected, "subset")


def test_nested_values_compare_exactly() -> None:
    assert value_matches({"a": [1, 2]}, {"a": [1, 2]})
    assert not value_matches({"a": [1, 2]}, {"a": [2, 1]})
    assert not value_matches({"a": 1, "b": 2}, {"a": 1})


def test_assertion_with_per_tool_argument_modes() -> None:
    trajectory = [
        tool("precio", {"ticker": "BUSI", "fecha": "2024-03-15"}),
        tool("calculadora", {"expresion": "(27.88/26.19 - 1)*100"}),
    ]
    value = {
        "mode": "unordered",
        "args": "exact",
        "tool_args": {"calculadora": "ignore"},
        "calls": [
            {"name": "calculadora", "args": {"expresion": "27.88/26.19"}},
            {"name": "precio", "args": {"ticker": "BUSI", "fecha": "2024-03-15"}},
        ],
    }
    assert grade_run("trajectory:match", value, trajectory).passed
    strict = grade_run("trajectory:match", {**value, "mode": "strict"}, trajectory)
    assert not strict.passed
    assert "calls outside the reference" in strict.reason


def test_assertion_reason_lists_missing_and_extra_calls() -> None:
    grade = grade_run(
        "trajectory:match",
        {"mode": "superset", "calls": ["precio", "calculadora"]},
        [tool("precio"), tool("buscar_noticias")],
    )
    assert not grade.passed
    assert grade.score == 0.5
    assert "reference calls not made: calculadora" in grade.reason


def test_assertion_threshold_accepts_a_partial_match() -> None:
    value = {"mode": "superset", "calls": ["precio", "calculadora"]}
    trajectory = [tool("precio")]
    assert grade_run("trajectory:match", value, trajectory, threshold=0.5).passed
    assert not grade_run("trajectory:match", value, trajectory, threshold=0.75).passed


def test_declared_parameter_types_come_from_the_suite_tools() -> None:
    suite = {"tools": [{"name": "t", "parameters": {"properties": {"n": {"type": "integer"}}}}]}
    value = {"calls": [{"name": "t", "args": {"n": 2}}]}
    assert grade_run("trajectory:match", value, [tool("t", {"n": 2})], suite_config=suite).passed
    floated = grade_run("trajectory:match", value, [tool("t", {"n": 2.0})], suite_config=suite)
    assert not floated.passed


def test_unknown_modes_are_grader_errors() -> None:
    grade = grade_run("trajectory:match", {"mode": "fuzzy", "calls": ["a"]}, [tool("a")])
    assert grade.errored
    grade = grade_run("trajectory:match", {"args": "loose", "calls": ["a"]}, [tool("a")])
    assert grade.errored
