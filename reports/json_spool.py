"""The JSON report process: promptfoo rows spooled to disk as runs arrive, written at the end.

`python -m evals.reports.json_spool` is started by `ReportProcess` (`json_stream.py`).
Every batch of runs arrives in the encoded form the results store receives; each run
becomes its promptfoo row (`promptfoo_row.encoded_row`), is added to its column's
metrics, and is appended, serialized, to a spool file next to the report, the process
remembering only where each row is. When the evaluation ends, the harness sends the
document's head (configuration, statistics, gate verdicts); the process writes the file:
the head, the rows copied from the spool in promptfoo's order with their `testIdx`, and
the columns' metrics with the derived metrics.

The process imports only what it writes with (this module, `promptfoo_row`,
`json_document` and orjson, the companion protocol): no model classes, no SQLAlchemy,
which keeps its memory and start-up small.
"""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evals.reports.json_document import finished_row, row_fragment, write_document
from evals.reports.promptfoo_row import (
    accumulate,
    encoded_row,
    fill_head,
    finish_metrics,
    test_indices,
)
from evals.store.companion import Inbox, answer, answer_failure


@dataclass(slots=True)
class ReportPlan:
    """What the report process needs to build rows, as plain data: each column's fields
    (`column_fields`) and its `results.prompts` entry, where a run's (agent, prompt id)
    finds its column, the tests as promptfoo resolves them, and the derived metrics."""

    evaluation_id: str
    paths: list[str]
    columns: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    where: dict[tuple[str, str], int]
    tests: dict[int, dict[str, Any]]
    derived: list[tuple[str, str]]


class _Spool:
    """The report process's state: rows on disk, their places, the columns' metrics."""

    def __init__(self, plan: ReportPlan) -> None:
        self.plan = plan
        self.file = tempfile.TemporaryFile(dir=Path(plan.paths[0]).parent)  # noqa: SIM115
        self.size = 0
        self.places: list[tuple[int, int, int, int, int]] = []

    def add(self, runs: list[Any]) -> None:
        plan = self.plan
        evaluation_id = plan.evaluation_id
        write = self.file.write
        for encoded in runs:
            run = encoded[0]
            case, repeat = run["case_index"], run["repeat"]
            column = plan.where[(run["agent"], run["prompt_id"])]
            row = encoded_row(encoded, plan.columns[column], plan.tests[case], evaluation_id)
            accumulate(plan.prompts[column]["metrics"], row)
            data = row_fragment(row)
            write(data)
            self.places.append((case, repeat, column, self.size, len(data)))
            self.size += len(data)

    def finish(self, head: dict[str, Any], duration: int, repeat: int) -> None:
        prompts = self.plan.prompts
        finish_metrics(prompts, self.plan.derived)
        fill_head(head, prompts, duration)
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
