"""is-valid-function-call: promptfoo's provider check and its OpenAI function-call validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.graders.tools_call import NO_VALIDATOR, validates_function_calls
from evals.model.results import AgentResponse, Grade
from tests.graders.assertion_kit import graded, make_assertion

FUNCTIONS = [
    {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
]


def _grade(output: Any, provider_id: str, kind: str = "is-valid-function-call") -> Grade:
    return graded(
        make_assertion(kind),
        output,
        AgentResponse(output=output),
        prompt="p",
        variables={"city": "Paris"},
        latency_ms=1.0,
        suite_root=Path("."),
        provider_id=provider_id,
        provider_config={"functions": FUNCTIONS},
    )


def _call(arguments: Any) -> dict[str, Any]:
    return {"name": "get_weather", "arguments": json.dumps(arguments)}


@pytest.mark.parametrize(
    ("provider_id", "checks"),
    [
        ("openai:chat:gpt-4o", True),
        ("openai:gpt-4o-mini", True),
        ("openai:responses:gpt-4o", False),
        ("openai-agents:agent.py", False),
        ("anthropic:messages:claude", False),
        ("file://provider.py", False),
        ("echo", False),
        ("exec: python run.py", False),
    ],
)
def test_only_openai_chat_checks_function_calls(provider_id: str, checks: bool) -> None:
    assert validates_function_calls(provider_id) is checks


@pytest.mark.parametrize("kind", ["is-valid-function-call", "not-is-valid-function-call"])
def test_other_providers_fail_it_even_negated(kind: str) -> None:
    grade = _grade(_call({"city": "Paris"}), "file://provider.py", kind)
    assert (grade.passed, grade.score, grade.reason) == (False, 0.0, NO_VALIDATOR)


def test_a_valid_call_passes_and_function_call_is_unwrapped() -> None:
    assert _grade(_call({"city": "Paris"}), "openai:chat:gpt-4o").passed
    wrapped = {"function_call": _call({"city": "Rome"})}
    assert _grade(wrapped, "openai:chat:gpt-4o", "is-valid-openai-function-call").passed


def test_the_failures_name_their_cause() -> None:
    chat = "openai:chat:gpt-4o"
    assert _grade("text", chat).reason == (
        'OpenAI did not return a valid-looking function call: "text"'
    )
    unknown = {"name": "other", "arguments": "{}"}
    assert _grade(unknown, chat).reason == 'Called "other", but there is no function with that name'
    bad = _grade(_call({"city": 3}), chat)
    assert not bad.passed
    assert bad.reason.startswith('Call to "get_weather" does not match schema: [{')
    assert '"instancePath":"/city"' in bad.reason
    assert not _grade({"name": "get_weather", "arguments": "{"}, chat).passed
