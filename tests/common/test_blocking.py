"""run_to_completion finishes async code from sync code, inside or outside a running loop."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from evals.common.blocking import run_to_completion

CURRENT = contextvars.ContextVar("CURRENT", default="unset")


async def _double(value: int) -> int:
    await asyncio.sleep(0)
    return value * 2


async def _fail() -> None:
    raise KeyError("lost")


async def _current() -> str:
    return CURRENT.get()


def test_result_outside_and_inside_a_running_loop():
    assert run_to_completion(_double(4)) == 8

    async def caller() -> int:
        return run_to_completion(_double(5))

    assert asyncio.run(caller()) == 10


def test_exception_reaches_the_caller():
    with pytest.raises(KeyError, match="lost"):
        run_to_completion(_fail())


def test_context_variables_carry_over():
    token = CURRENT.set("trace-1")
    try:
        assert run_to_completion(_current()) == "trace-1"
    finally:
        CURRENT.reset(token)
