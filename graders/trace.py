"""Checks over a run's OpenTelemetry spans: promptfoo's trace-span-count, trace-span-duration
and trace-error-spans.

The spans are the run's stored span dicts (`AgentResponse.trace`, see evals/tracing/spans.py),
seen the way promptfoo's trace store hands them to its assertions: times in milliseconds and
the OTLP status code as a number. As in promptfoo 0.121 these graders read the assertion's
literal value and a `not-` prefix does not invert them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from evals.common.jsvalues import js_string, to_fixed
from evals.graders.base import GradeContext, GraderError
from evals.graders.registry import register
from evals.model.results import Grade

_STATUS_CODES = {"UNSET": 0, "OK": 1, "ERROR": 2}
_ERROR_ATTRIBUTES = ("error", "exception", "failed", "failure")
_ERROR_MESSAGE = re.compile(r"error|failed|failure|exception|timeout|abort", re.IGNORECASE)
_GLOB_SPECIALS = re.compile(r"[.+^${}()|\[\]\\]")


@dataclass(frozen=True, slots=True)
class TraceSpan:
    """One span as promptfoo's trace assertions read it (times in ms, numeric status)."""

    name: str
    start_ms: float | None
    end_ms: float | None
    status_code: int | None
    status_message: str | None
    attributes: dict[str, Any]


def _ms(nanoseconds: Any) -> float | None:
    return None if nanoseconds is None else nanoseconds / 1e6


def to_trace_span(span: dict[str, Any]) -> TraceSpan:
    """A stored span dict (or a span already in promptfoo's shape) as a TraceSpan."""
    if "start_ns" in span:
        status = span.get("status") or {}
        return TraceSpan(
            name=str(span.get("name", "")),
            start_ms=_ms(span.get("start_ns")),
            end_ms=_ms(span.get("end_ns")),
            status_code=_STATUS_CODES.get(str(status.get("code", "UNSET")).upper()),
            status_message=status.get("message"),
            attributes=dict(span.get("attributes") or {}),
        )
    return TraceSpan(
        name=str(span.get("name", "")),
        start_ms=span.get("startTime"),
        end_ms=span.get("endTime"),
        status_code=span.get("statusCode"),
        status_message=span.get("statusMessage"),
        attributes=dict(span.get("attributes") or {}),
    )


def matches_pattern(name: str, pattern: str) -> bool:
    """promptfoo's span glob: `*` any run of characters, `?` one, case-insensitive, whole name."""
    escaped = _GLOB_SPECIALS.sub(lambda m: "\\" + m.group(0), pattern)
    regex = escaped.replace("*", ".*").replace("?", ".")
    return re.fullmatch(regex, name, re.IGNORECASE) is not None


def _spans(ctx: GradeContext) -> list[TraceSpan]:
    spans = ctx.response.trace
    if not spans:
        raise GraderError(f"No trace data available for {ctx.assertion.base_type} assertion")
    return [to_trace_span(s) for s in spans]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@register("trace-span-count", layer="trace", promptfoo=True)
def trace_span_count(ctx: GradeContext) -> Grade:
    """The number of spans whose name matches `pattern` lies within `min`/`max`."""
    spans = _spans(ctx)
    value = ctx.assertion.value
    if not isinstance(value, dict) or not value.get("pattern"):
        raise GraderError(
            "trace-span-count assertion must have a value object with pattern property"
        )
    pattern, low, high = str(value["pattern"]), value.get("min"), value.get("max")
    matching = [s for s in spans if matches_pattern(s.name, pattern)]
    count = len(matching)
    found = f'Found {count} spans matching pattern "{pattern}"'
    passed = True
    if low is not None and count < low:
        passed, reason = False, f"{found}, expected at least {js_string(low)}"
    elif high is not None and count > high:
        passed, reason = False, f"{found}, expected at most {js_string(high)}"
    elif low is not None and high is not None:
        reason = f"{found} (expected {js_string(low)}-{js_string(high)})"
    elif low is not None:
        reason = f"{found} (expected at least {js_string(low)})"
    elif high is not None:
        reason = f"{found} (expected at most {js_string(high)})"
    else:
        reason = found
    if matching:
        names = list(dict.fromkeys(s.name for s in matching))
        reason += f". Matched spans: {', '.join(names)}"
    return Grade(passed, 1.0 if passed else 0.0, reason, ctx.assertion.raw)


def percentile_of(durations: list[float], percentile: float) -> float:
    """promptfoo's nearest-rank percentile: the ceil(p/100 * n)-th smallest duration."""
    if not durations:
        return 0.0
    ordered = sorted(durations)
    index = math.ceil(percentile / 100 * len(ordered)) - 1
    return ordered[max(0, index)]


def _slowest(named: list[tuple[str, float]]) -> str:
    top = sorted(named, key=lambda item: -item[1])[:3]
    return ", ".join(f"{name} ({js_string(duration)}ms)" for name, duration in top)


@register("trace-span-duration", layer="trace", promptfoo=True)
def trace_span_duration(ctx: GradeContext) -> Grade:
    """Every matching span (or the given percentile of them) finished within `max` ms."""
    spans = _spans(ctx)
    value = ctx.assertion.value
    if not isinstance(value, dict) or not _is_number(value.get("max")):
        raise GraderError(
            "trace-span-duration assertion must have a value object with max property"
        )
    pattern, limit = str(value.get("pattern", "*")), value["max"]
    percentile = value.get("percentile")
    timed = [
        (s.name, s.end_ms - s.start_ms)
        for s in spans
        if matches_pattern(s.name, pattern) and s.start_ms is not None and s.end_ms is not None
    ]
    if not timed:
        reason = f'No spans found matching pattern "{pattern}" with complete timing data'
        return Grade(True, 1.0, reason, ctx.assertion.raw)
    limit_text = js_string(limit)
    if percentile is None:
        slow = [(name, d) for name, d in timed if d > limit]
        if slow:
            reason = (
                f"{len(slow)} span(s) exceed duration threshold {limit_text}ms. "
                f"Slowest: {_slowest(slow)}"
            )
            return Grade(False, 0.0, reason, ctx.assertion.raw)
        longest = js_string(max(d for _, d in timed))
        reason = (
            f'All {len(timed)} spans matching pattern "{pattern}" completed within '
            f"{limit_text}ms (max: {longest}ms)"
        )
        return Grade(True, 1.0, reason, ctx.assertion.raw)
    observed = percentile_of([d for _, d in timed], percentile)
    label = f"{js_string(percentile)}th percentile duration ({js_string(observed)}ms)"
    if observed > limit:
        slowest = _slowest([(name, d) for name, d in timed if d >= observed])
        reason = f"{label} exceeds threshold {limit_text}ms. Slowest spans: {slowest}"
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    return Grade(True, 1.0, f"{label} is within threshold {limit_text}ms", ctx.assertion.raw)


_JS_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)")


def _number(value: Any) -> float | None:
    """JavaScript `Number(value)` for attribute values, None where it gives NaN."""
    if _is_number(value) or isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return 0.0
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+", text):
        return float(int(text, 0))
    if _JS_NUMBER.fullmatch(text):
        return float(text.replace("Infinity", "inf"))
    return None


def is_error_span(span: TraceSpan) -> bool:
    """promptfoo's isErrorSpan: error status, HTTP >= 400, error attributes or message."""
    code = span.status_code
    if code == 2 or (code and _is_number(code) and code >= 400):
        return True
    attributes = span.attributes
    for key in _ERROR_ATTRIBUTES:
        flag = attributes.get(key)
        if flag is True or flag == "true" or isinstance(flag, (dict, list)):
            return True
    http_status = attributes.get("http.status_code")
    if http_status is not None:
        number = _number(http_status)
        if number is not None and number >= 400:
            return True
    if attributes.get("otel.status_code") == "ERROR" or attributes.get("status.code") == "ERROR":
        return True
    return bool(span.status_message and _ERROR_MESSAGE.search(span.status_message))


def _error_limits(value: Any) -> tuple[Any, Any, str]:
    if _is_number(value):
        return value, None, "*"
    if isinstance(value, dict):
        count, share = value.get("max_count"), value.get("max_percentage")
        pattern = value.get("pattern") or "*"
        return (0 if count is None and share is None else count), share, str(pattern)
    return 0, None, "*"


def _error_detail(span: TraceSpan) -> str:
    if span.status_message:
        return f"{span.name} ({span.status_message})"
    if span.status_code:
        return f"{span.name} (status: {js_string(span.status_code)})"
    return span.name


@register("trace-error-spans", layer="trace", promptfoo=True)
def trace_error_spans(ctx: GradeContext) -> Grade:
    """At most `max_count` (default 0) or `max_percentage` % of matching spans errored."""
    spans = _spans(ctx)
    max_count, max_share, pattern = _error_limits(ctx.assertion.value)
    matching = [s for s in spans if matches_pattern(s.name, pattern)]
    if not matching:
        return Grade(True, 1.0, f'No spans found matching pattern "{pattern}"', ctx.assertion.raw)
    errors = [s for s in matching if is_error_span(s)]
    share = len(errors) / len(matching) * 100
    share_text = to_fixed(share, 1)
    if max_count is not None and len(errors) > max_count:
        details = ", ".join(_error_detail(s) for s in errors[:3])
        reason = (
            f"Found {len(errors)} error spans, expected at most {js_string(max_count)}. "
            f"Errors: {details}"
        )
        if len(errors) > 3:
            reason += f" and {len(errors) - 3} more"
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    if max_share is not None and share > max_share:
        reason = (
            f"Error rate {share_text}% exceeds threshold {js_string(max_share)}% "
            f"({len(errors)} errors out of {len(matching)} spans)"
        )
        return Grade(False, 0.0, reason, ctx.assertion.raw)
    if not errors:
        reason = f'No errors found in {len(matching)} spans matching pattern "{pattern}"'
    else:
        reason = f"Found {len(errors)} error(s) in {len(matching)} spans ({share_text}%)"
        if max_count is not None:
            reason += f", within threshold of {js_string(max_count)}"
        if max_share is not None:
            reason += f", within threshold of {js_string(max_share)}%"
    return Grade(True, 1.0, reason, ctx.assertion.raw)
