"""Fixtures of the hostile-input corpus: the hostile HTTP endpoint, one per test process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hostile.server import hostile_server


@pytest.fixture(scope="session")
def hostile_url() -> Iterator[str]:
    """Base URL of the hostile HTTP endpoint (tests/hostile/server.py)."""
    with hostile_server() as url:
        yield url
