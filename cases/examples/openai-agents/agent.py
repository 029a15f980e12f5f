"""A support desk built with the OpenAI Agents SDK: a triage agent that answers order
questions and hands refunds off to a refunds agent.

The model is the harness's scripted simulator behind the real `openai.AsyncOpenAI` client
(the Responses API over an httpx MockTransport), so the suite runs offline; point
`OpenAIResponsesModel` at a real client and the same agents run against the API.

    baseline   looks the order up once; files refunds with `request_refund` for a person to approve
    candidate  looks every order up twice, and pays refunds itself with `issue_refund`
"""

from __future__ import annotations

import json
import re
from typing import Any

from agents import Agent, OpenAIResponsesModel, function_tool

from evals.agents.frameworks import current_run
from evals.kits import Action, Conversation, Script, simulated_async_openai

MODEL = "gpt-4o-mini"
ORDERS = {
    "A100": {"status": "delivered", "total": 42.5, "item": "kettle"},
    "B200": {"status": "in transit", "total": 18.0, "item": "teapot"},
}


@function_tool
def lookup_order(order_id: str) -> str:
    """Status, total and item of an order (JSON)."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return json.dumps({"order_id": order_id, **ORDERS[order_id]})


@function_tool
def request_refund(order_id: str, reason: str) -> str:
    """File a refund request for a person to approve (JSON)."""
    return json.dumps({"request": f"R-{order_id}", "state": "pending approval"})


@function_tool
def issue_refund(order_id: str, amount: float) -> str:
    """Pay a refund now (JSON)."""
    return json.dumps({"refund": f"P-{order_id}", "amount": amount})


def _outputs(conversation: Conversation, key: str) -> list[dict[str, Any]]:
    return [o for o in conversation.outputs if isinstance(o, dict) and key in o]


def _answer(conversation: Conversation, order: str) -> str:
    found = _outputs(conversation, "order_id")
    if not found:
        return f"I could not find order {order}."
    details = found[-1]
    return (
        f"Order {order} ({details['item']}) is {details['status']}; it cost {details['total']:.2f}."
    )


def support_script(careful: bool) -> Script:
    """The scripted model of the baseline (`careful`) or the candidate."""

    def script(conversation: Conversation, seed: int) -> Action:
        match = re.search(r"\b[A-Z]\d{3}\b", conversation.question)
        order = match.group(0) if match else "A100"
        refund = "refund" in conversation.question.lower()
        lookups = len(_outputs(conversation, "order_id"))
        if "transfer_to_refunds" in conversation.tools and refund:
            return [("transfer_to_refunds", {})]
        if lookups < (1 if careful else 2):
            return [("lookup_order", {"order_id": order})]
        if not refund:
            return _answer(conversation, order)
        if not _outputs(conversation, "request") and not _outputs(conversation, "refund"):
            if careful:
                return [("request_refund", {"order_id": order, "reason": "arrived broken"})]
            return [("issue_refund", {"order_id": order, "amount": ORDERS[order]["total"]})]
        if _outputs(conversation, "request"):
            return f"I filed refund request R-{order}; a person will approve it."
        return f"I refunded order {order}."

    return script


def _seed() -> int:
    run = current_run()
    return 0 if run is None else run.seed


def build(careful: bool) -> Agent:
    """The triage agent (with its refunds agent) over the scripted model."""
    client = simulated_async_openai(support_script(careful), _seed)
    model = OpenAIResponsesModel(model=MODEL, openai_client=client)
    refunds = Agent(
        name="refunds",
        instructions="Handle refund requests.",
        model=model,
        tools=[lookup_order, request_refund, issue_refund],
    )
    return Agent(
        name="triage",
        instructions="Answer order questions; hand refunds to the refunds agent.",
        model=model,
        tools=[lookup_order],
        handoffs=[refunds],
    )


baseline = build(careful=True)
candidate = build(careful=False)
