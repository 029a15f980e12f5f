"""Which store a URL names, checked before anything connects: a SQLite file or PostgreSQL.

The harness checks `--store` (or $EVALS_STORE_URL) here before it starts the store
process, so a store it cannot use is exit 2 naming the option and the accepted forms,
before any run. Nothing here imports SQLAlchemy: the harness's own process never needs it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from evals.common.extras import require_store_driver
from evals.model.errors import SuiteError

DEFAULT_SQLITE_PATH = Path(".evals") / "results.db"
SMALLEST_SQLITE_FILE = 512
"""A SQLite database file holds whole pages, and the smallest page is 512 bytes."""
SQLITE_NOTADB = 26
POSTGRES_SCHEMES = ("postgres", "postgresql", "postgresql+psycopg", "postgresql+psycopg2")
SQLITE_SCHEMES = ("sqlite", "sqlite+pysqlite")
ACCEPTED = (
    "use a SQLite file (path/to/results.db or sqlite:////abs/path/results.db) or a "
    "PostgreSQL URL (postgresql://user@host:5432/db)"
)
_IN_MEMORY = (
    "an in-memory database is private to one connection and would lose the runs the "
    "store process writes"
)


def resolve_url(url: str | None, *, option: str = "--store") -> str:
    """The store URL: `url`, else $EVALS_STORE_URL, else `.evals/results.db` under the cwd.

    A bare path means a SQLite file; `postgres://` and `postgresql://` use psycopg 3 (the
    `[postgres]` extra: a SuiteError names it when it is missing). A store the harness
    cannot use is a SuiteError naming `option`, or EVALS_STORE_URL when the URL came from
    there (see `checked_url`).
    """
    if url:
        return checked_url(url, option)
    from_env = os.environ.get("EVALS_STORE_URL")
    if from_env:
        return checked_url(from_env, "EVALS_STORE_URL")
    return f"sqlite:///{Path.cwd() / DEFAULT_SQLITE_PATH}"


def check_store_settings(url: str | None, *, option: str = "--store") -> str:
    """`resolve_url`, checked when a command starts; an $EVALS_STORE_URL that `url`
    overrides must still have a usable form, since every command run without the option
    would trip on it."""
    from_env = os.environ.get("EVALS_STORE_URL")
    if url and from_env:
        checked_url(from_env, "EVALS_STORE_URL", form_only=True)
    return resolve_url(url, option=option)


def checked_url(chosen: str, source: str, *, form_only: bool = False) -> str:
    """`chosen` (given by the option or variable `source`) as a URL the store can open.

    Refused, as a SuiteError with the accepted forms: another scheme (mysql://, ...), an
    in-memory SQLite database, a SQLite path that is a directory, lies under a file, or is
    a file that is not a SQLite database. `form_only` checks the URL's form alone (not the
    file system, not the installed driver).
    """
    scheme, sep, rest = chosen.partition("://")
    if not sep:
        if chosen.strip() == ":memory:":
            raise _unusable(chosen, source, _IN_MEMORY)
        path = Path(chosen).expanduser().resolve()
        if not form_only:
            check_sqlite_path(path, chosen, source)
        return f"sqlite:///{path}"
    scheme = scheme.lower()
    if scheme in SQLITE_SCHEMES:
        database = rest[1:].partition("?")[0] if rest.startswith("/") else ""
        if not database or database == ":memory:" or "mode=memory" in rest:
            raise _unusable(chosen, source, _IN_MEMORY)
        if not database.startswith("file:") and not form_only:
            check_sqlite_path(Path(database).expanduser(), chosen, source)
        return chosen
    if scheme not in POSTGRES_SCHEMES:
        raise _unusable(chosen, source, f"{scheme}:// is not a store the harness supports")
    if not form_only:
        require_store_driver(chosen)
    if scheme in ("postgres", "postgresql"):
        return "postgresql+psycopg://" + rest
    return chosen


def check_sqlite_path(path: Path, chosen: str, source: str) -> None:
    """Refuse a SQLite store path that is a directory, lies under a file, or is a file that
    is not a SQLite database (an empty file becomes a new store).

    The file is probed through SQLite itself, never opened and closed directly: closing any
    descriptor of a database file drops the POSIX locks every SQLite connection of this
    process holds on it, which can corrupt a store another connection is writing.
    """
    if path.is_dir():
        raise _unusable(chosen, source, f"{path} is a directory")
    above = next((p for p in path.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise _unusable(chosen, source, f"{above} is a file, not a directory")
    if not path.is_file():
        return
    size = path.stat().st_size
    if size == 0:
        return
    if size < SMALLEST_SQLITE_FILE:
        raise _unusable(chosen, source, f"{path} is not a SQLite database")
    try:
        uri = f"{path.absolute().as_uri()}?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            db.execute("PRAGMA schema_version").fetchall()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", None) == SQLITE_NOTADB:
            raise _unusable(chosen, source, f"{path} is not a SQLite database") from None
        if not os.access(path, os.R_OK):
            raise _unusable(chosen, source, f"{path} cannot be read ({exc})") from None


def sqlite_file(url: str) -> Path | None:
    """The file a resolved SQLite store URL names (None for PostgreSQL and `file:` URIs)."""
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in SQLITE_SCHEMES or not rest.startswith("/"):
        return None
    database = rest[1:].partition("?")[0]
    return None if database.startswith("file:") else Path(database)


def _unusable(chosen: str, source: str, why: str) -> SuiteError:
    return SuiteError(
        f"{source} {without_password(chosen)!r} cannot hold the results store: {why}",
        fix=ACCEPTED,
    )


def without_password(url: str) -> str:
    """`url` with the password of its user part replaced by ***, safe to print."""
    parts = urlsplit(url) if "://" in url else None
    if parts is None or parts.password is None:
        return url
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username}:***@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def display_location(url: str | None) -> str:
    """Where the store `url` names (None: $EVALS_STORE_URL or the default) keeps the
    results, to print: a SQLite file's path, relative to the working directory when it is
    inside it, else the URL without its password."""
    resolved = resolve_url(url)
    path = sqlite_file(resolved)
    if path is None:
        return without_password(resolved)
    with contextlib.suppress(ValueError):
        return str(path.relative_to(Path.cwd()))
    return str(path)
