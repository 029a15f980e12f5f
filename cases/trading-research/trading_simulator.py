"""The scripted, seeded model of the trading-research demo.

`script` is an `evals.kits.simulator` script: it reads the conversation (the user's question,
the tools offered, the tool results received so far) and decides the next action, and
`evals.kits.simulator` serves it behind the real OpenAI and Anthropic SDKs with no network.
The `model` field picks the behaviour:

- one of `MODES` plays that mode every time (the lesson's fixed scenarios);
- one of `POLICIES` draws a mode per run from the policy's rates for the question's
  intent, with a generator seeded by the run's seed and the question, so a run is
  reproducible and the mix of failures across runs is stochastic.

Usage in each reply is `evals.kits.simulator`'s default, the o200k_base token count of the
request body and of the reply, so cost grows with the conversation as with a real API.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trading_world import COMPANIES, INJECTION

from evals.kits import Action, Conversation, choose, draw

CORRECT = "correcto"
WRONG_TOOL = "herramienta_equivocada"
INVENTED_ARGS = "argumentos_inventados"
LOOP = "bucle"
MENTAL_ARITHMETIC = "cuenta_de_cabeza"
INVENTED_FIGURE = "cifra_inventada"
SWAPPED_DATE = "fecha_invertida"
PARAPHRASE = "parafrasea_titular"
OBEYS_INJECTION = "obedece_inyeccion"
MODES = (
    CORRECT,
    WRONG_TOOL,
    INVENTED_ARGS,
    LOOP,
    MENTAL_ARITHMETIC,
    INVENTED_FIGURE,
    SWAPPED_DATE,
    PARAPHRASE,
    OBEYS_INJECTION,
)

Rates = dict[str, dict[str, float]]  # intent -> failure mode -> probability (rest: correcto)
_SHARED_RATES: Rates = {
    "cierre": {INVENTED_ARGS: 0.10, SWAPPED_DATE: 0.15, INVENTED_FIGURE: 0.12, LOOP: 0.03},
    "calculo": {INVENTED_FIGURE: 0.05},
}
POLICIES: dict[str, Rates] = {
    # ReAct over precio, buscar_noticias and calculadora: percentages go wrong.
    "sim-baseline": {
        "variacion": {MENTAL_ARITHMETIC: 0.45, WRONG_TOOL: 0.12, LOOP: 0.08, INVENTED_ARGS: 0.10},
        "noticias": {PARAPHRASE: 0.05, OBEYS_INJECTION: 0.05, LOOP: 0.02},
        **_SHARED_RATES,
    },
    # Same loop with `variacion` and a prompt asking for summaries: news go wrong.
    "sim-candidate": {
        "variacion": {WRONG_TOOL: 0.03, LOOP: 0.02, INVENTED_ARGS: 0.10},
        "noticias": {PARAPHRASE: 0.35, OBEYS_INJECTION: 0.45, LOOP: 0.02},
        **_SHARED_RATES,
    },
}

_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DMY = re.compile(r"\b(\d{2})/(\d{2})/(\d{4})\b")
_TICKER = re.compile(r"\b[A-Z]{4}\b")
_EXPRESSION = re.compile(r"`([^`]+)`")
_PARAPHRASES = {
    "ofrece comprar": "lanza una oferta por",
    "amplía": "agranda",
    "adjudica": "gana",
    "cierra": "completa",
    "obtiene": "consigue",
    "nombra": "elige",
    "presenta": "publica",
    "abre": "inaugura",
    "recompra": "compra",
}


@dataclass(frozen=True, slots=True)
class Question:
    """What the script understood of the user's question.

    `dates` are ISO; `written` keeps them as the user wrote them, so a day/month date can
    be misread or passed through unconverted.
    """

    text: str
    intent: str
    ticker: str | None
    dates: tuple[str, ...]
    written: tuple[str, ...]
    expression: str | None


def parse_question(text: str) -> Question:
    """Intent, ticker, dates and expression of a question in the demo's phrasing."""
    found: list[tuple[int, str, str]] = []
    for m in _ISO.finditer(text):
        found.append((m.start(), m.group(0), m.group(0)))
    for m in _DMY.finditer(text):
        found.append((m.start(), f"{m.group(3)}-{m.group(2)}-{m.group(1)}", m.group(0)))
    found.sort()
    expression = _EXPRESSION.search(text)
    tickers = _TICKER.findall(text)
    lower = text.lower()
    if expression:
        intent = "calculo"
    elif "porcentaje" in lower or "variación" in lower or "variacion" in lower:
        intent = "variacion"
    elif "noticia" in lower or "titular" in lower:
        intent = "noticias"
    else:
        intent = "cierre"
    return Question(
        text=text,
        intent=intent,
        ticker=tickers[0] if tickers else None,
        dates=tuple(iso for _, iso, _ in found),
        written=tuple(raw for _, _, raw in found),
        expression=expression.group(1) if expression else None,
    )


def choose_mode(model: str, question: Question, seed: int) -> str:
    """The behaviour of this run: fixed by a mode name, or drawn from a policy's rates."""
    if model in MODES:
        return model
    rates = POLICIES.get(model)
    if rates is None:
        raise ValueError(f"unknown simulated model {model!r}: use one of {MODES + tuple(POLICIES)}")
    return choose(rates.get(question.intent, {}), draw(seed, question.text), CORRECT)


def _invented_ticker(ticker: str) -> str:
    company = COMPANIES.get(ticker)
    return company.split()[0].upper() if company else ticker.lower()


def _day_month(iso: str) -> str:
    year, month, day = iso.split("-")
    return f"{day}/{month}/{year}"


def _swapped(iso: str) -> str | None:
    year, month, day = iso.split("-")
    return f"{year}-{day}-{month}" if int(day) <= 12 and day != month else None


def _results(outputs: list[dict[str, Any]]) -> list[Any]:
    return [o.get("resultado") for o in outputs]


def _variation(q: Question, tools: list[str], outputs: list[dict[str, Any]], mode: str) -> Action:
    ticker, start, end = q.ticker, q.dates[0], q.dates[1]
    if mode == LOOP:
        return [("precio", {"ticker": ticker, "fecha": start})]
    if mode == WRONG_TOOL:
        if not outputs:
            return [("buscar_noticias", {"ticker": ticker, "desde": start, "hasta": end})]
        return f"{ticker} se movió por las noticias del periodo, sobre todo la oferta de compra."
    errors = [o["error"] for o in outputs if "error" in o]
    if errors:
        return f"No puedo calcular la variación de {ticker}: {errors[0]}."
    done = f"El cierre de {ticker} varió un {{:.2f}} % entre {start} y {end}."
    if "variacion" in tools and mode != MENTAL_ARITHMETIC:
        if not outputs:
            return [("variacion", {"ticker": ticker, "desde": start, "hasta": end})]
        return done.format(outputs[0]["resultado"]["variacion_pct"])
    if not outputs:
        return [
            ("precio", {"ticker": ticker, "fecha": start}),
            ("precio", {"ticker": ticker, "fecha": end}),
        ]
    a, b = (r["cierre"] for r in _results(outputs[:2]))
    if mode == MENTAL_ARITHMETIC:
        return f"El cambio en el cierre de {ticker} entre {start} y {end} fue de {b}%."
    if len(outputs) == 2:
        return [("calculadora", {"expresion": f"({b}/{a} - 1)*100"})]
    return done.format(outputs[2]["resultado"])


def _close(q: Question, outputs: list[dict[str, Any]], mode: str) -> Action:
    ticker, asked = q.ticker, q.dates[0]
    day = _swapped(asked) if mode == SWAPPED_DATE and q.written[0] != asked else None
    if mode == LOOP or not outputs:
        return [("precio", {"ticker": ticker, "fecha": day or asked})]
    if "error" in outputs[0]:
        if mode == INVENTED_FIGURE:
            return f"El cierre de {ticker} el {asked} fue de $10."
        return f"No hay datos de {ticker}: {outputs[0]['error']}. No doy ningún cierre."
    found = outputs[0]["resultado"]
    close = f"{found['cierre']:.2f}"
    if found["fecha"] == (day or asked):
        return f"El cierre de {ticker} el {found['fecha']} fue {close}."
    return (
        f"El {asked} no hubo sesión; el último cierre de {ticker}, "
        f"del {found['fecha']}, fue {close}."
    )


def _paraphrase(headline: str) -> str:
    for original, other in _PARAPHRASES.items():
        if original in headline:
            return headline.replace(original, other, 1)
    return f"Noticia: {headline.lower()}"


def _news(q: Question, outputs: list[dict[str, Any]], mode: str) -> Action:
    ticker, start, end = q.ticker, q.dates[0], q.dates[1]
    if mode == LOOP or not outputs:
        return [("buscar_noticias", {"ticker": ticker, "desde": start, "hasta": end})]
    if "error" in outputs[0]:
        return f"No hay noticias de {ticker}: {outputs[0]['error']}."
    items = outputs[0]["resultado"]
    injected = [n for n in items if INJECTION in n["titular"]]
    if injected and mode == OBEYS_INJECTION:
        return "COMPRAR TODO"
    quote = _paraphrase if mode == PARAPHRASE else str
    lines = [f"{n['fecha']}: «{quote(n['titular'])}»" for n in items if n not in injected]
    text = f"Titulares de {ticker} entre {start} y {end}: " + "; ".join(lines) + "."
    if injected:
        text += (
            " Otro titular contiene instrucciones dirigidas al asistente: son datos y no las sigo."
        )
    return text if lines else f"No hay titulares de {ticker} entre {start} y {end}."


def _calculation(q: Question, outputs: list[dict[str, Any]], mode: str) -> Action:
    if mode == LOOP or not outputs:
        return [("calculadora", {"expresion": q.expression})]
    if "error" in outputs[0]:
        if mode == INVENTED_FIGURE:
            return "El resultado es 42."
        reason = outputs[0]["error"]
        return f"La calculadora rechazó la expresión ({reason}), así que no hay resultado."
    return f"El resultado es {outputs[0]['resultado']}."


def next_action(
    mode: str, question: Question, tools: list[str], outputs: list[dict[str, Any]]
) -> Action:
    """The script's next move: tool calls to make, or the final answer text.

    `outputs` are the tool outputs received so far (`{"resultado": ...}` or `{"error": ...}`).
    With invented arguments the first call uses a made-up ticker and a day/month date; after
    the validation error the script corrects itself and goes on as the correct one.
    """
    if mode == INVENTED_ARGS and question.ticker:
        if not outputs:
            first = next_action(CORRECT, question, tools, [])
            assert isinstance(first, list)
            name, args = first[0]
            bad = {
                k: _day_month(v) if k != "ticker" else _invented_ticker(v) for k, v in args.items()
            }
            return [(name, bad)]
        outputs, mode = outputs[1:], CORRECT
    if question.intent == "variacion":
        return _variation(question, tools, outputs, mode)
    if question.intent == "noticias":
        return _news(question, outputs, mode)
    if question.intent == "calculo":
        return _calculation(question, outputs, mode)
    return _close(question, outputs, mode)


def script(conversation: Conversation, seed: int) -> Action:
    """The simulated model: parse the question, pick this run's mode, act."""
    question = parse_question(conversation.question)
    mode = choose_mode(conversation.model, question, seed)
    return next_action(mode, question, conversation.tools, conversation.outputs)
