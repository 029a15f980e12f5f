"""The OpenAI Agents SDK adapter against the real SDK, its model served offline by the
simulator: trajectory, handoffs, usage and cost, stop reasons and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "agents", reason="needs the [openai-agents] extra: pip install -e '.[openai-agents]'"
)

from evals.agents.frameworks.openai_agents import OpenAIAgentsAgent
from evals.common.files import load_module
from evals.model.suite import ProviderSpec
from evals.vendors.prices import LIST_PRICES
from tests.providers.helpers import make_context, run

pytestmark = pytest.mark.extra("openai-agents")

APPS = Path(__file__).parent / "framework_apps"


def _agent(variant: str = "plain", **config: object) -> OpenAIAgentsAgent:
    spec = ProviderSpec(
        id="openai-agents:openai_agents_app.py:build",
        label="a",
        config={"variant": variant, "tracing_disabled": True, **config},
    )
    return OpenAIAgentsAgent(spec, APPS)


def test_model_and_tool_calls_become_steps_with_usage_and_list_price_cost() -> None:
    response = run(_agent().call("fetch x", make_context()))
    assert response.error is None and response.stop_reason == "done"
    assert response.output == "done after 2 outputs"
    assert [(s.kind, s.name) for s in response.trajectory] == [
        ("model", "gpt-4o-mini"),
        ("tool", "add"),
        ("tool", "fetch"),
        ("model", "gpt-4o-mini"),
    ]
    add, fetch = response.trajectory[1:3]
    assert add.arguments == {"a": 2, "b": 3} and add.result == {"sum": 5}
    assert fetch.arguments == {"key": "x"} and fetch.result == {"value": 7}
    assert add.call_id and fetch.call_id and add.call_id != fetch.call_id
    models = [s for s in response.trajectory if s.kind == "model"]
    listed = LIST_PRICES["gpt-4o-mini"]
    price_in, price_out = listed.input_per_mtok / 1e6, listed.output_per_mtok / 1e6
    for step in models:
        assert step.input_tokens and step.output_tokens
        assert step.cost == pytest.approx(
            step.input_tokens * price_in + step.output_tokens * price_out
        )
    assert response.token_usage["prompt"] == sum(s.input_tokens for s in models)
    assert response.token_usage["numRequests"] == 2
    assert response.cost == pytest.approx(sum(s.cost for s in models))


def test_a_tool_that_raises_is_an_error_step_and_the_run_goes_on() -> None:
    response = run(_agent().call("fetch nope", make_context()))
    assert response.stop_reason == "done" and response.error is None
    fetch = next(s for s in response.trajectory if s.name == "fetch")
    assert fetch.error == "LookupError: no key nope" and fetch.result is None


def test_handoffs_are_tool_steps_and_model_steps_name_their_agent() -> None:
    response = run(_agent("handoff").call("fetch x", make_context()))
    handoff = response.trajectory[1]
    assert handoff.kind == "tool" and handoff.name == "transfer_to_math"
    assert handoff.metadata["handoff"] == "math" and handoff.result == {"assistant": "math"}
    agents = [s.metadata["agent"] for s in response.trajectory if s.kind == "model"]
    assert agents == ["triage", "math", "math"]
    assert response.metadata["last_agent"] == "math"


def test_structured_output_is_data() -> None:
    response = run(_agent("structured").call("fetch x as json", make_context()))
    assert response.output == {"total": 5}


def test_max_turns_stops_with_max_steps_and_keeps_the_trajectory() -> None:
    response = run(_agent(max_turns=3).call("loop", make_context()))
    assert response.stop_reason == "max_steps" and response.error is None
    assert response.output is None
    assert sum(s.kind == "model" for s in response.trajectory) == 3


def test_input_guardrail_stops_with_guardrail() -> None:
    response = run(_agent("guardrail").call("tell me the secret", make_context()))
    assert response.stop_reason == "guardrail" and response.error is None
    assert response.metadata["guardrail"] == {
        "name": "no_secrets",
        "kind": "input",
        "info": {"matched": "secret"},
    }


def test_tools_needing_approval_stop_the_run_with_approval_steps() -> None:
    response = run(_agent().call("delete it", make_context()))
    assert response.stop_reason == "approval_required"
    approval = response.trajectory[-1]
    assert approval.kind == "approval" and approval.name == "delete"
    assert approval.approval == "requested" and approval.arguments == {"path": "/tmp/a"}
    assert not any(s.kind == "tool" and s.name == "delete" for s in response.trajectory)


def test_api_failure_is_an_error_response_with_the_failed_model_step() -> None:
    response = run(_agent("down").call("fetch x", make_context()))
    assert response.stop_reason == "error"
    assert "500" in response.error and "the model is down" in response.error
    assert response.trajectory[0].kind == "model" and response.trajectory[0].error


def test_the_run_seed_reaches_the_model_through_current_run() -> None:
    agent = _agent()
    context = make_context()
    context.seed = 913
    run(agent.call("fetch x", context))
    seeds = load_module(APPS / "openai_agents_app.py").SEEDS
    assert seeds[-2:] == [913, 913]


def test_unknown_models_have_no_cost_unless_the_config_prices_them() -> None:
    unpriced = run(_agent(model="house-model").call("fetch x", make_context()))
    assert unpriced.cost is None and unpriced.token_usage["total"] > 0
    priced = run(
        _agent(model="house-model", inputCost=1e-6, outputCost=2e-6).call("fetch x", make_context())
    )
    usage = priced.token_usage
    assert priced.cost == pytest.approx(usage["prompt"] * 1e-6 + usage["completion"] * 2e-6)
