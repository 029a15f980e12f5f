"""Secrets never stay in stored or exported traces; suites redact more by key pattern."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import trace
from test_tracing_support import SUITE, load, meta, plan, traced_run

from evals.model.results import AgentResponse
from evals.model.trajectory import Step
from evals.tracing import Redactor, run_tracer
from evals.tracing.otlp_receiver import OtlpReceiver
from evals.tracing.redact import REDACTED
from evals.tracing.spans import make_span_dict, trace_id_of_traceparent

OPENAI_KEY = "sk-proj-" + "A1b2C3d4" * 4
ANTHROPIC_KEY = "sk-ant-api03-" + "x9Y8z7" * 5
BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature"


def _span(attributes: dict, events: list | None = None, message: str | None = None) -> dict:
    status = {"code": "ERROR", "message": message} if message else {"code": "UNSET"}
    return {"name": "s", "attributes": attributes, "events": events or [], "status": status}


@pytest.mark.parametrize(
    "key",
    [
        "openai.api_key",
        "OPENAI_API_KEY",
        "http.request.header.authorization",
        "http.request.header.x-api-key",
        "http.request.header.proxy-authorization",
        "http.request.header.cookie",
        "auth_token",
        "x-auth-token",
        "client_secret",
        "db.password",
        "apikey",
    ],
)
def test_secret_keys_are_always_redacted(key: str) -> None:
    redacted = Redactor().span(_span({key: "hunter2-value", "keep": "visible"}))
    assert redacted["attributes"] == {key: REDACTED, "keep": "visible"}


def test_token_counts_are_not_secrets() -> None:
    usage = {"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 4, "max_tokens": 9}
    assert Redactor().span(_span(usage))["attributes"] == usage


def test_secret_values_are_scrubbed_wherever_they_hide() -> None:
    span = _span(
        {
            "gen_ai.tool.call.arguments": json.dumps({"key": OPENAI_KEY, "q": "ACME"}),
            "http.headers": [f"Authorization: {BEARER}", "Accept: */*"],
            "nested": {"deep": f"use {ANTHROPIC_KEY} please"},
        },
        events=[{"name": "log", "time_ns": 1, "attributes": {"line": f"token={OPENAI_KEY}"}}],
        message=f"401 for {BEARER}",
    )
    redacted = Redactor().span(span)
    text = json.dumps(redacted)
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, "eyJhbGciOiJIUzI1NiJ9"):
        assert secret not in text
    assert json.loads(redacted["attributes"]["gen_ai.tool.call.arguments"])["q"] == "ACME"
    assert redacted["attributes"]["http.headers"][1] == "Accept: */*"
    assert "ACME" in text and "Accept" in text
    assert span["attributes"]["nested"]["deep"].endswith("please")  # input untouched


def test_suite_patterns_redact_more_keys() -> None:
    redactor = Redactor(["gen_ai.input.messages", "*.EMAIL"])
    attributes = {"gen_ai.input.messages": "[...]", "user.email": "a@b.c", "user.name": "ana"}
    assert redactor.span(_span(attributes))["attributes"] == {
        "gen_ai.input.messages": REDACTED,
        "user.email": REDACTED,
        "user.name": "ana",
    }


_SECRETS = st.one_of(
    st.from_regex(r"sk-[A-Za-z0-9]{20,40}", fullmatch=True),
    st.from_regex(r"Bearer [A-Za-z0-9._\-]{10,40}", fullmatch=True),
)


@pytest.mark.slow
@given(
    secret=_SECRETS,
    prefix=st.text(alphabet=" :=,;({[\"'", max_size=3),
    key=st.from_regex(r"[a-z][a-z._]{0,20}", fullmatch=True),
)
def test_no_secret_value_survives(secret: str, prefix: str, key: str) -> None:
    span = _span({key: prefix + secret, "list": [secret]})
    assert secret not in json.dumps(Redactor().span(span))


def test_stored_and_exported_traces_are_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load(tmp_path, SUITE.replace("prompts:", "trace: {redact: ['*.email']}\nprompts:"))
    run = plan(suite)[0]
    backend: list[dict] = []

    async def agent(context):
        trace.get_current_span().set_attribute("user.email", "ana@example.com")
        step = Step("tool", "send", {"to": "x", "api_key": OPENAI_KEY}, result={"ok": True})
        return AgentResponse(output="sent", trajectory=[step])

    with OtlpReceiver(backend.extend) as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.traces_endpoint)
        with run_tracer(suite, meta()) as tracer:
            assert tracer.enabled  # an OTLP backend is configured: tracing defaults on
            with tracer.otel_tracer.start_as_current_span("outside any run"):
                pass
            record = asyncio.run(traced_run(tracer, run, agent))
    stored = json.dumps(record.response.trace)
    exported = json.dumps(backend)
    assert OPENAI_KEY not in stored and OPENAI_KEY not in exported
    assert "ana@example.com" not in stored and "ana@example.com" not in exported
    stored_names = sorted(s["name"] for s in record.response.trace)
    assert stored_names == ["evals.grade", "evals.run", "execute_tool send"]
    # everything stored was exported, with the same ids; the span outside any run was not
    exported_ids = {s["span_id"] for s in backend}
    assert {s["span_id"] for s in record.response.trace} == exported_ids
    assert {s["service"] for s in backend} == {"evals"}


def test_spans_received_from_agents_are_exported_redacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = load(tmp_path, SUITE)
    run = plan(suite)[0]
    backend: list[dict] = []

    with OtlpReceiver(backend.extend) as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.traces_endpoint)
        with run_tracer(suite, meta()) as tracer:

            async def agent(context):
                received = make_span_dict(
                    trace_id=trace_id_of_traceparent(context.traceparent),
                    span_id="00000000000000ab",
                    parent_span_id=None,
                    name="execute_tool search",
                    kind="INTERNAL",
                    start_ns=1,
                    end_ns=2,
                    status_code="UNSET",
                    status_message=None,
                    attributes={"gen_ai.tool.name": "search", "api_key": OPENAI_KEY},
                    events=[],
                    service="agent",
                )
                tracer.receive([received])
                return AgentResponse(output="done")

            record = asyncio.run(traced_run(tracer, run, agent))
    exported = {s["span_id"]: s for s in backend}
    assert "00000000000000ab" in exported
    assert exported["00000000000000ab"]["service"] == "agent"
    assert OPENAI_KEY not in json.dumps(backend)
    assert {s["span_id"] for s in record.response.trace} == set(exported)
