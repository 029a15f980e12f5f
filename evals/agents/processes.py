"""What every out-of-process agent shares: its environment, and how it is stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
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


async def start_agent_process(
    args: Sequence[str],
    *,
    cwd: Path,
    context: CallContext,
    extra_env: Mapping[str, Any] | None,
    stdin: int,
    limit: int = 64 * 1024,
) -> asyncio.subprocess.Process:
    """Start an agent with the agent environment and its output piped, in a session of its
    own so that `kill_group` stops it together with its children.

    `limit` bounds one line read from its output (asyncio's default, 64 KiB, unless given).
    """
    return await asyncio.create_subprocess_exec(
        *args,
        cwd=cwd,
        env=agent_env(context, extra_env),
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
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await proc.wait()


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
