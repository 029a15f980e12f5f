"""Finish async code from synchronous code, even when the caller runs inside an event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


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
