"""Where the store lives, and the SQLite settings it relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.store import open_store
from evals.store.engine import BUSY_TIMEOUT_MS, create_store_engine
from evals.store.location import resolve_url


def test_without_a_url_the_store_is_a_sqlite_file_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALS_STORE_URL", raising=False)
    monkeypatch.chdir(tmp_path)

    store = open_store(None)
    store.close()

    assert resolve_url(None) == f"sqlite:///{tmp_path / '.evals' / 'results.db'}"
    assert (tmp_path / ".evals" / "results.db").is_file()


def test_the_environment_names_the_store_unless_a_url_is_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALS_STORE_URL", "postgres://ci@db:5432/evals")

    assert resolve_url(None) == "postgresql+psycopg://ci@db:5432/evals"
    assert resolve_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"
    assert resolve_url("/data/results.db") == "sqlite:////data/results.db"
    assert resolve_url("sqlite:///x.db") == "sqlite:///x.db"


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_sqlite_store_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="SQLite file"):
        create_store_engine(url)


def test_sqlite_connections_use_wal_foreign_keys_and_a_busy_timeout(sqlite_url: str) -> None:
    store = open_store(sqlite_url)
    with store.engine.connect() as connection:
        pragmas = {
            name: connection.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "foreign_keys", "busy_timeout")
        }
    store.close()

    assert pragmas == {"journal_mode": "wal", "foreign_keys": 1, "busy_timeout": BUSY_TIMEOUT_MS}
