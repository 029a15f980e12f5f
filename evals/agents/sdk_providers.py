"""Model APIs through the official SDKs: openai:chat, openai:responses, anthropic:messages.

One call is one model request, with promptfoo's defaults and output rules: the text, or
the requested tool calls when the model asks for tools; token usage from the response;
cost from config (`cost`, `inputCost`, `outputCost` per token) or the list price; the
finish reason in OpenAI's words. The trajectory holds the model call and one tool step per
tool call the model requested (requested only: nothing is executed). `apiBaseUrl` (or
`base_url`) points the SDK at any compatible server such as vLLM or Ollama.
"""

from __future__ import annotations

import inspect
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

import anthropic
import openai
from opentelemetry import context as otel_context
from opentelemetry import propagate

from evals.agents.base import CallContext
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step
from evals.vendors import anthropic as anthropic_format
from evals.vendors import openai as openai_format
from evals.vendors.messages import ChatPromptError, Reply, parse_chat_prompt
from evals.vendors.prices import call_cost, provider_price


@contextmanager
def remote_parent(traceparent: str | None) -> Iterator[None]:
    """Make the run's trace the current OpenTelemetry context for the block.

    SDKs that trace their own calls (the Anthropic SDK does) start their span under the
    current context and send its `traceparent`, replacing ours; with the run's context
    current, that span joins the run's trace instead of starting a new one.
    """
    if not traceparent:
        yield
        return
    token = otel_context.attach(propagate.extract({"traceparent": traceparent}))
    try:
        yield
    finally:
        otel_context.detach(token)


_APIS = {"openai": ("chat", "responses"), "anthropic": ("messages",)}
_DEFAULT_API = {"openai": "chat", "anthropic": "messages"}
_CHAT_OPTIONAL = (
    "seed",
    "top_p",
    "presence_penalty",
    "frequency_penalty",
    "stop",
    "response_format",
    "reasoning_effort",
    "max_completion_tokens",
    "user",
    "metadata",
    "store",
    "service_tier",
    "parallel_tool_calls",
)
_RESPONSES_OPTIONAL = (
    "instructions",
    "top_p",
    "reasoning",
    "text",
    "metadata",
    "store",
    "parallel_tool_calls",
    "max_output_tokens",
    "temperature",
)
_ANTHROPIC_OPTIONAL = ("top_p", "top_k", "stop_sequences", "metadata", "thinking")


def parse_sdk_id(provider_id: str) -> tuple[str, str, str]:
    """(vendor, api, model) of `openai:chat:gpt-4o`, `openai:gpt-4o`, `anthropic:messages:m`."""
    vendor, _, rest = provider_id.partition(":")
    api, sep, model = rest.partition(":")
    if sep and api in _APIS.get(vendor, ()):
        return vendor, api, model
    return vendor, _DEFAULT_API.get(vendor, ""), rest


def check_sdk_provider(spec: ProviderSpec) -> None:
    """Reject a provider id that names no model, before any run."""
    vendor, _, model = parse_sdk_id(spec.id)
    if not model:
        apis = ", ".join(f"{vendor}:{a}:MODEL" for a in _APIS.get(vendor, ()))
        raise SuiteError(
            f"provider {spec.id!r} names no model", line=spec.line, fix=f"write {apis}"
        )


def _is_reasoning_model(model: str) -> bool:
    name = model.rsplit("/", 1)[-1]
    return name.startswith(("o1", "o3", "o4", "gpt-5"))


def _env_number(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value else default


def _sdk_call(method: Any, body: dict[str, Any], headers: dict[str, str]) -> Any:
    """Call an SDK method, sending parameters its signature lacks through `extra_body`.

    SDK releases add and drop keyword parameters (sampling options, new features); the
    API still accepts them, so the request is the same whatever the installed version.
    """
    known = inspect.signature(method).parameters
    kwargs = {k: v for k, v in body.items() if k in known and k != "extra_body"}
    extra = {k: v for k, v in body.items() if k not in known}
    extra |= body.get("extra_body") or {}
    return method(**kwargs, extra_body=extra or None, extra_headers=headers)


ClientT = TypeVar("ClientT", bound=openai.AsyncOpenAI | anthropic.AsyncAnthropic)


class _SdkAgent(ABC, Generic[ClientT]):
    """Shared call flow: build the request, time it, read the reply, price it."""

    vendor = ""
    vendor_name = ""
    key_env = ""
    api_errors: tuple[type[Exception], ...] = ()

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        _, self.api, self.model = parse_sdk_id(spec.id)
        self.label = spec.label
        self.config = dict(spec.config)
        self.price = provider_price(self.model, self.config)
        base_url = (
            self.config.get("apiBaseUrl")
            or self.config.get("base_url")
            or self.config.get("baseUrl")
        )
        api_key = self.config.get("apiKey") or os.environ.get(
            self.config.get("apiKeyEnvar") or self.key_env
        )
        if api_key is None and base_url:
            api_key = "unused"
        self.missing_key = (
            f"{self.vendor_name} API key is not set: set {self.key_env} or config.apiKey"
        )
        self.client: ClientT | None = (
            self._connect(
                api_key=api_key,
                base_url=base_url,
                max_retries=int(self.config.get("maxRetries", 2)),
                default_headers=self.config.get("headers"),
            )
            if api_key
            else None
        )

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """One model request; API failures become error responses with the status."""
        client = self.client
        if client is None:
            return AgentResponse(error=self.missing_key)
        headers = {"traceparent": context.traceparent} if context.traceparent else {}
        started = time.time()
        try:
            with remote_parent(context.traceparent):
                reply = await self._request(client, prompt, headers)
        except ChatPromptError as exc:
            return AgentResponse(error=str(exc))
        except self.api_errors as exc:
            return self._api_error(exc)
        ended = time.time()
        cost = call_cost(self.price, reply.input_tokens, reply.output_tokens)
        model_step = Step(
            kind="model",
            name=self.model,
            started_at=started,
            ended_at=ended,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost=cost,
            metadata={"api": f"{self.vendor}:{self.api}", "finish_reason": reply.finish_reason},
        )
        usage = {"numRequests": 1}
        if reply.input_tokens is not None or reply.output_tokens is not None:
            prompt_tokens = reply.input_tokens or 0
            completion_tokens = reply.output_tokens or 0
            usage |= {
                "prompt": prompt_tokens,
                "completion": completion_tokens,
                "total": reply.total_tokens or prompt_tokens + completion_tokens,
            }
        if reply.cached_tokens:
            usage["cached"] = reply.cached_tokens
        return AgentResponse(
            output=reply.output,
            token_usage=usage,
            cost=cost,
            metadata=reply.metadata,
            trajectory=[model_step, *(call.step() for call in reply.calls)],
            finish_reason=reply.finish_reason,
            latency_ms=(ended - started) * 1000.0,
        )

    def _api_error(self, exc: Exception) -> AgentResponse:
        status = getattr(exc, "status_code", None)
        if status is None:
            return AgentResponse(error=f"API call error: {type(exc).__name__}: {exc}")
        return AgentResponse(
            error=f"API error: {status} {getattr(exc, 'message', exc)}",
            metadata={"http": {"status": status}},
        )

    @abstractmethod
    def _connect(self, **options: Any) -> ClientT:
        """The SDK's async client with these options (api_key, base_url, ...)."""

    @abstractmethod
    async def _request(self, client: ClientT, prompt: str, headers: dict[str, str]) -> Reply:
        """Send one request and read the reply."""

    async def aclose(self) -> None:
        """Close the SDK client's connection pool."""
        if self.client is not None:
            await self.client.close()


class OpenAIAgent(_SdkAgent[openai.AsyncOpenAI]):
    """`openai:chat:MODEL` and `openai:responses:MODEL` through the official `openai` SDK."""

    vendor = "openai"
    vendor_name = "OpenAI"
    key_env = "OPENAI_API_KEY"
    api_errors = (openai.APIError,)

    def _connect(self, **options: Any) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(**options)

    async def _request(
        self, client: openai.AsyncOpenAI, prompt: str, headers: dict[str, str]
    ) -> Reply:
        if self.api == "responses":
            raw = await _sdk_call(client.responses.create, self._responses_kwargs(prompt), headers)
            return openai_format.read_response(raw.model_dump(mode="json", exclude_unset=True))
        raw = await _sdk_call(client.chat.completions.create, self._chat_kwargs(prompt), headers)
        response_format = self.config.get("response_format") or {}
        return openai_format.read_chat_completion(
            raw.model_dump(mode="json", exclude_unset=True),
            show_thinking=bool(self.config.get("showThinking", True)),
            json_output=response_format.get("type") == "json_schema",
        )

    def _tools(self, kwargs: dict[str, Any]) -> None:
        tools = self.config.get("tools")
        if tools:
            kwargs["tools"] = (
                openai_format.chat_tools(tools)
                if self.api == "chat"
                else openai_format.responses_tools(tools)
            )
        if self.config.get("tool_choice") is not None:
            kwargs["tool_choice"] = openai_format.tool_choice(self.config["tool_choice"], self.api)

    def _chat_kwargs(self, prompt: str) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": parse_chat_prompt(prompt)}
        if not _is_reasoning_model(self.model):
            kwargs["max_tokens"] = int(
                self.config.get("max_tokens", _env_number("OPENAI_MAX_TOKENS", 1024))
            )
            kwargs["temperature"] = float(
                self.config.get("temperature", _env_number("OPENAI_TEMPERATURE", 0))
            )
        kwargs |= {k: self.config[k] for k in _CHAT_OPTIONAL if k in self.config}
        self._tools(kwargs)
        if self.config.get("passthrough"):
            kwargs["extra_body"] = dict(self.config["passthrough"])
        return kwargs

    def _responses_kwargs(self, prompt: str) -> dict[str, Any]:
        messages = parse_chat_prompt(prompt)
        plain_text = len(messages) == 1 and messages[0].get("content") == prompt
        kwargs: dict[str, Any] = {"model": self.model, "input": prompt if plain_text else messages}
        if "max_tokens" in self.config:
            kwargs["max_output_tokens"] = int(self.config["max_tokens"])
        kwargs |= {k: self.config[k] for k in _RESPONSES_OPTIONAL if k in self.config}
        self._tools(kwargs)
        if self.config.get("passthrough"):
            kwargs["extra_body"] = dict(self.config["passthrough"])
        return kwargs


class AnthropicAgent(_SdkAgent[anthropic.AsyncAnthropic]):
    """`anthropic:messages:MODEL` through the official `anthropic` SDK."""

    vendor = "anthropic"
    vendor_name = "Anthropic"
    key_env = "ANTHROPIC_API_KEY"
    api_errors = (anthropic.APIError,)

    def _connect(self, **options: Any) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(**options)

    def _kwargs(self, prompt: str) -> dict[str, Any]:
        messages, system = anthropic_format.parse_prompt(prompt)
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": int(
                self.config.get("max_tokens", _env_number("ANTHROPIC_MAX_TOKENS", 1024))
            ),
        }
        temperature = self.config.get("temperature", os.environ.get("ANTHROPIC_TEMPERATURE"))
        if temperature not in (None, ""):
            kwargs["temperature"] = float(temperature)
        if system:
            kwargs["system"] = system
        kwargs |= {k: self.config[k] for k in _ANTHROPIC_OPTIONAL if k in self.config}
        if self.config.get("tools"):
            kwargs["tools"] = anthropic_format.tools(self.config["tools"])
        if self.config.get("tool_choice") is not None:
            kwargs["tool_choice"] = anthropic_format.tool_choice(self.config["tool_choice"])
        return kwargs

    async def _request(
        self, client: anthropic.AsyncAnthropic, prompt: str, headers: dict[str, str]
    ) -> Reply:
        raw = await _sdk_call(client.messages.create, self._kwargs(prompt), headers)
        return anthropic_format.read_message(
            raw.model_dump(mode="json", exclude_unset=True),
            show_thinking=bool(self.config.get("showThinking", True)),
        )

    def _api_error(self, exc: Exception) -> AgentResponse:
        body = getattr(exc, "body", None)
        detail = body.get("error") if isinstance(body, dict) else None
        status = getattr(exc, "status_code", None)
        if isinstance(detail, dict) and status is not None:
            return AgentResponse(
                error=f"API call error: {detail.get('message')}, status {status}, "
                f"type {detail.get('type')}",
                metadata={"http": {"status": status}},
            )
        return super()._api_error(exc)
