"""What every out-of-process agent shares: its environment, and how it is stopped.

An agent process (an `exec:` command, a Python worker) starts in a session of its own and
carries a group token in its environment (`EVALS_AGENT_GROUP`), which every process it
starts inherits. Killing its session is not enough: a child may start a session or a
process group of its own (`setsid`, a daemon's double fork). So on Linux the harness
makes itself the subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`): a process
orphaned below it is re-parented to the harness, not to init, and `end_group` finds
every descendant carrying the group's token, kills it with all it started and reaps it.
An `exec:` command's group ends with each call (when the command exits, times out or is
cancelled), a worker's when the worker stops; groups still alive when the harness exits
are ended then.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext

STDERR_TAIL_CHARS = 2000
# The most an agent process may print as its answer (its stdout, or one worker reply).
MAX_REPLY_BYTES = 64 << 20
_CHUNK = 1 << 16


def agent_env(
    context: CallContext | None, extra: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """The harness environment plus the run's `TRACEPARENT` and any `context.extra["env"]`.

    Agents that speak OpenTelemetry join the run's trace through `TRACEPARENT` (W3C) and
    export to the harness's receiver through the `OTEL_EXPORTER_OTLP_*` variables; the
    path of the run's world state (the suite's `environment:`) is `EVALS_ENVIRONMENT`.
    """
    env = dict(os.environ)
    for key, value in (extra or {}).items():
        env[str(key)] = str(value)
    if context is not None:
        for key, value in (context.extra.get("env") or {}).items():
            env[str(key)] = str(value)
        if context.traceparent:
            env["TRACEPARENT"] = context.traceparent
        if context.environment:
            env["EVALS_ENVIRONMENT"] = context.environment
    return env


GROUP_VAR = "EVALS_AGENT_GROUP"
"""The environment variable naming the group of an agent process and its descendants."""

_PR_SET_CHILD_SUBREAPER = 36
_live_groups: set[str] = set()
_subreaper = False


def _become_subreaper() -> None:
    """Have orphaned descendants re-parented to this process (Linux), once."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return
    _subreaper = True
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    atexit.register(_end_live_groups)


def new_group() -> str:
    """A fresh group token for one agent process and everything it starts."""
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    _live_groups.add(token)
    return token


async def start_agent_process(
    args: Sequence[str],
    *,
    cwd: Path,
    context: CallContext,
    extra_env: Mapping[str, Any] | None,
    stdin: int,
    group: str,
    limit: int = 64 * 1024,
) -> asyncio.subprocess.Process:
    """Start an agent with the agent environment and its output piped, in a session of its
    own and in `group` (`new_group`), so that `end_group` stops it together with every
    process it started.

    `limit` bounds one line read from its output (asyncio's default, 64 KiB, unless given).
    """
    _become_subreaper()
    return await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        env={**agent_env(context, extra_env), GROUP_VAR: group},
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=limit,
    )


def tail(text: str, limit: int = STDERR_TAIL_CHARS) -> str:
    """The last `limit` characters of a process's output, trimmed, for error messages."""
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill a process started with `start_new_session=True` and its children, then reap it."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        _kill(proc)
    await proc.wait()


def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process without reaping it: `Process.kill` polls it first, and a poll
    that finds it exited takes its exit status from the child watcher (which then
    reports 255). Through its pidfd where there is one, so a reused pid is never hit."""
    if proc.returncode is not None:
        return
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGKILL)
        return
    try:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            signal.pidfd_send_signal(fd, signal.SIGKILL)
    finally:
        os.close(fd)


async def exited(proc: asyncio.subprocess.Process) -> int:
    """The process's exit code once it has exited, whether or not its pipes are closed
    (`Process.wait` also waits for them, which a child holding them delays forever)."""
    if proc.returncode is None:
        await _exit_of(proc.pid)
    while proc.returncode is None:  # the child watcher reports the exit a moment later
        await asyncio.sleep(0.001)
    return proc.returncode


async def _exit_of(pid: int) -> None:
    """Wait for `pid` to exit: its pidfd turns readable (Linux), or by polling."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def end_group(proc: asyncio.subprocess.Process, group: str) -> None:
    """End an agent process's group: the process and its session, then every descendant
    of the harness that carries the group's token (in a session of its own, daemonized),
    with everything those started; the killed processes are reaped, and once nothing
    holds the process's pipes open any more it is reaped too.

    Stopped part way (cancelled again, or its coroutine closed by a runner that stopped
    waiting for a timed-out call), it ends the group as `abandon_group` does."""
    ended = False
    try:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        _kill(proc)
        await exited(proc)
        for _ in range(_ROUNDS):
            killed = _kill_members(group)
            if not killed:
                break
            await _reap(killed)
        _live_groups.discard(group)
        await proc.wait()
        ended = True
    finally:
        if ended:
            _close_transport(proc)
        else:
            abandon_group(proc, group)


def abandon_group(proc: asyncio.subprocess.Process, group: str) -> None:
    """End an agent process's group without waiting, for a call that can wait no more (its
    coroutine is being closed): kill the process, its session and every member of the
    group, and close the process's transport. No process is left holding the pipes, and
    no pipe is left open for the garbage collector to close once the event loop has
    closed (asyncio then prints a traceback); the killed processes are reaped by their
    parents, or by the harness's child watcher. The group stays among the live ones, so
    what it was starting meanwhile is killed when the harness exits."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    _kill(proc)
    for _ in range(_ROUNDS):
        if not _kill_members(group):
            break
    _dead_soon(proc.pid)
    _close_transport(proc, pipes_only=True)


_DEATH_WAIT_S = 0.2


def _dead_soon(pid: int) -> None:
    """Wait a moment, without reaping it, for a killed process to be dead: asyncio's child
    watcher then reports its exit while the event loop still runs, rather than warning
    that the loop handling it has closed."""
    deadline = time.monotonic() + _DEATH_WAIT_S
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return
        except (ChildProcessError, OSError, AttributeError):  # reaped already; no waitid
            return
        time.sleep(0.002)


def _close_transport(proc: asyncio.subprocess.Process, pipes_only: bool = False) -> None:
    """Close the process's subprocess transport and its pipes now, on the loop that is
    still running: asyncio leaves a finished process's transport to be closed when it is
    garbage collected, which fails once its loop has closed while a pipe is open.
    `pipes_only` for a process whose exit the child watcher has not reported yet: closing
    the transport would reap it first (the watcher then warns of an unknown child)."""
    transport = getattr(proc, "_transport", None)
    if transport is None:
        return
    if not pipes_only:
        transport.close()
        return
    for fd in (0, 1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None:
            pipe.close()


_ROUNDS = 20
_REAP_WAIT_S = 2.0


def _children(pid: int) -> list[int]:
    """The direct children of `pid`, from /proc (every thread's list)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        with (
            contextlib.suppress(OSError, ValueError),
            open(f"/proc/{pid}/task/{task}/children", "rb") as listing,
        ):
            found.extend(int(child) for child in listing.read().split())
    return found


def _in_group(pid: int, marker: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return marker in environ.read()
    except OSError:
        return False


def _kill_members(group: str) -> list[int]:
    """SIGKILL every descendant of this process in `group`, and all it started; the pids
    killed."""
    if not sys.platform.startswith("linux"):
        return []
    marker = f"{GROUP_VAR}={group}".encode() + b"\0"
    killed: list[int] = []
    stack = [(child, False) for child in _children(os.getpid())]
    while stack:
        pid, inside = stack.pop()
        member = inside or _in_group(pid, marker)
        if member:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        stack.extend((child, member) for child in _children(pid))
    return killed


async def _reap(pids: list[int]) -> None:
    """Collect the exit of killed processes that are this process's children (orphans
    re-parented to it); others are reaped by their own parents."""
    deadline = time.monotonic() + _REAP_WAIT_S
    waiting = set(pids)
    while waiting and time.monotonic() < deadline:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours, or reaped already
                waiting.discard(pid)
                continue
            if done:
                waiting.discard(pid)
        if waiting:
            await asyncio.sleep(0.01)


def _end_live_groups() -> None:
    """At exit: kill what is left of every group still alive (a worker never closed)."""
    for group in list(_live_groups):
        for _ in range(_ROUNDS):
            if not _kill_members(group):
                break
        _live_groups.discard(group)


async def read_at_most(stream: asyncio.StreamReader, limit: int) -> bytes | None:
    """Everything `stream` holds until it closes; None as soon as it passes `limit` bytes
    (the caller stops the process rather than hold an answer of any size in memory)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := await stream.read(_CHUNK):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def read_tail(stream: asyncio.StreamReader, keep: int = 4 * STDERR_TAIL_CHARS) -> bytes:
    """The last `keep` bytes `stream` held until it closed, reading (and dropping) the rest,
    so a process printing without end is drained but never held whole."""
    kept = b""
    while chunk := await stream.read(_CHUNK):
        kept = (kept + chunk)[-keep:]
    return kept
