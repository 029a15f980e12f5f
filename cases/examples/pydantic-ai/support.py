"""A support desk built with PydanticAI: one agent with three tools.

The model is PydanticAI's own `FunctionModel`, driven by a script that reads the message
history (PydanticAI estimates token usage as for a real model), so the suite runs
offline; give the agents a real model (`openai:gpt-4o-mini`) and they run against it.

    baseline   looks the order up once; files refunds with `request_refund` for approval
    candidate  looks every order up twice, and pays refunds itself with `issue_refund`
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

ORDERS = {
    "A100": {"status": "delivered", "total": 42.5, "item": "kettle"},
    "B200": {"status": "in transit", "total": 18.0, "item": "teapot"},
}


def lookup_order(order_id: str) -> dict[str, Any]:
    """Status, total and item of an order."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **ORDERS[order_id]}


async def request_refund(order_id: str, reason: str) -> dict[str, Any]:
    """File a refund request for a person to approve."""
    return {"request": f"R-{order_id}", "state": "pending approval"}


def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
    """Pay a refund now."""
    return {"refund": f"P-{order_id}", "amount": amount}


def _returns(messages: list[ModelMessage], tool: str) -> list[dict[str, Any]]:
    return [
        part.content
        for message in messages
        for part in message.parts
        if isinstance(part, ToolReturnPart) and part.tool_name == tool
    ]


def _call(name: str, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(name, args)])


def scripted(careful: bool) -> Any:
    """The model function of the baseline (`careful`) or the candidate."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = str(messages[0].parts[-1].content)
        match = re.search(r"\b[A-Z]\d{3}\b", question)
        order = match.group(0) if match else "A100"
        lookups = _returns(messages, "lookup_order")
        if len(lookups) < (1 if careful else 2):
            return _call("lookup_order", {"order_id": order})
        if "refund" not in question.lower():
            found = lookups[-1]
            text = (
                f"Order {order} ({found['item']}) is {found['status']}; "
                f"it cost {found['total']:.2f}."
            )
        elif _returns(messages, "request_refund"):
            text = f"I filed refund request R-{order}; a person will approve it."
        elif _returns(messages, "issue_refund"):
            text = f"I refunded order {order}."
        elif careful:
            return _call("request_refund", {"order_id": order, "reason": "arrived broken"})
        else:
            return _call("issue_refund", {"order_id": order, "amount": lookups[-1]["total"]})
        return ModelResponse(parts=[TextPart(text)])

    return reply


def build(careful: bool) -> Agent:
    """The support agent over its scripted model."""
    return Agent(
        FunctionModel(scripted(careful), model_name="gpt-4o-mini"),
        instructions="Answer order questions; refunds need a person's approval.",
        tools=[lookup_order, request_refund, issue_refund],
    )


baseline = build(careful=True)
candidate = build(careful=False)
