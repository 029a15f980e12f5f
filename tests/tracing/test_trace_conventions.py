"""OpenInference and OpenLLMetry spans from the real instrumentation packages, received over
OTLP/HTTP, give the same trajectory as the GenAI conventions (and as the framework
adapter reading LangChain's callbacks); the instrumented example agents are graded from
their spans alone."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic import BaseModel

from evals.common.files import load_module
from evals.kits.simulator import Conversation, simulated_adapter
from evals.kits.toolloop import Tool, ToolRegistry, run_tool_loop
from evals.model.options import RunOptions
from evals.model.trajectory import Step
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from evals.tracing import conventions
from evals.tracing.normalize import step_kind_of_span, trajectory_from_spans
from evals.tracing.otlp_receiver import OtlpReceiver
from evals.tracing.spans import SpanDict

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH_APP = ROOT / "tests" / "providers" / "framework_apps" / "langgraph_app.py"


def through_receiver(produce: Callable[[TracerProvider], None]) -> list[SpanDict]:
    """Spans `produce` emits, exported with the official OTLP/HTTP exporter to the receiver."""
    received: list[SpanDict] = []
    with OtlpReceiver(received.extend) as receiver:
        provider = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=receiver.traces_endpoint)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        produce(provider)
        provider.shutdown()
    return received


@contextmanager
def instrumented(instrumentor: Any, provider: TracerProvider) -> Iterator[None]:
    """An instrumentor on for the block only (instrumentors patch libraries globally)."""
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


class Key(BaseModel):
    """Arguments of fetch."""

    key: str


def _fetch(key: str) -> dict[str, int]:
    if key != "x":
        raise LookupError(f"no key {key}")
    return {"value": 7}


def _script(conversation: Conversation, seed: int) -> Any:
    if not conversation.outputs:
        return [("fetch", {"key": "x"}), ("fetch", {"key": "y"})]
    return "done"


def _openai_loop(provider: TracerProvider, instrumentor: Any) -> None:
    tools = ToolRegistry([Tool("fetch", "Fetch a value.", Key, _fetch, "read")])
    with instrumented(instrumentor, provider):
        run_tool_loop(simulated_adapter("openai", _script, "gpt-4o-mini", 0), tools, "go")


def _openai_instrumentors() -> list[Any]:
    return [
        pytest.param(
            "openinference.instrumentation.openai",
            marks=pytest.mark.extra("instrumentation"),
        ),
        pytest.param(
            "opentelemetry.instrumentation.openai",
            marks=pytest.mark.extra("instrumentation"),
        ),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("module", _openai_instrumentors())
def test_model_only_instrumentation_gives_tool_steps_from_requested_calls(module: str) -> None:
    instrumentor = importlib.import_module(module).OpenAIInstrumentor()
    spans = through_receiver(lambda provider: _openai_loop(provider, instrumentor))
    steps = trajectory_from_spans(spans)
    assert [(s.kind, s.name) for s in steps] == [
        ("model", "gpt-4o-mini"),
        ("tool", "fetch"),
        ("tool", "fetch"),
        ("model", "gpt-4o-mini"),
    ]
    first, second = steps[1:3]
    assert first.arguments == {"key": "x"} and second.arguments == {"key": "y"}
    assert first.result == {"result": {"value": 7}}
    assert second.result == {"error": "no key y"}
    assert all(s.input_tokens and s.output_tokens for s in steps if s.kind == "model")
    assert steps[3].input_tokens > steps[0].input_tokens


def _langchain_instrumentors() -> list[Any]:
    return [
        pytest.param(
            ("openinference.instrumentation.langchain", "LangChainInstrumentor"),
            marks=pytest.mark.extra("instrumentation", "langgraph"),
        ),
        pytest.param(
            ("opentelemetry.instrumentation.langchain", "LangchainInstrumentor"),
            marks=pytest.mark.extra("instrumentation", "langgraph"),
        ),
    ]


@pytest.fixture(scope="module", params=_langchain_instrumentors())
def langchain_spans(request: pytest.FixtureRequest) -> Iterator[Callable[[str], list[SpanDict]]]:
    """Runs of the test graph under one LangChain instrumentor, exported to a receiver.

    The instrumentor stays on for the module: OpenLLMetry's keeps the first tracer it gets,
    so it is instrumented once, with one provider."""
    module, name = request.param
    instrumentor = getattr(importlib.import_module(module), name)()
    graph = load_module(LANGGRAPH_APP).build({}).compile()
    received: list[SpanDict] = []
    with OtlpReceiver(received.extend) as receiver:
        provider = TracerProvider()
        exporter = OTLPSpanExporter(endpoint=receiver.traces_endpoint)
        provider.add_span_processor(SimpleSpanProcessor(exporter))

        def spans_of(question: str) -> list[SpanDict]:
            received.clear()
            asyncio.run(graph.ainvoke({"messages": [("user", question)]}))
            provider.force_flush()
            return list(received)

        with instrumented(instrumentor, provider):
            yield spans_of
        provider.shutdown()


@pytest.mark.parametrize("question", ["fetch x", "fetch nope"])
def test_langchain_instrumentation_matches_the_langgraph_adapter(
    langchain_spans: Callable[[str], list[SpanDict]], question: str
) -> None:
    from evals.agents.frameworks.langgraph import LangGraphAgent
    from evals.model.suite import ProviderSpec
    from tests.providers.helpers import make_context

    from_spans = trajectory_from_spans(langchain_spans(question))
    spec = ProviderSpec(id="langgraph:langgraph_app.py:build", label="a")
    adapter = LangGraphAgent(spec, LANGGRAPH_APP.parent)
    from_callbacks = asyncio.run(adapter.call(question, make_context())).trajectory

    def view(steps: list[Step]) -> list[tuple[Any, ...]]:
        rows = [
            (s.kind, s.name, s.arguments, s.result, bool(s.error))
            if s.kind == "tool"
            else ("model",)
            for s in steps
        ]
        return sorted(rows, key=json.dumps)

    assert view(from_spans) == view(from_callbacks)
    models = [s for s in from_spans if s.kind == "model"]
    assert [s.input_tokens for s in models] == [
        s.input_tokens for s in from_callbacks if s.kind == "model"
    ]
    failed = [s for s in from_spans if s.error]
    assert [s.name for s in failed] == (["fetch"] if "nope" in question else [])
    if failed:
        assert "no key nope" in failed[0].error


def _example_params() -> list[Any]:
    return [
        pytest.param("openinference", marks=pytest.mark.extra("instrumentation")),
        pytest.param("openllmetry", marks=pytest.mark.extra("instrumentation")),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("convention", _example_params())
def test_instrumented_example_agents_are_graded_from_their_spans(
    convention: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{Path('/usr/bin')}")
    suite = load_suite(ROOT / "cases" / "examples" / "instrumented" / f"{convention}.yaml")
    result = run_evaluation(suite, RunOptions(use_store=False, progress=False, repeat=1))
    records = {(r.key.agent, r.key.case_id): r for r in result.records}
    service = f"{convention}-desk"
    for (agent, case), record in records.items():
        response = record.response
        assert any(s.get("service") == service for s in response.trace), (agent, case)
        tools = [s.name for s in response.trajectory if s.kind == "tool"]
        if agent == "baseline":
            assert record.status == "pass", (case, record.error, record.grade)
            assert tools == (
                ["lookup_order", "request_refund"] if "refund" in case else ["lookup_order"]
            )
        else:
            assert record.status == "fail"
            lookups = [s for s in response.trajectory if s.name == "lookup_order"]
            assert [s.arguments for s in lookups] == [{"order_id": "A100"}, {"order_id": "a100"}]
            assert ("issue_refund" in tools) == ("refund" in case)
    assert result.gates.verdict == "fail"


def _legacy_span(span_id: str, parent: str | None, **attributes: Any) -> SpanDict:
    return {
        "trace_id": "0" * 32,
        "span_id": span_id,
        "parent_span_id": parent,
        "name": span_id,
        "kind": "INTERNAL",
        "start_ns": int(span_id, 16),
        "end_ns": int(span_id, 16) + 1,
        "status": {"code": "UNSET"},
        "attributes": attributes,
        "events": [],
        "service": "app",
    }


def test_legacy_openllmetry_attributes_and_nested_model_spans() -> None:
    """Attribute names of OpenLLMetry releases before the GenAI conventions (written by hand:
    the installed instrumentation emits the current names, tested above)."""
    spans = [
        _legacy_span("1", None, **{"traceloop.span.kind": "workflow"}),
        _legacy_span(
            "2",
            "1",
            **{
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 30,
                "gen_ai.usage.completion_tokens": 9,
                "gen_ai.completion.0.role": "assistant",
                "gen_ai.completion.0.tool_calls.0.id": "c1",
                "gen_ai.completion.0.tool_calls.0.name": "fetch",
                "gen_ai.completion.0.tool_calls.0.arguments": '{"key": "x"}',
            },
        ),
        _legacy_span("3", "2", **{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o"}),
        _legacy_span(
            "4",
            "1",
            **{
                "traceloop.span.kind": "tool",
                "traceloop.entity.name": "fetch",
                "traceloop.entity.input": json.dumps({"input_str": "{'key': 'x'}"}),
                "traceloop.entity.output": json.dumps({"output": {"value": 7}}),
            },
        ),
        _legacy_span(
            "5",
            "1",
            **{
                "llm.request.type": "chat",
                "gen_ai.request.model": "gpt-4o",
                "llm.usage.prompt_tokens": 50,
                "llm.usage.completion_tokens": 3,
            },
        ),
    ]
    steps = trajectory_from_spans(spans)
    assert [(s.kind, s.name) for s in steps] == [
        ("model", "gpt-4o"),
        ("tool", "fetch"),
        ("model", "gpt-4o"),
    ]
    assert (steps[0].input_tokens, steps[0].output_tokens) == (30, 9)
    assert steps[1].arguments == {"key": "x"} and steps[1].result == {"value": 7}
    assert steps[2].input_tokens == 50
    assert step_kind_of_span(spans[0]) is None and step_kind_of_span(spans[3]) == "tool"


def test_langchain_tool_messages_are_unwrapped_with_their_status() -> None:
    ok = {"type": "tool", "data": {"content": '{"value": 7}', "status": "success"}}
    failed = {"lc": 1, "type": "constructor", "kwargs": {"content": "boom", "status": "error"}}
    assert conventions.langchain_tool_output(json.dumps(ok)) == ({"value": 7}, None)
    assert conventions.langchain_tool_output(json.dumps({"output": failed})) == (None, "boom")
    assert conventions.langchain_tool_output('{"answer": 1}') == ({"answer": 1}, None)
    record = {"input_str": "{'key': 'x'}", "tags": [], "metadata": {}}
    assert conventions.langchain_tool_input(json.dumps(record)) == {"key": "x"}
    assert conventions.langchain_tool_input(json.dumps({"input_str": "plain"})) == {
        "input": "plain"
    }


attribute_values = st.one_of(st.text(max_size=8), st.integers(), st.none())


@pytest.mark.slow
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "openinference.span.kind",
                "traceloop.span.kind",
                "llm.request.type",
                "tool.name",
                "input.value",
                "output.value",
                "llm.model_name",
                "gen_ai.operation.name",
                "traceloop.entity.name",
            ]
        ),
        attribute_values,
    )
)
def test_translation_never_changes_the_stored_span_and_is_idempotent(attributes) -> None:
    span = _legacy_span("a", None, **attributes)
    before = json.dumps(span, sort_keys=True, default=str)
    view = conventions.genai_view(span)
    assert json.dumps(span, sort_keys=True, default=str) == before
    assert conventions.genai_view(view) is view
    trajectory_from_spans([span])
    assert json.dumps(span, sort_keys=True, default=str) == before
