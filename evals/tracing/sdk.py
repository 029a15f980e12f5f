"""Tracing with the OpenTelemetry SDK: every run is one trace, collected in memory.

The harness's spans come from the global `TracerProvider` (installed by the harness when
none is), so an in-process agent that uses the global tracer inside the run's context
lands in the same trace. One span processor hands each finished span to the open
`RunTracer`s, which keep the spans of the traces they started; spans received over OTLP
from out-of-process agents join the same buckets by trace id. When the standard
`OTEL_EXPORTER_OTLP_*` variables are set, the same spans are also exported (redacted)
through the official OTLP/HTTP exporter behind a `BatchSpanProcessor`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import ExitStack, asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from evals.model.results import AgentResponse, RunRecord
from evals.model.trajectory import Step
from evals.tracing import genai, normalize
from evals.tracing.options import TraceOptions
from evals.tracing.redact import Redactor
from evals.tracing.spans import SpanDict, span_from_dict, span_to_dict, traceparent_of

if TYPE_CHECKING:
    from evals.model.plan import PlannedRun
    from evals.tracing.otlp_receiver import OtlpReceiver


class _Dispatch(SpanProcessor):
    """Hands every finished span of the provider to the open run tracers."""

    def __init__(self) -> None:
        self.tracers: tuple[RunTracer, ...] = ()
        self._lock = threading.Lock()

    def add(self, tracer: RunTracer) -> None:
        with self._lock:
            self.tracers = (*self.tracers, tracer)

    def remove(self, tracer: RunTracer) -> None:
        with self._lock:
            self.tracers = tuple(t for t in self.tracers if t is not tracer)

    def on_end(self, span: ReadableSpan) -> None:
        for tracer in self.tracers:
            tracer.collect(span)


_DISPATCH = _Dispatch()
_WIRED: list[TracerProvider] = []
_PRIVATE: list[TracerProvider] = []


def _new_provider() -> TracerProvider:
    return TracerProvider(resource=Resource.create({"service.name": "evals"}))


def harness_provider() -> TracerProvider:
    """The SDK provider the harness traces with: the global one, installed if absent.

    When the process already has a non-SDK global provider, the harness uses a private
    provider; in-process agents' own spans are then not collected.
    """
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        trace.set_tracer_provider(_new_provider())
        current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        if not _PRIVATE:
            _PRIVATE.append(_new_provider())
        current = _PRIVATE[0]
    if not any(p is current for p in _WIRED):
        current.add_span_processor(_DISPATCH)
        _WIRED.append(current)
    return current


class RedactingExporter(SpanExporter):
    """Redacts spans before handing them to another exporter (secrets never leave)."""

    def __init__(self, exporter: SpanExporter, redactor: Redactor) -> None:
        self.exporter = exporter
        self.redactor = redactor

    def _redacted(self, span: ReadableSpan) -> ReadableSpan:
        redact = self.redactor
        status = span.status
        if status.description:
            status = Status(status.status_code, redact.value(status.description))
        return ReadableSpan(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=redact.attributes(span.attributes or {}),
            events=[
                Event(e.name, redact.attributes(e.attributes or {}), e.timestamp)
                for e in span.events
            ],
            links=span.links,
            kind=span.kind,
            status=status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Export redacted copies of `spans`."""
        return self.exporter.export([self._redacted(s) for s in spans])

    def shutdown(self) -> None:
        """Shut the wrapped exporter down."""
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the wrapped exporter."""
        return self.exporter.force_flush(timeout_millis)


def _ns(seconds: float | None) -> int | None:
    return None if seconds is None else int(seconds * 1e9)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _step_attributes(step: Step) -> dict[str, Any]:
    attributes: dict[str, Any]
    if step.kind == "model":
        attributes = {genai.OPERATION: genai.CHAT, genai.REQUEST_MODEL: step.name}
    elif step.kind == "tool":
        attributes = {
            genai.OPERATION: genai.EXECUTE_TOOL,
            genai.TOOL_NAME: step.name,
            genai.TOOL_TYPE: "function",
        }
    else:
        attributes = {genai.STEP_KIND: step.kind, genai.STEP_NAME: step.name}
    optional = {
        genai.TOOL_CALL_ID: step.call_id,
        genai.TOOL_ARGUMENTS: None if step.arguments is None else _json(step.arguments),
        genai.TOOL_RESULT: None if step.result is None else _json(step.result),
        genai.INPUT_TOKENS: step.input_tokens,
        genai.OUTPUT_TOKENS: step.output_tokens,
        genai.STEP_COST: step.cost,
        genai.STEP_EFFECT: step.effect,
        genai.STEP_APPROVAL: step.approval,
        genai.ERROR_TYPE: None if step.error is None else "_OTHER",
    }
    attributes.update((k, v) for k, v in optional.items() if v is not None)
    return attributes


def _span_name(step: Step) -> str:
    if step.kind == "model":
        return f"{genai.CHAT} {step.name}"
    if step.kind == "tool":
        return f"{genai.EXECUTE_TOOL} {step.name}"
    return f"evals.{step.kind} {step.name}"


class RunTrace:
    """The trace of one run while it executes; yielded by `RunTracer.run_span`.

    `traceparent` and `extra["env"]` are what an out-of-process agent needs to join
    the trace; `spans` holds the run's redacted span dicts once the run span has ended.
    """

    def __init__(self, tracer: RunTracer, root: Span, bucket: list[Any]) -> None:
        self._tracer = tracer
        self._root = root
        self._bucket = bucket
        self.traceparent = traceparent_of(root.get_span_context())
        self.extra: dict[str, Any] = (
            {"env": tracer.agent_environment(self.traceparent)} if tracer.endpoint else {}
        )
        self.spans: list[SpanDict] = []
        self.record: RunRecord | None = None

    def collected(self) -> list[SpanDict]:
        """Spans of this run that have ended so far (the agent's own and received ones)."""
        return _materialize(self._bucket)

    def adopt(self, response: AgentResponse) -> None:
        """Reconcile the agent's answer with its spans before grading.

        A trajectory without GenAI spans becomes model and tool child spans; GenAI spans
        without a trajectory become the trajectory. Unless the agent returned a trace of its
        own, the spans ended so far (redacted) become the response's trace, so trace
        assertions grade them; the root span, still open, joins at the end of the run.
        """
        own = self.collected()
        if response.trajectory:
            if not any(normalize.step_kind_of_span(s) for s in own):
                self._emit(response.trajectory)
        elif own:
            response.trajectory = normalize.trajectory_from_spans(own)
        if not response.trace:
            redactor = self._tracer.redactor
            response.trace = sorted(
                (redactor.span(s) for s in self.collected()), key=lambda s: s["start_ns"]
            )
        usage: dict[str, AttributeValue] = {
            f"evals.usage.{k}": v for k, v in response.token_usage.items()
        }
        if response.cost is not None:
            usage["evals.cost"] = response.cost
        if response.stop_reason:
            usage["evals.stop_reason"] = response.stop_reason
        self._root.set_attributes(usage)

    def _emit(self, steps: list[Step]) -> None:
        parent = trace.set_span_in_context(self._root)
        tracer = self._tracer.otel_tracer
        for step in steps:
            start = _ns(step.started_at) or time.time_ns()
            kind = SpanKind.CLIENT if step.kind == "model" else SpanKind.INTERNAL
            span = tracer.start_span(
                _span_name(step),
                context=parent,
                kind=kind,
                attributes=_step_attributes(step),
                start_time=start,
            )
            if step.error is not None:
                span.set_status(Status(StatusCode.ERROR, step.error))
            span.end(end_time=max(start, _ns(step.ended_at) or start))

    @contextmanager
    def stage(self, name: str, **attributes: Any) -> Iterator[Span]:
        """A child span around a harness stage of the run, such as grading."""
        with self._tracer.otel_tracer.start_as_current_span(
            f"evals.{name}", attributes=attributes
        ) as span:
            yield span

    def finish(self, record: RunRecord) -> None:
        """Record the run's outcome on the root span; its spans go onto the record's response."""
        attributes: dict[str, Any] = {"evals.status": record.status}
        if record.grade is not None:
            attributes["evals.score"] = record.grade.score
        if record.error_kind is not None:
            attributes["evals.error_kind"] = record.error_kind
        self._root.set_attributes(attributes)
        if record.status == "error":
            self._root.set_status(Status(StatusCode.ERROR, record.error or record.error_kind))
        self.record = record


def _materialize(bucket: list[Any]) -> list[SpanDict]:
    for i, item in enumerate(bucket):
        if isinstance(item, ReadableSpan):
            bucket[i] = span_to_dict(item)
    return list(bucket)


class RunTracer:
    """Starts one trace per run and collects its spans, from this process and over OTLP."""

    enabled = True

    def __init__(
        self,
        provider: TracerProvider,
        redactor: Redactor,
        *,
        suite_id: str,
        suite_version: str | None,
        evaluation_id: str,
        exporter: SpanProcessor | None = None,
    ) -> None:
        self.otel_tracer = provider.get_tracer("evals")
        self.redactor = redactor
        self.exporter = exporter
        self.receiver: OtlpReceiver | None = None
        self.evaluation_spans: list[SpanDict] = []
        self.unattached = 0
        self._base = {
            "evals.suite": suite_id,
            "evals.evaluation": evaluation_id,
            **({"evals.suite.version": suite_version} if suite_version else {}),
        }
        self._buckets: dict[int, list[Any]] = {}
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str | None:
        """Base URL of the OTLP receiver, when one runs."""
        return None if self.receiver is None else self.receiver.endpoint

    def collect(self, span: ReadableSpan) -> None:
        """Keep a finished span when it belongs to one of this tracer's open traces."""
        bucket = self._buckets.get(span.context.trace_id)
        if bucket is None:
            return
        bucket.append(span)
        if self.exporter is not None:
            self.exporter.on_end(span)

    def receive(self, spans: list[SpanDict]) -> None:
        """Attach spans received over OTLP to their open run by trace id.

        With an OTLP backend configured they are also exported, redacted like the rest.
        """
        for span in spans:
            bucket = self._buckets.get(int(span["trace_id"], 16))
            if bucket is None:
                self.unattached += 1
                continue
            bucket.append(span)
            if self.exporter is not None:
                self.exporter.on_end(span_from_dict(span))

    def agent_environment(self, traceparent: str) -> dict[str, str]:
        """Environment that makes an out-of-process agent's OTel SDK report to this run.

        The generic protocol variable steers SDKs that default to gRPC onto OTLP/HTTP; an
        agent picks JSON with `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json`.
        """
        if self.endpoint is None:
            return {"TRACEPARENT": traceparent}
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": self.endpoint,
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{self.endpoint}/v1/traces",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "TRACEPARENT": traceparent,
        }

    def _open(self, trace_id: int) -> list[Any]:
        bucket: list[Any] = []
        with self._lock:
            self._buckets[trace_id] = bucket
        return bucket

    def _close(self, trace_id: int) -> list[SpanDict]:
        with self._lock:
            bucket = self._buckets.pop(trace_id, [])
        spans = [self.redactor.span(s) for s in _materialize(bucket)]
        spans.sort(key=lambda s: (s["start_ns"], s["end_ns"] or s["start_ns"]))
        return spans

    @asynccontextmanager
    async def run_span(self, run: PlannedRun) -> AsyncIterator[RunTrace]:
        """The run's root span, current for the duration of the agent call and grading."""
        attributes: dict[str, AttributeValue] = {
            **self._base,
            "evals.case": run.case.id,
            "evals.agent": run.provider.label,
            "evals.repeat": run.key.repeat,
            "evals.seed": run.seed,
        }
        if run.key.prompt_id is not None:
            attributes["evals.prompt"] = run.key.prompt_id
        root = self.otel_tracer.start_span(genai.RUN_SPAN, attributes=attributes)
        trace_id = root.get_span_context().trace_id
        handle = RunTrace(self, root, self._open(trace_id))
        token = otel_context.attach(trace.set_span_in_context(root))
        try:
            yield handle
        except BaseException as exc:
            root.record_exception(exc)
            root.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise
        finally:
            otel_context.detach(token)
            root.end()
            handle.spans = self._close(trace_id)
            if handle.record is not None:
                handle.record.response.trace = handle.spans

    @contextmanager
    def evaluation_span(self, name: str, **attributes: Any) -> Iterator[Span]:
        """A span, in its own trace, around evaluation-wide work such as deciding gates."""
        span = self.otel_tracer.start_span(
            f"evals.{name}", context=otel_context.Context(), attributes={**self._base, **attributes}
        )
        trace_id = span.get_span_context().trace_id
        self._open(trace_id)
        try:
            with trace.use_span(span, end_on_exit=True):
                yield span
        finally:
            self.evaluation_spans.extend(self._close(trace_id))


@contextmanager
def open_run_tracer(
    options: TraceOptions, *, suite_id: str, suite_version: str | None, evaluation_id: str
) -> Iterator[RunTracer]:
    """A run tracer for one evaluation, with its receiver and exporter, closed at exit."""
    redactor = Redactor(options.redact, options.secrets)
    exporter: SpanProcessor | None = None
    if options.export:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        exporter = BatchSpanProcessor(RedactingExporter(OTLPSpanExporter(), redactor))
    tracer = RunTracer(
        harness_provider(),
        redactor,
        suite_id=suite_id,
        suite_version=suite_version,
        evaluation_id=evaluation_id,
        exporter=exporter,
    )
    with ExitStack() as stack:
        if exporter is not None:
            stack.callback(exporter.shutdown)
        if options.receiver:
            from evals.tracing.otlp_receiver import OtlpReceiver

            tracer.receiver = stack.enter_context(OtlpReceiver(tracer.receive))
        _DISPATCH.add(tracer)
        stack.callback(_DISPATCH.remove, tracer)
        yield tracer
