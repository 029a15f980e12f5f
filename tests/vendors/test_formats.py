"""Chat prompt parsing, tool-format conversion, finish reasons, arguments and prices."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.vendors.anthropic import parse_prompt as parse_anthropic_prompt
from evals.vendors.anthropic import tool_choice as anthropic_tool_choice
from evals.vendors.anthropic import tools as anthropic_tools
from evals.vendors.messages import (
    ChatPromptError,
    ToolCall,
    function_definition,
    normalize_finish_reason,
    parse_chat_prompt,
    read_arguments,
)
from evals.vendors.openai import chat_tools, responses_tools
from evals.vendors.openai import tool_choice as openai_tool_choice
from evals.vendors.prices import (
    LIST_PRICES,
    Price,
    PriceError,
    call_cost,
    find_price,
    price_table,
    provider_price,
)

names = st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True)
schemas = st.fixed_dictionaries(
    {"type": st.just("object"), "properties": st.dictionaries(names, st.just({"type": "string"}))}
)


@pytest.mark.slow
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


def test_read_arguments():
    assert read_arguments('{"a": 1}').value == {"a": 1}
    assert read_arguments({"a": 1}).value == {"a": 1}
    assert read_arguments("").value == {}
    assert read_arguments(None).value is None
    not_object = read_arguments("[1]")
    assert not_object.value == {"input": [1]}
    assert not_object.problem == "arguments are not a JSON object"
    broken = read_arguments("{oops")
    assert broken.value is None and broken.raw == "{oops"
    assert broken.problem is not None and broken.problem.startswith("arguments are not valid JSON")
    assert read_arguments("{oops", plain_text=True).value == {"input": "{oops"}


@pytest.mark.slow
@given(st.dictionaries(names, st.one_of(st.integers(), st.text(max_size=10), st.booleans())))
def test_arguments_read_back_what_a_model_sent(arguments):
    sent = json.dumps(arguments)
    call = ToolCall.read("c1", "f", sent)
    assert call.arguments == arguments and call.problem is None
    assert call.raw_arguments == sent
    assert ToolCall.read("c1", "f", arguments).arguments == arguments
    step = call.step()
    assert (step.kind, step.name, step.arguments, step.call_id) == ("tool", "f", arguments, "c1")


def test_a_requested_call_with_unusable_arguments_is_an_error_step():
    call = ToolCall.read("c1", "f", "[1, 2]")
    step = call.step()
    assert call.arguments is None and step.arguments is None
    assert step.error == "arguments are not a JSON object"
    assert step.metadata == {"requested": True, "raw_arguments": "[1, 2]"}


def test_list_prices_by_longest_prefix():
    assert find_price("gpt-4o-mini-2024-07-18") == Price(0.15, 0.6)
    assert find_price("gpt-4o") == Price(2.5, 10.0)
    assert find_price("openai/gpt-4o") == Price(2.5, 10.0)
    assert find_price("claude-sonnet-4-6") == Price(3.0, 15.0)
    assert find_price("my-local-model") is None


def test_a_suite_table_overrides_the_list_prices():
    table = price_table(
        {"gpt-4o": {"input": 1, "output": 2}, "local": {"prompt": 3, "completion": 4}}
    )
    assert find_price("gpt-4o-2024-08-06", table) == Price(1.0, 2.0)
    assert find_price("local", table) == Price(3.0, 4.0)
    assert find_price("gpt-4o-mini", table) == Price(0.15, 0.6)
    with pytest.raises(PriceError, match="'local'"):
        price_table({"local": {"input": "cheap", "output": 1}})


def test_provider_config_prices_and_overrides():
    assert provider_price("my-local-model", {}) is None
    per_token = provider_price("my-local-model", {"cost": 0.5})
    assert call_cost(per_token, 2, 4) == pytest.approx(3.0)
    assert call_cost(provider_price("gpt-4o", {"outputCost": 1.0}), 1_000_000, 1) == pytest.approx(
        3.5
    )
    simulated = provider_price("sim", {"price": {"input_per_mtok": 2, "output_per_mtok": 8}})
    assert simulated == Price(2.0, 8.0)
    assert provider_price("gpt-4o", {}) == LIST_PRICES["gpt-4o"]
    with pytest.raises(PriceError):
        provider_price("gpt-4o", {"inputCost": "free"})


@pytest.mark.parametrize("rate", [-1, float("nan"), float("inf"), True, 10**400])
def test_a_price_is_a_finite_number_not_below_zero(rate):
    with pytest.raises(PriceError, match="finite numbers >= 0"):
        price_table({"m": {"input": rate, "output": 1}})
    with pytest.raises(PriceError, match="finite number >= 0"):
        provider_price("m", {"cost": rate})


@given(
    st.floats(0, 100),
    st.floats(0, 100),
    st.integers(0, 10**7),
    st.integers(0, 10**7),
)
def test_a_cost_is_tokens_times_the_rates_per_million(rate_in, rate_out, tokens_in, tokens_out):
    cost = call_cost(Price(rate_in, rate_out), tokens_in, tokens_out)
    assert cost == pytest.approx((tokens_in * rate_in + tokens_out * rate_out) / 1e6)
    assert call_cost(Price(rate_in, rate_out), None, None) is None
    assert call_cost(None, tokens_in, tokens_out) is None
