"""The support desk's tools, over the run's own copy of the shop's database.

`lookup_order` reads an order, `refund_order` pays a refund (it writes to the database:
the suite's tool contracts give it the effect `write`, so it needs the customer's
confirmation) and `transfer_to_human` hands the conversation over to a person by opening
a ticket. Arguments are validated; failures come back to the model as data.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from evals.kits import Tool, ToolRegistry

ORDER = r"^A\d{3}$"


class OrderArgs(BaseModel):
    order_id: str = Field(pattern=ORDER)


class RefundArgs(BaseModel):
    order_id: str = Field(pattern=ORDER)
    amount: float = Field(gt=0)


class TransferArgs(BaseModel):
    reason: str = Field(min_length=3)


def _order(db: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    row = db.execute(
        "SELECT o.id, o.item, o.amount, o.status, o.delivered_on, c.name "
        "FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = ?",
        (order_id,),
    ).fetchone()
    if row is None:
        raise ValueError(f"unknown order {order_id}")
    refunded = db.execute(
        "SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE order_id = ?", (order_id,)
    ).fetchone()[0]
    keys = ("order_id", "item", "amount", "status", "delivered_on", "customer")
    return {**dict(zip(keys, row, strict=True)), "refunded": round(refunded, 2)}


def registry(database: Path) -> ToolRegistry:
    """The three tools, bound to this run's database."""

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(database)

    def lookup_order(order_id: str) -> dict[str, Any]:
        with connect() as db:
            return _order(db, order_id)

    def refund_order(order_id: str, amount: float) -> dict[str, Any]:
        with connect() as db:
            order = _order(db, order_id)
            if order["status"] not in ("delivered", "partially_refunded"):
                raise ValueError(f"order {order_id} is {order['status']}: it cannot be refunded")
            left = round(order["amount"] - order["refunded"], 2)
            if amount > left:
                raise ValueError(f"at most {left:.2f} of order {order_id} can be refunded")
            count = db.execute("SELECT COUNT(*) FROM refunds").fetchone()[0]
            refund_id = f"R-{count + 1:03d}"
            db.execute("INSERT INTO refunds VALUES (?, ?, ?)", (refund_id, order_id, amount))
            status = "refunded" if amount >= left else "partially_refunded"
            db.execute("UPDATE orders SET status = ? WHERE id = ?", (status, order_id))
            return {
                "refund_id": refund_id,
                "order_id": order_id,
                "amount": amount,
                "status": status,
            }

    def transfer_to_human(reason: str) -> dict[str, Any]:
        with connect() as db:
            count = db.execute("SELECT COUNT(*) FROM tickets").fetchone()[0]
            ticket = f"T-{count + 1:03d}"
            db.execute("INSERT INTO tickets VALUES (?, ?)", (ticket, reason))
            return {"ticket": ticket, "queue": "customer care"}

    return ToolRegistry(
        [
            Tool(
                "lookup_order",
                "An order's item, amount, status and refunds.",
                OrderArgs,
                lookup_order,
                effect="read",
            ),
            Tool(
                "refund_order",
                "Refund an amount of a delivered order to the customer's card.",
                RefundArgs,
                refund_order,
                effect="write",
            ),
            Tool(
                "transfer_to_human",
                "Hand the conversation over to a person (opens a ticket).",
                TransferArgs,
                transfer_to_human,
                effect="send",
            ),
        ]
    )
