"""Helpers shared by the agent-provider tests: call contexts and an event-loop runner."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from evals.agents.base import CallContext

T = TypeVar("T")

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def make_context(prompt: str = "hi", **vars: Any) -> CallContext:
    """A call context for one run of case `c1`, with a fixed trace parent."""
    return CallContext(
        vars=dict(vars),
        prompt=prompt,
        case_id="c1",
        case_metadata={"tags": ["t"]},
        agent="a",
        repeat=0,
        seed=42,
        suite_id="s",
        traceparent=TRACEPARENT,
    )


def run(coro: Awaitable[T]) -> T:
    """Run one coroutine to completion on a fresh event loop."""
    return asyncio.run(coro)  # type: ignore[arg-type]
