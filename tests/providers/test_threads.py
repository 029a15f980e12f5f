"""Blocking agent calls on threads: as many at once as are in flight, results in order."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evals.agents.threads import ThreadCalls

RUN_ID = contextvars.ContextVar("run_id", default=None)


def test_as_many_calls_block_at_once_as_are_in_flight() -> None:
    # 32 calls that each wait for all 32 to be running: a pool capped below 32 would
    # break the barrier instead of passing it.
    barrier = threading.Barrier(32, timeout=10)
    calls = ThreadCalls()

    async def main() -> list[int]:
        return await asyncio.gather(*(calls.run(barrier.wait) for _ in range(32)))

    positions = asyncio.run(main())
    calls.close()

    assert sorted(positions) == list(range(32))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(), max_size=60), st.integers(min_value=1, max_value=8))
def test_every_call_gets_its_own_result(values: list[int], in_flight: int) -> None:
    calls = ThreadCalls()
    limit = asyncio.Semaphore(in_flight)

    async def one(value: int) -> int:
        async with limit:
            return await calls.run(lambda v: v * 3 + 1, value)

    async def main() -> list[int]:
        return await asyncio.gather(*(one(v) for v in values))

    assert asyncio.run(main()) == [v * 3 + 1 for v in values]
    calls.close()


def test_the_call_sees_the_callers_context() -> None:
    calls = ThreadCalls()

    async def main() -> list[str | None]:
        async def one(run_id: str) -> str | None:
            RUN_ID.set(run_id)
            return await calls.run(RUN_ID.get)

        return await asyncio.gather(one("a"), one("b"), one("c"))

    assert asyncio.run(main()) == ["a", "b", "c"]
    calls.close()


def test_exceptions_reach_the_caller() -> None:
    calls = ThreadCalls()

    def fails(kind: type[BaseException]) -> None:
        raise kind("from the agent")

    async def main() -> None:
        with pytest.raises(ValueError, match="from the agent"):
            await calls.run(fails, ValueError)
        with pytest.raises(RuntimeError, match="StopIteration"):
            await calls.run(fails, StopIteration)

    asyncio.run(main())
    calls.close()


def test_a_call_that_never_returns_does_not_hold_up_the_others() -> None:
    calls = ThreadCalls()
    release = threading.Event()

    async def main() -> list[int]:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(calls.run(release.wait), timeout=0.05)
        return await asyncio.gather(*(calls.run(abs, -n) for n in range(5)))

    assert asyncio.run(main()) == [0, 1, 2, 3, 4]
    release.set()
    calls.close()
