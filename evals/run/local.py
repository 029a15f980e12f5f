"""The default executor: an asyncio pool of workers in this process."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from evals.agents.base import Agent
from evals.agents.registry import build_agent
from evals.model.plan import PlannedRun, agent_key
from evals.model.protocols import OnRecord, ResponseCache, Tracer
from evals.model.suite import Suite
from evals.run.conversation import Conversations, may_use_conversation
from evals.run.limiter import CallLimiter, Limiter
from evals.run.runner import Runner


class AgentsOnDemand(dict[str, Agent]):
    """The agents of a suite by `agent_key`, each built when its first run asks for it: a
    streamed plan is not known in advance, and an agent no run calls is never built."""

    def __init__(self, suite: Suite, cache: ResponseCache | None) -> None:
        super().__init__()
        self.suite = suite
        self.cache = cache
        self.specs = {agent_key(p, None): p for p in suite.providers}
        for case in suite.cases:
            if case.provider is not None:
                self.specs[agent_key(case.provider, case.provider)] = case.provider

    def __missing__(self, key: str) -> Agent:
        spec = self.specs[key]
        agent: Agent = build_agent(spec, self.suite.root)
        if self.cache is not None:
            from evals.run.cache import CachedAgent

            agent = CachedAgent(agent, spec, self.cache, self.suite.secrets)
        self[key] = agent
        return agent


def build_agents(
    suite: Suite, planned: Iterable[PlannedRun], cache: ResponseCache | None = None
) -> dict[str, Agent]:
    """The agents the planned runs call, by `agent_key`; behind the response cache when given.

    A plan that is not a list (a streamed one) is not read here: its agents are built on
    demand (`AgentsOnDemand`)."""
    if not isinstance(planned, list):
        return AgentsOnDemand(suite, cache)
    specs = {run.agent_key: run.caller for run in planned}
    agents: dict[str, Agent] = {
        label: build_agent(spec, suite.root) for label, spec in specs.items()
    }
    if cache is None:
        return agents
    from evals.run.cache import CachedAgent

    return {
        label: CachedAgent(agents[label], specs[label], cache, suite.secrets) for label in agents
    }


def file_cache(cache_path: Path | None) -> ResponseCache | None:
    """The response cache in the SQLite file `cache_path`, or None without one."""
    if cache_path is None:
        return None
    from evals.run.cache import SqliteResponseCache

    return SqliteResponseCache(cache_path)


def suite_runner(
    suite: Suite,
    agents: dict[str, Agent],
    *,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
    limiter: Limiter | None,
) -> Runner:
    """The runner of `suite`'s runs over built `agents`, in this process or on a worker.

    It keeps the `_conversation` threads only for a suite where a run can read them."""
    return Runner(
        agents,
        suite_id=suite.suite_id,
        suite_root=suite.root,
        concurrency=concurrency,
        timeout_s=timeout_s,
        suite_config=suite.raw,
        tracer=tracer,
        latency_source=suite.gates.latency,
        limiter=limiter,
        secrets=suite.secrets,
        conversations=Conversations() if may_use_conversation(suite) else None,
    )


async def execute_planned(
    suite: Suite,
    planned: Iterable[PlannedRun],
    on_record: OnRecord,
    *,
    concurrency: int,
    timeout_s: float | None,
    tracer: Tracer,
    cache_path: Path | None = None,
) -> None:
    """Run, grade and report every planned run with at most `concurrency` in flight,
    under the suite's `limits:`."""
    agents = build_agents(suite, planned, file_cache(cache_path))
    limiter = CallLimiter(suite.limits) if suite.limits else None
    runner = suite_runner(
        suite, agents, concurrency=concurrency, timeout_s=timeout_s, tracer=tracer, limiter=limiter
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

    async def run(self, planned: Iterable[PlannedRun], on_record: OnRecord) -> None:
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
