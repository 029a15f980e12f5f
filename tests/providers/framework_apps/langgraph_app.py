"""LangGraph graphs for the adapter tests, built by `build(config)` per variant, over a
chat model scripted from the conversation (sync and async tools, interrupts, loops)."""

from __future__ import annotations

import json
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt

CONFIGS: list[dict[str, Any]] = []


@tool
def add(a: int, b: int) -> dict[str, int]:
    """Add two numbers (sync tool)."""
    return {"sum": a + b}


@tool
async def fetch(key: str) -> dict[str, int]:
    """Fetch a value (async tool); unknown keys raise."""
    if key != "x":
        raise LookupError(f"no key {key}")
    return {"value": 7}


@tool
def delete(path: str) -> str:
    """Delete a file after a person approves."""
    decision = interrupt({"tool": "delete", "path": path})
    return f"deleted {path}: {decision}"


class Scripted(BaseChatModel):
    """Calls add and fetch in parallel, then answers; loops on 'loop'; deletes on 'delete'."""

    model_name: str = "gpt-4o-mini"
    usage: bool = True

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:
        """The script knows its tools."""
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        question = str(messages[0].content)
        outputs = [m for m in messages if isinstance(m, ToolMessage)]
        n = len(messages)
        if "loop" in question:
            reply = AIMessage("", tool_calls=[_call("add", {"a": n, "b": 1}, n)])
        elif "delete" in question and not outputs:
            reply = AIMessage("", tool_calls=[_call("delete", {"path": "/tmp/a"}, n)])
        elif not outputs:
            key = question.split()[-1]
            calls = [_call("add", {"a": 2, "b": 3}, n), _call("fetch", {"key": key}, n + 1)]
            reply = AIMessage("", tool_calls=calls)
        else:
            reply = AIMessage("done: " + " | ".join(str(m.content) for m in outputs))
        if self.usage:
            reply.usage_metadata = {"input_tokens": 10 * n, "output_tokens": 4, "total_tokens": 0}
        reply.response_metadata = {"model_name": self.model_name, "finish_reason": "stop"}
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _call(name: str, args: dict[str, Any], n: int) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"call_{n}"}


class State(TypedDict):
    """The conversation."""

    messages: Annotated[list[AnyMessage], add_messages]


def build(config: dict[str, Any]) -> Any:
    """A StateGraph (compiled by the adapter unless `compiled`) of `config.variant`."""
    model = Scripted(usage=config.get("usage", True))
    tools = ToolNode([add, fetch, delete], handle_tool_errors=config.get("handle", True))

    async def agent(state: State, config: RunnableConfig) -> dict[str, Any]:
        CONFIGS.append(dict(config.get("configurable") or {}))
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", tools)
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    if config.get("checkpointer"):
        return graph.compile(checkpointer=InMemorySaver())
    return graph


chat_model = Scripted()
summary = json.dumps({"graph": "support"})
