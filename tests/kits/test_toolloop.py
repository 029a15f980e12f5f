"""The tool loop's registry, guardrails, accounting and approval, against a scripted adapter."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from evals.common.tokens import count_tokens
from evals.kits.toolloop import (
    ENGLISH,
    SPANISH,
    ModelTurn,
    Price,
    Tool,
    ToolCall,
    ToolRegistry,
    run_tool_loop,
)


class ArgsEcho(BaseModel):
    text: str = Field(pattern=r"^[a-z]+$")


class ArgsNone(BaseModel):
    pass


def make_registry(calls: list[str], wording=ENGLISH) -> ToolRegistry:
    def echo(text: str) -> str:
        calls.append(text)
        return text.upper()

    def boom() -> None:
        raise RuntimeError("disk on fire")

    def send() -> str:
        calls.append("sent")
        return "sent"

    return ToolRegistry(
        [
            Tool("echo", "Upper-case a word.", ArgsEcho, echo, effect="read"),
            Tool("boom", "Always fails.", ArgsNone, boom),
            Tool("send", "Sends a message.", ArgsNone, send, effect="send", requires_approval=True),
        ],
        wording,
    )


class ScriptedAdapter:
    """An adapter whose model replies are given in advance; it records what it is sent."""

    model = "scripted"

    def __init__(self, turns: Sequence[ModelTurn | Exception]) -> None:
        self.turns = list(turns)
        self.sent_results: list[list[dict[str, Any]]] = []

    def begin(self, prompt: str, system: str | None) -> list[Any]:
        return [prompt]

    def send(self, conversation: list[Any], tools: Sequence[Tool]) -> ModelTurn:
        turn = self.turns.pop(0)
        if isinstance(turn, Exception):
            raise turn
        conversation.append(turn)
        return turn

    def add_results(self, conversation: list[Any], results: list[tuple[ToolCall, dict]]) -> None:
        self.sent_results.append([output for _, output in results])


def call(name: str, args: dict | None, i: int = 0, raw: str | None = None) -> ToolCall:
    return ToolCall(f"c{i}", name, args, raw if raw is not None else json.dumps(args))


def turn(*calls: ToolCall, text: str | None = None, tokens: int = 10) -> ModelTurn:
    return ModelTurn(text=text, calls=list(calls), input_tokens=tokens, output_tokens=2)


def test_execute_returns_results_and_errors_as_data() -> None:
    calls: list[str] = []
    registry = make_registry(calls, SPANISH)
    assert registry.execute("echo", {"text": "hola"}) == {"resultado": "HOLA"}
    assert registry.execute("nada", {}) == {"error": "herramienta desconocida: nada"}
    assert registry.execute("echo", {"text": "16/03"}) == {
        "error": "argumentos no válidos: text: String should match pattern '^[a-z]+$'"
    }
    assert registry.execute("echo", {}) == {"error": "argumentos no válidos: text: Field required"}
    assert registry.execute("boom", {}) == {"error": "disk on fire"}
    assert registry.execute("echo", ["not", "a", "dict"])["error"].startswith(
        "argumentos no válidos"
    )
    assert calls == ["hola"]
    assert make_registry([]).execute("echo", {"text": "hi"}) == {"result": "HI"}


def test_registry_rejects_duplicates_and_bad_effects_and_subsets() -> None:
    registry = make_registry([])
    with pytest.raises(ValueError):
        registry.add(registry.tools[0])
    with pytest.raises(ValueError):
        Tool("x", "x", ArgsNone, lambda: None, effect="explode")
    assert registry.subset(["echo"]).names == ["echo"]
    with pytest.raises(KeyError):
        registry.subset(["missing"])
    assert registry.get("echo").parameters()["properties"]["text"]["pattern"] == "^[a-z]+$"


def test_repeated_call_is_not_executed_and_the_model_is_told() -> None:
    calls: list[str] = []
    registry = make_registry(calls, SPANISH)
    adapter = ScriptedAdapter(
        [
            turn(call("echo", {"text": "a"}, 0)),
            turn(call("echo", {"text": "a"}, 1)),
            turn(text="A"),
        ]
    )
    response = run_tool_loop(adapter, registry, "q")
    assert calls == ["a"]
    assert adapter.sent_results[1] == [{"error": "llamada repetida: ya tienes el resultado"}]
    tools = [s for s in response.trajectory if s.kind == "tool"]
    assert [s.result for s in tools] == ["A", None]
    assert tools[1].error == SPANISH.repeated_call
    assert tools[1].metadata == {"repeated": True}
    assert response.stop_reason == "done"
    assert response.output == "A"


def test_invalid_json_and_unknown_tool_come_back_as_errors() -> None:
    adapter = ScriptedAdapter(
        [turn(call("echo", None, 0, raw='{"text": '), call("fly", {}, 1)), turn(text="done")]
    )
    response = run_tool_loop(adapter, make_registry([]), "q")
    assert adapter.sent_results[0] == [
        {"error": "call with invalid JSON"},
        {"error": "unknown tool: fly"},
    ]
    bad_json, unknown = (s for s in response.trajectory if s.kind == "tool")
    assert bad_json.arguments is None
    assert bad_json.metadata["raw_arguments"] == '{"text": '
    assert unknown.error == "unknown tool: fly"
    assert unknown.effect is None
    assert response.stop_reason == "done"


def test_step_limit_cuts_the_run_without_an_answer() -> None:
    adapter = ScriptedAdapter([turn(call("echo", {"text": "a"}, i)) for i in range(10)])
    response = run_tool_loop(adapter, make_registry([]), "q", max_steps=4)
    assert response.stop_reason == "max_steps"
    assert response.output is None
    assert sum(s.kind == "model" for s in response.trajectory) == 4
    assert sum(s.error is not None for s in response.trajectory) == 3


def test_token_budget_stops_before_running_more_tools() -> None:
    calls: list[str] = []
    adapter = ScriptedAdapter(
        [
            turn(call("echo", {"text": "a"}, 0), tokens=100),
            turn(call("echo", {"text": "b"}, 1), tokens=100),
            turn(text="never"),
        ]
    )
    response = run_tool_loop(adapter, make_registry(calls), "q", token_budget=150)
    assert response.stop_reason == "budget_exhausted"
    assert response.output is None
    assert calls == ["a"]
    assert response.token_usage == {"prompt": 200, "completion": 4, "total": 204}


def test_usage_cost_and_missing_usage_are_accounted() -> None:
    silent = ModelTurn(text="hello world", calls=[], request={"input": "hello world"})
    response = run_tool_loop(
        ScriptedAdapter([turn(call("echo", {"text": "a"}), tokens=1000), silent]),
        make_registry([]),
        "q",
        price=Price(input_per_mtok=2.0, output_per_mtok=10.0),
    )
    first, last = (s for s in response.trajectory if s.kind == "model")
    assert first.cost == pytest.approx((1000 * 2.0 + 2 * 10.0) / 1e6)
    assert last.output_tokens == count_tokens("hello world") == 2
    assert last.input_tokens == count_tokens('{"input": "hello world"}')
    assert response.cost == pytest.approx(first.cost + last.cost)
    assert response.token_usage["total"] == 1000 + 2 + last.input_tokens + 2


def test_tools_needing_approval_stop_or_run_as_decided() -> None:
    send = call("send", {}, 0)
    stopped = run_tool_loop(ScriptedAdapter([turn(send)]), make_registry([]), "q")
    assert stopped.stop_reason == "approval_required"
    assert stopped.trajectory[-1].kind == "approval"
    assert stopped.trajectory[-1].approval == "requested"

    calls: list[str] = []
    denied = run_tool_loop(
        ScriptedAdapter([turn(send), turn(text="ok")]),
        make_registry(calls),
        "q",
        approve=lambda c: False,
    )
    assert calls == []
    approvals = [s for s in denied.trajectory if s.kind == "approval"]
    assert [s.approval for s in approvals] == ["requested", "denied"]
    assert approvals[-1].error == "approval denied for send"
    assert not [s for s in denied.trajectory if s.kind == "tool"]
    assert denied.output == "ok"

    granted = run_tool_loop(
        ScriptedAdapter([turn(send), turn(text="ok")]),
        make_registry(calls),
        "q",
        approve=lambda c: True,
    )
    assert calls == ["sent"]
    kinds = [(s.kind, s.approval) for s in granted.trajectory if s.kind != "model"]
    assert kinds == [("approval", "requested"), ("approval", "granted"), ("tool", None)]
    tool_step = next(s for s in granted.trajectory if s.kind == "tool")
    assert tool_step.result == "sent"
    assert tool_step.effect == "send"


def test_policy_grader_accepts_the_loops_approval_trail() -> None:
    from evals.grade.grading import grade_case
    from evals.model.suite import Assertion, Case

    send = call("send", {}, 0)
    case = Case(index=0, id="c", description="c", vars={}, asserts=[Assertion("policy")])
    suite = {"tools": [{"name": "send", "effect": "send", "requires_approval": True}]}
    for approve in (lambda c: True, lambda c: False):
        response = run_tool_loop(
            ScriptedAdapter([turn(send), turn(text="ok")]),
            make_registry([]),
            "q",
            approve=approve,
        )
        grade = grade_case(
            case,
            response,
            output=response.output,
            prompt="q",
            latency_ms=1.0,
            suite_root=Path("."),
            suite_config=suite,
        )
        assert grade.passed, grade.reason
    approved = run_tool_loop(
        ScriptedAdapter([turn(send), turn(text="ok")]),
        make_registry([]),
        "q",
        approve=lambda c: True,
    )
    assert any(s.kind == "tool" and s.name == "send" for s in approved.trajectory)
    approved.trajectory = [s for s in approved.trajectory if s.kind != "approval"]
    without_trail = grade_case(
        case,
        approved,
        output=approved.output,
        prompt="q",
        latency_ms=1.0,
        suite_root=Path("."),
        suite_config=suite,
    )
    assert not without_trail.passed


def test_provider_failure_ends_the_run_with_error() -> None:
    response = run_tool_loop(ScriptedAdapter([ConnectionError("refused")]), make_registry([]), "q")
    assert response.stop_reason == "error"
    assert response.error == "ConnectionError: refused"
    assert response.trajectory[0].error == response.error


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3),
        min_size=1,
        max_size=6,
    )
)
def test_each_distinct_call_runs_at_most_once(turns: list[list[str]]) -> None:
    calls: list[str] = []
    script = [turn(*(call("echo", {"text": w}, i) for i, w in enumerate(words))) for words in turns]
    response = run_tool_loop(
        ScriptedAdapter([*script, turn(text="end")]), make_registry(calls), "q", max_steps=10
    )
    requested = [w for words in turns for w in words]
    assert sorted(calls) == sorted(set(requested))
    assert sum(s.kind == "tool" for s in response.trajectory) == len(requested)
    assert sum(s.error is not None for s in response.trajectory) == len(requested) - len(
        set(requested)
    )
