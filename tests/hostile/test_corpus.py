"""Every corpus case ends in its declared outcome class and keeps the generic invariants.

Cases live in `corpus_*.py` as data; see harness.py for the outcome classes and
invariants. A case that fails today carries a strict xfail naming the root cause, so
each fix in the product turns one into a pass (and a stale xfail into a failure).
"""

from __future__ import annotations

import ast
import contextlib
import os
from pathlib import Path

import pytest

from tests.hostile.checks import (
    check_expectation,
    check_invariants,
    snapshot,
    stored_evaluations,
    wait_for_exit,
)
from tests.hostile.corpus import CASES
from tests.hostile.harness import (
    Case,
    enter_case,
    inprocess_command,
    make_workspace,
    run_inprocess,
    run_setup,
    run_subprocess,
    session_members,
)


def _params() -> list:
    params = []
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        params.append(pytest.param(case, id=f"{case.category}/{case.id}", marks=marks))
    return params


def _own_children() -> set[int]:
    import psutil

    return {child.pid for child in psutil.Process().children(recursive=True)}


def _kill(pids: list[int]) -> None:
    import signal

    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _interpreter_intact(case: Case) -> None:
    """An in-process case must leave this interpreter usable: a BaseException escaping
    through the event loop can leave CPython's recursion counters off, which breaks the
    next `ast.parse` (pytest's own failure reports). Such cases belong in a subprocess."""
    try:
        ast.parse(Path(__file__).read_text(encoding="utf-8") * 5)
    except SystemError as exc:
        pytest.fail(f"{case.id} left the interpreter broken ({exc}); run it as a subprocess")


@pytest.mark.parametrize("case", _params())
def test_hostile_case(
    case: Case,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd,
    hostile_url: str,
    warm_harness: None,
) -> None:
    ws = make_workspace(tmp_path, case, hostile_url)
    if case.setup is not None:
        if case.mode == "inprocess":
            enter_case(case, ws, monkeypatch)
            case.setup(ws, inprocess_command(ws))
        else:
            case.setup(ws, lambda *argv: run_setup(ws, *argv, env=case.env))
    before = snapshot(ws)
    stored_before = stored_evaluations(ws)
    if case.mode == "inprocess":
        children = _own_children()
        outcome = run_inprocess(case, ws, monkeypatch, capfd)
        leftovers = wait_for_exit(sorted(_own_children() - children))
    else:
        outcome = run_subprocess(case, ws)
        leftovers = wait_for_exit(session_members(outcome.pid))
    _kill(leftovers)
    if case.mode == "inprocess":
        _interpreter_intact(case)
    outcome.stored_before = stored_before
    check_invariants(case, outcome, before, leftovers)
    check_expectation(case, outcome)
