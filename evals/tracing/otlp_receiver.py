"""A local OTLP/HTTP trace receiver for agents that run out of process.

The harness starts one on 127.0.0.1 (a free port) for the duration of an evaluation and
points agents at it through `OTEL_EXPORTER_OTLP_ENDPOINT`. It accepts `POST /v1/traces`
with protobuf (`application/x-protobuf`) or JSON (`application/json`) bodies, optionally
gzip- or deflate-compressed, decodes them with `opentelemetry-proto`, and hands the spans
(as stored span dicts) to a callback that attaches them to their run by trace id.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from evals.tracing.spans import SpanDict, make_span_dict

TRACES_PATH = "/v1/traces"
MAX_BODY_BYTES = 32 * 1024 * 1024
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
_STATUS_CODES = {Status.STATUS_CODE_UNSET: "UNSET", Status.STATUS_CODE_OK: "OK"}
_SPAN_KINDS = {
    Span.SPAN_KIND_UNSPECIFIED: "INTERNAL",
    Span.SPAN_KIND_INTERNAL: "INTERNAL",
    Span.SPAN_KIND_SERVER: "SERVER",
    Span.SPAN_KIND_CLIENT: "CLIENT",
    Span.SPAN_KIND_PRODUCER: "PRODUCER",
    Span.SPAN_KIND_CONSUMER: "CONSUMER",
}


class BadRequest(ValueError):
    """The body is not an OTLP trace export request."""


def any_value(value: AnyValue) -> Any:
    """An OTLP AnyValue as plain JSON data (bytes become hex)."""
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return key_values(value.kvlist_value.values)
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, kind)


def key_values(pairs: Any) -> dict[str, Any]:
    """OTLP attributes as a dict."""
    return {kv.key: any_value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


def spans_of_request(request: ExportTraceServiceRequest) -> list[SpanDict]:
    """Every span of an export request, as stored span dicts."""
    spans = []
    for resource_spans in request.resource_spans:
        service = key_values(resource_spans.resource.attributes).get("service.name")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    make_span_dict(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex() or None,
                        name=span.name,
                        kind=_SPAN_KINDS.get(span.kind, "INTERNAL"),
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano or None,
                        status_code=_STATUS_CODES.get(span.status.code, "ERROR"),
                        status_message=span.status.message or None,
                        attributes=key_values(span.attributes),
                        events=[
                            {
                                "name": event.name,
                                "time_ns": event.time_unix_nano,
                                "attributes": key_values(event.attributes),
                            }
                            for event in span.events
                        ],
                        service=service,
                    )
                )
    return spans


def _hex_ids_to_base64(node: Any) -> None:
    """OTLP/JSON writes ids as hex; the protobuf JSON mapping expects base64 for bytes."""
    if isinstance(node, list):
        for item in node:
            _hex_ids_to_base64(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in _ID_FIELDS and isinstance(value, str):
                try:
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                except ValueError:
                    continue  # not hex: older exporters wrote base64, which parses as is
            else:
                _hex_ids_to_base64(value)


def decode_traces(body: bytes, content_type: str) -> list[SpanDict]:
    """Spans of an OTLP/HTTP trace request body (protobuf or JSON encoding)."""
    request = ExportTraceServiceRequest()
    media = content_type.split(";")[0].strip().lower()
    if media == "application/json":
        try:
            data = json.loads(body)
        except ValueError as exc:
            raise BadRequest(f"invalid JSON: {exc}") from exc
        _hex_ids_to_base64(data)
        try:
            json_format.ParseDict(data, request, ignore_unknown_fields=True)
        except json_format.ParseError as exc:
            raise BadRequest(f"not an OTLP trace request: {exc}") from exc
    elif media == "application/x-protobuf":
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            raise BadRequest(f"invalid protobuf: {exc}") from exc
    else:
        raise BadRequest(f"unsupported content type {content_type!r}")
    return spans_of_request(request)


def _decompress(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    try:
        if encoding == "gzip":
            return gzip.decompress(body)
        if encoding == "deflate":
            return zlib.decompress(body)
    except (OSError, zlib.error) as exc:
        raise BadRequest(f"invalid {encoding} body: {exc}") from exc
    if encoding in ("", "identity"):
        return body
    raise BadRequest(f"unsupported content encoding {encoding!r}")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are counted, not logged."""

    def _reply(self, code: int, content_type: str, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _fail(self, code: int, message: str) -> None:
        self.server.receiver.rejected += 1
        self._reply(code, "application/json", json.dumps({"message": message}).encode())

    def do_POST(self) -> None:
        if self.path.split("?")[0] != TRACES_PATH:
            self._fail(404, f"only {TRACES_PATH} is served")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._fail(413, "request too large")
            return
        content_type = self.headers.get("Content-Type", "")
        try:
            body = _decompress(self.rfile.read(length), self.headers.get("Content-Encoding", ""))
            spans = decode_traces(body, content_type)
        except BadRequest as exc:
            self._fail(415 if "content type" in str(exc) else 400, str(exc))
            return
        is_json = content_type.startswith("application/json")
        self.server.receiver.accept(spans, "json" if is_json else "protobuf")
        if is_json:
            self._reply(200, "application/json", b"{}")
        else:
            payload = ExportTraceServiceResponse().SerializeToString()
            self._reply(200, "application/x-protobuf", payload)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, receiver: OtlpReceiver, address: tuple[str, int]) -> None:
        self.receiver = receiver
        super().__init__(address, _Handler)


class OtlpReceiver:
    """An OTLP/HTTP trace endpoint on a free local port, open while the context is."""

    def __init__(
        self, on_spans: Callable[[list[SpanDict]], None], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.on_spans = on_spans
        self.host = host
        self.port = port
        self.requests = 0
        self.spans = 0
        self.rejected = 0
        self.by_encoding: dict[str, int] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        """Base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it."""
        return f"http://{self.host}:{self.port}"

    @property
    def traces_endpoint(self) -> str:
        """Full trace URL, as `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` takes it."""
        return self.endpoint + TRACES_PATH

    def accept(self, spans: list[SpanDict], encoding: str) -> None:
        """Count a decoded request (`encoding` json or protobuf) and hand its spans on."""
        with self._lock:
            self.requests += 1
            self.spans += len(spans)
            self.by_encoding[encoding] = self.by_encoding.get(encoding, 0) + 1
        self.on_spans(spans)

    def __enter__(self) -> OtlpReceiver:
        self._server = _Server(self, (self.host, self.port))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="otlp-receiver", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
