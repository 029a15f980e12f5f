"""The compact, JSON-ready span dict stored with each run, and conversions into it.

Spans from the harness's own SDK and spans received over OTLP end up in the same shape,
so stores, reports and `trajectory_from_spans` read one format:

    {"trace_id": 32 hex, "span_id": 16 hex, "parent_span_id": 16 hex | None, "name": str,
     "kind": "INTERNAL" | "CLIENT" | ..., "start_ns": int, "end_ns": int | None,
     "status": {"code": "UNSET" | "OK" | "ERROR", "message"?: str},
     "attributes": {...}, "events": [{"name", "time_ns", "attributes"}], "service": str | None}
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

SpanDict = dict[str, Any]

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")


def attribute_value(value: Any) -> Any:
    """An attribute value as plain JSON data (SDK sequences become lists)."""
    if isinstance(value, (tuple, list)):
        return list(value)
    return value


def traceparent_of(context: SpanContext) -> str:
    """The W3C `traceparent` header value that makes a remote process join `context`."""
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def trace_id_of_traceparent(traceparent: str) -> str | None:
    """The 32-hex trace id inside a `traceparent`, or None when it is not one."""
    match = _TRACEPARENT.match(traceparent.strip().lower())
    return match.group(1) if match else None


def _status(code: str, message: str | None) -> dict[str, str]:
    return {"code": code, "message": message} if message else {"code": code}


def span_to_dict(span: ReadableSpan) -> SpanDict:
    """Convert a finished SDK span into the stored span dict."""
    context = span.context
    parent = span.parent
    resource = span.resource.attributes if span.resource is not None else {}
    return {
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_span_id": f"{parent.span_id:016x}" if parent is not None else None,
        "name": span.name,
        "kind": span.kind.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": _status(span.status.status_code.name, span.status.description),
        "attributes": {k: attribute_value(v) for k, v in (span.attributes or {}).items()},
        "events": [
            {
                "name": event.name,
                "time_ns": event.timestamp,
                "attributes": {k: attribute_value(v) for k, v in (event.attributes or {}).items()},
            }
            for event in span.events
        ],
        "service": resource.get("service.name"),
    }


def make_span_dict(
    *,
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    name: str,
    kind: str,
    start_ns: int,
    end_ns: int | None,
    status_code: str,
    status_message: str | None,
    attributes: Mapping[str, Any],
    events: list[dict[str, Any]],
    service: str | None,
) -> SpanDict:
    """Build a stored span dict from decoded fields (used by the OTLP receiver)."""
    return {
        "trace_id": trace_id,
        "span_id": span_id,
        "parent_span_id": parent_span_id,
        "name": name,
        "kind": kind,
        "start_ns": start_ns,
        "end_ns": end_ns,
        "status": _status(status_code, status_message),
        "attributes": dict(attributes),
        "events": events,
        "service": service,
    }


def span_from_dict(span: SpanDict) -> ReadableSpan:
    """A stored span dict as an SDK span again, so exporters can send received spans on."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import Event
    from opentelemetry.sdk.trace import ReadableSpan as SdkSpan
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    trace_id = int(span["trace_id"], 16)
    sampled = TraceFlags(TraceFlags.SAMPLED)
    parent = span.get("parent_span_id")
    status = span.get("status") or {}
    return SdkSpan(
        name=span["name"],
        context=SpanContext(
            trace_id, int(span["span_id"], 16), is_remote=True, trace_flags=sampled
        ),
        parent=SpanContext(trace_id, int(parent, 16), is_remote=True) if parent else None,
        resource=Resource({"service.name": span["service"]} if span.get("service") else {}),
        attributes=dict(span.get("attributes") or {}),
        events=[
            Event(e["name"], dict(e.get("attributes") or {}), e.get("time_ns"))
            for e in span.get("events") or []
        ],
        kind=SpanKind[span.get("kind") or "INTERNAL"],
        status=Status(StatusCode[status.get("code", "UNSET")], status.get("message")),
        start_time=span["start_ns"],
        end_time=span.get("end_ns"),
    )


def span_tree(spans: list[SpanDict]) -> dict[str | None, list[SpanDict]]:
    """Children of each span id (None keys the roots), each list ordered by start time."""
    tree: dict[str | None, list[SpanDict]] = {}
    ids = {s["span_id"] for s in spans}
    for span in sorted(spans, key=lambda s: s["start_ns"]):
        parent = span["parent_span_id"] if span["parent_span_id"] in ids else None
        tree.setdefault(parent, []).append(span)
    return tree
