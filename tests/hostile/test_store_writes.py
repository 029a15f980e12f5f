"""What the command line writes is checked first; a store fault is one block and exit 3.

A refused triage action stores nothing (an expiry no clock holds, or past the longest
quarantine, is exit 2 with the fix, not a traceback after the write); readers show any row
the schema allows; `store prune` never deletes an evaluation still running; a damaged
store, a response cache on a failing disk, an output path nothing can be written to, a
YAML complex key: each ends with one block and its exit code, no traceback, and never an
evaluation left `running`. A plan of a billion runs is warned about as a probable typo.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

SUITE = """\
prompts: ['{{ q }}']
providers: [echo]
tests:
  - {description: alpha, vars: {q: a}}
  - {description: beta, vars: {q: b}}
"""

TRACEBACK = "Traceback (most recent call last)"


def _evals(cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evals", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    """A folder with the suite and a store holding one evaluation of it."""
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    done = _evals(tmp_path, "run", "suite.yaml", "--store", "store.db", "--no-progress")
    assert done.returncode in (0, 100), done.stderr
    return tmp_path


def _rows(store: Path, sql: str) -> list[tuple]:
    connection = sqlite3.connect(store)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


@pytest.mark.parametrize(
    "until",
    [
        "99999999d",
        "1e21d",
        "999999999999999999999999d",
        "9999-12-31T23:59:59-12:00",
        "91d",
        "+inf",
        "2999-01-01",
    ],
)
def test_a_refused_expiry_stores_nothing(stored: Path, until: str) -> None:
    done = _evals(
        stored,
        *("triage", "add", "quarantine", "--suite", "tmp", "--case", "alpha"),
        *("--until", until, "--reason", "flaky", "--store", "store.db"),
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert TRACEBACK not in done.stderr
    assert "fix:" in done.stderr
    assert _rows(stored / "store.db", "SELECT count(*) FROM triage_actions") == [(0,)]


@pytest.mark.parametrize("until", [float("inf"), 1e300, -1e300, 253402300800.0, -62135596801.0])
def test_readers_show_any_expiry_the_schema_allows(stored: Path, until: float) -> None:
    connection = sqlite3.connect(stored / "store.db")
    with connection:
        connection.execute(
            "INSERT INTO triage_actions (kind, suite_id, case_id, until, reason, actor, "
            "created_at) VALUES ('quarantine', 'x', 'alpha', ?, 'r', 'someone', ?)",
            (until, until),
        )
    connection.close()
    for argv in (("triage", "list"), ("triage", "list", "--all")):
        done = _evals(stored, *argv, "--store", "store.db")
        assert done.returncode == 0, done.stderr
        assert TRACEBACK not in done.stderr
    pytest.importorskip("streamlit")
    from evals.dashboard import triage as dashboard_triage
    from evals.store import open_store

    store = open_store(str(stored / "store.db"))
    try:
        actions = store.triage.history(None)
    finally:
        store.close()
    table = dashboard_triage.frame(actions, time.time())
    assert len(table) == 1
    assert dashboard_triage.csv_bytes(table)


def test_prune_never_deletes_a_running_evaluation(stored: Path) -> None:
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import new_meta
    from evals.store import open_store
    from evals.suite import load_suite

    suite = load_suite(stored / "suite.yaml")
    store = open_store(str(stored / "store.db"))
    try:
        running = new_meta(suite, RunOptions(), 1)
        running.started_at -= 3600  # older than the complete one: prune would pick it first
        store.create_evaluation(running)
    finally:
        store.close()
    done = _evals(stored, "store", "prune", "--keep", "1", "--store", "store.db")
    assert done.returncode == 0, done.stderr
    statuses = dict(_rows(stored / "store.db", "SELECT id, status FROM evaluations"))
    assert statuses.get(running.id) == "running"


def test_history_of_a_damaged_store_is_one_block_and_exit_3(stored: Path) -> None:
    path = stored / "store.db"
    data = bytearray(path.read_bytes())
    for offset in range(4096, len(data), 4096):
        data[offset + 100 : offset + 3000] = b"\x13" * 2900
    path.write_bytes(bytes(data))
    done = _evals(stored, "history", "--store", "store.db")
    assert done.returncode == 3, done.stdout + done.stderr
    assert TRACEBACK not in done.stderr
    assert "store.db" in done.stderr and "fix:" in done.stderr


def test_a_failing_response_cache_stops_the_evaluation_cleanly(
    stored: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's disk fails after the first run: exit 3, one block, and the evaluation
    stored as interrupted (resumable), never left `running`."""
    from evals.cli import main
    from evals.run import cache

    writes = {"count": 0}
    original = cache.SqliteResponseCache.put

    def failing_put(self: cache.SqliteResponseCache, key: str, response: object) -> None:
        writes["count"] += 1
        if writes["count"] == 2:  # the cache file can no longer be written from now on
            self._db = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, check_same_thread=False
            )
        original(self, key, response)  # type: ignore[arg-type]

    monkeypatch.setattr(cache.SqliteResponseCache, "put", failing_put)
    monkeypatch.chdir(stored)
    errors = io.StringIO()
    with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
        code = main(
            ["run", "suite.yaml", "--store", "faults.db", "--cache", "cache.db", "--no-progress"]
        )
    assert code == 3, errors.getvalue()
    assert TRACEBACK not in errors.getvalue()
    assert "the response cache at" in errors.getvalue() and "fix:" in errors.getvalue()
    statuses = [s for (s,) in _rows(stored / "faults.db", "SELECT status FROM evaluations")]
    assert statuses == ["interrupted"]


@pytest.mark.parametrize("target", ["/proc/x.json", "/proc/version.md", "/sys/evals.csv"])
def test_an_output_path_nothing_can_write_is_refused_up_front(stored: Path, target: str) -> None:
    done = _evals(stored, "run", "suite.yaml", "--store", "out.db", "-o", target)
    assert done.returncode == 2, done.stdout + done.stderr
    assert target in done.stderr and TRACEBACK not in done.stderr
    assert not (stored / "out.db").exists() or _rows(
        stored / "out.db", "SELECT count(*) FROM evaluations WHERE status = 'running'"
    ) == [(0,)]


@pytest.mark.parametrize(
    "vars_text",
    ["      ? [a, b]\n      : 1\n", "      ? {x: 1}\n      : 2\n"],
)
def test_a_yaml_complex_key_is_exit_2_naming_its_line(tmp_path: Path, vars_text: str) -> None:
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['{{ q }}']\nproviders: [echo]\ntests:\n  - vars:\n      q: hi\n" + vars_text,
        encoding="utf-8",
    )
    done = _evals(tmp_path, "validate", "suite.yaml")
    assert done.returncode == 2, done.stderr
    assert "suite.yaml:6:" in done.stderr and TRACEBACK not in done.stderr


def test_a_billion_runs_is_warned_as_a_probable_typo(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "prompts: ['{{ q }}']\nproviders: [echo]\nevaluateOptions: {repeat: 1000000000}\n"
        "tests: [{vars: {q: a}}]\n",
        encoding="utf-8",
    )
    done = _evals(tmp_path, "validate", "suite.yaml")
    assert done.returncode == 0, done.stderr
    assert "1,000,000,000 runs" in done.stderr and "probably a typo" in done.stderr
    # and evals run says it before its first run (stopped here after a moment)
    process = subprocess.Popen(
        [sys.executable, "-m", "evals", "run", "suite.yaml", "--no-store", "--no-progress"],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
    finally:
        process.kill()
        process.wait()
    assert "probably a typo" in first


@pytest.mark.parametrize(
    ("evaluation", "reason"),
    [("nope", "ok"), ("EVAL", ""), ("EVAL", "x" * 5000), ("RUNNING", "ok")],
)
def test_a_refused_baseline_acceptance_stores_nothing(
    stored: Path, evaluation: str, reason: str
) -> None:
    from evals.model.options import RunOptions
    from evals.pipeline.evaluation import new_meta
    from evals.store import open_store
    from evals.suite import load_suite

    (existing,) = _rows(stored / "store.db", "SELECT id FROM evaluations")
    store = open_store(str(stored / "store.db"))
    try:
        running = new_meta(load_suite(stored / "suite.yaml"), RunOptions(environment="nightly"), 1)
        store.create_evaluation(running)
    finally:
        store.close()
    target = {"EVAL": existing[0], "RUNNING": running.id}.get(evaluation, evaluation)
    done = _evals(stored, "baseline", "accept", target, "--reason", reason, "--store", "store.db")
    assert done.returncode == 2, done.stdout + done.stderr
    assert TRACEBACK not in done.stderr and "fix:" in done.stderr
    assert _rows(stored / "store.db", "SELECT count(*) FROM triage_actions") == [(0,)]
