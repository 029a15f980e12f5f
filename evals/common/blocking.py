"""Finish async code from synchronous code, even when the caller runs inside an event loop;
mark the harness's functions that run a suite's own code on the event loop, so a watchdog
can interrupt that code when it blocks the loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from types import CodeType, FrameType
from typing import Any, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

_INTERRUPTIBLE: set[CodeType] = set()


class UserCodeBlocked(BaseException):
    """Raised inside a suite's own code (a Python check, transform or scoring function)
    that has blocked the event loop past the run's timeout, by the run's watchdog, so the
    run ends as a `timeout`. A BaseException, so the code's own `except Exception` does
    not swallow it."""


def interruptible(function: F) -> F:
    """Mark `function` as one that runs a suite's own code on the event loop: while it is
    on the stack, the watchdog may raise UserCodeBlocked into it."""
    _INTERRUPTIBLE.add(function.__code__)
    return function


def in_interruptible(frame: FrameType | None) -> bool:
    """Whether `frame` runs inside a function marked `interruptible`."""
    while frame is not None:
        if frame.f_code in _INTERRUPTIBLE:
            return True
        frame = frame.f_back
    return False


def run_to_completion(awaitable: Awaitable[T]) -> T:
    """Await `awaitable` on a fresh event loop in a thread of its own and return its result
    (or raise its exception), so that a synchronous API can call async user code wherever
    it is called from; the caller's context variables (e.g. the current trace) carry over."""
    box: dict[str, Any] = {}
    context = contextvars.copy_context()

    async def drive() -> T:
        return await awaitable

    def target() -> None:
        try:
            box["value"] = context.run(asyncio.run, drive())
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
