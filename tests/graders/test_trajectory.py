"""promptfoo's trajectory assertions and tool-call-f1 over the normalized trajectory."""

from __future__ import annotations

import pytest
from trajectory_kit import grade_run, tool

from evals.model.trajectory import Step

RUN = [
    Step("model", "gpt-4o-mini"),
    tool("precio", {"ticker": "BUSI", "fecha": "2024-03-15"}),
    tool("precio", {"ticker": "BUSI", "fecha": "2024-03-22"}),
    Step("model", "gpt-4o-mini"),
    tool("calculadora", {"expresion": "(27.88/26.19 - 1)*100", "precision": 4}),
    Step("message", "assistant"),
]


def test_tool_used_list_requires_every_tool() -> None:
    assert grade_run("trajectory:tool-used", ["precio", "calc*"], RUN).passed
    grade = grade_run("trajectory:tool-used", ["precio", "variacion"], RUN)
    assert not grade.passed
    assert grade.reason.startswith("Missing required tool(s): variacion. Actual tools: tool:precio")


def test_tool_used_names_are_case_insensitive_globs() -> None:
    assert grade_run("trajectory:tool-used", "PRE?IO", RUN).passed


def test_not_tool_used_fails_when_any_forbidden_tool_was_used() -> None:
    assert grade_run("not-trajectory:tool-used", ["enviar", "borrar"], RUN).passed
    grade = grade_run("not-trajectory:tool-used", ["enviar", "precio"], RUN)
    assert not grade.passed
    assert grade.reason.startswith("Forbidden tool(s) were used: precio")


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        ({"name": "precio"}, True),
        ({"name": "precio", "min": 2}, True),
        ({"name": "precio", "min": 3}, False),
        ({"name": "precio", "max": 1}, False),
        ({"name": "variacion", "max": 1}, False),
        ({"pattern": "p*", "min": 2, "max": 2}, True),
    ],
)
def test_tool_used_counts(value: dict, passed: bool) -> None:
    assert grade_run("trajectory:tool-used", value, RUN).passed is passed


def test_tool_used_count_reason() -> None:
    grade = grade_run("trajectory:tool-used", {"name": "precio", "max": 1}, RUN)
    assert grade.reason.startswith("Matched tool 'precio' 2 time(s) (expected 1-1)")


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        (["precio", "calculadora"], True),
        (["calculadora", "precio"], False),
        ({"mode": "in_order", "steps": ["precio", "precio", "calculadora"]}, True),
        ({"mode": "exact", "steps": ["precio", "calculadora"]}, False),
        ({"mode": "exact", "steps": ["precio", "precio", "calculadora"]}, True),
    ],
)
def test_tool_sequence(value: object, passed: bool) -> None:
    assert grade_run("trajectory:tool-sequence", value, RUN).passed is passed


def test_tool_sequence_reason_names_the_missing_step() -> None:
    grade = grade_run("trajectory:tool-sequence", ["calculadora", "precio"], RUN)
    assert grade.reason.startswith("Expected tool 'precio' was not observed in order")


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        ({"max": 6}, True),
        ({"max": 5}, False),
        ({"type": "tool", "min": 3, "max": 3}, True),
        ({"type": ["model", "message"], "max": 2}, False),
        ({"type": "tool", "pattern": "precio", "max": 1}, False),
        ({"name": "gpt-*", "min": 2}, True),
    ],
)
def test_step_count(value: dict, passed: bool) -> None:
    assert grade_run("trajectory:step-count", value, RUN).passed is passed


def test_step_count_reason_and_errors() -> None:
    grade = grade_run("trajectory:step-count", {"type": "tool", "max": 2}, RUN)
    assert grade.reason.startswith(
        "Matched 3 trajectory step(s) for type=tool (expected at most 2)"
    )
    assert grade_run("trajectory:step-count", {"type": "tool"}, RUN).errored


@pytest.mark.parametrize(
    ("value", "passed"),
    [
        ({"name": "precio", "args": {"fecha": "2024-03-22"}}, True),
        ({"name": "precio", "args": {"fecha": "2024-03-23"}}, False),
        ({"name": "precio", "args": {"fecha": "2024-03-22"}, "mode": "exact"}, False),
        (
            {"name": "precio", "args": {"ticker": "BUSI", "fecha": "2024-03-22"}, "mode": "exact"},
            True,
        ),
        (
            {
                "name": "calculadora",
                "args": {"expresion": "(27.88/26.19 - 1)*100"},
                "mode": "exact",
                "defaults": {"precision": 4},
            },
            True,
        ),
        (
            {
                "name": "calculadora",
                "args": {"expresion": "x", "precision": 4},
                "mode": "exact",
                "ignore": "expr*",
            },
            True,
        ),
        ({"name": "calculadora", "arguments": {"precision": 4.0}}, True),
        ({"name": "calculadora", "arguments": {"precision": True}}, False),
    ],
)
def test_tool_args_match(value: dict, passed: bool) -> None:
    assert grade_run("trajectory:tool-args-match", value, RUN).passed is passed


# promptfoo compares an `ignore` entry without wildcards to the argument name exactly, and a
# default with JavaScript's strict deep equality (true is not 1), as the harness does.
def test_tool_args_ignore_without_wildcards_is_case_sensitive() -> None:
    value = {
        "name": "calculadora",
        "args": {"expresion": "x", "precision": 4},
        "mode": "exact",
        "ignore": "EXPRESION",
    }
    assert grade_run("trajectory:tool-args-match", value, RUN).passed is False


def test_tool_args_default_true_does_not_strip_the_number_one() -> None:
    run = [tool("buscar", {"q": "a", "limit": 1})]
    value = {"name": "buscar", "args": {"q": "a"}, "mode": "exact", "defaults": {"limit": True}}
    assert grade_run("trajectory:tool-args-match", value, run).passed is False


def test_tool_args_wildcard_ignore_is_case_insensitive() -> None:
    value = {
        "name": "calculadora",
        "args": {"expresion": "x", "precision": 4},
        "mode": "exact",
        "ignore": "EXPR*",
    }
    assert grade_run("trajectory:tool-args-match", value, RUN).passed is True


def test_tool_args_match_reasons() -> None:
    missing = grade_run("trajectory:tool-args-match", {"name": "enviar", "args": {}}, RUN)
    assert missing.reason.startswith("No tool call matched 'enviar'")
    wrong = grade_run(
        "trajectory:tool-args-match", {"name": "precio", "args": {"ticker": "X"}}, RUN
    )
    assert wrong.reason.startswith("No call to tool 'precio' matched expected arguments (partial)")
    assert '"fecha": "2024-03-15"' in wrong.reason


@pytest.mark.parametrize(
    ("expected", "score"),
    [
        (["precio", "calculadora"], 1.0),
        ("precio", 2 * (1 / 2) * 1 / (1 / 2 + 1)),
        (["precio", "calculadora", "variacion", "buscar_noticias"], 2 * 1 * 0.5 / 1.5),
        (["enviar"], 0.0),
    ],
)
def test_tool_call_f1(expected: object, score: float) -> None:
    grade = grade_run("tool-call-f1", expected, RUN)
    assert grade.score == pytest.approx(score)
    assert grade.passed is (score == 1.0)


def test_tool_call_f1_threshold_and_reason() -> None:
    grade = grade_run("tool-call-f1", ["precio"], RUN, threshold=0.6)
    assert grade.passed
    assert grade.reason.startswith("Tool Call F1: 0.667 (precision=0.500, recall=1.000)")
    failing = grade_run("tool-call-f1", ["precio"], RUN, threshold=0.7)
    assert failing.reason.startswith("Tool Call F1 score 0.667 is below threshold 0.7")


def test_tool_call_f1_reads_tool_calls_from_the_output_without_a_trajectory() -> None:
    output = {
        "tool_calls": [
            {"function": {"name": "precio", "arguments": "{}"}},
            {"function": {"name": "calculadora", "arguments": "{}"}},
        ]
    }
    assert grade_run("tool-call-f1", "precio, calculadora", output=output).passed
    anthropic = '[{"type": "tool_use", "name": "precio", "input": {}}]'
    assert grade_run("tool-call-f1", ["precio"], output=anthropic).passed


# Recorded from promptfoo 0.121 (`promptfoo eval` with the echo provider on the same outputs).
OPENAI_CALLS = (
    '{"tool_calls": [{"function": {"name": "precio"}}, {"function": {"name": "calculadora"}}]}'
)
PROMPTFOO_F1_ROWS = [
    (
        OPENAI_CALLS,
        ["precio", "calculadora"],
        None,
        True,
        1.0,
        "Tool Call F1: 1.000 (precision=1.000, recall=1.000). "
        "Expected: [calculadora, precio], Called: [calculadora, precio]",
    ),
    (
        OPENAI_CALLS,
        ["precio"],
        0.6,
        True,
        0.6667,
        "Tool Call F1: 0.667 (precision=0.500, recall=1.000). "
        "Expected: [precio], Called: [calculadora, precio]",
    ),
    (
        OPENAI_CALLS,
        "precio, variacion, buscar_noticias",
        None,
        False,
        0.4,
        "Tool Call F1 score 0.400 is below threshold 1. "
        "Expected: [buscar_noticias, precio, variacion], Called: [calculadora, precio]. "
        "Precision=0.500, Recall=0.333",
    ),
    (
        '[{"type": "tool_use", "name": "precio", "input": {}}]',
        ["precio", "calculadora"],
        0.5,
        True,
        0.6667,
        "Tool Call F1: 0.667 (precision=1.000, recall=0.500). "
        "Expected: [calculadora, precio], Called: [precio]",
    ),
]


@pytest.mark.parametrize(
    ("output", "value", "threshold", "passed", "score", "reason"), PROMPTFOO_F1_ROWS
)
def test_tool_call_f1_matches_promptfoo(
    output: str, value: object, threshold: float | None, passed: bool, score: float, reason: str
) -> None:
    grade = grade_run("tool-call-f1", value, output=output, threshold=threshold)
    assert (grade.passed, round(grade.score, 4), grade.reason) == (passed, score, reason)
