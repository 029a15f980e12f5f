"""The promptfoo JSON report written while the evaluation runs, by a companion process.

`evals run -o out.json` starts `python -m evals.reports.json_stream` beside the store
process. Every completed run reaches it as the store process receives it (the same
encoded, framed batch is written to both pipes, so the harness encodes a run once): it
turns the run into its promptfoo row, adds the row to its column's metrics, and appends
the serialized row to a spool file next to the report, remembering only where each row
is. When the evaluation ends, the harness sends the document's head (configuration,
statistics, gate verdicts); the process writes the file: the head, the rows copied from
the spool in promptfoo's order with their `testIdx`, and the columns' metrics with the
derived metrics. The harness keeps slim records only, so neither process holds every
row, and the row work happens on the second core while the agents run on the first.

Without a store (`--no-store`) the harness encodes and frames runs for this process
itself; runs a resumed evaluation loads from the store are sent the same way.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evals.model.errors import HarnessFault
from evals.model.evaluation import EvaluationMeta, EvaluationResult
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.reports.json_document import ROWS_MARK, finished_row, row_fragment, write_document
from evals.reports.promptfoo_format import (
    Column,
    accumulate,
    build_row,
    column_index,
    column_prompts,
    document_head,
    duration_ms,
    fill_head,
    finish_metrics,
    suite_columns,
    test_case,
    test_indices,
)
from evals.store.codec import decode_encoded, encode_run
from evals.store.companion import Companion, Inbox, answer, answer_failure, frame
from evals.tracing.redact import Redactor


@dataclass(slots=True)
class ReportPlan:
    """What the report process needs to build rows: columns, tests, derived metrics."""

    evaluation_id: str
    paths: list[str]
    columns: list[Column]
    where: dict[tuple[str, str], int]
    tests: dict[int, dict[str, Any]]
    derived: list[tuple[str, str]]


def report_plan(suite: Suite, meta: EvaluationMeta, paths: list[Path]) -> ReportPlan:
    """The plan of an evaluation's streamed report."""
    cols = suite_columns(suite, meta.agents)
    redactor = Redactor(secrets=suite.secrets)
    return ReportPlan(
        evaluation_id=meta.id,
        paths=[str(Path(p).resolve()) for p in paths],
        columns=redactor.scrub(cols),
        where=column_index(suite, cols),
        tests=redactor.scrub({case.index: test_case(case) for case in suite.cases}),
        derived=list(suite.derived_metrics),
    )


class ReportProcess:
    """The harness's side of the report process: begin, runs, finish, close."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = [Path(p) for p in paths]
        self._child = Companion(
            "evals.reports.json_stream",
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


class _Spool:
    """The report process's state: rows on disk, their places, the columns' metrics."""

    def __init__(self, plan: ReportPlan) -> None:
        self.plan = plan
        self.file = tempfile.TemporaryFile(dir=Path(plan.paths[0]).parent)  # noqa: SIM115
        self.size = 0
        self.places: list[tuple[int, int, int, int, int]] = []
        self.prompts = column_prompts(plan.columns)

    def add(self, runs: list[Any]) -> None:
        plan = self.plan
        for encoded in runs:
            record = decode_encoded(encoded)
            column = plan.where[(record.key.agent, record.key.prompt_id)]
            test = plan.tests[record.case_index]
            row = build_row(record, plan.columns[column], test, plan.evaluation_id)
            accumulate(self.prompts[column]["metrics"], row)
            data = row_fragment(row)
            self.file.write(data)
            self.places.append((record.case_index, record.key.repeat, column, self.size, len(data)))
            self.size += len(data)

    def finish(self, head: dict[str, Any], duration: int, repeat: int) -> None:
        finish_metrics(self.prompts, self.plan.derived)
        fill_head(head, self.prompts, duration)
        indices = test_indices({(case, r) for case, r, *_ in self.places}, repeat)
        order = sorted(self.places, key=lambda p: (indices[(p[0], p[1])], p[2]))
        self.file.flush()
        spool = self.file.fileno()
        for path in self.plan.paths:
            partial = f"{path}.partial"
            with open(partial, "wb") as out:
                rows = (
                    finished_row(os.pread(spool, size, at), indices[(case, r)])
                    for case, r, _, at, size in order
                )
                write_document(out, head, rows)
            os.replace(partial, path)

    def close(self) -> None:
        self.file.close()


def serve(source: int, answers: IO[bytes]) -> int:
    """Obey the harness's messages until its pipe closes: the report process's loop."""
    inbox = Inbox(source)
    spool: _Spool | None = None
    try:
        while (message := inbox.next(None)) is not None:
            kind = message[0]
            if kind == "runs":
                spool.add(message[1])  # type: ignore[union-attr]
                continue
            if kind == "begin":
                spool = _Spool(message[1])
            elif kind == "finish":
                spool.finish(*message[1:])  # type: ignore[union-attr]
            answer(answers, "ok", 0)
        return 0
    except Exception as exc:  # every failure goes back to the harness as a message
        return answer_failure(answers, exc)
    finally:
        if spool is not None:
            spool.close()


if __name__ == "__main__":
    code = serve(sys.stdin.fileno(), sys.stdout.buffer)
    sys.stderr.flush()
    os._exit(code)
