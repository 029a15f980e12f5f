"""Chat prompt parsing, tool-format conversion, finish reasons and prices."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.agents.chat_format import (
    ChatPromptError,
    anthropic_tool_choice,
    anthropic_tools,
    chat_tools,
    function_definition,
    normalize_finish_reason,
    openai_tool_choice,
    parse_anthropic_prompt,
    parse_arguments,
    parse_chat_prompt,
    responses_tools,
)
from evals.agents.pricing import call_cost, list_price

names = st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True)
schemas = st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(names, st.just({"type": "string"}))}
)


@given(name=names, description=st.text(min_size=1, max_size=30), parameters=schemas)
def test_tool_formats_round_trip_between_vendors(name, description, parameters):
    definition = {"name": name, "description": description, "parameters": parameters}
    chat = chat_tools([{"type": "function", "function": definition}])
    anthropic = anthropic_tools(chat)
    responses = responses_tools(anthropic)
    assert function_definition(chat[0]) == definition
    assert function_definition(anthropic[0]) == definition
    assert function_definition(responses[0]) == definition
    assert chat_tools(anthropic) == chat
    assert anthropic[0]["input_schema"] == parameters


def test_non_function_tools_pass_through():
    web = {"type": "web_search_preview"}
    assert chat_tools([web]) == responses_tools([web]) == anthropic_tools([web]) == [web]


def test_tool_choice_conversions():
    forced_chat = {"type": "function", "function": {"name": "f"}}
    assert openai_tool_choice({"type": "tool", "name": "f"}, "chat") == forced_chat
    assert openai_tool_choice(forced_chat, "responses") == {"type": "function", "name": "f"}
    assert openai_tool_choice({"type": "any"}, "chat") == "required"
    assert openai_tool_choice("auto", "responses") == "auto"
    assert anthropic_tool_choice(forced_chat) == {"type": "tool", "name": "f"}
    assert anthropic_tool_choice("required") == {"type": "any"}
    assert anthropic_tool_choice("none") == {"type": "none"}


def test_parse_chat_prompt_follows_promptfoo():
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert parse_chat_prompt(json.dumps(messages)) == messages
    assert parse_chat_prompt("- role: user\n  content: hi\n") == [{"role": "user", "content": "hi"}]
    assert parse_chat_prompt("plain [1] text") == [{"role": "user", "content": "plain [1] text"}]
    assert parse_chat_prompt("42") == [{"role": "user", "content": "42"}]
    with pytest.raises(ChatPromptError):
        parse_chat_prompt('{"role": user}')


def test_parse_anthropic_prompt_lifts_system_and_splits_turns():
    chat = json.dumps([{"role": "system", "content": "be kind"}, {"role": "user", "content": "q"}])
    assert parse_anthropic_prompt(chat) == (
        [{"role": "user", "content": [{"type": "text", "text": "q"}]}],
        [{"type": "text", "text": "be kind"}],
    )
    messages, system = parse_anthropic_prompt("system: terse\nuser: a\nmore\nassistant: b")
    assert system == [{"type": "text", "text": "terse"}]
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "a\nmore"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
    ]
    assert parse_anthropic_prompt("just ask")[0] == [
        {"role": "user", "content": [{"type": "text", "text": "just ask"}]}
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("tool_use", "tool_calls"),
        ("function_call", "tool_calls"),
        ("refusal", "content_filter"),
        (" STOP ", "stop"),
        ("something_new", "something_new"),
        ("", None),
        (None, None),
    ],
)
def test_finish_reasons(raw, expected):
    assert normalize_finish_reason(raw) == expected


def test_parse_arguments():
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments({"a": 1}) == ({"a": 1}, None)
    assert parse_arguments("") == ({}, None)
    assert parse_arguments("[1]") == (None, "arguments are not a JSON object")
    args, problem = parse_arguments("{oops")
    assert args is None and problem.startswith("arguments are not valid JSON")


def test_prices_and_overrides():
    assert list_price("gpt-4o-mini-2024-07-18") == pytest.approx((0.15e-6, 0.6e-6))
    assert list_price("gpt-4o") == pytest.approx((2.5e-6, 10e-6))
    assert list_price("claude-sonnet-4-6") == pytest.approx((3e-6, 15e-6))
    assert list_price("my-local-model") is None
    assert call_cost("my-local-model", {}, 10, 10) is None
    assert call_cost("my-local-model", {"cost": 0.5}, 2, 4) == pytest.approx(3.0)
    assert call_cost("gpt-4o", {"outputCost": 1.0}, 1_000_000, 1) == pytest.approx(3.5)
    assert call_cost("gpt-4o", {}, None, 3) is None
