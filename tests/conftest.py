"""Shared fixtures: temporary suites written from text, a fresh PostgreSQL database."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from evals.model.errors import SuiteError
from evals.suite import load_suite
from tests import tiers


def pytest_configure(config: pytest.Config) -> None:
    """Run the tests with Ctrl-C's default handling, however they were started: a shell
    starts background jobs (`cmd &` in a script) with SIGINT ignored, the harness's
    children inherit that, and the interrupt tests would then wait for a stop that never
    comes."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    _write_bytecode_caches()
    tiers.select_default_tier(config)


@pytest.fixture(autouse=True)
def _no_inherited_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts without COLUMNS and LINES: a module that loads GNU readline (or
    the shell that started the run) sets them to a terminal's size, and the width of what
    evals prints where stdout is no terminal follows COLUMNS. A test that means a width
    sets it."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def _default_javascript_limit() -> Iterator[None]:
    """Every test ends with the JavaScript sandbox's default time limit: a run sets the
    limit for the whole process, and a test that shortened it would stop the JavaScript of
    later tests."""
    yield
    engine = sys.modules.get("evals.common.jsengine")
    if engine is not None:
        engine.set_time_limit(engine.DEFAULT_TIME_LIMIT_S)


@pytest.fixture(autouse=True)
def _import_path_as_it_was() -> Iterator[None]:
    """Every test ends with the import path it started with: loading a user's Python
    file puts its folder on the path for the rest of the process, and a later test that
    imports a package named like a file in that folder (an `agents.py` beside a suite,
    the OpenAI Agents SDK's `agents`) would get the file."""
    before = list(sys.path)
    yield
    sys.path[:] = before


def _write_bytecode_caches() -> None:
    """Let this run and every process it starts write Python's bytecode caches, even where
    the environment turned them off (container images often set PYTHONDONTWRITEBYTECODE):
    the tests start hundreds of Python processes, and without the caches each one compiles
    evals, its dependencies and the rewritten test modules again, minutes on two cores.
    pytest-xdist starts its workers after this, with this environment."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test's tier and what it needs, skip what cannot run here with the reason,
    and put the modules holding a slower test first.

    Runs before pytest's own `-m` selection, so the markers added here select too. Each
    module's tests stay together and in their order: pytest-xdist hands out the tests in
    this order, and a long test started last keeps one worker busy while the others sit
    idle."""
    for item in items:
        tiers.mark_by_folder(item)
        tiers.skip_when_missing(item)
    slower = {item.path for item in items if tiers.in_slower_tier(item)}
    items.sort(key=lambda item: item.path not in slower)


def pytest_report_header(config: pytest.Config) -> str:
    """Say which tiers the run selects, so a run of the fast tier is never taken for all."""
    return tiers.header(config)


# Speed is measured by the benchmark scripts, not by tests: on a loaded machine a property
# may take longer than hypothesis's default deadline without being wrong.
settings.register_profile("evals", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("evals")


@pytest.fixture
def write_suite(tmp_path: Path) -> Callable[..., Path]:
    """Write a suite YAML (and optional extra files) into a temp dir; returns the YAML path."""

    def write(
        yaml_text: str, files: dict[str, str] | None = None, name: str = "suite.yaml"
    ) -> Path:
        for rel, content in (files or {}).items():
            target = tmp_path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(textwrap.dedent(content), encoding="utf-8")
        path = tmp_path / name
        path.write_text(textwrap.dedent(yaml_text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def suite_error() -> Callable[[Path], SuiteError]:
    """Load a suite that must be rejected; returns the SuiteError it raises."""

    def load(path: Path) -> SuiteError:
        with pytest.raises(SuiteError) as info:
            load_suite(path)
        return info.value

    return load


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """URL of a new, empty database on the test server; dropped afterwards."""
    server_url = os.environ.get("EVALS_TEST_POSTGRES_URL")
    if not server_url:
        pytest.skip("EVALS_TEST_POSTGRES_URL is not set (see tests/store/start_postgres.sh)")
    import psycopg

    server = server_url.replace("postgresql+psycopg://", "postgresql://")
    name = f"evals_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield server.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
