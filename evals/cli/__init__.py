"""The `evals` command: each command is a module of this package that adds its subparser
and handles its arguments by calling the library, printing, and returning the exit code;
the options several commands share are defined once (`evals.cli.options`).

Exit codes (docs/cli.md): 0 the build passed (every gate passed, or the verdict is
undetermined and the environment warns on it); 1 a gate failed, or the verdict is
undetermined where the environment fails on it; 2 invalid suite or usage; 3 harness
fault; 130 interrupted (Ctrl-C, SIGTERM or SIGHUP).
"""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Sequence

from evals import __version__
from evals.cli import (
    baseline,
    calibrate,
    ci,
    compare,
    compat_check,
    dashboard,
    history,
    merge,
    plan,
    plugins,
    regrade,
    run,
    store,
    triage,
    validate,
)
from evals.common.collector import collect_rarely
from evals.common.interrupts import exit_at_next_stop, stop_signals_as_interrupt
from evals.model.errors import ExitCode, HarnessFault, SuiteError

COMMANDS = (
    run,
    merge,
    regrade,
    plan,
    validate,
    plugins,
    compat_check,
    history,
    baseline,
    triage,
    compare,
    ci,
    store,
    calibrate,
    dashboard,
)
"""The command modules in the order `evals --help` lists them: a new command is a module
with `add_command` and one line here."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="evals",
        description="Regression harness for tool-using LLM agents.",
    )
    parser.add_argument("--version", action="version", version=f"evals {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_command(commands)
    return parser


def console() -> None:
    """Entry point of the `evals` command and `python -m evals`: `main`, then exit. A second
    stop signal that arrives while the first is handled, or while the process shuts down
    after it, still ends the process with the interrupted exit code, never a traceback."""
    try:
        code = main()
    except KeyboardInterrupt:
        code = int(ExitCode.INTERRUPTED)
    if code == ExitCode.INTERRUPTED:
        # what completed is stored and marked; the interpreter's teardown would join agent
        # threads and restore the default signal handlers, where one more Ctrl-C kills
        exit_at_next_stop(code)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _exit_without_teardown(code)


def _exit_without_teardown(code: int) -> None:
    """Exit with `code` after the exit handlers have run and the standard streams are
    flushed, skipping the interpreter's teardown, which frees every object of the
    evaluation one at a time (about a tenth of a second of CPU after 5000 runs) although
    the process is ending. Everything the harness writes is closed by then (the store and
    report processes have exited, reports are written with closed files). While a thread
    the teardown would wait for still runs, or a standard stream cannot be flushed, the
    ordinary exit happens instead, with its join and its error."""
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def _store_location(args: argparse.Namespace) -> str:
    """Where the command's store is, to name it in a message (its password hidden)."""
    from evals.store.location import display_location

    try:
        return display_location(getattr(args, "store", None))
    except SuiteError:
        return str(getattr(args, "store", None) or "the default location")


READER_LEFT = 141
"""The exit code when whoever read the output stopped reading (`evals history | head`):
128 + SIGPIPE, what a shell reports for a command a closed pipe ended."""


def _reader_left() -> bool:
    """Whether standard output's reader went away (a pipe whose read end is closed); if so,
    what is still to be written goes to the null device, so the exit's own flush does not
    fail again. A broken pipe of another kind (to the store's or the report process) is a
    harness fault."""
    import select

    try:
        out = sys.stdout.fileno()
    except (OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(out, select.POLLOUT)
    if not any(events & select.POLLERR for _, events in poller.poll(0)):
        return False
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, out)
    os.close(null)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; returns the process exit code."""
    from evals.common.ci_log import workflow_commands_paused

    with workflow_commands_paused():
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    collect_rarely()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with stop_signals_as_interrupt():
            return int(args.handler(args))
    except SuiteError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return int(ExitCode.INVALID_INPUT)
    except HarnessFault as exc:
        print(f"harness fault: {exc}", file=sys.stderr)
        return int(ExitCode.HARNESS_FAULT)
    except KeyboardInterrupt:
        print("interrupted; resume with --resume", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug of the harness must not look like a failed gate (exit 1)
        if isinstance(exc, BrokenPipeError) and _reader_left():
            return READER_LEFT
        from evals.common.faults import fault_message, is_store_fault

        if is_store_fault(exc):
            where = f"the results store at {_store_location(args)}"
            print(f"harness fault: {fault_message(exc, where)}", file=sys.stderr)
            return int(ExitCode.HARNESS_FAULT)
        import traceback

        traceback.print_exc()
        print(
            "harness fault: the error above is a bug in evals, not in your suite", file=sys.stderr
        )
        return int(ExitCode.HARNESS_FAULT)
