"""A store holding one real evaluation of the demo suite, shared by the dashboard tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evals.model.evaluation import EvaluationResult
from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.suite import load_suite
from tests.dashboard.browser import chromium

DEMO_SUITE = Path(__file__).resolve().parents[2] / "cases" / "trading-research"


def run_demo(store_url: str, repeat: int, environment: str | None = None) -> EvaluationResult:
    """Run the demo suite into `store_url`, both agents, `repeat` times each."""
    options = RunOptions(
        store_url=store_url, progress=False, repeat=repeat, environment=environment
    )
    return run_evaluation(load_suite(str(DEMO_SUITE)), options)


@pytest.fixture(autouse=True)
def _local_dashboard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages run as `evals dashboard` on a loopback address runs them: the one user is
    the machine's."""
    monkeypatch.setenv("EVALS_DASHBOARD_AUTH", "local")


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list]]:
    """(store URL, [older nightly result, newer result]): two evaluations of the demo."""
    folder = tmp_path_factory.mktemp("dashboard-store")
    url = f"sqlite:///{folder}/s.db"
    nightly = run_demo(url, repeat=2, environment="nightly")
    latest = run_demo(url, repeat=2)
    yield url, [nightly, latest]


@pytest.fixture(scope="module")
def browser(dashboard_url: str) -> Iterator[Any]:
    """A headless Chromium, started once the module's dashboard (`dashboard_url`) serves."""
    path = os.environ.get("EVALS_TEST_CHROMIUM")
    assert path is not None
    with chromium(path) as launched:
        yield launched
