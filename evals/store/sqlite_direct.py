"""The store process's writes to a SQLite store, on the standard library's `sqlite3` alone.

Writing an evaluation to the default store is the store process's whole job: create the
schema of a new file, the evaluation's row, its runs and grades as they arrive, the end
of the evaluation (gate decisions and the rows per suite, tag and case), or its
interruption, and read the suite's quarantines for the gates. Importing SQLAlchemy for
that was the largest part of the process's start, so a SQLite file whose schema is
current (or that is new) is written here directly. The rows come from
`evals.store.layout` and `evals.store.groups`, as SQLAlchemy's path builds them, and the
same statements run inside the same kinds of transactions, so a store is the same
whichever wrote it (tests compare every table of both).

Anything else (PostgreSQL, a store that needs a migration or is newer, a URL with query
parameters) goes through `evals.store.Store`; `open_direct` returns None for it.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from evals.common.encoding import dump_json
from evals.model.evaluation import EvaluationMeta
from evals.model.summary import GateReport, Summary
from evals.model.triage import TriageAction
from evals.store.codec import EncodedRun
from evals.store.groups import rate_rows, verdict_rows
from evals.store.layout import (
    EVALUATION_JSON_COLUMNS,
    SCHEMA_VERSION,
    duplicate_evaluation,
    evaluation_values,
    finished_values,
    gate_rows,
    store_runs,
)
from evals.store.location import sqlite_file

# The settings of every store connection (`evals.store.engine` gives SQLAlchemy's the same).
BUSY_TIMEOUT_MS = 30_000
CONNECTION_PRAGMAS = (
    f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)
# Bound parameters per statement, below SQLite's limit of 32766.
MAX_PARAMETERS = 30_000
SCHEMA_FILE = Path(__file__).with_name("sqlite_schema.sql")
_TRIAGE_FIELDS = tuple(TriageAction.__dataclass_fields__)


def configure_connection(connection: sqlite3.Connection) -> None:
    """Apply `CONNECTION_PRAGMAS` to a new connection (both write paths do).

    Turning a new file to WAL needs the file to itself for a moment, and SQLite answers
    "database is locked" at once, without waiting, when another process opens the same new
    store at that moment; such a pragma is tried again until the busy timeout has passed.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    for pragma in CONNECTION_PRAGMAS:
        while True:
            try:
                connection.execute(pragma)
                break
            except sqlite3.OperationalError as exc:
                # SQLITE_BUSY, or an extended code of it (SQLITE_BUSY_RECOVERY, ...)
                if getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_BUSY:
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.005)


def schema_statements() -> list[str]:
    """The statements that create the current schema in a new SQLite store."""
    lines = [line for line in SCHEMA_FILE.read_text().splitlines() if not line.startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def insert_runs(connection: sqlite3.Connection, encoded_runs: Sequence[EncodedRun]) -> int:
    """Insert runs not stored yet (by key) with their grades, inside the caller's
    transaction; returns how many were new (see `layout.store_runs`)."""
    return store_runs(encoded_runs, functools.partial(_insert, connection))


def _insert(
    connection: sqlite3.Connection,
    table: str,
    columns: Sequence[str],
    rows: list[tuple[Any, ...]],
    suffix: str,
) -> list[tuple[Any, ...]]:
    """Multi-row VALUES inserts of value tuples (`suffix` completes each statement);
    returns the RETURNING rows."""
    names = ", ".join(f'"{name}"' for name in columns)
    head = f"INSERT INTO {table} ({names}) VALUES "
    group = "(" + ", ".join(["?"] * len(columns)) + ")"
    per_statement = MAX_PARAMETERS // len(columns)
    returned: list[tuple[Any, ...]] = []
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        values = [value for row in chunk for value in row]
        cursor = connection.execute(head + ", ".join([group] * len(chunk)) + suffix, values)
        returned.extend(cursor.fetchall())
    return returned


def _insert_dicts(connection: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    if rows:
        columns = tuple(rows[0])
        _insert(connection, table, columns, [tuple(row[c] for c in columns) for row in rows], "")


def _json_columns(values: dict[str, Any]) -> dict[str, Any]:
    return {
        name: dump_json(value) if name in EVALUATION_JSON_COLUMNS and value is not None else value
        for name, value in values.items()
    }


class SqliteDirect:
    """A current SQLite store opened for the store process's writes; `open_direct` opens one."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    @contextlib.contextmanager
    def _transaction(self, begin: str = "BEGIN") -> Iterator[sqlite3.Connection]:
        self.connection.execute(begin)
        try:
            yield self.connection
        except BaseException:
            self.connection.execute("ROLLBACK")
            raise
        self.connection.execute("COMMIT")

    def create_evaluation(self, meta: EvaluationMeta) -> None:
        """Record a new evaluation; an id the store holds already is a SuiteError."""
        values = _json_columns(evaluation_values(meta))
        try:
            with self._transaction() as connection:
                _insert(connection, "evaluations", tuple(values), [tuple(values.values())], "")
        except sqlite3.IntegrityError:
            found = self.connection.execute(
                "SELECT 1 FROM evaluations WHERE id = ?", (meta.id,)
            ).fetchone()
            if found is None:
                raise
            raise duplicate_evaluation(meta.id) from None

    def add_encoded(self, encoded_runs: list[EncodedRun]) -> int:
        """Store encoded runs in one transaction; returns how many were new."""
        with self._transaction() as connection:
            return insert_runs(connection, encoded_runs)

    def finish_evaluation(self, meta: EvaluationMeta, summary: Summary, gates: GateReport) -> None:
        """Record the end of an evaluation, as `Store.finish_evaluation` does."""
        document = summary.to_dict()
        values = _json_columns(finished_values(meta, document, gates))
        assignments = ", ".join(f"{name} = ?" for name in values)
        with self._transaction() as connection:
            connection.execute(
                f"UPDATE evaluations SET {assignments} WHERE id = ?", (*values.values(), meta.id)
            )
            for table, rows in (
                ("gate_results", gate_rows(meta.id, gates)),
                ("group_rates", rate_rows(meta.id, document)),
                ("group_verdicts", verdict_rows(meta.id, document)),
            ):
                connection.execute(f"DELETE FROM {table} WHERE evaluation_id = ?", (meta.id,))
                _insert_dicts(connection, table, rows)

    def mark_interrupted(self, meta: EvaluationMeta) -> None:
        """Record that a running evaluation stopped on a signal, as `Store.mark_interrupted`."""
        with self._transaction() as connection:
            connection.execute(
                "UPDATE evaluations SET status = 'interrupted', ended_at = ? "
                "WHERE id = ? AND status IN ('running', 'interrupted')",
                (meta.ended_at, meta.id),
            )

    def quarantines(self, suite_id: str, now: float) -> list[TriageAction]:
        """The suite's quarantines not removed nor expired at `now`, newest first."""
        cursor = self.connection.execute(
            f"SELECT {', '.join(_TRIAGE_FIELDS)} FROM triage_actions "
            "WHERE kind = 'quarantine' AND suite_id = ? AND (until IS NULL OR until > ?) "
            "AND id NOT IN (SELECT target_id FROM triage_actions WHERE kind = 'remove') "
            "ORDER BY created_at DESC, id DESC",
            (suite_id, now),
        )
        return [TriageAction(**dict(zip(_TRIAGE_FIELDS, row, strict=True))) for row in cursor]

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def open_direct(url: str) -> SqliteDirect | None:
    """The SQLite store a resolved URL names, opened for direct writes, creating its
    schema if the file is new; None when SQLAlchemy's path must open it (not a plain
    SQLite file path, a schema to migrate or newer than this harness, not a database)."""
    path = sqlite_file(url)
    if path is None or "?" in url or "%" in url or str(path) in ("", ":memory:"):
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        configure_connection(connection)
        if _stored_version(connection) is None:
            _create_schema(connection)
        if _stored_version(connection) == SCHEMA_VERSION:
            return SqliteDirect(connection)
    except sqlite3.DatabaseError:
        pass  # SQLAlchemy's path reports it as it always has
    connection.close()
    return None


def _stored_version(connection: sqlite3.Connection) -> int | None:
    has_table = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if has_table is None:
        return None
    (version,) = connection.execute("SELECT max(version) FROM schema_version").fetchone()
    return None if version is None else int(version)


def _create_schema(connection: sqlite3.Connection) -> None:
    """Create the current schema unless another process did first (the write lock is
    taken before looking again, as `evals.store.migrations.ensure_schema` does)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        if _stored_version(connection) is None:
            for statement in schema_statements():
                connection.execute(statement)
            connection.execute(
                "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
                (SCHEMA_VERSION, "create current schema", time.time()),
            )
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
