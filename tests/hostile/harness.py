"""The hostile-input corpus: cases as data, one way to run them, invariants checked on all.

A case is a set of files (a suite, datasets, agents), an `evals` command line and the
outcome class it must end in:

- `UsageError`: exit 2; stderr names the file or option (and the line for suite files)
  and says how to fix it; nothing is stored.
- `ErrorRow`: the evaluation completes; the runs of the agent under test are stored as
  error rows of one named kind; the exit code is the verdict's (0 or 1, matching the
  stored verdict).
- `Correct`: an exit code and a stated result, checked by a function over the outcome.

Whatever the class, every case must also: print no Python traceback, finish within its
time limit (it is killed otherwise), leave no evaluation `running` in any store, leak no
planted secret into any file, report or stream, write nothing outside its temporary
directory, and leave no process behind.

The harness talks to evals only through stable entry points: `evals.cli.main(argv)` in
this process (the default, for speed), the `evals` command in a subprocess (for crashes,
signals and hangs), suite and data files, and the store read with plain SQL.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]

# Planted in every case's environment: none may appear in any artifact.
SECRETS = {
    "HOSTILE_API_KEY": "sk-hostile-env-5f1c0a9e7d3b2c4a81",
    "HOSTILE_PLAIN_SECRET": "plain-hostile-7d2e91c4b0a5e6f3",
    "HOSTILE_TOKEN": "tok-hostile-3a9c5e7f1b2d4c6e",
    "OPENAI_API_KEY": "sk-hostile-openai-0b1c2d3e4f5a6b7c",
    "ANTHROPIC_API_KEY": "sk-ant-hostile-9f8e7d6c5b4a3928",
}
# Literal secrets a case may write into its own input files (a suite's provider config).
LITERAL_SECRETS = ("sk-hostile-literal-6e5d4c3b2a19087f", "literal-hostile-password-4b3a2918")
ALL_SECRETS = (*SECRETS.values(), *LITERAL_SECRETS)

TRACEBACK = "Traceback (most recent call last)"
# Placeholders substituted in case files and arguments.
CASE_DIR, OUTSIDE_DIR, HTTP_URL, PYTHON = "@CASE@", "@OUTSIDE@", "@HTTP@", "@PYTHON@"

DEFAULT_LIMIT_S = 20.0
REPORTS = ("report.json", "report.yaml", "report.jsonl", "report.csv", "report.md", "report.xml")
# Without the YAML report, whose pure-Python emitter takes seconds per megabyte: for cases
# whose point is a large value elsewhere (the YAML report's own slowness has a case).
LIGHT_REPORTS = tuple(r for r in REPORTS if not r.endswith(".yaml"))


@dataclass(frozen=True)
class UsageError:
    """Exit 2 before any run: stderr names `mentions` (a file, an option) and says how to fix.

    `line` is the line of the first mention (a file) that stderr must show as `file:line`;
    a tuple lists equally good lines (the offending key's, or the item holding it).
    """

    mentions: tuple[str, ...]
    line: int | tuple[int, ...] | None = None

    def describe(self) -> str:
        """The outcome class as the report names it."""
        return "usage_error"


@dataclass(frozen=True)
class ErrorRow:
    """Every run of `agent` (all runs when None) stored as an error row of `kind`.

    `runs` is how many such rows; `message` a substring of each stored error.
    """

    kind: str
    agent: str | None = None
    runs: int | None = None
    message: str | None = None

    def describe(self) -> str:
        """The outcome class as the report names it."""
        return f"error_row:{self.kind}"


@dataclass(frozen=True)
class Correct:
    """A stated expected result: the exit code and `check` over the outcome.

    `status` is the stored evaluation's status (None: nothing may be stored).
    """

    what: str
    exit_code: int | tuple[int, ...] = 0
    check: Callable[[Outcome], None] | None = None
    status: str | None = "complete"

    def describe(self) -> str:
        """The outcome class as the report names it."""
        return "correct"


Expectation = UsageError | ErrorRow | Correct


@dataclass(frozen=True)
class Case:
    """One hostile input and the outcome it must end in.

    `files` maps paths (relative to the case directory) to text or bytes; the placeholders
    @CASE@, @OUTSIDE@, @HTTP@ and @PYTHON@ are substituted in text files and in `argv`.
    `mode` is `inprocess` (through `evals.cli.main`) or `subprocess` (the `evals`
    command). `driver(process, workspace)` interacts with a subprocess run (signals,
    concurrent runs); `setup(workspace, evals)` prepares state before the case's command,
    `evals(*argv)` running an earlier command (in the case's mode) and returning its
    code. `exempt` names invariants that cannot hold for the case, with why. `xfail` is
    the root cause of today's failure (known_failures.py), making the case a strict xfail.
    """

    id: str
    category: str
    files: Mapping[str, str | bytes]
    expect: Expectation
    argv: tuple[str, ...] = ("run", "suite.yaml")
    mode: str = "inprocess"
    env: Mapping[str, str] = field(default_factory=dict)
    limit_s: float = DEFAULT_LIMIT_S
    driver: Callable[[subprocess.Popen, Workspace], None] | None = None
    reports: tuple[str, ...] = REPORTS
    setup: Callable[[Workspace, Callable[..., int]], None] | None = None
    exempt: Mapping[str, str] = field(default_factory=dict)
    xfail: str | None = None


@dataclass
class Workspace:
    """The temporary directories of one case: its files, a watched outside, a home."""

    root: Path
    case: Path
    outside: Path
    home: Path
    http_url: str
    inputs: set[Path] = field(default_factory=set)
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def store(self) -> Path:
        """The store the case's `run` writes unless its command line names another."""
        return self.case / "store.db"

    def substitute(self, text: str) -> str:
        """Fill the placeholders of a case file or argument."""
        return (
            text.replace(CASE_DIR, str(self.case))
            .replace(OUTSIDE_DIR, str(self.outside))
            .replace(HTTP_URL, self.http_url)
            .replace(PYTHON, sys.executable)
        )


def workspace_at(root: Path, http_url: str, inputs: set[Path] | None = None) -> Workspace:
    """The workspace laid out under `root` (its directories are not created)."""
    return Workspace(
        root=root,
        case=root / "case",
        outside=root / "outside",
        home=root / "home",
        http_url=http_url,
        inputs=inputs or set(),
    )


def make_workspace(tmp_path: Path, case: Case, http_url: str) -> Workspace:
    """Create the case's directories and write its files."""
    ws = workspace_at(tmp_path, http_url)
    for directory in (ws.case, ws.outside, ws.home):
        directory.mkdir(parents=True, exist_ok=True)
    for rel, content in case.files.items():
        target = ws.case / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(ws.substitute(content), encoding="utf-8")
        ws.inputs.add(target.resolve())
    return ws


@dataclass
class Outcome:
    """What one case did: exit code, streams, duration and the stores it left."""

    code: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool
    workspace: Workspace
    stored_before: frozenset[str] = frozenset()
    pid: int | None = None

    @property
    def text(self) -> str:
        """stdout and stderr together."""
        return self.stdout + self.stderr

    def evaluations(self, store: Path | None = None) -> list[dict[str, Any]]:
        """Rows of the `evaluations` table of a store (the case's default store)."""
        return query(store or self.workspace.store, "SELECT * FROM evaluations")

    def runs(self, store: Path | None = None) -> list[dict[str, Any]]:
        """Rows of the `runs` table of a store, in id order."""
        return query(store or self.workspace.store, "SELECT * FROM runs ORDER BY id")

    def report(self, name: str) -> str:
        """A report file the case wrote."""
        return (self.workspace.case / name).read_text(encoding="utf-8")


def query(store: Path, sql: str) -> list[dict[str, Any]]:
    """Rows of a query on a SQLite store as dicts; empty when the store or table is absent."""
    if not store.is_file():
        return []
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql)]
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        connection.close()


def stores_in(directory: Path) -> list[Path]:
    """Every SQLite database under a directory that has an `evaluations` table."""
    found = []
    for path in directory.rglob("*"):
        if path.is_file() and path.suffix in (".db", ".sqlite", ".sqlite3"):
            with contextlib.suppress(sqlite3.DatabaseError):
                if query(path, "SELECT name FROM sqlite_master WHERE name = 'evaluations'"):
                    found.append(path)
    default = directory / ".evals" / "results.db"
    if default.is_file() and default not in found:
        found.append(default)
    return found


def case_env(ws: Workspace, extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a case: the test's, without evals/promptfoo/OTel settings, plus
    the planted secrets, a private HOME and the case's own variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("EVALS_", "PROMPTFOO_", "OTEL_", "GITHUB_", "CI_"))
        and k not in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "PYTEST_XDIST_WORKER")
    }
    env.update(SECRETS)
    env["HOME"] = str(ws.home)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update({k: ws.substitute(v) for k, v in extra.items()})
    return env


def command_line(case: Case, ws: Workspace) -> list[str]:
    """The case's arguments with placeholders filled and the defaults of a `run` added:
    the case's own store, no progress bar, and a report of every cheap format."""
    argv = [ws.substitute(a) for a in case.argv]
    if argv and argv[0] == "run":
        if "--store" not in argv and "--no-store" not in argv:
            argv += ["--store", str(ws.store)]
        if "--no-progress" not in argv:
            argv.append("--no-progress")
        for name in case.reports:
            argv += ["-o", name]
    return argv


class CaseTimedOut(BaseException):
    """An in-process case ran past its limit (BaseException: no `except Exception` eats it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise CaseTimedOut in the main thread after `seconds`."""

    def expired(signum: int, frame: Any) -> None:
        raise CaseTimedOut

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def enter_case(case: Case, ws: Workspace, monkeypatch: Any) -> None:
    """Give this process the case's environment and working directory (undone after)."""
    env = case_env(ws, case.env)
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(ws.case)


def inprocess_command(ws: Workspace) -> Callable[..., int]:
    """`evals(*argv)` for a setup step in this process (after `enter_case`)."""
    from evals.cli import main

    def evals(*argv: str) -> int:
        return main([ws.substitute(a) for a in argv])

    return evals


def run_inprocess(case: Case, ws: Workspace, monkeypatch: Any, capfd: Any) -> Outcome:
    """Run the case through `evals.cli.main` in this process, cwd and env set for it."""
    from evals.cli import main

    enter_case(case, ws, monkeypatch)
    argv = command_line(case, ws)
    capfd.readouterr()
    started = time.monotonic()
    timed_out = False
    code: int | None
    escaped = ""
    environment = dict(os.environ)  # an agent may change it; later tests must not see that
    try:
        with time_limit(case.limit_s):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except CaseTimedOut:
                raise
            except BaseException as exc:  # what the interpreter would do with it
                code = -signal.SIGINT if isinstance(exc, KeyboardInterrupt) else 1
                escaped = f"{TRACEBACK}:\n  {type(exc).__name__} escaped evals.cli.main\n"
    except CaseTimedOut:
        code, timed_out = None, True
    finally:
        os.environ.clear()
        os.environ.update(environment)
    seconds = time.monotonic() - started
    captured = capfd.readouterr()
    return Outcome(code, captured.out, captured.err + escaped, seconds, timed_out, ws)


def evals_command() -> list[str]:
    """The `evals` command of this interpreter's installation."""
    return [sys.executable, "-m", "evals"]


# Address space of a subprocess case: memory bombs fail there instead of exhausting the host.
MEMORY_LIMIT = 6 << 30


def start_subprocess(case: Case, ws: Workspace, argv: list[str] | None = None) -> subprocess.Popen:
    """Start the `evals` command for a case in a session of its own, its memory capped."""
    process = subprocess.Popen(
        [*evals_command(), *(argv if argv is not None else command_line(case, ws))],
        cwd=ws.case,
        env=case_env(ws, case.env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    with contextlib.suppress(OSError, AttributeError):  # Linux; elsewhere uncapped
        resource.prlimit(process.pid, resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    return process


def kill_session(process: subprocess.Popen) -> None:
    """Kill what is left of a process group this harness started."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def finish_subprocess(
    process: subprocess.Popen, ws: Workspace, started: float, limit_s: float
) -> Outcome:
    """Wait for a started case (killing its session past the limit) and collect it."""
    timed_out = False
    try:
        out, err = process.communicate(timeout=max(0.1, limit_s - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_session(process)
        out, err = process.communicate()
    seconds = time.monotonic() - started
    return Outcome(
        None if timed_out else process.returncode,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
        seconds,
        timed_out,
        ws,
        pid=process.pid,
    )


def run_subprocess(case: Case, ws: Workspace) -> Outcome:
    """Run the case as the `evals` command; the driver, if any, interacts with it."""
    started = time.monotonic()
    process = start_subprocess(case, ws)
    try:
        if case.driver is not None:
            case.driver(process, ws)
        return finish_subprocess(process, ws, started, case.limit_s)
    finally:
        if process.poll() is None:
            kill_session(process)
            process.wait()


def session_members(session_id: int) -> list[int]:
    """Processes still in a session (the subprocess harness and what it left behind)."""
    import psutil

    members = []
    for proc in psutil.process_iter(["pid"]):
        with contextlib.suppress(ProcessLookupError, PermissionError, psutil.Error):
            if os.getsid(proc.info["pid"]) == session_id:
                members.append(proc.info["pid"])
    return members


def run_evals(
    ws: Workspace, *argv: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the `evals` command in the case directory with the case's environment."""
    return subprocess.run(
        [*evals_command(), *(ws.substitute(a) for a in argv)],
        cwd=ws.case,
        env=case_env(ws, env or {}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )


def run_setup(ws: Workspace, *argv: str, env: Mapping[str, str] | None = None) -> int:
    """Run an `evals` command before a case (an earlier evaluation); returns its exit code."""
    return run_evals(ws, *argv, env=env, timeout=60).returncode
