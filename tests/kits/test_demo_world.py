"""The demo's synthetic world and research tools reproduce the lesson's facts."""

from __future__ import annotations

import ast
import datetime as dt
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "cases" / "trading-research"))

import trading_tools as tools
from trading_world import (
    PINNED_CLOSES,
    UNKNOWN_TICKERS,
    build_world,
)

REGISTRY = tools.ALL_TOOLS


def test_panel_shape_and_tickers() -> None:
    world = build_world()
    assert len(world.closes) == 120
    assert all(len(t) == 4 and t.isalpha() and t.isupper() for t in world.closes)
    assert not UNKNOWN_TICKERS & set(world.closes)
    assert world.sessions[0] == "2023-01-02"
    assert world.sessions[-1] == "2024-12-31"
    assert all(dt.date.fromisoformat(d).weekday() < 5 for d in world.sessions)
    assert all(len(c) == len(world.sessions) and min(c) > 0 for c in world.closes.values())


def test_generation_is_reproducible() -> None:
    assert build_world.__wrapped__() == build_world.__wrapped__()


def test_pinned_closes_hold() -> None:
    world = build_world()
    for (ticker, day), close in PINNED_CLOSES.items():
        assert world.close_on_or_before(ticker, day) == (day, close)


def test_the_lesson_tool_outputs() -> None:
    assert REGISTRY.execute("precio", {"ticker": "BUSI", "fecha": "2024-03-16"}) == {
        "resultado": {"ticker": "BUSI", "fecha": "2024-03-15", "cierre": 26.19}
    }
    assert REGISTRY.execute("precio", {"ticker": "BUSI", "fecha": "16/03/2024"}) == {
        "error": "argumentos no válidos: fecha: String should match pattern "
        "'^\\d{4}-\\d{2}-\\d{2}$'"
    }
    assert REGISTRY.execute("calculadora", {"expresion": "(27.88/26.19 - 1)*100"}) == {
        "resultado": 6.4528
    }
    assert REGISTRY.execute("calculadora", {"expresion": "__import__('os').getcwd()"}) == {
        "error": "solo números, + - * / y paréntesis"
    }
    assert REGISTRY.execute(
        "buscar_noticias", {"ticker": "BUSI", "desde": "2024-03-18", "hasta": "2024-03-20"}
    ) == {"resultado": [{"fecha": "2024-03-19", "titular": "Un fondo ofrece comprar Busmar Hogar"}]}


def test_day_month_trap_and_unknown_ticker() -> None:
    assert tools.precio("BUSI", "2024-03-01")["cierre"] == 25.20
    assert tools.precio("BUSI", "2024-01-03")["cierre"] == 27.75
    assert tools.precio("BUSI", "2024-03-22")["cierre"] == 27.88
    assert REGISTRY.execute("precio", {"ticker": "ACME", "fecha": "2024-03-15"}) == {
        "error": "ticker desconocido: ACME"
    }
    assert REGISTRY.execute("precio", {"ticker": "BUSI", "fecha": "2022-06-01"}) == {
        "error": "sin datos hasta 2022-06-01"
    }
    assert REGISTRY.execute("precio", {"ticker": "BUSI", "fecha": "2024-02-30"}) == {
        "error": "fecha inexistente: 2024-02-30"
    }


def test_variacion_matches_the_calculator_path() -> None:
    result = tools.variacion("BUSI", "2024-03-15", "2024-03-22")
    assert result["variacion_pct"] == 6.45
    assert result["desde"]["cierre"] == 26.19
    assert result["hasta"]["cierre"] == 27.88


def test_news_are_deduplicated_and_bounded() -> None:
    world = build_world()
    copies = [n for n in world.news["TORC"] if n.day == "2024-04-10"]
    assert len(copies) == 3
    found = tools.buscar_noticias("TORC", "2024-04-08", "2024-04-12")
    assert [n["titular"] for n in found] == [
        "Torcal Energía adjudica su nuevo parque eólico",
        "Torcal Energía recompra acciones propias",
    ]
    busy = max(world.news, key=lambda t: len(world.news[t]))
    everything = tools.buscar_noticias(busy, "2023-01-01", "2024-12-31")
    assert len(everything) == tools.MAX_HEADLINES
    assert len({n["titular"] for n in everything}) == len(everything)


def test_calculator_rejects_anything_but_arithmetic() -> None:
    for code in ["open('/etc/passwd').read()", "2**10", "x + 1", "[1, 2]", "1 +", "'a' * 3"]:
        assert REGISTRY.execute("calculadora", {"expresion": code}) == {
            "error": tools.ONLY_ARITHMETIC
        }


numbers = st.integers(min_value=1, max_value=999).map(str)


def _expression(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    op = st.sampled_from(["+", "-", "*", "/"])
    return st.builds(lambda a, o, b: f"({a} {o} {b})", children, op, children)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.recursive(numbers, _expression, max_leaves=8))
def test_calculator_agrees_with_python_on_arithmetic(expression: str) -> None:
    try:
        expected = eval(compile(ast.parse(expression, mode="eval"), "<expr>", "eval"))
    except ZeroDivisionError:
        assert "error" in REGISTRY.execute("calculadora", {"expresion": expression})
        return
    assert tools.calculadora(expression) == round(expected, 4)
