"""Stores for the tests: a SQLite file per test, and a fresh PostgreSQL database per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.store import Store, open_store

POSTGRES_URL = os.environ.get("EVALS_TEST_POSTGRES_URL")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """URL of a SQLite store file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'results.db'}"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """URL of a new, empty database on the test server; dropped afterwards."""
    if not POSTGRES_URL:
        pytest.skip("EVALS_TEST_POSTGRES_URL is not set (see tests/store/start_postgres.sh)")
    import psycopg

    server = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
    name = f"evals_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield server.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest) -> str:
    """Each dialect's store URL in turn."""
    name = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return request.getfixturevalue(name)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """An open store on each dialect."""
    opened = open_store(store_url)
    yield opened
    opened.close()
