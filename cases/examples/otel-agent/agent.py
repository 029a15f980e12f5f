"""An out-of-process agent instrumented with the OpenTelemetry SDK, for the `exec:` provider.

Run as `python agent.py PROMPT OPTIONS_JSON CONTEXT_JSON`. It answers "how much did TICKER
move between two dates" with a scripted tool loop (two parallel `precio` calls, then
`calculadora`) and reports every model and tool call as GenAI spans, not as a trajectory:
the harness rebuilds the trajectory from the spans it receives.

It joins the run's trace through `TRACEPARENT` and exports through the standard
`OTEL_EXPORTER_OTLP_*` variables the harness sets: protobuf with the official
`OTLPSpanExporter`, or OTLP/JSON when the protocol variable says `http/json`.
"""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import urllib.request
from collections.abc import Sequence
from typing import Any

from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

MODEL = "sim-model-1"
PRICES = {("ACME", "2024-01-02"): 100.0, ("ACME", "2024-02-01"): 110.0}
_IDS = ("traceId", "spanId", "parentSpanId")


class OTLPJsonSpanExporter(SpanExporter):
    """OTLP/HTTP with the JSON encoding: the official protobuf encoding, mapped to JSON
    with hex ids and integer enums as the OTLP specification requires."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
        _ids_to_hex(body)
        request = urllib.request.Request(
            self.endpoint,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            ok = response.status == 200
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        """Nothing to release."""


def _ids_to_hex(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _ids_to_hex(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in _IDS and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _ids_to_hex(value)


def _exporter() -> SpanExporter:
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    if protocol == "http/json":
        return OTLPJsonSpanExporter(os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
    return OTLPSpanExporter()


def _chat(tracer: trace.Tracer, turn: int, input_tokens: int, output_tokens: int) -> None:
    with tracer.start_as_current_span(f"chat {MODEL}", kind=SpanKind.CLIENT) as span:
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "simulated",
                "gen_ai.request.model": MODEL,
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
                "gen_ai.response.finish_reasons": ["tool_calls" if turn < 2 else "stop"],
            }
        )


def _tool(tracer: trace.Tracer, call_id: str, name: str, arguments: dict[str, Any]) -> Any:
    with tracer.start_as_current_span(f"execute_tool {name}") as span:
        span.set_attributes(
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": json.dumps(arguments),
            }
        )
        if name == "precio":
            price = PRICES.get((arguments["ticker"], arguments["fecha"]))
            if price is None:
                span.set_status(Status(StatusCode.ERROR, f"unknown ticker {arguments['ticker']}"))
                span.set_attribute("error.type", "unknown_ticker")
                return None
            result: Any = {"ticker": arguments["ticker"], "precio": price}
        else:
            first, second = arguments["valores"]
            result = {"resultado": round((second - first) / first * 100, 2)}
        span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
        return result


def run(prompt: str, tracer: trace.Tracer, parent: Context) -> dict[str, Any]:
    """The scripted tool loop; every call is a span, the answer the only output."""
    match = re.search(r"\b([A-Z]{2,5})\b", prompt)
    ticker = match.group(1) if match else "ACME"
    with tracer.start_as_current_span("invoke_agent otel-agent", context=parent) as agent_span:
        agent_span.set_attributes({"gen_ai.operation.name": "invoke_agent"})
        _chat(tracer, 0, 120, 40)
        prices = [
            _tool(tracer, "call_1", "precio", {"ticker": ticker, "fecha": "2024-01-02"}),
            _tool(tracer, "call_2", "precio", {"ticker": ticker, "fecha": "2024-02-01"}),
        ]
        if None in prices:
            _chat(tracer, 2, 200, 20)
            return {"output": f"No tengo datos de {ticker}."}
        _chat(tracer, 1, 200, 30)
        values = [p["precio"] for p in prices]
        change = _tool(tracer, "call_3", "calculadora", {"valores": values})
        _chat(tracer, 2, 260, 25)
        return {"output": f"{ticker} varió {change['resultado']} % ({values[0]} → {values[1]})."}


def main(argv: list[str]) -> None:
    """Run once for the harness and flush the spans before exiting."""
    prompt = argv[1] if len(argv) > 1 else ""
    carrier = {"traceparent": os.environ.get("TRACEPARENT", "")}
    parent = TraceContextTextMapPropagator().extract(carrier)
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-agent"}))
    provider.add_span_processor(BatchSpanProcessor(_exporter()))
    tracer = provider.get_tracer("otel-agent")
    try:
        answer = run(prompt, tracer, parent)
    finally:
        provider.shutdown()
    print(json.dumps(answer, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv)
