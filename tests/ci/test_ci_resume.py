"""A real `evals run` killed with SIGKILL mid-way resumes to exactly the uninterrupted runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ci_suite import stored_runs, write_ci_suite

from evals.model.options import RunOptions
from evals.pipeline.evaluation import run_evaluation
from evals.store import open_store
from evals.suite import load_suite

pytestmark = pytest.mark.slow


def _evals(args: list[str], env: dict[str, str]) -> list[str]:
    return [sys.executable, "-m", "evals", *args]


def test_sigkill_then_resume_gives_the_uninterrupted_runs(tmp_path: Path) -> None:
    suite_path = write_ci_suite(tmp_path / "suite")
    db = tmp_path / "results.db"
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "SLOW_MS": "150", "CALLS_FILE": str(calls)}
    args = [
        "run",
        str(suite_path),
        "--store",
        str(db),
        "--evaluation-id",
        "killed",
        "--concurrency",
        "2",
        "--quiet",
        "--no-progress",
    ]
    process = subprocess.Popen(_evals(args, env), env=env, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while stored_runs(db, "killed") < 6 and time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be killed"
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    before = stored_runs(db, "killed")
    total = 6 * 2 * 4
    assert 6 <= before < total

    calls.write_text("", encoding="utf-8")
    resumed = subprocess.run(
        _evals(
            [
                "run",
                str(suite_path),
                "--store",
                str(db),
                "--resume",
                "killed",
                "--quiet",
                "--no-progress",
            ],
            env,
        ),
        env={**env, "SLOW_MS": "0"},
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert resumed.returncode in (0, 1)
    assert len(calls.read_text(encoding="utf-8").splitlines()) == total - before

    store = open_store(str(db))
    try:
        meta = store.get_evaluation("killed")
        records = store.load_runs("killed")
    finally:
        store.close()
    assert meta is not None and meta.status == "complete"
    keys = [r.key.as_tuple() for r in records]
    assert len(keys) == len(set(keys)) == total

    whole = run_evaluation(load_suite(suite_path), RunOptions(use_store=False, progress=False))
    expected = sorted(
        (r.key.as_tuple(), r.status, r.seed, r.response.output) for r in whole.records
    )
    got = sorted((r.key.as_tuple(), r.status, r.seed, r.response.output) for r in records)
    assert got == expected
