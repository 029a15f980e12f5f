"""Scripted, seeded models behind the real OpenAI and Anthropic SDKs, with no network.

A demo suite needs an agent whose model behaves in known ways, fails at known rates and
still goes through the same client code as a real one. Here the official clients are
pointed at an `httpx2` MockTransport; behind it a *script* reads the conversation (the
user's question, the tools offered, the tool outputs received so far) and returns the next
action: tool calls to make, or the final text.

Usage in each reply is, by default, the o200k_base token count of the request body and of
the reply, so cost grows with the conversation as with a real API; a script may report
its own usage instead (a model profile with known token counts). `LatencyModel` gives a
run's simulated duration, since a mock transport answers instantly.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anthropic
import httpx2
import openai

from evals.common.tokens import count_tokens
from evals.kits.toolloop import (
    Adapter,
    AnthropicMessagesAdapter,
    OpenAIResponsesAdapter,
    Prompt,
    ToolRegistry,
    run_tool_loop,
)
from evals.model.results import AgentResponse
from evals.model.trajectory import Step
from evals.vendors import anthropic as anthropic_format
from evals.vendors import openai as openai_format
from evals.vendors.messages import RequestView
from evals.vendors.prices import LIST_PRICES, provider_price

Call = tuple[str, dict[str, Any]]
Action = list[Call] | str


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a script reads from one request: model, question, tools offered, tool outputs.

    `question` is the first user message; `messages` are the text messages of both sides so
    far, as (role, text), and `outputs` the tool outputs of the current turn (a multi-turn
    conversation sends the earlier turns as text). `last_user` is the message to answer.
    """

    model: str
    question: str
    tools: list[str]
    outputs: list[Any]
    messages: tuple[tuple[str, str], ...] = ()

    @property
    def last_user(self) -> str:
        """The latest user message (the question in a single-turn run)."""
        users = [text for role, text in self.messages if role == "user"]
        return users[-1] if users else self.question

    @property
    def turn(self) -> int:
        """The number of user messages so far: 1 in a single-turn run."""
        return max(1, sum(role == "user" for role, _ in self.messages))


Script = Callable[[Conversation, int], Action]
"""The model's policy: (conversation, seed) -> tool calls to make or the final answer."""

Usage = Callable[[Conversation, Action, int], tuple[int, int]]
"""Token usage a reply reports: (conversation, action, tokens sent) -> (input, output)."""


def draw(seed: int, *key: object) -> float:
    """A uniform number in [0, 1) fixed by the run's seed and a key (e.g. the question)."""
    return random.Random("|".join(str(k) for k in (seed, *key))).random()


def choose(rates: Mapping[str, float], value: float, default: str) -> str:
    """The behaviour whose share of [0, 1) contains `value`; `default` for the remainder."""
    for behaviour, rate in rates.items():
        if value < rate:
            return behaviour
        value -= rate
    return default


def read_openai(body: dict[str, Any]) -> Conversation:
    """A Responses API request: the question, tool names and function_call_output items."""
    return _conversation(openai_format.read_request(body))


def read_anthropic(body: dict[str, Any]) -> Conversation:
    """A Messages API request: the question, tool names and tool_result blocks."""
    return _conversation(anthropic_format.read_request(body))


def _conversation(request: RequestView) -> Conversation:
    return Conversation(
        request.model,
        request.user_texts[0],
        request.tools,
        request.outputs,
        tuple(request.messages),
    )


def _usage(
    usage: Usage | None,
    conversation: Conversation,
    action: Action,
    sent: int,
    content: Any,
) -> tuple[int, int]:
    if usage is not None:
        return usage(conversation, action, sent)
    return sent, count_tokens(json.dumps(content, ensure_ascii=False))


def openai_reply(
    script: Script, body: dict[str, Any], seed: int, sent: int, usage: Usage | None = None
) -> dict[str, Any]:
    """The Responses API reply the script gives to one request body."""
    conversation = read_openai(body)
    action = script(conversation, seed)
    index = len(conversation.outputs)
    output = openai_format.output_items(action, index)
    tokens = _usage(usage, conversation, action, sent, output)
    return openai_format.response_body(body["model"], output, index, tokens)


def anthropic_reply(
    script: Script, body: dict[str, Any], seed: int, sent: int, usage: Usage | None = None
) -> dict[str, Any]:
    """The Messages API reply the script gives to one request body."""
    conversation = read_anthropic(body)
    action = script(conversation, seed)
    index = len(conversation.outputs)
    content = anthropic_format.content_blocks(action, index)
    tokens = _usage(usage, conversation, action, sent, content)
    return anthropic_format.message_body(body["model"], content, index, tokens)


Reply = Callable[[Script, dict[str, Any], int, int, Usage | None], dict[str, Any]]


_SDKS: dict[str, tuple[type[openai.OpenAI] | type[anthropic.Anthropic], Reply, str]] = {
    "openai": (openai.OpenAI, openai_reply, "http://simulated/v1"),
    "anthropic": (anthropic.Anthropic, anthropic_reply, "http://simulated"),
}


def simulated_client(
    api: str,
    script: Script,
    seed: int = 0,
    usage: Usage | None = None,
    log: list[int] | None = None,
) -> openai.OpenAI | anthropic.Anthropic:
    """The official client of `api` (openai.OpenAI or anthropic.Anthropic), answered by
    `script` for the run with this seed; `log`, when given, collects each request's tokens."""
    if api not in _SDKS:
        raise ValueError(f"config.api must be 'openai' or 'anthropic', got {api!r}")
    client_cls, reply, base_url = _SDKS[api]

    def handle(request: httpx2.Request) -> httpx2.Response:
        raw = request.content.decode()
        sent = count_tokens(raw)
        if log is not None:
            log.append(sent)
        return httpx2.Response(200, json=reply(script, json.loads(raw), seed, sent, usage))

    return client_cls(
        api_key="sk-simulated",
        base_url=base_url,
        http_client=httpx2.Client(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )


def simulated_async_openai(
    script: Script, seed: Callable[[], int] = lambda: 0
) -> openai.AsyncOpenAI:
    """An `openai.AsyncOpenAI` client whose Responses API is answered by `script`.

    For agent frameworks that take an async client (the OpenAI Agents SDK, PydanticAI's
    OpenAI models). One client serves concurrent runs: `seed()` is read on each request,
    so it can return the seed of the run being served.
    """

    async def handle(request: httpx2.Request) -> httpx2.Response:
        raw = request.content.decode()
        return httpx2.Response(
            200, json=openai_reply(script, json.loads(raw), seed(), count_tokens(raw))
        )

    return openai.AsyncOpenAI(
        api_key="sk-simulated",
        base_url="http://simulated/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )


def simulated_adapter(
    api: str,
    script: Script,
    model: str,
    seed: int,
    usage: Usage | None = None,
    *,
    max_tokens: int = 1024,
) -> Adapter:
    """A tool-loop adapter over the official SDK of `api` (openai or anthropic), answered by
    `script` under the model name `model` for the run with this seed.

    `max_tokens` is the limit an Anthropic request carries (it counts in the request's tokens).
    """
    client = simulated_client(api, script, seed, usage)
    if isinstance(client, openai.OpenAI):
        return OpenAIResponsesAdapter(client, model)
    return AnthropicMessagesAdapter(client, model, max_tokens=max_tokens)


def run_seed(context: Mapping[str, Any] | None) -> int:
    """The seed of a provider call: promptfoo's context `seed`, else its `repeatIndex`, else 0,
    so that each repeat of a case is a different but reproducible run."""
    context = context or {}
    return int(context.get("seed", context.get("repeatIndex", 0)))


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """Simulated duration of a run: a fixed time per model call plus a time per tool call."""

    model_call_ms: float
    tool_ms: Mapping[str, float] = field(default_factory=dict)
    default_tool_ms: float = 0.0

    def run_ms(self, steps: Sequence[Step]) -> float:
        """Milliseconds the run would have taken against the simulated model and tools."""
        total = 0.0
        for step in steps:
            if step.kind == "model":
                total += self.model_call_ms
            elif step.kind == "tool":
                total += self.tool_ms.get(step.name, self.default_tool_ms)
        return total


def provider_response(
    response: AgentResponse,
    *,
    latency_ms: float | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The native rich provider dict (promptfoo's fields plus trajectory) of a tool-loop run.

    `latency_ms`, when given, is reported as the run's latency (e.g. a simulated duration);
    `metadata` is merged over the loop's own.
    """
    data: dict[str, Any] = {
        "output": response.output,
        "tokenUsage": response.token_usage,
        "cost": response.cost,
        "stopReason": response.stop_reason,
        "trajectory": [step.to_dict() for step in response.trajectory],
        "metadata": {**response.metadata, **(metadata or {})},
    }
    if response.error is not None:
        data["error"] = response.error
    if latency_ms is not None:
        data["latencyMs"] = latency_ms
    return data


SIMULATED_PRICE = LIST_PRICES["gpt-4o"]
"""What a simulated model without a list price of its own costs: gpt-4o's list price."""


def run_simulated_agent(
    prompt: str,
    options: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    *,
    script: Script,
    tools: ToolRegistry,
    system: str,
    model: str,
    api: str = "openai",
    max_steps: int = 6,
    usage: Usage | None = None,
    max_tokens: int = 1024,
    latencies: Mapping[str, LatencyModel] | None = None,
) -> dict[str, Any]:
    """One run of a demo agent as a promptfoo Python provider: the tool loop over `tools`,
    answered by `script` through the SDK of `api`, as the rich provider dict. A prompt
    that is a chat array (a simulated user's conversation) is one turn of the conversation.

    The provider config's keys api, model, max_steps, token_budget and price {input_per_mtok,
    output_per_mtok} override the defaults given here. With `latencies` (per model), the run
    reports its simulated duration. The metadata names the api and the model.
    """
    config = dict((options or {}).get("config") or {})
    api = str(config.get("api", api))
    model = str(config.get("model", model))
    response = run_tool_loop(
        simulated_adapter(api, script, model, run_seed(context), usage, max_tokens=max_tokens),
        tools,
        conversation_prompt(prompt),
        system=system,
        max_steps=int(config.get("max_steps", max_steps)),
        token_budget=config.get("token_budget"),
        price=provider_price(model, config) or SIMULATED_PRICE,
    )
    latency_ms = latencies[model].run_ms(response.trajectory) if latencies else None
    return provider_response(response, latency_ms=latency_ms, metadata={"api": api, "model": model})


def conversation_prompt(prompt: str) -> Prompt:
    """A provider's prompt as the tool loop takes it: a chat array (a simulated user's
    conversation so far) as its messages, any other text as the user's message."""
    from evals.vendors.messages import ChatPromptError, parse_chat_prompt

    try:
        messages = parse_chat_prompt(prompt)
    except ChatPromptError:
        return prompt
    if (
        len(messages) == 1
        and messages[0].get("role") == "user"
        and messages[0]["content"] == prompt
    ):
        return prompt
    return messages
