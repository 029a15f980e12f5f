"""LangGraph graphs and LangChain runnables: `langgraph:MODULE:GRAPH`.

GRAPH is a compiled graph (a `StateGraph` is compiled on load), a prebuilt agent, or any
LangChain `Runnable`. It is invoked with `ainvoke` (sync nodes and tools run in the
framework's worker threads) and a callback handler that records, from LangChain's own
callbacks, every chat-model call (model name, LangGraph node, timing, token usage from
`usage_metadata`, priced; the tool calls it asked for) and every tool run (call id,
arguments, result; a tool that raised or answered a `ToolMessage` with status `error` is an
error step). Model calls inside subgraphs and tools (sub-agents) are recorded too, with
their node in `metadata.node`.

Input: `{"messages": [...]}` (the prompt, or its chat array) — `config.input_key` names
another state key, or `""` passes the prompt text as is. Output: the graph's
`structured_response` when set, else the text of the last message under
`config.output_key` (default `messages`). The run config carries `recursion_limit`
(config, default 25), a fresh `thread_id` per run (for graphs with a checkpointer) and
the run's `seed` under `configurable`. Stop reasons: `done`, `max_steps`
(`GraphRecursionError`), `approval_required` (the graph stopped on `interrupt()`; one
approval step per pending interrupt), `error`.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langgraph.errors import GraphRecursionError
from langgraph.graph import StateGraph

from evals.agents.base import CallContext
from evals.agents.frameworks.common import (
    STOP_APPROVAL,
    STOP_MAX_STEPS,
    FrameworkAgent,
    Outcome,
    Recorder,
    error_text,
    jsonable,
)
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step
from evals.vendors.messages import parse_chat_prompt


def _model_name(serialized: dict[str, Any] | None, metadata: dict[str, Any] | None) -> str:
    if metadata and metadata.get("ls_model_name"):
        return str(metadata["ls_model_name"])
    serialized = serialized or {}
    kwargs = serialized.get("kwargs") or {}
    for key in ("model_name", "model"):
        if isinstance(kwargs.get(key), str):
            return kwargs[key]
    return str(serialized.get("name") or (serialized.get("id") or ["chat_model"])[-1])


def message_text(message: Any) -> Any:
    """The text of a LangChain message (content blocks joined), or the value itself."""
    if not isinstance(message, BaseMessage):
        return message
    return str(message.text)


class TrajectoryCallbacks(BaseCallbackHandler):
    """LangChain callbacks that record model and tool calls onto a Recorder.

    `run_inline` keeps the callbacks on the calling thread or event loop, so steps are
    recorded in the order the framework makes the calls.
    """

    run_inline = True

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: uuid.UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open a model step named by the model, in its graph node."""
        node = (metadata or {}).get("langgraph_node")
        self.recorder.model_started(run_id, _model_name(serialized, metadata), node=node)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: uuid.UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Completion models: a model step, as for chat models."""
        node = (metadata or {}).get("langgraph_node")
        self.recorder.model_started(run_id, _model_name(serialized, metadata), node=node)

    def on_llm_end(self, response: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        """Close the model step with the message's usage, text and requested tool calls."""
        generations = [g for batch in response.generations for g in batch]
        message = getattr(generations[0], "message", None) if generations else None
        usage = getattr(message, "usage_metadata", None) or {}
        response_metadata = getattr(message, "response_metadata", None) or {}
        text = message_text(message) if message is not None else None
        if text is None and generations:
            text = generations[0].text
        self.recorder.model_ended(
            run_id,
            name=response_metadata.get("model_name"),
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            text=text,
            tool_calls=[call["name"] for call in getattr(message, "tool_calls", None) or []],
            finish_reason=response_metadata.get("finish_reason")
            or response_metadata.get("stop_reason"),
        )

    def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        """A model call that raised."""
        self.recorder.model_failed(run_id, error_text(error))

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: uuid.UUID,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Open a tool step with the call's arguments and the model's call id."""
        self.recorder.tool_started(
            run_id,
            str((serialized or {}).get("name") or kwargs.get("name") or "tool"),
            inputs if inputs is not None else input_str,
            call_id=kwargs.get("tool_call_id"),
            node=(metadata or {}).get("langgraph_node"),
        )

    def on_tool_end(self, output: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        """Close the tool step; a ToolMessage with status `error` is the tool's error."""
        if getattr(output, "status", None) == "error":
            self.recorder.tool_ended(run_id, error=str(message_text(output)))
        else:
            self.recorder.tool_ended(run_id, jsonable(message_text(output)))

    def on_tool_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        """A tool that raised (whether or not the graph then handed the error to the model)."""
        self.recorder.tool_failed(run_id, error_text(error))


def _is_graph(value: Any) -> bool:
    return isinstance(value, (Runnable, StateGraph))


class LangGraphAgent(FrameworkAgent):
    """A LangGraph graph or LangChain runnable, run with `ainvoke`."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        super().__init__(spec, root)
        if isinstance(self.target, StateGraph):
            self.target = self.target.compile()

    @staticmethod
    def accepts(value: Any) -> bool:
        """Compiled graphs, `StateGraph`s (compiled on load) and LangChain runnables."""
        return _is_graph(value)

    def _input(self, prompt: str) -> Any:
        key = self.config.get("input_key", "messages")
        return {key: parse_chat_prompt(prompt)} if key else prompt

    def _output(self, result: Any) -> Any:
        if isinstance(result, dict):
            if result.get("structured_response") is not None:
                return result["structured_response"]
            value = result.get(self.config.get("output_key", "messages"), result)
            if isinstance(value, list) and value:
                return message_text(value[-1])
            return value
        return message_text(result)

    async def run(self, prompt: str, context: CallContext, recorder: Recorder) -> Outcome:
        """One `ainvoke` with the recording callbacks; interrupts and recursion mapped."""
        run_config = {
            "callbacks": [TrajectoryCallbacks(recorder)],
            "recursion_limit": int(self.config.get("recursion_limit", 25)),
            "configurable": {"thread_id": str(uuid.uuid4()), "seed": context.seed},
            "metadata": {"evals_case": context.case_id, "evals_repeat": context.repeat},
        }
        try:
            result = await self.target.ainvoke(self._input(prompt), config=run_config)
        except GraphRecursionError as exc:
            return Outcome(stop_reason=STOP_MAX_STEPS, metadata={"reason": str(exc)})
        interrupts = result.get("__interrupt__") if isinstance(result, dict) else None
        if interrupts:
            for interrupt in interrupts:
                value = jsonable(getattr(interrupt, "value", interrupt))
                recorder.add(
                    Step(
                        kind="approval",
                        name=_interrupt_name(value),
                        arguments=value if isinstance(value, dict) else {"value": value},
                        approval="requested",
                        call_id=getattr(interrupt, "id", None),
                    )
                )
            return Outcome(stop_reason=STOP_APPROVAL)
        return Outcome(output=self._output(result))


def _interrupt_name(value: Any) -> str:
    """The tool an interrupt asks approval for, when its payload names one."""
    if isinstance(value, dict):
        for key in ("tool", "name", "action"):
            if isinstance(value.get(key), str):
                return value[key]
    return "interrupt"
