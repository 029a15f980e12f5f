"""Odd results of javascript and python checks, as promptfoo 0.121 grades them: NaN and
the infinities stay numbers, component results a check returns are listed after it, and a
test threshold's reason writes the score as JavaScript's toFixed does."""

from __future__ import annotations

import math

import pytest
from assertion_kit import make_assertion, run
from hypothesis import given
from hypothesis import strategies as st

from evals.common import jsengine
from evals.graders.scoring import combine
from evals.model.results import Grade


@pytest.mark.parametrize(
    ("code", "expected"),
    [("NaN", math.nan), ("Infinity", math.inf), ("-Infinity", -math.inf), ("-0", 0.0)],
)
def test_non_finite_numbers_leave_the_sandbox_as_numbers(code: str, expected: float) -> None:
    result = jsengine.call("assertion", code, "out", {})
    assert isinstance(result, float | int)
    assert math.isnan(result) if math.isnan(expected) else result == expected


def test_non_finite_numbers_inside_a_result_leave_the_sandbox_too() -> None:
    result = jsengine.call("fn", ["x", "process"], "return {a: [NaN, -Infinity], b: x}", ["t"])
    assert math.isnan(result["a"][0]) and result["a"][1] == -math.inf and result["b"] == "t"


def test_a_string_that_looks_like_the_tag_stays_a_string() -> None:
    result = jsengine.call("fn", ["process"], 'return {"\\u0000number": "NaN", x: 1}', [])
    assert result == {"\u0000number": "NaN", "x": 1}


def test_nan_fails_with_a_nan_score_and_promptfoos_reason() -> None:
    grade = run("javascript", "out", "NaN")
    assert not grade.passed and math.isnan(grade.score)
    assert grade.reason == "Custom function returned false\nNaN"
    assert not grade.errored


def test_not_javascript_passes_a_nan() -> None:
    grade = run("not-javascript", "out", "NaN")
    assert grade.passed and math.isnan(grade.score) and grade.reason == "Assertion passed"


def test_a_nan_misses_any_threshold() -> None:
    grade = run("javascript", "out", "NaN", threshold=0)
    assert not grade.passed and grade.reason == "Custom function returned false\nNaN"


@pytest.mark.parametrize(("code", "passed"), [("Infinity", True), ("-Infinity", False)])
def test_infinities_compare_with_zero(code: str, passed: bool) -> None:
    grade = run("javascript", "out", code)
    assert grade.passed is passed and abs(grade.score) == math.inf


def test_a_grading_result_may_score_nan() -> None:
    grade = run("javascript", "out", '({pass: true, score: NaN, reason: "r"})')
    assert grade.passed and math.isnan(grade.score) and grade.reason == "r"


@pytest.mark.parametrize(
    ("code", "kind", "shown"),
    [
        ('"0.5"', "string", '"0.5"'),
        ("({score: 1, reason: 'r'})", "object", '{"score":1,"reason":"r"}'),
        ("undefined", "undefined", "undefined"),
        ("null", "object", "null"),
    ],
)
def test_other_results_are_refused_as_promptfoo_refuses_them(
    code: str, kind: str, shown: str
) -> None:
    grade = run("javascript", "out", code)
    assert not grade.passed and grade.score == 0
    assert grade.reason.startswith(
        "Custom function threw error: Custom function must return a boolean, number, or "
        f"GradingResult object. Got type {kind}: {shown}\n"
    )


def test_component_results_a_check_returns_stay_in_its_grade() -> None:
    code = (
        '({pass: true, score: 0.6, reason: "c", '
        'componentResults: [{pass: false, score: 0, reason: "inner"}]})'
    )
    grade = run("javascript", "out", code)
    assert (grade.passed, grade.score) == (True, 0.6)
    assert [(c.passed, c.reason) for c in grade.component_results] == [(False, "inner")]


def test_python_component_results_in_snake_case_stay_too() -> None:
    code = (
        '{"pass": True, "score": 0.7, "reason": "p", '
        '"component_results": [{"pass": False, "score": 0, "reason": "inner"}]}'
    )
    grade = run("python", "out", code)
    assert [(c.passed, c.reason) for c in grade.component_results] == [(False, "inner")]


def _threshold_reason(score: float, threshold: float) -> str:
    grades = [(make_assertion("contains", "x"), Grade(True, score, "ok"))]
    return combine(grades, threshold).reason


def test_a_nan_score_misses_the_test_threshold_and_reads_nan() -> None:
    assert _threshold_reason(math.nan, 0.5) == "Aggregate score NaN < 0.5 threshold"


def test_the_threshold_reason_rounds_as_to_fixed_and_writes_integers_plainly() -> None:
    assert _threshold_reason(0.125, 1.0) == "Aggregate score 0.13 < 1 threshold"
    assert _threshold_reason(0.5, 0.5) == "Aggregate score 0.50 ≥ 0.5 threshold"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6))
def test_a_number_result_is_the_score_and_passes_above_zero(score: float) -> None:
    grade = run("javascript", "out", repr(score))
    assert grade.score == score and grade.passed is (score > 0)


def test_a_grade_written_to_json_with_a_null_score_reads_back_as_nan() -> None:
    grade = Grade.from_dict({"pass": False, "score": None, "reason": "r"})
    assert math.isnan(grade.score) and not grade.passed
