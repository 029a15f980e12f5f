"""The reference-checking tools of the agents book's chapter 10.

`search_source` finds a source in a small catalogue (the chapter's own bibliography) and
returns documents with `url`, `title` and `snippet`; `validate_apa` checks that a
reference is written in APA 7 form; `publish_page` publishes a page, an effect that needs
a human's approval. Deterministic: the same arguments give the same result.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from evals.kits import Tool, ToolRegistry


@dataclass(frozen=True, slots=True)
class Source:
    """One catalogued publication."""

    authors: str
    year: int
    title: str
    url: str
    snippet: str

    def apa(self) -> str:
        """The source's reference in APA 7 form."""
        return f"{self.authors} ({self.year}). {self.title}. {self.url}"


CATALOGUE = (
    Source(
        "Amershi, S. et al.",
        2019,
        "Software Engineering for Machine Learning: A Case Study",
        "https://doi.org/10.1109/ICSE-SEIP.2019.00042",
        "Nine stages of the machine learning workflow observed at Microsoft.",
    ),
    Source(
        "Baylor, D. et al.",
        2017,
        "TFX: A TensorFlow-Based Production-Scale Machine Learning Platform",
        "https://doi.org/10.1145/3097983.3098021",
        "A platform that integrates the components of production machine learning.",
    ),
    Source(
        "Liu, X. et al.",
        2024,
        "AgentBench: Evaluating LLMs as Agents",
        "https://doi.org/10.48550/arXiv.2308.03688",
        "Eight interactive environments to evaluate LLMs acting as agents.",
    ),
    Source(
        "Qin, Y. et al.",
        2023,
        "ToolLLM: Facilitating Large Language Models to Master 16000+ Real-World APIs",
        "https://doi.org/10.48550/arXiv.2307.16789",
        "ToolBench: instruction tuning for tool use over real-world APIs.",
    ),
    Source(
        "Jimenez, C. E. et al.",
        2024,
        "SWE-bench: Can Language Models Resolve Real-World GitHub Issues?",
        "https://proceedings.iclr.cc/paper_files/paper/2024/hash/"
        "edac78c3e300629acfe6cbe9ca88fb84-Abstract-Conference.html",
        "Real GitHub issues turned into repository editing tasks.",
    ),
)

APA_REFERENCE = re.compile(
    r"^(?P<authors>[A-ZÁÉÍÓÚ][\w'-]+, (?:[A-Z]\. ?)+(?:et al\.)?) "
    r"\((?P<year>\d{4})\)\. (?P<title>.+?)\.? (?P<url>https?://\S+)$"
)
_WORD = re.compile(r"[\wáéíóúñ]+", re.IGNORECASE)
MAX_DOCUMENTS = 3


class SearchSourceArgs(BaseModel):
    query: str = Field(min_length=3, max_length=200)


class ValidateApaArgs(BaseModel):
    reference: str = Field(min_length=1, max_length=1000)
    style: Literal["APA7"] = "APA7"


class PublishPageArgs(BaseModel):
    path: str = Field(pattern=r"^/[\w/-]+$")
    content: str = Field(min_length=1, max_length=5000)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 2 or w.isdigit()}


def search_source(query: str) -> dict[str, Any]:
    """Catalogued sources sharing a surname or year and a title word with the query."""
    wanted = _words(query)
    scored = []
    for source in CATALOGUE:
        surname = source.authors.split(",")[0].lower()
        words = _words(f"{source.title} {source.year}")
        score = 2 * (surname in wanted) + len(wanted & words)
        if score >= 2:
            scored.append((score, source))
    scored.sort(key=lambda pair: -pair[0])
    documents = [
        {
            "url": s.url,
            "title": s.title,
            "snippet": s.snippet,
            "authors": s.authors,
            "year": s.year,
        }
        for _, s in scored[:MAX_DOCUMENTS]
    ]
    return {"documents": documents}


def validate_apa(reference: str, style: str = "APA7") -> dict[str, Any]:
    """Whether a reference has APA 7's shape: authors, (year), title, DOI or URL."""
    match = APA_REFERENCE.match(reference.strip())
    if match is None:
        return {
            "valid": False,
            "style": style,
            "problems": ["expected 'Surname, I. (YYYY). Title. https://...'"],
        }
    return {"valid": True, "style": style, "year": int(match["year"]), "url": match["url"]}


def publish_page(path: str, content: str) -> dict[str, Any]:
    """Publish `content` at `path` of the course site (simulated: nothing leaves the process)."""
    return {"published": path, "bytes": len(content.encode())}


def post_page(path: str, content: str) -> None:
    """Publish through the site's fire-and-forget hook: the page goes out, no receipt comes
    back, so the trace holds the call and never its result."""


PUBLISH = Tool(
    "publish_page",
    "Publica una página en la web del curso. Efecto persistente: requiere aprobación humana.",
    PublishPageArgs,
    publish_page,
    effect="publish",
    requires_approval=True,
)
SEARCH = Tool(
    "search_source",
    "Busca una fuente en el catálogo. Devuelve documentos con url, title y snippet.",
    SearchSourceArgs,
    search_source,
    effect="read",
)
VALIDATE = Tool(
    "validate_apa",
    "Comprueba que una referencia sigue el formato APA 7.",
    ValidateApaArgs,
    validate_apa,
    effect="compute",
)


def registry(approval_for_publish: bool = True) -> ToolRegistry:
    """The three tools; `approval_for_publish=False` wires publishing without a reviewer,
    through the fire-and-forget hook (`post_page`)."""
    publish = (
        PUBLISH
        if approval_for_publish
        else dataclasses.replace(PUBLISH, fn=post_page, requires_approval=False)
    )
    return ToolRegistry([SEARCH, VALIDATE, publish])
