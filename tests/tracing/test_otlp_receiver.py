"""Out-of-process agents: the OTLP/HTTP receiver attaches their spans to the right run."""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from test_tracing_support import load, meta, plan, traced_run

from evals.agents.exec_provider import ExecAgent
from evals.tracing import run_tracer
from evals.tracing.normalize import trajectory_from_spans
from evals.tracing.otlp_receiver import OtlpReceiver, decode_traces
from evals.tracing.spans import span_to_dict, span_tree

AGENT_DIR = Path(__file__).resolve().parents[2] / "cases" / "examples" / "otel-agent"

EXEC_SUITE = """\
prompts: ['¿Cuánto varió {{ticker}} en enero?']
providers:
  - id: "exec: {python} agent.py"
    label: otel-agent
    config:
      basePath: {base}
      env: {env}
tests:
  - {{description: known ticker, vars: {{ticker: ACME}}}}
  - {{description: unknown ticker, vars: {{ticker: ZZZ}}}}
"""


def _suite(tmp_path: Path, env: dict[str, str]):
    text = EXEC_SUITE.format(python=sys.executable, base=AGENT_DIR, env=json.dumps(env))
    return load(tmp_path, text)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "encoding"),
    [({}, "protobuf"), ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "json")],
)
def test_example_agent_spans_join_their_runs(tmp_path: Path, env, encoding) -> None:
    suite = _suite(tmp_path, env)
    runs = plan(suite)
    agent = ExecAgent(suite.providers[0], suite.root)

    async def both():
        return await asyncio.gather(*(traced_run(tracer, r, call) for r in runs))

    async def call(context):
        return await agent.call(f"¿Cuánto varió {context.vars['ticker']}?", context)

    with run_tracer(suite, meta()) as tracer:
        assert tracer.receiver is not None
        records = asyncio.run(both())
        receiver = tracer.receiver
    assert receiver.by_encoding == {encoding: 2}
    assert receiver.rejected == 0 and tracer.unattached == 0
    known, unknown = records
    assert known.response.output.startswith("ACME varió 10.0 %")
    for record in records:
        spans = record.response.trace
        assert len({s["trace_id"] for s in spans}) == 1
        tree = span_tree(spans)
        (root,) = tree[None]
        (agent_span,) = tree[root["span_id"]][:1]
        assert agent_span["name"] == "invoke_agent otel-agent"
        assert agent_span["service"] == "otel-agent"
        assert all(c["service"] == "otel-agent" for c in tree[agent_span["span_id"]])
    steps = known.response.trajectory
    assert [(s.kind, s.name) for s in steps] == [
        ("model", "sim-model-1"),
        ("tool", "precio"),
        ("tool", "precio"),
        ("model", "sim-model-1"),
        ("tool", "calculadora"),
        ("model", "sim-model-1"),
    ]
    assert steps[1].arguments == {"ticker": "ACME", "fecha": "2024-01-02"}
    assert steps[1].result == {"ticker": "ACME", "precio": 100.0}
    assert steps[1].call_id == "call_1"
    assert steps[4].result == {"resultado": 10.0}
    assert sum(s.input_tokens or 0 for s in steps) == 120 + 200 + 260
    failed = [s for s in unknown.response.trajectory if s.error]
    assert [(s.name, s.arguments["ticker"], s.error) for s in failed] == [
        ("precio", "ZZZ", "unknown ticker ZZZ"),
        ("precio", "ZZZ", "unknown ticker ZZZ"),
    ]


def _sdk_spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "probe"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("probe")
    with (
        tracer.start_as_current_span("invoke_agent a"),
        tracer.start_as_current_span(
            "execute_tool f",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "f",
                "gen_ai.tool.call.arguments": '{"x": [1, 2]}',
                "flags": [True, False],
                "ratio": 0.5,
                "count": 3,
            },
        ) as span,
    ):
        span.add_event("retry", {"attempt": 2})
        span.set_status(Status(StatusCode.ERROR, "boom"))
    provider.shutdown()
    return exporter.get_finished_spans()


def _otlp_json(spans) -> bytes:
    body = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in body["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return json.dumps(body).encode()


def test_protobuf_and_json_decode_to_what_the_sdk_recorded() -> None:
    spans = _sdk_spans()
    expected = [span_to_dict(s) for s in spans]
    from_protobuf = decode_traces(encode_spans(spans).SerializeToString(), "application/x-protobuf")
    from_json = decode_traces(_otlp_json(spans), "application/json; charset=utf-8")
    assert from_protobuf == from_json == expected
    tool = expected[0]
    assert tool["status"] == {"code": "ERROR", "message": "boom"}
    assert tool["events"][0]["attributes"] == {"attempt": 2}
    assert trajectory_from_spans(from_json)[0].error == "boom"


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_receiver_answers_like_an_otlp_endpoint() -> None:
    received: list[dict] = []
    spans = _sdk_spans()
    protobuf = encode_spans(spans).SerializeToString()
    with OtlpReceiver(received.extend) as receiver:
        url = receiver.traces_endpoint
        proto_headers = {"Content-Type": "application/x-protobuf"}
        assert _post(url, protobuf, proto_headers) == (200, b"")
        gzipped = {**proto_headers, "Content-Encoding": "gzip"}
        assert _post(url, gzip.compress(protobuf), gzipped)[0] == 200
        assert _post(url, _otlp_json(spans), {"Content-Type": "application/json"}) == (200, b"{}")
        assert _post(receiver.endpoint + "/v1/logs", protobuf, proto_headers)[0] == 404
        assert _post(url, b"\xff\x00garbage", proto_headers)[0] == 400
        assert _post(url, b"{not json", {"Content-Type": "application/json"})[0] == 400
        assert _post(url, protobuf, {"Content-Type": "text/plain"})[0] == 415
        assert _post(url, protobuf, {**proto_headers, "Content-Encoding": "br"})[0] == 400
    assert len(received) == 3 * len(spans)
    assert (receiver.requests, receiver.rejected) == (3, 5)


def test_spans_of_unknown_traces_are_counted_not_attached(tmp_path: Path) -> None:
    suite = _suite(tmp_path, {})
    with run_tracer(suite, meta()) as tracer:
        tracer.receive(
            decode_traces(encode_spans(_sdk_spans()).SerializeToString(), "application/x-protobuf")
        )
    assert tracer.unattached == 2
