"""The promptfoo JSON report written while the evaluation runs: the harness's side.

`evals run -o out.json` starts the report process (`python -m evals.reports.json_spool`)
beside the store process. Every completed run reaches it as the store process receives
it (the same encoded, framed batch is written to both pipes, so the harness encodes a
run once); it builds and spools each run's promptfoo row as it arrives and writes the
file when the harness sends the document's head at the end. The harness keeps slim
records only, so neither process holds every row, and the row work happens on the
second core while the agents run on the first. The plan sent at the start is plain
data (columns, tests, derived metrics), so the report process loads no model classes.

Without a store (`--no-store`) the harness encodes and frames runs for this process
itself; runs a resumed evaluation loads from the store are sent the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.model.errors import HarnessFault
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.reports.json_document import ROWS_MARK
from evals.reports.json_spool import ReportPlan
from evals.reports.promptfoo_format import (
    column_fields,
    column_index,
    column_prompts,
    document_head,
    duration_ms,
    suite_columns,
    test_case,
)
from evals.store.codec import encode_run
from evals.store.companion import Companion, frame
from evals.tracing.redact import Redactor


def report_plan(suite: Suite, meta: EvaluationMeta, paths: list[Path]) -> ReportPlan:
    """The plan of an evaluation's streamed report."""
    cols = suite_columns(suite, meta.agents)
    redactor = Redactor(secrets=suite.secrets)
    scrubbed = redactor.scrub(cols)
    return ReportPlan(
        evaluation_id=meta.id,
        paths=[str(Path(p).resolve()) for p in paths],
        columns=[column_fields(column) for column in scrubbed],
        prompts=column_prompts(scrubbed),
        where=column_index(suite, cols),
        tests=redactor.scrub({case.index: test_case(case) for case in suite.cases}),
        derived=list(suite.derived_metrics),
    )


class ReportProcess:
    """The harness's side of the report process: begin, runs, finish, close."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = [Path(p) for p in paths]
        self._child = Companion(
            "evals.reports.json_spool",
            [],
            name="the report process",
            failure="writing the JSON report failed",
        )
        self._evaluation_id: str | None = None

    @property
    def begun(self) -> bool:
        """Whether the report has its plan (an evaluation's first stage began it)."""
        return self._evaluation_id is not None

    def begin(self, suite: Suite, meta: EvaluationMeta) -> None:
        """Start the report of evaluation `meta`."""
        for path in self.paths:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._request(("begin", report_plan(suite, meta, self.paths)))
        self._evaluation_id = meta.id

    def receive(self, framed: bytes) -> None:
        """Runs already encoded and framed (for the store process): pass them on."""
        self._child.write(framed)

    def add(self, record: RunRecord) -> None:
        """One run, encoded here (when no store process frames it)."""
        self.add_group([record])

    def add_group(self, records: list[RunRecord]) -> None:
        """Runs encoded here (when no store process frames them)."""
        if self._evaluation_id is None:
            raise HarnessFault("the report process has no evaluation; call begin first")
        self.receive(frame(("runs", [encode_run(self._evaluation_id, r) for r in records])))

    def finish(self, result: EvaluationResult) -> None:
        """Write the report files of `result` (waits until they are written)."""
        head = Redactor(secrets=result.suite.secrets).scrub(document_head(result, ROWS_MARK))
        self._request(("finish", head, duration_ms(result), result.repeat))

    def close(self) -> None:
        """Let the report process exit (dropping an unfinished report); wait for it."""
        self._child.close()

    def _request(self, message: tuple[Any, ...]) -> None:
        self._child.request(message)
