"""A run seen as the trace events of the agents book's chapter 10.

The chapter's minimal trace is a list of events: ``run.started``, ``route.decision``,
``model.call``, ``tool.call``, ``tool.result``, ``approval.request``, ``approval.result``,
``gate.result`` and ``run.completed``. The harness records a run as `Step`s instead; this
module reads the one as the other, so the scorecard's graders apply the chapter's rules to
any agent:

- a model step is a ``model.call``;
- a tool step is a ``tool.call``, followed by its ``tool.result`` when the step holds a
  result or an error (a call whose outcome never came back has none);
- an approval step is an ``approval.request`` (requested) or an ``approval.result``
  (granted or denied);
- a message step named after an event (``route.decision``, ``gate.result``,
  ``run.started``, ``run.completed``) is that event: this is how an agent records its
  routing decision and its runtime gates (as a span, the step kind ``message`` and the
  step name, see docs/tracing.md);
- the run's stop reason, when the agent reported one, is its ``run.completed``.
"""

from __future__ import annotations

from dataclasses import dataclass

from evals.model.trajectory import Step

EVENT_TYPES = (
    "run.started",
    "route.decision",
    "model.call",
    "tool.call",
    "tool.result",
    "approval.request",
    "approval.result",
    "gate.result",
    "run.completed",
)
EVENT_ALIASES = {"route": "route.decision", "gate": "gate.result"}
"""Short names the chapter also uses (``route``, ``gate``)."""
MESSAGE_EVENTS = frozenset({"run.started", "route.decision", "gate.result", "run.completed"})


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One chapter-10 event: its type, the tool, route or gate it names, and its step."""

    type: str
    name: str
    step: int | None = None


def event_type(name: str) -> str | None:
    """The canonical event type for a name or alias, None when it names no event."""
    canonical = EVENT_ALIASES.get(name, name)
    return canonical if canonical in EVENT_TYPES else None


def has_result(step: Step) -> bool:
    """True when a tool step's outcome came back: a result or an error."""
    return step.result is not None or step.error is not None


def _step_events(index: int, step: Step) -> list[RunEvent]:
    if step.kind == "model":
        return [RunEvent("model.call", step.name, index)]
    if step.kind == "tool":
        call = RunEvent("tool.call", step.name, index)
        return [call, RunEvent("tool.result", step.name, index)] if has_result(step) else [call]
    if step.kind == "approval":
        if step.approval == "requested":
            return [RunEvent("approval.request", step.name, index)]
        if step.approval in ("granted", "denied"):
            return [RunEvent("approval.result", step.name, index)]
        return []
    if step.name in MESSAGE_EVENTS:
        arguments = step.arguments or {}
        label = arguments.get("route") or arguments.get("gate") or arguments.get("name")
        return [RunEvent(step.name, str(label or step.name), index)]
    return []


def run_events(trajectory: list[Step], stop_reason: str | None) -> list[RunEvent]:
    """The run's events in order; the stop reason closes it as ``run.completed`` unless the
    agent recorded that event itself."""
    events = [event for index, step in enumerate(trajectory) for event in _step_events(index, step)]
    if stop_reason is not None and not any(e.type == "run.completed" for e in events):
        events.append(RunEvent("run.completed", stop_reason))
    return events
