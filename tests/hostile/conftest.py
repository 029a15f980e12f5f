"""Fixtures of the hostile-input corpus: the hostile HTTP endpoint, a warmed-up harness."""

from __future__ import annotations

import compileall
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


# The folders of the evals package (a checkout maps graders/, reports/ and dashboard/ into it).
_PACKAGE_FOLDERS = ("evals", "graders", "reports", "dashboard")


@pytest.fixture(scope="session", autouse=True)
def compiled_harness() -> None:
    """Compile the evals package's bytecode once, as installing it would.

    Every case runs with PYTHONDONTWRITEBYTECODE=1 (an agent file must leave no
    `__pycache__` in the case), so without a compiled package each `evals` subprocess, store
    process and report process would compile every module it imports from source again.
    Writes are atomic, so pytest-xdist workers compiling at once do not collide.
    """
    root = Path(__file__).resolve().parents[2]
    for folder in _PACKAGE_FOLDERS:
        compileall.compile_dir(root / folder, quiet=1)


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
