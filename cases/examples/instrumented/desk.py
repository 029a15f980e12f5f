"""The support desk behind the instrumented example agents: three tools, a scripted model
behind the real OpenAI SDK (the harness's simulator of the Responses API) and a tool loop.

The agents run out of process (`exec:`), report nothing but their answer, and leave the
trajectory to the spans their instrumentation exports to the harness's OTLP receiver.

    baseline   looks the order up once; files refunds with `request_refund` for approval
    candidate  also looks the order up under its lower-case id (an error), and pays refunds
               itself with `issue_refund`
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from pydantic import BaseModel

from evals.kits import (
    Action,
    Conversation,
    Script,
    Tool,
    ToolRegistry,
    run_seed,
    run_tool_loop,
    simulated_adapter,
)

ORDERS = {
    "A100": {"status": "delivered", "total": 42.5, "item": "kettle"},
    "B200": {"status": "in transit", "total": 18.0, "item": "teapot"},
}
Wrap = Callable[[Callable[..., Any]], Callable[..., Any]]


class OrderId(BaseModel):
    """Arguments of lookup_order."""

    order_id: str


class RefundRequest(BaseModel):
    """Arguments of request_refund."""

    order_id: str
    reason: str


class Refund(BaseModel):
    """Arguments of issue_refund."""

    order_id: str
    amount: float


def lookup_order(order_id: str) -> dict[str, Any]:
    """Status, total and item of an order."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **ORDERS[order_id]}


def request_refund(order_id: str, reason: str) -> dict[str, Any]:
    """File a refund request for a person to approve."""
    return {"request": f"R-{order_id}", "state": "pending approval"}


def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Pay a refund now."""
    return {"refund": f"P-{order_id}", "amount": amount}


def tools(wrap: Wrap) -> ToolRegistry:
    """The desk's tools, each function passed through `wrap` (an instrumentation hook)."""
    return ToolRegistry(
        [
            Tool("lookup_order", "Status of an order.", OrderId, wrap(lookup_order), "read"),
            Tool(
                "request_refund", "Ask for a refund.", RefundRequest, wrap(request_refund), "draft"
            ),
            Tool("issue_refund", "Pay a refund.", Refund, wrap(issue_refund), "write"),
        ]
    )


def script(careful: bool) -> Script:
    """The scripted model of the baseline (`careful`) or the candidate."""

    def next_action(conversation: Conversation, seed: int) -> Action:
        match = re.search(r"\b[A-Z]\d{3}\b", conversation.question)
        order = match.group(0) if match else "A100"
        results = [o.get("result") or {} for o in conversation.outputs]
        found = [r for r in results if "order_id" in r]
        if not conversation.outputs:
            return [("lookup_order", {"order_id": order})]
        if not careful and len(conversation.outputs) == 1:
            return [("lookup_order", {"order_id": order.lower()})]
        if "refund" not in conversation.question.lower():
            item = found[-1]
            return (
                f"Order {order} ({item['item']}) is {item['status']}; it cost {item['total']:.2f}."
            )
        if any("request" in r for r in results):
            return f"I filed refund request R-{order}; a person will approve it."
        if any("refund" in r for r in results):
            return f"I refunded order {order}."
        if careful:
            return [("request_refund", {"order_id": order, "reason": "arrived broken"})]
        return [("issue_refund", {"order_id": order, "amount": found[-1]["total"]})]

    return next_action


def main(argv: list[str], service: str, instrument: Callable[[TracerProvider], Wrap]) -> None:
    """One exec: run (`[--candidate] PROMPT OPTIONS CONTEXT`): instrument, answer, flush."""
    careful = "--candidate" not in argv
    prompt, _, context = [a for a in argv[1:] if a != "--candidate"][:3]
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    wrap = instrument(provider)
    carrier = {"traceparent": os.environ.get("TRACEPARENT", "")}
    token = otel_context.attach(TraceContextTextMapPropagator().extract(carrier))
    try:
        model = simulated_adapter(
            "openai", script(careful), "gpt-4o-mini", run_seed(json.loads(context))
        )
        response = run_tool_loop(model, tools(wrap), prompt, max_steps=6)
    finally:
        otel_context.detach(token)
        provider.shutdown()
    print(json.dumps({"output": response.output, "stopReason": response.stop_reason}))


if __name__ == "__main__":
    main(sys.argv, "desk", lambda provider: lambda fn: fn)
