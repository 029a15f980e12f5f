"""The tracer used when tracing is off: same interface, no work, no OpenTelemetry import."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from evals.results import AgentResponse, RunRecord


class NullRunTrace:
    """A run that is not traced."""

    traceparent: str | None = None
    extra: dict[str, Any] = {}  # noqa: RUF012 - shared, never mutated
    spans: list[dict[str, Any]] = []  # noqa: RUF012 - shared, never mutated

    def adopt(self, response: AgentResponse) -> None:
        """Nothing to reconcile without a trace."""

    @contextmanager
    def stage(self, name: str, **attributes: Any) -> Iterator[None]:
        """No span for the stage."""
        yield None

    def finish(self, record: RunRecord) -> None:
        """Nothing to attach."""


class NullTracer:
    """Tracing switched off."""

    enabled = False
    endpoint: str | None = None

    def traceparent_for(self, run: Any) -> str | None:
        """No trace to join."""
        return None

    @asynccontextmanager
    async def run_span(self, run: Any) -> AsyncIterator[NullRunTrace]:
        """Yield the shared untraced run."""
        yield NULL_RUN_TRACE

    @contextmanager
    def evaluation_span(self, name: str, **attributes: Any) -> Iterator[None]:
        """No span for evaluation-wide work."""
        yield None


NULL_RUN_TRACE = NullRunTrace()
NULL_TRACER = NullTracer()
