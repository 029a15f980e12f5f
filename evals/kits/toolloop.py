"""A provider-agnostic tool loop: tool registry, guarded ReAct loop and SDK adapters.

The model proposes, the code disposes: every tool call is validated against a pydantic
model, executed by the program and returned to the model as data (`{"error": ...}` instead
of an exception). The loop keeps the guardrails of a serious agent: a step limit,
repeated-call detection, invalid JSON and unknown tools as errors, a token budget and
approval for tools with effects. Each model call and tool call becomes a `Step`, so the
harness grades this loop's runs like any other trajectory.

The adapters speak the OpenAI Responses API and the Anthropic Messages API through the
official SDK clients; any client with the same method (a vLLM or Ollama server behind a
`base_url`, a mock transport) plugs in unchanged, and a user may write their own adapter
by implementing `Adapter`.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from evals.common.tokens import count_tokens
from evals.model.results import AgentResponse
from evals.model.trajectory import EFFECT_CLASSES, Step
from evals.vendors import anthropic as anthropic_format
from evals.vendors import openai as openai_format
from evals.vendors.messages import ToolCall as ToolCall
from evals.vendors.messages import ToolResult
from evals.vendors.prices import Price as Price
from evals.vendors.prices import call_cost

StopReason = Literal["done", "max_steps", "budget_exhausted", "approval_required", "error"]


@dataclass(frozen=True, slots=True)
class Wording:
    """The key of a successful tool output and the texts of the errors the model reads.

    The model sees these strings, so a suite in another language can speak to it in that
    language; graders read `Step.result` and `Step.error`, never these raw dicts.
    """

    result_key: str = "result"
    unknown_tool: str = "unknown tool: {name}"
    invalid_arguments: str = "invalid arguments: {details}"
    invalid_json: str = "call with invalid JSON"
    repeated_call: str = "repeated call: you already have the result"
    approval_denied: str = "approval denied for {name}"


ENGLISH = Wording()
SPANISH = Wording(
    result_key="resultado",
    unknown_tool="herramienta desconocida: {name}",
    invalid_arguments="argumentos no válidos: {details}",
    invalid_json="llamada con JSON no válido",
    repeated_call="llamada repetida: ya tienes el resultado",
    approval_denied="aprobación denegada para {name}",
)


@dataclass(frozen=True, slots=True)
class Tool:
    """A tool the model may call: its contract (name, description, argument model) and code.

    `effect` is one of the effect classes (read, compute, draft, write, send, publish,
    delete); `requires_approval` makes the loop ask before running it.
    """

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[..., Any]
    effect: str | None = None
    requires_approval: bool = False
    _schema: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.effect is not None and self.effect not in EFFECT_CLASSES:
            raise ValueError(
                f"effect must be one of {', '.join(EFFECT_CLASSES)}, got {self.effect!r}"
            )
        object.__setattr__(self, "_schema", self.args_model.model_json_schema())

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as the model sees it (built once per tool)."""
        return copy.deepcopy(self._schema)


def _validation_details(error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        loc = item.get("loc") or ()
        parts.append(f"{loc[0]}: {item['msg']}" if loc else str(item["msg"]))
    return "; ".join(parts)


class ToolRegistry:
    """The tools an agent may use, and the one place that validates and runs them."""

    def __init__(self, tools: Sequence[Tool] = (), wording: Wording = ENGLISH) -> None:
        self.wording = wording
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        """Register a tool; names are unique."""
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        """The tool with this name, or None."""
        return self._tools.get(name)

    @property
    def tools(self) -> list[Tool]:
        """Registered tools in registration order."""
        return list(self._tools.values())

    @property
    def names(self) -> list[str]:
        """Registered tool names in registration order."""
        return list(self._tools)

    def subset(self, names: Sequence[str]) -> ToolRegistry:
        """A registry with only the named tools (same wording), e.g. a baseline's toolset."""
        missing = [n for n in names if n not in self._tools]
        if missing:
            raise KeyError(f"unknown tools: {', '.join(missing)}")
        return ToolRegistry([self._tools[n] for n in names], self.wording)

    def execute(self, name: str, args: Any) -> dict[str, Any]:
        """Validate and run one call; failures come back as `{"error": ...}`, never raised."""
        tool = self._tools.get(name)
        if tool is None:
            return {"error": self.wording.unknown_tool.format(name=name)}
        try:
            parsed = tool.args_model.model_validate(args)
        except ValidationError as exc:
            details = _validation_details(exc)
            return {"error": self.wording.invalid_arguments.format(details=details)}
        try:
            return {self.wording.result_key: tool.fn(**parsed.model_dump())}
        except Exception as exc:
            return {"error": str(exc) or type(exc).__name__}


@dataclass(slots=True)
class ModelTurn:
    """One model reply: final text and/or tool calls, with usage when the provider reports it.

    `request` is what was sent, so the loop can count tokens when usage is missing.
    """

    text: str | None
    calls: list[ToolCall]
    input_tokens: int | None = None
    output_tokens: int | None = None
    request: dict[str, Any] = field(default_factory=dict)


class _CreateAPI(Protocol):
    @property
    def create(self) -> Callable[..., Any]: ...


class ResponsesClient(Protocol):
    """What the Responses adapter needs of a client: `responses.create` (openai.OpenAI)."""

    @property
    def responses(self) -> _CreateAPI: ...


class MessagesClient(Protocol):
    """What the Messages adapter needs of a client: `messages.create` (anthropic.Anthropic)."""

    @property
    def messages(self) -> _CreateAPI: ...


Prompt = str | Sequence[Mapping[str, Any]]
"""What the loop starts from: the user's text, or a conversation so far as chat messages
(`{role, content}`; the agent's earlier answers as `assistant` messages, system messages
added to the system text)."""


def chat_history(prompt: Prompt, system: str | None) -> tuple[list[dict[str, str]], str | None]:
    """(user and assistant messages, system text) of a prompt: a text is one user message;
    a conversation's system messages are appended to `system`, and its other messages are
    kept as text in order."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}], system
    messages: list[dict[str, str]] = []
    systems = [system] if system else []
    for message in prompt:
        role = str(message.get("role") or "user")
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if role == "system":
            systems.append(text)
        else:
            messages.append(
                {"role": "assistant" if role == "assistant" else "user", "content": text}
            )
    return messages, "\n\n".join(systems) or None


class Adapter(Protocol):
    """The small boundary between the loop and one provider's wire format."""

    model: str

    def begin(self, prompt: Prompt, system: str | None) -> Any:
        """A new conversation holding the user's prompt (or the conversation so far)."""
        ...

    def send(self, conversation: Any, tools: Sequence[Tool]) -> ModelTurn:
        """Ask the model for its next turn and append that turn to the conversation."""
        ...

    def add_results(self, conversation: Any, results: list[ToolResult]) -> None:
        """Append the outputs of one turn's tool calls, in call order."""
        ...


def _dump(obj: Any) -> Any:
    return obj.model_dump(exclude_none=True) if hasattr(obj, "model_dump") else obj


def _definitions(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    return [
        {"name": t.name, "description": t.description, "parameters": t.parameters()} for t in tools
    ]


class OpenAIResponsesAdapter:
    """OpenAI Responses API: `function_call` items in, `function_call_output` items back."""

    def __init__(self, client: ResponsesClient, model: str, **params: Any) -> None:
        self.client = client
        self.model = model
        self.params = params
        self.system: str | None = None

    def begin(self, prompt: Prompt, system: str | None) -> list[Any]:
        """Input items starting with the user's message (or the conversation's messages);
        the system text goes to `instructions`."""
        messages, self.system = chat_history(prompt, system)
        return list(messages)

    def send(self, conversation: list[Any], tools: Sequence[Tool]) -> ModelTurn:
        """Call `responses.create` and read its function calls and output text."""
        request: dict[str, Any] = {"model": self.model, "input": list(conversation), **self.params}
        if self.system:
            request["instructions"] = self.system
        if tools:
            request["tools"] = openai_format.responses_tools(_definitions(tools))
        response = self.client.responses.create(**request)
        reply = openai_format.read_response(_dump(response))
        conversation.extend(_dump(item) for item in response.output)
        return ModelTurn(
            text=reply.text,
            calls=reply.calls,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            request=request,
        )

    def add_results(self, conversation: list[Any], results: list[ToolResult]) -> None:
        """One `function_call_output` item per call, carrying the JSON of the tool's output."""
        conversation.extend(openai_format.tool_outputs(results))


class AnthropicMessagesAdapter:
    """Anthropic Messages API: `tool_use` blocks in, a user message of `tool_result` blocks back."""

    def __init__(
        self, client: MessagesClient, model: str, max_tokens: int = 1024, **params: Any
    ) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
        self.params = params
        self.system: str | None = None

    def begin(self, prompt: Prompt, system: str | None) -> list[dict[str, Any]]:
        """Messages starting with the user's prompt (or the conversation's messages, those
        of one side in a row joined, as the API alternates roles); the system text goes to
        `system`."""
        messages, self.system = chat_history(prompt, system)
        joined: list[dict[str, Any]] = []
        for message in messages:
            if joined and joined[-1]["role"] == message["role"]:
                joined[-1]["content"] += "\n\n" + message["content"]
            else:
                joined.append(dict(message))
        return joined

    def send(self, conversation: list[dict[str, Any]], tools: Sequence[Tool]) -> ModelTurn:
        """Call `messages.create` and read its tool_use and text blocks."""
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": list(conversation),
            **self.params,
        }
        if self.system:
            request["system"] = self.system
        if tools:
            request["tools"] = anthropic_format.tools(_definitions(tools))
        response = self.client.messages.create(**request)
        reply = anthropic_format.read_message(_dump(response))
        conversation.append({"role": "assistant", "content": [_dump(b) for b in response.content]})
        return ModelTurn(
            text=reply.text,
            calls=reply.calls,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            request=request,
        )

    def add_results(self, conversation: list[dict[str, Any]], results: list[ToolResult]) -> None:
        """All results of a turn in one user message, errors flagged with `is_error`."""
        conversation.append(anthropic_format.tool_results(results))


def _jsonable(value: Any) -> Any:
    return json.loads(
        json.dumps(value, default=lambda o: _dump(o) if hasattr(o, "model_dump") else str(o))
    )


@dataclass(slots=True)
class _LoopState:
    steps: list[Step] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    sent: int = 0
    received: int = 0
    cost: float = 0.0


def _model_step(
    adapter: Adapter, turn: ModelTurn, started: float, ended: float, price: Price | None
) -> Step:
    if turn.input_tokens is None:
        turn.input_tokens = count_tokens(json.dumps(_jsonable(turn.request), ensure_ascii=False))
    if turn.output_tokens is None:
        produced = (turn.text or "") + "".join(c.name + (c.raw_arguments or "") for c in turn.calls)
        turn.output_tokens = count_tokens(produced)
    return Step(
        kind="model",
        name=adapter.model,
        result=turn.text,
        started_at=started,
        ended_at=ended,
        input_tokens=turn.input_tokens,
        output_tokens=turn.output_tokens,
        cost=call_cost(price, turn.input_tokens, turn.output_tokens),
        metadata={"tool_calls": [c.name for c in turn.calls]},
    )


def _call_key(call: ToolCall) -> str:
    args = call.arguments if call.arguments is not None else call.raw_arguments
    return json.dumps([call.name, args], sort_keys=True, default=str)


def _tool_step(
    registry: ToolRegistry, call: ToolCall, output: dict[str, Any], started: float, **metadata: Any
) -> Step:
    tool = registry.get(call.name)
    meta = {k: v for k, v in metadata.items() if v}
    if call.arguments is None:
        meta["raw_arguments"] = call.raw_arguments
    return Step(
        kind="tool",
        name=call.name,
        arguments=call.arguments,
        result=output.get(registry.wording.result_key),
        error=output.get("error"),
        started_at=started,
        ended_at=time.time(),
        effect=tool.effect if tool else None,
        call_id=call.call_id,
        metadata=meta,
    )


def _approval_step(
    call: ToolCall, tool: Tool, decision: str, started: float, error: str | None = None
) -> Step:
    return Step(
        kind="approval",
        name=call.name,
        arguments=call.arguments,
        approval=decision,
        error=error,
        effect=tool.effect,
        call_id=call.call_id,
        started_at=started,
        ended_at=time.time(),
    )


def _finish(
    state: _LoopState,
    stop_reason: StopReason,
    output: str | None,
    price: Price | None,
    **extra: Any,
) -> AgentResponse:
    return AgentResponse(
        output=output,
        error=extra.pop("error", None),
        token_usage={
            "prompt": state.sent,
            "completion": state.received,
            "total": state.sent + state.received,
        },
        cost=state.cost if price is not None else None,
        trajectory=state.steps,
        stop_reason=stop_reason,
        metadata={"model_calls": sum(s.kind == "model" for s in state.steps), **extra},
    )


def run_tool_loop(
    adapter: Adapter,
    registry: ToolRegistry,
    prompt: Prompt,
    *,
    system: str | None = None,
    max_steps: int = 6,
    token_budget: int | None = None,
    price: Price | None = None,
    approve: Callable[[ToolCall], bool] | None = None,
) -> AgentResponse:
    """Run the ReAct loop until the model answers or a guardrail stops it.

    `prompt` is the user's text, or the conversation so far (one turn of a multi-turn
    conversation: the loop answers its last user message). A step is one model call;
    after `max_steps` calls the run is cut without an answer. A call repeated with the
    same name and arguments is not executed again. When the input tokens sent so far
    exceed `token_budget`, pending calls are dropped and the run stops. A tool with
    `requires_approval` runs only if `approve(call)` says so; with no `approve`, the run
    stops asking for approval. Provider failures end the run with stop_reason "error"
    and the message in `error`.
    """
    state = _LoopState()
    wording = registry.wording
    conversation = adapter.begin(prompt, system)
    for _ in range(max_steps):
        started = time.time()
        try:
            turn = adapter.send(conversation, registry.tools)
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            state.steps.append(
                Step(
                    kind="model",
                    name=adapter.model,
                    error=message,
                    started_at=started,
                    ended_at=time.time(),
                )
            )
            return _finish(state, "error", None, price, error=message)
        step = _model_step(adapter, turn, started, time.time(), price)
        state.steps.append(step)
        state.sent += step.input_tokens or 0
        state.received += step.output_tokens or 0
        state.cost += step.cost or 0.0
        if not turn.calls:
            return _finish(state, "done", turn.text or "", price)
        if token_budget is not None and state.sent > token_budget:
            return _finish(state, "budget_exhausted", None, price)
        results: list[ToolResult] = []
        for call in turn.calls:
            call_started = time.time()
            key = _call_key(call)
            repeated = key in state.seen
            state.seen.add(key)
            tool = registry.get(call.name)
            if repeated:
                output = {"error": wording.repeated_call}
            elif call.arguments is None:
                output = {"error": wording.invalid_json}
            elif tool is not None and tool.requires_approval:
                state.steps.append(_approval_step(call, tool, "requested", call_started))
                if approve is None:
                    return _finish(state, "approval_required", None, price)
                if not approve(call):
                    denial = wording.approval_denied.format(name=call.name)
                    state.steps.append(_approval_step(call, tool, "denied", call_started, denial))
                    results.append((call, {"error": denial}))
                    continue
                state.steps.append(_approval_step(call, tool, "granted", call_started))
                output = registry.execute(call.name, call.arguments)
            else:
                output = registry.execute(call.name, call.arguments)
            state.steps.append(_tool_step(registry, call, output, call_started, repeated=repeated))
            results.append((call, output))
        adapter.add_results(conversation, results)
    return _finish(state, "max_steps", None, price)
