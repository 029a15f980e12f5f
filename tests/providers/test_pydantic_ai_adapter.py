"""The PydanticAI adapter against the real library, offline with its FunctionModel:
trajectory from the run's messages, usage and cost, stop reasons and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip(
    "pydantic_ai", reason="needs the [pydantic-ai] extra: pip install -e '.[pydantic-ai]'"
)

from evals.agents.frameworks.pydantic_ai import PydanticAIAgent
from evals.common.files import load_module
from evals.model.suite import ProviderSpec
from evals.vendors.prices import LIST_PRICES
from tests.providers.helpers import make_context, run

pytestmark = pytest.mark.extra("pydantic-ai")

APPS = Path(__file__).parent / "framework_apps"


def _agent(**config: object) -> PydanticAIAgent:
    spec = ProviderSpec(id="pydantic-ai:pydantic_ai_app.py:build", label="a", config=config)
    return PydanticAIAgent(spec, APPS)


def test_messages_become_model_and_tool_steps_with_usage_and_cost() -> None:
    response = run(_agent().call("fetch x", make_context()))
    assert response.error is None and response.stop_reason == "done"
    assert response.output == "done after 2 returns: fetch x"
    assert [(s.kind, s.name) for s in response.trajectory] == [
        ("model", "gpt-4o-mini"),
        ("tool", "add"),
        ("tool", "fetch"),
        ("model", "gpt-4o-mini"),
    ]
    add, fetch = response.trajectory[1:3]
    assert add.arguments == {"a": 2, "b": 3} and add.result == {"sum": 5}
    assert fetch.result == {"value": 7} and add.call_id != fetch.call_id
    models = [s for s in response.trajectory if s.kind == "model"]
    listed = LIST_PRICES["gpt-4o-mini"]
    price_in, price_out = listed.input_per_mtok / 1e6, listed.output_per_mtok / 1e6
    for step in models:
        assert step.input_tokens and step.output_tokens
        assert step.cost == pytest.approx(
            step.input_tokens * price_in + step.output_tokens * price_out
        )
        assert step.started_at <= step.ended_at
    assert response.token_usage["total"] == sum(s.input_tokens + s.output_tokens for s in models)


def test_model_retry_is_an_error_step_and_the_run_goes_on() -> None:
    response = run(_agent().call("fetch nope", make_context()))
    assert response.stop_reason == "done"
    fetch = next(s for s in response.trajectory if s.name == "fetch")
    assert fetch.error == "no key nope" and fetch.result is None


def test_a_crashing_tool_is_an_error_response_naming_the_tool_step() -> None:
    response = run(_agent().call("explode", make_context()))
    assert response.stop_reason == "error" and "disk on fire" in response.error
    explode = response.trajectory[-1]
    assert explode.name == "explode" and explode.error == response.error


def test_structured_output_is_data_and_the_output_tool_is_not_a_step() -> None:
    response = run(_agent(variant="structured").call("fetch x", make_context()))
    assert response.output == {"total": 5}
    assert [s.name for s in response.trajectory if s.kind == "tool"] == ["add", "fetch"]


def test_the_request_limit_stops_with_max_steps() -> None:
    response = run(_agent(request_limit=3).call("loop", make_context()))
    assert response.stop_reason == "max_steps" and response.error is None
    assert sum(s.kind == "model" for s in response.trajectory) == 3


def test_a_token_limit_stops_with_budget_exhausted() -> None:
    response = run(_agent(total_tokens_limit=60).call("loop", make_context()))
    assert response.stop_reason == "budget_exhausted"


def test_deferred_approvals_stop_with_approval_steps() -> None:
    response = run(_agent().call("delete it", make_context()))
    assert response.stop_reason == "approval_required"
    approval = response.trajectory[-1]
    assert approval.kind == "approval" and approval.name == "delete"
    assert approval.arguments == {"path": "/tmp/a"} and approval.approval == "requested"
    assert not any(s.kind == "tool" for s in response.trajectory)


def test_the_seed_goes_in_the_model_settings_unless_disabled() -> None:
    context = make_context()
    run(_agent().call("fetch x", context))
    settings = load_module(APPS / "pydantic_ai_app.py").SETTINGS
    assert settings[-1] == {"seed": context.seed}
    run(_agent(seed=False).call("fetch x", context))
    assert not (settings[-1] or {}).get("seed")


def test_a_chat_prompt_becomes_history_and_a_last_user_message() -> None:
    prompt = json.dumps(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "history: fetch x"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "history again fetch x"},
        ]
    )
    response = run(_agent().call(prompt, make_context()))
    assert response.output == "done after 2 returns: history again fetch x"
    seen = load_module(APPS / "pydantic_ai_app.py").PROMPTS[-1]
    assert seen == ["history: fetch x", "history again fetch x"]
