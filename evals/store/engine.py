"""Where the store lives and how to connect to it (SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from evals.common.encoding import dump_json
from evals.model.errors import HarnessFault
from evals.store.sqlite_direct import BUSY_TIMEOUT_MS, configure_connection


def create_store_engine(url: str, *, read_only: bool = False) -> Engine:
    """An engine for a resolved store URL, with the SQLite settings the store relies on.

    `read_only` makes every PostgreSQL transaction read-only on the server
    (`default_transaction_read_only`), whatever the role may do: the session a
    pull-request job opens on the team's store cannot write to it.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        connect_args = {"options": "-c default_transaction_read_only=on"} if read_only else {}
        return create_engine(
            url,
            json_serializer=dump_json,
            pool_size=4,
            max_overflow=4,
            connect_args=connect_args,
        )
    database = parsed.database
    if not database or database == ":memory:" or database.startswith("file::memory:"):
        raise ValueError(
            "the results store needs a SQLite file (sqlite:///path/results.db); an in-memory "
            "database is private to one connection and would lose the writer's runs"
        )
    Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url)
    event.listen(engine, "connect", _configure_sqlite)
    event.listen(engine, "begin", _begin_sqlite)
    return engine


def create_viewer_engine(url: str) -> Engine:
    """An engine that cannot write, for viewers of a store (the dashboard).

    A SQLite file opens as a read-only URI (`mode=ro`, and `query_only` on each
    connection), so SQLite itself refuses every write; PostgreSQL runs every transaction
    read-only on the server (`default_transaction_read_only`). `check_read_only` proves
    it on a live connection.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_store_engine(url, read_only=True)
    database = parsed.database
    if not database or not Path(database).is_file():
        raise HarnessFault(
            f"no results store at {database}: run `evals run` (or point --store at the "
            "team's store) before opening the dashboard"
        )
    engine = create_engine(
        f"sqlite:///file:{quote(str(Path(database).resolve()))}?mode=ro&uri=true"
    )
    event.listen(engine, "connect", _configure_sqlite_viewer)
    event.listen(engine, "begin", _begin_sqlite)
    return engine


def check_read_only(engine: Engine) -> None:
    """Raise a HarnessFault unless the engine's connections are read-only."""
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            read_only = connection.exec_driver_sql("PRAGMA query_only").scalar() == 1
        else:
            read_only = connection.exec_driver_sql("SHOW transaction_read_only").scalar() == "on"
    if not read_only:
        raise HarnessFault("the viewer's connection to the results store could write to it")


def _configure_sqlite_viewer(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA query_only = ON")
    cursor.close()


def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    # Let SQLAlchemy's "begin" event issue BEGIN itself, so a transaction can be IMMEDIATE.
    dbapi_connection.isolation_level = None
    configure_connection(dbapi_connection)


def _begin_sqlite(connection: Any) -> None:
    immediate = connection.get_execution_options().get("sqlite_immediate", False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
