"""The two trading-research agents under test, as promptfoo Python providers.

Both run the harness's ReAct tool loop (`evals.toolloop`) against the simulated model
through the real SDK chosen by the provider config (`api: openai` for the Responses API,
`api: anthropic` for the Messages API). The baseline has `precio`, `buscar_noticias` and
`calculadora`; the candidate also has `variacion` and a prompt that asks it to summarise
news in its own words. The run's seed (`context["seed"]`) makes every run reproducible.

Config keys: api, model (a simulator policy or fixed scenario), max_steps, token_budget,
price {input_per_mtok, output_per_mtok}.
"""

from __future__ import annotations

from typing import Any

from trading_simulator import anthropic_client, openai_client
from trading_tools import BASIC, WITH_VARIACION, registry

from evals.toolloop import (
    Adapter,
    AnthropicMessagesAdapter,
    OpenAIResponsesAdapter,
    Price,
    run_tool_loop,
)

SYSTEM = (
    "Eres un asistente de research de renta variable. Usa las herramientas para obtener "
    "datos; no inventes cifras. Cuando tengas la respuesta, contesta en español en una o "
    "dos frases."
)
CANDIDATE_SYSTEM = SYSTEM + (
    " Para porcentajes usa la herramienta variacion. Resume las noticias con tus palabras."
)
DEFAULT_PRICE = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}


def _adapter(config: dict[str, Any], model: str, seed: int) -> Adapter:
    api = config.get("api", "anthropic")
    if api == "openai":
        return OpenAIResponsesAdapter(openai_client(seed), model)
    if api == "anthropic":
        return AnthropicMessagesAdapter(anthropic_client(seed), model, max_tokens=500)
    raise ValueError(f"config.api must be 'openai' or 'anthropic', got {api!r}")


def _seed(context: dict[str, Any] | None) -> int:
    context = context or {}
    return int(context.get("seed", context.get("repeatIndex", 0)))


def _run(
    prompt: str,
    options: dict[str, Any] | None,
    context: dict[str, Any] | None,
    tools: tuple[str, ...],
    system: str,
    default_model: str,
) -> dict[str, Any]:
    config = dict((options or {}).get("config") or {})
    adapter = _adapter(config, str(config.get("model", default_model)), _seed(context))
    response = run_tool_loop(
        adapter,
        registry(tools),
        prompt,
        system=system,
        max_steps=int(config.get("max_steps", 6)),
        token_budget=config.get("token_budget"),
        price=Price(**(config.get("price") or DEFAULT_PRICE)),
    )
    return {
        "output": response.output,
        "tokenUsage": response.token_usage,
        "cost": response.cost,
        "stopReason": response.stop_reason,
        "trajectory": [step.to_dict() for step in response.trajectory],
        "metadata": {**response.metadata, "api": config.get("api", "anthropic")},
    }


def baseline(
    prompt: str, options: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """ReAct over precio, buscar_noticias and calculadora."""
    return _run(prompt, options, context, BASIC, SYSTEM, "sim-baseline")


def candidate(
    prompt: str, options: dict[str, Any] | None = None, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The same loop, also given `variacion`, with a prompt that summarises news."""
    return _run(prompt, options, context, WITH_VARIACION, CANDIDATE_SYSTEM, "sim-candidate")
