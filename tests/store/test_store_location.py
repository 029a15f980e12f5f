"""Store URLs the harness cannot use are refused before anything connects, naming the option."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evals.model.errors import SuiteError
from evals.store.location import (
    check_store_settings,
    checked_url,
    resolve_url,
    sqlite_file,
    without_password,
)

_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=12)


def _refused(chosen: str, source: str = "--store") -> SuiteError:
    with pytest.raises(SuiteError) as refused:
        checked_url(chosen, source)
    assert source in refused.value.message
    assert refused.value.fix is not None and "postgresql://" in refused.value.fix
    return refused.value


@pytest.mark.parametrize(
    "url",
    [":memory:", "sqlite://", "sqlite:///:memory:", "sqlite:///file:x?mode=memory&uri=true"],
)
def test_in_memory_databases_are_refused(url: str) -> None:
    assert "in-memory" in _refused(url).message


@pytest.mark.parametrize(
    "url", ["mysql://u@127.0.0.1/db", "bogus://x", "postgresql+asyncpg://u@h/db", "redis://h"]
)
def test_schemes_other_than_sqlite_and_postgresql_are_refused(url: str) -> None:
    assert url.split("://")[0] in _refused(url).message


def test_a_directory_a_path_under_a_file_and_a_file_that_is_no_database_are_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("notes")
    (tmp_path / "folder").mkdir()

    assert "is a directory" in _refused(str(tmp_path / "folder")).message
    under = _refused(f"sqlite:///{tmp_path}/notes.txt/deeper/results.db")
    assert f"{tmp_path / 'notes.txt'} is a file" in under.message
    assert "not a SQLite database" in _refused(str(tmp_path / "notes.txt")).message


def test_sqlite_files_new_empty_and_existing_are_accepted(tmp_path: Path) -> None:
    existing = tmp_path / "existing.db"
    sqlite3.connect(existing).execute("CREATE TABLE t (x)").connection.close()
    (tmp_path / "empty.db").write_bytes(b"")

    for name in ("existing.db", "empty.db", "new/dir/results.db"):
        resolved = checked_url(str(tmp_path / name), "--store")
        assert resolved == f"sqlite:///{tmp_path / name}"
        assert sqlite_file(resolved) == tmp_path / name


def test_a_relative_sqlite_url_to_an_existing_store_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stores").mkdir()
    sqlite3.connect("stores/results.db").execute("CREATE TABLE t (x)").connection.close()
    (tmp_path / "notes.txt").write_text("notes " * 200)

    assert checked_url("sqlite:///stores/results.db", "--store") == "sqlite:///stores/results.db"
    assert "not a SQLite database" in _refused("sqlite:///notes.txt").message


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(min_size=1, max_size=4096), name=_NAMES)
def test_any_file_that_is_not_a_database_is_refused(
    tmp_path: Path, content: bytes, name: str
) -> None:
    target = tmp_path / f"{name}.db"
    target.write_bytes(b"SQLite format 3\x00" + content if len(content) % 2 else content)
    assert str(target) in _refused(str(target)).message


def test_probing_a_store_keeps_the_locks_of_an_open_connection(tmp_path: Path) -> None:
    """Opening and closing the file directly would drop this process's SQLite locks, and
    another process could then write under a transaction in progress."""
    path = tmp_path / "held.db"
    held = sqlite3.connect(path)
    held.execute("CREATE TABLE t (x)")
    held.commit()
    held.execute("BEGIN IMMEDIATE")
    held.execute("INSERT INTO t VALUES (1)")
    checked_url(str(path), "--store")
    probe = (
        "import sqlite3, sys\n"
        "try:\n"
        "    sqlite3.connect(sys.argv[1], timeout=0).execute('BEGIN EXCLUSIVE')\n"
        "    print('acquired')\n"
        "except sqlite3.OperationalError as exc:\n"
        "    print(exc)\n"
    )
    other = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True
    )
    held.close()
    assert other.stdout.strip() == "database is locked"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_NAMES, min_size=1, max_size=4))
def test_any_path_below_a_file_is_refused(tmp_path: Path, parts: list[str]) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    path = blocker.joinpath(*parts)
    for url in (str(path), f"sqlite:///{path}"):
        assert "blocker is a file" in _refused(url).message


def test_the_variable_is_named_when_the_url_came_from_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALS_STORE_URL", "mysql://u@h/db")
    with pytest.raises(SuiteError, match="EVALS_STORE_URL"):
        resolve_url(None)


def test_an_overridden_variable_is_checked_for_its_form_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store = str(tmp_path / "s.db")
    monkeypatch.setenv("EVALS_STORE_URL", str(tmp_path / "missing-dir" / "x.db"))
    assert check_store_settings(store) == f"sqlite:///{store}"
    assert resolve_url(store) == f"sqlite:///{store}"

    monkeypatch.setenv("EVALS_STORE_URL", "bogus://x")
    with pytest.raises(SuiteError, match="EVALS_STORE_URL 'bogus://x'"):
        check_store_settings(store)
    assert resolve_url(store) == f"sqlite:///{store}"  # later look-ups keep the given store


def test_a_refused_url_never_shows_its_password() -> None:
    message = _refused("mysql://evals:hunter2-secret@db:3306/x").render()
    assert "hunter2-secret" not in message
    assert without_password("postgresql://u:pw@h:5/d") == "postgresql://u:***@h:5/d"
    assert without_password("postgresql://u@h/d") == "postgresql://u@h/d"
