"""Writing runs as they complete: batched, idempotent, safe to interrupt.

`insert_runs` stores a batch in one transaction: each run row with `ON CONFLICT DO
NOTHING` on its key, then the grade rows of the runs actually inserted. A batch is all or
nothing, so a killed process leaves only whole runs behind, and re-sending a run that is
already stored (a resume, or two processes racing) changes nothing.

`RunWriter` does this on a background thread so the event loop driving the agents never
waits for the database: a batch goes out at `batch_size` runs or `max_delay_s` after its
first run, whichever comes first. At most `max_queued` runs wait for the database: when
it falls behind, `add` waits for room, so memory stays flat however many runs stream.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Double, Engine, Integer, Table
from sqlalchemy.types import TypeEngine

from evals.errors import HarnessFault
from evals.results import RunRecord
from evals.store.codec import GRADE_COLUMNS, encode_run
from evals.store.jsontype import JsonDocument, dump_json
from evals.store.schema import RUN_KEY_COLUMNS, grades, runs


def _converter(column_type: TypeEngine[Any]) -> Callable[[Any], Any] | None:
    if isinstance(column_type, Double):
        return float
    if isinstance(column_type, Integer):
        return int
    return None


class _RowFormat:
    """Columns of a table in insert order, for inserting plain tuples fast.

    SQLite takes multi-row VALUES statements. PostgreSQL takes one array per column
    through `unnest`, which keeps the statement short whatever the number of rows.
    """

    def __init__(self, table: Table, columns: tuple[str, ...]) -> None:
        self.table = table
        self.columns = columns
        self.json_positions = tuple(
            i for i, name in enumerate(columns) if isinstance(table.c[name].type, JsonDocument)
        )
        self.converters = tuple(_converter(table.c[name].type) for name in columns)

    def values(self, row: dict[str, Any]) -> tuple[Any, ...]:
        """The row's values in column order, JSON columns serialized."""
        values = [row[name] for name in self.columns]
        for position in self.json_positions:
            if values[position] is not None:
                values[position] = dump_json(values[position])
        return tuple(values)

    def insert(
        self, connection: Connection, rows: list[tuple[Any, ...]], suffix: str = ""
    ) -> list[tuple[Any, ...]]:
        """Insert value tuples (`suffix` completes the statement); returns RETURNING rows."""
        if connection.dialect.name == "postgresql":
            sql, arrays = self._unnest(connection, rows)
            with connection.connection.driver_connection.cursor() as cursor:
                cursor.execute(sql + suffix, arrays)
                return cursor.fetchall() if cursor.description else []
        per_statement = _MAX_PARAMETERS // len(self.columns)
        returned: list[tuple[Any, ...]] = []
        for start in range(0, len(rows), per_statement):
            sql, values = self._values(connection, rows[start : start + per_statement])
            result = connection.exec_driver_sql(sql + suffix, values)
            if result.returns_rows:
                returned.extend(tuple(row) for row in result)
        return returned

    def _head(self, connection: Connection) -> str:
        quote = connection.dialect.identifier_preparer.quote
        names = ", ".join(quote(name) for name in self.columns)
        return f"INSERT INTO {quote(self.table.name)} ({names})"

    def _values(self, connection: Connection, rows: list[tuple[Any, ...]]) -> tuple[str, tuple]:
        group = "(" + ", ".join(["?"] * len(self.columns)) + ")"
        sql = f"{self._head(connection)} VALUES " + ", ".join([group] * len(rows))
        return sql, tuple(value for row in rows for value in row)

    def _unnest(self, connection: Connection, rows: list[tuple[Any, ...]]) -> tuple[str, tuple]:
        # Arrays travel as binary parameters (%b), so no element needs text escaping.
        dialect = connection.dialect
        casts = ", ".join(
            f"%b::{self.table.c[name].type.compile(dialect=dialect)}[]" for name in self.columns
        )
        arrays = tuple(
            [v if v is None or convert is None else convert(v) for v in column]
            for column, convert in zip(zip(*rows, strict=True), self.converters, strict=True)
        )
        return f"{self._head(connection)} SELECT * FROM unnest({casts})", arrays


_RUN_FORMAT = _RowFormat(runs, tuple(c.name for c in runs.columns if c.name != "id"))
_GRADE_FORMAT = _RowFormat(grades, GRADE_COLUMNS)

# Bound parameters per SQLite statement, below its limit of 32766.
_MAX_PARAMETERS = 30_000


def insert_runs(engine: Engine, evaluation_id: str, records: Sequence[RunRecord]) -> int:
    """Store records not stored yet (by key) with their grades; returns how many were new."""
    by_key = {(r.key.case_id, r.key.agent, r.key.prompt_id, r.key.repeat): r for r in records}
    # One order for every writer, so concurrent batches lock keys in the same order.
    ordered = sorted(by_key)
    encoded = {key: encode_run(evaluation_id, by_key[key]) for key in ordered}
    run_rows = [_RUN_FORMAT.values(encoded[key][0]) for key in ordered]
    with engine.begin() as connection:
        quote = connection.dialect.identifier_preparer.quote
        conflict = ", ".join(quote(name) for name in RUN_KEY_COLUMNS)
        returned = ", ".join(quote(name) for name in ("id", *RUN_KEY_COLUMNS[1:]))
        suffix = f" ON CONFLICT ({conflict}) DO NOTHING RETURNING {returned}"
        inserted = _RUN_FORMAT.insert(connection, run_rows, suffix)
        grade_rows = [(run_id, *row) for run_id, *key in inserted for row in encoded[tuple(key)][1]]
        if grade_rows:
            _GRADE_FORMAT.insert(connection, grade_rows)
    return len(inserted)


_STOP = object()


class RunWriter:
    """Buffers records and stores them in small batches on a background thread."""

    def __init__(
        self,
        engine: Engine,
        evaluation_id: str,
        *,
        batch_size: int = 64,
        max_delay_s: float = 0.25,
        max_queued: int = 2048,
    ) -> None:
        self.evaluation_id = evaluation_id
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s
        self.written = 0
        self._engine = engine
        self._queue: queue.Queue[object] = queue.Queue(maxsize=max_queued)
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name="evals-store-writer", daemon=True)
        self._thread.start()

    def add(self, record: RunRecord) -> None:
        """Queue a completed run for storage (waiting while the queue is full).

        Raises if an earlier batch failed.
        """
        self._raise_failure()
        if self._closed:
            raise HarnessFault("the store writer is closed")
        self._queue.put(record)

    def flush(self) -> None:
        """Wait until every queued run is stored."""
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        self._raise_failure()

    def close(self) -> None:
        """Store what is queued and stop the background thread."""
        if not self._closed:
            self._closed = True
            self._queue.put(_STOP)
            self._thread.join()
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._error is not None:
            raise HarnessFault(f"storing runs failed: {self._error}") from self._error

    def _drain(self) -> None:
        pending: list[RunRecord] = []
        deadline = 0.0
        while True:
            try:
                timeout = max(0.0, deadline - time.monotonic()) if pending else None
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            if isinstance(item, RunRecord):
                if not pending:
                    deadline = time.monotonic() + self.max_delay_s
                pending.append(item)
                if len(pending) < self.batch_size:
                    continue
            self._write(pending)
            pending = []
            if isinstance(item, threading.Event):
                item.set()
            elif item is _STOP:
                return

    def _write(self, batch: list[RunRecord]) -> None:
        if not batch or self._error is not None:
            return
        try:
            self.written += insert_runs(self._engine, self.evaluation_id, batch)
        except Exception as exc:  # reported to the caller on its next add/flush/close
            self._error = exc
