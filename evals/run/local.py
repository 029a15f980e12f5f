"""The default executor: an asyncio pool of workers in this process."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from evals.agents.base import Agent
from evals.agents.registry import build_agent, build_conversation
from evals.agents.simulated_user import is_simulated_user, parse_simulation
from evals.model.plan import PlannedRun, agent_key
from evals.model.protocols import OnRecord, ResponseCache, Tracer
from evals.model.suite import ProviderSpec, Suite
from evals.run.conversation import Conversations, may_use_conversation
from evals.run.limiter import CallLimiter, Limiter
from evals.run.runner import Runner
from evals.suite.fingerprint import agent_fingerprint


class AgentFactory:
    """Builds the agent serving each (column provider, test provider) pair, each once,
    behind the response cache when there is one. A simulated user's conversation is built
    around the column's agent (cached call by call, so the cache covers every turn) and its
    own user provider (cached too)."""

    def __init__(self, suite: Suite, cache: ResponseCache | None) -> None:
        self.suite = suite
        self.cache = cache

    def cached(self, agent: Agent, spec: ProviderSpec) -> Agent:
        """`agent` behind the response cache, when there is one."""
        if self.cache is None:
            return agent
        from evals.run.cache import CachedAgent

        return CachedAgent(agent, spec, self.cache, self.suite.secrets)

    def build(
        self, provider: ProviderSpec, test_provider: ProviderSpec | None, built: dict[str, Agent]
    ) -> Agent:
        """The agent of `provider` in a test whose provider is `test_provider`; agents it
        builds along the way (the column's, for a conversation) are added to `built`."""
        if test_provider is None:
            return self.cached(build_agent(provider, self.suite.root), provider)
        if not is_simulated_user(test_provider):
            return self.cached(build_agent(test_provider, self.suite.root), test_provider)
        column = agent_key(provider, None)
        if column not in built:
            built[column] = self.build(provider, None, built)
        simulation = parse_simulation(test_provider)
        if simulation.user is None:
            return build_conversation(test_provider, self.suite.root, built[column], None, None)
        spec = replace(
            simulation.user, fingerprint=agent_fingerprint(simulation.user, self.suite.root)
        )
        user = self.cached(build_agent(spec, self.suite.root), spec)
        return build_conversation(test_provider, self.suite.root, built[column], user, spec)


class AgentsOnDemand(dict[str, Agent]):
    """The agents of a suite by `agent_key`, each built when its first run asks for it: a
    streamed plan is not known in advance, and an agent no run calls is never built."""

    def __init__(self, suite: Suite, cache: ResponseCache | None) -> None:
        super().__init__()
        self.factory = AgentFactory(suite, cache)
        self.pairs: dict[str, tuple[ProviderSpec, ProviderSpec | None]] = {
            agent_key(p, None): (p, None) for p in suite.providers
        }
        for case in suite.cases:
            if case.provider is not None:
                for provider in suite.providers:
                    self.pairs[agent_key(provider, case.provider)] = (provider, case.provider)

    def __missing__(self, key: str) -> Agent:
        provider, test_provider = self.pairs[key]
        agent = self.factory.build(provider, test_provider, self)
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
    factory = AgentFactory(suite, cache)
    agents: dict[str, Agent] = {}
    for run in planned:
        if run.agent_key not in agents:
            agents[run.agent_key] = factory.build(run.provider, run.case.provider, agents)
    return agents


def load_errors(agents: dict[str, Agent]) -> dict[str, str]:
    """Why each agent that could not load its code errs on every call, by `agent_key`
    (promptfoo's model: a provider that does not load makes error rows, not a refusal)."""
    return {
        key: error for key, agent in agents.items() if (error := getattr(agent, "load_error", None))
    }


async def close_agents(agents: dict[str, Agent]) -> None:
    """Close every agent: their worker processes and idle threads."""
    for agent in agents.values():
        await agent.aclose()


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
        environment=None if suite.environment is None else suite.environment.seed,
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
        await close_agents(agents)


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
