"""`derivedMetrics`: metrics computed from the named scores of each prompt column.

As promptfoo computes them, per (prompt, agent): every named score summed over that
column's results, plus `__count` (how many results the column has), feeds arithmetic
expressions evaluated in order, so a later metric may use an earlier one. A division by
zero gives infinity or NaN, as in JavaScript; any other failure leaves the metric at 0.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable
from typing import Any

from evals.model.results import RunRecord

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min,
    "max": max,
    "abs": abs,
    "sqrt": math.sqrt,
    "round": round,
}


def _divide(left: float, right: float) -> float:
    if right == 0:
        return math.nan if left == 0 else math.copysign(math.inf, left)
    return left / right


def _evaluate(node: ast.AST, names: dict[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name):
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left, names), _evaluate(node.right, names)
        if isinstance(node.op, ast.Div):
            return _divide(left, right)
        return float(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return float(_UNARY[type(node.op)](_evaluate(node.operand, names)))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        function = _FUNCTIONS[node.func.id]
        return float(function(*(_evaluate(a, names) for a in node.args)))
    raise ValueError(f"unsupported syntax: {ast.dump(node)[:60]}")


def check_expression(expression: str) -> str | None:
    """Why `expression` is not a valid derived-metric expression, or None when it is."""
    try:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        return exc.msg
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
        ):
            return f"only {', '.join(sorted(_FUNCTIONS))} may be called"
    return None


def evaluate_metrics(
    metrics: list[tuple[str, str]], named_scores: dict[str, float], count: int
) -> dict[str, float]:
    """Named scores of one column with the derived metrics added, in declaration order."""
    values = {**named_scores, "__count": float(count)}
    out = dict(named_scores)
    for name, expression in metrics:
        tree = ast.parse(expression.replace("^", "**"), mode="eval")
        try:
            result = _evaluate(tree, values)
        except (KeyError, ValueError, OverflowError, ZeroDivisionError):
            result = out.get(name, 0.0)
        out[name] = result
        values[name] = result
    return out


def column_scores(
    records: Iterable[RunRecord], metrics: list[tuple[str, str]]
) -> dict[tuple[int, str], dict[str, Any]]:
    """Summed named scores with derived metrics, keyed by (prompt index, agent)."""
    sums: dict[tuple[int, str], dict[str, float]] = {}
    counts: dict[tuple[int, str], int] = {}
    for record in records:
        key = (record.prompt_index, record.key.agent)
        counts[key] = counts.get(key, 0) + 1
        column = sums.setdefault(key, {})
        for name, score in (record.grade.named_scores if record.grade else {}).items():
            column[name] = column.get(name, 0.0) + score
    return {key: evaluate_metrics(metrics, sums[key], counts[key]) for key in sums}
