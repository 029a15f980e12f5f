"""The one place model-graded assertions call out: pick the grader provider, call it, embed.

The grader provider is chosen as promptfoo chooses it: the assertion's `provider`, else the
test's `options.provider` (which `defaultTest.options` and `evals run --grader` fill), else
promptfoo's defaults. A provider is an id (`openai:chat:gpt-4.1`, `anthropic:messages:...`,
or any agent id), `{id, config}`, or a map by purpose (`{text: ..., embedding: ...}`).
Text calls go through the harness's own agents (the official SDKs for OpenAI and Anthropic;
`apiBaseUrl` points them at any OpenAI-compatible server). Embeddings use the OpenAI SDK's
embeddings endpoint (`openai:embedding:MODEL`). Every call is awaited on the caller's loop.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evals.agents.base import CallContext
from evals.agents.registry import build_agent
from evals.common.jsvalues import js_stringify
from evals.graders.base import GradeContext, GraderError
from evals.graders.structured import extract_json_objects
from evals.model.errors import SuiteError
from evals.model.plan import SIMULATED_USER
from evals.model.suite import ProviderSpec

Purpose = Literal["text", "embedding"]

DEFAULT_TEXT_GRADER = "openai:chat:gpt-4.1-2025-04-14"
DEFAULT_EMBEDDING_GRADER = "openai:embedding:text-embedding-3-large"
_DEFAULTS = {"text": DEFAULT_TEXT_GRADER, "embedding": DEFAULT_EMBEDDING_GRADER}
_EMBEDDING_APIS = ("openai:embedding:", "openai:embeddings:")


@dataclass(frozen=True, slots=True)
class GraderProvider:
    """A resolved grader provider: its id and config."""

    id: str
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def is_embedding(self) -> bool:
        """True for an embeddings endpoint (`openai:embedding:MODEL`) or a Python provider
        (its `call_embedding_api`, as promptfoo's Python provider offers one)."""
        return self.id.startswith(_EMBEDDING_APIS) or self.is_python

    @property
    def is_python(self) -> bool:
        """True for a Python file provider (`file://x.py[:fn]`, `python:x.py[:fn]`)."""
        from evals.common.files import split_ref

        return self.id.startswith(("file://", "python:")) and split_ref(
            self.id.removeprefix("python:")
        )[0].endswith(".py")

    @property
    def is_openai_chat(self) -> bool:
        """True when the provider accepts OpenAI's JSON-schema `response_format`."""
        return self.id.startswith("openai:chat:") or (
            self.id.startswith("openai:") and self.id.count(":") == 1
        )


def _from_definition(definition: Any, purpose: Purpose) -> GraderProvider:
    """promptfoo's getGradingProvider over a YAML provider definition."""
    if isinstance(definition, str):
        return GraderProvider(definition)
    if isinstance(definition, list):
        raise GraderError(
            "Provider must be an object or string, but received an array.\n\nCheck that the "
            f"provider {json.dumps(definition[0] if definition else None)} is not nested in an "
            "array."
        )
    if isinstance(definition, dict):
        if definition.get(purpose):
            return _from_definition(definition[purpose], purpose)
        if isinstance(definition.get("id"), str):
            return GraderProvider(definition["id"], dict(definition.get("config") or {}))
    raise GraderError(
        f"Invalid provider definition for output type '{purpose}': {json.dumps(definition)}"
    )


def _simulated_user(definition: Any) -> bool:
    """promptfoo's isSimulatedUserProviderConfig: the id, or any provider in a mapping."""
    if isinstance(definition, str):
        return definition == SIMULATED_USER
    if not isinstance(definition, dict):
        return False
    if isinstance(definition.get("id"), str):
        return bool(definition["id"] == SIMULATED_USER)
    return any(_simulated_user(value) for value in definition.values())


def resolve_provider(ctx: GradeContext, purpose: Purpose, check: str) -> GraderProvider:
    """The grader provider for one assertion and purpose, with promptfoo's precedence."""
    definition = ctx.assertion.provider or ctx.case_options.get("provider")
    if not definition:
        default_test = ctx.suite_config.get("defaultTest")
        default_test = default_test if isinstance(default_test, dict) else {}
        options = default_test.get("options") or {}
        provider = options.get("provider") if isinstance(options, dict) else None
        text = provider.get("text") if isinstance(provider, dict) else None
        # as promptfoo: defaultTest's simulated user is never an implicit grader
        candidates = (default_test.get("provider"), text, provider)
        definition = next((c for c in candidates if c and not _simulated_user(c)), None)
    chosen = (
        _from_definition(definition, purpose) if definition else GraderProvider(_DEFAULTS[purpose])
    )
    if purpose == "embedding" and not chosen.is_embedding:
        if definition:
            raise GraderError(
                f"Provider {chosen.id} is not a valid {purpose} provider for '{check}'"
            )
        chosen = GraderProvider(DEFAULT_EMBEDDING_GRADER)
    return chosen


def apply_grader(cases: list[Any], default_test: dict[str, Any], grader: str) -> None:
    """`--grader ID`: the grader replaces `defaultTest.options.provider` for every case.

    A test's own `options.provider` still wins, as in promptfoo; a case whose provider came
    from `defaultTest` (equal to it) gets the command-line grader.
    """
    options = default_test.get("options") if isinstance(default_test, dict) else None
    inherited = options.get("provider") if isinstance(options, dict) else None
    for case in cases:
        current = case.options.get("provider")
        if current is None or current == inherited:
            case.options = {**case.options, "provider": grader}


@dataclass(slots=True)
class JudgeReply:
    """A grader provider's answer: text (or a parsed object), error, token usage."""

    output: Any
    error: str | None
    token_usage: dict[str, int]

    @property
    def text(self) -> str:
        """The answer as text; a structured answer is serialized as JSON."""
        if isinstance(self.output, str):
            return self.output
        return "" if self.output is None else js_stringify(self.output)


def json_schema_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI `response_format` asking for JSON that follows `schema`."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}


async def complete(
    provider: GraderProvider,
    prompt: str,
    *,
    label: str,
    variables: dict[str, Any],
    suite_root: Path,
    schema: dict[str, Any] | None = None,
) -> JudgeReply:
    """Send one grading prompt; a JSON schema is requested where the API supports it."""
    if provider.id.startswith(_EMBEDDING_APIS):
        raise GraderError(f"Provider {provider.id} is not a valid text provider for '{label}'")
    config = dict(provider.config)
    if schema is not None and provider.is_openai_chat and "response_format" not in config:
        config["response_format"] = json_schema_format(label.replace(":", "_"), schema)
    try:
        agent = build_agent(
            ProviderSpec(id=provider.id, label=provider.id, config=config), suite_root
        )
    except SuiteError as exc:
        raise GraderError(f"grader provider {provider.id!r}: {exc.render()}") from None
    context = CallContext(
        vars=variables,
        prompt=prompt,
        case_id=label,
        case_metadata={},
        agent=provider.id,
        repeat=0,
        seed=0,
        suite_id="grader",
    )
    try:
        response = await agent.call(prompt, context)
    finally:
        await agent.aclose()
    return JudgeReply(response.output, response.error, dict(response.token_usage))


@dataclass(slots=True)
class Embedding:
    """One embedding vector, or why there is none."""

    vector: list[float] | None
    error: str | None
    token_usage: dict[str, int]


async def _python_embedding(provider: GraderProvider, text: str, suite_root: Path) -> Embedding:
    """promptfoo's PythonProvider.callEmbeddingApi: `call_embedding_api(text, options)` (or
    the function the id names) returns `{embedding: [...]}` or `{error: ...}`."""
    import asyncio

    from evals.common.files import load_function, split_ref

    path, name = split_ref(provider.id.removeprefix("python:"))
    try:
        function = load_function(suite_root / path, name or "call_embedding_api", "embedding")
        options = {"id": provider.id, "config": provider.config}
        result = await asyncio.to_thread(function, text, options)
    except Exception as exc:  # user code may raise anything
        return Embedding(None, f"Error running Python embedding provider: {exc}", {})
    if not isinstance(result, dict) or not ("embedding" in result or "error" in result):
        return Embedding(
            None,
            f"The Python script `{name or 'call_embedding_api'}` function must return a dict "
            f"with an own `embedding` array or `error` string, instead got {js_stringify(result)}",
            {},
        )
    if result.get("error"):
        return Embedding(None, str(result["error"]), {})
    usage = {k: int(v) for k, v in (result.get("tokenUsage") or {}).items() if isinstance(v, int)}
    return Embedding([float(x) for x in result["embedding"]], None, usage)


async def embed(provider: GraderProvider, text: str, suite_root: Path) -> Embedding:
    """Embed `text` through `openai:embedding:MODEL`'s endpoint or a Python provider."""
    if provider.is_python:
        return await _python_embedding(provider, text, suite_root)
    import openai

    from evals.agents.sdk_providers import OpenAIAgent

    model = provider.id.split(":", 2)[2]
    agent = OpenAIAgent(
        ProviderSpec(id=f"openai:chat:{model}", label=provider.id, config=provider.config),
        suite_root,
    )
    if agent.client is None:
        return Embedding(None, agent.missing_key, {})
    try:
        result = await agent.client.embeddings.create(model=model, input=text)
    except openai.APIError as exc:
        return Embedding(None, f"API error: {exc}", {})
    finally:
        await agent.aclose()
    usage = result.usage
    tokens = {"prompt": usage.prompt_tokens, "total": usage.total_tokens} if usage else {}
    return Embedding([float(x) for x in result.data[0].embedding], None, tokens)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON (or YAML flow) object in a judge's answer, fences and prose allowed."""
    for found in extract_json_objects(text):
        if isinstance(found, dict):
            return found
    return None


def add_usage(total: dict[str, int], usage: dict[str, int]) -> None:
    """Accumulate one call's token usage into a running total (promptfoo's keys)."""
    for key in ("total", "prompt", "completion", "cached"):
        if usage.get(key):
            total[key] = total.get(key, 0) + int(usage[key])
    total["numRequests"] = total.get("numRequests", 0) + int(usage.get("numRequests", 1))


def cosine_similarity(a: list[float], b: list[float]) -> float:
    """Cosine of the angle between two vectors (0 when either is all zeros)."""
    if len(a) != len(b):
        raise GraderError("Vectors must be of equal length")
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm_a = math.sqrt(math.fsum(x * x for x in a))
    norm_b = math.sqrt(math.fsum(y * y for y in b))
    return 0.0 if norm_a == 0 or norm_b == 0 else dot / (norm_a * norm_b)


def dot_product(a: list[float], b: list[float]) -> float:
    """The dot product of two vectors of equal length."""
    if len(a) != len(b):
        raise GraderError("Vectors must be of equal length")
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def euclidean_distance(a: list[float], b: list[float]) -> float:
    """The Euclidean distance between two vectors of equal length."""
    if len(a) != len(b):
        raise GraderError("Vectors must be of equal length")
    return math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b, strict=True)))


def nonblank_lines(text: str) -> Iterator[str]:
    """promptfoo's splitIntoSentences: the non-blank lines of a judge's answer."""
    return (line for line in text.split("\n") if line.strip())
