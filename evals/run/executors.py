"""Where planned runs execute: in this process (the default) or as tasks on a Ray cluster.

Every executor takes the same planned runs and hands back the same graded records
through `on_record`, so the store, statistics and gates do not know where runs ran.
"""

from __future__ import annotations

from pathlib import Path

from evals.common.extras import require_extra
from evals.model.evaluation import EvaluationMeta
from evals.model.protocols import Executor, Tracer
from evals.model.suite import Suite
from evals.run.local import LocalExecutor

EXECUTORS = ("local", "ray")


def build_executor(
    name: str,
    suite: Suite,
    *,
    meta: EvaluationMeta,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
    trace: bool | None = None,
    cache_path: Path | None = None,
    ray_address: str | None = None,
) -> Executor:
    """The executor called `name` (`local` or `ray`) for one evaluation of `suite`.

    The local executor traces runs with `tracer`; Ray workers open their own tracer for
    the evaluation `meta` with the same `trace` choice, since a tracer cannot travel.
    """
    if name == "ray":
        from evals.run.ray_executor import RayExecutor

        require_extra("ray", "--executor ray")
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
