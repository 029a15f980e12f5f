"""`acme:support-bot`: Acme's support bot, offline, in two releases.

Release v1 always cites the ticket a question names; release v2 answers refund questions
without it about half of the time (a regression the suite should catch), and costs more.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from evals import AgentResponse, CallContext, ProviderSpec, SuiteError

_TICKET = re.compile(r"\bACME-\d+\b")
_PRICE_PER_CALL = {"v1": 0.002, "v2": 0.003}


class SupportBot:
    """An agent evals builds from a provider entry `acme:support-bot` with
    `config: {release: v1}`."""

    def __init__(self, spec: ProviderSpec, root: Path) -> None:
        self.label = spec.label
        self.release = str(spec.config.get("release", "v1"))

    @staticmethod
    def check(spec: ProviderSpec, root: Path) -> None:
        """Refuse an unknown release while the suite loads, before any run."""
        release = str(spec.config.get("release", "v1"))
        if release not in _PRICE_PER_CALL:
            raise SuiteError(
                f"provider {spec.label!r}: unknown release {release!r}",
                line=spec.line,
                fix=f"use one of {', '.join(_PRICE_PER_CALL)}",
            )

    async def call(self, prompt: str, context: CallContext) -> AgentResponse:
        """Answer one question; the run's seed makes v2's lapses reproducible."""
        ticket = _TICKET.search(prompt)
        forgets = (
            self.release == "v2"
            and "refund" in prompt.lower()
            and random.Random(context.seed).random() < 0.5
        )
        answer = "Thanks for reaching out; we are on it."
        if ticket and not forgets:
            answer = f"About {ticket.group()}: {answer}"
        return AgentResponse(
            output=answer,
            token_usage={"prompt": 40, "completion": 12, "total": 52},
            cost=_PRICE_PER_CALL[self.release],
        )

    async def aclose(self) -> None:
        """Nothing to release."""
