"""A Python provider run in a long-lived worker process (`config: {worker: true}`).

The agent's code never runs inside the harness: a crash, `os._exit`, a segfault or a
leak ends only the worker. Its in-flight calls become error rows, and the next call
starts a fresh worker. Calls are multiplexed over one JSON-lines pipe (see worker.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections import deque
from pathlib import Path
from typing import Any

from evals.agents import worker
from evals.agents.base import AgentExited, CallContext, normalize_response
from evals.agents.processes import end_group, exited, new_group, start_agent_process, tail
from evals.agents.validate import MalformedResponse
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec

# A reply line may hold the worker's largest reply and its JSON punctuation.
_LINE_LIMIT = worker.REPLY_LIMIT + (1 << 16)
_STDERR_LINES = 50
_SHUTDOWN_GRACE_S = 5.0


def wants_worker(config: dict[str, Any]) -> bool:
    """True when a Python provider's config asks for process isolation."""
    return bool(config.get("worker")) or config.get("isolation") == "process"


class AgentCallFailed(Exception):
    """The agent function raised inside the worker."""


class WorkerCrashed(Exception):
    """The worker process ended while calls were in flight."""


class _Session:
    """One worker process (in its process group `group`) and the calls in flight on it."""

    def __init__(self, proc: asyncio.subprocess.Process, group: str) -> None:
        self.proc = proc
        self.group = group
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self.fatal: str | None = None
        self.fatal_exit = False
        self.broken: str | None = None
        self.stderr_reader = asyncio.create_task(self._read_stderr())
        self.reply_reader = asyncio.create_task(self._read_replies())

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and not self.reply_reader.done()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", errors="replace"))

    async def _read_replies(self) -> None:
        assert self.proc.stdout is not None
        try:
            async for line in self.proc.stdout:
                self._deliver(json.loads(line))
        except (ValueError, RecursionError, KeyError, TypeError) as exc:
            # a line over the limit, or one that is not a reply: the pipe cannot be trusted
            self.broken = f"the python worker sent a reply it cannot have written: {exc!r:.200}"
            self.kill_group()
        # the worker's output ended: it ends, with what it started (which may hold stderr)
        await end_group(self.proc, self.group)
        await self.stderr_reader
        crash = self.crash()
        for future in self.pending.values():
            if not future.done():
                future.set_exception(crash)
        self.pending.clear()

    def _deliver(self, message: dict[str, Any]) -> None:
        if "fatal" in message:
            self.fatal = message["fatal"]
            self.fatal_exit = bool(message.get("exit"))
            return
        future = self.pending.pop(message["id"], None)
        if future is not None and not future.done():
            future.set_result(message)

    def kill_group(self) -> None:
        """Kill the worker's process group: the worker and any process it started."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def crash(self) -> WorkerCrashed | AgentExited | MalformedResponse:
        """Why the worker ended, with the tail of what it wrote on stderr (`AgentExited`
        when importing the agent raised SystemExit or another non-Exception)."""
        if self.broken is not None:
            return MalformedResponse(self.broken)
        reason = self.fatal or f"python worker exited with code {self.proc.returncode}"
        detail = tail("".join(self.stderr))
        message = f"{reason}: {detail}" if detail else reason
        return AgentExited(message) if self.fatal_exit else WorkerCrashed(message)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one request line."""
        assert self.proc.stdin is not None
        line = json.dumps(message, ensure_ascii=False, default=str) + "\n"
        self.proc.stdin.write(line.encode())
        await self.proc.stdin.drain()

    async def close(self) -> None:
        """Close stdin so the worker exits (kill it if it does not), then kill what it
        leaves behind: its process group, and the processes it started elsewhere."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(exited(self.proc), _SHUTDOWN_GRACE_S)
        await end_group(self.proc, self.group)
        await self.reply_reader


class WorkerAgent:
    """Calls `fn(prompt, options, context)` from a Python file in a worker process."""

    def __init__(self, spec: ProviderSpec, root: Path, path: Path, fn_name: str) -> None:
        self.label = spec.label
        self.root = root
        self.path = path
        self.fn_name = fn_name
        self.python = str(spec.config.get("pythonExecutable") or sys.executable)
        self.options = {"id": spec.id, "label": spec.label, "config": spec.config}
        self.env = spec.config.get("env") or {}
        self.session: _Session | None = None
        self.next_id = 0
        self.starting = asyncio.Lock()

    async def _session(self, context: CallContext) -> _Session:
        async with self.starting:
            if self.session is not None and self.session.alive:
                return self.session
            group = new_group()
            proc = await start_agent_process(
                [self.python, worker.__file__, str(self.path), self.fn_name],
                cwd=self.root,
                context=context,
                extra_env=self.env,
                stdin=asyncio.subprocess.PIPE,
                group=group,
                limit=_LINE_LIMIT,
            )
            self.session = _Session(proc, group)
            return self.session

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Send one call to the worker (starting one if needed) and await its reply."""
        session = await self._session(context)
        self.next_id += 1
        call_id = self.next_id
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        session.pending[call_id] = future
        request = {
            "id": call_id,
            "prompt": prompt,
            "options": self.options,
            "context": context.promptfoo_context(),
        }
        try:
            await session.send(request)
            reply = await future
        except (BrokenPipeError, ConnectionResetError):
            session.pending.pop(call_id, None)
            await session.reply_reader
            raise session.crash() from None
        except asyncio.CancelledError:
            session.pending.pop(call_id, None)
            if session.alive:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    await session.send({"cancel": call_id})
            raise
        if "result" in reply:
            return normalize_response(reply["result"])
        if reply.get("kind") == "malformed":
            raise MalformedResponse(reply["error"])
        if reply.get("kind") == "exit":
            raise AgentExited(f"agent raised {reply['error']}")
        raise AgentCallFailed(reply["error"])

    async def aclose(self) -> None:
        """Stop the worker."""
        if self.session is not None:
            await self.session.close()
            self.session = None
