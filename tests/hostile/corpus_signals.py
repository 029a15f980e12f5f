"""Signals to the harness, kills, a dying store process, and concurrent runs on one store."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from tests.hostile.builders import both, stderr_has
from tests.hostile.harness import (
    Case,
    Correct,
    Outcome,
    Workspace,
    command_line,
    query,
    start_subprocess,
)

SLOW_AGENT = """\
import time


def call_api(prompt, options, context):
    time.sleep(0.1)
    return {"output": "ok " + prompt}
"""
REPEAT = 20
SLOW_SUITE = f"""\
prompts: ['{{{{q}}}}']
providers: [{{id: file://agent.py, label: agent}}]
evaluateOptions: {{repeat: {REPEAT}, maxConcurrency: 1}}
tests:
  - vars: {{q: hello}}
    assert: [{{type: contains, value: ok}}]
gates: {{}}
"""
SLOW_LOADING_GENERATOR = """\
import pathlib, time


def generate_tests():
    pathlib.Path('loading').write_text('started')
    time.sleep(10)
    return [{'vars': {'q': 'hello'}}]
"""
FILES = {"suite.yaml": SLOW_SUITE, "agent.py": SLOW_AGENT}
RUN = ("run", "suite.yaml", "--evaluation-id", "slow-1")
RESUME = ("run", "suite.yaml", "--resume", "slow-1")


def stored_runs(ws: Workspace) -> int:
    """How many runs the case's store holds now."""
    try:
        rows = query(ws.store, "SELECT count(*) AS n FROM runs")
    except Exception:  # the store may be mid-creation; ask again
        return 0
    return rows[0]["n"] if rows else 0


def wait_until(condition: Callable[[], bool], seconds: float = 15.0) -> None:
    """Poll `condition` until it holds (or give up after `seconds`)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def signal_after_runs(*signals: signal.Signals, runs: int = 2) -> Callable[..., None]:
    """Driver: once `runs` runs are stored, send the harness each signal in turn."""

    def drive(process: subprocess.Popen, ws: Workspace) -> None:
        wait_until(lambda: stored_runs(ws) >= runs or process.poll() is not None)
        for each in signals:
            if process.poll() is None:
                process.send_signal(each)
                time.sleep(0.05)

    return drive


def interrupt_while_loading(process: subprocess.Popen, ws: Workspace) -> None:
    """Driver: Ctrl-C while the suite's tests generator is still running."""
    wait_until(lambda: (ws.case / "loading").exists() or process.poll() is not None)
    process.send_signal(signal.SIGINT)


MEMORY_CEILING = 1 << 30


def interrupt_streaming_plan(process: subprocess.Popen, ws: Workspace) -> None:
    """Driver: Ctrl-C once runs are stored, watching the harness's memory meanwhile.

    The harness is killed outright past 1 GiB, so a plan built in memory cannot exhaust
    the machine; the peak is kept for the check.
    """
    import psutil

    harness = psutil.Process(process.pid)
    peak = 0
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline and process.poll() is None:
        try:
            peak = max(peak, harness.memory_info().rss)
        except psutil.Error:
            break
        if peak > MEMORY_CEILING:
            process.kill()
            break
        if stored_runs(ws) >= 2:
            process.send_signal(signal.SIGINT)
            break
        time.sleep(0.05)
    ws.notes["peak_rss"] = peak


def _flat_memory(outcome: Outcome) -> None:
    peak = outcome.workspace.notes.get("peak_rss", 0)
    assert peak < 400 << 20, f"harness grew to {peak >> 20} MiB"
    _at_least_runs(outcome, 2)


def kill_store_process(process: subprocess.Popen, ws: Workspace) -> None:
    """Driver: once runs are stored, SIGKILL the harness's store process."""
    import psutil

    wait_until(lambda: stored_runs(ws) >= 2 or process.poll() is not None)
    for child in psutil.Process(process.pid).children(recursive=True):
        if "evals.store.process" in " ".join(child.cmdline()):
            child.kill()


def interrupted_run(sig: signal.Signals) -> Callable[..., None]:
    """Setup: the slow evaluation `slow-1`, stopped by `sig` after a few runs."""

    def setup(ws: Workspace, evals: Any) -> None:
        case = Case("setup", "signals", {}, Correct("setup"), argv=RUN, reports=())
        process = start_subprocess(case, ws, command_line(case, ws))
        signal_after_runs(sig)(process, ws)
        process.communicate(timeout=30)

    return setup


def second_run(argv: tuple[str, ...]) -> Callable[..., None]:
    """Driver: start the same command line's twin concurrently; keep its outcome."""

    def drive(process: subprocess.Popen, ws: Workspace) -> None:
        case = Case("twin", "signals", {}, Correct("twin"), argv=argv, reports=())
        twin = start_subprocess(case, ws, command_line(case, ws))
        _out, err = twin.communicate(timeout=40)
        ws.notes["twin"] = (twin.returncode, err.decode(errors="replace"))

    return drive


def _interrupted(outcome: Outcome) -> None:
    assert "interrupted" in outcome.stderr and "--resume" in outcome.stderr, outcome.stderr[-300:]
    count = len(outcome.runs())
    assert 2 <= count < REPEAT, f"{count} runs stored"


def _all_runs_once(outcome: Outcome) -> None:
    runs = outcome.runs()
    keys = [(r["case_id"], r["agent"], r["repeat"]) for r in runs]
    assert len(keys) == REPEAT == len(set(keys)), f"{len(keys)} runs, {len(set(keys))} distinct"
    assert all(r["status"] == "pass" for r in runs)


def _twin_exit(*codes: int) -> Callable[[Outcome], None]:
    def check(outcome: Outcome) -> None:
        code, err = outcome.workspace.notes["twin"]
        assert code in codes, f"the concurrent run exited {code}: {err[-300:]}"
        assert "Traceback" not in err, err[-500:]

    return check


def _two_complete_evaluations(outcome: Outcome) -> None:
    evaluations = outcome.evaluations()
    assert len(evaluations) == 2, evaluations
    for evaluation in evaluations:
        runs = query(
            outcome.workspace.store,
            f"SELECT id FROM runs WHERE evaluation_id = '{evaluation['id']}'",
        )
        assert len(runs) == REPEAT, f"{evaluation['id']}: {len(runs)} runs"


def _one_winner(outcome: Outcome) -> None:
    twin_code, err = outcome.workspace.notes["twin"]
    assert sorted([outcome.code, twin_code]) == [0, 2], (outcome.code, twin_code, err[-300:])
    loser = err if twin_code == 2 else outcome.stderr
    assert "--evaluation-id" in loser or "slow-1" in loser, loser[-300:]
    _all_runs_once(outcome)


def signal_case(id: str, expect: Any, **fields: Any) -> Case:
    """A subprocess case over the slow suite."""
    return Case(
        id=id,
        category="signals",
        files={**FILES, **fields.pop("files", {})},
        argv=fields.pop("argv", RUN),
        expect=expect,
        mode="subprocess",
        reports=(),
        **fields,
    )


CASES = [
    signal_case(
        "sigint-mid-run",
        Correct(
            "exit 130, the evaluation marked interrupted",
            exit_code=130,
            status="interrupted",
            check=_interrupted,
        ),
        driver=signal_after_runs(signal.SIGINT),
    ),
    signal_case(
        "sigint-twice",
        Correct(
            "a second Ctrl-C does not turn into a traceback",
            exit_code=130,
            status="interrupted",
            check=_interrupted,
        ),
        driver=signal_after_runs(signal.SIGINT, signal.SIGINT),
    ),
    signal_case(
        "sigterm-mid-run",
        Correct(
            "SIGTERM stops like Ctrl-C",
            exit_code=(130, 143),
            status="interrupted",
            check=_interrupted,
        ),
        driver=signal_after_runs(signal.SIGTERM),
    ),
    signal_case(
        "sighup-mid-run",
        Correct(
            "a closed terminal stops like Ctrl-C",
            exit_code=(130, 129),
            status="interrupted",
            check=_interrupted,
        ),
        driver=signal_after_runs(signal.SIGHUP),
    ),
    signal_case(
        "sigterm-then-sigint",
        Correct(
            "a Ctrl-C after SIGTERM, while completed runs are stored, is no traceback",
            exit_code=130,
            status="interrupted",
            check=_interrupted,
        ),
        driver=signal_after_runs(signal.SIGTERM, signal.SIGINT),
    ),
    signal_case(
        "sigint-while-loading",
        Correct(
            "interrupted before any run: exit 130, nothing stored",
            exit_code=130,
            status=None,
            check=stderr_has("interrupted"),
        ),
        files={
            "suite.yaml": SLOW_SUITE.replace(
                "tests:\n  - vars: {q: hello}\n    assert: [{type: contains, value: ok}]\n",
                "tests: file://gen.py\n",
            ),
            "gen.py": SLOW_LOADING_GENERATOR,
        },
        driver=interrupt_while_loading,
    ),
    signal_case(
        "sigkill-mid-run",
        Correct(
            "runs handed over survive; the evaluation stays resumable",
            exit_code=-9,
            status="running",
            check=lambda o: _at_least_runs(o, 2),
        ),
        driver=signal_after_runs(signal.SIGKILL),
        exempt={"running": "a killed harness cannot mark its evaluation; --resume continues it"},
    ),
    signal_case(
        "resume-after-sigkill",
        Correct("the resumed evaluation has every run exactly once", check=_all_runs_once),
        argv=RESUME,
        setup=interrupted_run(signal.SIGKILL),
    ),
    signal_case(
        "resume-after-sigint",
        Correct("the resumed evaluation has every run exactly once", check=_all_runs_once),
        argv=RESUME,
        setup=interrupted_run(signal.SIGINT),
    ),
    signal_case(
        "resume-twice-concurrently",
        Correct("two resumes race without duplicates", check=both(_all_runs_once, _twin_exit(0))),
        argv=RESUME,
        setup=interrupted_run(signal.SIGKILL),
        driver=second_run(RESUME),
    ),
    signal_case(
        "store-process-killed",
        Correct(
            "a lost store process is a harness fault, promptly",
            exit_code=3,
            status="running",
            check=stderr_has("harness fault", "store"),
        ),
        driver=kill_store_process,
        limit_s=12,
        exempt={"running": "nothing is left to write the store once its process is killed"},
    ),
    signal_case(
        "two-runs-one-store",
        Correct(
            "concurrent evaluations on one SQLite store both complete",
            check=both(_two_complete_evaluations, _twin_exit(0)),
        ),
        argv=("run", "suite.yaml"),
        driver=second_run(("run", "suite.yaml")),
    ),
    signal_case(
        "same-evaluation-id-concurrently",
        Correct(
            "one run owns the id; the other is refused with exit 2",
            exit_code=(0, 2),
            check=_one_winner,
        ),
        driver=second_run(RUN),
    ),
    signal_case(
        "repeat-one-billion-streams",
        Correct(
            "runs start at once and memory stays flat; Ctrl-C stops it",
            exit_code=130,
            status="interrupted",
            check=_flat_memory,
        ),
        files={"suite.yaml": SLOW_SUITE.replace(f"repeat: {REPEAT}", "repeat: 1000000000")},
        driver=interrupt_streaming_plan,
        limit_s=10,
    ),
]


def _at_least_runs(outcome: Outcome, count: int) -> None:
    stored = len(outcome.runs())
    assert stored >= count, f"{stored} runs stored"
