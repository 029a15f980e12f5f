"""A support desk built as a LangGraph graph: a model node and a tool node in a loop.

The chat model is a LangChain `BaseChatModel` whose replies are scripted from the
conversation, with token usage counted like a real API's, so the suite runs offline;
swap in `ChatOpenAI` (or any chat model) and the same graph runs against a real one.

    baseline   looks the order up once; files refunds with `request_refund` for approval
    candidate  looks every order up twice, and pays refunds itself with `issue_refund`
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from evals.common.tokens import count_tokens

ORDERS = {
    "A100": {"status": "delivered", "total": 42.5, "item": "kettle"},
    "B200": {"status": "in transit", "total": 18.0, "item": "teapot"},
}


@tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Status, total and item of an order."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **ORDERS[order_id]}


@tool
async def request_refund(order_id: str, reason: str) -> dict[str, Any]:
    """File a refund request for a person to approve."""
    return {"request": f"R-{order_id}", "state": "pending approval"}


@tool
def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Pay a refund now."""
    return {"refund": f"P-{order_id}", "amount": amount}


TOOLS = [lookup_order, request_refund, issue_refund]


def _results(messages: Sequence[BaseMessage], key: str) -> list[dict[str, Any]]:
    found = []
    for message in messages:
        if isinstance(message, ToolMessage):
            data = json.loads(str(message.content))
            if isinstance(data, dict) and key in data:
                found.append(data)
    return found


def _reply(messages: Sequence[BaseMessage], careful: bool) -> AIMessage:
    question = str(messages[0].content)
    match = re.search(r"\b[A-Z]\d{3}\b", question)
    order = match.group(0) if match else "A100"
    lookups = _results(messages, "order_id")
    n = len(messages)
    if len(lookups) < (1 if careful else 2):
        return _call("lookup_order", {"order_id": order}, n)
    if "refund" not in question.lower():
        found = lookups[-1]
        return AIMessage(
            f"Order {order} ({found['item']}) is {found['status']}; it cost {found['total']:.2f}."
        )
    if _results(messages, "request"):
        return AIMessage(f"I filed refund request R-{order}; a person will approve it.")
    if _results(messages, "refund"):
        return AIMessage(f"I refunded order {order}.")
    if careful:
        return _call("request_refund", {"order_id": order, "reason": "arrived broken"}, n)
    return _call("issue_refund", {"order_id": order, "amount": lookups[-1]["total"]}, n)


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script, reporting usage like a real API."""

    careful: bool
    model_name: str = "gpt-4o-mini"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        """The script knows the tools; binding changes nothing."""
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        reply = _reply(messages, self.careful)
        sent = count_tokens(
            "".join(str(m.content) + json.dumps(m.additional_kwargs) for m in messages)
        )
        reply.usage_metadata = {
            "input_tokens": sent,
            "output_tokens": count_tokens(str(reply.content) + json.dumps(reply.tool_calls)),
            "total_tokens": 0,
        }
        reply.response_metadata = {"model_name": self.model_name, "finish_reason": "stop"}
        return ChatResult(generations=[ChatGeneration(message=reply)])


class State(TypedDict):
    """The conversation so far."""

    messages: Annotated[list[AnyMessage], add_messages]


def build(careful: bool) -> Any:
    """The compiled graph: model node, tool node, back to the model until it answers."""
    model = ScriptedChatModel(careful=careful).bind_tools(TOOLS)

    async def agent(state: State) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(TOOLS))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "agent")
    return graph.compile()


baseline = build(careful=True)
candidate = build(careful=False)
