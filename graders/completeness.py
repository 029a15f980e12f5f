"""Trace completeness, as the agents book's chapter 10 scores it.

A trace explains a run only when it holds the events the decision rests on. The chapter's
rule: the required events must be present (by default ``route.decision`` and
``run.completed``) and every tool call must have its result; each missing item costs 0.2
and is named in the chapter's words (``falta evento route.decision``, ``tool sin
resultado: publish_page``). The run's events come from its trajectory (evals.graders.events).

- ``trace-completeness``: that score; passes at ``threshold`` (default 0.95, the chapter's
  trace gate). Value (all optional): ``require`` (event types or the aliases ``route``
  and ``gate``) and ``penalty`` (default 0.2).
- ``trace-complete``: the chapter's stricter check, requiring ``route``, ``tool.call``,
  ``tool.result``, ``gate`` and ``run.completed``; passes only when nothing is missing.

Both report ``missing_span_rate``: the share of the items a complete trace would hold (the
required events plus one result per tool call) that are missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evals.graders.base import GradeContext, GraderError
from evals.graders.events import EVENT_TYPES, RunEvent, event_type, run_events
from evals.graders.registry import register, value_check
from evals.model.results import Grade

CHAPTER_REQUIRED = ("route.decision", "run.completed")
COMPLETE_REQUIRED = ("route.decision", "tool.call", "tool.result", "gate.result", "run.completed")
PENALTY = 0.2
THRESHOLD = 0.95


@dataclass(frozen=True, slots=True)
class Completeness:
    """A trace's completeness score, what is missing (in the chapter's words) and how much."""

    score: float
    notes: tuple[str, ...]
    expected: int

    @property
    def missing_span_rate(self) -> float:
        """Missing items over the items a complete trace would hold (0 when none expected)."""
        return len(self.notes) / self.expected if self.expected else 0.0


def trace_completeness(
    events: list[RunEvent], required: tuple[str, ...] = CHAPTER_REQUIRED, penalty: float = PENALTY
) -> Completeness:
    """The chapter's trace score: 1 minus `penalty` per missing required event and per tool
    call without its result, never below 0. A required ``tool.result`` absent because a
    call has no result is named once, as that call's missing result."""
    present = {event.type for event in events}
    calls = [e for e in events if e.type == "tool.call"]
    answered = {e.step for e in events if e.type == "tool.result"}
    unanswered = [call for call in calls if call.step not in answered]
    notes = [
        f"falta evento {kind}"
        for kind in sorted(set(required) - present)
        if not (kind == "tool.result" and unanswered)
    ]
    notes += [f"tool sin resultado: {call.name}" for call in unanswered]
    score = round(max(0.0, 1.0 - penalty * len(notes)), 3)
    return Completeness(score, tuple(notes), len(set(required)) + len(calls))


def _required(value: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise GraderError("require must be an event type or a list of event types")
    unknown = [n for n in names if event_type(n) is None]
    if unknown:
        raise GraderError(
            f"unknown event type(s) {unknown}; known: {', '.join(EVENT_TYPES)}, route, gate"
        )
    return tuple(dict.fromkeys(str(event_type(n)) for n in names))


def _options(value: Any, default: tuple[str, ...]) -> tuple[tuple[str, ...], float]:
    if value is None:
        return default, PENALTY
    if not isinstance(value, dict):
        raise GraderError("value must be a mapping with require and/or penalty")
    unknown = sorted(set(value) - {"require", "penalty"})
    if unknown:
        raise GraderError(f"unknown option(s) {unknown}; known: penalty, require")
    penalty = value.get("penalty", PENALTY)
    if isinstance(penalty, bool) or not isinstance(penalty, (int, float)) or not 0 < penalty <= 1:
        raise GraderError("penalty must be a number in (0, 1]")
    return _required(value.get("require"), default), float(penalty)


@value_check("trace-completeness")
def _check_completeness(value: Any) -> None:
    _options(value, CHAPTER_REQUIRED)


@value_check("trace-complete")
def _check_complete(value: Any) -> None:
    _options(value, COMPLETE_REQUIRED)


def _grade(ctx: GradeContext, required: tuple[str, ...], penalty: float, threshold: float) -> Grade:
    events = run_events(ctx.trajectory, ctx.response.stop_reason)
    result = trace_completeness(events, required, penalty)
    passed = (result.score >= threshold) != ctx.inverse
    reason = "; ".join(result.notes) or f"trace complete ({', '.join(required)})"
    return Grade(
        passed,
        result.score,
        f"trace {result.score:g}: {reason}" if result.notes else reason,
        ctx.assertion.raw,
        metadata={
            "trace_notes": list(result.notes),
            "trace_expected": result.expected,
            "missing_span_rate": result.missing_span_rate,
        },
    )


@register("trace-completeness", layer="trace")
def completeness(ctx: GradeContext) -> Grade:
    """The chapter's trace score; passes at the threshold (default 0.95)."""
    required, penalty = _options(ctx.value, CHAPTER_REQUIRED)
    threshold = THRESHOLD if ctx.assertion.threshold is None else ctx.assertion.threshold
    return _grade(ctx, required, penalty, threshold)


@register("trace-complete", layer="trace")
def complete(ctx: GradeContext) -> Grade:
    """Route, tool call, tool result, gate and completion events all present, every call
    answered."""
    required, penalty = _options(ctx.value, COMPLETE_REQUIRED)
    return _grade(ctx, required, penalty, 1.0)
