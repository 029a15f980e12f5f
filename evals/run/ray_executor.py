"""Runs planned runs as Ray tasks, on a local Ray instance or a cluster.

The plan is cut into batches; each batch is one Ray task that builds the agents on its
worker and runs the batch with the local executor, so a run graded on a cluster node is
exactly the run graded in-process (same seeds, same graders). Records come back to the
driver batch by batch and go to the store from there, as with the local executor.

Every node needs the suite directory (and the agents' code) at the same path as the
driver, and `evals` installed: a shared volume or the image the cluster runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from evals.model.evaluation import EvaluationMeta
from evals.model.plan import PlannedRun
from evals.model.protocols import OnRecord
from evals.model.results import RunRecord
from evals.model.suite import Suite
from evals.run.local import execute_planned

BATCHES_PER_CPU = 4


def _run_batch(
    suite: Suite,
    meta: EvaluationMeta,
    trace: bool | None,
    batch: list[PlannedRun],
    concurrency: int,
    timeout_s: float | None,
    cache_path: Path | None,
) -> list[RunRecord]:
    from evals.tracing import run_tracer

    records: list[RunRecord] = []
    with run_tracer(suite, meta, trace) as tracer:
        asyncio.run(
            execute_planned(
                suite,
                batch,
                records.append,
                concurrency=concurrency,
                timeout_s=timeout_s,
                tracer=tracer,
                cache_path=cache_path,
            )
        )
    return records


def batches(planned: list[PlannedRun], count: int) -> list[list[PlannedRun]]:
    """`planned` cut into at most `count` contiguous, nearly equal, non-empty batches."""
    count = max(1, min(count, len(planned)))
    size, extra = divmod(len(planned), count)
    out, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        out.append(planned[start:end])
        start = end
    return [batch for batch in out if batch]


class RayExecutor:
    """Executes batches of planned runs as Ray tasks and streams their records back."""

    def __init__(
        self,
        suite: Suite,
        *,
        meta: EvaluationMeta,
        concurrency: int,
        timeout_s: float | None,
        trace: bool | None = None,
        cache_path: Path | None = None,
        address: str | None = None,
    ) -> None:
        self.suite = suite
        self.meta = meta
        self.trace = trace
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.cache_path = cache_path
        self.address = address

    def _connect(self) -> Any:
        import ray

        if not ray.is_initialized():
            ray.init(address=self.address, log_to_driver=False, include_dashboard=False)
        return ray

    async def run(self, planned: list[PlannedRun], on_record: OnRecord) -> None:
        """Submit the plan as Ray tasks and report each batch's records as it finishes."""
        if not planned:
            return
        ray = self._connect()
        task = ray.remote(_run_batch)
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        suite_ref = ray.put(self.suite)
        pending = [
            task.remote(
                suite_ref,
                self.meta,
                self.trace,
                batch,
                self.concurrency,
                self.timeout_s,
                self.cache_path,
            )
            for batch in batches(planned, cpus * BATCHES_PER_CPU)
        ]
        while pending:
            done, pending = await asyncio.to_thread(ray.wait, pending, num_returns=1)
            for record in ray.get(done[0]):
                on_record(record)
