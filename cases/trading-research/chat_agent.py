"""The trading-research agents as conversation partners, as promptfoo Python providers.

A simulated user holds each conversation (conversations.yaml): every call is one turn, its
prompt the conversation so far. Both agents have the demo's four research tools plus
`publicar_nota`, which publishes a research note into the run's own copy of the notes
(the suite's `environment:`, a JSON document). Their scripted model is
`chat_simulator.py`, served behind the real Anthropic SDK.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chat_simulator import chat_script
from pydantic import BaseModel, Field
from trading_tools import WITH_VARIACION, registry

from evals.kits import Tool, ToolRegistry, run_simulated_agent, world_path

SYSTEM = (
    "Eres un asistente de research de renta variable. Usa las herramientas para obtener "
    "datos; no inventes cifras. Antes de publicar una nota, enséñala y espera a que el "
    "usuario la confirme."
)


class ArgsNota(BaseModel):
    titulo: str = Field(min_length=3)
    texto: str = Field(min_length=10)


def _tools(notes: Path) -> ToolRegistry:
    def publicar_nota(titulo: str, texto: str) -> dict[str, Any]:
        world = json.loads(notes.read_text(encoding="utf-8"))
        number = f"N-{len(world['notas']) + 1:03d}"
        world["notas"][number] = {"titulo": titulo, "texto": texto}
        notes.write_text(json.dumps(world, ensure_ascii=False, indent=2), encoding="utf-8")
        return {"nota": number, "titulo": titulo}

    tools = registry(WITH_VARIACION)
    tools.add(
        Tool(
            "publicar_nota",
            "Publica una nota de research para los clientes (título y texto).",
            ArgsNota,
            publicar_nota,
            effect="publish",
        )
    )
    return tools


def _run(model: str, prompt: str, options: Any, context: Any) -> dict[str, Any]:
    return run_simulated_agent(
        prompt,
        options,
        context,
        script=chat_script,
        tools=_tools(world_path(context)),
        system=SYSTEM,
        model=model,
        api="anthropic",
        max_tokens=500,
    )


def baseline(prompt: str, options: Any = None, context: Any = None) -> dict[str, Any]:
    """Follows follow-ups and corrections; publishes only a confirmed note."""
    return _run("sim-chat-baseline", prompt, options, context)


def candidate(prompt: str, options: Any = None, context: Any = None) -> dict[str, Any]:
    """Sometimes publishes before the user confirms, sometimes ignores a correction."""
    return _run("sim-chat-candidate", prompt, options, context)
