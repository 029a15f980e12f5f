"""Shared fixtures: temporary suites written from text."""

from __future__ import annotations

import signal
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from evals.model.errors import SuiteError
from evals.suite import load_suite


def pytest_configure(config: pytest.Config) -> None:
    """Run the tests with Ctrl-C's default handling, however they were started: a shell
    starts background jobs (`cmd &` in a script) with SIGINT ignored, the harness's
    children inherit that, and the interrupt tests would then wait for a stop that never
    comes."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the modules that hold a test marked slow first, each module's tests kept
    together and in their order: pytest-xdist hands out the tests in this order, and a
    long test started last keeps one worker busy while the others sit idle."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)


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
