"""Blocking agent functions on worker threads, handed back to the event loop in batches.

A sync `call_api` may block (an HTTP client, a model on the CPU), so it cannot run on the
event loop. `asyncio.to_thread` would do, but it wakes the loop once per finished call
and caps its pool at the CPU count plus four threads, below a suite's `maxConcurrency`
on most machines. Here a thread starts whenever every thread is busy, so as many calls
block at once as the runner lets in flight, and calls that finish together wake the loop
once. A call that never returns (its run timed out) keeps its thread; the next call gets
a new one.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from evals.agents.base import AgentExited, exit_detail

_Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]


class ThreadCalls:
    """Runs blocking calls for one event loop on threads of their own."""

    def __init__(self, name: str = "evals-agent") -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0
        self._finished: deque[_Outcome] = deque()
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` on a worker thread, in a copy of the caller's context (like to_thread).

        The copied context carries the run's OpenTelemetry span into the agent's own spans.
        """
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        future = loop.create_future()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"{self.name}-{self._threads}", daemon=True
                ).start()
        self._jobs.put((future, contextvars.copy_context(), fn, args))
        return await future

    def close(self) -> None:
        """Let idle threads end; threads still in a call end when it returns."""
        with self._lock:
            threads, self._threads = self._threads, 0
        for _ in range(threads):
            self._jobs.put(None)

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, context, fn, args = job
            try:
                outcome: _Outcome = (future, context.run(fn, *args), None)
            except StopIteration as exc:  # a future cannot hold StopIteration itself
                outcome = (future, None, RuntimeError(f"the agent raised StopIteration: {exc}"))
            except Exception as exc:  # handed to the awaiting run, as to_thread does
                outcome = (future, None, exc)
            except BaseException as exc:  # SystemExit, KeyboardInterrupt: never the loop's
                outcome = (future, None, AgentExited(f"agent raised {exit_detail(exc)}"))
            with self._lock:
                self._finished.append(outcome)
                wake = not self._wake_pending
                self._wake_pending = True
                self._idle += 1
            if wake:
                try:
                    self._loop.call_soon_threadsafe(self._deliver)  # type: ignore[union-attr]
                except RuntimeError:  # the loop has closed: nobody waits for this call
                    return

    def _deliver(self) -> None:
        with self._lock:
            finished = list(self._finished)
            self._finished.clear()
            self._wake_pending = False
        for future, result, error in finished:
            if future.cancelled():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
