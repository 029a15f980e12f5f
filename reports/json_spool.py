"""The JSON report process: promptfoo rows spooled to disk as runs arrive, written at the end.

`python -m evals.reports.json_spool` is started by `ReportProcess` (`json_stream.py`)
when the evaluation has no store; with a store, `python -m evals.reports.json_spool URL
BATCH_SIZE MAX_DELAY_S` is the store process with the report on board (a `Rider` of
`evals.store.process`): one process, one pipe, one interpreter less. Every batch of
runs arrives in the encoded form the results store receives; each run becomes its
promptfoo row (`promptfoo_row.encoded_row`), is added to its column's metrics, and is
appended, serialized, to a spool file next to the report, the process remembering only
where each row is. When the evaluation ends, the harness sends the document's head
(configuration, statistics, gate verdicts); the process writes the file: the head, the
rows copied from the spool in promptfoo's order with their `testIdx`, and the columns'
metrics with the derived metrics.

On its own the process imports only what it writes with (this module, `promptfoo_row`,
`json_document` and orjson, the companion protocol): no model classes, no SQLAlchemy,
which keeps its memory and start-up small.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from evals.common.collector import settle_long_lived
from evals.reports.json_document import finished_row, nested, row_fragment, write_document
from evals.reports.promptfoo_row import (
    accumulate,
    encoded_row,
    fill_head,
    finish_metrics,
    producer_version,
    test_indices,
)
from evals.store.codec import RunRow
from evals.store.companion import Inbox, answer, answer_failure

if TYPE_CHECKING:  # loaded once a report begins
    from evals.tracing.redact import Redactor

# Runs spooled at a time while the process is otherwise idle, and waiting runs at most.
_CATCH_UP = 32
_MAX_BACKLOG = 512


@dataclass(slots=True)
class ReportPlan:
    """What the report process needs to build rows, as plain data: each column's fields
    (`column_fields`) and its `results.prompts` entry, where a run's (agent, prompt id)
    finds its column, the tests as promptfoo resolves them, the derived metrics, and the
    suite's configuration as read with the secrets to mask in it (the report's `config`,
    redacted and serialized here while the evaluation runs, off the harness's path)."""

    evaluation_id: str
    paths: list[str]
    columns: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    where: dict[tuple[str, str], int]
    tests: dict[int, dict[str, Any]]
    derived: list[tuple[str, str]]
    config: Any
    secrets: list[str]


class _Spool:
    """The report process's state: rows on disk, their places, the columns' metrics."""

    def __init__(self, plan: ReportPlan) -> None:
        self.plan = plan
        self.file = tempfile.TemporaryFile(dir=Path(plan.paths[0]).parent)  # noqa: SIM115
        self.size = 0
        self.places: list[tuple[int, int, int, int, int]] = []
        self.parts: _OwnParts | None = None

    @property
    def ready(self) -> bool:
        """Whether the plan's own parts are worked out (`prepare`)."""
        return self.parts is not None

    def prepare(self) -> _OwnParts:
        """Work out the report's own parts from the plan, once: left out of the answer to
        `report-begin`, which the harness awaits before its first run, and done while the
        process has nothing else to do, or when the first rows need the scrubbed tests."""
        if self.parts is None:
            self.parts = _own_parts(self.plan)
            self.plan.config = None  # serialized: the process keeps the bytes only
        return self.parts

    def add(self, runs: list[Any]) -> None:
        """Build, count and spool the rows of `runs` (written to the spool in one piece)."""
        parts = self.prepare()
        plan = self.plan
        evaluation_id = plan.evaluation_id
        pieces = []
        at = self.size
        for values, grade_rows in runs:
            run = RunRow._make(values)
            case, repeat = run.case_index, run.repeat
            column = plan.where[(run.agent, run.prompt_id)]
            test, test_json = plan.tests[case], parts.tests[case]
            row = encoded_row(run, grade_rows, plan.columns[column], test, evaluation_id, test_json)
            accumulate(plan.prompts[column]["metrics"], row)
            data = row_fragment(row)
            pieces.append(data)
            self.places.append((case, repeat, column, at, len(data)))
            at += len(data)
        self.file.write(b"".join(pieces))
        self.size = at

    def finish(self, head: dict[str, Any], duration: int, repeat: int) -> None:
        """Write the report files: `head` (as the harness built it, scrubbed here), the
        rows in promptfoo's order, the columns' metrics."""
        parts = self.prepare()
        head = parts.redactor.scrub(head)
        prompts = self.plan.prompts
        finish_metrics(prompts, self.plan.derived)
        fill_head(head, prompts, duration)
        head["metadata"]["evalsVersion"] = parts.version
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
                write_document(out, head, rows, parts.config)
            os.replace(partial, path)

    def close(self) -> None:
        self.file.close()


@dataclass(slots=True)
class _OwnParts:
    """What the report process works out itself: the suite's configuration serialized for
    its place, the producer's version, the redactor of the suite's secrets (which scrubs
    the head the harness sends at the end), and each test serialized once for the
    `testCase` of its rows (every repeat and column shows the same)."""

    config: bytes
    version: str
    redactor: Redactor
    tests: dict[int, orjson.Fragment]


def _own_parts(plan: ReportPlan) -> _OwnParts:
    """The report's own parts, redacted as the rest of the report: the suite's
    configuration (secret keys masked by `Redactor.config`, then scrubbed at its depth),
    the tests each row shows (scrubbed in the plan, in place), and the producer's version."""
    from evals.tracing.redact import Redactor  # only once a report begins

    redactor = Redactor(secrets=plan.secrets)
    config = redactor.scrub(redactor.config(plan.config), 1)
    plan.tests = redactor.scrub(plan.tests)
    tests = {index: orjson.Fragment(nested(test, 1)) for index, test in plan.tests.items()}
    return _OwnParts(nested(config, 1), redactor.text(producer_version()), redactor, tests)


class SpoolRider:
    """The report's messages and runs, for `serve` or on board the store process (as its
    `Rider`): `report-begin` (a ReportPlan), `report-runs` (runs for the report only, a
    resumed evaluation's), `report-finish` (head, duration, repeat). A failure while
    spooling runs is kept and raised by the next report message, so the store process
    it rides on goes on storing.

    `report-begin` is answered once the spool file exists; the report's own parts (the
    configuration and tests scrubbed) and runs wait until the process has nothing else
    to do (`catch_up`, a little at a time) or a report message comes, so the harness's
    first run, storing runs and answering the harness never wait for them; the backlog
    holds `_MAX_BACKLOG` runs at most (beyond, the oldest are spooled as runs arrive)."""

    kinds = frozenset({"report-begin", "report-runs", "report-finish"})

    def __init__(self) -> None:
        self.spool: _Spool | None = None
        self.failure: Exception | None = None
        self.backlog: list[Any] = []

    @property
    def behind(self) -> bool:
        """Whether runs wait for their rows, or the report for its own parts."""
        return bool(self.backlog) or (self.spool is not None and not self.spool.ready)

    def runs(self, runs: list[Any]) -> None:
        """Take a batch of runs to spool (runs before the report began are not its own)."""
        if self.spool is None or self.failure is not None:
            return
        self.backlog.extend(runs)
        if len(self.backlog) > _MAX_BACKLOG:  # the oldest beyond the limit, now
            self.spool_runs(len(self.backlog) - _MAX_BACKLOG)

    def catch_up(self) -> None:
        """Do a little of the work left, while nothing else waits: the report's own parts
        first, then the rows of a few runs."""
        if self.spool is not None and self.failure is None and not self.spool.ready:
            self._keeping_failure(self.spool.prepare)
        else:
            self.spool_runs(_CATCH_UP)

    def spool_runs(self, limit: int) -> None:
        """Spool up to `limit` runs of the backlog, oldest first."""
        if self.spool is None or self.failure is not None:
            self.backlog.clear()
            return
        runs, self.backlog = self.backlog[:limit], self.backlog[limit:]
        self._keeping_failure(lambda: self.spool.add(runs))  # type: ignore[union-attr]

    def _keeping_failure(self, work: Callable[[], object]) -> None:
        try:
            work()
        except Exception as exc:  # kept for the next report message
            self.failure = exc
            self.backlog.clear()

    def handle(self, message: tuple[Any, ...]) -> int:
        """Answer a report message (0), or raise the report's failure."""
        kind = message[0]
        if kind == "report-runs":
            self.runs(message[1])
        self.spool_runs(len(self.backlog))
        if self.failure is not None:
            raise self.failure
        if kind == "report-begin":
            if self.spool is not None:
                self.spool.close()
            self.spool = _Spool(message[1])
        elif kind == "report-finish" and self.spool is not None:
            self.spool.finish(*message[1:])
        return 0

    def close(self) -> None:
        """Drop the spool file."""
        if self.spool is not None:
            self.spool.close()


def serve(source: int, answers: IO[bytes]) -> int:
    """Obey the harness's messages until its pipe closes: the report process's loop when
    it runs on its own (no store). Runs are spooled while no message waits."""
    settle_long_lived()
    inbox = Inbox(source)
    rider = SpoolRider()
    try:
        while True:
            message = inbox.next(0.0 if rider.behind else None)
            if message is None:
                if inbox.closed:
                    return 0
                rider.catch_up()
            elif message[0] == "runs":
                rider.runs(message[1])
            else:
                answer(answers, "ok", rider.handle(message))
            if rider.failure is not None:
                raise rider.failure
    except Exception as exc:  # every failure goes back to the harness as a message
        return answer_failure(answers, exc)
    finally:
        rider.close()


def _main(arguments: list[str]) -> int:
    """With the store's arguments (URL BATCH_SIZE MAX_DELAY_S), the store process with the
    report on board; without, the report process on its own."""
    if not arguments:
        return serve(sys.stdin.fileno(), sys.stdout.buffer)
    from evals.store import process

    return process.main(arguments, SpoolRider())


if __name__ == "__main__":
    # The module under its own name does the work: the plan the harness sends unpickles
    # into its classes, so it loads now, while the process waits for its first message,
    # rather than when the plan arrives.
    from evals.reports import json_spool

    code = json_spool._main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(code)
