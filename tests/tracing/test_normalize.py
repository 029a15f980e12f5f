"""Every transcript format becomes the same Step trajectory."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evals.model.trajectory import Step
from evals.tracing.normalize import step_kind_of_span, to_steps, trajectory_from_spans
from evals.vendors.anthropic import message_steps
from evals.vendors.openai import chat_steps, responses_steps


def _calls(steps: list[Step]) -> list[tuple]:
    return [(s.kind, s.name, s.arguments, s.result, s.error, s.call_id) for s in steps]


CHAT = [
    {"role": "user", "content": "¿precio de ACME y ZZZ?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "precio", "arguments": '{"ticker": "ACME"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "precio", "arguments": '{"ticker": "ZZZ"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c2", "content": '{"error": "unknown ticker"}'},
    {"role": "tool", "tool_call_id": "c1", "content": '{"precio": 100}'},
    {"role": "assistant", "content": "ACME cuesta 100; ZZZ no existe."},
]


def test_openai_chat_tool_calls_and_results() -> None:
    steps = chat_steps(CHAT, model="gpt-4o")
    assert _calls(steps) == [
        ("model", "gpt-4o", None, None, None, None),
        ("tool", "precio", {"ticker": "ACME"}, {"precio": 100}, None, "c1"),
        ("tool", "precio", {"ticker": "ZZZ"}, None, "unknown ticker", "c2"),
        ("model", "gpt-4o", None, None, None, None),
    ]
    assert [s.metadata.get("turn") for s in steps] == [None, 0, 0, None]
    assert steps[3].metadata["text"] == "ACME cuesta 100; ZZZ no existe."


def test_openai_chat_completion_objects_carry_usage_and_bad_json_is_kept() -> None:
    completion = {
        "model": "gpt-4o-mini",
        "usage": {"prompt_tokens": 12, "completion_tokens": 7},
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c9", "function": {"name": "calculadora", "arguments": "{oops"}}
                    ],
                }
            }
        ],
    }
    model, tool = chat_steps([completion])
    assert (model.name, model.input_tokens, model.output_tokens) == ("gpt-4o-mini", 12, 7)
    assert tool.arguments is None and tool.metadata["raw_arguments"] == "{oops"


RESPONSES = [
    {"type": "message", "role": "user", "content": "precio de ACME"},
    {
        "object": "response",
        "model": "gpt-5",
        "usage": {"input_tokens": 50, "output_tokens": 9},
        "output": [
            {"type": "reasoning", "summary": []},
            {
                "type": "function_call",
                "call_id": "f1",
                "name": "precio",
                "arguments": '{"ticker": "ACME"}',
            },
            {
                "type": "function_call",
                "call_id": "f2",
                "name": "buscar_noticias",
                "arguments": '{"ticker": "ACME"}',
            },
        ],
    },
    {"type": "function_call_output", "call_id": "f1", "output": '{"precio": 100}'},
    {"type": "function_call_output", "call_id": "f2", "output": "sin noticias"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "100"}]},
]


def test_openai_responses_items() -> None:
    steps = responses_steps(RESPONSES)
    assert _calls(steps) == [
        ("model", "gpt-5", None, None, None, None),
        ("tool", "precio", {"ticker": "ACME"}, {"precio": 100}, None, "f1"),
        ("tool", "buscar_noticias", {"ticker": "ACME"}, "sin noticias", None, "f2"),
        ("model", "assistant", None, None, None, None),
    ]
    assert (steps[0].input_tokens, steps[0].output_tokens) == (50, 9)
    assert steps[3].metadata["text"] == "100"


ANTHROPIC = [
    {"role": "user", "content": "precios de ACME en dos fechas"},
    {
        "role": "assistant",
        "model": "claude-x",
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 80, "output_tokens": 30},
        "content": [
            {"type": "text", "text": "Consulto ambas fechas."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "precio",
                "input": {"ticker": "ACME", "fecha": "2024-01-02"},
            },
            {
                "type": "tool_use",
                "id": "t2",
                "name": "precio",
                "input": {"ticker": "ACME", "fecha": "2024-13-01"},
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "is_error": True,
                "content": [{"type": "text", "text": "fecha inválida"}],
            },
            {"type": "tool_result", "tool_use_id": "t1", "content": '{"precio": 100}'},
        ],
    },
    {"role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "100"}]},
]


def test_anthropic_parallel_tool_use_and_is_error() -> None:
    steps = message_steps(ANTHROPIC)
    assert _calls(steps) == [
        ("model", "claude-x", None, None, None, None),
        ("tool", "precio", {"ticker": "ACME", "fecha": "2024-01-02"}, {"precio": 100}, None, "t1"),
        ("tool", "precio", {"ticker": "ACME", "fecha": "2024-13-01"}, None, "fecha inválida", "t2"),
        ("model", "claude-x", None, None, None, None),
    ]
    assert steps[1].metadata["turn"] == steps[2].metadata["turn"] == 0
    assert steps[0].metadata == {"text": "Consulto ambas fechas.", "stop_reason": "tool_use"}
    assert (steps[0].input_tokens, steps[0].output_tokens) == (80, 30)


def test_sdk_objects_are_read_through_model_dump() -> None:
    from anthropic.types import Message

    message = Message.model_validate(
        {**ANTHROPIC[1], "id": "m", "type": "message", "stop_sequence": None}
    )
    steps = message_steps([message])
    assert [s.name for s in steps] == ["claude-x", "precio", "precio"]


def _span(name, start, attributes, end=None, status=None, span_id=None):
    return {
        "span_id": span_id or name,
        "name": name,
        "start_ns": start,
        "end_ns": end if end is not None else start + 10,
        "status": status or {"code": "UNSET"},
        "attributes": attributes,
    }


def test_spans_in_start_time_order_with_genai_and_promptfoo_attributes() -> None:
    spans = [
        _span("evals.run", 0, {"evals.case": "c"}, end=1000),
        _span(
            "execute_tool precio",
            300,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "precio",
                "gen_ai.tool.call.id": "x1",
                "gen_ai.tool.call.arguments": '{"ticker": "A"}',
                "gen_ai.tool.call.result": '{"precio": 1}',
            },
        ),
        _span(
            "chat",
            100,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "m",
                "gen_ai.usage.input_tokens": 5,
                "gen_ai.usage.output_tokens": 2,
            },
        ),
        _span(
            "ai.toolCall",
            500,
            {"ai.toolCall.name": "buscar", "ai.toolCall.args": '{"q": "ACME"}'},
            status={"code": "ERROR", "message": "timeout"},
        ),
        _span("search step", 400, {"function_name": "calc", "function.arguments": "{bad"}),
        _span("mcp call server/lookup", 450, {"mcp.method": "tools/call"}),
        _span("tie-b", 600, {"tool": "second"}, end=700),
        _span("tie-a", 600, {"tool": "first"}, end=650),
        _span("evals.grade", 900, {}),
    ]
    steps = trajectory_from_spans(spans)
    assert [(s.kind, s.name) for s in steps] == [
        ("model", "m"),
        ("tool", "precio"),
        ("tool", "calc"),
        ("tool", "lookup"),
        ("tool", "buscar"),
        ("tool", "first"),
        ("tool", "second"),
    ]
    model, precio, calc, _, buscar = steps[:5]
    assert (model.input_tokens, model.output_tokens, model.started_at) == (5, 2, 100 / 1e9)
    assert (precio.arguments, precio.result, precio.call_id) == (
        {"ticker": "A"},
        {"precio": 1},
        "x1",
    )
    assert calc.arguments is None and calc.metadata["raw_arguments"] == "{bad"
    assert buscar.error == "timeout" and buscar.arguments == {"q": "ACME"}
    assert step_kind_of_span(spans[0]) is None


def test_promptfoo_span_shape_is_read_too() -> None:
    spans = [
        {
            "spanId": "b",
            "name": "t2",
            "startTime": 20.0,
            "attributes": {"tool.name": "b"},
            "statusCode": 2,
            "statusMessage": "denied",
        },
        {
            "spanId": "a",
            "name": "t1",
            "startTime": 10.0,
            "endTime": 15.0,
            "attributes": {"tool_name": "a", "input": {"k": 1}},
        },
    ]
    steps = trajectory_from_spans(spans)
    assert [(s.name, s.arguments, s.error) for s in steps] == [
        ("a", {"k": 1}, None),
        ("b", None, "denied"),
    ]
    assert steps[0].started_at == 0.01 and steps[0].ended_at == 0.015


def test_usage_counts_are_never_tool_arguments() -> None:
    span = _span("t", 0, {"tool.name": "t", "gen_ai.usage.input_tokens": 3})
    assert trajectory_from_spans([span])[0].arguments is None


def test_format_is_recognised_by_shape() -> None:
    assert _calls(to_steps(CHAT)) == _calls(chat_steps(CHAT))
    assert _calls(to_steps(RESPONSES)) == _calls(responses_steps(RESPONSES))
    assert _calls(to_steps(ANTHROPIC)) == _calls(message_steps(ANTHROPIC))
    spans = [_span("x", 0, {"tool.name": "t"})]
    assert _calls(to_steps(spans)) == _calls(trajectory_from_spans(spans))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
_NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=8)


@st.composite
def _chat_transcripts(draw):
    """A chat transcript and the tool calls it holds, results answered in any order."""
    messages, expected = [], []
    for turn in range(draw(st.integers(1, 4))):
        calls = []
        for i in range(draw(st.integers(0, 3))):
            call_id = f"t{turn}c{i}"
            name, args = draw(_NAMES), draw(st.dictionaries(_NAMES, _JSON, max_size=3))
            result = draw(st.dictionaries(st.sampled_from(["ok", "value"]), _JSON, max_size=2))
            calls.append((call_id, name, args, result))
            expected.append((name, args, result, call_id, turn))
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": c, "function": {"name": n, "arguments": json.dumps(a)}}
                    for c, n, a, _ in calls
                ],
            }
        )
        for c, _, _, r in draw(st.permutations(calls)):
            messages.append({"role": "tool", "tool_call_id": c, "content": json.dumps(r)})
    return messages, expected


@pytest.mark.slow
@given(_chat_transcripts())
def test_chat_and_anthropic_agree_on_any_transcript(case) -> None:
    messages, expected = case
    chat = [s for s in chat_steps(messages) if s.kind == "tool"]
    assert [
        (s.name, s.arguments, s.result, s.call_id, s.metadata["turn"]) for s in chat
    ] == expected
    anthropic = []
    for message in messages:
        if message["role"] == "assistant":
            anthropic.append(
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": c["id"],
                            "name": c["function"]["name"],
                            "input": json.loads(c["function"]["arguments"]),
                        }
                        for c in message["tool_calls"]
                    ],
                }
            )
        else:
            anthropic.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": message["tool_call_id"],
                            "content": message["content"],
                        }
                    ],
                }
            )
    assert _calls(message_steps(anthropic)) == _calls(chat_steps(messages))
