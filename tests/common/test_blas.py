"""The harness's own load of numpy asks OpenBLAS's idle threads to sleep, and only then."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from evals.common.blas import SHORTEST_SPIN, SPIN_VARIABLE, idle_blas_threads_asleep


def _run(code: str, **environment: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != SPIN_VARIABLE}
    env.update(environment)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout.split()


LOAD = """
    import os, sys
    from evals.common.blas import idle_blas_threads_asleep
    with idle_blas_threads_asleep():
        during = os.environ.get("OPENBLAS_THREAD_TIMEOUT", "-")
        import numpy
    print(during, os.environ.get("OPENBLAS_THREAD_TIMEOUT", "-"), "numpy" in sys.modules)
"""


def test_the_first_load_of_numpy_sees_the_shortest_spin_and_the_environment_is_restored() -> None:
    assert _run(LOAD) == [SHORTEST_SPIN, "-", "True"]


def test_a_spin_the_user_chose_is_kept() -> None:
    assert _run(LOAD, OPENBLAS_THREAD_TIMEOUT="20") == ["20", "20", "True"]


def test_nothing_changes_once_numpy_is_loaded() -> None:
    import numpy  # noqa: F401 - loaded before the context, as an agent might have

    os.environ.pop(SPIN_VARIABLE, None)
    with idle_blas_threads_asleep():
        assert SPIN_VARIABLE not in os.environ
    assert SPIN_VARIABLE not in os.environ


def test_the_statistics_imported_ahead_of_the_analysis_load_with_it(tmp_path: Path) -> None:
    (tmp_path / "probe_statistics.py").write_text(
        "import os\nSEEN = os.environ.get('OPENBLAS_THREAD_TIMEOUT', '-')\n"
    )
    code = """
        import os, sys
        from evals.pipeline.evaluation import _import_quietly
        _import_quietly("probe_statistics")
        import probe_statistics
        print(probe_statistics.SEEN, os.environ.get("OPENBLAS_THREAD_TIMEOUT", "-"))
    """
    assert _run(code, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.getcwd()}") == [SHORTEST_SPIN, "-"]
