"""Is a results store whole? The check a CI job runs before it trusts or passes on a store.

A store downloaded from an earlier job may be truncated or otherwise damaged; read as is,
every query fails ("database disk image is malformed"), and uploaded again it damages
every later job. `check_store` reads a SQLite file without writing to it (SQLite's
`PRAGMA integrity_check`, then the harness's own tables) and answers whether it holds
an evals store it can read; a PostgreSQL store is checked by reading its evaluations (an
empty database passes: the first job with write access creates the store).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass

from evals.model.errors import SuiteError
from evals.store.layout import SCHEMA_VERSION
from evals.store.location import POSTGRES_SCHEMES, resolve_url, sqlite_file, without_password

# Problems SQLite reports before it stops listing them.
SHOWN_PROBLEMS = 3


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """Whether the store passed, and what was found, in one line."""

    ok: bool
    detail: str


def _sqlite(path: str) -> StoreCheck:
    from pathlib import Path

    file = Path(path)
    if not file.is_file():
        return StoreCheck(False, f"{file} does not exist")
    if file.stat().st_size == 0:
        return StoreCheck(False, f"{file} is empty")
    try:
        uri = f"{file.absolute().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            problems = [row[0] for row in db.execute("PRAGMA integrity_check").fetchall()]
            if problems != ["ok"]:
                shown = "; ".join(str(p) for p in problems[:SHOWN_PROBLEMS])
                return StoreCheck(False, f"{file} failed SQLite's integrity check: {shown}")
            version = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
            count = db.execute("SELECT count(*) FROM evaluations").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return StoreCheck(False, f"{file} cannot be read as a results store: {exc}")
    if version is None or version > SCHEMA_VERSION:
        return StoreCheck(
            False, f"{file} has schema version {version}; this harness reads {SCHEMA_VERSION}"
        )
    return StoreCheck(True, f"{file}: {count} evaluation(s), schema version {version}")


def _postgres(url: str) -> StoreCheck:
    """A PostgreSQL store: reachable, of a schema this harness reads or upgrades, and its
    evaluations readable. An empty database is whole: the first job with write access
    creates the tables (the team's first nightly). A missing driver is the job's set-up,
    not the store's state: its SuiteError (exit 2, with the fix) goes to the caller."""
    from evals.store.engine import create_store_engine
    from evals.store.migrations import stored_version

    shown = without_password(url)
    engine = create_store_engine(url, read_only=True)
    try:
        with engine.connect() as connection:
            version = stored_version(connection)
    except Exception as exc:  # the driver's: connection refused, a wrong password, ...
        return StoreCheck(False, f"{shown} cannot be opened: {exc}")
    finally:
        engine.dispose()
    if version is None:
        return StoreCheck(True, f"{shown}: empty (a job with write access creates the store)")
    if version != SCHEMA_VERSION:
        upgrade = "a job with write access upgrades it" if version < SCHEMA_VERSION else ""
        return StoreCheck(
            version < SCHEMA_VERSION,
            f"{shown} has schema version {version}; this harness reads {SCHEMA_VERSION}"
            + (f" ({upgrade})" if upgrade else ""),
        )
    from evals.store import open_store

    store = open_store(url, read_only=True)
    try:
        store.list_evaluations(limit=1)
    except Exception as exc:  # the driver's errors reading the tables
        return StoreCheck(False, f"{shown} cannot be read: {exc}")
    finally:
        store.close()
    return StoreCheck(True, f"{shown}: readable")


def check_store(url: str | None) -> StoreCheck:
    """Check the store at `url` (a SQLite path or URL, or PostgreSQL; None: the default
    store) without changing it. A SQLite file that is not a store fails the check; a
    PostgreSQL URL the job cannot use at all (the [postgres] extra missing) is the job's
    set-up, a SuiteError with the fix."""
    try:
        resolved = resolve_url(url)
    except SuiteError as exc:
        named = url or os.environ.get("EVALS_STORE_URL") or ""
        if named.partition("://")[0] in POSTGRES_SCHEMES:
            raise
        return StoreCheck(False, exc.message)
    database = sqlite_file(resolved)
    if database is not None:
        return _sqlite(str(database))
    return _postgres(resolved)
