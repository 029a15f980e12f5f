"""A case's own `budget` overrides the suite's defaults key by key, defaultTest's included."""

from __future__ import annotations

import pytest

from evals.grade.grading import grade_case
from evals.model.results import AgentResponse
from evals.suite import load_suite

SUITE = """\
prompts: ['{{q}}']
providers: [echo]
budget: {max_cost: 0.08, max_latency_ms: 6000}
defaultTest:
  assert:
    - type: budget
      value: {max_tool_calls: 4}
tests:
  - description: default
    vars: {q: a}
  - description: dearer
    vars: {q: b}
    assert:
      - type: budget
        value: {max_cost: 0.2, stop_reason: done}
  - description: without defaults
    vars: {q: c}
    options: {disableDefaultAsserts: true}
    assert:
      - type: budget
        value: {max_cost: 0.2}
"""


def _budgets(case) -> list[dict]:
    return [a.raw for a in case.asserts if a.type == "budget"]


def _grade(case, cost: float):
    response = AgentResponse(output="ok", cost=cost, stop_reason="done")
    return grade_case(
        case,
        response,
        output="ok",
        prompt="q",
        latency_ms=10.0,
        suite_root=".",
        suite_config={"budget": {"max_cost": 0.08, "max_latency_ms": 6000}},
    )


@pytest.mark.slow
def test_a_case_budget_replaces_default_test_keys_and_keeps_the_others(write_suite):
    """Before: the defaultTest budget stayed a separate assertion with the suite's 0.08,
    so a case allowing 0.2 still failed at 0.1."""
    default, dearer, alone = load_suite(write_suite(SUITE)).cases
    assert [b["value"] for b in _budgets(default)] == [{"max_tool_calls": 4}]
    assert [b["value"] for b in _budgets(dearer)] == [
        {"max_tool_calls": 4, "max_cost": 0.2, "stop_reason": "done"}
    ]
    assert [b["value"] for b in _budgets(alone)] == [{"max_cost": 0.2}]
    assert _grade(dearer, 0.1).passed
    assert not _grade(default, 0.1).passed
    assert "cost 0.1 over 0.08" in _grade(default, 0.1).reason
    assert not _grade(dearer, 0.3).passed
