"""OpenAI Agents SDK agents for the adapter tests, built by `build(config)` per variant,
over the simulator's Responses API (an AsyncOpenAI client on a MockTransport)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
from agents import (
    Agent,
    GuardrailFunctionOutput,
    OpenAIResponsesModel,
    function_tool,
    input_guardrail,
)
from pydantic import BaseModel

from evals.agents.frameworks import current_run
from evals.kits.simulator import Conversation, simulated_async_openai

SEEDS: list[int] = []


@function_tool
def add(a: int, b: int) -> str:
    """Add two numbers (sync tool)."""
    return json.dumps({"sum": a + b})


@function_tool
async def fetch(key: str) -> str:
    """Fetch a value (async tool); unknown keys raise."""
    if key != "x":
        raise LookupError(f"no key {key}")
    return json.dumps({"value": 7})


@function_tool(needs_approval=True)
def delete(path: str) -> str:
    """Delete a file (needs approval)."""
    return json.dumps({"deleted": path})


class Verdict(BaseModel):
    """A structured final output."""

    total: int


def script(conversation: Conversation, seed: int) -> Any:
    """Calls add and fetch in parallel, then answers; loops forever on 'loop'."""
    SEEDS.append(seed)
    if "loop" in conversation.question:
        return [("add", {"a": len(conversation.outputs), "b": 1})]
    if "delete" in conversation.question and not conversation.outputs:
        return [("delete", {"path": "/tmp/a"})]
    if "transfer_to_math" in conversation.tools:
        return [("transfer_to_math", {})]
    if len(conversation.outputs) <= 1:
        return [("add", {"a": 2, "b": 3}), ("fetch", {"key": conversation.question.split()[-1]})]
    if "json" in conversation.question:
        return json.dumps({"total": 5})
    return f"done after {len(conversation.outputs)} outputs"


def _seed() -> int:
    run = current_run()
    return -1 if run is None else run.seed


def _failing_client() -> openai.AsyncOpenAI:
    async def handle(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"error": {"message": "the model is down"}})

    return openai.AsyncOpenAI(
        api_key="sk-test",
        base_url="http://simulated/v1",
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handle)),
        max_retries=0,
    )


@input_guardrail
async def no_secrets(context: Any, agent: Any, prompt: Any) -> GuardrailFunctionOutput:
    """Trips when the prompt asks for a secret."""
    return GuardrailFunctionOutput(
        output_info={"matched": "secret"}, tripwire_triggered="secret" in str(prompt)
    )


def build(config: dict[str, Any]) -> Agent:
    """The agent of `config.variant`: plain, handoff, structured, guardrail, down."""
    variant = config.get("variant", "plain")
    client = _failing_client() if variant == "down" else simulated_async_openai(script, _seed)
    model = OpenAIResponsesModel(model=config.get("model", "gpt-4o-mini"), openai_client=client)
    tools = [add, fetch, delete]
    if variant == "handoff":
        math = Agent(name="math", model=model, tools=tools)
        return Agent(name="triage", model=model, handoffs=[math])
    if variant == "structured":
        return Agent(name="solver", model=model, tools=tools, output_type=Verdict)
    if variant == "guardrail":
        return Agent(name="guarded", model=model, tools=tools, input_guardrails=[no_secrets])
    return Agent(name="solver", model=model, tools=tools)
