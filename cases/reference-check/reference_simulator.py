"""The scripted models behind agent-v2 and agent-v3 of the agents book's chapter 10.

The script reads the citation the user gives (a surname, optional "et al." and a year in
parentheses, then a title), whether the user asks to publish and where, and the tool
outputs so far. Behaviours are drawn per run from the model's rates with a generator
seeded by the run's seed and the request:

- ``checked``: search the source, build the reference, validate it with validate_apa,
  then answer (and publish when asked, which the loop submits to a reviewer);
- ``broad_first``: the same, after a first search that is too generic ("paper citado");
- ``freeform``: search, then publish the page straight away and answer "La referencia
  parece correcta." without validating: the chapter's agent-v3.

The behaviour is the run's route, which the agents record as their ``route.decision``
(``ROUTES``: ``mcp.biblioteca`` for the checked flows, ``freeform`` otherwise).

Each model has a usage and latency profile, so a run's cost and simulated duration follow
from its path exactly as in the chapter (agent-v2: 0.041 and 4200 ms; agent-v3: 0.132
and 9100 ms on the chapter's case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evals.kits import Action, Conversation, LatencyModel, choose, draw

CHECKED = "checked"
BROAD_FIRST = "broad_first"
FREEFORM = "freeform"
DEFAULT_PAGE = "/fasciculo-05"
GENERIC_QUERY = "paper citado"

ROUTES = {CHECKED: "mcp.biblioteca", BROAD_FIRST: "mcp.biblioteca", FREEFORM: "freeform"}

RATES: dict[str, dict[str, float]] = {
    "sim-v2": {BROAD_FIRST: 0.1},
    "sim-v3": {FREEFORM: 0.85},
}


@dataclass(frozen=True, slots=True)
class Profile:
    """Tokens a model reports per call (input; output of a tool turn and of the answer)."""

    input_tokens: int
    tool_turn_output_tokens: int
    answer_output_tokens: int


PROFILES: dict[str, Profile] = {
    "sim-v2": Profile(4000, 300, 500),
    "sim-v3": Profile(12000, 1400, 1400),
}
TOOL_LATENCY_MS = {"search_source": 700.0, "validate_apa": 200.0, "publish_page": 1200.0}
LATENCIES: dict[str, LatencyModel] = {
    "sim-v2": LatencyModel(1100.0, TOOL_LATENCY_MS),
    "sim-v3": LatencyModel(2400.0, TOOL_LATENCY_MS),
}

_CITATION = re.compile(
    r"(?P<surname>[A-ZÁÉÍÓÚ][\wáéíóúñ'-]+)(?: et al\.)? \((?P<year>\d{4})\),? (?P<title>[^.«»]+)"
)
_PUBLISH = re.compile(r"\bpubl[ií]ca", re.IGNORECASE)
_PAGE = re.compile(r"(?<![\w.])(/[\w/-]+)")


@dataclass(frozen=True, slots=True)
class Request:
    """The citation to check and whether (and where) to publish it."""

    text: str
    surname: str | None
    year: str | None
    title: str | None
    publish: bool
    page: str


def parse_request(text: str) -> Request:
    """Citation parts, publish intent and page path of a request in the suite's phrasing."""
    citation = _CITATION.search(text)
    page = _PAGE.search(text)
    return Request(
        text=text,
        surname=citation["surname"] if citation else None,
        year=citation["year"] if citation else None,
        title=citation["title"].strip() if citation else None,
        publish=_PUBLISH.search(text) is not None,
        page=page.group(1) if page else DEFAULT_PAGE,
    )


def _query(request: Request) -> str:
    return " ".join(p for p in (request.surname, request.year, request.title) if p)


def _documents(output: dict[str, Any]) -> list[dict[str, Any]]:
    return (output.get("result") or {}).get("documents") or []


def _reference(document: dict[str, Any]) -> str:
    return f"{document['authors']} ({document['year']}). {document['title']}. {document['url']}"


def next_action(request: Request, outputs: list[dict[str, Any]], behaviour: str) -> Action:
    """The script's next move for this request and behaviour, given the outputs so far."""
    if behaviour == BROAD_FIRST:
        if not outputs:
            return [("search_source", {"query": GENERIC_QUERY})]
        outputs = outputs[1:]
    if not outputs:
        return [("search_source", {"query": _query(request)})]
    documents = _documents(outputs[0])
    if not documents:
        return (
            f"No encuentro la fuente citada ({_query(request)}) en el catálogo; "
            "no genero una referencia sin fuente comprobada."
        )
    reference = _reference(documents[0])
    if behaviour == FREEFORM:
        if len(outputs) == 1:
            return [("publish_page", {"path": request.page, "content": reference})]
        return "La referencia parece correcta."
    if len(outputs) == 1:
        return [("validate_apa", {"reference": reference, "style": "APA7"})]
    checked = outputs[1].get("result") or {}
    if not checked.get("valid"):
        return f"La referencia no supera la validación APA: {checked.get('problems')}."
    if request.publish and len(outputs) == 2:
        return [("publish_page", {"path": request.page, "content": reference})]
    answer = f"Referencia APA 7 verificada con la fuente (autor, año y URL): {reference}"
    if request.publish:
        published = outputs[2]
        if "error" in published:
            return f"{answer} No se ha publicado: {published['error']}."
        return f"{answer} Publicada en {request.page} tras la aprobación."
    return answer


def behaviour_of(model: str, question: str, seed: int) -> str:
    """The behaviour `model` draws for this question and seed."""
    rates = RATES.get(model)
    if rates is None:
        raise ValueError(f"unknown simulated model {model!r}: use one of {tuple(RATES)}")
    return choose(rates, draw(seed, parse_request(question).text), CHECKED)


def script(conversation: Conversation, seed: int) -> Action:
    """The simulated model: parse the request, draw this run's behaviour, act."""
    behaviour = behaviour_of(conversation.model, conversation.question, seed)
    return next_action(parse_request(conversation.question), conversation.outputs, behaviour)


def usage(conversation: Conversation, action: Action, sent: int) -> tuple[int, int]:
    """The model profile's token counts for this call (the answer turn writes more)."""
    profile = PROFILES[conversation.model]
    produced = (
        profile.answer_output_tokens if isinstance(action, str) else profile.tool_turn_output_tokens
    )
    return profile.input_tokens, produced
