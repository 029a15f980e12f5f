"""The store process: runs handed over are stored, in batches, and never lost or doubled."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from records import make_meta, make_record, make_records, wait_until_gone

from evals.model.errors import HarnessFault, SuiteError
from evals.model.summary import GateReport, Summary
from evals.store import open_store
from evals.store.process import StoreProcess

pytestmark = pytest.mark.slow

WRITE_RUNS = Path(__file__).with_name("write_runs.py")


def _plan_order(records):
    return sorted(
        records, key=lambda r: (r.case_index, r.prompt_index, r.agent_index, r.key.repeat)
    )


def test_an_evaluation_is_created_filled_and_finished(store_url: str) -> None:
    records = make_records(cases=6, repeats=3)
    meta = make_meta("ev-1")
    store = StoreProcess(store_url)
    store.begin(meta, create=True)
    for record in reversed(records[:-4]):
        store.add(record)
    store.add_group(records[-4:])
    meta.status, meta.ended_at = "complete", meta.started_at + 5
    summary = Summary("trading", None, "fp1", 0.95, [], [], [], None)

    store.finish(meta, summary, GateReport(gates=[]))  # answered while the harness goes on
    assert store.flush() == len(records)  # read after the finish's answer
    store.close()

    reader = open_store(store_url)
    assert reader.load_runs("ev-1") == _plan_order(records)
    stored = reader.get_evaluation("ev-1")
    assert (stored.status, stored.verdict, stored.ended_at) == ("complete", "pass", meta.ended_at)
    reader.close()


def test_runs_already_stored_are_not_stored_again(sqlite_url: str) -> None:
    records = make_records(cases=4, repeats=2)
    reader = open_store(sqlite_url)
    reader.create_evaluation(make_meta("ev-1"))
    reader.add_runs("ev-1", records[:5])
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-1"), create=False)
    for record in records + records:
        store.add(record)

    assert store.flush() == len(records) - 5
    store.close()
    assert reader.load_runs("ev-1") == _plan_order(records)
    reader.close()


def test_a_partial_batch_is_stored_after_the_delay_without_a_flush(sqlite_url: str) -> None:
    records = make_records(cases=1, repeats=2)
    store = StoreProcess(sqlite_url, batch_size=1000, max_delay_s=0.05)
    store.begin(make_meta("ev-1"), create=True)
    for record in records:
        store.add(record)
    reader = open_store(sqlite_url)

    deadline = time.monotonic() + 30
    while len(reader.completed_keys("ev-1")) < len(records) and time.monotonic() < deadline:
        time.sleep(0.02)

    assert reader.completed_keys("ev-1") == {r.key.as_tuple() for r in records}
    store.close()
    reader.close()


def test_a_failed_batch_is_reported_to_the_harness(sqlite_url: str) -> None:
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("no-such-evaluation"), create=False)
    store.add(make_record(0, 0, 0))

    with pytest.raises(HarnessFault, match="storing runs failed: IntegrityError"):
        store.flush()
    with pytest.raises(HarnessFault, match="storing runs failed: IntegrityError"):
        store.add(make_record(0, 0, 1))
    store.close()


def test_a_released_store_process_stores_everything_and_exits_without_being_waited_for(
    sqlite_url: str,
) -> None:
    """`release` hands over the last runs and closes the pipe; the process stores them and
    exits on its own while the harness goes on, and `close` then only collects it."""
    records = make_records(cases=4, repeats=2)
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-released"), create=True)
    for record in records:
        store.add(record)
    store.release()

    assert store._child.process.wait(timeout=60) == 0  # no close: it ends by itself
    store.close()
    reader = open_store(sqlite_url)
    assert len(reader.load_runs("ev-released")) == len(records)
    reader.close()


def test_a_failure_is_raised_by_release_and_not_again_by_close(sqlite_url: str) -> None:
    store = StoreProcess(sqlite_url)
    store.post_begin(make_meta("no-such-evaluation"), create=False)
    store.add(make_record(0, 0, 0))
    store.finish(
        make_meta("no-such-evaluation"),
        Summary("s", None, "f", 0.95, [], [], [], None),
        GateReport(gates=[]),
    )

    with pytest.raises(HarnessFault, match="storing runs failed"):
        store.release()
    store.close()
    assert store._child.process.returncode is not None


def test_a_run_the_pipe_cannot_carry_is_stored_as_a_malformed_error_row(sqlite_url: str) -> None:
    """A run whose response holds an object pickle refuses is stored as an error row (its
    output and grades dropped); the other runs of its batch are stored as they are."""
    import dataclasses
    import threading

    good = make_record(0, 0, 0)
    bad = make_record(1, 0, 0)
    bad = dataclasses.replace(
        bad, response=dataclasses.replace(bad.response, metadata={"lock": threading.Lock()})
    )
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-odd"), create=True)
    store.add_group([good, bad])
    assert store.flush() == 2
    store.close()

    reader = open_store(sqlite_url)
    loaded = {record.key.case_id: record for record in reader.load_runs("ev-odd")}
    reader.close()
    assert loaded[good.key.case_id] == good
    stored = loaded[bad.key.case_id]
    assert (stored.status, stored.error_kind, stored.grade) == ("error", "malformed", None)
    assert "the run cannot be stored (TypeError" in (stored.error or "")
    assert (stored.key, stored.seed, stored.prompt) == (bad.key, bad.seed, bad.prompt)


def test_an_unreachable_store_stops_the_evaluation_at_begin(tmp_path: Path) -> None:
    store = StoreProcess("postgresql+psycopg://nobody@127.0.0.1:9/none")

    with pytest.raises(HarnessFault, match="storing runs failed: OperationalError"):
        store.begin(make_meta("ev-1"), create=True)
    store.close()


def test_a_process_started_and_not_used_leaves_no_database(tmp_path: Path) -> None:
    database = tmp_path / "results.db"
    store = StoreProcess(str(database))
    store.close()

    assert not database.exists()


@pytest.mark.parametrize(
    ("url", "sqlalchemy"),
    [("", False), ("postgresql+psycopg://nobody@127.0.0.1:9/none", True)],
    ids=["sqlite", "postgresql"],
)
def test_what_begin_needs_is_loaded_before_the_first_message_comes(
    url: str, sqlalchemy: bool, tmp_path: Path
) -> None:
    """The store process imports the model and the store's writer (SQLAlchemy's for a store
    that is not a SQLite file) while the harness still loads the suite, so the answer to
    `begin`, awaited before the first run, waits on none of them."""
    probe = (
        "import os, sys\n"
        "from evals.store import process\n"
        "wanted = ('evals.model.evaluation', 'evals.store.sqlite_direct')\n"
        "def loaded():\n"
        "    print(all(name in sys.modules for name in wanted), 'sqlalchemy' in sys.modules)\n"
        "loaded()\n"
        "read, write = os.pipe()\n"
        "os.close(write)\n"
        f"process.serve({url!r} or None, read, sys.stdout.buffer, 256, 0.25)\n"
        "loaded()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=tmp_path,
    )

    assert done.stdout.split() == ["False", "False", "True", str(sqlalchemy)]
    assert not (tmp_path / ".evals").exists()  # nothing opened before `begin`


def test_a_process_never_asked_to_begin_is_ended_on_close_not_awaited(tmp_path: Path) -> None:
    """The harness does not wait for an unused store process to finish importing SQLAlchemy
    (an invalid suite exits at once); one that began is let finish instead."""
    unused = StoreProcess(str(tmp_path / "unused.db"))
    unused.close()
    used = StoreProcess(str(tmp_path / "used.db"))
    used.begin(make_meta("ev-1"), create=True)
    used.close()

    assert unused._child.process.returncode == -signal.SIGKILL
    assert used._child.process.returncode == 0


def test_runs_handed_over_are_stored_when_the_harness_is_killed(sqlite_url: str) -> None:
    cases, repeats = 12, 2
    reader = open_store(sqlite_url)
    reader.create_evaluation(make_meta("ev-1"))
    command = [sys.executable, str(WRITE_RUNS), sqlite_url, "ev-1", str(cases), str(repeats)]
    harness = subprocess.Popen(
        [*command, "--no-flush"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert harness.stdout is not None
    store_process = int(harness.stdout.readline().split()[1])
    assert harness.stdout.readline().split()[0] == "sent"

    harness.send_signal(signal.SIGKILL)
    harness.wait()
    wait_until_gone(store_process)

    assert reader.load_runs("ev-1") == _plan_order(make_records(cases, repeats))
    reader.close()


def test_ctrl_c_does_not_stop_the_store_process(sqlite_url: str) -> None:
    records = make_records(cases=3, repeats=2)
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-1"), create=True)
    os.kill(store.pid, signal.SIGINT)
    for record in records:
        store.add(record)

    assert store.flush() == len(records)
    store.close()


def test_a_store_process_that_died_is_reported_on_the_next_run(sqlite_url: str) -> None:
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-1"), create=True)
    os.kill(store.pid, signal.SIGKILL)
    wait_until_gone(store.pid)

    with pytest.raises(HarnessFault, match="store process exited with code -9"):
        store.add(make_record(0, 0, 0))
    store.close()


def test_an_evaluation_run_stores_every_run_in_each_dialect(store_url: str, tmp_path: Path) -> None:
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import run_evaluation
    from evals.suite import load_suite

    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(
        "prompts: ['{{q}}']\n"
        "providers: [{id: echo, label: agent}]\n"
        "evaluateOptions: {repeat: 3}\n"
        "tests:\n"
        + "".join(
            f"  - vars: {{q: item {i}}}\n    assert: [{{type: contains, value: '{i}'}}]\n"
            for i in range(4)
        )
    )
    result = run_evaluation(load_suite(suite_file), RunOptions(store_url=store_url, progress=False))

    reader = open_store(store_url)
    stored = reader.load_runs(result.meta.id)
    evaluation = reader.get_evaluation(result.meta.id)
    reader.close()
    assert len(stored) == 12 and all(r.status == "pass" for r in stored)
    assert {r.key.as_tuple() for r in stored} == {r.key.as_tuple() for r in result.records}
    assert (evaluation.status, evaluation.verdict) == ("complete", result.gates.verdict)


def test_an_evaluation_id_the_store_holds_is_refused_at_begin(store_url: str) -> None:
    first = StoreProcess(store_url)
    first.begin(make_meta("ev-taken"), create=True)
    first.close()
    second = StoreProcess(store_url)

    with pytest.raises(SuiteError, match="--evaluation-id ev-taken") as refused:
        second.begin(make_meta("ev-taken"), create=True)
    second.close()
    assert refused.value.fix is not None and "--resume ev-taken" in refused.value.fix


def test_a_begin_posted_is_refused_at_confirm_and_nothing_else_is_taken(sqlite_url: str) -> None:
    """`post_begin` does not wait for the store; `confirm` does, and raises what the store
    refused, so the harness still stops before its first run."""
    store = open_store(sqlite_url)
    with store.engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO schema_version VALUES (999, 'later', 0)")
    store.engine.dispose()
    process = StoreProcess(sqlite_url)
    process.post_begin(make_meta("ev-1"), create=True)  # returns at once

    with pytest.raises(SuiteError, match=r"newer evals \(schema 999"):
        process.confirm()
    with pytest.raises(HarnessFault, match="newer evals"):
        process.add(make_record(0, 0, 0))
    process.close()


def test_confirm_reads_every_answer_posted_before_it(sqlite_url: str) -> None:
    process = StoreProcess(sqlite_url)
    process.post_begin(make_meta("ev-1"), create=True)
    process.post(("flush",))
    process.confirm()
    process.add(make_record(0, 0, 0))

    assert process.flush() == 1  # the answer read is this request's, not an earlier one's
    process.close()
    assert [e.id for e in open_store(sqlite_url).list_evaluations()] == ["ev-1"]


def test_a_store_of_a_newer_schema_is_an_input_error_in_the_harness(sqlite_url: str) -> None:
    store = open_store(sqlite_url)
    with store.engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO schema_version VALUES (999, 'later', 0)")
    store.engine.dispose()
    process = StoreProcess(sqlite_url)

    with pytest.raises(SuiteError, match=r"newer evals \(schema 999"):
        process.begin(make_meta("ev-1"), create=True)
    with pytest.raises(HarnessFault, match="newer evals"):
        process.add(make_record(0, 0, 0))
    process.close()


def test_the_store_process_reads_the_quarantines_in_force(sqlite_url: str) -> None:
    """The harness asks the store process, not the database, for the gates' quarantines."""
    from evals.model.triage import TriageAction

    writer = open_store(sqlite_url)
    made = 1_000.0

    def action(kind: str, case: str, until: float | None = None) -> TriageAction:
        return TriageAction(kind, "trading", "ana", "flaky", made, case_id=case, until=until)

    held = writer.triage.record(action("quarantine", "c1", until=made + 100))
    writer.triage.record(action("quarantine", "c2", until=made + 10))  # expired at made + 50
    writer.triage.record(action("acknowledge", "c3"))
    writer.triage.record(action("quarantine", "c4", until=made + 1_000))
    writer.close()

    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-q"), create=True)
    asked = store.quarantines("trading", made + 50)  # answered while the harness works
    found = asked()
    store.close()
    assert sorted(a.case_id or "" for a in found) == ["c1", "c4"]
    assert held in found


class _SlowRider:
    """A rider whose work on each run waits (one `catch_up` per run); it notes when it
    works and when the store answers, in one list."""

    kinds = frozenset({"slow-done"})

    def __init__(self, events: list[str]) -> None:
        self.events = events
        self.left = 0

    @property
    def behind(self) -> bool:
        return self.left > 0

    def runs(self, runs: list) -> None:
        self.left += len(runs)

    def catch_up(self) -> None:
        self.left -= 1
        self.events.append("rider")

    def handle(self, message: tuple) -> int:
        return self.left

    def close(self) -> None:
        self.events.append("closed")


class _Answers:
    """The store process's answers, noted in the rider's list as they are written."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def write(self, data: bytes) -> None:
        self.events.append("answer")

    def flush(self) -> None:
        """Answers are noted when written."""


def test_a_rider_works_on_its_runs_only_while_the_store_has_nothing_to_do(
    sqlite_url: str,
) -> None:
    import threading

    from evals.store.codec import encode_run
    from evals.store.companion import frame
    from evals.store.process import serve

    events: list[str] = []
    rider = _SlowRider(events)
    read, write = os.pipe()
    runs = [encode_run("ev-r", make_record(case, 0, 0)) for case in range(3)]
    worker = threading.Thread(
        target=serve, args=(sqlite_url, read, _Answers(events), 256, 60.0, rider)
    )
    worker.start()
    # All at once: the runs are stored and the flush answered before the rider's turn.
    os.write(write, frame(("begin", make_meta("ev-r"), True)) + frame(("runs", runs)))
    os.write(write, frame(("flush",)))
    deadline = time.monotonic() + 30
    while (events.count("answer") < 2 or rider.behind) and time.monotonic() < deadline:
        time.sleep(0.01)
    os.write(write, frame(("slow-done",)))
    os.close(write)
    worker.join(30)
    os.close(read)

    assert events == ["answer", "answer", "rider", "rider", "rider", "answer", "closed"]
    reader = open_store(sqlite_url)
    assert len(reader.completed_keys("ev-r")) == 3
    reader.close()


def test_runs_completed_in_one_turn_of_the_loop_queue_one_send(sqlite_url: str) -> None:
    """Agents that never wait complete many runs in one turn of the event loop: the runs
    go to the store process every few dozen, and one end-of-turn send stays queued, not
    one per few dozen runs (which grew with the evaluation)."""
    import asyncio

    records = make_records(cases=50, repeats=20)
    store = StoreProcess(sqlite_url)
    store.begin(make_meta("ev-1"), create=True)

    async def one_turn() -> int:
        for record in records:
            store.add(record)
        ready = asyncio.get_running_loop()._ready  # type: ignore[attr-defined]
        return sum("_send_later" in repr(handle) for handle in ready)

    assert asyncio.run(one_turn()) == 1
    assert store.flush() == len(records)
    store.close()
