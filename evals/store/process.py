"""The results store written from a companion process, so the database has its own core.

`evals run` hands every completed run to a child process (`python -m evals.store.process`)
that owns the store connection: it creates the evaluation, stores runs in batches as they
arrive, and records the end of the evaluation. The harness's own process only encodes
each run and writes it to a pipe, so neither the database's CPU time nor the store's
start-up sits on the path of the agents. A SQLite store that is new or has the current
schema (the default) is written with the standard library's `sqlite3` alone
(`evals.store.sqlite_direct`); PostgreSQL and stores to upgrade go through `Store`.

Nothing is lost when the harness dies: the store process ignores Ctrl-C, SIGTERM and
SIGHUP, stores every run it has received once its input closes, and only then exits. A
batch goes to the database when it holds `batch_size` runs or `max_delay_s` after its
first run, whichever comes first, so a run is stored within a moment of completing even
when runs are slow. A store error (unreachable server, full disk) comes back as a
`HarnessFault`, raised in the harness on its next call.

Messages are length-prefixed pickles of plain tuples from the harness; the store process
answers `begin`, `flush` and `finish` with `("ok", runs_stored)`, `quarantines` with
`("ok", actions)`, or any of them with `("error", message)`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Protocol

from evals.common.collector import settle_long_lived
from evals.model.errors import HarnessFault
from evals.store.companion import Companion, Inbox, answer, answer_failure, frame

if TYPE_CHECKING:  # the process starts before these load (see `StoreProcess`)
    import asyncio

    from evals.model.evaluation import EvaluationMeta
    from evals.model.results import RunRecord
    from evals.model.summary import GateReport, Summary
    from evals.model.triage import TriageAction
    from evals.store.codec import EncodedRun

# How often `add` looks whether the store process has failed.
_CHECK_INTERVAL_S = 0.1
# Runs that travel together at most, so the store process works while the harness does.
_SEND_AT = 32


class StoreProcess:
    """The harness's side of the store process: begin, add runs, finish, close.

    `module` is the process's entry module: this one, or one that brings a `Rider` on
    board and calls `main` (the JSON report's, `evals.reports.json_spool`).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        batch_size: int = 256,
        max_delay_s: float = 0.25,
        module: str = "evals.store.process",
    ) -> None:
        self.module = module
        self._child = Companion(
            module,
            [url or "", str(batch_size), str(max_delay_s)],
            name="the store process",
            failure="storing runs failed",
        )
        # Loaded once the process is on its way, so its start never waits for them.
        from asyncio import get_running_loop

        from evals.store.codec import encode_run

        self._encode = encode_run
        self._running_loop = get_running_loop
        self._evaluation_id: str | None = None
        self._outbox: list[EncodedRun] = []
        self._send_scheduled: asyncio.AbstractEventLoop | None = None
        self._next_check = 0.0
        self._released = False
        self._closed = False
        self._tee: Callable[[bytes], None] | None = None
        self._unread = 0  # answers to posted messages not read yet, oldest first

    @property
    def pid(self) -> int:
        """The store process's id."""
        return self._child.process.pid

    def begin(self, meta: EvaluationMeta, *, create: bool) -> None:
        """Start storing runs of evaluation `meta` (an EvaluationMeta), creating it if asked.

        Waits for the store to be open, so an unreachable store stops the evaluation
        before any agent runs.
        """
        self.post_begin(meta, create=create)
        self.confirm()

    def post_begin(self, meta: EvaluationMeta, *, create: bool) -> None:
        """`begin` without waiting: the store process opens the store while the harness
        prepares the rest (the JSON report's plan). `confirm` waits for it, and must be
        called before the first run, so an unreachable store still stops the evaluation
        before any agent runs."""
        self.post(("begin", meta, create))
        self._evaluation_id = meta.id

    def confirm(self) -> None:
        """Wait for the answers to every message posted so far; the first failure among
        them is raised (a HarnessFault, or the SuiteError the store refused an input with)."""
        self._read_unread()

    def add(self, record: RunRecord) -> None:
        """Hand a completed run to the store process (it is stored within a moment).

        Inside an event loop, the runs that complete in one turn of the loop travel
        together, at the end of that turn (or every `_SEND_AT` runs in a long turn).
        """
        if self._child.failure is not None:
            raise HarnessFault(self._child.failure)
        self._outbox.append(self._encode(self._require_evaluation(), record))
        if len(self._outbox) >= _SEND_AT:
            self.send()
            return
        try:
            loop = self._running_loop()
        except RuntimeError:
            self.send()
            return
        if self._send_scheduled is loop:  # its turn's send is queued already
            return
        self._send_scheduled = loop
        loop.call_soon(self._send_later)

    def _send_later(self) -> None:
        """`send` at the end of a turn of the event loop: a failure of the store process is
        kept (in the companion) and raised as a HarnessFault by the next `add` or request,
        never inside the loop's callback. One is queued at a time, however many runs
        complete in the turn (a turn of agents that never wait may complete thousands)."""
        self._send_scheduled = None
        with contextlib.suppress(HarnessFault):
            self.send()

    def add_group(self, records: list[RunRecord]) -> None:
        """Hand over runs to be stored together, in one transaction (a decided group)."""
        evaluation_id = self._require_evaluation()
        self._outbox.extend(self._encode(evaluation_id, r) for r in records)
        self.send()

    def send(self) -> None:
        """Hand the runs added so far to the store process now."""
        if not self._outbox:
            return
        now = time.monotonic()
        if now >= self._next_check:
            self._next_check = now + _CHECK_INTERVAL_S
            if self._child.process.poll() is not None:
                self._child.fail()
        runs, self._outbox = self._outbox, []
        message = _frame_runs(runs)
        self._child.write(message)
        if self._tee is not None:
            self._tee(message)

    def tee(self, receiver: Callable[[bytes], None] | None) -> None:
        """Also hand every framed batch of runs to `receiver` (the report process reads the
        same runs: encoded and framed once, written to two pipes)."""
        self._tee = receiver

    def _require_evaluation(self) -> str:
        if self._evaluation_id is None:
            raise HarnessFault("the store process has no evaluation; call begin first")
        return self._evaluation_id

    def flush(self) -> int:
        """Wait until every run handed over is stored; returns how many runs were new."""
        return self._request(("flush",))

    def finish(self, meta: EvaluationMeta, summary: Summary, gates: GateReport) -> None:
        """Have the remaining runs and the evaluation's end (status, statistics, gates)
        stored, without waiting: the harness prints its summary meanwhile. The answer is
        read before the next request's, by `reply`, or by `close`, which raise a failure."""
        self.post(("finish", meta, summary, gates))

    def quarantines(self, suite_id: str, now: float) -> Callable[[], list[TriageAction]]:
        """Ask for the suite's quarantines in force at `now`, read by the store process
        from the store it has open (the harness itself never loads the database layer);
        the function returned waits for them. The store process answers once it has stored
        every run sent before, so the harness can work meanwhile (the statistics); nothing
        else may be asked before the answer is read."""
        self.post(("quarantines", suite_id, now))

        def held() -> list[TriageAction]:
            actions: list[TriageAction] = self.reply()
            return actions

        return held

    def ask(self, message: tuple[Any, ...]) -> Any:
        """A request to the rider on board (see `module`), after the runs added so far;
        its answer's value."""
        self.send()
        self._read_unread()
        return self._child.request(message)

    def post(self, message: tuple[Any, ...]) -> None:
        """`ask` without waiting: the store process works on `message` while the harness
        goes on; `reply` waits for its answer."""
        self.send()
        self._child.write(frame(message))
        self._unread += 1

    def reply(self) -> Any:
        """The value of the answer to the message `post` sent last, once the answers to
        the messages posted before it are read (a failure among them is raised)."""
        self._read_unread(keep=1)
        self._unread = 0
        return self._child.reply()

    def _read_unread(self, keep: int = 0) -> None:
        """Read the answers to posted messages, all but the last `keep`, oldest first."""
        while self._unread > keep:
            self._unread -= 1
            self._child.reply()

    def interrupted(self, meta: EvaluationMeta) -> None:
        """Store the runs handed over so far and mark evaluation `meta` interrupted."""
        self._request(("interrupted", meta))

    def release(self) -> None:
        """Let the store process store what it holds and exit, without waiting for the exit
        (`close` waits): it closes the database while the harness frees its evaluation.
        Nothing may be sent afterwards. One never sent anything holds nothing and is ended
        at once."""
        if self._released:
            return
        self._released = True
        with contextlib.suppress(HarnessFault):
            self.send()
        try:
            # A failed `finish` is raised here; a failure raised already (the answers posted
            # after it are not read: nothing more is sent to a failed process) is not again.
            if self._child.failure is None:
                self._read_unread()
        finally:
            self._child.release()

    def close(self) -> None:
        """`release` the store process and wait for it to exit."""
        if self._closed:
            return
        self._closed = True
        try:
            self.release()
        finally:
            self._child.close()

    def _request(self, message: tuple[Any, ...]) -> int:
        self.send()
        self._read_unread()
        return int(self._child.request(message))


def _frame_runs(runs: list[EncodedRun]) -> bytes:
    """The framed batch; a run the pipe cannot carry (an object that does not pickle in its
    metadata or trajectory) travels as a `malformed` error row instead of being dropped."""
    try:
        return frame(("runs", runs))
    except Exception:  # pickling fails with many types: PicklingError, TypeError, ...
        return frame(("runs", [_picklable(run) for run in runs]))


def _picklable(run: EncodedRun) -> EncodedRun:
    try:
        pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        from evals.store.codec import RunRow

        detail = f"{type(exc).__name__}: {exc}"[:500]
        row = RunRow._make(run[0])._replace(
            output=None,
            trajectory=None,
            trace=None,
            extra=None,
            status="error",
            error_kind="malformed",
            error=f"malformed agent response: the run cannot be stored ({detail})",
            score=None,
            passed=None,
        )
        return tuple(row), []
    return run


class Rider(Protocol):
    """Work that rides on the store process: it sees every batch of runs the store
    receives and answers the messages whose kind it names (the JSON report, whose entry
    module starts the store process with itself on board: one process, one pipe)."""

    kinds: frozenset[str]

    @property
    def behind(self) -> bool:
        """Whether it has work left on runs it took (done by `catch_up`)."""

    def runs(self, runs: list[EncodedRun]) -> None:
        """Take a batch of runs as the store received it (the work on them may wait)."""

    def catch_up(self) -> None:
        """Do a little of the work left, while the store has nothing to do."""

    def handle(self, message: tuple[Any, ...]) -> Any:
        """Answer one of its own messages (the answer's value)."""

    def close(self) -> None:
        """Release what it holds; the process is ending."""


class RunStore(Protocol):
    """What the store process does with a store: `evals.store.sqlite_direct.SqliteDirect`
    for a current SQLite file, else `evals.store.Store` (SQLAlchemy)."""

    def create_evaluation(self, meta: EvaluationMeta) -> None:
        """Record a new evaluation."""

    def add_encoded(self, encoded_runs: list[EncodedRun]) -> int:
        """Store encoded runs in one transaction; how many were new."""

    def finish_evaluation(self, meta: EvaluationMeta, summary: Summary, gates: GateReport) -> None:
        """Record the end of an evaluation."""

    def mark_interrupted(self, meta: EvaluationMeta) -> None:
        """Record that an evaluation stopped on a signal."""

    def quarantines(self, suite_id: str, now: float) -> list[TriageAction]:
        """The suite's quarantines in force at `now`."""

    def close(self) -> None:
        """Release the connections."""


def open_run_store(url: str | None) -> RunStore:
    """The store at `url` (resolved as `open_store` does) for the store process: written
    with `sqlite3` alone when it is a SQLite file that is new or has the current schema,
    so SQLAlchemy is never imported for the default store; through `Store` otherwise."""
    from evals.store.location import resolve_url
    from evals.store.sqlite_direct import open_direct

    resolved = resolve_url(url)
    direct = open_direct(resolved)
    if direct is not None:
        return direct
    from evals.store import open_store

    return open_store(resolved)


def _load_for_begin(url: str | None) -> None:
    """Import what the harness's first message needs (`begin`: an EvaluationMeta, then the
    store at `url` to open: SQLAlchemy too for a store that is not a SQLite file) as the
    process starts, while the harness still loads the suite: the harness waits for the
    answer to `begin` before its first run."""
    for module in ("evals.model.evaluation", "evals.store.sqlite_direct"):
        importlib.import_module(module)
    from evals.store.location import resolve_url, sqlite_file

    if sqlite_file(resolve_url(url)) is None:
        importlib.import_module("evals.store.store")


def serve(
    url: str | None,
    source: int,
    answers: IO[bytes],
    batch_size: int,
    max_delay_s: float,
    rider: Rider | None = None,
) -> int:
    """Obey the harness's messages until its pipe closes; the store process's main loop.

    The store is opened on the first `begin`, so a process started early and then not
    needed (the suite was invalid) leaves no database behind. A rider works on its runs
    only while no message waits and no batch is due.
    """
    inbox = Inbox(source)
    store: RunStore | None = None
    pending: list[EncodedRun] = []
    stored = 0
    deadline = 0.0
    try:
        _load_for_begin(url)
        settle_long_lived()  # the modules' objects are never garbage here
        while True:
            timeout = max(0.0, deadline - time.monotonic()) if pending else None
            if rider is not None and rider.behind and timeout != 0.0:
                message = inbox.next(0.0)
                if message is None and not inbox.closed:
                    rider.catch_up()  # storing and answering come first
                    continue
            else:
                message = inbox.next(timeout)
            if message is not None and message[0] == "runs":
                if rider is not None:
                    rider.runs(message[1])
                if not pending:
                    deadline = time.monotonic() + max_delay_s
                pending.extend(message[1])
                if len(pending) < batch_size:
                    continue
            if pending:
                stored += store.add_encoded(pending)  # type: ignore[union-attr]
                pending = []
            if message is None:
                if inbox.closed:
                    return 0
                continue
            kind = message[0]
            if rider is not None and kind in rider.kinds:
                try:
                    answer(answers, "ok", rider.handle(message))
                except Exception as exc:  # the rider's failure; the store carries on
                    answer_failure(answers, exc)
                continue
            if kind == "begin":
                _, meta, create = message
                store = store or open_run_store(url)
                if create:
                    store.create_evaluation(meta)
            elif kind == "interrupted":
                store.mark_interrupted(message[1])  # type: ignore[union-attr]
            elif kind == "finish":
                _, meta, summary, gates = message
                store.finish_evaluation(meta, summary, gates)  # type: ignore[union-attr]
            elif kind == "quarantines":
                _, suite_id, now = message
                held = store.quarantines(suite_id, now)  # type: ignore[union-attr]
                answer(answers, "ok", held)
                continue
            if kind != "runs":
                answer(answers, "ok", stored)
    except Exception as exc:  # every store failure goes back to the harness as a message
        return answer_failure(answers, exc)
    finally:
        if rider is not None:
            rider.close()
        if store is not None:
            store.close()


def main(arguments: list[str], rider: Rider | None = None) -> int:
    """Entry point of `python -m evals.store.process URL BATCH_SIZE MAX_DELAY_S`
    (`arguments`), with `rider` on board when another entry module brings one.

    An empty URL means the default store.
    """
    for stop in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, signal.SIG_IGN)  # the harness stops; this process stores first
    url, batch_size, max_delay_s = arguments[0], int(arguments[1]), float(arguments[2])
    return serve(url or None, sys.stdin.fileno(), sys.stdout.buffer, batch_size, max_delay_s, rider)


if __name__ == "__main__":
    # Everything is stored and answered by now; skipping the interpreter's teardown (a
    # tenth of a second when SQLAlchemy is loaded) shortens the harness's wait for this exit.
    code = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(code)
