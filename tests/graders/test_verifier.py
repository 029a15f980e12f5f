"""The verifier against the trading-research lesson's own examples and number formats."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from trajectory_kit import grade_run, tool

from evals.graders.verifier import VerifierRules, is_near, numbers_in, verify_answer

BUSI_QUESTION = (
    "¿Cuánto cambió en porcentaje el cierre de BUSI entre el 2024-03-15 y el 2024-03-22?"
)
ACME_QUESTION = "¿Cuál fue el cierre de ACME el 2024-03-15?"
CLOSES = [
    tool(
        "precio",
        {"ticker": "BUSI", "fecha": "2024-03-15"},
        {"ticker": "BUSI", "fecha": "2024-03-15", "cierre": 26.19},
    ),
    tool(
        "precio",
        {"ticker": "BUSI", "fecha": "2024-03-22"},
        {"ticker": "BUSI", "fecha": "2024-03-22", "cierre": 27.88},
    ),
]
CALCULATED = [*CLOSES, tool("calculadora", {"expresion": "(27.88/26.19 - 1)*100"}, 6.4528)]
UNKNOWN_TICKER = [
    tool("precio", {"ticker": "ACME", "fecha": "2024-03-15"}, error="ticker desconocido: ACME")
]
NEWS = [
    tool(
        "buscar_noticias",
        {"ticker": "BUSI", "desde": "2024-03-18", "hasta": "2024-03-20"},
        [{"fecha": "2024-03-19", "titular": "Un fondo ofrece comprar Busmar Hogar"}],
    )
]


@pytest.mark.parametrize(
    "answer", ["El cierre varió un 6,45 %.", "The close moved 6.45%.", "Subió un 6,45 por ciento."]
)
def test_calculated_percentage_is_accepted_in_both_formats(answer: str) -> None:
    assert verify_answer(BUSI_QUESTION, answer, CALCULATED) == []


def test_percentage_without_calculation_is_rejected() -> None:
    answer = (
        "El cambio en el cierre del producto BUSI entre el 2024-03-15 y el 2024-03-22 "
        "fue de 27.88%."
    )
    assert verify_answer(BUSI_QUESTION, answer, CLOSES) == ["porcentaje sin cálculo: 27.88%"]


def test_invented_close_after_unknown_ticker_gives_both_reasons() -> None:
    answer = "El cierre del ticker ACME el 2024-03-15 fue de $10."
    assert verify_answer(ACME_QUESTION, answer, UNKNOWN_TICKER) == [
        "cifra sin fuente: 10",
        "error de herramienta sin resolver: precio",
    ]


def test_honest_refusal_after_unknown_ticker_passes() -> None:
    answer = "No pude obtener el cierre de ACME el 2024-03-15: el ticker no existe."
    assert verify_answer(ACME_QUESTION, answer, UNKNOWN_TICKER) == []


def test_error_resolved_by_a_later_successful_call_is_not_reported() -> None:
    bad_date = tool("precio", {"ticker": "BUSI", "fecha": "15/03/2024"}, error="fecha no válida")
    failures = verify_answer(ACME_QUESTION, "Cerró en 26,19 y luego en 99.", [bad_date, *CLOSES])
    assert failures == ["cifra sin fuente: 99"]


def test_error_returned_as_data_counts_as_a_failed_call() -> None:
    as_data = [tool("precio", {"ticker": "ACME"}, {"error": "ticker desconocido: ACME"})]
    failures = verify_answer(ACME_QUESTION, "Cerró en 12.", as_data)
    assert "error de herramienta sin resolver: precio" in failures


def test_faithful_quoted_headline_passes_and_invented_one_fails() -> None:
    question = "¿Qué noticias hubo de BUSI entre el 18 y el 20 de marzo de 2024?"
    faithful = "El 19 de marzo: «Un fondo ofrece comprar Busmar Hogar»."
    invented = 'Hubo una noticia: "Busmar Hogar dispara su beneficio un 40 %".'
    assert verify_answer(question, faithful, NEWS) == []
    failures = verify_answer(question, invented, NEWS)
    assert "cita no encontrada en buscar_noticias: Busmar Hogar dispara su beneficio un 40 %" in (
        failures
    )
    assert "cifra sin fuente: 40" in failures
    assert "porcentaje sin cálculo: 40%" in failures


def test_quotes_from_another_tool_do_not_count_as_headlines() -> None:
    same_text = [tool("otra_fuente", {}, [{"titular": "Un fondo ofrece comprar Busmar Hogar"}])]
    failures = verify_answer("noticias", "«Un fondo ofrece comprar Busmar Hogar»", same_text)
    assert failures == [
        "cita no encontrada en buscar_noticias: Un fondo ofrece comprar Busmar Hogar"
    ]


def test_question_asking_for_a_percentage_needs_one() -> None:
    failures = verify_answer(BUSI_QUESTION, "El cierre pasó de 26,19 a 27,88.", CLOSES)
    assert failures == ["la pregunta pide un porcentaje y la respuesta no da ninguno"]


@pytest.mark.parametrize("answer", [None, "", "   "])
def test_missing_answer_fails(answer: str | None) -> None:
    assert verify_answer(ACME_QUESTION, answer, []) == ["sin respuesta"]
    assert verify_answer(ACME_QUESTION, answer, [], stop_reason="max_steps") == [
        "sin respuesta: max_steps"
    ]


def test_negative_variation_is_compared_by_magnitude() -> None:
    calc = [tool("variacion", {"ticker": "BUSI"}, {"variacion_pct": -3.21})]
    assert verify_answer("variación en %", "Cayó un 3,21 %.", calc) == []


def test_configured_calculating_tool_replaces_the_defaults() -> None:
    calc = [tool("math", {"expr": "1+1"}, 6.4528)]
    rules = VerifierRules(calculating_tools=("math",))
    assert verify_answer(BUSI_QUESTION, "Un 6,45 %.", calc, rules) == []
    assert verify_answer(BUSI_QUESTION, "Un 6,45 %.", calc) == ["porcentaje sin cálculo: 6,45%"]


def test_thousands_trap_is_accepted_in_either_reading() -> None:
    spanish = [tool("precio", {}, {"volumen": 1234})]
    english = [tool("precio", {}, {"cierre": 1.234})]
    assert verify_answer("volumen", "Volumen de 1.234 acciones.", spanish) == []
    assert verify_answer("cierre", "Closed at 1.234.", english) == []
    assert verify_answer("cierre", "Cerró en 1,234.", english) == []
    assert verify_answer("volumen", "Volume of 1,234 shares.", spanish) == []


def test_number_readings() -> None:
    readings = {t.text: t.readings for t in numbers_in("1.234 1,234 1.234,5 1,234.5 12.345.678")}
    assert readings == {
        "1.234": (1234.0, 1.234),
        "1,234": (1.234, 1234.0),
        "1.234,5": (1234.5,),
        "1,234.5": (1234.5,),
        "12.345.678": (12345678.0,),
    }
    assert [t.readings for t in numbers_in("19.03.2024")] == [(19.0,), (3.0,), (2024.0,)]
    assert [t.readings for t in numbers_in("6,45 y 27.88")] == [(6.45,), (27.88,)]


@settings(deadline=None)
@given(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
    st.floats(min_value=-0.0059, max_value=0.0059),
)
def test_within_tolerance_is_near(y: float, relative: float) -> None:
    x = y + relative * max(1.0, abs(y))
    assert is_near(x, [y])


@settings(deadline=None)
@given(
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.floats(min_value=0.0062, max_value=10),
)
def test_beyond_tolerance_is_not_near(y: float, relative: float) -> None:
    assert not is_near(y + relative * max(1.0, y), [y])


def test_verifier_assertion_grades_the_output() -> None:
    grade = grade_run(
        "verifier",
        trajectory=CLOSES,
        output="El cambio fue de 27.88%.",
        prompt=BUSI_QUESTION,
    )
    assert not grade.passed
    assert grade.reason == "porcentaje sin cálculo: 27.88%"
    assert grade.metadata["failures"] == ["porcentaje sin cálculo: 27.88%"]
    ok = grade_run("verifier", trajectory=CALCULATED, output="Un 6,45 %.", prompt=BUSI_QUESTION)
    assert ok.passed and ok.score == 1.0


def test_verifier_reads_numbers_of_the_question_from_vars() -> None:
    grade = grade_run(
        "verifier",
        trajectory=UNKNOWN_TICKER,
        output="No hay datos de ACME para el 2024-03-15.",
        prompt="{{pregunta}}",
        variables={"pregunta": ACME_QUESTION},
    )
    assert grade.passed, grade.reason


def test_verifier_options_from_value_and_config() -> None:
    calc = [tool("math", {}, 6.4528)]
    grade = grade_run(
        "verifier",
        {"calculating_tools": "math"},
        trajectory=calc,
        output="6,45 %",
        prompt=BUSI_QUESTION,
    )
    assert grade.passed, grade.reason
    by_config = grade_run(
        "verifier",
        trajectory=calc,
        output="6,45 %",
        prompt=BUSI_QUESTION,
        config={"calculating_tools": ["math"]},
    )
    assert by_config.passed, by_config.reason


def test_verifier_rejects_unknown_options_as_an_error() -> None:
    grade = grade_run("verifier", {"calculator": "math"}, output="1")
    assert grade.errored and "unknown option" in grade.reason


def test_no_answer_from_the_agent_fails_with_the_stop_reason() -> None:
    grade = grade_run(
        "verifier", trajectory=CLOSES, output=None, response={"stop_reason": "max_steps"}
    )
    assert not grade.passed
    assert grade.reason == "sin respuesta: max_steps"
