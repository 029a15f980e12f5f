"""PydanticAI agents: `pydantic-ai:MODULE:AGENT`.

The agent runs with `Agent.run` inside `capture_run_messages`, and the trajectory is read
from the run's own message history (also when the run fails): each `ModelResponse` is a
model step (model name, token usage, priced, finish reason, text; timed from the request
that preceded it), each function-tool call a tool step (arguments, call id) completed by
its `ToolReturnPart` (a return whose outcome is `failed`, `retried` or `denied` is an error
step: the tool raised `ModelRetry`, failed validation or was denied). Output-tool calls
(`final_result`, or the names of `ToolOutput`s) are the answer, not steps.

The run's seed goes in `model_settings` (`seed`, which models that support it pass on);
`config.request_limit` and `config.total_tokens_limit` become `UsageLimits`. Stop
reasons: `done` (the output; structured outputs as data), `max_steps` (the request
limit), `budget_exhausted` (a token or tool-call limit), `approval_required` (the output
is `DeferredToolRequests`: one approval step per call awaiting approval), `error`.
A chat-array prompt becomes the message history and its last user message the prompt.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pydantic_ai
from pydantic_ai import (
    DeferredToolRequests,
    ToolOutput,
    UsageLimitExceeded,
    UsageLimits,
    capture_run_messages,
)
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from evals.agents.base import CallContext
from evals.agents.frameworks.common import (
    STOP_APPROVAL,
    STOP_BUDGET,
    STOP_ERROR,
    STOP_MAX_STEPS,
    FrameworkAgent,
    Outcome,
    Recorder,
    error_text,
    jsonable,
)
from evals.model.trajectory import Step
from evals.vendors.messages import parse_chat_prompt

DEFAULT_OUTPUT_TOOL = "final_result"
_FAILED_OUTCOMES = ("failed", "retried", "denied", "interrupted")


def _seconds(moment: datetime | None) -> float | None:
    return None if moment is None else moment.timestamp()


def output_tool_names(output_type: Any) -> set[str]:
    """Names of the output tools an output spec declares (`ToolOutput(name=...)`)."""
    specs = output_type if isinstance(output_type, (list, tuple)) else [output_type]
    return {s.name for s in specs if isinstance(s, ToolOutput) and s.name}


def _is_output_call(name: str, output_names: set[str]) -> bool:
    return name in output_names or name.startswith(DEFAULT_OUTPUT_TOOL)


def _return_error(part: Any) -> str | None:
    if isinstance(part, RetryPromptPart):
        content = part.content
        return content if isinstance(content, str) else str(jsonable(content))
    if getattr(part, "outcome", "success") in _FAILED_OUTCOMES:
        return str(jsonable(part.content))
    return None


def steps_from_messages(
    messages: list[Any],
    model: str,
    config: dict[str, Any],
    output_names: set[str],
    failure: str | None = None,
) -> list[Step]:
    """The model and tool steps of a PydanticAI message history, in order.

    `model` names model steps whose response does not. A tool call without a return is
    the call the run failed in when `failure` (the run's error) is given; otherwise the
    run stopped before it ran, and it is left out.
    """
    recorder = Recorder(config)
    pending: dict[str, Step] = {}
    requested_at: float | None = None
    for message in messages:
        if isinstance(message, ModelRequest):
            requested_at = _seconds(message.timestamp) or requested_at
            for part in message.parts:
                step = pending.pop(getattr(part, "tool_call_id", ""), None)
                if step is None or not isinstance(part, (ToolReturnPart, RetryPromptPart)):
                    continue
                step.ended_at = _seconds(part.timestamp)
                step.error = _return_error(part)
                step.result = None if step.error else jsonable(part.content)
                recorder.add(step)
        elif isinstance(message, ModelResponse):
            key = id(message)
            step = recorder.model_started(key, message.model_name or model)
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            text = "".join(p.content for p in message.parts if isinstance(p, TextPart))
            recorder.model_ended(
                key,
                input_tokens=message.usage.input_tokens,
                output_tokens=message.usage.output_tokens,
                text=text,
                tool_calls=[c.tool_name for c in calls],
                finish_reason=message.finish_reason,
            )
            step.started_at = requested_at
            step.ended_at = _seconds(message.timestamp)
            for call in calls:
                if not _is_output_call(call.tool_name, output_names):
                    pending[call.tool_call_id] = Step(
                        kind="tool",
                        name=call.tool_name,
                        arguments=call.args_as_dict(),
                        started_at=step.ended_at,
                        call_id=call.tool_call_id,
                    )
    if failure is not None:
        for step in pending.values():
            step.error = failure
            recorder.add(step)
    return recorder.steps


def _prompt_and_history(prompt: str) -> tuple[str, list[Any]]:
    """The user prompt and the message history of a (possibly chat-array) prompt."""
    messages = parse_chat_prompt(prompt)
    if messages == [{"role": "user", "content": prompt}]:
        return prompt, []
    *earlier, last = messages
    history: list[Any] = []
    for message in earlier:
        content = str(message.get("content", ""))
        if message.get("role") == "assistant":
            history.append(ModelResponse(parts=[TextPart(content)]))
        elif message.get("role") == "system":
            history.append(ModelRequest(parts=[pydantic_ai.messages.SystemPromptPart(content)]))
        else:
            history.append(ModelRequest(parts=[UserPromptPart(content)]))
    return str(last.get("content", "")), history


def _model_name(agent: Any) -> str:
    model = agent.model
    if isinstance(model, str):
        return model
    return str(getattr(model, "model_name", None) or "model")


class PydanticAIAgent(FrameworkAgent):
    """A `pydantic_ai.Agent` run with `Agent.run`."""

    @staticmethod
    def accepts(value: Any) -> bool:
        """PydanticAI agents (`pydantic_ai.Agent` and its wrappers)."""
        return isinstance(value, pydantic_ai.agent.AbstractAgent)

    def _limits(self) -> UsageLimits | None:
        keys = ("request_limit", "total_tokens_limit", "tool_calls_limit")
        if not any(key in self.config for key in keys):
            return None
        defaults = UsageLimits()
        return UsageLimits(
            request_limit=self._limit("request_limit", defaults.request_limit),
            total_tokens_limit=self._limit("total_tokens_limit", defaults.total_tokens_limit),
            tool_calls_limit=self._limit("tool_calls_limit", defaults.tool_calls_limit),
        )

    def _limit(self, key: str, default: int | None) -> int | None:
        return int(self.config[key]) if key in self.config else default

    async def run(self, prompt: str, context: CallContext, recorder: Recorder) -> Outcome:
        """One `Agent.run`; its message history becomes the trajectory, also on failure."""
        user_prompt, history = _prompt_and_history(prompt)
        settings = {"seed": context.seed} if self.config.get("seed", True) else None
        output_names = output_tool_names(self.target.output_type)
        outcome: Outcome | None = None
        with capture_run_messages() as messages:
            try:
                result = await self.target.run(
                    user_prompt,
                    message_history=history or None,
                    model_settings=settings,
                    usage_limits=self._limits(),
                )
            except UsageLimitExceeded as exc:
                reason = STOP_MAX_STEPS if "request_limit" in str(exc) else STOP_BUDGET
                outcome = Outcome(stop_reason=reason, metadata={"reason": str(exc)})
            except Exception as exc:
                outcome = Outcome(stop_reason=STOP_ERROR, error=error_text(exc))
        failure = None if outcome is None else outcome.error
        model = _model_name(self.target)
        for step in steps_from_messages(list(messages), model, self.config, output_names, failure):
            recorder.add(step)
        return outcome if outcome is not None else self._outcome(result.output, recorder)

    @staticmethod
    def _outcome(output: Any, recorder: Recorder) -> Outcome:
        if not isinstance(output, DeferredToolRequests):
            return Outcome(output=output)
        for call in output.approvals:
            recorder.add(
                Step(
                    kind="approval",
                    name=call.tool_name,
                    arguments=call.args_as_dict(),
                    approval="requested",
                    call_id=call.tool_call_id,
                )
            )
        return Outcome(stop_reason=STOP_APPROVAL, metadata={"deferred": len(output.calls)})
