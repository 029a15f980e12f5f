"""openai:chat, openai:responses and anthropic:messages through the real SDKs, over HTTP to
a local server returning the documented response shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.agents.sdk_providers import AnthropicAgent, OpenAIAgent, parse_sdk_id
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.suite import load_suite
from evals.tracing.spans import trace_id_of_traceparent

from .helpers import TRACEPARENT, make_context, run
from .servers import Reply, Request, serve

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}

RESPONSES_FUNCTION_CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_9",
    "name": "get_weather",
    "arguments": '{"city":"Quito"}',
    "status": "completed",
}


def _chat(request: Request) -> Reply:
    body = request.json
    if body["model"] == "broken":
        return Reply({"error": {"message": "model overloaded", "type": "server_error"}}, 500)
    usage = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    if body.get("tools"):
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'},
                }
            ],
        }
        finish = "tool_calls"
    else:
        last = body["messages"][-1]["content"]
        message = {"role": "assistant", "content": f"echo {last} ({len(body['messages'])})"}
        finish = "stop"
    return Reply(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
    )


def _responses(request: Request) -> Reply:
    body = request.json
    output: list[dict] = []
    if body.get("tools"):
        output.append(RESPONSES_FUNCTION_CALL)
    else:
        text = body["input"] if isinstance(body["input"], str) else body["input"][-1]["content"]
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": f"resp {text}", "annotations": []}],
            }
        )
    return Reply(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": body["model"],
            "status": "completed",
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": {
                "input_tokens": 20,
                "output_tokens": 4,
                "total_tokens": 24,
                "input_tokens_details": {"cached_tokens": 8},
                "output_tokens_details": {"reasoning_tokens": 0},
            },
        }
    )


def _messages(request: Request) -> Reply:
    body = request.json
    if body["model"] == "broken":
        return Reply(
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529
        )
    if body.get("tools"):
        content = [
            {"type": "text", "text": "Let me check."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "get_weather",
                "input": {"city": "Cusco"},
            },
        ]
        stop = "tool_use"
    else:
        turns = body["messages"]
        content = [{"type": "text", "text": f"claude {turns[-1]['content'][0]['text']}"}]
        stop = "end_turn" if body["max_tokens"] > 5 else "max_tokens"
    return Reply(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 10},
        }
    )


ROUTES = {"/v1/chat/completions": _chat, "/v1/responses": _responses, "/v1/messages": _messages}


def _call(
    cls, provider_id: str, prompt: str = "hola", **config
) -> tuple[AgentResponse, list[Request]]:
    """One call through a fresh local server; the response and the requests the server saw."""
    with serve(ROUTES) as server:
        config = {"apiKey": "test-key", "maxRetries": 0, **config}
        config.setdefault("apiBaseUrl", server.url + ("/v1" if cls is OpenAIAgent else ""))

        async def go() -> AgentResponse:
            agent = cls(ProviderSpec(id=provider_id, label="m", config=config), Path("."))
            try:
                return await agent.call(prompt, make_context(prompt))
            finally:
                await agent.aclose()

        return run(go()), server.requests


def test_chat_text_usage_cost_and_request_defaults():
    response, [request] = _call(OpenAIAgent, "openai:chat:gpt-4o-mini", seed=7)
    assert response.error is None
    assert response.output == "echo hola (1)"
    assert response.finish_reason == "stop"
    assert response.token_usage == {"numRequests": 1, "prompt": 11, "completion": 5, "total": 16}
    assert response.cost == pytest.approx(11 * 0.15e-6 + 5 * 0.6e-6)
    assert request.headers["traceparent"] == TRACEPARENT
    assert request.headers["authorization"] == "Bearer test-key"
    sent = request.json
    assert sent["seed"] == 7
    assert sent["temperature"] == 0
    assert sent["max_tokens"] == 1024
    assert sent["messages"] == [{"role": "user", "content": "hola"}]
    [model_step] = response.trajectory
    assert (model_step.kind, model_step.name) == ("model", "gpt-4o-mini")
    assert (model_step.input_tokens, model_step.output_tokens) == (11, 5)


def test_chat_json_prompt_is_sent_as_messages_and_cost_override_applies():
    prompt = json.dumps(
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"}]
    )
    response, [request] = _call(OpenAIAgent, "openai:chat:local-llama", prompt, cost=0.001)
    assert request.json["messages"][0] == {"role": "system", "content": "be brief"}
    assert response.output == "echo q (2)"
    assert response.cost == pytest.approx(16 * 0.001)


def test_chat_tool_call_becomes_output_and_trajectory():
    response, [request] = _call(
        OpenAIAgent,
        "openai:chat:gpt-4.1",
        tools=[WEATHER_TOOL],
        tool_choice={"type": "tool", "name": "get_weather"},
    )
    sent = request.json
    assert sent["tools"] == [WEATHER_TOOL]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert response.finish_reason == "tool_calls"
    assert response.output == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Lima"}'},
        }
    ]
    kinds = [(s.kind, s.name, s.arguments, s.call_id) for s in response.trajectory]
    assert kinds == [
        ("model", "gpt-4.1", None, None),
        ("tool", "get_weather", {"city": "Lima"}, "call_1"),
    ]


def test_chat_api_error_is_an_error_response():
    response, _ = _call(OpenAIAgent, "openai:chat:broken")
    assert response.error is not None
    assert response.error.startswith("API error: 500")
    assert "model overloaded" in response.error
    assert response.metadata == {"http": {"status": 500}}


def test_responses_text_and_function_call():
    text, [first] = _call(OpenAIAgent, "openai:responses:gpt-4.1-mini", seed=3)
    tool, [second] = _call(
        OpenAIAgent, "openai:responses:gpt-4.1-mini", tools=[WEATHER_TOOL], tool_choice="required"
    )
    assert first.json["input"] == "hola"
    assert "seed" not in first.json
    assert text.output == "resp hola"
    assert text.finish_reason == "stop"
    assert text.token_usage == {
        "numRequests": 1,
        "prompt": 20,
        "completion": 4,
        "total": 24,
        "cached": 8,
    }
    assert second.json["tools"] == [{"type": "function", **WEATHER_TOOL["function"]}]
    assert second.json["tool_choice"] == "required"
    assert json.loads(tool.output) == RESPONSES_FUNCTION_CALL
    assert tool.finish_reason == "tool_calls"
    assert [(s.kind, s.name, s.arguments) for s in tool.trajectory] == [
        ("model", "gpt-4.1-mini", None),
        ("tool", "get_weather", {"city": "Quito"}),
    ]


def test_anthropic_text_usage_and_finish_reason():
    prompt = "system: you are terse\nuser: hola"
    response, [request] = _call(AnthropicAgent, "anthropic:messages:claude-sonnet-4-6", prompt)
    short, _ = _call(AnthropicAgent, "anthropic:messages:claude-sonnet-4-6", max_tokens=5)
    sent = request.json
    credentials = request.headers.get("x-api-key", "") + request.headers.get("authorization", "")
    assert "test-key" in credentials
    # The Anthropic SDK traces its own calls: its span joins the run's trace.
    assert trace_id_of_traceparent(request.headers["traceparent"]) == trace_id_of_traceparent(
        TRACEPARENT
    )
    assert sent["system"] == [{"type": "text", "text": "you are terse"}]
    assert sent["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hola"}]}]
    assert sent["max_tokens"] == 1024
    assert "temperature" not in sent
    assert response.output == "claude hola"
    assert response.finish_reason == "stop"
    assert response.metadata["stopReason"] == "end_turn"
    assert response.token_usage == {
        "numRequests": 1,
        "prompt": 40,
        "completion": 9,
        "total": 49,
        "cached": 10,
    }
    assert response.cost == pytest.approx(40 * 3e-6 + 9 * 15e-6)
    assert short.finish_reason == "length"


def test_anthropic_tool_use_output_and_trajectory():
    response, [request] = _call(
        AnthropicAgent,
        "anthropic:messages:claude-haiku-4-5",
        tools=[WEATHER_TOOL],
        tool_choice="required",
    )
    sent = request.json
    assert sent["tools"] == [
        {
            "name": "get_weather",
            "input_schema": WEATHER_TOOL["function"]["parameters"],
            "description": "Weather for a city",
        }
    ]
    assert sent["tool_choice"] == {"type": "any"}
    text, block = response.output.split("\n\n")
    assert text == "Let me check."
    assert json.loads(block) == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Cusco"},
    }
    assert response.finish_reason == "tool_calls"
    assert [(s.kind, s.name, s.arguments, s.call_id) for s in response.trajectory] == [
        ("model", "claude-haiku-4-5", None, None),
        ("tool", "get_weather", {"city": "Cusco"}, "toolu_1"),
    ]


def test_anthropic_api_error_names_type_and_status():
    response, _ = _call(AnthropicAgent, "anthropic:messages:broken")
    assert response.error == "API call error: Overloaded, status 529, type overloaded_error"


def test_missing_api_key_is_an_error_row(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = ProviderSpec(id="openai:chat:gpt-4o", label="m", config={})
    agent = OpenAIAgent(spec, Path("."))
    response = run(agent.call("q", make_context()))
    assert response.error is not None
    assert "OPENAI_API_KEY" in response.error


def test_invalid_json_chat_prompt_is_an_error_response():
    response, requests = _call(OpenAIAgent, "openai:chat:gpt-4o", '[{"role": "user", "content": }]')
    assert requests == []
    assert response.error is not None
    assert "not valid JSON" in response.error


def test_provider_ids_and_load_time_checks(write_suite):
    assert parse_sdk_id("openai:chat:gpt-4o") == ("openai", "chat", "gpt-4o")
    assert parse_sdk_id("openai:gpt-4o") == ("openai", "chat", "gpt-4o")
    assert parse_sdk_id("openai:responses:o4-mini") == ("openai", "responses", "o4-mini")
    assert parse_sdk_id("openai:chat:llama3:8b") == ("openai", "chat", "llama3:8b")
    assert parse_sdk_id("anthropic:messages:claude-x") == ("anthropic", "messages", "claude-x")
    path = write_suite("prompts: [p]\nproviders: ['anthropic:messages:']\ntests: [{}]\n")
    with pytest.raises(SuiteError, match="names no model"):
        load_suite(path)


@pytest.mark.parametrize(
    "config",
    ["{inputCost: cheap}", "{cost: [1]}", "{price: {input_per_mtok: 2}}", "{price: 3}"],
)
def test_prices_that_are_not_numbers_fail_the_suite_at_load(write_suite, config):
    path = write_suite(
        "prompts: [p]\n"
        f"providers: [{{id: 'openai:chat:gpt-4o', label: base, config: {config}}}]\n"
        "tests: [{}]\n"
    )
    with pytest.raises(SuiteError, match="provider 'base'") as raised:
        load_suite(path)
    assert raised.value.fix is not None and "per token" in raised.value.fix
