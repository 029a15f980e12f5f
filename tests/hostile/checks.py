"""The invariants every case keeps, and the checks of each outcome class."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.hostile.harness import (
    ALL_SECRETS,
    REPO_ROOT,
    TRACEBACK,
    Case,
    Correct,
    ErrorRow,
    Outcome,
    UsageError,
    Workspace,
    query,
    stores_in,
)

# Files larger than this are scanned in pieces (agents that return huge outputs).
_CHUNK = 1 << 24
# Project-root entries other test modules write by design while cases run beside them
# (the dashboard's browser tests save their screenshots under artifacts/).
_SHARED_TEST_OUTPUTS = frozenset({"artifacts"})


@dataclass(frozen=True)
class Snapshot:
    """What lies outside a case's temporary directory before it runs."""

    repo_entries: frozenset[str]
    repo_evals: bool
    outside: frozenset[str]


def snapshot(ws: Workspace) -> Snapshot:
    """Entries of the project root and of the case's watched outside directory."""
    return Snapshot(
        frozenset(os.listdir(REPO_ROOT)) - _SHARED_TEST_OUTPUTS,
        (REPO_ROOT / ".evals").exists(),
        frozenset(str(p.relative_to(ws.outside)) for p in ws.outside.rglob("*")),
    )


def new_outside_files(before: Snapshot, ws: Workspace) -> list[str]:
    """Files that appeared outside the case's directory while it ran."""
    after = snapshot(ws)
    appeared = [f"{REPO_ROOT}/{name}" for name in sorted(after.repo_entries - before.repo_entries)]
    if after.repo_evals and not before.repo_evals:
        appeared.append(f"{REPO_ROOT}/.evals")
    appeared += [f"{ws.outside}/{name}" for name in sorted(after.outside - before.outside)]
    return appeared


def _artifacts(ws: Workspace) -> Iterator[Path]:
    for path in ws.root.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.resolve() not in ws.inputs:
            yield path


def _file_holds(path: Path, needles: tuple[bytes, ...]) -> list[bytes]:
    found: set[bytes] = set()
    longest = max(len(n) for n in needles)
    with contextlib.suppress(OSError), path.open("rb") as handle:
        tail = b""
        while chunk := handle.read(_CHUNK):
            window = tail + chunk
            found.update(n for n in needles if n in window)
            tail = window[-longest:]
    return sorted(found)


def leaked_secrets(outcome: Outcome, secrets: tuple[str, ...] = ALL_SECRETS) -> list[str]:
    """Where any planted secret appears: a stream or a file the case wrote."""
    leaks = [
        f"{name}: {s}"
        for name, text in (("stdout", outcome.stdout), ("stderr", outcome.stderr))
        for s in secrets
        if s in text
    ]
    needles = tuple(s.encode() for s in secrets)
    for path in _artifacts(outcome.workspace):
        leaks += [f"{path}: {n.decode()}" for n in _file_holds(path, needles)]
    return leaks


def stored_evaluations(ws: Workspace) -> frozenset[str]:
    """Every evaluation in any store under the case's directories, as `store: id`."""
    return frozenset(
        f"{store.name}: {row['id']}"
        for store in stores_in(ws.root)
        for row in query(store, "SELECT id FROM evaluations")
    )


def running_evaluations(ws: Workspace) -> list[str]:
    """Evaluations left `running` in any store the case wrote."""
    left = []
    for store in stores_in(ws.root):
        for row in query(store, "SELECT id, status FROM evaluations"):
            if row["status"] == "running":
                left.append(f"{store.name}: {row['id']}")
    return left


def wait_for_exit(pids: list[int], seconds: float = 3.0) -> list[int]:
    """The processes of `pids` still alive after up to `seconds`."""
    import psutil

    deadline = time.monotonic() + seconds
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if psutil.pid_exists(p) and not _zombie(p)]
        if alive:
            time.sleep(0.05)
    return alive


def _zombie(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def check_invariants(case: Case, outcome: Outcome, before: Snapshot, leftovers: list[int]) -> None:
    """The generic invariants: no traceback, in time, nothing running, no leak, no stray file,
    no process left behind."""
    problems = []
    if outcome.timed_out:
        problems.append(f"did not finish within {case.limit_s:g} s (killed)")
    for stream, text in (("stderr", outcome.stderr), ("stdout", outcome.stdout)):
        if TRACEBACK in text:
            problems.append(f"Python traceback on {stream}:\n{_excerpt(text, TRACEBACK)}")
    if "running" not in case.exempt:
        left = running_evaluations(outcome.workspace)
        if left:
            problems.append(f"evaluation(s) left running: {left}")
    leaks = leaked_secrets(outcome)
    if leaks:
        problems.append(f"planted secret leaked: {leaks[:5]}")
    stray = new_outside_files(before, outcome.workspace)
    if stray:
        problems.append(f"files written outside the case directory: {stray[:5]}")
    if leftovers and "processes" not in case.exempt:
        problems.append(f"processes left behind: {leftovers}")
    assert not problems, _report(case, outcome, problems)


def check_expectation(case: Case, outcome: Outcome) -> None:
    """The case's own outcome class."""
    expect = case.expect
    if outcome.timed_out:
        return
    if isinstance(expect, UsageError):
        _check_usage_error(case, expect, outcome)
    elif isinstance(expect, ErrorRow):
        _check_error_row(case, expect, outcome)
    else:
        _check_correct(case, expect, outcome)


def _check_usage_error(case: Case, expect: UsageError, outcome: Outcome) -> None:
    problems = []
    if outcome.code != 2:
        problems.append(f"exit code {outcome.code}, expected 2")
    err = outcome.stderr
    for mention in expect.mentions:
        if mention.lower() not in err.lower():
            problems.append(f"stderr does not name {mention!r}")
    lines = expect.line if isinstance(expect.line, tuple) else (expect.line,)
    if expect.line is not None and not any(f"{expect.mentions[0]}:{n}:" in err for n in lines):
        problems.append(f"stderr does not give the line {expect.mentions[0]}:{expect.line}")
    if "fix:" not in err and "usage:" not in err:
        problems.append("stderr does not say how to fix it (no 'fix:' or usage line)")
    stored = stored_evaluations(outcome.workspace) - outcome.stored_before
    if stored:
        problems.append(f"something was stored: {stored}")
    assert not problems, _report(case, outcome, problems)


def _verdict_code(outcome: Outcome) -> list[str]:
    evaluations = outcome.evaluations()
    if len(evaluations) != 1:
        return [f"{len(evaluations)} evaluations stored, expected 1"]
    evaluation = evaluations[0]
    problems = []
    if evaluation["status"] != "complete":
        problems.append(f"evaluation status {evaluation['status']!r}, expected 'complete'")
    expected = 1 if evaluation["verdict"] == "fail" else 0
    if outcome.code != expected:
        problems.append(
            f"exit code {outcome.code} does not match the stored verdict "
            f"{evaluation['verdict']!r} (expected {expected})"
        )
    return problems


def _check_error_row(case: Case, expect: ErrorRow, outcome: Outcome) -> None:
    problems = _verdict_code(outcome)
    runs = [r for r in outcome.runs() if expect.agent is None or r["agent"] == expect.agent]
    if not runs:
        problems.append("no run stored for the agent under test")
    wrong = [
        f"{r['agent']}#{r['repeat']}: status={r['status']} kind={r['error_kind']} "
        f"error={str(r['error'])[:200]!r}"
        for r in runs
        if r["status"] != "error" or r["error_kind"] != expect.kind
    ]
    if wrong:
        problems.append(f"runs not stored as {expect.kind!r} error rows: {wrong[:4]}")
    if expect.runs is not None and len(runs) != expect.runs:
        problems.append(f"{len(runs)} runs stored, expected {expect.runs}")
    if expect.message is not None:
        missing = [r["error"] for r in runs if expect.message not in str(r["error"])]
        if missing:
            problems.append(f"stored error lacks {expect.message!r}: {str(missing[0])[:200]!r}")
    assert not problems, _report(case, outcome, problems)


def _check_correct(case: Case, expect: Correct, outcome: Outcome) -> None:
    problems = []
    codes = expect.exit_code if isinstance(expect.exit_code, tuple) else (expect.exit_code,)
    if outcome.code not in codes:
        problems.append(f"exit code {outcome.code}, expected {' or '.join(map(str, codes))}")
    evaluations = outcome.evaluations()
    if expect.status is None and evaluations:
        problems.append(f"something was stored: {[e['id'] for e in evaluations]}")
    elif expect.status is not None:
        statuses = sorted({e["status"] for e in evaluations})
        if statuses != [expect.status]:
            problems.append(f"stored evaluation status {statuses}, expected [{expect.status!r}]")
    if not problems and expect.check is not None:
        try:
            expect.check(outcome)
        except AssertionError as exc:
            problems.append(f"{expect.what}: {exc}")
    assert not problems, _report(case, outcome, problems)


def _excerpt(text: str, needle: str, width: int = 1500) -> str:
    start = max(0, text.find(needle) - 200)
    return text[start : start + width]


def _report(case: Case, outcome: Outcome, problems: list[str]) -> str:
    lines = [
        f"case {case.id} ({case.expect.describe()}), exit {outcome.code}, {outcome.seconds:.1f} s:"
    ]
    lines += [f"  - {p}" for p in problems]
    lines.append(f"  stderr (end): {outcome.stderr[-1500:]!r}")
    return "\n".join(lines)
