"""Stores for the tests: a SQLite file per test, and each dialect's store in turn (a fresh
PostgreSQL database per test: `postgres_url` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evals.store import Store, open_store


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """URL of a SQLite store file that does not exist yet."""
    return f"sqlite:///{tmp_path / 'results.db'}"


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
