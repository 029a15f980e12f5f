"""Writing runs as they complete: batched, idempotent, safe to interrupt.

`insert_runs` stores a batch in one transaction: each run row with `ON CONFLICT DO
NOTHING` on its key, then the grade rows of the runs actually inserted. A batch is all or
nothing, so a killed process leaves only whole runs behind, and re-sending a run that is
already stored (a resume, or two processes racing) changes nothing.

On SQLite the statements are `evals.store.sqlite_direct`'s (multi-row VALUES), the ones the
store process runs without SQLAlchemy; PostgreSQL takes one array per column through
`unnest`, which keeps the statement short whatever the number of rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import Connection, Double, Engine, Integer, Table
from sqlalchemy.types import TypeEngine

from evals.model.results import RunRecord
from evals.store import sqlite_direct
from evals.store.codec import GRADE_COLUMNS, RUN_COLUMNS, EncodedRun, encode_run
from evals.store.layout import store_runs
from evals.store.schema import grades, runs


def _converter(column_type: TypeEngine[Any]) -> Callable[[Any], Any] | None:
    if isinstance(column_type, Double):
        return float
    if isinstance(column_type, Integer):
        return int
    return None


class _ArrayInsert:
    """An insert of plain tuples into a PostgreSQL table, one binary array per column."""

    def __init__(self, table: Table, columns: tuple[str, ...]) -> None:
        self.table = table
        self.columns = columns
        self.converters = tuple(_converter(table.c[name].type) for name in columns)

    def insert(
        self, connection: Connection, driver: Any, rows: list[tuple[Any, ...]], suffix: str
    ) -> list[tuple[Any, ...]]:
        """Insert value tuples through `driver` (the psycopg connection under `connection`;
        `suffix` completes the statement); returns RETURNING rows."""
        dialect = connection.dialect
        quote = dialect.identifier_preparer.quote
        names = ", ".join(quote(name) for name in self.columns)
        # Arrays travel as binary parameters (%b), so no element needs text escaping.
        casts = ", ".join(
            f"%b::{self.table.c[name].type.compile(dialect=dialect)}[]" for name in self.columns
        )
        arrays = tuple(
            [v if v is None or convert is None else convert(v) for v in column]
            for column, convert in zip(zip(*rows, strict=True), self.converters, strict=True)
        )
        sql = f"INSERT INTO {quote(self.table.name)} ({names}) SELECT * FROM unnest({casts})"
        with driver.cursor() as cursor:
            cursor.execute(sql + suffix, arrays)
            return cursor.fetchall() if cursor.description else []


_ARRAY_INSERTS = {
    "runs": _ArrayInsert(runs, RUN_COLUMNS),
    "grades": _ArrayInsert(grades, GRADE_COLUMNS),
}


def insert_runs(engine: Engine, evaluation_id: str, records: Sequence[RunRecord]) -> int:
    """Store records not stored yet (by key) with their grades; returns how many were new."""
    return insert_encoded(engine, [encode_run(evaluation_id, record) for record in records])


def insert_encoded(engine: Engine, encoded_runs: Sequence[EncodedRun]) -> int:
    """`insert_runs` for runs already encoded by `encode_run` (one evaluation's)."""
    with engine.begin() as connection:
        driver = connection.connection.driver_connection
        if driver is None:
            raise RuntimeError("the store connection was closed")
        if connection.dialect.name == "sqlite":
            return sqlite_direct.insert_runs(driver, encoded_runs)

        def insert(
            table: str, _columns: Sequence[str], rows: list[tuple[Any, ...]], suffix: str
        ) -> list[tuple[Any, ...]]:
            return _ARRAY_INSERTS[table].insert(connection, driver, rows, suffix)

        return store_runs(encoded_runs, insert)
