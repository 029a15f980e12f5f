"""Bring a store database to the current schema (`layout.SCHEMA_VERSION`).

A new database gets the current schema in one step; an older one runs each later
migration in order, all in one transaction that holds a lock (PostgreSQL advisory lock,
SQLite `BEGIN IMMEDIATE`), so processes opening the same store at once cannot race. The
applied versions are rows of `schema_version`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import Connection, Engine, func, insert, inspect, select, text, update

from evals.model.errors import HarnessFault, SuiteError
from evals.store.groups import write_group_rows
from evals.store.layout import SCHEMA_VERSION
from evals.store.schema import (
    TRIAGE_KINDS_SQL,
    evaluations,
    group_rates,
    group_verdicts,
    metadata,
    schema_version,
    triage_actions,
)

Migration = tuple[int, str, Callable[[Connection], None]]


def _add_verdict_and_overview_index(connection: Connection) -> None:
    connection.execute(text("ALTER TABLE evaluations ADD COLUMN verdict VARCHAR(16)"))
    finished = connection.execute(
        select(evaluations.c.id, evaluations.c.gates).where(evaluations.c.gates.is_not(None))
    ).all()
    for evaluation_id, gates in finished:
        connection.execute(
            update(evaluations)
            .where(evaluations.c.id == evaluation_id)
            .values(verdict=gates.get("verdict"))
        )
    connection.execute(
        text(
            "CREATE INDEX ix_runs_agent_status ON runs "
            "(evaluation_id, agent, status, cost, latency_ms, total_tokens)"
        )
    )


def _add_suite_outline(connection: Connection) -> None:
    column_type = evaluations.c.outline.type.compile(dialect=connection.dialect)
    connection.execute(text(f"ALTER TABLE evaluations ADD COLUMN outline {column_type}"))


def _add_fingerprints_and_completeness(connection: Connection) -> None:
    json_type = evaluations.c.agent_fingerprints.type.compile(dialect=connection.dialect)
    for column, column_type in (
        ("agent_fingerprints", json_type),
        ("planned_runs", "INTEGER"),
        ("stored_runs", "INTEGER"),
        ("ci_event", "TEXT"),
    ):
        connection.execute(text(f"ALTER TABLE evaluations ADD COLUMN {column} {column_type}"))


def _add_group_history(connection: Connection) -> None:
    group_rates.create(connection)
    group_verdicts.create(connection)
    finished = connection.execute(
        select(evaluations.c.id, evaluations.c.summary).where(evaluations.c.summary.is_not(None))
    )
    for evaluation_id, summary in finished.all():
        write_group_rows(connection, evaluation_id, summary)


def _add_triage_actions(connection: Connection) -> None:
    triage_actions.create(connection)


_V6_TRIAGE_COLUMNS = (
    "id, kind, suite_id, case_id, environment, evaluation_id, gate, until, reason, link, "
    "actor, created_at, target_id"
)


def _add_annotations(connection: Connection) -> None:
    """The triage log takes annotations of runs: three kinds and the run's columns.

    PostgreSQL alters the kind check in place; SQLite cannot, so its table is rebuilt
    with the current definition and the log copied over, ids kept."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("ALTER TABLE triage_actions DROP CONSTRAINT ck_triage_kind"))
        check = f"CHECK ({TRIAGE_KINDS_SQL})"
        connection.execute(
            text(f"ALTER TABLE triage_actions ADD CONSTRAINT ck_triage_kind {check}")
        )
        for column, column_type in (
            ("agent", "TEXT"),
            ("prompt_id", "TEXT"),
            ("repeat", "INTEGER"),
            ("label", "VARCHAR(16)"),
        ):
            connection.execute(
                # Migration 6 creates the table as declared now, these columns included.
                text(f"ALTER TABLE triage_actions ADD COLUMN IF NOT EXISTS {column} {column_type}")
            )
        return
    for index in triage_actions.indexes:
        connection.execute(text(f"DROP INDEX IF EXISTS {index.name}"))
    connection.execute(text("ALTER TABLE triage_actions RENAME TO triage_actions_v6"))
    triage_actions.create(connection)
    connection.execute(
        text(
            f"INSERT INTO triage_actions ({_V6_TRIAGE_COLUMNS}) "
            f"SELECT {_V6_TRIAGE_COLUMNS} FROM triage_actions_v6 ORDER BY id"
        )
    )
    connection.execute(text("DROP TABLE triage_actions_v6"))


MIGRATIONS: list[Migration] = [
    (
        2,
        "evaluation verdict column; covering index for per-agent aggregates",
        _add_verdict_and_overview_index,
    ),
    (3, "suite outline stored with each evaluation", _add_suite_outline),
    (
        4,
        "agent fingerprints, planned and stored run counts, CI event of each evaluation",
        _add_fingerprints_and_completeness,
    ),
    (
        5,
        "rates and verdicts per suite, tag and case of each evaluation, for histories",
        _add_group_history,
    ),
    (
        6,
        "triage actions: acknowledgements, quarantines, accepted disagreements",
        _add_triage_actions,
    ),
    (7, "annotations of runs in the triage log: overrides, ratings, comments", _add_annotations),
]

_POSTGRES_LOCK_KEY = 0x6576616C73  # "evals"


def stored_version(connection: Connection) -> int | None:
    """The schema version of the database, or None when it has no store tables yet."""
    if not inspect(connection).has_table(schema_version.name):
        return None
    return connection.execute(select(func.max(schema_version.c.version))).scalar()


def newer_schema(found: int) -> SuiteError:
    """The error for a store whose schema is newer than this harness: exit 2, upgrade."""
    return SuiteError(
        f"this store was written by a newer evals (schema {found}; this evals reads schema "
        f"{SCHEMA_VERSION})",
        fix="upgrade evals (pip install -U evals-harness), or point --store at another store",
    )


def ensure_schema(engine: Engine, *, upgrade: bool = True) -> int:
    """Create or upgrade the store schema; returns the version found (0 for a new store).

    With `upgrade=False` (a read-only connection) a store of another version is a
    HarnessFault that says who can upgrade it.
    """
    with engine.connect() as connection:
        found = stored_version(connection)
    if found == SCHEMA_VERSION:
        return found
    if found is not None and found > SCHEMA_VERSION:
        raise newer_schema(found)
    if not upgrade:
        raise HarnessFault(
            f"the results store has schema version {found or 'none'} and this harness "
            f"reads version {SCHEMA_VERSION}; a read-only connection cannot upgrade it: "
            "let a job with write access (the nightly) open it first"
        )
    immediate = engine.connect().execution_options(sqlite_immediate=True)
    with immediate as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"SELECT pg_advisory_xact_lock({_POSTGRES_LOCK_KEY})"))
        found = stored_version(connection)
        _upgrade(connection, found)
    return found if found is not None else 0


def _upgrade(connection: Connection, found: int | None) -> None:
    if found is not None and found > SCHEMA_VERSION:
        raise newer_schema(found)
    if found is None:
        metadata.create_all(connection)
        _record(connection, SCHEMA_VERSION, "create current schema")
        return
    for number, description, upgrade in MIGRATIONS:
        if number > found:
            upgrade(connection)
            _record(connection, number, description)


def _record(connection: Connection, version: int, description: str) -> None:
    connection.execute(
        insert(schema_version).values(
            version=version, description=description, applied_at=time.time()
        )
    )
