"""The one interface the runner calls, whatever the agent is."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, Protocol

from evals.agents.validate import (
    MalformedResponse,
    check_cost,
    check_latency,
    check_log_probs,
    check_tokens,
)
from evals.model.results import AgentResponse
from evals.model.trajectory import Step


@dataclass(slots=True)
class CallContext:
    """What an agent is told about the run it is serving.

    `seed` is derived from (suite, case, agent, repeat) so stochastic agents can be
    reproduced; `traceparent` lets out-of-process agents join the run's trace;
    `environment` is the path of the run's own copy of the suite's world state, which the
    agent's tools read and change (None when the suite declares no environment).
    """

    vars: dict[str, Any]
    prompt: str
    case_id: str
    case_metadata: dict[str, Any]
    agent: str
    repeat: int
    seed: int
    suite_id: str
    shared_seed: int | None = None
    timeout_s: float | None = None
    traceparent: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    environment: str | None = None
    prompt_label: str | None = None
    prompt_raw: str | None = None
    prompt_config: dict[str, Any] = field(default_factory=dict)

    def promptfoo_context(self) -> dict[str, Any]:
        """The `context` argument of promptfoo's `call_api`, with the harness's additions.

        `prompt` is promptfoo's: the template before rendering (`raw`), the prompt's label
        and its config (the prompt's own, what its function added and the test's options),
        which providers merge into their request."""
        label = self.prompt if self.prompt_label is None else self.prompt_label
        return {
            "vars": self.vars,
            "prompt": {
                "raw": self.prompt if self.prompt_raw is None else self.prompt_raw,
                "label": label,
                "config": self.prompt_config,
            },
            "test": {"metadata": self.case_metadata, "vars": self.vars},
            "repeatIndex": self.repeat,
            "repeat": self.repeat,
            "seed": self.seed,
            "sharedSeed": self.shared_seed,
            "evals": {
                "suite": self.suite_id,
                "case": self.case_id,
                "agent": self.agent,
                "repeat": self.repeat,
                "seed": self.seed,
                "shared_seed": self.shared_seed,
                "traceparent": self.traceparent,
                "environment": self.environment,
            },
        }


class Agent(Protocol):
    """An agent the runner can call concurrently."""

    label: str

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Run the agent once on a rendered prompt."""
        ...

    async def aclose(self) -> None:
        """Release clients, subprocesses or servers."""
        ...


class AgentExited(Exception):
    """The agent raised a BaseException that is not an Exception (`SystemExit`,
    `KeyboardInterrupt`, `GeneratorExit`, a `CancelledError` of its own, a custom one).

    Such an exception would end the harness (with the agent's exit code, or as if the
    user pressed Ctrl-C); it is carried as an ordinary exception instead, and the run
    becomes an `agent_exit` row.
    """


class AgentBlocked(BaseException):
    """Raised inside an agent that has blocked the harness's event loop past the run's
    timeout (a CPU loop or `time.sleep` in an async agent), so the run ends as a `timeout`.

    A BaseException, so the agent's own `except Exception` does not swallow it.
    """


def exit_detail(exc: BaseException) -> str:
    """`SystemExit: 3`: the class and message of what the agent raised."""
    return traceback.format_exception_only(type(exc), exc)[-1].strip()


def is_agent_exit(exc: BaseException) -> bool:
    """True for what an agent may raise that is not an Exception, except the harness's own
    cancellation: a `CancelledError` counts only when nobody cancelled the current task."""
    if isinstance(exc, Exception | AgentBlocked):
        return False
    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is None or task.cancelling() == 0
    return True


async def guarded_call(call: Awaitable[AgentResponse]) -> AgentResponse:
    """Await an agent's call, turning what it raises that is not an Exception into
    `AgentExited`, so it never reaches the event loop (where `SystemExit` and
    `KeyboardInterrupt` would stop the harness)."""
    try:
        return await call
    except BaseException as exc:
        if is_agent_exit(exc):
            raise AgentExited(f"agent raised {exit_detail(exc)}") from None
        raise


_USAGE_KEYS = {
    "total": "total",
    "prompt": "prompt",
    "completion": "completion",
    "cached": "cached",
    "numRequests": "numRequests",
    "input_tokens": "prompt",
    "output_tokens": "completion",
    "prompt_tokens": "prompt",
    "completion_tokens": "completion",
    "total_tokens": "total",
}


def _usage(raw: Any) -> dict[str, int]:
    if not isinstance(raw, dict):
        return {}
    usage: dict[str, int] = {}
    for key, value in raw.items():
        name = _USAGE_KEYS.get(key)
        if name and value is not None:
            usage[name] = check_tokens(value, f"tokenUsage.{key}")
    if "total" not in usage and ("prompt" in usage or "completion" in usage):
        usage["total"] = usage.get("prompt", 0) + usage.get("completion", 0)
    return usage


def _steps(raw: Any) -> list[Step]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise MalformedResponse(f"trajectory must be a list of steps, got {type(raw).__name__}")
    steps = []
    for item in raw:
        if isinstance(item, Step):
            steps.append(item)
        elif isinstance(item, dict) and "kind" in item and "name" in item:
            steps.append(Step.from_dict(item))
        else:
            raise MalformedResponse(f"a trajectory step must have kind and name, got {item!r:.80}")
    return steps


def normalize_response(raw: Any) -> AgentResponse:
    """Accept promptfoo's provider dict, the native rich dict, or an AgentResponse.

    Raises MalformedResponse for anything else, which the runner records as an error row.
    """
    if isinstance(raw, AgentResponse):
        return raw
    if not isinstance(raw, dict):
        raise MalformedResponse(
            f"agent returned {type(raw).__name__}, expected a dict with an 'output' or 'error' key"
        )
    if "output" not in raw and "error" not in raw:
        raise MalformedResponse("agent returned a dict with neither 'output' nor 'error'")
    cost = check_cost(raw.get("cost"))
    error = raw.get("error")
    metadata = raw.get("metadata") or {}
    metadata = dict(metadata) if isinstance(metadata, dict) else {"value": metadata}
    if raw.get("guardrails") is not None:
        metadata.setdefault("guardrails", raw["guardrails"])
    if raw.get("sessionId") is not None:  # a conversation's session (promptfoo's sessionId)
        metadata.setdefault("sessionId", raw["sessionId"])
    return AgentResponse(
        output=raw.get("output"),
        error=None if error in (None, "") else str(error),
        token_usage=_usage(raw.get("tokenUsage") or raw.get("token_usage")),
        cost=cost,
        metadata=metadata,
        trajectory=_steps(raw.get("trajectory")),
        stop_reason=raw.get("stopReason") or raw.get("stop_reason"),
        finish_reason=raw.get("finishReason"),
        latency_ms=check_latency(raw.get("latencyMs")),
        log_probs=check_log_probs(raw.get("logProbs")),
        cached=bool(raw.get("cached", False)),
        trace=list(raw.get("trace") or []),
    )
