"""Fixtures of the hostile-input corpus: the hostile HTTP endpoint, a warmed-up harness."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.server import hostile_server

_WARM_SUITE = """\
prompts: ['{{q}}']
providers: [echo]
tests: [{vars: {q: warm}, assert: [{type: contains, value: warm}]}]
gates: {}
"""


@pytest.fixture(scope="session")
def hostile_url() -> Iterator[str]:
    """Base URL of the hostile HTTP endpoint (tests/hostile/server.py)."""
    with hostile_server() as url:
        yield url


@pytest.fixture(scope="session")
def warm_harness(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Run one tiny evaluation in this process before any in-process case.

    The first evaluation imports the pipeline, the statistics (scipy) and the report
    writers, which takes seconds on a loaded machine; inside a case that time would count
    against its limit, and a limit that fires in the middle of importing a compiled
    extension leaves it half-registered for the rest of the process.
    """
    from evals.cli import main

    directory = tmp_path_factory.mktemp("warm")
    (directory / "suite.yaml").write_text(_WARM_SUITE, encoding="utf-8")
    previous = Path.cwd()
    os.chdir(directory)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(["run", "suite.yaml", "--no-store", "-o", "warm.json", "-o", "warm.md"])
    finally:
        os.chdir(previous)
    assert code == 0, f"the warm-up evaluation exited {code}"
