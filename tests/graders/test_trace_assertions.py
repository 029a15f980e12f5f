"""Trace assertions over the harness's stored span dicts, cross-checked with independent code."""

from __future__ import annotations

import fnmatch

import numpy as np
import pytest
from assertion_kit import run
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.graders.trace import matches_pattern, percentile_of, to_trace_span
from evals.model.results import AgentResponse


def _span(name: str, start_ms: float, end_ms: float | None, code: str = "UNSET", **attributes):
    status = {"code": code, "message": "boom failed"} if code == "ERROR" else {"code": code}
    return {
        "trace_id": "0" * 32,
        "span_id": "1" * 16,
        "parent_span_id": None,
        "name": name,
        "kind": "INTERNAL",
        "start_ns": int(start_ms * 1_000_000),
        "end_ns": None if end_ms is None else int(end_ms * 1_000_000),
        "status": status,
        "attributes": attributes,
        "events": [],
        "service": "agent",
    }


SPANS = [
    _span("evals.run", 0, 900),
    _span("chat gpt-4o", 10, 310, "OK"),
    _span("execute_tool precio", 320, 330),
    _span("execute_tool variacion", 340, 840, "ERROR"),
    _span("execute_tool noticias", 850, None),
]


def _grade(kind: str, value: object):
    return run(kind, "answer", value, response=AgentResponse(output="answer", trace=SPANS))


def test_stored_span_dicts_become_promptfoo_spans() -> None:
    span = to_trace_span(SPANS[3])
    assert (span.start_ms, span.end_ms, span.status_code) == (340.0, 840.0, 2)
    assert span.status_message == "boom failed"
    assert to_trace_span(SPANS[4]).end_ms is None


def test_span_count_duration_and_errors_on_a_run_trace() -> None:
    count = _grade("trace-span-count", {"pattern": "execute_tool *", "min": 2, "max": 3})
    assert count.passed
    assert count.reason.startswith('Found 3 spans matching pattern "execute_tool *" (expected 2-3)')
    slow = _grade("trace-span-duration", {"pattern": "execute_tool*", "max": 100})
    assert not slow.passed
    assert slow.reason == (
        "1 span(s) exceed duration threshold 100ms. Slowest: execute_tool variacion (500ms)"
    )
    errors = _grade("trace-error-spans", {"max_percentage": 50})
    assert errors.passed and "1 error(s) in 5 spans (20.0%)" in errors.reason


def test_no_trace_is_a_grader_error_not_a_verdict() -> None:
    grade = run("trace-span-count", "x", {"pattern": "*"})
    assert grade.errored and "No trace data available" in grade.reason


_GLOB_TEXT = st.text(alphabet="ab.c*?(", max_size=6)


@pytest.mark.slow
@settings(deadline=None, max_examples=300)
@given(name=st.text(alphabet="abAB.c(", max_size=8), pattern=_GLOB_TEXT)
def test_glob_matches_fnmatch_ignoring_case(name: str, pattern: str) -> None:
    expected = fnmatch.fnmatchcase(name.lower(), pattern.lower())
    assert matches_pattern(name, pattern) == expected


@settings(deadline=None, max_examples=200)
@given(
    durations=st.lists(st.integers(0, 10_000), min_size=1, max_size=30),
    percentile=st.integers(1, 100),
)
def test_percentile_is_numpy_inverted_cdf(durations: list[int], percentile: int) -> None:
    expected = np.percentile(durations, percentile, method="inverted_cdf")
    assert percentile_of([float(d) for d in durations], percentile) == expected
