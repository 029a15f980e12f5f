"""The tracer used when tracing is off: same interface, no work, no OpenTelemetry import.

Every run enters these context managers, so they are plain objects rather than
generator-based ones: entering and leaving them costs next to nothing.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from evals.model.plan import PlannedRun
from evals.model.results import AgentResponse, RunRecord

_NO_SPAN = nullcontext()


class NullRunTrace:
    """A run that is not traced."""

    traceparent: str | None = None
    extra: dict[str, Any] = {}  # noqa: RUF012 - shared, never mutated
    spans: list[dict[str, Any]] = []  # noqa: RUF012 - shared, never mutated

    def adopt(self, response: AgentResponse) -> None:
        """Nothing to reconcile without a trace."""

    def stage(self, name: str, **attributes: Any) -> nullcontext[None]:
        """No span for the stage."""
        return _NO_SPAN

    def finish(self, record: RunRecord) -> None:
        """Nothing to attach."""


class NullTracer:
    """Tracing switched off."""

    enabled = False
    endpoint: str | None = None

    def run_span(self, run: PlannedRun) -> nullcontext[NullRunTrace]:
        """The shared untraced run, as an (async) context manager."""
        return _NULL_RUN_SPAN

    def evaluation_span(self, name: str, **attributes: Any) -> nullcontext[None]:
        """No span for evaluation-wide work."""
        return _NO_SPAN


NULL_RUN_TRACE = NullRunTrace()
_NULL_RUN_SPAN = nullcontext(NULL_RUN_TRACE)
NULL_TRACER = NullTracer()
