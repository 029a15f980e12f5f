"""The two trading-research agents under test, as promptfoo Python providers.

Both run the harness's ReAct tool loop (`evals.kits.toolloop`) against the simulated model
through the real SDK chosen by the provider config (`api: openai` for the Responses API,
`api: anthropic` for the Messages API). The baseline has `precio`, `buscar_noticias` and
`calculadora`; the candidate also has `variacion` and a prompt that asks it to summarise
news in its own words. The run's seed (`context["seed"]`) makes every run reproducible.

Config keys: api, model (a simulator policy or fixed scenario), max_steps, token_budget,
price {input_per_mtok, output_per_mtok}.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from trading_simulator import script
from trading_tools import BASIC, WITH_VARIACION, registry

from evals.kits import run_simulated_agent

SYSTEM = (
    "Eres un asistente de research de renta variable. Usa las herramientas para obtener "
    "datos; no inventes cifras. Cuando tengas la respuesta, contesta en español en una o "
    "dos frases."
)
CANDIDATE_SYSTEM = SYSTEM + (
    " Para porcentajes usa la herramienta variacion. Resume las noticias con tus palabras."
)


_run = partial(run_simulated_agent, script=script, api="anthropic", max_tokens=500)


def baseline(
    prompt: str, options: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """ReAct over precio, buscar_noticias and calculadora."""
    return _run(
        prompt, options, context, tools=registry(BASIC), system=SYSTEM, model="sim-baseline"
    )


def candidate(
    prompt: str, options: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The same loop, also given `variacion`, with a prompt that summarises news."""
    return _run(
        prompt,
        options,
        context,
        tools=registry(WITH_VARIACION),
        system=CANDIDATE_SYSTEM,
        model="sim-candidate",
    )
