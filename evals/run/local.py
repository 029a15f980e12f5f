"""The default executor: an asyncio pool of workers in this process."""

from __future__ import annotations

from pathlib import Path

from evals.agents.base import Agent
from evals.agents.registry import build_agent
from evals.model.plan import PlannedRun
from evals.model.protocols import OnRecord, Tracer
from evals.model.suite import Suite
from evals.run.runner import Runner


def build_agents(
    suite: Suite, planned: list[PlannedRun], cache_path: Path | None = None
) -> dict[str, Agent]:
    """The agents the planned runs call, by `agent_key`; behind the response cache when given."""
    specs = {run.agent_key: run.caller for run in planned}
    agents: dict[str, Agent] = {
        label: build_agent(spec, suite.root) for label, spec in specs.items()
    }
    if cache_path is None:
        return agents
    from evals.run.cache import CachedAgent, SqliteResponseCache

    cache = SqliteResponseCache(cache_path)
    return {label: CachedAgent(agents[label], specs[label], cache) for label in agents}


async def execute_planned(
    suite: Suite,
    planned: list[PlannedRun],
    on_record: OnRecord,
    *,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
    cache_path: Path | None = None,
) -> None:
    """Run, grade and report every planned run with at most `concurrency` in flight."""
    agents = build_agents(suite, planned, cache_path)
    runner = Runner(
        agents,
        suite_id=suite.suite_id,
        suite_root=suite.root,
        concurrency=concurrency,
        timeout_s=timeout_s,
        suite_config=suite.raw,
        tracer=tracer,
        latency_source=suite.gates.latency,
    )
    try:
        await runner.run(planned, on_record)
    finally:
        for agent in agents.values():
            await agent.aclose()


class LocalExecutor:
    """Runs every planned run in this process, concurrently on one event loop."""

    def __init__(
        self,
        suite: Suite,
        *,
        concurrency: int,
        timeout_s: float | None,
        tracer: Tracer,
        cache_path: Path | None = None,
    ) -> None:
        self.suite = suite
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.tracer = tracer
        self.cache_path = cache_path

    async def run(self, planned: list[PlannedRun], on_record: OnRecord) -> None:
        """Execute every planned run once, reporting each record as it completes."""
        await execute_planned(
            self.suite,
            planned,
            on_record,
            concurrency=self.concurrency,
            timeout_s=self.timeout_s,
            tracer=self.tracer,
            cache_path=self.cache_path,
        )
