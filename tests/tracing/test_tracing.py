"""One OpenTelemetry trace per run: span tree, GenAI attributes, in-process agent spans."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_tracing_support import SUITE, load, meta, plan, traced_run

from evals.model.results import AgentResponse
from evals.model.trajectory import Step
from evals.tracing import NULL_TRACER, decide_trace_options, run_tracer
from evals.tracing.normalize import trajectory_from_spans
from evals.tracing.sdk import harness_provider
from evals.tracing.spans import span_tree

T0 = 1_700_000_000.0


@pytest.fixture(scope="module")
def memory() -> InMemorySpanExporter:
    """Every span the harness provider ends, as the SDK sees it."""
    exporter = InMemorySpanExporter()
    harness_provider().add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


def _steps() -> list[Step]:
    return [
        Step("model", "gpt-x", started_at=T0, ended_at=T0 + 1, input_tokens=10, output_tokens=5),
        Step(
            "tool",
            "precio",
            {"ticker": "ACME"},
            {"precio": 100},
            call_id="c1",
            started_at=T0 + 1,
            ended_at=T0 + 2,
        ),
        Step(
            "tool",
            "precio",
            {"ticker": "ZZZ"},
            error="unknown ticker",
            call_id="c2",
            started_at=T0 + 1.5,
            ended_at=T0 + 2,
        ),
        Step(
            "model", "gpt-x", started_at=T0 + 2, ended_at=T0 + 3, input_tokens=30, output_tokens=8
        ),
    ]


def _run(coro):
    return asyncio.run(coro)


def test_run_is_one_trace_with_model_and_tool_children(tmp_path: Path, memory) -> None:
    suite = load(tmp_path, SUITE.replace("prompts:", "trace: {enabled: true}\nprompts:"))
    run = plan(suite)[0]

    async def agent(context):
        return AgentResponse(output="ok", trajectory=_steps(), cost=0.5)

    memory.clear()
    with run_tracer(suite, meta()) as tracer:
        record = _run(traced_run(tracer, run, agent))
    spans = record.response.trace
    tree = span_tree(spans)
    (root,) = tree[None]
    assert root["name"] == "evals.run"
    assert root["attributes"] == {
        "evals.suite": suite.suite_id,
        "evals.evaluation": "ev1",
        "evals.suite.version": "3",
        "evals.case": run.case.id,
        "evals.agent": "baseline",
        "evals.prompt": run.key.prompt_id,
        "evals.repeat": 0,
        "evals.seed": run.seed,
        "evals.cost": 0.5,
        "evals.status": "pass",
    }
    children = tree[root["span_id"]]
    assert [c["name"] for c in children] == [
        "chat gpt-x",
        "execute_tool precio",
        "execute_tool precio",
        "chat gpt-x",
        "evals.grade",
    ]
    chat, ok_tool, bad_tool = children[0], children[1], children[2]
    assert chat["kind"] == "CLIENT"
    assert chat["attributes"]["gen_ai.operation.name"] == "chat"
    assert chat["attributes"]["gen_ai.request.model"] == "gpt-x"
    assert chat["attributes"]["gen_ai.usage.input_tokens"] == 10
    assert chat["attributes"]["gen_ai.usage.output_tokens"] == 5
    assert chat["start_ns"] == int(T0 * 1e9) and chat["end_ns"] == int((T0 + 1) * 1e9)
    assert ok_tool["attributes"]["gen_ai.operation.name"] == "execute_tool"
    assert ok_tool["attributes"]["gen_ai.tool.name"] == "precio"
    assert ok_tool["attributes"]["gen_ai.tool.call.id"] == "c1"
    assert json.loads(ok_tool["attributes"]["gen_ai.tool.call.arguments"]) == {"ticker": "ACME"}
    assert json.loads(ok_tool["attributes"]["gen_ai.tool.call.result"]) == {"precio": 100}
    assert ok_tool["status"] == {"code": "UNSET"}
    assert bad_tool["status"] == {"code": "ERROR", "message": "unknown ticker"}
    assert bad_tool["attributes"]["error.type"] == "_OTHER"
    assert {s["trace_id"] for s in spans} == {root["trace_id"]}
    # The SDK saw the same spans, with the same parentage.
    finished = {f"{s.context.span_id:016x}": s for s in memory.get_finished_spans()}
    for span in spans:
        sdk_span = finished[span["span_id"]]
        parent = sdk_span.parent
        assert span["parent_span_id"] == (None if parent is None else f"{parent.span_id:016x}")


def test_in_process_agent_spans_join_the_run_and_become_its_trajectory(tmp_path: Path) -> None:
    suite = load(tmp_path)
    runs = plan(suite)

    async def agent(context):
        tracer = trace.get_tracer("my-agent")

        def work():
            with tracer.start_as_current_span(
                "chat m", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
            ):
                pass
            with tracer.start_as_current_span(
                "lookup",
                attributes={"tool.name": "buscar", "tool.args": '{"q": "' + context.case_id + '"}'},
            ):
                pass
            return AgentResponse(output="done")

        await asyncio.sleep(0)
        return await asyncio.to_thread(work)

    async def both():
        return await asyncio.gather(*(traced_run(tracer, r, agent) for r in runs))

    with run_tracer(suite, meta(), enabled=True) as tracer:
        records = _run(both())
    assert len(records) == 4
    for run, record in zip(runs, records, strict=True):
        steps = record.response.trajectory
        assert [(s.kind, s.name) for s in steps] == [("model", "m"), ("tool", "buscar")]
        assert steps[1].arguments == {"q": run.case.id}
        trace_ids = {s["trace_id"] for s in record.response.trace}
        assert len(trace_ids) == 1
        root = span_tree(record.response.trace)[None][0]
        assert root["attributes"]["evals.case"] == run.case.id
        assert root["attributes"]["evals.agent"] == run.provider.label
        # the agent's own spans were kept, not duplicated by spans synthesized from steps
        assert sorted(s["name"] for s in record.response.trace) == [
            "chat m",
            "evals.grade",
            "evals.run",
            "lookup",
        ]
    assert len({r.response.trace[0]["trace_id"] for r in records}) == 4


def test_traceparent_is_the_current_run_span(tmp_path: Path) -> None:
    suite = load(tmp_path)
    run = plan(suite)[0]
    seen = {}

    async def agent(context):
        seen["context"] = context.traceparent
        return AgentResponse(output="x")

    with run_tracer(suite, meta(), enabled=True) as tracer:
        record = _run(traced_run(tracer, run, agent))
    root = span_tree(record.response.trace)[None][0]
    version, trace_id, span_id, flags = seen["context"].split("-")
    assert (version, trace_id, span_id) == ("00", root["trace_id"], root["span_id"])
    assert int(flags, 16) & 1  # sampled


def test_agent_failure_marks_the_run_span_as_error(tmp_path: Path) -> None:
    suite = load(tmp_path)
    run = plan(suite)[0]

    async def agent(context):
        return AgentResponse(error="rate limited")

    with run_tracer(suite, meta(), enabled=True) as tracer:
        record = _run(traced_run(tracer, run, agent))
    root = span_tree(record.response.trace)[None][0]
    assert root["status"] == {"code": "ERROR", "message": "rate limited"}
    assert root["attributes"]["evals.error_kind"] == "agent_error"


def test_gates_get_a_span_of_their_own(tmp_path: Path) -> None:
    suite = load(tmp_path)
    with (
        run_tracer(suite, meta(), enabled=True) as tracer,
        tracer.evaluation_span("gates", **{"evals.gate.verdict": "pass"}),
    ):
        pass
    (span,) = tracer.evaluation_spans
    assert span["name"] == "evals.gates"
    assert span["parent_span_id"] is None
    assert span["attributes"]["evals.gate.verdict"] == "pass"


def test_tracing_default_is_off_for_in_process_agents_and_on_otherwise(tmp_path: Path) -> None:
    suite = load(tmp_path)
    assert not decide_trace_options(suite.providers, suite.raw, environ={}).enabled
    with run_tracer(suite, meta()) as tracer:
        assert tracer is NULL_TRACER
    exporting = decide_trace_options(
        suite.providers, suite.raw, environ={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}
    )
    assert exporting.enabled and exporting.export and not exporting.receiver
    exec_suite = load(
        tmp_path,
        SUITE.replace(
            "file://agents.py:plain, label: candidate", "'exec: python a.py', label: candidate"
        ),
    )
    options = decide_trace_options(exec_suite.providers, exec_suite.raw, environ={})
    assert options.enabled and options.receiver and not options.export
    off = decide_trace_options(exec_suite.providers, {"trace": {"enabled": False}}, environ={})
    assert not off.enabled and not off.receiver
    forced = decide_trace_options(exec_suite.providers, {"trace": False}, enabled=True, environ={})
    assert forced.enabled


def test_null_tracer_runs_untraced(tmp_path: Path) -> None:
    run = plan(load(tmp_path))[0]

    async def agent(context):
        assert context.traceparent is None and context.extra == {}
        return AgentResponse(output="x", trajectory=_steps())

    record = _run(traced_run(NULL_TRACER, run, agent))
    assert record.response.trace == []
    assert len(record.response.trajectory) == 4


_TEXT = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
_VALUES = st.none() | st.integers(-5, 5) | st.text(max_size=5) | st.lists(st.integers(), max_size=2)
_STEPS = st.lists(
    st.builds(
        Step,
        kind=st.sampled_from(["model", "tool", "approval", "message"]),
        name=_TEXT,
        arguments=st.none() | st.dictionaries(_TEXT, _VALUES, max_size=3),
        result=_VALUES,
        error=st.none() | _TEXT,
        started_at=st.integers(0, 10**6).map(lambda ms: T0 + ms / 1000),
        input_tokens=st.none() | st.integers(0, 10**5),
        output_tokens=st.none() | st.integers(0, 10**5),
        call_id=st.none() | _TEXT,
        approval=st.none() | st.sampled_from(["requested", "granted", "denied"]),
    ),
    max_size=6,
)


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(steps=_STEPS)
def test_trajectory_survives_the_trip_through_spans(tmp_path_factory, steps) -> None:
    suite = load(tmp_path_factory.mktemp("s"))
    run = plan(suite)[0]
    for step in steps:
        step.ended_at = step.started_at

    async def agent(context):
        return AgentResponse(output="x", trajectory=copy.deepcopy(steps))

    with run_tracer(suite, meta(), enabled=True) as tracer:
        record = _run(traced_run(tracer, run, agent))
    back = trajectory_from_spans(record.response.trace)
    ordered = sorted(steps, key=lambda s: s.started_at)
    keep = (
        "kind",
        "name",
        "arguments",
        "result",
        "error",
        "input_tokens",
        "output_tokens",
        "call_id",
        "approval",
    )
    assert [[getattr(s, k) for k in keep] for s in back] == [
        [getattr(s, k) for k in keep] for s in ordered
    ]
    assert [s.started_at for s in back] == pytest.approx([s.started_at for s in ordered])


TRACED_SUITE = """\
prompts: ['{{q}}']
providers: [{id: file://agent.py, label: agent}]
trace: {enabled: true}
tests:
  - vars: {q: hi}
    assert:
      - type: trace-span-count
        value: {pattern: 'execute_tool*', min: 2, max: 2}
      - type: trace-error-spans
        value: {max_count: 0}
"""

TRACED_AGENT = """\
import time


def call_api(prompt, options, context):
    now = time.time()
    steps = [
        {"kind": "tool", "name": "precio", "arguments": {"t": "A"}, "result": 1,
         "started_at": now, "ended_at": now + 0.01},
        {"kind": "tool", "name": "precio", "arguments": {"t": "B"}, "error": "unknown",
         "started_at": now, "ended_at": now + 0.01},
    ]
    return {"output": prompt, "trajectory": steps}
"""


def test_trace_assertions_grade_the_live_runs_spans(tmp_path: Path) -> None:
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import run_evaluation
    from evals.suite import load_suite

    (tmp_path / "agent.py").write_text(TRACED_AGENT, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(TRACED_SUITE, encoding="utf-8")
    result = run_evaluation(
        load_suite(tmp_path / "suite.yaml"), RunOptions(use_store=False, progress=False)
    )
    (record,) = result.records
    count, errors = record.grade.component_results
    assert count.passed, count.reason
    assert not errors.passed and "precio" in errors.reason
    assert any(span["name"] == "evals.run" for span in record.response.trace)
