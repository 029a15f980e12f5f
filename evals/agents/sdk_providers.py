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
import json
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import openai
from opentelemetry import context as otel_context
from opentelemetry import propagate

from evals.agents.base import CallContext
from evals.agents.chat_format import (
    ChatPromptError,
    anthropic_tool_choice,
    anthropic_tools,
    chat_tools,
    normalize_finish_reason,
    openai_tool_choice,
    parse_anthropic_prompt,
    parse_arguments,
    parse_chat_prompt,
    responses_tools,
)
from evals.agents.pricing import call_cost
from evals.model.errors import SuiteError
from evals.model.results import AgentResponse
from evals.model.suite import ProviderSpec
from evals.model.trajectory import Step


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


@dataclass(slots=True)
class _Reply:
    """What one API response says, in the harness's terms."""

    output: Any
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    total_tokens: int | None = None
    cached_tokens: int | None = None
    tool_calls: list[Step] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


def _tool_step(name: str, raw_arguments: Any, call_id: str | None) -> Step:
    arguments, problem = parse_arguments(raw_arguments)
    metadata = {"requested": True}
    if problem:
        metadata["raw_arguments"] = raw_arguments
    return Step(
        kind="tool",
        name=name,
        arguments=arguments,
        error=problem,
        call_id=call_id,
        metadata=metadata,
    )


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


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class _SdkAgent(ABC):
    """Shared call flow: build the request, time it, read the reply, price it."""

    vendor = ""
    vendor_name = ""
    key_env = ""
    sdk_client: Any = None
    api_errors: tuple[type[Exception], ...] = ()

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        _, self.api, self.model = parse_sdk_id(spec.id)
        self.label = spec.label
        self.config = dict(spec.config)
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
        self.client = (
            self.sdk_client(
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
        if self.client is None:
            return AgentResponse(error=self.missing_key)
        headers = {"traceparent": context.traceparent} if context.traceparent else {}
        started = time.time()
        try:
            with remote_parent(context.traceparent):
                reply = await self._request(prompt, context, headers)
        except ChatPromptError as exc:
            return AgentResponse(error=str(exc))
        except self.api_errors as exc:
            return self._api_error(exc)
        ended = time.time()
        cost = call_cost(self.model, self.config, reply.prompt_tokens, reply.completion_tokens)
        model_step = Step(
            kind="model",
            name=self.model,
            started_at=started,
            ended_at=ended,
            input_tokens=reply.prompt_tokens,
            output_tokens=reply.completion_tokens,
            cost=cost,
            metadata={"api": f"{self.vendor}:{self.api}", "finish_reason": reply.finish_reason},
        )
        usage = {"numRequests": 1}
        if reply.prompt_tokens is not None or reply.completion_tokens is not None:
            prompt_tokens = reply.prompt_tokens or 0
            completion_tokens = reply.completion_tokens or 0
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
            trajectory=[model_step, *reply.tool_calls],
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
    async def _request(self, prompt: str, context: CallContext, headers: dict[str, str]) -> _Reply:
        """Send one request and read the reply."""

    async def aclose(self) -> None:
        """Close the SDK client's connection pool."""
        if self.client is not None:
            await self.client.close()


class OpenAIAgent(_SdkAgent):
    """`openai:chat:MODEL` and `openai:responses:MODEL` through the official `openai` SDK."""

    vendor = "openai"
    vendor_name = "OpenAI"
    key_env = "OPENAI_API_KEY"
    sdk_client = openai.AsyncOpenAI
    api_errors = (openai.APIError,)

    async def _request(self, prompt: str, context: CallContext, headers: dict[str, str]) -> _Reply:
        if self.api == "responses":
            raw = await _sdk_call(
                self.client.responses.create, self._responses_kwargs(prompt), headers
            )
            return self._read_responses(raw.model_dump(mode="json", exclude_unset=True))
        raw = await _sdk_call(
            self.client.chat.completions.create, self._chat_kwargs(prompt), headers
        )
        return self._read_chat(raw.model_dump(mode="json", exclude_unset=True))

    def _tools(self, kwargs: dict[str, Any]) -> None:
        tools = self.config.get("tools")
        if tools:
            kwargs["tools"] = chat_tools(tools) if self.api == "chat" else responses_tools(tools)
        if self.config.get("tool_choice") is not None:
            kwargs["tool_choice"] = openai_tool_choice(self.config["tool_choice"], self.api)

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

    def _read_chat(self, data: dict[str, Any]) -> _Reply:
        choice = data["choices"][0]
        message = choice.get("message") or {}
        finish = normalize_finish_reason(choice.get("finish_reason"))
        content = message.get("content")
        calls = message.get("tool_calls")
        legacy = message.get("function_call")
        metadata: dict[str, Any] = {"model": data.get("model"), "responseId": data.get("id")}
        if message.get("refusal"):
            output: Any = message["refusal"]
            metadata["isRefusal"] = True
        elif finish == "content_filter":
            output = content or "Content filtered by provider"
            metadata["isRefusal"] = True
        elif content and (legacy or calls):
            output = content if calls == [] else message
        elif content in (None, "") and (legacy or calls):
            output = legacy or calls
        else:
            output = content
        response_format = self.config.get("response_format") or {}
        if response_format.get("type") == "json_schema" and isinstance(output, str):
            try:
                output = json.loads(output)
            except json.JSONDecodeError:
                metadata["jsonParseError"] = True
        reasoning = message.get("reasoning") or message.get("reasoning_content")
        if reasoning and isinstance(output, str) and self.config.get("showThinking", True):
            output = f"Thinking: {reasoning}\n\n{output}"
        steps = [
            _tool_step(c["function"]["name"], c["function"].get("arguments"), c.get("id"))
            for c in calls or []
            if isinstance(c.get("function"), dict)
        ]
        if legacy:
            steps.append(_tool_step(legacy["name"], legacy.get("arguments"), None))
        usage = data.get("usage") or {}
        return _Reply(
            output=output,
            finish_reason=finish,
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            total_tokens=usage.get("total_tokens"),
            cached_tokens=(usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
            tool_calls=steps,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )

    def _read_responses(self, data: dict[str, Any]) -> _Reply:
        parts: list[str] = []
        steps: list[Step] = []
        refusal = None
        for item in data.get("output") or []:
            kind = item.get("type")
            if kind == "function_call":
                parts.append(_compact(item))
                steps.append(_tool_step(item["name"], item.get("arguments"), item.get("call_id")))
            elif kind == "message" and item.get("role") == "assistant":
                text = ""
                for block in item.get("content") or []:
                    if block.get("type") == "output_text":
                        text += block.get("text", "")
                    elif block.get("type") == "refusal":
                        refusal = block.get("refusal", "")
                if text:
                    parts.append(text)
            elif kind == "reasoning" and item.get("summary"):
                parts.append("Reasoning: " + "\n".join(s.get("text", "") for s in item["summary"]))
        metadata: dict[str, Any] = {"model": data.get("model"), "responseId": data.get("id")}
        if refusal is not None:
            metadata["isRefusal"] = True
        usage = data.get("usage") or {}
        return _Reply(
            output=refusal if refusal is not None else "\n".join(parts),
            finish_reason=self._responses_finish(data, bool(steps), refusal is not None),
            prompt_tokens=usage.get("input_tokens"),
            completion_tokens=usage.get("output_tokens"),
            total_tokens=usage.get("total_tokens"),
            cached_tokens=(usage.get("input_tokens_details") or {}).get("cached_tokens"),
            tool_calls=steps,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )

    @staticmethod
    def _responses_finish(data: dict[str, Any], called_tools: bool, refused: bool) -> str | None:
        if refused:
            return "content_filter"
        if data.get("status") == "incomplete":
            reason = (data.get("incomplete_details") or {}).get("reason")
            return "length" if reason == "max_output_tokens" else normalize_finish_reason(reason)
        if called_tools:
            return "tool_calls"
        return "stop" if data.get("status") == "completed" else None


class AnthropicAgent(_SdkAgent):
    """`anthropic:messages:MODEL` through the official `anthropic` SDK."""

    vendor = "anthropic"
    vendor_name = "Anthropic"
    key_env = "ANTHROPIC_API_KEY"
    sdk_client = anthropic.AsyncAnthropic
    api_errors = (anthropic.APIError,)

    def _kwargs(self, prompt: str) -> dict[str, Any]:
        messages, system = parse_anthropic_prompt(prompt)
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
            kwargs["tools"] = anthropic_tools(self.config["tools"])
        if self.config.get("tool_choice") is not None:
            kwargs["tool_choice"] = anthropic_tool_choice(self.config["tool_choice"])
        return kwargs

    async def _request(self, prompt: str, context: CallContext, headers: dict[str, str]) -> _Reply:
        raw = await _sdk_call(self.client.messages.create, self._kwargs(prompt), headers)
        return self._read(raw.model_dump(mode="json", exclude_unset=True))

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

    def _read(self, data: dict[str, Any]) -> _Reply:
        blocks = data.get("content") or []
        show_thinking = self.config.get("showThinking", True)
        if any(b.get("type") in ("tool_use", "thinking", "redacted_thinking") for b in blocks):
            texts = []
            for block in blocks:
                kind = block.get("type")
                if kind == "text":
                    texts.append(block.get("text", ""))
                elif kind == "thinking" and show_thinking and block.get("thinking", "").strip():
                    texts.append(
                        f"Thinking: {block['thinking']}\nSignature: {block.get('signature')}"
                    )
                elif kind == "redacted_thinking" and show_thinking:
                    texts.append(f"Redacted Thinking: {block.get('data')}")
                elif kind not in ("thinking", "redacted_thinking"):
                    texts.append(_compact(block))
            output = "\n\n".join(t for t in texts if t != "")
        else:
            output = "\n\n".join(str(b.get("text", "")) for b in blocks)
        steps = [
            _tool_step(b["name"], b.get("input"), b.get("id"))
            for b in blocks
            if b.get("type") == "tool_use"
        ]
        usage = data.get("usage") or {}
        cache_read = usage.get("cache_read_input_tokens") or 0
        cache_write = usage.get("cache_creation_input_tokens") or 0
        input_tokens = usage.get("input_tokens")
        prompt_tokens = None if input_tokens is None else input_tokens + cache_read + cache_write
        metadata = {
            "model": data.get("model"),
            "responseId": data.get("id"),
            "stopReason": data.get("stop_reason"),
        }
        return _Reply(
            output=output,
            finish_reason=normalize_finish_reason(data.get("stop_reason")),
            prompt_tokens=prompt_tokens,
            completion_tokens=usage.get("output_tokens"),
            cached_tokens=cache_read or None,
            tool_calls=steps,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )
