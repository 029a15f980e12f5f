"""The verifier: check a final answer against the trajectory that produced it.

Deterministic rules from the trading-research lesson, cheap enough to run on every run:

1. every number in the answer appears in a successful tool result or in the question,
   within 0.6 % (``|x - y| <= 0.006 * max(1, |y|)``, compared as magnitudes);
2. every percentage comes from a calculating tool (by default ``calculadora`` and
   ``variacion``), not from the model's head;
3. when a tool failed and nothing resolved it afterwards (no later successful call of the
   same tool), the answer may not give a datum it could only have invented;
4. a final answer is required;
5. every quoted passage («...», "..." or “...”) appears literally in a result of the
   news tool (by default ``buscar_noticias``);
6. when the question asks for a percentage, the answer gives one (rule 2 makes it calculated).

Numbers are read in Spanish and English formats. A lone group of three digits after one
separator is ambiguous ("1.234" is 1234 in Spanish and 1.234 in English; "1,234" the other
way round): the lesson reads "1.234" as 1234 and "1,234" as 1.234, and the verifier accepts
either reading when one of them is sourced, so neither language's answers fail spuriously.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evals.graders.base import GradeContext, GraderError, verdict
from evals.graders.registry import register
from evals.model.results import Grade
from evals.model.trajectory import Step, tool_calls

DEFAULT_CALCULATING_TOOLS = ("calculadora", "variacion")
DEFAULT_HEADLINE_TOOLS = ("buscar_noticias",)
DEFAULT_TOLERANCE = 0.006

NUMBER = re.compile(r"\d[\d.,]*\d|\d")
PERCENTAGE = re.compile(
    r"(\d[\d.,]*\d|\d)\s*(?:%|por\s+ciento\b|percent\b|per\s+cent\b)", re.IGNORECASE
)
QUOTED = re.compile(r"«([^»]+)»|\"([^\"]+)\"|“([^”]+)”")
ASKS_PERCENTAGE = re.compile(
    r"%|porcentaje|porcentual|por\s+ciento|percent|percentage", re.IGNORECASE
)
_THOUSANDS_DOT = re.compile(r"\d{1,3}(\.\d{3})+")
_THOUSANDS_COMMA = re.compile(r"\d{1,3}(,\d{3})+")


@dataclass(frozen=True, slots=True)
class NumberToken:
    """A number as written in a text, with every value it can plausibly mean."""

    text: str
    readings: tuple[float, ...]


def _readings(token: str) -> list[tuple[float, ...]]:
    """The values one numeric token denotes; a token that is not one number splits apart."""
    has_dot, has_comma = "." in token, "," in token
    if has_dot and has_comma:
        mark = "." if token.rfind(".") > token.rfind(",") else ","
        integer, _, fraction = token.rpartition(mark)
        digits = integer.replace(".", "").replace(",", "")
        if digits.isdigit() and fraction.isdigit():
            return [(float(f"{digits}.{fraction}"),)]
    elif has_dot:
        if _THOUSANDS_DOT.fullmatch(token):
            plain = float(token.replace(".", ""))
            return [(plain, float(token))] if token.count(".") == 1 else [(plain,)]
        if token.count(".") == 1:
            return [(float(token),)]
    elif has_comma:
        if _THOUSANDS_COMMA.fullmatch(token) and token.count(",") > 1:
            return [(float(token.replace(",", "")),)]
        if token.count(",") == 1:
            decimal = float(token.replace(",", "."))
            if _THOUSANDS_COMMA.fullmatch(token):
                return [(decimal, float(token.replace(",", "")))]
            return [(decimal,)]
    else:
        return [(float(token),)]
    return [(float(part),) for part in re.split(r"[.,]", token) if part]


def numbers_in(text: str) -> list[NumberToken]:
    """Every number written in a text, in Spanish or English format (see module notes)."""
    found: list[NumberToken] = []
    for token in NUMBER.findall(text or ""):
        found.extend(NumberToken(token, readings) for readings in _readings(token))
    return found


def _leaves(value: Any) -> Iterator[Any]:
    """Every scalar inside a JSON-like value, dict keys included."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def source_numbers(value: Any) -> list[float]:
    """The numbers a tool result or a question offers: numeric leaves as they are, text parsed."""
    numbers: list[float] = []
    for leaf in _leaves(value):
        if isinstance(leaf, bool) or leaf is None:
            continue
        if isinstance(leaf, (int, float)):
            numbers.append(float(leaf))
        else:
            for token in numbers_in(str(leaf)):
                numbers.extend(token.readings)
    return numbers


def is_near(value: float, sources: list[float], tolerance: float = DEFAULT_TOLERANCE) -> bool:
    """True when `value` matches a source within the relative tolerance (magnitudes compared)."""
    x = abs(value)
    return any(abs(x - abs(y)) <= tolerance * max(1.0, abs(y)) for y in sources)


def _sourced(token: NumberToken, sources: list[float], tolerance: float) -> bool:
    return any(is_near(reading, sources, tolerance) for reading in token.readings)


def _text_leaves(value: Any) -> list[str]:
    return [leaf for leaf in _leaves(value) if isinstance(leaf, str)]


def tool_failed(step: Step) -> bool:
    """A tool step failed: an error field, or a result that is an error object (errors as data)."""
    if step.error is not None:
        return True
    return isinstance(step.result, dict) and bool(step.result.get("error"))


def unresolved_errors(calls: list[Step]) -> list[Step]:
    """Failed tool calls that no later successful call of the same tool resolved."""
    pending: list[Step] = []
    for index, step in enumerate(calls):
        if tool_failed(step) and not any(
            later.name == step.name and not tool_failed(later) for later in calls[index + 1 :]
        ):
            pending.append(step)
    return pending


def _quoted(answer: str) -> list[tuple[str, tuple[int, int]]]:
    return [
        (next(group for group in match.groups() if group is not None).strip(), match.span())
        for match in QUOTED.finditer(answer)
    ]


@dataclass(frozen=True, slots=True)
class VerifierRules:
    """Which tools calculate, which return headlines, and how close a number must be."""

    calculating_tools: tuple[str, ...] = DEFAULT_CALCULATING_TOOLS
    headline_tools: tuple[str, ...] = DEFAULT_HEADLINE_TOOLS
    tolerance: float = DEFAULT_TOLERANCE
    check_quotes: bool = True


def _tool_names(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise GraderError(f"verifier: {key} must be a tool name or a list of tool names")


def rules_from(config: dict[str, Any]) -> VerifierRules:
    """Verifier rules from an assertion's value/config mapping, defaults from the lesson."""
    known = {"calculating_tools", "headline_tools", "tolerance", "quotes"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise GraderError(f"verifier: unknown option(s) {unknown}; known: {sorted(known)}")
    rules = VerifierRules()
    tolerance = config.get("tolerance", rules.tolerance)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0:
        raise GraderError("verifier: tolerance must be a non-negative number")
    return VerifierRules(
        calculating_tools=_tool_names(
            config.get("calculating_tools", list(rules.calculating_tools)), "calculating_tools"
        ),
        headline_tools=_tool_names(
            config.get("headline_tools", list(rules.headline_tools)), "headline_tools"
        ),
        tolerance=float(tolerance),
        check_quotes=bool(config.get("quotes", True)),
    )


def verify_answer(
    question: Any,
    answer: str | None,
    trajectory: list[Step],
    rules: VerifierRules | None = None,
    stop_reason: str | None = None,
    request: Any = None,
) -> list[str]:
    """Every rule the answer breaks against its trajectory, as readable reasons (empty = OK).

    `question` is what may source a figure; `request` what the answer answers (by default
    the question): in a conversation, the user's message of the turn, while the figures
    the conversation gave before may be quoted."""
    rules = rules or VerifierRules()
    if answer is None or not answer.strip():
        return [f"sin respuesta: {stop_reason}" if stop_reason else "sin respuesta"]
    calls = tool_calls(trajectory)
    successes = [step for step in calls if not tool_failed(step)]
    seen = [n for step in successes for n in source_numbers(step.result)]
    calculated = [
        n
        for step in successes
        if step.name in rules.calculating_tools
        for n in source_numbers(step.result)
    ]
    asked = source_numbers(question)
    failures: list[str] = []

    checked = answer
    if rules.check_quotes:
        headlines = [
            text
            for step in successes
            if step.name in rules.headline_tools
            for text in _text_leaves(step.result)
        ]
        for quote, (start, end) in _quoted(answer):
            if any(quote in headline for headline in headlines):
                checked = checked[:start] + " " * (end - start) + checked[end:]
            else:
                failures.append(f"cita no encontrada en {'/'.join(rules.headline_tools)}: {quote}")

    unsourced = [
        token for token in numbers_in(checked) if not _sourced(token, seen + asked, rules.tolerance)
    ]
    failures.extend(f"cifra sin fuente: {token.text}" for token in unsourced)

    percentages = PERCENTAGE.findall(checked)
    for written in percentages:
        if not any(_sourced(t, calculated, rules.tolerance) for t in numbers_in(written)):
            failures.append(f"porcentaje sin cálculo: {written}%")
    asking = question if request is None else request
    if not percentages and ASKS_PERCENTAGE.search(" ".join(_text_leaves(asking))):
        failures.append("la pregunta pide un porcentaje y la respuesta no da ninguno")

    pending = unresolved_errors(calls)
    if pending and unsourced:
        tools = ", ".join(dict.fromkeys(step.name for step in pending))
        failures.append(f"error de herramienta sin resolver: {tools}")
    return failures


def _options(ctx: GradeContext) -> dict[str, Any]:
    value = ctx.value
    if value is not None and not isinstance(value, dict):
        raise GraderError("verifier: value must be a mapping of options or empty")
    return {**(ctx.assertion.config or {}), **(value or {})}


@register("verifier", layer="final")
def verifier(ctx: GradeContext) -> Grade:
    """Pass when the final answer breaks none of the verifier rules against its trajectory."""
    rules = rules_from(_options(ctx))
    answer = None if ctx.output is None else ctx.text
    question: list[Any] = [ctx.prompt, ctx.vars]
    request = None
    messages = ctx.response.metadata.get("messages")
    if "conversation" in ctx.response.metadata and isinstance(messages, list):
        # a conversation: the user's messages may source figures; what is asked is the
        # turn's message (a turn's prompt) or, for the whole conversation, every message
        said = [m.get("content") for m in messages if m.get("role") == "user"]
        question.append(said)
        request = ctx.prompt if "turn" in ctx.response.metadata else said
    failures = verify_answer(
        question, answer, ctx.trajectory, rules, ctx.response.stop_reason, request
    )
    grade = verdict(
        ctx,
        not failures,
        "the answer is backed by its trajectory",
        "; ".join(failures),
    )
    grade.metadata["failures"] = failures
    return grade
