"""The research tools of the demo agents: deterministic, validated, errors as data.

`precio`, `buscar_noticias`, `calculadora` (an AST walk, never eval) and `variacion` read
the synthetic world. Same arguments, same result: a trajectory can be replayed, audited
and graded, and every failure is the model's or the design's, never the tool's.
"""

from __future__ import annotations

import ast
import datetime as dt
import operator
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field
from trading_world import build_world

from evals.kits import SPANISH, Tool, ToolRegistry

DATE = r"^\d{4}-\d{2}-\d{2}$"
TICKER = r"^[A-Z]{4}$"
MAX_HEADLINES = 5


class ArgsPrecio(BaseModel):
    ticker: str = Field(pattern=TICKER)
    fecha: str = Field(pattern=DATE)


class ArgsNoticias(BaseModel):
    ticker: str = Field(pattern=TICKER)
    desde: str = Field(pattern=DATE)
    hasta: str = Field(pattern=DATE)


class ArgsCalculadora(BaseModel):
    expresion: str


class ArgsVariacion(BaseModel):
    ticker: str = Field(pattern=TICKER)
    desde: str = Field(pattern=DATE)
    hasta: str = Field(pattern=DATE)


def _known(ticker: str) -> None:
    if ticker not in build_world().closes:
        raise ValueError(f"ticker desconocido: {ticker}")


def _real_date(day: str) -> str:
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise ValueError(f"fecha inexistente: {day}") from None
    return day


def precio(ticker: str, fecha: str) -> dict[str, Any]:
    """Close of a stock at the last session on or before `fecha`, saying which session."""
    _known(ticker)
    found = build_world().close_on_or_before(ticker, _real_date(fecha))
    if found is None:
        raise ValueError(f"sin datos hasta {fecha}")
    session, close = found
    return {"ticker": ticker, "fecha": session, "cierre": round(close, 2)}


def buscar_noticias(ticker: str, desde: str, hasta: str) -> list[dict[str, str]]:
    """Up to five headlines of a stock between two dates, syndicated copies removed."""
    _known(ticker)
    start, end = _real_date(desde), _real_date(hasta)
    seen: set[str] = set()
    found = []
    for item in build_world().news[ticker]:
        if start <= item.day <= end and item.headline not in seen:
            seen.add(item.headline)
            found.append({"fecha": item.day, "titular": item.headline})
    return found[:MAX_HEADLINES]


_OPERATORS: dict[type, Callable[..., float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
}
ONLY_ARITHMETIC = "solo números, + - * / y paréntesis"


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError(ONLY_ARITHMETIC)


def calculadora(expresion: str) -> float:
    """Arithmetic without eval(): the expression's syntax tree is walked, nothing executed."""
    try:
        tree = ast.parse(expresion, mode="eval")
    except SyntaxError:
        raise ValueError(ONLY_ARITHMETIC) from None
    return round(_evaluate(tree.body), 4)


def variacion(ticker: str, desde: str, hasta: str) -> dict[str, Any]:
    """Percentage change of the close between two dates, computed in code from both closes."""
    start, end = precio(ticker, desde), precio(ticker, hasta)
    change = round(100 * (end["cierre"] / start["cierre"] - 1), 2)
    return {"desde": start, "hasta": end, "variacion_pct": change}


ALL_TOOLS = ToolRegistry(
    [
        Tool(
            "precio",
            "Cierre de una acción en una sesión (la última sesión en o antes de la fecha).",
            ArgsPrecio,
            precio,
            effect="read",
        ),
        Tool(
            "buscar_noticias",
            "Titulares de noticias de una acción entre dos fechas (AAAA-MM-DD).",
            ArgsNoticias,
            buscar_noticias,
            effect="read",
        ),
        Tool(
            "calculadora",
            "Evalúa una expresión aritmética con + - * / y paréntesis.",
            ArgsCalculadora,
            calculadora,
            effect="compute",
        ),
        Tool(
            "variacion",
            "Variación porcentual del cierre de una acción entre dos fechas (AAAA-MM-DD), "
            "calculada con los dos cierres.",
            ArgsVariacion,
            variacion,
            effect="compute",
        ),
    ],
    SPANISH,
)
BASIC = ("precio", "buscar_noticias", "calculadora")
WITH_VARIACION = (*BASIC, "variacion")


def registry(names: tuple[str, ...] = BASIC) -> ToolRegistry:
    """The demo's registry restricted to an agent's toolset."""
    return ALL_TOOLS.subset(names)
