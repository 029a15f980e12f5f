"""PydanticAI agents for the adapter tests, built by `build(config)` per variant, over
PydanticAI's own FunctionModel scripted from the message history."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

SETTINGS: list[Any] = []
PROMPTS: list[list[str]] = []


def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers (sync tool)."""
    return {"sum": a + b}


async def fetch(key: str) -> dict[str, int]:
    """Fetch a value (async tool); unknown keys make the model retry."""
    if key != "x":
        raise ModelRetry(f"no key {key}")
    return {"value": 7}


def explode() -> str:
    """A tool that crashes."""
    raise RuntimeError("disk on fire")


class Verdict(BaseModel):
    """A structured final output."""

    total: int


def _prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls add and fetch in parallel, then answers; loops, crashes or deletes on demand."""
    SETTINGS.append(info.model_settings)
    PROMPTS.append(_prompts(messages))
    question = PROMPTS[-1][-1]
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if "loop" in question:
        return ModelResponse(parts=[ToolCallPart("add", {"a": len(returns), "b": 1})])
    if "explode" in question and not returns:
        return ModelResponse(parts=[ToolCallPart("explode", {})])
    if "delete" in question and not returns:
        return ModelResponse(parts=[ToolCallPart("delete", {"path": "/tmp/a"})])
    if not returns:
        key = question.split()[-1]
        calls = [ToolCallPart("add", {"a": 2, "b": 3}), ToolCallPart("fetch", {"key": key})]
        return ModelResponse(parts=calls)
    if info.output_tools:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"total": 5})])
    return ModelResponse(parts=[TextPart(f"done after {len(returns)} returns: {question}")])


def build(config: dict[str, Any]) -> Agent[Any, Any]:
    """The agent of `config.variant`: plain, structured or approval."""
    variant = config.get("variant", "plain")
    model = FunctionModel(reply, model_name=config.get("model", "gpt-4o-mini"))
    if variant == "structured":
        return Agent(model, output_type=Verdict, tools=[add, fetch])
    agent = Agent(model, output_type=[str, DeferredToolRequests], tools=[add, fetch, explode])

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file (needs approval)."""
        return f"deleted {path}"

    return agent
