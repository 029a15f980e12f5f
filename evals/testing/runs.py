"""One run of a marked test: its identity and seed, what the agent answered, its record.

The plugin makes an `EvalsRun` for every (test, agent, repeat) and hands it to the test
as the `evals_run` fixture. When the test ends, `run_record` turns the run and the test's
outcome into the harness's `RunRecord`, the row `evals run` would have stored for the
same case, agent and repeat. `encode_record` and `decode_record` carry a record from a
pytest-xdist worker to the controller inside the test's report.
"""

from __future__ import annotations

import base64
import contextlib
import pickle
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evals.agents.base import CallContext
from evals.model.results import AgentResponse, ErrorKind, Grade, RunKey, RunRecord, RunStatus
from evals.testing.results import AgentResult, as_result, merged

_CURRENT: ContextVar[EvalsRun | None] = ContextVar("evals_current_run", default=None)


@dataclass(slots=True)
class EvalsRun:
    """The run a test is serving: case, agent, repeat and seeds, and the agent's answers.

    `seed` is derived from (suite, case, agent, repeat) exactly as `evals run` derives
    it, and `shared_seed` from (suite, case, repeat): an agent that draws its randomness
    from them behaves the same under pytest and under `evals run`. `suite_config` is the
    suite file's settings (tool contracts, policy, budget and prices the graders read).
    """

    suite_id: str
    case_id: str
    agent: str
    repeat: int
    seed: int
    shared_seed: int
    description: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    vars: dict[str, Any] = field(default_factory=dict)
    suite_root: Path = field(default_factory=Path.cwd)
    suite_config: dict[str, Any] = field(default_factory=dict)
    case_options: dict[str, Any] = field(default_factory=dict)
    provider_config: dict[str, Any] = field(default_factory=dict)
    results: list[AgentResult] = field(default_factory=list)
    grades: list[Grade] = field(default_factory=list)
    policy_checked: list[AgentResult] = field(default_factory=list)
    """Answers already graded against the suite's own `policy:` block."""

    @property
    def tags(self) -> list[str]:
        """The case's tags (the marker's `tags=`)."""
        return [str(t) for t in self.metadata.get("tags") or []]

    @property
    def priority(self) -> str | None:
        """The case's priority, P0 to P3 (the marker's `priority=`)."""
        value = self.metadata.get("priority")
        return None if value is None else str(value)

    def record(self, answer: Any, *, prompt: str | None = None) -> AgentResult:
        """Keep an agent's answer as this run's response and return it as an AgentResult.

        Accepts what `as_result` accepts. The trajectory, token usage, cost and latency
        go to the store and the statistics; a test that calls its agent several times
        records each answer (the run adds them up). Recording one answer twice counts
        it once.
        """
        result = as_result(answer, prompt or "")
        if prompt is not None and not result.prompt:
            result.prompt = prompt
        if not any(kept is result for kept in self.results):
            self.results.append(result)
        return result

    def call_context(self, prompt: str, variables: dict[str, Any] | None = None) -> CallContext:
        """What an agent is told about this run, as the runner of `evals run` tells it."""
        return CallContext(
            vars=dict(variables or {}),
            prompt=prompt,
            case_id=self.case_id,
            case_metadata=self.metadata,
            agent=self.agent,
            repeat=self.repeat,
            seed=self.seed,
            suite_id=self.suite_id,
            shared_seed=self.shared_seed,
        )

    def promptfoo_context(self, prompt: str = "") -> dict[str, Any]:
        """The `context` argument a promptfoo Python provider receives for this run."""
        return self.call_context(prompt).promptfoo_context()

    def answer(self) -> AgentResult | None:
        """Every recorded answer as one (None when the test recorded none)."""
        return merged(self.results) if self.results else None


def current_run() -> EvalsRun | None:
    """The run whose test is executing in this context, if any (for the checks)."""
    return _CURRENT.get()


@contextlib.contextmanager
def active(run: EvalsRun | None) -> Iterator[None]:
    """Make `run` the current run while a test executes."""
    token = _CURRENT.set(run)
    try:
        yield
    finally:
        _CURRENT.reset(token)


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a test ended: pass, fail (an assertion) or error (anything else), and why."""

    status: RunStatus
    reason: str = ""
    error_kind: ErrorKind | None = None


def run_record(
    run: EvalsRun,
    outcome: Outcome,
    *,
    case_index: int,
    agent_index: int,
    started_at: float,
    ended_at: float,
) -> RunRecord:
    """The harness's record of a finished run: the row `evals run` stores for it.

    A failed check that is a policy violation fails the run even when the test caught
    it: as in `evals run`, a violation is never compensated. A test that ended in an
    error keeps the checks it made before, so a violation seen in it still counts.
    """
    answer = run.answer()
    response = answer.response if answer is not None else AgentResponse()
    metadata: dict[str, Any] = {"shared_seed": run.shared_seed}
    if answer is not None and response.cost is None:
        response, unknown = _priced(response, answer.prompt, run.suite_config)
        if unknown is not None:
            metadata["cost_unknown"] = unknown
    elapsed_ms = (ended_at - started_at) * 1000.0
    status, reason = outcome.status, outcome.reason
    violations = [g for g in run.grades if g.policy_violation and not g.passed]
    if status == "pass" and violations:
        status, reason = "fail", violations[0].reason
    grade = None
    if status != "error" or run.grades:
        grade = Grade(
            passed=status == "pass",
            score=1.0 if status == "pass" else 0.0,
            reason=reason or "test passed",
            component_results=list(run.grades),
            policy_violation=bool(violations),
        )
    return RunRecord(
        key=RunKey("", run.case_id, run.agent, run.repeat),
        case_index=case_index,
        prompt_index=0,
        agent_index=agent_index,
        seed=run.seed,
        prompt=answer.prompt if answer is not None else "",
        vars=answer.vars if answer is not None and answer.vars else dict(run.vars),
        response=response,
        status=status,
        grade=grade,
        error=reason if status == "error" else None,
        error_kind=outcome.error_kind if status == "error" else None,
        latency_ms=response.latency_ms if response.latency_ms is not None else elapsed_ms,
        started_at=started_at,
        ended_at=ended_at,
        metadata=metadata,
    )


def _priced(
    response: AgentResponse, prompt: str, suite_config: dict[str, Any]
) -> tuple[AgentResponse, str | None]:
    """The answer with the cost `evals run` would work out for it (`resolve_cost` over the
    suite file's prices), or unchanged with the model no price was found for ("" when the
    answer named none)."""
    from evals.graders.base import output_text
    from evals.graders.cost import resolve_cost, suite_prices

    cost = resolve_cost(
        response,
        suite_prices(suite_config),
        prompt=prompt,
        output_text=output_text(response.output),
    )
    if cost.amount is None:
        return response, cost.unpriced
    return replace(response, cost=cost.amount), None


def encode_record(record: RunRecord) -> str:
    """A record as text that survives pytest-xdist's report transport (and JSON)."""
    try:
        payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an output or metadata value pickle cannot hold: keep its JSON form
        payload = pickle.dumps(_json_safe(record), protocol=pickle.HIGHEST_PROTOCOL)
    return base64.b64encode(payload).decode("ascii")


def decode_record(text: str) -> RunRecord:
    """The record `encode_record` encoded."""
    return pickle.loads(base64.b64decode(text))


def _json_safe(record: RunRecord) -> RunRecord:
    import orjson

    from evals.common.encoding import dump_json

    def plain(value: Any) -> Any:
        return orjson.loads(dump_json(value))

    response = replace(
        record.response,
        output=plain(record.response.output),
        metadata=plain(record.response.metadata),
        trace=plain(record.response.trace),
        trajectory=[
            replace(
                s, arguments=plain(s.arguments), result=plain(s.result), metadata=plain(s.metadata)
            )
            for s in record.response.trajectory
        ],
    )
    return replace(record, response=response, vars=plain(record.vars))
