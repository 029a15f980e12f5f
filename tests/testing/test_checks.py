"""The one-line checks: each is its grader, fails as an AssertionError with the grader's
reason, and reads the suite's settings inside a run."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.trajectory import Step
from evals.testing import (
    AgentResult,
    EvalsRun,
    GradeFailed,
    assert_budget,
    assert_policy,
    assert_trajectory,
    assert_verified,
    check,
)
from evals.testing.runs import active

TOOLS = st.lists(st.sampled_from(["precio", "calculadora", "buscar", "variacion"]), max_size=6)


def answer(tools: list[str], output: str = "ok", prompt: str = "", **response) -> AgentResult:
    steps = [Step(kind="tool", name=name) for name in tools]
    return AgentResult(AgentResponse(output=output, trajectory=steps, **response), prompt)


def passes(function, *args, **kwargs) -> bool:
    try:
        function(*args, **kwargs)
    except GradeFailed:
        return False
    return True


def is_subsequence(expected: list[str], actual: list[str]) -> bool:
    remaining = iter(actual)
    return all(name in remaining for name in expected)


@settings(deadline=None)
@given(actual=TOOLS, expected=TOOLS.filter(bool))
def test_each_trajectory_mode_decides_as_its_definition(actual, expected):
    result = answer(actual)
    within = Counter(expected) - Counter(actual)
    outside = Counter(actual) - Counter(expected)
    definitions = {
        "in_order": is_subsequence(expected, actual),
        "exact": actual == expected,
        "used": set(expected) <= set(actual),
        "strict": actual == expected,
        "unordered": Counter(actual) == Counter(expected),
        "subset": not outside,
        "superset": not within,
    }

    decided = {mode: passes(assert_trajectory, result, expected, mode=mode) for mode in definitions}

    assert decided == definitions


def test_a_failed_check_is_an_assertion_error_with_the_graders_reason():
    result = answer(["precio"])

    with pytest.raises(AssertionError) as failed:
        assert_trajectory(result, ["precio", "calculadora"], mode="in_order")

    assert isinstance(failed.value, GradeFailed)
    assert str(failed.value) == failed.value.grade.reason
    assert "'calculadora' was not observed in order" in str(failed.value)
    assert "tool:precio" in str(failed.value)


def test_a_failed_policy_check_is_a_policy_violation():
    result = answer(["precio", "borrar_cuenta"])

    with pytest.raises(GradeFailed) as failed:
        assert_policy(result, deny=["borrar_cuenta"])

    assert failed.value.grade.policy_violation
    assert "borrar_cuenta" in str(failed.value)
    assert assert_policy(answer(["precio"]), deny=["borrar_cuenta"]).passed


def test_budget_limits_read_steps_and_cost():
    steps = [Step(kind="model", name="m") for _ in range(3)]
    result = AgentResult(AgentResponse(output="x", trajectory=steps, cost=0.05))

    assert assert_budget(result, max_steps=3, max_cost=0.08).passed
    with pytest.raises(GradeFailed, match="steps 3 over 2"):
        assert_budget(result, max_steps=2)
    with pytest.raises(GradeFailed, match=r"cost 0\.05 over 0\.01"):
        assert_budget(result, max_cost=0.01)


def test_the_verifier_wants_every_figure_from_a_tool_or_the_question():
    steps = [Step(kind="tool", name="precio", result={"cierre": 26.19})]
    sourced = AgentResult(AgentResponse(output="Cerró en 26.19.", trajectory=steps), "¿BUSI?")
    invented = AgentResult(AgentResponse(output="Cerró en 31.00.", trajectory=steps), "¿BUSI?")
    from_question = AgentResult(AgentResponse(output="El 15 cerró bien."), "¿Y el día 15?")

    assert assert_verified(sourced).passed
    assert assert_verified(from_question).passed
    with pytest.raises(GradeFailed, match="31"):
        assert_verified(invented)


def test_check_takes_any_assertion_type_and_any_answer_shape():
    assert check("the answer is 42", "contains", "42").passed
    assert check({"output": "hello", "cost": 0.001}, "cost", threshold=0.01).passed
    assert check(AgentResponse(output="hello"), "not-regex", r"\d").passed
    with pytest.raises(GradeFailed, match="Expected output to contain"):
        check("hello", "contains", "bye")
    with pytest.raises(SuiteError, match="did you mean 'contains'"):
        check("hello", "contians", "bye")
    with pytest.raises(TypeError, match="cannot read an agent answer"):
        check(42, "contains", "4")


def test_inside_a_run_checks_read_the_suite_settings_and_are_kept_with_the_run():
    run = EvalsRun(
        suite_id="s",
        case_id="c",
        agent="a",
        repeat=0,
        seed=1,
        shared_seed=2,
        suite_config={"policy": {"deny": ["borrar_cuenta"]}},
    )
    result = answer(["borrar_cuenta"])

    assert assert_policy(result).passed
    with active(run), pytest.raises(GradeFailed):
        assert_policy(result)
    with active(run):
        assert_trajectory(result, ["borrar_cuenta"], mode="used")

    assert [g.passed for g in run.grades] == [False, True]
    assert run.grades[0].policy_violation


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown mode 'sideways'"):
        assert_trajectory(answer([]), ["precio"], mode="sideways")
