"""A watchdog for agents that block the event loop.

An async agent that computes in a loop or calls `time.sleep` never yields to the event
loop, so no timeout set on the loop can fire. A thread watches a heartbeat the loop
beats every tenth of a second; when the loop has not beaten for longer than the run
timeout, the thread sends SIGUSR2 to the main thread, whose handler raises `AgentBlocked`
if an agent call is what is running (`guarded_call` is on the stack), or `UserCodeBlocked`
if the suite's own code is (a Python check, transform or scoring function that sleeps or
loops: `interruptible` functions), ending that run as a `timeout`.
Anything else blocking the loop (the harness's own work) is left alone and looked at
again one timeout later. This is how pytest-timeout's signal method interrupts
a test, and it costs the runs nothing while the loop is responsive.

Only for a loop on the main thread (signal handlers run there), and only when nobody
else handles SIGUSR2.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from types import FrameType
from typing import Any

from evals.agents.base import AgentBlocked, guarded_call
from evals.common.blocking import UserCodeBlocked, in_interruptible

BEAT_S = 0.1
_SIGNAL = signal.SIGUSR2
_AGENT_CALL = guarded_call.__code__


def _in_agent_call(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code is _AGENT_CALL:
            return True
        frame = frame.f_back
    return False


def _interrupt(signum: int, frame: FrameType | None) -> None:
    if _in_agent_call(frame):
        raise AgentBlocked("the agent blocked the event loop past the run's timeout")
    if in_interruptible(frame):
        raise UserCodeBlocked("the suite's code blocked the event loop past the run's timeout")


class LoopWatchdog:
    """Interrupts an agent call that keeps the running loop blocked past `timeout_s`."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._beat = time.monotonic()
        self._stop = threading.Event()
        self._handle: asyncio.TimerHandle | None = None
        self._thread: threading.Thread | None = None
        self._previous: Any = None

    def start(self) -> bool:
        """Begin watching the running loop; False (nothing started) off the main thread or
        when SIGUSR2 has a handler already."""
        if threading.current_thread() is not threading.main_thread():
            return False
        if signal.getsignal(_SIGNAL) is not signal.SIG_DFL:
            return False
        self._previous = signal.signal(_SIGNAL, _interrupt)
        self._beat_now()
        self._thread = threading.Thread(target=self._watch, name="evals-watchdog", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        """Stop watching and restore SIGUSR2's handler."""
        if self._thread is None:
            return
        self._stop.set()
        if self._handle is not None:
            self._handle.cancel()
        self._thread.join()
        self._thread = None
        signal.signal(_SIGNAL, self._previous)

    def _beat_now(self) -> None:
        self._beat = time.monotonic()
        self._handle = asyncio.get_running_loop().call_later(BEAT_S, self._beat_now)

    def _watch(self) -> None:
        main = threading.main_thread().ident
        assert main is not None
        while not self._stop.wait(BEAT_S):
            now = time.monotonic()
            if now - self._beat > self.timeout_s + BEAT_S:
                signal.pthread_kill(main, _SIGNAL)
                self._beat = now  # look again one timeout later
