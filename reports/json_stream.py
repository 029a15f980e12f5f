"""The promptfoo JSON report written while the evaluation runs: the harness's side.

`evals run -o out.json` starts the store process with the report on board (`python -m
evals.reports.json_spool URL ...`, see `STORE_WITH_REPORT`): every completed run reaches
the report as the store process receives it, encoded once by the harness and written to
one pipe. Without a store (`--no-store`), a report process of its own (`python -m
evals.reports.json_spool`) receives the runs, which the harness encodes and frames for
it. Either way the report builds and spools each run's promptfoo row as it arrives and
writes the file when the harness sends the document's head at the end. The harness
keeps slim records only, so no process holds every row, and the row work happens on the
second core while the agents run on the first. The plan sent at the start is plain data
(columns, tests, derived metrics), so the report needs no model classes. Runs a resumed
evaluation loads from the store are encoded and sent by the harness.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.model.errors import HarnessFault
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.reports import STORE_WITH_REPORT
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
from evals.store.process import StoreProcess
from evals.suite.yaml_lines import plain
from evals.tracing.redact import Redactor


def report_plan(suite: Suite, meta: EvaluationMeta, paths: list[Path]) -> ReportPlan:
    """The plan of an evaluation's streamed report, as plain data: the suite's LineDicts
    would make the report's process import the suite loader (and PyYAML) to unpickle it.
    The tests and the configuration go as the suite holds them: the report's process
    scrubs them with the suite's secrets, off this process's path."""
    cols = suite_columns(suite, meta.agents)
    redactor = Redactor(secrets=suite.secrets)
    scrubbed = redactor.scrub(cols)
    return ReportPlan(
        evaluation_id=meta.id,
        paths=[str(Path(p).resolve()) for p in paths],
        columns=[column_fields(column) for column in scrubbed],
        prompts=column_prompts(scrubbed),
        where=column_index(suite, cols),
        tests={case.index: test_case(case) for case in suite.cases},
        derived=list(suite.derived_metrics),
        config=plain(suite.raw),
        secrets=sorted(suite.secrets),
    )


class ReportProcess:
    """The harness's side of the JSON report: begin, runs, finish, close.

    With `store` (a StoreProcess started with `module=STORE_WITH_REPORT`), the report is
    written by the store process itself, which sees every run it stores; without, by a
    report process of its own, which the store's batches are teed to.
    """

    def __init__(self, paths: list[Path], store: StoreProcess | None = None) -> None:
        self.paths = [Path(p) for p in paths]
        self._store = store
        self._child: Companion | None = None
        if store is None:
            self._child = Companion(
                STORE_WITH_REPORT,
                [],
                name="the report process",
                failure="writing the JSON report failed",
            )
        elif store.module != STORE_WITH_REPORT:
            raise HarnessFault(f"the store process must be started with {STORE_WITH_REPORT}")
        self._evaluation_id: str | None = None

    @property
    def begun(self) -> bool:
        """Whether the report has its plan (an evaluation's first stage began it)."""
        return self._evaluation_id is not None

    def rides(self, store: object) -> bool:
        """Whether the process of `store` writes this report (it then sees every run)."""
        return store is self._store

    def begin(self, suite: Suite, meta: EvaluationMeta) -> None:
        """Start the report of evaluation `meta`. On board the store process the plan is
        posted, not awaited: the store's `confirm` (before the first run) reads its answer
        with the store's own, so the report's start overlaps the harness's work."""
        for path in self.paths:
            path.parent.mkdir(parents=True, exist_ok=True)
        message = ("report-begin", report_plan(suite, meta, self.paths))
        if self._child is None:
            self._store.post(message)  # type: ignore[union-attr]
        else:
            self._child.request(message)
        self._evaluation_id = meta.id

    def receive(self, framed: bytes) -> None:
        """Runs already encoded and framed (for the store process): pass them on."""
        if self._child is None:
            raise HarnessFault("the JSON report rides on the store process, which has the runs")
        self._child.write(framed)

    def add(self, record: RunRecord) -> None:
        """One run, encoded here (when no store process frames it)."""
        self.add_group([record])

    def add_group(self, records: list[RunRecord]) -> None:
        """Runs encoded here (when no store process frames them, or they were stored
        before: a resumed evaluation's)."""
        if self._evaluation_id is None:
            raise HarnessFault("the report process has no evaluation; call begin first")
        encoded = [encode_run(self._evaluation_id, r) for r in records]
        if self._child is None:
            self._request(("report-runs", encoded))
        else:
            self.receive(frame(("runs", encoded)))

    def finish(self, result: EvaluationResult) -> None:
        """Write the report files of `result` (waits until they are written)."""
        self.send_finish(result)
        self.await_finish()

    def send_finish(self, result: EvaluationResult) -> None:
        """Have the report files of `result` written, without waiting (`await_finish`
        waits); nothing else may be asked of the process in between."""
        head = document_head(result, ROWS_MARK, streamed=True)  # scrubbed by the report
        message = ("report-finish", head, duration_ms(result), result.repeat)
        if self._child is None:
            self._store.post(message)  # type: ignore[union-attr]
        else:
            self._child.write(frame(message))

    def await_finish(self) -> None:
        """Wait until the files `send_finish` asked for are written (HarnessFault when
        writing them failed)."""
        if self._child is None:
            self._store.reply()  # type: ignore[union-attr]
        else:
            self._child.reply()

    def close(self) -> None:
        """Let the report process exit (dropping an unfinished report); wait for it (one
        never sent anything is ended at once). A report on board the store process ends
        with it."""
        if self._child is not None:
            self._child.close()

    def _request(self, message: tuple[Any, ...]) -> None:
        if self._child is None:
            self._store.ask(message)  # type: ignore[union-attr]
        else:
            self._child.request(message)
