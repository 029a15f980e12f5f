"""OpenAI Agents SDK agents: `openai-agents:MODULE:AGENT`.

The agent runs through `agents.Runner.run` with run hooks that record, in order:

- each model call: the agent that made it, its model, timing, input and output tokens
  (priced), the text it wrote and the function calls it requested;
- each local tool call: call id, arguments, result, timing; a tool that raised is an error
  step (read through the run config's `tool_error_formatter`, so the model still gets the
  SDK's default message);
- each handoff: a tool step named by the handoff's tool (`transfer_to_refunds`) with
  `metadata.handoff` = the agent handed to; model steps name their agent in
  `metadata.agent`, so sub-agents stay visible.

The run's stop reason: `done` (the final output; structured outputs as data),
`max_steps` (`MaxTurnsExceeded`), `guardrail` (an input, output or tool guardrail
tripwire; `metadata.guardrail` names it), `approval_required` (tools with
`needs_approval` interrupted the run; one approval step per pending call), `error` (any
other exception, as an error row keeping the steps so far). Config: `max_turns`,
`tracing_disabled` (the SDK's own tracing), and the pricing keys.
"""

from __future__ import annotations

import time
from typing import Any

import agents
from agents import RunConfig, RunHooks, Runner
from agents.exceptions import (
    InputGuardrailTripwireTriggered,
    MaxTurnsExceeded,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)
from agents.handoffs import Handoff
from agents.models import get_default_model
from agents.run_config import DEFAULT_MAX_TURNS

from evals.agents.base import CallContext
from evals.agents.frameworks.common import (
    STOP_APPROVAL,
    STOP_GUARDRAIL,
    STOP_MAX_STEPS,
    FrameworkAgent,
    Outcome,
    Recorder,
    arguments_dict,
    jsonable,
)
from evals.model.trajectory import Step
from evals.vendors.messages import parse_chat_prompt

_GUARDRAILS = (
    InputGuardrailTripwireTriggered,
    OutputGuardrailTripwireTriggered,
    ToolInputGuardrailTripwireTriggered,
    ToolOutputGuardrailTripwireTriggered,
)


def model_name(agent: Any, run_config: RunConfig) -> str:
    """The model an agent calls: its own setting, the run config's, or the SDK default."""
    model = agent.model or run_config.model
    if isinstance(model, str):
        return model
    return str(getattr(model, "model", None) or get_default_model())


def _text(item: Any) -> str:
    return "".join(getattr(part, "text", "") or "" for part in getattr(item, "content", []))


def _handoff_tool_name(source: Any, target: Any) -> str:
    for entry in getattr(source, "handoffs", []):
        if isinstance(entry, Handoff) and entry.agent_name == target.name:
            return entry.tool_name
    return Handoff.default_tool_name(target)


class _Hooks(RunHooks[Any]):
    """Run hooks that record the run's model calls, tool calls and handoffs."""

    def __init__(self, recorder: Recorder, run_config: RunConfig) -> None:
        self.recorder = recorder
        self.run_config = run_config
        self.requested: dict[str, Any] = {}

    async def on_llm_start(
        self, context: Any, agent: Any, system_prompt: Any, input_items: Any
    ) -> None:
        """Open a model step for the agent."""
        self.recorder.model_started(
            ("model", id(agent)), model_name(agent, self.run_config), agent=agent.name
        )

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        """Close it with the response's usage, text and requested function calls."""
        calls = [item for item in response.output if getattr(item, "type", "") == "function_call"]
        for call in calls:
            self.requested[call.call_id] = call
        text = "".join(_text(item) for item in response.output if item.type == "message")
        self.recorder.model_ended(
            ("model", id(agent)),
            input_tokens=response.usage.input_tokens,
            output_tokens=response.usage.output_tokens,
            text=text,
            tool_calls=[call.name for call in calls],
            response_id=response.response_id,
        )

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        """Open a tool step keyed by the call id."""
        call_id = getattr(context, "tool_call_id", None)
        arguments = getattr(context, "tool_arguments", None)
        self.recorder.tool_started(call_id, tool.name, arguments, agent=agent.name)

    async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
        """Close the tool step with the tool's result."""
        self.recorder.tool_ended(getattr(context, "tool_call_id", None), jsonable(result))

    async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
        """Record the handoff as the tool call the model made to request it."""
        name = _handoff_tool_name(from_agent, to_agent)
        call = next((c for c in self.requested.values() if c.name == name), None)
        arguments = None if call is None else call.arguments
        now = time.time()
        self.recorder.add(
            Step(
                kind="tool",
                name=name,
                arguments=arguments_dict(arguments) if arguments else None,
                result={"assistant": to_agent.name},
                started_at=now,
                ended_at=now,
                call_id=None if call is None else call.call_id,
                metadata={"handoff": to_agent.name, "agent": from_agent.name},
            )
        )
        if call is not None:
            self.requested.pop(call.call_id, None)

    def tool_error(self, args: Any) -> None:
        """`tool_error_formatter`: mark the failed call's step; the model keeps the default."""
        if args.kind == "tool_exception" and args.error is not None:
            self.recorder.tool_failed(args.call_id, f"{type(args.error).__name__}: {args.error}")
        elif args.kind == "approval_rejected":
            self.recorder.tool_failed(args.call_id, args.default_message)


def _guardrail(
    exc: InputGuardrailTripwireTriggered
    | OutputGuardrailTripwireTriggered
    | ToolInputGuardrailTripwireTriggered
    | ToolOutputGuardrailTripwireTriggered,
) -> dict[str, Any]:
    if isinstance(exc, (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered)):
        result = exc.guardrail_result
        kind = "input" if isinstance(exc, InputGuardrailTripwireTriggered) else "output"
        return {
            "name": result.guardrail.get_name(),
            "kind": kind,
            "info": jsonable(result.output.output_info),
        }
    kind = "tool_input" if isinstance(exc, ToolInputGuardrailTripwireTriggered) else "tool_output"
    return {
        "name": exc.guardrail.get_name(),
        "kind": kind,
        "info": jsonable(exc.output.output_info),
    }


class OpenAIAgentsAgent(FrameworkAgent):
    """An `agents.Agent` run with `Runner.run`."""

    @staticmethod
    def accepts(value: Any) -> bool:
        """Agents SDK agents (`agents.Agent`)."""
        return isinstance(value, agents.Agent)

    def _run_config(self, context: CallContext) -> RunConfig:
        config = RunConfig(
            workflow_name=f"evals {context.suite_id}",
            trace_metadata={
                "evals.case": context.case_id,
                "evals.agent": context.agent,
                "evals.repeat": str(context.repeat),
                "evals.seed": str(context.seed),
            },
        )
        if "tracing_disabled" in self.config:
            config.tracing_disabled = bool(self.config["tracing_disabled"])
        return config

    async def run(self, prompt: str, context: CallContext, recorder: Recorder) -> Outcome:
        """One `Runner.run`, its ending mapped onto the harness's stop reasons."""
        run_config = self._run_config(context)
        hooks = _Hooks(recorder, run_config)
        run_config.tool_error_formatter = hooks.tool_error
        messages = parse_chat_prompt(prompt)
        run_input: Any = prompt if messages == [{"role": "user", "content": prompt}] else messages
        try:
            result = await Runner.run(
                self.target,
                run_input,
                max_turns=int(self.config.get("max_turns", DEFAULT_MAX_TURNS)),
                hooks=hooks,
                run_config=run_config,
            )
        except MaxTurnsExceeded as exc:
            return Outcome(stop_reason=STOP_MAX_STEPS, metadata={"reason": exc.message})
        except _GUARDRAILS as exc:
            return Outcome(stop_reason=STOP_GUARDRAIL, metadata={"guardrail": _guardrail(exc)})
        metadata = {"last_agent": result.last_agent.name}
        interruptions = list(getattr(result, "interruptions", None) or [])
        if interruptions:
            for item in interruptions:
                raw = item.raw_item
                recorder.add(
                    Step(
                        kind="approval",
                        name=item.tool_name or "",
                        arguments=arguments_dict(getattr(raw, "arguments", None)),
                        approval="requested",
                        call_id=getattr(raw, "call_id", None),
                        metadata={"agent": item.agent.name},
                    )
                )
            return Outcome(stop_reason=STOP_APPROVAL, metadata=metadata)
        return Outcome(output=result.final_output, metadata=metadata)
