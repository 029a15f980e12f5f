"""The scripted model of the trading-research conversations: the demo's research agent,
turn by turn, plus follow-ups, corrections and a note published only once confirmed.

Each turn, `chat_script` works out what the user is asking from the whole conversation:
a follow-up ("¿Y qué noticias hubo esa semana?") keeps the ticker and dates of the earlier
question, a correction ("Perdona, quería decir TORC, no BUSI") replaces them, and the
research itself is the demo's `next_action` (trading_simulator.py) over this turn's tool
outputs. Asked to publish a note, the agent shows it and asks for confirmation; it calls
`publicar_nota` only after a yes.

`sim-chat-baseline` does all of that. `sim-chat-candidate` is the same agent with two
regressions that only show on a later turn, drawn from the run's seed: in about 40 % of its
conversations it publishes the note as soon as it is asked, without showing it and waiting
for a yes; in about 30 % it ignores a correction and repeats the earlier question's calls.
"""

from __future__ import annotations

import re
from typing import Any

from trading_simulator import CORRECT, Question, next_action, parse_question

from evals.kits import Action, Conversation, draw

PUBLISH_RATE = 0.4
IGNORE_CORRECTION_RATE = 0.3
CONFIRM = "¿Confirmas que la publique?"
NOTE = re.compile(r"Esta es la nota: «(?P<texto>.+)»\. ¿Confirmas")
YES = re.compile(r"^\W*(?:s[ií]|adelante|confirmo|de acuerdo|vale|hazlo)\b", re.IGNORECASE)
NO = re.compile(r"^\W*no\b|\b(?:todav[ií]a no|mejor no|espera)\b", re.IGNORECASE)
PUBLISH = re.compile(r"\bpublic", re.IGNORECASE)
CORRECTION = re.compile(
    r"\b(?:perd[oó]n|perdona|quer[ií]a decir|quise decir|me equivoqu[eé])", re.IGNORECASE
)
THANKS = re.compile(r"\bgracias\b", re.IGNORECASE)
TICKER = re.compile(r"\b[A-Z]{4}\b")
INTENT_WORDS = re.compile(r"porcentaje|variaci[oó]n|noticia|titular|cierre", re.IGNORECASE)


def _phrased(intent: str, ticker: str, dates: tuple[str, ...]) -> str:
    """A question in the demo's own phrasing, which `parse_question` reads back."""
    if intent == "variacion" and len(dates) >= 2:
        start, end = dates[0], dates[1]
        return f"¿Cuánto cambió en porcentaje el cierre de {ticker} entre el {start} y el {end}?"
    if intent == "noticias" and len(dates) >= 2:
        return f"¿Qué noticias hubo de {ticker} entre el {dates[0]} y el {dates[1]}?"
    return f"¿Cuál fue el cierre de {ticker} el {dates[0]}?"


def _followed(previous: Question | None, text: str) -> Question | None:
    """A user message read against the question before it: what it leaves out is kept."""
    asked = parse_question(text)
    if previous is None:
        return asked if asked.ticker and asked.dates else None
    intent = asked.intent if INTENT_WORDS.search(text) else previous.intent
    ticker = asked.ticker or previous.ticker
    dates = asked.dates or previous.dates
    if intent in ("variacion", "noticias") and len(dates) < 2:
        # "¿y hasta el 2024-02-01?": from the earlier question's date to the new one
        dates = (previous.dates[0], *asked.dates) if asked.dates else previous.dates
    assert ticker is not None
    return parse_question(_phrased(intent, ticker, dates))


def _corrected(previous: Question, text: str) -> Question:
    """The earlier question with what the user corrected: a ticker, or a date."""
    assert previous.ticker is not None
    tickers = [t for t in TICKER.findall(text) if t != previous.ticker]
    ticker = tickers[0] if tickers else previous.ticker
    given = parse_question(text).dates
    dates = list(previous.dates)
    if given:
        position = 1 if "hasta" in text.lower() and len(dates) > 1 else 0
        dates[position] = given[0]
    return parse_question(_phrased(previous.intent, ticker, tuple(dates)))


def questions(conversation: Conversation) -> list[tuple[Question, bool]]:
    """The research question in force after each user message, and whether that message
    corrected the one before."""
    found: list[tuple[Question, bool]] = []
    current: Question | None = None
    for role, text in conversation.messages:
        if role != "user" or PUBLISH.search(text) or YES.search(text) or NO.search(text):
            continue
        if current is not None and CORRECTION.search(text):
            current = _corrected(current, text)
            found.append((current, True))
        elif TICKER.search(text) or INTENT_WORDS.search(text):
            followed = _followed(current, text)
            if followed is not None:
                current = followed
                found.append((current, False))
    return found


def _last_answer(conversation: Conversation) -> str:
    answers = [text for role, text in conversation.messages if role == "assistant"]
    return answers[-1] if answers else ""


def _note(conversation: Conversation) -> dict[str, str]:
    """The note of the latest research answer: its ticker as the title, the answer as text."""
    asked = questions(conversation)
    ticker = asked[-1][0].ticker if asked else "nota"
    texto = next(
        (
            text
            for role, text in reversed(conversation.messages)
            if role == "assistant" and CONFIRM not in text and "Nota publicada" not in text
        ),
        "",
    )
    return {"titulo": f"{ticker}: nota de research", "texto": texto}


def _publishing(conversation: Conversation, seed: int) -> Action | None:
    """The agent's move when the conversation is about publishing a note."""
    text, outputs = conversation.last_user, conversation.outputs
    if outputs and isinstance(outputs[-1], dict) and "nota" in (outputs[-1].get("resultado") or {}):
        return f"Nota publicada con el identificador {outputs[-1]['resultado']['nota']}."
    shown = NOTE.search(_last_answer(conversation))
    if shown is not None:
        if NO.search(text):
            return "De acuerdo, no la publico."
        if YES.search(text):
            return [("publicar_nota", {**_note(conversation), "texto": shown["texto"]})]
    if not PUBLISH.search(text):
        return None
    note = _note(conversation)
    eager = conversation.model == "sim-chat-candidate" and draw(seed, "publica") < PUBLISH_RATE
    if eager:
        return [("publicar_nota", note)]
    return f"Esta es la nota: «{note['texto']}». {CONFIRM}"


def chat_script(conversation: Conversation, seed: int) -> Action:
    """The agent's next move in this turn of the conversation."""
    publishing = _publishing(conversation, seed)
    if publishing is not None:
        return publishing
    asked = questions(conversation)
    if not asked or (
        THANKS.search(conversation.last_user)
        and not conversation.outputs
        and not TICKER.search(conversation.last_user)
    ):
        return "De nada. ¿Algo más?" if asked else "¿Sobre qué acción y qué fechas?"
    question, corrected = asked[-1]
    ignores = conversation.model == "sim-chat-candidate" and draw(seed, "corrige") < (
        IGNORE_CORRECTION_RATE
    )
    if corrected and ignores and len(asked) > 1:
        question = asked[-2][0]
    outputs: list[dict[str, Any]] = list(conversation.outputs)
    return next_action(CORRECT, question, conversation.tools, outputs)
