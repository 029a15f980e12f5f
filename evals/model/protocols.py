"""The interfaces the run engine is written against, so it never imports what implements them.

The runner traces runs through a `Tracer` (evals.tracing), an evaluation stores its runs
through a `StoreSink` (evals.store.process) and streams its JSON report through a
`ReportSink` (evals.reports.json_stream), the response cache keeps answers in a
`ResponseCache` (evals.run.cache), and planned runs execute on an `Executor`
(evals.run.executors). Each implementation lives above the code that uses it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import Any, Protocol

from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.plan import PlannedRun
from evals.model.results import AgentResponse, RunRecord
from evals.model.suite import Suite
from evals.model.summary import GateReport, Summary
from evals.model.triage import TriageAction

OnRecord = Callable[[RunRecord], None]
"""Called with each graded record as soon as its run completes."""


class RunTrace(Protocol):
    """The trace of one run, open while the run executes."""

    @property
    def traceparent(self) -> str | None:
        """The W3C `traceparent` an agent sends so its spans join the run's trace."""
        ...

    @property
    def extra(self) -> dict[str, Any]:
        """What an out-of-process agent needs to join the trace (`env`: variables)."""
        ...

    def adopt(self, response: AgentResponse) -> None:
        """Reconcile the agent's response with the spans the run produced."""
        ...

    def stage(self, name: str, **attributes: Any) -> AbstractContextManager[Any]:
        """A span around one stage of the run (grading, for instance)."""
        ...

    def finish(self, record: RunRecord) -> None:
        """Attach the run's spans to its record."""
        ...


class Tracer(Protocol):
    """Opens one trace per run, and spans for evaluation-wide work."""

    def run_span(self, run: PlannedRun) -> AbstractAsyncContextManager[RunTrace]:
        """The run's root span, as an async context manager yielding its `RunTrace`."""
        ...

    def evaluation_span(self, name: str, **attributes: Any) -> AbstractContextManager[Any]:
        """A span for work done once per evaluation (the gates, for instance)."""
        ...


class StoreSink(Protocol):
    """Where an evaluation's runs go as they complete."""

    def begin(self, meta: EvaluationMeta, *, create: bool) -> None:
        """Start storing the evaluation `meta` (creating it when `create`)."""
        ...

    def post_begin(self, meta: EvaluationMeta, *, create: bool) -> None:
        """`begin` without waiting for the store to be open (`confirm` waits)."""
        ...

    def confirm(self) -> None:
        """Wait until everything asked so far is answered; raise the first failure."""
        ...

    def add(self, record: RunRecord) -> None:
        """Store one run."""
        ...

    def add_group(self, records: list[RunRecord]) -> None:
        """Store runs that belong together, all or none."""
        ...

    def interrupted(self, meta: EvaluationMeta) -> None:
        """Store the runs handed over so far and mark the evaluation interrupted."""
        ...

    def finish(self, meta: EvaluationMeta, summary: Summary, gates: GateReport) -> None:
        """Record the end of the evaluation (a failure may be raised by the sink's next
        call or `close`)."""
        ...

    def release(self) -> None:
        """Let the sink finish what it holds without waiting for it (`close` waits);
        nothing more is sent afterwards."""
        ...

    def close(self) -> None:
        """Release the sink and wait until it is done."""
        ...

    def tee(self, receiver: Callable[[bytes], None] | None) -> None:
        """Also hand each batch of runs, as sent to the store, to `receiver`."""
        ...

    def quarantines(self, suite_id: str, now: float) -> Callable[[], list[TriageAction]]:
        """Ask for the suite's quarantines in force at `now`, from the store being
        written; the function returned waits for them (nothing else is asked meanwhile)."""
        ...


class ReportSink(Protocol):
    """A report written while the evaluation runs (the promptfoo JSON report)."""

    @property
    def begun(self) -> bool:
        """Whether the report has begun (a staged evaluation begins it once)."""
        ...

    def begin(self, suite: Suite, meta: EvaluationMeta) -> None:
        """Start the report of the evaluation `meta` of `suite`."""
        ...

    def add(self, record: RunRecord) -> None:
        """Take one run."""
        ...

    def add_group(self, records: list[RunRecord]) -> None:
        """Take several runs."""
        ...

    def receive(self, framed: bytes) -> None:
        """Take runs already encoded and framed for the store (see `StoreSink.tee`)."""
        ...

    def rides(self, store: object) -> bool:
        """Whether `store`'s own process writes the report (it then sees every run)."""
        ...

    def finish(self, result: EvaluationResult) -> None:
        """Write the report's files for the finished evaluation `result`."""
        ...

    def send_finish(self, result: EvaluationResult) -> None:
        """Start writing the report's files of `result` (`finish` without waiting)."""
        ...

    def await_finish(self) -> None:
        """Wait until the files `send_finish` started are written."""
        ...


class ResponseCache(Protocol):
    """Agent responses by cache key."""

    def get(self, key: str) -> AgentResponse | None:
        """The response stored for `key`, or None."""
        ...

    def put(self, key: str, response: AgentResponse) -> None:
        """Remember a response."""
        ...

    def close(self) -> None:
        """Release the cache."""
        ...


class Executor(Protocol):
    """Runs planned runs and reports each graded record as soon as it is complete."""

    async def run(self, planned: Iterable[PlannedRun], on_record: OnRecord) -> None:
        """Execute every planned run once."""
        ...
