"""Writing runs as they complete: batched, idempotent, safe to interrupt.

`insert_runs` stores a batch in one transaction: each run row with `ON CONFLICT DO
NOTHING` on its key, then the grade rows of the runs actually inserted. A batch is all or
nothing, so a killed process leaves only whole runs behind, and re-sending a run that is
already stored (a resume, or two processes racing) changes nothing.

`evals.store.process` calls it from the store process, batch by batch, as runs arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from sqlalchemy import Connection, Double, Engine, Integer, Table
from sqlalchemy.types import TypeEngine

from evals.common.encoding import dump_json
from evals.model.results import RunRecord
from evals.store.codec import GRADE_COLUMNS, EncodedRun, encode_run
from evals.store.jsontype import JsonDocument
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
            driver = connection.connection.driver_connection
            if driver is None:
                raise RuntimeError("the PostgreSQL connection was closed")
            with driver.cursor() as cursor:
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

    def _values(
        self, connection: Connection, rows: list[tuple[Any, ...]]
    ) -> tuple[str, tuple[Any, ...]]:
        group = "(" + ", ".join(["?"] * len(self.columns)) + ")"
        sql = f"{self._head(connection)} VALUES " + ", ".join([group] * len(rows))
        return sql, tuple(chain.from_iterable(rows))

    def _unnest(
        self, connection: Connection, rows: list[tuple[Any, ...]]
    ) -> tuple[str, tuple[Any, ...]]:
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
    return insert_encoded(engine, [encode_run(evaluation_id, record) for record in records])


def _run_key(run: EncodedRun) -> tuple[Any, ...]:
    row = run[0]
    return row["case_id"], row["agent"], row["prompt_id"], row["repeat"]


def insert_encoded(engine: Engine, encoded_runs: Sequence[EncodedRun]) -> int:
    """`insert_runs` for runs already encoded by `encode_run` (one evaluation's)."""
    # One order for every writer, so concurrent batches lock keys in the same order.
    unique = {_run_key(run): run for run in encoded_runs}
    by_key = {key: unique[key] for key in sorted(unique)}
    run_rows = [_RUN_FORMAT.values(run[0]) for run in by_key.values()]
    with engine.begin() as connection:
        quote = connection.dialect.identifier_preparer.quote
        conflict = ", ".join(quote(name) for name in RUN_KEY_COLUMNS)
        returned = ", ".join(quote(name) for name in ("id", *RUN_KEY_COLUMNS[1:]))
        suffix = f" ON CONFLICT ({conflict}) DO NOTHING RETURNING {returned}"
        inserted = _RUN_FORMAT.insert(connection, run_rows, suffix)
        grade_rows = [(run_id, *row) for run_id, *key in inserted for row in by_key[tuple(key)][1]]
        if grade_rows:
            _GRADE_FORMAT.insert(connection, grade_rows)
    return len(inserted)
