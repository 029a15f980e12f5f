"""Checks that may take long run off the event loop, on threads of their own.

A grader is a plain function called on the runner's event loop, which serves every run
in flight. Most checks take microseconds; a few can take seconds (a regular expression
that backtracks, a `javascript` assertion, a JSON schema's patterns over a long text, an
edit distance between long texts). Such a grader returns `off_loop(work, ...)` (or
`now_or_off_loop`, by its own estimate of the work) instead of its grade: the work runs
on this pool while the loop serves other runs, and the runner's timeout of the run still
covers it. The sandbox's own time and memory limits stop JavaScript and regular
expressions on these threads (QuickJS realms are per thread). The pool is the checks'
own, so slow checks never hold the threads that render prompts.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

MAX_CHECK_THREADS = 8
"""Checks running at once off the loop; more wait for a thread."""

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_CHECK_THREADS, thread_name_prefix="evals-check")
        return _pool


async def off_loop(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` on a checks thread; the caller's loop serves other tasks meanwhile."""
    return await asyncio.get_running_loop().run_in_executor(_executor(), work, *args)


CHEAP_STEPS = 1_000_000
"""Steps of work (a grader's own estimate) a check may take on the event loop: about a
tenth of a second of Python at most."""


def now_or_off_loop(work: Callable[..., T], steps: int, *args: Any) -> T | Coroutine[Any, Any, T]:
    """`work(*args)` at once when its estimated `steps` are few, else `off_loop` of it."""
    if steps <= CHEAP_STEPS:
        return work(*args)
    return off_loop(work, *args)
