"""Where planned runs execute: in this process (the default) or as tasks on a Ray cluster.

Every executor takes the same planned runs and hands back the same graded records
through `on_record`, so the store, statistics and gates do not know where runs ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from evals.executors.local import LocalExecutor, OnRecord
from evals.plan import PlannedRun
from evals.suite.model import Suite

EXECUTORS = ("local", "ray")


class Executor(Protocol):
    """Runs planned runs and reports each graded record as soon as it is complete."""

    async def run(self, planned: list[PlannedRun], on_record: OnRecord) -> None:
        """Execute every planned run once."""
        ...


def build_executor(
    name: str,
    suite: Suite,
    *,
    meta: Any,
    concurrency: int,
    timeout_s: float | None,
    tracer: Any,
    trace: bool | None = None,
    cache_path: Path | None = None,
    ray_address: str | None = None,
) -> Executor:
    """The executor called `name` (`local` or `ray`) for one evaluation of `suite`.

    The local executor traces runs with `tracer`; Ray workers open their own tracer for
    the evaluation `meta` with the same `trace` choice, since a tracer cannot travel.
    """
    if name == "ray":
        from evals.executors.ray_executor import RayExecutor

        return RayExecutor(
            suite,
            meta=meta,
            concurrency=concurrency,
            timeout_s=timeout_s,
            trace=trace,
            cache_path=cache_path,
            address=ray_address,
        )
    if name != "local":
        raise ValueError(f"unknown executor {name!r}; use one of {', '.join(EXECUTORS)}")
    return LocalExecutor(
        suite, concurrency=concurrency, timeout_s=timeout_s, tracer=tracer, cache_path=cache_path
    )
