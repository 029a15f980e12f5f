"""Shared helpers of the tracing tests: a suite of in-process agents and a traced run loop."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from evals.agents.base import CallContext
from evals.model.plan import PlannedRun
from evals.model.results import AgentResponse, RunRecord
from evals.model.suite import Suite
from evals.plan.runs import build_plan
from evals.suite import load_suite

SUITE = """\
version: "3"
prompts: ['{{q}}']
providers:
  - {id: file://agents.py:plain, label: baseline}
  - {id: file://agents.py:plain, label: candidate}
tests:
  - {description: first, vars: {q: one}}
  - {description: second, vars: {q: two}}
"""


def load(
    tmp_path: Path,
    text: str = SUITE,
    agents: str = "def plain(p, o, c):\n    return {'output': p}\n",
) -> Suite:
    """A suite written into `tmp_path` with its agents file."""
    (tmp_path / "agents.py").write_text(agents, encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return load_suite(path)


def plan(suite: Suite, repeat: int = 1) -> list[PlannedRun]:
    """Every planned run of the suite."""
    return list(build_plan(suite, repeat))


def meta(evaluation_id: str = "ev1") -> Any:
    """The part of EvaluationMeta the tracer reads."""
    return SimpleNamespace(id=evaluation_id)


def context_for(run: PlannedRun, traced: Any) -> CallContext:
    """The call context the runner builds, with the run's trace fields."""
    return CallContext(
        vars=run.case.vars,
        prompt=str(run.case.vars),
        case_id=run.case.id,
        case_metadata={},
        agent=run.provider.label,
        repeat=run.key.repeat,
        seed=run.seed,
        suite_id="s",
        traceparent=traced.traceparent,
        extra=dict(traced.extra),
    )


async def traced_run(
    tracer: Any, run: PlannedRun, agent: Callable[[CallContext], Awaitable[AgentResponse]]
) -> RunRecord:
    """What the runner does around one run when tracing: span, call, adopt, grade, finish."""
    async with tracer.run_span(run) as traced:
        response = await agent(context_for(run, traced))
        traced.adopt(response)
        with traced.stage("grade", **{"evals.assertions": 0}):
            passed = response.error is None
        record = RunRecord(
            key=run.key,
            case_index=run.case.index,
            prompt_index=run.prompt_index,
            agent_index=run.agent_index,
            seed=run.seed,
            prompt="",
            vars=run.case.vars,
            response=response,
            status="pass" if passed else "error",
            error=response.error,
            error_kind=None if passed else "agent_error",
        )
        traced.finish(record)
    return record
